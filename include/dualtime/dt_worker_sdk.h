/* dt_worker_sdk.h — the dualtime worker SDK: write a worker for your own kernels in C by
 * registering one callback per op; libdualtime_worker_sdk.a speaks the whole worker
 * protocol (docs/protocol.md) for you. Guide and full example: docs/worker-sdk.md.
 *
 * What the library does: the request loop on stdin/stdout (one JSON line each way,
 * diagnostics to stderr), hello (worker id, framework, version, protocol and SDK
 * version), prepare (validates the request with the native worker's own parser, maps the
 * case's shared-memory arena and hands your callback typed views of every buffer),
 * upload/download (CPU: nothing to do; CUDA mode: the SDK owns a device mirror of the
 * whole arena, same offsets, copied with the driver API), run (your callback R times
 * between two clock reads, synchronized in CUDA mode), floor (an empty call), device
 * (CUDA mode: the device-timing helper libdualtime_timing.so around R calls, held
 * windows included; a worker without the helper answers ok:false "device timing not
 * offered"), release and quit. Every failure becomes an ok:false answer with one line;
 * the worker stays usable.
 *
 * The CUDA driver (libcuda.so.1) and the timing helper are loaded at run time with
 * dlopen: the library links without them, and a CPU worker never touches them. The
 * helper is looked for in $DUALTIME_TIMING_LIB, then in the dualtime build folder the
 * library was built in, then by the dynamic loader's search path.
 *
 * Versioning: DT_SDK_VERSION is this header's version. The hello carries it (as the
 * spec's sdk_version, which DT_SDK_SPEC_INIT stamps from the header you compiled
 * against) and dualtime refuses a worker whose SDK version differs from its own (exit 2,
 * "rebuild the worker"). Bump it on any change a worker's source or binary can notice.
 *
 * Ownership: the library owns every dt_sdk_case and dt_sdk_buffer it passes; they are
 * valid during the callback (case->user during the whole prepared case). Units: ns,
 * sizes in elements unless named _bytes. Thread-safety: one case at a time; callbacks
 * are called from the thread that called dt_sdk_main (they may use threads inside). */
#ifndef DUALTIME_DT_WORKER_SDK_H
#define DUALTIME_DT_WORKER_SDK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This header's SDK version (see the top). */
#define DT_SDK_VERSION 1
/* The worker protocol version the library speaks (docs/protocol.md). */
#define DT_SDK_PROTOCOL 1

/* Element types of a buffer; the numbers are the protocol's. */
typedef enum dt_sdk_dtype {
    DT_SDK_F32 = 0,
    DT_SDK_I64 = 1,  /* labels */
    DT_SDK_BF16 = 2, /* upper half of a binary32, 2 bytes */
    DT_SDK_F16 = 3   /* IEEE binary16, 2 bytes */
} dt_sdk_dtype;

/* Where the worker's callbacks run. */
typedef enum dt_sdk_backend {
    DT_SDK_CPU = 0, /* callbacks get host pointers into the shared arena */
    DT_SDK_CUDA = 1 /* callbacks get device pointers into the SDK's mirror and a stream */
} dt_sdk_backend;

/* One buffer of the case: a typed row-major view. Element (i, j) is at
 * base + (i * row_stride + j) * elem_bytes. Inputs may be strided windows (row_stride >
 * cols, unaligned base) under --input-views; the output is always contiguous. */
typedef struct dt_sdk_buffer {
    const char *name;     /* role: "a", "b", "gamma", "beta", "labels", "out" */
    dt_sdk_dtype dtype;
    int is_output;        /* 1 for "out", the last buffer */
    int64_t rows, cols;   /* logical shape */
    int64_t row_stride;   /* elements between consecutive rows */
    int64_t elem_bytes;   /* 4, 8 or 2 */
    void *host;           /* element (0,0) in the shared arena */
    void *device;         /* CUDA mode: element (0,0) in the device mirror (a CUdeviceptr
                             as a pointer); NULL on the CPU */
    void *base;           /* what the callback reads and writes: host or device */
} dt_sdk_buffer;

/* One prepared case as the callbacks see it. */
typedef struct dt_sdk_case {
    const char *op;        /* the op's name, e.g. "softmax" */
    const char *id;        /* the case id, e.g. "softmax_17x257" ("" when not given) */
    dt_sdk_backend backend;
    int64_t m, n, k;       /* shape (k: gemm only, else 0) */
    int nbuffers;          /* inputs in the op table's order, then the output */
    dt_sdk_buffer *buf;
    void *stream;          /* CUDA mode: the case's CUstream (a cudaStream_t in the same
                              primary context); NULL on the CPU */
    void *user;            /* free for the op's prepare hook (e.g. scratch memory) */
    char error[512];       /* set by dt_sdk_error */
} dt_sdk_case;

/* One call of the op (made R times by run). Returns 0, or nonzero after dt_sdk_error.
 * CUDA mode: enqueue on c->stream (the SDK synchronizes around the R calls; work on any
 * other stream must be joined before the callback returns). */
typedef int (*dt_sdk_call_fn)(dt_sdk_case *c, void *ctx);

/* An op's callbacks. Only call is required. */
typedef struct dt_sdk_op {
    dt_sdk_call_fn call;
    /* Optional: once per case at prepare, before any call (check the shape or dtype, set
     * c->user). Nonzero (after dt_sdk_error) fails the prepare with that message. */
    int (*prepare)(dt_sdk_case *c, void *ctx);
    /* Optional: once per case at release (free c->user). */
    void (*release)(dt_sdk_case *c, void *ctx);
    /* Optional one line recorded as the case's "implementation" (kernel, geometry). */
    const char *implementation;
    void *ctx;             /* passed to every callback */
} dt_sdk_op;

typedef struct dt_sdk dt_sdk;

/* What the worker is (sent in the hello). */
typedef struct dt_sdk_spec {
    int sdk_version;             /* DT_SDK_VERSION of the header compiled against */
    const char *worker;          /* the implementation's id in reports, e.g. "mine" */
    const char *framework;       /* e.g. "my-compiler" */
    const char *framework_version;
    dt_sdk_backend backend;      /* the backend this worker serves */
    /* Registers the ops (calls dt_sdk_register*); nonzero stops the worker (exit 2). */
    int (*init)(dt_sdk *sdk, void *user);
    void *user;                  /* passed to init */
} dt_sdk_spec;

/* A spec with the version stamped: dt_sdk_spec s = DT_SDK_SPEC_INIT; then set fields. */
#define DT_SDK_SPEC_INIT {DT_SDK_VERSION, "sdk-worker", "dualtime-worker-sdk", "0", DT_SDK_CPU, 0, 0}

/* Registers call for op (a name of `dualtime list`); ctx is passed to it. 0, or -1 for
 * an unknown op name or one registered twice (a message on stderr). */
int dt_sdk_register(dt_sdk *sdk, const char *op, dt_sdk_call_fn call, void *ctx);
/* The same with every hook. */
int dt_sdk_register_op(dt_sdk *sdk, const char *op, const dt_sdk_op *ops);

/* Sets the case's error text (printf format, one line) and returns -1, for
 * `return dt_sdk_error(c, "...")` in a callback. */
int dt_sdk_error(dt_sdk_case *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The buffer named name ("a", "out", ...), or NULL. */
dt_sdk_buffer *dt_sdk_buf(dt_sdk_case *c, const char *name);

/* Pointer to element (i, j) of b's base (host or device memory). */
static inline void *dt_sdk_at(const dt_sdk_buffer *b, int64_t i, int64_t j) {
    return (char *)b->base + (i * b->row_stride + j) * b->elem_bytes;
}

/* Runs the worker: parses argv (--threads N, --help), calls spec->init, serves requests
 * until quit or end of input. Returns the process exit status (0; 2 for bad arguments or
 * a failed init). Call it from main: `return dt_sdk_main(argc, argv, &spec);`. */
int dt_sdk_main(int argc, char **argv, const dt_sdk_spec *spec);

/* The threads the orchestrator asked for (--threads N), 0 when not given. Valid inside
 * callbacks and init. */
int dt_sdk_threads(const dt_sdk *sdk);

#ifdef __cplusplus
}
#endif

#endif
