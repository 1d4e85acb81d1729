/* dt_ops.c — the operation registry table (see dt_ops.h). */
#include "dt_ops.h"

#include <math.h>
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
     1e-5, 2e-5, "(|a+b| + mean|a+b|) * rsqrt(var+eps)"},
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
    return dt_op_min_bytes_typed(op, m, n, k, DT_F32);
}

int64_t dt_op_min_bytes_typed(dt_op op, int64_t m, int64_t n, int64_t k, dt_dtype dtype) {
    const dt_op_info *info = dt_op_get(op);
    int64_t bytes = 0;
    for (int i = 0; i < info->nbuffers; i++) {
        const dt_buffer_role *b = &info->buffers[i];
        int64_t elems = dt_dim_extent(b->rows, m, n, k) * dt_dim_extent(b->cols, m, n, k);
        int64_t esize = dt_dtype_size(b->dtype == DT_F32 ? dtype : b->dtype);
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

/* ---- element types ----------------------------------------------------------- */

static const struct {
    const char *name, *alias;
    int size, precision, emin;
} k_dtypes[DT_DTYPE_COUNT] = {
    [DT_F32] = {"f32", "fp32", 4, 24, -126},
    [DT_I64] = {"i64", "int64", 8, 0, 0},
    [DT_BF16] = {"bf16", "bfloat16", 2, 8, -126},
    [DT_F16] = {"f16", "fp16", 2, 11, -14},
};

int dt_dtype_size(dt_dtype d) {
    DT_ASSERT(d >= 0 && d < DT_DTYPE_COUNT);
    return k_dtypes[d].size;
}

const char *dt_dtype_name(dt_dtype d) {
    DT_ASSERT(d >= 0 && d < DT_DTYPE_COUNT);
    return k_dtypes[d].name;
}

int dt_dtype_find(const char *name) {
    for (int i = 0; i < DT_DTYPE_COUNT; i++)
        if (strcmp(k_dtypes[i].name, name) == 0 || strcmp(k_dtypes[i].alias, name) == 0)
            return i;
    return -1;
}

int dt_dtype_is_float(dt_dtype d) { return d == DT_F32 || d == DT_BF16 || d == DT_F16; }

int dt_dtype_precision(dt_dtype d) {
    DT_ASSERT(dt_dtype_is_float(d));
    return k_dtypes[d].precision;
}

uint16_t dt_f32_to_narrow(dt_dtype d, float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    DT_ASSERT(d == DT_BF16 || d == DT_F16);
    return d == DT_BF16 ? dt_f32_bits_to_bf16(u) : dt_f32_bits_to_f16(u);
}

float dt_narrow_to_f32(dt_dtype d, uint16_t h) {
    DT_ASSERT(d == DT_BF16 || d == DT_F16);
    if (d == DT_F16) return dt_f16_bits_to_f32(h);
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

double dt_round_to(dt_dtype d, double x) {
    if (d == DT_F32) return (double)(float)x;
    return (double)dt_narrow_to_f32(d, dt_f32_to_narrow(d, (float)x));
}

double dt_dtype_ulp(dt_dtype d, double x) {
    DT_ASSERT(dt_dtype_is_float(d));
    int e = k_dtypes[d].emin;
    if (x != 0.0 && isfinite(x)) {
        int fe;
        frexp(fabs(x), &fe); /* |x| = f * 2^fe, f in [0.5, 1): floor(log2|x|) = fe - 1 */
        if (fe - 1 > e) e = fe - 1;
    }
    return ldexp(1.0, e - k_dtypes[d].precision + 1);
}

/* ---- tolerances ---------------------------------------------------------------- */

/* bf16/f16 (both): the kernels load the narrow inputs exactly into FP32, compute in FP32
 * and round once when storing, so the bound is the FP32 one (atol/rtol: the arithmetic
 * before the store, the registry values) plus the final rounding to the output type
 * (ulps, at |ref|). gemm: the tensor-core products of narrow inputs are exact in FP32
 * and accumulate in FP32. */
static const struct {
    double ulps;
    const char *reason;
    double scale_ulps; /* intermediates rounded to the storage type, at the terms' size */
} k_narrow_tol[DT_OP_COUNT] = {
    [DT_OP_ADD] = {0.5, "a+b of narrow inputs is exact in FP32; one rounding to the output "
                        "type: <= 0.5 ulp"},
    [DT_OP_GELU_ADD] = {1.0, "FP32 add + erf GELU (registry atol/rtol), then one rounding "
                             "(0.5 ulp, 1 ulp if the FP32 error crosses a binade); + 1 ulp "
                             "at |a|+|b|: a+b rounded to the type before GELU (|GELU'| <= "
                             "1.13)", 1.0},
    [DT_OP_SUM] = {1.0, "FP32 accumulation bounded by rtol*sum|a| (registry), then one "
                        "rounding of the row sum to the output type"},
    [DT_OP_SOFTMAX] = {1.0, "FP32 max/exp/sum/divide (registry atol/rtol), then one "
                            "rounding; subnormal outputs use the subnormal spacing"},
    [DT_OP_RMSNORM] = {1.0, "FP32 sum of squares and rsqrt (registry atol/rtol), then one "
                            "rounding; + 4 ulp at the terms' size: rs, x*rs and *gamma may "
                            "each be rounded to the type", 4.0},
    [DT_OP_LAYERNORM] = {1.0, "FP32 two-pass mean/variance (registry atol/rtol), then one "
                              "rounding; + 4 ulp at the terms' size: mean/rstd, (x-mean)*rs "
                              "and *gamma may each be rounded to the type (torch 1.13 CPU "
                              "bf16)", 4.0},
    [DT_OP_RESIDUAL_LAYERNORM] = {1.0, "FP32 a+b (exact) and two-pass variance (registry "
                                       "atol/rtol), then one rounding; + 4 ulp at the terms' "
                                       "size, (|a+b| + mean|a+b|) * rstd: a+b stored in the "
                                       "type (torch's a + b) moves the mean by up to 1 ulp "
                                       "of mean|a+b|; mean/rstd and the normalized value may "
                                       "be rounded (torch 1.13 CPU bf16)", 4.0},
    [DT_OP_CROSS_ENTROPY] = {1.0, "FP32 logsumexp - target (registry atol/rtol), then one "
                                  "rounding of the row loss"},
    [DT_OP_GEMM] = {1.0, "narrow x narrow products exact, FP32 tensor-core accumulation "
                         "(registry atol/rtol on sum|a*b|), then one rounding"},
};

dt_tolerance dt_op_tolerance(dt_op op, dt_dtype d) {
    const dt_op_info *info = dt_op_get(op);
    DT_ASSERT(dt_dtype_is_float(d));
    dt_tolerance t = {info->atol, info->rtol, 0.0, 0.0,
                      "FP32: the registry's atol + rtol*scale (dt_op_info)"};
    if (d != DT_F32) {
        t.ulps = k_narrow_tol[op].ulps;
        t.scale_ulps = k_narrow_tol[op].scale_ulps;
        t.reason = k_narrow_tol[op].reason;
    }
    return t;
}

double dt_tolerance_bound(const dt_tolerance *t, dt_dtype d, double ref, double scale) {
    double b = t->atol + t->rtol * scale;
    if (t->ulps > 0) b += t->ulps * dt_dtype_ulp(d, ref);
    if (t->scale_ulps > 0) b += t->scale_ulps * dt_dtype_ulp(d, scale);
    return b;
}
