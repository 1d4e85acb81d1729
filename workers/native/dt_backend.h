/* dt_backend.h — the interface between the native worker's protocol loop and one
 * compute backend (cpu, cuda).
 *
 * The protocol loop (dt_native_main.c) parses requests, maps the arena and calls these
 * functions; a backend never reads stdin or writes stdout. Every fallible function
 * returns dt_status and fills err. `state` is the backend's per-case object, created
 * by prepare and freed by release. Times are host monotonic nanoseconds or ms as named.
 * Not thread-safe: one case at a time per process. */
#ifndef DT_BACKEND_H
#define DT_BACKEND_H

#include <jansson.h>
#include <stdint.h>

#include "../../src/common/dt_common.h"
#include "../../src/data/dt_arena.h"

typedef struct dt_backend {
    const char *name; /* "cpu" or "cuda" */
    /* 1 if usable here; else 0 with a one-line reason. Called once at hello. */
    int (*available)(char *reason, size_t reason_len);
    /* Adds free-form facts (device name, driver, ...) to the hello env object. */
    void (*describe)(json_t *env);
    /* Compiles and allocates for the case. host_base is the mapped arena (L->total_bytes).
     * Fills reply with output_policy, implementation, setup_ms{compile,alloc}, sources[]. */
    dt_status (*prepare)(void **state, const dt_case_layout *L, uint8_t *host_base,
                         int capture_sources, json_t *reply, dt_err *err);
    dt_status (*upload)(void *state, double *ms, dt_err *err);
    /* sync; t0; reps calls; sync; t1 -> *host_ns */
    dt_status (*run)(void *state, int64_t reps, int64_t *host_ns, dt_err *err);
    dt_status (*download)(void *state, double *ms, dt_err *err);
    /* Device scope ("control" | "probe"); NULL when the backend has none. Fills result. */
    dt_status (*device)(void *state, const char *scope, int64_t reps, int64_t capacity,
                        json_t *result, dt_err *err);
    void (*release)(void *state);
} dt_backend;

extern const dt_backend dt_backend_cpu;
/* Defined in backend_cuda.c when built with CUDA; NULL-named stub otherwise. */
extern const dt_backend dt_backend_cuda;

#endif
