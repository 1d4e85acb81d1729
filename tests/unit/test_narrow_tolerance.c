/* test_narrow_tolerance.c — the bf16/f16 tolerance table (dt_op_tolerance) can pass an
 * honest kernel and can fail a bad one, without a GPU.
 *
 * On the exact inputs of sum 4x16384 (f16 and bf16, seed 42, dt_arena_fill):
 *  - an honest kernel (FP32 accumulation, one rounding to the output type; emulated in C
 *    sequentially and pairwise) passes the bound of every row;
 *  - the planted fp16-accumulating kernel of kernels/cuda/sum.cu (DT_ACC_F16, emulated bit
 *    for bit by ref_sum_acc_f16 in tests/native/dt_test_ref.h) fails it, as the GPU test
 *    shows for the real kernel.
 * add (0.5 ulp: exact FP32 sum, one rounding): the correctly rounded output passes, one
 * ulp off fails. The table itself: FP32 entries equal the registry's atol/rtol with no
 * ulp term; every narrow entry has a ulp term and a reason. Exits 1 on failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/dt_arena.h"
#include "plan/dt_ops.h"
#include "../dt_check.h"
#include "../native/dt_test_ref.h"

static void test_table(void) {
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    for (int op = 0; op < DT_OP_COUNT; op++)
        for (int t = 0; t < 3; t++) {
            const dt_tolerance tol = dt_op_tolerance((dt_op)op, dts[t]);
            const dt_op_info *info = dt_op_get((dt_op)op);
            CHECK(tol.reason && strlen(tol.reason) > 10, "%s %s: reason", info->name,
                  dt_dtype_name(dts[t]));
            if (dts[t] == DT_F32)
                CHECK(tol.ulps == 0 && tol.atol == info->atol && tol.rtol == info->rtol,
                      "%s f32: the registry's tolerance", info->name);
            else
                CHECK(tol.ulps >= 0.5 && tol.atol == info->atol && tol.rtol == info->rtol,
                      "%s %s: ulps %g", info->name, dt_dtype_name(dts[t]), tol.ulps);
            printf("tolerance %-18s %-4s ulps %.1f atol %.0e rtol %.0e: %s\n", info->name,
                   dt_dtype_name(dts[t]), tol.ulps, tol.atol, tol.rtol, tol.reason);
        }
}

/* FP32 pairwise sum of x[0..n) (a tree, as the kernels reduce across threads). */
static float pairwise_f32(const double *x, int64_t n) {
    if (n == 1) return (float)x[0];
    return pairwise_f32(x, n / 2) + pairwise_f32(x + n / 2, n - n / 2);
}

static void test_sum(dt_dtype dt) {
    const int64_t m = 4, n = 16384;
    dt_case_layout L;
    dt_layout_make_typed(&L, DT_OP_SUM, m, n, 0, 0, dt);
    uint8_t *arena = malloc((size_t)L.total_bytes);
    dt_arena_fill(&L, arena, 42);
    double *a = malloc((size_t)(m * n) * sizeof(double));
    dt_buffer_to_f64(&L, 0, arena, a);
    double ref[4], scale[4], honest_seq[4], honest_tree[4], planted[4];
    const double *in[4] = {a, NULL, NULL, NULL};
    ref_compute(DT_OP_SUM, m, n, 0, in, ref, scale);
    for (int64_t i = 0; i < m; i++) {
        float s = 0.0f;
        for (int64_t j = 0; j < n; j++) s += (float)a[i * n + j];
        honest_seq[i] = dt_round_to(dt, s);
        honest_tree[i] = dt_round_to(dt, pairwise_f32(a + i * n, n));
        planted[i] = ref_sum_acc_f16(a + i * n, n);
        if (dt == DT_BF16) planted[i] = dt_round_to(dt, planted[i]); /* stored as bf16 */
    }
    char msg[256];
    const char *name = dt_dtype_name(dt);
    ref_measure r = ref_check_typed(DT_OP_SUM, dt, m, honest_seq, ref, scale, msg, sizeof msg);
    CHECK(r.bad == 0, "sum %s honest (sequential FP32): %s", name, msg);
    printf("sum 4x16384 %s honest sequential: max err %.3g (%.2f ulp), budget %.3f\n", name,
           r.max_abs_error, r.max_ulps, r.max_budget);
    r = ref_check_typed(DT_OP_SUM, dt, m, honest_tree, ref, scale, msg, sizeof msg);
    CHECK(r.bad == 0, "sum %s honest (pairwise FP32): %s", name, msg);
    printf("sum 4x16384 %s honest pairwise: max err %.3g (%.2f ulp), budget %.3f\n", name,
           r.max_abs_error, r.max_ulps, r.max_budget);
    r = ref_check_typed(DT_OP_SUM, dt, m, planted, ref, scale, msg, sizeof msg);
    CHECK(r.bad > 0, "sum %s with fp16 accumulation passed (max err %.3g, budget %.3f)", name,
          r.max_abs_error, r.max_budget);
    printf("sum 4x16384 %s fp16-accumulation (planted): %lld of 4 rows fail, max err %.3g "
           "(%.1f ulp), budget %.2f: %s\n",
           name, (long long)r.bad, r.max_abs_error, r.max_ulps, r.max_budget, msg);
    free(a);
    free(arena);
}

static void test_add(dt_dtype dt) {
    const int64_t m = 17, n = 257, count = m * n;
    dt_case_layout L;
    dt_layout_make_typed(&L, DT_OP_ADD, m, n, 0, 0, dt);
    uint8_t *arena = malloc((size_t)L.total_bytes);
    dt_arena_fill(&L, arena, 42);
    double *a = malloc((size_t)count * sizeof(double)), *b = malloc((size_t)count * sizeof(double));
    double *ref = malloc((size_t)count * sizeof(double));
    double *scale = malloc((size_t)count * sizeof(double));
    double *out = malloc((size_t)count * sizeof(double));
    dt_buffer_to_f64(&L, 0, arena, a);
    dt_buffer_to_f64(&L, 1, arena, b);
    const double *in[4] = {a, b, NULL, NULL};
    ref_compute(DT_OP_ADD, m, n, 0, in, ref, scale);
    int64_t inexact = 0;
    for (int64_t i = 0; i < count; i++) {
        out[i] = dt_round_to(dt, (float)a[i] + (float)b[i]);
        inexact += out[i] != ref[i];
    }
    char msg[256];
    ref_measure r = ref_check_typed(DT_OP_ADD, dt, count, out, ref, scale, msg, sizeof msg);
    CHECK(r.bad == 0 && r.max_ulps <= 0.5, "add %s correctly rounded: %s", dt_dtype_name(dt), msg);
    /* one element one ulp off (away from ref, at an element that is exact) */
    int64_t k = 0;
    while (k < count && out[k] != ref[k]) k++;
    if (k < count) out[k] += dt_dtype_ulp(dt, out[k]);
    r = ref_check_typed(DT_OP_ADD, dt, count, out, ref, scale, msg, sizeof msg);
    CHECK(k < count && r.bad == 1, "add %s one ulp off must fail: %lld bad", dt_dtype_name(dt),
          (long long)r.bad);
    printf("add 17x257 %s: %lld outputs inexact (the grids make a+b exact), one ulp off: %s\n",
           dt_dtype_name(dt),
           (long long)inexact, msg);
    free(a);
    free(b);
    free(ref);
    free(scale);
    free(out);
    free(arena);
}

int main(void) {
    test_table();
    test_sum(DT_F16);
    test_sum(DT_BF16);
    test_add(DT_F16);
    test_add(DT_BF16);
    return dt_check_summary("test_narrow_tolerance");
}
