/* test_cuda_backend.c — the CUDA backend on a real device, through the same interface
 * the native worker uses: dlopen()s libdualtime_cuda.so (argv[1]), and for every op x
 * shape x {contiguous, view}: prepare, upload, run 1, download, arena check (guards,
 * padding, inputs unchanged, outputs written) and the FP64 oracle; then again with 100
 * back-to-back calls. Prints one line per case (max error, budget used, times, variant).
 * Then: the compile cache (a repeated case must hit), an NVRTC error (broken source via
 * DUALTIME_KERNEL_DIR comes back with the log), and a planted kernel fault (an illegal
 * address must come back as an error, not a crash; it runs last because it kills the
 * context). Pinned uploads: the arena page-locked at prepare ("host=pinned" in the
 * implementation line), unlocked at release, pageable under DUALTIME_HOST_REGISTER=0.
 * Checks through tests/dt_check.h (REQUIRE: a failed check ends its case).
 * Exit 77 when the module cannot load or there is no device; 1 on any failure.
 *
 * bf16 / f16 (after the FP32 cases): every op x shape x {contiguous, view} again in each
 * narrow type (dt_layout_make_typed), checked against tests/native/dt_test_ref.h's FP64
 * reference from the exact narrow inputs with dt_op_tolerance (ulps of the output type
 * + atol + rtol*scale); each line prints max error, its ulps and the budget used. Then
 * the planted fault: sum 4x16384 f16 with DUALTIME_PLANT_ACC_F16=1 (the kernel
 * accumulates in fp16) must FAIL that tolerance, and its output must equal, bit for
 * bit, the C emulation ref_sum_acc_f16 (so the CPU test test_narrow_tolerance proves
 * the same rejection on CI).
 *
 * Run: test_cuda_backend build/libdualtime_cuda.so
 *   DUALTIME_GPU_TEST_QUICK=1   skip the 8192x8192 and 4096^3 cases
 *   DUALTIME_GPU_TEST_OPS=a,b   only these ops (the fault cases still run)
 *   DUALTIME_GPU_TEST_DTYPES=f32,bf16,f16   which dtypes (default all three)
 *   DUALTIME_GPU_TEST_SHAPES=long   only the long-row / unaligned shapes (1x65536,
 *                               4096x50257, 2048x128256, 8191x8193 views, 5x40000; the
 *                               views 17x1000, 4096x4096, 300x16000) and
 *                               8192x8192, for softmax, layernorm, rmsnorm and
 *                               cross_entropy in the selected dtypes (the fast
 *                               measurement call; then the compile-cache and error
 *                               cases, not the planted faults)
 *   DUALTIME_GPU_TEST_SHAPES=8192   the same four ops at 8192x8192 only (knob A/B timing)
 *   DUALTIME_GPU_TEST_ROWS=4096x50257,8191x8193   with =long or =8192: only these shapes
 *   DUALTIME_GPU_TEST_SHAPES=gemm-tc   only the narrow gemm table: 1024^3, 4096^3,
 *       8192^3, 127x193x61, 4097x4095x257, 1000x1048x264, 1152x1032x520 and two views x {bf16, f16} x
 *       {tc1, wg1, wg2, wg3, wg4}; one line each: shape, dtype, variant asked -> ran (wg1, or "tc1
 *       (fallback: why)"), us/call, TFLOP/s, max error and tolerance budget. Outputs up
 *       to 1100 per dimension are all checked against FP64, larger ones on the tile
 *       edges and a spread (48 rows x 48 columns), and every output must be finite.
 *       The full run (not quick) checks wg1..wg4 on 1000x1048x264 and 1024^3 only.
 *       DUALTIME_GPU_TEST_GEMM_VARIANTS=wg1,wg2 (a comma list) keeps only those variants
 *       of the table (with DUALTIME_GEMM_BN=64: the 128x64 tile on every shape).
 *   DUALTIME_GPU_TEST_SHAPES=gemv-narrow   the same table for the thin bf16 / f16 shapes
 *       on gemv (4096x1x4096, 1x4096x4096, 1000x1x1000, 1x1000x1000, 4097x1x4095,
 *       1x4095x4097, 8x1x65544 over a cluster, and views), every output checked against
 *       FP64, then tc1 at the two 4096 shapes for the host-clock comparison, then the few
 *       rows (2 to 32) on gemv-mma and (up to 16) on gemv's FFMA. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "../../src/oracle/dt_oracle.h"
#include "dt_backend.h"
#include "../dt_check.h"
#include "../native/dt_test_ref.h"

static const dt_backend *g_be;

static int op_selected(const char *name) {
    const char *sel = getenv("DUALTIME_GPU_TEST_OPS");
    if (!sel || !*sel) return 1;
    size_t n = strlen(name);
    for (const char *p = sel; (p = strstr(p, name)); p += n)
        if ((p == sel || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}

/* 1 when the comma list in environment variable env is unset or empty, or names name. */
static int env_lists(const char *env, const char *name) {
    const char *sel = getenv(env);
    if (!sel || !*sel) return 1;
    size_t n = strlen(name);
    for (const char *p = sel; (p = strstr(p, name)); p += n)
        if ((p == sel || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}

static int dtype_selected(dt_dtype d) { return env_lists("DUALTIME_GPU_TEST_DTYPES", dt_dtype_name(d)); }

/* The FP64 reference of a narrow case from its exact inputs (pristine arena): ref and
 * scale get the output's rows*cols (malloc'd). */
static void narrow_reference(const dt_case_layout *L, const uint8_t *pristine, double **ref,
                             double **scale) {
    double *in[4] = {NULL, NULL, NULL, NULL};
    const int out = dt_layout_output(L);
    for (int b = 0; b < out; b++) {
        in[b] = dt_xmalloc((size_t)(L->buf[b].rows * L->buf[b].cols) * sizeof(double));
        dt_buffer_to_f64(L, b, pristine, in[b]);
    }
    const int64_t count = L->buf[out].rows * L->buf[out].cols;
    *ref = dt_xmalloc((size_t)count * sizeof(double));
    *scale = dt_xmalloc((size_t)count * sizeof(double));
    const double *cin[4] = {in[0], in[1], in[2], in[3]};
    ref_compute(L->op, L->m, L->n, L->k, cin, *ref, *scale);
    for (int b = 0; b < 4; b++) free(in[b]);
}

/* Checks the output of a narrow case; *meas gets what was measured. */
static void narrow_measure(const dt_case_layout *L, const uint8_t *arena, const double *ref,
                           const double *scale, ref_measure *meas, char *msg, size_t len) {
    const int out = dt_layout_output(L);
    const int64_t count = L->buf[out].rows * L->buf[out].cols;
    double *got = dt_xmalloc((size_t)count * sizeof(double));
    dt_buffer_to_f64(L, out, arena, got);
    *meas = ref_check_typed(L->op, L->dtype, count, got, ref, scale, msg, len);
    free(got);
}

/* One bf16/f16 case end to end: as run_case, with the narrow reference and tolerance. */
static void run_case_narrow(dt_op op, int64_t m, int64_t n, int64_t k, int views, dt_dtype dt) {
    dt_case_layout L;
    dt_layout_make_typed(&L, op, m, n, k, views, dt);
    char label[96];
    if (k)
        snprintf(label, sizeof label, "%s %lldx%lldx%lld%s %s", dt_op_get(op)->name,
                 (long long)m, (long long)n, (long long)k, views ? " view" : "", dt_dtype_name(dt));
    else
        snprintf(label, sizeof label, "%s %lldx%lld%s %s", dt_op_get(op)->name, (long long)m,
                 (long long)n, views ? " view" : "", dt_dtype_name(dt));
    uint8_t *arena = dt_xmalloc((size_t)L.total_bytes);
    uint8_t *pristine = dt_xmalloc((size_t)L.total_bytes);
    dt_arena_fill(&L, pristine, 42);
    memcpy(arena, pristine, (size_t)L.total_bytes);
    double *ref = NULL, *scale = NULL;
    narrow_reference(&L, pristine, &ref, &scale);
    void *st = NULL;
    dt_prepare_info pi;
    dt_err err = {{0}};
    dt_arena_report arep;
    ref_measure m1, m100;
    char msg[256];
    double up_ms = 0, down_ms = 0;
    int64_t ns1 = 0, ns100 = 0;
    dt_status s = g_be->prepare(&st, &L, arena, 0, &pi, &err);
    REQUIRE(s == DT_OK, "%s: prepare: %s", label, err.msg);
    REQUIRE(g_be->upload(st, &up_ms, &err) == DT_OK, "%s: upload: %s", label, err.msg);
    REQUIRE(g_be->run(st, 1, &ns1, &err) == DT_OK, "%s: run 1: %s [%s]", label, err.msg,
            pi.implementation);
    REQUIRE(g_be->download(st, &down_ms, &err) == DT_OK, "%s: download: %s", label, err.msg);
    dt_arena_check(&L, arena, pristine, &arep);
    REQUIRE(arep.ok, "%s: arena check after 1 call: %s [%s]", label, arep.first_problem,
            pi.implementation);
    narrow_measure(&L, arena, ref, scale, &m1, msg, sizeof msg);
    REQUIRE(m1.bad == 0, "%s: tolerance after 1 call: %lld bad, max err %.3g (%.2f ulp), "
            "budget %.3g: %s [%s]", label, (long long)m1.bad, m1.max_abs_error, m1.max_ulps,
            m1.max_budget, msg, pi.implementation);
    dt_arena_poison_outputs(&L, arena);
    REQUIRE(g_be->upload(st, &up_ms, &err) == DT_OK, "%s: upload 2: %s", label, err.msg);
    const char *reps_env = getenv("DUALTIME_GPU_TEST_REPS");
    int64_t reps = reps_env ? atoll(reps_env) : 100;
    if (reps < 1) reps = 1;
    REQUIRE(g_be->run(st, reps, &ns100, &err) == DT_OK, "%s: run 100: %s", label, err.msg);
    REQUIRE(g_be->download(st, &down_ms, &err) == DT_OK, "%s: download 2: %s", label, err.msg);
    dt_arena_check(&L, arena, pristine, &arep);
    REQUIRE(arep.ok, "%s: arena check after 100 calls: %s", label, arep.first_problem);
    narrow_measure(&L, arena, ref, scale, &m100, msg, sizeof msg);
    REQUIRE(m100.bad == 0, "%s: tolerance after 100 calls: max err %.3g: %s", label,
            m100.max_abs_error, msg);
    {
        double us = (double)ns100 / (double)reps / 1e3;
        double gbs = (double)dt_op_min_bytes_typed(op, m, n, k, dt) / (us * 1e3);
        printf("ok   %-32s maxerr %.2e = %5.2f ulp budget %.3f | x100 %9.2f us/call %7.1f GB/s "
               "%8.1f GFLOP/s | %s\n",
               label, m1.max_abs_error, m1.max_ulps, m1.max_budget, us, gbs,
               dt_op_flops(op, m, n, k) / (us * 1e3), pi.implementation);
    }
done:
    if (st) g_be->release(st);
    free(ref);
    free(scale);
    free(arena);
    free(pristine);
}

/* The planted fault: sum 4x16384 f16 accumulating in fp16 must fail the tolerance and
 * match the C emulation bit for bit. */
static void acc_f16_fault_case(void) {
    const int64_t m = 4, n = 16384;
    dt_case_layout L;
    dt_layout_make_typed(&L, DT_OP_SUM, m, n, 0, 0, DT_F16);
    uint8_t *arena = dt_xmalloc((size_t)L.total_bytes);
    uint8_t *pristine = dt_xmalloc((size_t)L.total_bytes);
    dt_arena_fill(&L, pristine, 42);
    memcpy(arena, pristine, (size_t)L.total_bytes);
    double *ref = NULL, *scale = NULL, *a = dt_xmalloc((size_t)(m * n) * sizeof(double));
    narrow_reference(&L, pristine, &ref, &scale);
    dt_buffer_to_f64(&L, 0, pristine, a);
    void *st = NULL;
    dt_prepare_info pi;
    dt_err err = {{0}};
    double ms;
    int64_t ns;
    ref_measure meas;
    char msg[256];
    setenv("DUALTIME_PLANT_ACC_F16", "1", 1);
    dt_status s = g_be->prepare(&st, &L, arena, 0, &pi, &err);
    unsetenv("DUALTIME_PLANT_ACC_F16");
    REQUIRE(s == DT_OK, "acc-f16 fault: prepare: %s", err.msg);
    REQUIRE(strstr(pi.implementation, "PLANTED-FAULT") != NULL, "acc-f16: not planted: %s",
            pi.implementation);
    REQUIRE(g_be->upload(st, &ms, &err) == DT_OK && g_be->run(st, 1, &ns, &err) == DT_OK &&
                g_be->download(st, &ms, &err) == DT_OK,
            "acc-f16 fault: run: %s", err.msg);
    narrow_measure(&L, arena, ref, scale, &meas, msg, sizeof msg);
    CHECK(meas.bad > 0, "acc-f16 fault PASSED the tolerance (max err %.3g, %.2f ulp, budget %.3f)",
          meas.max_abs_error, meas.max_ulps, meas.max_budget);
    {
        const dt_buffer_layout *O = &L.buf[1];
        int64_t differ = 0;
        for (int64_t i = 0; i < m; i++) {
            uint16_t h;
            memcpy(&h, arena + dt_elem_offset(O, i, 0), 2);
            differ += (double)dt_narrow_to_f32(DT_F16, h) != ref_sum_acc_f16(a + i * n, n);
        }
        CHECK(differ == 0, "acc-f16 fault: %lld rows differ from the C emulation",
              (long long)differ);
    }
    printf("ok   planted fp16 accumulation, sum 4x16384 f16: %lld of 4 rows fail, max err %.3g "
           "(%.1f ulp), budget %.2f: %s [%s]\n",
           (long long)meas.bad, meas.max_abs_error, meas.max_ulps, meas.max_budget, msg,
           pi.implementation);
done:
    unsetenv("DUALTIME_PLANT_ACC_F16");
    if (st) g_be->release(st);
    free(ref);
    free(scale);
    free(a);
    free(arena);
    free(pristine);
}

/* One case end to end. Returns nothing; counts pass/fail. */
static void run_case(dt_op op, int64_t m, int64_t n, int64_t k, int views) {
    dt_case_layout L;
    dt_layout_make(&L, op, m, n, k, views);
    const dt_op_info *info = dt_op_get(op);
    char label[96];
    if (info->is_gemm)
        snprintf(label, sizeof label, "%s %lldx%lldx%lld%s", info->name, (long long)m,
                 (long long)n, (long long)k, views ? " view" : "");
    else
        snprintf(label, sizeof label, "%s %lldx%lld%s", info->name, (long long)m, (long long)n,
                 views ? " view" : "");
    uint8_t *arena = dt_xmalloc((size_t)L.total_bytes);
    uint8_t *pristine = dt_xmalloc((size_t)L.total_bytes);
    dt_arena_fill(&L, pristine, 42);
    memcpy(arena, pristine, (size_t)L.total_bytes);
    void *st = NULL;
    dt_prepare_info pi;
    dt_err err = {{0}};
    dt_oracle_ref ref;
    memset(&ref, 0, sizeof ref);
    dt_oracle_report orep, orep100;
    dt_arena_report arep;
    double up_ms = 0, down_ms = 0;
    int64_t ns1 = 0, ns100 = 0;
    dt_status s;

    s = dt_oracle_compute(&L, pristine, &ref, &err);
    REQUIRE(s == DT_OK, "%s: oracle: %s", label, err.msg);
    s = g_be->prepare(&st, &L, arena, 1, &pi, &err);
    REQUIRE(s == DT_OK, "%s: prepare: %s", label, err.msg);
    REQUIRE(pi.nsources >= 1 && pi.sources[0].text && strlen(pi.sources[0].sha256) == 64,
          "%s: source records missing", label);
    s = g_be->upload(st, &up_ms, &err);
    REQUIRE(s == DT_OK, "%s: upload: %s", label, err.msg);
    s = g_be->run(st, 1, &ns1, &err);
    REQUIRE(s == DT_OK, "%s: run 1: %s [%s]", label, err.msg, pi.implementation);
    s = g_be->download(st, &down_ms, &err);
    REQUIRE(s == DT_OK, "%s: download: %s", label, err.msg);
    dt_arena_check(&L, arena, pristine, &arep);
    REQUIRE(arep.ok, "%s: arena check after 1 call: %s [%s]", label, arep.first_problem,
          pi.implementation);
    dt_oracle_check(&ref, &L, arena, &orep);
    REQUIRE(orep.ok, "%s: oracle after 1 call: %lld/%lld bad, max err %.3g, budget %.3g: %s [%s]",
          label, (long long)orep.failures, (long long)orep.elements, orep.max_abs_error,
          orep.max_budget_used, orep.first_failure, pi.implementation);

    /* 100 calls back to back, from a re-poisoned output */
    dt_arena_poison_outputs(&L, arena);
    s = g_be->upload(st, &up_ms, &err);
    REQUIRE(s == DT_OK, "%s: upload 2: %s", label, err.msg);
    /* DUALTIME_GPU_TEST_REPS: fewer repeated calls (compute-sanitizer runs are slow) */
    const char *reps_env = getenv("DUALTIME_GPU_TEST_REPS");
    int64_t reps = reps_env ? atoll(reps_env) : 100;
    if (reps < 1) reps = 1;
    s = g_be->run(st, reps, &ns100, &err);
    REQUIRE(s == DT_OK, "%s: run 100: %s [%s]", label, err.msg, pi.implementation);
    s = g_be->download(st, &down_ms, &err);
    REQUIRE(s == DT_OK, "%s: download 2: %s", label, err.msg);
    dt_arena_check(&L, arena, pristine, &arep);
    REQUIRE(arep.ok, "%s: arena check after 100 calls: %s", label, arep.first_problem);
    dt_oracle_check(&ref, &L, arena, &orep100);
    REQUIRE(orep100.ok, "%s: oracle after 100 calls: max err %.3g: %s", label,
          orep100.max_abs_error, orep100.first_failure);
    {
        double us = (double)ns100 / (double)reps / 1e3;
        double gbs = (double)dt_op_min_bytes(op, m, n, k) / (us * 1e3);
        double gflops = dt_op_flops(op, m, n, k) / (us * 1e3);
        printf("ok   %-28s maxerr %.2e budget %.3f | 1 call %8.1f us | x100 %9.2f us/call "
               "%7.1f GB/s %8.1f GFLOP/s | compile %7.1f ms alloc %5.2f ms up %7.2f ms | %s\n",
               label, orep.max_abs_error, orep.max_budget_used, (double)ns1 / 1e3, us, gbs,
               gflops, pi.compile_ms, pi.alloc_ms, up_ms, pi.implementation);
        fflush(stdout);
    }
done:
    if (st) g_be->release(st);
    dt_oracle_free(&ref);
    free(arena);
    free(pristine);
}

static int write_file(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

static void remove_file(const char *dir, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

/* The same case twice: the second prepare must find the module in the cache. */
static void cache_case(void) {
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_SOFTMAX, 17, 257, 0, 0);
    uint8_t *arena = dt_xmalloc((size_t)L.total_bytes);
    dt_arena_fill(&L, arena, 1);
    void *st = NULL;
    dt_prepare_info pi;
    dt_err err = {{0}};
    dt_status s = g_be->prepare(&st, &L, arena, 0, &pi, &err);
    REQUIRE(s == DT_OK, "cache: prepare 1: %s", err.msg);
    g_be->release(st);
    st = NULL;
    s = g_be->prepare(&st, &L, arena, 0, &pi, &err);
    REQUIRE(s == DT_OK, "cache: prepare 2: %s", err.msg);
    REQUIRE(strstr(pi.implementation, "cache=hit") != NULL, "cache: no hit: %s", pi.implementation);
    REQUIRE(pi.sources[0].text == NULL, "cache: text captured though capture_sources=0");
    printf("ok   compile cache: second prepare %s, compile %.3f ms\n", "hit", pi.compile_ms);
done:
    if (st) g_be->release(st);
    free(arena);
}

/* One prepare + upload + run + download of add on `arena` (checked against ref), the
 * implementation line into impl; returns the upload's ms (-1 on a failure). */
static double pin_round(const dt_case_layout *L, uint8_t *arena, const uint8_t *pristine,
                        const dt_oracle_ref *ref, char *impl, size_t len) {
    void *st = NULL;
    dt_prepare_info pi;
    dt_err err = {{0}};
    double up_ms = -1, down_ms = 0;
    int64_t ns = 0;
    dt_oracle_report orep;
    dt_arena_report arep;
    memcpy(arena, pristine, (size_t)L->total_bytes);
    dt_status s = g_be->prepare(&st, L, arena, 0, &pi, &err);
    REQUIRE(s == DT_OK, "pinned: prepare: %s", err.msg);
    snprintf(impl, len, "%s", pi.implementation);
    REQUIRE(g_be->upload(st, &up_ms, &err) == DT_OK, "pinned: upload: %s", err.msg);
    REQUIRE(g_be->run(st, 1, &ns, &err) == DT_OK, "pinned: run: %s", err.msg);
    REQUIRE(g_be->download(st, &down_ms, &err) == DT_OK, "pinned: download: %s", err.msg);
    dt_arena_check(L, arena, pristine, &arep);
    REQUIRE(arep.ok, "pinned: arena check: %s [%s]", arep.first_problem, impl);
    dt_oracle_check(ref, L, arena, &orep);
    REQUIRE(orep.ok, "pinned: oracle: %s [%s]", orep.first_failure, impl);
done:
    if (st) g_be->release(st);
    return up_ms;
}

/* Pinned uploads (docs/device-workflow.md): prepare registers the arena (the
 * implementation line says host=pinned), release unregisters it (a second prepare on
 * the same memory registers again: a missing unregister would answer "already
 * registered"), DUALTIME_HOST_REGISTER=0 leaves it pageable and says so; the checked
 * call is right every time. Prints both upload rates of a 256 MiB arena. */
static void host_pin_case(void) {
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_ADD, 4096, 8192, 0, 0);
    uint8_t *arena = dt_xmalloc((size_t)L.total_bytes);
    uint8_t *pristine = dt_xmalloc((size_t)L.total_bytes);
    dt_arena_fill(&L, pristine, 7);
    dt_oracle_ref ref;
    memset(&ref, 0, sizeof ref);
    dt_err err = {{0}};
    char impl[2][512];
    double ms[3];
    unsetenv("DUALTIME_HOST_REGISTER");
    REQUIRE(dt_oracle_compute(&L, pristine, &ref, &err) == DT_OK, "pinned: oracle: %s", err.msg);
    for (int i = 0; i < 2; i++) {
        ms[i] = pin_round(&L, arena, pristine, &ref, impl[i], sizeof impl[i]);
        CHECK(strstr(impl[i], "host=pinned") != NULL, "pinned: prepare %d not pinned: %s", i + 1,
              impl[i]);
    }
    setenv("DUALTIME_HOST_REGISTER", "0", 1);
    ms[2] = pin_round(&L, arena, pristine, &ref, impl[0], sizeof impl[0]);
    unsetenv("DUALTIME_HOST_REGISTER");
    CHECK(strstr(impl[0], "host=pageable (DUALTIME_HOST_REGISTER=0)") != NULL,
          "pinned: DUALTIME_HOST_REGISTER=0 not said: %s", impl[0]);
    if (ms[1] > 0 && ms[2] > 0)
        printf("ok   pinned uploads: %lld bytes: pinned %.2f ms (%.1f GB/s), pageable %.2f ms "
               "(%.1f GB/s)\n", (long long)L.total_bytes, ms[1],
               (double)L.total_bytes / (ms[1] * 1e6), ms[2], (double)L.total_bytes / (ms[2] * 1e6));
done:
    dt_oracle_free(&ref);
    free(arena);
    free(pristine);
}

/* A source that does not compile: prepare fails with the NVRTC log. */
static void compile_error_case(const char *dir) {
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_SOFTMAX, 17, 257, 0, 0);
    uint8_t *arena = dt_xmalloc((size_t)L.total_bytes);
    dt_arena_fill(&L, arena, 1);
    void *st = NULL;
    dt_prepare_info pi;
    dt_err err = {{0}};
    REQUIRE(write_file(dir, "softmax.cu",
                     "extern \"C\" __global__ void dt_softmax_f32(const float *a, float *o)"
                     " { o[0] = planted_compile_error; }\n") == 0,
          "cannot write to %s", dir);
    setenv("DUALTIME_KERNEL_DIR", dir, 1);
    dt_status s = g_be->prepare(&st, &L, arena, 0, &pi, &err);
    unsetenv("DUALTIME_KERNEL_DIR");
    REQUIRE(s != DT_OK, "compile error: prepare succeeded");
    REQUIRE(strstr(err.msg, "planted_compile_error") != NULL, "compile error: no log: %s", err.msg);
    printf("ok   compile error reported: %.200s\n", err.msg);
done:
    unsetenv("DUALTIME_KERNEL_DIR");
    remove_file(dir, "softmax.cu");
    if (st) g_be->release(st);
    free(arena);
}

/* A kernel that writes far outside its allocation: run must fail with a CUresult name.
 * Kills the context, so it runs last; the prepare after it must fail cleanly too. */
static void fault_case(const char *dir) {
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_ADD, 17, 257, 0, 0);
    uint8_t *arena = dt_xmalloc((size_t)L.total_bytes);
    dt_arena_fill(&L, arena, 1);
    void *st = NULL;
    dt_prepare_info pi;
    dt_err err = {{0}};
    double ms;
    int64_t ns;
    REQUIRE(write_file(dir, "add.cu",
                     "extern \"C\" __global__ void dt_add_f32(const float *a, const float *b,"
                     " float *out) {\n"
                     "  volatile float *far = out + (1ull << 42) + threadIdx.x; /* planted */\n"
                     "  *far = a[0] + b[0];\n}\n") == 0,
          "cannot write to %s", dir);
    setenv("DUALTIME_KERNEL_DIR", dir, 1);
    dt_status s = g_be->prepare(&st, &L, arena, 0, &pi, &err);
    unsetenv("DUALTIME_KERNEL_DIR");
    REQUIRE(s == DT_OK, "fault: prepare: %s", err.msg);
    REQUIRE(strstr(pi.implementation, "DUALTIME_KERNEL_DIR") != NULL, "fault: source not from dir");
    s = g_be->upload(st, &ms, &err);
    REQUIRE(s == DT_OK, "fault: upload: %s", err.msg);
    s = g_be->run(st, 3, &ns, &err);
    REQUIRE(s == DT_EDEVICE, "fault: run returned %d (%s)", (int)s, s ? err.msg : "ok");
    REQUIRE(strstr(err.msg, "CUDA_ERROR_") != NULL, "fault: no CUresult name in: %s", err.msg);
    printf("ok   planted fault reported: %.300s\n", err.msg);
    g_be->release(st);
    st = NULL;
    /* the context is gone: the next prepare must fail, not crash */
    s = g_be->prepare(&st, &L, arena, 0, &pi, &err);
    REQUIRE(s != DT_OK, "fault: prepare after fault succeeded");
    printf("ok   prepare after fault refused: %.200s\n", err.msg);
done:
    unsetenv("DUALTIME_KERNEL_DIR");
    remove_file(dir, "add.cu");
    if (st) g_be->release(st);
    free(arena);
}

/* DUALTIME_GPU_TEST_SHAPES=long: the four row ops that keep a row on chip, at the long
 * and unaligned shapes of issue 18 (the cluster split, vocabulary rows, odd views) and
 * at 8192x8192, in every selected dtype. */
/* DUALTIME_GPU_TEST_ROWS=4096x50257,8191x8193: only these shapes of long_shapes (unset:
 * all), so a geometry A/B times a few shapes in a device call. */
static int long_shape_selected(int64_t m, int64_t n) {
    const char *sel = getenv("DUALTIME_GPU_TEST_ROWS");
    if (!sel || !*sel) return 1;
    char want[48];
    snprintf(want, sizeof want, "%lldx%lld", (long long)m, (long long)n);
    const size_t k = strlen(want);
    for (const char *p = sel; (p = strstr(p, want)) != NULL; p += k)
        if ((p == sel || p[-1] == ',') && (p[k] == 0 || p[k] == ',')) return 1;
    return 0;
}

static void long_shapes(int only_square) {
    static const dt_op ops[] = {DT_OP_SOFTMAX, DT_OP_LAYERNORM, DT_OP_RMSNORM,
                                DT_OP_CROSS_ENTROPY};
    static const struct { int64_t m, n; int views; } sh[] = {
        {8192, 8192, 0}, {1, 65536, 0},  {4096, 50257, 0}, {2048, 128256, 0},
        {8191, 8193, 1}, {5, 40000, 1}, {1, 65536, 1},
        /* views kept in registers by the shifted loads (session 18): warp rows, block
         * rows, few rows of 16000 */
        {17, 1000, 1},   {4096, 4096, 1}, {300, 16000, 1}};
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    for (size_t t = 0; t < 3; t++) {
        if (!dtype_selected(dts[t])) continue;
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            if (!op_selected(dt_op_get(ops[o])->name)) continue;
            for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
                if (only_square && sh[i].n != 8192) continue;
                if (!long_shape_selected(sh[i].m, sh[i].n)) continue;
                if (dts[t] == DT_F32)
                    run_case(ops[o], sh[i].m, sh[i].n, 0, sh[i].views);
                else
                    run_case_narrow(ops[o], sh[i].m, sh[i].n, 0, sh[i].views, dts[t]);
            }
        }
    }
}

/* ---- narrow gemm variants (DUALTIME_GPU_TEST_SHAPES=gemm-tc) ----------------------- */

/* Element (i, j) of buffer b of a narrow case, widened. */
static double narrow_at(const dt_case_layout *L, int b, const uint8_t *base, int64_t i,
                        int64_t j) {
    const dt_buffer_layout *B = &L->buf[b];
    uint16_t v;
    memcpy(&v, base + B->data_offset + (i * B->row_stride + j) * B->elem_bytes, 2);
    return (double)dt_narrow_to_f32(L->dtype, v);
}

static int g_check_all; /* gemv-narrow: every output line, whatever its count (cap) */

/* Output rows or columns to check of a dimension of d: every one when d <= 1100 (or
 * g_check_all and d <= cap), else the tile edges (0, 63, 64, 127, 128, 255, 256, the last
 * 129) and a spread between. */
static int pick_lines(int64_t d, int64_t *out, int cap) {
    int n = 0;
    if (d <= 1100 || (g_check_all && d <= cap)) {
        for (int64_t i = 0; i < d && n < cap; i++) out[n++] = i;
        return n;
    }
    static const int64_t lo[] = {0, 1, 63, 64, 127, 128, 255, 256};
    for (size_t i = 0; i < sizeof lo / sizeof lo[0]; i++) out[n++] = lo[i];
    static const int64_t hi[] = {129, 128, 65, 64, 2, 1};
    for (size_t i = 0; i < sizeof hi / sizeof hi[0]; i++) out[n++] = d - hi[i];
    for (int i = 1; n < 48; i++) out[n++] = (d * i * 37 / 41 + i * 131) % d;
    return n;
}

/* FP64 reference of the picked outputs from the pristine arena, compared with the
 * dtype tolerance (ref_check_typed); every output element must also be finite (no
 * poison left: a tile never written). */
static ref_measure gemm_check(const dt_case_layout *L, const uint8_t *pristine,
                              const uint8_t *arena, char *msg, size_t len) {
    static int64_t rows[8192], cols[8192];
    const int nr = pick_lines(L->m, rows, 8192), nc = pick_lines(L->n, cols, 8192);
    const int out = dt_layout_output(L);
    const int64_t count = (int64_t)nr * nc, k = L->k;
    double *got = dt_xmalloc((size_t)count * sizeof(double));
    double *ref = dt_xmalloc((size_t)count * sizeof(double));
    double *scale = dt_xmalloc((size_t)count * sizeof(double));
    double *arow = dt_xmalloc((size_t)k * sizeof(double));
    double *bcols = dt_xmalloc((size_t)(nc * k) * sizeof(double)); /* picked columns of B */
    for (int c = 0; c < nc; c++)
        for (int64_t q = 0; q < k; q++) bcols[c * k + q] = narrow_at(L, 1, pristine, q, cols[c]);
    for (int a = 0; a < nr; a++) {
        for (int64_t q = 0; q < k; q++) arow[q] = narrow_at(L, 0, pristine, rows[a], q);
        for (int c = 0; c < nc; c++) {
            const double *bc = bcols + c * k;
            double s = 0, sa = 0;
            for (int64_t q = 0; q < k; q++) {
                const double t = arow[q] * bc[q];
                s += t;
                sa += fabs(t);
            }
            const int64_t e = (int64_t)a * nc + c;
            ref[e] = s;
            scale[e] = sa;
            got[e] = narrow_at(L, out, arena, rows[a], cols[c]);
        }
    }
    ref_measure r = ref_check_typed(L->op, L->dtype, count, got, ref, scale, msg, len);
    for (int64_t i = 0; i < L->m && r.bad == 0; i++)
        for (int64_t j = 0; j < L->n; j++)
            if (!isfinite(narrow_at(L, out, arena, i, j))) {
                snprintf(msg, len, "output (%lld, %lld) not finite (never written?)",
                         (long long)i, (long long)j);
                r.bad = 1;
                break;
            }
    free(got);
    free(ref);
    free(scale);
    free(arow);
    free(bcols);
    return r;
}

/* One row of the gemm table: variant var on m x n x k (views) in dt: prepare (the plan
 * summary says which variant ran, and any fallback), one call checked against FP64
 * (gemm_check), then outputs poisoned again on the device, 3 warm-ups and reps timed
 * calls (host clock around back-to-back launches: for these sizes the launch gaps are
 * below 1%), and the arena after them must equal, byte for byte, the arena after the
 * checked call (the kernel is deterministic and every output was rewritten). */
static void gemm_tc_case(int64_t m, int64_t n, int64_t k, int views, dt_dtype dt,
                         const char *var) {
    dt_case_layout L;
    dt_layout_make_typed(&L, DT_OP_GEMM, m, n, k, views, dt);
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld%s", (long long)m, (long long)n, (long long)k,
             views ? " view" : "");
    const char *dn = dt_dtype_name(dt);
    setenv("DUALTIME_GEMM_VARIANT", var, 1);
    uint8_t *arena = dt_xmalloc((size_t)L.total_bytes);
    uint8_t *pristine = dt_xmalloc((size_t)L.total_bytes);
    uint8_t *first = dt_xmalloc((size_t)L.total_bytes);
    dt_arena_fill(&L, pristine, 42);
    memcpy(arena, pristine, (size_t)L.total_bytes);
    void *st = NULL;
    dt_prepare_info pi;
    dt_err err = {{0}};
    dt_arena_report arep;
    ref_measure m1 = {0, 0, 0, 0};
    char msg[256] = "";
    double ms = 0;
    int64_t ns = 0;
    REQUIRE(g_be->prepare(&st, &L, arena, 0, &pi, &err) == DT_OK, "gemm %s %s %s: prepare: %s",
            shape, dn, var, err.msg);
    REQUIRE(g_be->upload(st, &ms, &err) == DT_OK, "gemm %s: upload: %s", shape, err.msg);
    REQUIRE(g_be->run(st, 1, &ns, &err) == DT_OK,
            "gemm %s %s %s: run 1: %s [%s] (wg1 traps after a 4 s mbarrier wait: a stuck "
            "pipeline)", shape, dn, var, err.msg, pi.implementation);
    REQUIRE(g_be->download(st, &ms, &err) == DT_OK, "gemm %s: download: %s", shape, err.msg);
    dt_arena_check(&L, arena, pristine, &arep);
    REQUIRE(arep.ok, "gemm %s %s %s: arena check: %s [%s]", shape, dn, var, arep.first_problem,
            pi.implementation);
    m1 = gemm_check(&L, pristine, arena, msg, sizeof msg);
    REQUIRE(m1.bad == 0, "gemm %s %s %s: tolerance: %lld bad, max err %.3g (%.2f ulp), budget "
            "%.3g: %s [%s]", shape, dn, var, (long long)m1.bad, m1.max_abs_error, m1.max_ulps,
            m1.max_budget, msg, pi.implementation);
    memcpy(first, arena, (size_t)L.total_bytes);
    dt_arena_poison_outputs(&L, arena);
    REQUIRE(g_be->upload(st, &ms, &err) == DT_OK, "gemm %s: upload 2: %s", shape, err.msg);
    const double flop = dt_op_flops(DT_OP_GEMM, m, n, k);
    const int64_t reps = flop > 1e11 ? 20 : flop > 1e9 ? 100 : 200;
    REQUIRE(g_be->run(st, 3, &ns, &err) == DT_OK, "gemm %s: warm-up: %s", shape, err.msg);
    REQUIRE(g_be->run(st, reps, &ns, &err) == DT_OK, "gemm %s %s %s: timed: %s", shape, dn, var,
            err.msg);
    REQUIRE(g_be->download(st, &ms, &err) == DT_OK, "gemm %s: download 2: %s", shape, err.msg);
    REQUIRE(memcmp(arena, first, (size_t)L.total_bytes) == 0,
            "gemm %s %s %s: the arena after %lld calls differs from the one after the checked "
            "call [%s]", shape, dn, var, (long long)reps + 3, pi.implementation);
    {
        const double us = (double)ns / (double)reps / 1e3;
        const char *ran = strstr(pi.implementation, "variant=");
        char vshow[80];
        snprintf(vshow, sizeof vshow, "%s", ran ? ran + 8 : "?");
        char *cut = strstr(vshow, " grid"); /* "wg1", "tc1 (fallback: ...)" */
        if (cut) *cut = 0;
        printf("gemm-tc | %-20s | %-4s | %-3s -> %-52s | %10.2f us | %7.1f TFLOP/s | "
               "maxerr %.2e budget %.3f\n",
               shape, dn, var, vshow, us, flop / (us * 1e6), m1.max_abs_error, m1.max_budget);
        printf("        impl: %s\n", pi.implementation);
    }
done:
    unsetenv("DUALTIME_GEMM_VARIANT");
    if (st) g_be->release(st);
    free(arena);
    free(pristine);
    free(first);
}

/* The narrow gemm shapes x {bf16, f16} x {tc1, wg1, wg2, wg3, wg4}: the table of the fast device call. */
static void gemm_tc_table(void) {
    static const struct { int64_t m, n, k; int views; } c[] = {
        {1024, 1024, 1024, 0}, {4096, 4096, 4096, 0}, {8192, 8192, 8192, 0},
        {127, 193, 61, 0},     {4097, 4095, 257, 0},  {1000, 1048, 264, 0},
        {1024, 1024, 1024, 1}, {127, 193, 61, 1},
        {1152, 1032, 520, 0}, /* 9 row tiles (wg4: a pair whose second tile is past M), N and K tails */
    };
    static const dt_dtype dts[] = {DT_BF16, DT_F16};
    static const char *vars[] = {"tc1", "wg1", "wg2", "wg3", "wg4"};
    printf("gemm-tc | shape                | type | variant asked -> ran                                     "
           "|   time/call |   throughput   | check\n");
    /* tc1 first: a wg1/wg2 fault ends the context, and tc1's numbers are still in */
    for (int v = 0; v < 5; v++)
        for (size_t i = 0; env_lists("DUALTIME_GPU_TEST_GEMM_VARIANTS", vars[v]) &&
                           i < sizeof c / sizeof c[0]; i++)
            for (int t = 0; t < 2; t++)
                if (dtype_selected(dts[t]))
                    gemm_tc_case(c[i].m, c[i].n, c[i].k, c[i].views, dts[t], vars[v]);
}

/* The thin bf16 / f16 shapes on gemv (DUALTIME_GPU_TEST_SHAPES=gemv-narrow): every output
 * against FP64 (thin: at most 8192 lines), then tc1 at the 4096 shapes. */
static void gemv_narrow_table(void) {
    static const struct { int64_t m, n, k; int views; } c[] = {
        {4096, 1, 4096, 0}, {1, 4096, 4096, 0}, {1000, 1, 1000, 0}, {1, 1000, 1000, 0},
        {4097, 1, 4095, 0}, {1, 4095, 4097, 0}, {8, 1, 65544, 0},   {4096, 1, 4096, 1},
        {1000, 1, 1000, 1}, {1, 1000, 1000, 1}, {1, 4096, 4096, 1},
    };
    static const dt_dtype dts[] = {DT_BF16, DT_F16};
    g_check_all = 1;
    printf("gemm-tc | shape                | type | variant asked -> ran                                     "
           "|   time/call |   throughput   | check\n");
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        for (int t = 0; t < 2; t++)
            if (dtype_selected(dts[t])) gemm_tc_case(c[i].m, c[i].n, c[i].k, c[i].views, dts[t], "gemv");
    for (size_t i = 0; i < 2; i++)
        for (int t = 0; t < 2; t++)
            if (dtype_selected(dts[t])) gemm_tc_case(c[i].m, c[i].n, c[i].k, c[i].views, dts[t], "tc1");
    /* few rows (session 19): gemv_mma.cu (opt-in, 2 <= M <= 32) against gemv.cu's FFMA
     * few rows (M <= 8), 16-byte and scalar loads, one to four row groups */
    static const struct { int64_t m, n, k; int views; } fr[] = {
        {8, 4096, 4096, 0}, {16, 4096, 4096, 0}, {2, 4096, 4096, 0}, {13, 1000, 1000, 0},
        {8, 4096, 4096, 1}, {5, 1003, 257, 1},   {32, 4096, 4096, 0}, {4, 14336, 4096, 0},
    };
    for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++)
        for (int t = 0; t < 2; t++) {
            if (!dtype_selected(dts[t])) continue;
            gemm_tc_case(fr[i].m, fr[i].n, fr[i].k, fr[i].views, dts[t], "gemv-mma");
            /* gemv asked for takes bf16 / f16 up to its narrow default, 8 rows
             * (DT_GEMV_FEWROWS_NARROW_DEFAULT) */
            if (fr[i].m <= 8)
                gemm_tc_case(fr[i].m, fr[i].n, fr[i].k, fr[i].views, dts[t], "gemv");
        }
    g_check_all = 0;
}

/* wg1, wg2, wg3 and wg4 on two TMA-describable shapes, each dtype (the full table is
 * DUALTIME_GPU_TEST_SHAPES=gemm-tc); late in the run, since a wg fault ends the context. */
static void narrow_wg_cases(void) {
    static const dt_dtype narrow[] = {DT_BF16, DT_F16};
    static const char *wgs[] = {"wg1", "wg2", "wg3", "wg4"};
    for (int t = 0; t < 2 && op_selected("gemm"); t++) {
        if (!dtype_selected(narrow[t])) continue;
        for (int v = 0; v < 4; v++) {
            setenv("DUALTIME_GEMM_VARIANT", wgs[v], 1);
            run_case_narrow(DT_OP_GEMM, 1000, 1048, 264, 0, narrow[t]);
            run_case_narrow(DT_OP_GEMM, 1024, 1024, 1024, 0, narrow[t]);
            unsetenv("DUALTIME_GEMM_VARIANT");
        }
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsetenv("DUALTIME_KERNEL_DIR");
    const char *path = argc > 1 ? argv[1] : "./libdualtime_cuda.so";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("SKIP: dlopen %s: %s\n", path, dlerror());
        return 77;
    }
    dt_cuda_backend_fn fn = (dt_cuda_backend_fn)dlsym(h, DT_CUDA_BACKEND_SYMBOL);
    if (!fn || !(g_be = fn())) {
        printf("FAIL: %s has no %s\n", path, DT_CUDA_BACKEND_SYMBOL);
        return 1;
    }
    char reason[256] = "";
    if (!g_be->available(reason, sizeof reason)) {
        printf("SKIP: CUDA not available: %s\n", reason);
        return 77;
    }
    static char desc[4096];
    g_be->describe(desc, sizeof desc);
    printf("device: %s\n", desc);
    const int quick = getenv("DUALTIME_GPU_TEST_QUICK") != NULL;
    const char *shapes = getenv("DUALTIME_GPU_TEST_SHAPES");
    if (shapes && (strcmp(shapes, "long") == 0 || strcmp(shapes, "8192") == 0)) {
        long_shapes(strcmp(shapes, "8192") == 0);
        cache_case();
        return dt_check_summary("test_cuda_backend");
    }
    if (shapes && strcmp(shapes, "gemm-tc") == 0) { /* only the narrow gemm table */
        gemm_tc_table();
        return dt_check_summary("test_cuda_backend");
    }
    if (shapes && strcmp(shapes, "gemv-narrow") == 0) { /* only the thin narrow gemm table */
        gemv_narrow_table();
        return dt_check_summary("test_cuda_backend");
    }
    if (shapes && *shapes) {
        printf("FAIL: DUALTIME_GPU_TEST_SHAPES=%s: expected long, 8192, gemm-tc or gemv-narrow\n", shapes);
        return 1;
    }

    static const int64_t rows[][2] = {{1, 127}, {17, 257}, {128, 1024}, {1024, 4096}, {8192, 8192}};
    /* 1537x1539x131: v2's 128x128 tile (BK=16) with tails in M, N and K. Issue 18 item 4:
     * thin shapes on gemv (matrix-vector 1000x1x1000, 1x1x1000; vector-matrix 1x1000x1000
     * over a cluster of 8; 8x1x65536 and 7x1x50001: a block a row, K over a cluster of 4
     * resp. 8 with tails and scalar loads; 1x4095x257 scalar columns over a cluster of 4)
     * and small K (4097x4095x257: v2's exact K tail; not in quick runs); few rows (gemv.cu
     * GV_MODE 2 with GV_MR rows a block: 8x4096x4096, 13x1000x1000, 5x1003x257); v2's
     * split-K over a cluster (1024x64x2048, 200x70x3000; 1024^3 takes it too) */
    static const int64_t gemms[][3] = {{127, 193, 61},  {513, 257, 129}, {1024, 1024, 1024},
                                       {1537, 1539, 131}, {4096, 4096, 4096}, {1000, 1, 1000},
                                       {1, 1000, 1000},  {1, 1, 1000},    {8, 1, 65536},
                                       {7, 1, 50001},    {1, 4095, 257},  {4097, 4095, 257},
                                       /* few rows (session 10): 8 rows a block at 16-byte A
                                        * loads over a cluster, two row groups with a row
                                        * tail, odd N and K at scalar loads */
                                       {8, 4096, 4096},  {13, 1000, 1000}, {5, 1003, 257},
                                       /* split-K over a cluster (session 10): 8 blocks of
                                        * 16 K-steps; 8 with row, column and K tails */
                                       {1024, 64, 2048}, {200, 70, 3000}};
    for (int op = 0; op < DT_OP_COUNT && dtype_selected(DT_F32); op++) {
        const dt_op_info *info = dt_op_get((dt_op)op);
        if (!op_selected(info->name)) continue;
        for (int views = 0; views < 2; views++) {
            if (info->is_gemm) {
                for (size_t i = 0; i < sizeof gemms / sizeof gemms[0]; i++) {
                    if (gemms[i][0] == 4096 && (quick || views)) continue;
                    if (gemms[i][0] == 4097 && gemms[i][1] > 1 && quick) continue;
                    run_case((dt_op)op, gemms[i][0], gemms[i][1], gemms[i][2], views);
                }
            } else {
                for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                    if (rows[i][0] == 8192 && quick) continue;
                    run_case((dt_op)op, rows[i][0], rows[i][1], 0, views);
                }
            }
        }
    }
    /* long rows: the multi-pass (not in registers) path */
    if (dtype_selected(DT_F32)) {
        if (op_selected("softmax")) run_case(DT_OP_SOFTMAX, 5, 40000, 0, 1);
        if (op_selected("layernorm")) run_case(DT_OP_LAYERNORM, 5, 40000, 0, 0);
        if (op_selected("cross_entropy")) run_case(DT_OP_CROSS_ENTROPY, 5, 40000, 0, 0);
        /* one long row over a cluster (contiguous and unaligned), and cluster-split rows
         * wider than one block's registers */
        if (op_selected("softmax")) run_case(DT_OP_SOFTMAX, 1, 65536, 0, 0);
        if (op_selected("softmax")) run_case(DT_OP_SOFTMAX, 1, 65536, 0, 1);
        if (op_selected("rmsnorm")) run_case(DT_OP_RMSNORM, 64, 50257, 0, 1);
        if (op_selected("residual_layernorm"))
            run_case(DT_OP_RESIDUAL_LAYERNORM, 3, 70000, 0, 0);
    }

    /* bf16 / f16: every op, both layouts; 8192x8192 rows unless quick; gemm up to 1024^3
     * (the single-threaded FP64 reference of 4096^3 would take minutes) */
    static const int64_t nrows[][2] = {{1, 127},   {17, 257},   {128, 1024},
                                       {1024, 4096}, {4, 16384}, {8192, 8192}};
    static const int64_t ngemms[][3] = {{127, 193, 61}, {513, 257, 129}, {1024, 1024, 1024},
                                        {1537, 1539, 131}, {1, 4096, 4096}, {8, 4096, 4096},
                                        {13, 1000, 1000}, {5, 1003, 257},
                                        /* few rows (gemv_mma.cu's shapes, session 19):
                                         * four row groups at scalar loads, three at
                                         * 16-byte loads, two columns */
                                        {32, 1003, 257}, {24, 2048, 1024}, {17, 2, 1000}};
    static const dt_dtype narrow[] = {DT_BF16, DT_F16};
    for (int t = 0; t < 2; t++) {
        if (!dtype_selected(narrow[t])) continue;
        for (int op = 0; op < DT_OP_COUNT; op++) {
            const dt_op_info *info = dt_op_get((dt_op)op);
            if (!op_selected(info->name)) continue;
            for (int views = 0; views < 2; views++) {
                if (info->is_gemm) {
                    for (size_t i = 0; i < sizeof ngemms / sizeof ngemms[0]; i++)
                        run_case_narrow((dt_op)op, ngemms[i][0], ngemms[i][1], ngemms[i][2],
                                        views, narrow[t]);
                } else {
                    for (size_t i = 0; i < sizeof nrows / sizeof nrows[0]; i++) {
                        if (nrows[i][0] == 8192 && (quick || views)) continue;
                        run_case_narrow((dt_op)op, nrows[i][0], nrows[i][1], 0, views, narrow[t]);
                    }
                }
            }
        }
        if (op_selected("softmax")) run_case_narrow(DT_OP_SOFTMAX, 5, 40000, 0, 1, narrow[t]);
        if (op_selected("layernorm")) run_case_narrow(DT_OP_LAYERNORM, 5, 40000, 0, 0, narrow[t]);
        if (op_selected("cross_entropy"))
            run_case_narrow(DT_OP_CROSS_ENTROPY, 5, 40000, 0, 0, narrow[t]);
        if (op_selected("softmax")) run_case_narrow(DT_OP_SOFTMAX, 1, 65536, 0, 1, narrow[t]);
        if (op_selected("cross_entropy"))
            run_case_narrow(DT_OP_CROSS_ENTROPY, 64, 128256, 0, 0, narrow[t]);
    }
    if (dtype_selected(DT_F16)) acc_f16_fault_case();

    cache_case();
    host_pin_case();
    char dir[] = "/tmp/dt_cuda_test_XXXXXX";
    const int made = mkdtemp(dir) != NULL;
    CHECK(made, "mkdtemp %s", dir);
    if (made) compile_error_case(dir);
    if (!quick) narrow_wg_cases(); /* not under the sanitizers' quick runs */
    if (made) {
        /* the planted illegal address would be (rightly) reported by compute-sanitizer */
        if (!getenv("DUALTIME_GPU_TEST_NO_FAULT")) fault_case(dir); /* last: kills the context */
        rmdir(dir);
    }
    return dt_check_summary("test_cuda_backend");
}
