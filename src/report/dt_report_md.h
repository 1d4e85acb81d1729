/* dt_report_md.h — results.md from a derived results object.
 *
 * dt_report_md_write() only reads: it prints the sections of docs/results-format.md
 * (assessment line first, what was run, main table, setup phases, correctness, device
 * control and probe diagnostics when measured, failures, what the numbers do not
 * establish) from the raw and derived fields of `results`, which must have been through
 * dt_derive(). The output depends only on the JSON, so regenerating from a saved
 * results.json is byte-identical. Text cells are escaped for Markdown tables.
 * Ownership: nothing is retained; `out` stays open. Never includes cuda.h. */
#ifndef DT_REPORT_MD_H
#define DT_REPORT_MD_H

#include "common/dt_common.h"

#include <jansson.h>
#include <stdio.h>

dt_status dt_report_md_write(const json_t *results, FILE *out, dt_err *err);

/* The same report into a fresh NUL-terminated string (caller frees), *len its length. */
dt_status dt_report_md_string(const json_t *results, char **text, size_t *len, dt_err *err);

#endif
