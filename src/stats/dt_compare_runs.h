/* dt_compare_runs.h — the comparison of two runs (records A and B) as computation with a
 * typed result; dt_format_compare.h prints it (`dualtime compare A B`).
 *
 * Purpose. For every case id present in both runs, every scope with samples in either,
 * and every implementation position (the candidates impls[1..] in order, then the
 * baseline impls[0]; A's k-th implementation is compared with B's k-th), it estimates
 * B/A as the ratio of the medians of the two runs' samples, with a seeded bootstrap 95%
 * interval that resamples each run's samples independently (runs are not paired, so no
 * pairing by index is invented). Verdict per row (dt_compare_runs_verdict): "slower"
 * when the interval lies above 1+threshold and above the run-to-run round spread,
 * "faster" symmetrically, "within round spread" when only the spread holds it back,
 * "unchanged" otherwise, "insufficient" with fewer than the policy's
 * compare_min_samples samples on a side, "invalid" when the case is invalid in either
 * run, and "incomparable" when the runs' environments or the case's inputs differ
 * (backend, threads, input views, GPU name, CPU, an implementation's id, its framework,
 * the baseline framework's version; the case's op, m, n, k, views, backend, input
 * SHA-256s): each difference is named with both values. The candidates' versions may
 * differ: that is what a comparison is for. The result flags a regression when a
 * candidate row of a host or device-control scope (not a probe scope: a diagnostic) is
 * "slower"; a slower baseline is counted apart (the machine may have changed). Method
 * and rules: docs/results-format.md, "Comparing two runs".
 *
 * Inputs: raw samples and identity only (no derive step needed). Bootstrap resamples and
 * seed come from A's settings.bootstrap; compare_min_samples from A's policy
 * (a->derived.policy); the threshold is the caller's (the CLI's --threshold, default
 * a->derived.policy.compare_threshold).
 *
 * Ownership: the result owns copies of every string it holds (A and B may be freed
 * after); free it with dt_compare_result_free. Units: microseconds per call; ratios and
 * spreads unitless. Thread-safety: reentrant. Never includes jansson.h or cuda.h. */
#ifndef DT_COMPARE_RUNS_H
#define DT_COMPARE_RUNS_H

#include "common/dt_common.h"
#include "record/dt_record.h"

#include <stddef.h>
#include <stdint.h>

/* The verdict of one B/A row. */
typedef enum dt_cmp_verdict {
    DT_CMP_UNCHANGED = 0,    /* "unchanged" */
    DT_CMP_SLOWER,           /* "slower": B is slower than A */
    DT_CMP_FASTER,           /* "faster" */
    DT_CMP_WITHIN_SPREAD,    /* "within round spread" */
    DT_CMP_INSUFFICIENT,     /* "insufficient": no interval */
    DT_CMP_INVALID,          /* "invalid": the case is invalid in A or B */
    DT_CMP_INCOMPARABLE,     /* "incomparable": environments or inputs differ */
    DT_CMP_VERDICT_COUNT
} dt_cmp_verdict;

const char *dt_cmp_verdict_name(dt_cmp_verdict v);

/* The verdict from a B/A 95% interval: SLOWER when ci_low > 1 + threshold and not
 * ci_low <= spread (spread: the larger per-round-median max/min of A and B; NAN when
 * either run has one round: no gate), FASTER when ci_high < 1 - threshold and not
 * ci_high >= 1/spread, WITHIN_SPREAD when only the spread holds either back, UNCHANGED
 * otherwise, INSUFFICIENT without an interval (a bound NAN). */
dt_cmp_verdict dt_compare_runs_verdict(double ci_low, double ci_high, double threshold,
                                       double spread);

/* One named difference: `what` differs, with each run's value as JSON literal text
 * ("\"cpu\"", "2", "false", an inputs array); NULL = absent in that run. */
typedef struct dt_compare_diff {
    char *what, *a, *b;
} dt_compare_diff;

typedef struct dt_compare_diffs {
    dt_compare_diff *v;
    size_t n, cap;
} dt_compare_diffs;

/* One row: one scope of one implementation position in one case. */
typedef struct dt_compare_row {
    dt_scope scope;
    size_t impl_a, impl_b;  /* indexes into A's and B's impls (same display position) */
    dt_role role;           /* A's impls[impl_a].role */
    char *impl_id;          /* A's impls[impl_a].id (the table's Framework column) */
    size_t n_a, n_b;        /* samples on each side */
    double a_p50_us, b_p50_us; /* medians per call; NAN without samples */
    double ratio;           /* B/A point estimate; NAN when a side has no samples */
    double ci_low, ci_high; /* bootstrap 95% interval; NAN: insufficient */
    double spread;          /* round spread (max of A's and B's); NAN: fewer than 2 rounds */
    dt_cmp_verdict verdict;
} dt_compare_row;

/* One case present in both runs. */
typedef struct dt_compare_case {
    char *id;
    int invalid;            /* invalid in A or in B */
    dt_compare_diffs diffs; /* case-level differences (n 0: comparable inputs) */
    dt_compare_row *rows;   /* scope order, then display order of implementations */
    size_t n_rows, cap_rows;
} dt_compare_case;

typedef struct dt_compare_result {
    char *a_started_at, *a_git_revision; /* NULL: absent */
    char *b_started_at, *b_git_revision;
    double threshold;                    /* the relative threshold used */
    double ci_level;                     /* 0.95 (A's policy) */
    unsigned resamples;                  /* bootstrap resamples (A's settings) */
    uint64_t seed;                       /* bootstrap seed (A's settings) */
    dt_compare_diffs run_diffs;          /* run-level differences (n 0: comparable) */
    dt_compare_case *cases;              /* A's order */
    size_t n_cases, cap_cases;
    dt_strv only_a, only_b;              /* case ids in one run only, in that run's order */
    size_t n_candidate_slower;           /* candidate rows of non-probe scopes "slower" */
    size_t n_baseline_slower;            /* baseline rows (any scope) "slower" */
    int regression;                      /* n_candidate_slower > 0 */
} dt_compare_result;

/* Compares B against A (see above). DT_EINVAL when threshold is not in [0, 1) or a run
 * has no candidate (fewer than two implementations); *out is then NULL. */
dt_status dt_compare_runs(const dt_record *a, const dt_record *b, double threshold,
                          dt_compare_result **out, dt_err *err);

/* 1 when the result flags a certain regression of a candidate (the CLI's exit 1). */
int dt_compare_result_regression(const dt_compare_result *res);

/* Frees res and everything it owns. NULL is fine. */
void dt_compare_result_free(dt_compare_result *res);

#endif
