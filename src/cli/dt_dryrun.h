/* dt_dryrun.h — `dualtime run --dry-run`: the plan a run would execute and an estimate
 * of its wall time, printed without measuring or writing anything.
 *
 * Purpose. After the workers answered hello (so the backend and the implementations are
 * known) the CLI fills a dt_dryrun and calls dt_dryrun_print: the cases in plan order
 * with their shapes, the implementations, samples/rounds and the scopes, then the
 * estimate of dt_dryrun_estimate_s with how it was computed.
 *
 * Estimate (seconds), a budget rather than a prediction: per case and round, for each of
 * the n_impls implementations, warmup_ms + calibration (DT_DRYRUN_CALIB_SAMPLES x
 * sample_ms) + batch_scopes x samples x sample_ms + single_scopes x samples x
 * DT_DRYRUN_SINGLE_MS; with device timing the probe worker's warmup (warmup_ms) once
 * more; plus DT_DRYRUN_SETUP_MS per case and round for prepare, upload, the FP64 check
 * and release; everything x cases x rounds. The workers' start is measured, not
 * estimated (start_s). Ceilings are measured once per run (DT_DRYRUN_CEILINGS_S).
 *
 * Ownership: the struct's pointers are borrowed. Thread-safety: reentrant. */
#ifndef DT_DRYRUN_H
#define DT_DRYRUN_H

#include "plan/dt_plan.h"
#include "session/dt_session.h"

#include <stdio.h>

#define DT_DRYRUN_CALIB_SAMPLES 4   /* calibration: up to 8 growing batches, ~4 x sample_ms */
#define DT_DRYRUN_SINGLE_MS 1.0     /* one single-call sample, request round trip included */
#define DT_DRYRUN_SETUP_MS 1000.0   /* prepare, upload, cold call, checks, release, and
                                       the outputs written after every case */
#define DT_DRYRUN_CEILINGS_S 2.0    /* the run's device ceilings, once */

typedef struct dt_dryrun {
    const dt_plan *plan;
    const char *backend, *backend_choice;
    const char *impl_ids[DT_SESSION_MAX_IMPLS], *impl_roles[DT_SESSION_MAX_IMPLS],
        *impl_frameworks[DT_SESSION_MAX_IMPLS]; /* the run's order: 0 the baseline */
    int n_impls;
    long long samples, rounds, prime, threads;
    double sample_ms, warmup_ms;
    int device_timing;
    double start_s;                 /* the workers' start, measured */
} dt_dryrun;

/* Batch and single scopes timed per implementation: 1 and 1 (e2e) on the host, 3 and 3
 * with device timing (e2e, control, probe; dispatch is taken in the control window). */
void dt_dryrun_scopes(const dt_dryrun *d, int *batch, int *single);
/* The estimate above, in seconds (start_s included). */
double dt_dryrun_estimate_s(const dt_dryrun *d);
/* The plan and the estimate as text on o. */
void dt_dryrun_print(FILE *o, const dt_dryrun *d);

#endif
