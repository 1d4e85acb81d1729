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
#include "../data/dt_arena.h"
#include "../record/dt_record.h"

/* The protocol version this orchestrator speaks. */
#define DT_PROTOCOL_VERSION 1

/* Seconds a worker may take to start and answer hello by default (--start-timeout). */
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
    char *cuda_info_json;    /* backends.cuda.info (the device) as JSON text, with "name"
                                added from its "gpu" when it has none; NULL if none */
    char *cuda_name;         /* that "name", NULL if none */
    int64_t cuda_pci_bus;    /* its integer "pci_bus", DT_NULL_I64 if none */
    int64_t cuda_memory_free_bytes; /* its "memory_free_bytes", -1 if none (issue 16) */
    char *unavailable;       /* "unavailable": why the worker cannot provide what it was
                                started as (e.g. --compile on a torch without
                                torch.compile); NULL when absent or not a string */
    int64_t cuda_l2_bytes;   /* its "l2_bytes", -1 if none (issue 13: --cache cold) */
    int copy_ranges;         /* "copy": {"ranges": true}: upload / download take "only" */
    int copy_digest;         /* "copy": {"digest": "dt-mix64-1"}: download answers "digest" */
    char *text;              /* the whole answer, compact JSON */
} dt_hello;

/* Parses a hello answer line (must be an object with ok:true). DT_EINVAL otherwise. */
dt_status dt_hello_parse(const char *text, size_t len, dt_hello *out, dt_err *err);
/* backend "cpu" or "cuda" of a hello; NULL for any other name. */
const dt_hello_backend *dt_hello_backend_get(const dt_hello *h, const char *backend);
void dt_hello_free(dt_hello *h);

/* Starts w, asks hello within timeout_s (the start-up limit: --start-timeout, by default
 * DT_WORKER_START_S) and checks the protocol version (a mismatch kills the worker). On
 * DT_OK *hello is filled (caller frees). */
dt_status dt_protocol_start(dt_worker *w, double timeout_s, dt_hello *hello, dt_err *err);
/* dt_protocol_start in two halves, so that several workers start at once: _send starts w
 * and sends hello (a failure kills it), _receive reads and checks the answer as above. */
dt_status dt_protocol_start_send(dt_worker *w, dt_err *err);
dt_status dt_protocol_start_receive(dt_worker *w, double timeout_s, dt_hello *hello, dt_err *err);

/* ---- prepare --------------------------------------------------------------------------- */

/* What a prepare request carries (docs/protocol.md, "prepare"). */
typedef struct dt_protocol_prepare_req {
    const char *case_id, *op, *backend;
    int64_t m, n, k;
    const char *shm;              /* the arena's shared-memory name */
    const dt_case_layout *layout; /* buffers and arena size */
    int capture_sources;
} dt_protocol_prepare_req;

/* One run-time compiled source a prepare answer names. */
typedef struct dt_protocol_source {
    char *sha256;    /* NULL: the entry had none (it is then skipped by callers) */
    char *name;      /* NULL: null */
    dt_strv options; /* compile options */
    char *text;      /* only with capture_sources; NULL otherwise */
} dt_protocol_source;

typedef struct dt_protocol_prepare_answer {
    double compile_ms, alloc_ms; /* setup_ms.compile / .alloc; NAN: not given */
    char *output_policy;         /* NULL: not given */
    char *implementation;        /* NULL: not given */
    int emulated;                /* "emulated": true: the worker cannot compute the case's
                                    dtype and computes in FP32 from the same inputs, then
                                    rounds (no speed verdict); 0 when absent */
    dt_protocol_source *sources;
    size_t n_sources;
} dt_protocol_prepare_answer;

/* Sends prepare; ans may be NULL (the probe worker's prepare). */
dt_status dt_protocol_prepare(dt_worker *w, const dt_protocol_prepare_req *req, double timeout_s,
                              dt_protocol_prepare_answer *ans, dt_err *err);
/* dt_protocol_prepare in two halves (dt_worker_send / dt_worker_receive), so that several
 * workers prepare at once; ans NULL: the answer is only checked. */
dt_status dt_protocol_prepare_send(dt_worker *w, const dt_protocol_prepare_req *req, dt_err *err);
dt_status dt_protocol_prepare_receive(dt_worker *w, double timeout_s,
                                      dt_protocol_prepare_answer *ans, dt_err *err);
void dt_protocol_prepare_answer_free(dt_protocol_prepare_answer *a);

/* ---- timed and untimed calls ------------------------------------------------------------ */

/* run: reps calls (after `prime` untimed ones, 0: none) -> *host_ns (a positive integer,
 * else DT_EWORKER "worker answered run without a positive integer host_ns"). */
dt_status dt_protocol_run(dt_worker *w, int64_t reps, int prime, double timeout_s,
                          int64_t *host_ns, dt_err *err);
/* dt_protocol_run and dt_protocol_release in two halves (several workers at once: the
 * probe workers' warm-ups, the releases after a case; nothing timed is in them). */
dt_status dt_protocol_run_send(dt_worker *w, int64_t reps, int prime, dt_err *err);
dt_status dt_protocol_run_receive(dt_worker *w, double timeout_s, int64_t *host_ns, dt_err *err);
dt_status dt_protocol_release_send(dt_worker *w, dt_err *err);
dt_status dt_protocol_release_receive(dt_worker *w, double timeout_s, dt_err *err);
/* floor: one primed empty call -> *host_ns (same rule as run, "... answered floor ..."). */
dt_status dt_protocol_floor(dt_worker *w, int prime, double timeout_s, int64_t *host_ns,
                            dt_err *err);
/* upload or download (cmd) -> *ms (0 when not given). */
dt_status dt_protocol_copy(dt_worker *w, const char *cmd, double timeout_s, double *ms,
                           dt_err *err);
/* Byte ranges [off, off + len) of the arena. */
typedef struct dt_byte_range {
    int64_t off, len;
} dt_byte_range;
/* upload / download of only the nonly ranges `only` (a worker whose hello has
 * copy.ranges), and, download only, the digests (dt_arena_digest) of the ndigest ranges
 * `digest` of the device mirror after the copy into digests[] (a worker with
 * copy.digest; an answer without them, or of another count, is DT_EWORKER). */
dt_status dt_protocol_copy_ranges(dt_worker *w, const char *cmd, const dt_byte_range *only,
                                  int nonly, const dt_byte_range *digest, int ndigest,
                                  double timeout_s, double *ms, uint64_t *digests, dt_err *err);
/* release the prepared case. */
dt_status dt_protocol_release(dt_worker *w, double timeout_s, dt_err *err);
/* probe_process with probe_kind ("concurrent" or "serialized"). */
dt_status dt_protocol_probe_process(dt_worker *w, const char *probe_kind, double timeout_s,
                                    dt_err *err);

/* device: one control or probe region of reps calls, held (request "hold": true) when
 * hold is 1 -> a sample with us (per call) set from result.stream_ns (which must be
 * positive: else DT_EWORKER "worker answered device without a positive result.stream_ns";
 * a held request must come back with result.held true: else DT_EWORKER "worker answered
 * a held device request without held:true", so an unheld window is never stored as a
 * held one) and, for a probe, its probe fields: per-call
 * kernel sum/span, counts, clock offset, per-name kernel totals and every kernel record
 * (compact rows relative to the first start). reps/round/index/position are the caller's
 * to set. On DT_OK *out owns its arrays (push it with dt_samples_push). */
dt_status dt_protocol_device(dt_worker *w, int probe, int hold, int64_t reps,
                             const char *probe_kind, int prime, double timeout_s, dt_sample *out,
                             dt_err *err);
/* The same on a whole answer line's text ({"ok":true,"result":{...}}; a fuzz harness's,
 * a test's): DT_EWORKER when it is not an ok:true object or lacks a positive stream_ns,
 * DT_EINVAL for reps < 1. On DT_OK *out owns its arrays. */
dt_status dt_protocol_device_parse(const char *text, size_t len, int probe, int64_t reps,
                                   dt_sample *out, dt_err *err);

/* device with "decomp": true (issue 13, docs/protocol.md "decomp"): one unheld probe
 * region of one call, after `prime` untimed calls, whose answer carries result.decomp
 * (the host bracket of the call and its launch API timestamps) and the kernel records ->
 * *out (round and position are the caller's to set). DT_EWORKER when the worker refuses
 * (ok:false: the decomposition is then unavailable there, the worker stays usable) or
 * the answer lacks a field (the message says which). On DT_OK *out owns its arrays. */
dt_status dt_protocol_decomp(dt_worker *w, const char *probe_kind, int prime, double timeout_s,
                             dt_decomp_raw *out, dt_err *err);
/* The same on a whole answer line's text (a test's). */
dt_status dt_protocol_decomp_parse(const char *text, size_t len, dt_decomp_raw *out,
                                   dt_err *err);
/* An extended device request (issue 13; docs/protocol.md, "device"): scope graph
 * (R calls captured in a CUDA graph, the graph replayed once in the window) and the cold
 * cache (flush before the window, batch calls rotating over `copies` arena copies). */
enum { DT_PROTOCOL_DEVICE_CONTROL = 0, DT_PROTOCOL_DEVICE_PROBE = 1, DT_PROTOCOL_DEVICE_GRAPH = 2 };
typedef struct dt_protocol_device_opts {
    int scope;              /* DT_PROTOCOL_DEVICE_* */
    int hold;               /* 1: "hold": true (the answer must say held:true) */
    int64_t reps;           /* >= 1 */
    const char *probe_kind; /* "concurrent" | "serialized"; NULL: concurrent */
    int prime;
    int cache_cold;         /* 1: "cache":"cold" with copies and flush_bytes */
    int64_t copies, flush_bytes;
} dt_protocol_device_opts;

/* What an extended answer says beyond the sample. */
typedef struct dt_protocol_device_extra {
    char *unavailable;      /* graph: the worker's reason the scope is unavailable (ok:true
                               with "unavailable"; the sample is then empty); NULL: measured */
    int cache_cold;         /* result.cache.state was "cold" */
    int64_t copies;         /* result.cache.copies (0: absent) */
    int64_t flushed_bytes;  /* result.cache.flush_bytes (0: absent) */
} dt_protocol_device_extra;

/* Sends o; on DT_OK either x->unavailable is set (graph only; *out empty) or *out is the
 * sample as dt_protocol_device makes it (us per call from stream_ns, held checked, probe
 * fields for a probe) and x the cache echo. "unavailable" in an answer to a non-graph
 * request, or not a non-empty string, is DT_EWORKER. Free x with the function below. */
dt_status dt_protocol_device_ex(dt_worker *w, const dt_protocol_device_opts *o, double timeout_s,
                                dt_sample *out, dt_protocol_device_extra *x, dt_err *err);
/* The same on an answer line's text (tests). */
dt_status dt_protocol_device_ex_parse(const char *text, size_t len,
                                      const dt_protocol_device_opts *o, dt_sample *out,
                                      dt_protocol_device_extra *x, dt_err *err);
void dt_protocol_device_extra_free(dt_protocol_device_extra *x);

/* ceilings of the backend's device into *out (present, error NULL), checked: copy_gbps,
 * copy_bytes, launch_sync_floor_us, launch_queue_floor_us positive finite numbers;
 * launch_sync_touch_floor_us absent (NAN) or a positive finite number; method absent or
 * a string; backend defaults to the one asked. DT_EINVAL for a malformed answer (the
 * message names the key, "ceilings: ..."), DT_EWORKER for ok:false or transport. */
dt_status dt_protocol_ceilings(dt_worker *w, const char *backend, double timeout_s,
                               dt_ceilings_rec *out, dt_err *err);

/* The resumption note of a resumed run: old_notes (a JSON array text, NULL: none) with
 * one more entry {"at": at, "tool", "frameworks", "environment"} whose three objects are
 * taken from run_json (this resumption's run-level results.json text, as the codec
 * encodes it). *out is the new array text (caller frees). DT_EINVAL when a text does
 * not parse. */
dt_status dt_protocol_resume_note(const char *old_notes, const char *at, const char *run_json,
                                  char **out, dt_err *err);

/* The ceilings check above on JSON text (a stored object, a test's fixture). */
dt_status dt_protocol_ceilings_parse(const char *text, size_t len, const char *backend,
                                     dt_ceilings_rec *out, dt_err *err);

/* FLOP ceilings of the backend's device (the `flop_ceilings` request) into *out, checked:
 * fp32_tflops, bf16_tflops, fp16_tflops each absent (0) or a positive finite number, at
 * least one present; method absent (NULL) or a string (the caller frees out->method).
 * DT_EINVAL for a malformed answer ("flop_ceilings: ..." naming the key), DT_EWORKER for
 * ok:false (a worker that does not offer them) or transport. */
dt_status dt_protocol_flop_ceilings(dt_worker *w, const char *backend, double timeout_s,
                                    dt_flop_ceilings_rec *out, dt_err *err);
/* The same check on the "flop_ceilings" object's JSON text (tests). */
dt_status dt_protocol_flop_ceilings_parse(const char *text, size_t len,
                                          dt_flop_ceilings_rec *out, dt_err *err);

#endif
