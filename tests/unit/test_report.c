/* test_report.c — derive + results.md + results.json I/O on hand-built results (no GPU):
 * assessment levels (smoke / method audit / comparative), verdicts, probe/control as a
 * median of pairs, Markdown sections and escaping, byte-identical regeneration, and the
 * loader's refusals of malformed input. Run: ctest -R test_report. */
#define _GNU_SOURCE
#include "dt_results_fixture.h"

#include "report/dt_derive.h"
#include "report/dt_report_md.h"
#include "report/dt_results_io.h"

#include <unistd.h>

static const fx_run CPU_OK = {.backend = "cpu", .samples = 9, .rounds = 2, .complete = 1,
                              .seed = 11};
static const fx_run CUDA_OK = {.backend = "cuda", .samples = 9, .rounds = 2, .complete = 1,
                               .device = 1, .probe_factor = 1.02, .seed = 12};

static const char *level_of(const json_t *r) {
    return json_string_value(
        json_object_get(json_object_get(json_object_get(r, "derived"), "assessment"), "level"));
}

/* 1 when some reason contains needle. */
static int reason_has(const json_t *r, const char *needle) {
    const json_t *rs =
        json_object_get(json_object_get(json_object_get(r, "derived"), "assessment"), "reasons");
    size_t i;
    json_t *s;
    json_array_foreach(rs, i, s) if (strstr(json_string_value(s), needle)) return 1;
    return 0;
}

static const json_t *scope_of(const json_t *c, const char *scope) {
    return json_object_get(json_object_get(json_object_get(c, "derived"), "scopes"), scope);
}

static char *md_of(const json_t *r) {
    char *t = NULL;
    size_t n = 0;
    dt_err err = {{0}};
    dt_status st = dt_report_md_string(r, &t, &n, &err);
    CHECK_MSG(st == DT_OK, err.msg);
    return t ? t : dt_xstrdup("");
}

static json_t *derived_run(const fx_run *o, int noisy_case, int invalid_case) {
    json_t *r = fx_results(o);
    fx_add_case(r, o, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(r, o, "softmax_1x127", 10.0, 10.0, 0.02, 1);
    if (noisy_case)
        fx_add_case(r, o, "sum_127x193", 9.0, 10.0, 0.4, 1);
    if (invalid_case)
        fx_add_case(r, o, "gemm_fail", 5.0, 10.0, 0.02, 0);
    dt_err err = {{0}};
    dt_status st = dt_derive(r, &err);
    CHECK_MSG(st == DT_OK, err.msg);
    return r;
}

static void test_levels(void) {
    /* comparative: cpu, enough samples and rounds, quiet */
    json_t *r = derived_run(&CPU_OK, 0, 0);
    CHECK_MSG(strcmp(level_of(r), "comparative") == 0, level_of(r));
    json_decref(r);
    /* comparative on cuda with device scopes and probe/control 1.02 */
    r = derived_run(&CUDA_OK, 0, 0);
    CHECK_MSG(strcmp(level_of(r), "comparative") == 0, level_of(r));
    json_decref(r);

    /* smoke: 3 samples, 1 round */
    fx_run o = CPU_OK;
    o.samples = 3;
    o.rounds = 1;
    r = derived_run(&o, 0, 0);
    CHECK(strcmp(level_of(r), "smoke") == 0);
    CHECK(reason_has(r, "add_17x257 e2e_batch: too few samples (native 3, torch 3; need 5)"));
    CHECK(reason_has(r, "1 round"));
    json_decref(r);
    /* smoke: cuda run without device control */
    o = CUDA_OK;
    o.device = 0;
    r = derived_run(&o, 0, 0);
    CHECK(strcmp(level_of(r), "smoke") == 0);
    CHECK(reason_has(r, "add_17x257: no device control"));
    json_decref(r);
    /* smoke: incomplete run */
    o = CPU_OK;
    o.complete = 0;
    r = derived_run(&o, 0, 0);
    CHECK(strcmp(level_of(r), "smoke") == 0);
    CHECK(reason_has(r, "incomplete"));
    json_decref(r);

    /* method audit: a noisy case */
    r = derived_run(&CPU_OK, 1, 0);
    CHECK_MSG(strcmp(level_of(r), "method audit") == 0, level_of(r));
    CHECK(reason_has(r, "sum_127x193 e2e_batch: noise IQR/p50 above 10% (native "));
    /* the noisy case's e2e ratio must not be "faster" (true ratio 0.9, wide interval) */
    const json_t *sc = scope_of(json_array_get(json_object_get(r, "cases"), 2), "e2e_batch");
    CHECK(strcmp(json_string_value(json_object_get(sc, "verdict")), "faster") != 0);
    json_decref(r);
    /* method audit: probe perturbs by 30% */
    o = CUDA_OK;
    o.probe_factor = 1.3;
    r = derived_run(&o, 0, 0);
    CHECK(strcmp(level_of(r), "method audit") == 0);
    CHECK(reason_has(r, "add_17x257: native probe/control 1.300"));
    json_decref(r);
    /* method audit: clocks moved */
    r = fx_results(&CPU_OK);
    json_t *c = fx_add_case(r, &CPU_OK, "add_1x127", 6.0, 10.0, 0.02, 1);
    json_object_set_new(c, "clocks_moved", json_true());
    dt_err err;
    CHECK(dt_derive(r, &err) == DT_OK);
    CHECK(strcmp(level_of(r), "method audit") == 0);
    CHECK(reason_has(r, "add_1x127: GPU clocks moved"));
    json_decref(r);

    /* the reason list is capped */
    o = CPU_OK;
    o.samples = 2;
    r = fx_results(&o);
    for (int i = 0; i < 30; i++) {
        char id[32];
        snprintf(id, sizeof id, "case_%02d", i);
        fx_add_case(r, &o, id, 6.0, 10.0, 0.02, 1);
    }
    CHECK(dt_derive(r, &err) == DT_OK);
    const json_t *rs = json_object_get(json_object_get(json_object_get(r, "derived"), "assessment"), "reasons");
    CHECK(json_array_size(rs) == DT_DERIVE_MAX_REASONS + 1);
    CHECK(strstr(json_string_value(json_array_get(rs, DT_DERIVE_MAX_REASONS)), "... and ") != NULL);
    json_decref(r);
}

static void test_verdicts_and_md(void) {
    json_t *r = derived_run(&CUDA_OK, 0, 1);
    const json_t *cases = json_object_get(r, "cases");
    const json_t *fast = scope_of(json_array_get(cases, 0), "e2e_batch");
    const json_t *ratio = json_object_get(fast, "ratio");
    CHECK(strcmp(json_string_value(json_object_get(fast, "verdict")), "faster") == 0);
    double med = json_number_value(json_object_get(ratio, "median"));
    CHECK(med > 0.57 && med < 0.63);
    CHECK(json_integer_value(json_object_get(ratio, "pairs")) == 18);
    CHECK(json_integer_value(json_object_get(json_object_get(fast, "native"), "n")) == 18);
    const json_t *same = scope_of(json_array_get(cases, 1), "e2e_batch");
    CHECK(strcmp(json_string_value(json_object_get(same, "verdict")), "indistinguishable") == 0);
    const json_t *bad = scope_of(json_array_get(cases, 2), "e2e_batch");
    CHECK(strcmp(json_string_value(json_object_get(bad, "verdict")), "invalid") == 0);
    CHECK(json_object_get(bad, "ratio") == NULL);
    /* invalid cases do not stop a comparative assessment of the others */
    CHECK(strcmp(level_of(r), "comparative") == 0);
    const json_t *pb = scope_of(json_array_get(cases, 0), "probe_batch");
    double poc = json_number_value(
        json_object_get(json_object_get(json_object_get(pb, "probe_over_control"), "torch"), "median"));
    CHECK(fabs(poc - 1.02) < 1e-9);
    const json_t *ks = json_object_get(json_object_get(json_object_get(pb, "probe"), "native"), "kernels");
    CHECK(json_array_size(ks) == 2);
    CHECK(strstr(json_string_value(json_object_get(json_array_get(ks, 0), "name")), "add_kernel"));

    char *md = md_of(r);
    CHECK(strncmp(md, "# dualtime results: native vs torch\n\nAssessment: **comparative** — ", 67) == 0);
    CHECK(strstr(md, "## What was run") != NULL);
    CHECK(strstr(md, "pytorch 1.13.1") != NULL);
    CHECK(strstr(md, "| Case | native E2E batch p50 | torch p50 | native p90 | torch p90 | "
                     "native single p50 | torch single p50 | Ratio [95% CI] | Verdict |") != NULL);
    CHECK(strstr(md, "| gemm\\_fail | — | — | — | — | — | — | FAILED | invalid |") != NULL);
    CHECK(strstr(md, "**faster**") != NULL);
    CHECK(strstr(md, "## Setup and cold-call phases (ms)") != NULL);
    CHECK(strstr(md, "## Correctness") != NULL);
    CHECK(strstr(md, "## Device control") != NULL);
    CHECK(strstr(md, "## Kernel probe diagnostics") != NULL);
    /* kernel name escaped: no raw HTML, no cell break */
    CHECK(strstr(md, "add\\_kernel&lt;float&gt;(float\\*, int\\|x)") != NULL);
    CHECK(strstr(md, "## Failures") != NULL);
    CHECK(strstr(md, "### gemm\\_fail — native") != NULL);
    CHECK(strstr(md, "worker crashed (signal 11)") != NULL);
    CHECK(strstr(md, "````\nSegmentation fault\nline with ``` fence | pipe\n````") != NULL);
    CHECK(strstr(md, "## What these numbers do not establish") != NULL);
    CHECK(strstr(md, "CUPTI, which perturbs") != NULL);
    free(md);
    json_decref(r);

    /* framework ids come from the JSON, not from the code */
    fx_run o = CPU_OK;
    o.cand_id = "mine";
    o.base_id = "theirs";
    r = derived_run(&o, 0, 0);
    CHECK(strcmp(level_of(r), "comparative") == 0);
    md = md_of(r);
    CHECK(strstr(md, "# dualtime results: mine vs theirs") != NULL);
    CHECK(strstr(md, "| mine E2E batch p50 | theirs p50 |") != NULL);
    CHECK(strstr(md, "| torch") == NULL && strstr(md, "native E2E") == NULL);
    CHECK(strstr(md, "## Device control") == NULL); /* no device scopes on cpu */
    free(md);
    json_decref(r);
}

/* probe/control is a median over (round, index) pairs, not a ratio of medians, and
 * pairing follows the keys, not the storage order. */
static void test_probe_pairs(void) {
    fx_run o = CUDA_OK;
    json_t *r = fx_results(&o);
    json_t *c = fx_add_case(r, &o, "add_1x1", 5.0, 5.0, 0.01, 1);
    json_t *sm = json_object_get(json_object_get(json_object_get(c, "impl"), "native"), "samples");
    json_object_set_new(sm, "control_batch",
                        json_pack("[{s:f,s:i,s:i,s:i},{s:f,s:i,s:i,s:i},{s:f,s:i,s:i,s:i}]",
                                  "us", 1.0, "round", 0, "index", 0, "position", 100, "us", 10.0,
                                  "round", 0, "index", 1, "position", 102, "us", 100.0, "round",
                                  0, "index", 2, "position", 104));
    json_object_set_new(sm, "probe_batch",
                        json_pack("[{s:f,s:i,s:i,s:i},{s:f,s:i,s:i,s:i},{s:f,s:i,s:i,s:i}]",
                                  "us", 150.0, "round", 0, "index", 2, "position", 105, "us", 1.1,
                                  "round", 0, "index", 0, "position", 101, "us", 30.0, "round",
                                  0, "index", 1, "position", 103));
    dt_err err;
    CHECK(dt_derive(r, &err) == DT_OK);
    const json_t *e = json_object_get(
        json_object_get(scope_of(c, "probe_batch"), "probe_over_control"), "native");
    /* pairs: 1.1/1, 30/10, 150/100 -> 1.1, 3, 1.5 -> median 1.5 (ratio of medians: 3) */
    CHECK(fabs(json_number_value(json_object_get(e, "median")) - 1.5) < 1e-12);
    CHECK(json_integer_value(json_object_get(e, "pairs")) == 3);
    CHECK(reason_has(r, "add_1x1: native probe/control 1.500"));
    json_decref(r);
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n + 4096 > cap) {
            cap = cap * 2 + 8192;
            buf = realloc(buf, cap);
        }
        size_t k = fread(buf + *n, 1, cap - *n - 1, f);
        *n += k;
        if (k == 0)
            break;
    }
    fclose(f);
    buf[*n] = 0;
    return buf;
}

static void spit(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

static void test_regenerate(const char *dir) {
    json_t *r = derived_run(&CUDA_OK, 1, 1);
    char jpath[512], md1[512], md2[512];
    snprintf(jpath, sizeof jpath, "%s/results.json", dir);
    snprintf(md1, sizeof md1, "%s/results.md", dir);
    snprintf(md2, sizeof md2, "%s/results2.md", dir);
    dt_err err = {{0}};
    CHECK_MSG(dt_results_write_atomic(r, jpath, &err) == DT_OK, err.msg);
    char *m1 = md_of(r);
    spit(md1, m1);
    CHECK_MSG(dt_report_regenerate(jpath, md2, &err) == DT_OK, err.msg);
    size_t n2 = 0;
    char *m2 = slurp(md2, &n2);
    CHECK(m2 != NULL && strlen(m1) == n2 && memcmp(m1, m2, n2) == 0);
    /* the loaded JSON derives to exactly the same derived objects */
    json_t *back = NULL;
    CHECK_MSG(dt_results_load(jpath, &back, &err) == DT_OK, err.msg);
    if (back) {
        CHECK(dt_derive(back, &err) == DT_OK);
        CHECK(json_equal(back, r));
        json_decref(back);
    }
    /* no temporary files are left behind */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q tmp", dir);
    CHECK(system(cmd) != 0);
    free(m1);
    free(m2);
    json_decref(r);
}

/* Writes text to dir/bad.json and expects the loader to refuse it with a message
 * containing needle. */
static void expect_refusal(const char *dir, const char *text, const char *needle) {
    char path[512];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    spit(path, text);
    json_t *r = NULL;
    dt_err err = {{0}};
    dt_status st = dt_results_load(path, &r, &err);
    CHECK_MSG(st != DT_OK && r == NULL, needle);
    CHECK_MSG(strstr(err.msg, needle) != NULL, err.msg);
}

static char *dump(const json_t *r) { return json_dumps(r, JSON_INDENT(1)); }

static void test_loader(const char *dir) {
    json_t *r = derived_run(&CPU_OK, 0, 0);
    char *good = dump(r);
    size_t n = strlen(good);
    char *half = dt_xstrdup(good);
    half[n / 2] = 0;
    expect_refusal(dir, half, "not valid JSON (line");
    expect_refusal(dir, "", "not valid JSON");
    expect_refusal(dir, "[1, 2]", "top level must be a JSON object, found an array");
    expect_refusal(dir, "{\"hello\": 1}", "no \"format\" string");

    json_t *x = json_deep_copy(r);
    json_object_set_new(x, "format", json_string("other-tool"));
    char *t = dump(x);
    expect_refusal(dir, t, "format is \"other-tool\", expected \"dualtime-results\"");
    free(t);
    json_decref(x);

    x = json_deep_copy(r);
    json_object_set_new(x, "format_version", json_integer(7));
    t = dump(x);
    expect_refusal(dir, t, "unsupported format_version 7");
    free(t);
    json_decref(x);

    x = json_deep_copy(r);
    json_object_del(x, "cases");
    t = dump(x);
    expect_refusal(dir, t, "cases must be an array, found nothing (missing)");
    free(t);
    json_decref(x);

    x = json_deep_copy(r);
    json_t *s0 = json_array_get(json_object_get(json_object_get(json_object_get(
        json_object_get(json_array_get(json_object_get(x, "cases"), 1), "impl"), "torch"),
        "samples"), "e2e_batch"), 3);
    json_object_set_new(s0, "us", json_string("3.5"));
    t = dump(x);
    expect_refusal(dir, t, "cases[1] (softmax_1x127).impl.torch.samples.e2e_batch[3].us must be "
                           "a number, found a string");
    json_object_set_new(s0, "us", json_real(-1.0));
    free(t);
    t = dump(x);
    expect_refusal(dir, t, "e2e_batch[3].us must be finite and >= 0");
    free(t);
    json_decref(x);

    x = json_deep_copy(r);
    json_object_set_new(json_array_get(json_object_get(x, "frameworks"), 1), "role",
                        json_string("candidate"));
    t = dump(x);
    expect_refusal(dir, t, "exactly one candidate and one baseline, found 2 candidate(s)");
    free(t);
    json_decref(x);

    x = json_deep_copy(r);
    json_object_del(json_array_get(json_object_get(x, "cases"), 0), "op");
    t = dump(x);
    expect_refusal(dir, t, "cases[0].op must be a non-empty string");
    free(t);
    json_decref(x);

    x = json_deep_copy(r);
    json_object_set_new(json_array_get(json_object_get(x, "cases"), 0), "impl", json_integer(3));
    t = dump(x);
    expect_refusal(dir, t, ".impl must be an object, found an integer");
    free(t);
    json_decref(x);

    /* the good one loads */
    char path[512];
    snprintf(path, sizeof path, "%s/good.json", dir);
    spit(path, good);
    json_t *back = NULL;
    dt_err err = {{0}};
    CHECK_MSG(dt_results_load(path, &back, &err) == DT_OK, err.msg);
    json_decref(back);
    snprintf(path, sizeof path, "%s/absent.json", dir);
    CHECK(dt_results_load(path, &back, &err) == DT_EIO && strstr(err.msg, "cannot read"));
    free(half);
    free(good);
    json_decref(r);
}

int main(void) {
    char dir[] = "/tmp/dt_test_report.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_levels();
    test_verdicts_and_md();
    test_probe_pairs();
    test_regenerate(dir);
    test_loader(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return fx_summary();
}
