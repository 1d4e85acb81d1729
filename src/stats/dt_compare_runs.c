/* dt_compare_runs.c — `dualtime compare A B` as computation: per case, scope and
 * implementation, B/A with a bootstrap interval, the round spread and a verdict; named
 * differences; cases in one run only; the regression flag. Contract in
 * dt_compare_runs.h; the method is docs/results-format.md ("Comparing two runs"). */
#define _GNU_SOURCE
#include "stats/dt_compare_runs.h"

#include "stats/dt_derive.h"
#include "stats/dt_stats.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

static const char *const k_verdict_names[DT_CMP_VERDICT_COUNT] = {
    "unchanged", "slower", "faster", "within round spread", "insufficient", "invalid",
    "incomparable"};

const char *dt_cmp_verdict_name(dt_cmp_verdict v) {
    DT_ASSERT((int)v >= 0 && v < DT_CMP_VERDICT_COUNT);
    return k_verdict_names[v];
}

dt_cmp_verdict dt_compare_runs_verdict(double ci_low, double ci_high, double threshold,
                                       double spread) {
    if (!isfinite(ci_low) || !isfinite(ci_high)) return DT_CMP_INSUFFICIENT;
    if (ci_low > 1 + threshold && !(ci_low <= spread)) return DT_CMP_SLOWER;
    if (ci_high < 1 - threshold && !(ci_high >= 1 / spread)) return DT_CMP_FASTER;
    if (ci_low > 1 + threshold || ci_high < 1 - threshold) return DT_CMP_WITHIN_SPREAD;
    return DT_CMP_UNCHANGED;
}

/* ---- values as JSON literal text (how a difference names them) ---- */

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    DT_ASSERT(n >= 0);
    return s;
}

/* A string as a JSON string literal (quotes, \" \\ \b \f \n \r \t, \uXXXX for other
 * control characters); NULL for NULL (absent). */
static char *lit_str(const char *s) {
    if (!s)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    DT_ASSERT(o);
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", o); break;
        case '\\': fputs("\\\\", o); break;
        case '\b': fputs("\\b", o); break;
        case '\f': fputs("\\f", o); break;
        case '\n': fputs("\\n", o); break;
        case '\r': fputs("\\r", o); break;
        case '\t': fputs("\\t", o); break;
        default:
            if (*p < 0x20)
                fprintf(o, "\\u%04X", *p);
            else
                fputc(*p, o);
        }
    }
    fputc('"', o);
    DT_ASSERT(fclose(o) == 0);
    return buf;
}

static char *lit_i64(int64_t v) { return v == DT_NULL_I64 ? NULL : xasprintf("%lld", (long long)v); }
static char *lit_bool(int v) { return dt_xstrdup(v ? "true" : "false"); }

/* A case's inputs array as results.json holds it. */
static char *lit_inputs(const dt_case *c) {
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    DT_ASSERT(o);
    fputc('[', o);
    for (size_t i = 0; i < c->n_inputs; i++) {
        char *n = lit_str(c->inputs[i].name ? c->inputs[i].name : "");
        char *h = lit_str(c->inputs[i].sha256 ? c->inputs[i].sha256 : "");
        fprintf(o, "%s{\"name\":%s,\"sha256\":%s", i ? "," : "", n, h);
        if (c->inputs[i].rows != DT_NULL_I64)
            fprintf(o, ",\"rows\":%lld", (long long)c->inputs[i].rows);
        if (c->inputs[i].cols != DT_NULL_I64)
            fprintf(o, ",\"cols\":%lld", (long long)c->inputs[i].cols);
        fputc('}', o);
        free(n);
        free(h);
    }
    fputc(']', o);
    DT_ASSERT(fclose(o) == 0);
    return buf;
}

/* ---- differences ---- */

/* Adds "what differs (A a, B b)", taking a and b. */
static void diff_add(dt_compare_diffs *d, const char *what, char *a, char *b) {
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 8;
        d->v = realloc(d->v, d->cap * sizeof *d->v);
        DT_ASSERT(d->v);
    }
    d->v[d->n].what = dt_xstrdup(what);
    d->v[d->n].a = a;
    d->v[d->n].b = b;
    d->n++;
}

/* Adds the difference when the values differ (either present and not equal); takes
 * a and b either way. */
static void diff_if(dt_compare_diffs *d, const char *what, char *a, char *b) {
    if ((a || b) && !(a && b && strcmp(a, b) == 0)) {
        diff_add(d, what, a, b);
        return;
    }
    free(a);
    free(b);
}

static void diffs_free(dt_compare_diffs *d) {
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].what);
        free(d->v[i].a);
        free(d->v[i].b);
    }
    free(d->v);
    memset(d, 0, sizeof *d);
}

/* Name of the k-th implementation position: "candidate" (the first), "candidate 2" ...,
 * "baseline" (the last). */
static void position_name(char *buf, size_t cap, size_t k, size_t n) {
    if (k + 1 == n)
        snprintf(buf, cap, "baseline");
    else if (k == 0)
        snprintf(buf, cap, "candidate");
    else
        snprintf(buf, cap, "candidate %zu", k + 1);
}

/* Index into r->impls of display position k of n positions (candidates, then the
 * baseline); -1 when the run has fewer implementations at that place. */
static long impl_at(const dt_record *r, size_t k, size_t n) {
    if (k + 1 == n)
        return 0;
    return k + 1 < r->n_impls ? (long)(k + 1) : -1;
}

static void run_diffs(const dt_record *a, const dt_record *b, size_t npos,
                      dt_compare_diffs *d) {
    diff_if(d, "backend", lit_str(a->settings.backend), lit_str(b->settings.backend));
    diff_if(d, "threads", lit_i64(a->settings.threads), lit_i64(b->settings.threads));
    diff_if(d, "input views", lit_bool(a->settings.input_views),
            lit_bool(b->settings.input_views));
    diff_if(d, "GPU name", lit_str(a->env.gpu_name), lit_str(b->env.gpu_name));
    diff_if(d, "CPU", lit_str(a->env.host.cpu), lit_str(b->env.host.cpu));
    for (size_t k = 0; k < npos; k++) {
        long ia = impl_at(a, k, npos), ib = impl_at(b, k, npos);
        const dt_impl *fa = ia >= 0 ? &a->impls[ia] : NULL, *fb = ib >= 0 ? &b->impls[ib] : NULL;
        char pos[48], what[96];
        position_name(pos, sizeof pos, k, npos);
        snprintf(what, sizeof what, "%s id", pos);
        diff_if(d, what, lit_str(fa ? fa->id : NULL), lit_str(fb ? fb->id : NULL));
        snprintf(what, sizeof what, "%s framework", pos);
        diff_if(d, what, lit_str(fa ? fa->framework : NULL), lit_str(fb ? fb->framework : NULL));
        if (k + 1 == npos) {
            snprintf(what, sizeof what, "%s framework_version", pos);
            diff_if(d, what, lit_str(fa->framework_version), lit_str(fb->framework_version));
        }
    }
}

static void case_diffs(const dt_case *ca, const dt_case *cb, dt_compare_diffs *d) {
    diff_if(d, "op", lit_str(dt_op_get(ca->op)->name), lit_str(dt_op_get(cb->op)->name));
    diff_if(d, "m", lit_i64(ca->m), lit_i64(cb->m));
    diff_if(d, "n", lit_i64(ca->n), lit_i64(cb->n));
    diff_if(d, "k", lit_i64(ca->k), lit_i64(cb->k));
    diff_if(d, "views", lit_bool(ca->views), lit_bool(cb->views));
    diff_if(d, "backend", lit_str(ca->backend), lit_str(cb->backend));
    if (ca->n_inputs != cb->n_inputs) {
        diff_if(d, "inputs", lit_inputs(ca), lit_inputs(cb));
        return;
    }
    for (size_t i = 0; i < ca->n_inputs; i++) {
        char what[128];
        const char *name = ca->inputs[i].name;
        snprintf(what, sizeof what, "input %s sha256", name ? name : "?");
        diff_if(d, what, lit_str(ca->inputs[i].sha256), lit_str(cb->inputs[i].sha256));
    }
}

/* ---- samples ---- */

/* The us values of one scope of one implementation of a case (fresh array, NULL when
 * *n is 0). */
static double *scope_us(const dt_case *c, size_t impl, dt_scope s, size_t *n) {
    const dt_samples *sm = &c->impl[impl].samples[s];
    *n = c->impl[impl].present ? sm->n : 0;
    if (*n == 0)
        return NULL;
    double *v = dt_xmalloc(*n * sizeof *v);
    for (size_t i = 0; i < *n; i++)
        v[i] = sm->v[i].us;
    return v;
}

/* Run-to-run spread of one implementation's scope within one run: the largest over the
 * smallest of its per-round medians (1 = steady); NAN with fewer than 2 rounds. A
 * difference between two runs that is no larger than the differences between rounds of
 * one run is not called a change. */
static double round_spread(const dt_case *c, size_t impl, dt_scope s) {
    const dt_samples *sm = &c->impl[impl].samples[s];
    size_t n = c->impl[impl].present ? sm->n : 0;
    if (n == 0)
        return NAN;
    double lo = INFINITY, hi = -INFINITY;
    int rounds = 0;
    double *v = dt_xmalloc(n * sizeof *v);
    for (int32_t r = 0;; r++) {
        size_t k = 0;
        int seen_higher = 0;
        for (size_t i = 0; i < n; i++) {
            if (sm->v[i].round == r)
                v[k++] = sm->v[i].us;
            else if (sm->v[i].round > r)
                seen_higher = 1;
        }
        if (k) {
            double m = dt_stats_median(v, k);
            if (m < lo) lo = m;
            if (m > hi) hi = m;
            rounds++;
        }
        if (!seen_higher)
            break;
    }
    free(v);
    return rounds >= 2 && lo > 0 ? hi / lo : NAN;
}

/* ---- rows ---- */

typedef struct cmp_ctx {
    const dt_record *a, *b;
    size_t npos;           /* implementation positions compared */
    double threshold;
    unsigned resamples;
    uint64_t seed;
    size_t min_samples;    /* fewer on a side: no interval */
    int run_incomparable;
} cmp_ctx;

static dt_compare_row *row_add(dt_compare_case *cc) {
    if (cc->n_rows == cc->cap_rows) {
        cc->cap_rows = cc->cap_rows ? 2 * cc->cap_rows : 16;
        cc->rows = realloc(cc->rows, cc->cap_rows * sizeof *cc->rows);
        DT_ASSERT(cc->rows);
    }
    dt_compare_row *row = &cc->rows[cc->n_rows++];
    memset(row, 0, sizeof *row);
    return row;
}

/* The row of display position k in scope s, when either side has samples there. */
static void compare_row(const cmp_ctx *cx, const dt_case *ca, const dt_case *cb,
                        dt_compare_case *cc, dt_scope s, size_t k) {
    long ia = impl_at(cx->a, k, cx->npos), ib = impl_at(cx->b, k, cx->npos);
    if (ia < 0 || ib < 0)
        return; /* a position one run lacks: named as a run difference, no row */
    size_t na, nb;
    double *va = scope_us(ca, (size_t)ia, s, &na);
    double *vb = scope_us(cb, (size_t)ib, s, &nb);
    if (na == 0 && nb == 0)
        return;
    dt_interval iv = {NAN, NAN, NAN, 0};
    dt_err e2;
    uint64_t s2 = dt_derive_seed(cx->seed, ca->id, dt_scope_name(s)) ^ (uint64_t)(k + 1);
    if (na && nb &&
        dt_stats_ratio_of_medians_interval(va, na, vb, nb, cx->resamples, s2, &iv, &e2) != DT_OK)
        iv.median = iv.ci_low = iv.ci_high = NAN; /* no ratio */
    if (na < cx->min_samples || nb < cx->min_samples)
        iv.ci_low = iv.ci_high = NAN;
    double sa = round_spread(ca, (size_t)ia, s), sb = round_spread(cb, (size_t)ib, s);
    dt_compare_row *row = row_add(cc);
    row->scope = s;
    row->impl_a = (size_t)ia;
    row->impl_b = (size_t)ib;
    row->role = cx->a->impls[ia].role;
    row->impl_id = dt_xstrdup(cx->a->impls[ia].id);
    row->n_a = na;
    row->n_b = nb;
    row->a_p50_us = dt_stats_median(va, na);
    row->b_p50_us = dt_stats_median(vb, nb);
    row->ratio = iv.median;
    row->ci_low = iv.ci_low;
    row->ci_high = iv.ci_high;
    row->spread = isfinite(sa) && isfinite(sb) ? (sa > sb ? sa : sb) : NAN;
    row->verdict = cc->invalid ? DT_CMP_INVALID
                   : cx->run_incomparable || cc->diffs.n ? DT_CMP_INCOMPARABLE
                   : dt_compare_runs_verdict(iv.ci_low, iv.ci_high, cx->threshold, row->spread);
    free(va);
    free(vb);
}

static void compare_case(const cmp_ctx *cx, const dt_case *ca, const dt_case *cb,
                         dt_compare_result *res) {
    if (res->n_cases == res->cap_cases) {
        res->cap_cases = res->cap_cases ? 2 * res->cap_cases : 16;
        res->cases = realloc(res->cases, res->cap_cases * sizeof *res->cases);
        DT_ASSERT(res->cases);
    }
    dt_compare_case *cc = &res->cases[res->n_cases++];
    memset(cc, 0, sizeof *cc);
    cc->id = dt_xstrdup(ca->id);
    case_diffs(ca, cb, &cc->diffs);
    cc->invalid = !ca->valid || !cb->valid;
    for (int s = 0; s < DT_SCOPE_COUNT; s++)
        for (size_t k = 0; k < cx->npos; k++)
            compare_row(cx, ca, cb, cc, (dt_scope)s, k);
    for (size_t i = 0; i < cc->n_rows; i++) {
        const dt_compare_row *row = &cc->rows[i];
        if (row->verdict != DT_CMP_SLOWER)
            continue;
        if (row->role == DT_ROLE_CANDIDATE && !dt_scope_is_probe(row->scope))
            res->n_candidate_slower++;
        if (row->role == DT_ROLE_BASELINE)
            res->n_baseline_slower++;
    }
}

static char *dup_or_null(const char *s) { return s ? dt_xstrdup(s) : NULL; }

dt_status dt_compare_runs(const dt_record *a, const dt_record *b, double threshold,
                          dt_compare_result **out, dt_err *err) {
    *out = NULL;
    if (!(threshold >= 0 && threshold < 1))
        return dt_fail(err, DT_EINVAL, "compare: threshold %g must be in [0, 1)", threshold);
    if (a->n_impls < 2 || b->n_impls < 2)
        return dt_fail(err, DT_EINVAL, "compare: run %s has no candidate (%zu implementation(s))",
                       a->n_impls < 2 ? "A" : "B", a->n_impls < 2 ? a->n_impls : b->n_impls);
    cmp_ctx cx = {a, b, a->n_impls > b->n_impls ? a->n_impls : b->n_impls, threshold,
                  a->settings.bootstrap_resamples, a->settings.bootstrap_seed,
                  a->derived.policy.compare_min_samples, 0};
    dt_compare_result *res = dt_xcalloc(1, sizeof *res);
    res->a_started_at = dup_or_null(a->started_at);
    res->a_git_revision = dup_or_null(a->tool.git_revision);
    res->b_started_at = dup_or_null(b->started_at);
    res->b_git_revision = dup_or_null(b->tool.git_revision);
    res->threshold = threshold;
    res->ci_level = a->derived.policy.ci_level;
    res->resamples = cx.resamples;
    res->seed = cx.seed;
    run_diffs(a, b, cx.npos, &res->run_diffs);
    cx.run_incomparable = res->run_diffs.n > 0;
    for (size_t i = 0; i < a->n_cases; i++) {
        int j = dt_record_case_find(b, a->cases[i].id);
        if (j < 0)
            dt_strv_push(&res->only_a, a->cases[i].id);
        else
            compare_case(&cx, &a->cases[i], &b->cases[j], res);
    }
    for (size_t j = 0; j < b->n_cases; j++)
        if (dt_record_case_find(a, b->cases[j].id) < 0)
            dt_strv_push(&res->only_b, b->cases[j].id);
    res->regression = res->n_candidate_slower > 0;
    *out = res;
    return DT_OK;
}

int dt_compare_result_regression(const dt_compare_result *res) {
    return res && res->regression;
}

void dt_compare_result_free(dt_compare_result *res) {
    if (!res)
        return;
    free(res->a_started_at);
    free(res->a_git_revision);
    free(res->b_started_at);
    free(res->b_git_revision);
    diffs_free(&res->run_diffs);
    for (size_t i = 0; i < res->n_cases; i++) {
        dt_compare_case *cc = &res->cases[i];
        free(cc->id);
        diffs_free(&cc->diffs);
        for (size_t k = 0; k < cc->n_rows; k++)
            free(cc->rows[k].impl_id);
        free(cc->rows);
    }
    free(res->cases);
    dt_strv_free(&res->only_a);
    dt_strv_free(&res->only_b);
    free(res);
}
