/* loops.c — one-thread (and two-thread, static halves, own pthreads) read-loop variants
 * over a MAP_SHARED shm buffer, interleaved; -O3 -march=x86-64-v3.
 * usage: loops M N rounds */
#define _GNU_SOURCE
#include <fcntl.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "dt_cpu_kernels.h"

static int64_t now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

static int64_t M, N;
static const float *A;
static const float *COPIES[16];
static int NCOP = 1, CUR;
static float *OUT;

/* v0: plain 4 accumulators, no fold */
static __attribute__((noinline)) void v_plain(int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; i++) {
        const float *x = A + i * N;
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t j = 0; j + 32 <= N; j += 32) {
            s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + j));
            s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + j + 8));
            s2 = _mm256_add_ps(s2, _mm256_loadu_ps(x + j + 16));
            s3 = _mm256_add_ps(s3, _mm256_loadu_ps(x + j + 24));
        }
        __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
        float t[8]; _mm256_storeu_ps(t, s);
        OUT[i] = t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
    }
}
/* v1: plain + prefetch PF bytes ahead (prefetcht0) once a cache line pair (128 B) */
static int64_t PF = 1024;
static __attribute__((noinline)) void v_pf(int64_t i0, int64_t i1) {
    const int64_t pf = PF / 4;
    for (int64_t i = i0; i < i1; i++) {
        const float *x = A + i * N;
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t j = 0; j + 32 <= N; j += 32) {
            _mm_prefetch((const char *)(x + j + pf), _MM_HINT_T0);
            _mm_prefetch((const char *)(x + j + pf + 16), _MM_HINT_T0);
            s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + j));
            s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + j + 8));
            s2 = _mm256_add_ps(s2, _mm256_loadu_ps(x + j + 16));
            s3 = _mm256_add_ps(s3, _mm256_loadu_ps(x + j + 24));
        }
        __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
        float t[8]; _mm256_storeu_ps(t, s);
        OUT[i] = t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
    }
}
/* v2: 8 accumulators */
static __attribute__((noinline)) void v_acc8(int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; i++) {
        const float *x = A + i * N;
        __m256 s[8];
        for (int k = 0; k < 8; k++) s[k] = _mm256_setzero_ps();
        for (int64_t j = 0; j + 64 <= N; j += 64)
            for (int k = 0; k < 8; k++) s[k] = _mm256_add_ps(s[k], _mm256_loadu_ps(x + j + 8 * k));
        for (int k = 1; k < 8; k++) s[0] = _mm256_add_ps(s[0], s[k]);
        float t[8]; _mm256_storeu_ps(t, s[0]);
        OUT[i] = t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
    }
}
/* v3: the kernel's blocks (1024 floats, 4 ymm) with a vector fold into 2 ymm of doubles */
static __attribute__((noinline)) void v_vfold(int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; i++) {
        const float *x = A + i * N;
        __m256d d0 = _mm256_setzero_pd(), d1 = d0;
        int64_t j = 0;
        for (; j + 1024 <= N; j += 1024) {
            __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
            for (int64_t jj = 0; jj < 1024; jj += 32) {
                s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + j + jj));
                s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + j + jj + 8));
                s2 = _mm256_add_ps(s2, _mm256_loadu_ps(x + j + jj + 16));
                s3 = _mm256_add_ps(s3, _mm256_loadu_ps(x + j + jj + 24));
            }
            s0 = _mm256_add_ps(s0, s2); s1 = _mm256_add_ps(s1, s3);
            s0 = _mm256_add_ps(s0, s1);
            d0 = _mm256_add_pd(d0, _mm256_cvtps_pd(_mm256_castps256_ps128(s0)));
            d1 = _mm256_add_pd(d1, _mm256_cvtps_pd(_mm256_extractf128_ps(s0, 1)));
        }
        double t[8]; _mm256_storeu_pd(t, d0); _mm256_storeu_pd(t + 4, d1);
        OUT[i] = (float)(((t[0] + t[4]) + (t[1] + t[5])) + ((t[2] + t[6]) + (t[3] + t[7])));
    }
}
static void v_kernel(int64_t i0, int64_t i1) { dt_cpu_sum(i1 - i0, N, A + i0 * N, N, OUT + i0); }

typedef void (*vfn)(int64_t, int64_t);
static double time_one(vfn f) {
    int64_t t0 = now(), reps = 0;
    do { A = COPIES[CUR++ % NCOP]; f(0, M); reps++; } while (now() - t0 < 20000000);
    return (now() - t0) / 1e3 / reps;
}

int main(int argc, char **argv) {
    M = argc > 1 ? atoll(argv[1]) : 1024; N = argc > 2 ? atoll(argv[2]) : 4096;
    int rounds = argc > 3 ? atoi(argv[3]) : 9;
    NCOP = getenv("NCOPIES") ? atoi(getenv("NCOPIES")) : 1;
    size_t bytes = ((size_t)M * N * 4 + 8192) * NCOP + (size_t)M * 4 + 8192;
    char name[64]; snprintf(name, sizeof name, "/s14loops-%d", getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600); shm_unlink(name);
    if (ftruncate(fd, bytes)) return 1;
    uint8_t *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    float *a = (float *)(base + 256);
    for (int c = 0; c < NCOP; c++) {
        float *ac = a + (size_t)c * (M * N + 2048);
        for (int64_t i = 0; i < M * N; i++) ac[i] = (float)((i * 2654435761u) % 2048) / 1024.0f - 1.0f;
        COPIES[c] = ac;
    }
    OUT = a + (size_t)NCOP * (M * N + 2048);
    A = a;
    const char *names[] = {"kernel(1 thread)", "plain", "pf256", "pf1024", "pf4096", "acc8", "vfold"};
    const int nv = 7;
    double r[7][64];
    for (int k = 0; k < rounds; k++)
        for (int vv = 0; vv < nv; vv++) {
            const int v = (vv + k) % nv;
            vfn f = v == 0 ? v_kernel : v == 1 ? v_plain : v == 5 ? v_acc8 : v == 6 ? v_vfold : v_pf;
            PF = v == 2 ? 256 : v == 3 ? 1024 : 4096;
            r[v][k] = time_one(f);
        }
    for (int v = 0; v < nv; v++) {
        qsort(r[v], rounds, sizeof(double), cmpd);
        printf("%-18s p50 %7.1f min %7.1f max %7.1f us\n", names[v], r[v][rounds / 2], r[v][0], r[v][rounds - 1]);
    }
    return 0;
}
