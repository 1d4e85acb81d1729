/* test_derive.c — the typed derive step (src/stats/dt_derive.c): for the v1 test data,
 * every derived value — summaries, noise, ratios and intervals, verdicts, probe/control,
 * probe kernel medians, rooflines, E2E floors, the assessment level with every reason,
 * counts — must equal the derived objects main stored in the file, bit for bit (the old
 * derive step, src/report/dt_derive.c, was the oracle until it was deleted; these files
 * keep its answers). Synthetic runs derive without error and deterministically: derived,
 * encoded, decoded and derived again they encode to the same bytes. Then derive's rules on typed records:
 * the assertions test_report.c makes about derive, planted rule checks, thresholds read
 * from the record's policy, and a run with two candidates. Run: ctest -R test_derive. */
#define _GNU_SOURCE
#include "dt_results_fixture.h"
/* the shared counting harness (the fixture may carry its own CHECK) */
#undef CHECK
#undef CHECK_MSG
#undef DT_CHECK_H
#include "../dt_check.h"

#include "record/dt_record.h"
#include "record/dt_record_json.h"
#include "stats/dt_derive.h"
#include "dt_clocks_fixture.h" /* cases[].clocks for JSON fixtures */

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const fx_run CPU_OK = {.backend = "cpu", .samples = 9, .rounds = 2, .complete = 1,
                              .seed = 11};
static const fx_run CUDA_OK = {.backend = "cuda", .samples = 9, .rounds = 2, .complete = 1,
                               .device = 1, .probe_factor = 1.02, .seed = 12};

/* ---- stored (old derive) vs new: every derived value equal ---- */

static size_t g_compared; /* values compared, so that a comparison cannot be empty */

/* x equals the JSON number j exactly; NaN equals null or absent. */
static int num_eq(const json_t *j, double x) {
    g_compared++;
    if (!j || json_is_null(j))
        return isnan(x);
    return json_is_number(j) && json_number_value(j) == x;
}

static json_t *jget(const json_t *o, const char *a) { return o ? json_object_get(o, a) : NULL; }

#define NUM(j, x, ...) CHECK(num_eq((j), (x)), __VA_ARGS__)

static void cmp_ratio(const json_t *o, const dt_rec_ratio *q, const char *what) {
    NUM(jget(o, "median"), q->median, "%s.median", what);
    NUM(jget(o, "ci_low"), q->ci_low, "%s.ci_low", what);
    NUM(jget(o, "ci_high"), q->ci_high, "%s.ci_high", what);
    CHECK((size_t)json_integer_value(jget(o, "pairs")) == q->pairs, "%s.pairs", what);
    CHECK((size_t)json_integer_value(jget(o, "skipped_pairs")) == q->skipped_pairs,
          "%s.skipped_pairs", what);
}

static void cmp_probe(const json_t *o, const dt_probe_summary *ps, const char *what) {
    CHECK((o != NULL) == (ps->present != 0), "%s probe present", what);
    if (!o || !ps->present)
        return;
    NUM(jget(o, "kernel_sum_us_p50"), ps->kernel_sum_us_p50, "%s kernel_sum", what);
    NUM(jget(o, "kernel_span_us_p50"), ps->kernel_span_us_p50, "%s kernel_span", what);
    NUM(jget(o, "kernels_per_call_p50"), ps->kernels_per_call_p50, "%s kernels/call", what);
    const json_t *ks = jget(o, "kernels");
    CHECK(json_array_size(ks) == ps->n_kernels, "%s kernel count", what);
    for (size_t q = 0; q < ps->n_kernels && q < json_array_size(ks); q++) {
        const json_t *k = json_array_get(ks, q);
        CHECK(strcmp(json_string_value(jget(k, "name")), ps->kernels[q].name) == 0,
              "%s kernel %zu name", what, q);
        NUM(jget(k, "per_call_p50"), ps->kernels[q].per_call_p50, "%s kernel %zu", what, q);
        NUM(jget(k, "us_p50"), ps->kernels[q].us_p50, "%s kernel %zu us", what, q);
    }
}

static void cmp_scope(const json_t *so, const dt_record *r, const dt_scope_derived *sd,
                      const char *what) {
    for (size_t i = 0; i < r->n_impls; i++) {
        const char *id = r->impls[i].id;
        const json_t *s = jget(so, id);
        const dt_scope_impl *si = &sd->impl[i];
        CHECK(s && (size_t)json_integer_value(jget(s, "n")) == si->summary.n, "%s %s n", what, id);
        if (si->summary.n > 0) {
            NUM(jget(s, "p50"), si->summary.p50, "%s %s p50", what, id);
            NUM(jget(s, "p90"), si->summary.p90, "%s %s p90", what, id);
            NUM(jget(s, "min"), si->summary.min, "%s %s min", what, id);
            NUM(jget(s, "max"), si->summary.max, "%s %s max", what, id);
            NUM(jget(s, "iqr"), si->summary.iqr, "%s %s iqr", what, id);
        } else {
            CHECK(json_object_size(s) == 1, "%s %s: {n:0} only", what, id);
        }
        NUM(jget(jget(so, "noise"), id), si->noise, "%s %s noise", what, id);
        const json_t *poc = jget(jget(so, "probe_over_control"), id);
        CHECK((poc != NULL) == (si->has_probe_over_control != 0), "%s %s poc present", what, id);
        if (poc) {
            NUM(jget(poc, "median"), si->probe_over_control, "%s %s poc", what, id);
            CHECK((size_t)json_integer_value(jget(poc, "pairs")) == si->probe_over_control_pairs,
                  "%s %s poc pairs", what, id);
        }
        char w[640];
        snprintf(w, sizeof w, "%s %s", what, id);
        cmp_probe(jget(jget(so, "probe"), id), &si->probe, w);
    }
    /* v1: one candidate, impls[1] */
    const dt_scope_vs *vs = &sd->vs[1];
    CHECK(vs->present, "%s vs present", what);
    CHECK(strcmp(json_string_value(jget(so, "verdict")), dt_rec_verdict_name(vs->verdict)) == 0,
          "%s verdict %s vs %s", what, json_string_value(jget(so, "verdict")),
          dt_rec_verdict_name(vs->verdict));
    CHECK((jget(so, "ratio") != NULL) == (vs->has_ratio != 0), "%s ratio present", what);
    if (vs->has_ratio) {
        char w[640];
        snprintf(w, sizeof w, "%s ratio", what);
        cmp_ratio(jget(so, "ratio"), &vs->ratio, w);
    }
}

/* The old derive's name of typed scope s: in a record read from a file before held
 * windows the typed dispatch scopes are what the old code called control, and the typed
 * control scopes have no old counterpart ("-"). */
static const char *old_name(const dt_record *r, dt_scope s) {
    if (r->settings.held_windows)
        return dt_scope_name(s);
    if (s == DT_SCOPE_CONTROL_BATCH || s == DT_SCOPE_CONTROL_SINGLE)
        return "-";
    if (s == DT_SCOPE_DISPATCH_BATCH)
        return "control_batch";
    if (s == DT_SCOPE_DISPATCH_SINGLE)
        return "control_single";
    return dt_scope_name(s);
}

static void cmp_roofline(const json_t *rl, const dt_record *r, const dt_roofline *q,
                         const char *what) {
    CHECK((rl != NULL) == (q->present != 0), "%s roofline present", what);
    if (!rl || !q->present)
        return;
    NUM(jget(rl, "min_bytes"), q->min_bytes, "%s min_bytes", what);
    NUM(jget(rl, "flops"), q->flops, "%s flops", what);
    NUM(jget(rl, "copy_gbps"), q->copy_gbps, "%s copy_gbps", what);
    CHECK(strcmp(json_string_value(jget(rl, "bound")), dt_bound_name(q->bound)) == 0, "%s bound",
          what);
    for (size_t i = 0; i < r->n_impls; i++) {
        const json_t *e = jget(jget(rl, "impl"), r->impls[i].id);
        const dt_roofline_impl *ri = &q->impl[i];
        CHECK((e != NULL) == (ri->present != 0), "%s roofline %zu present", what, i);
        if (!e || !ri->present)
            continue;
        CHECK(strcmp(json_string_value(jget(e, "scope")), old_name(r, ri->scope)) == 0,
              "%s roofline scope", what);
        NUM(jget(e, "us"), ri->us, "%s roofline us", what);
        NUM(jget(e, "gbps"), ri->gbps, "%s roofline gbps", what);
        NUM(jget(e, "copy_pct"), ri->copy_pct, "%s roofline copy_pct", what);
        NUM(jget(e, "tflops"), ri->tflops, "%s roofline tflops", what);
    }
}

static void cmp_floor(const json_t *ef, const dt_record *r, const dt_e2e_floor *q,
                      const char *what) {
    CHECK((ef != NULL) == (q->present != 0), "%s e2e_floor present", what);
    if (!ef || !q->present)
        return;
    CHECK(strcmp(json_string_value(jget(ef, "floor_source")), dt_floor_source_name(q->source)) ==
              0, "%s floor_source", what);
    NUM(jget(ef, "floor_us"), q->floor_us, "%s floor_us", what);
    NUM(jget(ef, "case_floor_us"), q->case_floor_us, "%s case_floor_us", what);
    NUM(jget(ef, "touch_floor_us"), q->touch_floor_us, "%s touch_floor_us", what);
    for (size_t i = 0; i < r->n_impls; i++) {
        const json_t *e = jget(ef, r->impls[i].id);
        const dt_e2e_floor_impl *fi = &q->impl[i];
        CHECK((e != NULL) == (fi->present != 0), "%s floor %zu present", what, i);
        if (!e || !fi->present)
            continue;
        NUM(jget(e, "single_us"), fi->single_us, "%s single_us", what);
        NUM(jget(e, "over_floor"), fi->over_floor, "%s over_floor", what);
        NUM(jget(e, "over_touch_floor"), fi->over_touch_floor, "%s over_touch", what);
        CHECK((jget(e, "over_floor_ratio") != NULL) == (fi->has_over_floor_ratio != 0),
              "%s over_floor_ratio present", what);
        if (fi->has_over_floor_ratio)
            cmp_ratio(jget(e, "over_floor_ratio"), &fi->over_floor_ratio, what);
    }
}

/* Every derived value of `old` (a results object the old dt_derive filled) equals the
 * typed record's. */
static void cmp_run(const json_t *old, const dt_record *r, const char *what) {
    const json_t *cases = jget(old, "cases");
    CHECK(r->derived.present && json_array_size(cases) == r->n_cases, "%s: cases", what);
    for (size_t c = 0; c < r->n_cases && c < json_array_size(cases); c++) {
        const dt_case *dc = &r->cases[c];
        const json_t *d = jget(json_array_get(cases, c), "derived");
        const json_t *scopes = jget(d, "scopes");
        char w[256];
        CHECK(dc->derived.present, "%s %s derived", what, dc->id);
        for (int s = 0; s < DT_SCOPE_COUNT; s++) {
            const json_t *so = jget(scopes, old_name(r, (dt_scope)s));
            CHECK((so != NULL) == (dc->derived.scopes[s].present != 0), "%s %s %s present", what,
                  dc->id, dt_scope_name((dt_scope)s));
            snprintf(w, sizeof w, "%s %s %s", what, dc->id, dt_scope_name((dt_scope)s));
            if (so && dc->derived.scopes[s].present)
                cmp_scope(so, r, &dc->derived.scopes[s], w);
        }
        CHECK(json_object_size(scopes) <= DT_SCOPE_COUNT, "%s: unknown scopes", what);
        snprintf(w, sizeof w, "%s %s", what, dc->id);
        cmp_roofline(jget(d, "roofline"), r, &dc->derived.roofline, w);
        cmp_floor(jget(d, "e2e_floor"), r, &dc->derived.e2e_floor, w);
    }
    const json_t *as = jget(jget(old, "derived"), "assessment");
    /* the old run level also took the probe scopes' findings; the typed run level leaves
     * them to the probe scopes (diagnostics), so the old level is the lowest of both */
    dt_level lowest = r->derived.level;
    for (int s = DT_SCOPE_PROBE_BATCH; s <= DT_SCOPE_PROBE_SINGLE; s++)
        if (r->derived.scopes[s].present && r->derived.scopes[s].level < lowest)
            lowest = r->derived.scopes[s].level;
    CHECK(strcmp(json_string_value(jget(as, "level")), dt_level_name(lowest)) == 0,
          "%s: level %s vs %s", what, json_string_value(jget(as, "level")),
          dt_level_name(lowest));
    const json_t *rs = jget(as, "reasons");
    CHECK(json_array_size(rs) == r->derived.reasons.n, "%s: %zu vs %zu reasons", what,
          json_array_size(rs), r->derived.reasons.n);
    if (r->settings.held_windows) {
        for (size_t k = 0; k < json_array_size(rs) && k < r->derived.reasons.n; k++)
            CHECK(strcmp(json_string_value(json_array_get(rs, k)), r->derived.reasons.v[k]) == 0,
                  "%s: reason %zu: \"%s\" vs \"%s\"", what, k,
                  json_string_value(json_array_get(rs, k)), r->derived.reasons.v[k]);
    } else {
        /* a file before held windows: the same findings, its control named dispatch (and
         * so listed after the probe's in scope order) */
        for (size_t k = 0; k < json_array_size(rs); k++) {
            const char *o = json_string_value(json_array_get(rs, k));
            const char *ctl = strstr(o, " control_");
            char want[512];
            if (ctl)
                snprintf(want, sizeof want, "%.*s dispatch_%s", (int)(ctl - o), o, ctl + 9);
            else
                snprintf(want, sizeof want, "%s", o);
            int found = 0;
            for (size_t q = 0; q < r->derived.reasons.n && !found; q++)
                found = strcmp(r->derived.reasons.v[q], want) == 0;
            CHECK(found, "%s: reason \"%s\" (as \"%s\") missing", what, o, want);
        }
    }
    const json_t *cn = jget(jget(old, "derived"), "counts");
    CHECK((size_t)json_integer_value(jget(cn, "cases")) == r->derived.n_cases, "%s: cases", what);
    CHECK((size_t)json_integer_value(jget(cn, "valid")) == r->derived.n_valid, "%s: valid", what);
    for (int v = 0; v < DT_REC_VERDICT_COUNT; v++)
        CHECK((size_t)json_integer_value(jget(cn, dt_rec_verdict_name((dt_rec_verdict)v))) ==
                  r->derived.vs[1].n[v], "%s: count %s", what,
              dt_rec_verdict_name((dt_rec_verdict)v));
}

/* The typed record of a results object (through the codec) with derive run on it. */
static dt_record *typed_derived(const json_t *results, const char *what) {
    char *text = json_dumps(results, JSON_COMPACT);
    dt_record *r = NULL;
    dt_err err = {{0}};
    dt_status st = dt_record_decode(text, strlen(text), what, &r, &err);
    CHECK(st == DT_OK, "%s: decode: %s", what, err.msg);
    free(text);
    if (st != DT_OK)
        return NULL;
    fx_as_held(r); /* the synthetic runs stand for new runs (dt_results_fixture.h) */
    st = dt_derive_run(r, &err);
    CHECK(st == DT_OK, "%s: dt_derive_run: %s", what, err.msg);
    return r;
}

/* The typed derive of `results`; with `again` also: encoded (format 2), decoded and
 * derived again, the record encodes to the same bytes (every derived value reproduced).
 * Returns the typed record (caller frees). */
static dt_record *both_ways_again(json_t *results, const char *what, int again) {
    dt_record *r = typed_derived(results, what);
    if (!again || !r)
        return r;
    dt_err err = {{0}};
    char *text = NULL, *text2 = NULL;
    size_t len = 0, len2 = 0;
    dt_record *back = NULL;
    if (dt_record_encode(r, &text, &len, &err) == DT_OK &&
        dt_record_decode(text, len, what, &back, &err) == DT_OK &&
        dt_derive_run(back, &err) == DT_OK && dt_record_encode(back, &text2, &len2, &err) == DT_OK) {
        g_compared++;
        CHECK(len == len2 && memcmp(text, text2, len) == 0, "%s: derived again after a round "
              "trip, the record encodes differently", what);
    } else {
        CHECK(0, "%s: encode, decode, derive: %s", what, err.msg);
    }
    free(text);
    free(text2);
    dt_record_free(back);
    return r;
}

static dt_record *both_ways(json_t *results, const char *what) {
    return both_ways_again(results, what, 1);
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = dt_xmalloc((size_t)len + 1);
    *n = fread(buf, 1, (size_t)len, f);
    buf[*n] = 0;
    fclose(f);
    return buf;
}

/* The v1 files written by main: the typed derive equals the derived objects stored in
 * the file (written by the old derive step). */
static void test_v1_files(void) {
    static const char *files[] = {"results-v1-cpu.json", "results-v1-device.json"};
    for (size_t f = 0; f < 2; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/data/%s", DT_SOURCE_DIR, files[f]);
        size_t n = 0;
        char *text = slurp(path, &n);
        CHECK(text != NULL, "read %s", path);
        if (!text)
            continue;
        dt_record *r = NULL;
        dt_err err = {{0}};
        CHECK(dt_record_decode(text, n, path, &r, &err) == DT_OK, "decode %s: %s", path, err.msg);
        json_t *stored = json_loadb(text, n, 0, NULL);
        CHECK(stored != NULL, "parse %s", path);
        if (r && stored) {
            CHECK(dt_derive_run(r, &err) == DT_OK, "%s: %s", path, err.msg);
            size_t before = g_compared;
            cmp_run(stored, r, files[f]);
            CHECK(g_compared - before > 100, "%s: only %zu values compared", files[f],
                  g_compared - before);
            /* deriving again reproduces the record */
            dt_record *r2 = NULL;
            CHECK(dt_record_decode(text, n, path, &r2, &err) == DT_OK, "%s", err.msg);
            if (r2) {
                CHECK(dt_derive_run(r2, &err) == DT_OK && dt_derive_run(r2, &err) == DT_OK, "%s",
                      err.msg);
                cmp_run(stored, r2, files[f]);
                dt_record_free(r2);
            }
        }
        json_decref(stored);
        dt_record_free(r);
        free(text);
    }
}

static json_t *ceilings_fixture(int touch) {
    json_t *c = json_pack("{s:f,s:i,s:f,s:f,s:s,s:s}", "copy_gbps", 20.0, "copy_bytes",
                          268435456, "launch_sync_floor_us", 9.0, "launch_queue_floor_us", 2.0,
                          "method", "hand-made", "backend", "cpu");
    if (touch)
        json_object_set_new(c, "launch_sync_touch_floor_us", json_real(12.0));
    return c;
}

static void set_shape(json_t *c, const char *op, int m, int n, int k) {
    json_object_set_new(c, "op", json_string(op));
    json_object_set_new(c, "m", json_integer(m));
    json_object_set_new(c, "n", json_integer(n));
    json_object_set_new(c, "k", json_integer(k));
}

/* Paired floor samples for case c: floor i = candidate single i / (1.02 + 0.01 k), plus
 * one floor sample that pairs with nothing. */
static void add_floor(json_t *c, const char *cand) {
    const json_t *singles = jget(jget(jget(jget(c, "impl"), cand), "samples"), "e2e_single");
    json_t *fs = json_array();
    size_t n = json_array_size(singles);
    for (size_t i = 0; i < n; i++) {
        const json_t *s0 = json_array_get(singles, i);
        double fl = json_number_value(jget(s0, "us")) / (1.02 + 0.01 * (double)((i * 7) % n));
        json_array_append_new(fs, json_pack("{s:f,s:O,s:O,s:i}", "us", fl, "round",
                                            jget(s0, "round"), "index", jget(s0, "index"),
                                            "position", 1000 + (int)i));
    }
    json_array_append_new(fs, json_pack("{s:f,s:i,s:i,s:i}", "us", 1e-3, "round", 0, "index",
                                        999, "position", 2000));
    json_object_set_new(c, "floor", json_pack("{s:s,s:o}", "worker", cand, "samples", fs));
}

static json_t *clk_snap(int sm, int temp, double power_w, long long mask) {
    json_t *s = json_pack("{s:i,s:i,s:i,s:f,s:I,s:i}", "sm_mhz", sm, "mem_mhz", 2619, "temp_c",
                          temp, "power_w", power_w, "throttle_mask", (json_int_t)mask, "pstate", 0);
    json_object_set_new(s, "throttle_reasons", json_array());
    return s;
}

static int reason_has(const dt_record *r, const char *needle) {
    for (size_t i = 0; r && i < r->derived.reasons.n; i++)
        if (strstr(r->derived.reasons.v[i], needle))
            return 1;
    return 0;
}

/* One synthetic run (fixture), derived both ways. */
static void synth(const fx_run *o, int variant, const char *what) {
    json_t *r = fx_results(o);
    if (variant & 1)
        json_object_set_new(jget(r, "environment"), "ceilings", ceilings_fixture(variant & 2));
    if (variant & 4)
        json_object_set_new(jget(r, "environment"), "ceilings",
                            json_pack("{s:s}", "error", "not offered"));
    fx_add_case(r, o, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(r, o, "softmax_1x127", 10.0, 10.0, 0.02, 1);
    fx_add_case(r, o, "sum_127x193", 9.0, 10.0, 0.4, 1);
    fx_add_case(r, o, "gemm_fail", 5.0, 10.0, 0.02, 0);
    fx_add_case(r, o, "slow_1x1", 13.0, 10.0, 0.01, 1);
    set_shape(fx_add_case(r, o, "add_1024x1024", 6.0, 10.0, 0.0, 1), "add", 1024, 1024, 0);
    set_shape(fx_add_case(r, o, "gemm_64x64x64", 6.0, 10.0, 0.03, 1), "gemm", 64, 64, 64);
    json_t *c = fx_add_case(r, o, "add_1x127", 6.0, 10.0, 0.02, 1);
    if (variant & 8) { /* paired floor; clocks: steady in case 0, moved in this one */
        add_floor(c, o->cand_id ? o->cand_id : "native");
        for (int round = 0; round < 2; round++) {
            fx_clocks_record(json_array_get(jget(r, "cases"), 0), round,
                             clk_snap(1980, 40, 300.0, 0), clk_snap(1980, 41, 310.0, 0));
            fx_clocks_record(c, round, clk_snap(1980, 40, 300.0, 0),
                             clk_snap(round ? 1700 : 1980, 45, 320.0, 0));
        }
    }
    dt_record *t = both_ways(r, what);
    if (variant & 8)
        CHECK(reason_has(t, "add_1x127: GPU clocks moved during the case") &&
                  !reason_has(t, "add_17x257: GPU clocks"), "%s: clocks", what);
    dt_record_free(t);
    json_decref(r);
}

static void test_synthetic(void) {
    fx_run o;
    for (int v = 0; v < 16; v++) {
        char w[64];
        snprintf(w, sizeof w, "cpu variant %d", v);
        synth(&CPU_OK, v, w);
        snprintf(w, sizeof w, "cuda variant %d", v);
        synth(&CUDA_OK, v, w);
    }
    o = CPU_OK;
    o.samples = 3;
    o.rounds = 1;
    synth(&o, 9, "3 samples, 1 round");
    o = CPU_OK;
    o.samples = 1;
    synth(&o, 0, "1 sample");
    o = CUDA_OK;
    o.device = 0;
    synth(&o, 0, "cuda without device control");
    o = CUDA_OK;
    o.probe_factor = 1.3;
    synth(&o, 3, "probe 1.3");
    o = CPU_OK;
    o.complete = 0;
    synth(&o, 0, "incomplete");
    o = CPU_OK;
    o.cand_id = "mine";
    o.base_id = "theirs";
    synth(&o, 11, "other ids");

    /* the capped reason list; a run without cases; a run without a valid case */
    o = CPU_OK;
    o.samples = 2;
    json_t *r = fx_results(&o);
    for (int i = 0; i < 30; i++) {
        char id[32];
        snprintf(id, sizeof id, "case_%02d", i);
        fx_add_case(r, &o, id, 6.0, 10.0, 0.02, 1);
    }
    dt_record *t = both_ways(r, "30 cases");
    CHECK(t && t->derived.reasons.n == t->derived.policy.max_reasons + 1, "capped");
    dt_record_free(t);
    json_decref(r);
    r = fx_results(&CPU_OK);
    dt_record_free(both_ways(r, "no cases"));
    fx_add_case(r, &CPU_OK, "bad", 6.0, 10.0, 0.02, 0);
    dt_record_free(both_ways(r, "no valid case"));
    json_decref(r);

    /* rounds unknown (no settings.rounds): taken from the samples */
    r = fx_results(&CPU_OK);
    json_object_del(jget(r, "settings"), "rounds");
    fx_add_case(r, &CPU_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    /* not re-encoded: the codec writes rounds unknown as null, which its v2 decode refuses
     * (reported to the codec's owner) */
    dt_record_free(both_ways_again(r, "rounds from samples", 0));
    json_decref(r);

    /* pairing by (round, index) whatever the storage order: the baseline's samples stored
     * in reverse; kernel medians sorted (the second kernel made the largest) */
    r = fx_results(&CUDA_OK);
    json_t *c = fx_add_case(r, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.05, 1);
    const char *key;
    json_t *arr;
    json_object_foreach(jget(jget(jget(c, "impl"), "torch"), "samples"), key, arr) {
        size_t n = json_array_size(arr);
        json_t *rev = json_array();
        for (size_t i = n; i-- > 0;)
            json_array_append(rev, json_array_get(arr, i));
        json_array_clear(arr);
        json_array_extend(arr, rev);
        json_decref(rev);
    }
    size_t i;
    json_t *s;
    json_array_foreach(jget(jget(jget(jget(c, "impl"), "native"), "samples"), "probe_batch"), i, s)
        json_object_set_new(json_array_get(jget(s, "kernels"), 1), "us",
                            json_real(100.0 + (double)i));
    t = both_ways(r, "reversed storage");
    CHECK(t && strcmp(t->cases[0].derived.scopes[DT_SCOPE_PROBE_BATCH].impl[1].probe.kernels[0]
                          .name, "fill_kernel") == 0, "largest kernel first");
    dt_record_free(t);
    json_decref(r);

    /* probe pairs follow the keys, not the storage order (test_report's test_probe_pairs) */
    r = fx_results(&CUDA_OK);
    c = fx_add_case(r, &CUDA_OK, "add_1x1", 5.0, 5.0, 0.01, 1);
    json_t *sm = jget(jget(jget(c, "impl"), "native"), "samples");
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
    /* a zero sample: skipped_pairs */
    json_object_set_new(json_array_get(jget(sm, "e2e_batch"), 3), "us", json_real(0.0));
    t = both_ways(r, "probe pairs");
    if (t) {
        const dt_scope_impl *si = &t->cases[0].derived.scopes[DT_SCOPE_PROBE_BATCH].impl[1];
        CHECK(fabs(si->probe_over_control - 1.5) < 1e-12, "probe/control %g",
              si->probe_over_control);
        CHECK(si->probe_over_control_pairs == 3, "pairs");
        CHECK(t->cases[0].derived.scopes[DT_SCOPE_E2E_BATCH].vs[1].ratio.skipped_pairs == 1,
              "skipped pair");
    }
    dt_record_free(t);
    json_decref(r);
}

/* ---- the rules on typed records (what test_report.c asserts about derive) ---- */

/* A fixture run through the codec, derived by dt_derive_run only. */
static dt_record *typed_run(const fx_run *o, int noisy_case, int invalid_case) {
    json_t *j = fx_results(o);
    fx_add_case(j, o, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(j, o, "softmax_1x127", 10.0, 10.0, 0.02, 1);
    if (noisy_case)
        fx_add_case(j, o, "sum_127x193", 9.0, 10.0, 0.4, 1);
    if (invalid_case)
        fx_add_case(j, o, "gemm_fail", 5.0, 10.0, 0.02, 0);
    dt_record *r = typed_derived(j, "typed run");
    json_decref(j);
    return r;
}

static int level_is(const dt_record *r, dt_level l) { return r && r->derived.level == l; }

static const dt_scope_derived *scope_of(const dt_record *r, size_t c, dt_scope s) {
    return &r->cases[c].derived.scopes[s];
}

static void test_levels(void) {
    dt_record *r = typed_run(&CPU_OK, 0, 0);
    CHECK(level_is(r, DT_LEVEL_COMPARATIVE), "cpu comparative");
    CHECK(reason_has(r, "2 valid cases, >= 5 samples per scope, 2 rounds, noise <= 10%"), "why");
    dt_record_free(r);
    r = typed_run(&CUDA_OK, 0, 0);
    CHECK(level_is(r, DT_LEVEL_COMPARATIVE), "cuda comparative");
    CHECK(reason_has(r, ", device control present, noise <= 10%, probe/control within "
                        "[0.90, 1.10]"), "cuda why");
    dt_record_free(r);

    /* planted: fewer than 5 samples (and 1 round) makes smoke */
    fx_run o = CPU_OK;
    o.samples = 3;
    o.rounds = 1;
    r = typed_run(&o, 0, 0);
    CHECK(level_is(r, DT_LEVEL_SMOKE), "3 samples: smoke");
    CHECK(reason_has(r, "add_17x257 e2e_batch: too few samples (native 3, torch 3; need 5)"),
          "too few");
    CHECK(reason_has(r, "1 round"), "1 round");
    dt_record_free(r);
    o = CPU_OK;
    o.samples = 4; /* 2 rounds x 4 = 8 samples per scope: enough */
    r = typed_run(&o, 0, 0);
    CHECK(level_is(r, DT_LEVEL_COMPARATIVE), "8 samples comparative");
    dt_record_free(r);
    o.samples = 2; /* 4 per scope */
    r = typed_run(&o, 0, 0);
    CHECK(level_is(r, DT_LEVEL_SMOKE), "4 samples: smoke");
    CHECK(reason_has(r, "add_17x257 e2e_batch: too few samples (native 4, torch 4; need 5)"),
          "too few 4");
    dt_record_free(r);

    o = CUDA_OK;
    o.device = 0;
    r = typed_run(&o, 0, 0);
    CHECK(level_is(r, DT_LEVEL_SMOKE), "no device control: smoke");
    CHECK(reason_has(r, "add_17x257: no device control"), "no device control");
    dt_record_free(r);
    o = CPU_OK;
    o.complete = 0;
    r = typed_run(&o, 0, 0);
    CHECK(level_is(r, DT_LEVEL_SMOKE) && reason_has(r, "incomplete"), "incomplete");
    dt_record_free(r);

    /* planted: noise above 10% makes method audit; the noisy ratio is not "faster" */
    r = typed_run(&CPU_OK, 1, 0);
    CHECK(level_is(r, DT_LEVEL_METHOD_AUDIT), "noisy: method audit");
    CHECK(reason_has(r, "sum_127x193 e2e_batch: noise IQR/p50 above 10% (native "), "noise");
    CHECK(r && scope_of(r, 2, DT_SCOPE_E2E_BATCH)->vs[1].verdict != DT_REC_VERDICT_FASTER,
          "noisy not faster");
    CHECK(r && scope_of(r, 2, DT_SCOPE_E2E_BATCH)->impl[1].noise > 0.10, "noise value");
    dt_record_free(r);
    o = CUDA_OK;
    o.probe_factor = 1.3;
    r = typed_run(&o, 0, 0);
    /* issue 12: a perturbing probe makes the probe scope a method audit, not the control's
     * or the run's (the old derive called the run a method audit) */
    CHECK(r && r->derived.scopes[DT_SCOPE_PROBE_BATCH].level == DT_LEVEL_METHOD_AUDIT,
          "probe 1.3: probe batch method audit");
    CHECK(r && r->derived.scopes[DT_SCOPE_CONTROL_BATCH].level == DT_LEVEL_COMPARATIVE,
          "probe 1.3: control comparative");
    CHECK(level_is(r, DT_LEVEL_COMPARATIVE), "probe 1.3: the run stays comparative");
    CHECK(reason_has(r, "add_17x257: native probe/control 1.300"), "probe reason");
    dt_record_free(r);

    /* clocks moved, on a typed record */
    r = typed_run(&CPU_OK, 0, 0);
    if (r) {
        r->cases[0].clocks_moved = 1;
        dt_err err = {{0}};
        CHECK(dt_derive_run(r, &err) == DT_OK, "%s", err.msg);
        CHECK(level_is(r, DT_LEVEL_METHOD_AUDIT), "clocks moved: method audit");
        CHECK(reason_has(r, "add_17x257: GPU clocks moved"), "clocks reason");
    }
    dt_record_free(r);

    /* the reason list is capped */
    o = CPU_OK;
    o.samples = 2;
    json_t *j = fx_results(&o);
    for (int i = 0; i < 30; i++) {
        char id[32];
        snprintf(id, sizeof id, "case_%02d", i);
        fx_add_case(j, &o, id, 6.0, 10.0, 0.02, 1);
    }
    r = typed_derived(j, "capped");
    json_decref(j);
    CHECK(r && r->derived.reasons.n == 21, "21 reasons");
    CHECK(r && strcmp(r->derived.reasons.v[20], "... and 40 more") == 0, "and 40 more: %s",
          r ? r->derived.reasons.v[20] : "");
    dt_record_free(r);
}

static void test_verdicts(void) {
    dt_record *r = typed_run(&CUDA_OK, 0, 1);
    if (!r)
        return;
    const dt_scope_vs *fast = &scope_of(r, 0, DT_SCOPE_E2E_BATCH)->vs[1];
    CHECK(fast->verdict == DT_REC_VERDICT_FASTER, "faster");
    CHECK(fast->has_ratio && fast->ratio.median > 0.57 && fast->ratio.median < 0.63, "median %g",
          fast->ratio.median);
    CHECK(fast->ratio.pairs == 18, "18 pairs");
    CHECK(fast->ratio.ci_low <= fast->ratio.median && fast->ratio.median <= fast->ratio.ci_high &&
              fast->ratio.ci_high < 1, "interval");
    CHECK(scope_of(r, 0, DT_SCOPE_E2E_BATCH)->impl[1].summary.n == 18, "n 18");
    CHECK(!scope_of(r, 0, DT_SCOPE_E2E_BATCH)->vs[0].present, "no vs for the baseline");
    CHECK(scope_of(r, 1, DT_SCOPE_E2E_BATCH)->vs[1].verdict == DT_REC_VERDICT_INDISTINGUISHABLE,
          "same");
    const dt_scope_vs *bad = &scope_of(r, 2, DT_SCOPE_E2E_BATCH)->vs[1];
    CHECK(bad->verdict == DT_REC_VERDICT_INVALID && !bad->has_ratio, "invalid, no ratio");
    CHECK(!r->cases[2].derived.roofline.present && !r->cases[2].derived.e2e_floor.present,
          "invalid: nothing");
    CHECK(level_is(r, DT_LEVEL_COMPARATIVE), "invalid cases do not stop comparative");
    CHECK(r->derived.n_cases == 3 && r->derived.n_valid == 2, "counts");
    CHECK(r->derived.vs[1].n[DT_REC_VERDICT_FASTER] == 1 &&
              r->derived.vs[1].n[DT_REC_VERDICT_INDISTINGUISHABLE] == 1 &&
              r->derived.vs[1].n[DT_REC_VERDICT_INVALID] == 1, "verdict counts");
    const dt_scope_impl *pb = &scope_of(r, 0, DT_SCOPE_PROBE_BATCH)->impl[0]; /* torch */
    CHECK(pb->has_probe_over_control && fabs(pb->probe_over_control - 1.02) < 1e-9, "poc %g",
          pb->probe_over_control);
    const dt_probe_summary *ps = &scope_of(r, 0, DT_SCOPE_PROBE_BATCH)->impl[1].probe;
    CHECK(ps->present && ps->n_kernels == 2, "2 kernels");
    CHECK(ps->n_kernels && strstr(ps->kernels[0].name, "add_kernel"), "largest first");
    CHECK(ps->n_kernels && ps->kernels[0].per_call_p50 == 1.0, "64 per 64 reps");
    CHECK(!scope_of(r, 0, DT_SCOPE_E2E_BATCH)->impl[1].has_probe_over_control, "host: no poc");
    dt_record_free(r);

    /* planted: a slower candidate gets slower */
    fx_run o = CPU_OK;
    json_t *j = fx_results(&o);
    fx_add_case(j, &o, "slow_17x257", 13.0, 10.0, 0.02, 1);
    r = typed_derived(j, "slower");
    json_decref(j);
    CHECK(r && scope_of(r, 0, DT_SCOPE_E2E_BATCH)->vs[1].verdict == DT_REC_VERDICT_SLOWER,
          "slower");
    CHECK(r && scope_of(r, 0, DT_SCOPE_E2E_BATCH)->vs[1].ratio.ci_low > 1, "ci_low > 1");
    CHECK(r && r->derived.vs[1].n[DT_REC_VERDICT_SLOWER] == 1, "counted slower");
    dt_record_free(r);

    /* framework ids come from the record */
    o = CPU_OK;
    o.cand_id = "mine";
    o.base_id = "theirs";
    r = typed_run(&o, 0, 0);
    CHECK(level_is(r, DT_LEVEL_COMPARATIVE), "mine vs theirs");
    CHECK(r && !scope_of(r, 0, DT_SCOPE_CONTROL_BATCH)->present, "no device scopes on cpu");
    dt_record_free(r);
}

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

static void test_roofline_floor(void) {
    json_t *j = fx_results(&CPU_OK);
    json_object_set_new(jget(j, "environment"), "ceilings", ceilings_fixture(0));
    fx_add_case(j, &CPU_OK, "add_17x257", 6.0, 10.0, 0.0, 1);
    set_shape(fx_add_case(j, &CPU_OK, "add_1024x1024", 6.0, 10.0, 0.0, 1), "add", 1024, 1024, 0);
    set_shape(fx_add_case(j, &CPU_OK, "gemm_64x64x64", 6.0, 10.0, 0.0, 1), "gemm", 64, 64, 64);
    fx_add_case(j, &CPU_OK, "add_fail", 6.0, 10.0, 0.0, 0);
    dt_record *r = typed_derived(j, "roofline");
    json_decref(j);
    if (!r)
        return;
    const dt_roofline *rl = &r->cases[0].derived.roofline;
    CHECK(rl->present && rl->min_bytes == 52428.0 && rl->bound == DT_BOUND_MEMORY &&
              rl->copy_gbps == 20.0, "roofline add");
    CHECK(rl->impl[1].present && rl->impl[1].scope == DT_SCOPE_E2E_BATCH, "host time");
    CHECK(near(rl->impl[1].us, 6.0) && near(rl->impl[1].gbps, 52428.0 / 6000.0), "native gbps");
    CHECK(near(rl->impl[1].copy_pct, 100 * 52428.0 / 6000.0 / 20.0), "copy pct");
    CHECK(near(rl->impl[0].gbps, 52428.0 / 10000.0), "torch gbps");
    CHECK(near(rl->impl[1].tflops, 17.0 * 257 / 6e6), "tflops");
    const dt_e2e_floor *ef = &r->cases[0].derived.e2e_floor;
    CHECK(ef->present && ef->floor_us == 9.0 && ef->source == DT_FLOOR_CEILINGS, "floor");
    CHECK(near(ef->impl[1].over_floor, 2.0) && near(ef->impl[0].single_us, 30.0), "over floor");
    CHECK(isnan(ef->touch_floor_us) && isnan(ef->impl[1].over_touch_floor), "no touch");
    CHECK(r->cases[1].derived.roofline.present && !r->cases[1].derived.e2e_floor.present,
          "1024^2 not small");
    CHECK(near(r->cases[1].derived.roofline.impl[1].gbps, 3.0 * 1024 * 1024 * 4 / 6000.0), "big");
    const dt_roofline *g = &r->cases[2].derived.roofline;
    CHECK(g->bound == DT_BOUND_COMPUTE && near(g->impl[1].tflops, 2.0 * 64 * 64 * 64 / 6e6) &&
              isnan(g->impl[1].copy_pct), "gemm");
    CHECK(!r->cases[3].derived.roofline.present, "invalid: no roofline");
    /* the small-case rule is the policy's */
    r->derived.policy.small_case_max_elems = 1024 * 1024;
    dt_err err = {{0}};
    CHECK(dt_derive_run(r, &err) == DT_OK, "%s", err.msg);
    CHECK(r->cases[1].derived.e2e_floor.present, "policy: 1024^2 small");
    dt_record_free(r);

    /* touch floor */
    j = fx_results(&CPU_OK);
    json_object_set_new(jget(j, "environment"), "ceilings", ceilings_fixture(1));
    fx_add_case(j, &CPU_OK, "add_17x257", 6.0, 10.0, 0.0, 1);
    r = typed_derived(j, "touch");
    json_decref(j);
    if (r) {
        ef = &r->cases[0].derived.e2e_floor;
        CHECK(ef->touch_floor_us == 12.0 && near(ef->impl[1].over_touch_floor, 1.5) &&
                  near(ef->impl[0].over_touch_floor, 2.5) && near(ef->impl[1].over_floor, 2.0),
              "touch multiples");
    }
    dt_record_free(r);

    /* cuda: the control batch p50 (0.8 x 6 us) */
    j = fx_results(&CUDA_OK);
    json_object_set_new(jget(j, "environment"), "ceilings", ceilings_fixture(0));
    fx_add_case(j, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.0, 1);
    r = typed_derived(j, "cuda roofline");
    json_decref(j);
    CHECK(r && near(r->cases[0].derived.roofline.impl[1].us, 4.8) &&
              r->cases[0].derived.roofline.impl[0].scope == DT_SCOPE_CONTROL_BATCH, "device time");
    dt_record_free(r);

    /* no ceilings, or a failed measurement: no roofline, no floor */
    for (int v = 0; v < 2; v++) {
        j = fx_results(&CPU_OK);
        if (v)
            json_object_set_new(jget(j, "environment"), "ceilings",
                                json_pack("{s:s}", "error", "not offered"));
        fx_add_case(j, &CPU_OK, "add_17x257", 6.0, 10.0, 0.0, 1);
        r = typed_derived(j, "no ceilings");
        json_decref(j);
        CHECK(r && !r->cases[0].derived.roofline.present && !r->cases[0].derived.e2e_floor.present,
              "no ceilings %d", v);
        dt_record_free(r);
    }

    /* paired floor: median of single/floor pairs, the unpaired floor sample left out */
    j = fx_results(&CPU_OK);
    json_t *c = fx_add_case(j, &CPU_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    add_floor(c, "native");
    r = typed_derived(j, "paired floor");
    json_decref(j);
    if (r) {
        ef = &r->cases[0].derived.e2e_floor;
        size_t n = r->cases[0].impl[1].samples[DT_SCOPE_E2E_SINGLE].n;
        CHECK(ef->present && ef->source == DT_FLOOR_PAIRED && isnan(ef->floor_us), "paired");
        CHECK(ef->impl[1].has_over_floor_ratio && ef->impl[1].over_floor_ratio.pairs == n,
              "pairs %zu", ef->impl[1].over_floor_ratio.pairs);
        if (n % 7)
            CHECK(near(ef->impl[1].over_floor, 1.02 + 0.01 * (double)(n - 1) / 2), "median %g",
                  ef->impl[1].over_floor);
        CHECK(ef->impl[1].over_floor_ratio.ci_low <= ef->impl[1].over_floor &&
                  ef->impl[1].over_floor <= ef->impl[1].over_floor_ratio.ci_high, "interval");
    }
    dt_record_free(r);
}

/* ---- thresholds come from the record's policy ---- */

static void test_policy(void) {
    dt_record *r = typed_run(&CPU_OK, 1, 0);
    if (!r)
        return;
    dt_err err = {{0}};
    r->derived.policy.max_noise = 0.50;
    CHECK(dt_derive_run(r, &err) == DT_OK, "%s", err.msg);
    CHECK(level_is(r, DT_LEVEL_COMPARATIVE), "noise 50%%: comparative");
    CHECK(reason_has(r, "noise <= 50%"), "the reason states the policy's threshold");
    CHECK(r->derived.policy.max_noise == 0.50, "the policy used is kept");
    r->derived.policy.min_samples = 40;
    CHECK(dt_derive_run(r, &err) == DT_OK, "%s", err.msg);
    CHECK(reason_has(r, "too few samples (native 18, torch 18; need 40)"), "min samples 40");
    /* a wide equivalence band makes "faster" indistinguishable */
    r->derived.policy = dt_policy_default();
    r->derived.policy.equiv_low = 0.5;
    CHECK(dt_derive_run(r, &err) == DT_OK, "%s", err.msg);
    CHECK(scope_of(r, 0, DT_SCOPE_E2E_BATCH)->vs[1].verdict == DT_REC_VERDICT_INDISTINGUISHABLE,
          "band 0.5");
    /* bootstrap settings come from the run's settings */
    r->derived.policy = dt_policy_default();
    r->settings.bootstrap_seed = 99;
    CHECK(dt_derive_run(r, &err) == DT_OK, "%s", err.msg);
    CHECK(r->derived.policy.bootstrap_seed == 99, "seed recorded");
    /* what dt_stats cannot compute is refused, leaving derived cleared */
    r->derived.policy.ci_level = 0.9;
    CHECK(dt_derive_run(r, &err) == DT_EINVAL && !r->derived.present &&
              !r->cases[0].derived.present, "ci 0.9 refused");
    CHECK(strstr(err.msg, "95%") != NULL, "%s", err.msg);
    dt_record_free(r);
}

/* ---- any number of implementations ---- */

static void push_samples(dt_case_impl *ci, double us, double jitter, uint64_t *st) {
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 9; i++)
            for (int s = 0; s < 2; s++) {
                dt_sample x = dt_sample_empty();
                x.us = (s ? 3 : 1) * us * fx_jitter(st, jitter);
                x.reps = s ? 1 : 100;
                x.round = round;
                x.index = i;
                dt_samples_push(&ci->samples[s ? DT_SCOPE_E2E_SINGLE : DT_SCOPE_E2E_BATCH], &x);
            }
}

/* A record built by hand: baseline torch, candidates native (0.6x) and slow (1.3x). */
static dt_record *three_impls(int with_slow) {
    dt_record *r = dt_record_new();
    r->complete = 1;
    r->settings.rounds = 2;
    dt_record_set_str(&r->settings.backend, "cpu");
    dt_record_impl_add(r, "torch", DT_ROLE_BASELINE);
    dt_record_impl_add(r, "native", DT_ROLE_CANDIDATE);
    if (with_slow)
        dt_record_impl_add(r, "slow", DT_ROLE_CANDIDATE);
    dt_case *c = dt_record_case_add(r, "add_17x257");
    c->op = DT_OP_ADD;
    c->m = 17;
    c->n = 257;
    uint64_t st = 5;
    push_samples(&c->impl[0], 10.0, 0.02, &st);
    push_samples(&c->impl[1], 6.0, 0.02, &st);
    if (with_slow) {
        uint64_t st2 = 77;
        push_samples(&c->impl[2], 13.0, 0.02, &st2);
    }
    return r;
}

static void test_many_impls(void) {
    dt_record *r3 = three_impls(1), *r2 = three_impls(0);
    dt_err err = {{0}};
    CHECK(dt_derive_run(r3, &err) == DT_OK, "%s", err.msg);
    CHECK(dt_derive_run(r2, &err) == DT_OK, "%s", err.msg);
    const dt_scope_derived *s3 = scope_of(r3, 0, DT_SCOPE_E2E_BATCH);
    const dt_scope_derived *s2 = scope_of(r2, 0, DT_SCOPE_E2E_BATCH);
    CHECK(s3->vs[1].verdict == DT_REC_VERDICT_FASTER, "native faster");
    CHECK(s3->vs[2].verdict == DT_REC_VERDICT_SLOWER, "slow slower");
    CHECK(s3->vs[2].ratio.median > 1.2 && s3->vs[2].ratio.median < 1.4, "slow ratio %g",
          s3->vs[2].ratio.median);
    /* a candidate's numbers do not depend on the other candidates */
    CHECK(s3->vs[1].ratio.median == s2->vs[1].ratio.median &&
              s3->vs[1].ratio.ci_low == s2->vs[1].ratio.ci_low &&
              s3->vs[1].ratio.ci_high == s2->vs[1].ratio.ci_high, "independent of others");
    CHECK(r3->derived.vs[1].n[DT_REC_VERDICT_FASTER] == 1 &&
              r3->derived.vs[2].n[DT_REC_VERDICT_SLOWER] == 1, "counts per candidate");
    CHECK(level_is(r3, DT_LEVEL_COMPARATIVE), "comparative: %s",
          r3->derived.reasons.n ? r3->derived.reasons.v[0] : "");
    /* reasons name candidates in record order, then the baseline */
    r3->derived.policy.min_samples = 100;
    CHECK(dt_derive_run(r3, &err) == DT_OK, "%s", err.msg);
    CHECK(reason_has(r3, "add_17x257 e2e_batch: too few samples (native 18, slow 18, torch 18; "
                         "need 100)"), "order");
    /* a failed candidate invalidates the case */
    r3->cases[0].impl[2].status = DT_IMPL_FAILED;
    CHECK(dt_derive_run(r3, &err) == DT_OK, "%s", err.msg);
    CHECK(r3->derived.n_valid == 0 && reason_has(r3, "no valid case"), "failed impl");
    dt_record_free(r3);
    dt_record_free(r2);
}

/* Issue 16: a case where one implementation was emulated (FP32 standing in for the case
 * dtype) gets no ratio and no speed verdict in any scope; its times are still derived;
 * the emulated flag survives the codec; the other cases keep their verdicts. */
static void test_emulated(void) {
    json_t *j = fx_results(&CPU_OK);
    fx_add_case(j, &CPU_OK, "add_17x257_f16", 6.0, 10.0, 0.02, 1);
    fx_add_case(j, &CPU_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    dt_record *r = fx_record(j);
    json_decref(j);
    CHECK(r != NULL, "fixture");
    if (!r) return;
    r->cases[0].impl[0].emulated = 1; /* the baseline (torch) */
    dt_err err;
    CHECK(dt_derive_run(r, &err) == DT_OK, "derive: %s", err.msg);
    const dt_scope_derived *e0 = &r->cases[0].derived.scopes[DT_SCOPE_E2E_BATCH];
    const dt_scope_derived *e1 = &r->cases[1].derived.scopes[DT_SCOPE_E2E_BATCH];
    CHECK(e0->present && !e0->vs[1].has_ratio && e0->vs[1].verdict == DT_REC_VERDICT_INVALID,
          "emulated case: no ratio, no verdict");
    CHECK(e0->impl[0].summary.n > 0 || e0->impl[1].summary.n > 0, "emulated times still derived");
    CHECK(e1->vs[1].has_ratio && e1->vs[1].verdict == DT_REC_VERDICT_FASTER,
          "the fp32 case keeps its verdict (%s)", dt_rec_verdict_name(e1->vs[1].verdict));
    char *text = NULL;
    size_t len = 0;
    dt_record *back = NULL;
    CHECK(dt_record_encode(r, &text, &len, &err) == DT_OK &&
              dt_record_decode(text, len, "emulated", &back, &err) == DT_OK &&
              back->cases[0].impl[0].emulated == 1 && back->cases[1].impl[0].emulated == 0,
          "emulated round trip: %s", err.msg);
    free(text);
    dt_record_free(back);
    dt_record_free(r);
}

/* Held scopes: the verdict's interval is the bootstrap interval widened by the process
 * band (DT_HELD_PROCESS_LAUNCH_US / 2 a kernel of each implementation): at 1.6 us a call a
 * 5% faster candidate whose own interval excludes 1 is indistinguishable, at 160 us it
 * stays faster; host scopes get no band. */
static void test_process_band(void) {
    fx_run o = CUDA_OK;
    json_t *j = fx_results(&o);
    fx_add_case(j, &o, "near_17x257", 2.0, 2.1, 0.002, 1);
    fx_add_case(j, &o, "far_8192x8192", 200.0, 210.0, 0.002, 1);
    dt_record *r = both_ways(j, "process band");
    json_decref(j);
    if (!r) return;
    for (size_t c = 0; c < 2; c++) {
        const dt_scope_derived *sd = scope_of(r, c, DT_SCOPE_CONTROL_BATCH);
        const dt_scope_vs *v = &sd->vs[1];
        double k = dt_derive_case_kernels_per_call(&r->cases[c], 0);
        double want = 1 + DT_HELD_PROCESS_LAUNCH_US / 2 *
                              (k / sd->impl[1].summary.p50 + k / sd->impl[0].summary.p50);
        CHECK(k == 2, "%zu: 2 kernels a call, got %g", c, k);
        CHECK(v->has_ratio && v->ratio.ci_high < 0.98, "%zu: the bootstrap interval excludes "
              "the band [%g, %g]", c, v->ratio.ci_low, v->ratio.ci_high);
        CHECK(fabs(v->process_band - want) < 1e-12, "%zu: band %g, want %g", c, v->process_band,
              want);
        CHECK(v->verdict == (c == 0 ? DT_REC_VERDICT_INDISTINGUISHABLE : DT_REC_VERDICT_FASTER),
              "%zu: control_batch verdict %s", c, dt_rec_verdict_name(v->verdict));
        const dt_scope_vs *pb = &scope_of(r, c, DT_SCOPE_PROBE_SINGLE)->vs[1];
        CHECK(pb->process_band > 1, "%zu: probe_single banded too", c);
        const dt_scope_vs *h = &scope_of(r, c, DT_SCOPE_E2E_BATCH)->vs[1];
        CHECK(h->process_band == 0 && h->verdict == DT_REC_VERDICT_FASTER, "%zu: host unbanded, "
              "faster (%s)", c, dt_rec_verdict_name(h->verdict));
    }
    CHECK(r->cases[1].derived.scopes[DT_SCOPE_CONTROL_BATCH].vs[1].process_band < 1.003,
          "160 us: a small band");
    dt_record_free(r);
    CHECK(dt_derive_process_band(0, 1, 2, 1) == 1 && dt_derive_process_band(2, 1, NAN, 1) == 1,
          "an unknown median: no band");
}

int main(void) {
    test_emulated();
    test_v1_files();
    test_synthetic();
    test_levels();
    test_verdicts();
    test_roofline_floor();
    test_policy();
    test_many_impls();
    test_process_band();
    /* the stored v1 derived objects (about 1450 values per derive of each file) and the
     * synthetic round trips */
    CHECK(g_compared > 2000, "only %zu values compared", g_compared);
    printf("%d passed, %d failed (%zu derived values compared with stored ones or after a "
           "round trip)\n", g_pass, g_fail, g_compared);
    return g_fail ? 1 : 0;
}
