/* bench_sum.c — standalone A/B of a row kernel (sum by default; OP=add|layernorm|rmsnorm|
 * softmax) on a MAP_SHARED shm buffer (like the arena).
 * usage: [OP=op] bench_sum M N threads samples (variant chosen by the environment)
 * prints per-sample µs per call (batch of back-to-back calls ~20 ms), median and min. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <omp.h>
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

int main(int argc, char **argv) {
    int64_t m = argc > 1 ? atoll(argv[1]) : 1024, n = argc > 2 ? atoll(argv[2]) : 4096;
    int th = argc > 3 ? atoi(argv[3]) : 2, samples = argc > 4 ? atoi(argv[4]) : 15;
    omp_set_num_threads(th);
    const char *op = getenv("OP") ? getenv("OP") : "sum";
    const int ncop = getenv("NCOPIES") ? atoi(getenv("NCOPIES")) : 1;
    size_t bytes = (size_t)m * n * 4 * (2 + ncop) + 4096 * (3 + ncop) + (size_t)n * 8;
    char name[64]; snprintf(name, sizeof name, "/s14bench-%d", getpid());
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600); shm_unlink(name);
    if (ftruncate(fd, bytes)) return 1;
    uint8_t *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    float *a0 = (float *)(base + 256), *b = a0 + (m * n + 64) * ncop, *out = b + m * n + 64, *g = out + m * n + 64, *be = g + n;
    for (int64_t i = 0; i < m * n * ncop + 64 * (ncop - 1); i++) a0[i] = (float)((i * 2654435761u) % 2048) / 1024.0f - 1.0f;
    for (int64_t i = 0; i < m * n; i++) b[i] = a0[i];
    float *a = a0;
    int cur = 0;
    for (int64_t j = 0; j < n; j++) g[j] = 1.0f, be[j] = 0.5f;
#define CALL()                                                                             \
    do {                                                                                   \
        if (!strcmp(op, "sum")) dt_cpu_sum(m, n, a, n, out);                               \
        else if (!strcmp(op, "add")) dt_cpu_add(m, n, a, n, b, n, out);                   \
        else if (!strcmp(op, "layernorm")) dt_cpu_layernorm(m, n, a, n, g, be, out);      \
        else if (!strcmp(op, "rmsnorm")) dt_cpu_rmsnorm(m, n, a, n, g, out);              \
        else if (!strcmp(op, "softmax")) dt_cpu_softmax(m, n, a, n, out);                 \
    } while (0)
    for (int w = 0; w < 50; w++) CALL();
    double us[256];
    for (int s = 0; s < samples; s++) {
        int64_t t0 = now(), reps = 0;
        do { a = a0 + (m * n + 64) * (cur++ % ncop); CALL(); reps++; } while (now() - t0 < 20000000);
        us[s] = (now() - t0) / 1e3 / reps;
    }
    /* where the threads ran: every task's last CPU and context switches (/proc) */
    char where[512] = "";
    if (getenv("WHERE")) {
        char cmd[160];
        snprintf(cmd, sizeof cmd, "for t in /proc/%d/task/*; do awk '{printf \"%%s:cpu%%s \", $1, $39}' $t/stat; grep -h ctxt $t/status | tr '\\n' ' '; done", getpid());
        FILE *pp = popen(cmd, "r");
        if (pp) { size_t k = fread(where, 1, sizeof where - 1, pp); where[k] = 0; pclose(pp); }
    }
    double srt[256]; memcpy(srt, us, sizeof us); qsort(srt, samples, sizeof(double), cmpd);
    printf("%s %s %lldx%lld th=%d p50 %.1f min %.1f max %.1f us  (%.1f GB/s at p50)\n",
           getenv("TAG") ? getenv("TAG") : "", op, (long long)m, (long long)n, th, srt[samples / 2], srt[0], srt[samples - 1],
           m * n * 4 / srt[samples / 2] / 1e3);
    if (where[0]) printf("   %s\n", where);
    return 0;
}
