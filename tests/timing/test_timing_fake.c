/* test_timing_fake.c — the real timing helper (src/timing/dt_timing.c) on a fake CUDA
 * driver (fake_cuda.c: streams are threads, events stamp the host clock, waits poll
 * host memory), so CI runs its held-window path without a GPU: a held control region
 * brackets only the "GPU" work while the host queues slowly (an unheld one brackets the
 * host's pace); a cuCtxSynchronize planted inside a hold and a hold never released nor
 * ended are both released by the watchdog in time and the region fails with the
 * reason; the refusals (release without hold, nested hold, hold inside a region, a
 * region on another stream, end without begin); early release; the spin-kernel
 * fallback where the driver refuses cuStreamWaitValue32 (and a forced wait value
 * refused with the driver's error line); no host mapping; no context; a failed probe
 * begin (no CUPTI here) dropping its hold; 200 held regions in a row. No GPU.
 * Run: ctest -R timing_fake (exit 1 on any failure). */
#define _GNU_SOURCE
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dualtime/dt_timing.h"
#include "fake_cuda.h"
#include "../dt_check.h"

static CUstream g_s, g_s2;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static void host_pause_us(long us) { /* the host's cost per call */
    struct timespec d = {0, us * 1000};
    nanosleep(&d, NULL);
}
static const char *last(void) { return dt_timing_last_error(); }
static int failed_with(int ok, const char *needle) { return !ok && strstr(last(), needle); }

/* One control region of `calls` fake kernels, the host pausing pause_us before each;
 * held or not. Returns the stream interval in us (NAN on failure) and fills *r. */
static double region(int hold, int calls, long pause_us, dt_timing_result *r) {
    memset(r, 0, sizeof *r);
    if (hold && !dt_timing_hold(g_s)) return NAN;
    if (!dt_timing_begin_control(g_s)) return NAN;
    for (int i = 0; i < calls; i++) {
        host_pause_us(pause_us);
        cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, g_s, NULL, NULL);
    }
    return dt_timing_end(r) ? r->stream_ns / 1e3 : NAN;
}

static void test_held_vs_unheld(uint32_t want_method, const char *what) {
    dt_timing_result r;
    double unheld = region(0, 10, 300, &r);
    CHECK(!isnan(unheld) && r.held == 0 && r.hold_method == 0, "%s: unheld region: %s", what,
          last());
    double held = region(1, 10, 300, &r);
    CHECK(!isnan(held) && r.held == 1 && r.hold_method == want_method &&
              r.hold_timeout_ms == 1000 && r.abi_version == 2,
          "%s: held region: held %u method %u timeout %u: %s", what, r.held, r.hold_method,
          r.hold_timeout_ms, last());
    CHECK(r.hold_queue_ns >= 10 * 300000ull, "%s: hold_queue_ns %llu < the host's 3 ms", what,
          (unsigned long long)r.hold_queue_ns);
    printf("%s: 10 calls, host 300 us per call, kernel 10 us: unheld %.1f us, held %.1f us "
           "(queued %.1f us)\n",
           what, unheld, held, (double)r.hold_queue_ns / 1e3);
    CHECK(unheld >= 2700, "%s: unheld %.1f us should follow the host's pace (>= 2700)", what,
          unheld);
    CHECK(held < 0.3 * unheld, "%s: held %.1f us not much shorter than unheld %.1f", what, held,
          unheld);
}

static void test_planted_sync(const char *what) {
    CHECK(dt_timing_configure_hold(100, 0), "configure 100 ms");
    dt_timing_result r;
    int ok = dt_timing_hold(g_s) && dt_timing_begin_control(g_s);
    cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, g_s, NULL, NULL);
    uint64_t t0 = now_ns();
    cuCtxSynchronize(); /* would deadlock without the watchdog */
    double ms = (double)(now_ns() - t0) / 1e6;
    printf("%s: planted cuCtxSynchronize inside a 100 ms hold returned after %.1f ms\n", what, ms);
    CHECK(ok && ms >= 95 && ms < 1000, "%s: sync returned after %.1f ms", what, ms);
    CHECK(failed_with(dt_timing_end(&r), "hold timed out after 100 ms: the calls synchronized "
                                         "on the host inside the hold"),
          "%s: end must fail with the reason: '%s'", what, last());
    CHECK(r.stream_ns == 0 && r.held == 0, "%s: a failed result is zeroed", what);
    /* a hold never released nor ended: the watchdog alone lets the stream run */
    ok = dt_timing_hold(g_s) && dt_timing_begin_control(g_s);
    cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, g_s, NULL, NULL);
    t0 = now_ns();
    while (cuStreamQuery(g_s) == CUDA_ERROR_NOT_READY && now_ns() - t0 < 3000000000ull)
        host_pause_us(100);
    ms = (double)(now_ns() - t0) / 1e6;
    CHECK(ok && cuStreamQuery(g_s) == CUDA_SUCCESS && ms >= 90 && ms < 1000,
          "%s: unreleased hold: the stream ran after %.1f ms", what, ms);
    CHECK(failed_with(dt_timing_end(&r), "hold timed out after 100 ms"),
          "%s: its end fails: '%s'", what, last());
    CHECK(dt_timing_configure_hold(0, 0), "configure back");
    CHECK(!isnan(region(1, 3, 0, &r)) && r.held, "%s: held region after the timeouts: %s", what,
          last());
}

static void test_refusals(void) {
    dt_timing_result r;
    CHECK(failed_with(dt_timing_release(), "release without hold"), "release without hold: '%s'",
          last());
    CHECK(!dt_timing_configure_hold(0, 3) && !dt_timing_configure_hold(600001, 0),
          "configure_hold: bad method and timeout refused");
    CHECK(dt_timing_hold(g_s), "hold: %s", last());
    CHECK(failed_with(dt_timing_hold(g_s), "nested hold"), "nested hold: '%s'", last());
    CHECK(failed_with(dt_timing_begin_control(g_s2), "stream"), "region on another stream: '%s'",
          last());
    CHECK(dt_timing_hold(g_s), "the failed begin dropped the hold: %s", last());
    CHECK(failed_with(dt_timing_end(&r), "end without begin"), "end without begin");
    CHECK(dt_timing_hold(g_s), "end without begin dropped the hold: %s", last());
    CHECK(dt_timing_begin_control(g_s), "begin");
    CHECK(failed_with(dt_timing_hold(g_s), "open region"), "hold inside a region: '%s'", last());
    cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, g_s, NULL, NULL);
    CHECK(failed_with(dt_timing_end(&r), "open region"), "... that region fails: '%s'", last());
    /* early release: fine, but not held */
    int ok = dt_timing_hold(g_s) && dt_timing_begin_control(g_s);
    for (int i = 0; i < 3; i++) cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, g_s, NULL, NULL);
    ok = ok && dt_timing_release();
    CHECK(dt_timing_release(), "a second early release is a no-op: %s", last());
    CHECK(ok && dt_timing_end(&r) && r.held == 0 && r.hold_method != 0,
          "early release: region ok, held %u: %s", r.held, last());
    /* a probe begin that fails (no CUPTI here) drops its hold */
    CHECK(dt_timing_hold(g_s), "hold for a probe");
    CHECK(!dt_timing_begin_probe(g_s, 8, DT_TIMING_PROBE_CONCURRENT), "probe begin fails here");
    CHECK(dt_timing_hold(g_s), "the failed probe begin dropped the hold: %s", last());
    CHECK(failed_with(dt_timing_begin_probe(g_s, 0, 0), "capacity"), "bad capacity: %s", last());
    CHECK(dt_timing_hold(g_s), "the refused capacity dropped the hold: %s", last());
    ok = dt_timing_begin_control(g_s);
    cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, g_s, NULL, NULL);
    CHECK(ok && dt_timing_end(&r) && r.held == 1, "that hold serves the next region: %s",
          last());
}

static void test_environment(void) {
    /* spin-kernel fallback: a context whose driver refuses stream memory operations */
    fake_cuda_context_id = 2;
    fake_cuda_refuse_wait_value = 1;
    test_held_vs_unheld(DT_TIMING_HOLD_SPIN_KERNEL, "spin kernel (wait value refused)");
    test_planted_sync("spin kernel");
    /* a forced wait value that the driver refuses: hold fails with the driver's line */
    fake_cuda_context_id = 3;
    CHECK(dt_timing_configure_hold(0, DT_TIMING_HOLD_WAIT_VALUE), "force wait value");
    CHECK(failed_with(dt_timing_hold(g_s), "cuStreamWaitValue32(trial) failed: "
                                           "CUDA_ERROR_NOT_SUPPORTED"),
          "forced wait value refused: '%s'", last());
    CHECK(dt_timing_configure_hold(0, 0), "automatic again");
    fake_cuda_refuse_wait_value = 0;
    dt_timing_result r;
    CHECK(!isnan(region(1, 2, 0, &r)) && r.hold_method == DT_TIMING_HOLD_WAIT_VALUE,
          "context 3, automatic, driver accepts: wait value (method %u): %s", r.hold_method,
          last());
    /* no host mapping */
    fake_cuda_context_id = 4;
    fake_cuda_no_map = 1;
    CHECK(failed_with(dt_timing_hold(g_s), "cannot map host memory"), "no mapping: '%s'", last());
    fake_cuda_no_map = 0;
    /* no context */
    fake_cuda_no_context = 1;
    CHECK(failed_with(dt_timing_hold(g_s), "no CUDA context"), "no context: '%s'", last());
    fake_cuda_no_context = 0;
    fake_cuda_context_id = 1;
}

int main(void) {
    cuStreamCreate(&g_s, CU_STREAM_NON_BLOCKING);
    cuStreamCreate(&g_s2, CU_STREAM_NON_BLOCKING);
    CHECK(dt_timing_abi_version() == 2, "ABI 2");
    test_held_vs_unheld(DT_TIMING_HOLD_WAIT_VALUE, "wait value");
    test_planted_sync("wait value");
    test_refusals();
    test_environment();
    dt_timing_result r;
    int held = 0;
    for (int i = 0; i < 200; i++) held += !isnan(region(1, 1, 0, &r)) && r.held == 1;
    CHECK(held == 200, "200 held regions in a row: %d held (%s)", held, last());
    printf("test_timing_fake: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
