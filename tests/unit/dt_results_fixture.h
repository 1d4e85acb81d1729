/* dt_results_fixture.h — hand-built results.json objects for report and compare tests
 * (no GPU, no workers). Header-only; included by tests/unit/test_report.c and
 * tests/unit/test_compare.c. fx_record() turns a fixture into a typed dt_record through
 * the codec (dt_record_decode), the way `dualtime report` reads a results.json, and then
 * makes it a run with held windows (fx_as_held): the fixture is written in format 1,
 * whose control samples decode as dispatch (they were unheld), while the tests built on
 * it are about the control of a new run. fx_record_unheld() keeps the old-file reading.
 * Also a tiny check harness printing "N tests, N passed, N failed". */
#ifndef DT_RESULTS_FIXTURE_H
#define DT_RESULTS_FIXTURE_H

#include "common/dt_common.h"
#include "record/dt_record.h"
#include "record/dt_record_json.h"
#include "stats/dt_stats.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int fx_total, fx_failed;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        fx_total++;                                                                        \
        if (!(cond)) {                                                                     \
            fx_failed++;                                                                   \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);             \
        }                                                                                  \
    } while (0)

#define CHECK_MSG(cond, msg)                                                               \
    do {                                                                                   \
        fx_total++;                                                                        \
        if (!(cond)) {                                                                     \
            fx_failed++;                                                                   \
            fprintf(stderr, "%s:%d: FAILED: %s (%s)\n", __FILE__, __LINE__, #cond, (msg)); \
        }                                                                                  \
    } while (0)

static inline int fx_summary(void) {
    printf("%d tests, %d passed, %d failed\n", fx_total, fx_total - fx_failed, fx_failed);
    return fx_failed ? 1 : 0;
}

/* Options of a synthetic run. */
typedef struct fx_run {
    const char *cand_id, *base_id; /* framework ids (default native / torch) */
    const char *backend;           /* "cpu" or "cuda" */
    int samples, rounds;           /* per scope per round */
    int complete;
    int device;                    /* add control_* and probe_* scopes */
    double probe_factor;           /* probe.us = control.us * probe_factor */
    uint64_t seed;                 /* jitter stream */
    const char *baseline_version;
} fx_run;

static inline json_t *fx_results(const fx_run *o) {
    json_t *r = json_object();
    json_object_set_new(r, "format", json_string("dualtime-results"));
    json_object_set_new(r, "format_version", json_integer(1));
    json_object_set_new(r, "complete", json_boolean(o->complete));
    json_object_set_new(r, "tool", json_pack("{s:s,s:s,s:s,s:b}", "name", "dualtime", "version",
                                             "0.1.0", "git_revision", "abc123", "git_dirty", 0));
    json_object_set_new(r, "command_line", json_pack("[s,s,s,s]", "dualtime", "run",
                                                     "--backends", o->backend));
    json_object_set_new(r, "started_at", json_string("2026-11-30T09:00:00Z"));
    json_object_set_new(r, "finished_at", json_string("2026-11-30T09:05:00Z"));
    json_object_set_new(
        r, "settings",
        json_pack("{s:s,s:s,s:i,s:f,s:f,s:i,s:i,s:b,s:i,s:b,s:b,s:{s:i,s:i}}", "backend",
                  o->backend, "backend_choice", "requested (--backends)", "samples", o->samples,
                  "sample_ms", 20.0, "warmup_ms", 150.0, "rounds", o->rounds, "seed", 1,
                  "input_views", 0, "threads", 2, "quick", 1, "device_timing", o->device,
                  "bootstrap", "resamples", 500, "seed", 7));
    const char *cand = o->cand_id ? o->cand_id : "native";
    const char *base = o->base_id ? o->base_id : "torch";
    json_object_set_new(
        r, "frameworks",
        json_pack("[{s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s}]", "id", cand, "role", "candidate",
                  "framework", "dualtime-native", "framework_version", "0.1.0", "id", base,
                  "role", "baseline", "framework", "pytorch", "framework_version",
                  o->baseline_version ? o->baseline_version : "1.13.1"));
    json_object_set_new(r, "environment",
                        json_pack("{s:{s:s,s:i,s:s},s:n}", "host", "cpu", "Test CPU", "cores",
                                  2, "os", "Debian 12", "gpu"));
    json_object_set_new(r, "cases", json_array());
    return r;
}

static inline double fx_jitter(uint64_t *st, double amp) {
    double u = (double)(dt_stats_splitmix64(st) >> 11) / 9007199254740992.0; /* [0,1) */
    return 1.0 + amp * (2 * u - 1);
}

static inline json_t *fx_samples(const fx_run *o, double us, double jitter, uint64_t *st, int *pos,
                          int device, double factor, int probe) {
    json_t *a = json_array();
    for (int r = 0; r < o->rounds; r++)
        for (int i = 0; i < o->samples; i++) {
            json_t *s = json_pack("{s:f,s:i,s:i,s:i,s:i}", "us", us * fx_jitter(st, jitter) * factor,
                                  "reps", device ? 64 : 100, "round", r, "index", i, "position",
                                  (*pos)++);
            if (device && probe) {
                double ks = us * 0.9;
                json_object_set_new(s, "kernel_sum_us", json_real(ks));
                json_object_set_new(s, "kernel_span_us", json_real(us * 0.95));
                json_object_set_new(s, "kernel_count", json_integer(128));
                json_object_set_new(
                    s, "kernels",
                    json_pack("[{s:s,s:i,s:f},{s:s,s:i,s:f}]", "name",
                              "void add_kernel<float>(float*, int|x)", "count", 64, "us",
                              ks * 0.75, "name", "fill_kernel", "count", 64, "us", ks * 0.25));
            }
            json_array_append_new(a, s);
        }
    return a;
}

/* Adds a case whose candidate runs at cand_us and baseline at base_us per call (E2E
 * batch; single is 3x; device scopes 0.8x), each sample jittered by ±jitter. */
static inline json_t *fx_add_case(json_t *r, const fx_run *o, const char *id, double cand_us,
                           double base_us, double jitter, int valid) {
    const char *ids[2] = {o->cand_id ? o->cand_id : "native", o->base_id ? o->base_id : "torch"};
    double us[2] = {cand_us, base_us};
    uint64_t st = o->seed ^ (uint64_t)json_array_size(json_object_get(r, "cases")) * 7919u;
    int pos = 0;
    json_t *c = json_pack("{s:s,s:s,s:i,s:i,s:i,s:b,s:s,s:b,s:{s:f,s:f,s:s},s:[{s:s,s:s}]}",
                          "id", id, "op", "add", "m", 17, "n", 257, "k", 0, "views", 0,
                          "backend", o->backend, "valid", valid, "tolerance", "atol", 0.0,
                          "rtol", 0.0, "scale", "|a| + |b|", "inputs", "name", "a", "sha256",
                          "00ff");
    json_t *impl = json_object();
    for (int f = 0; f < 2; f++) {
        int failed = !valid && f == 0;
        json_t *im = json_pack(
            "{s:s,s:o,s:s,s:s,s:{s:f,s:f,s:f,s:f,s:f},s:{s:f,s:i},s:{s:i},"
            "s:[{s:s,s:b,s:{s:b,s:i,s:f,s:f,s:i}}]}",
            "status", failed ? "failed" : "ok",
            "error", failed ? json_string("worker crashed (signal 11)") : json_null(),
            "stderr_tail", failed ? "Segmentation fault\nline with ``` fence | pipe" : "",
            "output_policy", "preallocated", "setup_ms", "compile", f ? 0.0 : 12.5, "alloc",
            0.01, "upload", 0.0, "cold_call", 0.02, "download", 0.0, "warmup", "ms", 150.2,
            "calls", 1234, "calibration", "reps", 100, "checks", "when", "cold", "ok", !failed,
            "oracle", "ok", !failed, "elements", 4369, "max_abs_error", failed ? 0.5 : 0.0,
            "max_budget_used", failed ? 3.0 : 0.0, "failures", failed ? 3 : 0);
        json_t *sm = json_object();
        json_object_set_new(sm, "e2e_batch", fx_samples(o, us[f], jitter, &st, &pos, 0, 1.0, 0));
        json_object_set_new(sm, "e2e_single", fx_samples(o, 3 * us[f], jitter, &st, &pos, 0, 1.0, 0));
        if (o->device) {
            uint64_t st2 = st;
            json_object_set_new(sm, "control_batch",
                                fx_samples(o, 0.8 * us[f], jitter, &st, &pos, 1, 1.0, 0));
            json_object_set_new(sm, "probe_batch", fx_samples(o, 0.8 * us[f], jitter, &st2, &pos,
                                                              1, o->probe_factor, 1));
            st2 = st;
            json_object_set_new(sm, "control_single",
                                fx_samples(o, 2.4 * us[f], jitter, &st, &pos, 1, 1.0, 0));
            json_object_set_new(sm, "probe_single", fx_samples(o, 2.4 * us[f], jitter, &st2,
                                                               &pos, 1, o->probe_factor, 1));
        }
        json_object_set_new(im, "samples", sm);
        json_object_set_new(impl, ids[f], im);
    }
    json_object_set_new(c, "impl", impl);
    json_array_append_new(json_object_get(r, "cases"), c);
    return c;
}

/* A decoded old-format record as a run with held windows records it: its dispatch
 * samples (the old unheld control) become control samples, settings.held_windows 1 and
 * the probe no longer marked unheld. Derived blocks are cleared (derive again). */
static inline dt_record *fx_as_held(dt_record *rec) {
    if (!rec || rec->settings.held_windows)
        return rec;
    for (size_t c = 0; c < rec->n_cases; c++)
        for (size_t i = 0; i < rec->n_impls; i++) {
            dt_samples *sm = rec->cases[c].impl[i].samples;
            for (int q = 0; q < 2; q++) {
                dt_samples tmp = sm[DT_SCOPE_CONTROL_BATCH + q];
                sm[DT_SCOPE_CONTROL_BATCH + q] = sm[DT_SCOPE_DISPATCH_BATCH + q];
                sm[DT_SCOPE_DISPATCH_BATCH + q] = tmp;
            }
        }
    rec->settings.held_windows = 1;
    rec->probe_unheld = 0;
    dt_record_derived_clear(rec);
    return rec;
}

/* The fixture as the codec reads it (an old-format file: control is dispatch). */
static inline dt_record *fx_record_unheld(const json_t *results);

/* The fixture as a typed record of a held-window run (see above; NULL, with the codec's
 * message on stderr, when the codec refuses). The caller frees it (dt_record_free). */
static inline dt_record *fx_record(const json_t *results) {
    return fx_as_held(fx_record_unheld(results));
}

static inline dt_record *fx_record_unheld(const json_t *results) {
    char *text = json_dumps(results, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    dt_record *rec = NULL;
    dt_err err = {{0}};
    if (!text || dt_record_decode(text, strlen(text), "fixture", &rec, &err) != DT_OK) {
        fprintf(stderr, "fx_record: %s\n", text ? err.msg : "json_dumps failed");
        rec = NULL;
    }
    free(text);
    return rec;
}

#endif
