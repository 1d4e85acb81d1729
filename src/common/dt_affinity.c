/* dt_affinity.c — CPU lists, the pinning plan, pinning the caller (contract in
 * dt_affinity.h). */
#define _GNU_SOURCE
#include "dt_affinity.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dt_affinity_parse(const char *list, cpu_set_t *out) {
    CPU_ZERO(out);
    const char *p = list;
    int any = 0;
    while (p && *p) {
        if (!isdigit((unsigned char)*p)) return -1;
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (*end == '-') {
            if (!isdigit((unsigned char)end[1])) return -1;
            b = strtol(end + 1, &end, 10);
        }
        if (a < 0 || b < a || b >= CPU_SETSIZE) return -1;
        for (long c = a; c <= b; c++) CPU_SET((int)c, out);
        any = 1;
        if (*end == ',') end++;
        else if (*end) return -1;
        p = end;
    }
    return any ? 0 : -1;
}

/* Appends "a" or "a-b" (with a comma when out is not empty). */
static void put_range(char *out, size_t len, int a, int b) {
    size_t at = strlen(out);
    if (at + 1 >= len) return;
    const char *sep = at ? "," : "";
    if (a == b) snprintf(out + at, len - at, "%s%d", sep, a);
    else snprintf(out + at, len - at, "%s%d-%d", sep, a, b);
}

void dt_affinity_format(const cpu_set_t *set, char *out, size_t len) {
    if (len) out[0] = '\0';
    int start = -1;
    for (int c = 0; c <= CPU_SETSIZE; c++) {
        int in = c < CPU_SETSIZE && CPU_ISSET(c, set);
        if (in && start < 0) start = c;
        if (!in && start >= 0) {
            put_range(out, len, start, c - 1);
            start = -1;
        }
    }
}

/* cpus[from, from+count) as a CPU list. */
static void list_of(const int *cpus, int from, int count, char *out, size_t len) {
    cpu_set_t s;
    CPU_ZERO(&s);
    for (int i = 0; i < count; i++) CPU_SET(cpus[from + i], &s);
    dt_affinity_format(&s, out, len);
}

void dt_affinity_plan(const int *cpus, int n, int workers, int threads, int full_threads,
                      dt_pin_plan *out) {
    memset(out, 0, sizeof *out);
    if (workers < 1 || workers > DT_PIN_MAX_WORKERS) {
        snprintf(out->why, sizeof out->why, "not pinned: %d workers (1..%d can be pinned)",
                 workers, DT_PIN_MAX_WORKERS);
        return;
    }
    if (n < 2 + workers) {
        snprintf(out->why, sizeof out->why,
                 "not pinned: %d usable CPU%s, pinning needs at least %d (one left to the "
                 "system, one for the orchestrator, one per worker)", n, n == 1 ? "" : "s",
                 2 + workers);
        return;
    }
    int share = (n - 2) / workers, take = share < threads ? share : threads;
    if (full_threads && share < threads) {
        snprintf(out->why, sizeof out->why,
                 "not pinned: %d CPUs per worker, fewer than --threads %d (cpu backend)", share,
                 threads);
        return;
    }
    if (take < 1) take = 1;
    list_of(cpus, 1, 1, out->orchestrator, sizeof out->orchestrator);
    cpu_set_t spare;
    CPU_ZERO(&spare);
    for (int i = 2; i < n; i++) {
        int k = (i - 2) / share;
        if (k >= workers || (i - 2) % share >= take) CPU_SET(cpus[i], &spare);
    }
    dt_affinity_format(&spare, out->spare, sizeof out->spare);
    list_of(cpus, 0, n, out->usable, sizeof out->usable);
    for (int k = 0; k < workers; k++)
        list_of(cpus, 2 + k * share, take, out->worker[k], sizeof out->worker[k]);
    out->pinned = 1;
}

void dt_affinity_plan_here(int workers, int threads, int full_threads, dt_pin_plan *out) {
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) != 0) {
        memset(out, 0, sizeof *out);
        snprintf(out->why, sizeof out->why, "not pinned: cannot read this process's affinity");
        return;
    }
    int cpus[CPU_SETSIZE], n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &s)) cpus[n++] = c;
    dt_affinity_plan(cpus, n, workers, threads, full_threads, out);
}

int dt_affinity_pin_self(const char *list) {
    cpu_set_t s;
    if (dt_affinity_parse(list, &s) != 0) return -1;
    return sched_setaffinity(0, sizeof s, &s);
}

int dt_affinity_self(char *out, size_t len) {
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) != 0) return -1;
    dt_affinity_format(&s, out, len);
    return 0;
}
