/* test_gemm_f64.c — dt_gemm_f64 (src/oracle/dt_gemm_f64.h) is bit-identical (memcmp of C
 * and of S) to the plain triple loop — c = 0, then k ascending, c = c + a*b — on shapes
 * with tails in every dimension and just past every block edge, on every ISA path this
 * CPU runs (the others are reported as skipped), with 1, 2 and 3 OpenMP threads. Inputs
 * have full mantissas and mixed exponents, so any change of order or a lost term rounds
 * differently. Also: DUALTIME_ORACLE_ISA picks the path AUTO runs.
 *
 * Built with -DDT_GEMM_F64_FAULT=n (tests/oracle/CMakeLists.txt: test_gemm_f64_fault1/2),
 * the kernel carries a planted fault and the test passes only if it finds a mismatch on
 * every path: the comparison can fail. Run: ctest -R test_gemm_f64. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"
#include "oracle/dt_gemm_f64.h"

#ifndef DT_GEMM_F64_FAULT
#define DT_GEMM_F64_FAULT 0
#endif

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_u64(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/* A full-mantissa double in +-[2^-8, 2^8), 1 in 16 an exact zero (of either sign). */
static double next_value(void) {
    uint64_t u = next_u64();
    if ((u & 15) == 0) return (u & 16) ? -0.0 : 0.0;
    double m = 1.0 + (double)(u >> 11) / 9007199254740992.0; /* [1, 2) */
    int e = (int)((u >> 4) % 16) - 8;
    return ((u >> 8) & 1 ? -m : m) * ldexp(1.0, e);
}

/* The triple loop: today's order, one rounded multiply and one rounded add per term. */
static void triple_loop(int64_t M, int64_t N, int64_t K, const double *A, const double *B,
                        double *C, double *S) {
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double c = 0, s = 0;
            for (int64_t k = 0; k < K; k++) {
                const double p = A[i * K + k] * B[k * N + j];
                const double q = fabs(A[i * K + k]) * fabs(B[k * N + j]);
                c = c + p;
                s = s + q;
            }
            C[i * N + j] = c;
            S[i * N + j] = s;
        }
}

/* Index of the first element where x and y differ bitwise, or -1. */
static int64_t first_diff(const double *x, const double *y, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (memcmp(x + i, y + i, sizeof(double)) != 0) return i;
    return -1;
}

/* Runs shape M x N x K on path p with each thread count; returns the number of runs whose
 * C or S differed from the triple loop (each reported unless a fault is planted). */
static int run_shape(dt_gemm_f64_path p, int64_t M, int64_t N, int64_t K) {
    const int64_t mn = M * N;
    double *A = malloc((size_t)(M * K) * sizeof(double));
    double *B = malloc((size_t)(K * N) * sizeof(double));
    double *want = malloc((size_t)(2 * mn) * sizeof(double));
    double *got = malloc((size_t)(2 * mn) * sizeof(double));
    for (int64_t i = 0; i < M * K; i++) A[i] = next_value();
    for (int64_t i = 0; i < K * N; i++) B[i] = next_value();
    triple_loop(M, N, K, A, B, want, want + mn);
    int bad = 0;
    for (int threads = 1; threads <= 3; threads++) {
        omp_set_num_threads(threads);
        for (int64_t i = 0; i < 2 * mn; i++) got[i] = 12345.678; /* no zeroing is needed */
        dt_gemm_f64(p, M, N, K, A, B, got, got + mn);
        int64_t dc = first_diff(want, got, mn), ds = first_diff(want + mn, got + mn, mn);
        if (dc < 0 && ds < 0) continue;
        bad++;
        if (DT_GEMM_F64_FAULT) continue;
        int64_t d = dc >= 0 ? dc : ds;
        const double *w = dc >= 0 ? want : want + mn, *g = dc >= 0 ? got : got + mn;
        CHECK(0, "%s %lldx%lldx%lld, %d threads: %s(%lld, %lld) = %.17g, triple loop %.17g",
              dt_gemm_f64_path_name(p), (long long)M, (long long)N, (long long)K, threads,
              dc >= 0 ? "C" : "S", (long long)(d / N), (long long)(d % N), g[d], w[d]);
    }
    free(A);
    free(B);
    free(want);
    free(got);
    return bad;
}

/* Shapes: unit and one-sided tails, odd sizes, and sizes at and just past the blocks of
 * dt_gemm_f64.c (tiles of C up to 384 x 256, blocks of A of 96 rows, K blocks of 256;
 * register tiles 2 x 4, 4 x 4, 12 x 8); the tile rows shrink with more threads. */
static const int64_t k_shapes[][3] = {
    {1, 1, 1},      {1, 300, 70},   {70, 1, 300},   {65, 129, 1},   {127, 193, 61},
    {33, 515, 129}, {96, 128, 256}, {97, 129, 257}, {95, 127, 255}, {193, 257, 513},
    {7, 9, 600},    {3, 17, 513},   {5, 15, 2},     {129, 33, 257}, {2, 1000, 40},
    {12, 8, 256},   {13, 9, 3},     {11, 7, 1},     {25, 5, 300},   {200, 300, 600},
    {385, 260, 300}, {769, 3, 5},   {97, 513, 20},  {1, 1, 1000},   {400, 257, 257},
};

static void check_path(dt_gemm_f64_path p) {
    if (!dt_gemm_f64_path_runs(p)) {
        printf("SKIP  path %s: this CPU or build does not run it\n", dt_gemm_f64_path_name(p));
        return;
    }
    int bad = 0, runs = 0;
    const int n = (int)(sizeof k_shapes / sizeof k_shapes[0]);
    for (int i = 0; i < n; i++, runs += 3)
        bad += run_shape(p, k_shapes[i][0], k_shapes[i][1], k_shapes[i][2]);
    for (int i = 0; i < 4; i++, runs += 3) /* random shapes, the same each run */
        bad += run_shape(p, 1 + (int64_t)(next_u64() % 150), 1 + (int64_t)(next_u64() % 300),
                         1 + (int64_t)(next_u64() % 600));
    if (DT_GEMM_F64_FAULT)
        CHECK(bad > 0, "planted fault %d found on path %s: %d of %d runs differ",
              DT_GEMM_F64_FAULT, dt_gemm_f64_path_name(p), bad, runs);
    else
        CHECK(bad == 0, "path %s: %d of %d runs bit-identical to the triple loop",
              dt_gemm_f64_path_name(p), runs - bad, runs);
}

/* DUALTIME_ORACLE_ISA names the path AUTO takes where it runs; else the widest that runs. */
static void check_env_choice(void) {
    dt_gemm_f64_path widest = DT_GEMM_F64_PORTABLE;
    for (int p = DT_GEMM_F64_PORTABLE; p < DT_GEMM_F64_PATHS; p++)
        if (dt_gemm_f64_path_runs(p)) widest = (dt_gemm_f64_path)p;
    unsetenv("DUALTIME_ORACLE_ISA");
    CHECK(dt_gemm_f64_path_auto() == widest, "unset: %s",
          dt_gemm_f64_path_name(dt_gemm_f64_path_auto()));
    for (int p = DT_GEMM_F64_PORTABLE; p < DT_GEMM_F64_PATHS; p++) {
        setenv("DUALTIME_ORACLE_ISA", dt_gemm_f64_path_name(p), 1);
        dt_gemm_f64_path want = dt_gemm_f64_path_runs(p) ? (dt_gemm_f64_path)p : widest;
        CHECK(dt_gemm_f64_path_auto() == want, "DUALTIME_ORACLE_ISA=%s gives %s",
              dt_gemm_f64_path_name(p), dt_gemm_f64_path_name(dt_gemm_f64_path_auto()));
    }
    setenv("DUALTIME_ORACLE_ISA", "no-such-isa", 1);
    CHECK(dt_gemm_f64_path_auto() == widest, "an unknown name gives the widest path");
    unsetenv("DUALTIME_ORACLE_ISA");
}

int main(void) {
    g_check_verbose = 1;
    check_env_choice();
    for (int p = DT_GEMM_F64_PORTABLE; p < DT_GEMM_F64_PATHS; p++)
        check_path((dt_gemm_f64_path)p);
    return dt_check_summary(DT_GEMM_F64_FAULT ? "test_gemm_f64 (planted fault)" : "test_gemm_f64");
}
