/* backend_cuda_replay.c — graph replay and cold cache of the CUDA backend (see
 * backend_cuda_replay.h). */
#include "backend_cuda_replay.h"

#include <stdlib.h>
#include <string.h>

#include "../../src/common/dt_cuda_check.h"

/* Frees the copies beyond the arena and their parameter arrays. */
static void copies_free(dt_cuda_replay *rp) {
    for (int64_t k = 1; k < rp->ncopies; k++)
        if (rp->copy[k]) cuMemFree(rp->copy[k]);
    free(rp->copy);
    free(rp->args);
    free(rp->params);
    rp->copy = NULL;
    rp->args = NULL;
    rp->params = NULL;
    rp->ncopies = rp->use_copies = 0;
}

static void graph_free(dt_cuda_replay *rp) {
    if (rp->graph) cuGraphExecDestroy(rp->graph);
    rp->graph = NULL;
    rp->graph_reps = rp->graph_copies = 0;
}

/* copies arena copies (the arena and copies - 1 new ones, filled from it now). */
static dt_status copies_make(dt_cuda_replay *rp, const dt_case_layout *L, CUdeviceptr arena,
                             const dt_cuda_launch *ln, int64_t copies, dt_err *err) {
    copies_free(rp);
    graph_free(rp); /* it points into the old copies */
    int nb = L->nbuffers;
    rp->copy = dt_xcalloc((size_t)copies, sizeof *rp->copy);
    rp->args = dt_xcalloc((size_t)copies * (size_t)nb, sizeof *rp->args);
    rp->params = dt_xcalloc((size_t)copies * (size_t)nb, sizeof *rp->params);
    rp->nbuffers = nb;
    rp->ncopies = copies;
    rp->copy[0] = arena;
    size_t bytes = (size_t)L->total_bytes;
    for (int64_t k = 1; k < copies; k++) {
        char t[DT_CUDA_CHECK_TEXT_LEN];
        if (!DT_CUDA_CHECK(cu, cuMemAlloc(&rp->copy[k], bytes), t, sizeof t) ||
            !DT_CUDA_CHECK(cu, cuMemcpyDtoDAsync(rp->copy[k], arena, bytes, ln->stream), t,
                           sizeof t)) {
            dt_status st = dt_fail(err, DT_EDEVICE, "cold cache: arena copy %lld of %lld (%zu "
                                   "bytes each): %s", (long long)k, (long long)copies, bytes, t);
            copies_free(rp);
            return st;
        }
    }
    for (int64_t k = 0; k < copies; k++)
        for (int b = 0; b < nb; b++) {
            size_t at = (size_t)k * (size_t)nb + (size_t)b;
            rp->args[at] = rp->copy[k] + (CUdeviceptr)L->buf[b].data_offset;
            rp->params[at] = &rp->args[at];
        }
    DT_CUDA_TRY(cu, cuStreamSynchronize(ln->stream), err);
    return DT_OK;
}

dt_status dt_cuda_replay_cache(dt_cuda_replay *rp, const dt_case_layout *L, CUdeviceptr arena,
                               const dt_cuda_launch *ln, int64_t copies, int64_t flush_bytes,
                               dt_err *err) {
    if (copies <= 0 || flush_bytes <= 0) {
        rp->use_copies = 0;
        rp->flush_bytes = 0;
        return DT_OK;
    }
    if (!ln->rotatable) copies = 1;
    if (copies > rp->ncopies) {
        dt_status st = copies_make(rp, L, arena, ln, copies, err);
        if (st != DT_OK) return st;
    }
    rp->use_copies = copies;
    rp->flush_bytes = 0;
    if (flush_bytes > rp->flush_alloc || !rp->flush) {
        if (rp->flush) cuMemFree(rp->flush);
        rp->flush = 0;
        rp->flush_alloc = 0;
        char t[DT_CUDA_CHECK_TEXT_LEN];
        if (!DT_CUDA_CHECK(cu, cuMemAlloc(&rp->flush, (size_t)flush_bytes), t, sizeof t)) {
            rp->flush = 0;
            return dt_fail(err, DT_EDEVICE, "cold cache: flush buffer of %lld bytes: %s",
                           (long long)flush_bytes, t);
        }
        rp->flush_alloc = flush_bytes;
    }
    rp->flush_bytes = flush_bytes;
    return DT_OK;
}

void **dt_cuda_replay_params(const dt_cuda_replay *rp, const dt_cuda_launch *ln, int64_t i) {
    if (rp->use_copies <= 1 || !ln->rotatable || !rp->params) return ln->params;
    return &rp->params[(size_t)(i % rp->use_copies) * (size_t)rp->nbuffers];
}

dt_status dt_cuda_replay_flush(dt_cuda_replay *rp, const dt_cuda_launch *ln, dt_err *err) {
    if (!rp->flush || rp->flush_bytes <= 0) return DT_OK;
    rp->flush_value = rp->flush_value * 1664525u + 1013904223u;
    DT_CUDA_TRY(cu, cuMemsetD32Async(rp->flush, rp->flush_value, (size_t)rp->flush_bytes / 4,
                                     ln->stream), err);
    DT_CUDA_TRY(cu, cuStreamSynchronize(ln->stream), err);
    return DT_OK;
}

/* Capture of reps launches on ln->stream into *graph; DT_EUNAVAIL with the reason when
 * the driver refuses (the capture is ended either way). */
static dt_status capture(const dt_cuda_replay *rp, const dt_cuda_launch *ln, int64_t reps,
                         CUgraph *graph, dt_err *err) {
    char t[DT_CUDA_CHECK_TEXT_LEN];
    *graph = NULL;
    if (!DT_CUDA_CHECK(cu, cuStreamBeginCapture(ln->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                       t, sizeof t))
        return dt_fail(err, DT_EUNAVAIL, "graph capture could not begin: %s", t);
    CUresult lr = CUDA_SUCCESS;
    int64_t i = 0;
    for (; i < reps && lr == CUDA_SUCCESS; i++)
        lr = cuLaunchKernel(ln->fn, ln->grid[0], ln->grid[1], ln->grid[2], ln->block[0],
                            ln->block[1], ln->block[2], ln->shared_bytes, ln->stream,
                            dt_cuda_replay_params(rp, ln, i), NULL);
    CUresult er = cuStreamEndCapture(ln->stream, graph);
    if (!DT_CUDA_CHECK(cu, lr, t, sizeof t)) {
        if (*graph) cuGraphDestroy(*graph);
        *graph = NULL;
        return dt_fail(err, DT_EUNAVAIL, "launch %lld of %lld not capturable: %s",
                       (long long)i, (long long)reps, t);
    }
    if (!DT_CUDA_CHECK(cu, er, t, sizeof t)) {
        if (*graph) cuGraphDestroy(*graph);
        *graph = NULL;
        return dt_fail(err, DT_EUNAVAIL, "graph capture failed: %s", t);
    }
    return DT_OK;
}

dt_status dt_cuda_replay_graph(dt_cuda_replay *rp, const dt_cuda_launch *ln, int64_t reps,
                               CUgraphExec *exec, dt_err *err) {
    int64_t copies = rp->use_copies > 1 && ln->rotatable ? rp->use_copies : 1;
    if (rp->graph && rp->graph_reps == reps && rp->graph_copies == copies) {
        *exec = rp->graph;
        return DT_OK;
    }
    graph_free(rp);
    DT_CUDA_TRY(cu, cuStreamSynchronize(ln->stream), err);
    CUgraph g = NULL;
    dt_status st = capture(rp, ln, reps, &g, err);
    if (st != DT_OK) return st;
    char t[DT_CUDA_CHECK_TEXT_LEN];
    CUgraphExec e = NULL;
    int ok = DT_CUDA_CHECK(cu, cuGraphInstantiate(&e, g, 0), t, sizeof t);
    cuGraphDestroy(g);
    if (!ok) return dt_fail(err, DT_EUNAVAIL, "graph instantiation failed: %s", t);
    /* upload and one untimed replay: the timed replays find everything in place */
    if (!DT_CUDA_CHECK(cu, cuGraphUpload(e, ln->stream), t, sizeof t) ||
        !DT_CUDA_CHECK(cu, cuGraphLaunch(e, ln->stream), t, sizeof t) ||
        !DT_CUDA_CHECK(cu, cuStreamSynchronize(ln->stream), t, sizeof t)) {
        cuGraphExecDestroy(e);
        return dt_fail(err, DT_EDEVICE, "graph replay: %s", t);
    }
    rp->graph = e;
    rp->graph_reps = reps;
    rp->graph_copies = copies;
    *exec = e;
    return DT_OK;
}

void dt_cuda_replay_free(dt_cuda_replay *rp) {
    graph_free(rp);
    copies_free(rp);
    if (rp->flush) cuMemFree(rp->flush);
    memset(rp, 0, sizeof *rp);
}
