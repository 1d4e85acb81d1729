/* test_shard.c — sharded runs without workers: "I/N" parsing, round-robin assignment and
 * a shard's selection (plan/dt_shard.h); plan.json encode -> load round trip with the
 * plan id recomputed and an edited plan refused (record/dt_plan_json.h); dt_record_merge
 * on hand-built shard records: a good pair merges in plan order with shard/host per case
 * and per-shard environments, and each wrong set (missing shard, duplicated shard, other
 * plan, incomplete, a case short, a case of another shard) is refused naming it with the
 * shards left untouched; the merged record encodes and decodes with its new fields.
 * Run: ctest -R test_shard (no GPU, no workers). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dt_check.h"
#include "plan/dt_shard.h"
#include "record/dt_file.h"
#include "record/dt_plan_json.h"
#include "record/dt_record.h"
#include "record/dt_record_json.h"
#include "record/dt_record_merge.h"

static void test_parse(void) {
    dt_err e;
    int i = -1, n = -1;
    CHECK(dt_shard_parse("0/2", &i, &n, &e) == DT_OK && i == 0 && n == 2);
    CHECK(dt_shard_parse("3/4", &i, &n, &e) == DT_OK && i == 3 && n == 4);
    const char *bad[] = {"2/2", "-1/2", "1/0", "a/2", "1/2x", "1", "/2", "1/", "+1/2", ""};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        CHECK(dt_shard_parse(bad[k], &i, &n, &e) == DT_EINVAL, "'%s' refused", bad[k]);
        CHECK(strstr(e.msg, "--shard") != NULL, "message names the flag: %s", e.msg);
    }
}

/* A plan of the add and sum row ops over three shapes (6 cases) in n shards. */
static void make_doc(dt_plan_doc *doc, int n_shards) {
    memset(doc, 0, sizeof *doc);
    int ops[DT_OP_COUNT] = {0};
    ops[dt_op_find("add")] = ops[dt_op_find("sum")] = 1;
    dt_shape_list rows = {3, {{1, 127, 0}, {17, 257, 0}, {64, 512, 0}}, {0}}, gemms = {0, {{0}}, {0}};
    dt_plan_build(&doc->cases, ops, &rows, &gemms, 0);
    dt_err e;
    CHECK(dt_shard_assign(doc, n_shards, &e) == DT_OK);
    doc->run_args = dt_xcalloc(3, sizeof *doc->run_args);
    doc->run_args[doc->n_run_args++] = dt_xstrdup("--backends");
    doc->run_args[doc->n_run_args++] = dt_xstrdup("cpu");
    doc->tool_version = dt_xstrdup("0.1.0");
    doc->git_revision = dt_xstrdup("abc");
    doc->created_at = dt_xstrdup("2026-12-01T10:00:00Z");
    doc->settings.backend = dt_xstrdup("cpu");
    doc->settings.probe_kind = dt_xstrdup("concurrent");
    doc->settings.samples = 9;
    doc->settings.seed = 5;
    doc->settings.sample_ms = 20;
}

static void test_assign(void) {
    dt_plan_doc doc;
    make_doc(&doc, 4);
    for (int i = 0; i < doc.cases.count; i++) CHECK(doc.shard_of[i] == i % 4, "case %d", i);
    dt_plan sel;
    dt_err e;
    CHECK(dt_shard_select(&doc, 1, &sel, &e) == DT_OK && sel.count == 2);
    CHECK(sel.count == 2 && strcmp(sel.cases[0].id, doc.cases.cases[1].id) == 0 &&
          strcmp(sel.cases[1].id, doc.cases.cases[5].id) == 0);
    dt_plan_free(&sel);
    CHECK(dt_shard_select(&doc, 4, &sel, &e) == DT_EINVAL);
    CHECK(dt_shard_assign(&doc, 7, &e) == DT_EINVAL && strstr(e.msg, "empty"), "%s", e.msg);
    CHECK(dt_shard_assign(&doc, 0, &e) == DT_EINVAL);
    CHECK(dt_shard_check_cases(&doc, &doc.cases, &e) == DT_OK);
    dt_plan other = doc.cases;
    other.count--;
    CHECK(dt_shard_check_cases(&doc, &other, &e) == DT_EINVAL && strstr(e.msg, "6 cases"),
          "%s", e.msg);
    dt_plan_doc_free(&doc);
}

static void test_codec(void) {
    dt_plan_doc doc, back;
    make_doc(&doc, 2);
    doc.cases.cases[1].dtype = DT_BF16; /* the dtype travels with the case */
    char *text = NULL;
    size_t len = 0;
    dt_err e;
    REQUIRE(dt_plan_encode(&doc, &text, &len, &e) == DT_OK, "%s", e.msg);
    CHECK(strlen(doc.plan_id) == 64);
    char path[] = "/tmp/dt-test-plan-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    REQUIRE(dt_file_write_atomic(path, text, len, &e) == DT_OK);
    REQUIRE(dt_plan_load(path, &back, &e) == DT_OK, "%s", e.msg);
    CHECK(strcmp(back.plan_id, doc.plan_id) == 0);
    CHECK(back.n_shards == 2 && back.cases.count == doc.cases.count);
    for (int i = 0; i < back.cases.count && i < doc.cases.count; i++) {
        CHECK(strcmp(back.cases.cases[i].id, doc.cases.cases[i].id) == 0, "case %d id", i);
        CHECK(back.cases.cases[i].m == doc.cases.cases[i].m && back.shard_of[i] == i % 2);
        CHECK(back.cases.cases[i].dtype == doc.cases.cases[i].dtype, "case %d dtype", i);
    }
    CHECK(back.n_run_args == 2 && strcmp(back.run_args[1], "cpu") == 0);
    CHECK(back.settings.seed == 5 && strcmp(back.settings.backend, "cpu") == 0);
    dt_plan_doc_free(&back);
    /* edited: another seed with the old plan id */
    char *at = strstr(text, "\"seed\": 5");
    REQUIRE(at != NULL);
    at[8] = '6';
    REQUIRE(dt_file_write_atomic(path, text, len, &e) == DT_OK);
    CHECK(dt_plan_load(path, &back, &e) == DT_EINVAL && strstr(e.msg, "plan_id does not match"),
          "%s", e.msg);
    /* an id changes with the plan's contents */
    char first[65];
    memcpy(first, doc.plan_id, 65);
    doc.settings.seed = 6;
    free(text);
    text = NULL;
    REQUIRE(dt_plan_encode(&doc, &text, &len, &e) == DT_OK);
    CHECK(strcmp(first, doc.plan_id) != 0);
done:
    unlink(path);
    free(text);
    dt_plan_doc_free(&doc);
}

/* A complete shard record of `index`/2 of plan `id` with the cases of ids. */
static dt_record *shard_rec(const char *id, int index, const char *host, const char *const *ids,
                            int n) {
    dt_record *r = dt_record_new();
    dt_record_impl_add(r, "torch", DT_ROLE_BASELINE);
    dt_record_impl_add(r, "native", DT_ROLE_CANDIDATE);
    dt_record_set_str(&r->settings.backend, "cpu");
    dt_record_set_str(&r->env.host.hostname, host);
    dt_record_set_str(&r->started_at, index ? "2026-12-01T10:00:05Z" : "2026-12-01T10:00:01Z");
    dt_record_set_str(&r->finished_at, index ? "2026-12-01T10:00:09Z" : "2026-12-01T10:00:07Z");
    r->complete = 1;
    r->plan.present = 1;
    dt_record_set_str(&r->plan.plan_id, id);
    r->plan.index = index;
    r->plan.count = 2;
    for (int i = 0; i < n; i++) {
        dt_case *c = dt_record_case_add(r, ids[i]);
        c->op = (dt_op)dt_op_find("add");
        c->m = 1 + i;
        c->n = 8;
    }
    return r;
}

static const char *const k_ids[] = {"c0", "c1", "c2", "c3", "c4"};
static const int k_shard_of[] = {0, 1, 0, 1, 0};
static const char *const k_even[] = {"c0", "c2", "c4"}, *const k_odd[] = {"c1", "c3"};
static const dt_merge_plan k_plan = {"PLAN", 2, 5, k_ids, k_shard_of};

/* Merging a (wrong) set must fail naming `want`, leaving the records as they were. */
static void refused(dt_record **recs, const char *const *names, size_t n, const char *want,
                    int line) {
    dt_record *out = NULL;
    dt_err e;
    size_t before = recs[0]->n_cases;
    CHECK_AT(line, dt_record_merge(&k_plan, recs, names, n, &out, &e) == DT_EINVAL && !out,
             "refused (%s)", want);
    CHECK_AT(line, strstr(e.msg, want) != NULL, "message '%s' names '%s'", e.msg, want);
    CHECK_AT(line, recs[0] && recs[0]->n_cases == before, "shards untouched");
    for (size_t i = 0; i < n; i++) dt_record_free(recs[i]);
}

static void test_merge_refusals(void) {
    const char *names[] = {"d/shard-0", "d/shard-1", "d/shard-x"};
    dt_record *r[3];
    r[0] = shard_rec("PLAN", 0, "a", k_even, 3);
    refused(r, names, 1, "shard 1 of 2 is missing (its cases: c1, c3)", __LINE__);
    r[0] = shard_rec("PLAN", 0, "a", k_even, 3);
    r[1] = shard_rec("PLAN", 1, "b", k_odd, 2);
    r[2] = shard_rec("PLAN", 1, "b", k_odd, 2);
    refused(r, names, 3, "d/shard-x: shard 1 again (also d/shard-1)", __LINE__);
    r[0] = shard_rec("PLAN", 0, "a", k_even, 3);
    r[1] = shard_rec("OTHER", 1, "b", k_odd, 2);
    refused(r, names, 2, "d/shard-1: shard of another plan", __LINE__);
    r[0] = shard_rec("PLAN", 0, "a", k_even, 3);
    r[1] = shard_rec("PLAN", 1, "b", k_odd, 2);
    r[1]->complete = 0;
    refused(r, names, 2, "d/shard-1: shard 1 is incomplete", __LINE__);
    r[0] = shard_rec("PLAN", 0, "a", k_even, 2);
    r[1] = shard_rec("PLAN", 1, "b", k_odd, 2);
    refused(r, names, 2, "d/shard-0: shard 0 is missing 1 planned case(s): c4", __LINE__);
    const char *odd_plus[] = {"c1", "c3", "c4"};
    r[0] = shard_rec("PLAN", 0, "a", k_even, 3);
    r[1] = shard_rec("PLAN", 1, "b", odd_plus, 3);
    refused(r, names, 2, "d/shard-1: case c4 is shard 0's", __LINE__);
    r[0] = shard_rec("PLAN", 0, "a", k_even, 3);
    r[1] = shard_rec("PLAN", 1, "b", k_odd, 2);
    r[1]->plan.present = 0;
    refused(r, names, 2, "d/shard-1: not a shard of a plan", __LINE__);
}

static void test_merge_ok(void) {
    const char *names[] = {"d/shard-1", "d/shard-0"};
    dt_record *r[2] = {shard_rec("PLAN", 1, "hostb", k_odd, 2),
                       shard_rec("PLAN", 0, "hosta", k_even, 3)};
    dt_record *m = NULL, *back = NULL;
    dt_err e;
    char *text = NULL;
    size_t len = 0;
    REQUIRE(dt_record_merge(&k_plan, r, names, 2, &m, &e) == DT_OK, "%s", e.msg);
    CHECK(r[0] == NULL && r[1] == NULL, "shards consumed");
    REQUIRE(m->n_cases == 5);
    for (int i = 0; i < 5; i++) {
        CHECK(strcmp(m->cases[i].id, k_ids[i]) == 0, "plan order: %d is %s", i, m->cases[i].id);
        CHECK(m->cases[i].shard == k_shard_of[i]);
        CHECK(m->cases[i].host && strcmp(m->cases[i].host, i % 2 ? "hostb" : "hosta") == 0);
    }
    CHECK(m->plan.present && m->plan.index == DT_NULL_I64 && m->plan.count == 2);
    CHECK(strcmp(m->started_at, "2026-12-01T10:00:01Z") == 0);
    CHECK(strcmp(m->finished_at, "2026-12-01T10:00:09Z") == 0);
    CHECK(m->shards_json && strstr(m->shards_json, "\"hostb\"") &&
          strstr(m->shards_json, "\"hosta\"") < strstr(m->shards_json, "\"hostb\""),
          "shards in shard order: %s", m->shards_json ? m->shards_json : "(null)");
    REQUIRE(dt_record_encode(m, &text, &len, &e) == DT_OK, "%s", e.msg);
    REQUIRE(dt_record_decode(text, len, "merged", &back, &e) == DT_OK, "%s", e.msg);
    CHECK(back->plan.present && back->plan.index == DT_NULL_I64 &&
          strcmp(back->plan.plan_id, "PLAN") == 0);
    CHECK(back->cases[3].shard == 1 && strcmp(back->cases[3].host, "hostb") == 0);
    CHECK(back->shards_json && strcmp(back->shards_json, m->shards_json) == 0);
done:
    free(text);
    dt_record_free(back);
    dt_record_free(m);
}

int main(void) {
    test_parse();
    test_assign();
    test_codec();
    test_merge_refusals();
    test_merge_ok();
    return dt_check_summary("test_shard");
}
