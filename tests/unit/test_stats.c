/* test_stats.c — src/stats/dt_stats against hand-computed values: quantiles by linear
 * interpolation, summaries, median of paired ratios, the seeded bootstrap interval and
 * the verdict rule (including a noisy case that must not be called faster).
 * Run: ctest -R test_stats (no GPU needed). */
#include "../dt_check.h"

#include <math.h>
#include <string.h>

#include "stats/dt_stats.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * (1 + fabs(b)); }

static void test_quantiles(void) {
    double x9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    CHECK(near(dt_stats_quantile_sorted(x9, 9, 0.5), 5));     /* 5th smallest */
    CHECK(near(dt_stats_quantile_sorted(x9, 9, 0.9), 8.2));   /* h = 7.2 */
    CHECK(near(dt_stats_quantile_sorted(x9, 9, 0.25), 3));
    CHECK(near(dt_stats_quantile_sorted(x9, 9, 0.0), 1));
    CHECK(near(dt_stats_quantile_sorted(x9, 9, 1.0), 9));
    double x4[4] = {1, 2, 3, 4};
    CHECK(near(dt_stats_quantile_sorted(x4, 4, 0.5), 2.5));
    CHECK(near(dt_stats_quantile_sorted(x4, 4, 0.9), 3.7));   /* h = 2.7 */
    CHECK(near(dt_stats_quantile_sorted(x4, 4, 0.25), 1.75)); /* h = 0.75 */
    double x1[1] = {42};
    CHECK(near(dt_stats_quantile_sorted(x1, 1, 0.9), 42));
    CHECK(isnan(dt_stats_quantile_sorted(x1, 0, 0.5)));

    double u[5] = {9, 1, 5, 3, 7}; /* unsorted: summarize must not depend on order */
    dt_summary s = dt_stats_summarize(u, 5);
    CHECK(s.n == 5);
    CHECK(near(s.p50, 5) && near(s.p90, 8.2) && near(s.min, 1) && near(s.max, 9));
    CHECK(near(s.p25, 3) && near(s.p75, 7) && near(s.iqr, 4));
    CHECK(u[0] == 9 && u[1] == 1); /* input untouched */
    dt_summary e = dt_stats_summarize(NULL, 0);
    CHECK(e.n == 0 && isnan(e.p50));
    double m[6] = {10, 2, 8, 4, 6, 12};
    CHECK(near(dt_stats_median(m, 6), 7));
}

static void test_paired_ratios(void) {
    double c3[3] = {2, 3, 8}, b3[3] = {4, 3, 4}; /* 0.5, 1, 2 */
    CHECK(near(dt_stats_median_paired_ratio(c3, b3, 3), 1));
    double c4[4] = {1, 2, 3, 4}, b4[4] = {2, 2, 2, 2}; /* 0.5, 1, 1.5, 2 */
    CHECK(near(dt_stats_median_paired_ratio(c4, b4, 4), 1.25));
    /* median of ratios is not the ratio of medians */
    double c[3] = {1, 10, 100}, b[3] = {10, 1, 50}; /* 0.1, 10, 2 -> 2; medians 10/10 = 1 */
    CHECK(near(dt_stats_median_paired_ratio(c, b, 3), 2));
}

static void test_bootstrap(void) {
    double cand[9], base[9];
    for (int i = 0; i < 9; i++) {
        base[i] = 10 + 0.1 * i;
        cand[i] = base[i] * (0.6 + 0.01 * ((i * 5) % 9 - 4)); /* ratios 0.56..0.64 */
    }
    dt_interval a, b, c;
    dt_err err = {{0}};
    CHECK(dt_stats_paired_ratio_interval(cand, base, 9, 2000, 123, &a, &err) == DT_OK);
    CHECK(dt_stats_paired_ratio_interval(cand, base, 9, 2000, 123, &b, &err) == DT_OK);
    CHECK(dt_stats_paired_ratio_interval(cand, base, 9, 2000, 124, &c, &err) == DT_OK);
    CHECK(a.pairs == 9);
    CHECK(near(a.median, dt_stats_median_paired_ratio(cand, base, 9)));
    CHECK(near(a.median, 0.6));
    CHECK(a.ci_low == b.ci_low && a.ci_high == b.ci_high); /* deterministic */
    CHECK(a.ci_low <= a.median && a.median <= a.ci_high);  /* contains the median */
    CHECK(a.ci_low >= 0.56 && a.ci_high <= 0.64);          /* inside the data range */
    CHECK(a.ci_low < a.ci_high);
    CHECK(c.ci_low <= c.median && c.median <= c.ci_high);
    CHECK(dt_stats_verdict(1, &a) == DT_VERDICT_FASTER);

    /* too few pairs: median but no interval */
    dt_interval d;
    CHECK(dt_stats_paired_ratio_interval(cand, base, 2, 100, 1, &d, &err) == DT_OK);
    CHECK(d.pairs == 2 && isfinite(d.median) && isnan(d.ci_low) && isnan(d.ci_high));
    CHECK(dt_stats_verdict(1, &d) == DT_VERDICT_INSUFFICIENT);
    /* bad input */
    double bad[3] = {1, 0, 2};
    CHECK(dt_stats_paired_ratio_interval(bad, base, 3, 100, 1, &d, &err) == DT_EINVAL);
    CHECK(strstr(err.msg, "positive") != NULL);
    CHECK(dt_stats_paired_ratio_interval(cand, base, 3, 0, 1, &d, &err) == DT_EINVAL);

    /* ratio of medians for unpaired runs: exact point value */
    double x[3] = {1, 2, 3}, y[5] = {2, 4, 6, 4, 4};
    CHECK(dt_stats_ratio_of_medians_interval(x, 3, y, 5, 1000, 9, &d, &err) == DT_OK);
    CHECK(near(d.median, 2) && d.pairs == 3);
    CHECK(d.ci_low <= 2 && d.ci_high >= 2);
}

static void test_noisy_not_faster(void) {
    /* median paired ratio 0.9 but a wide spread: the interval reaches past 1, so the
     * candidate must NOT be called faster. */
    double r[9] = {0.5, 1.5, 0.6, 1.4, 0.9, 1.3, 0.7, 1.2, 0.8};
    double base[9], cand[9];
    for (int i = 0; i < 9; i++) {
        base[i] = 100;
        cand[i] = 100 * r[i];
    }
    dt_interval iv;
    dt_err err;
    CHECK(dt_stats_paired_ratio_interval(cand, base, 9, 2000, 20261130, &iv, &err) == DT_OK);
    CHECK(near(iv.median, 0.9));
    CHECK(iv.ci_high >= 1.0);
    CHECK(dt_stats_verdict(1, &iv) != DT_VERDICT_FASTER);
    CHECK(dt_stats_verdict(1, &iv) == DT_VERDICT_INDISTINGUISHABLE);
}

static void test_verdict_rule(void) {
    dt_interval f = {0.55, 0.5, 0.6, 9}, s = {1.55, 1.5, 1.6, 9}, c1 = {1.0, 0.95, 1.05, 9};
    dt_interval eq = {1.01, 1.005, 1.015, 9}; /* above 1 but within ±2%: same */
    dt_interval sf = {0.98, 0.97, 0.99, 9};   /* slightly faster, outside ±2% band */
    dt_interval none = {NAN, NAN, NAN, 0};
    CHECK(dt_stats_verdict(1, &f) == DT_VERDICT_FASTER);
    CHECK(dt_stats_verdict(1, &s) == DT_VERDICT_SLOWER);
    CHECK(dt_stats_verdict(1, &c1) == DT_VERDICT_INDISTINGUISHABLE);
    CHECK(dt_stats_verdict(1, &eq) == DT_VERDICT_INDISTINGUISHABLE);
    CHECK(dt_stats_verdict(1, &sf) == DT_VERDICT_FASTER);
    CHECK(dt_stats_verdict(0, &f) == DT_VERDICT_INVALID);
    CHECK(dt_stats_verdict(1, &none) == DT_VERDICT_INVALID);
    CHECK(dt_stats_verdict(1, NULL) == DT_VERDICT_INVALID);
    CHECK(strcmp(dt_stats_verdict_name(DT_VERDICT_FASTER), "faster") == 0);
    CHECK(strcmp(dt_stats_verdict_name(DT_VERDICT_INSUFFICIENT), "insufficient") == 0);
    /* splitmix64 reference value for seed 0 (first output) */
    uint64_t st = 0;
    CHECK(dt_stats_splitmix64(&st) == 0xE220A8397B1DCDAFull);
}

int main(void) {
    test_quantiles();
    test_paired_ratios();
    test_bootstrap();
    test_noisy_not_faster();
    test_verdict_rule();
    return dt_check_summary("test_stats");
}
