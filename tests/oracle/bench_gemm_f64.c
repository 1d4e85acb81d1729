/* bench_gemm_f64.c — not a test: times the oracle's FP64 GEMM (dt_gemm_f64, every path this
 * CPU runs) against the blocked loop the oracle used before it (kept here as "legacy"), on
 * one shape, and says whether each path's C and S are bit-identical to the legacy loop's.
 * GFLOP/s counts C only (2 M N K per call; S doubles the work). Threads: OMP_NUM_THREADS.
 * Run: build-X/tests/oracle/bench_gemm_f64 M N K [repeats]  (docs/perf.md). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/dt_gemm_f64.h"

/* The oracle's loop up to this change: 32 x 256 tiles of C, K blocks of 128, i-k-j. */
static void legacy(int64_t M, int64_t N, int64_t K, const double *A, const double *B,
                   const double *Babs, double *C, double *S) {
    memset(C, 0, (size_t)(M * N) * sizeof(double));
    memset(S, 0, (size_t)(M * N) * sizeof(double));
    int64_t mt = (M + 31) / 32, nt = (N + 255) / 256;
#pragma omp parallel for schedule(dynamic)
    for (int64_t t = 0; t < mt * nt; t++) {
        int64_t ib = (t / nt) * 32, jb = (t % nt) * 256;
        int64_t ie = ib + 32 < M ? ib + 32 : M, je = jb + 256 < N ? jb + 256 : N;
        for (int64_t kb = 0; kb < K; kb += 128) {
            int64_t ke = kb + 128 < K ? kb + 128 : K;
            for (int64_t i = ib; i < ie; i++)
                for (int64_t k = kb; k < ke; k++) {
                    const double a = A[i * K + k], aa = fabs(a);
#pragma omp simd
                    for (int64_t j = jb; j < je; j++) {
                        C[i * N + j] += a * B[k * N + j];
                        S[i * N + j] += aa * Babs[k * N + j];
                    }
                }
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s M N K [repeats]\n", argv[0]);
        return 2;
    }
    const int64_t M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]);
    const int reps = argc > 4 ? atoi(argv[4]) : 3;
    if (M < 1 || N < 1 || K < 1 || reps < 1) return 2;
    const int64_t mn = M * N;
    double *A = malloc((size_t)(M * K) * sizeof(double));
    double *B = malloc((size_t)(K * N) * sizeof(double));
    double *Babs = malloc((size_t)(K * N) * sizeof(double));
    double *ref = malloc((size_t)(2 * mn) * sizeof(double));
    double *got = malloc((size_t)(2 * mn) * sizeof(double));
    uint64_t x = 88172645463325252ull;
    for (int64_t i = 0; i < M * K + K * N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v = (double)(x >> 11) / 4503599627370496.0 - 1.0; /* [-1, 1), full mantissa */
        if (i < M * K) A[i] = v;
        else B[i - M * K] = v, Babs[i - M * K] = fabs(v);
    }
    printf("%lldx%lldx%lld, %d threads, best of %d\n", (long long)M, (long long)N, (long long)K,
           omp_get_max_threads(), reps);
    const double flop = 2.0 * (double)M * (double)N * (double)K;
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime();
        legacy(M, N, K, A, B, Babs, ref, ref + mn);
        double t = omp_get_wtime() - t0;
        best = t < best ? t : best;
    }
    const double legacy_s = best;
    printf("%-9s %8.3f s %7.2f GFLOP/s\n", "legacy", legacy_s, flop / legacy_s * 1e-9);
    for (int p = DT_GEMM_F64_PORTABLE; p < DT_GEMM_F64_PATHS; p++) {
        if (!dt_gemm_f64_path_runs(p)) continue;
        best = INFINITY;
        for (int r = 0; r < reps; r++) {
            double t0 = omp_get_wtime();
            dt_gemm_f64((dt_gemm_f64_path)p, M, N, K, A, B, got, got + mn);
            double t = omp_get_wtime() - t0;
            best = t < best ? t : best;
        }
        int same = memcmp(ref, got, (size_t)(2 * mn) * sizeof(double)) == 0;
        printf("%-9s %8.3f s %7.2f GFLOP/s  %5.2fx  %s\n", dt_gemm_f64_path_name(p), best,
               flop / best * 1e-9, legacy_s / best, same ? "bit-identical" : "DIFFERS");
    }
    free(A);
    free(B);
    free(Babs);
    free(ref);
    free(got);
    return 0;
}
