/* dt_ops.c — the operation registry table (see dt_ops.h). */
#include "dt_ops.h"

#include <string.h>

#include "../common/dt_common.h"

#define MAT(nm, r, c) {nm, DT_F32, r, c, 0, 1}
#define VEC(nm, c) {nm, DT_F32, DT_DIM_ONE, c, 0, 0}
#define OUT(r, c) {"out", DT_F32, r, c, 1, 0}

static const dt_op_info k_ops[DT_OP_COUNT] = {
    {DT_OP_ADD, "add", "A + B", 0, 3,
     {MAT("a", DT_DIM_M, DT_DIM_N), MAT("b", DT_DIM_M, DT_DIM_N), OUT(DT_DIM_M, DT_DIM_N)},
     0.0, 0.0, "|a| + |b|"},
    {DT_OP_GELU_ADD, "gelu_add", "GELU(A + B), exact erf GELU", 0, 3,
     {MAT("a", DT_DIM_M, DT_DIM_N), MAT("b", DT_DIM_M, DT_DIM_N), OUT(DT_DIM_M, DT_DIM_N)},
     2e-6, 2e-5, "|a| + |b|"},
    {DT_OP_SUM, "sum", "row sums of A (M x N -> M)", 0, 2,
     {MAT("a", DT_DIM_M, DT_DIM_N), OUT(DT_DIM_M, DT_DIM_ONE)},
     1e-5, 1e-5, "sum of |a_ij| over the row"},
    {DT_OP_SOFTMAX, "softmax", "row softmax of A", 0, 2,
     {MAT("a", DT_DIM_M, DT_DIM_N), OUT(DT_DIM_M, DT_DIM_N)},
     2e-6, 2e-5, "|ref|, plus |a_ij - max_j a| * |ref|"},
    {DT_OP_RMSNORM, "rmsnorm", "x * rsqrt(mean(x^2) + 1e-5) * gamma", 0, 3,
     {MAT("a", DT_DIM_M, DT_DIM_N), VEC("gamma", DT_DIM_N), OUT(DT_DIM_M, DT_DIM_N)},
     2e-6, 2e-5, "|x| * rsqrt(mean(x^2)+eps) * |gamma|"},
    {DT_OP_LAYERNORM, "layernorm", "(x - mean) * rsqrt(var + 1e-5) * gamma + beta", 0, 4,
     {MAT("a", DT_DIM_M, DT_DIM_N), VEC("gamma", DT_DIM_N), VEC("beta", DT_DIM_N),
      OUT(DT_DIM_M, DT_DIM_N)},
     1e-5, 2e-5, "(|x| + |mean|) * rsqrt(var+eps) * |gamma| + |beta|"},
    {DT_OP_RESIDUAL_LAYERNORM, "residual_layernorm", "layernorm(A + B), no affine", 0, 3,
     {MAT("a", DT_DIM_M, DT_DIM_N), MAT("b", DT_DIM_M, DT_DIM_N), OUT(DT_DIM_M, DT_DIM_N)},
     1e-5, 2e-5, "(|a+b| + |mean|) * rsqrt(var+eps)"},
    {DT_OP_CROSS_ENTROPY, "cross_entropy", "per-row logsumexp(x) - x[label] (M x N -> M)", 0,
     3,
     {MAT("a", DT_DIM_M, DT_DIM_N), {"labels", DT_I64, DT_DIM_M, DT_DIM_ONE, 0, 0},
      OUT(DT_DIM_M, DT_DIM_ONE)},
     2e-6, 2e-5, "|max| + |log sum exp(x - max)| + |x[label]|"},
    {DT_OP_GEMM, "gemm", "A * B, FP32, no TF32 (A: M x K, B: K x N)", 1, 3,
     {MAT("a", DT_DIM_M, DT_DIM_K), MAT("b", DT_DIM_K, DT_DIM_N), OUT(DT_DIM_M, DT_DIM_N)},
     1e-4, 1e-4, "sum over k of |a_ik * b_kj|"},
};

const dt_op_info *dt_op_get(dt_op op) {
    DT_ASSERT(op >= 0 && op < DT_OP_COUNT);
    DT_ASSERT(k_ops[op].op == op);
    return &k_ops[op];
}

int dt_op_find(const char *name) {
    for (int i = 0; i < DT_OP_COUNT; i++)
        if (strcmp(k_ops[i].name, name) == 0) return i;
    return -1;
}

int64_t dt_dim_extent(dt_dim d, int64_t m, int64_t n, int64_t k) {
    switch (d) {
    case DT_DIM_ONE: return 1;
    case DT_DIM_M: return m;
    case DT_DIM_N: return n;
    case DT_DIM_K: return k;
    }
    DT_ASSERT(0);
    return 0;
}

int64_t dt_op_min_bytes(dt_op op, int64_t m, int64_t n, int64_t k) {
    const dt_op_info *info = dt_op_get(op);
    int64_t bytes = 0;
    for (int i = 0; i < info->nbuffers; i++) {
        const dt_buffer_role *b = &info->buffers[i];
        int64_t elems = dt_dim_extent(b->rows, m, n, k) * dt_dim_extent(b->cols, m, n, k);
        int64_t esize = b->dtype == DT_I64 ? 8 : 4;
        /* cross_entropy reads one label and needs the whole row; all else is read once */
        bytes += elems * esize;
    }
    return bytes;
}

double dt_op_flops(dt_op op, int64_t m, int64_t n, int64_t k) {
    double mn = (double)m * (double)n;
    switch (op) {
    case DT_OP_ADD: return mn;
    case DT_OP_GELU_ADD: return 2.0 * mn; /* add + GELU (erf counted as one op) */
    case DT_OP_SUM: return mn;
    case DT_OP_SOFTMAX: return 4.0 * mn; /* max, exp, sum, scale */
    case DT_OP_RMSNORM: return 4.0 * mn;
    case DT_OP_LAYERNORM: return 6.0 * mn;
    case DT_OP_RESIDUAL_LAYERNORM: return 6.0 * mn;
    case DT_OP_CROSS_ENTROPY: return 3.0 * mn;
    case DT_OP_GEMM: return 2.0 * mn * (double)k;
    default: DT_ASSERT(0);
    }
    return 0;
}
