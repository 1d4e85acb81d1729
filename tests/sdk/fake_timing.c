/* fake_timing.c — a stand-in libdualtime_timing.so (include/dualtime/dt_timing.h, ABI 2)
 * for the worker SDK's device requests without a GPU (tests/e2e/test_sdk_worker.sh,
 * through DUALTIME_TIMING_LIB): a region's stream_ns is the host time from begin to end
 * (at least 1000 ns), a probe reports one kernel record per region; hold() marks the next
 * region held. Nested or unmatched calls fail as the real helper's do. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "dualtime/dt_timing.h"

static int g_open, g_hold_next, g_held, g_probe;
static uint64_t g_t0;
static const char *g_err = "";

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint32_t dt_timing_abi_version(void) { return DT_TIMING_ABI_VERSION; }
const char *dt_timing_last_error(void) { return g_err; }
int dt_timing_set_persistent(int on) { return 1; }
int dt_timing_hold(void *stream) {
    if (g_open || g_hold_next) { g_err = "nested hold"; return 0; }
    g_hold_next = 1;
    return 1;
}
static int begin(int probe) {
    if (g_open) { g_err = "nested begin"; return 0; }
    g_open = 1; g_probe = probe; g_held = g_hold_next; g_hold_next = 0; g_err = "";
    g_t0 = now_ns();
    return 1;
}
int dt_timing_begin_control(void *stream) { return begin(0); }
int dt_timing_begin_probe(void *stream, uint32_t capacity, uint32_t kind) { return begin(1); }
int dt_timing_end(dt_timing_result *r) {
    memset(r, 0, sizeof *r);
    r->abi_version = DT_TIMING_ABI_VERSION;
    if (!g_open) { g_err = "end without begin"; return 0; }
    g_open = 0;
    uint64_t t1 = now_ns();
    r->scope = g_probe ? DT_TIMING_PROBE : DT_TIMING_CONTROL;
    r->stream_ns = t1 - g_t0 > 1000 ? (double)(t1 - g_t0) : 1000.0;
    r->host_begin_ns = g_t0;
    r->host_end_ns = t1;
    if (g_probe) {
        r->kernel_count = r->launch_count = r->records_stored = 1;
        r->kernel_sum_ns = r->kernel_span_ns = r->stream_ns / 2;
        r->clock_source = DT_TIMING_CLOCK_CALLBACK;
    }
    r->held = (uint32_t)g_held;
    if (g_held) {
        r->hold_method = DT_TIMING_HOLD_WAIT_VALUE;
        r->hold_timeout_ms = 1000;
        r->hold_queue_ns = 10;
    }
    return 1;
}
int dt_timing_kernel_record(uint64_t i, dt_timing_kernel *k) {
    if (i != 0) return 0;
    memset(k, 0, sizeof *k);
    strcpy(k->name, "fake_kernel");
    k->start_ns = g_t0 + 1;
    k->end_ns = g_t0 + 2;
    k->grid[0] = k->grid[1] = k->grid[2] = k->block[0] = k->block[1] = k->block[2] = 1;
    k->correlation_id = 1;
    return 1;
}
