/* dt_record_json.c — results.json <-> dt_record (dt_record_json.h). The only file that
 * knows results.json's keys. Part 1: decoding with validation (versions 1 and 2);
 * part 2: encoding (version 2); part 3: entry points. */
#include "record/dt_record_json.h"

#include "record/dt_file.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* Impl ids that would collide with the fixed keys of derived.scopes.<scope>. */
static const char *const k_reserved_ids[] = {"noise", "probe", "probe_over_control",
                                             "vs_baseline", "ratio", "verdict"};

#define TRY(expr)                                                                           \
    do {                                                                                    \
        dt_status st_ = (expr);                                                             \
        if (st_ != DT_OK)                                                                   \
            return st_;                                                                     \
    } while (0)

/* ======================================================================================
 * Part 1: decoding
 * ====================================================================================== */

/* The decoder's state: where in the document it is (for messages) and the version. */
typedef struct dec {
    const char *what; /* the source, e.g. a path */
    dt_err *err;
    int version;      /* 1 or 2 */
    char path[1024];  /* JSON path of the object being read, "" at the top */
    size_t len;
    dt_record *r;
    int v1_derived_bad; /* a v1 derived block did not decode: all derived is dropped */
    int unheld;         /* a file written before held windows (format 1, or
                           settings.held_windows absent/false): control_* reads as
                           dispatch_* */
} dec;

/* The scope a file's scope name `s` is stored as: in a file without held windows the
 * control scopes were the unheld window, which is the dispatch scope now. */
static int stored_scope(const dec *d, int s) {
    if (d->unheld && s == DT_SCOPE_CONTROL_BATCH)
        return DT_SCOPE_DISPATCH_BATCH;
    if (d->unheld && s == DT_SCOPE_CONTROL_SINGLE)
        return DT_SCOPE_DISPATCH_SINGLE;
    return s;
}

/* In a file without held windows, an object holding both "control_x" and "dispatch_x"
 * (which would land in one scope) is refused. */
static dt_status unheld_clash(dec *d, const json_t *o, int s) {
    if (!d->unheld || (s != DT_SCOPE_DISPATCH_BATCH && s != DT_SCOPE_DISPATCH_SINGLE))
        return DT_OK;
    const char *ctl = dt_scope_name(s == DT_SCOPE_DISPATCH_BATCH ? DT_SCOPE_CONTROL_BATCH
                                                                 : DT_SCOPE_CONTROL_SINGLE);
    if (!json_object_get(o, ctl))
        return DT_OK;
    return dt_fail(d->err, DT_EINVAL, "%s: %s holds both %s and %s, but the file has no held "
                   "windows (settings.held_windows), where %s reads as %s", d->what, d->path,
                   ctl, dt_scope_name(s), ctl, dt_scope_name(s));
}

/* Field flags. */
enum {
    F_REQ = 1,      /* absent is an error */
    F_NULL = 2,     /* null is accepted (gives the null value) */
    F_NONEMPTY = 4, /* strings: not "" */
};

static const char *type_name(const json_t *v) {
    if (!v)
        return "nothing (missing)";
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE: case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "unknown";
}

/* Appends to the path; returns the mark to restore with path_pop. */
static size_t path_push(dec *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t path_push(dec *d, const char *fmt, ...) {
    size_t mark = d->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->path + d->len, sizeof d->path - d->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        d->len += (size_t)n < sizeof d->path - d->len ? (size_t)n : sizeof d->path - d->len - 1;
    return mark;
}
static size_t path_key(dec *d, const char *key) {
    return path_push(d, "%s%.200s", d->len ? "." : "", key);
}
static void path_pop(dec *d, size_t mark) {
    d->len = mark;
    d->path[mark] = 0;
}

/* "what: path.key <message>" */
static dt_status fail_at(dec *d, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static dt_status fail_at(dec *d, const char *key, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return dt_fail(d->err, DT_EINVAL, "%s: %s%s%s %s", d->what, d->path,
                   key && *key && d->len ? "." : "", key ? key : "", msg);
}

static dt_status want(dec *d, const char *key, const json_t *v, int ok, const char *expected) {
    return ok ? DT_OK : fail_at(d, key, "must be %s, found %s", expected, type_name(v));
}

/* v is absent, or null where null is accepted: the caller stores the null value. */
static int is_unset(const json_t *v, int flags) {
    return !v || (json_is_null(v) && (flags & F_NULL));
}

static dt_status get_str(dec *d, const json_t *o, const char *key, int flags, char **out) {
    const json_t *v = json_object_get(o, key);
    free(*out);
    *out = NULL;
    if (is_unset(v, flags))
        return (flags & F_REQ) && !v ? want(d, key, v, 0, "a non-empty string") : DT_OK;
    int ok = json_is_string(v) && (!(flags & F_NONEMPTY) || json_string_length(v) > 0);
    TRY(want(d, key, v, ok, flags & F_NONEMPTY ? "a non-empty string" : "a string"));
    if (memchr(json_string_value(v), 0, json_string_length(v)))
        return fail_at(d, key, "must not contain a NUL character");
    *out = dt_xstrdup(json_string_value(v));
    return DT_OK;
}

/* A number in [lo, +inf) (lo = -INFINITY: any finite number). Null/absent: NAN. */
static dt_status get_num(dec *d, const json_t *o, const char *key, int flags, double lo,
                         double *out) {
    const json_t *v = json_object_get(o, key);
    *out = NAN;
    if (is_unset(v, flags))
        return (flags & F_REQ) && !v ? want(d, key, v, 0, "a number") : DT_OK;
    TRY(want(d, key, v, json_is_number(v), "a number"));
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo) {
        if (lo == 0)
            return fail_at(d, key, "must be finite and >= 0, found %g", x);
        return fail_at(d, key, "must be finite and >= %g, found %g", lo, x);
    }
    *out = x;
    return DT_OK;
}

/* An integer in [lo, hi]. Null/absent: DT_NULL_I64. */
static dt_status get_int(dec *d, const json_t *o, const char *key, int flags, int64_t lo,
                         int64_t hi, int64_t *out) {
    const json_t *v = json_object_get(o, key);
    *out = DT_NULL_I64;
    if (is_unset(v, flags))
        return (flags & F_REQ) && !v ? want(d, key, v, 0, "an integer") : DT_OK;
    int64_t x = json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
    if (!json_is_integer(v) || x < lo || x > hi) {
        char expected[96];
        if (hi == INT64_MAX && lo == INT64_MIN)
            snprintf(expected, sizeof expected, "an integer");
        else if (hi == INT64_MAX)
            snprintf(expected, sizeof expected, "an integer >= %lld", (long long)lo);
        else
            snprintf(expected, sizeof expected, "an integer in [%lld, %lld]", (long long)lo,
                     (long long)hi);
        if (json_is_integer(v))
            return fail_at(d, key, "must be %s, found %lld", expected, (long long)x);
        return want(d, key, v, 0, expected);
    }
    *out = x;
    return DT_OK;
}

/* A boolean: 1/0; null (with F_NULL) or absent: `unset`. */
static dt_status get_bool(dec *d, const json_t *o, const char *key, int flags, int unset,
                          int *out) {
    const json_t *v = json_object_get(o, key);
    *out = unset;
    if (is_unset(v, flags))
        return (flags & F_REQ) && !v ? want(d, key, v, 0, "a boolean") : DT_OK;
    TRY(want(d, key, v, json_is_boolean(v), "a boolean"));
    *out = json_is_true(v);
    return DT_OK;
}

/* An object (or array when `array`): *out NULL when absent (or null with F_NULL). */
static dt_status get_container(dec *d, const json_t *o, const char *key, int flags, int array,
                               const json_t **out) {
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    if (is_unset(v, flags))
        return (flags & F_REQ) && !v ? want(d, key, v, 0, array ? "an array" : "an object")
                                     : DT_OK;
    TRY(want(d, key, v, array ? json_is_array(v) : json_is_object(v),
             array ? "an array" : "an object"));
    *out = v;
    return DT_OK;
}
static dt_status get_obj(dec *d, const json_t *o, const char *key, int flags,
                         const json_t **out) {
    return get_container(d, o, key, flags, 0, out);
}
static dt_status get_arr(dec *d, const json_t *o, const char *key, int flags,
                         const json_t **out) {
    return get_container(d, o, key, flags, 1, out);
}

/* An array of strings into sv (replacing its contents). */
static dt_status get_strv(dec *d, const json_t *o, const char *key, int flags, dt_strv *sv) {
    const json_t *a;
    dt_strv_free(sv);
    TRY(get_arr(d, o, key, flags, &a));
    size_t i;
    const json_t *s;
    json_array_foreach(a, i, s) {
        if (!json_is_string(s) || memchr(json_string_value(s), 0, json_string_length(s))) {
            char k[256];
            snprintf(k, sizeof k, "%.200s[%zu]", key, i);
            return want(d, k, s, 0, "a string");
        }
        dt_strv_push(sv, json_string_value(s));
    }
    return DT_OK;
}

/* Canonical JSON text of any value; NULL for null/absent. */
static char *canonical(const json_t *v) {
    if (!v || json_is_null(v))
        return NULL;
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER |
                                JSON_REAL_PRECISION(17));
    DT_ASSERT(t);
    return t;
}

/* Fills an element path "key[i]" into buf. */
static const char *elem(char *buf, size_t n, const char *key, size_t i) {
    snprintf(buf, n, "%.200s[%zu]", key, i);
    return buf;
}

/* ---- run level ----------------------------------------------------------------------- */

static dt_status dec_tool(dec *d, const json_t *root) {
    const json_t *t;
    TRY(get_obj(d, root, "tool", 0, &t));
    dt_tool *tool = &d->r->tool;
    size_t m = path_key(d, "tool");
    TRY(get_str(d, t, "name", F_NULL, &tool->name));
    TRY(get_str(d, t, "version", F_NULL, &tool->version));
    TRY(get_str(d, t, "git_revision", F_NULL, &tool->git_revision));
    TRY(get_bool(d, t, "git_dirty", F_NULL, -1, &tool->git_dirty));
    TRY(get_str(d, t, "git_source", F_NULL, &tool->git_source));
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_bootstrap(dec *d, const json_t *settings) {
    const json_t *bs;
    TRY(get_obj(d, settings, "bootstrap", 0, &bs));
    if (!bs)
        return DT_OK;
    size_t m = path_key(d, "bootstrap");
    int64_t v;
    TRY(get_int(d, bs, "resamples", 0, 1, 1000000, &v));
    if (v != DT_NULL_I64)
        d->r->settings.bootstrap_resamples = (unsigned)v;
    TRY(get_int(d, bs, "seed", 0, INT64_MIN, INT64_MAX, &v));
    if (v != DT_NULL_I64)
        d->r->settings.bootstrap_seed = (uint64_t)v;
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_operations(dec *d, const json_t *settings) {
    dt_strv names = {0};
    dt_status st = get_strv(d, settings, "operations", F_NULL, &names);
    dt_settings *s = &d->r->settings;
    for (size_t i = 0; st == DT_OK && i < names.n; i++) {
        int op = dt_op_find(names.v[i]);
        if (op < 0) {
            char k[64];
            st = fail_at(d, elem(k, sizeof k, "operations", i), "is \"%.100s\", not an operation",
                         names.v[i]);
            break;
        }
        s->operations = realloc(s->operations, (s->n_operations + 1) * sizeof *s->operations);
        DT_ASSERT(s->operations);
        s->operations[s->n_operations++] = (dt_op)op;
    }
    dt_strv_free(&names);
    return st;
}

static dt_status dec_settings(dec *d, const json_t *root) {
    const json_t *o;
    TRY(get_obj(d, root, "settings", 0, &o));
    if (!o)
        return DT_OK;
    dt_settings *s = &d->r->settings;
    size_t m = path_key(d, "settings");
    int64_t v;
    TRY(get_str(d, o, "backend", F_NULL, &s->backend));
    TRY(get_str(d, o, "backend_choice", F_NULL, &s->backend_choice));
    TRY(dec_operations(d, o));
    TRY(get_int(d, o, "samples", F_NULL, 1, INT32_MAX, &s->samples));
    TRY(get_num(d, o, "sample_ms", F_NULL, 0, &s->sample_ms));
    TRY(get_num(d, o, "warmup_ms", F_NULL, 0, &s->warmup_ms));
    TRY(get_int(d, o, "prime", F_NULL, 0, INT32_MAX, &s->prime));
    TRY(get_int(d, o, "rounds", F_NULL, 1, INT32_MAX, &v));
    s->rounds = v == DT_NULL_I64 ? 0 : v;
    TRY(get_int(d, o, "seed", F_NULL, INT64_MIN, INT64_MAX, &s->seed));
    TRY(get_bool(d, o, "input_views", 0, 0, &s->input_views));
    TRY(get_int(d, o, "threads", F_NULL, 0, INT32_MAX, &s->threads));
    TRY(get_num(d, o, "timeout_s", F_NULL, 0, &s->timeout_s));
    TRY(get_bool(d, o, "quick", 0, 0, &s->quick));
    TRY(get_bool(d, o, "device_timing", 0, 0, &s->device_timing));
    TRY(get_str(d, o, "probe_kind", F_NULL, &s->probe_kind));
    TRY(get_bool(d, o, "held_windows", F_NULL, 0, &s->held_windows));
    TRY(get_bool(d, o, "pin", F_NULL, -1, &s->pin));
    TRY(get_str(d, o, "pin_reason", F_NULL, &s->pin_reason));
    TRY(get_bool(d, o, "capture_sources", 0, 0, &s->capture_sources));
    TRY(get_int(d, o, "max_reps", F_NULL, 1, INT64_MAX, &s->max_reps));
    TRY(get_int(d, o, "device_reps_cap", F_NULL, 1, INT64_MAX, &s->device_reps_cap));
    TRY(get_str(d, o, "inputs", F_NULL, &s->inputs));
    TRY(get_str(d, o, "dtypes", F_NULL, &s->dtypes));
    TRY(get_bool(d, o, "graph", F_NULL, -1, &s->graph));
    TRY(get_str(d, o, "cache", F_NULL, &s->cache));
    if (s->cache && strcmp(s->cache, "warm") != 0 && strcmp(s->cache, "cold") != 0)
        return fail_at(d, "cache", "must be \"warm\" or \"cold\"");
    TRY(dec_bootstrap(d, o));
    path_pop(d, m);
    return DT_OK;
}

static int reserved_id(const char *id) {
    for (size_t i = 0; i < sizeof k_reserved_ids / sizeof k_reserved_ids[0]; i++)
        if (strcmp(k_reserved_ids[i], id) == 0)
            return 1;
    return 0;
}

int dt_record_id_reserved(const char *id) { return reserved_id(id); }

/* Checks frameworks[] (roles, ids) and returns in order[] the array indexes in record
 * order: the baseline first, then the candidates in file order. */
static dt_status frameworks_order(dec *d, const json_t *fws, size_t *order) {
    size_t i, ncand = 0, nbase = 0, base = 0;
    const json_t *fw;
    json_array_foreach(fws, i, fw) {
        char k[64];
        size_t m = path_push(d, "%s", elem(k, sizeof k, "frameworks", i));
        if (!json_is_object(fw))
            return fail_at(d, NULL, "must be an object, found %s", type_name(fw));
        char *id = NULL, *role = NULL;
        dt_status st = get_str(d, fw, "id", F_REQ | F_NONEMPTY, &id);
        if (st == DT_OK)
            st = get_str(d, fw, "role", F_REQ | F_NONEMPTY, &role);
        if (st == DT_OK && reserved_id(id))
            st = fail_at(d, "id", "\"%s\" is reserved (a key of derived.scopes)", id);
        for (size_t j = 0; st == DT_OK && j < i; j++)
            if (strcmp(json_string_value(json_object_get(json_array_get(fws, j), "id")), id) == 0)
                st = fail_at(d, "id", "\"%s\" repeats the id of frameworks[%zu]", id, j);
        if (st == DT_OK && strcmp(role, "candidate") == 0)
            ncand++;
        else if (st == DT_OK && strcmp(role, "baseline") == 0)
            nbase++, base = i;
        else if (st == DT_OK)
            st = fail_at(d, "role", "is \"%s\", expected \"candidate\" or \"baseline\"", role);
        free(id);
        free(role);
        TRY(st);
        path_pop(d, m);
    }
    if (d->version == 1 && (ncand != 1 || nbase != 1))
        return dt_fail(d->err, DT_EINVAL,
                       "%s: frameworks must hold exactly one candidate and one baseline, found "
                       "%zu candidate(s) and %zu baseline(s)", d->what, ncand, nbase);
    if (d->version >= 2 && (ncand < 1 || nbase != 1))
        return dt_fail(d->err, DT_EINVAL,
                       "%s: frameworks must hold exactly one baseline and at least one "
                       "candidate, found %zu candidate(s) and %zu baseline(s)", d->what, ncand,
                       nbase);
    if (d->version >= 2 && base != 0)
        return dt_fail(d->err, DT_EINVAL, "%s: frameworks[0] must be the baseline", d->what);
    size_t n = 0;
    order[n++] = base;
    for (i = 0; i < json_array_size(fws); i++)
        if (i != base)
            order[n++] = i;
    return DT_OK;
}

static dt_status dec_frameworks(dec *d, const json_t *root) {
    const json_t *fws;
    TRY(get_arr(d, root, "frameworks", F_REQ, &fws));
    size_t n = json_array_size(fws);
    size_t *order = dt_xcalloc(n ? n : 1, sizeof *order);
    dt_status st = frameworks_order(d, fws, order);
    for (size_t q = 0; st == DT_OK && q < n; q++) {
        const json_t *fw = json_array_get(fws, order[q]);
        const char *id = json_string_value(json_object_get(fw, "id"));
        dt_impl *im = dt_record_impl_add(d->r, id, q == 0 ? DT_ROLE_BASELINE : DT_ROLE_CANDIDATE);
        char k[64];
        size_t m = path_push(d, "%s", elem(k, sizeof k, "frameworks", order[q]));
        st = get_str(d, fw, "framework", F_NULL, &im->framework);
        if (st == DT_OK)
            st = get_str(d, fw, "framework_version", F_NULL, &im->framework_version);
        if (st == DT_OK)
            st = get_strv(d, fw, "command", F_NULL, &im->command);
        if (st == DT_OK)
            st = get_str(d, fw, "cpus", F_NULL, &im->cpus);
        if (st == DT_OK)
            im->hello_json = canonical(json_object_get(fw, "hello"));
        path_pop(d, m);
    }
    free(order);
    return st;
}

static dt_status dec_host(dec *d, const json_t *env) {
    const json_t *h;
    TRY(get_obj(d, env, "host", F_NULL, &h));
    dt_host *host = &d->r->env.host;
    size_t m = path_key(d, "host");
    TRY(get_str(d, h, "cpu", F_NULL, &host->cpu));
    TRY(get_int(d, h, "cores", F_NULL, 0, INT32_MAX, &host->cores));
    TRY(get_str(d, h, "os", F_NULL, &host->os));
    TRY(get_str(d, h, "kernel", F_NULL, &host->kernel));
    TRY(get_str(d, h, "machine", F_NULL, &host->machine));
    TRY(get_str(d, h, "hostname", F_NULL, &host->hostname));
    path_pop(d, m);
    return DT_OK;
}

/* A FLOP ceiling of ceilings.flops: a positive number, absent: 0. */
static dt_status dec_tflops(dec *d, const json_t *o, const char *key, double *out) {
    TRY(get_num(d, o, key, F_NULL, 0, out));
    if (isnan(*out))
        *out = 0;
    else if (!(*out > 0))
        return fail_at(d, key, "must be a positive number, found %g", *out);
    return DT_OK;
}

/* "flops" of a ceilings object into *f (absent: all 0, method NULL). */
static dt_status dec_flop_ceilings(dec *d, const json_t *c, dt_flop_ceilings_rec *f) {
    const json_t *o;
    TRY(get_obj(d, c, "flops", F_NULL, &o));
    if (!o)
        return DT_OK;
    size_t m = path_key(d, "flops");
    TRY(dec_tflops(d, o, "fp32_tflops", &f->fp32_tflops));
    TRY(dec_tflops(d, o, "bf16_tflops", &f->bf16_tflops));
    TRY(dec_tflops(d, o, "fp16_tflops", &f->fp16_tflops));
    TRY(get_str(d, o, "method", F_NULL, &f->method));
    path_pop(d, m);
    return DT_OK;
}

/* "ceilings" of env (the environment, or a device entry) into *ce. */
static dt_status dec_ceilings(dec *d, const json_t *env, dt_ceilings_rec *ce) {
    const json_t *c;
    TRY(get_obj(d, env, "ceilings", F_NULL, &c));
    if (!c)
        return DT_OK;
    ce->present = 1;
    size_t m = path_key(d, "ceilings");
    TRY(get_str(d, c, "error", F_NULL, &ce->error));
    TRY(dec_flop_ceilings(d, c, &ce->flops));
    if (!ce->error) {
        TRY(get_num(d, c, "copy_gbps", F_NULL, 0, &ce->copy_gbps));
        TRY(get_int(d, c, "copy_bytes", F_NULL, 0, INT64_MAX, &ce->copy_bytes));
        TRY(get_num(d, c, "launch_sync_floor_us", F_NULL, 0, &ce->launch_sync_floor_us));
        TRY(get_num(d, c, "launch_queue_floor_us", F_NULL, 0, &ce->launch_queue_floor_us));
        TRY(get_num(d, c, "launch_sync_touch_floor_us", F_NULL, 0,
                    &ce->launch_sync_touch_floor_us));
        TRY(get_num(d, c, "held_floor_batch_us", F_NULL, 0, &ce->held_floor_batch_us));
        TRY(get_num(d, c, "held_floor_single_us", F_NULL, 0, &ce->held_floor_single_us));
        TRY(get_num(d, c, "held_touch_floor_batch_us", F_NULL, 0,
                    &ce->held_touch_floor_batch_us));
        TRY(get_num(d, c, "held_touch_floor_single_us", F_NULL, 0,
                    &ce->held_touch_floor_single_us));
        TRY(get_num(d, c, "copy_gbps_iqr", F_NULL, 0, &ce->copy_gbps_iqr));
        TRY(get_str(d, c, "method", F_NULL, &ce->method));
        TRY(get_str(d, c, "backend", F_NULL, &ce->backend));
    }
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_nvml(dec *d, const json_t *env) {
    const json_t *o;
    TRY(get_obj(d, env, "nvml", F_NULL, &o));
    if (!o)
        return DT_OK;
    dt_nvml *n = &d->r->env.nvml;
    n->present = 1;
    size_t m = path_key(d, "nvml");
    TRY(get_bool(d, o, "available", 0, 0, &n->available));
    TRY(get_str(d, o, "reason", F_NULL, &n->reason));
    n->has_description = json_object_get(o, "library") != NULL;
    TRY(get_str(d, o, "library", F_NULL, &n->library));
    TRY(get_int(d, o, "device_index", F_NULL, INT64_MIN, INT64_MAX, &n->device_index));
    TRY(get_str(d, o, "name", F_NULL, &n->name));
    TRY(get_str(d, o, "uuid", F_NULL, &n->uuid));
    TRY(get_str(d, o, "driver_version", F_NULL, &n->driver_version));
    TRY(get_str(d, o, "nvml_version", F_NULL, &n->nvml_version));
    TRY(get_str(d, o, "pci_bus_id", F_NULL, &n->pci_bus_id));
    TRY(get_int(d, o, "pci_bus", F_NULL, INT64_MIN, INT64_MAX, &n->pci_bus));
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_environment(dec *d, const json_t *root) {
    const json_t *env;
    TRY(get_obj(d, root, "environment", F_NULL, &env));
    if (!env)
        return DT_OK;
    size_t m = path_key(d, "environment");
    TRY(dec_host(d, env));
    const json_t *gpu = json_object_get(env, "gpu");
    if (gpu && !json_is_null(gpu)) {
        TRY(want(d, "gpu", gpu, json_is_object(gpu), "an object or null"));
        d->r->env.gpu_json = canonical(gpu);
        size_t m2 = path_key(d, "gpu");
        TRY(get_str(d, gpu, "name", F_NULL, &d->r->env.gpu_name));
        path_pop(d, m2);
    }
    TRY(get_str(d, env, "python", F_NULL, &d->r->env.python));
    TRY(get_str(d, env, "orchestrator_cpus", F_NULL, &d->r->env.orchestrator_cpus));
    TRY(dec_ceilings(d, env, &d->r->env.ceilings));
    TRY(dec_nvml(d, env));
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_provenance(dec *d, const json_t *root) {
    const json_t *p, *a;
    TRY(get_obj(d, root, "provenance", F_NULL, &p));
    if (!p)
        return DT_OK;
    size_t m = path_key(d, "provenance");
    TRY(get_arr(d, p, "files", F_NULL, &a));
    size_t i;
    const json_t *f;
    char k[64];
    json_array_foreach(a, i, f) {
        size_t m2 = path_key(d, elem(k, sizeof k, "files", i));
        TRY(want(d, NULL, f, json_is_object(f), "an object"));
        dt_record_prov_file_add(d->r, NULL, NULL, NULL);
        dt_prov_file *pf = &d->r->prov.files[d->r->prov.n_files - 1];
        TRY(get_str(d, f, "what", F_NULL, &pf->what));
        TRY(get_str(d, f, "path", F_NULL, &pf->path));
        TRY(get_str(d, f, "sha256", F_NULL, &pf->sha256));
        path_pop(d, m2);
    }
    TRY(get_arr(d, p, "sources", F_NULL, &a));
    json_array_foreach(a, i, f) {
        size_t m2 = path_key(d, elem(k, sizeof k, "sources", i));
        TRY(want(d, NULL, f, json_is_object(f), "an object"));
        dt_prov_source *ps = dt_record_prov_source_add(d->r, NULL, NULL, NULL);
        TRY(get_str(d, f, "sha256", F_REQ | F_NONEMPTY, &ps->sha256));
        TRY(get_str(d, f, "name", F_NULL, &ps->name));
        TRY(get_strv(d, f, "options", F_NULL, &ps->options));
        TRY(get_str(d, f, "framework", F_NULL, &ps->framework));
        path_pop(d, m2);
    }
    path_pop(d, m);
    return DT_OK;
}

/* ---- samples ------------------------------------------------------------------------- */

static dt_status dec_launch(dec *d, const json_t *o, const char *key, int64_t out[3]) {
    const json_t *a = json_object_get(o, key);
    out[0] = out[1] = out[2] = DT_NULL_I64;
    if (!a || json_is_null(a))
        return DT_OK;
    int ok = json_is_array(a) && json_array_size(a) == 3;
    for (size_t i = 0; ok && i < 3; i++)
        ok = json_is_integer(json_array_get(a, i)) &&
             json_integer_value(json_array_get(a, i)) >= 0;
    TRY(want(d, key, a, ok, "an array of 3 integers >= 0"));
    for (size_t i = 0; i < 3; i++)
        out[i] = json_integer_value(json_array_get(a, i));
    return DT_OK;
}

static dt_status dec_records(dec *d, const json_t *s, dt_probe_records *rec) {
    const json_t *o, *launch, *rows;
    TRY(get_obj(d, s, "records", F_NULL, &o));
    if (!o)
        return DT_OK;
    size_t m = path_key(d, "records");
    rec->present = 1;
    int64_t t0;
    TRY(get_int(d, o, "t0_ns", F_REQ, INT64_MIN, INT64_MAX, &t0));
    rec->t0_ns = t0;
    dt_strv names = {0};
    dt_status st = get_strv(d, o, "names", F_REQ, &names);
    if (st == DT_OK)
        st = get_obj(d, o, "launch", F_NULL, &launch);
    for (size_t i = 0; st == DT_OK && i < names.n; i++) {
        dt_probe_launch l;
        const json_t *e = json_object_get(launch, names.v[i]);
        size_t m2 = path_push(d, ".launch[\"%.100s\"]", names.v[i]);
        if (e)
            st = want(d, NULL, e, json_is_object(e), "an object");
        if (st == DT_OK)
            st = dec_launch(d, e, "grid", l.grid);
        if (st == DT_OK)
            st = dec_launch(d, e, "block", l.block);
        path_pop(d, m2);
        if (st == DT_OK)
            dt_probe_records_name(rec, names.v[i], &l);
    }
    dt_strv_free(&names);
    TRY(st);
    TRY(get_arr(d, o, "rows", F_REQ, &rows));
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row) {
        int ok = json_is_array(row) && json_array_size(row) == 4;
        for (size_t j = 0; ok && j < 3; j++)
            ok = json_is_integer(json_array_get(row, j));
        const json_t *sid = json_array_get(row, 3);
        ok = ok && (json_is_integer(sid) || json_is_null(sid));
        char k[64];
        TRY(want(d, elem(k, sizeof k, "rows", i), row, ok,
                 "[name index, start ns, end ns, stream id or null]"));
        dt_probe_row pr = {json_integer_value(json_array_get(row, 0)),
                           json_integer_value(json_array_get(row, 1)),
                           json_integer_value(json_array_get(row, 2)),
                           json_is_null(sid) ? DT_NULL_I64 : json_integer_value(sid)};
        if (pr.name_index < 0 || (size_t)pr.name_index >= rec->names.n)
            return fail_at(d, k, "names kernel %lld of %zu", (long long)pr.name_index,
                           rec->names.n);
        dt_probe_row_add(rec, &pr);
    }
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_probe_kernels(dec *d, const json_t *s, dt_probe *p) {
    const json_t *ks;
    TRY(get_arr(d, s, "kernels", 0, &ks));
    if (!ks)
        return DT_OK;
    p->has_kernels = 1;
    size_t i;
    const json_t *k;
    json_array_foreach(ks, i, k) {
        char w[64];
        size_t m = path_key(d, elem(w, sizeof w, "kernels", i));
        TRY(want(d, NULL, k, json_is_object(k), "an object"));
        char *name = NULL;
        int64_t count;
        double us;
        TRY(get_str(d, k, "name", F_REQ | F_NONEMPTY, &name));
        dt_status st = get_int(d, k, "count", 0, 0, INT64_MAX, &count);
        if (st == DT_OK)
            st = get_num(d, k, "us", 0, 0, &us);
        if (st == DT_OK)
            dt_probe_kernel_add(p, name, count, us);
        free(name);
        TRY(st);
        path_pop(d, m);
    }
    return DT_OK;
}

static const char *const k_probe_keys[] = {"kernel_sum_us", "kernel_span_us", "kernel_count",
                                           "launch_count", "clock_offset_ns",
                                           "clock_uncertainty_ns", "kernels", "records"};

/* The probe fields of a device sample (any of them present sets has_probe). */
static dt_status dec_probe(dec *d, const json_t *s, dt_sample *out) {
    int any = 0;
    for (size_t i = 0; i < sizeof k_probe_keys / sizeof k_probe_keys[0]; i++)
        any |= json_object_get(s, k_probe_keys[i]) != NULL;
    if (!any)
        return DT_OK;
    out->has_probe = 1; /* set first: a failure below frees what was read */
    dt_probe *p = &out->probe;
    TRY(get_num(d, s, "kernel_sum_us", F_NULL, 0, &p->kernel_sum_us));
    TRY(get_num(d, s, "kernel_span_us", F_NULL, 0, &p->kernel_span_us));
    TRY(get_int(d, s, "kernel_count", F_NULL, 0, INT64_MAX, &p->kernel_count));
    TRY(get_int(d, s, "launch_count", F_NULL, 0, INT64_MAX, &p->launch_count));
    TRY(get_num(d, s, "clock_offset_ns", F_NULL, -INFINITY, &p->clock_offset_ns));
    TRY(get_num(d, s, "clock_uncertainty_ns", F_NULL, 0, &p->clock_uncertainty_ns));
    TRY(dec_probe_kernels(d, s, p));
    TRY(dec_records(d, s, &p->records));
    return DT_OK;
}

/* One sample into *out (which the caller pushes, or frees on failure). */
static dt_status dec_sample(dec *d, const json_t *s, int device, int floor, dt_sample *out) {
    *out = dt_sample_empty();
    if (!json_is_object(s))
        return fail_at(d, NULL, "must be an object, found %s", type_name(s));
    int64_t v;
    TRY(get_num(d, s, "us", F_REQ, 0, &out->us));
    TRY(get_int(d, s, "reps", 0, 1, INT64_MAX, &v));
    out->reps = v == DT_NULL_I64 ? 0 : v;
    TRY(get_int(d, s, "round", F_REQ, 0, INT32_MAX, &v));
    out->round = (int32_t)v;
    TRY(get_int(d, s, "index", F_REQ, 0, INT32_MAX, &v));
    out->index = (int32_t)v;
    TRY(get_int(d, s, "position", F_REQ, 0, INT64_MAX, &out->position));
    (void)floor;
    return device ? dec_probe(d, s, out) : DT_OK;
}

typedef struct pair_key {
    int32_t round, index;
    size_t at; /* array index */
} pair_key;

static int pair_key_cmp(const void *a, const void *b) {
    const pair_key *x = a, *y = b;
    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* The first sample (in array order) whose (round, index) an earlier one has: its index
 * in *at and the earlier one's in *first; 0 when all are distinct. O(n log n). */
static int first_repeat(const dt_samples *s, size_t from, size_t *at, size_t *first) {
    size_t n = s->n - from;
    if (n < 2)
        return 0;
    pair_key *k = dt_xmalloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++)
        k[i] = (pair_key){s->v[from + i].round, s->v[from + i].index, i};
    qsort(k, n, sizeof *k, pair_key_cmp);
    int found = 0;
    for (size_t i = 1; i < n; i++) {
        int same = k[i].round == k[i - 1].round && k[i].index == k[i - 1].index;
        int group_start = i == 1 || k[i - 2].round != k[i - 1].round ||
                          k[i - 2].index != k[i - 1].index;
        /* k[i - 1] first of its group, k[i] its second (the group is sorted by at) */
        if (same && group_start && (!found || k[i].at < *at)) {
            *at = k[i].at;
            *first = k[i - 1].at;
            found = 1;
        }
    }
    free(k);
    return found;
}

/* An array of samples into *samples, refusing a repeated (round, index). */
static dt_status dec_sample_array(dec *d, const json_t *arr, int device, int floor,
                                  dt_samples *samples) {
    size_t i, from = samples->n;
    const json_t *s;
    json_array_foreach(arr, i, s) {
        size_t m = path_push(d, "[%zu]", i);
        dt_sample smp;
        dt_status st = dec_sample(d, s, device, floor, &smp);
        dt_samples_push(samples, &smp); /* owned (and freed) from here */
        TRY(st);
        path_pop(d, m);
    }
    size_t at = 0, first = 0;
    if (first_repeat(samples, from, &at, &first)) {
        const dt_sample *p = &samples->v[from + at];
        path_push(d, "[%zu]", at);
        return fail_at(d, NULL, "repeats round %d index %d of sample [%zu]", (int)p->round,
                       (int)p->index, first);
    }
    return DT_OK;
}

static dt_status dec_samples(dec *d, const json_t *impl, dt_case_impl *ci) {
    const json_t *samples;
    TRY(get_obj(d, impl, "samples", F_NULL, &samples));
    const char *scope;
    const json_t *arr;
    size_t m = path_key(d, "samples");
    json_object_foreach((json_t *)samples, scope, arr) {
        int s = dt_scope_find(scope);
        if (s < 0)
            return fail_at(d, scope, "is not a known scope");
        TRY(want(d, scope, arr, json_is_array(arr), "an array"));
        TRY(unheld_clash(d, samples, s));
        s = stored_scope(d, s);
        if (dt_scope_is_probe((dt_scope)s) && d->unheld && json_array_size(arr) > 0)
            d->r->probe_unheld = 1;
        size_t m2 = path_key(d, scope);
        TRY(dec_sample_array(d, arr, !dt_scope_is_host((dt_scope)s), 0, &ci->samples[s]));
        path_pop(d, m2);
    }
    path_pop(d, m);
    return DT_OK;
}

/* ---- one implementation of a case ----------------------------------------------------- */

static dt_status dec_check(dec *d, const json_t *o, dt_check *c) {
    const json_t *a, *orc, *ff;
    TRY(want(d, NULL, o, json_is_object(o), "an object"));
    TRY(get_str(d, o, "when", F_NULL, &c->when));
    TRY(get_bool(d, o, "ok", 0, 0, &c->ok));
    TRY(get_obj(d, o, "arena", F_NULL, &a));
    size_t m = path_key(d, "arena");
    dt_check_arena *ar = &c->arena;
    TRY(get_int(d, a, "guard_bytes_changed", F_NULL, 0, INT64_MAX, &ar->guard_bytes_changed));
    TRY(get_int(d, a, "input_elems_changed", F_NULL, 0, INT64_MAX, &ar->input_elems_changed));
    TRY(get_int(d, a, "output_unwritten", F_NULL, 0, INT64_MAX, &ar->output_unwritten));
    TRY(get_int(d, a, "output_nonfinite", F_NULL, 0, INT64_MAX, &ar->output_nonfinite));
    TRY(get_str(d, a, "first_problem", F_NULL, &ar->first_problem));
    path_pop(d, m);
    TRY(get_obj(d, o, "oracle", F_NULL, &orc));
    m = path_key(d, "oracle");
    dt_check_oracle *oc = &c->oracle;
    TRY(get_bool(d, orc, "ok", 0, 0, &oc->ok));
    TRY(get_int(d, orc, "elements", F_NULL, 0, INT64_MAX, &oc->elements));
    TRY(get_int(d, orc, "failures", F_NULL, 0, INT64_MAX, &oc->failures));
    TRY(get_num(d, orc, "max_abs_error", F_NULL, 0, &oc->max_abs_error));
    TRY(get_num(d, orc, "max_budget_used", F_NULL, 0, &oc->max_budget_used));
    TRY(get_obj(d, orc, "first_failure", F_NULL, &ff));
    oc->first_value = oc->first_ref = oc->first_bound = NAN;
    oc->first_row = oc->first_col = DT_NULL_I64;
    if (ff) {
        size_t m2 = path_key(d, "first_failure");
        oc->has_first_failure = 1;
        TRY(get_int(d, ff, "row", F_NULL, INT64_MIN, INT64_MAX, &oc->first_row));
        TRY(get_int(d, ff, "col", F_NULL, INT64_MIN, INT64_MAX, &oc->first_col));
        TRY(get_num(d, ff, "value", F_NULL, -INFINITY, &oc->first_value));
        TRY(get_num(d, ff, "ref", F_NULL, -INFINITY, &oc->first_ref));
        TRY(get_num(d, ff, "bound", F_NULL, -INFINITY, &oc->first_bound));
        TRY(get_str(d, ff, "text", F_NULL, &oc->first_text));
        path_pop(d, m2);
    }
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_setup_warmup_calib(dec *d, const json_t *impl, dt_case_impl *ci) {
    const json_t *o;
    TRY(get_obj(d, impl, "setup_ms", F_NULL, &o));
    size_t m = path_key(d, "setup_ms");
    dt_setup_ms *s = &ci->setup_ms;
    TRY(get_num(d, o, "compile", F_NULL, 0, &s->compile));
    TRY(get_num(d, o, "alloc", F_NULL, 0, &s->alloc));
    TRY(get_num(d, o, "upload", F_NULL, 0, &s->upload));
    TRY(get_num(d, o, "cold_call", F_NULL, 0, &s->cold_call));
    TRY(get_num(d, o, "download", F_NULL, 0, &s->download));
    path_pop(d, m);
    TRY(get_obj(d, impl, "warmup", F_NULL, &o));
    if (o) {
        m = path_key(d, "warmup");
        ci->has_warmup = 1;
        TRY(get_num(d, o, "ms", F_NULL, 0, &ci->warmup_ms));
        TRY(get_int(d, o, "calls", F_NULL, 0, INT64_MAX, &ci->warmup_calls));
        path_pop(d, m);
    }
    TRY(get_obj(d, impl, "calibration", F_NULL, &o));
    if (!o)
        return DT_OK;
    m = path_key(d, "calibration");
    ci->has_calibration = 1;
    TRY(get_int(d, o, "reps", F_NULL, 1, INT64_MAX, &ci->calib_reps));
    const json_t *a, *e;
    TRY(get_arr(d, o, "attempts", F_NULL, &a));
    size_t i;
    json_array_foreach(a, i, e) {
        char k[64];
        size_t m2 = path_key(d, elem(k, sizeof k, "attempts", i));
        TRY(want(d, NULL, e, json_is_object(e), "an object"));
        int64_t reps;
        double us;
        TRY(get_int(d, e, "reps", F_REQ, 1, INT64_MAX, &reps));
        TRY(get_num(d, e, "us_per_call", F_NULL, 0, &us));
        dt_case_impl_calib_add(ci, reps, us);
        path_pop(d, m2);
    }
    path_pop(d, m);
    return DT_OK;
}

/* The impl's "energy" object (optional; issue 15). */
static dt_status dec_energy(dec *d, const json_t *impl, dt_case_impl *ci) {
    const json_t *o;
    TRY(get_obj(d, impl, "energy", F_NULL, &o));
    if (!o)
        return DT_OK;
    size_t m = path_key(d, "energy");
    ci->has_energy = 1;
    TRY(get_num(d, o, "j_per_call", F_NULL, 0, &ci->energy_j_per_call));
    TRY(get_num(d, o, "avg_power_w", F_NULL, 0, &ci->avg_power_w));
    TRY(get_num(d, o, "joules", F_NULL, 0, &ci->energy_j));
    TRY(get_num(d, o, "window_s", F_NULL, 0, &ci->energy_window_s));
    TRY(get_int(d, o, "calls", F_NULL, 0, INT64_MAX, &ci->energy_calls));
    if (ci->energy_calls == DT_NULL_I64)
        ci->energy_calls = 0;
    TRY(get_str(d, o, "reason", F_NULL, &ci->energy_reason));
    path_pop(d, m);
    return DT_OK;
}

/* The impl's graph replay unavailability and cold-cache confirmation (issue 13). */
static dt_status dec_graph_cache(dec *d, const json_t *impl, dt_case_impl *ci) {
    const json_t *o;
    TRY(get_str(d, impl, "graph_unavailable", F_NULL, &ci->graph_unavailable));
    TRY(get_obj(d, impl, "cache", F_NULL, &o));
    if (!o)
        return DT_OK;
    size_t m = path_key(d, "cache");
    ci->cache.present = 1;
    TRY(get_int(d, o, "copies", F_REQ, 1, INT64_MAX, &ci->cache.copies));
    TRY(get_int(d, o, "copy_bytes", F_REQ, 1, INT64_MAX, &ci->cache.copy_bytes));
    TRY(get_int(d, o, "l2_bytes", F_REQ, 1, INT64_MAX, &ci->cache.l2_bytes));
    TRY(get_int(d, o, "flush_bytes", F_REQ, 0, INT64_MAX, &ci->cache.flush_bytes));
    TRY(get_str(d, o, "warm_reason", F_NULL, &ci->cache.warm_reason));
    path_pop(d, m);
    return DT_OK;
}

/* The impl's "anti_cheat" object (optional; issue 17 item 7, docs/anti-cheat.md):
 * {"sample_checks":N,"input_sets":K,"checks":{"cheat.<name>":{"status":..,"note":..}}}. */
static dt_status dec_anti_cheat(dec *d, const json_t *impl, dt_case_impl *ci) {
    const json_t *o, *checks, *v;
    TRY(get_obj(d, impl, "anti_cheat", F_NULL, &o));
    if (!o)
        return DT_OK;
    size_t m = path_key(d, "anti_cheat");
    dt_cheat_rec *cr = &ci->cheat;
    cr->present = 1;
    TRY(get_int(d, o, "sample_checks", F_REQ, 0, INT64_MAX, &cr->sample_checks));
    TRY(get_int(d, o, "input_sets", F_REQ, 0, INT64_MAX, &cr->input_sets));
    TRY(get_int(d, o, "digest_checks", 0, 0, INT64_MAX, &cr->digest_checks));
    if (cr->digest_checks == DT_NULL_I64)
        cr->digest_checks = 0; /* absent: older files, or none */
    TRY(get_obj(d, o, "checks", F_REQ, &checks));
    size_t m2 = path_key(d, "checks");
    const char *name;
    json_object_foreach((json_t *)checks, name, v) {
        int k = dt_cheat_check_find(name);
        if (k < 0)
            return fail_at(d, name, "is not a known anti-cheat check (cheat.cached_result, "
                           "cheat.skipped_work, cheat.side_stream, cheat.wrote_input, "
                           "cheat.aliased_output, cheat.faster_than_physics)");
        if (!json_is_object(v))
            return fail_at(d, name, "must be an object, found %s", type_name(v));
        size_t m3 = path_key(d, name);
        char *status = NULL;
        TRY(get_str(d, v, "status", F_REQ, &status));
        int st = dt_cheat_status_find(status);
        free(status);
        if (st < 0)
            return fail_at(d, "status", "must be \"passed\", \"caught\" or \"not_applicable\"");
        cr->check[k].status = (dt_cheat_status)st;
        TRY(get_str(d, v, "note", F_NULL, &cr->check[k].note));
        path_pop(d, m3);
    }
    path_pop(d, m2);
    path_pop(d, m);
    return DT_OK;
}

/* The probe kind an impl's probe samples used and the pilot's ratio of each kind. */
static dt_status dec_probe_kind(dec *d, const json_t *impl, dt_case_impl *ci) {
    const json_t *o;
    TRY(get_str(d, impl, "probe_kind", F_NULL, &ci->probe_kind));
    TRY(get_obj(d, impl, "pilot_probe_over_control", F_NULL, &o));
    size_t m = path_key(d, "pilot_probe_over_control");
    TRY(get_num(d, o, "concurrent", F_NULL, 0, &ci->pilot_poc_concurrent));
    TRY(get_num(d, o, "serialized", F_NULL, 0, &ci->pilot_poc_serialized));
    path_pop(d, m);
    return DT_OK;
}

/* An array of [a, b] integer pairs (ns) of a decomposition sample; b >= a is checked by
 * dt_decomp_compute (a flagged sample), not here. */
static dt_status dec_intervals(dec *d, const json_t *o, const char *key,
                               dt_decomp_interval **out, size_t *n) {
    const json_t *arr, *p;
    TRY(get_arr(d, o, key, F_REQ, &arr));
    size_t m = path_key(d, key), i;
    *n = 0;
    *out = json_array_size(arr) ? dt_xcalloc(json_array_size(arr), sizeof **out) : NULL;
    json_array_foreach(arr, i, p) {
        const json_t *a = json_array_get(p, 0), *b = json_array_get(p, 1);
        char k[32];
        snprintf(k, sizeof k, "[%zu]", i);
        if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_integer(a) ||
            !json_is_integer(b))
            return fail_at(d, k, "must be a pair of integers [ns, ns]");
        (*out)[(*n)++] = (dt_decomp_interval){json_integer_value(a), json_integer_value(b)};
    }
    path_pop(d, m);
    return DT_OK;
}

/* One raw decomposition sample (stats/dt_decomp.h). */
static dt_status dec_decomp_raw(dec *d, const json_t *o, dt_decomp_raw *x) {
    TRY(want(d, NULL, o, json_is_object(o), "an object"));
    int64_t v;
    TRY(get_int(d, o, "round", F_REQ, 0, INT32_MAX, &v));
    x->round = (int32_t)v;
    TRY(get_int(d, o, "position", F_NULL, 0, INT64_MAX, &x->position));
    TRY(get_int(d, o, "call_start_ns", F_REQ, 0, INT64_MAX, &x->call_start_ns));
    TRY(get_int(d, o, "sync_return_ns", F_REQ, 0, INT64_MAX, &x->sync_return_ns));
    TRY(get_num(d, o, "host_call_ns", F_REQ, 0, &x->host_call_ns));
    TRY(get_num(d, o, "clock_offset_ns", F_NULL, -INFINITY, &x->clock_offset_ns));
    TRY(get_num(d, o, "clock_uncertainty_ns", F_REQ, 0, &x->clock_uncertainty_ns));
    TRY(get_int(d, o, "clock_source", F_NULL, 0, 2, &x->clock_source));
    TRY(dec_intervals(d, o, "launches", &x->launches, &x->n_launches));
    return dec_intervals(d, o, "kernels", &x->kernels, &x->n_kernels);
}

/* The impl's "decomposition" object (optional; issue 13). */
static dt_status dec_decomp(dec *d, const json_t *impl, dt_case_impl *ci) {
    const json_t *o, *arr, *x;
    TRY(get_obj(d, impl, "decomposition", F_NULL, &o));
    if (!o)
        return DT_OK;
    size_t m = path_key(d, "decomposition"), i;
    TRY(get_str(d, o, "unavailable", F_NULL, &ci->decomp.unavailable));
    TRY(get_arr(d, o, "samples", F_NULL, &arr));
    size_t m2 = path_key(d, "samples");
    json_array_foreach(arr, i, x) {
        size_t m3 = path_push(d, "[%zu]", i);
        dt_decomp_raw raw;
        memset(&raw, 0, sizeof raw);
        dt_status st = dec_decomp_raw(d, x, &raw);
        dt_decomp_set_push(&ci->decomp, &raw); /* owned (and freed) from here */
        TRY(st);
        path_pop(d, m3);
    }
    path_pop(d, m2);
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_case_impl(dec *d, const json_t *impl, dt_case_impl *ci) {
    if (!json_is_object(impl))
        return fail_at(d, NULL, "must be an object, found %s", type_name(impl));
    char *status = NULL;
    TRY(get_str(d, impl, "status", 0, &status));
    ci->status = !status || strcmp(status, "ok") == 0 ? DT_IMPL_OK : DT_IMPL_FAILED;
    int known = !status || strcmp(status, "ok") == 0 || strcmp(status, "failed") == 0;
    free(status);
    if (!known)
        return fail_at(d, "status", "must be \"ok\" or \"failed\"");
    TRY(get_str(d, impl, "error", F_NULL, &ci->error));
    TRY(get_str(d, impl, "stderr_tail", F_NULL, &ci->stderr_tail));
    TRY(get_str(d, impl, "output_policy", F_NULL, &ci->output_policy));
    TRY(get_str(d, impl, "implementation", F_NULL, &ci->implementation));
    TRY(get_bool(d, impl, "emulated", F_NULL, 0, &ci->emulated));
    TRY(dec_setup_warmup_calib(d, impl, ci));
    const json_t *checks, *c;
    TRY(get_arr(d, impl, "checks", F_NULL, &checks));
    size_t i;
    json_array_foreach(checks, i, c) {
        char k[64];
        size_t m = path_key(d, elem(k, sizeof k, "checks", i));
        TRY(dec_check(d, c, dt_case_impl_check_add(ci)));
        path_pop(d, m);
    }
    TRY(get_str(d, impl, "output_sha256", F_NULL, &ci->output_sha256));
    TRY(dec_samples(d, impl, ci));
    TRY(get_strv(d, impl, "sources", F_NULL, &ci->sources));
    TRY(dec_energy(d, impl, ci));
    TRY(dec_decomp(d, impl, ci));
    TRY(dec_graph_cache(d, impl, ci));
    TRY(dec_anti_cheat(d, impl, ci));
    return dec_probe_kind(d, impl, ci);
}

/* ---- clocks, floor ------------------------------------------------------------------- */

static dt_status dec_snapshot(dec *d, const json_t *o, const char *key, int *has,
                              dt_clock_snapshot *s) {
    const json_t *v;
    TRY(get_obj(d, o, key, F_NULL, &v));
    *has = v != NULL;
    s->sm_mhz = s->mem_mhz = s->temp_c = s->pstate = DT_NULL_I64;
    s->power_w = NAN;
    if (!v)
        return DT_OK;
    size_t m = path_key(d, key);
    TRY(get_int(d, v, "sm_mhz", F_NULL, 0, INT64_MAX, &s->sm_mhz));
    TRY(get_int(d, v, "mem_mhz", F_NULL, 0, INT64_MAX, &s->mem_mhz));
    TRY(get_int(d, v, "temp_c", F_NULL, INT64_MIN, INT64_MAX, &s->temp_c));
    TRY(get_num(d, v, "power_w", F_NULL, 0, &s->power_w));
    int64_t mask;
    TRY(get_int(d, v, "throttle_mask", F_NULL, INT64_MIN, INT64_MAX, &mask));
    s->has_throttle = mask != DT_NULL_I64;
    s->throttle_mask = s->has_throttle ? (uint64_t)mask : 0;
    if (s->has_throttle)
        TRY(get_strv(d, v, "throttle_reasons", F_NULL, &s->throttle_reasons));
    TRY(get_int(d, v, "pstate", F_NULL, INT64_MIN, INT64_MAX, &s->pstate));
    path_pop(d, m);
    return DT_OK;
}

/* One round record ({round, before, after, moved, why}) into the case. */
static dt_status dec_clock_round(dec *d, const json_t *o, dt_case *c) {
    TRY(want(d, NULL, o, json_is_object(o), "an object"));
    dt_clock_round cr;
    memset(&cr, 0, sizeof cr);
    int64_t round;
    dt_status st = get_int(d, o, "round", F_NULL, 0, INT32_MAX, &round);
    cr.round = round == DT_NULL_I64 ? 0 : (int32_t)round;
    if (st == DT_OK)
        st = dec_snapshot(d, o, "before", &cr.has_before, &cr.before);
    if (st == DT_OK)
        st = dec_snapshot(d, o, "after", &cr.has_after, &cr.after);
    if (st == DT_OK)
        st = get_bool(d, o, "moved", F_NULL, 0, &cr.moved);
    if (st == DT_OK)
        st = get_str(d, o, "why", F_NULL, &cr.why);
    dt_case_clock_round_add(c, &cr); /* owned (and freed) from here */
    return st;
}

static dt_status dec_clocks(dec *d, const json_t *cj, dt_case *c) {
    const json_t *cl, *rounds, *o;
    TRY(get_obj(d, cj, "clocks", F_NULL, &cl));
    const json_t *cm = json_object_get(cj, "clocks_moved");
    if (cm && !json_is_null(cm))
        TRY(want(d, "clocks_moved", cm, json_is_boolean(cm), "a boolean"));
    if (!cl)
        return DT_OK;
    size_t m = path_key(d, "clocks");
    TRY(get_arr(d, cl, "rounds", F_NULL, &rounds));
    if (!rounds) { /* an older file: the summary is the one round */
        TRY(dec_clock_round(d, cl, c));
    } else {
        size_t i;
        json_array_foreach(rounds, i, o) {
            char k[64];
            size_t m2 = path_key(d, elem(k, sizeof k, "rounds", i));
            TRY(dec_clock_round(d, o, c));
            path_pop(d, m2);
        }
    }
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_floor(dec *d, const json_t *cj, dt_case *c) {
    const json_t *fl, *arr;
    TRY(get_obj(d, cj, "floor", F_NULL, &fl));
    if (!fl)
        return DT_OK;
    size_t m = path_key(d, "floor");
    char *worker = NULL;
    TRY(get_str(d, fl, "worker", F_REQ | F_NONEMPTY, &worker));
    c->floor_impl = dt_record_impl_find(d->r, worker);
    if (c->floor_impl < 0) {
        dt_status st = fail_at(d, "worker", "\"%s\" is not one of the frameworks", worker);
        free(worker);
        return st;
    }
    free(worker);
    TRY(get_arr(d, fl, "samples", F_REQ, &arr));
    size_t m2 = path_key(d, "samples");
    TRY(dec_sample_array(d, arr, 0, 1, &c->floor));
    path_pop(d, m2);
    path_pop(d, m);
    return DT_OK;
}

/* ---- a case -------------------------------------------------------------------------- */

/* m, n, k: integers in [0, 2^31], at least 1 where the op uses the dimension. */
static dt_status dec_shape(dec *d, const json_t *cj, dt_case *c) {
    const dt_op_info *info = dt_op_get(c->op);
    int used[4] = {0};
    for (int b = 0; b < info->nbuffers; b++) {
        used[info->buffers[b].rows] = 1;
        used[info->buffers[b].cols] = 1;
    }
    TRY(get_int(d, cj, "m", F_REQ, used[DT_DIM_M], (int64_t)1 << 31, &c->m));
    TRY(get_int(d, cj, "n", F_REQ, used[DT_DIM_N], (int64_t)1 << 31, &c->n));
    TRY(get_int(d, cj, "k", F_REQ, used[DT_DIM_K], (int64_t)1 << 31, &c->k));
    return DT_OK;
}

static dt_status dec_inputs(dec *d, const json_t *cj, dt_case *c) {
    const json_t *tol, *inputs, *in;
    TRY(get_obj(d, cj, "tolerance", F_NULL, &tol));
    size_t m = path_key(d, "tolerance");
    TRY(get_num(d, tol, "atol", F_NULL, 0, &c->atol));
    TRY(get_num(d, tol, "rtol", F_NULL, 0, &c->rtol));
    TRY(get_str(d, tol, "scale", F_NULL, &c->tol_scale));
    path_pop(d, m);
    TRY(get_arr(d, cj, "inputs", F_NULL, &inputs));
    size_t i;
    json_array_foreach(inputs, i, in) {
        char k[64];
        m = path_key(d, elem(k, sizeof k, "inputs", i));
        TRY(want(d, NULL, in, json_is_object(in), "an object"));
        dt_input *x = dt_case_input_add(c, NULL, NULL, DT_NULL_I64, DT_NULL_I64);
        TRY(get_str(d, in, "name", F_NULL, &x->name));
        TRY(get_str(d, in, "sha256", F_NULL, &x->sha256));
        TRY(get_int(d, in, "rows", F_NULL, 0, INT64_MAX, &x->rows));
        TRY(get_int(d, in, "cols", F_NULL, 0, INT64_MAX, &x->cols));
        path_pop(d, m);
    }
    const json_t *rd, *v;
    TRY(get_arr(d, cj, "rounds_done", F_NULL, &rd));
    json_array_foreach(rd, i, v) {
        char k[64];
        elem(k, sizeof k, "rounds_done", i);
        TRY(want(d, k, v, json_is_integer(v) && json_integer_value(v) >= 0 &&
                              json_integer_value(v) <= INT32_MAX, "an integer >= 0"));
        dt_case_round_done_add(c, (int32_t)json_integer_value(v));
    }
    return DT_OK;
}

static dt_status dec_case_impls(dec *d, const json_t *cj, dt_case *c) {
    const json_t *impl, *v;
    TRY(get_obj(d, cj, "impl", F_REQ, &impl));
    for (size_t i = 0; i < d->r->n_impls; i++)
        c->impl[i].present = 0;
    const char *key;
    json_object_foreach((json_t *)impl, key, v) {
        size_t m = path_push(d, ".impl.%.200s", key);
        int f = dt_record_impl_find(d->r, key);
        if (f < 0)
            return fail_at(d, NULL, "is not one of the frameworks");
        c->impl[f].present = 1;
        TRY(dec_case_impl(d, v, &c->impl[f]));
        path_pop(d, m);
    }
    if (c->valid)
        for (size_t i = 0; i < d->r->n_impls; i++)
            if (!c->impl[i].present)
                return dt_fail(d->err, DT_EINVAL, "%s: %s is valid but has no impl.%s",
                               d->what, d->path, d->r->impls[i].id);
    return DT_OK;
}

static dt_status dec_case_derived(dec *d, const json_t *cj, dt_case *c);
static dt_status dec_run_derived(dec *d, const json_t *root);

/* A derived block (of a case when c, else of the run). Version 2: decoded and validated.
 * Version 1: the old loader never looked at it and derive recomputes it, so one that
 * does not decode is dropped (every derived block of the record, at the end), not
 * refused. */
static dt_status dec_derived_block(dec *d, const json_t *o, dt_case *c) {
    if (d->version >= 2)
        return c ? dec_case_derived(d, o, c) : dec_run_derived(d, o);
    dt_err *saved = d->err, quiet;
    size_t mark = d->len;
    d->err = &quiet;
    if ((c ? dec_case_derived(d, o, c) : dec_run_derived(d, o)) != DT_OK) {
        d->v1_derived_bad = 1;
        path_pop(d, mark);
    }
    d->err = saved;
    return DT_OK;
}

static dt_status dec_case(dec *d, const json_t *cj, size_t index) {
    size_t m = path_push(d, "cases[%zu]", index);
    if (!json_is_object(cj))
        return fail_at(d, NULL, "must be an object, found %s", type_name(cj));
    char *id = NULL, *op = NULL;
    TRY(get_str(d, cj, "id", F_REQ | F_NONEMPTY, &id));
    dt_status st = get_str(d, cj, "op", F_REQ | F_NONEMPTY, &op);
    const json_t *valid = json_object_get(cj, "valid");
    if (st == DT_OK)
        st = want(d, "valid", valid, json_is_boolean(valid), "a boolean");
    int dup = st == DT_OK ? dt_record_case_find(d->r, id) : -1;
    dt_case *c = NULL;
    if (st == DT_OK) {
        path_pop(d, m);
        path_push(d, "cases[%zu] (%.200s)", index, id);
        if (dup >= 0)
            st = fail_at(d, NULL, "repeats the id of cases[%d]", dup);
        else if (dt_op_find(op) < 0)
            st = fail_at(d, "op", "is \"%.100s\", not an operation", op);
    }
    if (st == DT_OK) {
        c = dt_record_case_add(d->r, id);
        c->op = (dt_op)dt_op_find(op);
        c->valid = json_is_true(valid);
    }
    free(id);
    free(op);
    TRY(st);
    char *dtype = NULL;
    TRY(get_str(d, cj, "dtype", F_NULL, &dtype));
    int et = dtype ? dt_elem_type_find(dtype) : DT_ELEM_F32;
    free(dtype);
    if (et < 0)
        return fail_at(d, "dtype", "must be \"f32\", \"bf16\" or \"f16\"");
    c->dtype = (dt_elem_type)et;
    TRY(dec_shape(d, cj, c));
    TRY(get_bool(d, cj, "views", 0, 0, &c->views));
    TRY(get_str(d, cj, "backend", F_NULL, &c->backend));
    TRY(dec_inputs(d, cj, c));
    TRY(dec_case_impls(d, cj, c));
    TRY(dec_clocks(d, cj, c));
    TRY(dec_floor(d, cj, c));
    TRY(dec_derived_block(d, cj, c));
    TRY(get_int(d, cj, "shard", F_NULL, 0, INT32_MAX, &c->shard));
    TRY(get_str(d, cj, "host", F_NULL, &c->host));
    const json_t *dv;
    TRY(get_obj(d, cj, "device", F_NULL, &dv));
    if (dv) {
        size_t m2 = path_key(d, "device");
        TRY(get_int(d, dv, "index", F_REQ, 0, INT32_MAX, &c->device));
        TRY(get_str(d, dv, "name", F_NULL, &c->device_name));
        TRY(get_str(d, dv, "uuid", F_NULL, &c->device_uuid));
        path_pop(d, m2);
    }
    path_pop(d, m);
    return DT_OK;
}

/* "plan": the shard plan of a sharded or merged run (absent: not sharded). */
static dt_status dec_plan_ref(dec *d, const json_t *root) {
    const json_t *p;
    TRY(get_obj(d, root, "plan", F_NULL, &p));
    if (!p)
        return DT_OK;
    dt_shard_ref *s = &d->r->plan;
    size_t m = path_key(d, "plan");
    s->present = 1;
    TRY(get_str(d, p, "id", F_REQ | F_NONEMPTY, &s->plan_id));
    TRY(get_int(d, p, "shards", F_REQ, 1, INT32_MAX, &s->count));
    TRY(get_int(d, p, "shard", F_NULL, 0, INT32_MAX, &s->index));
    path_pop(d, m);
    const json_t *sh;
    TRY(get_arr(d, root, "shards", F_NULL, &sh));
    d->r->shards_json = canonical(sh);
    return DT_OK;
}

/* "devices" of a --devices run: one entry per GPU (docs/devices.md). */
static dt_status dec_device(dec *d, const json_t *o, size_t i) {
    char k[64];
    size_t m = path_push(d, "%s", elem(k, sizeof k, "devices", i));
    TRY(want(d, NULL, o, json_is_object(o), "an object"));
    dt_device_rec *v = dt_record_device_add(d->r);
    TRY(get_int(d, o, "index", F_REQ, 0, INT32_MAX, &v->index));
    TRY(get_str(d, o, "name", F_NULL, &v->name));
    TRY(get_str(d, o, "uuid", F_NULL, &v->uuid));
    TRY(get_str(d, o, "pci_bus_id", F_NULL, &v->pci_bus_id));
    TRY(get_int(d, o, "shard", F_NULL, 0, INT32_MAX, &v->shard));
    TRY(get_str(d, o, "cpus", F_NULL, &v->cpus));
    TRY(get_str(d, o, "dir", F_NULL, &v->dir));
    TRY(get_str(d, o, "started_at", F_NULL, &v->started_at));
    TRY(get_str(d, o, "finished_at", F_NULL, &v->finished_at));
    TRY(get_int(d, o, "exit_status", F_NULL, 0, 255, &v->exit_status));
    TRY(get_int(d, o, "cases", F_NULL, 0, INT32_MAX, &v->cases));
    TRY(get_int(d, o, "valid", F_NULL, 0, INT32_MAX, &v->valid));
    TRY(dec_ceilings(d, o, &v->ceilings));
    path_pop(d, m);
    return DT_OK;
}

/* "replicas" (--replicate): us has one value (or null) per device. */
static dt_status dec_replica(dec *d, const json_t *o, size_t i) {
    char k[64];
    size_t m = path_push(d, "%s", elem(k, sizeof k, "replicas", i));
    TRY(want(d, NULL, o, json_is_object(o), "an object"));
    const json_t *us;
    TRY(get_arr(d, o, "us", F_REQ, &us));
    size_t n = json_array_size(us);
    if (n != d->r->n_devices)
        return fail_at(d, "us", "must hold one value per device (%zu), found %zu",
                       d->r->n_devices, n);
    dt_replica_rec *q = dt_record_replica_add(d->r, n);
    TRY(get_str(d, o, "case", F_REQ | F_NONEMPTY, &q->case_id));
    TRY(get_str(d, o, "impl", F_REQ | F_NONEMPTY, &q->impl_id));
    char *scope = NULL;
    TRY(get_str(d, o, "scope", F_REQ | F_NONEMPTY, &scope));
    int sc = dt_scope_find(scope);
    free(scope);
    if (sc < 0)
        return fail_at(d, "scope", "must be a scope name");
    q->scope = (dt_scope)sc;
    for (size_t j = 0; j < n; j++) {
        const json_t *x = json_array_get(us, j);
        if (json_is_null(x))
            continue;
        TRY(want(d, "us", x, json_is_number(x) && json_number_value(x) >= 0,
                 "an array of numbers >= 0 or nulls"));
        q->us[j] = json_number_value(x);
    }
    TRY(get_num(d, o, "spread", F_NULL, 0, &q->spread));
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_devices(dec *d, const json_t *root) {
    const json_t *a, *x;
    size_t i;
    TRY(get_arr(d, root, "devices", F_NULL, &a));
    if (a)
        json_array_foreach(a, i, x) TRY(dec_device(d, x, i));
    TRY(get_arr(d, root, "replicas", F_NULL, &a));
    if (a)
        json_array_foreach(a, i, x) TRY(dec_replica(d, x, i));
    return DT_OK;
}

/* ---- derived ------------------------------------------------------------------------- */

static dt_status dec_summary(dec *d, const json_t *o, dt_rec_summary *s) {
    int64_t n;
    TRY(get_int(d, o, "n", F_REQ, 0, INT64_MAX, &n));
    s->n = (size_t)n;
    TRY(get_num(d, o, "p50", F_NULL, -INFINITY, &s->p50));
    TRY(get_num(d, o, "p90", F_NULL, -INFINITY, &s->p90));
    TRY(get_num(d, o, "min", F_NULL, -INFINITY, &s->min));
    TRY(get_num(d, o, "max", F_NULL, -INFINITY, &s->max));
    TRY(get_num(d, o, "iqr", F_NULL, -INFINITY, &s->iqr));
    return DT_OK;
}

static dt_status dec_ratio(dec *d, const json_t *o, const char *key, int *has,
                           dt_rec_ratio *r) {
    const json_t *v;
    TRY(get_obj(d, o, key, F_NULL, &v));
    *has = v != NULL;
    r->median = r->ci_low = r->ci_high = NAN;
    if (!v)
        return DT_OK;
    size_t m = path_key(d, key);
    int64_t n;
    TRY(get_num(d, v, "median", F_NULL, -INFINITY, &r->median));
    TRY(get_num(d, v, "ci_low", F_NULL, -INFINITY, &r->ci_low));
    TRY(get_num(d, v, "ci_high", F_NULL, -INFINITY, &r->ci_high));
    TRY(get_int(d, v, "pairs", F_REQ, 0, INT64_MAX, &n));
    r->pairs = (size_t)n;
    TRY(get_int(d, v, "skipped_pairs", 0, 0, INT64_MAX, &n));
    r->skipped_pairs = n == DT_NULL_I64 ? 0 : (size_t)n;
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_verdict(dec *d, const json_t *o, dt_rec_verdict *out) {
    char *v = NULL;
    TRY(get_str(d, o, "verdict", F_REQ, &v));
    int k = dt_rec_verdict_find(v);
    free(v);
    if (k < 0)
        return fail_at(d, "verdict", "is not a verdict");
    *out = (dt_rec_verdict)k;
    return DT_OK;
}

static dt_status dec_probe_summary(dec *d, const json_t *o, dt_probe_summary *p) {
    TRY(want(d, NULL, o, json_is_object(o), "an object"));
    p->present = 1;
    TRY(get_num(d, o, "kernel_sum_us_p50", F_NULL, -INFINITY, &p->kernel_sum_us_p50));
    TRY(get_num(d, o, "kernel_span_us_p50", F_NULL, -INFINITY, &p->kernel_span_us_p50));
    TRY(get_num(d, o, "kernels_per_call_p50", F_NULL, -INFINITY, &p->kernels_per_call_p50));
    const json_t *ks, *k;
    TRY(get_arr(d, o, "kernels", F_NULL, &ks));
    size_t i;
    json_array_foreach(ks, i, k) {
        char w[64];
        size_t m = path_key(d, elem(w, sizeof w, "kernels", i));
        TRY(want(d, NULL, k, json_is_object(k), "an object"));
        p->kernels = realloc(p->kernels, (p->n_kernels + 1) * sizeof *p->kernels);
        DT_ASSERT(p->kernels);
        p->cap_kernels = p->n_kernels + 1;
        dt_probe_kernel_median *e = &p->kernels[p->n_kernels++];
        memset(e, 0, sizeof *e);
        TRY(get_str(d, k, "name", F_REQ, &e->name));
        TRY(get_num(d, k, "per_call_p50", F_NULL, -INFINITY, &e->per_call_p50));
        TRY(get_num(d, k, "us_p50", F_NULL, -INFINITY, &e->us_p50));
        path_pop(d, m);
    }
    return DT_OK;
}

/* The per-impl maps of a scope: noise, probe_over_control, probe. */
static dt_status dec_scope_maps(dec *d, const json_t *so, dt_scope_derived *sd) {
    const json_t *noise, *poc, *probe;
    TRY(get_obj(d, so, "noise", F_NULL, &noise));
    TRY(get_obj(d, so, "probe_over_control", F_NULL, &poc));
    TRY(get_obj(d, so, "probe", F_NULL, &probe));
    for (size_t i = 0; i < d->r->n_impls; i++) {
        const char *id = d->r->impls[i].id;
        dt_scope_impl *si = &sd->impl[i];
        size_t m = path_key(d, "noise");
        TRY(get_num(d, noise, id, F_NULL, -INFINITY, &si->noise));
        path_pop(d, m);
        const json_t *e = json_object_get(poc, id);
        if (e) {
            m = path_push(d, ".probe_over_control.%.200s", id);
            TRY(want(d, NULL, e, json_is_object(e), "an object"));
            int64_t n;
            si->has_probe_over_control = 1;
            TRY(get_num(d, e, "median", F_NULL, -INFINITY, &si->probe_over_control));
            TRY(get_int(d, e, "pairs", F_REQ, 0, INT64_MAX, &n));
            si->probe_over_control_pairs = (size_t)n;
            path_pop(d, m);
        }
        e = json_object_get(probe, id);
        if (e) {
            m = path_push(d, ".probe.%.200s", id);
            TRY(dec_probe_summary(d, e, &si->probe));
            path_pop(d, m);
        }
    }
    return DT_OK;
}

/* Candidate-vs-baseline results: v1 "ratio"/"verdict" of the one candidate; v2
 * "vs_baseline": {cand id: {"ratio", "verdict"}}. */
static dt_status dec_scope_vs(dec *d, const json_t *so, dt_scope_derived *sd) {
    if (d->version == 1) {
        dt_scope_vs *vs = &sd->vs[1];
        vs->present = 1;
        TRY(dec_ratio(d, so, "ratio", &vs->has_ratio, &vs->ratio));
        return dec_verdict(d, so, &vs->verdict);
    }
    const json_t *vsj;
    TRY(get_obj(d, so, "vs_baseline", F_REQ, &vsj));
    for (size_t i = 1; i < d->r->n_impls; i++) {
        const char *id = d->r->impls[i].id;
        const json_t *e = json_object_get(vsj, id);
        if (!e)
            continue; /* not derived for this candidate: present stays 0 */
        size_t m = path_push(d, ".vs_baseline.%.200s", id);
        TRY(want(d, NULL, e, json_is_object(e), "an object"));
        dt_scope_vs *vs = &sd->vs[i];
        vs->present = 1;
        TRY(dec_ratio(d, e, "ratio", &vs->has_ratio, &vs->ratio));
        TRY(dec_verdict(d, e, &vs->verdict));
        double band;
        TRY(get_num(d, e, "process_band", 0, 1, &band));
        vs->process_band = isnan(band) ? 0 : band;
        path_pop(d, m);
    }
    return DT_OK;
}

static dt_status dec_scopes(dec *d, const json_t *der, dt_case *c) {
    const json_t *scopes, *so;
    TRY(get_obj(d, der, "scopes", F_NULL, &scopes));
    const char *name;
    json_object_foreach((json_t *)scopes, name, so) {
        int s = dt_scope_find(name);
        size_t m = path_push(d, ".scopes.%.200s", name);
        if (s < 0)
            return fail_at(d, NULL, "is not a known scope");
        TRY(want(d, NULL, so, json_is_object(so), "an object"));
        TRY(unheld_clash(d, scopes, s));
        s = stored_scope(d, s);
        dt_scope_derived *sd = &c->derived.scopes[s];
        sd->present = 1;
        for (size_t i = 0; i < d->r->n_impls; i++) {
            const json_t *sum = json_object_get(so, d->r->impls[i].id);
            if (!sum)
                continue;
            size_t m2 = path_key(d, d->r->impls[i].id);
            TRY(want(d, NULL, sum, json_is_object(sum), "an object"));
            TRY(dec_summary(d, sum, &sd->impl[i].summary));
            path_pop(d, m2);
        }
        TRY(dec_scope_maps(d, so, sd));
        TRY(dec_scope_vs(d, so, sd));
        path_pop(d, m);
    }
    return DT_OK;
}

/* Implementation i's entry of a per-implementation object `impl` (keyed by id; `sub` is
 * the path segment before the id: ".impl", or "" for a v1 e2e_floor): *e NULL when
 * absent; else its path is pushed (*mark for path_pop) and it must be an object. */
static dt_status impl_entry(dec *d, const json_t *impl, size_t i, const char *sub,
                            const json_t **e, size_t *mark) {
    *e = json_object_get(impl, d->r->impls[i].id);
    if (!*e)
        return DT_OK;
    *mark = path_push(d, "%s.%.200s", sub, d->r->impls[i].id);
    return want(d, NULL, *e, json_is_object(*e), "an object");
}

static dt_status dec_roofline(dec *d, const json_t *der, dt_case *c) {
    const json_t *o, *impl;
    TRY(get_obj(d, der, "roofline", F_NULL, &o));
    if (!o)
        return DT_OK;
    dt_roofline *rf = &c->derived.roofline;
    size_t m = path_key(d, "roofline");
    rf->present = 1;
    TRY(get_num(d, o, "min_bytes", F_NULL, 0, &rf->min_bytes));
    TRY(get_num(d, o, "flops", F_NULL, 0, &rf->flops));
    char *bound = NULL;
    TRY(get_str(d, o, "bound", F_NULL, &bound));
    rf->bound = bound && strcmp(bound, "compute") == 0 ? DT_BOUND_COMPUTE : DT_BOUND_MEMORY;
    free(bound);
    TRY(get_num(d, o, "copy_gbps", F_NULL, 0, &rf->copy_gbps));
    TRY(get_num(d, o, "flop_tflops", F_NULL, 0, &rf->flop_tflops));
    TRY(get_obj(d, o, "impl", F_NULL, &impl));
    for (size_t i = 0; i < d->r->n_impls; i++) {
        const json_t *e;
        size_t m2;
        TRY(impl_entry(d, impl, i, ".impl", &e, &m2));
        if (!e)
            continue;
        dt_roofline_impl *ri = &rf->impl[i];
        ri->present = 1;
        char *scope = NULL;
        TRY(get_str(d, e, "scope", F_REQ, &scope));
        int s = dt_scope_find(scope);
        free(scope);
        if (s < 0)
            return fail_at(d, "scope", "is not a known scope");
        ri->scope = (dt_scope)stored_scope(d, s);
        TRY(get_num(d, e, "us", F_NULL, -INFINITY, &ri->us));
        TRY(get_num(d, e, "gbps", F_NULL, -INFINITY, &ri->gbps));
        TRY(get_num(d, e, "copy_pct", F_NULL, -INFINITY, &ri->copy_pct));
        TRY(get_num(d, e, "tflops", F_NULL, -INFINITY, &ri->tflops));
        TRY(get_num(d, e, "flop_pct", F_NULL, -INFINITY, &ri->flop_pct));
        path_pop(d, m2);
    }
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_e2e_floor(dec *d, const json_t *der, dt_case *c) {
    const json_t *o, *impl;
    TRY(get_obj(d, der, "e2e_floor", F_NULL, &o));
    if (!o)
        return DT_OK;
    dt_e2e_floor *ef = &c->derived.e2e_floor;
    size_t m = path_key(d, "e2e_floor");
    ef->present = 1;
    TRY(get_num(d, o, "floor_us", F_NULL, -INFINITY, &ef->floor_us));
    char *src = NULL;
    TRY(get_str(d, o, "floor_source", F_NULL, &src));
    ef->source = src && strcmp(src, "ceilings") == 0 ? DT_FLOOR_CEILINGS : DT_FLOOR_PAIRED;
    free(src);
    TRY(get_num(d, o, "case_floor_us", F_NULL, -INFINITY, &ef->case_floor_us));
    TRY(get_num(d, o, "touch_floor_us", F_NULL, -INFINITY, &ef->touch_floor_us));
    impl = o; /* v1: impl ids beside the fixed keys */
    if (d->version >= 2)
        TRY(get_obj(d, o, "impl", F_NULL, &impl));
    for (size_t i = 0; i < d->r->n_impls; i++) {
        const json_t *e;
        size_t m2;
        TRY(impl_entry(d, impl, i, d->version >= 2 ? ".impl" : "", &e, &m2));
        if (!e)
            continue;
        dt_e2e_floor_impl *fi = &ef->impl[i];
        fi->present = 1;
        TRY(get_num(d, e, "single_us", F_NULL, -INFINITY, &fi->single_us));
        TRY(get_num(d, e, "over_floor", F_NULL, -INFINITY, &fi->over_floor));
        TRY(dec_ratio(d, e, "over_floor_ratio", &fi->has_over_floor_ratio,
                      &fi->over_floor_ratio));
        TRY(get_num(d, e, "over_touch_floor", F_NULL, -INFINITY, &fi->over_touch_floor));
        path_pop(d, m2);
    }
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_held_floor(dec *d, const json_t *der, dt_case *c) {
    const json_t *o, *impl;
    TRY(get_obj(d, der, "held_floor", F_NULL, &o));
    if (!o)
        return DT_OK;
    dt_held_floor *hf = &c->derived.held_floor;
    size_t m = path_key(d, "held_floor");
    hf->present = 1;
    TRY(get_num(d, o, "touch_floor_us", F_NULL, -INFINITY, &hf->touch_floor_us));
    TRY(get_obj(d, o, "impl", F_NULL, &impl));
    for (size_t i = 0; i < d->r->n_impls; i++) {
        const json_t *e;
        size_t m2;
        TRY(impl_entry(d, impl, i, ".impl", &e, &m2));
        if (!e)
            continue;
        dt_held_floor_impl *hi = &hf->impl[i];
        hi->present = 1;
        TRY(get_num(d, e, "control_batch_us", F_NULL, -INFINITY, &hi->control_batch_us));
        TRY(get_num(d, e, "kernels_per_call", F_NULL, -INFINITY, &hi->kernels_per_call));
        TRY(get_bool(d, e, "kernels_from_probe", 0, 0, &hi->kernels_from_probe));
        TRY(get_num(d, e, "over_touch_floor", F_NULL, -INFINITY, &hi->over_touch_floor));
        path_pop(d, m2);
    }
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_case_derived(dec *d, const json_t *cj, dt_case *c) {
    const json_t *der;
    TRY(get_obj(d, cj, "derived", F_NULL, &der));
    if (!der)
        return DT_OK;
    size_t m = path_key(d, "derived");
    c->derived.present = 1;
    TRY(dec_scopes(d, der, c));
    TRY(dec_roofline(d, der, c));
    TRY(dec_e2e_floor(d, der, c));
    TRY(dec_held_floor(d, der, c));
    path_pop(d, m);
    return DT_OK;
}

static dt_status dec_policy(dec *d, const json_t *der) {
    dt_policy *p = &d->r->derived.policy;
    *p = dt_policy_default();
    p->bootstrap_resamples = d->r->settings.bootstrap_resamples;
    p->bootstrap_seed = d->r->settings.bootstrap_seed;
    const json_t *o;
    TRY(get_obj(d, der, "policy", d->version >= 2 && der ? F_REQ : 0, &o));
    if (!o)
        return DT_OK;
    size_t m = path_key(d, "policy");
    int64_t v;
#define NUM(key) TRY(get_num(d, o, #key, F_REQ, -INFINITY, &p->key))
#define INT(key, lo, hi)                                                                   \
    do {                                                                                   \
        TRY(get_int(d, o, #key, F_REQ, lo, hi, &v));                                       \
        p->key = v;                                                                        \
    } while (0)
    NUM(equiv_low);
    NUM(equiv_high);
    INT(min_pairs_interval, 1, INT32_MAX);
    NUM(ci_level);
    INT(bootstrap_resamples, 1, 1000000);
    INT(bootstrap_seed, INT64_MIN, INT64_MAX);
    NUM(max_noise);
    NUM(probe_low);
    NUM(probe_high);
    INT(min_samples, 0, INT32_MAX);
    INT(min_rounds, 0, INT32_MAX);
    INT(small_case_max_elems, 0, INT64_MAX);
    INT(max_reasons, 0, INT32_MAX);
    NUM(clocks_sm_tolerance);
    NUM(clocks_max_temp_rise_c);
    NUM(compare_threshold);
    INT(compare_min_samples, 0, INT32_MAX);
#undef NUM
#undef INT
    path_pop(d, m);
    return DT_OK;
}

/* Verdict counts: v1 flat in counts; v2 counts.vs_baseline.<cand id>. */
static dt_status dec_counts(dec *d, const json_t *counts) {
    int64_t v;
    size_t m = path_key(d, "counts");
    TRY(get_int(d, counts, "cases", F_REQ, 0, INT64_MAX, &v));
    d->r->derived.n_cases = (size_t)v;
    TRY(get_int(d, counts, "valid", F_REQ, 0, INT64_MAX, &v));
    d->r->derived.n_valid = (size_t)v;
    const json_t *vsj = NULL;
    if (d->version >= 2)
        TRY(get_obj(d, counts, "vs_baseline", F_REQ, &vsj));
    for (size_t i = 1; i < d->r->n_impls; i++) {
        const json_t *o = d->version >= 2 ? json_object_get(vsj, d->r->impls[i].id) : counts;
        size_t m2 = d->version >= 2 ? path_push(d, ".vs_baseline.%.200s", d->r->impls[i].id)
                                    : d->len;
        TRY(want(d, NULL, o, json_is_object(o), "an object"));
        for (int q = 0; q < DT_REC_VERDICT_COUNT; q++) {
            TRY(get_int(d, o, dt_rec_verdict_name((dt_rec_verdict)q), F_REQ, 0, INT64_MAX, &v));
            d->r->derived.vs[i].n[q] = (size_t)v;
        }
        path_pop(d, m2);
    }
    path_pop(d, m);
    return DT_OK;
}

/* One {level, reasons} into *out. */
static dt_status dec_level_reasons(dec *d, const json_t *o, dt_level *level, dt_strv *reasons) {
    char *name = NULL;
    TRY(get_str(d, o, "level", F_REQ, &name));
    int l = dt_level_find(name);
    free(name);
    if (l < 0)
        return fail_at(d, "level", "must be \"smoke\", \"method audit\" or \"comparative\"");
    *level = (dt_level)l;
    return get_strv(d, o, "reasons", F_NULL, reasons);
}

/* assessment.scopes.<scope> = {level, reasons} (absent in files derived before issue 12).
 * Scope names of a file without held windows map like its samples. */
static dt_status dec_scope_assessments(dec *d, const json_t *as) {
    const json_t *scopes, *so;
    TRY(get_obj(d, as, "scopes", F_NULL, &scopes));
    const char *name;
    json_object_foreach((json_t *)scopes, name, so) {
        int s = dt_scope_find(name);
        size_t m = path_push(d, ".scopes.%.200s", name);
        if (s < 0)
            return fail_at(d, NULL, "is not a known scope");
        TRY(want(d, NULL, so, json_is_object(so), "an object"));
        TRY(unheld_clash(d, scopes, s));
        dt_scope_assessment *sa = &d->r->derived.scopes[stored_scope(d, s)];
        sa->present = 1;
        TRY(dec_level_reasons(d, so, &sa->level, &sa->reasons));
        path_pop(d, m);
    }
    return DT_OK;
}

static dt_status dec_run_derived(dec *d, const json_t *root) {
    const json_t *der, *as, *counts;
    TRY(get_obj(d, root, "derived", F_NULL, &der));
    dt_run_derived *rd = &d->r->derived;
    size_t m = path_key(d, "derived");
    TRY(dec_policy(d, der));
    if (!der) {
        path_pop(d, m);
        return DT_OK;
    }
    rd->present = 1;
    TRY(get_obj(d, der, "assessment", F_REQ, &as));
    size_t m2 = path_key(d, "assessment");
    char *level = NULL;
    TRY(get_str(d, as, "level", F_REQ, &level));
    int l = dt_level_find(level);
    free(level);
    if (l < 0)
        return fail_at(d, "level", "must be \"smoke\", \"method audit\" or \"comparative\"");
    rd->level = (dt_level)l;
    TRY(get_strv(d, as, "reasons", F_NULL, &rd->reasons));
    TRY(get_strv(d, as, "summary", F_NULL, &rd->summary));
    TRY(dec_scope_assessments(d, as));
    path_pop(d, m2);
    TRY(get_obj(d, der, "counts", F_REQ, &counts));
    TRY(dec_counts(d, counts));
    path_pop(d, m);
    return DT_OK;
}

/* ---- the document --------------------------------------------------------------------- */

static dt_status dec_header(dec *d, const json_t *root) {
    if (!json_is_object(root))
        return dt_fail(d->err, DT_EINVAL, "%s: the top level must be a JSON object, found %s",
                       d->what, type_name(root));
    const json_t *fmt = json_object_get(root, "format");
    if (!json_is_string(fmt))
        return dt_fail(d->err, DT_EINVAL,
                       "%s: not a dualtime results file (no \"format\" string)", d->what);
    if (strcmp(json_string_value(fmt), DT_RECORD_FORMAT) != 0)
        return dt_fail(d->err, DT_EINVAL, "%s: format is \"%s\", expected \"%s\"", d->what,
                       json_string_value(fmt), DT_RECORD_FORMAT);
    const json_t *ver = json_object_get(root, "format_version");
    TRY(want(d, "format_version", ver, json_is_integer(ver), "an integer"));
    json_int_t v = json_integer_value(ver);
    if (v != 1 && v != 2)
        return dt_fail(d->err, DT_EINVAL,
                       "%s: unsupported format_version %lld (this build reads 1 and 2)",
                       d->what, (long long)v);
    d->version = (int)v;
    d->r->format_version = (int)v;
    return DT_OK;
}

static dt_status dec_run(dec *d, const json_t *root) {
    dt_record *r = d->r;
    TRY(dec_header(d, root));
    TRY(get_bool(d, root, "complete", 0, 0, &r->complete));
    TRY(dec_tool(d, root));
    TRY(get_strv(d, root, "command_line", F_NULL, &r->command_line));
    TRY(get_str(d, root, "started_at", F_NULL, &r->started_at));
    TRY(get_str(d, root, "finished_at", F_NULL, &r->finished_at));
    TRY(dec_settings(d, root));
    d->unheld = d->version == 1 || !r->settings.held_windows;
    r->settings.held_windows = !d->unheld;
    TRY(dec_frameworks(d, root));
    TRY(dec_environment(d, root));
    TRY(dec_provenance(d, root));
    const json_t *cases, *c;
    TRY(get_arr(d, root, "cases", F_REQ, &cases));
    size_t i;
    json_array_foreach(cases, i, c) TRY(dec_case(d, c, i));
    TRY(get_str(d, root, "floor_unavailable", F_NULL, &r->floor_unavailable));
    const json_t *intr;
    TRY(get_obj(d, root, "interrupted", F_NULL, &intr));
    if (intr) {
        int64_t sig;
        size_t m = path_key(d, "interrupted");
        TRY(get_int(d, intr, "signal", F_REQ, 1, INT32_MAX, &sig));
        r->interrupted_signal = (int)sig;
        path_pop(d, m);
    }
    const json_t *res;
    TRY(get_arr(d, root, "resumes", F_NULL, &res));
    r->resumes_json = canonical(res);
    TRY(get_strv(d, root, "notes", F_NULL, &r->notes));
    TRY(dec_plan_ref(d, root));
    TRY(dec_devices(d, root));
    TRY(dec_derived_block(d, root, NULL));
    if (d->v1_derived_bad)
        dt_record_derived_clear(r);
    return DT_OK;
}

dt_status dt_record_decode(const char *text, size_t len, const char *what, dt_record **out,
                           dt_err *err) {
    *out = NULL;
    /* scripts/device.sh brings runs back as results.json.gz: say so, not "not valid JSON" */
    if (len >= 2 && (unsigned char)text[0] == 0x1f && (unsigned char)text[1] == 0x8b)
        return dt_fail(err, DT_EINVAL, "%s: gzip-compressed, not JSON: gunzip it first "
                       "(gunzip -k FILE.json.gz gives FILE.json)", what);
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return dt_fail(err, DT_EINVAL, "%s: not valid JSON (line %d, column %d): %s", what,
                       je.line, je.column, je.text);
    dec d;
    memset(&d, 0, sizeof d);
    d.what = what;
    d.err = err;
    d.r = dt_record_new();
    dt_status st = dec_run(&d, root);
    json_decref(root);
    if (st != DT_OK) {
        dt_record_free(d.r);
        return st;
    }
    *out = d.r;
    return DT_OK;
}

/* ======================================================================================
 * Part 2: encoding (format version 2)
 * ====================================================================================== */

/* The encoder's state: the first failure, if any. */
typedef struct enc {
    const dt_record *r;
    dt_err *err;
    dt_status st;
} enc;

static json_t *jnum(double x) { return isfinite(x) ? json_real(x) : json_null(); }
static json_t *jint(int64_t v) { return v == DT_NULL_I64 ? json_null() : json_integer(v); }
static json_t *jbool(int b) { return json_boolean(b); }

/* Sets o[key] = v (v NULL: a failed conversion, e.g. a string that is not UTF-8). */
static void put(enc *e, json_t *o, const char *key, json_t *v) {
    if (v && json_object_set_new(o, key, v) == 0)
        return;
    if (e->st == DT_OK)
        e->st = dt_fail(e->err, DT_EINVAL, "results: \"%.100s\" cannot be encoded (not UTF-8?)",
                        key);
}
static void put_str(enc *e, json_t *o, const char *key, const char *s) {
    put(e, o, key, s ? json_string(s) : json_null());
}
/* Only when set. */
static void put_num_opt(enc *e, json_t *o, const char *key, double x) {
    if (isfinite(x))
        put(e, o, key, json_real(x));
}
static void append(enc *e, json_t *a, json_t *v) {
    if (v && json_array_append_new(a, v) == 0)
        return;
    if (e->st == DT_OK)
        e->st = dt_fail(e->err, DT_EINVAL, "results: an array element cannot be encoded");
}
static json_t *jstrv(enc *e, const dt_strv *sv) {
    json_t *a = json_array();
    for (size_t i = 0; i < sv->n; i++)
        append(e, a, json_string(sv->v[i]));
    return a;
}
/* Parses an embedded canonical text (NULL: null). */
static json_t *jembed(enc *e, const char *text, const char *what) {
    if (!text)
        return json_null();
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v && e->st == DT_OK)
        e->st = dt_fail(e->err, DT_EINVAL, "results: %s is not valid JSON text", what);
    return v ? v : json_null();
}

/* ---- run level ----------------------------------------------------------------------- */

static json_t *enc_tool(enc *e, const dt_tool *t) {
    json_t *o = json_object();
    put_str(e, o, "name", t->name);
    put_str(e, o, "version", t->version);
    put_str(e, o, "git_revision", t->git_revision);
    put(e, o, "git_dirty", t->git_dirty < 0 ? json_null() : jbool(t->git_dirty));
    put_str(e, o, "git_source", t->git_source);
    return o;
}

static json_t *enc_settings(enc *e, const dt_settings *s) {
    json_t *o = json_object(), *ops = json_array();
    put_str(e, o, "backend", s->backend);
    put_str(e, o, "backend_choice", s->backend_choice);
    for (size_t i = 0; i < s->n_operations; i++)
        append(e, ops, json_string(dt_op_get(s->operations[i])->name));
    put(e, o, "operations", ops);
    put(e, o, "samples", jint(s->samples));
    put(e, o, "sample_ms", jnum(s->sample_ms));
    put(e, o, "warmup_ms", jnum(s->warmup_ms));
    put(e, o, "prime", jint(s->prime));
    put(e, o, "rounds", s->rounds > 0 ? json_integer(s->rounds) : json_null());
    put(e, o, "seed", jint(s->seed));
    put(e, o, "input_views", jbool(s->input_views));
    put(e, o, "threads", jint(s->threads));
    put(e, o, "timeout_s", jnum(s->timeout_s));
    put(e, o, "quick", jbool(s->quick));
    put(e, o, "device_timing", jbool(s->device_timing));
    put_str(e, o, "probe_kind", s->probe_kind);
    put(e, o, "held_windows", jbool(s->held_windows));
    if (s->pin >= 0)
        put(e, o, "pin", jbool(s->pin));
    if (s->pin_reason)
        put_str(e, o, "pin_reason", s->pin_reason);
    put(e, o, "capture_sources", jbool(s->capture_sources));
    put(e, o, "max_reps", jint(s->max_reps));
    put(e, o, "device_reps_cap", jint(s->device_reps_cap));
    if (s->inputs)
        put_str(e, o, "inputs", s->inputs);
    if (s->dtypes)
        put_str(e, o, "dtypes", s->dtypes);
    if (s->graph >= 0)
        put(e, o, "graph", jbool(s->graph));
    if (s->cache)
        put_str(e, o, "cache", s->cache);
    json_t *bs = json_object();
    put(e, bs, "resamples", json_integer(s->bootstrap_resamples));
    put(e, bs, "seed", json_integer((json_int_t)s->bootstrap_seed));
    put(e, o, "bootstrap", bs);
    return o;
}

static json_t *enc_frameworks(enc *e) {
    json_t *a = json_array();
    for (size_t i = 0; i < e->r->n_impls; i++) {
        const dt_impl *im = &e->r->impls[i];
        json_t *o = json_object();
        put_str(e, o, "id", im->id);
        put_str(e, o, "role", dt_role_name(im->role));
        put_str(e, o, "framework", im->framework);
        put_str(e, o, "framework_version", im->framework_version);
        put(e, o, "command", jstrv(e, &im->command));
        put(e, o, "hello", jembed(e, im->hello_json, "a framework's hello"));
        if (im->cpus)
            put_str(e, o, "cpus", im->cpus);
        append(e, a, o);
    }
    return a;
}

/* ceilings.flops: only the measured values (> 0) and the method; NULL when not asked. */
static json_t *enc_flop_ceilings(enc *e, const dt_flop_ceilings_rec *f) {
    if (!f->method && !(f->fp32_tflops > 0) && !(f->bf16_tflops > 0) && !(f->fp16_tflops > 0))
        return NULL;
    json_t *o = json_object();
    const struct { const char *key; double v; } val[] = {{"fp32_tflops", f->fp32_tflops},
                                                         {"bf16_tflops", f->bf16_tflops},
                                                         {"fp16_tflops", f->fp16_tflops}};
    for (size_t i = 0; i < sizeof val / sizeof val[0]; i++)
        if (val[i].v > 0)
            put(e, o, val[i].key, jnum(val[i].v));
    if (f->method)
        put_str(e, o, "method", f->method);
    return o;
}

static json_t *enc_ceilings(enc *e, const dt_ceilings_rec *c) {
    json_t *o = json_object();
    json_t *flops = enc_flop_ceilings(e, &c->flops);
    if (flops)
        put(e, o, "flops", flops);
    if (c->error) {
        put_str(e, o, "error", c->error);
        return o;
    }
    put(e, o, "copy_gbps", jnum(c->copy_gbps));
    put(e, o, "copy_bytes", jint(c->copy_bytes));
    put(e, o, "launch_sync_floor_us", jnum(c->launch_sync_floor_us));
    put(e, o, "launch_queue_floor_us", jnum(c->launch_queue_floor_us));
    put_num_opt(e, o, "launch_sync_touch_floor_us", c->launch_sync_touch_floor_us);
    put_num_opt(e, o, "held_floor_batch_us", c->held_floor_batch_us);
    put_num_opt(e, o, "held_floor_single_us", c->held_floor_single_us);
    put_num_opt(e, o, "held_touch_floor_batch_us", c->held_touch_floor_batch_us);
    put_num_opt(e, o, "held_touch_floor_single_us", c->held_touch_floor_single_us);
    put_num_opt(e, o, "copy_gbps_iqr", c->copy_gbps_iqr);
    put_str(e, o, "method", c->method);
    put_str(e, o, "backend", c->backend);
    return o;
}

static json_t *enc_nvml(enc *e, const dt_nvml *n) {
    json_t *o = json_object();
    if (n->has_description) {
        put_str(e, o, "library", n->library);
        put(e, o, "device_index", jint(n->device_index));
        put_str(e, o, "name", n->name);
        put_str(e, o, "uuid", n->uuid);
        put_str(e, o, "driver_version", n->driver_version);
        put_str(e, o, "nvml_version", n->nvml_version);
        put_str(e, o, "pci_bus_id", n->pci_bus_id);
        put(e, o, "pci_bus", jint(n->pci_bus));
    }
    put(e, o, "available", jbool(n->available));
    put_str(e, o, "reason", n->reason);
    return o;
}

static json_t *enc_environment(enc *e, const dt_environment *env) {
    json_t *o = json_object(), *h = json_object();
    put_str(e, h, "cpu", env->host.cpu);
    put(e, h, "cores", jint(env->host.cores));
    put_str(e, h, "os", env->host.os);
    put_str(e, h, "kernel", env->host.kernel);
    put_str(e, h, "machine", env->host.machine);
    put_str(e, h, "hostname", env->host.hostname);
    put(e, o, "host", h);
    put(e, o, "gpu", jembed(e, env->gpu_json, "environment.gpu"));
    put_str(e, o, "python", env->python);
    if (env->orchestrator_cpus)
        put_str(e, o, "orchestrator_cpus", env->orchestrator_cpus);
    if (env->ceilings.present)
        put(e, o, "ceilings", enc_ceilings(e, &env->ceilings));
    if (env->nvml.present)
        put(e, o, "nvml", enc_nvml(e, &env->nvml));
    return o;
}

static json_t *enc_provenance(enc *e, const dt_provenance *p) {
    json_t *o = json_object(), *files = json_array(), *sources = json_array();
    for (size_t i = 0; i < p->n_files; i++) {
        json_t *f = json_object();
        put_str(e, f, "what", p->files[i].what);
        put_str(e, f, "path", p->files[i].path);
        put_str(e, f, "sha256", p->files[i].sha256);
        append(e, files, f);
    }
    for (size_t i = 0; i < p->n_sources; i++) {
        json_t *s = json_object();
        put_str(e, s, "sha256", p->sources[i].sha256);
        put_str(e, s, "name", p->sources[i].name);
        put(e, s, "options", jstrv(e, &p->sources[i].options));
        put_str(e, s, "framework", p->sources[i].framework);
        append(e, sources, s);
    }
    put(e, o, "files", files);
    put(e, o, "sources", sources);
    return o;
}

/* ---- samples ------------------------------------------------------------------------- */

static json_t *enc_triple(const int64_t v[3]) {
    if (v[0] == DT_NULL_I64)
        return json_null();
    return json_pack("[I,I,I]", (json_int_t)v[0], (json_int_t)v[1], (json_int_t)v[2]);
}

static json_t *enc_records(enc *e, const dt_probe_records *rec) {
    json_t *o = json_object(), *launch = json_object(), *rows = json_array();
    put(e, o, "t0_ns", json_integer(rec->t0_ns));
    put(e, o, "names", jstrv(e, &rec->names));
    for (size_t i = 0; i < rec->names.n; i++) {
        json_t *l = json_object();
        put(e, l, "grid", enc_triple(rec->launch[i].grid));
        put(e, l, "block", enc_triple(rec->launch[i].block));
        put(e, launch, rec->names.v[i], l);
    }
    put(e, o, "launch", launch);
    for (size_t i = 0; i < rec->n_rows; i++) {
        const dt_probe_row *pr = &rec->rows[i];
        append(e, rows, json_pack("[I,I,I,o]", (json_int_t)pr->name_index,
                                  (json_int_t)pr->start_ns, (json_int_t)pr->end_ns,
                                  jint(pr->stream_id)));
    }
    put(e, o, "rows", rows);
    return o;
}

static void enc_probe(enc *e, json_t *o, const dt_probe *p) {
    put(e, o, "kernel_sum_us", jnum(p->kernel_sum_us));
    put(e, o, "kernel_span_us", jnum(p->kernel_span_us));
    if (p->kernel_count != DT_NULL_I64)
        put(e, o, "kernel_count", json_integer(p->kernel_count));
    if (p->launch_count != DT_NULL_I64)
        put(e, o, "launch_count", json_integer(p->launch_count));
    put_num_opt(e, o, "clock_offset_ns", p->clock_offset_ns);
    put_num_opt(e, o, "clock_uncertainty_ns", p->clock_uncertainty_ns);
    if (p->has_kernels) {
        json_t *ks = json_array();
        for (size_t i = 0; i < p->n_kernels; i++) {
            json_t *k = json_object();
            put_str(e, k, "name", p->kernels[i].name);
            if (p->kernels[i].count != DT_NULL_I64)
                put(e, k, "count", json_integer(p->kernels[i].count));
            put_num_opt(e, k, "us", p->kernels[i].us);
            append(e, ks, k);
        }
        put(e, o, "kernels", ks);
    }
    if (p->records.present)
        put(e, o, "records", enc_records(e, &p->records));
}

static json_t *enc_samples(enc *e, const dt_samples *s) {
    json_t *a = json_array();
    for (size_t i = 0; i < s->n; i++) {
        const dt_sample *x = &s->v[i];
        json_t *o = json_object();
        put(e, o, "us", jnum(x->us));
        if (x->reps > 0)
            put(e, o, "reps", json_integer(x->reps));
        put(e, o, "round", json_integer(x->round));
        put(e, o, "index", json_integer(x->index));
        put(e, o, "position", json_integer(x->position));
        if (x->has_probe)
            enc_probe(e, o, &x->probe);
        append(e, a, o);
    }
    return a;
}

/* ---- one implementation of a case ----------------------------------------------------- */

static json_t *enc_check(enc *e, const dt_check *c) {
    json_t *o = json_object(), *a = json_object(), *orc = json_object();
    put_str(e, o, "when", c->when);
    put(e, o, "ok", jbool(c->ok));
    put(e, a, "guard_bytes_changed", jint(c->arena.guard_bytes_changed));
    put(e, a, "input_elems_changed", jint(c->arena.input_elems_changed));
    put(e, a, "output_unwritten", jint(c->arena.output_unwritten));
    put(e, a, "output_nonfinite", jint(c->arena.output_nonfinite));
    put_str(e, a, "first_problem", c->arena.first_problem);
    put(e, o, "arena", a);
    const dt_check_oracle *oc = &c->oracle;
    put(e, orc, "ok", jbool(oc->ok));
    put(e, orc, "elements", jint(oc->elements));
    put(e, orc, "failures", jint(oc->failures));
    put(e, orc, "max_abs_error", jnum(oc->max_abs_error));
    put(e, orc, "max_budget_used", jnum(oc->max_budget_used));
    if (oc->has_first_failure) {
        json_t *ff = json_object();
        put(e, ff, "row", jint(oc->first_row));
        put(e, ff, "col", jint(oc->first_col));
        put(e, ff, "value", jnum(oc->first_value));
        put(e, ff, "ref", jnum(oc->first_ref));
        put(e, ff, "bound", jnum(oc->first_bound));
        put_str(e, ff, "text", oc->first_text);
        put(e, orc, "first_failure", ff);
    } else {
        put(e, orc, "first_failure", json_null());
    }
    put(e, o, "oracle", orc);
    return o;
}

static json_t *enc_intervals(enc *e, const dt_decomp_interval *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        append(e, a, json_pack("[I,I]", (json_int_t)v[i].a_ns, (json_int_t)v[i].b_ns));
    return a;
}

/* The impl's "decomposition" (issue 13): raw timestamps per sample, or why none. */
static json_t *enc_decomp(enc *e, const dt_decomp_set *set) {
    json_t *o = json_object(), *arr = json_array();
    for (size_t i = 0; i < set->n; i++) {
        const dt_decomp_raw *x = &set->v[i];
        json_t *s = json_object();
        put(e, s, "round", json_integer(x->round));
        put(e, s, "position", jint(x->position));
        put(e, s, "call_start_ns", json_integer(x->call_start_ns));
        put(e, s, "sync_return_ns", json_integer(x->sync_return_ns));
        put(e, s, "host_call_ns", jnum(x->host_call_ns));
        put(e, s, "clock_offset_ns", jnum(x->clock_offset_ns));
        put(e, s, "clock_uncertainty_ns", jnum(x->clock_uncertainty_ns));
        put(e, s, "clock_source", jint(x->clock_source));
        put(e, s, "launches", enc_intervals(e, x->launches, x->n_launches));
        put(e, s, "kernels", enc_intervals(e, x->kernels, x->n_kernels));
        append(e, arr, s);
    }
    put(e, o, "samples", arr);
    if (set->unavailable)
        put_str(e, o, "unavailable", set->unavailable);
    return o;
}

static json_t *enc_case_impl(enc *e, const dt_case_impl *ci) {
    json_t *o = json_object(), *setup = json_object();
    put_str(e, o, "status", dt_impl_status_name(ci->status));
    put_str(e, o, "error", ci->error);
    put_str(e, o, "stderr_tail", ci->stderr_tail);
    put_str(e, o, "output_policy", ci->output_policy);
    put_str(e, o, "implementation", ci->implementation);
    if (ci->emulated)
        put(e, o, "emulated", jbool(1));
    put_num_opt(e, setup, "compile", ci->setup_ms.compile);
    put_num_opt(e, setup, "alloc", ci->setup_ms.alloc);
    put_num_opt(e, setup, "upload", ci->setup_ms.upload);
    put_num_opt(e, setup, "cold_call", ci->setup_ms.cold_call);
    put_num_opt(e, setup, "download", ci->setup_ms.download);
    put(e, o, "setup_ms", setup);
    if (ci->has_warmup) {
        json_t *w = json_object();
        put(e, w, "ms", jnum(ci->warmup_ms));
        put(e, w, "calls", jint(ci->warmup_calls));
        put(e, o, "warmup", w);
    }
    if (ci->has_calibration) {
        json_t *c = json_object(), *att = json_array();
        for (size_t i = 0; i < ci->n_calib_attempts; i++) {
            json_t *a = json_object();
            put(e, a, "reps", json_integer(ci->calib_attempts[i].reps));
            put(e, a, "us_per_call", jnum(ci->calib_attempts[i].us_per_call));
            append(e, att, a);
        }
        put(e, c, "attempts", att);
        put(e, c, "reps", jint(ci->calib_reps));
        put(e, o, "calibration", c);
    }
    json_t *checks = json_array();
    for (size_t i = 0; i < ci->n_checks; i++)
        append(e, checks, enc_check(e, &ci->checks[i]));
    put(e, o, "checks", checks);
    put_str(e, o, "output_sha256", ci->output_sha256);
    json_t *samples = json_object();
    for (int s = 0; s < DT_SCOPE_COUNT; s++)
        if (ci->samples[s].n > 0)
            put(e, samples, dt_scope_name((dt_scope)s), enc_samples(e, &ci->samples[s]));
    put(e, o, "samples", samples);
    put(e, o, "sources", jstrv(e, &ci->sources));
    if (ci->probe_kind)
        put_str(e, o, "probe_kind", ci->probe_kind);
    if (isfinite(ci->pilot_poc_concurrent) || isfinite(ci->pilot_poc_serialized)) {
        json_t *p = json_object();
        put(e, p, "concurrent", jnum(ci->pilot_poc_concurrent));
        put(e, p, "serialized", jnum(ci->pilot_poc_serialized));
        put(e, o, "pilot_probe_over_control", p);
    }
    if (ci->has_energy) {
        json_t *en = json_object();
        put(e, en, "j_per_call", jnum(ci->energy_j_per_call));
        put(e, en, "avg_power_w", jnum(ci->avg_power_w));
        put_num_opt(e, en, "joules", ci->energy_j);
        put_num_opt(e, en, "window_s", ci->energy_window_s);
        if (ci->energy_calls > 0)
            put(e, en, "calls", json_integer(ci->energy_calls));
        if (ci->energy_reason)
            put_str(e, en, "reason", ci->energy_reason);
        put(e, o, "energy", en);
    }
    if (ci->decomp.n > 0 || ci->decomp.unavailable)
        put(e, o, "decomposition", enc_decomp(e, &ci->decomp));
    if (ci->graph_unavailable)
        put_str(e, o, "graph_unavailable", ci->graph_unavailable);
    if (ci->cache.present) {
        json_t *ca = json_object();
        put(e, ca, "copies", jint(ci->cache.copies));
        put(e, ca, "copy_bytes", jint(ci->cache.copy_bytes));
        put(e, ca, "l2_bytes", jint(ci->cache.l2_bytes));
        put(e, ca, "flush_bytes", jint(ci->cache.flush_bytes));
        if (ci->cache.warm_reason)
            put_str(e, ca, "warm_reason", ci->cache.warm_reason);
        put(e, o, "cache", ca);
    }
    if (ci->cheat.present) {
        json_t *ac = json_object(), *ck = json_object();
        put(e, ac, "sample_checks", json_integer(ci->cheat.sample_checks));
        put(e, ac, "input_sets", json_integer(ci->cheat.input_sets));
        if (ci->cheat.digest_checks > 0)
            put(e, ac, "digest_checks", json_integer(ci->cheat.digest_checks));
        for (int k = 0; k < DT_CHEAT_COUNT; k++) {
            const dt_cheat_result *cz = &ci->cheat.check[k];
            if (cz->status == DT_CHEAT_UNSET)
                continue;
            json_t *one = json_object();
            put_str(e, one, "status", dt_cheat_status_name(cz->status));
            put_str(e, one, "note", cz->note);
            put(e, ck, dt_cheat_check_name((dt_cheat_check)k), one);
        }
        put(e, ac, "checks", ck);
        put(e, o, "anti_cheat", ac);
    }
    return o;
}

/* ---- clocks, floor, derived ----------------------------------------------------------- */

static json_t *enc_snapshot(enc *e, int has, const dt_clock_snapshot *s) {
    if (!has)
        return json_null();
    json_t *o = json_object();
    put(e, o, "sm_mhz", jint(s->sm_mhz));
    put(e, o, "mem_mhz", jint(s->mem_mhz));
    put(e, o, "temp_c", jint(s->temp_c));
    put(e, o, "power_w", jnum(s->power_w));
    put(e, o, "throttle_reasons", s->has_throttle ? jstrv(e, &s->throttle_reasons) : json_null());
    put(e, o, "throttle_mask",
        s->has_throttle ? json_integer((json_int_t)s->throttle_mask) : json_null());
    put(e, o, "pstate", jint(s->pstate));
    return o;
}

/* {"round", "before", "after", "moved", "why"} of one round; with_round 0 leaves out
 * "round" (the summary puts it after "why"). */
static void enc_clock_fields(enc *e, json_t *o, const dt_clock_round *cr, int with_round) {
    if (with_round)
        put(e, o, "round", json_integer(cr->round));
    put(e, o, "before", enc_snapshot(e, cr->has_before, &cr->before));
    put(e, o, "after", enc_snapshot(e, cr->has_after, &cr->after));
    put(e, o, "moved", jbool(cr->moved));
    put_str(e, o, "why", cr->why ? cr->why : "");
}

static json_t *enc_clocks(enc *e, const dt_case *c) {
    json_t *o = json_object(), *rounds = json_array();
    const dt_clock_round *shown = dt_case_clock_shown(c);
    size_t nmoved = 0;
    for (size_t i = 0; i < c->n_clock_rounds; i++) {
        json_t *ro = json_object();
        enc_clock_fields(e, ro, &c->clock_rounds[i], 1);
        append(e, rounds, ro);
        nmoved += c->clock_rounds[i].moved != 0;
    }
    enc_clock_fields(e, o, shown, 0);
    put(e, o, "round", json_integer(shown->round));
    put(e, o, "rounds_moved", json_integer((json_int_t)nmoved));
    put(e, o, "rounds", rounds);
    return o;
}

static json_t *enc_ratio(enc *e, const dt_rec_ratio *r) {
    json_t *o = json_object();
    put(e, o, "median", jnum(r->median));
    put(e, o, "ci_low", jnum(r->ci_low));
    put(e, o, "ci_high", jnum(r->ci_high));
    put(e, o, "pairs", json_integer((json_int_t)r->pairs));
    if (r->skipped_pairs)
        put(e, o, "skipped_pairs", json_integer((json_int_t)r->skipped_pairs));
    return o;
}

static json_t *enc_summary(enc *e, const dt_rec_summary *s) {
    json_t *o = json_object();
    put(e, o, "n", json_integer((json_int_t)s->n));
    if (s->n == 0)
        return o;
    put(e, o, "p50", jnum(s->p50));
    put(e, o, "p90", jnum(s->p90));
    put(e, o, "min", jnum(s->min));
    put(e, o, "max", jnum(s->max));
    put(e, o, "iqr", jnum(s->iqr));
    return o;
}

static json_t *enc_probe_summary(enc *e, const dt_probe_summary *p) {
    json_t *o = json_object(), *ks = json_array();
    put(e, o, "kernel_sum_us_p50", jnum(p->kernel_sum_us_p50));
    put(e, o, "kernel_span_us_p50", jnum(p->kernel_span_us_p50));
    put(e, o, "kernels_per_call_p50", jnum(p->kernels_per_call_p50));
    for (size_t i = 0; i < p->n_kernels; i++) {
        json_t *k = json_object();
        put_str(e, k, "name", p->kernels[i].name);
        put(e, k, "per_call_p50", jnum(p->kernels[i].per_call_p50));
        put(e, k, "us_p50", jnum(p->kernels[i].us_p50));
        append(e, ks, k);
    }
    put(e, o, "kernels", ks);
    return o;
}

static json_t *enc_scope(enc *e, const dt_scope_derived *sd) {
    const dt_record *r = e->r;
    json_t *o = json_object(), *noise = json_object(), *poc = json_object();
    json_t *probe = json_object(), *vs = json_object();
    for (size_t i = 0; i < r->n_impls; i++) {
        const dt_scope_impl *si = &sd->impl[i];
        put(e, o, r->impls[i].id, enc_summary(e, &si->summary));
        put(e, noise, r->impls[i].id, jnum(si->noise));
        if (si->has_probe_over_control) {
            json_t *p = json_object();
            put(e, p, "median", jnum(si->probe_over_control));
            put(e, p, "pairs", json_integer((json_int_t)si->probe_over_control_pairs));
            put(e, poc, r->impls[i].id, p);
        }
        if (si->probe.present)
            put(e, probe, r->impls[i].id, enc_probe_summary(e, &si->probe));
        if (i > 0 && sd->vs[i].present) {
            json_t *v = json_object();
            if (sd->vs[i].has_ratio)
                put(e, v, "ratio", enc_ratio(e, &sd->vs[i].ratio));
            put_str(e, v, "verdict", dt_rec_verdict_name(sd->vs[i].verdict));
            if (sd->vs[i].process_band > 0)
                put(e, v, "process_band", jnum(sd->vs[i].process_band));
            put(e, vs, r->impls[i].id, v);
        }
    }
    put(e, o, "noise", noise);
    if (json_object_size(poc))
        put(e, o, "probe_over_control", poc);
    else
        json_decref(poc);
    if (json_object_size(probe))
        put(e, o, "probe", probe);
    else
        json_decref(probe);
    put(e, o, "vs_baseline", vs);
    return o;
}

static json_t *enc_roofline(enc *e, const dt_roofline *rf) {
    json_t *o = json_object(), *impl = json_object();
    put(e, o, "min_bytes", jnum(rf->min_bytes));
    put(e, o, "flops", jnum(rf->flops));
    put_str(e, o, "bound", dt_bound_name(rf->bound));
    put(e, o, "copy_gbps", jnum(rf->copy_gbps));
    put_num_opt(e, o, "flop_tflops", rf->flop_tflops);
    for (size_t i = 0; i < e->r->n_impls; i++) {
        const dt_roofline_impl *ri = &rf->impl[i];
        if (!ri->present)
            continue;
        json_t *x = json_object();
        put_str(e, x, "scope", dt_scope_name(ri->scope));
        put(e, x, "us", jnum(ri->us));
        put(e, x, "gbps", jnum(ri->gbps));
        put_num_opt(e, x, "copy_pct", ri->copy_pct);
        put(e, x, "tflops", jnum(ri->tflops));
        put_num_opt(e, x, "flop_pct", ri->flop_pct);
        put(e, impl, e->r->impls[i].id, x);
    }
    put(e, o, "impl", impl);
    return o;
}

static json_t *enc_e2e_floor(enc *e, const dt_e2e_floor *ef) {
    json_t *o = json_object(), *impl = json_object();
    put(e, o, "floor_us", jnum(ef->floor_us));
    put_str(e, o, "floor_source", dt_floor_source_name(ef->source));
    put_num_opt(e, o, "case_floor_us", ef->case_floor_us);
    put_num_opt(e, o, "touch_floor_us", ef->touch_floor_us);
    for (size_t i = 0; i < e->r->n_impls; i++) {
        const dt_e2e_floor_impl *fi = &ef->impl[i];
        if (!fi->present)
            continue;
        json_t *x = json_object();
        put(e, x, "single_us", jnum(fi->single_us));
        put_num_opt(e, x, "over_floor", fi->over_floor);
        if (fi->has_over_floor_ratio)
            put(e, x, "over_floor_ratio", enc_ratio(e, &fi->over_floor_ratio));
        put_num_opt(e, x, "over_touch_floor", fi->over_touch_floor);
        put(e, impl, e->r->impls[i].id, x);
    }
    put(e, o, "impl", impl);
    return o;
}

static json_t *enc_held_floor(enc *e, const dt_held_floor *hf) {
    json_t *o = json_object(), *impl = json_object();
    put(e, o, "touch_floor_us", jnum(hf->touch_floor_us));
    for (size_t i = 0; i < e->r->n_impls; i++) {
        const dt_held_floor_impl *hi = &hf->impl[i];
        if (!hi->present)
            continue;
        json_t *x = json_object();
        put(e, x, "control_batch_us", jnum(hi->control_batch_us));
        put(e, x, "kernels_per_call", jnum(hi->kernels_per_call));
        put(e, x, "kernels_from_probe", jbool(hi->kernels_from_probe));
        put(e, x, "over_touch_floor", jnum(hi->over_touch_floor));
        put(e, impl, e->r->impls[i].id, x);
    }
    put(e, o, "impl", impl);
    return o;
}

static json_t *enc_case_derived(enc *e, const dt_case_derived *cd) {
    json_t *o = json_object(), *scopes = json_object();
    for (int s = 0; s < DT_SCOPE_COUNT; s++)
        if (cd->scopes[s].present)
            put(e, scopes, dt_scope_name((dt_scope)s), enc_scope(e, &cd->scopes[s]));
    put(e, o, "scopes", scopes);
    if (cd->roofline.present)
        put(e, o, "roofline", enc_roofline(e, &cd->roofline));
    if (cd->e2e_floor.present)
        put(e, o, "e2e_floor", enc_e2e_floor(e, &cd->e2e_floor));
    if (cd->held_floor.present)
        put(e, o, "held_floor", enc_held_floor(e, &cd->held_floor));
    return o;
}

/* ---- a case, the run ------------------------------------------------------------------ */

static json_t *enc_case(enc *e, const dt_case *c) {
    const dt_record *r = e->r;
    json_t *o = json_object(), *tol = json_object(), *inputs = json_array();
    put_str(e, o, "id", c->id);
    put_str(e, o, "op", dt_op_get(c->op)->name);
    put_str(e, o, "dtype", dt_elem_type_name(c->dtype));
    put(e, o, "m", json_integer(c->m));
    put(e, o, "n", json_integer(c->n));
    put(e, o, "k", json_integer(c->k));
    put(e, o, "views", jbool(c->views));
    put_str(e, o, "backend", c->backend);
    put(e, o, "valid", jbool(c->valid));
    put(e, tol, "atol", jnum(c->atol));
    put(e, tol, "rtol", jnum(c->rtol));
    put_str(e, tol, "scale", c->tol_scale);
    put(e, o, "tolerance", tol);
    for (size_t i = 0; i < c->n_inputs; i++) {
        json_t *in = json_object();
        put_str(e, in, "name", c->inputs[i].name);
        put_str(e, in, "sha256", c->inputs[i].sha256);
        put(e, in, "rows", jint(c->inputs[i].rows));
        put(e, in, "cols", jint(c->inputs[i].cols));
        append(e, inputs, in);
    }
    put(e, o, "inputs", inputs);
    json_t *rd = json_array();
    for (size_t i = 0; i < c->n_rounds_done; i++)
        append(e, rd, json_integer(c->rounds_done[i]));
    put(e, o, "rounds_done", rd);
    json_t *impl = json_object();
    for (size_t i = 0; i < r->n_impls; i++)
        if (c->impl[i].present)
            put(e, impl, r->impls[i].id, enc_case_impl(e, &c->impl[i]));
    put(e, o, "impl", impl);
    if (c->n_clock_rounds) {
        put(e, o, "clocks", enc_clocks(e, c));
        put(e, o, "clocks_moved", jbool(c->clocks_moved));
    }
    if (c->floor_impl >= 0) {
        json_t *fl = json_object();
        put_str(e, fl, "worker", r->impls[c->floor_impl].id);
        put(e, fl, "samples", enc_samples(e, &c->floor));
        put(e, o, "floor", fl);
    }
    if (c->derived.present)
        put(e, o, "derived", enc_case_derived(e, &c->derived));
    if (c->shard != DT_NULL_I64)
        put(e, o, "shard", json_integer(c->shard));
    if (c->host)
        put_str(e, o, "host", c->host);
    if (c->device != DT_NULL_I64) {
        json_t *dv = json_object();
        put(e, dv, "index", json_integer(c->device));
        put_str(e, dv, "name", c->device_name);
        put_str(e, dv, "uuid", c->device_uuid);
        put(e, o, "device", dv);
    }
    return o;
}

/* "devices" of a --devices run. */
static json_t *enc_devices(enc *e, const dt_record *r) {
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_devices; i++) {
        const dt_device_rec *v = &r->devices[i];
        json_t *o = json_object();
        put(e, o, "index", jint(v->index));
        put_str(e, o, "name", v->name);
        put_str(e, o, "uuid", v->uuid);
        put_str(e, o, "pci_bus_id", v->pci_bus_id);
        put(e, o, "shard", jint(v->shard));
        put_str(e, o, "cpus", v->cpus);
        put_str(e, o, "dir", v->dir);
        put_str(e, o, "started_at", v->started_at);
        put_str(e, o, "finished_at", v->finished_at);
        put(e, o, "exit_status", jint(v->exit_status));
        put(e, o, "cases", jint(v->cases));
        put(e, o, "valid", jint(v->valid));
        if (v->ceilings.present)
            put(e, o, "ceilings", enc_ceilings(e, &v->ceilings));
        append(e, a, o);
    }
    return a;
}

/* "replicas" (--replicate). */
static json_t *enc_replicas(enc *e, const dt_record *r) {
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_replicas; i++) {
        const dt_replica_rec *q = &r->replicas[i];
        json_t *o = json_object(), *us = json_array();
        put_str(e, o, "case", q->case_id);
        put_str(e, o, "impl", q->impl_id);
        put_str(e, o, "scope", dt_scope_name(q->scope));
        for (size_t j = 0; j < q->n_us; j++)
            append(e, us, jnum(q->us[j]));
        put(e, o, "us", us);
        put(e, o, "spread", jnum(q->spread));
        append(e, a, o);
    }
    return a;
}

static json_t *enc_policy(enc *e, const dt_policy *p) {
    json_t *o = json_object();
#define NUM(key) put(e, o, #key, json_real(p->key))
#define INT(key) put(e, o, #key, json_integer((json_int_t)p->key))
    NUM(equiv_low);
    NUM(equiv_high);
    INT(min_pairs_interval);
    NUM(ci_level);
    INT(bootstrap_resamples);
    INT(bootstrap_seed);
    NUM(max_noise);
    NUM(probe_low);
    NUM(probe_high);
    INT(min_samples);
    INT(min_rounds);
    INT(small_case_max_elems);
    INT(max_reasons);
    NUM(clocks_sm_tolerance);
    NUM(clocks_max_temp_rise_c);
    NUM(compare_threshold);
    INT(compare_min_samples);
#undef NUM
#undef INT
    return o;
}

static json_t *enc_run_derived(enc *e, const dt_run_derived *d) {
    json_t *o = json_object(), *as = json_object(), *counts = json_object();
    put(e, o, "policy", enc_policy(e, &d->policy));
    put_str(e, as, "level", dt_level_name(d->level));
    put(e, as, "reasons", jstrv(e, &d->reasons));
    put(e, as, "summary", jstrv(e, &d->summary));
    json_t *scopes = json_object();
    for (int s = 0; s < DT_SCOPE_COUNT; s++) {
        const dt_scope_assessment *sa = &d->scopes[s];
        if (!sa->present)
            continue;
        json_t *so = json_object();
        put_str(e, so, "level", dt_level_name(sa->level));
        put(e, so, "reasons", jstrv(e, &sa->reasons));
        put(e, scopes, dt_scope_name((dt_scope)s), so);
    }
    put(e, as, "scopes", scopes);
    put(e, o, "assessment", as);
    put(e, counts, "cases", json_integer((json_int_t)d->n_cases));
    put(e, counts, "valid", json_integer((json_int_t)d->n_valid));
    json_t *vs = json_object();
    for (size_t i = 1; i < e->r->n_impls; i++) {
        json_t *v = json_object();
        for (int q = 0; q < DT_REC_VERDICT_COUNT; q++)
            put(e, v, dt_rec_verdict_name((dt_rec_verdict)q),
                json_integer((json_int_t)d->vs[i].n[q]));
        put(e, vs, e->r->impls[i].id, v);
    }
    put(e, counts, "vs_baseline", vs);
    put(e, o, "counts", counts);
    return o;
}

/* skip_cases: "cases" written as [] (dt_record_encode_without_cases). */
static json_t *enc_run(enc *e, int skip_cases) {
    const dt_record *r = e->r;
    json_t *o = json_object();
    put_str(e, o, "format", DT_RECORD_FORMAT);
    put(e, o, "format_version", json_integer(DT_RECORD_FORMAT_VERSION));
    put(e, o, "complete", jbool(r->complete));
    put(e, o, "tool", enc_tool(e, &r->tool));
    put(e, o, "command_line", jstrv(e, &r->command_line));
    put_str(e, o, "started_at", r->started_at);
    put_str(e, o, "finished_at", r->finished_at);
    put(e, o, "settings", enc_settings(e, &r->settings));
    put(e, o, "frameworks", enc_frameworks(e));
    put(e, o, "environment", enc_environment(e, &r->env));
    put(e, o, "provenance", enc_provenance(e, &r->prov));
    json_t *cases = json_array();
    for (size_t i = 0; !skip_cases && i < r->n_cases; i++)
        append(e, cases, enc_case(e, &r->cases[i]));
    put(e, o, "cases", cases);
    if (r->floor_unavailable)
        put_str(e, o, "floor_unavailable", r->floor_unavailable);
    if (r->interrupted_signal) {
        json_t *in = json_object();
        put(e, in, "signal", json_integer(r->interrupted_signal));
        put(e, o, "interrupted", in);
    }
    if (r->resumes_json)
        put(e, o, "resumes", jembed(e, r->resumes_json, "resumes"));
    if (r->notes.n)
        put(e, o, "notes", jstrv(e, &r->notes));
    if (r->plan.present) {
        json_t *p = json_object();
        put_str(e, p, "id", r->plan.plan_id);
        put(e, p, "shards", json_integer(r->plan.count));
        put(e, p, "shard", jint(r->plan.index));
        put(e, o, "plan", p);
    }
    if (r->shards_json)
        put(e, o, "shards", jembed(e, r->shards_json, "shards"));
    if (r->n_devices)
        put(e, o, "devices", enc_devices(e, r));
    if (r->n_replicas)
        put(e, o, "replicas", enc_replicas(e, r));
    if (r->derived.present)
        put(e, o, "derived", enc_run_derived(e, &r->derived));
    return o;
}

/* Invariants the encoder relies on: impls[0] the only baseline, ids unique. */
static dt_status check_invariants(const dt_record *r, dt_err *err) {
    if (r->n_impls < 1 || r->impls[0].role != DT_ROLE_BASELINE)
        return dt_fail(err, DT_EINVAL, "results: impls[0] must be the baseline");
    for (size_t i = 1; i < r->n_impls; i++) {
        if (r->impls[i].role != DT_ROLE_CANDIDATE)
            return dt_fail(err, DT_EINVAL, "results: impls[%zu] (%s) must be a candidate", i,
                           r->impls[i].id);
        for (size_t j = 0; j < i; j++)
            if (strcmp(r->impls[i].id, r->impls[j].id) == 0)
                return dt_fail(err, DT_EINVAL, "results: impl id \"%s\" repeats", r->impls[i].id);
    }
    for (size_t i = 0; i < r->n_cases; i++)
        if (r->cases[i].floor_impl >= (int)r->n_impls)
            return dt_fail(err, DT_EINVAL, "results: cases[%zu].floor_impl out of range", i);
    return DT_OK;
}

/* ======================================================================================
 * Part 3: entry points
 * ====================================================================================== */

/* dt_record_encode, or (skip_cases) dt_record_encode_without_cases. */
static dt_status encode_root(const dt_record *r, int skip_cases, char **text, size_t *len,
                             dt_err *err) {
    *text = NULL;
    *len = 0;
    TRY(check_invariants(r, err));
    enc e = {r, err, DT_OK};
    json_t *root = enc_run(&e, skip_cases);
    if (e.st != DT_OK) {
        json_decref(root);
        return e.st;
    }
    char *t = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(root);
    if (!t)
        return dt_fail(err, DT_EINVAL, "results: cannot be serialized");
    size_t n = strlen(t);
    char *out = realloc(t, n + 2);
    DT_ASSERT(out);
    out[n++] = '\n';
    out[n] = 0;
    *text = out;
    *len = n;
    return DT_OK;
}

dt_status dt_record_encode(const dt_record *r, char **text, size_t *len, dt_err *err) {
    return encode_root(r, 0, text, len, err);
}

dt_status dt_record_encode_without_cases(const dt_record *r, char **text, size_t *len,
                                         dt_err *err) {
    return encode_root(r, 1, text, len, err);
}

dt_status dt_record_encode_case(const dt_record *r, size_t i, char **text, size_t *len,
                                dt_err *err) {
    *text = NULL;
    *len = 0;
    DT_ASSERT(i < r->n_cases);
    if (r->cases[i].floor_impl >= (int)r->n_impls)
        return dt_fail(err, DT_EINVAL, "results: cases[%zu].floor_impl out of range", i);
    enc e = {r, err, DT_OK};
    json_t *o = enc_case(&e, &r->cases[i]);
    char *t = e.st == DT_OK ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                                JSON_REAL_PRECISION(17))
                            : NULL;
    json_decref(o);
    if (e.st != DT_OK)
        return e.st;
    if (!t)
        return dt_fail(err, DT_EINVAL, "results: cases[%zu] cannot be serialized", i);
    *text = t;
    *len = strlen(t);
    return DT_OK;
}

dt_status dt_record_load(const char *path, dt_record **out, dt_err *err) {
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    TRY(dt_file_read(path, DT_RECORD_MAX_BYTES, "results.json", &text, &len, err));
    dt_status st = dt_record_decode(text, len, path, out, err);
    free(text);
    return st;
}

dt_status dt_record_save(const dt_record *r, const char *path, dt_err *err) {
    char *text = NULL;
    size_t len = 0;
    dt_status st = dt_record_encode(r, &text, &len, err);
    if (st == DT_OK)
        st = dt_file_write_atomic(path, text, len, err);
    free(text);
    return st;
}

/* One entry per shard record: its index, host, times and environment (a merged run's
 * "shards"), as canonical JSON array text. */
dt_status dt_record_shards_json(const dt_record *const *shards, size_t n, char **text,
                                dt_err *err) {
    *text = NULL;
    json_t *a = json_array();
    dt_status st = DT_OK;
    for (size_t i = 0; i < n && st == DT_OK; i++) {
        const dt_record *r = shards[i];
        enc e = {r, err, DT_OK};
        json_t *o = json_object();
        put(&e, o, "shard", jint(r->plan.index));
        put_str(&e, o, "host", r->env.host.hostname);
        put_str(&e, o, "started_at", r->started_at);
        put_str(&e, o, "finished_at", r->finished_at);
        put(&e, o, "command_line", jstrv(&e, &r->command_line));
        put(&e, o, "environment", enc_environment(&e, &r->env));
        append(&e, a, o);
        st = e.st;
    }
    if (st == DT_OK)
        *text = canonical(a);
    json_decref(a);
    return st;
}
