/* dt_oracle.c — FP64 references and the output check (see dt_oracle.h).
 *
 * Row ops run one output row per iteration of an OpenMP loop, reading the inputs
 * through the layout (views work). GEMM converts A and B to dense doubles and runs
 * dt_gemm_f64 (register-blocked; the triple loop's order, bit for bit), which accumulates
 * A*B and |A|*|B| (the scale) together; inputs on the 2^-10 grid make FP64 GEMM and sums
 * exact up to K = 2^33. */
#include "dt_oracle.h"

#include "dt_gemm_f64.h"

#include <math.h>
#include <string.h>

#include <omp.h>

#define DT_ORACLE_EPS 1e-5 /* the epsilon of rmsnorm and layernorm (SPEC §2) */

/* Element j of a floating-point row at p (f32, bf16 or f16), widened exactly. */
static double load_elem(dt_dtype d, const uint8_t *p, int64_t j) {
    if (d == DT_F32) {
        float v;
        memcpy(&v, p + j * 4, 4);
        return v;
    }
    uint16_t h;
    memcpy(&h, p + j * 2, 2);
    return dt_narrow_to_f32(d, h);
}

/* Loads logical row i of a floating-point buffer into dst (cols doubles). */
static void load_row(const dt_buffer_layout *B, const uint8_t *base, int64_t i, double *dst) {
    const uint8_t *p = base + dt_elem_offset(B, i, 0);
    if (B->dtype == DT_F32) {
        for (int64_t j = 0; j < B->cols; j++) {
            float v;
            memcpy(&v, p + j * 4, 4);
            dst[j] = v;
        }
        return;
    }
    for (int64_t j = 0; j < B->cols; j++) dst[j] = load_elem(B->dtype, p, j);
}

static int64_t load_label(const dt_buffer_layout *B, const uint8_t *base, int64_t i) {
    int64_t v;
    memcpy(&v, base + dt_elem_offset(B, i, 0), 8);
    return v;
}

/* One output row of a row op. x, y: scratch of n doubles; gamma/beta may be NULL. */
static void row_ref(dt_op op, const dt_case_layout *L, const uint8_t *base, int64_t i,
                    const double *gamma, const double *beta, double *x, double *y, double *ref,
                    double *scale, int64_t label) {
    const int64_t n = L->n;
    load_row(&L->buf[0], base, i, x);
    int has_b = op == DT_OP_ADD || op == DT_OP_GELU_ADD || op == DT_OP_RESIDUAL_LAYERNORM;
    if (has_b) load_row(&L->buf[1], base, i, y);
    double *r = ref + i * (op == DT_OP_SUM || op == DT_OP_CROSS_ENTROPY ? 1 : n);
    double *s = scale + (r - ref);
    switch (op) {
    case DT_OP_ADD:
        for (int64_t j = 0; j < n; j++) {
            r[j] = x[j] + y[j];
            s[j] = fabs(x[j]) + fabs(y[j]);
        }
        break;
    case DT_OP_GELU_ADD:
        for (int64_t j = 0; j < n; j++) {
            double v = x[j] + y[j];
            r[j] = 0.5 * v * (1.0 + erf(v * 0.70710678118654752440));
            s[j] = fabs(x[j]) + fabs(y[j]);
        }
        break;
    case DT_OP_SUM: {
        double acc = 0, mag = 0;
        for (int64_t j = 0; j < n; j++) {
            acc += x[j];
            mag += fabs(x[j]);
        }
        r[0] = acc;
        s[0] = mag;
        break;
    }
    case DT_OP_SOFTMAX: {
        double mx = -INFINITY, den = 0;
        for (int64_t j = 0; j < n; j++) mx = x[j] > mx ? x[j] : mx;
        for (int64_t j = 0; j < n; j++) {
            y[j] = exp(x[j] - mx);
            den += y[j];
        }
        for (int64_t j = 0; j < n; j++) {
            r[j] = y[j] / den;
            s[j] = r[j] * (1.0 + fabs(x[j] - mx));
        }
        break;
    }
    case DT_OP_RMSNORM: {
        double ss = 0;
        for (int64_t j = 0; j < n; j++) ss += x[j] * x[j];
        double rs = 1.0 / sqrt(ss / (double)n + DT_ORACLE_EPS);
        for (int64_t j = 0; j < n; j++) {
            r[j] = x[j] * rs * gamma[j];
            s[j] = fabs(x[j]) * rs * fabs(gamma[j]);
        }
        break;
    }
    case DT_OP_LAYERNORM:
    case DT_OP_RESIDUAL_LAYERNORM: {
        if (op == DT_OP_RESIDUAL_LAYERNORM)
            for (int64_t j = 0; j < n; j++) x[j] += y[j];
        double mean = 0, var = 0;
        for (int64_t j = 0; j < n; j++) mean += x[j];
        mean /= (double)n;
        for (int64_t j = 0; j < n; j++) var += (x[j] - mean) * (x[j] - mean);
        var /= (double)n; /* biased, as torch's layer_norm */
        double rs = 1.0 / sqrt(var + DT_ORACLE_EPS);
        /* the mean's size: |mean| for layernorm (its inputs are exact; a kernel may round
         * the mean itself); for residual_layernorm the magnitude of its terms, mean|a+b|:
         * an implementation that stores a+b in the case's type (PyTorch's a + b, then
         * layer_norm) moves the mean by up to u * mean|a+b| (u the type's unit roundoff),
         * which an output near zero sees whole although |mean| may be ~0 (H200, session 7:
         * torch bf16 at 1024x4096 under --inputs normal, |err| 1.4e-5 at ref 1.6e-5) */
        double msize = fabs(mean);
        if (op == DT_OP_RESIDUAL_LAYERNORM) {
            msize = 0;
            for (int64_t j = 0; j < n; j++) msize += fabs(x[j]);
            msize /= (double)n;
        }
        for (int64_t j = 0; j < n; j++) {
            double g = gamma ? gamma[j] : 1.0, bt = beta ? beta[j] : 0.0;
            r[j] = (x[j] - mean) * rs * g + bt;
            s[j] = (fabs(x[j]) + msize) * rs * fabs(g) + fabs(bt);
        }
        break;
    }
    case DT_OP_CROSS_ENTROPY: {
        double mx = -INFINITY, den = 0;
        for (int64_t j = 0; j < n; j++) mx = x[j] > mx ? x[j] : mx;
        for (int64_t j = 0; j < n; j++) den += exp(x[j] - mx);
        double lse = log(den);
        r[0] = mx + lse - x[label];
        s[0] = fabs(mx) + fabs(lse) + fabs(x[label]);
        break;
    }
    default: DT_ASSERT(0);
    }
}

int dt_oracle_threads_start(void) {
    int n = 0;
#pragma omp parallel
    {
#pragma omp atomic
        n++;
    }
    return n;
}

dt_status dt_oracle_compute(const dt_case_layout *L, const uint8_t *pristine, dt_oracle_ref *ref,
                            dt_err *err) {
    memset(ref, 0, sizeof *ref);
    const dt_op_info *info = dt_op_get(L->op);
    const dt_buffer_layout *O = &L->buf[dt_layout_output(L)];
    if (O->rows <= 0 || O->cols <= 0 || L->n <= 0 || (info->is_gemm && L->k <= 0))
        return dt_fail(err, DT_EINVAL, "oracle: empty shape %lldx%lldx%lld for %s",
                       (long long)L->m, (long long)L->n, (long long)L->k, info->name);
    int64_t count = O->rows * O->cols;
    double *r = calloc((size_t)count, sizeof(double));
    double *s = calloc((size_t)count, sizeof(double));
    if (!r || !s) {
        free(r);
        free(s);
        return dt_fail(err, DT_EIO, "could not allocate %llu bytes for the FP64 reference",
                       2ull * (unsigned long long)count * sizeof(double));
    }

    if (info->is_gemm) {
        const int64_t M = L->m, N = L->n, K = L->k;
        double *A = malloc((size_t)(M * K) * sizeof(double));
        double *B = malloc((size_t)(K * N) * sizeof(double));
        if (!A || !B) {
            free(A);
            free(B);
            free(r);
            free(s);
            return dt_fail(err, DT_EIO, "could not allocate %llu bytes for the FP64 reference's "
                           "operands", (unsigned long long)(M * K + K * N) * sizeof(double));
        }
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < M; i++) load_row(&L->buf[0], pristine, i, A + i * K);
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < K; k++) load_row(&L->buf[1], pristine, k, B + k * N);
        dt_gemm_f64(DT_GEMM_F64_AUTO, M, N, K, A, B, r, s);
        free(A);
        free(B);
    } else {
        const int64_t M = L->m, N = L->n;
        double *gamma = NULL, *beta = NULL;
        if (L->op == DT_OP_RMSNORM || L->op == DT_OP_LAYERNORM) {
            gamma = dt_xmalloc((size_t)N * sizeof(double));
            load_row(&L->buf[1], pristine, 0, gamma);
        }
        if (L->op == DT_OP_LAYERNORM) {
            beta = dt_xmalloc((size_t)N * sizeof(double));
            load_row(&L->buf[2], pristine, 0, beta);
        }
        int64_t bad_row = -1, bad_label = 0;
#pragma omp parallel
        {
            double *x = dt_xmalloc((size_t)N * sizeof(double));
            double *y = dt_xmalloc((size_t)N * sizeof(double));
#pragma omp for schedule(static)
            for (int64_t i = 0; i < M; i++) {
                int64_t label = 0;
                if (L->op == DT_OP_CROSS_ENTROPY) {
                    label = load_label(&L->buf[1], pristine, i);
                    if (label < 0 || label >= N) {
#pragma omp critical(dt_oracle_bad_label)
                        if (bad_row < 0 || i < bad_row) {
                            bad_row = i;
                            bad_label = label;
                        }
                        continue;
                    }
                }
                row_ref(L->op, L, pristine, i, gamma, beta, x, y, r, s, label);
            }
            free(x);
            free(y);
        }
        free(gamma);
        free(beta);
        if (bad_row >= 0) {
            free(r);
            free(s);
            return dt_fail(err, DT_EINVAL, "oracle: label %lld of row %lld is outside [0, %lld)",
                           (long long)bad_label, (long long)bad_row, (long long)N);
        }
    }
    dt_oracle_ref_adopt(L, r, s, ref);
    return DT_OK;
}

void dt_oracle_ref_adopt(const dt_case_layout *L, double *ref_values, double *scale,
                         dt_oracle_ref *ref) {
    const dt_buffer_layout *O = &L->buf[dt_layout_output(L)];
    ref->op = L->op;
    ref->rows = O->rows;
    ref->cols = O->cols;
    ref->ref = ref_values;
    ref->scale = scale;
    ref->dtype = L->dtype;
    ref->tol = dt_op_tolerance(L->op, L->dtype);
    ref->atol = ref->tol.atol;
    ref->rtol = ref->tol.rtol;
}

void dt_oracle_free(dt_oracle_ref *ref) {
    free(ref->ref);
    free(ref->scale);
    memset(ref, 0, sizeof *ref);
}

double dt_oracle_bound(const dt_oracle_ref *ref, int64_t idx) {
    if (ref->tol.ulps > 0)
        return dt_tolerance_bound(&ref->tol, ref->dtype, ref->ref[idx], ref->scale[idx]);
    return ref->atol + ref->rtol * ref->scale[idx];
}

/* The first failure's fields and text into rep (element (i, j), its value v). */
static void note_first_failure(const dt_oracle_ref *ref, const dt_buffer_layout *O,
                               const uint8_t *base, int64_t i, int64_t j, dt_oracle_report *rep) {
    const uint8_t *p = base + dt_elem_offset(O, i, 0);
    const int64_t idx = i * ref->cols + j;
    const double v = load_elem(O->dtype, p, j);
    const double want = ref->ref[idx], bound = dt_oracle_bound(ref, idx);
    double e = isfinite(v) ? fabs((double)v - want) : INFINITY;
    rep->ok = 0;
    rep->first_fail_row = i;
    rep->first_fail_col = j;
    rep->first_fail_value = v;
    rep->first_fail_ref = want;
    rep->first_fail_bound = bound;
    uint32_t w = 0;
    memcpy(&w, p + j * O->elem_bytes, (size_t)O->elem_bytes);
    char ulps[96] = "";
    if (ref->tol.ulps > 0)
        snprintf(ulps, sizeof ulps, " + %g ulp(%s) at |ref| + %g at scale", ref->tol.ulps,
                 dt_dtype_name(ref->dtype), ref->tol.scale_ulps);
    snprintf(rep->first_failure, sizeof rep->first_failure,
             "%s element (%lld, %lld) = %.9g (0x%0*x), ref %.9g, |err| %.3g > bound "
             "%.3g (atol %g + rtol %g * scale %.6g%s)",
             O->name, (long long)i, (long long)j, v, (int)(2 * O->elem_bytes), (unsigned)w, want,
             e, bound, ref->atol, ref->rtol, ref->scale[idx], ulps);
}

void dt_oracle_check(const dt_oracle_ref *ref, const dt_case_layout *L, const uint8_t *base,
                     dt_oracle_report *rep) {
    const dt_buffer_layout *O = &L->buf[dt_layout_output(L)];
    DT_ASSERT(ref->ref && ref->scale && ref->op == L->op);
    DT_ASSERT(O->rows == ref->rows && O->cols == ref->cols && O->dtype == ref->dtype);
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    rep->first_fail_row = rep->first_fail_col = -1;
    rep->elements = ref->rows * ref->cols;
    /* over threads by rows: counts and maxima reduce, the first failure is the smallest
     * failing index, so the report is the same for any thread count */
    int64_t failures = 0, first = INT64_MAX;
    double max_e = 0, max_used = 0;
#pragma omp parallel for schedule(static) reduction(+ : failures) reduction(max : max_e, max_used) \
    reduction(min : first) if (rep->elements > (1 << 16))
    for (int64_t i = 0; i < ref->rows; i++) {
        const uint8_t *p = base + dt_elem_offset(O, i, 0);
        for (int64_t j = 0; j < ref->cols; j++) {
            const int64_t idx = i * ref->cols + j;
            const double v = load_elem(O->dtype, p, j);
            const double want = ref->ref[idx], bound = dt_oracle_bound(ref, idx);
            double e = isfinite(v) ? fabs((double)v - want) : INFINITY;
            double used = e == 0 ? 0 : (bound > 0 ? e / bound : INFINITY);
            if (e > max_e) max_e = e;
            if (used > max_used) max_used = used;
            if (isfinite(v) && e <= bound) continue;
            failures++;
            if (idx < first) first = idx;
        }
    }
    rep->failures = failures;
    rep->max_abs_error = max_e;
    rep->max_budget_used = max_used;
    if (failures > 0) note_first_failure(ref, O, base, first / ref->cols, first % ref->cols, rep);
}
