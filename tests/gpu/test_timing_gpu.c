/* test_timing_gpu.c — device test of libdualtime_timing.so (SPEC §5) on a real GPU.
 *
 * Compiles two tiny kernels with NVRTC (an increment and a globaltimer spin), drives
 * them through the CUDA driver API and proves, printing every number it relies on:
 * restoration for a long kernel (control samples before and after all probe sessions
 * agree within 5%; the small kernel's before/after is printed, not asserted: CUPTI
 * lingers), numerical transparency (outputs identical with and without the probe), both probe
 * kinds, several kernels and two streams (joined: counted; unjoined and still running:
 * fails), capacity overflow, nested begin, end without begin, empty regions, incomplete
 * work (end-event timeout), dropped records (starved activity buffers), repeated CUPTI
 * sessions in one process (re-initialisation after cuptiFinalize), the clock
 * calibration and persistent mode (CUPTI kept attached between regions: later regions
 * within 1.5x of the control, records never include launches made between regions,
 * kind switch, recovery after a failed region, controls refused), and held windows
 * (ABI 2; sections 1b and 8: held vs unheld control of 64 tiny launches and of one, both
 * hold methods, a cuCtxSynchronize planted inside a hold failing in time with the
 * reason, a hold never released nor ended released by the watchdog alone, the refusals,
 * early release, and held probe stream interval vs held control for the large kernel,
 * batch and single, both kinds). Ends with Markdown summary tables for
 * docs/device-timing.md.
 *
 * Built twice from this one file: the test body as a module (test_timing_gpu_impl.so,
 * which links libcuda, NVRTC and the helper) and a launcher executable (built with
 * DT_TIMING_GPU_LAUNCHER, links nothing of CUDA) that exits 77 when libcuda.so.1 cannot
 * be loaded (no driver) and otherwise dlopen()s the module given as argv[1] and runs it.
 *
 * Exit: 0 all passed, 1 a check failed, 77 no driver or no device (skipped).
 * Run: ctest --test-dir BUILD -R timing_gpu --output-on-failure (label gpu). */
#ifdef DT_TIMING_GPU_LAUNCHER
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH/test_timing_gpu_impl.so\n", argv[0]);
        return 1;
    }
    if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) {
        printf("SKIP: no CUDA driver: %s\n", dlerror());
        return 77;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("FAIL: dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    int (*run)(void) = (int (*)(void))dlsym(h, "dt_timing_gpu_test");
    if (!run) {
        printf("FAIL: dt_timing_gpu_test not found in %s\n", argv[1]);
        return 1;
    }
    return run();
}
#else
#define _GNU_SOURCE
#include <cuda.h>
#include <math.h>
#include <nvrtc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/dt_cuda_check.h"
#include "dualtime/dt_timing.h"
#include "../dt_check.h"

/* A check of the test: tests/dt_check.h's CHECK under this file's name, verbose (every
 * check prints PASS or FAIL with what was seen; main sets g_check_verbose). */
#define EXPECT(...) CHECK(__VA_ARGS__)

/* Setup calls of the test itself: a failure here aborts the test (exit 1) with the one
 * check family's line (src/common/dt_cuda_check.h). */
#define CK(call) DT_CUDA_OR_EXIT(cu, call)
#define NV(call) DT_CUDA_OR_EXIT(nvrtc, call)

static const char *k_source =
    "extern \"C\" __global__ void dt_inc(float *x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] += 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void dt_spin(unsigned long long ns) {\n"
    "  unsigned long long t0, t;\n"
    "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "  do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n"
    "}\n";

static CUfunction g_inc, g_spin;
static CUstream g_s1, g_s2;

static void launch_inc(CUstream s, CUdeviceptr x, int n) {
    void *args[] = {&x, &n};
    CK(cuLaunchKernel(g_inc, (unsigned)((n + 255) / 256), 1, 1, 256, 1, 1, 0, s, args, NULL));
}
static void launch_spin(CUstream s, unsigned long long ns) {
    void *args[] = {&ns};
    CK(cuLaunchKernel(g_spin, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Prints a result in one block. */
static void print_result(const char *what, const dt_timing_result *r) {
    printf("      %s: scope=%s kind=%s stream=%.0f ns kernels=%llu launches=%llu "
           "sum=%.0f ns span=%.0f ns other_stream=%llu region_stream=%u clock=%s "
           "offset=%.0f ns +- %.0f ns\n",
           what, r->scope ? "probe" : "control",
           r->scope ? (r->probe_kind ? "serialized" : "concurrent") : "-", r->stream_ns,
           (unsigned long long)r->kernel_count, (unsigned long long)r->launch_count,
           r->kernel_sum_ns, r->kernel_span_ns, (unsigned long long)r->other_stream_kernels,
           r->region_stream_id,
           r->clock_source == DT_TIMING_CLOCK_CALLBACK ? "callback"
           : r->clock_source == DT_TIMING_CLOCK_OFFSET ? "offset"
                                                       : "none",
           r->clock_offset_ns, r->clock_uncertainty_ns);
}

/* Control samples: `reps` increments of n floats per region; µs per launch. */
static void control_samples(CUdeviceptr x, int n, int reps, int samples, double *us) {
    for (int s = 0; s < samples; s++) {
        dt_timing_result r;
        if (!dt_timing_begin_control(g_s1)) {
            printf("      begin_control failed: %s\n", dt_timing_last_error());
            us[s] = NAN;
            continue;
        }
        for (int i = 0; i < reps; i++) launch_inc(g_s1, x, n);
        us[s] = dt_timing_end(&r) ? r.stream_ns / reps / 1e3 : NAN;
        if (isnan(us[s])) printf("      control end failed: %s\n", dt_timing_last_error());
    }
}

/* Probe samples: per-launch stream µs and per-kernel CUPTI µs (sum / count). */
static int g_probe_sessions_ok;
static void probe_samples(CUdeviceptr x, int n, int reps, int samples, uint32_t kind,
                          double *stream_us, double *kernel_us) {
    for (int s = 0; s < samples; s++) {
        dt_timing_result r;
        stream_us[s] = kernel_us[s] = NAN;
        if (!dt_timing_begin_probe(g_s1, (uint32_t)reps, kind)) {
            printf("      begin_probe failed: %s\n", dt_timing_last_error());
            continue;
        }
        for (int i = 0; i < reps; i++) launch_inc(g_s1, x, n);
        if (dt_timing_end(&r) && r.kernel_count == (uint64_t)reps) {
            stream_us[s] = r.stream_ns / reps / 1e3;
            kernel_us[s] = r.kernel_sum_ns / (double)r.kernel_count / 1e3;
            g_probe_sessions_ok++;
        } else {
            printf("      probe end failed: %s\n", dt_timing_last_error());
        }
    }
}

static int expect_error(int ok, const char *needle) {
    return !ok && strstr(dt_timing_last_error(), needle) != NULL;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Held regions: `reps` increments of n floats each; probe_kind < 0: control. Fills
 * us[] (stream us per launch) and checks every result is held with the method `method`
 * (0: any). Returns the number of regions that failed. */
static int held_samples(CUdeviceptr x, int n, int reps, int samples, int probe_kind,
                        uint32_t method, double *us) {
    int failed = 0;
    for (int s = 0; s < samples; s++) {
        dt_timing_result r;
        us[s] = NAN;
        int ok = dt_timing_hold(g_s1);
        ok = ok && (probe_kind < 0 ? dt_timing_begin_control(g_s1)
                                   : dt_timing_begin_probe(g_s1, (uint32_t)reps + 8,
                                                           (uint32_t)probe_kind));
        if (!ok) {
            printf("      held begin failed: %s\n", dt_timing_last_error());
            failed++;
            continue;
        }
        for (int i = 0; i < reps; i++) launch_inc(g_s1, x, n);
        if (!dt_timing_end(&r) || !r.held || (method && r.hold_method != method) ||
            r.hold_queue_ns == 0 || (probe_kind >= 0 && r.kernel_count != (uint64_t)reps)) {
            printf("      held end failed or not held (held %u, method %u, kernels %llu): "
                   "%s\n", r.held, r.hold_method, (unsigned long long)r.kernel_count,
                   dt_timing_last_error());
            failed++;
            continue;
        }
        us[s] = r.stream_ns / reps / 1e3;
    }
    return failed;
}

/* Held-window numbers for the summary (us per launch, medians). */
static struct {
    double unheld_batch, held_batch, unheld_single, held_single, spin_batch, spin_single;
    double sync_fail_ms, watchdog_ms;
    double ctl_large_batch, ctl_large_single, probe_large_batch[2], probe_large_single[2];
    double unheld_probe_single[2], unheld_ctl_single, old_flush_probe_single[2];
    uint32_t method;
} g_held;

/* Section 1b (before any CUPTI session): held control, both methods, the refusals, a
 * planted synchronization and a hold nobody releases. */
static void held_control_section(CUdeviceptr small, int n_small, int samples) {
    double tmp[64];
    dt_timing_result r;
    /* refusals */
    EXPECT(expect_error(dt_timing_release(), "release without hold"),
           "release without hold refused: '%s'", dt_timing_last_error());
    EXPECT(!dt_timing_configure_hold(0, 3) && !dt_timing_configure_hold(600001, 0),
           "configure_hold refuses method 3 and 600001 ms");
    EXPECT(dt_timing_hold(g_s1), "hold (err '%s')", dt_timing_last_error());
    EXPECT(expect_error(dt_timing_hold(g_s1), "nested hold"), "nested hold refused: '%s'",
           dt_timing_last_error());
    EXPECT(!dt_timing_begin_control(g_s2) && strstr(dt_timing_last_error(), "stream"),
           "a hold asked for s1 refuses a region on s2: '%s'", dt_timing_last_error());
    EXPECT(dt_timing_hold(g_s1) && dt_timing_begin_control(g_s1),
           "the failed begin dropped the hold: a new hold works (err '%s')",
           dt_timing_last_error());
    EXPECT(expect_error(dt_timing_hold(g_s1), "open region"), "hold inside a region refused");
    launch_inc(g_s1, small, n_small);
    EXPECT(expect_error(dt_timing_end(&r), "open region"),
           "... and that region fails closed, like a nested begin: '%s'", dt_timing_last_error());
    EXPECT(dt_timing_hold(g_s1) && dt_timing_begin_control(g_s1), "hold + begin");
    for (int i = 0; i < 4; i++) launch_inc(g_s1, small, n_small);
    EXPECT(dt_timing_end(&r) && r.held == 1 && r.hold_method != 0 && r.hold_timeout_ms == 1000,
           "end releases the hold itself: held %u, method %s, timeout %u ms, queued %.1f us "
           "(err '%s')",
           r.held, dt_timing_hold_method_name(r.hold_method), r.hold_timeout_ms,
           (double)r.hold_queue_ns / 1e3, dt_timing_last_error());
    g_held.method = r.hold_method;
    /* early release: allowed, the result is not held */
    int ok = dt_timing_hold(g_s1) && dt_timing_begin_control(g_s1);
    for (int i = 0; i < 4; i++) launch_inc(g_s1, small, n_small);
    ok = ok && dt_timing_release();
    EXPECT(ok && dt_timing_end(&r) && r.held == 0 && r.hold_method != 0,
           "early release: region ok, held %u (err '%s')", r.held, dt_timing_last_error());

    /* held vs unheld, wait value (automatic) then the spin kernel */
    control_samples(small, n_small, 64, samples, tmp);
    g_held.unheld_batch = median(tmp, samples);
    control_samples(small, n_small, 1, samples, tmp);
    g_held.unheld_single = median(tmp, samples);
    int f = held_samples(small, n_small, 64, samples, -1, 0, tmp);
    g_held.held_batch = median(tmp, samples);
    f += held_samples(small, n_small, 1, samples, -1, 0, tmp);
    g_held.held_single = median(tmp, samples);
    EXPECT(f == 0 && g_held.held_batch < 0.75 * g_held.unheld_batch &&
               g_held.held_single < g_held.unheld_single,
           "held windows (%s): 64 tiny launches %.3f us/launch held vs %.3f unheld (%.2fx, "
           "want < 0.75); single %.3f held vs %.3f unheld; %d failed regions",
           dt_timing_hold_method_name(g_held.method), g_held.held_batch, g_held.unheld_batch,
           g_held.held_batch / g_held.unheld_batch, g_held.held_single, g_held.unheld_single, f);
    EXPECT(dt_timing_configure_hold(0, DT_TIMING_HOLD_SPIN_KERNEL), "configure spin kernel");
    f = held_samples(small, n_small, 64, samples, -1, DT_TIMING_HOLD_SPIN_KERNEL, tmp);
    g_held.spin_batch = median(tmp, samples);
    f += held_samples(small, n_small, 1, samples, -1, DT_TIMING_HOLD_SPIN_KERNEL, tmp);
    g_held.spin_single = median(tmp, samples);
    EXPECT(f == 0 && g_held.spin_batch < 0.75 * g_held.unheld_batch,
           "spin-kernel hold: %.3f us/launch (64), single %.3f; %d failed regions",
           g_held.spin_batch, g_held.spin_single, f);

    /* a synchronization planted inside the hold fails in time, both methods */
    for (uint32_t m = DT_TIMING_HOLD_WAIT_VALUE; m <= DT_TIMING_HOLD_SPIN_KERNEL; m++) {
        EXPECT(dt_timing_configure_hold(200, m), "configure 200 ms, method %u", m);
        ok = dt_timing_hold(g_s1) && dt_timing_begin_control(g_s1);
        for (int i = 0; i < 4; i++) launch_inc(g_s1, small, n_small);
        uint64_t t0 = now_ns();
        CK(cuCtxSynchronize()); /* blocks until the watchdog releases the stream */
        double ms = (double)(now_ns() - t0) / 1e6;
        if (m == DT_TIMING_HOLD_WAIT_VALUE) g_held.sync_fail_ms = ms;
        EXPECT(ok && expect_error(dt_timing_end(&r), "hold timed out after 200 ms") &&
                   strstr(dt_timing_last_error(), "synchronized on the host inside the hold"),
               "planted cuCtxSynchronize inside a %s hold returned after %.1f ms and the "
               "region failed: '%s'",
               dt_timing_hold_method_name(m), ms, dt_timing_last_error());
        EXPECT(ms >= 190 && ms < 2000, "the watchdog released it in time: %.1f ms", ms);
    }
    /* a hold nobody releases and no end: the watchdog alone lets the stream run */
    ok = dt_timing_hold(g_s1) && dt_timing_begin_control(g_s1);
    launch_inc(g_s1, small, n_small);
    uint64_t t0 = now_ns();
    CUresult q = CUDA_ERROR_NOT_READY;
    while (q == CUDA_ERROR_NOT_READY && now_ns() - t0 < 3000000000ull) q = cuStreamQuery(g_s1);
    g_held.watchdog_ms = (double)(now_ns() - t0) / 1e6;
    EXPECT(ok && q == CUDA_SUCCESS && g_held.watchdog_ms < 2000,
           "an unreleased hold without end: the stream ran after %.1f ms (watchdog 200 ms)",
           g_held.watchdog_ms);
    EXPECT(expect_error(dt_timing_end(&r), "hold timed out"), "its end fails: '%s'",
           dt_timing_last_error());
    EXPECT(dt_timing_configure_hold(0, 0), "configure hold back to defaults");
    EXPECT(dt_timing_hold(g_s1) && dt_timing_begin_control(g_s1), "hold after the timeouts");
    launch_inc(g_s1, small, n_small);
    EXPECT(dt_timing_end(&r) && r.held, "a held region after the timeouts (err '%s')",
           dt_timing_last_error());
}

/* Unheld single probe regions of one large increment, each after a prime launch. */
static int unheld_probe_singles(CUdeviceptr large, int n_large, int samples, int kind,
                                double *us) {
    int failed = 0;
    for (int s = 0; s < samples; s++) {
        dt_timing_result r;
        launch_inc(g_s1, large, n_large);
        CK(cuStreamSynchronize(g_s1));
        us[s] = NAN;
        if (dt_timing_begin_probe(g_s1, 8, (uint32_t)kind)) {
            launch_inc(g_s1, large, n_large);
            if (dt_timing_end(&r) && r.kernel_count == 1) us[s] = r.stream_ns / 1e3;
        }
        if (isnan(us[s])) {
            printf("      unheld probe single failed: %s\n", dt_timing_last_error());
            failed++;
        }
    }
    return failed;
}

/* Section 8: held probe vs held control for the large kernel, the probe in persistent
 * mode as the orchestrator's probe workers run it (a prime launch before every region,
 * so that per-module first-launch costs are paid outside), both kinds; and the unheld
 * probe single call, which read 345-620 us for every op before the warm-up stopped
 * force-flushing CUPTI's buffer (issue 12). Controls first (refused in persistent mode). */
static void held_probe_section(CUdeviceptr large, int n_large, int samples) {
    double tmp[64];
    int f = held_samples(large, n_large, 8, samples, -1, 0, tmp);
    g_held.ctl_large_batch = median(tmp, samples);
    f += held_samples(large, n_large, 1, samples, -1, 0, tmp);
    g_held.ctl_large_single = median(tmp, samples);
    control_samples(large, n_large, 1, samples, tmp);
    g_held.unheld_ctl_single = median(tmp, samples);
    for (int kind = 0; kind < 2; kind++) {
        EXPECT(dt_timing_set_persistent(kind ? DT_TIMING_PERSISTENT_SERIALIZED
                                             : DT_TIMING_PERSISTENT_CONCURRENT),
               "persistent %d (err '%s')", kind, dt_timing_last_error());
        launch_inc(g_s1, large, n_large); /* the warmup under the probe */
        CK(cuStreamSynchronize(g_s1));
        f += held_samples(large, n_large, 8, samples, kind, 0, tmp);
        g_held.probe_large_batch[kind] = median(tmp, samples);
        f += held_samples(large, n_large, 1, samples, kind, 0, tmp);
        g_held.probe_large_single[kind] = median(tmp, samples);
        f += unheld_probe_singles(large, n_large, samples, kind, tmp);
        g_held.unheld_probe_single[kind] = median(tmp, samples);
        /* the old order (force-flush after the warm-up), for the diagnosis */
        setenv("DUALTIME_TIMING_FLUSH_AFTER_WARMUP", "1", 1);
        f += unheld_probe_singles(large, n_large, samples, kind, tmp);
        unsetenv("DUALTIME_TIMING_FLUSH_AFTER_WARMUP");
        g_held.old_flush_probe_single[kind] = median(tmp, samples);
        EXPECT(dt_timing_set_persistent(DT_TIMING_PERSISTENT_OFF), "persistent off");
    }
    double rb0 = g_held.probe_large_batch[0] / g_held.ctl_large_batch;
    double rb1 = g_held.probe_large_batch[1] / g_held.ctl_large_batch;
    double rs0 = g_held.probe_large_single[0] / g_held.ctl_large_single;
    double rs1 = g_held.probe_large_single[1] / g_held.ctl_large_single;
    EXPECT(f == 0, "held and primed probe regions all held and complete (%d failed)", f);
    /* The concurrent kind instruments kernel code (~6-7% on this kernel, h200-cupti.md);
     * the serialized kind leaves it at its own speed. */
    EXPECT(rb1 >= 0.97 && rb1 <= 1.03 && rb0 >= 0.95 && rb0 <= 1.12,
           "held probe/control, large, batch of 8: serialized %.3f (want 0.97..1.03), "
           "concurrent %.3f (want 0.95..1.12)", rb1, rb0);
    EXPECT(rs1 >= 0.95 && rs1 <= 1.05 && rs0 >= 0.95 && rs0 <= 1.15,
           "held probe/control, large, single: serialized %.3f (want 0.95..1.05), "
           "concurrent %.3f (want 0.95..1.15)", rs1, rs0);
    for (int kind = 0; kind < 2; kind++)
        EXPECT(g_held.unheld_probe_single[kind] < g_held.unheld_ctl_single + 100.0,
               "unheld %s probe single %.3f us vs unheld control single %.3f us: the "
               "probe's own setup stays out of the window (it added 300-500 us before)",
               kind ? "serialized" : "concurrent", g_held.unheld_probe_single[kind],
               g_held.unheld_ctl_single);
}

int dt_timing_gpu_test(void);
int dt_timing_gpu_test(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_check_verbose = 1;
    CUresult rc = cuInit(0);
    int ndev = 0;
    if (rc != CUDA_SUCCESS || cuDeviceGetCount(&ndev) != CUDA_SUCCESS || ndev == 0) {
        printf("SKIP: no CUDA driver or no device (cuInit: %d, devices: %d)\n", (int)rc, ndev);
        return 77;
    }
    EXPECT(dt_timing_abi_version() == DT_TIMING_ABI_VERSION, "abi version %u",
           dt_timing_abi_version());

    CUdevice dev;
    CUcontext ctx;
    char devname[256];
    int ccmaj, ccmin, drv;
    CK(cuDeviceGet(&dev, 0));
    CK(cuDeviceGetName(devname, sizeof devname, dev));
    CK(cuDeviceGetAttribute(&ccmaj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CK(cuDeviceGetAttribute(&ccmin, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CK(cuDriverGetVersion(&drv));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    printf("device: %s (sm_%d%d), driver API %d\n", devname, ccmaj, ccmin, drv);

    /* NVRTC: compile for the device's own architecture to a cubin. */
    nvrtcProgram prog;
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", ccmaj, ccmin);
    const char *opts[] = {arch};
    NV(nvrtcCreateProgram(&prog, k_source, "dt_timing_test.cu", 0, NULL, NULL));
    if (nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS) {
        size_t len = 0;
        nvrtcGetProgramLogSize(prog, &len);
        char *log = malloc(len + 1);
        nvrtcGetProgramLog(prog, log);
        fprintf(stderr, "NVRTC failed:\n%s\n", log);
        return 1;
    }
    size_t cubin_len = 0;
    NV(nvrtcGetCUBINSize(prog, &cubin_len));
    char *cubin = malloc(cubin_len);
    NV(nvrtcGetCUBIN(prog, cubin));
    NV(nvrtcDestroyProgram(&prog));
    CUmodule mod;
    CK(cuModuleLoadData(&mod, cubin));
    CK(cuModuleGetFunction(&g_inc, mod, "dt_inc"));
    CK(cuModuleGetFunction(&g_spin, mod, "dt_spin"));
    CK(cuStreamCreate(&g_s1, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&g_s2, CU_STREAM_NON_BLOCKING));

    const int n_small = 4369, n_large = 1 << 26; /* as in h200-cupti.md */
    CUdeviceptr small_a, small_b, large;
    CK(cuMemAlloc(&small_a, n_small * sizeof(float)));
    CK(cuMemAlloc(&small_b, n_small * sizeof(float)));
    CK(cuMemAlloc(&large, (size_t)n_large * sizeof(float)));
    CK(cuMemsetD32(small_a, 0, n_small));
    CK(cuMemsetD32(large, 0, n_large));
    CK(cuCtxSynchronize());

    enum { SAMPLES = 41, REPS_SMALL = 64, REPS_LARGE = 8 };
    double tmp[SAMPLES], tmp2[SAMPLES];

    /* ---- 1. control before any CUPTI session (warm up both first: clocks ramp) ---- */
    control_samples(large, n_large, REPS_LARGE, 5, tmp);
    control_samples(small_a, n_small, REPS_SMALL, 10, tmp);
    control_samples(small_a, n_small, REPS_SMALL, SAMPLES, tmp);
    double ctl_small_before = median(tmp, SAMPLES);
    control_samples(large, n_large, REPS_LARGE, SAMPLES, tmp);
    double ctl_large_before = median(tmp, SAMPLES);
    EXPECT(ctl_small_before > 0 && ctl_large_before > 0,
           "control before any probe: small %.3f us/launch, large %.3f us/launch",
           ctl_small_before, ctl_large_before);

    /* ---- 1b. held windows, control (no CUPTI yet) --------------------------------- */
    held_control_section(small_a, n_small, SAMPLES);

    /* ---- 2. numerical transparency, several kernels, both kinds ------------------- */
    float *host_ctl = malloc(n_small * sizeof(float));
    float *host_probe = malloc(n_small * sizeof(float));
    dt_timing_result r;
    CK(cuMemsetD32(small_b, 0, n_small));
    CK(cuCtxSynchronize());
    EXPECT(dt_timing_begin_control(g_s1), "begin_control");
    for (int i = 0; i < 5; i++) launch_inc(g_s1, small_b, n_small);
    EXPECT(dt_timing_end(&r) && r.stream_ns > 0 && r.kernel_count == 0,
           "control of 5 increments: stream %.0f ns (err '%s')", r.stream_ns,
           dt_timing_last_error());
    CK(cuMemcpyDtoH(host_ctl, small_b, n_small * sizeof(float)));
    for (uint32_t kind = 0; kind < 2; kind++) {
        const char *kname = kind ? "serialized" : "concurrent";
        CK(cuMemsetD32(small_b, 0, n_small));
        CK(cuCtxSynchronize());
        int ok = dt_timing_begin_probe(g_s1, 16, kind);
        EXPECT(ok, "begin_probe(%s) (err '%s')", kname, dt_timing_last_error());
        for (int i = 0; i < 5; i++) launch_inc(g_s1, small_b, n_small);
        ok = dt_timing_end(&r);
        EXPECT(ok && r.kernel_count == 5 && r.launch_count == 5 && r.records_stored == 5,
               "probe(%s) of 5 increments: %llu kernels, %llu launches (err '%s')", kname,
               (unsigned long long)r.kernel_count, (unsigned long long)r.launch_count,
               dt_timing_last_error());
        print_result(kname, &r);
        EXPECT(ok && r.kernel_sum_ns > 0 && r.kernel_span_ns >= 0.99 * r.kernel_sum_ns &&
                   r.kernel_sum_ns < 1.1 * r.stream_ns,
               "probe(%s): 0 < sum %.0f <= span %.0f (/0.99), sum < 1.1 x stream %.0f ns",
               kname, r.kernel_sum_ns, r.kernel_span_ns, r.stream_ns);
        EXPECT(ok && r.clock_source == DT_TIMING_CLOCK_CALLBACK,
               "probe(%s) clock: %s, offset %.0f ns, uncertainty %.0f ns", kname,
               r.clock_source == DT_TIMING_CLOCK_CALLBACK ? "CLOCK_MONOTONIC via callback"
                                                          : "converted by offset",
               r.clock_offset_ns, r.clock_uncertainty_ns);
        for (uint64_t i = 0; ok && i < r.records_stored; i++) {
            dt_timing_kernel k;
            if (!dt_timing_kernel_record(i, &k)) break;
            printf("      record %llu: %s grid %u,%u,%u block %u,%u,%u stream %u corr %llu "
                   "start +%.3f us dur %.3f us\n",
                   (unsigned long long)i, k.name, k.grid[0], k.grid[1], k.grid[2],
                   k.block[0], k.block[1], k.block[2], k.stream_id,
                   (unsigned long long)k.correlation_id,
                   (double)(k.start_ns - r.host_begin_ns) / 1e3,
                   (double)(k.end_ns - k.start_ns) / 1e3);
            if (i == 0)
                EXPECT(strcmp(k.name, "dt_inc") == 0 && k.block[0] == 256 &&
                           k.grid[0] == (uint32_t)((n_small + 255) / 256) &&
                           k.start_ns >= r.host_begin_ns && k.end_ns <= r.host_end_ns,
                       "record 0 names dt_inc, geometry matches, lies in [begin, end]");
        }
        /* launch API timestamps (the E2E decomposition): one per launch, in order of
         * entry, enter <= exit, the record with its correlation id not starting before
         * its launch was entered (within the calibration's uncertainty) */
        for (uint64_t i = 0; ok && i < r.launch_count; i++) {
            dt_timing_launch l;
            int got = dt_timing_launch_record(i, &l);
            dt_timing_kernel k = {0};
            int matched = 0;
            for (uint64_t j = 0; got && j < r.records_stored; j++)
                if (dt_timing_kernel_record(j, &k) && k.correlation_id == l.correlation_id) {
                    matched = 1;
                    break;
                }
            EXPECT(got && l.enter_ns <= l.exit_ns && l.enter_ns >= r.host_begin_ns &&
                       matched && (double)k.start_ns + r.clock_uncertainty_ns >= (double)l.enter_ns,
                   "probe(%s) launch %llu (%s): enter +%.3f us, in API %.3f us, its kernel "
                   "starts %.3f us after entry", kname, (unsigned long long)i, got ? l.api : "?",
                   (double)(l.enter_ns - r.host_begin_ns) / 1e3,
                   (double)(l.exit_ns - l.enter_ns) / 1e3,
                   ((double)k.start_ns - (double)l.enter_ns) / 1e3);
        }
        EXPECT(!dt_timing_launch_record(r.launch_count, &(dt_timing_launch){0}),
               "launch index %llu of %llu refused", (unsigned long long)r.launch_count,
               (unsigned long long)r.launch_count);
        CK(cuMemcpyDtoH(host_probe, small_b, n_small * sizeof(float)));
        EXPECT(memcmp(host_ctl, host_probe, n_small * sizeof(float)) == 0 &&
                   host_probe[0] == 5.0f && host_probe[n_small - 1] == 5.0f,
               "transparency (%s): outputs bit-identical with and without probe (x=%g)",
               kname, host_probe[0]);
    }
    EXPECT(!dt_timing_kernel_record(5, &(dt_timing_kernel){0}), "record index 5 of 5 refused");

    /* ---- 3. two streams ----------------------------------------------------------- */
    {
        CUevent join;
        CK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
        int ok = dt_timing_begin_probe(g_s1, 16, DT_TIMING_PROBE_CONCURRENT);
        launch_inc(g_s1, small_a, n_small);
        launch_inc(g_s2, small_b, n_small);
        launch_inc(g_s2, small_b, n_small);
        launch_inc(g_s1, small_a, n_small);
        CK(cuEventRecord(join, g_s2));
        CK(cuStreamWaitEvent(g_s1, join, 0));
        ok = dt_timing_end(&r) && ok;
        print_result("two streams, joined", &r);
        EXPECT(ok && r.kernel_count == 4 && r.other_stream_kernels == 2,
               "joined second stream is counted: %llu kernels, %llu on the other stream "
               "(err '%s')",
               (unsigned long long)r.kernel_count, (unsigned long long)r.other_stream_kernels,
               dt_timing_last_error());
        ok = dt_timing_begin_probe(g_s1, 16, DT_TIMING_PROBE_CONCURRENT);
        launch_inc(g_s1, small_a, n_small);
        launch_spin(g_s2, 300000000ull); /* 300 ms, never joined */
        ok = ok && !dt_timing_end(&r);
        printf("      unjoined: %s\n", dt_timing_last_error());
        EXPECT(ok, "unjoined second stream still running at end fails closed");
        CK(cuCtxSynchronize());
        CK(cuEventDestroy(join));
    }

    /* ---- 4. fail-closed rules ----------------------------------------------------- */
    EXPECT(expect_error(dt_timing_end(&r), "end without begin"),
           "end without begin fails: '%s'", dt_timing_last_error());
    EXPECT(r.stream_ns == 0 && r.kernel_count == 0, "a failed end fills no number");

    dt_timing_begin_probe(g_s1, 3, DT_TIMING_PROBE_CONCURRENT);
    for (int i = 0; i < 4; i++) launch_inc(g_s1, small_a, n_small);
    EXPECT(expect_error(dt_timing_end(&r), "capacity exceeded"),
           "4 launches in capacity 3 fail: '%s'", dt_timing_last_error());
    EXPECT(expect_error(dt_timing_begin_probe(g_s1, 0, 0), "capacity 0"),
           "capacity 0 refused: '%s'", dt_timing_last_error());

    dt_timing_begin_probe(g_s1, 8, DT_TIMING_PROBE_CONCURRENT);
    EXPECT(expect_error(dt_timing_begin_control(g_s1), "nested begin"),
           "nested begin refused: '%s'", dt_timing_last_error());
    launch_inc(g_s1, small_a, n_small);
    EXPECT(expect_error(dt_timing_end(&r), "nested begin"),
           "the region around a nested begin fails too: '%s'", dt_timing_last_error());
    dt_timing_begin_control(g_s1);
    EXPECT(expect_error(dt_timing_begin_control(g_s1), "nested begin"),
           "nested control begin refused");
    launch_inc(g_s1, small_a, n_small);
    EXPECT(!dt_timing_end(&r), "the control around it fails");

    dt_timing_begin_probe(g_s1, 8, DT_TIMING_PROBE_CONCURRENT);
    EXPECT(expect_error(dt_timing_end(&r), "empty region"),
           "empty probe fails: '%s'", dt_timing_last_error());
    {
        int ok = dt_timing_begin_control(g_s1) && dt_timing_end(&r);
        printf("INFO  empty control: %s (stream %.0f ns%s%s)\n",
               ok ? "succeeded: back-to-back events show time, the control cannot tell "
                    "an empty region"
                  : "failed closed",
               r.stream_ns, ok ? "" : ", ", ok ? "" : dt_timing_last_error());
    }

    /* Incomplete work: the end event is not reached within the timeout. */
    EXPECT(dt_timing_configure(0, 0, 100), "configure sync timeout 100 ms");
    dt_timing_begin_probe(g_s1, 8, DT_TIMING_PROBE_CONCURRENT);
    launch_spin(g_s1, 600000000ull); /* 600 ms */
    EXPECT(expect_error(dt_timing_end(&r), "incomplete work"),
           "probe: 600 ms kernel, 100 ms timeout fails: '%s'", dt_timing_last_error());
    dt_timing_begin_control(g_s1);
    launch_spin(g_s1, 600000000ull);
    EXPECT(expect_error(dt_timing_end(&r), "incomplete work"),
           "control: 600 ms kernel, 100 ms timeout fails: '%s'", dt_timing_last_error());
    dt_timing_begin_probe(g_s1, 8, DT_TIMING_PROBE_CONCURRENT);
    launch_spin(g_s1, 20000000ull); /* 20 ms: inside the timeout */
    EXPECT(dt_timing_end(&r) && r.kernel_count == 1 && r.kernel_sum_ns > 19e6,
           "20 ms spin within the timeout succeeds: kernel %.3f ms (err '%s')",
           r.kernel_sum_ns / 1e6, dt_timing_last_error());

    /* Dropped records: one 1 KiB activity buffer for 256 kernels. */
    EXPECT(dt_timing_configure(1024, 1, 0), "configure 1 activity buffer of 1 KiB");
    {
        int ok = dt_timing_begin_probe(g_s1, 512, DT_TIMING_PROBE_CONCURRENT);
        for (int i = 0; i < 256; i++) launch_inc(g_s1, small_a, n_small);
        ok = ok && dt_timing_end(&r);
        const char *e = dt_timing_last_error();
        EXPECT(!ok, "starved buffers fail closed: '%s'", e);
        printf("INFO  drops %s provoked (the failure names %s)\n",
               strstr(e, "dropped") ? "were" : "were NOT",
               strstr(e, "dropped") ? "dropped records" : "another rule");
    }
    EXPECT(dt_timing_configure(0, 0, 0), "configure back to defaults");

    /* ---- 5. perturbation: probe samples, both kinds, small and large --------------- */
    double p_small_stream[2], p_small_kernel[2], p_large_stream[2], p_large_kernel[2];
    for (uint32_t kind = 0; kind < 2; kind++) {
        probe_samples(small_a, n_small, REPS_SMALL, SAMPLES, kind, tmp, tmp2);
        p_small_stream[kind] = median(tmp, SAMPLES);
        p_small_kernel[kind] = median(tmp2, SAMPLES);
        probe_samples(large, n_large, REPS_LARGE, SAMPLES, kind, tmp, tmp2);
        p_large_stream[kind] = median(tmp, SAMPLES);
        p_large_kernel[kind] = median(tmp2, SAMPLES);
    }
    EXPECT(g_probe_sessions_ok == 4 * SAMPLES,
           "re-initialisation after cuptiFinalize: %d of %d probe sessions in this one "
           "process succeeded",
           g_probe_sessions_ok, 4 * SAMPLES);

    /* ---- 6. restoration: control after every probe session ----------------------- */
    control_samples(small_a, n_small, REPS_SMALL, SAMPLES, tmp);
    double ctl_small_after = median(tmp, SAMPLES);
    control_samples(large, n_large, REPS_LARGE, SAMPLES, tmp);
    double ctl_large_after = median(tmp, SAMPLES);
    /* The small, launch-rate-bound kernel is NOT asserted: measured on the H200 its
     * controls after finalized probe sessions were 1.06-1.30x slower than before (e.g.
     * 3.999 -> 5.207 us/launch): something of CUPTI lingers in a process even after
     * cuptiFinalize, and the launch path is where it shows. That is why the orchestrator
     * never runs control or host samples in a process that ever ran a probe: probes run
     * in a separate probe worker process (persistent mode, section 7). Printed here as
     * measured information. The long kernel is device-bound and must be restored. */
    printf("INFO  restoration (small, not asserted: CUPTI lingers after finalize): control "
           "before %.3f us/launch, after %.3f us/launch (ratio %.3f)\n",
           ctl_small_before, ctl_small_after, ctl_small_after / ctl_small_before);
    EXPECT(fabs(ctl_large_after / ctl_large_before - 1.0) < 0.05,
           "restoration (large): control before %.3f us, after %.3f us (ratio %.3f, "
           "within 5%%)",
           ctl_large_before, ctl_large_after, ctl_large_after / ctl_large_before);

    /* ---- 7. persistent mode (a dedicated probe process) --------------------------- */
    double pers_first = NAN, pers_later = NAN;
    {
        EXPECT(!dt_timing_set_persistent(7) && strstr(dt_timing_last_error(), "want 0"),
               "set_persistent(7) refused: '%s'", dt_timing_last_error());
        int ok = dt_timing_set_persistent(DT_TIMING_PERSISTENT_CONCURRENT);
        EXPECT(ok, "set_persistent(1): CUPTI attached (err '%s')", dt_timing_last_error());
        EXPECT(expect_error(dt_timing_begin_control(g_s1), "control region refused"),
               "control refused in persistent mode: '%s'", dt_timing_last_error());
        /* Untimed work before the first region, as the probe worker's warmup does. */
        for (int i = 0; i < 8; i++) launch_inc(g_s1, small_a, n_small);
        CK(cuStreamSynchronize(g_s1));

        enum { NREG = 21 };
        double st[NREG], later[NREG];
        int nlater = 0, all_ok = 1;
        for (int k = 0; k < NREG; k++) {
            /* The orchestrator's prime call before every sample, and work between
             * regions that must never show in a region: a spin kernel on s1 (done) and
             * one on s2 still running when the region begins. */
            launch_inc(g_s1, small_a, n_small);
            launch_spin(g_s1, 2000ull);
            CK(cuStreamSynchronize(g_s1));
            st[k] = NAN;
            if (!dt_timing_begin_probe(g_s1, REPS_SMALL, DT_TIMING_PROBE_CONCURRENT)) {
                printf("      persistent region %d: begin failed: %s\n", k,
                       dt_timing_last_error());
                all_ok = 0;
                continue;
            }
            for (int i = 0; i < REPS_SMALL; i++) launch_inc(g_s1, small_a, n_small);
            if (!dt_timing_end(&r) || r.kernel_count != REPS_SMALL ||
                r.launch_count != REPS_SMALL) {
                printf("      persistent region %d: end failed or wrong count %llu: %s\n", k,
                       (unsigned long long)r.kernel_count, dt_timing_last_error());
                all_ok = 0;
                continue;
            }
            int clean = r.clock_source == DT_TIMING_CLOCK_CALLBACK;
            for (uint64_t i = 0; i < r.records_stored; i++) {
                dt_timing_kernel kr;
                clean = clean && dt_timing_kernel_record(i, &kr) &&
                        strcmp(kr.name, "dt_inc") == 0 && kr.start_ns >= r.host_begin_ns;
            }
            if (!clean) {
                printf("      persistent region %d: a record is not one of the region's "
                       "dt_inc launches (or clock not via callback)\n", k);
                all_ok = 0;
            }
            st[k] = r.stream_ns / REPS_SMALL / 1e3;
            if (k > 0) later[nlater++] = st[k];
        }
        printf("      persistent regions (us/launch, stream):");
        for (int k = 0; k < NREG; k++) printf(" %.3f", st[k]);
        printf("\n");
        EXPECT(all_ok, "persistent mode: %d regions of %d dt_inc launches each, every record "
               "one of the region's launches (spins between regions never counted)",
               NREG, REPS_SMALL);
        pers_first = st[0];
        pers_later = nlater ? median(later, nlater) : NAN;
        /* Measured on the H200 (2026-11-30): CUPTI's concurrent-kernel kind costs small
         * launches ~2.6-2.8x in steady state (also in default mode), so persistent mode is
         * held to what it promises: no per-region setup (the first region is no slower
         * than later ones) and no worse than a fresh default-mode probe session. */
        EXPECT(pers_later <= 1.3 * p_small_stream[0] && pers_first <= 1.3 * pers_later,
               "persistent mode: regions 2..%d median %.3f us/launch vs default-mode "
               "concurrent probe %.3f (want <= 1.3x) and control before any probe %.3f "
               "(ratio %.2f; vs control after probes %.3f: %.2f); first region %.3f "
               "(%.2fx, want <= 1.3x of later regions)",
               NREG, pers_later, p_small_stream[0], ctl_small_before,
               pers_later / ctl_small_before, ctl_small_after, pers_later / ctl_small_after,
               pers_first, pers_first / pers_later);

        /* A kernel on s2 still running at begin and at end, launched outside: its
         * (force-flushed, incomplete) record is discarded, the region succeeds. */
        launch_spin(g_s2, 5000000ull); /* 5 ms */
        ok = dt_timing_begin_probe(g_s1, 16, DT_TIMING_PROBE_CONCURRENT);
        for (int i = 0; i < 4; i++) launch_inc(g_s1, small_a, n_small);
        ok = ok && dt_timing_end(&r);
        EXPECT(ok && r.kernel_count == 4 && r.other_stream_kernels == 0,
               "persistent: a kernel launched before begin on another stream, still "
               "running at end, is not the region's: %llu kernels, %llu other-stream "
               "(err '%s')",
               (unsigned long long)r.kernel_count,
               (unsigned long long)r.other_stream_kernels, dt_timing_last_error());
        CK(cuCtxSynchronize());

        /* Kind switch, then a failed region, then recovery. */
        ok = dt_timing_begin_probe(g_s1, 16, DT_TIMING_PROBE_SERIALIZED);
        for (int i = 0; i < 5; i++) launch_inc(g_s1, small_a, n_small);
        ok = ok && dt_timing_end(&r);
        EXPECT(ok && r.kernel_count == 5 && r.probe_kind == DT_TIMING_PROBE_SERIALIZED,
               "persistent: switch to serialized: %llu kernels (err '%s')",
               (unsigned long long)r.kernel_count, dt_timing_last_error());
        dt_timing_begin_probe(g_s1, 3, DT_TIMING_PROBE_CONCURRENT);
        for (int i = 0; i < 4; i++) launch_inc(g_s1, small_a, n_small);
        EXPECT(expect_error(dt_timing_end(&r), "capacity exceeded"),
               "persistent: capacity still enforced: '%s'", dt_timing_last_error());
        dt_timing_begin_probe(g_s1, 8, DT_TIMING_PROBE_CONCURRENT);
        EXPECT(expect_error(dt_timing_end(&r), "empty region"),
               "persistent: empty region still fails (the capacity region's late records "
               "do not fill it): '%s'", dt_timing_last_error());
        EXPECT(dt_timing_configure(0, 0, 100), "configure sync timeout 100 ms");
        dt_timing_begin_probe(g_s1, 8, DT_TIMING_PROBE_CONCURRENT);
        launch_spin(g_s1, 300000000ull); /* 300 ms */
        EXPECT(expect_error(dt_timing_end(&r), "incomplete work"),
               "persistent: incomplete work fails (tears down, attaches again): '%s'",
               dt_timing_last_error());
        EXPECT(dt_timing_configure(0, 0, 0), "configure back to defaults");
        ok = dt_timing_begin_probe(g_s1, 16, DT_TIMING_PROBE_CONCURRENT);
        for (int i = 0; i < 5; i++) launch_inc(g_s1, small_a, n_small);
        ok = ok && dt_timing_end(&r);
        EXPECT(ok && r.kernel_count == 5,
               "persistent: a region after the failures succeeds with exactly its 5 "
               "kernels: %llu (err '%s')",
               (unsigned long long)r.kernel_count, dt_timing_last_error());
        EXPECT(dt_timing_set_persistent(DT_TIMING_PERSISTENT_OFF),
               "set_persistent(0): CUPTI finalized (err '%s')", dt_timing_last_error());
        ok = dt_timing_begin_control(g_s1);
        launch_inc(g_s1, small_a, n_small);
        ok = dt_timing_end(&r) && ok;
        EXPECT(ok, "control allowed again after persistent mode is off (err '%s')",
               dt_timing_last_error());
        ok = dt_timing_begin_probe(g_s1, 16, DT_TIMING_PROBE_CONCURRENT);
        launch_inc(g_s1, small_a, n_small);
        ok = dt_timing_end(&r) && ok;
        EXPECT(ok && r.kernel_count == 1, "a default-mode probe after persistent mode "
               "(err '%s')", dt_timing_last_error());
    }

    /* ---- 8. held windows, probe (default mode) ------------------------------------- */
    held_probe_section(large, n_large, 21);

    printf("\n## Summary (medians of %d samples; us per launch; small = %d floats x %d "
           "launches, large = %d floats x %d launches; %s)\n\n",
           SAMPLES, n_small, REPS_SMALL, n_large, REPS_LARGE, devname);
    printf("| kernel | control before | probe concurrent (stream) | probe serialized "
           "(stream) | control after | CUPTI kernel concurrent | CUPTI kernel serialized |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|\n");
    printf("| small | %.3f | %.3f (%.2fx) | %.3f (%.2fx) | %.3f | %.3f | %.3f |\n",
           ctl_small_before, p_small_stream[0], p_small_stream[0] / ctl_small_before,
           p_small_stream[1], p_small_stream[1] / ctl_small_before, ctl_small_after,
           p_small_kernel[0], p_small_kernel[1]);
    printf("| large | %.3f | %.3f (%.3fx) | %.3f (%.3fx) | %.3f | %.3f | %.3f |\n",
           ctl_large_before, p_large_stream[0], p_large_stream[0] / ctl_large_before,
           p_large_stream[1], p_large_stream[1] / ctl_large_before, ctl_large_after,
           p_large_kernel[0], p_large_kernel[1]);
    printf("\nPersistent mode (concurrent, small, us/launch, stream): first region %.3f "
           "(%.2fx control before), regions 2..: median %.3f (%.2fx)\n",
           pers_first, pers_first / ctl_small_before, pers_later,
           pers_later / ctl_small_before);
    printf("\n## Held windows (%s; us per launch, medians)\n\n",
           dt_timing_hold_method_name(g_held.method));
    printf("| case | unheld | held (%s) | held (spin kernel) |\n|---|---:|---:|---:|\n",
           dt_timing_hold_method_name(g_held.method));
    printf("| small, 64 launches | %.3f | %.3f | %.3f |\n", g_held.unheld_batch,
           g_held.held_batch, g_held.spin_batch);
    printf("| small, single | %.3f | %.3f | %.3f |\n", g_held.unheld_single,
           g_held.held_single, g_held.spin_single);
    printf("\n| large | held control | held probe concurrent | held probe serialized | "
           "unheld control | unheld probe concurrent | unheld probe serialized |\n"
           "|---|---:|---:|---:|---:|---:|---:|\n");
    printf("| batch of 8 | %.3f | %.3f (%.3fx) | %.3f (%.3fx) | | | |\n",
           g_held.ctl_large_batch, g_held.probe_large_batch[0],
           g_held.probe_large_batch[0] / g_held.ctl_large_batch, g_held.probe_large_batch[1],
           g_held.probe_large_batch[1] / g_held.ctl_large_batch);
    printf("| single | %.3f | %.3f (%.3fx) | %.3f (%.3fx) | %.3f | %.3f | %.3f |\n",
           g_held.ctl_large_single, g_held.probe_large_single[0],
           g_held.probe_large_single[0] / g_held.ctl_large_single,
           g_held.probe_large_single[1], g_held.probe_large_single[1] / g_held.ctl_large_single,
           g_held.unheld_ctl_single, g_held.unheld_probe_single[0],
           g_held.unheld_probe_single[1]);
    printf("\nUnheld single probe (persistent mode, us): flush before the warm-up (now) "
           "concurrent %.3f, serialized %.3f; flush after it (the old order) concurrent %.3f, "
           "serialized %.3f; unheld control %.3f.\n",
           g_held.unheld_probe_single[0], g_held.unheld_probe_single[1],
           g_held.old_flush_probe_single[0], g_held.old_flush_probe_single[1],
           g_held.unheld_ctl_single);
    printf("\nPlanted cuCtxSynchronize inside a 200 ms hold returned after %.1f ms; an "
           "unreleased, unended hold let its stream run after %.1f ms.\n",
           g_held.sync_fail_ms, g_held.watchdog_ms);
    printf("\n");
    const int status = dt_check_summary("test_timing_gpu");

    cuMemFree(small_a);
    cuMemFree(small_b);
    cuMemFree(large);
    cuStreamDestroy(g_s1);
    cuStreamDestroy(g_s2);
    cuModuleUnload(mod);
    cuDevicePrimaryCtxRelease(dev);
    return status;
}
#endif /* DT_TIMING_GPU_LAUNCHER */
