/* dt_compare_runs.h — the comparison of two runs (records A and B) as computation with a
 * typed result; dt_format_compare.h prints it as Markdown, format/dt_compare_json.h as
 * JSON (`dualtime compare A B [--format md|json]`).
 *
 * Purpose. A change of a candidate is judged on its paired ratio to the baseline in each
 * run: the baseline runs beside the candidate in the same rounds, so it is the in-run
 * control for whatever the machine did (clocks, load, a neighbour). For every case id
 * present in both runs, every scope with samples in either, and every implementation
 * position (A's candidates impls[1..] in order, then the baseline impls[0]): rows pair
 * by (case, implementation) — when both runs hold the same implementation ids with the
 * same baseline, A's implementation is compared with B's of the same id whatever the
 * order of the candidates; otherwise A's k-th with B's k-th, and the differing ids are
 * a refusal (below):
 *  - candidate rows: in each run, ratio = the median of the paired ratios
 *    candidate/baseline (pairs matched by (round, index), as derive does); the change is
 *    ratio_B / ratio_A, with a percentile bootstrap interval that resamples the pairs of
 *    each run independently (resamples and seed from A's policy; the seed mixed with the
 *    case id, scope and position, so a row's interval does not depend on other rows);
 *  - the run-to-run spread of a row: within each run, the largest over the smallest of
 *    the per-round paired-ratio medians (runs with >= 2 rounds); the larger of A's and
 *    B's. A run with one round has no measured spread: the floor 1 + A's
 *    policy.compare_threshold is used for it and the row says so (spread_measured 0);
 *  - verdict (dt_compare_runs_verdict): "slower" only when the interval lies entirely
 *    above max(1 + threshold, spread), "faster" only when entirely below
 *    min(1 - threshold, 1 / spread), "within spread" when the threshold alone would
 *    have called it, "unchanged" otherwise; "insufficient" with fewer than the policy's
 *    compare_min_samples pairs in either run; "invalid" when the case is invalid in
 *    either run; "incomparable" when the case's identity differs (op, shape, views,
 *    backend, an input's SHA-256), named in the case's diffs;
 *  - the smallest detectable change (detectable_slower): D = max(1 + threshold, spread)
 *    × ratio / ci_low — a true slowdown by a factor of D or more moves the interval's
 *    low end (its width taken as it is, multiplicatively) above the gate, so it would be
 *    called "slower". detectable_faster = min(1 - threshold, 1 / spread) × ratio /
 *    ci_high symmetrically. NAN without an interval. Larger for noisier rows (a wider
 *    interval, a larger spread);
 *  - baseline rows: B/A = median(B samples) / median(A samples) of the baseline itself
 *    (unpaired, bootstrap resampling each run's samples independently), the spread of its
 *    per-round medians, and the verdicts "machine slower" / "machine faster" in place of
 *    slower / faster: the baseline's code did not change (its version is checked), so
 *    its move is the machine's drift, information and never a regression.
 * The result flags a regression when a candidate row of a host or device-control scope
 * (not a probe scope: a diagnostic) is "slower".
 *
 * Refusals (DT_EINVAL, *out NULL, the message naming what is missing or different): a
 * threshold outside [0, 1); a run without a candidate; a run that is incomplete
 * (`complete` false: interrupted or still running) or has no cases; runs that share no
 * case id; run-level differences (backend, threads, input views, GPU name, CPU, an
 * implementation's id or framework at a position, the baseline's framework version —
 * each named with both values); and runs where no shared case is both comparable (same
 * identity) and valid in both runs. The candidates' versions may differ: that is what a
 * comparison is for.
 *
 * Exit status of `dualtime compare` (dt_compare_exit_status; only the CLI exits):
 * 0 no change (no candidate row slower), 1 a regression, 2 the runs cannot be compared.
 * The CLI's help text for the command (docs/results-format.md has the same):
 *
 *   dualtime compare A/results.json B/results.json [--threshold T] [--format md|json]
 *     Compares run B against run A. Each candidate is judged on its paired ratio to
 *     the baseline within each run (the baseline is the drift control): a change is
 *     reported only when its 95% interval clears both the threshold (default 0.05)
 *     and the run-to-run spread of the paired ratio between rounds. Every row states
 *     the smallest change it could have detected. --format json prints the result as
 *     JSON (docs/results-format.md); Markdown is the default.
 *     Exit status: 0 no change, 1 a regression of a candidate, 2 the runs cannot be
 *     compared (a run incomplete or empty, no shared case, or different backend, GPU,
 *     CPU, threads, input views, implementations or baseline version).
 *
 * Inputs: raw samples and identity only (no derive step needed). Bootstrap resamples and
 * seed, compare_min_samples, ci_level and the spread floor come from A's policy
 * (a->derived.policy); the threshold is the caller's (the CLI's --threshold, default
 * a->derived.policy.compare_threshold).
 *
 * Ownership: the result owns copies of every string it holds (A and B may be freed
 * after); free it with dt_compare_result_free. Units: microseconds per call; ratios,
 * spreads and detectable factors unitless. Thread-safety: reentrant. Never includes
 * jansson.h or cuda.h. */
#ifndef DT_COMPARE_RUNS_H
#define DT_COMPARE_RUNS_H

#include "common/dt_common.h"
#include "record/dt_record.h"

#include <stddef.h>
#include <stdint.h>

/* How far a host or dispatch window (E2E and dispatch scopes) that the host's launch path
 * paces moves between two processes of the same code: up to this fraction of its
 * host-paced share (batch: all of it where the median is above the same implementation's
 * held control by more than the threshold in both runs; single: the launch latency's
 * share, (p50 - control) / p50). Two pairs of identical default CUDA runs
 * (H200 session 17, H100 session 16; docs/perf.md "Session 17 measured"): native's
 * launch-bound rows moved up to 1.35x (batch) and 1.44x (single) between the runs, torch's
 * batch rows up to 1.54x, with their held controls within 11%; the paired ratio does not
 * cancel it (each implementation's process moves on its own), and native add 17x257
 * dispatch_batch read 3.95 then 4.66 us (torch 8.63 then 7.40): "slower" by the paired
 * rule alone. A held row's band is DT_HELD_PROCESS_LAUNCH_US (stats/dt_derive.h). */
#define DT_HOST_PROCESS_MOVE 0.50

/* The verdict of one row. */
typedef enum dt_cmp_verdict {
    DT_CMP_UNCHANGED = 0,    /* "unchanged" */
    DT_CMP_SLOWER,           /* "slower": the candidate is slower in B (a regression) */
    DT_CMP_FASTER,           /* "faster" */
    DT_CMP_WITHIN_SPREAD,    /* "within spread": beyond the threshold, not the spread */
    DT_CMP_INSUFFICIENT,     /* "insufficient": too few pairs (samples) for an interval */
    DT_CMP_INVALID,          /* "invalid": the case is invalid in A or B */
    DT_CMP_INCOMPARABLE,     /* "incomparable": the case's identity differs */
    DT_CMP_MACHINE_SLOWER,   /* "machine slower": a baseline row's B/A above the gate */
    DT_CMP_MACHINE_FASTER,   /* "machine faster": a baseline row's B/A below the gate */
    DT_CMP_BASELINE_MOVED,   /* "baseline moved": a held device scope (control, probe) whose
                                paired change clears the gate while the candidate's own
                                B/A (medians) stays within the threshold, or a host or
                                dispatch scope whose baseline row moved past its gate
                                (machine faster / slower) while the candidate's own B/A
                                did not move past the threshold the paired way: the
                                baseline changed, not the candidate; never a regression */
    DT_CMP_VERDICT_COUNT
} dt_cmp_verdict;

const char *dt_cmp_verdict_name(dt_cmp_verdict v);

/* The verdict from a change's 95% interval: SLOWER when ci_low > 1 + threshold and not
 * ci_low <= spread, FASTER when ci_high < 1 - threshold and not ci_high >= 1/spread,
 * WITHIN_SPREAD when only the spread holds either back, UNCHANGED otherwise,
 * INSUFFICIENT without an interval (a bound NAN). spread NAN: no spread gate (rows
 * always pass a finite one: measured, or the floor). */
dt_cmp_verdict dt_compare_runs_verdict(double ci_low, double ci_high, double threshold,
                                       double spread);

/* The smallest detectable slowdown and speed-up of a change estimate with its interval
 * (see above): *slower = max(1 + threshold, spread) * ratio / ci_low, *faster =
 * min(1 - threshold, 1 / spread) * ratio / ci_high; both NAN without an interval. */
void dt_compare_runs_detectable(double ratio, double ci_low, double ci_high,
                                double threshold, double spread, double *slower,
                                double *faster);

/* One named difference: `what` differs, with each run's value as JSON literal text
 * ("\"cpu\"", "2", "false", an inputs array); NULL = absent in that run. */
typedef struct dt_compare_diff {
    char *what, *a, *b;
} dt_compare_diff;

typedef struct dt_compare_diffs {
    dt_compare_diff *v;
    size_t n, cap;
} dt_compare_diffs;

/* The differences as one line, "backend differs (A \"cpu\", B \"cuda\"); ..." ("absent"
 * for a NULL value): a fresh string the caller frees ("" for none). */
char *dt_compare_diffs_join(const dt_compare_diffs *d);

/* One run's side of a row. */
typedef struct dt_compare_side {
    size_t n;          /* samples of this implementation in the scope */
    double p50_us;     /* their median per call; NAN without samples */
    size_t pairs;      /* candidate rows: (round, index) pairs with the baseline */
    double ratio;      /* candidate rows: median paired ratio candidate/baseline; NAN */
    int rounds;        /* rounds with data (pairs for candidates, samples for baseline) */
    double spread;     /* max/min of per-round medians (of ratios for candidates, of the
                          samples for the baseline); NAN with fewer than 2 rounds */
    double own_spread; /* max/min of the per-round medians of the implementation's own
                          samples (candidates too); NAN with fewer than 2 rounds */
    double own_noise;  /* the median over rounds of IQR/p50 of the implementation's own
                          samples within a round; NAN without samples */
} dt_compare_side;

/* One row: one scope of one implementation position in one case. */
typedef struct dt_compare_row {
    dt_scope scope;
    size_t impl_a, impl_b;  /* indexes into A's and B's impls (same display position) */
    dt_role role;           /* A's impls[impl_a].role */
    char *impl_id;          /* A's impls[impl_a].id (the table's Framework column) */
    dt_compare_side a, b;
    double change;          /* candidates: ratio_B / ratio_A; baseline: p50_B / p50_A */
    double ci_low, ci_high; /* bootstrap interval of the change; NAN: insufficient */
    double spread;          /* max of A's and B's spread, a missing one as spread_floor */
    int spread_measured;    /* 1: both runs had >= 2 rounds; 0: the floor was used */
    double process_band;    /* held scopes (control, probe): 1 + DT_HELD_PROCESS_LAUNCH_US
                               x kernels a call / p50, summed over the implementations the
                               row's ratio holds; host and dispatch scopes: 1 +
                               DT_HOST_PROCESS_MOVE x the host-paced share of each of them,
                               where one has a share; spread is at least this (NAN: other
                               rows) */
    double detectable_slower, detectable_faster; /* NAN without an interval */
    dt_cmp_verdict verdict;
} dt_compare_row;

/* One case present in both runs. */
typedef struct dt_compare_case {
    char *id;
    int invalid;            /* invalid in A or in B */
    dt_compare_diffs diffs; /* case-level differences (n 0: comparable) */
    dt_compare_row *rows;   /* scope order, then display order of implementations */
    size_t n_rows, cap_rows;
} dt_compare_case;

typedef struct dt_compare_result {
    char *a_started_at, *a_git_revision; /* NULL: absent */
    char *b_started_at, *b_git_revision;
    double threshold;                    /* the relative threshold used */
    double ci_level;                     /* 0.95 (A's policy) */
    unsigned resamples;                  /* bootstrap resamples (A's policy) */
    uint64_t seed;                       /* bootstrap seed (A's policy) */
    size_t min_pairs;                    /* A's policy.compare_min_samples */
    double spread_floor;                 /* 1 + A's policy.compare_threshold */
    dt_compare_case *cases;              /* A's order */
    size_t n_cases, cap_cases;
    dt_strv only_a, only_b;              /* case ids in one run only, in that run's order */
    size_t n_verdict[DT_CMP_VERDICT_COUNT]; /* rows per verdict */
    size_t n_candidate_slower;           /* candidate rows of non-probe scopes "slower" */
    size_t n_baseline_moved;             /* baseline rows "machine slower" or "faster" */
    int regression;                      /* n_candidate_slower > 0 */
} dt_compare_result;

/* Compares B against A (see above); DT_EINVAL with *out NULL when they cannot be
 * compared, the message naming why. */
dt_status dt_compare_runs(const dt_record *a, const dt_record *b, double threshold,
                          dt_compare_result **out, dt_err *err);

/* 1 when the result flags a certain regression of a candidate (the CLI's exit 1). */
int dt_compare_result_regression(const dt_compare_result *res);

/* The exit status the CLI gives a comparison: 2 when st (dt_compare_runs's status) is
 * not DT_OK or res is NULL (cannot compare), 1 for a regression, 0 otherwise. */
int dt_compare_exit_status(dt_status st, const dt_compare_result *res);

/* Frees res and everything it owns. NULL is fine. */
void dt_compare_result_free(dt_compare_result *res);

#endif
