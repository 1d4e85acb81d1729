/* test_report.c — the typed path on hand-built results (no GPU): a fixture results.json is
 * decoded by the codec (dt_record_decode), derived (dt_derive_run) and formatted
 * (dt_format_md). Assessment levels (smoke / method audit / comparative), verdicts,
 * probe/control as a median of pairs, rooflines and E2E floors, GPU clocks, Markdown
 * sections and escaping, prose thresholds read from the record's policy, any number of
 * implementations, byte-identical regeneration from a saved results.json, and the
 * loader's refusals of malformed input. Run: ctest -R test_report. */
#define _GNU_SOURCE
#include "dt_results_fixture.h"

#include "format/dt_format_md.h"
#include "dt_clocks_fixture.h" /* cases[].clocks for JSON fixtures */
#include "orchestrate/dt_clocks.h"
#include "record/dt_file.h"
#include "record/dt_record.h"
#include "record/dt_record_json.h"
#include "stats/dt_derive.h"

#include <unistd.h>

static const fx_run CPU_OK = {.backend = "cpu", .samples = 9, .rounds = 2, .complete = 1,
                              .seed = 11};
static const fx_run CUDA_OK = {.backend = "cuda", .samples = 9, .rounds = 2, .complete = 1,
                               .device = 1, .probe_factor = 1.02, .seed = 12};

static const char *level_of(const dt_record *r) {
    return r && r->derived.present ? dt_level_name(r->derived.level) : "unassessed";
}

/* 1 when some reason contains needle. */
static int reason_has(const dt_record *r, const char *needle) {
    for (size_t i = 0; r && i < r->derived.reasons.n; i++)
        if (strstr(r->derived.reasons.v[i], needle))
            return 1;
    return 0;
}

static const dt_scope_derived *scope_of(const dt_case *c, dt_scope s) {
    return c->derived.scopes[s].present ? &c->derived.scopes[s] : NULL;
}

/* Index of an implementation by id (the fixture's ids come from its frameworks). */
static size_t ix(const dt_record *r, const char *id) {
    int i = dt_record_impl_find(r, id);
    CHECK_MSG(i >= 0, id);
    return i < 0 ? 0 : (size_t)i;
}

/* The first candidate's comparison with the baseline in scope s of case c. */
static const dt_scope_vs *vs_of(const dt_case *c, dt_scope s) {
    const dt_scope_derived *sd = scope_of(c, s);
    return sd ? &sd->vs[1] : NULL;
}

static char *md_of(const dt_record *r) {
    char *t = NULL;
    size_t n = 0;
    dt_err err = {{0}};
    dt_status st = r ? dt_format_md(r, &t, &n, &err) : DT_EINVAL;
    CHECK_MSG(st == DT_OK, err.msg);
    CHECK(!t || strlen(t) == n);
    return t ? t : dt_xstrdup("");
}

/* Derives a record; returns it (NULL stays NULL). */
static dt_record *derive(dt_record *r) {
    dt_err err = {{0}};
    CHECK(r != NULL);
    if (r) {
        dt_status st = dt_derive_run(r, &err);
        CHECK_MSG(st == DT_OK, err.msg);
    }
    return r;
}

/* The fixture through the codec and the derive step; the JSON is released. */
static dt_record *typed(json_t *j) {
    dt_record *r = derive(fx_record(j));
    json_decref(j);
    return r;
}

static json_t *fixture_run(const fx_run *o, int noisy_case, int invalid_case) {
    json_t *r = fx_results(o);
    fx_add_case(r, o, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(r, o, "softmax_1x127", 10.0, 10.0, 0.02, 1);
    if (noisy_case)
        fx_add_case(r, o, "sum_127x193", 9.0, 10.0, 0.4, 1);
    if (invalid_case)
        fx_add_case(r, o, "gemm_fail", 5.0, 10.0, 0.02, 0);
    return r;
}

static dt_record *derived_run(const fx_run *o, int noisy_case, int invalid_case) {
    return typed(fixture_run(o, noisy_case, invalid_case));
}

static void test_levels(void) {
    /* comparative: cpu, enough samples and rounds, quiet */
    dt_record *r = derived_run(&CPU_OK, 0, 0);
    CHECK_MSG(strcmp(level_of(r), "comparative") == 0, level_of(r));
    dt_record_free(r);
    /* comparative on cuda with device scopes and probe/control 1.02 */
    r = derived_run(&CUDA_OK, 0, 0);
    CHECK_MSG(strcmp(level_of(r), "comparative") == 0, level_of(r));
    dt_record_free(r);

    /* smoke: 3 samples, 1 round */
    fx_run o = CPU_OK;
    o.samples = 3;
    o.rounds = 1;
    r = derived_run(&o, 0, 0);
    CHECK(strcmp(level_of(r), "smoke") == 0);
    CHECK(reason_has(r, "add_17x257 e2e_batch: too few samples (native 3, torch 3; need 5)"));
    CHECK(reason_has(r, "1 round"));
    dt_record_free(r);
    /* smoke: cuda run without device control */
    o = CUDA_OK;
    o.device = 0;
    r = derived_run(&o, 0, 0);
    CHECK(strcmp(level_of(r), "smoke") == 0);
    CHECK(reason_has(r, "add_17x257: no device control"));
    dt_record_free(r);
    /* smoke: incomplete run */
    o = CPU_OK;
    o.complete = 0;
    r = derived_run(&o, 0, 0);
    CHECK(strcmp(level_of(r), "smoke") == 0);
    CHECK(reason_has(r, "incomplete"));
    dt_record_free(r);

    /* method audit: a noisy case */
    r = derived_run(&CPU_OK, 1, 0);
    CHECK_MSG(strcmp(level_of(r), "method audit") == 0, level_of(r));
    CHECK(reason_has(r, "sum_127x193 e2e_batch: noise IQR/p50 above 10% (native "));
    /* the noisy case's e2e ratio must not be "faster" (true ratio 0.9, wide interval) */
    const dt_scope_vs *sc = r ? vs_of(&r->cases[2], DT_SCOPE_E2E_BATCH) : NULL;
    CHECK(sc && sc->verdict != DT_REC_VERDICT_FASTER);
    dt_record_free(r);
    /* method audit: probe perturbs by 30% */
    o = CUDA_OK;
    o.probe_factor = 1.3;
    r = derived_run(&o, 0, 0);
    /* issue 12: the probe scope is the method audit, not the control or the run (the old
     * report called the run a method audit) */
    CHECK(r && r->derived.scopes[DT_SCOPE_PROBE_BATCH].level == DT_LEVEL_METHOD_AUDIT);
    CHECK(r && r->derived.scopes[DT_SCOPE_CONTROL_BATCH].level == DT_LEVEL_COMPARATIVE);
    CHECK(strcmp(level_of(r), "comparative") == 0);
    CHECK(reason_has(r, "add_17x257: native probe/control 1.300"));
    dt_record_free(r);
    /* method audit: clocks moved (set on the typed case, as the clocks module does) */
    json_t *j = fx_results(&CPU_OK);
    fx_add_case(j, &CPU_OK, "add_1x127", 6.0, 10.0, 0.02, 1);
    r = fx_record(j);
    json_decref(j);
    CHECK(r != NULL);
    if (r)
        r->cases[0].clocks_moved = 1;
    derive(r);
    CHECK(strcmp(level_of(r), "method audit") == 0);
    CHECK(reason_has(r, "add_1x127: GPU clocks moved"));
    dt_record_free(r);

    /* the reason list is capped */
    o = CPU_OK;
    o.samples = 2;
    j = fx_results(&o);
    for (int i = 0; i < 30; i++) {
        char id[32];
        snprintf(id, sizeof id, "case_%02d", i);
        fx_add_case(j, &o, id, 6.0, 10.0, 0.02, 1);
    }
    r = typed(j);
    CHECK(r && r->derived.reasons.n == r->derived.policy.max_reasons + 1);
    CHECK(r && r->derived.policy.max_reasons == 20);
    CHECK(r && r->derived.reasons.n > 20 &&
          strstr(r->derived.reasons.v[r->derived.policy.max_reasons], "... and ") != NULL);
    dt_record_free(r);
}

static void test_verdicts_and_md(void) {
    dt_record *r = derived_run(&CUDA_OK, 0, 1);
    if (!r)
        return;
    size_t nat = ix(r, "native"), tor = ix(r, "torch");
    const dt_scope_vs *fast = vs_of(&r->cases[0], DT_SCOPE_E2E_BATCH);
    CHECK(fast && fast->verdict == DT_REC_VERDICT_FASTER);
    double med = fast ? fast->ratio.median : NAN;
    CHECK(med > 0.57 && med < 0.63);
    CHECK(fast && fast->ratio.pairs == 18);
    CHECK(r->cases[0].derived.scopes[DT_SCOPE_E2E_BATCH].impl[nat].summary.n == 18);
    const dt_scope_vs *same = vs_of(&r->cases[1], DT_SCOPE_E2E_BATCH);
    CHECK(same && same->verdict == DT_REC_VERDICT_INDISTINGUISHABLE);
    const dt_scope_vs *bad = vs_of(&r->cases[2], DT_SCOPE_E2E_BATCH);
    CHECK(bad && bad->verdict == DT_REC_VERDICT_INVALID);
    CHECK(bad && !bad->has_ratio);
    /* invalid cases do not stop a comparative assessment of the others */
    CHECK(strcmp(level_of(r), "comparative") == 0);
    const dt_scope_derived *pb = scope_of(&r->cases[0], DT_SCOPE_PROBE_BATCH);
    CHECK(pb && pb->impl[tor].has_probe_over_control);
    CHECK(pb && fabs(pb->impl[tor].probe_over_control - 1.02) < 1e-9);
    const dt_probe_summary *ks = pb ? &pb->impl[nat].probe : NULL;
    CHECK(ks && ks->present && ks->n_kernels == 2);
    CHECK(ks && ks->n_kernels > 0 && strstr(ks->kernels[0].name, "add_kernel"));

    char *md = md_of(r);
    CHECK(strncmp(md, "# dualtime results: native vs torch\n\nAssessment: **comparative** — ", 67) == 0);
    CHECK(strstr(md, "## What was run") != NULL);
    CHECK(strstr(md, "pytorch 1.13.1") != NULL);
    CHECK(strstr(md, "| Case | native E2E batch p50 | torch p50 | native p90 | torch p90 | "
                     "native single p50 | torch single p50 | Ratio [95% CI] | Verdict |") != NULL);
    CHECK(strstr(md, "| gemm_fail | — | — | — | — | — | — | FAILED | invalid |") != NULL);
    CHECK(strstr(md, "**faster**") != NULL);
    CHECK(strstr(md, "## Setup and cold-call phases (ms)") != NULL);
    CHECK(strstr(md, "## Correctness") != NULL);
    CHECK(strstr(md, "## Device control") != NULL);
    CHECK(strstr(md, "## Kernel probe diagnostics") != NULL);
    /* kernel name escaped: no raw HTML, no cell break */
    CHECK(strstr(md, "| `void add_kernel<float>(float*, int\\|x)` |") != NULL);
    CHECK(strstr(md, "## Failures") != NULL);
    CHECK(strstr(md, "### gemm_fail — native") != NULL);
    CHECK(strstr(md, "worker crashed (signal 11)") != NULL);
    CHECK(strstr(md, "````\nSegmentation fault\nline with ``` fence | pipe\n````") != NULL);
    CHECK(strstr(md, "## What these numbers do not establish") != NULL);
    CHECK(strstr(md, "CUPTI, which perturbs") != NULL);
    free(md);
    dt_record_free(r);

    /* framework ids come from the record, not from the code */
    fx_run o = CPU_OK;
    o.cand_id = "mine";
    o.base_id = "theirs";
    r = derived_run(&o, 0, 0);
    CHECK(strcmp(level_of(r), "comparative") == 0);
    md = md_of(r);
    CHECK(strstr(md, "# dualtime results: mine vs theirs") != NULL);
    CHECK(strstr(md, "\\\nWhy: 2 valid cases, >= 5 samples per scope, 2 rounds, noise <= 10%.\\\n") != NULL);
    CHECK(strstr(md, "| mine E2E batch p50 | theirs p50 |") != NULL);
    CHECK(strstr(md, "| torch") == NULL && strstr(md, "native E2E") == NULL);
    CHECK(strstr(md, "## Device control") == NULL); /* no device scopes on cpu */
    free(md);
    dt_record_free(r);
}

/* issue 13: a probe kernel record with a mangled (CUPTI) name shows its demangled,
 * shortened form in results.md's per-kernel breakdown; results.json keeps the mangled
 * name; an unmangled name is shown as recorded. */
static void test_kernel_names_demangled(void) {
    static const char *mangled = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAF"
                                 "unctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_";
    fx_run o = CUDA_OK;
    json_t *j = fx_results(&o);
    json_t *c = fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.02, 1);
    json_t *pb = json_object_get(
        json_object_get(json_object_get(json_object_get(c, "impl"), "torch"), "samples"),
        "probe_batch");
    size_t i;
    json_t *s;
    json_array_foreach(pb, i, s) {
        json_object_set_new(json_array_get(json_object_get(s, "kernels"), 0), "name",
                            json_string(mangled));
    }
    dt_record *r = typed(j);
    if (!r)
        return;
    char *md = md_of(r);
    CHECK(strstr(md, "| `at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, "
                     "…>` |") != NULL);
    CHECK(strstr(md, mangled) == NULL);
    CHECK(strstr(md, "| `void add_kernel<float>(float*, int\\|x)` |") != NULL); /* native */
    char *t = NULL;
    size_t n = 0;
    dt_err err = {{0}};
    CHECK_MSG(dt_record_encode(r, &t, &n, &err) == DT_OK, err.msg);
    CHECK(t && strstr(t, mangled) != NULL);
    CHECK(t && strstr(t, "vectorized_elementwise_kernel<") == NULL);
    free(t);
    free(md);
    dt_record_free(r);
}

/* probe/control is a median over (round, index) pairs, not a ratio of medians, and
 * pairing follows the keys, not the storage order. */
static void test_probe_pairs(void) {
    fx_run o = CUDA_OK;
    json_t *j = fx_results(&o);
    json_t *c = fx_add_case(j, &o, "add_1x1", 5.0, 5.0, 0.01, 1);
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
    dt_record *r = typed(j);
    if (!r)
        return;
    const dt_scope_derived *pb = scope_of(&r->cases[0], DT_SCOPE_PROBE_BATCH);
    const dt_scope_impl *e = pb ? &pb->impl[ix(r, "native")] : NULL;
    /* pairs: 1.1/1, 30/10, 150/100 -> 1.1, 3, 1.5 -> median 1.5 (ratio of medians: 3) */
    CHECK(e && fabs(e->probe_over_control - 1.5) < 1e-12);
    CHECK(e && e->probe_over_control_pairs == 3);
    CHECK(reason_has(r, "add_1x1: native probe/control 1.500"));
    dt_record_free(r);
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

/* results.json text of a record (NULL on failure, with a failed check). */
static char *encode(const dt_record *r) {
    char *t = NULL;
    size_t n = 0;
    dt_err err = {{0}};
    CHECK_MSG(r && dt_record_encode(r, &t, &n, &err) == DT_OK, err.msg);
    return t;
}

/* `dualtime report` on the typed path: load a results.json, derive again, write
 * results.md atomically. */
static dt_status regenerate(const char *json_path, const char *md_path, dt_err *err) {
    dt_record *r = NULL;
    dt_status st = dt_record_load(json_path, &r, err);
    if (st == DT_OK)
        st = dt_derive_run(r, err);
    char *t = NULL;
    size_t n = 0;
    if (st == DT_OK)
        st = dt_format_md(r, &t, &n, err);
    if (st == DT_OK)
        st = dt_file_write_atomic(md_path, t, n, err);
    free(t);
    dt_record_free(r);
    return st;
}

static void test_regenerate_one(const char *dir, int touch);

/* Without ceilings, and with ceilings that carry the optional touch floor. */
static void test_regenerate(const char *dir) {
    test_regenerate_one(dir, 0);
    test_regenerate_one(dir, 1);
}

static void test_regenerate_one(const char *dir, int touch) {
    json_t *j = fixture_run(&CUDA_OK, 1, 1);
    char jpath[512], md1[512], md2[512];
    snprintf(jpath, sizeof jpath, "%s/results.json", dir);
    snprintf(md1, sizeof md1, "%s/results.md", dir);
    snprintf(md2, sizeof md2, "%s/results2.md", dir);
    dt_err err = {{0}};
    if (touch)
        json_object_set_new(json_object_get(j, "environment"), "ceilings",
                            json_pack("{s:f,s:i,s:f,s:f,s:f,s:s,s:s}", "copy_gbps", 20.0,
                                      "copy_bytes", 268435456, "launch_sync_floor_us", 9.0,
                                      "launch_queue_floor_us", 2.0,
                                      "launch_sync_touch_floor_us", 11.0, "method", "hand-made",
                                      "backend", "cuda"));
    dt_record *r = typed(j);
    CHECK_MSG(r && dt_record_save(r, jpath, &err) == DT_OK, err.msg);
    char *m1 = md_of(r);
    CHECK((strstr(m1, "/ touch floor |") != NULL) == touch);
    spit(md1, m1);
    CHECK_MSG(regenerate(jpath, md2, &err) == DT_OK, err.msg);
    size_t n2 = 0;
    char *m2 = slurp(md2, &n2);
    CHECK(m2 != NULL && strlen(m1) == n2 && memcmp(m1, m2, n2) == 0);
    /* the loaded record derives to exactly the same derived results */
    dt_record *back = NULL;
    CHECK_MSG(dt_record_load(jpath, &back, &err) == DT_OK, err.msg);
    if (back) {
        CHECK(dt_derive_run(back, &err) == DT_OK);
        char *ea = encode(r), *eb = encode(back);
        CHECK(ea && eb && strcmp(ea, eb) == 0);
        free(ea);
        free(eb);
        dt_record_free(back);
    }
    /* no temporary files are left behind */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q tmp", dir);
    CHECK(system(cmd) != 0);
    free(m1);
    free(m2);
    dt_record_free(r);
}

/* Writes text to dir/bad.json and expects the loader to refuse it with a message
 * containing needle. */
static void expect_refusal(const char *dir, const char *text, const char *needle) {
    char path[512];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    spit(path, text);
    dt_record *r = NULL;
    dt_err err = {{0}};
    dt_status st = dt_record_load(path, &r, &err);
    CHECK_MSG(st != DT_OK && r == NULL, needle);
    CHECK_MSG(strstr(err.msg, needle) != NULL, err.msg);
}

static char *dump(const json_t *r) { return json_dumps(r, JSON_INDENT(1)); }

static void test_loader(const char *dir) {
    json_t *r = fixture_run(&CPU_OK, 0, 0);
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
    dt_record *back = NULL;
    dt_err err = {{0}};
    CHECK_MSG(dt_record_load(path, &back, &err) == DT_OK, err.msg);
    dt_record_free(back);
    back = NULL;
    snprintf(path, sizeof path, "%s/absent.json", dir);
    CHECK(dt_record_load(path, &back, &err) == DT_EIO && strstr(err.msg, "cannot read"));
    /* oversized (a sparse file just over the bound) and not a regular file: refused
     * before parsing, with the reason */
    snprintf(path, sizeof path, "%s/huge.json", dir);
    {
        FILE *hf = fopen(path, "w");
        CHECK(hf && ftruncate(fileno(hf), (off_t)DT_RECORD_MAX_BYTES + 1) == 0);
        if (hf) fclose(hf);
    }
    CHECK(dt_record_load(path, &back, &err) == DT_EINVAL && strstr(err.msg, "is larger than"));
    unlink(path);
    CHECK(dt_record_load(dir, &back, &err) == DT_EINVAL && strstr(err.msg, "not a regular file"));
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

static int snap_equal(const dt_clock_snapshot *a, const dt_clock_snapshot *b) {
    int eq = a->sm_mhz == b->sm_mhz && a->mem_mhz == b->mem_mhz && a->temp_c == b->temp_c &&
             a->power_w == b->power_w && a->has_throttle == b->has_throttle &&
             a->throttle_mask == b->throttle_mask && a->pstate == b->pstate &&
             a->throttle_reasons.n == b->throttle_reasons.n;
    for (size_t i = 0; eq && i < a->throttle_reasons.n; i++)
        eq = strcmp(a->throttle_reasons.v[i], b->throttle_reasons.v[i]) == 0;
    return eq;
}

/* Every clock round of two cases is the same. */
static int clocks_equal(const dt_case *a, const dt_case *b) {
    int eq = a->n_clock_rounds == b->n_clock_rounds && a->clocks_moved == b->clocks_moved;
    for (size_t i = 0; eq && i < a->n_clock_rounds; i++) {
        const dt_clock_round *x = &a->clock_rounds[i], *y = &b->clock_rounds[i];
        eq = x->round == y->round && x->moved == y->moved && x->has_before == y->has_before &&
             x->has_after == y->has_after && strcmp(x->why ? x->why : "", y->why ? y->why : "") == 0 &&
             (!x->has_before || snap_equal(&x->before, &y->before)) &&
             (!x->has_after || snap_equal(&x->after, &y->after));
    }
    return eq;
}

static void test_clocks_md(const char *dir) {
    /* steady everywhere: one line with the ranges, no table */
    json_t *j = fx_results(&CUDA_OK);
    json_t *c0 = fx_add_case(j, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    json_t *c1 = fx_add_case(j, &CUDA_OK, "softmax_1x127", 10.0, 10.0, 0.02, 1);
    json_object_set_new(json_object_get(j, "environment"), "nvml",
                        json_pack("{s:b,s:n}", "available", 1, "reason"));
    for (int round = 0; round < 2; round++) {
        fx_clocks_record(c0, round, clk_snap(1980, 2619, 38, 124.5, 0x1),
                         clk_snap(1980, 2619, 41, 650.0, 0));
        fx_clocks_record(c1, round, clk_snap(1975, 2619, 41, 300.0, 0),
                         clk_snap(1980, 2619, 45, 612.0, 0x1));
    }
    dt_record *r = derive(fx_record(j));
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
    dt_err err = {{0}};
    CHECK_MSG(r && dt_record_save(r, jpath, &err) == DT_OK, err.msg);
    dt_record *back = NULL;
    CHECK_MSG(dt_record_load(jpath, &back, &err) == DT_OK, err.msg);
    CHECK(r && back && r->cases[0].n_clock_rounds == 2 && clocks_equal(&back->cases[0], &r->cases[0]));
    dt_record_free(back);
    dt_record_free(r);

    /* one round of one case moved: a table, the moved row says why, method audit */
    fx_clocks_record(c0, 2, clk_snap(1980, 2619, 40, 300.0, 0),
                     clk_snap(1755, 2619, 52, 690.0, 0x4));
    r = typed(j);
    CHECK_MSG(strcmp(level_of(r), "method audit") == 0, level_of(r));
    CHECK(reason_has(r, "add_17x257: GPU clocks moved"));
    md = md_of(r);
    CHECK(strstr(md, "| Case | SM MHz | Memory MHz | Temp °C | Power W | Throttle reasons | "
                     "Moved |\n|---|---|---|---|---|---|---|\n") != NULL);
    CHECK_MSG(strstr(md, "| add_17x257 | 1980→1755 | 2619→2619 | 40→52 | 300→690 | "
                         "none→sw_power_cap | **yes** (round 2; 1 of 3 rounds): SM clock "
                         "1980→1755 MHz (-11.4%); temperature rose 40→52 °C; after: "
                         "sw_power_cap |\n") != NULL, md);
    CHECK(strstr(md, "| softmax_1x127 | 1975→1980 | 2619→2619 | 41→45 | 300→612 | "
                     "none→gpu_idle | no |\n") != NULL);
    CHECK(strstr(md, "Clocks steady") == NULL);
    free(md);
    dt_record_free(r);

    /* NVML absent on a cuda run: one line with the reason */
    j = fx_results(&CUDA_OK);
    fx_add_case(j, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    json_object_set_new(json_object_get(j, "environment"), "nvml",
                        json_pack("{s:b,s:s}", "available", 0, "reason",
                                  "NVML not found (tried libnvidia-ml.so.1)"));
    r = typed(j);
    md = md_of(r);
    CHECK(strstr(md, "## GPU clocks (NVML)\n\nNot read: NVML not found (tried "
                     "libnvidia-ml.so.1).\n\n") != NULL);
    free(md);
    dt_record_free(r);

    /* a cpu run has no clocks section */
    r = derived_run(&CPU_OK, 0, 0);
    md = md_of(r);
    CHECK(strstr(md, "GPU clocks") == NULL);
    free(md);
    dt_record_free(r);
}

/* ---- rooflines: environment.ceilings -> cases[].derived.roofline and the section ---- */

static const dt_roofline *roof_of(const dt_case *c) {
    return c->derived.roofline.present ? &c->derived.roofline : NULL;
}

/* The roofline entry of implementation `id` (NULL when absent). */
static const dt_roofline_impl *roof_impl(const dt_record *r, const dt_case *c, const char *id) {
    const dt_roofline *rl = roof_of(c);
    size_t i = ix(r, id);
    return rl && rl->impl[i].present ? &rl->impl[i] : NULL;
}

static double roof_num(const dt_record *r, const dt_case *c, const char *id, const char *key) {
    const dt_roofline_impl *e = roof_impl(r, c, id);
    if (!e)
        return NAN;
    if (strcmp(key, "us") == 0)
        return e->us;
    if (strcmp(key, "gbps") == 0)
        return e->gbps;
    if (strcmp(key, "copy_pct") == 0)
        return e->copy_pct;
    return e->tflops;
}

static const dt_e2e_floor *floor_of(const dt_case *c) {
    return c->derived.e2e_floor.present ? &c->derived.e2e_floor : NULL;
}

static const dt_e2e_floor_impl *floor_impl(const dt_record *r, const dt_case *c, const char *id) {
    const dt_e2e_floor *ef = floor_of(c);
    size_t i = ix(r, id);
    return ef && ef->impl[i].present ? &ef->impl[i] : NULL;
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

/* A field of the floor entry of an implementation (NAN when absent). */
static double floor_num(const dt_record *r, const dt_case *c, const char *id, const char *key) {
    const dt_e2e_floor_impl *e = floor_impl(r, c, id);
    if (!e)
        return NAN;
    if (strcmp(key, "single_us") == 0)
        return e->single_us;
    if (strcmp(key, "over_floor") == 0)
        return e->over_floor;
    return e->over_touch_floor;
}

static void test_roofline(void) {
    /* cpu: host E2E batch time; jitter 0 makes every sample exact */
    fx_run o = CPU_OK;
    json_t *j = fx_results(&o);
    json_object_set_new(json_object_get(j, "environment"), "ceilings", ceilings_fixture());
    fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.0, 1);
    set_shape(fx_add_case(j, &o, "add_1024x1024", 6.0, 10.0, 0.0, 1), "add", 1024, 1024, 0);
    set_shape(fx_add_case(j, &o, "gemm_64x64x64", 6.0, 10.0, 0.0, 1), "gemm", 64, 64, 64);
    fx_add_case(j, &o, "add_fail", 6.0, 10.0, 0.0, 0);
    dt_record *r = typed(j);
    if (!r)
        return;
    const dt_case *small = &r->cases[0], *big = &r->cases[1], *gemm = &r->cases[2];

    /* add 17x257: a, b, out of 17*257 floats = 52428 bytes */
    const dt_roofline *rl = roof_of(small);
    CHECK(rl != NULL);
    CHECK(rl && rl->min_bytes == 52428.0);
    CHECK(rl && rl->bound == DT_BOUND_MEMORY);
    CHECK(rl && rl->copy_gbps == 20.0);
    CHECK(roof_impl(r, small, "native") && roof_impl(r, small, "native")->scope == DT_SCOPE_E2E_BATCH);
    CHECK(near(roof_num(r, small, "native", "us"), 6.0));
    CHECK(near(roof_num(r, small, "native", "gbps"), 52428.0 / 6000.0));        /* 8.738 GB/s */
    CHECK(near(roof_num(r, small, "native", "copy_pct"), 100 * 52428.0 / 6000.0 / 20.0));
    CHECK(near(roof_num(r, small, "torch", "gbps"), 52428.0 / 10000.0));        /* 5.243 GB/s */
    CHECK(near(roof_num(r, small, "torch", "copy_pct"), 100 * 5.2428 / 20.0));  /* 26.2% */
    CHECK(near(roof_num(r, small, "native", "tflops"), 17.0 * 257 / 6e6));
    /* E2E floor: single p50 = 3 x batch = 18 and 30 us over a 9 us floor */
    const dt_e2e_floor *ef = floor_of(small);
    CHECK(ef != NULL);
    CHECK(ef && ef->floor_us == 9.0);
    CHECK(near(floor_num(r, small, "native", "over_floor"), 2.0));
    CHECK(near(floor_num(r, small, "torch", "single_us"), 30.0));
    /* 1024x1024 is not small: no floor row */
    CHECK(roof_of(big) != NULL && floor_of(big) == NULL);
    CHECK(near(roof_num(r, big, "native", "gbps"), 3.0 * 1024 * 1024 * 4 / 6000.0));
    /* gemm: compute bound, TFLOP/s = 2*64^3 / 6 us, no copy percentage */
    CHECK(roof_of(gemm) && roof_of(gemm)->bound == DT_BOUND_COMPUTE);
    CHECK(near(roof_num(r, gemm, "native", "tflops"), 2.0 * 64 * 64 * 64 / 6e6));
    CHECK(roof_impl(r, gemm, "native") && isnan(roof_impl(r, gemm, "native")->copy_pct));
    /* invalid case: nothing derived */
    CHECK(roof_of(&r->cases[3]) == NULL);

    char *md = md_of(r);
    CHECK(strstr(md, "## Rooflines (against ceilings measured in this run)") != NULL);
    CHECK(strstr(md, "copy bandwidth **20.0 GB/s**") != NULL);
    CHECK(strstr(md, "| add_17x257 | native | host E2E batch | 6.00 | 51.2 KiB | 8.74 | 43.7% | — |") != NULL);
    CHECK(strstr(md, "| add_17x257 | torch | host E2E batch | 10.0 | 51.2 KiB | 5.24 | 26.2% | — |") != NULL);
    CHECK(strstr(md, "| gemm_64x64x64 | native | host E2E batch | 6.00 | 48.0 KiB | — | — | 0.0874 |") != NULL);
    CHECK(strstr(md, "| add_fail | native | FAILED |") != NULL);
    CHECK(strstr(md, "## E2E floor") != NULL);
    CHECK(strstr(md, "Launch+sync floor: **9.00 µs**") != NULL);
    CHECK(strstr(md, "| add_17x257 | 18.0 | 2.00 | 30.0 | 3.33 |") != NULL);
    CHECK(strstr(md, "| add_1024x1024 | 18.0") == NULL);
    /* no touch floor in these ceilings: the table as before, no touch column or text */
    CHECK(strstr(md, "| Case | native single p50 µs | native / floor | torch single p50 µs | "
                     "torch / floor |\n|---|---:|---:|---:|---:|\n") != NULL);
    CHECK(strstr(md, "touch") == NULL);
    CHECK(ef && isnan(ef->touch_floor_us));
    CHECK(floor_impl(r, small, "native") && isnan(floor_num(r, small, "native", "over_touch_floor")));
    free(md);
    dt_record_free(r);

    /* with the optional touch floor (12 us): derived multiples, the sentence, a column
     * per framework */
    o = CPU_OK;
    j = fx_results(&o);
    json_t *ct = ceilings_fixture();
    json_object_set_new(ct, "launch_sync_touch_floor_us", json_real(12.0));
    json_object_set_new(json_object_get(j, "environment"), "ceilings", ct);
    fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.0, 1);
    set_shape(fx_add_case(j, &o, "add_1024x1024", 6.0, 10.0, 0.0, 1), "add", 1024, 1024, 0);
    r = typed(j);
    if (!r)
        return;
    small = &r->cases[0];
    ef = floor_of(small);
    CHECK(ef && ef->touch_floor_us == 12.0);
    CHECK(near(floor_num(r, small, "native", "over_touch_floor"), 1.5));
    CHECK(near(floor_num(r, small, "torch", "over_touch_floor"), 2.5));
    CHECK(near(floor_num(r, small, "native", "over_floor"), 2.0));
    md = md_of(r);
    CHECK(strstr(md, "; touch floor, a one-block kernel that reads and writes 512 B (CPU: a "
                     "call that copies 512 B): **12.0 µs**.") != NULL);
    CHECK(strstr(md, "Touch floor: **12.0 µs**, the host time of one synchronized call of a "
                     "one-block kernel that reads and writes 512 B") != NULL);
    CHECK(strstr(md, "| Case | native single p50 µs | native / floor | native / touch floor | "
                     "torch single p50 µs | torch / floor | torch / touch floor |\n"
                     "|---|---:|---:|---:|---:|---:|---:|\n") != NULL);
    CHECK(strstr(md, "| add_17x257 | 18.0 | 2.00 | 1.50 | 30.0 | 3.33 | 2.50 |\n") != NULL);
    CHECK(strstr(md, "| add_1024x1024 | 18.0") == NULL);
    free(md);
    dt_record_free(r);

    /* cuda with device control: the control batch p50 (0.8 x 6 us) is the time */
    o = CUDA_OK;
    j = fx_results(&o);
    json_object_set_new(json_object_get(j, "environment"), "ceilings", ceilings_fixture());
    fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.0, 1);
    r = typed(j);
    if (!r)
        return;
    small = &r->cases[0];
    CHECK(near(roof_num(r, small, "native", "us"), 4.8));
    CHECK(near(roof_num(r, small, "native", "gbps"), 52428.0 / 4800.0));
    CHECK(roof_impl(r, small, "torch") && roof_impl(r, small, "torch")->scope == DT_SCOPE_CONTROL_BATCH);
    md = md_of(r);
    CHECK(strstr(md, "| add_17x257 | native | device control batch | 4.80 |") != NULL);
    free(md);
    dt_record_free(r);

    /* FLOP ceilings (environment.ceilings.flops): gemm rows show their % of the peak of
     * their dtype (fp32 2 x native's 0.0874 TFLOP/s: 50%; bf16 half of it: 200% for
     * native's 6 us, 120% for torch's 10 us); no fp16 value, no add percentage; the
     * values survive an encode/decode round trip */
    const double g_tf = 2.0 * 64 * 64 * 64 / 6e6, fp32_tf = 2 * g_tf, bf16_tf = g_tf / 2;
    o = CPU_OK;
    j = fx_results(&o);
    ct = ceilings_fixture();
    json_object_set_new(ct, "flops", json_pack("{s:f,s:f,s:s}", "fp32_tflops", fp32_tf,
                                               "bf16_tflops", bf16_tf, "method",
                                               "native: ffma; torch: matmul"));
    json_object_set_new(json_object_get(j, "environment"), "ceilings", ct);
    fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.0, 1);
    set_shape(fx_add_case(j, &o, "gemm_64x64x64", 6.0, 10.0, 0.0, 1), "gemm", 64, 64, 64);
    json_t *bc = fx_add_case(j, &o, "gemm_bf16", 6.0, 10.0, 0.0, 1);
    set_shape(bc, "gemm", 64, 64, 64);
    json_object_set_new(bc, "dtype", json_string("bf16"));
    json_t *hc = fx_add_case(j, &o, "gemm_f16", 6.0, 10.0, 0.0, 1);
    set_shape(hc, "gemm", 64, 64, 64);
    json_object_set_new(hc, "dtype", json_string("f16"));
    r = typed(j);
    if (!r)
        return;
    CHECK(r->env.ceilings.flops.fp32_tflops == fp32_tf && r->env.ceilings.flops.bf16_tflops == bf16_tf &&
          r->env.ceilings.flops.fp16_tflops == 0);
    CHECK(roof_of(&r->cases[0]) && isnan(roof_of(&r->cases[0])->flop_tflops));
    CHECK(roof_impl(r, &r->cases[0], "native") && isnan(roof_impl(r, &r->cases[0], "native")->flop_pct));
    CHECK(roof_of(&r->cases[1]) && roof_of(&r->cases[1])->flop_tflops == fp32_tf);
    CHECK(roof_impl(r, &r->cases[1], "native") && near(roof_impl(r, &r->cases[1], "native")->flop_pct, 50.0));
    CHECK(roof_impl(r, &r->cases[2], "native") && near(roof_impl(r, &r->cases[2], "native")->flop_pct, 200.0));
    CHECK(roof_impl(r, &r->cases[2], "torch") && near(roof_impl(r, &r->cases[2], "torch")->flop_pct, 120.0));
    CHECK(roof_impl(r, &r->cases[3], "native") && isnan(roof_impl(r, &r->cases[3], "native")->flop_pct));
    md = md_of(r);
    CHECK(strstr(md, "| gemm_64x64x64 | native | host E2E batch | 6.00 | 48.0 KiB | — | — | 0.0874 (50.0% of peak) |") != NULL);
    CHECK(strstr(md, "| gemm_bf16 | torch | host E2E batch | 10.0 |") != NULL &&
          strstr(md, "| — | — | 0.0524 (120% of peak) |") != NULL);
    CHECK(strstr(md, "| gemm_f16 | native | host E2E batch | 6.00 | 24.0 KiB | — | — | 0.0874 |") != NULL);
    CHECK(strstr(md, "FLOP ceilings (the peak a gemm row's % of peak is against): FP32 (FFMA) "
                     "**0.175 TFLOP/s**, BF16 (tensor cores) **0.0437 TFLOP/s**. Method: native: "
                     "ffma; torch: matmul.") != NULL);
    CHECK(strstr(md, "FP16 (tensor cores)") == NULL);
    CHECK(strstr(md, "gemm shows TFLOP/s and its % of the FLOP ceiling of its dtype") != NULL);
    CHECK(strstr(md, "no FLOP ceiling is measured") == NULL);
    free(md);
    {
        char *text = NULL;
        size_t len = 0;
        dt_err err = {{0}};
        dt_record *back = NULL;
        CHECK(dt_record_encode(r, &text, &len, &err) == DT_OK);
        CHECK(text && dt_record_decode(text, len, "round trip", &back, &err) == DT_OK);
        CHECK_MSG(back && back->env.ceilings.flops.fp32_tflops == fp32_tf &&
                      back->env.ceilings.flops.bf16_tflops == bf16_tf &&
                      back->env.ceilings.flops.fp16_tflops == 0 && back->env.ceilings.flops.method &&
                      strcmp(back->env.ceilings.flops.method, "native: ffma; torch: matmul") == 0,
                  err.msg);
        CHECK(back && back->cases[1].derived.roofline.flop_tflops == fp32_tf &&
              near(back->cases[1].derived.roofline.impl[ix(back, "native")].flop_pct, 50.0));
        CHECK(!text || strstr(text, "\"fp16_tflops\"") == NULL);
        dt_record_free(back);
        free(text);
    }
    dt_record_free(r);
    /* a FLOP ceiling that is not a positive number is refused by the codec */
    o = CPU_OK;
    j = fx_results(&o);
    ct = ceilings_fixture();
    json_object_set_new(ct, "flops", json_pack("{s:f}", "bf16_tflops", -1.0));
    json_object_set_new(json_object_get(j, "environment"), "ceilings", ct);
    fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.0, 1);
    r = fx_record(j);
    json_decref(j);
    CHECK(r == NULL);
    dt_record_free(r);

    /* no ceilings, or a failed measurement: no roofline, no section */
    for (int v = 0; v < 2; v++) {
        o = CPU_OK;
        j = fx_results(&o);
        if (v)
            json_object_set_new(json_object_get(j, "environment"), "ceilings",
                                json_pack("{s:s}", "error", "not offered"));
        fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.0, 1);
        r = typed(j);
        CHECK(r && roof_of(&r->cases[0]) == NULL);
        md = md_of(r);
        CHECK(strstr(md, "Rooflines") == NULL);
        CHECK(strstr(md, "E2E floor") == NULL);
        free(md);
        dt_record_free(r);
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
    json_t *j = fx_results(&o);
    json_t *c = fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.02, 1);
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
    dt_record *r = typed(j);
    if (!r)
        return;
    const dt_e2e_floor *ef = floor_of(&r->cases[0]);
    CHECK(ef != NULL);
    CHECK(ef && ef->source == DT_FLOOR_PAIRED);
    for (int f = 0; f < 2; f++) {
        qsort(want[f], n, sizeof want[f][0], cmp_double);
        const dt_e2e_floor_impl *e = floor_impl(r, &r->cases[0], f ? "torch" : "native");
        const dt_rec_ratio *q = e && e->has_over_floor_ratio ? &e->over_floor_ratio : NULL;
        CHECK(q != NULL);
        if (!q)
            continue;
        CHECK(q->pairs == n);
        double med = q->median;
        CHECK(near(med, sorted_median(want[f], n)));
        CHECK(near(e->over_floor, med));
        CHECK(q->ci_low <= med && med <= q->ci_high);
    }
    /* the native ratios are 1.02 + 0.01 k for k = (7 i) mod n: with n coprime to 7 they are
     * 1.02 .. 1.02 + 0.01 (n - 1), median 1.02 + 0.01 (n - 1) / 2 */
    if (n % 7)
        CHECK(near(sorted_median(want[0], n), 1.02 + 0.01 * (double)(n - 1) / 2));
    fl[n] = 1e-3; /* the unpaired one counts for the case's floor median */
    qsort(fl, n + 1, sizeof fl[0], cmp_double);
    CHECK(ef && near(ef->case_floor_us, sorted_median(fl, n + 1)));
    char *md = md_of(r);
    CHECK(strstr(md, "## E2E floor") != NULL);
    CHECK(strstr(md, "Each case measured its own floor") != NULL);
    CHECK(strstr(md, "| Case | floor p50 µs | native single p50 µs | native / floor |") != NULL);
    CHECK(strstr(md, "Launch+sync floor:") == NULL); /* no ceilings in this run */
    free(md);
    dt_record_free(r);
}

/* ---- prose numbers come from the record's policy ---- */

static void test_policy_prose(void) {
    json_t *j = fixture_run(&CUDA_OK, 0, 0);
    json_object_set_new(json_object_get(j, "environment"), "ceilings", ceilings_fixture());
    json_t *c0 = json_array_get(json_object_get(j, "cases"), 0);
    fx_clocks_record(c0, 0, clk_snap(1980, 2619, 40, 300.0, 0), clk_snap(1755, 2619, 52, 690.0, 0x4));
    dt_record *r = typed(j);
    if (!r)
        return;
    char *md = md_of(r);
    CHECK(strstr(md, "| Ratio [95% CI] | Verdict |") != NULL);
    CHECK(strstr(md, "| GPU batch ratio [95% CI] | Verdict | GPU single ratio [95% CI] |") != NULL);
    CHECK(strstr(md, "each scope with its 95% interval (log axis") != NULL);
    CHECK(strstr(md, "the 95% interval is a bootstrap over pairs") != NULL);
    CHECK(strstr(md, "contains 1 or stays within ±2%, not that") != NULL);
    CHECK(strstr(md, "Small cases (M·N ≤ 131072)") != NULL);
    CHECK(strstr(md, "the SM clock changed by more than 2%, the memory") != NULL);
    CHECK(strstr(md, "the temperature rose by more than 10 °C, or") != NULL);
    free(md);
    /* other constants in the record: the prose follows them */
    dt_policy *p = &r->derived.policy;
    p->ci_level = 0.90;
    p->equiv_low = 0.97;
    p->equiv_high = 1.03;
    p->small_case_max_elems = 4096;
    p->clocks_sm_tolerance = 0.05;
    p->clocks_max_temp_rise_c = 15;
    md = md_of(r);
    CHECK(strstr(md, "| Ratio [90% CI] | Verdict |") != NULL);
    CHECK(strstr(md, "| GPU batch ratio [90% CI] | Verdict | GPU single ratio [90% CI] |") != NULL);
    CHECK(strstr(md, "each scope with its 90% interval (log axis") != NULL);
    CHECK(strstr(md, "the 90% interval is a bootstrap over pairs") != NULL);
    CHECK(strstr(md, "contains 1 or stays within ±3%, not that") != NULL);
    CHECK(strstr(md, "Small cases (M·N ≤ 4096)") != NULL);
    CHECK(strstr(md, "the SM clock changed by more than 5%, the memory") != NULL);
    CHECK(strstr(md, "the temperature rose by more than 15 °C, or") != NULL);
    CHECK(strstr(md, "[95% CI]") == NULL && strstr(md, "±2%") == NULL && strstr(md, "131072") == NULL);
    free(md);
    /* a band that is not symmetric around 1 is printed as the interval */
    p->equiv_high = 1.05;
    md = md_of(r);
    CHECK(strstr(md, "contains 1 or stays within [0.97, 1.05], not that") != NULL);
    free(md);
    dt_record_free(r);
}

/* ---- any number of implementations: a record built by hand ---- */

static void push_samples(dt_case_impl *ci, dt_scope s, double us, int64_t reps, int64_t *pos) {
    for (int32_t round = 0; round < 2; round++)
        for (int32_t i = 0; i < 9; i++) {
            dt_sample x = dt_sample_empty();
            x.us = us * (1.0 + 0.004 * (double)((i * 7 + round * 3) % 5 - 2));
            x.reps = reps;
            x.round = round;
            x.index = i;
            x.position = (*pos)++;
            dt_samples_push(&ci->samples[s], &x);
        }
}

/* Baseline torch (10 us), candidates native (6 us) and other (12 us); other fails the
 * second case. */
static dt_record *three_impl_run(void) {
    dt_record *r = dt_record_new();
    r->complete = 1;
    dt_record_set_str(&r->settings.backend, "cpu");
    r->settings.samples = 9;
    r->settings.rounds = 2;
    r->settings.seed = 1;
    r->settings.threads = 2;
    const char *ids[3] = {"torch", "native", "other"};
    const char *fws[3][2] = {{"pytorch", "1.13.1"}, {"dualtime-native", "0.1.0"}, {"other-fw", "2.0"}};
    double us[3] = {10.0, 6.0, 12.0};
    for (int f = 0; f < 3; f++) {
        dt_impl *im = dt_record_impl_add(r, ids[f], f ? DT_ROLE_CANDIDATE : DT_ROLE_BASELINE);
        dt_record_set_str(&im->framework, fws[f][0]);
        dt_record_set_str(&im->framework_version, fws[f][1]);
    }
    const char *cases[2] = {"add_17x257", "softmax_1x127"};
    for (int n = 0; n < 2; n++) {
        dt_case *c = dt_record_case_add(r, cases[n]);
        c->op = (dt_op)dt_op_find(n ? "softmax" : "add");
        c->m = n ? 1 : 17;
        c->n = n ? 127 : 257;
        dt_record_set_str(&c->backend, "cpu");
        c->atol = c->rtol = 0;
        int64_t pos = 0;
        for (int f = 0; f < 3; f++) {
            dt_case_impl *ci = &c->impl[f];
            dt_record_set_str(&ci->output_policy, "preallocated");
            dt_check *ck = dt_case_impl_check_add(ci);
            dt_record_set_str(&ck->when, "cold");
            ck->ok = ck->oracle.ok = 1;
            ck->oracle.elements = c->m * c->n;
            push_samples(ci, DT_SCOPE_E2E_BATCH, us[f], 100, &pos);
            push_samples(ci, DT_SCOPE_E2E_SINGLE, 3 * us[f], 1, &pos);
        }
        if (n) {
            c->valid = 0;
            c->impl[2].status = DT_IMPL_FAILED;
            dt_record_set_str(&c->impl[2].error, "boom");
        }
    }
    return r;
}

static void test_three_impls(void) {
    dt_record *r = derive(three_impl_run());
    char *md = md_of(r);
    const char *title = "# dualtime results: native, other vs torch\n\n";
    CHECK(strncmp(md, title, strlen(title)) == 0);
    CHECK(strstr(md, "Candidate **native** = dualtime-native 0.1.0; candidate **other** = "
                     "other-fw 2.0; baseline **torch** = pytorch 1.13.1. ") != NULL);
    CHECK(strstr(md, "Cases: 2 (1 valid). E2E batch verdicts of native: 1 faster, 0 slower, 0 "
                     "indistinguishable, 0 insufficient, 1 invalid; E2E batch verdicts of other: "
                     "0 faster, 1 slower, 0 indistinguishable, 0 insufficient, 1 invalid.\n\n") != NULL);
    /* three or more: one E2E table, a column group per implementation (the baseline's
     * first, then the candidates in order, each with its ratio and verdict) */
    const char *tn = strstr(md, "| Case | torch E2E batch p50 | torch p90 | torch single p50 | "
                                "native p50 | native p90 | native single p50 | native ratio "
                                "[95% CI] | native verdict |");
    const char *to = tn ? strstr(tn, " native verdict | other p50 | other p90 | other single "
                                     "p50 | other ratio [95% CI] | other verdict |\n") : NULL;
    CHECK(tn != NULL && to != NULL && tn < to);
    const char *row = tn ? strstr(tn, "\n| add_17x257 |") : NULL;
    const char *fast = row ? strstr(row, "**faster**") : NULL;
    const char *slow = row ? strstr(row, "**slower**") : NULL;
    const char *eol = row ? strchr(row + 1, '\n') : NULL;
    CHECK(fast && slow && eol && fast < slow && slow < eol); /* native faster, other slower */
    /* no per-candidate E2E tables for three */
    CHECK(strstr(md, "| Case | native E2E batch p50 | torch p50 |") == NULL);
    /* per-implementation rows: the candidates in order, then the baseline */
    const char *setup = strstr(md, "## Setup and cold-call phases");
    const char *sn = setup ? strstr(setup, "| add_17x257 | native |") : NULL;
    const char *so = setup ? strstr(setup, "| add_17x257 | other |") : NULL;
    const char *sb = setup ? strstr(setup, "| add_17x257 | torch |") : NULL;
    CHECK(sn != NULL && so != NULL && sb != NULL && sn < so && so < sb);
    CHECK(strstr(md, "### softmax_1x127 — other\n\nStatus: failed. Error: boom\n\n") != NULL);
    CHECK(strstr(md, "### softmax_1x127 — native") == NULL);
    free(md);
    dt_record_free(r);
    /* a run without a candidate has no report */
    r = dt_record_new();
    dt_record_impl_add(r, "torch", DT_ROLE_BASELINE);
    char *t = NULL;
    size_t n = 0;
    dt_err err = {{0}};
    CHECK(dt_format_md(r, &t, &n, &err) == DT_EINVAL && t == NULL && strstr(err.msg, "candidate"));
    dt_record_free(r);
}

/* Before the derive step the report says so (and still lists the raw parts). */
static void test_underived(void) {
    json_t *j = fixture_run(&CPU_OK, 0, 0);
    dt_record *r = fx_record(j);
    json_decref(j);
    char *md = md_of(r);
    CHECK(strstr(md, "Assessment: **unassessed**\n\n## What was run") != NULL);
    CHECK(strstr(md, "Cases: ") == NULL);
    CHECK(strstr(md, "| add_17x257 | — | — | — | — | — | — | — | — |\n") != NULL);
    free(md);
    dt_record_free(r);
}

/* The stored results.json files of today's main regenerate their stored results.md,
 * also after a round trip through the current format. */
static void test_stored(const char *name) {
    char jpath[512], mpath[512];
    snprintf(jpath, sizeof jpath, "%s/tests/data/%s.json", DT_SOURCE_DIR, name);
    snprintf(mpath, sizeof mpath, "%s/tests/data/%s.md", DT_SOURCE_DIR, name);
    size_t n = 0;
    char *stored = slurp(mpath, &n);
    CHECK_MSG(stored != NULL, mpath);
    dt_record *r = NULL;
    dt_err err = {{0}};
    CHECK_MSG(dt_record_load(jpath, &r, &err) == DT_OK, err.msg);
    derive(r);
    char *md = md_of(r);
    CHECK_MSG(stored && strcmp(md, stored) == 0, name);
    char *v2 = encode(r);
    dt_record *back = NULL;
    CHECK_MSG(v2 && dt_record_decode(v2, strlen(v2), name, &back, &err) == DT_OK, err.msg);
    derive(back);
    char *md2 = md_of(back);
    CHECK_MSG(stored && strcmp(md2, stored) == 0, name);
    free(md2);
    free(v2);
    free(md);
    free(stored);
    dt_record_free(back);
    dt_record_free(r);
}

/* ---- issue 12: dispatch scopes, held floors, per-scope assessment ---- */

static int summary_has(const dt_record *r, const char *needle) {
    for (size_t i = 0; r && i < r->derived.summary.n; i++)
        if (strstr(r->derived.summary.v[i], needle))
            return 1;
    return 0;
}

/* Old-format device data read as dispatch derive exactly like the same data read as a
 * held control; the report says which it shows; a run with both shows both. */
static void test_dispatch_scopes(void) {
    json_t *j = fixture_run(&CUDA_OK, 0, 0);
    dt_record *ru = derive(fx_record_unheld(j)), *rh = derive(fx_record(j));
    json_decref(j);
    if (!ru || !rh)
        return;
    CHECK(!ru->settings.held_windows && ru->probe_unheld && rh->settings.held_windows);
    for (size_t c = 0; c < ru->n_cases; c++)
        for (int q = 0; q < 2; q++) {
            const dt_scope_derived *d = &ru->cases[c].derived.scopes[DT_SCOPE_DISPATCH_BATCH + q];
            const dt_scope_derived *h = &rh->cases[c].derived.scopes[DT_SCOPE_CONTROL_BATCH + q];
            CHECK(d->present && h->present &&
                  !ru->cases[c].derived.scopes[DT_SCOPE_CONTROL_BATCH + q].present &&
                  !rh->cases[c].derived.scopes[DT_SCOPE_DISPATCH_BATCH + q].present);
            for (size_t i = 0; d->present && h->present && i < ru->n_impls; i++)
                CHECK(d->impl[i].summary.n == h->impl[i].summary.n &&
                      d->impl[i].summary.p50 == h->impl[i].summary.p50 &&
                      d->impl[i].summary.p90 == h->impl[i].summary.p90 &&
                      d->impl[i].noise == h->impl[i].noise);
            CHECK(d->present && h->present && d->vs[1].verdict == h->vs[1].verdict &&
                  d->vs[1].ratio.median == h->vs[1].ratio.median &&
                  d->vs[1].ratio.ci_low == h->vs[1].ratio.ci_low &&
                  d->vs[1].ratio.ci_high == h->vs[1].ratio.ci_high);
            const dt_scope_derived *pu = &ru->cases[c].derived.scopes[DT_SCOPE_PROBE_BATCH + q];
            const dt_scope_derived *ph = &rh->cases[c].derived.scopes[DT_SCOPE_PROBE_BATCH + q];
            CHECK(pu->present && ph->present &&
                  pu->impl[1].probe_over_control == ph->impl[1].probe_over_control &&
                  pu->impl[1].probe_over_control_pairs == 18);
        }
    CHECK(strcmp(level_of(ru), "comparative") == 0 && !reason_has(ru, "no device control"));
    CHECK(ru->derived.scopes[DT_SCOPE_DISPATCH_BATCH].present &&
          !ru->derived.scopes[DT_SCOPE_CONTROL_BATCH].present);
    char *md = md_of(ru);
    CHECK(strstr(md, "| Dispatch batch µs/call | Dispatch single µs |") != NULL);
    CHECK(strstr(md, "GPU held batch") == NULL);
    CHECK(strstr(md, "| Dispatch batch ratio [95% CI] | Verdict | Dispatch single ratio [95% CI] | "
                     "Verdict |") != NULL);
    CHECK(strstr(md, "This file was written before held windows") != NULL);
    CHECK(strstr(md, "**This file's probe windows were not held**") != NULL);
    CHECK(strstr(md, "device windows not held") != NULL);
    free(md);
    md = md_of(rh);
    CHECK(strstr(md, "| GPU held batch µs/call | GPU held single µs | E2E batch µs/call |") != NULL);
    CHECK(strstr(md, "Dispatch batch") == NULL && strstr(md, "not held") == NULL);
    CHECK(strstr(md, "It is the GPU time of the work alone, with no launch gaps") != NULL);
    free(md);
    /* a held run that also measured dispatch, the candidate 1.5x slower there */
    for (size_t c = 0; c < rh->n_cases; c++)
        for (size_t i = 0; i < rh->n_impls; i++)
            for (int q = 0; q < 2; q++) {
                dt_case_impl *ci = &rh->cases[c].impl[i];
                const dt_samples *ctl = &ci->samples[DT_SCOPE_CONTROL_BATCH + q];
                for (size_t k = 0; k < ctl->n; k++) {
                    dt_sample x = ctl->v[k];
                    x.us *= i == 1 ? 1.5 : 1.0;
                    x.position += 1000;
                    dt_samples_push(&ci->samples[DT_SCOPE_DISPATCH_BATCH + q], &x);
                }
            }
    derive(rh);
    const dt_scope_derived *db = &rh->cases[0].derived.scopes[DT_SCOPE_DISPATCH_BATCH];
    const dt_scope_derived *cb = &rh->cases[0].derived.scopes[DT_SCOPE_CONTROL_BATCH];
    CHECK(db->present && cb->present &&
          fabs(db->vs[1].ratio.median - 1.5 * cb->vs[1].ratio.median) < 1e-9 &&
          db->vs[1].verdict == DT_REC_VERDICT_FASTER && cb->vs[1].verdict == DT_REC_VERDICT_FASTER);
    const dt_scope_derived *d1 = &rh->cases[1].derived.scopes[DT_SCOPE_DISPATCH_BATCH];
    CHECK(d1->present && d1->vs[1].verdict == DT_REC_VERDICT_SLOWER); /* 1.0 -> 1.5 */
    CHECK(rh->derived.scopes[DT_SCOPE_DISPATCH_SINGLE].present);
    md = md_of(rh);
    CHECK(strstr(md, "| GPU held batch µs/call | GPU held single µs | Dispatch batch µs/call | "
                     "Dispatch single µs | E2E batch µs/call | E2E single µs | Probe/control batch |\n"
                     "|---|---|---:|---:|---:|---:|---:|---:|---:|\n") != NULL);
    CHECK(strstr(md, "| GPU batch ratio [95% CI] | Verdict | GPU single ratio [95% CI] | Verdict | "
                     "Dispatch batch ratio [95% CI] |") != NULL);
    CHECK(strstr(md, "as a caller feeds the GPU: launch gaps are included") != NULL);
    free(md);
    dt_record_free(ru);
    dt_record_free(rh);
}

/* derived.held_floor: small cases' held control batch over (kernels/call x held touch
 * floor batch); kernels per call from the probe, else 1; shown in results.md. */
static void test_held_floor(void) {
    json_t *j = fx_results(&CUDA_OK);
    json_t *ce = ceilings_fixture();
    json_object_set_new(ce, "held_floor_batch_us", json_real(1.0));
    json_object_set_new(ce, "held_floor_single_us", json_real(3.0));
    json_object_set_new(ce, "held_touch_floor_batch_us", json_real(2.0));
    json_object_set_new(json_object_get(j, "environment"), "ceilings", ce);
    fx_add_case(j, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.0, 1);
    set_shape(fx_add_case(j, &CUDA_OK, "add_1024x1024", 6.0, 10.0, 0.0, 1), "add", 1024, 1024, 0);
    dt_record *r = typed(j);
    if (!r)
        return;
    const dt_held_floor *hf = &r->cases[0].derived.held_floor;
    size_t nat = ix(r, "native"), tor = ix(r, "torch");
    CHECK(hf->present && hf->touch_floor_us == 2.0);
    CHECK(hf->present && hf->impl[nat].present && near(hf->impl[nat].control_batch_us, 4.8) &&
          hf->impl[nat].kernels_from_probe && near(hf->impl[nat].kernels_per_call, 2.0) &&
          near(hf->impl[nat].over_touch_floor, 1.2));
    CHECK(hf->present && near(hf->impl[tor].over_touch_floor, 2.0));
    CHECK(!r->cases[1].derived.held_floor.present); /* not a small case */
    char *md = md_of(r);
    CHECK(strstr(md, "### Held control over the held touch floor (small cases)") != NULL);
    CHECK(strstr(md, "| add_17x257 | native | 4.80 | 2.00 | 1.200 |\n") != NULL);
    CHECK(strstr(md, "| add_1024x1024 | native | 4.80 | 2.00 |") == NULL);
    CHECK(strstr(md, "; held empty-kernel floor (stream events in a held window) **1.00 µs** per "
                     "call of a batch, **3.00 µs** as one call; held touch floor (stream events "
                     "in a held window) **2.00 µs** per call of a batch.") != NULL);
    free(md);
    /* without probe samples: 1 kernel per call */
    for (size_t i = 0; i < r->n_impls; i++)
        dt_samples_free(&r->cases[0].impl[i].samples[DT_SCOPE_PROBE_BATCH]);
    derive(r);
    hf = &r->cases[0].derived.held_floor;
    CHECK(hf->present && !hf->impl[nat].kernels_from_probe &&
          hf->impl[nat].kernels_per_call == 1.0 && near(hf->impl[nat].over_touch_floor, 2.4));
    md = md_of(r);
    CHECK(strstr(md, "| add_17x257 | native | 4.80 | 1.00 (no probe) | 2.400 |\n") != NULL);
    free(md);
    dt_record_free(r);
    /* no held touch floor: no check */
    r = derived_run(&CUDA_OK, 0, 0);
    CHECK(r && !r->cases[0].derived.held_floor.present);
    md = md_of(r);
    CHECK(strstr(md, "held touch floor") == NULL);
    free(md);
    dt_record_free(r);
}

/* The anti-cheat section (issue 17 item 7): absent without anti_cheat records; a caught
 * check first with its reason, a not applicable one with why, an honest row says so. */
static void test_anti_cheat_md(void) {
    dt_record *r = derived_run(&CUDA_OK, 0, 0);
    if (!r)
        return;
    char *md = md_of(r);
    CHECK(strstr(md, "## Anti-cheat checks") == NULL); /* no records: no section */
    free(md);
    size_t nat = ix(r, "native"), tor = ix(r, "torch");
    for (size_t i = 0; i < r->n_impls; i++) {
        dt_cheat_rec *cr = &r->cases[0].impl[i].cheat;
        cr->present = 1;
        cr->sample_checks = 18;
        cr->input_sets = 2;
        for (int k = 0; k < DT_CHEAT_COUNT; k++)
            cr->check[k].status = DT_CHEAT_PASSED;
    }
    dt_cheat_rec *nc = &r->cases[0].impl[nat].cheat;
    nc->check[DT_CHEAT_SKIPPED_WORK].status = DT_CHEAT_CAUGHT;
    nc->check[DT_CHEAT_SKIPPED_WORK].note = dt_xstrdup("left 3 elements poisoned");
    nc->check[DT_CHEAT_ALIASED_OUTPUT].status = DT_CHEAT_NOT_APPLICABLE;
    nc->check[DT_CHEAT_ALIASED_OUTPUT].note = dt_xstrdup("device mirror");
    md = md_of(r);
    CHECK(strstr(md, "## Anti-cheat checks") != NULL);
    CHECK(strstr(md, "| add_17x257 | native | 18 (2 input sets) | **CAUGHT `cheat.skipped_work`**: "
                     "left 3 elements poisoned; `cheat.aliased_output` not applicable: device "
                     "mirror |\n") != NULL);
    CHECK(strstr(md, "| add_17x257 | torch | 18 (2 input sets) | every check passed |\n") != NULL);
    CHECK(strstr(md, "| softmax_1x127 | native | 18 (2 input sets)") == NULL); /* no record */
    (void)tor;
    free(md);
    dt_record_free(r);
}

/* The headline lines: from after the title to the first section. */
static size_t headline_lines(const char *md, char **out) {
    const char *a = strstr(md, "\n\n"), *b = strstr(md, "\n\n## ");
    *out = a && b && b > a ? strndup(a + 2, (size_t)(b - a - 2)) : dt_xstrdup("");
    size_t n = **out ? 1 : 0;
    for (const char *p = *out; *p; p++)
        n += *p == '\n';
    return n;
}

static void test_scope_assessment(void) {
    /* a noisy single-call scope makes only that scope a method audit */
    json_t *j = fixture_run(&CUDA_OK, 0, 0);
    dt_record *r = fx_record(j);
    json_decref(j);
    if (!r)
        return;
    dt_samples *cs = &r->cases[0].impl[0].samples[DT_SCOPE_CONTROL_SINGLE];
    for (size_t k = 0; k < cs->n; k += 2)
        cs->v[k].us *= 1.6;
    derive(r);
    const dt_scope_assessment *sc = r->derived.scopes;
    CHECK(sc[DT_SCOPE_CONTROL_SINGLE].present &&
          sc[DT_SCOPE_CONTROL_SINGLE].level == DT_LEVEL_METHOD_AUDIT &&
          sc[DT_SCOPE_CONTROL_SINGLE].reasons.n == 1);
    CHECK(sc[DT_SCOPE_E2E_BATCH].level == DT_LEVEL_COMPARATIVE &&
          sc[DT_SCOPE_E2E_SINGLE].level == DT_LEVEL_COMPARATIVE &&
          sc[DT_SCOPE_CONTROL_BATCH].level == DT_LEVEL_COMPARATIVE &&
          sc[DT_SCOPE_PROBE_BATCH].level == DT_LEVEL_COMPARATIVE && sc[DT_SCOPE_E2E_BATCH].present);
    CHECK(strcmp(level_of(r), "method audit") == 0); /* control single carries verdicts */
    CHECK(summary_has(r, "noise > 10% in 1 small single-call scope"));
    char *md = md_of(r), *head = NULL;
    CHECK(headline_lines(md, &head) <= 3);
    CHECK(strstr(head, "method audit: control_single; comparative: e2e_batch, e2e_single, "
                       "control_batch, probe_batch (diagnostic), probe_single (diagnostic)") != NULL);
    CHECK(strstr(head, "Main reasons: noise > 10% in 1 small single-call scope.") != NULL);
    CHECK(strstr(md, "## Assessment details") != NULL &&
          strstr(md, "| control_single | method audit | 1 |") != NULL);
    free(head);
    free(md);
    dt_record_free(r);

    /* a perturbing probe: the probe scope is the audit; control and the run comparative */
    fx_run o = CUDA_OK;
    o.probe_factor = 1.3;
    r = derived_run(&o, 0, 0);
    sc = r ? r->derived.scopes : NULL;
    CHECK(sc && sc[DT_SCOPE_PROBE_BATCH].level == DT_LEVEL_METHOD_AUDIT &&
          sc[DT_SCOPE_PROBE_BATCH].reasons.n == 4 &&
          sc[DT_SCOPE_CONTROL_BATCH].level == DT_LEVEL_COMPARATIVE &&
          sc[DT_SCOPE_CONTROL_SINGLE].level == DT_LEVEL_COMPARATIVE);
    CHECK(strcmp(level_of(r), "comparative") == 0);
    CHECK(summary_has(r, "probe/control outside [0.90, 1.10] in 2 cases (probe: diagnostic)"));
    md = md_of(r);
    CHECK(headline_lines(md, &head) <= 3);
    CHECK(strncmp(head, "Assessment: **comparative** — by scope: method audit: probe_batch "
                        "(diagnostic); comparative: ", 83) == 0);
    free(head);
    free(md);
    dt_record_free(r);

    /* many findings: at most three lines, counted, the details in their own section */
    o = CPU_OK;
    o.samples = 2;
    j = fx_results(&o);
    for (int i = 0; i < 30; i++) {
        char id[32];
        snprintf(id, sizeof id, "case_%02d", i);
        fx_add_case(j, &o, id, 6.0, 10.0, 0.02, 1);
    }
    r = typed(j);
    CHECK(summary_has(r, "too few samples (< 5) in 30 small batch scopes"));
    CHECK(summary_has(r, "too few samples (< 5) in 30 small single-call scopes"));
    CHECK(r && r->derived.summary.n == 2);
    md = md_of(r);
    size_t nl = headline_lines(md, &head);
    CHECK(nl >= 2 && nl <= 3);
    CHECK(strstr(head, "Assessment: **smoke** — by scope: smoke: e2e_batch, e2e_single.") != NULL);
    CHECK(strstr(head, "too few samples (< 5) in 30 small batch scopes; too few samples "
                       "(< 5) in 30 small single-call scopes") != NULL);
    CHECK(strstr(head, "case_05") == NULL);
    CHECK(strstr(md, "- case_05 e2e_batch: too few samples (native 4, torch 4; need 5)\n") != NULL);
    free(head);
    free(md);
    /* the counted lines take their thresholds from the policy */
    if (r) {
        r->derived.policy.min_samples = 7;
        derive(r);
        CHECK(summary_has(r, "too few samples (< 7) in 30 small batch scopes"));
    }
    dt_record_free(r);
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
    test_kernel_names_demangled();
    test_roofline();
    test_paired_floor();
    test_clocks_md(dir);
    test_regenerate(dir);
    test_loader(dir);
    test_policy_prose();
    test_three_impls();
    test_underived();
    test_dispatch_scopes();
    test_held_floor();
    test_scope_assessment();
    test_anti_cheat_md();
    test_stored("results-v1-cpu");
    test_stored("results-v1-device");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return fx_summary();
}
