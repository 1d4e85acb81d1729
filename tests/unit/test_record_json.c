/* test_record_json.c — the record codec (src/record/dt_record_json.c): version 1 files of
 * today's main load (tests/data/results-v1-*.json), v1 -> v2 -> v2 is a byte-identical
 * fixed point, a hand-built record with three implementations survives encode/decode
 * with its values, and every malformed input the old validator refused is refused with
 * its JSON path named. jansson is used here only to plant malformations. */
#define _GNU_SOURCE
#include "record/dt_file.h"
#include "record/dt_record.h"
#include "record/dt_record_json.h"

#include "../dt_check.h"

#include <jansson.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *slurp(const char *path, size_t *len) {
    char *t = NULL;
    dt_err err;
    if (dt_file_read(path, DT_RECORD_MAX_BYTES, "results.json", &t, len, &err) != DT_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return NULL;
    }
    return t;
}

static const char *const k_cpu = DT_SOURCE_DIR "/tests/data/results-v1-cpu.json";
static const char *const k_dev = DT_SOURCE_DIR "/tests/data/results-v1-device.json";

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

/* ---- v1 files of today's main ------------------------------------------------------------ */

static void test_v1_cpu(void) {
    dt_record *r = NULL;
    dt_err err = {{0}};
    CHECK(dt_record_load(k_cpu, &r, &err) == DT_OK, "%s", err.msg);
    if (!r)
        return;
    CHECK(r->format_version == 1 && r->complete == 1, "version %d", r->format_version);
    CHECK(r->n_impls == 2, "%zu impls", r->n_impls);
    CHECK(strcmp(r->impls[0].id, "torch") == 0 && r->impls[0].role == DT_ROLE_BASELINE,
          "baseline first: %s", r->impls[0].id);
    CHECK(strcmp(r->impls[1].id, "native") == 0 && r->impls[1].role == DT_ROLE_CANDIDATE, "cand");
    CHECK(r->impls[0].hello_json && strstr(r->impls[0].hello_json, "\"protocol\":1"), "hello");
    CHECK(strcmp(r->settings.backend, "cpu") == 0 && r->settings.rounds == 2, "settings");
    CHECK(r->settings.n_operations == 9 && r->settings.operations[8] == DT_OP_GEMM, "ops");
    CHECK(r->settings.bootstrap_resamples == 2000 && r->settings.bootstrap_seed == 20261130,
          "bootstrap");
    CHECK(near(r->settings.timeout_s, 180.0), "timeout %g", r->settings.timeout_s);
    CHECK(r->env.gpu_json == NULL && r->env.host.cores == 2, "env");
    CHECK(r->env.ceilings.present && near(r->env.ceilings.copy_gbps, 35.043795498942266) &&
              r->env.ceilings.copy_bytes == 268435456 &&
              near(r->env.ceilings.launch_sync_touch_floor_us, 0.03),
          "ceilings");
    CHECK(!r->env.nvml.present, "no nvml on cpu");
    CHECK(r->n_cases == 19, "%zu cases", r->n_cases);
    const dt_case *c = &r->cases[0];
    CHECK(strcmp(c->id, "add_1x127") == 0 && c->op == DT_OP_ADD && c->m == 1 && c->n == 127 &&
              c->k == 0 && c->dtype == DT_ELEM_F32 && c->valid,
          "case 0");
    CHECK(c->n_inputs == 2 && c->inputs[1].cols == 127, "inputs");
    CHECK(c->n_rounds_done == 2 && c->rounds_done[1] == 1, "rounds_done");
    CHECK(dt_case_round_is_done(c, 1) && !dt_case_round_is_done(c, 2), "round_is_done");
    {
        int64_t best = -1; /* the largest position, found the slow way */
        for (size_t q = 0; q < r->n_cases; q++)
            for (size_t i = 0; i < r->n_impls; i++)
                for (int s = 0; s < DT_SCOPE_COUNT; s++)
                    for (size_t j = 0; j < r->cases[q].impl[i].samples[s].n; j++)
                        if (r->cases[q].impl[i].samples[s].v[j].position > best)
                            best = r->cases[q].impl[i].samples[s].v[j].position;
        CHECK(best > 0 && dt_record_next_position(r) == best + 1, "next position %lld",
              (long long)dt_record_next_position(r));
    }
    const dt_case_impl *nat = &c->impl[1];
    CHECK(nat->present && nat->status == DT_IMPL_OK && nat->error == NULL, "impl");
    CHECK(nat->samples[DT_SCOPE_E2E_BATCH].n == 10 && nat->samples[DT_SCOPE_E2E_SINGLE].n == 10,
          "samples %zu", nat->samples[DT_SCOPE_E2E_BATCH].n);
    CHECK(nat->samples[DT_SCOPE_CONTROL_BATCH].n == 0, "no device samples");
    CHECK(nat->has_calibration && nat->has_warmup && nat->n_checks >= 2, "phases");
    CHECK(c->floor_impl == 1 && c->floor.n == 10 && c->floor.v[0].reps == 0, "floor");
    /* derived from v1: ratio/verdict of the one candidate, counts */
    CHECK(c->derived.present && c->derived.scopes[DT_SCOPE_E2E_BATCH].present, "derived");
    const dt_scope_vs *vs = &c->derived.scopes[DT_SCOPE_E2E_BATCH].vs[1];
    CHECK(vs->present && vs->has_ratio && vs->ratio.pairs == 10, "ratio pairs");
    CHECK(c->derived.roofline.present && c->derived.roofline.impl[1].present &&
              near(c->derived.roofline.impl[1].copy_pct, 326.169864611966),
          "roofline");
    CHECK(c->derived.e2e_floor.present && c->derived.e2e_floor.impl[0].has_over_floor_ratio &&
              near(c->derived.e2e_floor.impl[0].over_floor, 63.099999999999994),
          "e2e floor");
    CHECK(r->derived.present && r->derived.n_cases == 19, "counts");
    size_t sum = 0;
    for (int q = 0; q < DT_REC_VERDICT_COUNT; q++)
        sum += r->derived.vs[1].n[q];
    CHECK(sum == 19, "verdict counts sum %zu", sum);
    CHECK(r->derived.policy.bootstrap_resamples == 2000 && r->derived.policy.equiv_high == 1.02,
          "policy defaults for v1");
    dt_record_free(r);
}

static void test_v1_device(void) {
    dt_record *r = NULL;
    dt_err err = {{0}};
    CHECK(dt_record_load(k_dev, &r, &err) == DT_OK, "%s", err.msg);
    if (!r)
        return;
    CHECK(strcmp(r->impls[0].id, "fake-torch") == 0, "baseline %s", r->impls[0].id);
    CHECK(r->env.gpu_name && strcmp(r->env.gpu_name, "fake GPU") == 0, "gpu name");
    CHECK(r->env.ceilings.present && r->env.ceilings.error != NULL, "ceilings error");
    CHECK(r->env.nvml.present && !r->env.nvml.available && r->env.nvml.reason, "nvml");
    const dt_case *c = &r->cases[0];
    const dt_samples *pb = &c->impl[1].samples[DT_SCOPE_PROBE_BATCH];
    CHECK(pb->n == 8 && pb->v[0].has_probe, "probe samples");
    if (pb->n) {
        const dt_probe *p = &pb->v[0].probe;
        CHECK(p->kernel_count == 64 && p->launch_count == 64 && p->has_kernels &&
                  p->n_kernels == 1 && p->kernels[0].count == 64,
              "probe fields");
        CHECK(p->records.present && p->records.names.n == 1 && p->records.n_rows == 64 &&
                  p->records.launch[0].block[0] == 128 && p->records.rows[1].start_ns == 539 &&
                  p->records.rows[1].stream_id == 7,
              "records");
    }
    /* a v1 file's control samples were unheld: they load as dispatch, its probe stays
     * probe, marked unheld */
    CHECK(c->impl[1].samples[DT_SCOPE_CONTROL_BATCH].n == 0 &&
              c->impl[1].samples[DT_SCOPE_CONTROL_SINGLE].n == 0, "v1: no held control");
    CHECK(c->impl[1].samples[DT_SCOPE_DISPATCH_BATCH].n == 8 &&
              c->impl[1].samples[DT_SCOPE_DISPATCH_SINGLE].n > 0, "v1: control reads as dispatch");
    CHECK(!r->settings.held_windows && r->probe_unheld, "v1: unheld windows, probe marked");
    CHECK(c->impl[1].samples[DT_SCOPE_DISPATCH_BATCH].n &&
              !c->impl[1].samples[DT_SCOPE_DISPATCH_BATCH].v[0].has_probe,
          "control has no probe");
    CHECK(!c->derived.scopes[DT_SCOPE_CONTROL_BATCH].present &&
              c->derived.scopes[DT_SCOPE_DISPATCH_BATCH].present, "v1 derived: dispatch");
    const dt_scope_derived *sd = &c->derived.scopes[DT_SCOPE_PROBE_BATCH];
    CHECK(sd->present && sd->impl[1].has_probe_over_control &&
              near(sd->impl[1].probe_over_control, 1.0004383697770407) &&
              sd->impl[1].probe.present && sd->impl[1].probe.n_kernels == 1,
          "probe derived");
    CHECK(r->derived.level == DT_LEVEL_METHOD_AUDIT && r->derived.reasons.n == 6, "assessment");
    CHECK(r->derived.vs[1].n[DT_REC_VERDICT_FASTER] == 2 &&
              r->derived.vs[1].n[DT_REC_VERDICT_SLOWER] == 1,
          "counts");
    dt_record_free(r);
}

/* v1 -> encode (v2) -> decode -> encode is byte-identical, for both fixtures. */
static void test_fixed_point(const char *path) {
    size_t len;
    char *v1 = slurp(path, &len);
    dt_record *a = NULL, *b = NULL;
    dt_err err = {{0}};
    CHECK(v1 && dt_record_decode(v1, len, path, &a, &err) == DT_OK, "%s", err.msg);
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    CHECK(a && dt_record_encode(a, &t1, &n1, &err) == DT_OK, "%s", err.msg);
    CHECK(t1 && strstr(t1, "\"format_version\": 2,") && t1[n1 - 1] == '\n', "v2 text");
    CHECK(t1 && dt_record_decode(t1, n1, "v2", &b, &err) == DT_OK, "%s", err.msg);
    CHECK(b && b->format_version == 2, "decoded v2");
    CHECK(b && dt_record_encode(b, &t2, &n2, &err) == DT_OK, "%s", err.msg);
    CHECK(t1 && t2 && n1 == n2 && memcmp(t1, t2, n1) == 0, "%s: not a fixed point (%zu vs %zu)",
          path, n1, n2);
    /* the v2 text keeps every raw sample of the v1 file */
    json_t *j1 = json_loads(v1, 0, NULL), *j2 = t1 ? json_loads(t1, 0, NULL) : NULL;
    json_t *s1 = json_object_get(json_object_get(json_object_get(json_array_get(
        json_object_get(j1, "cases"), 0), "impl"), "native"), "samples");
    json_t *s2 = json_object_get(json_object_get(json_object_get(json_array_get(
        json_object_get(j2, "cases"), 0), "impl"), "native"), "samples");
    if (!s1) { /* the device fixture's ids */
        s1 = json_object_get(json_object_get(json_object_get(json_array_get(
            json_object_get(j1, "cases"), 0), "impl"), "fake-native"), "samples");
        s2 = json_object_get(json_object_get(json_object_get(json_array_get(
            json_object_get(j2, "cases"), 0), "impl"), "fake-native"), "samples");
    }
    const char *scope;
    json_t *arr;
    int same = s1 && s2;
    json_object_foreach(s1, scope, arr) { /* v1 control_* is dispatch_* in v2 */
        const char *v2 = strcmp(scope, "control_batch") == 0    ? "dispatch_batch"
                         : strcmp(scope, "control_single") == 0 ? "dispatch_single"
                                                                : scope;
        same = same && json_equal(arr, json_object_get(s2, v2));
    }
    CHECK(same, "%s: samples differ after v1 -> v2", path);
    json_decref(j1);
    json_decref(j2);
    free(v1);
    free(t1);
    free(t2);
    dt_record_free(a);
    dt_record_free(b);
}

/* ---- a hand-built record ------------------------------------------------------------------ */

static dt_record *hand_built(void) {
    dt_record *r = dt_record_new();
    r->complete = 1;
    dt_record_set_str(&r->tool.name, "dualtime");
    dt_record_set_str(&r->tool.git_revision, "abc");
    dt_strv_push(&r->command_line, "dualtime");
    dt_record_set_str(&r->settings.backend, "cuda");
    r->settings.rounds = 3;
    r->settings.sample_ms = 20.0;
    r->settings.bootstrap_seed = 7;
    dt_impl *b = dt_record_impl_add(r, "torch", DT_ROLE_BASELINE);
    dt_record_set_str(&b->hello_json, "{\"ok\":true,\"env\":{\"x\":[1,2.5,null]}}");
    dt_record_impl_add(r, "native", DT_ROLE_CANDIDATE);
    dt_record_impl_add(r, "triton", DT_ROLE_CANDIDATE);
    dt_record_set_str(&r->env.gpu_json, "{\"name\":\"H200\",\"pci_bus\":25}");
    dt_record_set_str(&r->env.gpu_name, "H200");
    r->env.nvml.present = 1;
    r->env.nvml.available = 1;
    r->env.nvml.has_description = 1;
    r->env.nvml.pci_bus = 25;
    dt_case *c = dt_record_case_add(r, "gemm_64x32x16");
    c->op = DT_OP_GEMM;
    c->dtype = DT_ELEM_BF16;
    c->m = 64, c->n = 32, c->k = 16;
    dt_record_set_str(&c->backend, "cuda");
    dt_case_input_add(c, "a", "00ff", 64, 16);
    dt_case_round_done_add(c, 0);
    for (size_t i = 0; i < 3; i++) {
        dt_sample s = dt_sample_empty();
        s.us = 1.5 + (double)i;
        s.reps = 64;
        s.index = 0;
        s.position = (int64_t)i;
        s.has_probe = 1;
        s.probe.kernel_sum_us = 1.25;
        s.probe.kernel_count = 64;
        dt_probe_kernel_add(&s.probe, "gemm_k", 64, 1.25);
        dt_probe_launch l = {{2, 1, 1}, {128, 1, 1}};
        dt_probe_records_name(&s.probe.records, "gemm_k", &l);
        dt_probe_row row = {0, 10, 20, DT_NULL_I64};
        dt_probe_row_add(&s.probe.records, &row);
        dt_samples_push(&c->impl[i].samples[DT_SCOPE_PROBE_BATCH], &s);
        dt_sample g = dt_sample_empty();
        g.us = 0.5;
        g.reps = 1;
        dt_samples_push(&c->impl[i].samples[DT_SCOPE_GRAPH_BATCH], &g);
    }
    c->impl[2].status = DT_IMPL_FAILED;
    dt_record_set_str(&c->impl[2].error, "boom");
    c->valid = 0;
    dt_check *ck = dt_case_impl_check_add(&c->impl[0]);
    dt_record_set_str(&ck->when, "cold");
    ck->oracle.max_abs_error = NAN; /* non-finite: null */
    ck->arena.output_unwritten = DT_NULL_I64;
    dt_clock_round cr;
    memset(&cr, 0, sizeof cr);
    cr.round = 0;
    cr.has_before = 1;
    cr.before.sm_mhz = 1980;
    cr.before.mem_mhz = cr.before.temp_c = cr.before.pstate = DT_NULL_I64;
    cr.before.power_w = NAN;
    cr.before.has_throttle = 1;
    cr.before.throttle_mask = 0x4;
    dt_strv_push(&cr.before.throttle_reasons, "sw_power_cap");
    cr.moved = 1;
    dt_record_set_str(&cr.why, "before: sw_power_cap");
    dt_case_clock_round_add(c, &cr);
    c->derived.present = 1;
    dt_scope_derived *sd = &c->derived.scopes[DT_SCOPE_PROBE_BATCH];
    sd->present = 1;
    sd->impl[1].summary.n = 1;
    sd->impl[1].summary.p50 = 1.5;
    sd->impl[1].summary.p90 = sd->impl[1].summary.min = sd->impl[1].summary.max = 1.5;
    sd->impl[1].summary.iqr = 0;
    sd->vs[1].present = sd->vs[2].present = 1;
    sd->vs[1].has_ratio = 1;
    sd->vs[1].ratio = (dt_rec_ratio){0.75, NAN, NAN, 1, 2};
    sd->vs[1].verdict = DT_REC_VERDICT_INSUFFICIENT;
    sd->vs[2].verdict = DT_REC_VERDICT_INVALID;
    r->derived.present = 1;
    r->derived.level = DT_LEVEL_SMOKE;
    dt_strv_push(&r->derived.reasons, "run is not complete");
    r->derived.n_cases = 1;
    r->derived.vs[2].n[DT_REC_VERDICT_INVALID] = 1;
    r->derived.policy.max_noise = 0.2;
    return r;
}

static void test_hand_built(void) {
    dt_record *r = hand_built();
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    dt_err err = {{0}};
    CHECK(dt_record_encode(r, &t1, &n1, &err) == DT_OK, "%s", err.msg);
    dt_record *b = NULL;
    CHECK(t1 && dt_record_decode(t1, n1, "hand", &b, &err) == DT_OK, "%s", err.msg);
    if (b) {
        CHECK(b->n_impls == 3 && strcmp(b->impls[2].id, "triton") == 0, "three impls");
        CHECK(strcmp(b->impls[0].hello_json, r->impls[0].hello_json) == 0, "hello text");
        CHECK(strcmp(b->env.gpu_name, "H200") == 0 && b->env.nvml.pci_bus == 25, "env");
        CHECK(isnan(b->settings.warmup_ms) && b->settings.sample_ms == 20.0, "NAN settings");
        const dt_case *c = &b->cases[0];
        CHECK(c->dtype == DT_ELEM_BF16 && c->op == DT_OP_GEMM && c->k == 16 && !c->valid, "case");
        CHECK(c->impl[2].status == DT_IMPL_FAILED && strcmp(c->impl[2].error, "boom") == 0,
              "failed impl");
        const dt_sample *s = &c->impl[1].samples[DT_SCOPE_PROBE_BATCH].v[0];
        CHECK(s->us == 2.5 && s->reps == 64 && s->has_probe && s->probe.kernel_count == 64 &&
                  isnan(s->probe.kernel_span_us) && s->probe.launch_count == DT_NULL_I64,
              "probe sample");
        CHECK(s->probe.records.n_rows == 1 && s->probe.records.rows[0].stream_id == DT_NULL_I64 &&
                  s->probe.records.launch[0].grid[0] == 2,
              "records");
        CHECK(c->impl[0].samples[DT_SCOPE_GRAPH_BATCH].n == 1, "reserved scope kept");
        CHECK(isnan(c->impl[0].checks[0].oracle.max_abs_error) &&
                  c->impl[0].checks[0].arena.output_unwritten == DT_NULL_I64,
              "null check fields");
        CHECK(c->n_clock_rounds == 1 && c->clocks_moved &&
                  c->clock_rounds[0].before.throttle_mask == 0x4 &&
                  c->clock_rounds[0].before.mem_mhz == DT_NULL_I64 && !c->clock_rounds[0].has_after,
              "clocks");
        const dt_scope_derived *sd = &c->derived.scopes[DT_SCOPE_PROBE_BATCH];
        CHECK(sd->present && sd->vs[1].ratio.median == 0.75 && isnan(sd->vs[1].ratio.ci_low) &&
                  sd->vs[1].ratio.skipped_pairs == 2 &&
                  sd->vs[1].verdict == DT_REC_VERDICT_INSUFFICIENT && !sd->vs[2].has_ratio,
              "vs baseline");
        CHECK(b->derived.vs[2].n[DT_REC_VERDICT_INVALID] == 1 && b->derived.policy.max_noise == 0.2 &&
                  b->derived.policy.bootstrap_seed == 20261130 && b->settings.bootstrap_seed == 7,
              "run derived + policy");
        CHECK(dt_record_encode(b, &t2, &n2, &err) == DT_OK && n1 == n2 && memcmp(t1, t2, n1) == 0,
              "hand-built record is not a fixed point");
    }
    /* save/load through a file, atomically */
    char dir[] = "/tmp/dt-test-record-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[128];
    snprintf(path, sizeof path, "%s/results.json", dir);
    CHECK(dt_record_save(r, path, &err) == DT_OK, "%s", err.msg);
    dt_record *c = NULL;
    CHECK(dt_record_load(path, &c, &err) == DT_OK && c->n_cases == 1, "%s", err.msg);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q tmp", dir);
    CHECK(system(cmd) != 0, "a temporary file was left behind");
    unlink(path);
    rmdir(dir);
    /* a broken invariant is refused by the encoder */
    r->impls[1].role = DT_ROLE_BASELINE;
    char *t3 = NULL;
    size_t n3;
    CHECK(dt_record_encode(r, &t3, &n3, &err) == DT_EINVAL && t3 == NULL, "two baselines");
    dt_record_free(c);
    dt_record_free(b);
    dt_record_free(r);
    free(t1);
    free(t2);
}

/* ---- malformed input ---------------------------------------------------------------------- */

/* Sets (v != NULL) or deletes (v == NULL) the value at a '/'-separated path of root. */
static void set_at(json_t *root, const char *path, json_t *v) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = root;
    char *save = NULL, *tok = strtok_r(buf, "/", &save);
    while (tok) {
        char *next = strtok_r(NULL, "/", &save);
        int is_arr = json_is_array(cur);
        size_t idx = (size_t)strtoul(tok, NULL, 10);
        if (!next) {
            if (is_arr && v)
                json_array_set_new(cur, idx, v);
            else if (is_arr)
                json_array_remove(cur, idx);
            else if (v)
                json_object_set_new(cur, tok, v);
            else
                json_object_del(cur, tok);
            return;
        }
        cur = is_arr ? json_array_get(cur, idx) : json_object_get(cur, tok);
        if (!cur) {
            fprintf(stderr, "set_at: no %s in %s\n", tok, path);
            abort();
        }
        tok = next;
    }
}

static void expect_refusal_text(const char *text, const char *needle) {
    dt_record *r = NULL;
    dt_err err = {{0}};
    dt_status st = dt_record_decode(text, strlen(text), "t.json", &r, &err);
    CHECK(st == DT_EINVAL && r == NULL, "accepted (wanted: %s)", needle);
    CHECK(strstr(err.msg, needle) != NULL, "message \"%s\" lacks \"%s\"", err.msg, needle);
    CHECK(strncmp(err.msg, "t.json: ", 8) == 0, "message does not name the source: %s", err.msg);
    dt_record_free(r);
}

/* Parses base, plants v at path, and expects a refusal naming needle. */
static void plant(const char *base, const char *path, json_t *v, const char *needle) {
    json_t *root = json_loads(base, 0, NULL);
    DT_ASSERT(root);
    set_at(root, path, v);
    char *t = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    expect_refusal_text(t, needle);
    free(t);
    json_decref(root);
}

static void test_malformed_v1(void) {
    size_t len;
    char *cpu = slurp(k_cpu, &len), *dev = slurp(k_dev, &len);
    if (!cpu || !dev)
        return;
    char *half = dt_xstrdup(cpu);
    half[strlen(half) / 2] = 0;
    expect_refusal_text(half, "not valid JSON (line");
    free(half);
    expect_refusal_text("", "not valid JSON");
    expect_refusal_text("\x1f\x8b\x08\x00gz", "gzip-compressed, not JSON: gunzip it first");
    expect_refusal_text("{\"format\": \"dualtime-results\", \"format\": 1}", "duplicate");
    expect_refusal_text("[1, 2]", "top level must be a JSON object, found an array");
    expect_refusal_text("{\"hello\": 1}", "no \"format\" string");
    plant(cpu, "format", json_string("other-tool"),
          "format is \"other-tool\", expected \"dualtime-results\"");
    plant(cpu, "format_version", json_integer(7), "unsupported format_version 7");
    plant(cpu, "format_version", json_string("1"), "format_version must be an integer, found a string");
    plant(cpu, "complete", json_string("yes"), "complete must be a boolean");
    plant(cpu, "settings", json_integer(1), "settings must be an object");
    plant(cpu, "settings/bootstrap/resamples", json_integer(0),
          "settings.bootstrap.resamples must be an integer in [1, 1000000], found 0");
    plant(cpu, "settings/bootstrap/seed", json_string("x"), "settings.bootstrap.seed must be an integer");
    plant(cpu, "settings/rounds", json_string("2"), "settings.rounds must be an integer");
    plant(cpu, "settings/operations/0", json_string("frobnicate"),
          "settings.operations[0] is \"frobnicate\", not an operation");
    plant(cpu, "frameworks", NULL, "frameworks must be an array, found nothing (missing)");
    plant(cpu, "frameworks/1/role", json_string("candidate"),
          "exactly one candidate and one baseline, found 2 candidate(s)");
    plant(cpu, "frameworks/0/role", json_string("judge"),
          "frameworks[0].role is \"judge\", expected \"candidate\" or \"baseline\"");
    plant(cpu, "frameworks/0/id", NULL, "frameworks[0].id must be a non-empty string");
    plant(cpu, "frameworks/0/id", json_string("torch"), "frameworks[1].id \"torch\" repeats");
    plant(cpu, "frameworks/0/id", json_string("noise"), "frameworks[0].id \"noise\" is reserved");
    plant(cpu, "cases", NULL, "cases must be an array, found nothing (missing)");
    plant(cpu, "cases/0", json_integer(1), "cases[0] must be an object, found an integer");
    plant(cpu, "cases/0/op", NULL, "cases[0].op must be a non-empty string");
    plant(cpu, "cases/0/id", NULL, "cases[0].id must be a non-empty string");
    plant(cpu, "cases/0/id", json_string(""), "cases[0].id must be a non-empty string");
    plant(cpu, "cases/0/valid", json_string("true"), "cases[0].valid must be a boolean");
    plant(cpu, "cases/1/id", json_string("add_1x127"),
          "cases[1] (add_1x127) repeats the id of cases[0]");
    plant(cpu, "cases/0/op", json_string("frobnicate"),
          "cases[0] (add_1x127).op is \"frobnicate\", not an operation");
    plant(cpu, "cases/0/impl", json_integer(3),
          "cases[0] (add_1x127).impl must be an object, found an integer");
    plant(cpu, "cases/0/impl/torch", NULL, "cases[0] (add_1x127) is valid but has no impl.torch");
    plant(cpu, "cases/0/impl/torch", json_string("x"),
          "cases[0] (add_1x127).impl.torch must be an object, found a string");
    plant(cpu, "cases/0/impl/other", json_object(),
          "cases[0] (add_1x127).impl.other is not one of the frameworks");
    plant(cpu, "cases/0/impl/torch/status", json_integer(1),
          "impl.torch.status must be a string, found an integer");
    plant(cpu, "cases/0/impl/torch/status", json_string("meh"),
          "impl.torch.status must be \"ok\" or \"failed\"");
    plant(cpu, "cases/0/impl/torch/samples", json_integer(1),
          "impl.torch.samples must be an object, found an integer");
    plant(cpu, "cases/0/impl/torch/samples/e2e_batch", json_object(),
          "impl.torch.samples.e2e_batch must be an array, found an object");
    plant(cpu, "cases/0/impl/torch/samples/warp_batch", json_array(),
          "impl.torch.samples.warp_batch is not a known scope");
    plant(cpu, "cases/1/impl/torch/samples/e2e_batch/3/us", json_string("3.5"),
          "cases[1] (add_17x257).impl.torch.samples.e2e_batch[3].us must be a number, found a "
          "string");
    plant(cpu, "cases/1/impl/torch/samples/e2e_batch/3/us", NULL,
          "e2e_batch[3].us must be a number, found nothing (missing)");
    plant(cpu, "cases/1/impl/torch/samples/e2e_batch/3/us", json_real(-1.0),
          "cases[1] (add_17x257).impl.torch.samples.e2e_batch[3].us must be finite and >= 0");
    plant(cpu, "cases/1/impl/torch/samples/e2e_batch/3", json_integer(4),
          "e2e_batch[3] must be an object, found an integer");
    plant(cpu, "cases/1/impl/native/samples/e2e_single/0/reps", json_integer(0),
          "impl.native.samples.e2e_single[0].reps must be an integer >= 1, found 0");
    plant(cpu, "cases/1/impl/native/samples/e2e_single/0/round", json_integer(-1),
          "e2e_single[0].round must be an integer in [0, 2147483647], found -1");
    plant(cpu, "cases/1/impl/native/samples/e2e_single/0/index", json_real(1.0),
          "e2e_single[0].index must be an integer in [0, 2147483647], found a real number");
    plant(cpu, "cases/1/impl/native/samples/e2e_single/0/position", NULL,
          "e2e_single[0].position must be an integer");
    plant(cpu, "cases/1/impl/native/samples/e2e_single/1/index", json_integer(0),
          "impl.native.samples.e2e_single[1] repeats round 0 index 0 of sample [0]");
    { /* two repeats, neither adjacent: the first in array order is named */
        json_t *root = json_loads(cpu, 0, NULL);
        set_at(root, "cases/1/impl/native/samples/e2e_single/9/round", json_integer(0));
        set_at(root, "cases/1/impl/native/samples/e2e_single/9/index", json_integer(1));
        set_at(root, "cases/1/impl/native/samples/e2e_single/7/round", json_integer(0));
        char *t = json_dumps(root, 0);
        expect_refusal_text(t, "impl.native.samples.e2e_single[7] repeats round 0 index 2 of "
                               "sample [2]");
        free(t);
        json_decref(root);
    }
    plant(cpu, "cases/0/m", json_integer((json_int_t)1 << 62),
          "cases[0] (add_1x127).m must be an integer in [1, 2147483648], found 4611686018427387904");
    plant(cpu, "cases/0/m", json_integer(-1), "cases[0] (add_1x127).m must be an integer in [1, "
                                              "2147483648], found -1");
    plant(cpu, "cases/0/n", json_integer(0), "cases[0] (add_1x127).n must be an integer in [1,");
    plant(cpu, "cases/0/k", json_integer(-1), "cases[0] (add_1x127).k must be an integer in [0,");
    plant(cpu, "cases/0/m", NULL, "cases[0] (add_1x127).m must be an integer, found nothing");
    plant(cpu, "cases/16/k", json_integer(0), "cases[16] (gemm_32x32x32).k must be an integer in "
                                              "[1, 2147483648], found 0");
    plant(cpu, "cases/0/dtype", json_string("f64"), "cases[0] (add_1x127).dtype must be");
    plant(cpu, "cases/0/clocks_moved", json_string("no"),
          "cases[0] (add_1x127).clocks_moved must be a boolean");
    plant(cpu, "cases/0/floor/worker", json_string("ghost"),
          "cases[0] (add_1x127).floor.worker \"ghost\" is not one of the frameworks");
    plant(cpu, "cases/0/floor/samples/5/round", json_integer(0),
          "cases[0] (add_1x127).floor.samples[5] repeats round 0 index 0 of sample [0]");
    plant(cpu, "cases/0/floor/samples/1/index", json_integer(0),
          "floor.samples[1] repeats round 0 index 0 of sample [0]");
    /* probe fields (device scopes) */
    const char *pb = "cases/0/impl/fake-native/samples/probe_batch/0/";
    char p[256];
    snprintf(p, sizeof p, "%skernel_sum_us", pb);
    plant(dev, p, json_real(-1), "probe_batch[0].kernel_sum_us must be finite and >= 0");
    snprintf(p, sizeof p, "%skernel_span_us", pb);
    plant(dev, p, json_string("1"), "probe_batch[0].kernel_span_us must be a number");
    snprintf(p, sizeof p, "%skernel_count", pb);
    plant(dev, p, json_real(64.0), "probe_batch[0].kernel_count must be an integer >= 0");
    snprintf(p, sizeof p, "%skernel_count", pb);
    plant(dev, p, json_integer(-3), "probe_batch[0].kernel_count must be an integer >= 0, found -3");
    snprintf(p, sizeof p, "%skernels", pb);
    plant(dev, p, json_object(), "probe_batch[0].kernels must be an array, found an object");
    snprintf(p, sizeof p, "%skernels/0/name", pb);
    plant(dev, p, NULL, "probe_batch[0].kernels[0].name must be a non-empty string");
    snprintf(p, sizeof p, "%skernels/0/us", pb);
    plant(dev, p, json_real(-2), "probe_batch[0].kernels[0].us must be finite and >= 0");
    snprintf(p, sizeof p, "%skernels/0/count", pb);
    plant(dev, p, json_integer(-1), "probe_batch[0].kernels[0].count must be an integer >= 0");
    snprintf(p, sizeof p, "%srecords/rows/0/0", pb);
    plant(dev, p, json_integer(5), "probe_batch[0].records.rows[0] names kernel 5 of 1");
    snprintf(p, sizeof p, "%srecords/rows/0", pb);
    plant(dev, p, json_string("x"), "probe_batch[0].records.rows[0] must be [name index");
    free(cpu);
    free(dev);
}

/* v2-only rules, planted into the v2 encoding of the CPU fixture. */
static void test_malformed_v2(void) {
    size_t len;
    char *cpu = slurp(k_cpu, &len);
    dt_record *r = NULL;
    dt_err err = {{0}};
    char *v2 = NULL;
    size_t n2;
    if (!cpu || dt_record_decode(cpu, len, "cpu", &r, &err) != DT_OK ||
        dt_record_encode(r, &v2, &n2, &err) != DT_OK) {
        CHECK(0, "%s", err.msg);
        free(cpu);
        dt_record_free(r);
        return;
    }
    plant(v2, "frameworks/0/role", json_string("candidate"),
          "exactly one baseline and at least one candidate, found 2 candidate(s) and 0 "
          "baseline(s)");
    json_t *root = json_loads(v2, 0, NULL); /* swap: the baseline second */
    json_t *fws = json_object_get(root, "frameworks");
    json_t *f0 = json_incref(json_array_get(fws, 0));
    json_array_remove(fws, 0);
    json_array_append_new(fws, f0);
    char *t = json_dumps(root, 0);
    expect_refusal_text(t, "frameworks[0] must be the baseline");
    free(t);
    json_decref(root);
    plant(v2, "cases/0/derived/scopes/e2e_batch/vs_baseline", NULL,
          "cases[0] (add_1x127).derived.scopes.e2e_batch.vs_baseline must be an object");
    plant(v2, "cases/0/derived/scopes/e2e_batch/vs_baseline/native", json_integer(1),
          "cases[0] (add_1x127).derived.scopes.e2e_batch.vs_baseline.native must be an object");
    plant(v2, "cases/0/derived/scopes/e2e_batch/vs_baseline/native/verdict", json_string("x"),
          "derived.scopes.e2e_batch.vs_baseline.native.verdict is not a verdict");
    plant(v2, "derived/counts/vs_baseline/native/faster", NULL,
          "derived.counts.vs_baseline.native.faster must be an integer");
    plant(v2, "derived/policy", NULL, "derived.policy must be an object, found nothing");
    { /* a run not derived yet: no derived block at all, which round-trips */
        json_t *root = json_loads(v2, 0, NULL);
        set_at(root, "derived", NULL);
        set_at(root, "cases/0/derived", NULL);
        char *t = json_dumps(root, 0);
        dt_record *nd = NULL;
        char *t2 = NULL, *t3 = NULL;
        size_t n2b = 0, n3 = 0;
        CHECK(dt_record_decode(t, strlen(t), "nd", &nd, &err) == DT_OK && !nd->derived.present &&
                  !nd->cases[0].derived.present && nd->cases[1].derived.present,
              "%s", err.msg);
        dt_record *nd2 = NULL;
        CHECK(nd && dt_record_encode(nd, &t2, &n2b, &err) == DT_OK &&
                  dt_record_decode(t2, n2b, "nd2", &nd2, &err) == DT_OK &&
                  dt_record_encode(nd2, &t3, &n3, &err) == DT_OK && n2b == n3 &&
                  memcmp(t2, t3, n3) == 0,
              "underived record not a fixed point: %s", err.msg);
        dt_record_free(nd);
        dt_record_free(nd2);
        free(t);
        free(t2);
        free(t3);
        json_decref(root);
    }
    plant(v2, "derived/policy/bootstrap_resamples", json_integer(0),
          "derived.policy.bootstrap_resamples must be an integer in [1, 1000000]");
    plant(v2, "cases/0/impl/native/samples/e2e_batch/0/us", json_real(-0.5),
          "cases[0] (add_1x127).impl.native.samples.e2e_batch[0].us must be finite and >= 0");
    plant(v2, "cases/0/derived/scopes/e2e_batch/native/n", json_string("9"),
          "cases[0] (add_1x127).derived.scopes.e2e_batch.native.n must be an integer");
    plant(v2, "derived/assessment/level", json_string("meh"), "derived.assessment.level must be");
    plant(v2, "cases/0/derived/scopes/e2e_batch/vs_baseline/native/ratio/pairs", NULL,
          "e2e_batch.vs_baseline.native.ratio.pairs must be an integer");
    /* issue 17 item 7: impl.anti_cheat round-trips; unknown names and statuses are refused */
    plant(v2, "cases/0/impl/native/anti_cheat",
          json_pack("{s:i,s:i,s:{s:{s:s}}}", "sample_checks", 3, "input_sets", 2, "checks",
                    "cheat.cashed_result", "status", "passed"),
          "anti_cheat.checks.cheat.cashed_result is not a known anti-cheat check");
    plant(v2, "cases/0/impl/native/anti_cheat",
          json_pack("{s:i,s:i,s:{s:{s:s}}}", "sample_checks", 3, "input_sets", 2, "checks",
                    "cheat.skipped_work", "status", "maybe"),
          "anti_cheat.checks.cheat.skipped_work.status must be \"passed\"");
    plant(v2, "cases/0/impl/native/anti_cheat", json_pack("{s:i}", "input_sets", 2),
          "anti_cheat.sample_checks must be an integer");
    {
        json_t *root = json_loads(v2, 0, NULL);
        set_at(root, "cases/0/impl/native/anti_cheat",
               json_pack("{s:i,s:i,s:{s:{s:s,s:s},s:{s:s,s:n}}}", "sample_checks", 7,
                         "input_sets", 2, "checks", "cheat.skipped_work", "status", "caught",
                         "note", "left poison", "cheat.wrote_input", "status", "passed",
                         "note"));
        char *t = json_dumps(root, 0), *t2 = NULL, *t3 = NULL;
        size_t n2b = 0, n3 = 0;
        dt_record *ac = NULL, *ac2 = NULL;
        CHECK(dt_record_decode(t, strlen(t), "ac", &ac, &err) == DT_OK, "%s", err.msg);
        const dt_cheat_rec *cr = ac ? &ac->cases[0].impl[dt_record_impl_find(ac, "native")].cheat
                                    : NULL;
        CHECK(cr && cr->present && cr->sample_checks == 7 && cr->input_sets == 2 &&
                  cr->check[DT_CHEAT_SKIPPED_WORK].status == DT_CHEAT_CAUGHT &&
                  strcmp(cr->check[DT_CHEAT_SKIPPED_WORK].note, "left poison") == 0 &&
                  cr->check[DT_CHEAT_WROTE_INPUT].status == DT_CHEAT_PASSED &&
                  cr->check[DT_CHEAT_CACHED_RESULT].status == DT_CHEAT_UNSET,
              "anti_cheat decoded");
        CHECK(ac && dt_record_encode(ac, &t2, &n2b, &err) == DT_OK &&
                  dt_record_decode(t2, n2b, "ac2", &ac2, &err) == DT_OK &&
                  dt_record_encode(ac2, &t3, &n3, &err) == DT_OK && n2b == n3 &&
                  memcmp(t2, t3, n3) == 0 && strstr(t2, "\"cheat.skipped_work\"") != NULL,
              "anti_cheat not a fixed point: %s", err.msg);
        dt_record_free(ac);
        dt_record_free(ac2);
        free(t);
        free(t2);
        free(t3);
        json_decref(root);
    }
    /* the good v2 text itself loads */
    dt_record *ok = NULL;
    CHECK(dt_record_decode(v2, n2, "v2", &ok, &err) == DT_OK, "%s", err.msg);
    dt_record_free(ok);
    free(v2);
    free(cpu);
    dt_record_free(r);
}

/* A v1 derived block that does not decode is dropped, not refused (the old loader never
 * read it; derive recomputes it). */
static void test_v1_bad_derived(void) {
    size_t len;
    char *cpu = slurp(k_cpu, &len);
    json_t *root = cpu ? json_loads(cpu, 0, NULL) : NULL;
    if (!root) {
        CHECK(0, "fixture");
        free(cpu);
        return;
    }
    set_at(root, "cases/3/derived/scopes/e2e_batch/verdict", json_string("great"));
    char *t = json_dumps(root, 0);
    dt_record *r = NULL;
    dt_err err = {{0}};
    CHECK(dt_record_decode(t, strlen(t), "v1", &r, &err) == DT_OK, "%s", err.msg);
    CHECK(r && !r->derived.present && !r->cases[0].derived.present &&
              !r->cases[3].derived.scopes[DT_SCOPE_E2E_BATCH].present,
          "derived dropped");
    CHECK(r && r->cases[3].impl[0].samples[DT_SCOPE_E2E_BATCH].n == 10, "raw data kept");
    dt_record_free(r);
    free(t);
    json_decref(root);
    root = json_loads(cpu, 0, NULL);
    set_at(root, "derived/assessment/level", json_string("meh"));
    t = json_dumps(root, 0);
    r = NULL;
    CHECK(dt_record_decode(t, strlen(t), "v1", &r, &err) == DT_OK && !r->derived.present, "%s",
          err.msg);
    dt_record_free(r);
    free(t);
    json_decref(root);
    free(cpu);
}

/* Deterministic mutations of a v2 text (one character of a number or a literal replaced):
 * each decode either refuses with a message naming the source, or gives a record whose
 * encoding is a fixed point. Nothing may crash or assert. */
static void test_mutations(dt_record *r, int iterations, uint64_t seed) {
    char *base = NULL;
    size_t n = 0;
    dt_err err = {{0}};
    CHECK(dt_record_encode(r, &base, &n, &err) == DT_OK, "%s", err.msg);
    dt_record_free(r);
    if (!base)
        return;
    static const char subst[] = "0123456789-.eEn\"x";
    uint64_t st = seed;
    int refused = 0, accepted = 0, bad = 0;
    char *t = dt_xmalloc(n + 1);
    for (int it = 0; it < iterations; it++) {
        memcpy(t, base, n + 1);
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        size_t at = (size_t)(st >> 33) % n;
        if (t[at] == '\n' || t[at] == ' ')
            continue;
        t[at] = subst[(st >> 17) % (sizeof subst - 1)];
        dt_record *m = NULL;
        if (dt_record_decode(t, n, "mut", &m, &err) != DT_OK) {
            refused++;
            bad += m != NULL || strncmp(err.msg, "mut: ", 5) != 0;
            continue;
        }
        accepted++;
        char *e1 = NULL, *e2 = NULL;
        size_t n1 = 0, n2 = 0;
        dt_record *m2 = NULL;
        int fixed = dt_record_encode(m, &e1, &n1, &err) == DT_OK &&
                    dt_record_decode(e1, n1, "mut2", &m2, &err) == DT_OK &&
                    dt_record_encode(m2, &e2, &n2, &err) == DT_OK && n1 == n2 &&
                    memcmp(e1, e2, n1) == 0;
        if (!fixed) {
            bad++;
            fprintf(stderr, "mutation at %zu: not a fixed point (%s)\n", at, err.msg);
        }
        free(e1);
        free(e2);
        dt_record_free(m);
        dt_record_free(m2);
    }
    CHECK(bad == 0, "%d bad outcomes", bad);
    CHECK(refused > iterations / 30 && accepted > iterations / 30, "refused %d, accepted %d",
          refused, accepted);
    free(t);
    free(base);
}

/* Files: absent, oversized, not regular. */
static void test_load_files(void) {
    char dir[] = "/tmp/dt-test-record-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[128];
    dt_record *r = NULL;
    dt_err err = {{0}};
    snprintf(path, sizeof path, "%s/absent.json", dir);
    CHECK(dt_record_load(path, &r, &err) == DT_EIO && strstr(err.msg, "cannot read"), "%s",
          err.msg);
    snprintf(path, sizeof path, "%s/huge.json", dir);
    FILE *hf = fopen(path, "w");
    CHECK(hf && ftruncate(fileno(hf), (off_t)DT_RECORD_MAX_BYTES + 1) == 0, "sparse file");
    if (hf)
        fclose(hf);
    CHECK(dt_record_load(path, &r, &err) == DT_EINVAL && strstr(err.msg, "is larger than"), "%s",
          err.msg);
    unlink(path);
    CHECK(dt_record_load(dir, &r, &err) == DT_EINVAL && strstr(err.msg, "not a regular file"),
          "%s", err.msg);
    CHECK(r == NULL, "nothing returned");
    rmdir(dir);
}

/* ---- issue 12: held windows, held floors, probe kinds, pinning, per-scope assessment ---- */

static void test_issue12_fields(void) {
    dt_record *r = hand_built();
    dt_err err = {{0}};
    r->settings.pin = 1;
    dt_record_set_str(&r->settings.probe_kind, "auto");
    dt_record_set_str(&r->env.orchestrator_cpus, "0-1");
    dt_record_set_str(&r->impls[1].cpus, "2-3");
    dt_ceilings_rec *ce = &r->env.ceilings;
    ce->present = 1;
    ce->held_floor_batch_us = 1.03;
    ce->held_floor_single_us = 3.25;
    ce->held_touch_floor_batch_us = 1.5; /* held_touch_floor_single_us stays NAN: absent */
    dt_case *c = &r->cases[0];
    dt_record_set_str(&c->impl[1].probe_kind, "serialized");
    c->impl[1].pilot_poc_concurrent = 1.44;
    c->impl[1].pilot_poc_serialized = 1.0125;
    c->impl[0].pilot_poc_concurrent = 1.09; /* serialized not measured */
    dt_held_floor *hf = &c->derived.held_floor;
    hf->present = 1;
    hf->touch_floor_us = 1.5;
    hf->impl[1] = (dt_held_floor_impl){1, 3.0, 2.0, 1, 1.0};
    dt_scope_assessment *sa = &r->derived.scopes[DT_SCOPE_PROBE_BATCH];
    sa->present = 1;
    sa->level = DT_LEVEL_METHOD_AUDIT;
    dt_strv_push(&sa->reasons, "gemm: native probe/control 1.300 outside [0.90, 1.10]");
    r->derived.scopes[DT_SCOPE_E2E_BATCH].present = 1;
    r->derived.scopes[DT_SCOPE_E2E_BATCH].level = DT_LEVEL_COMPARATIVE;
    dt_strv_push(&r->derived.summary, "probe/control outside [0.90, 1.10] in 1 case");
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    dt_record *b = NULL;
    CHECK(dt_record_encode(r, &t1, &n1, &err) == DT_OK, "%s", err.msg);
    CHECK(t1 && strstr(t1, "\"held_windows\": true") && strstr(t1, "\"held_touch_floor_batch_us\"") &&
              !strstr(t1, "held_touch_floor_single_us"), "held keys written, absent one left out");
    CHECK(t1 && dt_record_decode(t1, n1, "issue12", &b, &err) == DT_OK, "%s", err.msg);
    if (b) {
        CHECK(b->settings.held_windows == 1 && b->settings.pin == 1 && !b->probe_unheld, "flags");
        CHECK(strcmp(b->settings.probe_kind, "auto") == 0, "probe kind setting");
        CHECK(strcmp(b->env.orchestrator_cpus, "0-1") == 0 && strcmp(b->impls[1].cpus, "2-3") == 0 &&
                  b->impls[0].cpus == NULL, "cpus");
        const dt_ceilings_rec *bc = &b->env.ceilings;
        CHECK(bc->held_floor_batch_us == 1.03 && bc->held_floor_single_us == 3.25 &&
                  bc->held_touch_floor_batch_us == 1.5 && isnan(bc->held_touch_floor_single_us),
              "held floors round trip");
        const dt_case *bcase = &b->cases[0];
        CHECK(strcmp(bcase->impl[1].probe_kind, "serialized") == 0 &&
                  bcase->impl[1].pilot_poc_concurrent == 1.44 &&
                  bcase->impl[1].pilot_poc_serialized == 1.0125 && !bcase->impl[0].probe_kind &&
                  bcase->impl[0].pilot_poc_concurrent == 1.09 &&
                  isnan(bcase->impl[0].pilot_poc_serialized) &&
                  isnan(bcase->impl[2].pilot_poc_concurrent),
              "probe kind fields round trip");
        const dt_held_floor *bh = &bcase->derived.held_floor;
        CHECK(bh->present && bh->touch_floor_us == 1.5 && bh->impl[1].present &&
                  bh->impl[1].over_touch_floor == 1.0 && bh->impl[1].kernels_from_probe &&
                  !bh->impl[0].present, "held floor derived round trip");
        const dt_scope_assessment *ba = &b->derived.scopes[DT_SCOPE_PROBE_BATCH];
        CHECK(ba->present && ba->level == DT_LEVEL_METHOD_AUDIT && ba->reasons.n == 1 &&
                  b->derived.scopes[DT_SCOPE_E2E_BATCH].present &&
                  !b->derived.scopes[DT_SCOPE_CONTROL_BATCH].present &&
                  b->derived.summary.n == 1, "per-scope assessment round trip");
        CHECK(dt_record_encode(b, &t2, &n2, &err) == DT_OK && n1 == n2 && memcmp(t1, t2, n1) == 0,
              "issue-12 record is not a fixed point");
    }
    dt_record_free(b);
    b = NULL;
    /* a v2 file written before held windows: no held_windows key; its control is dispatch */
    json_t *j = t1 ? json_loads(t1, 0, NULL) : NULL;
    json_t *settings = json_object_get(j, "settings");
    json_object_del(settings, "held_windows");
    json_t *smp = json_object_get(json_object_get(json_object_get(json_array_get(
        json_object_get(j, "cases"), 0), "impl"), "torch"), "samples");
    json_object_set_new(smp, "control_batch",
                        json_pack("[{s:f,s:i,s:i,s:i,s:i}]", "us", 2.0, "reps", 64, "round", 0,
                                  "index", 0, "position", 9));
    json_object_del(json_object_get(j, "derived"), "assessment");
    json_object_set_new(json_object_get(j, "derived"), "assessment",
                        json_pack("{s:s,s:[]}", "level", "smoke", "reasons"));
    char *t3 = json_dumps(j, JSON_COMPACT);
    CHECK(t3 && dt_record_decode(t3, strlen(t3), "old v2", &b, &err) == DT_OK, "%s", err.msg);
    if (b) {
        const dt_case_impl *ci = &b->cases[0].impl[0];
        CHECK(!b->settings.held_windows && b->probe_unheld, "old v2: unheld, probe marked");
        CHECK(ci->samples[DT_SCOPE_CONTROL_BATCH].n == 0 &&
                  ci->samples[DT_SCOPE_DISPATCH_BATCH].n == 1 &&
                  ci->samples[DT_SCOPE_DISPATCH_BATCH].v[0].us == 2.0, "old v2: control is dispatch");
        CHECK(!b->derived.scopes[DT_SCOPE_PROBE_BATCH].present && b->derived.summary.n == 0,
              "assessment without scopes decodes");
    }
    dt_record_free(b);
    b = NULL;
    /* ... and one that also has dispatch_batch is refused, naming both */
    json_object_set_new(smp, "dispatch_batch",
                        json_pack("[{s:f,s:i,s:i,s:i,s:i}]", "us", 2.0, "reps", 64, "round", 0,
                                  "index", 1, "position", 10));
    free(t3);
    t3 = json_dumps(j, JSON_COMPACT);
    CHECK(t3 && dt_record_decode(t3, strlen(t3), "clash", &b, &err) == DT_EINVAL &&
              strstr(err.msg, "both control_batch and dispatch_batch"), "%s", err.msg);
    dt_record_free(b);
    json_decref(j);
    free(t3);
    free(t1);
    free(t2);
    dt_record_free(r);
}

int main(void) {
    test_v1_cpu();
    test_v1_device();
    test_fixed_point(k_cpu);
    test_fixed_point(k_dev);
    test_hand_built();
    test_issue12_fields();
    test_malformed_v1();
    test_malformed_v2();
    test_v1_bad_derived();
    test_mutations(hand_built(), 3000, 12345);
    dt_record *dev = NULL;
    dt_err err = {{0}};
    CHECK(dt_record_load(k_dev, &dev, &err) == DT_OK, "%s", err.msg);
    if (dev)
        test_mutations(dev, 200, 777);
    test_load_files();
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
