/* test_oracle.c — the FP64 oracle against straightforward FP32 implementations, and the
 * planted faults of SPEC §3, each caught by the right check.
 *
 * For every op, tail shapes (1x127, 17x257, gemm 127x193x61) and a mid shape, with
 * contiguous inputs and with views: an FP32 loop implementation written here must pass
 * dt_arena_check and dt_oracle_check with budget used < 1. Then on copies of that good
 * output we plant: a wrong element (a little over its bound; and one a little under,
 * which must pass), an unwritten element, a write one element past the output, a write
 * one element before an input, a modified input, an all-zero output, NaN and Inf.
 * Run: ctest -R test_oracle (or ./test_oracle -v for per-case budgets;
 * ./test_oracle --bench times the 1024^3 GEMM reference). Exits 1 on any failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/dt_arena.h"
#include "oracle/dt_oracle.h"
#include "plan/dt_ops.h"
#include "../dt_check.h"
#include "../native/dt_test_ref.h"

static int g_verbose;

/* ---- FP32 reference implementations, reading and writing through the layout ---- */

static float in_f(const dt_case_layout *L, const uint8_t *base, int b, int64_t i, int64_t j) {
    float v;
    memcpy(&v, base + dt_elem_offset(&L->buf[b], i, j), 4);
    return v;
}

static void out_f(const dt_case_layout *L, uint8_t *base, int64_t i, int64_t j, float v) {
    memcpy(base + dt_elem_offset(&L->buf[dt_layout_output(L)], i, j), &v, 4);
}

static float get_out(const dt_case_layout *L, const uint8_t *base, int64_t i, int64_t j) {
    return in_f(L, base, dt_layout_output(L), i, j);
}

static void impl_f32(const dt_case_layout *L, uint8_t *base) {
    const int64_t M = L->m, N = L->n, K = L->k;
    float *x = malloc((size_t)N * sizeof(float));
    for (int64_t i = 0; i < M; i++) {
        if (L->op == DT_OP_GEMM) {
            for (int64_t j = 0; j < N; j++) {
                float acc = 0;
                for (int64_t k = 0; k < K; k++) acc += in_f(L, base, 0, i, k) * in_f(L, base, 1, k, j);
                out_f(L, base, i, j, acc);
            }
            continue;
        }
        for (int64_t j = 0; j < N; j++) {
            x[j] = in_f(L, base, 0, i, j);
            if (L->op == DT_OP_ADD || L->op == DT_OP_GELU_ADD || L->op == DT_OP_RESIDUAL_LAYERNORM)
                x[j] += in_f(L, base, 1, i, j);
        }
        float mx = x[0], acc = 0, mean = 0, var = 0;
        for (int64_t j = 1; j < N; j++) mx = x[j] > mx ? x[j] : mx;
        switch (L->op) {
        case DT_OP_ADD:
            for (int64_t j = 0; j < N; j++) out_f(L, base, i, j, x[j]);
            break;
        case DT_OP_GELU_ADD:
            for (int64_t j = 0; j < N; j++)
                out_f(L, base, i, j, 0.5f * x[j] * (1.0f + erff(x[j] * 0.70710678f)));
            break;
        case DT_OP_SUM:
            for (int64_t j = 0; j < N; j++) acc += x[j];
            out_f(L, base, i, 0, acc);
            break;
        case DT_OP_SOFTMAX:
            for (int64_t j = 0; j < N; j++) acc += expf(x[j] - mx);
            for (int64_t j = 0; j < N; j++) out_f(L, base, i, j, expf(x[j] - mx) / acc);
            break;
        case DT_OP_RMSNORM: {
            for (int64_t j = 0; j < N; j++) acc += x[j] * x[j];
            float rs = 1.0f / sqrtf(acc / (float)N + 1e-5f);
            for (int64_t j = 0; j < N; j++) out_f(L, base, i, j, x[j] * rs * in_f(L, base, 1, 0, j));
            break;
        }
        case DT_OP_LAYERNORM:
        case DT_OP_RESIDUAL_LAYERNORM: {
            for (int64_t j = 0; j < N; j++) mean += x[j];
            mean /= (float)N;
            for (int64_t j = 0; j < N; j++) var += (x[j] - mean) * (x[j] - mean);
            var /= (float)N;
            float rs = 1.0f / sqrtf(var + 1e-5f);
            for (int64_t j = 0; j < N; j++) {
                float y = (x[j] - mean) * rs;
                if (L->op == DT_OP_LAYERNORM)
                    y = y * in_f(L, base, 1, 0, j) + in_f(L, base, 2, 0, j);
                out_f(L, base, i, j, y);
            }
            break;
        }
        case DT_OP_CROSS_ENTROPY: {
            int64_t label;
            memcpy(&label, base + dt_elem_offset(&L->buf[1], i, 0), 8);
            for (int64_t j = 0; j < N; j++) acc += expf(x[j] - mx);
            out_f(L, base, i, 0, mx + logf(acc) - x[label]);
            break;
        }
        default: abort();
        }
    }
    free(x);
}

/* ---- one case: the good run and every planted fault ---- */

static void arena_check(const dt_case_layout *L, const uint8_t *a, const uint8_t *p,
                        dt_arena_report *r) {
    dt_arena_check(L, a, p, r);
}

static void run_case(dt_op op, int64_t m, int64_t n, int64_t k, int views) {
    const char *name = dt_op_get(op)->name;
    char tag[128];
    snprintf(tag, sizeof tag, "%s %lldx%lldx%lld views=%d", name, (long long)m, (long long)n,
             (long long)k, views);
    dt_case_layout L;
    dt_layout_make(&L, op, m, n, k, views);
    const int ob = dt_layout_output(&L);
    const dt_buffer_layout *O = &L.buf[ob];
    const size_t bytes = (size_t)L.total_bytes;
    uint8_t *pristine = malloc(bytes), *good = malloc(bytes), *w = malloc(bytes);
    dt_arena_fill(&L, pristine, 1234 + (uint64_t)op);

    dt_oracle_ref ref;
    dt_err err = {{0}};
    dt_status st = dt_oracle_compute(&L, pristine, &ref, &err);
    CHECK(st == DT_OK, "%s: oracle compute: %s", tag, err.msg);
    if (st != DT_OK) goto out;
    CHECK(ref.rows == O->rows && ref.cols == O->cols && ref.op == op, "%s: ref shape", tag);
    CHECK(ref.atol == dt_op_get(op)->atol && ref.rtol == dt_op_get(op)->rtol, "%s: tols", tag);
    const int64_t count = ref.rows * ref.cols;
    int scale_ok = 1;
    for (int64_t e = 0; e < count; e++)
        if (!(ref.scale[e] >= fabs(ref.ref[e]) * (1 - 1e-12)) || !isfinite(ref.ref[e]))
            scale_ok = 0;
    CHECK(scale_ok, "%s: scale >= |ref| and ref finite everywhere", tag);
    if (op == DT_OP_SOFTMAX) {
        double worst = 0;
        for (int64_t i = 0; i < ref.rows; i++) {
            double s = 0;
            for (int64_t j = 0; j < ref.cols; j++) s += ref.ref[i * ref.cols + j];
            worst = fmax(worst, fabs(s - 1));
        }
        CHECK(worst < 1e-12, "%s: softmax rows sum to 1 (off by %g)", tag, worst);
    }

    /* the good FP32 run */
    memcpy(good, pristine, bytes);
    impl_f32(&L, good);
    dt_arena_report ar;
    dt_oracle_report orp;
    arena_check(&L, good, pristine, &ar);
    CHECK(ar.ok, "%s: good run arena check: %s", tag, ar.first_problem);
    dt_oracle_check(&ref, &L, good, &orp);
    CHECK(orp.ok && orp.failures == 0, "%s: good run oracle: %s", tag, orp.first_failure);
    CHECK(orp.elements == count, "%s: elements %lld", tag, (long long)orp.elements);
    CHECK(orp.max_budget_used < 1 && orp.max_budget_used >= 0, "%s: budget used %g", tag,
          orp.max_budget_used);
    CHECK(orp.first_failure[0] == 0 && orp.first_fail_row == -1 && orp.first_fail_col == -1,
          "%s: no first failure when ok", tag);
    if (g_verbose)
        printf("  %-40s max|err| %.3g  budget used %.3f\n", tag, orp.max_abs_error,
               orp.max_budget_used);

    const int64_t fi = O->rows / 2, fj = O->cols / 2, fidx = fi * O->cols + fj;
    const double want = ref.ref[fidx], bound = dt_oracle_bound(&ref, fidx);

    /* wrong element: a little more than the bound */
    {
        float f = (float)(want + 1.05 * bound);
        while (fabs((double)f - want) <= bound) f = nextafterf(f, INFINITY);
        double e = fabs((double)f - want);
        memcpy(w, good, bytes);
        out_f(&L, w, fi, fj, f);
        arena_check(&L, w, pristine, &ar);
        dt_oracle_check(&ref, &L, w, &orp);
        CHECK(ar.ok, "%s: wrong element must pass the arena check: %s", tag, ar.first_problem);
        CHECK(!orp.ok && orp.failures == 1, "%s: wrong element caught (failures %lld)", tag,
              (long long)orp.failures);
        CHECK(orp.first_fail_row == fi && orp.first_fail_col == fj, "%s: first fail at (%lld,%lld)",
              tag, (long long)orp.first_fail_row, (long long)orp.first_fail_col);
        CHECK(orp.first_fail_value == (double)f && orp.first_fail_ref == want &&
                  orp.first_fail_bound == bound,
              "%s: first fail value/ref/bound %g/%g/%g", tag, orp.first_fail_value,
              orp.first_fail_ref, orp.first_fail_bound);
        /* an exact op (bound 0) has an infinite budget used for any error */
        CHECK(orp.max_abs_error >= e &&
                  (bound == 0 ? isinf(orp.max_budget_used)
                              : isfinite(orp.max_budget_used) &&
                                    orp.max_budget_used >= e / bound && orp.max_budget_used > 1),
              "%s: max abs err %g, budget %g (planted err %g)", tag, orp.max_abs_error,
              orp.max_budget_used, e);
        CHECK(strstr(orp.first_failure, "out element") != NULL, "%s: message '%s'", tag,
              orp.first_failure);
    }
    /* an element a little under its bound still passes */
    {
        float f = (float)(want + 0.9 * bound);
        while (fabs((double)f - want) > bound) f = nextafterf(f, (float)want);
        memcpy(w, good, bytes);
        out_f(&L, w, fi, fj, f);
        dt_oracle_check(&ref, &L, w, &orp);
        CHECK(orp.ok, "%s: element within bound must pass: %s", tag, orp.first_failure);
    }
    /* unwritten element: poison left */
    {
        uint32_t poison = DT_POISON_U32;
        memcpy(w, good, bytes);
        memcpy(w + dt_elem_offset(O, fi, fj), &poison, 4);
        arena_check(&L, w, pristine, &ar);
        dt_oracle_check(&ref, &L, w, &orp);
        CHECK(!ar.ok && ar.output_unwritten == 1 && ar.output_nonfinite == 0 &&
                  ar.guard_bytes_changed == 0 && ar.input_elems_changed == 0,
              "%s: unwritten element: unwritten %lld: %s", tag, (long long)ar.output_unwritten,
              ar.first_problem);
        CHECK(strstr(ar.first_problem, "never written") != NULL, "%s: '%s'", tag,
              ar.first_problem);
        CHECK(!orp.ok && orp.failures == 1 && isinf(orp.max_budget_used), "%s: oracle on poison",
              tag);
    }
    /* out-of-bounds write: one element past the output */
    {
        float f = 1.0f;
        memcpy(w, good, bytes);
        memcpy(w + dt_elem_offset(O, O->rows - 1, O->cols), &f, 4);
        arena_check(&L, w, pristine, &ar);
        dt_oracle_check(&ref, &L, w, &orp);
        CHECK(!ar.ok && ar.guard_bytes_changed > 0 && ar.output_unwritten == 0 &&
                  ar.input_elems_changed == 0,
              "%s: write past output: guard bytes %lld: %s", tag,
              (long long)ar.guard_bytes_changed, ar.first_problem);
        CHECK(strstr(ar.first_problem, "guard") != NULL, "%s: '%s'", tag, ar.first_problem);
        CHECK(orp.ok, "%s: oracle does not see guards", tag);
    }
    /* out-of-bounds write: one element before input 0 (front guard, or view padding) */
    {
        const dt_buffer_layout *A = &L.buf[0];
        float f = 0.5f;
        memcpy(w, good, bytes);
        memcpy(w + A->data_offset - A->elem_bytes, &f, 4);
        arena_check(&L, w, pristine, &ar);
        CHECK(!ar.ok && ar.guard_bytes_changed > 0 && ar.input_elems_changed == 0,
              "%s: write before input: guard bytes %lld: %s", tag,
              (long long)ar.guard_bytes_changed, ar.first_problem);
        CHECK(strstr(ar.first_problem, A->is_view ? "padding of view 'a'" : "guard before 'a'"),
              "%s: '%s'", tag, ar.first_problem);
    }
    /* modified input: the last element of the last input buffer */
    {
        const dt_buffer_layout *B = &L.buf[ob - 1];
        uint8_t *p = w + dt_elem_offset(B, B->rows - 1, B->cols - 1);
        memcpy(w, good, bytes);
        if (B->dtype == DT_I64) {
            int64_t v;
            memcpy(&v, p, 8);
            v = v + 1; /* out of range when n == 1: still only an input change */
            memcpy(p, &v, 8);
        } else {
            float v;
            memcpy(&v, p, 4);
            v += 1.0f / 1024;
            memcpy(p, &v, 4);
        }
        arena_check(&L, w, pristine, &ar);
        CHECK(!ar.ok && ar.input_elems_changed == 1 && ar.guard_bytes_changed == 0,
              "%s: modified input '%s': changed %lld: %s", tag, B->name,
              (long long)ar.input_elems_changed, ar.first_problem);
        CHECK(strstr(ar.first_problem, "input") != NULL, "%s: '%s'", tag, ar.first_problem);
    }
    /* all-zero output */
    {
        memcpy(w, good, bytes);
        for (int64_t i = 0; i < O->rows; i++)
            for (int64_t j = 0; j < O->cols; j++) out_f(&L, w, i, j, 0.0f);
        arena_check(&L, w, pristine, &ar);
        dt_oracle_check(&ref, &L, w, &orp);
        CHECK(ar.ok, "%s: zeros pass the arena check: %s", tag, ar.first_problem);
        int64_t expect = 0;
        for (int64_t e = 0; e < count; e++) expect += fabs(ref.ref[e]) > dt_oracle_bound(&ref, e);
        CHECK(orp.failures == expect, "%s: all-zero output: %lld failures, %lld expected", tag,
              (long long)orp.failures, (long long)expect);
        /* on random data most elements are far from 0; residual_layernorm and
         * cross_entropy over 1 column are identically 0, so there zeros are right */
        if (!((op == DT_OP_RESIDUAL_LAYERNORM || op == DT_OP_CROSS_ENTROPY) && n == 1))
            CHECK(!orp.ok && orp.failures * 2 > count, "%s: all-zero output: %lld of %lld fail",
                  tag, (long long)orp.failures, (long long)count);
    }
    /* NaN and Inf */
    for (int t = 0; t < 2; t++) {
        uint32_t bits = t == 0 ? 0x7FC00000u : 0x7F800000u;
        memcpy(w, good, bytes);
        memcpy(w + dt_elem_offset(O, fi, fj), &bits, 4);
        arena_check(&L, w, pristine, &ar);
        dt_oracle_check(&ref, &L, w, &orp);
        CHECK(!ar.ok && ar.output_nonfinite == 1 && ar.output_unwritten == 0,
              "%s: %s: nonfinite %lld: %s", tag, t ? "Inf" : "NaN",
              (long long)ar.output_nonfinite, ar.first_problem);
        CHECK(!orp.ok && orp.failures == 1 && orp.first_fail_row == fi &&
                  orp.first_fail_col == fj && isinf(orp.max_abs_error),
              "%s: %s caught by the oracle: %s", tag, t ? "Inf" : "NaN", orp.first_failure);
    }
    /* the first failure is the first in row-major order */
    if (count > 1) {
        memcpy(w, good, bytes);
        out_f(&L, w, O->rows - 1, O->cols - 1, get_out(&L, good, O->rows - 1, O->cols - 1) + 1.0f);
        out_f(&L, w, 0, 0, get_out(&L, good, 0, 0) + 1.0f);
        dt_oracle_check(&ref, &L, w, &orp);
        CHECK(orp.failures == 2 && orp.first_fail_row == 0 && orp.first_fail_col == 0,
              "%s: two failures, first at (0,0): %lld at (%lld,%lld)", tag,
              (long long)orp.failures, (long long)orp.first_fail_row,
              (long long)orp.first_fail_col);
    }
    dt_oracle_free(&ref);
    CHECK(ref.ref == NULL && ref.scale == NULL, "%s: free zeroes", tag);
out:
    free(pristine);
    free(good);
    free(w);
}

/* Known values: a hand-checkable 2x3 case per op family, and a bad label. */
static void test_known_values(void) {
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_GEMM, 3, 2, 4, 1);
    uint8_t *p = malloc((size_t)L.total_bytes);
    dt_arena_fill(&L, p, 7);
    dt_oracle_ref ref;
    dt_err err;
    CHECK(dt_oracle_compute(&L, p, &ref, &err) == DT_OK, "gemm 3x2x4: %s", err.msg);
    int exact = 1;
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 2; j++) {
            double s = 0, a = 0;
            for (int64_t k = 0; k < 4; k++) {
                double t = (double)in_f(&L, p, 0, i, k) * in_f(&L, p, 1, k, j);
                s += t;
                a += fabs(t);
            }
            if (ref.ref[i * 2 + j] != s || ref.scale[i * 2 + j] != a) exact = 0;
        }
    CHECK(exact, "gemm 3x2x4 reference and scale exact");
    dt_oracle_free(&ref);
    free(p);

    dt_layout_make(&L, DT_OP_CROSS_ENTROPY, 4, 5, 0, 0);
    p = malloc((size_t)L.total_bytes);
    dt_arena_fill(&L, p, 7);
    int64_t bad = 5;
    memcpy(p + dt_elem_offset(&L.buf[1], 2, 0), &bad, 8);
    dt_status st = dt_oracle_compute(&L, p, &ref, &err);
    CHECK(st == DT_EINVAL && strstr(err.msg, "label 5 of row 2") != NULL,
          "bad label rejected: %d %s", (int)st, err.msg);
    CHECK(ref.ref == NULL, "ref zeroed on failure");
    free(p);
}

static void bench_gemm(void) {
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_GEMM, 1024, 1024, 1024, 0);
    uint8_t *p = malloc((size_t)L.total_bytes);
    dt_arena_fill(&L, p, 1);
    dt_oracle_ref ref;
    dt_err err;
    int64_t t0 = dt_now_ns();
    CHECK(dt_oracle_compute(&L, p, &ref, &err) == DT_OK, "%s", err.msg);
    printf("gemm 1024^3 oracle: %.2f s\n", (double)(dt_now_ns() - t0) * 1e-9);
    dt_oracle_free(&ref);
    free(p);
}

/* ---- bf16/f16 (issue 16): the honest output (the FP64 reference rounded once to the
 * output type) passes every op; planted faults fail; and the fp16-accumulating sum of
 * kernels/cuda/sum.cu (ref_sum_acc_f16) fails the sum's bound. ---- */

static void put_narrow(const dt_case_layout *L, uint8_t *base, int64_t idx, double v) {
    const dt_buffer_layout *O = &L->buf[dt_layout_output(L)];
    uint16_t h = dt_f32_to_narrow(L->dtype, (float)v);
    memcpy(base + dt_elem_offset(O, idx / O->cols, idx % O->cols), &h, 2);
}

static void put_bits(const dt_case_layout *L, uint8_t *base, int64_t idx, uint16_t h) {
    const dt_buffer_layout *O = &L->buf[dt_layout_output(L)];
    memcpy(base + dt_elem_offset(O, idx / O->cols, idx % O->cols), &h, 2);
}

/* 1 when the arena check and the oracle both pass. */
static int narrow_passes(const dt_oracle_ref *ref, const dt_case_layout *L, const uint8_t *a,
                         const uint8_t *p, char *why, size_t len) {
    dt_arena_report ar;
    dt_oracle_report orp;
    dt_arena_check(L, a, p, &ar);
    dt_oracle_check(ref, L, a, &orp);
    snprintf(why, len, "%s%s", ar.first_problem, orp.first_failure);
    return ar.ok && orp.ok;
}

static void narrow_case(dt_op op, dt_dtype d, int64_t m, int64_t n, int64_t k) {
    const char *nm = dt_op_get(op)->name, *dn = dt_dtype_name(d);
    dt_case_layout L;
    dt_layout_make_typed(&L, op, m, n, k, 0, d);
    uint8_t *p = malloc((size_t)L.total_bytes), *a = malloc((size_t)L.total_bytes);
    dt_arena_fill(&L, p, 7);
    dt_oracle_ref ref;
    dt_err e;
    char why[600];
    REQUIRE(dt_oracle_compute(&L, p, &ref, &e) == DT_OK, "%s %s: %s", nm, dn, e.msg);
    const int64_t cnt = ref.rows * ref.cols, mid = cnt / 2;
    memcpy(a, p, (size_t)L.total_bytes);
    for (int64_t i = 0; i < cnt; i++) put_narrow(&L, a, i, ref.ref[i]);
    CHECK(narrow_passes(&ref, &L, a, p, why, sizeof why), "%s %s honest (rounded ref): %s", nm,
          dn, why);
    uint8_t *good = malloc((size_t)L.total_bytes);
    memcpy(good, a, (size_t)L.total_bytes);
    /* a wrong element: far over its bound (bound + 4 ulps at |ref|) */
    const double bound = dt_oracle_bound(&ref, mid);
    put_narrow(&L, a, mid, ref.ref[mid] + bound + 4 * dt_dtype_ulp(d, ref.ref[mid]));
    CHECK(!narrow_passes(&ref, &L, a, p, why, sizeof why), "%s %s wrong element passed", nm, dn);
    memcpy(a, good, (size_t)L.total_bytes);
    put_bits(&L, a, mid, (uint16_t)dt_poison_bits(d)); /* unwritten */
    CHECK(!narrow_passes(&ref, &L, a, p, why, sizeof why) && strstr(why, "never written"),
          "%s %s unwritten element: %s", nm, dn, why);
    memcpy(a, good, (size_t)L.total_bytes);
    put_bits(&L, a, mid, d == DT_BF16 ? 0x7FC0u : 0x7E00u); /* NaN */
    CHECK(!narrow_passes(&ref, &L, a, p, why, sizeof why), "%s %s NaN passed", nm, dn);
    memcpy(a, good, (size_t)L.total_bytes);
    for (int64_t i = 0; i < cnt; i++) put_narrow(&L, a, i, 0.0); /* all zero */
    CHECK(!narrow_passes(&ref, &L, a, p, why, sizeof why), "%s %s all-zero passed", nm, dn);
    memcpy(a, good, (size_t)L.total_bytes);
    uint8_t *in0 = a + L.buf[0].data_offset; /* a modified input */
    in0[0] ^= 0x01;
    CHECK(!narrow_passes(&ref, &L, a, p, why, sizeof why), "%s %s modified input passed", nm, dn);
    free(good);
    dt_oracle_free(&ref);
done:
    free(a);
    free(p);
}

/* The fp16-accumulating sum fails; the honest FP32 one passes (f16 and bf16 cases). */
static void narrow_sum_acc_f16(dt_dtype d) {
    const int64_t m = 4, n = 16384;
    dt_case_layout L;
    dt_layout_make_typed(&L, DT_OP_SUM, m, n, 0, 0, d);
    uint8_t *p = malloc((size_t)L.total_bytes), *a = malloc((size_t)L.total_bytes);
    double *x = malloc((size_t)(m * n) * sizeof(double));
    dt_arena_fill(&L, p, 42);
    dt_buffer_to_f64(&L, 0, p, x);
    dt_oracle_ref ref;
    dt_err e;
    char why[600];
    REQUIRE(dt_oracle_compute(&L, p, &ref, &e) == DT_OK, "%s", e.msg);
    memcpy(a, p, (size_t)L.total_bytes);
    for (int64_t i = 0; i < m; i++) {
        float acc = 0;
        for (int64_t j = 0; j < n; j++) acc += (float)x[i * n + j];
        put_narrow(&L, a, i, acc);
    }
    CHECK(narrow_passes(&ref, &L, a, p, why, sizeof why), "sum %s FP32 accumulation: %s",
          dt_dtype_name(d), why);
    for (int64_t i = 0; i < m; i++) put_narrow(&L, a, i, ref_sum_acc_f16(x + i * n, n));
    CHECK(!narrow_passes(&ref, &L, a, p, why, sizeof why),
          "sum %s with fp16 accumulation passed the oracle", dt_dtype_name(d));
    dt_oracle_free(&ref);
done:
    free(x);
    free(a);
    free(p);
}

static void test_narrow(void) {
    (void)ref_compute; /* the shared header's other helper */
    static const dt_dtype dts[] = {DT_BF16, DT_F16};
    for (int t = 0; t < 2; t++) {
        for (int op = 0; op < DT_OP_COUNT; op++) {
            if (dt_op_get((dt_op)op)->is_gemm) narrow_case((dt_op)op, dts[t], 17, 33, 65);
            else narrow_case((dt_op)op, dts[t], 17, 257, 0);
        }
        narrow_sum_acc_f16(dts[t]);
    }
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) g_verbose = 1;
        if (strcmp(argv[i], "--bench") == 0) {
            bench_gemm();
            return g_fail ? 1 : 0;
        }
    }
    static const int64_t row_shapes[][2] = {{1, 127}, {17, 257}, {33, 1024}, {3, 1}};
    for (int op = 0; op < DT_OP_COUNT; op++)
        for (int views = 0; views <= 1; views++) {
            if (dt_op_get(op)->is_gemm) {
                run_case(op, 127, 193, 61, views);
                run_case(op, 1, 1, 1, views);
                run_case(op, 16, 64, 300, views);
            } else {
                for (size_t s = 0; s < sizeof row_shapes / sizeof row_shapes[0]; s++)
                    run_case(op, row_shapes[s][0], row_shapes[s][1], 0, views);
            }
        }
    test_known_values();
    test_narrow();
    return dt_check_summary("test_oracle");
}
