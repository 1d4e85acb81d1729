/* dt_derive.c — the derive step: raw samples in results.json → summaries, paired ratios,
 * verdicts, probe diagnostics and the run assessment. Contract in dt_derive.h; the
 * JSON it writes is documented in docs/results-format.md. */
#define _GNU_SOURCE
#include "report/dt_derive.h"

#include "plan/dt_ops.h"
#include "stats/dt_stats.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

const char *const dt_derive_known_scopes[] = {"e2e_batch",     "e2e_single",
                                               "control_batch", "control_single",
                                               "probe_batch",   "probe_single"};
const size_t dt_derive_known_scope_count =
    sizeof dt_derive_known_scopes / sizeof dt_derive_known_scopes[0];

/* ---- small JSON helpers ---- */

static json_t *jreal(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static double jnum(const json_t *o, const char *key, double dflt) {
    const json_t *v = o ? json_object_get(o, key) : NULL;
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static const json_t *jpath2(const json_t *o, const char *a, const char *b) {
    const json_t *x = o ? json_object_get(o, a) : NULL;
    return x && b ? json_object_get(x, b) : x;
}

static const json_t *scope_samples(const json_t *cas, const char *fw, const char *scope) {
    const json_t *impl = jpath2(cas, "impl", fw);
    const json_t *arr = jpath2(impl, "samples", scope);
    return json_is_array(arr) ? arr : NULL;
}

/* ---- reasons ---- */

typedef struct reasons {
    char **v;   /* owned strings */
    size_t n, cap;
} reasons;

static void reasons_add(reasons *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reasons_add(reasons *r, const char *fmt, ...) {
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        char **nv = realloc(r->v, r->cap * sizeof *nv);
        DT_ASSERT(nv);
        r->v = nv;
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = dt_xstrdup("(reason lost: out of memory)");
    va_end(ap);
    r->v[r->n++] = s;
}

static void reasons_free(reasons *r) {
    for (size_t i = 0; i < r->n; i++)
        free(r->v[i]);
    free(r->v);
}

static json_t *reasons_json(const reasons *r) {
    json_t *a = json_array();
    size_t shown = r->n > DT_DERIVE_MAX_REASONS ? DT_DERIVE_MAX_REASONS : r->n;
    for (size_t i = 0; i < shown; i++)
        json_array_append_new(a, json_string(r->v[i]));
    if (r->n > shown) {
        char buf[64];
        snprintf(buf, sizeof buf, "... and %zu more", r->n - shown);
        json_array_append_new(a, json_string(buf));
    }
    return a;
}

/* ---- public helpers ---- */

dt_status dt_derive_roles(const json_t *results, const char **candidate_id,
                          const char **baseline_id, dt_err *err) {
    const json_t *fws = json_object_get(results, "frameworks");
    const char *cand = NULL, *base = NULL;
    size_t ncand = 0, nbase = 0, i;
    json_t *fw;
    if (!json_is_array(fws))
        return dt_fail(err, DT_EINVAL, "results: frameworks is missing or not an array");
    json_array_foreach(fws, i, fw) {
        const char *id = json_string_value(json_object_get(fw, "id"));
        const char *role = json_string_value(json_object_get(fw, "role"));
        if (!id || !role)
            return dt_fail(err, DT_EINVAL, "results: frameworks[%zu] needs string id and role", i);
        if (strcmp(role, "candidate") == 0) {
            cand = id;
            ncand++;
        } else if (strcmp(role, "baseline") == 0) {
            base = id;
            nbase++;
        }
    }
    if (ncand != 1 || nbase != 1)
        return dt_fail(err, DT_EINVAL,
                       "results: frameworks must hold exactly one candidate and one baseline "
                       "(found %zu and %zu)", ncand, nbase);
    if (strcmp(cand, base) == 0)
        return dt_fail(err, DT_EINVAL, "results: candidate and baseline share the id \"%s\"", cand);
    *candidate_id = cand;
    *baseline_id = base;
    return DT_OK;
}

double *dt_derive_scope_us(const json_t *cas, const char *fw_id, const char *scope, size_t *n) {
    return dt_derive_array_us(scope_samples(cas, fw_id, scope), n);
}

double *dt_derive_array_us(const json_t *arr, size_t *n) {
    *n = 0;
    if (!arr || json_array_size(arr) == 0)
        return NULL;
    double *v = dt_xmalloc(json_array_size(arr) * sizeof *v);
    size_t i;
    json_t *s;
    json_array_foreach(arr, i, s) {
        const json_t *us = json_object_get(s, "us");
        if (json_is_number(us))
            v[(*n)++] = json_number_value(us);
    }
    if (*n == 0) {
        free(v);
        return NULL;
    }
    return v;
}

void dt_derive_bootstrap_settings(const json_t *results, unsigned *resamples, uint64_t *seed) {
    const json_t *bs = jpath2(results, "settings", "bootstrap");
    const json_t *r = json_object_get(bs, "resamples");
    const json_t *s = json_object_get(bs, "seed");
    *resamples = DT_STATS_DEFAULT_RESAMPLES;
    *seed = DT_STATS_DEFAULT_SEED;
    if (json_is_integer(r) && json_integer_value(r) > 0 && json_integer_value(r) <= 1000000)
        *resamples = (unsigned)json_integer_value(r);
    if (json_is_integer(s))
        *seed = (uint64_t)json_integer_value(s);
}

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001B3ull;
    }
    return h;
}

uint64_t dt_derive_scope_seed(uint64_t run_seed, const char *case_id, const char *scope) {
    uint64_t h = fnv1a(0xCBF29CE484222325ull, case_id);
    h = fnv1a(h ^ 0x2F, scope);
    uint64_t st = run_seed ^ h;
    return dt_stats_splitmix64(&st);
}

/* ---- pairing ---- */

/* Pairs samples of arrays x and y with equal (round, index); returns the pair count and
 * fresh arrays of their `us` (caller frees). Pairs where either value is not positive
 * are skipped and counted in *skipped. */
static size_t pair_by_key(const json_t *x, const json_t *y, double **xo, double **yo,
                          size_t *skipped) {
    size_t nx = x ? json_array_size(x) : 0, ny = y ? json_array_size(y) : 0, n = 0;
    *xo = *yo = NULL;
    *skipped = 0;
    if (nx == 0 || ny == 0)
        return 0;
    unsigned char *used = dt_xcalloc(ny, 1);
    *xo = dt_xmalloc(nx * sizeof **xo);
    *yo = dt_xmalloc(nx * sizeof **yo);
    for (size_t i = 0; i < nx; i++) {
        const json_t *a = json_array_get(x, i);
        json_int_t ra = json_integer_value(json_object_get(a, "round"));
        json_int_t ia = json_integer_value(json_object_get(a, "index"));
        for (size_t j = 0; j < ny; j++) {
            if (used[j])
                continue;
            const json_t *b = json_array_get(y, j);
            if (json_integer_value(json_object_get(b, "round")) != ra ||
                json_integer_value(json_object_get(b, "index")) != ia)
                continue;
            used[j] = 1;
            double ua = jnum(a, "us", NAN), ub = jnum(b, "us", NAN);
            if (isfinite(ua) && isfinite(ub) && ua > 0 && ub > 0) {
                (*xo)[n] = ua;
                (*yo)[n] = ub;
                n++;
            } else {
                (*skipped)++;
            }
            break;
        }
    }
    free(used);
    return n;
}

/* ---- per scope ---- */

static json_t *summary_json(const dt_summary *s) {
    json_t *o = json_object();
    json_object_set_new(o, "n", json_integer((json_int_t)s->n));
    if (s->n == 0)
        return o;
    json_object_set_new(o, "p50", jreal(s->p50));
    json_object_set_new(o, "p90", jreal(s->p90));
    json_object_set_new(o, "min", jreal(s->min));
    json_object_set_new(o, "max", jreal(s->max));
    json_object_set_new(o, "iqr", jreal(s->iqr));
    return o;
}

static json_t *interval_json(const dt_interval *iv, size_t skipped) {
    json_t *o = json_object();
    json_object_set_new(o, "median", jreal(iv->median));
    json_object_set_new(o, "ci_low", jreal(iv->ci_low));
    json_object_set_new(o, "ci_high", jreal(iv->ci_high));
    json_object_set_new(o, "pairs", json_integer((json_int_t)iv->pairs));
    if (skipped)
        json_object_set_new(o, "skipped_pairs", json_integer((json_int_t)skipped));
    return o;
}

/* Median of a numeric field over the samples of one array (field per call when
 * per_call: divided by the sample's reps). NaN when absent everywhere. */
static double field_median(const json_t *arr, const char *field, int per_call) {
    size_t n = json_array_size(arr), m = 0, i;
    if (n == 0)
        return NAN;
    double *v = dt_xmalloc(n * sizeof *v);
    json_t *s;
    json_array_foreach(arr, i, s) {
        double x = jnum(s, field, NAN);
        if (per_call) {
            double reps = jnum(s, "reps", 1);
            x = reps > 0 ? x / reps : NAN;
        }
        if (isfinite(x))
            v[m++] = x;
    }
    double med = dt_stats_median(v, m);
    free(v);
    return med;
}

typedef struct kname {
    const char *name; /* borrowed */
    size_t first;     /* first-seen order, for a stable sort */
    double us_p50, per_call_p50;
} kname;

static int cmp_kname(const void *pa, const void *pb) {
    const kname *a = pa, *b = pb;
    if (a->us_p50 != b->us_p50)
        return a->us_p50 > b->us_p50 ? -1 : 1;
    return (a->first > b->first) - (a->first < b->first);
}

/* Probe diagnostics of one framework's probe samples (docs/results-format.md). */
static json_t *probe_json(const json_t *arr) {
    json_t *o = json_object();
    json_object_set_new(o, "kernel_sum_us_p50", jreal(field_median(arr, "kernel_sum_us", 0)));
    json_object_set_new(o, "kernel_span_us_p50", jreal(field_median(arr, "kernel_span_us", 0)));
    json_object_set_new(o, "kernels_per_call_p50", jreal(field_median(arr, "kernel_count", 1)));
    size_t ns = json_array_size(arr), nk = 0, capk = 0, i, j;
    kname *ks = NULL;
    json_t *s, *k;
    json_array_foreach(arr, i, s) {
        json_array_foreach(json_object_get(s, "kernels"), j, k) {
            const char *name = json_string_value(json_object_get(k, "name"));
            if (!name)
                continue;
            size_t q;
            for (q = 0; q < nk; q++)
                if (strcmp(ks[q].name, name) == 0)
                    break;
            if (q == nk) {
                if (nk == capk) {
                    capk = capk ? 2 * capk : 8;
                    kname *nks = realloc(ks, capk * sizeof *nks);
                    DT_ASSERT(nks);
                    ks = nks;
                }
                ks[nk] = (kname){.name = name, .first = nk};
                nk++;
            }
        }
    }
    double *us = dt_xmalloc((ns ? ns : 1) * sizeof *us);
    double *pc = dt_xmalloc((ns ? ns : 1) * sizeof *pc);
    for (size_t q = 0; q < nk; q++) {
        json_array_foreach(arr, i, s) {
            double u = 0, c = 0, reps = jnum(s, "reps", 1);
            json_array_foreach(json_object_get(s, "kernels"), j, k) {
                const char *name = json_string_value(json_object_get(k, "name"));
                if (name && strcmp(name, ks[q].name) == 0) {
                    u += jnum(k, "us", 0);
                    c += jnum(k, "count", 0);
                }
            }
            us[i] = u;
            pc[i] = reps > 0 ? c / reps : NAN;
        }
        ks[q].us_p50 = dt_stats_median(us, ns);
        ks[q].per_call_p50 = dt_stats_median(pc, ns);
    }
    if (nk > 1)
        qsort(ks, nk, sizeof *ks, cmp_kname);
    json_t *ka = json_array();
    for (size_t q = 0; q < nk; q++) {
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(ks[q].name));
        json_object_set_new(e, "per_call_p50", jreal(ks[q].per_call_p50));
        json_object_set_new(e, "us_p50", jreal(ks[q].us_p50));
        json_array_append_new(ka, e);
    }
    json_object_set_new(o, "kernels", ka);
    free(us);
    free(pc);
    free(ks);
    return o;
}

typedef struct derive_ctx {
    const char *cand, *base;  /* framework ids */
    unsigned resamples;
    uint64_t seed;
    reasons smoke, audit;
} derive_ctx;

static int impl_ok(const json_t *cas, const char *fw) {
    const json_t *impl = jpath2(cas, "impl", fw);
    if (!json_is_object(impl))
        return 0;
    const char *st = json_string_value(json_object_get(impl, "status"));
    return !st || strcmp(st, "ok") == 0;
}

static const char *control_of(const char *scope) {
    if (strcmp(scope, "probe_batch") == 0)
        return "control_batch";
    if (strcmp(scope, "probe_single") == 0)
        return "control_single";
    return NULL;
}

static dt_status derive_scope(derive_ctx *cx, const json_t *cas, const char *case_id,
                              int valid, const char *scope, json_t *scopes, dt_err *err) {
    const char *ids[2] = {cx->cand, cx->base};
    json_t *so = json_object();
    json_object_set_new(scopes, scope, so);
    json_t *noise = json_object();
    dt_summary sum[2];
    double nz[2];
    for (int f = 0; f < 2; f++) {
        size_t n;
        double *v = dt_derive_scope_us(cas, ids[f], scope, &n);
        sum[f] = dt_stats_summarize(v, n);
        free(v);
        json_object_set_new(so, ids[f], summary_json(&sum[f]));
        nz[f] = (n > 0 && sum[f].p50 > 0) ? sum[f].iqr / sum[f].p50 : NAN;
        json_object_set_new(noise, ids[f], jreal(nz[f]));
    }
    if (valid) {
        /* one reason per case and scope, naming the frameworks concerned */
        char buf[512];
        size_t len = 0;
        for (int f = 0; f < 2; f++)
            if (sum[f].n < DT_DERIVE_MIN_SAMPLES)
                len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s %zu", len ? ", " : "",
                                        ids[f], sum[f].n);
        if (len)
            reasons_add(&cx->smoke, "%s %s: too few samples (%s; need %d)", case_id, scope, buf,
                        DT_DERIVE_MIN_SAMPLES);
        len = 0;
        for (int f = 0; f < 2; f++)
            if (isfinite(nz[f]) && nz[f] > DT_DERIVE_MAX_NOISE)
                len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s %.1f%%",
                                        len ? ", " : "", ids[f], 100 * nz[f]);
        if (len)
            reasons_add(&cx->audit, "%s %s: noise IQR/p50 above %.0f%% (%s)", case_id, scope,
                        100 * DT_DERIVE_MAX_NOISE, buf);
    }
    double *cu = NULL, *bu = NULL;
    size_t skipped = 0;
    size_t np = pair_by_key(scope_samples(cas, cx->cand, scope),
                            scope_samples(cas, cx->base, scope), &cu, &bu, &skipped);
    dt_verdict verdict = DT_VERDICT_INVALID;
    if (valid && np > 0) {
        dt_interval iv;
        dt_status st = dt_stats_paired_ratio_interval(
            cu, bu, np, cx->resamples, dt_derive_scope_seed(cx->seed, case_id, scope), &iv, err);
        if (st != DT_OK) {
            free(cu);
            free(bu);
            return st;
        }
        json_object_set_new(so, "ratio", interval_json(&iv, skipped));
        verdict = dt_stats_verdict(1, &iv);
    }
    free(cu);
    free(bu);
    json_object_set_new(so, "noise", noise);
    json_object_set_new(so, "verdict", json_string(dt_stats_verdict_name(verdict)));

    const char *ctl = control_of(scope);
    if (ctl) {
        json_t *poc = json_object(), *probe = json_object();
        for (int f = 0; f < 2; f++) {
            double *pu = NULL, *cu2 = NULL;
            size_t sk = 0;
            size_t n = pair_by_key(scope_samples(cas, ids[f], scope),
                                   scope_samples(cas, ids[f], ctl), &pu, &cu2, &sk);
            double med = dt_stats_median_paired_ratio(pu, cu2, n);
            json_t *e = json_object();
            json_object_set_new(e, "median", jreal(med));
            json_object_set_new(e, "pairs", json_integer((json_int_t)n));
            json_object_set_new(poc, ids[f], e);
            free(pu);
            free(cu2);
            if (valid && strcmp(scope, "probe_batch") == 0 && isfinite(med) &&
                (med < DT_DERIVE_PROBE_LOW || med > DT_DERIVE_PROBE_HIGH))
                reasons_add(&cx->audit, "%s: %s probe/control %.3f outside [%.2f, %.2f]",
                            case_id, ids[f], med, DT_DERIVE_PROBE_LOW, DT_DERIVE_PROBE_HIGH);
            const json_t *arr = scope_samples(cas, ids[f], scope);
            if (arr)
                json_object_set_new(probe, ids[f], probe_json(arr));
        }
        json_object_set_new(so, "probe_over_control", poc);
        json_object_set_new(so, "probe", probe);
    }
    return DT_OK;
}

/* Appends scope to list (no duplicates); list holds borrowed strings. */
static void scope_add(const char **list, size_t *n, size_t cap, const char *s) {
    for (size_t i = 0; i < *n; i++)
        if (strcmp(list[i], s) == 0)
            return;
    if (*n < cap)
        list[(*n)++] = s;
}

#define MAX_SCOPES 32

static size_t case_scopes(const json_t *cas, const char *cand, const char *base,
                          const char **list) {
    size_t n = 0;
    const char *ids[2] = {cand, base};
    for (size_t k = 0; k < dt_derive_known_scope_count; k++)
        for (int f = 0; f < 2; f++)
            if (scope_samples(cas, ids[f], dt_derive_known_scopes[k]))
                scope_add(list, &n, MAX_SCOPES, dt_derive_known_scopes[k]);
    for (int f = 0; f < 2; f++) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)jpath2(jpath2(cas, "impl", ids[f]), "samples", NULL), key, v)
            if (json_is_array(v))
                scope_add(list, &n, MAX_SCOPES, key);
    }
    return n;
}

static const char *str_or(const json_t *o, const char *key, const char *dflt) {
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

/* ---- rooflines ---- */

#define DT_DERIVE_SMALL_ELEMS (128 * 1024) /* M*N at most this: a small case (E2E floor) */

/* cases[].derived.roofline of one valid case (docs/results-format.md), from the measured
 * ceilings (results.environment.ceilings) and the p50s just derived into `so`: per
 * framework the control_batch p50 (device time) when present, else the e2e_batch p50
 * (host time); achieved GB/s = fewest bytes / time, % of the copy ceiling (memory-bound
 * ops), TFLOP/s. Nothing is written when the ceilings have no copy_gbps or the case has no known op. */
static void derive_roofline(const derive_ctx *cx, const json_t *ceil, const json_t *cas,
                            const json_t *so, json_t *derived) {
    double copy = jnum(ceil, "copy_gbps", NAN);
    if (!(isfinite(copy) && copy > 0))
        return;
    const char *opname = json_string_value(json_object_get(cas, "op"));
    int op = opname ? dt_op_find(opname) : -1;
    const json_t *jm = json_object_get(cas, "m"), *jn = json_object_get(cas, "n"),
                 *jk = json_object_get(cas, "k");
    if (op < 0 || !json_is_integer(jm) || !json_is_integer(jn))
        return;
    int64_t m = json_integer_value(jm), n = json_integer_value(jn);
    int64_t k = json_is_integer(jk) ? json_integer_value(jk) : 0;
    int gemm = dt_op_get((dt_op)op)->is_gemm;
    if (m < 1 || n < 1 || k < 0 || (gemm && k < 1))
        return;
    double bytes = (double)dt_op_min_bytes((dt_op)op, m, n, k);
    double flops = dt_op_flops((dt_op)op, m, n, k);
    json_t *rl = json_object();
    json_object_set_new(rl, "min_bytes", json_real(bytes));
    json_object_set_new(rl, "flops", json_real(flops));
    json_object_set_new(rl, "bound", json_string(gemm ? "compute" : "memory"));
    json_object_set_new(rl, "copy_gbps", json_real(copy));
    json_t *impl = json_object();
    const char *ids[2] = {cx->cand, cx->base};
    for (int f = 0; f < 2; f++) {
        const char *scope = "control_batch";
        double us = jnum(jpath2(jpath2(so, scope, NULL), ids[f], NULL), "p50", NAN);
        if (!(isfinite(us) && us > 0)) {
            scope = "e2e_batch";
            us = jnum(jpath2(jpath2(so, scope, NULL), ids[f], NULL), "p50", NAN);
        }
        if (!(isfinite(us) && us > 0))
            continue;
        double gbps = bytes / (us * 1e3), tflops = flops / (us * 1e6);
        json_t *e = json_object();
        json_object_set_new(e, "scope", json_string(scope));
        json_object_set_new(e, "us", json_real(us));
        json_object_set_new(e, "gbps", jreal(gbps));
        if (!gemm)
            json_object_set_new(e, "copy_pct", jreal(100.0 * gbps / copy));
        json_object_set_new(e, "tflops", jreal(tflops));
        json_object_set_new(impl, ids[f], e);
    }
    json_object_set_new(rl, "impl", impl);
    json_object_set_new(derived, "roofline", rl);
}

/* cases[].derived.e2e_floor of one valid small case (M*N <= DT_DERIVE_SMALL_ELEMS;
 * docs/results-format.md): per framework the single-call E2E p50 over the floor. With
 * the case's own floor samples (cases[].floor, paired by round and index with the single
 * samples) the multiple is the median of the paired ratios with its bootstrap interval;
 * else the single p50 over the run's launch_sync_floor_us (environment.ceilings). Also
 * over the touch floor when the ceilings have one. Nothing when neither floor exists. */
static void derive_e2e_floor(const derive_ctx *cx, const json_t *ceil, const json_t *cas,
                             const json_t *so, json_t *derived) {
    const json_t *jm = json_object_get(cas, "m"), *jn = json_object_get(cas, "n");
    if (!json_is_integer(jm) || !json_is_integer(jn))
        return;
    int64_t m = json_integer_value(jm), n = json_integer_value(jn);
    if (m < 1 || n < 1)
        return;
    const char *ids[2] = {cx->cand, cx->base};
    double floor_us = jnum(ceil, "launch_sync_floor_us", NAN);
    double touch_us = jnum(ceil, "launch_sync_touch_floor_us", NAN); /* optional */
    int touch = isfinite(touch_us) && touch_us > 0;
    /* the case's own floor samples (cases[].floor), when the run took them */
    const json_t *fsamp = jpath2(json_object_get(cas, "floor"), "samples", NULL);
    size_t nf = 0;
    double *fv = dt_derive_array_us(fsamp, &nf);
    double case_floor = nf ? dt_stats_median(fv, nf) : NAN;
    free(fv);
    int paired = isfinite(case_floor) && case_floor > 0;
    if (((isfinite(floor_us) && floor_us > 0) || paired) && m * n <= DT_DERIVE_SMALL_ELEMS) {
        json_t *ef = json_object();
        json_object_set_new(ef, "floor_us", jreal(floor_us));
        json_object_set_new(ef, "floor_source", json_string(paired ? "paired" : "ceilings"));
        if (paired)
            json_object_set_new(ef, "case_floor_us", json_real(case_floor));
        if (touch)
            json_object_set_new(ef, "touch_floor_us", json_real(touch_us));
        const char *cid = json_string_value(json_object_get(cas, "id"));
        for (int f = 0; f < 2; f++) {
            double single = jnum(jpath2(jpath2(so, "e2e_single", NULL), ids[f], NULL), "p50", NAN);
            if (!(isfinite(single) && single > 0))
                continue;
            json_t *e = json_pack("{s:f}", "single_us", single);
            if (paired) {
                /* median of the paired ratios single / floor sample (same round and
                 * index), with its bootstrap interval */
                double *su = NULL, *fu = NULL;
                size_t skipped = 0;
                size_t np = pair_by_key(scope_samples(cas, ids[f], "e2e_single"), fsamp, &su,
                                        &fu, &skipped);
                dt_interval iv;
                dt_err e2;
                char scope[96];
                snprintf(scope, sizeof scope, "e2e_floor/%s", ids[f]);
                if (np > 0 &&
                    dt_stats_paired_ratio_interval(su, fu, np, cx->resamples,
                                                   dt_derive_scope_seed(cx->seed, cid ? cid : "",
                                                                        scope),
                                                   &iv, &e2) == DT_OK) {
                    json_object_set_new(e, "over_floor", jreal(iv.median));
                    json_object_set_new(e, "over_floor_ratio", interval_json(&iv, skipped));
                }
                free(su);
                free(fu);
            } else {
                json_object_set_new(e, "over_floor", json_real(single / floor_us));
            }
            if (touch)
                json_object_set_new(e, "over_touch_floor", json_real(single / touch_us));
            json_object_set_new(ef, ids[f], e);
        }
        json_object_set_new(derived, "e2e_floor", ef);
    }
}

dt_status dt_derive(json_t *results, dt_err *err) {
    derive_ctx cx = {0};
    dt_status st = dt_derive_roles(results, &cx.cand, &cx.base, err);
    if (st != DT_OK)
        return st;
    json_t *cases = json_object_get(results, "cases");
    if (!json_is_array(cases))
        return dt_fail(err, DT_EINVAL, "results: cases is missing or not an array");
    dt_derive_bootstrap_settings(results, &cx.resamples, &cx.seed);

    const char *backend = json_string_value(jpath2(results, "settings", "backend"));
    int is_cuda = backend && strcmp(backend, "cuda") == 0;
    const json_t *ceil = jpath2(results, "environment", "ceilings");
    json_int_t max_round = -1;
    size_t nvalid = 0, counts[5] = {0};
    size_t i;
    json_t *cas;
    json_array_foreach(cases, i, cas) {
        char idbuf[32];
        snprintf(idbuf, sizeof idbuf, "cases[%zu]", i);
        const char *case_id = str_or(cas, "id", idbuf);
        int valid = json_is_true(json_object_get(cas, "valid")) && impl_ok(cas, cx.cand) &&
                    impl_ok(cas, cx.base);
        nvalid += valid;
        const char *scopes[MAX_SCOPES];
        size_t nsc = case_scopes(cas, cx.cand, cx.base, scopes);
        json_t *derived = json_object(), *so = json_object();
        json_object_set_new(derived, "scopes", so);
        json_object_set_new(cas, "derived", derived);
        int has_e2e = 0, has_control = 0;
        for (size_t k = 0; k < nsc; k++) {
            st = derive_scope(&cx, cas, case_id, valid, scopes[k], so, err);
            if (st != DT_OK)
                goto out;
            has_e2e |= strcmp(scopes[k], "e2e_batch") == 0;
            has_control |= strcmp(scopes[k], "control_batch") == 0;
            for (int f = 0; f < 2; f++) {
                const json_t *arr = scope_samples(cas, f ? cx.base : cx.cand, scopes[k]);
                size_t q;
                json_t *s;
                json_array_foreach(arr, q, s) {
                    json_int_t r = json_integer_value(json_object_get(s, "round"));
                    if (r > max_round)
                        max_round = r;
                }
            }
        }
        if (valid) {
            derive_roofline(&cx, ceil, cas, so, derived);
            derive_e2e_floor(&cx, ceil, cas, so, derived);
        }
        if (valid && !has_e2e)
            reasons_add(&cx.smoke, "%s: no e2e_batch samples", case_id);
        if (valid && is_cuda && !has_control)
            reasons_add(&cx.smoke, "%s: no device control (control_batch) in a cuda run", case_id);
        if (valid && json_is_true(json_object_get(cas, "clocks_moved")))
            reasons_add(&cx.audit, "%s: GPU clocks moved during the case", case_id);
        const char *v = json_string_value(jpath2(jpath2(so, "e2e_batch", NULL), "verdict", NULL));
        dt_verdict vv = DT_VERDICT_INVALID;
        for (int q = 0; q < 5; q++)
            if (v && strcmp(v, dt_stats_verdict_name((dt_verdict)q)) == 0)
                vv = (dt_verdict)q;
        if (!valid)
            vv = DT_VERDICT_INVALID;
        counts[vv]++;
    }

    /* Run-level smoke reasons come first. */
    reasons all = {0};
    if (!json_is_true(json_object_get(results, "complete")))
        reasons_add(&all, "run incomplete (complete is not true)");
    if (json_array_size(cases) == 0)
        reasons_add(&all, "no cases");
    else if (nvalid == 0)
        reasons_add(&all, "no valid case");
    const json_t *rj = jpath2(results, "settings", "rounds");
    json_int_t rounds = json_is_integer(rj) ? json_integer_value(rj) : max_round + 1;
    if (rounds < DT_DERIVE_MIN_ROUNDS)
        reasons_add(&all, "%lld round%s (< %d)", (long long)rounds, rounds == 1 ? "" : "s",
                    DT_DERIVE_MIN_ROUNDS);
    int smoke = all.n > 0 || cx.smoke.n > 0;
    int audit = cx.audit.n > 0;
    for (size_t k = 0; k < cx.smoke.n; k++) {
        reasons_add(&all, "%s", cx.smoke.v[k]);
    }
    for (size_t k = 0; k < cx.audit.n; k++)
        reasons_add(&all, "%s", cx.audit.v[k]);
    const char *level = smoke ? "smoke" : audit ? "method audit" : "comparative";
    if (!smoke && !audit)
        reasons_add(&all, "%zu valid case%s, >= %d samples per scope, %lld rounds%s, noise <= %.0f%%%s",
                    nvalid, nvalid == 1 ? "" : "s", DT_DERIVE_MIN_SAMPLES, (long long)rounds,
                    is_cuda ? ", device control present" : "", 100 * DT_DERIVE_MAX_NOISE,
                    is_cuda ? ", probe/control within [0.90, 1.10]" : "");

    json_t *top = json_object_get(results, "derived");
    if (!json_is_object(top)) {
        top = json_object();
        json_object_set_new(results, "derived", top);
    }
    json_t *as = json_object();
    json_object_set_new(as, "level", json_string(level));
    json_object_set_new(as, "reasons", reasons_json(&all));
    json_object_set_new(top, "assessment", as);
    json_t *cj = json_object();
    json_object_set_new(cj, "cases", json_integer((json_int_t)json_array_size(cases)));
    json_object_set_new(cj, "valid", json_integer((json_int_t)nvalid));
    for (int q = 0; q < 5; q++)
        json_object_set_new(cj, dt_stats_verdict_name((dt_verdict)q),
                            json_integer((json_int_t)counts[q]));
    json_object_set_new(top, "counts", cj);
    reasons_free(&all);
    st = DT_OK;
out:
    reasons_free(&cx.smoke);
    reasons_free(&cx.audit);
    return st;
}
