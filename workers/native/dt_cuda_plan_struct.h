/* dt_cuda_plan_struct.h — the compiled-kernel recipe of one case (dt_cuda_plan) and the
 * one way to add an NVRTC option to it, and the one reader of an integer knob: what the
 * planners share (backend_cuda_plan.c
 * for every op, backend_cuda_plan_sgemm.c for FP32 gemm's thin shapes), below both so
 * that neither depends on the other's header for it. Plain values; reentrant. */
#ifndef DT_CUDA_PLAN_STRUCT_H
#define DT_CUDA_PLAN_STRUCT_H

#include "../../src/common/dt_common.h"

#define DT_CUDA_MAX_OPTS 32
#define DT_CUDA_OPT_LEN 48

/* A compiled-kernel recipe for one case. */
typedef struct dt_cuda_plan {
    const char *source_name;  /* "softmax.cu" (static string) */
    char kernel_name[64];     /* extern "C" symbol, e.g. "dt_softmax_f32", "dt_gemm_tc1_bf16" */
    int nopts;
    char opts[DT_CUDA_MAX_OPTS][DT_CUDA_OPT_LEN]; /* NVRTC options, arch first */
    unsigned grid[3], block[3];
    unsigned shared_bytes;    /* dynamic shared memory (0: kernels use static); the backend
                                 raises the function's dynamic limit when it is over 48 KiB */
    /* gemm wg1: the kernel takes ntma tensor maps (CUtensorMap by value, 128-byte swizzle,
     * zero fill) before the output pointer; map i describes buffer tma[i].buf as a 2-D
     * tensor {cols, rows} with its row pitch, boxes of box[0] (inner, elements) x box[1];
     * wg3 has a third, of the output (TMA stores) */
    int ntma;
    struct { int buf; unsigned box[2]; } tma[3];
    /* gemm wg1 split-K (DUALTIME_GEMM_SPLITK=2): a device workspace of workspace_bytes,
     * zeroed at prepare, passed after the output pointer as two pointers: its start (the
     * FP32 partials) and start + workspace_flags_offset (one 32-bit flag a tile); 0: none */
    unsigned long long workspace_bytes, workspace_flags_offset;
    char summary[256];        /* variant and geometry, for the "implementation" field */
    /* > 0: a persistent grid (the staged rows' SMEMPIPE kernel, whose blocks loop over
     * rows with stride gridDim.x / cluster) of clusters of this many blocks; the backend
     * may shrink grid[0] (a multiple of it) to the clusters the driver says stay resident */
    int persistent_cluster;
    /* 1: a persistent grid of single blocks looping over rows with stride gridDim.x
     * (layernorm's DT_LN_PERSIST); the backend may shrink grid[0] to the blocks the driver
     * says stay resident (a block beyond them would run its rows after the others) */
    int persistent_blocks;
} dt_cuda_plan;

/* Appends one printf-formatted NVRTC option to p (asserts room and length). */
void dt_cuda_plan_add_opt(dt_cuda_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An integer knob from the environment: *v keeps its default when unset or empty; a
 * value outside [lo, hi] (or, with pow2, not a power of two) fails with DT_EINVAL. */
dt_status dt_cuda_plan_int_knob(const char *name, int lo, int hi, int pow2, int *v, dt_err *err);

#endif
