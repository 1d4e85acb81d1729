/* dt_derive.h — every derived statistic of a results.json, computed from its raw samples.
 *
 * dt_derive() reads cases[].impl.<framework id>.samples.<scope>[] and (re)writes
 * cases[].derived and the top-level derived.assessment, in place, exactly as
 * docs/results-format.md describes: per scope summaries, the median of paired
 * candidate/baseline ratios with a seeded bootstrap 95% interval, noise, verdict,
 * probe/control per framework, per-kernel breakdowns, and the run assessment
 * (smoke / method audit / comparative with reasons). Framework ids and roles come
 * from results.frameworks[]; nothing here names a framework. The result depends only
 * on the JSON (bootstrap seed and resamples from settings.bootstrap), so deriving a
 * loaded results.json again reproduces it exactly.
 *
 * Ownership: the caller owns `results`; derived objects are replaced, raw data is
 * never modified. Units: microseconds per call. Never includes cuda.h; reentrant. */
#ifndef DT_DERIVE_H
#define DT_DERIVE_H

#include "common/dt_common.h"

#include <jansson.h>

#define DT_DERIVE_MIN_SAMPLES 5      /* fewer samples in a scope: smoke */
#define DT_DERIVE_MIN_ROUNDS 2       /* fewer rounds: smoke */
#define DT_DERIVE_MAX_NOISE 0.10     /* iqr/p50 above this: method audit */
#define DT_DERIVE_PROBE_LOW 0.90     /* probe/control outside [low, high]: method audit */
#define DT_DERIVE_PROBE_HIGH 1.10
#define DT_DERIVE_MAX_REASONS 20     /* longer reason lists end in "... and N more" */

/* Scope names in report order; the derive step also handles any other scope name. */
extern const char *const dt_derive_known_scopes[];
extern const size_t dt_derive_known_scope_count;

/* Fills the derived statistics (see above). Fails (DT_EINVAL) on a structurally bad
 * results object (no frameworks with one candidate and one baseline, cases not an
 * array); run dt_results_load's validation first for precise messages. */
dt_status dt_derive(json_t *results, dt_err *err);

/* The candidate's and the baseline's ids (borrowed from `results`). */
dt_status dt_derive_roles(const json_t *results, const char **candidate_id,
                          const char **baseline_id, dt_err *err);

/* The `us` values of impl.<fw_id>.samples.<scope> of one case, in stored order, in a
 * fresh array the caller frees (NULL when *n == 0). Missing anything gives n = 0. */
double *dt_derive_scope_us(const json_t *cas, const char *fw_id, const char *scope,
                           size_t *n);

/* The same for any array of samples (e.g. cases[].floor.samples); arr may be NULL. */
double *dt_derive_array_us(const json_t *arr, size_t *n);

/* Bootstrap settings of a results object: settings.bootstrap.{resamples, seed}, or the
 * defaults of dt_stats.h when absent. */
void dt_derive_bootstrap_settings(const json_t *results, unsigned *resamples,
                                  uint64_t *seed);

/* A seed for one (case, scope): the run's seed mixed with an FNV-1a hash of both names,
 * so a scope's interval does not depend on case order. */
uint64_t dt_derive_scope_seed(uint64_t run_seed, const char *case_id, const char *scope);

#endif
