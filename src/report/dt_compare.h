/* dt_compare.h — compares two runs (results objects A and B) case by case.
 *
 * For every case id present in both runs and every scope present in both, and for each
 * framework role (candidate, baseline), it estimates B/A as the ratio of the medians of
 * the two runs' samples, with a seeded bootstrap 95% interval that resamples each run's
 * samples independently (runs are not paired, so no pairing by index is invented).
 * Verdict per row: "slower" when the interval lies entirely above 1+threshold,
 * "faster" when entirely below 1−threshold, "unchanged" otherwise, "insufficient" with
 * fewer than 3 samples on a side, "invalid" when the case failed in either run, and
 * "incomparable" when the runs' environments or the case's inputs differ (backend,
 * GPU name, CPU, threads, input views, the baseline framework or its version, the
 * candidate framework's name, case shape, input SHA-256): the differences are named.
 * The candidate's version may differ: that is what a comparison is for.
 * *regression is 1 when a candidate row of a host or device-control scope (not the
 * probe, a diagnostic) is "slower". Writes a Markdown report to `out`.
 * Seed and resamples come from A's settings.bootstrap (defaults otherwise).
 * Ownership: reads only. Never includes cuda.h; reentrant. */
#ifndef DT_COMPARE_H
#define DT_COMPARE_H

#include "common/dt_common.h"

#include <jansson.h>
#include <stdio.h>

dt_status dt_compare(const json_t *a, const json_t *b, double threshold, FILE *out,
                     int *regression, dt_err *err);

/* The verdict of one B/A row from its 95% interval: "slower" when the interval lies
 * above 1 + threshold and above the run-to-run spread (the larger per-round-median
 * max/min of A and B; NAN when either run has one round: no gate), "faster"
 * symmetrically, "within round spread" when only the spread holds it back, "unchanged"
 * otherwise, "insufficient" without an interval. */
const char *dt_compare_verdict(double ci_low, double ci_high, double threshold, double spread);

#endif
