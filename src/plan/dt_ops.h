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

/* Element types. In the registry a floating-point role is DT_F32, meaning "the case's
 * floating-point type": dt_layout_make_typed (src/data/dt_arena.h) lays every such
 * buffer out in the case's dtype (DT_F32, DT_BF16 or DT_F16); labels stay DT_I64.
 * The values are fixed (they are recorded and passed to workers as numbers). */
typedef enum dt_dtype { DT_F32 = 0, DT_I64 = 1, DT_BF16 = 2, DT_F16 = 3, DT_DTYPE_COUNT } dt_dtype;

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
/* The same with the op's floating-point buffers in dtype (DT_F32, DT_BF16, DT_F16). */
int64_t dt_op_min_bytes_typed(dt_op op, int64_t m, int64_t n, int64_t k, dt_dtype dtype);
double dt_op_flops(dt_op op, int64_t m, int64_t n, int64_t k);

/* ---- element types ----------------------------------------------------------- */

/* Bytes of one element: 4 (f32), 8 (i64), 2 (bf16, f16). */
int dt_dtype_size(dt_dtype d);
/* Name as on the command line and in records: "f32", "i64", "bf16", "f16". */
const char *dt_dtype_name(dt_dtype d);
/* Looks a name up ("f32"/"fp32", "bf16", "f16"/"fp16", "i64"); -1 if unknown. */
int dt_dtype_find(const char *name);
/* 1 for the floating-point case types DT_F32, DT_BF16, DT_F16. */
int dt_dtype_is_float(dt_dtype d);

/* Conversions between float and the 16-bit storage types (bit patterns as uint16_t).
 * float -> narrow rounds to nearest, ties to even (as cvt.rn and __float2half_rn /
 * __float2bfloat16_rn), overflow goes to +-inf, NaN stays NaN (quiet); narrow -> float
 * is exact. d must be DT_BF16 or DT_F16. */
uint16_t dt_f32_to_narrow(dt_dtype d, float x);
float dt_narrow_to_f32(dt_dtype d, uint16_t bits);
/* dt_f32_to_narrow's bf16 rule on the float's bits u, in line and branch-free so that a
 * loop calling it vectorizes (the CPU backend's rounding): a NaN keeps its sign and top
 * payload bits and is made quiet; otherwise round to nearest even, a carry out of the
 * exponent giving inf. dt_f32_to_narrow(DT_BF16, .) is this function. */
static inline uint16_t dt_f32_bits_to_bf16(uint32_t u) {
    const uint32_t r = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16, q = (u >> 16) | 0x0040u;
    return (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? q : r);
}
/* dt_f32_to_narrow's f16 rule on the float's bits u (in line, so the CPU kernels' scalar
 * paths share it): a NaN becomes the quiet NaN 0x7E00 with its sign; otherwise round to
 * nearest even, 65520 and above giving inf, below 2^-25 giving a signed zero, subnormal
 * results where the value is below 2^-14. dt_f32_to_narrow(DT_F16, .) is this function. */
static inline uint16_t dt_f32_bits_to_f16(uint32_t u) {
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    u &= 0x7FFFFFFFu;
    if (u >= 0x7F800000u) return sign | (u > 0x7F800000u ? 0x7E00u : 0x7C00u);
    if (u >= 0x477FF000u) return sign | 0x7C00u; /* >= 65520 rounds to inf */
    if (u < 0x38800000u) {                       /* below 2^-14: subnormal or zero */
        const int e = (int)(u >> 23);
        if (e < 102) return sign; /* below 2^-25: rounds to zero */
        const uint32_t mant = (u & 0x7FFFFFu) | 0x800000u;
        const int shift = 126 - e; /* value / 2^-24 = mant >> shift */
        uint32_t r = mant >> shift, rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return sign | (uint16_t)r;
    }
    uint32_t r = (u >> 13) - (112u << 10), rem = u & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++; /* may carry into the exponent */
    return sign | (uint16_t)r;
}
/* The f16 bits h as a float (exact; a NaN keeps its payload): dt_narrow_to_f32(DT_F16, .). */
static inline float dt_f16_bits_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    if (e == 0) {
        const float v = (float)mant * 0x1p-24f; /* subnormal or zero: exact */
        return sign ? -v : v;
    }
    const uint32_t u =
        sign | (e == 31 ? 0x7F800000u | (mant << 13) : ((e + 112u) << 23) | (mant << 13));
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
}
/* x rounded to the nearest value of type d (DT_F32: to float), as a double. */
double dt_round_to(dt_dtype d, double x);
/* Significand bits of d including the implicit one: 24 (f32), 8 (bf16), 11 (f16). */
int dt_dtype_precision(dt_dtype d);
/* One unit in the last place of type d at magnitude |x|: 2^(e - p + 1) for
 * 2^e <= |x| < 2^(e+1), and the spacing of the subnormals below the smallest normal
 * (f32 2^-149, bf16 2^-133, f16 2^-24). */
double dt_dtype_ulp(dt_dtype d, double x);

/* ---- tolerances ---------------------------------------------------------------- */

/* The pass rule of op at case dtype d, for every output element:
 *
 *   |out - ref| <= ulps * ulp_d(|ref|) + scale_ulps * ulp_d(scale) + atol + rtol * scale
 *
 * ref is the FP64 result from the exact inputs (as stored in type d), scale the op's
 * magnitude of the terms (dt_op_info.scale_doc). For DT_F32 ulps is 0 and atol/rtol
 * are the registry's (dt_op_info.atol/rtol), unchanged. For bf16/f16 the ulps term is
 * the rounding of the output to the storage type and atol/rtol bound the FP32
 * arithmetic before that rounding; scale_ulps (the norms and gelu_add only) allows the
 * roundings of intermediates to the storage type that a framework's narrow kernel does at
 * the magnitude of the terms (torch: the normalized value, then its product with gamma;
 * gelu of the rounded a+b). It is 0 for sum and gemm, whose accumulation must be FP32,
 * so a low-precision accumulator still fails. reason says why, in one line. */
typedef struct dt_tolerance {
    double atol, rtol;
    double ulps;        /* in units of the output dtype's ulp at |ref| */
    double scale_ulps;  /* in units of the output dtype's ulp at scale (0 for fp32) */
    const char *reason; /* one line */
} dt_tolerance;
dt_tolerance dt_op_tolerance(dt_op op, dt_dtype d);
/* The bound above for one element. */
double dt_tolerance_bound(const dt_tolerance *t, dt_dtype d, double ref, double scale);

#endif
