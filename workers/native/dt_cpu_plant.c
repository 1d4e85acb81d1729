/* dt_cpu_plant.c — planted cheats of the CPU backend, tests only (dt_cpu_plant.h). */
#define _GNU_SOURCE
#include "dt_cpu_plant.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/common/dt_common.h"

typedef enum { P_CACHED = 0, P_SKIP, P_ASYNC, P_LAZY, P_PHYSICS, P_SCRATCH, P_COUNT } plant_kind;
static const char *const k_names[P_COUNT] = {"cached", "skip", "async", "lazy", "physics",
                                             "scratch"};

struct dt_cpu_plant {
    plant_kind kind;
    dt_cpu_plant_call call;
    const void *ctx;
    uint8_t *out;
    int64_t out_bytes;
    const uint8_t *in;
    int64_t in_bytes;
    int64_t calls;        /* calls so far */
    uint8_t *saved;       /* cached: the first output; skip: the inputs last computed on */
    int pending;          /* lazy: a call is owed at download */
    pthread_t thread;     /* async */
    int thread_on;
    int64_t thread_reps;
};

dt_cpu_plant *dt_cpu_plant_new(dt_op op, uint8_t *out, int64_t out_bytes, const uint8_t *in,
                               int64_t in_bytes, dt_cpu_plant_call call, const void *ctx) {
    const char *spec = getenv("DUALTIME_PLANT_CHEAT");
    const char *colon = spec ? strchr(spec, ':') : NULL;
    if (!colon || dt_op_find(colon + 1) != (int)op) return NULL;
    for (int k = 0; k < P_COUNT; k++) {
        if (strlen(k_names[k]) != (size_t)(colon - spec) ||
            strncmp(k_names[k], spec, (size_t)(colon - spec)) != 0)
            continue;
        dt_cpu_plant *p = dt_xcalloc(1, sizeof *p);
        p->kind = (plant_kind)k;
        p->call = call;
        p->ctx = ctx;
        p->out = out;
        p->out_bytes = out_bytes;
        p->in = in;
        p->in_bytes = in_bytes < 256 ? in_bytes : 256;
        fprintf(stderr, "dualtime-native-worker: PLANTED CHEAT %s (tests only)\n", spec);
        return p;
    }
    return NULL;
}

static void *async_body(void *arg) {
    dt_cpu_plant *p = arg;
    usleep(10 * 1000);
    for (int64_t r = 0; r < p->thread_reps; r++) p->call(p->ctx);
    return NULL;
}

static void join(dt_cpu_plant *p) {
    if (p->thread_on) pthread_join(p->thread, NULL);
    p->thread_on = 0;
}

/* One planted call (the first call of the case is always honest). */
static void planted_call(dt_cpu_plant *p, int64_t r) {
    int first = p->calls++ == 0;
    switch (p->kind) {
    case P_CACHED:
        if (first) {
            p->call(p->ctx);
            p->saved = dt_xcalloc(1, (size_t)p->out_bytes);
            memcpy(p->saved, p->out, (size_t)p->out_bytes);
        } else {
            memcpy(p->out, p->saved, (size_t)p->out_bytes);
        }
        break;
    case P_SKIP:
        if (!first && memcmp(p->saved, p->in, (size_t)p->in_bytes) == 0) break;
        p->call(p->ctx);
        if (!p->saved) p->saved = dt_xcalloc(1, (size_t)p->in_bytes);
        memcpy(p->saved, p->in, (size_t)p->in_bytes);
        break;
    case P_LAZY:
        if (first) p->call(p->ctx);
        else p->pending = 1;
        break;
    case P_PHYSICS:
        if (r == 0) p->call(p->ctx);
        break;
    case P_SCRATCH: /* a correct output, then the first input's first byte as scratch:
                       always the first call's value with its low bit flipped, so any
                       number of calls leaves it changed until the arena is re-armed */
        if (first) {
            p->saved = dt_xcalloc(1, 1);
            p->saved[0] = p->in[0];
        }
        p->call(p->ctx);
        if (!first) ((uint8_t *)p->in)[0] = (uint8_t)(p->saved[0] ^ 0x01);
        break;
    default: p->call(p->ctx); break;
    }
}

int64_t dt_cpu_plant_run(dt_cpu_plant *p, int64_t reps) {
    join(p);
    int64_t t0 = dt_now_ns();
    if (p->kind == P_ASYNC && p->calls > 0) {
        p->calls += reps;
        p->thread_reps = reps;
        p->thread_on = pthread_create(&p->thread, NULL, async_body, p) == 0;
        if (!p->thread_on) async_body(p);
    } else {
        for (int64_t r = 0; r < reps; r++) planted_call(p, r);
    }
    return dt_now_ns() - t0;
}

void dt_cpu_plant_download(dt_cpu_plant *p) {
    /* async never joins here: its work must show as late, not as done at download */
    if (p->kind == P_LAZY && p->pending) p->call(p->ctx);
    p->pending = 0;
}

void dt_cpu_plant_free(dt_cpu_plant *p) {
    if (!p) return;
    join(p);
    free(p->saved);
    free(p);
}

const char *dt_cpu_plant_kind(const dt_cpu_plant *p) { return k_names[p->kind]; }
