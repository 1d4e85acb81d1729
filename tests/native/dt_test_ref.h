/* dt_test_ref.h — tests/native's own FP64 reference of the nine ops and the tolerance
 * check (the registry's atol/rtol against each op's "scale" of term magnitudes). Written
 * independently of the kernels so a wrong kernel fails. Header-only, static functions. */
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
static int64_t ref_check(dt_op op, int64_t count, const float *out, const double *ref,
                         const double *scale, char *msg, size_t msg_len) {
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

#endif
