/* dt_compare_json.c — a comparison result (and a refusal) as JSON text for `dualtime
 * compare --format json`. Contract in dt_compare_json.h; layout in
 * docs/results-format.md ("Comparing two runs", JSON). */
#include "format/dt_compare_json.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

/* An encoder: `bad` is set when a string is not UTF-8 (the text is then refused). */
typedef struct enc {
    int bad;
} enc;

static json_t *jnum(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *jstr(enc *e, const char *s) {
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (!j) {
        e->bad = 1;
        return json_null();
    }
    return j;
}

/* A JSON literal text (a difference's value) as a value; null when absent. */
static json_t *jlit(enc *e, const char *lit) {
    if (!lit)
        return json_null();
    json_t *j = json_loads(lit, JSON_DECODE_ANY, NULL);
    if (!j)
        e->bad = 1;
    return j ? j : json_null();
}

static void put(json_t *o, const char *key, json_t *v) { json_object_set_new(o, key, v); }

static json_t *run_id(enc *e, const char *started_at, const char *git_revision) {
    json_t *o = json_object();
    put(o, "started_at", jstr(e, started_at));
    put(o, "git_revision", jstr(e, git_revision));
    return o;
}

static json_t *method(const dt_compare_result *res) {
    json_t *o = json_object();
    put(o, "threshold", json_real(res->threshold));
    put(o, "ci_level", jnum(res->ci_level));
    put(o, "resamples", json_integer(res->resamples));
    put(o, "seed", json_integer((json_int_t)(int64_t)res->seed));
    put(o, "min_pairs", json_integer((json_int_t)res->min_pairs));
    put(o, "spread_floor", jnum(res->spread_floor));
    return o;
}

static json_t *side(const dt_compare_side *s, int candidate) {
    json_t *o = json_object();
    put(o, "n", json_integer((json_int_t)s->n));
    put(o, "p50_us", jnum(s->p50_us));
    put(o, "pairs", candidate ? json_integer((json_int_t)s->pairs) : json_null());
    put(o, "ratio", candidate ? jnum(s->ratio) : json_null());
    put(o, "rounds", json_integer(s->rounds));
    put(o, "spread", jnum(s->spread));
    return o;
}

static json_t *row(enc *e, const dt_compare_row *r) {
    int cand = r->role == DT_ROLE_CANDIDATE;
    json_t *o = json_object();
    put(o, "scope", json_string(dt_scope_name(r->scope)));
    put(o, "implementation", jstr(e, r->impl_id));
    put(o, "role", json_string(dt_role_name(r->role)));
    put(o, "verdict", json_string(dt_cmp_verdict_name(r->verdict)));
    put(o, "change", jnum(r->change));
    put(o, "ci_low", jnum(r->ci_low));
    put(o, "ci_high", jnum(r->ci_high));
    put(o, "spread", jnum(r->spread));
    put(o, "spread_measured", json_boolean(r->spread_measured));
    put(o, "process_band", jnum(r->process_band));
    put(o, "detectable_slower", jnum(r->detectable_slower));
    put(o, "detectable_faster", jnum(r->detectable_faster));
    put(o, "a", side(&r->a, cand));
    put(o, "b", side(&r->b, cand));
    return o;
}

static json_t *diffs(enc *e, const dt_compare_diffs *d) {
    json_t *a = json_array();
    for (size_t i = 0; i < d->n; i++) {
        json_t *o = json_object();
        put(o, "what", jstr(e, d->v[i].what));
        put(o, "a", jlit(e, d->v[i].a));
        put(o, "b", jlit(e, d->v[i].b));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *one_case(enc *e, const dt_compare_case *c) {
    json_t *o = json_object();
    put(o, "id", jstr(e, c->id));
    put(o, "invalid", json_boolean(c->invalid));
    put(o, "differences", diffs(e, &c->diffs));
    json_t *rows = json_array();
    for (size_t k = 0; k < c->n_rows; k++)
        json_array_append_new(rows, row(e, &c->rows[k]));
    put(o, "rows", rows);
    return o;
}

static json_t *ids(enc *e, const dt_strv *sv) {
    json_t *a = json_array();
    for (size_t i = 0; i < sv->n; i++)
        json_array_append_new(a, jstr(e, sv->v[i]));
    return a;
}

static json_t *counts(const dt_compare_result *res) {
    json_t *o = json_object();
    for (int v = 0; v < DT_CMP_VERDICT_COUNT; v++)
        put(o, dt_cmp_verdict_name((dt_cmp_verdict)v),
            json_integer((json_int_t)res->n_verdict[v]));
    return o;
}

static json_t *head(int comparable) {
    json_t *o = json_object();
    put(o, "format", json_string(DT_COMPARE_FORMAT));
    put(o, "format_version", json_integer(DT_COMPARE_FORMAT_VERSION));
    put(o, "comparable", json_boolean(comparable));
    return o;
}

/* Dumps and takes o: the text with a final newline. */
static dt_status dump(json_t *o, int bad, char **text, size_t *len, dt_err *err) {
    *text = NULL;
    *len = 0;
    char *s = bad ? NULL
                  : json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17) |
                                      JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s)
        return dt_fail(err, DT_EINVAL, "compare: %s",
                       bad ? "a string is not UTF-8 (or a difference is not JSON)"
                           : "cannot encode the result as JSON");
    size_t n = strlen(s);
    char *t = dt_xmalloc(n + 2);
    memcpy(t, s, n);
    t[n] = '\n';
    t[n + 1] = 0;
    free(s);
    *text = t;
    *len = n + 1;
    return DT_OK;
}

dt_status dt_compare_result_encode(const dt_compare_result *res, char **text, size_t *len,
                                   dt_err *err) {
    enc e = {0};
    json_t *o = head(1);
    put(o, "a", run_id(&e, res->a_started_at, res->a_git_revision));
    put(o, "b", run_id(&e, res->b_started_at, res->b_git_revision));
    put(o, "method", method(res));
    json_t *cases = json_array();
    for (size_t i = 0; i < res->n_cases; i++)
        json_array_append_new(cases, one_case(&e, &res->cases[i]));
    put(o, "cases", cases);
    put(o, "only_a", ids(&e, &res->only_a));
    put(o, "only_b", ids(&e, &res->only_b));
    put(o, "counts", counts(res));
    put(o, "candidate_slower", json_integer((json_int_t)res->n_candidate_slower));
    put(o, "baseline_moved", json_integer((json_int_t)res->n_baseline_moved));
    put(o, "regression", json_boolean(res->regression));
    put(o, "exit_status", json_integer(dt_compare_exit_status(DT_OK, res)));
    return dump(o, e.bad, text, len, err);
}

dt_status dt_compare_refusal_encode(const char *reason, char **text, size_t *len,
                                    dt_err *err) {
    enc e = {0};
    json_t *o = head(0);
    put(o, "reason", jstr(&e, reason ? reason : ""));
    put(o, "exit_status", json_integer(2));
    return dump(o, e.bad, text, len, err);
}
