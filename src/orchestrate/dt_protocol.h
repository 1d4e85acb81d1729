/* dt_protocol.h — the orchestrator's side of the worker protocol (docs/protocol.md) in
 * C structs: it builds every request a worker is sent and parses every answer into a
 * struct, so that JSON stays at this edge (with dt_worker, the transport, and the
 * results codec these are the only files that know JSON).
 *
 * Each request function sends one request to a running worker and waits up to
 * timeout_s. Failures: DT_EWORKER, with the worker's error text when it answered
 * ok:false (the worker stays usable: dt_worker_alive) or the transport's reason when it
 * died (it is then killed, see dt_worker.h); DT_EWORKER too when an answer lacks a field
 * the orchestrator relies on (the message says which).
 *
 * Ownership: answer structs own their strings and arrays; each has a _free function
 * (safe on a zeroed struct). Units in names (_ns, _us, _ms). Not thread-safe (one
 * worker, one request at a time). */
#ifndef DT_PROTOCOL_H
#define DT_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/dt_common.h"
#include "dt_worker.h"

/* The protocol version this orchestrator speaks. */
#define DT_PROTOCOL_VERSION 1

/* Seconds a worker may take to start and answer hello (at least; --timeout if larger). */
#define DT_WORKER_START_S 120.0

/* One backend a worker offers, from its hello. */
typedef struct dt_hello_backend {
    int available;
    char *reason; /* NULL when none was given */
} dt_hello_backend;

/* A worker's hello answer: the few fields the orchestrator acts on, and the whole answer
 * as JSON text (kept in the run's record as it came). */
typedef struct dt_hello {
    long long protocol;
    char *worker;            /* id, e.g. "native"; NULL when absent */
    char *framework;         /* NULL when absent */
    char *framework_version; /* NULL when absent */
    dt_hello_backend cpu, cuda;
    long long threads;       /* env.threads, -1 when absent */
    char *cuda_info_json;    /* backends.cuda.info (the device) as JSON text, NULL if none */
    char *text;              /* the whole answer, compact JSON */
} dt_hello;

/* Parses a hello answer line (must be an object with ok:true). DT_EINVAL otherwise. */
dt_status dt_hello_parse(const char *text, size_t len, dt_hello *out, dt_err *err);
/* backend "cpu" or "cuda" of a hello; NULL for any other name. */
const dt_hello_backend *dt_hello_backend_get(const dt_hello *h, const char *backend);
void dt_hello_free(dt_hello *h);

/* Starts w, asks hello (timeout at least DT_WORKER_START_S) and checks the protocol
 * version (a mismatch kills the worker). On DT_OK *hello is filled (caller frees). */
dt_status dt_protocol_start(dt_worker *w, double timeout_s, dt_hello *hello, dt_err *err);

#endif
