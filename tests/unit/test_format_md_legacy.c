/* test_format_md_legacy.c — the typed results.md against the old writer, byte for byte.
 *
 * For hand-built runs (cpu, cuda with device scopes, failing, invalid and missing
 * implementations, ratios without an interval, an oracle's first failure, an incomplete
 * run, smoke and method-audit runs, rooflines and E2E floors with and without the touch
 * floor and paired floor samples, GPU clocks steady and moved, NVML absent)
 * and for the stored results.json files of today's main (tests/data/results-v1-*.json),
 * the old path (dt_results_load -> dt_derive -> dt_report_md_string) and the new one
 * (dt_record_load -> dt_derive_run -> dt_format_md) must give the same bytes; the stored
 * files must also give their stored results.md (tests/data/results-v1-*.md).
 * Issue 12 changed the report, which the old writer cannot know: the assessment headline
 * (levels per scope, counted reasons), the device section (held control and dispatch; a
 * v1 file's control shows as dispatch), the probe section (kinds; unheld probe note), the
 * roofline prose, the new "Assessment details" and the limits. Those are MARKED CHANGED:
 * only their presence is compared (same_unchanged); every other section — the title,
 * What was run (the Settings line up to what issue 12 appends), host E2E, plots, setup,
 * correctness, GPU clocks, E2E floor, failures — must still be byte-identical. The
 * stored results.md files were regenerated with the new writer and must equal it.
 * The old path is src/report, deleted with the JSON tree: delete this test with it
 * (test_report.c keeps the typed assertions, and the comparison with the stored .md).
 * Run: ctest -R test_format_md_legacy. */
#define _GNU_SOURCE
#include "dt_results_fixture.h"

#include "format/dt_format_md.h"
#include "orchestrate/dt_clocks.h"
#include "report/dt_derive.h"
#include "report/dt_report_md.h"
#include "report/dt_results_io.h"
#include "stats/dt_derive.h"

#include <dirent.h>
#include <unistd.h>

static const fx_run CPU_OK = {.backend = "cpu", .samples = 9, .rounds = 2, .complete = 1,
                              .seed = 11};
static const fx_run CUDA_OK = {.backend = "cuda", .samples = 9, .rounds = 2, .complete = 1,
                               .device = 1, .probe_factor = 1.02, .seed = 12};

static char g_dir[] = "/tmp/dt_test_md_legacy.XXXXXX";

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

/* Prints where a and b first differ (line number and both lines). */
static void show_diff(const char *what, const char *a, const char *b) {
    size_t line = 1, i = 0;
    while (a[i] && a[i] == b[i]) {
        line += a[i] == '\n';
        i++;
    }
    size_t s = i;
    while (s > 0 && a[s - 1] != '\n')
        s--;
    const char *ea = strchr(a + s, '\n'), *eb = strchr(b + s, '\n');
    int la = ea ? (int)(ea - a - s) : (int)strlen(a + s);
    int lb = eb ? (int)(eb - b - s) : (int)strlen(b + s);
    fprintf(stderr, "%s: first difference at line %zu:\n  old: %.*s\n  new: %.*s\n", what, line,
            la, a + s, lb, b + s);
}

/* The section of text that starts with the line `head` (a prefix), up to the next "## "
 * heading or the end; NULL when absent. */
static const char *section(const char *text, const char *head, size_t *len) {
    const char *p = text;
    size_t hl = strlen(head);
    for (;;) {
        if (strncmp(p, head, hl) == 0)
            break;
        p = strstr(p, "\n## ");
        if (!p)
            return NULL;
        p++;
    }
    const char *e = strstr(p + 1, "\n## ");
    *len = e ? (size_t)(e + 1 - p) : strlen(p);
    return p;
}

/* Compares two sections line by line; a line of `a` starting with "Settings:" may be
 * continued in b (issue 12 appends the device windows, probe kind and pinning). */
static int same_lines(const char *a, size_t na, const char *b, size_t nb) {
    const char *ea = a + na, *eb = b + nb;
    while (a < ea && b < eb) {
        const char *la = memchr(a, '\n', (size_t)(ea - a)), *lb = memchr(b, '\n', (size_t)(eb - b));
        size_t ka = la ? (size_t)(la - a) : (size_t)(ea - a);
        size_t kb = lb ? (size_t)(lb - b) : (size_t)(eb - b);
        int ok = ka == kb && memcmp(a, b, ka) == 0;
        if (!ok && strncmp(a, "Settings:", 9) == 0 && ka > 0 && a[ka - 1] == '.')
            ok = kb >= ka && memcmp(a, b, ka - 1) == 0;
        if (!ok)
            return 0;
        a += ka + 1;
        b += kb + 1;
    }
    return a >= ea && b >= eb;
}

static const char *const k_unchanged[] = {
    "## What was run", "## Host end-to-end", "## Plots", "## Setup and cold-call",
    "## Correctness", "## GPU clocks", "## E2E floor", "## Failures"};
static const char *const k_changed[] = {"## Device control", "## Kernel probe diagnostics",
                                        "## Rooflines", "## What these numbers do not establish"};

/* The old writer's and the typed Markdown agree on every section issue 12 left alone, and
 * have the changed ones in the same places (see the file comment). */
static void same_unchanged(const char *what, const char *a, const char *b) {
    const char *ta = strchr(a, '\n'), *tb = strchr(b, '\n');
    CHECK_MSG(ta && tb && ta - a == tb - b && memcmp(a, b, (size_t)(ta - a)) == 0, what);
    for (size_t k = 0; k < sizeof k_unchanged / sizeof k_unchanged[0]; k++) {
        size_t na = 0, nb = 0;
        const char *sa = section(a, k_unchanged[k], &na), *sb = section(b, k_unchanged[k], &nb);
        CHECK_MSG((sa != NULL) == (sb != NULL), k_unchanged[k]);
        if (sa && sb && !same_lines(sa, na, sb, nb)) {
            CHECK_MSG(0, what);
            char *x = strndup(sa, na), *y = strndup(sb, nb);
            show_diff(k_unchanged[k], x, y);
            free(x);
            free(y);
        }
    }
    for (size_t k = 0; k < sizeof k_changed / sizeof k_changed[0]; k++) { /* marked changed */
        size_t na = 0, nb = 0;
        CHECK_MSG((section(a, k_changed[k], &na) != NULL) == (section(b, k_changed[k], &nb) != NULL),
                  k_changed[k]);
    }
    size_t nd = 0;
    CHECK_MSG(strstr(a, "Assessment: **unassessed**") != NULL ||
                  section(b, "## Assessment details", &nd) != NULL, what);
}

/* The old writer's results.md of a results.json file (loaded, derived again). */
static char *old_md(const char *path) {
    json_t *j = NULL;
    dt_err err = {{0}};
    char *t = NULL;
    size_t n = 0;
    if (dt_results_load(path, &j, &err) == DT_OK && dt_derive(j, &err) == DT_OK)
        dt_report_md_string(j, &t, &n, &err);
    if (!t)
        fprintf(stderr, "old path: %s: %s\n", path, err.msg);
    json_decref(j);
    return t;
}

/* The typed results.md of the same file. */
static char *new_md(const char *path) {
    dt_record *r = NULL;
    dt_err err = {{0}};
    char *t = NULL;
    size_t n = 0;
    if (dt_record_load(path, &r, &err) == DT_OK && dt_derive_run(r, &err) == DT_OK)
        dt_format_md(r, &t, &n, &err);
    if (!t)
        fprintf(stderr, "new path: %s: %s\n", path, err.msg);
    dt_record_free(r);
    return t;
}

/* Writes results to a file, then checks that both paths agree byte for byte. */
static void same_md(const char *what, json_t *results) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s.json", g_dir, what);
    char *text = json_dumps(results, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    FILE *f = fopen(path, "wb");
    CHECK(f && text);
    if (f && text)
        fputs(text, f);
    if (f)
        fclose(f);
    free(text);
    char *a = old_md(path), *b = new_md(path);
    if (getenv("DT_TEST_KEEP_MD") && b) { /* debugging: keep the new Markdown */
        char mp[300];
        snprintf(mp, sizeof mp, "%s/%s.md", getenv("DT_TEST_KEEP_MD"), what);
        FILE *mf = fopen(mp, "wb");
        if (mf) {
            fputs(b, mf);
            fclose(mf);
        }
    }
    CHECK_MSG(a && b, what);
    if (a && b)
        same_unchanged(what, a, b);
    free(a);
    free(b);
    json_decref(results);
}

static json_t *run_of(const fx_run *o, int noisy_case, int invalid_case) {
    json_t *r = fx_results(o);
    fx_add_case(r, o, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(r, o, "softmax_1x127", 10.0, 10.0, 0.02, 1);
    if (noisy_case)
        fx_add_case(r, o, "sum_127x193", 9.0, 10.0, 0.4, 1);
    if (invalid_case)
        fx_add_case(r, o, "gemm_fail", 5.0, 10.0, 0.02, 0);
    return r;
}

static json_t *ceilings(const char *backend, double touch_us) {
    json_t *c = json_pack("{s:f,s:i,s:f,s:f,s:s,s:s}", "copy_gbps", 20.0, "copy_bytes",
                          268435456, "launch_sync_floor_us", 9.0, "launch_queue_floor_us", 2.0,
                          "method", "hand-made", "backend", backend);
    if (touch_us > 0)
        json_object_set_new(c, "launch_sync_touch_floor_us", json_real(touch_us));
    return c;
}

static void set_shape(json_t *c, const char *op, int m, int n, int k) {
    json_object_set_new(c, "op", json_string(op));
    json_object_set_new(c, "m", json_integer(m));
    json_object_set_new(c, "n", json_integer(n));
    json_object_set_new(c, "k", json_integer(k));
}

static void test_basic_runs(void) {
    same_md("cpu", run_of(&CPU_OK, 0, 0));
    same_md("cuda", run_of(&CUDA_OK, 0, 0));
    same_md("cuda_noisy_invalid", run_of(&CUDA_OK, 1, 1));
    same_md("cpu_invalid", run_of(&CPU_OK, 0, 1));
    fx_run o = CPU_OK;
    o.complete = 0;
    same_md("incomplete", run_of(&o, 0, 0));
    o = CPU_OK;
    o.samples = 3;
    o.rounds = 1;
    same_md("smoke", run_of(&o, 0, 1));
    o = CUDA_OK;
    o.device = 0;
    same_md("cuda_no_control", run_of(&o, 0, 0));
    o = CUDA_OK;
    o.probe_factor = 1.3;
    same_md("probe_audit", run_of(&o, 0, 0));
    o = CPU_OK;
    o.cand_id = "mine";
    o.base_id = "theirs";
    o.baseline_version = "2.1 <rc>";
    same_md("other_ids", run_of(&o, 1, 0));
    /* 2 pairs: a ratio without an interval, verdict insufficient */
    o = CPU_OK;
    o.samples = 1;
    same_md("two_pairs", run_of(&o, 0, 0));
    /* an invalid case where one implementation recorded nothing (status "missing"), and
     * one marked invalid with no implementation failing */
    json_t *mr = run_of(&CUDA_OK, 0, 1);
    json_object_del(json_object_get(json_array_get(json_object_get(mr, "cases"), 2), "impl"),
                    "torch");
    json_object_set_new(json_array_get(json_object_get(mr, "cases"), 1), "valid", json_false());
    same_md("missing_impl", mr);
    /* the reason list is capped */
    o = CPU_OK;
    o.samples = 2;
    json_t *r = fx_results(&o);
    for (int i = 0; i < 30; i++) {
        char id[32];
        snprintf(id, sizeof id, "case_%02d", i);
        fx_add_case(r, &o, id, 6.0, 10.0, 0.02, 1);
    }
    same_md("capped_reasons", r);
}

static void test_floor_runs(void) {
    for (int touch = 0; touch < 2; touch++) {
        json_t *r = run_of(&CUDA_OK, 1, 1);
        json_object_set_new(json_object_get(r, "environment"), "ceilings",
                            ceilings("cuda", touch ? 11.0 : 0));
        same_md(touch ? "cuda_ceilings_touch" : "cuda_ceilings", r);
    }
    json_t *r = fx_results(&CPU_OK);
    json_object_set_new(json_object_get(r, "environment"), "ceilings", ceilings("cpu", 12.0));
    fx_add_case(r, &CPU_OK, "add_17x257", 6.0, 10.0, 0.0, 1);
    set_shape(fx_add_case(r, &CPU_OK, "add_1024x1024", 6.0, 10.0, 0.0, 1), "add", 1024, 1024, 0);
    set_shape(fx_add_case(r, &CPU_OK, "gemm_64x64x64", 6.0, 10.0, 0.0, 1), "gemm", 64, 64, 64);
    fx_add_case(r, &CPU_OK, "add_fail", 6.0, 10.0, 0.0, 0);
    same_md("cpu_roofline", r);
    /* a failed ceilings measurement and a refused floor request */
    r = run_of(&CPU_OK, 0, 0);
    json_object_set_new(json_object_get(r, "environment"), "ceilings",
                        json_pack("{s:s}", "error", "not offered"));
    json_object_set_new(r, "floor_unavailable", json_string("the worker has no 'floor' request"));
    same_md("no_floor", r);
    /* paired floor samples (cases[].floor) with the run's floor unavailable elsewhere */
    r = fx_results(&CPU_OK);
    json_t *c = fx_add_case(r, &CPU_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    const json_t *single = json_object_get(
        json_object_get(json_object_get(json_object_get(c, "impl"), "native"), "samples"),
        "e2e_single");
    json_t *fs = json_array();
    for (size_t i = 0; i < json_array_size(single); i++) {
        const json_t *s0 = json_array_get(single, i);
        json_array_append_new(fs, json_pack("{s:f,s:O,s:O,s:i}", "us",
                                            json_number_value(json_object_get(s0, "us")) /
                                                (1.02 + 0.01 * (double)((i * 7) % 18)),
                                            "round", json_object_get(s0, "round"), "index",
                                            json_object_get(s0, "index"), "position",
                                            1000 + (int)i));
    }
    json_object_set_new(c, "floor", json_pack("{s:s,s:o}", "worker", "native", "samples", fs));
    fx_add_case(r, &CPU_OK, "softmax_1x127", 10.0, 10.0, 0.02, 1);
    same_md("paired_floor", r);
}

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

static void test_clock_runs(void) {
    for (int moved = 0; moved < 2; moved++) {
        json_t *r = fx_results(&CUDA_OK);
        json_t *c0 = fx_add_case(r, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
        json_t *c1 = fx_add_case(r, &CUDA_OK, "softmax_1x127", 10.0, 10.0, 0.02, 1);
        fx_add_case(r, &CUDA_OK, "sum_17x257", 10.0, 10.0, 0.02, 1); /* no readings */
        json_object_set_new(json_object_get(r, "environment"), "nvml",
                            json_pack("{s:b,s:n}", "available", 1, "reason"));
        for (int round = 0; round < 2; round++) {
            dt_clocks_record(c0, round, clk_snap(1980, 2619, 38, 124.5, 0x1),
                             clk_snap(1980, 2619, 41, 650.0, 0));
            dt_clocks_record(c1, round, clk_snap(1975, 2619, 41, 300.0, 0),
                             clk_snap(1980, 2619, 45, 612.0, 0x1));
        }
        if (moved)
            dt_clocks_record(c0, 2, clk_snap(1980, 2619, 40, 300.0, 0),
                             clk_snap(1755, 2619, 52, 690.0, 0x4));
        same_md(moved ? "clocks_moved" : "clocks_steady", r);
    }
    /* one case with readings, one missing snapshot */
    json_t *r = fx_results(&CUDA_OK);
    json_t *c0 = fx_add_case(r, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    dt_clocks_record(c0, 0, clk_snap(1980, 2619, 38, 124.5, 0x1), NULL);
    same_md("clocks_one", r);
    r = fx_results(&CUDA_OK);
    fx_add_case(r, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    json_object_set_new(json_object_get(r, "environment"), "nvml",
                        json_pack("{s:b,s:s}", "available", 0, "reason",
                                  "NVML not found (tried libnvidia-ml.so.1)"));
    same_md("nvml_absent", r);
}

/* An oracle failure with a first failing element (the JSON dump in the report). */
static void test_first_failure(void) {
    json_t *r = run_of(&CPU_OK, 0, 1);
    json_t *c = json_array_get(json_object_get(r, "cases"), 2);
    json_t *ck = json_array_get(
        json_object_get(json_object_get(json_object_get(c, "impl"), "native"), "checks"), 0);
    json_object_set_new(
        json_object_get(ck, "oracle"), "first_failure",
        json_pack("{s:I,s:I,s:f,s:f,s:f,s:s}", "row", (json_int_t)3, "col", (json_int_t)17,
                  "value", 2.0, "ref", 1.0000001, "bound", 1.5e-7, "text",
                  "out element (3, 17) = 2 \"quoted\" | a*b\tc"));
    json_object_set_new(ck, "arena", json_pack("{s:s}", "first_problem", "guard byte 3 changed"));
    same_md("first_failure", r);
}

/* The stored files of today's main: both paths, and the stored results.md. */
static void test_stored(const char *name) {
    char jpath[512], mpath[512];
    snprintf(jpath, sizeof jpath, "%s/tests/data/%s.json", DT_SOURCE_DIR, name);
    snprintf(mpath, sizeof mpath, "%s/tests/data/%s.md", DT_SOURCE_DIR, name);
    size_t n = 0;
    char *stored = slurp(mpath, &n);
    char *a = old_md(jpath), *b = new_md(jpath);
    CHECK_MSG(stored && a && b, name);
    if (stored && a && b) {
        same_unchanged(name, a, stored); /* stored: regenerated by the new writer */
        CHECK_MSG(strcmp(b, stored) == 0, name);
        if (strcmp(b, stored) != 0)
            show_diff(name, stored, b);
    }
    free(stored);
    free(a);
    free(b);
}

/* The fuzz corpus of the old loader: every file that both paths accept gives the same
 * Markdown (files either path refuses are the codec tests' business). */
static void test_corpus(void) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fuzz/corpus/fuzz_results_load", DT_SOURCE_DIR);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    struct dirent *e;
    size_t compared = 0;
    while (d && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        json_t *j = NULL;
        dt_record *r = NULL;
        dt_err err = {{0}};
        int old_ok = dt_results_load(path, &j, &err) == DT_OK;
        int new_ok = dt_record_load(path, &r, &err) == DT_OK;
        json_decref(j);
        dt_record_free(r);
        if (!old_ok || !new_ok)
            continue;
        char *a = old_md(path), *b = new_md(path);
        CHECK_MSG(a && b, e->d_name);
        if (a && b)
            same_unchanged(e->d_name, a, b);
        compared++;
        free(a);
        free(b);
    }
    if (d)
        closedir(d);
    CHECK(compared >= 3);
    printf("corpus: %zu files compared\n", compared);
}

int main(void) {
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_basic_runs();
    test_floor_runs();
    test_clock_runs();
    test_first_failure();
    test_stored("results-v1-cpu");
    test_stored("results-v1-device");
    test_corpus();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return fx_summary();
}
