/* test_devices.c — the pure parts of `run --devices` (orchestrate/dt_devices.h): LIST
 * parsing and its refusals, CPU shares, --replicate selection and the flags that rebuild
 * it, each case's device from its shard, the per-device counts, the replicas' spread; and
 * the codec round trip of results.json's "devices", "replicas" and cases' "device". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"
#include "orchestrate/dt_devices.h"
#include "plan/dt_ops.h"
#include "record/dt_record_json.h"

static void test_parse(void) {
    int idx[DT_DEVICES_MAX], n = 0;
    dt_err e;
    CHECK(dt_devices_parse("0,2,1", 4, NULL, idx, &n, &e) == DT_OK && n == 3 && idx[0] == 0 &&
              idx[1] == 2 && idx[2] == 1,
          "0,2,1 in the given order");
    CHECK(dt_devices_parse("all", 3, NULL, idx, &n, &e) == DT_OK && n == 3 && idx[2] == 2, "all");
    CHECK(dt_devices_parse("all", -1, "no NVML", idx, &n, &e) == DT_OK && n == 1 && idx[0] == 0,
          "all without NVML: device 0");
    CHECK(dt_devices_parse("0", -1, "no NVML", idx, &n, &e) == DT_OK && n == 1, "0 without NVML");
    CHECK(dt_devices_parse("1", -1, "NVML not found", idx, &n, &e) == DT_EINVAL &&
              strstr(e.msg, "--devices: '1'") && strstr(e.msg, "NVML not found"),
          "%s", e.msg);
    CHECK(dt_devices_parse("4", 4, NULL, idx, &n, &e) == DT_EINVAL &&
              strstr(e.msg, "no device 4") && strstr(e.msg, "4 GPUs"),
          "%s", e.msg);
    CHECK(dt_devices_parse("1,1", 4, NULL, idx, &n, &e) == DT_EINVAL && strstr(e.msg, "twice"),
          "%s", e.msg);
    const char *bad[] = {"", "x", "0,", ",0", "-1", "0 1", "1.5", "0,,1", "1234567"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e.msg[0] = 0;
        CHECK(dt_devices_parse(bad[i], 8, NULL, idx, &n, &e) == DT_EINVAL &&
                  strncmp(e.msg, "--devices: ", 11) == 0,
              "'%s' refused: %s", bad[i], e.msg);
    }
}

static void test_split(void) {
    int cpus[] = {0, 1, 2, 3, 4, 5, 6, 8, 9};
    char lists[3][DT_PIN_LIST_LEN];
    CHECK(dt_devices_split_cpus(cpus, 9, 3, lists) == 1);
    CHECK(strcmp(lists[0], "0-2") == 0 && strcmp(lists[1], "3-5") == 0 &&
              strcmp(lists[2], "6,8-9") == 0,
          "%s | %s | %s", lists[0], lists[1], lists[2]);
    CHECK(dt_devices_split_cpus(cpus, 2, 3, lists) == 0, "fewer CPUs than devices: no shares");
    CHECK(dt_devices_split_cpus(cpus, 2, 2, lists) == 1 && strcmp(lists[1], "1") == 0);
}

/* A plan of add and gemm shapes, fp32 and bf16. */
static void make_plan(dt_plan *p) {
    int ops[DT_OP_COUNT] = {0};
    ops[DT_OP_ADD] = ops[DT_OP_GEMM] = 1;
    dt_shape_list rows = {2, {{17, 257, 0}, {1, 127, 0}}, {0}}, gemms = {1, {{32, 32, 32}}, {0}};
    dt_dtype dt[2] = {DT_F32, DT_BF16};
    dt_plan_build_typed(p, ops, &rows, &gemms, 0, dt, 2);
}

static void test_replicate(void) {
    dt_plan p;
    make_plan(&p);
    CHECK(p.count == 6, "%d cases", p.count);
    dt_strv ids = {0}, flags = {0};
    dt_err e;
    CHECK(dt_devices_replicate_select("gemm_32x32x32,add_1x127_bf16", &p, &ids, &e) == DT_OK &&
              ids.n == 2 && strcmp(ids.v[0], "add_1x127_bf16") == 0 &&
              strcmp(ids.v[1], "gemm_32x32x32") == 0,
          "plan order");
    dt_devices_replicate_flags(&p, &ids, &flags);
    const char *want[] = {"--operations",  "add,gemm", "--row-shapes", "1x127",
                          "--gemm-shapes", "32x32x32", "--dtypes",     "bf16,fp32"};
    CHECK(flags.n == 8, "%zu flags", flags.n);
    for (size_t i = 0; i < 8 && i < flags.n; i++)
        CHECK(strcmp(flags.v[i], want[i]) == 0 || (i == 7 && strcmp(flags.v[i], "bf16,f32") == 0),
              "flag %zu: %s, want %s", i, flags.v[i], want[i]);
    dt_strv_free(&ids);
    dt_strv_free(&flags);
    CHECK(dt_devices_replicate_select("all", &p, &ids, &e) == DT_OK && ids.n == 6);
    dt_strv_free(&ids);
    CHECK(dt_devices_replicate_select("add_1x127,nosuch", &p, &ids, &e) == DT_EINVAL &&
              strstr(e.msg, "--replicate: 'nosuch'") && strstr(e.msg, "add_17x257"),
          "%s", e.msg);
    dt_strv_free(&ids);
    CHECK(dt_devices_replicate_select("add_1x127,add_1x127", &p, &ids, &e) == DT_EINVAL &&
              strstr(e.msg, "twice"),
          "%s", e.msg);
    dt_strv_free(&ids);
    dt_plan_free(&p);
}

/* A record of two implementations and three cases in shards 0, 1, 0; devices 3 and 1. */
static dt_record *merged_record(void) {
    dt_record *r = dt_record_new();
    dt_record_impl_add(r, "torch", DT_ROLE_BASELINE);
    dt_record_impl_add(r, "native", DT_ROLE_CANDIDATE);
    const char *ids[] = {"add_1x127", "sum_1x127", "gemm_8x8x8"};
    for (int i = 0; i < 3; i++) {
        dt_case *c = dt_record_case_add(r, ids[i]);
        c->op = DT_OP_ADD; /* the shapes of an add case, whatever the id says */
        c->m = 1;
        c->n = 127;
        c->shard = i % 2;
        c->valid = i != 2;
    }
    int index[] = {3, 1};
    for (int k = 0; k < 2; k++) {
        dt_device_rec *d = dt_record_device_add(r);
        d->index = index[k];
        d->shard = k;
        char s[64];
        snprintf(s, sizeof s, "GPU-%d", index[k]);
        d->uuid = dt_xstrdup(s);
        d->name = dt_xstrdup("Fake H200");
        d->dir = dt_xstrdup(k ? "devices/gpu-1" : "devices/gpu-3");
        d->exit_status = 0;
        d->ceilings.present = 1;
        d->ceilings.copy_gbps = 3000.0 + k;
        d->ceilings.launch_sync_floor_us = 8.5;
        d->ceilings.method = dt_xstrdup("fake");
    }
    return r;
}

static void test_mark_and_codec(void) {
    dt_record *r = merged_record(), *back = NULL;
    dt_devices_mark_cases(r);
    dt_devices_count_cases(r);
    CHECK(r->cases[0].device == 3 && r->cases[1].device == 1 && r->cases[2].device == 3);
    CHECK(r->cases[1].device_uuid && strcmp(r->cases[1].device_uuid, "GPU-1") == 0);
    CHECK(r->devices[0].cases == 2 && r->devices[0].valid == 1 && r->devices[1].cases == 1 &&
              r->devices[1].valid == 1,
          "counts %lld/%lld %lld/%lld", (long long)r->devices[0].cases,
          (long long)r->devices[0].valid, (long long)r->devices[1].cases,
          (long long)r->devices[1].valid);
    dt_replica_rec *q = dt_record_replica_add(r, 2);
    q->case_id = dt_xstrdup("add_1x127");
    q->impl_id = dt_xstrdup("native");
    q->scope = DT_SCOPE_CONTROL_BATCH;
    q->us[0] = 2.0;
    q->spread = NAN;
    char *t1 = NULL, *t2 = NULL;
    size_t l1 = 0, l2 = 0;
    dt_err e;
    REQUIRE(dt_record_encode(r, &t1, &l1, &e) == DT_OK, "%s", e.msg);
    CHECK(strstr(t1, "\"devices\"") && strstr(t1, "\"replicas\"") &&
          strstr(t1, "\"uuid\": \"GPU-3\""));
    REQUIRE(dt_record_decode(t1, l1, "t", &back, &e) == DT_OK, "%s", e.msg);
    CHECK(back->n_devices == 2 && back->devices[1].index == 1 &&
          back->devices[1].ceilings.present && back->devices[1].ceilings.copy_gbps == 3001.0 &&
          back->cases[2].device == 3);
    CHECK(back->n_replicas == 1 && back->replicas[0].scope == DT_SCOPE_CONTROL_BATCH &&
          back->replicas[0].us[0] == 2.0 && isnan(back->replicas[0].us[1]));
    REQUIRE(dt_record_encode(back, &t2, &l2, &e) == DT_OK, "%s", e.msg);
    CHECK(l1 == l2 && memcmp(t1, t2, l1) == 0, "decode -> encode is byte-identical");
    /* a replica with the wrong number of values is refused, naming the key */
    char *bad = strdup(t1), *at = strstr(bad, "\"us\": [");
    REQUIRE(at);
    dt_record *nope = NULL;
    char *close = strchr(at, ']');
    memmove(at + 7, close, strlen(close) + 1); /* "us": [] */
    CHECK(dt_record_decode(bad, strlen(bad), "t", &nope, &e) == DT_EINVAL &&
              strstr(e.msg, "replicas[0].us") && strstr(e.msg, "one value per device"),
          "%s", e.msg);
    free(bad);
done:
    free(t1);
    free(t2);
    dt_record_free(back);
    dt_record_free(r);
}

/* Spreads from per-device records: p50s 10 and 12 give (12 - 10) / 10. */
static void test_replicas(void) {
    dt_record *r = merged_record();
    dt_record *reps[2];
    for (int k = 0; k < 2; k++) {
        reps[k] = merged_record();
        dt_case *c = &reps[k]->cases[0];
        c->derived.present = 1;
        dt_scope_derived *sd = &c->derived.scopes[DT_SCOPE_E2E_BATCH];
        sd->present = 1;
        for (size_t i = 0; i < 2; i++) {
            sd->impl[i].summary.n = 5;
            sd->impl[i].summary.p50 = 10.0 + 2.0 * k + (double)i;
        }
    }
    dt_strv ids = {0};
    dt_strv_push(&ids, "add_1x127");
    dt_devices_replicas(r, (const dt_record *const *)reps, 2, &ids);
    CHECK(r->n_replicas == 2, "%zu replicas (e2e_batch per impl; no control_batch anywhere)",
          r->n_replicas);
    for (size_t i = 0; i < r->n_replicas && i < 2; i++) {
        const dt_replica_rec *q = &r->replicas[i];
        double lo = 10.0 + (double)i;
        CHECK(q->scope == DT_SCOPE_E2E_BATCH && q->us[0] == lo && q->us[1] == lo + 2.0 &&
                  fabs(q->spread - 2.0 / lo) < 1e-12,
              "%s: %g %g spread %g", q->impl_id, q->us[0], q->us[1], q->spread);
    }
    dt_record *none[2] = {reps[0], NULL};
    dt_record *r2 = merged_record();
    dt_devices_replicas(r2, (const dt_record *const *)none, 2, &ids);
    CHECK(r2->n_replicas == 2 && isnan(r2->replicas[0].us[1]) && isnan(r2->replicas[0].spread),
          "one device without results: no spread");
    dt_strv_free(&ids);
    dt_record_free(r2);
    dt_record_free(reps[0]);
    dt_record_free(reps[1]);
    dt_record_free(r);
}

int main(void) {
    test_parse();
    test_split();
    test_replicate();
    test_mark_and_codec();
    test_replicas();
    return dt_check_summary("test_devices");
}
