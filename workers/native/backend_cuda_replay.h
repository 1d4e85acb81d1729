/* backend_cuda_replay.h — the CUDA backend's graph replay and cold cache (issue 13;
 * docs/device-timing.md, "Graph replay" and "Cold cache"), part of libdualtime_cuda.so.
 *
 * Cold cache: `copies` full copies of the case's device arena (copy 0 is the arena
 * itself, the others cuMemcpyDtoD'd from it when made), so that call i of a window reads
 * copy i mod copies; and a flush buffer of flush_bytes that dt_cuda_replay_flush writes
 * with cuMemsetD32Async (every write passes through L2, evicting what was there) before a
 * window. Graph: `reps` launches captured on the case's stream (cuStreamBeginCapture ..
 * cuStreamEndCapture, cuGraphInstantiate), kept for the next windows of the same reps and
 * copies, uploaded and replayed once untimed when made. A capture the driver refuses is
 * DT_EUNAVAIL with its reason (the scope is then unavailable, not the case failed).
 *
 * Ownership: a dt_cuda_replay lives in the backend's per-case state (zeroed at prepare)
 * and owns its copies, flush buffer and graph until dt_cuda_replay_free. The context must
 * be current. Not thread-safe. Units: bytes. */
#ifndef DT_BACKEND_CUDA_REPLAY_H
#define DT_BACKEND_CUDA_REPLAY_H

#include <cuda.h>
#include <stdint.h>

#include "../../src/common/dt_common.h"
#include "../../src/data/dt_arena.h"

typedef struct dt_cuda_replay {
    int64_t use_copies;   /* copies the next windows rotate over (0/1: the arena only) */
    int64_t ncopies;      /* copies made (>= use_copies); copy 0 = the arena */
    CUdeviceptr *copy;    /* [ncopies]; copy[0] = the arena (not owned) */
    CUdeviceptr *args;    /* [ncopies * nbuffers]: each copy's buffer pointers */
    void **params;        /* [ncopies * nbuffers]: &args[...], a launch's kernelParams */
    int nbuffers;
    CUdeviceptr flush;    /* the flush buffer (0: none) */
    int64_t flush_alloc;  /* its size */
    int64_t flush_bytes;  /* what a flush writes (0: no flush: warm) */
    uint32_t flush_value; /* changes every flush */
    CUgraphExec graph;    /* the captured graph (NULL: none) */
    int64_t graph_reps, graph_copies; /* what it holds */
} dt_cuda_replay;

/* One launch of the case's kernel. params: the arena's kernelParams (used when the
 * replay has no copies, or cannot rotate). */
typedef struct dt_cuda_launch {
    CUfunction fn;
    unsigned grid[3], block[3], shared_bytes;
    CUstream stream;
    void **params;
    int rotatable;        /* 1: kernelParams are one pointer per buffer, in layout order
                             (so a copy's params replace them); 0 (e.g. tensor maps): the
                             arena only */
} dt_cuda_launch;

/* Cold cache for the next windows: copies (>= 1) arena copies and a flush of flush_bytes
 * (> 0); copies 0 (and flush 0) turn it off (warm). Copies grow when more are asked for
 * (made from the arena's contents now), never shrink; a launch that cannot rotate keeps
 * use_copies at 1. */
dt_status dt_cuda_replay_cache(dt_cuda_replay *rp, const dt_case_layout *L, CUdeviceptr arena,
                               const dt_cuda_launch *ln, int64_t copies, int64_t flush_bytes,
                               dt_err *err);

/* kernelParams of call i of a window: copy i mod use_copies (the arena's params when not
 * rotating). */
void **dt_cuda_replay_params(const dt_cuda_replay *rp, const dt_cuda_launch *ln, int64_t i);

/* Writes the flush buffer on ln->stream and waits for it (nothing when no flush is set). */
dt_status dt_cuda_replay_flush(dt_cuda_replay *rp, const dt_cuda_launch *ln, dt_err *err);

/* The graph of reps rotated launches (made, uploaded and replayed once untimed when the
 * kept one holds other reps or copies): *exec on DT_OK. DT_EUNAVAIL with the driver's
 * reason when capture or instantiation is refused (the stream is out of capture mode
 * again); DT_EDEVICE for other failures. */
dt_status dt_cuda_replay_graph(dt_cuda_replay *rp, const dt_cuda_launch *ln, int64_t reps,
                               CUgraphExec *exec, dt_err *err);

/* Frees copies, flush buffer and graph; rp is zeroed. */
void dt_cuda_replay_free(dt_cuda_replay *rp);

#endif
