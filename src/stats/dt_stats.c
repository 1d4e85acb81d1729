/* dt_stats.c — quantiles, paired ratios, bootstrap intervals and the verdict rule.
 * See dt_stats.h for the contract; tests/unit/test_stats.c checks hand-computed values. */
#include "stats/dt_stats.h"

#include <math.h>
#include <string.h>

uint64_t dt_stats_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n) without modulo bias worth caring about for n << 2^32. */
static size_t draw_index(uint64_t *state, size_t n) {
    uint64_t r = dt_stats_splitmix64(state);
    return (size_t)(((r >> 32) * (uint64_t)n) >> 32);
}

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

void dt_stats_sort(double *x, size_t n) {
    if (n > 1)
        qsort(x, n, sizeof *x, cmp_double);
}

double dt_stats_quantile_sorted(const double *sorted, size_t n, double p) {
    if (n == 0)
        return NAN;
    if (p <= 0)
        return sorted[0];
    if (p >= 1)
        return sorted[n - 1];
    double h = (double)(n - 1) * p;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return sorted[n - 1];
    double frac = h - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double dt_stats_median(const double *x, size_t n) {
    if (n == 0)
        return NAN;
    double *tmp = dt_xmalloc(n * sizeof *tmp);
    memcpy(tmp, x, n * sizeof *tmp);
    dt_stats_sort(tmp, n);
    double m = dt_stats_quantile_sorted(tmp, n, 0.5);
    free(tmp);
    return m;
}

dt_summary dt_stats_summarize(const double *x, size_t n) {
    dt_summary s = {.n = n};
    if (n == 0) {
        s.p50 = s.p90 = s.min = s.max = s.p25 = s.p75 = s.iqr = NAN;
        return s;
    }
    double *tmp = dt_xmalloc(n * sizeof *tmp);
    memcpy(tmp, x, n * sizeof *tmp);
    dt_stats_sort(tmp, n);
    s.min = tmp[0];
    s.max = tmp[n - 1];
    s.p25 = dt_stats_quantile_sorted(tmp, n, 0.25);
    s.p50 = dt_stats_quantile_sorted(tmp, n, 0.50);
    s.p75 = dt_stats_quantile_sorted(tmp, n, 0.75);
    s.p90 = dt_stats_quantile_sorted(tmp, n, 0.90);
    s.iqr = s.p75 - s.p25;
    free(tmp);
    return s;
}

double dt_stats_median_paired_ratio(const double *cand_us, const double *base_us, size_t n) {
    if (n == 0)
        return NAN;
    double *r = dt_xmalloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = cand_us[i] / base_us[i];
    dt_stats_sort(r, n);
    double m = dt_stats_quantile_sorted(r, n, 0.5);
    free(r);
    return m;
}

static int all_positive_finite(const double *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || !(x[i] > 0))
            return 0;
    return 1;
}

/* Median of n values drawn with replacement from src, using scratch (n doubles). */
static double resampled_median(const double *src, size_t n, double *scratch,
                               uint64_t *state) {
    for (size_t i = 0; i < n; i++)
        scratch[i] = src[draw_index(state, n)];
    dt_stats_sort(scratch, n);
    return dt_stats_quantile_sorted(scratch, n, 0.5);
}

/* The 95% percentile interval of n bootstrap statistics r (sorted in place) into out. */
static void percentile_interval(double *r, size_t n, dt_interval *out) {
    dt_stats_sort(r, n);
    out->ci_low = dt_stats_quantile_sorted(r, n, 0.025);
    out->ci_high = dt_stats_quantile_sorted(r, n, 0.975);
}

dt_status dt_stats_paired_ratio_interval(const double *cand_us, const double *base_us,
                                         size_t n, unsigned resamples, uint64_t seed,
                                         dt_interval *out, dt_err *err) {
    out->median = out->ci_low = out->ci_high = NAN;
    out->pairs = n;
    if (resamples == 0)
        return dt_fail(err, DT_EINVAL, "bootstrap: resamples must be at least 1");
    if (!all_positive_finite(cand_us, n) || !all_positive_finite(base_us, n))
        return dt_fail(err, DT_EINVAL,
                       "paired ratio: every sample must be finite and positive");
    if (n == 0)
        return DT_OK;
    double *ratios = dt_xmalloc(n * sizeof *ratios);
    for (size_t i = 0; i < n; i++)
        ratios[i] = cand_us[i] / base_us[i];
    double *scratch = dt_xmalloc(n * sizeof *scratch);
    memcpy(scratch, ratios, n * sizeof *scratch);
    dt_stats_sort(scratch, n);
    out->median = dt_stats_quantile_sorted(scratch, n, 0.5);
    if (n >= DT_STATS_MIN_PAIRS) {
        double *meds = dt_xmalloc((size_t)resamples * sizeof *meds);
        uint64_t state = seed;
        for (unsigned b = 0; b < resamples; b++)
            meds[b] = resampled_median(ratios, n, scratch, &state);
        percentile_interval(meds, resamples, out);
        free(meds);
    }
    free(scratch);
    free(ratios);
    return DT_OK;
}

dt_status dt_stats_ratio_of_medians_interval(const double *a_us, size_t na,
                                             const double *b_us, size_t nb,
                                             unsigned resamples, uint64_t seed,
                                             dt_interval *out, dt_err *err) {
    out->median = out->ci_low = out->ci_high = NAN;
    out->pairs = na < nb ? na : nb;
    if (resamples == 0)
        return dt_fail(err, DT_EINVAL, "bootstrap: resamples must be at least 1");
    if (!all_positive_finite(a_us, na) || !all_positive_finite(b_us, nb))
        return dt_fail(err, DT_EINVAL,
                       "ratio of medians: every sample must be finite and positive");
    if (na == 0 || nb == 0)
        return DT_OK;
    out->median = dt_stats_median(b_us, nb) / dt_stats_median(a_us, na);
    if (na >= DT_STATS_MIN_PAIRS && nb >= DT_STATS_MIN_PAIRS) {
        double *sa = dt_xmalloc(na * sizeof *sa), *sb = dt_xmalloc(nb * sizeof *sb);
        double *r = dt_xmalloc((size_t)resamples * sizeof *r);
        uint64_t state = seed;
        for (unsigned i = 0; i < resamples; i++) {
            double ma = resampled_median(a_us, na, sa, &state);
            double mb = resampled_median(b_us, nb, sb, &state);
            r[i] = mb / ma;
        }
        percentile_interval(r, resamples, out);
        free(r);
        free(sb);
        free(sa);
    }
    return DT_OK;
}

dt_verdict dt_stats_verdict(int valid, const dt_interval *iv) {
    return dt_stats_verdict_band(valid, iv, DT_STATS_MIN_PAIRS, DT_STATS_EQUIV_LOW,
                                 DT_STATS_EQUIV_HIGH);
}

dt_verdict dt_stats_verdict_band(int valid, const dt_interval *iv, size_t min_pairs,
                                 double equiv_low, double equiv_high) {
    if (!valid || !iv || iv->pairs == 0 || isnan(iv->median))
        return DT_VERDICT_INVALID;
    if (iv->pairs < min_pairs || isnan(iv->ci_low) || isnan(iv->ci_high))
        return DT_VERDICT_INSUFFICIENT;
    if (iv->ci_low <= 1.0 && iv->ci_high >= 1.0)
        return DT_VERDICT_INDISTINGUISHABLE;
    if (iv->ci_low >= equiv_low && iv->ci_high <= equiv_high)
        return DT_VERDICT_INDISTINGUISHABLE;
    if (iv->ci_high < 1.0)
        return DT_VERDICT_FASTER;
    return DT_VERDICT_SLOWER; /* ci_low > 1 */
}

const char *dt_stats_verdict_name(dt_verdict v) {
    switch (v) {
    case DT_VERDICT_INVALID: return "invalid";
    case DT_VERDICT_INSUFFICIENT: return "insufficient";
    case DT_VERDICT_INDISTINGUISHABLE: return "indistinguishable";
    case DT_VERDICT_FASTER: return "faster";
    case DT_VERDICT_SLOWER: return "slower";
    }
    return "invalid";
}
