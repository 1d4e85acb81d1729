/* dt_test_ref.h — tests/native's own FP64 reference of the nine ops and the tolerance
 * check (the registry's atol/rtol against each op's "scale" of term magnitudes). Written
 * independently of the kernels so a wrong kernel fails. Header-only, static functions.
 * For bf16/f16 cases: ref_check_typed applies dt_op_tolerance (ulps of the output type
 * + atol + rtol*scale) and reports what it measured; ref_sum_acc_f16 emulates, bit for
 * bit, the planted fp16-accumulating sum of kernels/cuda/sum.cu (DT_ACC_F16). Also used
 * by tests/gpu/test_cuda_backend.c and tests/unit/test_narrow_tolerance.c. */
#ifndef DT_TEST_REF_H
#define DT_TEST_REF_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/dt_ops.h"

/* in[i]: dense row-major doubles of the op's i-th input (registry order); ref and scale
 * get rows*cols of the output. */
static void ref_compute(dt_op op, int64_t m, int64_t n, int64_t k, const double *const in[4],
                        double *ref, double *scale) {
    const double eps = 1e-5;
    const double *a = in[0], *b = in[1], *c = in[2];
    for (int64_t i = 0; i < m; i++) {
        const double *x = a + i * (op == DT_OP_GEMM ? k : n);
        switch (op) {
        case DT_OP_ADD:
        case DT_OP_GELU_ADD:
            for (int64_t j = 0; j < n; j++) {
                double s = x[j] + b[i * n + j];
                ref[i * n + j] = op == DT_OP_ADD ? s : 0.5 * s * (1.0 + erf(s / sqrt(2.0)));
                scale[i * n + j] = fabs(x[j]) + fabs(b[i * n + j]);
            }
            break;
        case DT_OP_SUM: {
            double s = 0, sa = 0;
            for (int64_t j = 0; j < n; j++) s += x[j], sa += fabs(x[j]);
            ref[i] = s;
            scale[i] = sa;
            break;
        }
        case DT_OP_SOFTMAX:
        case DT_OP_CROSS_ENTROPY: {
            double mx = x[0], s = 0;
            for (int64_t j = 0; j < n; j++) mx = x[j] > mx ? x[j] : mx;
            for (int64_t j = 0; j < n; j++) s += exp(x[j] - mx);
            if (op == DT_OP_SOFTMAX) {
                for (int64_t j = 0; j < n; j++) {
                    double r = exp(x[j] - mx) / s;
                    ref[i * n + j] = r;
                    scale[i * n + j] = r + fabs(x[j] - mx) * r;
                }
            } else {
                int64_t lab = (int64_t)b[i];
                ref[i] = mx + log(s) - x[lab];
                scale[i] = fabs(mx) + fabs(log(s)) + fabs(x[lab]);
            }
            break;
        }
        case DT_OP_RMSNORM: {
            double ss = 0;
            for (int64_t j = 0; j < n; j++) ss += x[j] * x[j];
            double r = 1.0 / sqrt(ss / (double)n + eps);
            for (int64_t j = 0; j < n; j++) {
                ref[i * n + j] = x[j] * r * b[j];
                scale[i * n + j] = fabs(x[j]) * r * fabs(b[j]);
            }
            break;
        }
        case DT_OP_LAYERNORM:
        case DT_OP_RESIDUAL_LAYERNORM: {
            int res = op == DT_OP_RESIDUAL_LAYERNORM;
            double mean = 0, var = 0;
            for (int64_t j = 0; j < n; j++) mean += x[j] + (res ? b[i * n + j] : 0.0);
            mean /= (double)n;
            for (int64_t j = 0; j < n; j++) {
                double d = x[j] + (res ? b[i * n + j] : 0.0) - mean;
                var += d * d;
            }
            double r = 1.0 / sqrt(var / (double)n + eps);
            for (int64_t j = 0; j < n; j++) {
                double v = x[j] + (res ? b[i * n + j] : 0.0);
                if (res) {
                    ref[i * n + j] = (v - mean) * r;
                    scale[i * n + j] = (fabs(v) + fabs(mean)) * r;
                } else {
                    ref[i * n + j] = (v - mean) * r * b[j] + c[j];
                    scale[i * n + j] = (fabs(v) + fabs(mean)) * r * fabs(b[j]) + fabs(c[j]);
                }
            }
            break;
        }
        case DT_OP_GEMM:
            for (int64_t j = 0; j < n; j++) {
                double s = 0, sa = 0;
                for (int64_t q = 0; q < k; q++) {
                    double t = x[q] * b[q * n + j];
                    s += t;
                    sa += fabs(t);
                }
                ref[i * n + j] = s;
                scale[i * n + j] = sa;
            }
            break;
        default: break;
        }
    }
}

/* Number of elements of out (count) outside atol + rtol*scale of ref (NaN counts as bad);
 * the first one is described in msg. */
__attribute__((unused)) static int64_t ref_check(dt_op op, int64_t count, const float *out,
                                                 const double *ref, const double *scale,
                                                 char *msg, size_t msg_len) {
    const dt_op_info *info = dt_op_get(op);
    int64_t bad = 0;
    msg[0] = '\0';
    for (int64_t i = 0; i < count; i++) {
        double d = fabs((double)out[i] - ref[i]);
        double tol = info->atol + info->rtol * scale[i];
        if (!(d <= tol)) {
            if (!bad)
                snprintf(msg, msg_len, "element %lld: got %.9g want %.9g (|diff| %.3g > tol %.3g)",
                         (long long)i, (double)out[i], ref[i], d, tol);
            bad++;
        }
    }
    return bad;
}

/* What ref_check_typed measured over the elements. */
typedef struct ref_measure {
    int64_t bad;          /* elements outside the bound (NaN counts as bad) */
    double max_abs_error; /* max |out - ref| */
    double max_budget;    /* max |out - ref| / bound */
    double max_ulps;      /* max |out - ref| in ulps of the output type at |ref| */
} ref_measure;

/* out, ref, scale: count doubles (out widened from the output type). The bound is
 * dt_tolerance_bound(dt_op_tolerance(op, dtype)); the first bad element goes to msg. */
__attribute__((unused)) static ref_measure ref_check_typed(dt_op op, dt_dtype dtype,
                                                          int64_t count, const double *out,
                                                          const double *ref,
                                                          const double *scale, char *msg,
                                                          size_t msg_len) {
    const dt_tolerance tol = dt_op_tolerance(op, dtype);
    ref_measure r = {0, 0.0, 0.0, 0.0};
    msg[0] = '\0';
    for (int64_t i = 0; i < count; i++) {
        const double d = fabs(out[i] - ref[i]);
        const double bound = dt_tolerance_bound(&tol, dtype, ref[i], scale[i]);
        const double u = d / dt_dtype_ulp(dtype, ref[i]);
        if (d > r.max_abs_error) r.max_abs_error = d;
        if (bound > 0 && d / bound > r.max_budget) r.max_budget = d / bound;
        if (u > r.max_ulps) r.max_ulps = u;
        if (!(d <= bound)) {
            if (!r.bad)
                snprintf(msg, msg_len,
                         "element %lld: got %.9g want %.9g (|diff| %.3g = %.2f ulp > bound %.3g)",
                         (long long)i, out[i], ref[i], d, u, bound);
            r.bad++;
        }
    }
    return r;
}

__attribute__((unused)) static float ref_round_f16(float x) {
    return dt_narrow_to_f32(DT_F16, dt_f32_to_narrow(DT_F16, x));
}

/* The planted fp16-accumulating row sum (sum.cu with DT_ACC_F16, one warp per row):
 * lane l adds x[l], x[l+32], ... into one accumulator rounded to fp16 after every FP32
 * add, then a butterfly over the 32 lanes (offsets 16..1), each add rounded to fp16;
 * the result is lane 0's. x: n values (exact in fp16). */
__attribute__((unused)) static double ref_sum_acc_f16(const double *x, int64_t n) {
    float acc[32];
    for (int l = 0; l < 32; l++) {
        acc[l] = 0.0f;
        for (int64_t c = l; c < n; c += 32) acc[l] = ref_round_f16(acc[l] + (float)x[c]);
    }
    for (int o = 16; o > 0; o >>= 1) {
        float nxt[32];
        for (int l = 0; l < 32; l++) nxt[l] = ref_round_f16(acc[l] + acc[l ^ o]);
        memcpy(acc, nxt, sizeof acc);
    }
    return acc[0];
}

#endif
