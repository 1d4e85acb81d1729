/* dt_native_request.h — parsing and validation of the native worker's request lines
 * (docs/protocol.md), separate from the process so tests and fuzzers can call it.
 *
 * Nothing here maps memory, starts a backend or writes output: a request line becomes a
 * JSON object and its command name, and the prepare/run/device requests become plain
 * validated values, or a dt_err with one line that says what is wrong (the worker
 * prefixes the command: "prepare: ..."). Every size and offset in a prepare request is
 * checked against the layout the worker computes itself (dt_layout_make), so a valid
 * request never lets the worker touch memory outside the arena it maps.
 * Limits: dimensions in [1, 2^20] (k in [0, 2^20] for non-gemm ops), reps in
 * [1, 2^31], device capacity in [0, 2^24]. Reentrant; no globals. */
#ifndef DT_NATIVE_REQUEST_H
#define DT_NATIVE_REQUEST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "../../src/common/dt_common.h"
#include "../../src/data/dt_arena.h"

#define DT_REQ_MAX_DIM (1 << 20)
#define DT_REQ_MAX_REPS ((int64_t)1 << 31)
#define DT_REQ_MAX_CAPACITY ((int64_t)1 << 24)

/* A validated prepare request. */
typedef struct dt_prepare_req {
    dt_case_layout L;      /* the layout the worker computed; the request matched it */
    int cuda;              /* 1: backend "cuda", 0: "cpu" (the default) */
    char shm_name[64];     /* "/dualtime-...", no further '/' */
    int64_t arena_bytes;   /* >= L.total_bytes */
    int capture_sources;   /* 0 or 1 */
} dt_prepare_req;

/* Called when a prepare request names the cuda backend, before the rest is validated:
 * DT_OK when the backend is usable, else an error (e.g. DT_EUNAVAIL with the reason). */
typedef dt_status (*dt_req_cuda_check_fn)(void *ctx, dt_err *err);

/* Parses one request line of len bytes (without its newline). On success *req is a new
 * reference to a JSON object (caller json_decref) and *cmd its "cmd" string (borrowed
 * from *req). Fails on embedded NUL bytes, malformed JSON, a non-object and a missing or
 * non-string "cmd"; *req is NULL then. */
dt_status dt_req_parse_line(const char *line, size_t len, json_t **req, const char **cmd,
                            dt_err *err);

/* Reads the integer member key of obj into *v; fails when missing or not an integer. */
dt_status dt_req_get_int(const json_t *obj, const char *key, int64_t *v, dt_err *err);

/* Validates a prepare request. cuda_check may be NULL (cuda is then unavailable). */
dt_status dt_req_parse_prepare(const json_t *req, dt_req_cuda_check_fn cuda_check, void *ctx,
                               dt_prepare_req *out, dt_err *err);

/* The "reps" of a run or device request, in [1, DT_REQ_MAX_REPS]. */
dt_status dt_req_parse_reps(const json_t *req, int64_t *reps, dt_err *err);

/* Optional "prime": untimed calls made (and synchronized) right before the timed part
 * of run or device (docs/protocol.md, "Priming"). 0 when absent; else 0..DT_REQ_MAX_PRIME. */
#define DT_REQ_MAX_PRIME 16
dt_status dt_req_parse_prime(const json_t *req, int64_t *prime, dt_err *err);

/* A device request: *probe is 0 (scope control), 1 (probe, concurrent) or 2 (probe,
 * serialized); *capacity 0 when absent; *hold 1 for "hold": true (a held window), 0 when
 * false or absent (a non-boolean is refused). */
dt_status dt_req_parse_device(const json_t *req, int *probe, int64_t *reps, int64_t *capacity,
                              int *hold, dt_err *err);

/* The optional "decomp" of a device request (the E2E decomposition's sample,
 * docs/protocol.md): *decomp 1 for true, 0 for false or absent. Refused: a non-boolean,
 * and true unless the request is an unheld probe of one call (probe, hold, reps as
 * dt_req_parse_device gave them). */
dt_status dt_req_parse_decomp(const json_t *req, int probe, int hold, int64_t reps, int *decomp,
                              dt_err *err);
/* A device request with the issue-13 options (docs/protocol.md, "device"). */
#define DT_REQ_MAX_COPIES 1024              /* "copies" in [1, this] */
#define DT_REQ_MAX_FLUSH ((int64_t)1 << 40) /* "flush_bytes" in [4, this] */
typedef struct dt_device_req {
    int probe;             /* as dt_req_parse_device (0 for a graph) */
    int graph;             /* 1: "scope": "graph" (the reps calls as one replayed graph) */
    int64_t reps, capacity;
    int hold;
    int cold;              /* 1: "cache": "cold" (absent or "warm": 0) */
    int64_t copies;        /* cold: arena copies the batch calls rotate over */
    int64_t flush_bytes;   /* cold: bytes written before the window */
} dt_device_req;

/* Validates a device request of any scope: control, probe or graph; "cache" absent,
 * "warm" or "cold" (cold needs integer "copies" and "flush_bytes" in range). */
dt_status dt_req_parse_device_ex(const json_t *req, dt_device_req *out, dt_err *err);

#endif
