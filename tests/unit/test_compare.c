/* test_compare.c — dt_compare_runs + dt_format_compare_md on two synthetic runs (fixture
 * JSON decoded by the codec into typed records): a planted 20% regression of the
 * candidate in one case is found (regression = 1, that case "slower"), an unchanged
 * rerun finds none, a changed environment or input makes rows "incomparable" and names
 * the difference; with two candidates, rows per implementation and the second
 * candidate's own regression. Run: ctest -R test_compare (no GPU needed). */
#define _GNU_SOURCE
#include "dt_results_fixture.h"
#include "dt_fixture_multi.h"

#include "format/dt_format_compare.h"
#include "record/dt_record.h"
#include "record/dt_record_json.h"
#include "stats/dt_compare_runs.h"
#include "stats/dt_derive.h"

static const fx_run RUN = {.backend = "cpu", .samples = 9, .rounds = 2, .complete = 1,
                           .seed = 101};

static json_t *run_with(uint64_t seed, double add_cand_us, const char *baseline_version) {
    fx_run o = RUN;
    o.seed = seed;
    o.baseline_version = baseline_version;
    json_t *r = fx_results(&o);
    fx_add_case(r, &o, "add_17x257", add_cand_us, 10.0, 0.02, 1);
    fx_add_case(r, &o, "softmax_1x127", 8.0, 10.0, 0.02, 1);
    fx_add_case(r, &o, "sum_127x193", 12.0, 10.0, 0.02, 1);
    return r;
}

/* The fixture JSON as a typed record through the codec (NULL: a failed check). */
static dt_record *decode(const json_t *j) {
    dt_record *r = fx_record(j);
    CHECK(r != NULL);
    return r;
}

/* compare A B (records) at threshold 0.05 as Markdown; *regression from the result. */
static char *compare_rec(const dt_record *ra, const dt_record *rb, int *regression,
                         dt_status *st) {
    dt_compare_result *res = NULL;
    dt_err err = {{0}};
    char *buf = NULL;
    size_t n = 0;
    *st = ra && rb ? dt_compare_runs(ra, rb, 0.05, &res, &err) : DT_EINVAL;
    CHECK_MSG(*st == DT_OK, err.msg);
    if (*st == DT_OK) {
        *st = dt_format_compare_md(res, &buf, &n, &err);
        CHECK_MSG(*st == DT_OK, err.msg);
        CHECK(buf == NULL || strlen(buf) == n);
    }
    *regression = dt_compare_result_regression(res);
    dt_compare_result_free(res);
    return buf ? buf : dt_xstrdup("");
}

/* The same for two fixture runs (JSON), decoded by the codec. */
static char *compare(const json_t *a, const json_t *b, int *regression, dt_status *st) {
    dt_record *ra = decode(a), *rb = decode(b);
    char *md = compare_rec(ra, rb, regression, st);
    dt_record_free(ra);
    dt_record_free(rb);
    return md;
}

/* The row of case/scope/framework in the markdown, or NULL. */
static const char *row(const char *md, const char *prefix) { return strstr(md, prefix); }

static int row_has(const char *md, const char *prefix, const char *needle) {
    const char *r = row(md, prefix);
    if (!r)
        return 0;
    const char *eol = strchr(r, '\n');
    const char *hit = strstr(r, needle);
    return hit && (!eol || hit < eol);
}

static const char *verdict(double lo, double hi, double t, double spread) {
    return dt_cmp_verdict_name(dt_compare_runs_verdict(lo, hi, t, spread));
}

/* The verdict rule itself, with the round-spread gate. */
static void test_verdict_rule(void) {
    CHECK(strcmp(verdict(1.10, 1.20, 0.05, NAN), "slower") == 0);
    CHECK(strcmp(verdict(1.10, 1.20, 0.05, 1.05), "slower") == 0);
    CHECK(strcmp(verdict(1.10, 1.20, 0.05, 1.15), "within round spread") == 0);
    CHECK(strcmp(verdict(1.03, 1.20, 0.05, NAN), "unchanged") == 0);
    CHECK(strcmp(verdict(0.80, 0.90, 0.05, NAN), "faster") == 0);
    CHECK(strcmp(verdict(0.80, 0.90, 0.05, 1.05), "faster") == 0);
    CHECK(strcmp(verdict(0.80, 0.90, 0.05, 1.2), "within round spread") == 0);
    CHECK(strcmp(verdict(NAN, NAN, 0.05, NAN), "insufficient") == 0);
}

/* Two candidates: one row per implementation (candidates in order, then the baseline);
 * a regression of the second candidate alone is found; a run without it is incomparable. */
static void test_two_candidates(void) {
    json_t *ja = run_with(101, 6.0, NULL), *jb = run_with(202, 6.0, NULL);
    dt_record *a = fxm_with_candidate(ja, "native2", "other-native", 1.0);
    dt_record *b = fxm_with_candidate(jb, "native2", "other-native", 1.3);
    dt_record *b1 = fx_record(jb);
    CHECK(a && b && b1 && a->n_impls == 3 && b->n_impls == 3);
    int reg = -1;
    dt_status st;
    char *md = compare_rec(a, b, &reg, &st);
    CHECK(reg == 1);
    CHECK(strstr(md, "Environments: comparable") != NULL);
    CHECK(row_has(md, "| add\\_17x257 | e2e_batch | native |", "| unchanged |"));
    CHECK(row_has(md, "| add\\_17x257 | e2e_batch | native2 |", "| **slower** |"));
    CHECK(row_has(md, "| sum\\_127x193 | e2e_single | native2 |", "| **slower** |"));
    CHECK(row_has(md, "| add\\_17x257 | e2e_batch | torch |", "| unchanged |"));
    const char *r1 = row(md, "| add\\_17x257 | e2e_batch | native |");
    const char *r2 = row(md, "| add\\_17x257 | e2e_batch | native2 |");
    const char *r3 = row(md, "| add\\_17x257 | e2e_batch | torch |");
    CHECK(r1 && r2 && r3 && r1 < r2 && r2 < r3);
    CHECK(strstr(md, "Result: **regression** of the candidate in 6 case/scope(s): ") != NULL);
    free(md);
    /* B without the second candidate: named, incomparable, no regression claimed */
    md = compare_rec(a, b1, &reg, &st);
    CHECK(reg == 0);
    CHECK(strstr(md, "candidate 2 id differs (A \"native2\", B absent)") != NULL);
    CHECK(row_has(md, "| add\\_17x257 | e2e_batch | native |", "| incomparable |"));
    CHECK(row(md, "| add\\_17x257 | e2e_batch | native2 |") == NULL);
    free(md);
    dt_record_free(a);
    dt_record_free(b);
    dt_record_free(b1);
    json_decref(ja);
    json_decref(jb);
}

/* Issue 12: an old file (its unheld control read as dispatch) against a new run of the
 * same numbers (held control, and dispatch = the same unheld data): dispatch is compared
 * with dispatch, unchanged; the new run's control has no counterpart in the old file. */
static void test_across_versions(void) {
    fx_run o = RUN;
    o.backend = "cuda";
    o.device = 1;
    o.probe_factor = 1.0;
    json_t *j = fx_results(&o);
    fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.02, 1);
    dt_record *old = fx_record_unheld(j), *cur = fx_record(j);
    json_decref(j);
    CHECK(old && cur);
    if (!old || !cur) {
        dt_record_free(old);
        dt_record_free(cur);
        return;
    }
    for (size_t i = 0; i < cur->n_impls; i++)
        for (int q = 0; q < 2; q++) {
            dt_case_impl *ci = &cur->cases[0].impl[i];
            for (size_t k = 0; k < ci->samples[DT_SCOPE_CONTROL_BATCH + q].n; k++)
                dt_samples_push(&ci->samples[DT_SCOPE_DISPATCH_BATCH + q],
                                &ci->samples[DT_SCOPE_CONTROL_BATCH + q].v[k]);
        }
    dt_err err = {{0}};
    CHECK(dt_derive_run(old, &err) == DT_OK && dt_derive_run(cur, &err) == DT_OK);
    dt_compare_result *res = NULL;
    CHECK_MSG(dt_compare_runs(old, cur, 0.05, &res, &err) == DT_OK, err.msg);
    int found = 0;
    for (size_t k = 0; res && res->n_cases == 1 && k < res->cases[0].n_rows; k++) {
        const dt_compare_row *row = &res->cases[0].rows[k];
        if (row->scope == DT_SCOPE_DISPATCH_BATCH && row->role == DT_ROLE_CANDIDATE) {
            found = 1;
            CHECK(row->n_a == 18 && row->n_b == 18 && row->a_p50_us == row->b_p50_us &&
                  row->verdict == DT_CMP_UNCHANGED);
        }
        if (row->scope == DT_SCOPE_CONTROL_BATCH)
            CHECK(row->n_a == 0 && row->n_b == 18); /* held control: new in B */
    }
    CHECK(found);
    CHECK(res && !dt_compare_result_regression(res));
    dt_compare_result_free(res);
    dt_record_free(old);
    dt_record_free(cur);
}

int main(void) {
    test_verdict_rule();
    test_two_candidates();
    test_across_versions();
    json_t *a = run_with(101, 6.0, NULL);
    json_t *same = run_with(202, 6.0, NULL); /* a rerun: other jitter, same speeds */
    json_t *slow = run_with(303, 7.2, NULL); /* candidate 20% slower in add_17x257 */
    int reg = -1;
    dt_status st;

    char *md = compare(a, same, &reg, &st);
    CHECK(reg == 0);
    CHECK(strstr(md, "Environments: comparable") != NULL);
    CHECK(row_has(md, "| add\\_17x257 | e2e_batch | native |", "| unchanged |"));
    CHECK(strstr(md, "**slower**") == NULL);
    CHECK(strstr(md, "no certain regression") != NULL);
    free(md);

    md = compare(a, slow, &reg, &st);
    CHECK(reg == 1);
    CHECK(row_has(md, "| add\\_17x257 | e2e_batch | native |", "| **slower** |"));
    CHECK(row_has(md, "| add\\_17x257 | e2e_batch | torch |", "| unchanged |"));
    CHECK(row_has(md, "| softmax\\_1x127 | e2e_batch | native |", "| unchanged |"));
    CHECK(row_has(md, "| sum\\_127x193 | e2e_batch | native |", "| unchanged |"));
    CHECK(strstr(md, "Result: **regression** of the candidate in 2 case/scope(s): add\\_17x257 "
                     "e2e\\_batch, add\\_17x257 e2e\\_single") != NULL);
    /* the B/A point estimate is about 1.2 */
    const char *r = row(md, "| add\\_17x257 | e2e_batch | native |");
    double ratio = 0;
    if (r) {
        const char *p = r;
        for (int bars = 0; *p && bars < 6; p++)
            bars += *p == '|';
        ratio = strtod(p, NULL);
    }
    CHECK(ratio > 1.17 && ratio < 1.23);
    free(md);

    /* A run whose own rounds differ by more than B/A: not a change. Round 1 of A's
     * candidate add_17x257 e2e_batch samples is made 1.4x slower than round 0. */
    {
        json_t *noisy = json_deep_copy(a);
        json_t *cas = json_array_get(json_object_get(noisy, "cases"), 0);
        json_t *arr = json_object_get(
            json_object_get(json_object_get(json_object_get(cas, "impl"), "native"), "samples"),
            "e2e_batch");
        size_t i;
        json_t *smp;
        json_array_foreach(arr, i, smp) {
            if (json_integer_value(json_object_get(smp, "round")) == 1)
                json_object_set_new(smp, "us",
                                    json_real(1.4 * json_number_value(json_object_get(smp, "us"))));
        }
        md = compare(noisy, slow, &reg, &st);
        /* the row shows A's round spread (1.4, jitter aside), and steady scopes of the
         * same case still show the 20% regression */
        CHECK(row_has(md, "| add\\_17x257 | e2e_batch | native |", "| 1.4"));
        CHECK(row_has(md, "| add\\_17x257 | e2e_single | native |", "| **slower** |"));
        free(md);
        json_decref(noisy);
    }

    /* a regression in the baseline is not the candidate's regression */
    md = compare(slow, a, &reg, &st); /* candidate got faster */
    CHECK(reg == 0);
    CHECK(row_has(md, "| add\\_17x257 | e2e_batch | native |", "| faster |"));
    free(md);

    /* different baseline version: incomparable, named, no regression claimed */
    json_t *other = run_with(303, 7.2, "2.4.0");
    md = compare(a, other, &reg, &st);
    CHECK(reg == 0);
    CHECK(strstr(md, "**incomparable** — baseline framework\\_version differs (A \"1.13.1\", "
                     "B \"2.4.0\")") != NULL);
    CHECK(row_has(md, "| add\\_17x257 | e2e_batch | native |", "| incomparable |"));
    free(md);
    json_decref(other);

    /* different backend */
    other = run_with(303, 7.2, NULL);
    json_object_set_new(json_object_get(other, "settings"), "backend", json_string("cuda"));
    md = compare(a, other, &reg, &st);
    CHECK(reg == 0 && strstr(md, "backend differs (A \"cpu\", B \"cuda\")") != NULL);
    free(md);
    json_decref(other);

    /* different inputs in one case: that case only is incomparable */
    other = run_with(303, 7.2, NULL);
    json_t *in0 = json_array_get(json_object_get(json_array_get(json_object_get(other, "cases"), 0),
                                                 "inputs"), 0);
    json_object_set_new(in0, "sha256", json_string("beef"));
    md = compare(a, other, &reg, &st);
    CHECK(reg == 0);
    CHECK(strstr(md, "input a sha256 differs (A \"00ff\", B \"beef\")") != NULL);
    CHECK(row_has(md, "| add\\_17x257 | e2e_batch | native |", "| incomparable |"));
    CHECK(row_has(md, "| softmax\\_1x127 | e2e_batch | native |", "| unchanged |"));
    free(md);
    json_decref(other);

    /* a case only in one run is listed, and an invalid case gets no verdict */
    other = run_with(202, 6.0, NULL);
    json_object_set_new(json_array_get(json_object_get(other, "cases"), 2), "id",
                        json_string("layernorm_4x4"));
    json_object_set_new(json_array_get(json_object_get(other, "cases"), 1), "valid", json_false());
    md = compare(a, other, &reg, &st);
    CHECK(strstr(md, "Only in A: sum\\_127x193") != NULL);
    CHECK(strstr(md, "Only in B: layernorm\\_4x4") != NULL);
    CHECK(row_has(md, "| softmax\\_1x127 | e2e_batch | native |", "| invalid |"));
    free(md);
    json_decref(other);

    dt_err err;
    dt_record *ra = decode(a), *rs = decode(same);
    dt_compare_result *res = NULL;
    CHECK(ra && rs && dt_compare_runs(ra, rs, 1.5, &res, &err) == DT_EINVAL && res == NULL);
    dt_record_free(ra);
    dt_record_free(rs);

    json_decref(a);
    json_decref(same);
    json_decref(slow);
    return fx_summary();
}
