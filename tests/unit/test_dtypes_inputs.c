/* test_dtypes_inputs.c — issue 16 without a GPU: --dtypes parsing and the case ids of the
 * plan, shapes limited by memory (no dimension cap; the up-front memory check refuses a
 * case that cannot fit, naming its bytes), the default matrices, and the --inputs
 * distributions: every value exact in the case dtype and within its range, and for each
 * stress distribution a naive kernel planted here (softmax without max-subtraction under
 * wide-logits, one-pass variance layernorm under offset, a sum accumulated in fp16 under
 * cancel, residual_layernorm statistics accumulated in the narrow type) fails the oracle
 * while the honest kernel passes (and PyTorch's a + b stored in the type passes). Exits 1
 * on failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/dt_arena.h"
#include "oracle/dt_oracle.h"
#include "orchestrate/dt_memcheck.h"
#include "plan/dt_ops.h"
#include "plan/dt_plan.h"
#include "../dt_check.h"

static void test_dtypes_parse(void) {
    dt_dtype d[DT_MAX_DTYPES];
    int n = 0;
    dt_err e;
    CHECK(dt_dtypes_parse("fp32,bf16,fp16", d, &n, &e) == DT_OK && n == 3 && d[0] == DT_F32 &&
          d[1] == DT_BF16 && d[2] == DT_F16);
    CHECK(dt_dtypes_parse("bfloat16,f16,f32", d, &n, &e) == DT_OK && n == 3 && d[0] == DT_BF16 &&
          d[1] == DT_F16 && d[2] == DT_F32);
    static const char *bad[] = {"", "fp8", "i64", "bf16,bfloat16", "fp32,", ",fp32", "fp32,,bf16"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(dt_dtypes_parse(bad[i], d, &n, &e) == DT_EINVAL && strstr(e.msg, "--dtypes"),
              "'%s' must be refused", bad[i]);
}

static void test_plan_ids(void) {
    int ops[DT_OP_COUNT] = {0};
    ops[DT_OP_SOFTMAX] = ops[DT_OP_GEMM] = 1;
    dt_shape_list rows, gemms;
    dt_err e;
    REQUIRE(dt_shapes_parse("8192x8192,4x128256", 0, "--row-shapes", &rows, &e) == DT_OK, "%s",
            e.msg);
    REQUIRE(dt_shapes_parse("4096x1x4096", 1, "--gemm-shapes", &gemms, &e) == DT_OK, "%s", e.msg);
    const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    dt_plan p;
    dt_plan_build_typed(&p, ops, &rows, &gemms, 0, dts, 3);
    CHECK(p.count == 9, "3 shapes x 3 dtypes: %d cases", p.count);
    static const char *want[] = {"softmax_8192x8192", "softmax_8192x8192_bf16",
                                 "softmax_8192x8192_f16", "softmax_4x128256",
                                 "softmax_4x128256_bf16", "softmax_4x128256_f16",
                                 "gemm_4096x1x4096", "gemm_4096x1x4096_bf16",
                                 "gemm_4096x1x4096_f16"};
    for (int i = 0; i < p.count && i < 9; i++) {
        CHECK(strcmp(p.cases[i].id, want[i]) == 0, "case %d: %s, want %s", i, p.cases[i].id,
              want[i]);
        CHECK(p.cases[i].dtype == dts[i % 3], "case %s dtype", p.cases[i].id);
    }
    dt_plan_free(&p);
    /* the FP32-only build keeps today's ids (old runs compare) */
    dt_plan_build(&p, ops, &rows, &gemms, 1);
    CHECK(p.count == 3 && strcmp(p.cases[0].id, "softmax_8192x8192_view") == 0 &&
          p.cases[0].dtype == DT_F32, "fp32 ids: %s", p.count ? p.cases[0].id : "");
    dt_plan_free(&p);
done:;
}

static void test_shapes(void) {
    dt_shape_list sl;
    dt_err e;
    CHECK(dt_shapes_parse("65537x1,2048x128256", 0, "--row-shapes", &sl, &e) == DT_OK,
          "no 65536 cap: %s", e.msg);
    CHECK(dt_shapes_parse("0x5", 0, "--row-shapes", &sl, &e) == DT_EINVAL &&
          strstr(e.msg, "every dimension must be in 1.."));
    dt_shapes_default("cuda", 0, 0, &sl);
    int vocab = 0;
    for (int i = 0; i < sl.count; i++)
        vocab += (sl.s[i].m == 4096 && sl.s[i].n == 50257) || (sl.s[i].m == 2048 && sl.s[i].n == 128256);
    CHECK(vocab == 2, "cuda default has both vocabulary rows");
    /* ... for the logits ops only; a shape the user names is for every op */
    {
        dt_shape_list gl;
        dt_shapes_default("cuda", 0, 1, &gl);
        int all_ops[DT_OP_COUNT];
        for (int i = 0; i < DT_OP_COUNT; i++) all_ops[i] = 1;
        dt_plan p;
        dt_plan_build(&p, all_ops, &sl, &gl, 0);
        int vocab_cases = 0, wrong = 0;
        for (int i = 0; i < p.count; i++)
            if (p.cases[i].n == 50257 || p.cases[i].n == 128256) {
                vocab_cases++;
                wrong += !dt_op_rows_are_logits(p.cases[i].op);
            }
        CHECK(vocab_cases == 4 && wrong == 0, "vocabulary rows: %d cases, %d for non-logits ops",
              vocab_cases, wrong);
        CHECK(p.count == 6 * 8 + 2 * 2 + gl.count, "default cuda plan: %d cases", p.count);
        dt_plan_free(&p);
        dt_shape_list user;
        dt_err ue;
        CHECK(dt_shapes_parse("4096x50257", 0, "--row-shapes", &user, &ue) == DT_OK &&
              !user.logits_only[0], "parsed shapes are for every op");
        dt_plan_build(&p, all_ops, &user, &gl, 0);
        CHECK(p.count == 8 + gl.count, "--row-shapes 4096x50257: every row op (%d cases)", p.count);
        dt_plan_free(&p);
    }
    dt_shapes_default("cuda", 0, 1, &sl);
    int skinny = 0;
    for (int i = 0; i < sl.count; i++)
        skinny += (sl.s[i].n == 1 && sl.s[i].k == 4096) || (sl.s[i].k == 64 && sl.s[i].m == 4096);
    CHECK(skinny == 2, "cuda default has a matrix-vector and a small-K gemm");
    dt_shapes_default("cpu", 1, 0, &sl);
    CHECK(sl.count == 2 && sl.s[1].n == 257, "--quick rows stay small");
    dt_shapes_default("cpu", 0, 0, &sl);
    CHECK(sl.count == 4, "cpu default rows unchanged");
}

static void test_memcheck(void) {
    int ops[DT_OP_COUNT] = {0};
    ops[DT_OP_ADD] = 1;
    dt_shape_list rows, none = {0};
    dt_err e;
    REQUIRE(dt_shapes_parse("4x128256,200000x200000", 0, "-", &rows, &e) == DT_OK, "%s", e.msg);
    dt_plan p;
    dt_plan_build(&p, ops, &rows, &none, 0);
    dt_mem_free f = {(int64_t)8 << 30, (int64_t)8 << 30, -1};
    char note[300];
    dt_status st = dt_memcheck_plan(&p, 2, &f, note, sizeof note, &e);
    CHECK(st == DT_EINVAL && strstr(e.msg, "add_200000x200000") && strstr(e.msg, "bytes") &&
              strstr(e.msg, "8589934592"),
          "refusal names the case and both numbers: %s", e.msg);
    dt_case_bytes b;
    dt_case_bytes_of(&p.cases[1], 2, &b);
    CHECK(b.host_bytes > 3 * 200000LL * 200000 * 4 && b.shm_bytes >= 2 * 3 * 200000LL * 200000 * 4,
          "bytes of 3 matrices per arena: host %lld shm %lld", (long long)b.host_bytes,
          (long long)b.shm_bytes);
    p.count = 1; /* the small case fits; the device is not checked without a number */
    CHECK(dt_memcheck_plan(&p, 2, &f, note, sizeof note, &e) == DT_OK && strstr(note, "not checked"),
          "%s", note);
    f.device_bytes = 1000;
    CHECK(dt_memcheck_plan(&p, 2, &f, note, sizeof note, &e) == DT_EINVAL &&
              strstr(e.msg, "device memory"), "device refusal: %s", e.msg);
    f.device_bytes = -1;
    f.shm_bytes = 1000;
    CHECK(dt_memcheck_plan(&p, 2, &f, note, sizeof note, &e) == DT_EINVAL &&
              strstr(e.msg, "/dev/shm"), "shm refusal: %s", e.msg);
    p.count = 2;
    dt_plan_free(&p);
done:;
}

/* Every value of every distribution is exact in its dtype, finite and in range. */
static void test_inputs_exact(void) {
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    for (int dist = 0; dist < DT_INPUTS_COUNT; dist++)
        for (int t = 0; t < 3; t++)
            for (int op = 0; op < DT_OP_COUNT; op++) {
                const dt_op_info *info = dt_op_get((dt_op)op);
                int bad = 0;
                double mx = 0;
                for (int b = 0; b < info->nbuffers; b++) {
                    if (info->buffers[b].is_output || info->buffers[b].dtype == DT_I64) continue;
                    for (int64_t i = 0; i < 3000; i++) {
                        float v = dt_input_dist_value(3, (dt_op)op, b, i, 257, dts[t], dist);
                        if (!isfinite(v) || dt_round_to(dts[t], v) != (double)v) bad++;
                        if (fabs(v) > mx) mx = fabs(v);
                    }
                }
                CHECK(bad == 0 && mx <= (dts[t] == DT_F16 ? 2048.0 : 8192.0), "%s %s %s: %d values inexact, max |x| %g",
                      dt_inputs_name(dist), info->name, dt_dtype_name(dts[t]), bad, mx);
            }
    CHECK(dt_inputs_find("wide-logits") == DT_INPUTS_WIDE_LOGITS && dt_inputs_find("x") < 0);
    CHECK(dt_input_dist_value(5, DT_OP_ADD, 0, 9, 257, DT_F32, DT_INPUTS_CANCEL) ==
          dt_input_f32(5, DT_OP_ADD, 0, 9), "a distribution that does not apply is uniform");
}

/* Fills a case under dist, computes the reference; the caller writes outputs. */
typedef struct planted {
    dt_case_layout L;
    uint8_t *p, *a;
    double *x;
    dt_oracle_ref ref;
} planted;

static int planted_open(planted *c, dt_op op, int64_t m, int64_t n, dt_dtype d, dt_inputs dist) {
    memset(c, 0, sizeof *c);
    dt_layout_make_typed(&c->L, op, m, n, 0, 0, d);
    c->L.inputs = dist;
    c->p = malloc((size_t)c->L.total_bytes);
    c->a = malloc((size_t)c->L.total_bytes);
    c->x = malloc((size_t)(m * n) * sizeof(double));
    dt_arena_fill(&c->L, c->p, 11);
    memcpy(c->a, c->p, (size_t)c->L.total_bytes);
    dt_buffer_to_f64(&c->L, 0, c->p, c->x);
    dt_err e;
    return dt_oracle_compute(&c->L, c->p, &c->ref, &e) == DT_OK;
}

static void planted_put(planted *c, int64_t idx, float v) {
    const dt_buffer_layout *O = &c->L.buf[dt_layout_output(&c->L)];
    uint8_t *q = c->a + dt_elem_offset(O, idx / O->cols, idx % O->cols);
    if (c->L.dtype == DT_F32) {
        memcpy(q, &v, 4);
    } else {
        uint16_t h = dt_f32_to_narrow(c->L.dtype, v);
        memcpy(q, &h, 2);
    }
}

static int planted_ok(planted *c, char *why, size_t len) {
    dt_arena_report ar;
    dt_oracle_report orp;
    dt_arena_check(&c->L, c->a, c->p, &ar);
    dt_oracle_check(&c->ref, &c->L, c->a, &orp);
    snprintf(why, len, "%s%s", ar.first_problem, orp.first_failure);
    return ar.ok && orp.ok;
}

static void planted_close(planted *c) {
    dt_oracle_free(&c->ref);
    free(c->p);
    free(c->a);
    free(c->x);
}

/* softmax in float, with or without subtracting the row max */
static void softmax_rows(planted *c, int64_t m, int64_t n, int subtract_max) {
    for (int64_t i = 0; i < m; i++) {
        const double *x = c->x + i * n;
        float mx = -INFINITY, den = 0;
        for (int64_t j = 0; j < n; j++) mx = (float)x[j] > mx ? (float)x[j] : mx;
        if (!subtract_max) mx = 0;
        for (int64_t j = 0; j < n; j++) den += expf((float)x[j] - mx);
        for (int64_t j = 0; j < n; j++) planted_put(c, i * n + j, expf((float)x[j] - mx) / den);
    }
}

/* layernorm in float: two-pass (honest) or one-pass E[x^2] - E[x]^2 (naive) */
static void layernorm_rows(planted *c, int64_t m, int64_t n, int one_pass) {
    const dt_buffer_layout *G = &c->L.buf[1], *B = &c->L.buf[2];
    double *g = malloc((size_t)n * sizeof(double)), *be = malloc((size_t)n * sizeof(double));
    dt_buffer_to_f64(&c->L, 1, c->p, g);
    dt_buffer_to_f64(&c->L, 2, c->p, be);
    (void)G;
    (void)B;
    for (int64_t i = 0; i < m; i++) {
        const double *x = c->x + i * n;
        float s = 0, s2 = 0, mean, var = 0;
        for (int64_t j = 0; j < n; j++) {
            s += (float)x[j];
            s2 += (float)x[j] * (float)x[j];
        }
        mean = s / (float)n;
        if (one_pass) {
            var = s2 / (float)n - mean * mean;
        } else {
            for (int64_t j = 0; j < n; j++) var += ((float)x[j] - mean) * ((float)x[j] - mean);
            var /= (float)n;
        }
        float rs = 1.0f / sqrtf(fmaxf(var, 0.0f) + 1e-5f);
        for (int64_t j = 0; j < n; j++)
            planted_put(c, i * n + j, ((float)x[j] - mean) * rs * (float)g[j] + (float)be[j]);
    }
    free(g);
    free(be);
}

/* row sums: float accumulation (honest) or accumulated in fp16 (naive) */
static void sum_rows(planted *c, int64_t m, int64_t n, int acc_f16) {
    for (int64_t i = 0; i < m; i++) {
        float acc = 0;
        for (int64_t j = 0; j < n; j++)
            acc = acc_f16 ? (float)dt_round_to(DT_F16, acc + (float)c->x[i * n + j])
                          : acc + (float)c->x[i * n + j];
        planted_put(c, i, acc);
    }
}

/* residual_layernorm in float from h = a + b: h kept in FP32 (honest), stored in the case
 * type first (PyTorch eager's a + b, then layer_norm: must pass, the mean moves by up to
 * 1 ulp of mean|h|), or with the mean and variance accumulated in the case type (naive) */
static void residual_rows(planted *c, int64_t m, int64_t n, int round_h, int acc_narrow) {
    double *y = malloc((size_t)(m * n) * sizeof(double));
    dt_buffer_to_f64(&c->L, 1, c->p, y);
    float *h = malloc((size_t)n * sizeof(float));
    const dt_dtype d = c->L.dtype;
    for (int64_t i = 0; i < m; i++) {
        float s = 0, var = 0, mean;
        for (int64_t j = 0; j < n; j++) {
            h[j] = (float)c->x[i * n + j] + (float)y[i * n + j];
            if (round_h) h[j] = (float)dt_round_to(d, h[j]);
            s = acc_narrow ? (float)dt_round_to(d, s + h[j]) : s + h[j];
        }
        mean = s / (float)n;
        for (int64_t j = 0; j < n; j++)
            var = acc_narrow ? (float)dt_round_to(d, var + (h[j] - mean) * (h[j] - mean))
                             : var + (h[j] - mean) * (h[j] - mean);
        float rs = 1.0f / sqrtf(var / (float)n + 1e-5f);
        for (int64_t j = 0; j < n; j++) planted_put(c, i * n + j, (h[j] - mean) * rs);
    }
    free(h);
    free(y);
}

static void test_naive_kernels(void) {
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    char why[600];
    planted c;
    for (int t = 0; t < 3; t++) {
        const char *dn = dt_dtype_name(dts[t]);
        if (planted_open(&c, DT_OP_SOFTMAX, 8, 1024, dts[t], DT_INPUTS_WIDE_LOGITS)) {
            softmax_rows(&c, 8, 1024, 1);
            CHECK(planted_ok(&c, why, sizeof why), "softmax %s wide-logits honest: %s", dn, why);
            softmax_rows(&c, 8, 1024, 0);
            CHECK(!planted_ok(&c, why, sizeof why),
                  "softmax %s without max-subtraction passed under wide-logits", dn);
            /* the same naive kernel passes under uniform: the stress is what catches it */
            planted_close(&c);
            REQUIRE(planted_open(&c, DT_OP_SOFTMAX, 8, 1024, dts[t], DT_INPUTS_UNIFORM));
            softmax_rows(&c, 8, 1024, 0);
            CHECK(planted_ok(&c, why, sizeof why), "softmax %s naive under uniform: %s", dn, why);
        }
        planted_close(&c);
    }
    /* one-pass variance: f32 (the narrow grids hold too few bits for the offset to cancel
     * more than the narrow output can show) */
    REQUIRE(planted_open(&c, DT_OP_LAYERNORM, 8, 4096, DT_F32, DT_INPUTS_OFFSET));
    layernorm_rows(&c, 8, 4096, 0);
    CHECK(planted_ok(&c, why, sizeof why), "layernorm two-pass under offset: %s", why);
    layernorm_rows(&c, 8, 4096, 1);
    CHECK(!planted_ok(&c, why, sizeof why), "one-pass variance layernorm passed under offset");
    planted_close(&c);
    REQUIRE(planted_open(&c, DT_OP_LAYERNORM, 8, 4096, DT_F32, DT_INPUTS_UNIFORM));
    layernorm_rows(&c, 8, 4096, 1);
    CHECK(planted_ok(&c, why, sizeof why), "one-pass variance under uniform passes: %s", why);
    planted_close(&c);
    /* residual_layernorm: a + b stored in the type before an FP32 layernorm is PyTorch's
     * own form and passes (it failed the oracle's |mean| scale on the H200, session 7);
     * statistics accumulated in the type still fail */
    for (int t = 1; t < 3; t++) {
        const char *dn = dt_dtype_name(dts[t]);
        REQUIRE(planted_open(&c, DT_OP_RESIDUAL_LAYERNORM, 1024, 4096, dts[t], DT_INPUTS_NORMAL));
        residual_rows(&c, 1024, 4096, 0, 0);
        CHECK(planted_ok(&c, why, sizeof why), "residual_layernorm %s honest: %s", dn, why);
        residual_rows(&c, 1024, 4096, 1, 0);
        CHECK(planted_ok(&c, why, sizeof why), "residual_layernorm %s, a+b in the type: %s", dn,
              why);
        residual_rows(&c, 1024, 4096, 1, 1);
        CHECK(!planted_ok(&c, why, sizeof why),
              "residual_layernorm %s with mean/variance accumulated in the type passed", dn);
        planted_close(&c);
    }
    /* a sum accumulated in fp16 under cancel: f32 and f16 cases */
    for (int t = 0; t < 3; t += 2) {
        const char *dn = dt_dtype_name(dts[t]);
        REQUIRE(planted_open(&c, DT_OP_SUM, 8, 4096, dts[t], DT_INPUTS_CANCEL));
        double mag = 0, tot = 0;
        for (int64_t j = 0; j < 4096; j++) {
            mag += fabs(c.x[j]);
            tot += c.x[j];
        }
        CHECK(mag > 50 * fabs(tot), "cancel %s: sum|a| %g vs |sum| %g", dn, mag, fabs(tot));
        sum_rows(&c, 8, 4096, 0);
        CHECK(planted_ok(&c, why, sizeof why), "sum %s float accumulation under cancel: %s", dn,
              why);
        sum_rows(&c, 8, 4096, 1);
        CHECK(!planted_ok(&c, why, sizeof why), "sum %s accumulated in fp16 passed under cancel",
              dn);
        planted_close(&c);
    }
done:;
}

int main(void) {
    test_dtypes_parse();
    test_plan_ids();
    test_shapes();
    test_memcheck();
    test_inputs_exact();
    test_naive_kernels();
    return dt_check_summary("test_dtypes_inputs");
}
