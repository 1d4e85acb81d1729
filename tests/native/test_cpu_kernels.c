/* test_cpu_kernels.c — every CPU kernel (kernels/cpu) against the test's own FP64
 * reference (dt_test_ref.h), for tail and mid shapes, contiguous and strided views, with
 * one and with all threads, for every instruction-set copy of the row kernels and gemm
 * (and gemm v1), the v1 (libm) GELU and the streaming-store path; each case also passes
 * the arena check (guards, padding and inputs untouched, every output element written).
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
    }
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
