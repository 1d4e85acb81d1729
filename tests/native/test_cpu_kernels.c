/* test_cpu_kernels.c — every CPU kernel (kernels/cpu) against the test's own FP64
 * reference (dt_test_ref.h), for tail and mid shapes, contiguous and strided views, with
 * one and with all threads, for every instruction-set copy of the row kernels and gemm
 * (and gemm v1), the v1 (libm) GELU and the streaming-store path; each case also passes
 * the arena check (guards, padding and inputs untouched, every output element written).
 * The bf16 / f16 one-pass kernels and their conversions against the widen path and
 * dt_ops.h's rules, bit for bit (DT_TEST_EXHAUSTIVE=1: the rounding of every float).
 * A planted wrong element must be caught, so the test can fail. Run: ctest -R test_cpu_kernels. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <omp.h>
#include <string.h>

#include "data/dt_arena.h"
#include "dt_cpu_kernels.h"
#include "dt_cpu_pool.h"
#include "dt_test_ref.h"
#include "../dt_check.h"

static const void *ptr(const dt_case_layout *L, const uint8_t *base, const char *name,
                       int64_t *ld) {
    for (int i = 0; i < L->nbuffers; i++)
        if (strcmp(L->buf[i].name, name) == 0) {
            if (ld) *ld = L->buf[i].row_stride;
            return base + L->buf[i].data_offset;
        }
    return NULL;
}

/* One call of op's kernel on the arena at base. */
static void call_kernel(const dt_case_layout *L, uint8_t *base) {
    int64_t lda = 0, ldb = 0, m = L->m, n = L->n;
    const float *a = ptr(L, base, "a", &lda), *b = ptr(L, base, "b", &ldb);
    const float *g = ptr(L, base, "gamma", NULL), *be = ptr(L, base, "beta", NULL);
    const int64_t *lab = ptr(L, base, "labels", NULL);
    float *o = (float *)(base + L->buf[dt_layout_output(L)].data_offset);
    switch (L->op) {
    case DT_OP_ADD: dt_cpu_add(m, n, a, lda, b, ldb, o); break;
    case DT_OP_GELU_ADD: dt_cpu_gelu_add(m, n, a, lda, b, ldb, o); break;
    case DT_OP_SUM: dt_cpu_sum(m, n, a, lda, o); break;
    case DT_OP_SOFTMAX: dt_cpu_softmax(m, n, a, lda, o); break;
    case DT_OP_RMSNORM: dt_cpu_rmsnorm(m, n, a, lda, g, o); break;
    case DT_OP_LAYERNORM: dt_cpu_layernorm(m, n, a, lda, g, be, o); break;
    case DT_OP_RESIDUAL_LAYERNORM: dt_cpu_residual_layernorm(m, n, a, lda, b, ldb, o); break;
    case DT_OP_CROSS_ENTROPY: dt_cpu_cross_entropy(m, n, a, lda, lab, o); break;
    case DT_OP_GEMM: dt_cpu_gemm(m, n, L->k, a, lda, b, ldb, o); break;
    default: DT_ASSERT(0);
    }
}

/* Runs one case; returns the number of elements outside tolerance (plant: corrupt one
 * output element first, to prove the comparison catches it). */
static int64_t run_case(dt_op op, int64_t m, int64_t n, int64_t k, int views, uint64_t seed,
                        int plant) {
    dt_case_layout L;
    dt_layout_make(&L, op, m, n, k, views);
    uint8_t *base = dt_xmalloc((size_t)L.total_bytes);
    uint8_t *pristine = dt_xmalloc((size_t)L.total_bytes);
    dt_arena_fill(&L, pristine, seed);
    memcpy(base, pristine, (size_t)L.total_bytes);
    call_kernel(&L, base);
    call_kernel(&L, base); /* a second call must give the same (gemm accumulates in place) */

    dt_arena_report rep;
    dt_arena_check(&L, base, pristine, &rep);
    CHECK(rep.ok, "%s %lldx%lldx%lld views=%d: arena check: %s", dt_op_get(op)->name,
          (long long)m, (long long)n, (long long)k, views, rep.first_problem);

    const double *in[4] = {NULL, NULL, NULL, NULL};
    int nin = 0;
    for (int i = 0; i < L.nbuffers; i++) {
        if (L.buf[i].is_output) continue;
        double *d = dt_xmalloc((size_t)(L.buf[i].rows * L.buf[i].cols) * sizeof(double));
        dt_buffer_to_f64(&L, i, base, d);
        in[nin++] = d;
    }
    const dt_buffer_layout *O = &L.buf[dt_layout_output(&L)];
    int64_t cnt = O->rows * O->cols;
    double *ref = dt_xmalloc((size_t)cnt * sizeof(double)), *scale = dt_xmalloc((size_t)cnt * sizeof(double));
    ref_compute(op, m, n, k, in, ref, scale);
    float *out = (float *)(base + O->data_offset);
    if (plant) out[cnt / 2] += plant > 1 ? 1e-3f * fabsf(out[cnt / 2]) + 1e-3f : 1.0f;
    char msg[256];
    int64_t bad = ref_check(op, cnt, out, ref, scale, msg, sizeof msg);
    if (!plant)
        CHECK(bad == 0, "%s %lldx%lldx%lld views=%d threads=%d: %lld bad, first %s",
              dt_op_get(op)->name, (long long)m, (long long)n, (long long)k, views,
              omp_get_max_threads(), (long long)bad, msg);
    for (int i = 0; i < nin; i++) free((void *)in[i]);
    free(ref);
    free(scale);
    free(base);
    free(pristine);
    return bad;
}

/* dt_cpu_pool: every item runs exactly once, no slot runs two items at once, slots stay
 * below the thread count, and the caller sees every item's writes. */
typedef struct pool_probe {
    _Atomic int count[300];
    _Atomic int busy[DT_CPU_POOL_MAX];
    _Atomic int bad_slot, overlap;
    int threads;
} pool_probe;

static void pool_probe_item(void *ctx, int64_t item, int slot) {
    pool_probe *p = ctx;
    if (slot < 0 || slot >= p->threads) atomic_store(&p->bad_slot, 1);
    else if (atomic_exchange(&p->busy[slot], 1) != 0) atomic_store(&p->overlap, 1);
    for (volatile int spin = 0; spin < (int)(item % 7) * 50; spin++) {}
    atomic_fetch_add(&p->count[item], 1);
    if (slot >= 0 && slot < p->threads) atomic_store(&p->busy[slot], 0);
}

static void test_pool(void) {
    static pool_probe p;
    int wrong = 0, jobs = 0;
    for (int threads = 1; threads <= 4; threads++)
        for (int rep = 0; rep < 200; rep++) {
            const int64_t nitems = 1 + (rep * 37) % 300;
            memset(&p, 0, sizeof p);
            p.threads = threads;
            dt_cpu_pool_run(threads, nitems, pool_probe_item, &p);
            jobs++;
            for (int64_t i = 0; i < 300; i++)
                wrong += atomic_load(&p.count[i]) != (i < nitems ? 1 : 0);
            wrong += atomic_load(&p.bad_slot) + atomic_load(&p.overlap);
        }
    CHECK(wrong == 0, "dt_cpu_pool: %d wrong counts/slots over %d jobs", wrong, jobs);
    CHECK(dt_cpu_pool_workers() >= 1 && dt_cpu_pool_workers() <= 3,
          "dt_cpu_pool: %d workers for at most 4 threads", dt_cpu_pool_workers());
}

/* dt_cpu_pool_rows, both splits: every row of [0, m) exactly once, in ranges inside [0, m),
 * over chunk sizes from one row to the whole range (n), 1-4 threads; the rows of the first
 * range are slow, so in the steal split the other threads take chunks from its back. */
typedef struct rows_probe {
    _Atomic int count[1000];
    _Atomic int bad;
    _Atomic int64_t by_other; /* rows of range 0 that a thread other than the caller ran */
    int64_t m, per;
    pthread_t caller;
} rows_probe;

static void rows_probe_fn(const void *args, int64_t i0, int64_t i1) {
    rows_probe *p = (rows_probe *)args;
    if (i0 < 0 || i1 > p->m || i0 >= i1) {
        atomic_store(&p->bad, 1);
        return;
    }
    for (int64_t i = i0; i < i1; i++) {
        atomic_fetch_add(&p->count[i], 1);
        if (i < p->per) {
            for (volatile int spin = 0; spin < 2000; spin++) {}
            if (!pthread_equal(pthread_self(), p->caller)) atomic_fetch_add(&p->by_other, 1);
        }
    }
}

static void test_pool_rows(void) {
    static rows_probe p;
    static const int64_t ms[] = {1, 2, 3, 5, 17, 64, 300, 1000};
    static const int64_t ns[] = {1, 100, 1024, 20000};
    int wrong = 0, jobs = 0;
    int64_t stolen = 0;
    for (int split = 0; split < 2; split++) {
        dt_cpu_pool_rows_static(split);
        for (int threads = 1; threads <= 4; threads++)
            for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++)
                for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
                    for (int rep = 0; rep < 3; rep++) {
                        memset(&p, 0, sizeof p);
                        p.m = ms[a];
                        p.per = (p.m + threads - 1) / threads;
                        p.caller = pthread_self();
                        dt_cpu_pool_rows(threads, p.m, ns[b], rows_probe_fn, &p);
                        jobs++;
                        for (int64_t i = 0; i < 1000; i++)
                            wrong += atomic_load(&p.count[i]) != (i < p.m ? 1 : 0);
                        wrong += atomic_load(&p.bad);
                        if (!split && threads > 1) stolen += atomic_load(&p.by_other);
                    }
    }
    dt_cpu_pool_rows_static(0);
    CHECK(wrong == 0, "dt_cpu_pool_rows: %d wrong row counts or ranges over %d jobs", wrong, jobs);
    /* not checked (a busy machine may never run the workers): how often stealing happened */
    printf("dt_cpu_pool_rows: %lld rows of the slow first range run by other threads\n",
           (long long)stolen);
}

/* ---- bf16 / f16 one-pass kernels (dt_cpu_*_narrow, session 15) ------------------------
 * Each against the worker's widen path, bit for bit: the inputs widened by dt_ops.h's rule
 * into dense FP32 rows, the FP32 kernel of the same copy, its output rounded by
 * dt_f32_to_narrow. Inputs: uniform values, every kind of bit pattern (NaN with payloads,
 * signalling NaN, +-inf, subnormals, +-0, the largest finite), and pairs whose sum is a
 * rounding tie of the storage type; rows read through a stride > n at an odd offset. */
static uint64_t g_rng = 0x9E3779B97F4A7C15u;
static uint64_t rng_next(void) { /* splitmix64 */
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* One input value of type t for a row of kind k: 0 mostly ordinary, some special, some
 * any bit pattern; 1 uniform in [-4, 4); 2 any finite pattern (subnormals included). */
static uint16_t narrow_value(dt_dtype t, int k) {
    static const uint16_t bf_special[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1,
                                          0x7F81, 0x7FFF, 0x0001, 0x807F, 0x0080, 0x7F7F};
    static const uint16_t h_special[] = {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01,
                                         0x7C01, 0x7FFF, 0x0001, 0x83FF, 0x0400, 0x7BFF};
    const uint64_t r = rng_next();
    const uint16_t any = (uint16_t)(r >> 16), inf = t == DT_F16 ? 0x7C00 : 0x7F80;
    if (k == 2 || (k == 0 && r % 8 == 0)) /* k 2: a finite pattern */
        return k == 2 && (any & inf) == inf ? (uint16_t)(any & ~0x4000) : any;
    if (k == 0 && r % 8 == 1) return (t == DT_F16 ? h_special : bf_special)[(r >> 16) % 12];
    return dt_f32_to_narrow(t, (float)((double)(r >> 11) * 0x1p-53 * 8.0 - 4.0));
}

/* Rows [0, m) x [0, n) of a narrow matrix at stride ld, filled (row i of kind i % 3); b,
 * given tie_of (a), partly ties: b = a * 2^-p (p = the significand's bits), so a + b is
 * exactly halfway between two neighbours. */
static void narrow_fill(dt_dtype t, uint16_t *x, int64_t m, int64_t n, int64_t ld,
                        const uint16_t *tie_of) {
    const int p = dt_dtype_precision(t);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            uint16_t v = narrow_value(t, (int)(i % 3));
            if (tie_of && rng_next() % 4 == 0)
                v = dt_f32_to_narrow(t, ldexpf(dt_narrow_to_f32(t, tie_of[i * ld + j]), -p));
            x[i * ld + j] = v;
        }
}

/* Runs op (add, gelu_add, sum) on m x n of type t, row stride n + pad, both ways; returns
 * the number of output elements whose bits differ (plant: one output made wrong first). */
static int64_t narrow_case(dt_dtype t, dt_op op, int64_t m, int64_t n, int64_t pad, int plant) {
    const int64_t ld = n + pad, ocols = op == DT_OP_SUM ? 1 : n, cnt = m * ocols;
    /* one element in: an odd offset, no vector alignment */
    uint16_t *abuf = dt_xmalloc((size_t)(m * ld + 1) * 2);
    uint16_t *bbuf = dt_xmalloc((size_t)(m * ld + 1) * 2);
    uint16_t *a = abuf + 1, *b = bbuf + 1;
    uint16_t *out = dt_xmalloc((size_t)(cnt + 1) * 2), *want = dt_xmalloc((size_t)cnt * 2);
    float *fa = dt_xmalloc((size_t)(m * n) * 4), *fb = dt_xmalloc((size_t)(m * n) * 4);
    float *fo = dt_xmalloc((size_t)cnt * 4);
    narrow_fill(t, a, m, n, ld, NULL);
    narrow_fill(t, b, m, n, ld, a);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            fa[i * n + j] = dt_narrow_to_f32(t, a[i * ld + j]);
            fb[i * n + j] = dt_narrow_to_f32(t, b[i * ld + j]);
        }
    for (int64_t e = 0; e <= cnt; e++) out[e] = 0x5A5A; /* out[cnt]: a guard */
    switch (op) {
    case DT_OP_ADD:
        dt_cpu_add(m, n, fa, n, fb, n, fo);
        dt_cpu_add_narrow(t, m, n, a, ld, b, ld, out);
        break;
    case DT_OP_GELU_ADD:
        dt_cpu_gelu_add(m, n, fa, n, fb, n, fo);
        dt_cpu_gelu_add_narrow(t, m, n, a, ld, b, ld, out);
        break;
    case DT_OP_SUM:
        dt_cpu_sum(m, n, fa, n, fo);
        dt_cpu_sum_narrow(t, m, n, a, ld, out);
        break;
    default: DT_ASSERT(0);
    }
    for (int64_t e = 0; e < cnt; e++) want[e] = dt_f32_to_narrow(t, fo[e]);
    if (plant) /* a wrong finite value: the low bit, or 0 for a NaN */
        out[cnt / 2] = isnan(dt_narrow_to_f32(t, want[cnt / 2])) ? 0 : want[cnt / 2] ^ 1;
    /* Which of two NaN operands an x86 add returns is its first source operand, which GCC
     * picks (it treats + as commutative), so the FP32 kernel's own choice is a compiler
     * artifact: where the output draws on two or more NaN inputs both sides must only be
     * NaN; with one, its bits (sign, payload) must match. */
    int64_t bad = 0, first = -1;
    for (int64_t e = 0; e < cnt; e++) {
        if (out[e] == want[e]) continue;
        const int64_t i = e / ocols, j0 = op == DT_OP_SUM ? 0 : e % ocols;
        const int64_t j1 = op == DT_OP_SUM ? n : j0 + 1;
        int nans = 0;
        for (int64_t j = j0; j < j1; j++)
            nans += isnan(dt_narrow_to_f32(t, a[i * ld + j])) +
                    (op != DT_OP_SUM && isnan(dt_narrow_to_f32(t, b[i * ld + j])));
        if (nans >= 2 && isnan(dt_narrow_to_f32(t, out[e])) && isnan(dt_narrow_to_f32(t, want[e])))
            continue;
        bad++, first = first < 0 ? e : first;
    }
    if (!plant)
        CHECK(bad == 0 && out[cnt] == 0x5A5A,
              "%s %s %lldx%lld stride %lld threads=%d (%s): %lld of %lld differ from the widen "
              "path, first at %lld: %04x, want %04x; guard %04x", dt_op_get(op)->name,
              dt_dtype_name(t), (long long)m, (long long)n, (long long)ld, omp_get_max_threads(),
              dt_cpu_rows_describe(), (long long)bad, (long long)cnt, (long long)first,
              first >= 0 ? out[first] : 0, first >= 0 ? want[first] : 0, out[cnt]);
    free(abuf), free(bbuf), free(out), free(want), free(fa), free(fb), free(fo);
    return bad;
}

static void test_narrow_kernels(void) {
    static const int64_t shapes[][2] = {{1, 127}, {7, 3333}, {5, 9000}, {3, 1},    {2, 8},
                                        {4, 16},  {1, 1024}, {2, 2049}, {9, 1023}, {257, 3001}};
    static const dt_op ops[] = {DT_OP_ADD, DT_OP_GELU_ADD, DT_OP_SUM};
    for (int t = 0; t < 2; t++)
        for (size_t o = 0; o < 3; o++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (int64_t pad = 0; pad <= 13; pad += 13)
                    narrow_case(t ? DT_F16 : DT_BF16, ops[o], shapes[s][0], shapes[s][1], pad, 0);
}

/* dt_cpu_widen_narrow / dt_cpu_round_narrow of the copy in use against dt_ops.h's rules:
 * every 16-bit pattern widened; rounded, every float whose low 16 bits are one of the
 * values around the ties of bf16 (bit 15) and f16 (bits 12..15 at the subnormal exponents,
 * 12 for normals), with every sign, exponent and top mantissa bits; with
 * DT_TEST_EXHAUSTIVE=1 every float. Returns the number of mismatches. */
static int64_t test_narrow_conversions(dt_dtype t) {
    enum { CH = 4096 };
    static const uint16_t lows[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000,
                                    0x2001, 0x3000, 0x3FFF, 0x4000, 0x4001, 0x7FFF, 0x8000,
                                    0x8001, 0x9000, 0xBFFF, 0xC000, 0xE000, 0xFFFF, 0x5A5A,
                                    0xA5A5, 0x1234, 0xFEDC};
    const int exhaustive = getenv("DT_TEST_EXHAUSTIVE") && atoi(getenv("DT_TEST_EXHAUSTIVE"));
    int64_t bad = 0;
    uint16_t h[CH], got[CH];
    float f[CH];
    for (uint32_t h0 = 0; h0 < 65536; h0 += CH) {
        for (int k = 0; k < CH; k++) h[k] = (uint16_t)(h0 + k);
        dt_cpu_widen_narrow(t, h, f, CH);
        for (int k = 0; k < CH; k++) {
            const float w = dt_narrow_to_f32(t, h[k]);
            bad += memcmp(&f[k], &w, 4) != 0;
        }
    }
    const uint64_t total = exhaustive ? (uint64_t)1 << 32 : (uint64_t)65536 * (sizeof lows / 2);
    for (uint64_t c0 = 0; c0 < total; c0 += CH) {
        for (int k = 0; k < CH; k++) {
            const uint64_t c = c0 + (uint64_t)k;
            const uint32_t u = exhaustive ? (uint32_t)c
                                          : (uint32_t)((c % 65536) << 16 | lows[c / 65536]);
            memcpy(&f[k], &u, 4);
        }
        dt_cpu_round_narrow(t, f, got, CH);
        for (int k = 0; k < CH; k++) bad += got[k] != dt_f32_to_narrow(t, f[k]);
    }
    CHECK(bad == 0, "%s conversions of %s: %lld differ from dt_ops.h's rules (%s)",
          dt_dtype_name(t), dt_cpu_rows_describe(), (long long)bad,
          exhaustive ? "every float" : "tie neighbourhoods");
    return bad;
}

int main(void) {
    static const int64_t row_shapes[][2] = {{1, 127}, {17, 257}, {128, 1024}, {3, 1},
                                            {2, 4099}, {300, 64}};
    /* gemm: tails of every block size (MR 6, NR 16, KC 256, MC <= 144, NC 1024), the rows
     * path (M < 6: matrix-vector 1x1000x1000, 5 rows over three column chunks), several
     * A blocks per thread (300, 513 rows), blocks of exactly MC = 144 rows (288) */
    static const int64_t gemm_shapes[][3] = {{127, 193, 61}, {513, 257, 129}, {1, 1, 1},
                                             {5, 3, 300},    {70, 1100, 20},  {7, 17, 520},
                                             {64, 64, 64},   {1, 1000, 1000}, {5, 1030, 77},
                                             {300, 48, 257}, {6, 16, 256},    {288, 96, 300}};
    const int maxthreads = omp_get_max_threads();
    test_pool();
    test_pool_rows();
    /* every copy of the row kernels (dt_cpu_isa.h) and both store paths: isa, gelu, stream */
    static const char *const configs[][3] = {{"base", "poly", "off"}, {"base", "libm", "on"},
                                             {"v3", "poly", "off"},   {"v3", "poly", "on"},
                                             {"v3", "libm", "off"},   {"v4", "poly", "off"},
                                             {"v4", "poly", "on"},    {"v4", "libm", "off"}};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        if (dt_cpu_configure(configs[c][0], configs[c][1], configs[c][2]) != 0) {
            printf("no %s copy on this CPU/build: skipped\n", configs[c][0]);
            continue;
        }
        CHECK(strncmp(dt_cpu_rows_describe(), configs[c][0], strlen(configs[c][0])) == 0 &&
                  strcmp(dt_cpu_gelu_variant(), configs[c][1]) == 0,
              "configure %s/%s/%s: rows '%s', gelu '%s'", configs[c][0], configs[c][1],
              configs[c][2], dt_cpu_rows_describe(), dt_cpu_gelu_variant());
    /* pass 0: one thread; 1: all on the kernels' pool; 2 (base and v3 copies): all with
     * DUALTIME_CPU_POOL=omp (OpenMP regions); 3 (base and v3): the pool with the static row
     * split (DUALTIME_CPU_ROWS=static) */
    for (int pass = 0; pass < ((c == 0 || c == 2) ? 4 : 2); pass++) {
        omp_set_num_threads(pass == 0 ? 1 : (maxthreads > 1 ? maxthreads : 2));
        dt_cpu_pool_use_omp(pass == 2);
        dt_cpu_pool_rows_static(pass == 3);
        for (int op = 0; op < DT_OP_COUNT; op++) {
            for (int views = 0; views <= 1; views++) {
                if (op == DT_OP_GEMM) {
                    /* gemm v2 of this copy, and v1 (DUALTIME_CPU_GEMM=v1) in the first */
                    for (int v = 0; v < (c == 0 ? 2 : 1); v++) {
                        DT_ASSERT(dt_cpu_gemm_select(v ? "v1" : "v2") == 0);
                        CHECK(strncmp(dt_cpu_gemm_describe(), v ? "v1" : "v2", 2) == 0 &&
                                  (v || strstr(dt_cpu_gemm_describe(), configs[c][0])),
                              "gemm %s in copy %s: '%s'", v ? "v1" : "v2", configs[c][0],
                              dt_cpu_gemm_describe());
                        for (size_t s = 0; s < sizeof gemm_shapes / sizeof gemm_shapes[0]; s++)
                            run_case((dt_op)op, gemm_shapes[s][0], gemm_shapes[s][1],
                                     gemm_shapes[s][2], views, 42 + s, 0);
                    }
                    dt_cpu_gemm_select(NULL);
                } else {
                    for (size_t s = 0; s < sizeof row_shapes / sizeof row_shapes[0]; s++)
                        run_case((dt_op)op, row_shapes[s][0], row_shapes[s][1], 0, views,
                                 7 + s, 0);
                }
            }
        }
        if (pass < 2) test_narrow_kernels();
    }
    test_narrow_conversions(DT_BF16);
    test_narrow_conversions(DT_F16);
    }
    dt_cpu_pool_use_omp(0);
    dt_cpu_pool_rows_static(0);
    /* an unknown copy is refused (-1) and named; automatic takes the best copy there is */
    CHECK(dt_cpu_configure("v9", NULL, NULL) == -1 && strstr(dt_cpu_rows_describe(), "v9 unknown"),
          "DUALTIME_CPU_ISA=v9 must be refused and named: '%s'", dt_cpu_rows_describe());
    {
        const char *best = dt_cpu_configure("v4", NULL, NULL) == 0   ? "v4"
                           : dt_cpu_configure("v3", NULL, NULL) == 0 ? "v3"
                                                                     : "base";
        dt_cpu_configure(NULL, NULL, NULL);
        CHECK(strncmp(dt_cpu_rows_describe(), best, strlen(best)) == 0,
              "automatic choice '%s', the best copy here is %s", dt_cpu_rows_describe(), best);
    }
    dt_cpu_configure(NULL, NULL, NULL);
    CHECK(dt_cpu_gemm_select("v9") == -1 && strncmp(dt_cpu_gemm_describe(), "v2", 2) == 0,
          "an unknown gemm variant must be refused and change nothing");
    omp_set_num_threads(maxthreads);
    /* The comparison must be able to fail: a planted error in every op is caught. */
    for (int op = 0; op < DT_OP_COUNT; op++) {
        int64_t bad = op == DT_OP_GEMM ? run_case((dt_op)op, 17, 33, 9, 1, 3, 1)
                                       : run_case((dt_op)op, 17, 257, 0, 1, 3, 1);
        CHECK(bad == 1, "planted error in %s not caught (bad=%lld)", dt_op_get(op)->name,
              (long long)bad);
    }
    /* ... and in the bf16 / f16 kernels' comparison */
    for (int t = 0; t < 2; t++)
        for (int op = DT_OP_ADD; op <= DT_OP_SUM; op++)
            CHECK(narrow_case(t ? DT_F16 : DT_BF16, (dt_op)op, 5, 301, 3, 1) == 1,
                  "planted error in %s %s not caught", dt_op_get(op)->name, t ? "f16" : "bf16");
    /* ... and in gemm's rows path (M < 6) */
    CHECK(run_case(DT_OP_GEMM, 1, 1000, 1000, 1, 5, 1) == 1, "planted error in gemm rows path");
    /* cross_entropy: a label outside [0, N) gives NaN, never an out-of-bounds read */
    {
        float x[8] = {0.5f, -1.0f, 2.0f, 0.0f, 1.0f, 1.0f, 1.0f, 1.0f}, out[2];
        int64_t labels[2] = {4, -1};
        dt_cpu_cross_entropy(2, 4, x, 4, labels, out);
        CHECK(isnan(out[0]) && isnan(out[1]), "out-of-range labels must give NaN");
    }
    /* dt_cpu_expf: within 3e-7 relative of exp over the range softmax uses */
    {
        double worst = 0;
        for (float x = -87.0f; x <= 88.0f; x += 0.0013f) {
            double e = exp((double)x), rel = fabs((double)dt_cpu_expf(x) - e) / e;
            worst = rel > worst ? rel : worst;
        }
        CHECK(worst < 3e-7, "dt_cpu_expf relative error %.3g", worst);
        CHECK(dt_cpu_expf(-1000.0f) < 1e-37f && dt_cpu_expf(0.0f) == 1.0f, "dt_cpu_expf ends");
    }
    /* dt_cpu_gelu: within 1.5e-7 |x| of the double-precision erf GELU (the registry allows
     * 2e-6 + 2e-5 |x|; libm erff in FP32 reaches 1e-7 |x|), and its exp2 within 1.5e-7 */
    {
        double worst = 0, worst_x = 0;
        for (float x = -12.0f; x <= 12.0f; x += 1.7e-4f) {
            const double r = 0.5 * (double)x * (1.0 + erf((double)x / sqrt(2.0)));
            const double e = fabs((double)dt_cpu_gelu(x) - r) / fabs((double)x);
            if (e > worst) worst = e, worst_x = x;
        }
        CHECK(worst < 1.5e-7, "dt_cpu_gelu error %.3g |x| at x = %g", worst, worst_x);
        CHECK(dt_cpu_gelu(0.0f) == 0.0f && dt_cpu_gelu(40.0f) == 40.0f &&
                  fabsf(dt_cpu_gelu(-40.0f)) < 1e-18f, /* u clamped at 9: |x| Phi(-9) */
              "dt_cpu_gelu ends: %g %g %g", dt_cpu_gelu(0.0f), dt_cpu_gelu(40.0f),
              dt_cpu_gelu(-40.0f));
        double we = 0;
        for (float h = -125.0f; h <= 0.0f; h += 1.3e-4f) {
            const double r = exp2((double)h), e = fabs((double)dt_cpu_exp2f_neg(h) - r) / r;
            we = e > we ? e : we;
        }
        CHECK(we < 1.5e-7, "dt_cpu_exp2f_neg relative error %.3g", we);
    }
    printf("gemm: %s\nrows: %s\n", dt_cpu_gemm_describe(), dt_cpu_rows_describe());
    return dt_check_summary("test_cpu_kernels");
}
