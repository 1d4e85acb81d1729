/* test_decomp.c — the E2E decomposition arithmetic (src/stats/dt_decomp.c) on recorded
 * timestamps: realistic single calls of the H200's shape (a one-kernel native call, a
 * two-launch call whose first kernel starts before the second launch returns), a sample
 * whose segments do not add up to its measured call, order violations, empty samples and
 * the median sample of a set. */
#include <math.h>
#include <string.h>

#include "../dt_check.h"
#include "../../src/stats/dt_decomp.h"

#define T0 1000000000000LL /* a host CLOCK_MONOTONIC reading, ns */

static dt_decomp_interval g_l1[] = {{T0 + 1200, T0 + 3900}};
static dt_decomp_interval g_k1[] = {{T0 + 5200, T0 + 6100}};
/* torch-like: two launches, kernel 1 runs while launch 2 is still in the API */
static dt_decomp_interval g_l2[] = {{T0 + 2500, T0 + 5600}, {T0 + 6400, T0 + 8900}};
static dt_decomp_interval g_k2[] = {{T0 + 7000, T0 + 9500}, {T0 + 9900, T0 + 12000}};

static dt_decomp_raw one_kernel(double measured) {
    dt_decomp_raw r;
    memset(&r, 0, sizeof r);
    r.call_start_ns = T0;
    r.sync_return_ns = T0 + 9800;
    r.host_call_ns = measured;
    r.clock_uncertainty_ns = 180;
    r.clock_source = 1;
    r.launches = g_l1;
    r.n_launches = 1;
    r.kernels = g_k1;
    r.n_kernels = 1;
    return r;
}

static void test_one_kernel(void) {
    dt_decomp_raw r = one_kernel(9800);
    dt_decomp_segments s;
    CHECK(dt_decomp_compute(&r, &s) == 1, "consistent: %s", s.reason);
    CHECK(s.dispatch_ns == 1200 && s.launch_ns == 2700 && s.queue_ns == 1300,
          "dispatch %g launch %g queue %g", s.dispatch_ns, s.launch_ns, s.queue_ns);
    CHECK(s.kernel_ns == 900 && s.completion_ns == 3700, "kernel %g completion %g",
          s.kernel_ns, s.completion_ns);
    CHECK(s.sum_ns == 9800 && s.residual_ns == 0 && s.adds_up, "sum %g", s.sum_ns);
    CHECK(s.uncertainty_ns == 180 && s.tolerance_ns == 2 * 180 + DT_DECOMP_SLACK_NS);
    CHECK(s.launch_api_sum_ns == 2700 && s.overlap_ns == 0 && s.kernel_sum_ns == 900);
    CHECK(s.reason[0] == '\0');
    /* a measured call off by less than the tolerance still adds up */
    r = one_kernel(9800 + 400);
    CHECK(dt_decomp_compute(&r, &s) == 1 && s.adds_up && s.residual_ns == 400);
}

static void test_overlap(void) {
    dt_decomp_raw r;
    memset(&r, 0, sizeof r);
    r.call_start_ns = T0;
    r.sync_return_ns = T0 + 15500;
    r.host_call_ns = 15510;
    r.clock_uncertainty_ns = 250;
    r.launches = g_l2;
    r.n_launches = 2;
    r.kernels = g_k2;
    r.n_kernels = 2;
    dt_decomp_segments s;
    CHECK(dt_decomp_compute(&r, &s) == 1, "overlap is consistent: %s", s.reason);
    CHECK(s.dispatch_ns == 2500 && s.launch_ns == 6400, "launch = first enter to last exit");
    CHECK(s.launch_api_sum_ns == 3100 + 2500, "inside the APIs: %g", s.launch_api_sum_ns);
    CHECK(s.queue_ns == -1900 && s.overlap_ns == 1900, "queue %g overlap %g", s.queue_ns,
          s.overlap_ns);
    CHECK(s.kernel_ns == 5000 && s.kernel_sum_ns == 4600 && s.completion_ns == 3500);
    CHECK(s.sum_ns == 15500 && fabs(s.residual_ns - 10) < 1e-9 && s.adds_up);
    CHECK(s.n_launches == 2 && s.n_kernels == 2);
}

static void test_does_not_add_up(void) {
    dt_decomp_raw r = one_kernel(20000); /* measured 20 us, the timestamps span 9.8 */
    dt_decomp_segments s;
    CHECK(dt_decomp_compute(&r, &s) == 0, "flagged");
    CHECK(!s.adds_up && s.residual_ns == 20000 - 9800, "residual %g", s.residual_ns);
    CHECK(strstr(s.reason, "add up to 9800 ns, the measured call is 20000 ns") != NULL, "%s",
          s.reason);
    /* just outside the tolerance (2u + slack = 460) */
    r = one_kernel(9800 + 461);
    CHECK(dt_decomp_compute(&r, &s) == 0 && !s.adds_up);
    r = one_kernel(9800 - 461);
    CHECK(dt_decomp_compute(&r, &s) == 0 && !s.adds_up);
}

static void test_order(void) {
    /* the kernel timestamps are off the host clock by 5 us (callback not honoured and
     * not converted): the kernel "starts" before its launch was entered */
    dt_decomp_interval k[] = {{T0 + 1200 - 5000, T0 + 1200 - 4100}};
    dt_decomp_raw r = one_kernel(9800);
    r.kernels = k;
    dt_decomp_segments s;
    CHECK(dt_decomp_compute(&r, &s) == 0, "flagged");
    CHECK(s.adds_up, "it still telescopes");
    CHECK(strstr(s.reason, "kernel started 5000 ns before the first launch") != NULL, "%s",
          s.reason);
    /* within u it is not flagged */
    dt_decomp_interval k2[] = {{T0 + 1200 - 150, T0 + 1300}};
    r.kernels = k2;
    CHECK(dt_decomp_compute(&r, &s) == 1, "%s", s.reason);
    /* a kernel ending after the synchronization returned */
    dt_decomp_interval k3[] = {{T0 + 5200, T0 + 9800 + 500}};
    r.kernels = k3;
    CHECK(dt_decomp_compute(&r, &s) == 0 && strstr(s.reason, "after the synchronization"),
          "%s", s.reason);
    /* a launch entered before the call started */
    dt_decomp_interval l[] = {{T0 - 1000, T0 + 3900}};
    r = one_kernel(9800);
    r.launches = l;
    CHECK(dt_decomp_compute(&r, &s) == 0 && strstr(s.reason, "before the call started"), "%s",
          s.reason);
}

static void test_empty_and_inverted(void) {
    dt_decomp_raw r = one_kernel(9800);
    r.n_kernels = 0;
    dt_decomp_segments s;
    CHECK(dt_decomp_compute(&r, &s) == 0 && isnan(s.sum_ns) && isnan(s.dispatch_ns));
    CHECK(strstr(s.reason, "1 launches, 0 kernels") != NULL, "%s", s.reason);
    dt_decomp_interval l[] = {{T0 + 3900, T0 + 1200}};
    r = one_kernel(9800);
    r.launches = l;
    CHECK(dt_decomp_compute(&r, &s) == 0 && strstr(s.reason, "launch ends before"), "%s",
          s.reason);
    r = one_kernel(NAN);
    CHECK(dt_decomp_compute(&r, &s) == 0 && strstr(s.reason, "no measured call"), "%s",
          s.reason);
}

static void test_set(void) {
    dt_decomp_set set;
    memset(&set, 0, sizeof set);
    CHECK(dt_decomp_set_median(&set) == NULL);
    double m[] = {12000, 9800, 30000, 9900};
    for (int i = 0; i < 4; i++) {
        dt_decomp_raw a = one_kernel(m[i]), b;
        a.round = i;
        dt_decomp_raw_copy(&b, &a);
        CHECK(b.launches != g_l1 && b.launches[0].b_ns == g_l1[0].b_ns, "deep copy");
        dt_decomp_set_push(&set, &b);
    }
    const dt_decomp_raw *med = dt_decomp_set_median(&set);
    CHECK(med && med->host_call_ns == 9900 && med->round == 3, "lower median: %g",
          med ? med->host_call_ns : -1);
    dt_decomp_set_unavailable(&set, "first");
    dt_decomp_set_unavailable(&set, "second");
    CHECK(set.unavailable && strcmp(set.unavailable, "first") == 0);
    dt_decomp_set_free(&set);
    CHECK(set.n == 0 && set.v == NULL && set.unavailable == NULL);
}

int main(void) {
    test_one_kernel();
    test_overlap();
    test_does_not_add_up();
    test_order();
    test_empty_and_inverted();
    test_set();
    return dt_check_summary("test_decomp");
}
