/* dt_stats.h — quantiles, summaries, paired ratios, bootstrap intervals and verdicts.
 *
 * Pure functions over caller-owned arrays of doubles; nothing here allocates memory
 * the caller must free, keeps global state or prints. Units are whatever the caller's
 * samples carry (dualtime passes microseconds per call); ratios are unitless.
 *
 * Conventions (docs/results-format.md, SPEC §7):
 *  - Quantiles use linear interpolation between order statistics: for n sorted
 *    samples x[0..n-1], q(p) = x[h] + (h - floor(h)) * (x[floor(h)+1] - x[h]) with
 *    h = (n-1)*p. So p50 of 9 samples is the 5th smallest.
 *  - A paired ratio is candidate/baseline of one pair; the statistic is the median of
 *    the paired ratios (never a ratio of medians).
 *  - The bootstrap resamples pairs with replacement using splitmix64 seeded by the
 *    caller; the result depends only on (data, resamples, seed). The interval is the
 *    2.5% / 97.5% percentile of the resampled medians.
 * Thread-safety: every function is reentrant. */
#ifndef DT_STATS_H
#define DT_STATS_H

#include "common/dt_common.h"

#include <stdint.h>

#define DT_STATS_MIN_PAIRS 3                 /* fewer pairs: verdict "insufficient" */
#define DT_STATS_EQUIV_LOW 0.98              /* interval inside [low, high] = same */
#define DT_STATS_EQUIV_HIGH 1.02
#define DT_STATS_DEFAULT_RESAMPLES 2000u
#define DT_STATS_DEFAULT_SEED 20261130ull

/* Order statistics of one sample set. All NaN when n == 0. */
typedef struct dt_summary {
    size_t n;
    double p50, p90, min, max;
    double p25, p75, iqr; /* iqr = p75 - p25 */
} dt_summary;

/* A point estimate with a 95% interval. ci_low/ci_high are NaN when pairs <
 * DT_STATS_MIN_PAIRS (too few for an interval); median is NaN when pairs == 0. */
typedef struct dt_interval {
    double median;
    double ci_low, ci_high;
    size_t pairs; /* pairs (paired ratio) or min(n_a, n_b) (ratio of medians) */
} dt_interval;

typedef enum dt_verdict {
    DT_VERDICT_INVALID = 0,        /* a side is invalid, or no pairs */
    DT_VERDICT_INSUFFICIENT,       /* 1..DT_STATS_MIN_PAIRS-1 pairs: no interval */
    DT_VERDICT_INDISTINGUISHABLE,  /* interval contains 1 or lies in [0.98, 1.02] */
    DT_VERDICT_FASTER,             /* ci_high < 1: the candidate is faster */
    DT_VERDICT_SLOWER,             /* ci_low > 1: the candidate is slower */
} dt_verdict;

/* splitmix64: advances *state and returns the next 64-bit value. */
uint64_t dt_stats_splitmix64(uint64_t *state);

/* Quantile p in [0, 1] of an ascending array (linear interpolation). NaN if n == 0. */
double dt_stats_quantile_sorted(const double *sorted, size_t n, double p);

/* Sorts x in place (ascending). */
void dt_stats_sort(double *x, size_t n);

/* Median of x (x is not modified). NaN if n == 0. */
double dt_stats_median(const double *x, size_t n);

/* Summary of x (x is not modified). */
dt_summary dt_stats_summarize(const double *x, size_t n);

/* Median over i of cand[i]/base[i]. NaN if n == 0. base[i] must be > 0. */
double dt_stats_median_paired_ratio(const double *cand_us, const double *base_us, size_t n);

/* Median of paired ratios with a seeded bootstrap 95% percentile interval (pairs
 * resampled with replacement, `resamples` times). With n < DT_STATS_MIN_PAIRS the
 * interval is NaN. Fails (DT_EINVAL) on a non-positive or non-finite value or
 * resamples == 0. */
dt_status dt_stats_paired_ratio_interval(const double *cand_us, const double *base_us,
                                         size_t n, unsigned resamples, uint64_t seed,
                                         dt_interval *out, dt_err *err);

/* Ratio of medians median(b)/median(a) for two unpaired sample sets, with a seeded
 * bootstrap 95% interval resampling both sides independently. Used to compare runs
 * (docs/results-format.md, "Comparing two runs"). Interval NaN when either side has
 * fewer than DT_STATS_MIN_PAIRS samples; `pairs` holds min(na, nb). */
dt_status dt_stats_ratio_of_medians_interval(const double *a_us, size_t na,
                                             const double *b_us, size_t nb,
                                             unsigned resamples, uint64_t seed,
                                             dt_interval *out, dt_err *err);

/* The verdict rule of SPEC §7 for candidate/baseline intervals. valid == 0 (either
 * side invalid) or iv == NULL or iv->pairs == 0 gives INVALID. */
dt_verdict dt_stats_verdict(int valid, const dt_interval *iv);

/* The same rule with explicit thresholds (a run's dt_policy): fewer than min_pairs pairs
 * or no interval gives INSUFFICIENT; an interval inside [equiv_low, equiv_high] gives
 * INDISTINGUISHABLE. dt_stats_verdict(valid, iv) is dt_stats_verdict_band(valid, iv,
 * DT_STATS_MIN_PAIRS, DT_STATS_EQUIV_LOW, DT_STATS_EQUIV_HIGH). */
dt_verdict dt_stats_verdict_band(int valid, const dt_interval *iv, size_t min_pairs,
                                 double equiv_low, double equiv_high);

/* "invalid", "insufficient", "indistinguishable", "faster", "slower". */
const char *dt_stats_verdict_name(dt_verdict v);

#endif
