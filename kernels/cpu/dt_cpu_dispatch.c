/* dt_cpu_dispatch.c — the public row-kernel entry points of dt_cpu_kernels.h: each calls
 * the copy of the kernel for this CPU (dt_cpu_isa.h), chosen once at the first call
 * (pthread_once), or again by dt_cpu_configure (tests).
 *
 * Choice: DUALTIME_CPU_ISA=base forces the SSE2 baseline; =v3 asks for the AVX2+FMA copy,
 * =v4 for the AVX-512 one (each granted only where CPUID reports that level, else the best
 * copy it does report, and the description says why); unset or "auto": the best copy
 * CPUID reports (v4, v3, base). DUALTIME_CPU_GELU=libm selects the v1
 * GELU (libm erff). DUALTIME_CPU_STREAM=on|off forces or forbids the non-temporal output
 * stores (dt_cpu_isa.h); unset or "auto": when a call touches more than half the
 * last-level cache. DUALTIME_CPU_GEMM=v1 selects gemm v1 (gemm_v1.c: its own AVX2 check,
 * not DUALTIME_CPU_ISA); unset or "v2": gemm.c from the chosen copy. DUALTIME_CPU_POOL=omp
 * (dt_cpu_pool.h) is named in both descriptions; DUALTIME_CPU_ROWS=static (the row
 * kernels' v3 split) and DUALTIME_CPU_POOL_WAIT=spin (v3's idle workers; both dt_cpu_pool.h)
 * in the rows one. Compiled once, without -march. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_cpu_isa.h"
#include "dt_cpu_pool.h"

static const dt_cpu_row_kernels *g_rows; /* set by configure (pthread_once, then tests) */
static char g_desc[400];
static int g_gelu_libm;
static int g_stream_mode;       /* 0 auto, 1 on, 2 off */
static int64_t g_stream_bytes;  /* auto: stream above this many bytes touched per call */
static int g_gemm_v1;           /* DUALTIME_CPU_GEMM=v1 or dt_cpu_gemm_select("v1") */
static char g_gemm_desc[256];

/* This build's copy of x86-64 level v (0: the baseline, 3, 4), or NULL. */
static const dt_cpu_row_kernels *copy_of(int v) {
#if defined(DT_CPU_HAVE_V4)
    if (v == 4) return &dt_cpu_rows_v4;
#endif
#if defined(DT_CPU_HAVE_V3)
    if (v == 3) return &dt_cpu_rows_v3;
#endif
    return v == 0 ? &dt_cpu_rows_base : NULL;
}

/* 1 when CPUID reports x86-64 level v (3 or 4) and this build has that copy. */
static int cpu_has(int v) {
    __builtin_cpu_init();
#if defined(DT_CPU_HAVE_V4)
    if (v == 4) return __builtin_cpu_supports("x86-64-v4") != 0;
#endif
#if defined(DT_CPU_HAVE_V3)
    if (v == 3) return __builtin_cpu_supports("x86-64-v3") != 0;
#endif
    return 0;
}

/* The last-level cache of CPU 0 in bytes: sysfs (what lscpu shows; in a VM glibc's
 * sysconf(_SC_LEVEL3_CACHE_SIZE) can report the host's total), else sysconf, else 32 MiB. */
static int64_t llc_bytes(void) {
    int64_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], buf[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        long long v = 0;
        char unit = 0;
        if (fgets(buf, sizeof buf, f) && sscanf(buf, "%lld%c", &v, &unit) >= 1) {
            if (unit == 'K') v <<= 10;
            else if (unit == 'M') v <<= 20;
            if (v > best) best = v;
        }
        fclose(f);
    }
    if (best > 0) return best;
    long s = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (s <= 0) s = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return s > 0 ? (int64_t)s : (int64_t)32 << 20;
}

/* Sets every choice from the three knobs (NULL = auto / default); returns 0, or -1 when
 * isa names a copy this CPU or build lacks (the best one it has is chosen: v4 asked on a
 * v3 CPU gets v3) or an unknown one (auto then). */
static int configure(const char *isa, const char *gelu, const char *stream) {
    /* levels: 0 base, 3, 4; want -1 automatic, -2 an unknown name */
    const int best = cpu_has(3) ? (cpu_has(4) ? 4 : 3) : 0;
    int want = -1;
    if (isa && *isa && strcmp(isa, "auto") != 0)
        want = strcmp(isa, "base") == 0 ? 0 : strcmp(isa, "v3") == 0 ? 3 : strcmp(isa, "v4") == 0 ? 4 : -2;
    const int level = want >= 0 && want <= best ? want : best;
    const dt_cpu_row_kernels *t = copy_of(level);
    char why[128];
    if (want == -2)
        snprintf(why, sizeof why, "DUALTIME_CPU_ISA=%.40s unknown (base, v3, v4, auto)", isa);
    else if (want > best)
        snprintf(why, sizeof why, "DUALTIME_CPU_ISA=v%d refused: %s x86-64-v%d%s%s", want,
                 copy_of(want) ? "CPUID has no" : "built without an", want,
                 copy_of(want) ? "" : " copy", best ? " (v3 chosen)" : "");
    else if (want >= 0)
        snprintf(why, sizeof why, "DUALTIME_CPU_ISA=%s", isa);
    else
        snprintf(why, sizeof why, "%s", best == 4 ? "CPUID: x86-64-v4"
                                        : best == 3 ? "CPUID: x86-64-v3"
                                        : copy_of(3) ? "CPUID: no x86-64-v3"
                                                     : "built without an x86-64-v3 copy");
    g_gelu_libm = gelu && strcmp(gelu, "libm") == 0;
    g_stream_mode = stream && strcmp(stream, "on") == 0 ? 1 : stream && strcmp(stream, "off") == 0 ? 2 : 0;
    g_stream_bytes = llc_bytes() / 2;
    char st[64];
    if (g_stream_mode == 0)
        snprintf(st, sizeof st, "streaming stores above %lld KiB",
                 (long long)(g_stream_bytes >> 10));
    else
        snprintf(st, sizeof st, "streaming stores %s (DUALTIME_CPU_STREAM)",
                 g_stream_mode == 1 ? "always" : "never");
    snprintf(g_desc, sizeof g_desc, "%s, %s; %s; threads: %s%s", t->isa, why, st,
             dt_cpu_pool_use_omp(-1)       ? "OpenMP regions (DUALTIME_CPU_POOL=omp)"
             : dt_cpu_pool_rows_static(-1) ? "own pool, static row ranges (DUALTIME_CPU_ROWS=static)"
                                           : "own pool, row ranges stolen in chunks",
             dt_cpu_pool_idle_spin() ? ", idle workers spin (DUALTIME_CPU_POOL_WAIT=spin)" : "");
    g_rows = t;
    return want == -2 || want > best ? -1 : 0;
}

static void configure_from_env(void) {
    const char *gv = getenv("DUALTIME_CPU_GEMM");
    g_gemm_v1 = gv && strcmp(gv, "v1") == 0;
    configure(getenv("DUALTIME_CPU_ISA"), getenv("DUALTIME_CPU_GELU"),
              getenv("DUALTIME_CPU_STREAM"));
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* The table in use (the environment's choice, made at the first call). */
static const dt_cpu_row_kernels *pick(void) {
    pthread_once(&g_once, configure_from_env);
    return g_rows;
}

int dt_cpu_configure(const char *isa, const char *gelu, const char *stream) {
    pthread_once(&g_once, configure_from_env);
    return configure(isa, gelu, stream);
}

int dt_cpu_stream_wanted(int64_t bytes) {
    pick();
    return g_stream_mode == 1 || (g_stream_mode == 0 && bytes > g_stream_bytes);
}

const char *dt_cpu_rows_describe(void) {
    pick();
    return g_desc;
}

const char *dt_cpu_gelu_variant(void) {
    pick();
    return g_gelu_libm ? "libm" : "poly";
}

void dt_cpu_add(int64_t m, int64_t n, const float *a, int64_t lda, const float *b,
                int64_t ldb, float *out) {
    pick()->add(m, n, a, lda, b, ldb, out);
}

void dt_cpu_gelu_add(int64_t m, int64_t n, const float *a, int64_t lda, const float *b,
                     int64_t ldb, float *out) {
    const dt_cpu_row_kernels *t = pick();
    (g_gelu_libm ? t->gelu_add_libm : t->gelu_add)(m, n, a, lda, b, ldb, out);
}

void dt_cpu_sum(int64_t m, int64_t n, const float *a, int64_t lda, float *out) {
    pick()->sum(m, n, a, lda, out);
}

void dt_cpu_softmax(int64_t m, int64_t n, const float *a, int64_t lda, float *out) {
    pick()->softmax(m, n, a, lda, out);
}

void dt_cpu_rmsnorm(int64_t m, int64_t n, const float *a, int64_t lda, const float *gamma,
                    float *out) {
    pick()->rmsnorm(m, n, a, lda, gamma, out);
}

void dt_cpu_layernorm(int64_t m, int64_t n, const float *a, int64_t lda, const float *gamma,
                      const float *beta, float *out) {
    pick()->layernorm(m, n, a, lda, gamma, beta, out);
}

void dt_cpu_residual_layernorm(int64_t m, int64_t n, const float *a, int64_t lda,
                               const float *b, int64_t ldb, float *out) {
    pick()->residual_layernorm(m, n, a, lda, b, ldb, out);
}

void dt_cpu_cross_entropy(int64_t m, int64_t n, const float *a, int64_t lda,
                          const int64_t *labels, float *out) {
    pick()->cross_entropy(m, n, a, lda, labels, out);
}

void dt_cpu_add_narrow(dt_dtype t, int64_t m, int64_t n, const uint16_t *a, int64_t lda,
                       const uint16_t *b, int64_t ldb, uint16_t *out) {
    pick()->add_narrow(t, m, n, a, lda, b, ldb, out);
}

void dt_cpu_gelu_add_narrow(dt_dtype t, int64_t m, int64_t n, const uint16_t *a, int64_t lda,
                            const uint16_t *b, int64_t ldb, uint16_t *out) {
    const dt_cpu_row_kernels *k = pick();
    (g_gelu_libm ? k->gelu_add_libm_narrow : k->gelu_add_narrow)(t, m, n, a, lda, b, ldb, out);
}

void dt_cpu_sum_narrow(dt_dtype t, int64_t m, int64_t n, const uint16_t *a, int64_t lda,
                       uint16_t *out) {
    pick()->sum_narrow(t, m, n, a, lda, out);
}

void dt_cpu_widen_narrow(dt_dtype t, const uint16_t *src, float *dst, int64_t n) {
    pick()->widen(t, src, dst, n);
}

void dt_cpu_round_narrow(dt_dtype t, const float *src, uint16_t *dst, int64_t n) {
    pick()->round(t, src, dst, n);
}

int dt_cpu_gemm_select(const char *variant) {
    pthread_once(&g_once, configure_from_env);
    const int v1 = variant && strcmp(variant, "v1") == 0;
    if (variant && !v1 && strcmp(variant, "v2") != 0) return -1;
    g_gemm_v1 = v1;
    return 0;
}

void dt_cpu_gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                 int64_t ldb, float *out) {
    const dt_cpu_row_kernels *t = pick();
    if (g_gemm_v1)
        dt_cpu_gemm_v1(m, n, k, a, lda, b, ldb, out);
    else
        t->gemm(m, n, k, a, lda, b, ldb, out);
}

const char *dt_cpu_gemm_describe(void) {
    const dt_cpu_row_kernels *t = pick();
    if (g_gemm_v1) return dt_cpu_gemm_v1_describe();
    snprintf(g_gemm_desc, sizeof g_gemm_desc,
             "v2: packed 6x16 micro-kernel, KC=256 MC<=144 NC=1024, M<6 unpacked rows; %s; "
             "threads: %s",
             t->isa, dt_cpu_pool_use_omp(-1) ? "OpenMP regions (DUALTIME_CPU_POOL=omp)" : "own pool");
    return g_gemm_desc;
}
