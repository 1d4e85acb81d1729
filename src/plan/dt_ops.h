/* dt_ops.h — the operation registry: names, definitions, buffer roles, tolerances,
 * and the minimum bytes and FLOPs of each op.
 *
 * This is the one table every module reads (plan, data, oracle, workers, report);
 * adding an op starts here. All shapes are row-major; "rows are the last axis".
 * Units: bytes are bytes, flops are floating-point operations (a multiply-add = 2).
 * Thread-safety: read-only static data. */
#ifndef DT_OPS_H
#define DT_OPS_H

#include <stdint.h>

typedef enum dt_op {
    DT_OP_ADD = 0,
    DT_OP_GELU_ADD,
    DT_OP_SUM,
    DT_OP_SOFTMAX,
    DT_OP_RMSNORM,
    DT_OP_LAYERNORM,
    DT_OP_RESIDUAL_LAYERNORM,
    DT_OP_CROSS_ENTROPY,
    DT_OP_GEMM,
    DT_OP_COUNT
} dt_op;

typedef enum dt_dtype { DT_F32 = 0, DT_I64 = 1 } dt_dtype;

/* Which logical dimension a buffer axis has. A buffer is rows x cols. */
typedef enum dt_dim { DT_DIM_ONE = 0, DT_DIM_M, DT_DIM_N, DT_DIM_K } dt_dim;

#define DT_MAX_BUFFERS 4

/* One buffer of an op. "matrix" buffers (A, B) become strided views under
 * --input-views; vectors (gamma, beta, labels) and outputs stay contiguous. */
typedef struct dt_buffer_role {
    const char *name; /* "a", "b", "gamma", "beta", "labels", "out" */
    dt_dtype dtype;
    dt_dim rows, cols;
    int is_output;
    int viewable; /* 1: becomes a strided view under --input-views */
} dt_buffer_role;

typedef struct dt_op_info {
    dt_op op;
    const char *name;       /* command-line name */
    const char *definition; /* one line, for `dualtime list` and reports */
    int is_gemm;            /* shapes come from --gemm-shapes (MxNxK) */
    int nbuffers;           /* inputs first, then the single output */
    dt_buffer_role buffers[DT_MAX_BUFFERS];
    double atol, rtol; /* pass rule: |out-ref| <= atol + rtol*scale */
    const char *scale_doc; /* what "scale" (magnitude of the terms) is for this op */
} dt_op_info;

/* The registry entry for op (DT_ASSERTs it is valid). */
const dt_op_info *dt_op_get(dt_op op);

/* Looks an op up by command-line name; returns -1 if unknown. */
int dt_op_find(const char *name);

/* The extent of a logical dim for a case of shape (m, n, k). */
int64_t dt_dim_extent(dt_dim d, int64_t m, int64_t n, int64_t k);

/* Fewest bytes an op must move (each input read once, the output written once)
 * and the FLOPs it must do, for shape (m, n, k) (k ignored unless gemm). */
int64_t dt_op_min_bytes(dt_op op, int64_t m, int64_t n, int64_t k);
double dt_op_flops(dt_op op, int64_t m, int64_t n, int64_t k);

#endif
