/* dt_format_decomp.h — results.md's "E2E decomposition (single call, µs)" section (issue
 * 13 item 3): per case and implementation the segments of one unheld single-call probe
 * sample (dispatch, launch, queue, kernel, completion; src/stats/dt_decomp.h computes
 * them from the raw timestamps the record holds), their sum against the measured call,
 * the clock calibration's uncertainty, the uninstrumented E2E single p50 and the
 * add-up/order check. Of the samples (three per round) the one whose measured call is
 * the median is shown. Without samples it prints one
 * line saying why the decomposition is unavailable (the first reason recorded: the cpu
 * backend, device timing off, or what a worker answered); nothing at all when no
 * implementation recorded a "decomposition" (files from before issue 13).
 *
 * Ownership: reads r only. Units: µs in the table. Thread-safety: reentrant. */
#ifndef DT_FORMAT_DECOMP_H
#define DT_FORMAT_DECOMP_H

#include <stdio.h>

#include "record/dt_record.h"

/* Writes the section (heading included) to o. */
void dt_format_decomp_md(FILE *o, const dt_record *r);

#endif
