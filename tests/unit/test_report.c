/* test_report.c — derive + results.md + results.json I/O on hand-built results (no GPU):
 * assessment levels (smoke / method audit / comparative), verdicts, probe/control as a
 * median of pairs, Markdown sections and escaping, byte-identical regeneration, and the
 * loader's refusals of malformed input. Run: ctest -R test_report. */
#define _GNU_SOURCE
#include "dt_results_fixture.h"

#include "report/dt_derive.h"
#include "report/dt_report_md.h"
#include "report/dt_results_io.h"
#include "dt_clocks_fixture.h" /* cases[].clocks for JSON fixtures */

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

static void test_regenerate_one(const char *dir, int touch);

/* Without ceilings, and with ceilings that carry the optional touch floor. */
static void test_regenerate(const char *dir) {
    test_regenerate_one(dir, 0);
    test_regenerate_one(dir, 1);
}

static void test_regenerate_one(const char *dir, int touch) {
    json_t *r = derived_run(&CUDA_OK, 1, 1);
    char jpath[512], md1[512], md2[512];
    snprintf(jpath, sizeof jpath, "%s/results.json", dir);
    snprintf(md1, sizeof md1, "%s/results.md", dir);
    snprintf(md2, sizeof md2, "%s/results2.md", dir);
    dt_err err = {{0}};
    if (touch) {
        json_object_set_new(json_object_get(r, "environment"), "ceilings",
                            json_pack("{s:f,s:i,s:f,s:f,s:f,s:s,s:s}", "copy_gbps", 20.0,
                                      "copy_bytes", 268435456, "launch_sync_floor_us", 9.0,
                                      "launch_queue_floor_us", 2.0,
                                      "launch_sync_touch_floor_us", 11.0, "method", "hand-made",
                                      "backend", "cuda"));
        CHECK_MSG(dt_derive(r, &err) == DT_OK, err.msg);
    }
    CHECK_MSG(dt_results_write_atomic(r, jpath, &err) == DT_OK, err.msg);
    char *m1 = md_of(r);
    CHECK((strstr(m1, "/ touch floor |") != NULL) == touch);
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
    /* oversized (a sparse file just over the bound) and not a regular file: refused
     * before parsing, with the reason */
    snprintf(path, sizeof path, "%s/huge.json", dir);
    {
        FILE *hf = fopen(path, "w");
        CHECK(hf && ftruncate(fileno(hf), (off_t)DT_RESULTS_MAX_BYTES + 1) == 0);
        if (hf) fclose(hf);
    }
    CHECK(dt_results_load(path, &back, &err) == DT_EINVAL && strstr(err.msg, "is larger than"));
    unlink(path);
    CHECK(dt_results_load(dir, &back, &err) == DT_EINVAL && strstr(err.msg, "not a regular file"));
    free(half);
    free(good);
    json_decref(r);
}

/* ---- GPU clocks section (cases[].clocks from dt_clocks_record) ---- */

static json_t *clk_snap(int sm, int mem, int temp, double power_w, long long mask) {
    json_t *s = json_pack("{s:i,s:i,s:i,s:f,s:I,s:i}", "sm_mhz", sm, "mem_mhz", mem, "temp_c",
                          temp, "power_w", power_w, "throttle_mask", (json_int_t)mask, "pstate", 0);
    json_t *names = json_array();
    if (mask & 0x1)
        json_array_append_new(names, json_string("gpu_idle"));
    if (mask & 0x4)
        json_array_append_new(names, json_string("sw_power_cap"));
    json_object_set_new(s, "throttle_reasons", names);
    return s;
}

static void test_clocks_md(const char *dir) {
    /* steady everywhere: one line with the ranges, no table */
    json_t *r = fx_results(&CUDA_OK);
    json_t *c0 = fx_add_case(r, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    json_t *c1 = fx_add_case(r, &CUDA_OK, "softmax_1x127", 10.0, 10.0, 0.02, 1);
    json_object_set_new(json_object_get(r, "environment"), "nvml",
                        json_pack("{s:b,s:n}", "available", 1, "reason"));
    for (int round = 0; round < 2; round++) {
        fx_clocks_record(c0, round, clk_snap(1980, 2619, 38, 124.5, 0x1),
                         clk_snap(1980, 2619, 41, 650.0, 0));
        fx_clocks_record(c1, round, clk_snap(1975, 2619, 41, 300.0, 0),
                         clk_snap(1980, 2619, 45, 612.0, 0x1));
    }
    dt_err err = {{0}};
    CHECK_MSG(dt_derive(r, &err) == DT_OK, err.msg);
    CHECK_MSG(strcmp(level_of(r), "comparative") == 0, level_of(r));
    char *md = md_of(r);
    CHECK(strstr(md, "## GPU clocks (NVML)\n\nClocks steady in all 2 cases with readings (8 "
                     "readings): SM 1975–1980 MHz, memory 2619 MHz, 38–45 °C, 124–650 W; no "
                     "throttle reasons besides GPU idle and application clocks.\n\n") != NULL);
    CHECK(strstr(md, "| Case | SM MHz |") == NULL);
    /* the section sits after the device sections and before the failures */
    CHECK(strstr(md, "## GPU clocks") > strstr(md, "## Kernel probe diagnostics") &&
          strstr(md, "## GPU clocks") < strstr(md, "## Failures"));
    free(md);

    /* the clocks survive a write and a load unchanged */
    char jpath[512];
    snprintf(jpath, sizeof jpath, "%s/clocks.json", dir);
    CHECK_MSG(dt_results_write_atomic(r, jpath, &err) == DT_OK, err.msg);
    json_t *back = NULL;
    CHECK_MSG(dt_results_load(jpath, &back, &err) == DT_OK, err.msg);
    CHECK(back && json_equal(json_object_get(json_array_get(json_object_get(back, "cases"), 0), "clocks"),
                             json_object_get(c0, "clocks")));
    json_decref(back);

    /* one round of one case moved: a table, the moved row says why, method audit */
    fx_clocks_record(c0, 2, clk_snap(1980, 2619, 40, 300.0, 0),
                     clk_snap(1755, 2619, 52, 690.0, 0x4));
    CHECK(dt_derive(r, &err) == DT_OK);
    CHECK_MSG(strcmp(level_of(r), "method audit") == 0, level_of(r));
    CHECK(reason_has(r, "add_17x257: GPU clocks moved"));
    md = md_of(r);
    CHECK(strstr(md, "| Case | SM MHz | Memory MHz | Temp °C | Power W | Throttle reasons | "
                     "Moved |\n|---|---|---|---|---|---|---|\n") != NULL);
    CHECK_MSG(strstr(md, "| add\\_17x257 | 1980→1755 | 2619→2619 | 40→52 | 300→690 | "
                         "none→sw\\_power\\_cap | **yes** (round 2; 1 of 3 rounds): SM clock "
                         "1980→1755 MHz (-11.4%); temperature rose 40→52 °C; after: "
                         "sw\\_power\\_cap |\n") != NULL, md);
    CHECK(strstr(md, "| softmax\\_1x127 | 1975→1980 | 2619→2619 | 41→45 | 300→612 | "
                     "none→gpu\\_idle | no |\n") != NULL);
    CHECK(strstr(md, "Clocks steady") == NULL);
    free(md);
    json_decref(r);

    /* NVML absent on a cuda run: one line with the reason */
    r = fx_results(&CUDA_OK);
    fx_add_case(r, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    json_object_set_new(json_object_get(r, "environment"), "nvml",
                        json_pack("{s:b,s:s}", "available", 0, "reason",
                                  "NVML not found (tried libnvidia-ml.so.1)"));
    CHECK(dt_derive(r, &err) == DT_OK);
    md = md_of(r);
    CHECK(strstr(md, "## GPU clocks (NVML)\n\nNot read: NVML not found (tried "
                     "libnvidia-ml.so.1).\n\n") != NULL);
    free(md);
    json_decref(r);

    /* a cpu run has no clocks section */
    r = derived_run(&CPU_OK, 0, 0);
    md = md_of(r);
    CHECK(strstr(md, "GPU clocks") == NULL);
    free(md);
    json_decref(r);
}

/* ---- rooflines: environment.ceilings -> cases[].derived.roofline and the section ---- */

static const json_t *roof_of(const json_t *c) {
    return json_object_get(json_object_get(c, "derived"), "roofline");
}

static double roof_num(const json_t *c, const char *fw, const char *key) {
    return json_number_value(json_object_get(json_object_get(json_object_get(roof_of(c), "impl"), fw), key));
}

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

/* Sets op and shape of a fixture case (fx_add_case makes add 17x257). */
static void set_shape(json_t *c, const char *op, int m, int n, int k) {
    json_object_set_new(c, "op", json_string(op));
    json_object_set_new(c, "m", json_integer(m));
    json_object_set_new(c, "n", json_integer(n));
    json_object_set_new(c, "k", json_integer(k));
}

static json_t *ceilings_fixture(void) {
    return json_pack("{s:f,s:i,s:f,s:f,s:s,s:s}", "copy_gbps", 20.0, "copy_bytes", 268435456,
                     "launch_sync_floor_us", 9.0, "launch_queue_floor_us", 2.0, "method",
                     "hand-made", "backend", "cpu");
}

static void test_roofline(void) {
    /* cpu: host E2E batch time; jitter 0 makes every sample exact */
    fx_run o = CPU_OK;
    json_t *r = fx_results(&o);
    json_object_set_new(json_object_get(r, "environment"), "ceilings", ceilings_fixture());
    json_t *small = fx_add_case(r, &o, "add_17x257", 6.0, 10.0, 0.0, 1);
    json_t *big = fx_add_case(r, &o, "add_1024x1024", 6.0, 10.0, 0.0, 1);
    set_shape(big, "add", 1024, 1024, 0);
    json_t *gemm = fx_add_case(r, &o, "gemm_64x64x64", 6.0, 10.0, 0.0, 1);
    set_shape(gemm, "gemm", 64, 64, 64);
    fx_add_case(r, &o, "add_fail", 6.0, 10.0, 0.0, 0);
    dt_err err = {{0}};
    CHECK_MSG(dt_derive(r, &err) == DT_OK, err.msg);

    /* add 17x257: a, b, out of 17*257 floats = 52428 bytes */
    const json_t *rl = roof_of(small);
    CHECK(rl != NULL);
    CHECK(json_number_value(json_object_get(rl, "min_bytes")) == 52428.0);
    CHECK(strcmp(json_string_value(json_object_get(rl, "bound")), "memory") == 0);
    CHECK(json_number_value(json_object_get(rl, "copy_gbps")) == 20.0);
    CHECK(strcmp(json_string_value(json_object_get(
                     json_object_get(json_object_get(rl, "impl"), "native"), "scope")),
                 "e2e_batch") == 0);
    CHECK(near(roof_num(small, "native", "us"), 6.0));
    CHECK(near(roof_num(small, "native", "gbps"), 52428.0 / 6000.0));        /* 8.738 GB/s */
    CHECK(near(roof_num(small, "native", "copy_pct"), 100 * 52428.0 / 6000.0 / 20.0));
    CHECK(near(roof_num(small, "torch", "gbps"), 52428.0 / 10000.0));        /* 5.243 GB/s */
    CHECK(near(roof_num(small, "torch", "copy_pct"), 100 * 5.2428 / 20.0));  /* 26.2% */
    CHECK(near(roof_num(small, "native", "tflops"), 17.0 * 257 / 6e6));
    /* E2E floor: single p50 = 3 x batch = 18 and 30 us over a 9 us floor */
    const json_t *ef = json_object_get(json_object_get(small, "derived"), "e2e_floor");
    CHECK(ef != NULL);
    CHECK(json_number_value(json_object_get(ef, "floor_us")) == 9.0);
    CHECK(near(json_number_value(json_object_get(json_object_get(ef, "native"), "over_floor")), 2.0));
    CHECK(near(json_number_value(json_object_get(json_object_get(ef, "torch"), "single_us")), 30.0));
    /* 1024x1024 is not small: no floor row */
    CHECK(roof_of(big) != NULL &&
          json_object_get(json_object_get(big, "derived"), "e2e_floor") == NULL);
    CHECK(near(roof_num(big, "native", "gbps"), 3.0 * 1024 * 1024 * 4 / 6000.0));
    /* gemm: compute bound, TFLOP/s = 2*64^3 / 6 us, no copy percentage */
    CHECK(strcmp(json_string_value(json_object_get(roof_of(gemm), "bound")), "compute") == 0);
    CHECK(near(roof_num(gemm, "native", "tflops"), 2.0 * 64 * 64 * 64 / 6e6));
    CHECK(json_object_get(json_object_get(json_object_get(roof_of(gemm), "impl"), "native"),
                          "copy_pct") == NULL);
    /* invalid case: nothing derived */
    CHECK(roof_of(json_array_get(json_object_get(r, "cases"), 3)) == NULL);

    char *md = md_of(r);
    CHECK(strstr(md, "## Rooflines (against ceilings measured in this run)") != NULL);
    CHECK(strstr(md, "copy bandwidth **20.0 GB/s**") != NULL);
    CHECK(strstr(md, "| add\\_17x257 | native | host E2E batch | 6.00 | 51.2 KiB | 8.74 | 43.7% | — |") != NULL);
    CHECK(strstr(md, "| add\\_17x257 | torch | host E2E batch | 10.0 | 51.2 KiB | 5.24 | 26.2% | — |") != NULL);
    CHECK(strstr(md, "| gemm\\_64x64x64 | native | host E2E batch | 6.00 | 48.0 KiB | — | — | 0.0874 |") != NULL);
    CHECK(strstr(md, "| add\\_fail | native | FAILED |") != NULL);
    CHECK(strstr(md, "## E2E floor") != NULL);
    CHECK(strstr(md, "Launch+sync floor: **9.00 µs**") != NULL);
    CHECK(strstr(md, "| add\\_17x257 | 18.0 | 2.00 | 30.0 | 3.33 |") != NULL);
    CHECK(strstr(md, "| add\\_1024x1024 | 18.0") == NULL);
    /* no touch floor in these ceilings: the table as before, no touch column or text */
    CHECK(strstr(md, "| Case | native single p50 µs | native / floor | torch single p50 µs | "
                     "torch / floor |\n|---|---:|---:|---:|---:|\n") != NULL);
    CHECK(strstr(md, "touch") == NULL);
    CHECK(json_object_get(ef, "touch_floor_us") == NULL);
    CHECK(json_object_get(json_object_get(ef, "native"), "over_touch_floor") == NULL);
    free(md);
    json_decref(r);

    /* with the optional touch floor (12 us): derived multiples, the sentence, a column
     * per framework */
    o = CPU_OK;
    r = fx_results(&o);
    json_t *ct = ceilings_fixture();
    json_object_set_new(ct, "launch_sync_touch_floor_us", json_real(12.0));
    json_object_set_new(json_object_get(r, "environment"), "ceilings", ct);
    small = fx_add_case(r, &o, "add_17x257", 6.0, 10.0, 0.0, 1);
    big = fx_add_case(r, &o, "add_1024x1024", 6.0, 10.0, 0.0, 1);
    set_shape(big, "add", 1024, 1024, 0);
    CHECK_MSG(dt_derive(r, &err) == DT_OK, err.msg);
    ef = json_object_get(json_object_get(small, "derived"), "e2e_floor");
    CHECK(json_number_value(json_object_get(ef, "touch_floor_us")) == 12.0);
    CHECK(near(json_number_value(json_object_get(json_object_get(ef, "native"), "over_touch_floor")), 1.5));
    CHECK(near(json_number_value(json_object_get(json_object_get(ef, "torch"), "over_touch_floor")), 2.5));
    CHECK(near(json_number_value(json_object_get(json_object_get(ef, "native"), "over_floor")), 2.0));
    md = md_of(r);
    CHECK(strstr(md, "; touch floor, a one-block kernel that reads and writes 512 B (CPU: a "
                     "call that copies 512 B): **12.0 µs**.") != NULL);
    CHECK(strstr(md, "Touch floor: **12.0 µs**, the host time of one synchronized call of a "
                     "one-block kernel that reads and writes 512 B") != NULL);
    CHECK(strstr(md, "| Case | native single p50 µs | native / floor | native / touch floor | "
                     "torch single p50 µs | torch / floor | torch / touch floor |\n"
                     "|---|---:|---:|---:|---:|---:|---:|\n") != NULL);
    CHECK(strstr(md, "| add\\_17x257 | 18.0 | 2.00 | 1.50 | 30.0 | 3.33 | 2.50 |\n") != NULL);
    CHECK(strstr(md, "| add\\_1024x1024 | 18.0") == NULL);
    free(md);
    json_decref(r);

    /* cuda with device control: the control batch p50 (0.8 x 6 us) is the time */
    o = CUDA_OK;
    r = fx_results(&o);
    json_object_set_new(json_object_get(r, "environment"), "ceilings", ceilings_fixture());
    small = fx_add_case(r, &o, "add_17x257", 6.0, 10.0, 0.0, 1);
    CHECK_MSG(dt_derive(r, &err) == DT_OK, err.msg);
    CHECK(near(roof_num(small, "native", "us"), 4.8));
    CHECK(near(roof_num(small, "native", "gbps"), 52428.0 / 4800.0));
    CHECK(strcmp(json_string_value(json_object_get(
                     json_object_get(json_object_get(roof_of(small), "impl"), "torch"), "scope")),
                 "control_batch") == 0);
    md = md_of(r);
    CHECK(strstr(md, "| add\\_17x257 | native | device control batch | 4.80 |") != NULL);
    free(md);
    json_decref(r);

    /* no ceilings, or a failed measurement: no roofline, no section */
    for (int v = 0; v < 2; v++) {
        o = CPU_OK;
        r = fx_results(&o);
        if (v)
            json_object_set_new(json_object_get(r, "environment"), "ceilings",
                                json_pack("{s:s}", "error", "not offered"));
        small = fx_add_case(r, &o, "add_17x257", 6.0, 10.0, 0.0, 1);
        CHECK_MSG(dt_derive(r, &err) == DT_OK, err.msg);
        CHECK(roof_of(small) == NULL);
        md = md_of(r);
        CHECK(strstr(md, "Rooflines") == NULL);
        CHECK(strstr(md, "E2E floor") == NULL);
        free(md);
        json_decref(r);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double sorted_median(const double *v, size_t n) {
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Paired floor samples (cases[].floor): the E2E floor multiple is the median of the
 * paired ratios single / floor of the same (round, index), with an interval; an unpaired
 * floor sample is left out; no ceilings are needed; the section says how it was made. */
static void test_paired_floor(void) {
    fx_run o = CPU_OK;
    json_t *r = fx_results(&o);
    json_t *c = fx_add_case(r, &o, "add_17x257", 6.0, 10.0, 0.02, 1);
    const json_t *singles[2] = {
        json_object_get(json_object_get(json_object_get(json_object_get(c, "impl"), "native"),
                                        "samples"), "e2e_single"),
        json_object_get(json_object_get(json_object_get(json_object_get(c, "impl"), "torch"),
                                        "samples"), "e2e_single")};
    size_t n = json_array_size(singles[0]);
    CHECK(n >= 5 && n <= 60);
    /* floor sample i = native single i / (1.02 + 0.01 * ((i * 7) % n)): known ratios */
    json_t *fs = json_array();
    double want[2][64], fl[64];
    for (size_t i = 0; i < n; i++) {
        const json_t *s0 = json_array_get(singles[0], i);
        double ratio = 1.02 + 0.01 * (double)((i * 7) % n);
        fl[i] = json_number_value(json_object_get(s0, "us")) / ratio;
        json_array_append_new(fs, json_pack("{s:f,s:O,s:O,s:i}", "us", fl[i], "round",
                                            json_object_get(s0, "round"), "index",
                                            json_object_get(s0, "index"), "position", 1000 + (int)i));
        for (int f = 0; f < 2; f++)
            want[f][i] = json_number_value(json_object_get(json_array_get(singles[f], i), "us")) /
                         fl[i];
    }
    /* a floor sample with no single sample of its index: must not be paired */
    json_array_append_new(fs, json_pack("{s:f,s:i,s:i,s:i}", "us", 1e-3, "round", 0, "index",
                                        999, "position", 2000));
    json_object_set_new(c, "floor", json_pack("{s:s,s:o}", "worker", "native", "samples", fs));
    dt_err err = {{0}};
    CHECK_MSG(dt_derive(r, &err) == DT_OK, err.msg);
    const json_t *ef = json_object_get(json_object_get(c, "derived"), "e2e_floor");
    CHECK(ef != NULL);
    CHECK(strcmp(json_string_value(json_object_get(ef, "floor_source")), "paired") == 0);
    for (int f = 0; f < 2; f++) {
        qsort(want[f], n, sizeof want[f][0], cmp_double);
        const json_t *e = json_object_get(ef, f ? "torch" : "native");
        const json_t *q = json_object_get(e, "over_floor_ratio");
        CHECK(q != NULL);
        CHECK(json_integer_value(json_object_get(q, "pairs")) == (json_int_t)n);
        double med = json_number_value(json_object_get(q, "median"));
        CHECK(near(med, sorted_median(want[f], n)));
        CHECK(near(json_number_value(json_object_get(e, "over_floor")), med));
        CHECK(json_number_value(json_object_get(q, "ci_low")) <= med &&
              med <= json_number_value(json_object_get(q, "ci_high")));
    }
    /* the native ratios are 1.02 + 0.01 k for k = (7 i) mod n: with n coprime to 7 they are
     * 1.02 .. 1.02 + 0.01 (n - 1), median 1.02 + 0.01 (n - 1) / 2 */
    if (n % 7)
        CHECK(near(sorted_median(want[0], n), 1.02 + 0.01 * (double)(n - 1) / 2));
    fl[n] = 1e-3; /* the unpaired one counts for the case's floor median */
    qsort(fl, n + 1, sizeof fl[0], cmp_double);
    CHECK(near(json_number_value(json_object_get(ef, "case_floor_us")), sorted_median(fl, n + 1)));
    char *md = md_of(r);
    CHECK(strstr(md, "## E2E floor") != NULL);
    CHECK(strstr(md, "Each case measured its own floor") != NULL);
    CHECK(strstr(md, "| Case | floor p50 µs | native single p50 µs | native / floor |") != NULL);
    CHECK(strstr(md, "Launch+sync floor:") == NULL); /* no ceilings in this run */
    free(md);
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
    test_roofline();
    test_paired_floor();
    test_clocks_md(dir);
    test_regenerate(dir);
    test_loader(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return fx_summary();
}
