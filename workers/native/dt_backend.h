/* dt_backend.h — the interface between the native worker's protocol loop and one
 * compute backend (cpu, cuda).
 *
 * The protocol loop (dt_native_main.c) parses requests, maps the arena and calls these
 * functions; a backend never reads stdin or writes stdout, and never touches JSON: it
 * fills the plain structs below. This keeps the CUDA backend loadable as a separate
 * module (libdualtime_cuda.so, dlopen'ed at hello, so the worker starts and serves the
 * CPU on machines without a CUDA driver) without linking jansson into it.
 *
 * Every fallible function returns dt_status and fills err. `state` is the backend's
 * per-case object, created by prepare and freed by release. Times: host monotonic ns
 * or ms as named. Not thread-safe: one case at a time per process. */
#ifndef DT_BACKEND_H
#define DT_BACKEND_H

#include <stdint.h>

#include "../../src/common/dt_common.h"
#include "../../src/data/dt_arena.h"

#define DT_MAX_SOURCES 8

/* One kernel source compiled at run time. text is owned by the backend state and valid
 * until release. */
typedef struct dt_source_record {
    char name[64];      /* e.g. "softmax.cu" */
    char sha256[65];    /* of text, lowercase hex */
    char options[512];  /* compile options, space separated */
    const char *text;
} dt_source_record;

typedef struct dt_prepare_info {
    char output_policy[32];   /* "preallocated" */
    char implementation[512]; /* kernel names, launch geometry, tile parameters */
    double compile_ms;        /* run-time compilation (NVRTC + module load); 0 on CPU */
    double alloc_ms;          /* device allocation; 0 on CPU */
    int nsources;
    dt_source_record sources[DT_MAX_SOURCES];
} dt_prepare_info;

/* Result of one device scope; mirrors the timing helper's result (docs/device-timing.md).
 * Filled by backends that have device timing. */
struct dt_timing_result;

/* Ceilings of the device a backend runs on, measured by the backend itself (the
 * `ceilings` request, docs/protocol.md). Plain numbers: the protocol loop turns them
 * into JSON. */
typedef struct dt_ceilings {
    double copy_gbps;             /* copy bandwidth: (bytes read + bytes written) / time,
                                     in 1e9 bytes per second */
    int64_t copy_bytes;           /* size of one copy's source (= its destination) */
    double copy_gbps_iqr;         /* spread of the copies: IQR of the per-copy GB/s over the
                                     timed reps (0: not measured, then absent) */
    double launch_sync_floor_us;  /* one empty call: sync; t0; call; sync; t1 (median) */
    double launch_queue_floor_us; /* per call of many empty calls back to back, one sync */
    double launch_sync_touch_floor_us; /* one call that reads and writes 512 bytes (CUDA:
                                          dt_touch <<<1,32>>>), timed like the sync floor */
    /* Held floors (CUDA; 0 = not measured, then absent from the answer): event interval
     * of a held window (docs/device-timing.md) around one call, and per call of a batch
     * (64 calls), of the empty kernel and of the touch kernel; medians. */
    double held_launch_floor_us;
    double held_launch_batch_floor_us;
    double held_touch_floor_us;
    double held_touch_batch_floor_us;
    char method[1024];            /* how these were measured, one line */
} dt_ceilings;

/* FLOP ceilings of the device a backend runs on (the `flop_ceilings` request,
 * docs/protocol.md), in TFLOP/s = 1e12 FLOP/s; 0: not measured by this backend (then
 * absent from the answer). */
typedef struct dt_flop_ceilings {
    double fp32_tflops; /* FP32 FFMA chains (CUDA: kernels/cuda/ceil_ffma.cu) */
    double bf16_tflops; /* tensor cores, bf16 in, FP32 accumulation (the native worker
                           measures none: the PyTorch worker's cuBLAS does) */
    double fp16_tflops; /* likewise fp16 */
    char method[512];   /* how, one line */
} dt_flop_ceilings;

/* flags of dt_backend.device */
#define DT_DEVICE_HOLD 1       /* a held window (dt_timing_hold before begin): the stream
                                  waits on a host flag while the calls queue */
#define DT_DEVICE_PLANT_SYNC 2 /* tests only (DUALTIME_FAULT=holdsync): a cuCtxSynchronize
                                  after the calls, inside the hold: the watchdog must fail
                                  the sample in time */
#define DT_DEVICE_DECOMP 4     /* the E2E decomposition's sample (unheld probe, one call):
                                  the host clock is read right before the call and right
                                  after a stream synchronization that follows it, inside
                                  the region (decomp_bracket returns them) */
#define DT_DEVICE_GRAPH 8      /* graph replay (issue 13): the reps calls are captured in a
                                  graph (outside the window, kept for the next requests of
                                  the same reps), and the window holds one replay of it. A
                                  capture the driver refuses: DT_EUNAVAIL with the reason */

typedef struct dt_backend {
    const char *name; /* "cpu" or "cuda" */
    /* 1 if usable here; else 0 with a one-line reason. Called once at hello. */
    int (*available)(char *reason, size_t reason_len);
    /* Writes a JSON object text of free-form facts (device name, driver, SMs, clocks...)
     * into buf; "{}" when there is nothing to say. */
    void (*describe)(char *buf, size_t len);
    /* Compiles and allocates for the case. host_base is the mapped arena
     * (L->total_bytes); L stays valid until release. */
    dt_status (*prepare)(void **state, const dt_case_layout *L, uint8_t *host_base,
                         int capture_sources, dt_prepare_info *info, dt_err *err);
    dt_status (*upload)(void *state, double *ms, dt_err *err);
    /* sync; t0; reps calls; sync; t1 -> *host_ns */
    dt_status (*run)(void *state, int64_t reps, int64_t *host_ns, dt_err *err);
    dt_status (*download)(void *state, double *ms, dt_err *err);
    /* Optional (NULL: whole copies only): upload (to_device 1) or download (0) of only the
     * n byte ranges r[i] = {offset, length} of the arena, then synchronize. */
    dt_status (*copy_ranges)(void *state, int to_device, const int64_t (*r)[2], int n,
                             double *ms, dt_err *err);
    /* Optional (NULL: none): dt_arena_digest (src/data/dt_arena.h) of each range r[i] of
     * the device mirror (CPU: the arena itself) into out[i]. Ranges are 8-byte multiples. */
    dt_status (*digest)(void *state, const int64_t (*r)[2], int n, uint64_t *out, dt_err *err);
    /* Device scope: probe = 0 control, 1 CUPTI probe with concurrent kernel records,
     * 2 CUPTI probe with serialized kernel records; flags: DT_DEVICE_* below. NULL when
     * the backend has none. */
    dt_status (*device)(void *state, int probe, int64_t reps, int64_t capacity, int flags,
                        struct dt_timing_result *res, dt_err *err);
    void (*release)(void *state);
    /* Optional: 1 once the backend can serve no further request in this process (a CUDA
     * context lost to a kernel fault). The worker then answers the failed request and
     * exits with status 3, so that the orchestrator starts a fresh worker for the next
     * case and only the faulting case fails. NULL = never. */
    int (*broken)(void);
    /* Measures the device's copy bandwidth and launch floors (no case needed; takes
     * well under 2 s). NULL when the backend cannot. */
    dt_status (*ceilings)(dt_ceilings *out, dt_err *err);
    /* Optional (NULL: not offered): the FLOP ceilings (dt_flop_ceilings; well under 1 s). */
    dt_status (*flop_ceilings)(dt_flop_ceilings *out, dt_err *err);
    /* Optional: the launch+sync floor in this case's setting, for pairing with its
     * single-call samples: sync; t0; reps empty calls (CUDA: an empty kernel <<<1,1>>> on
     * the case's stream; CPU: an empty function through a pointer); sync; t1 -> *host_ns.
     * NULL when the backend has none. */
    dt_status (*floor)(void *state, int64_t reps, int64_t *host_ns, dt_err *err);
    /* Optional: the host clock (CLOCK_MONOTONIC ns) right before the call and right after
     * its synchronization returned, of the last device region run with DT_DEVICE_DECOMP:
     * 1 with both, 0 when there is none. NULL when the backend has none. */
    int (*decomp_bracket)(void *state, int64_t *call_start_ns, int64_t *sync_return_ns);
    /* Optional (NULL: no cold cache): the next device windows run cold — flush_bytes
     * written before each window (outside it), batch calls rotating over `copies` copies
     * of the arena (docs/device-timing.md, "Cold cache"); copies 0: warm again. *used is
     * the rotation the windows will really use (1 where the kernel's parameters cannot
     * rotate), echoed to the orchestrator, which checks it. */
    dt_status (*cache)(void *state, int64_t copies, int64_t flush_bytes, int64_t *used,
                       dt_err *err);
} dt_backend;

extern const dt_backend dt_backend_cpu;

/* The CUDA module exports this symbol (a function so the module can fail to load
 * cleanly): returns the backend table, or NULL. */
typedef const dt_backend *(*dt_cuda_backend_fn)(void);
#define DT_CUDA_BACKEND_SYMBOL "dt_cuda_backend"

#endif
