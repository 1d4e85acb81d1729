/* dt_results_io.c — results.json: strict loading with precise errors, atomic writes,
 * and `dualtime report` (regenerate results.md). Contract in dt_results_io.h. */
#define _GNU_SOURCE
#include "report/dt_results_io.h"

#include "report/dt_derive.h"
#include "report/dt_report_md.h"
#include "report/dt_plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Field checks; `where` is the JSON path of the containing object. */
static dt_status want(const json_t *v, int ok, const char *what, const char *expected,
                      const char *where, const char *key, dt_err *err) {
    if (ok)
        return DT_OK;
    return dt_fail(err, DT_EINVAL, "%s: %s%s%s must be %s, found %s", what, where,
                   *where ? "." : "", key, expected, type_name(v));
}

#define CHECK(expr)                                                                          \
    do {                                                                                     \
        dt_status st_ = (expr);                                                              \
        if (st_ != DT_OK)                                                                    \
            return st_;                                                                      \
    } while (0)

static dt_status want_string(const json_t *o, const char *key, const char *what,
                             const char *where, dt_err *err) {
    const json_t *v = json_object_get(o, key);
    return want(v, json_is_string(v) && json_string_length(v) > 0, what, "a non-empty string",
                where, key, err);
}

static dt_status want_nonneg_number(const json_t *o, const char *key, int required,
                                    const char *what, const char *where, dt_err *err) {
    const json_t *v = json_object_get(o, key);
    if (!v && !required)
        return DT_OK;
    CHECK(want(v, json_is_number(v), what, "a number", where, key, err));
    double x = json_number_value(v);
    if (!isfinite(x) || x < 0)
        return dt_fail(err, DT_EINVAL, "%s: %s.%s must be finite and >= 0, found %g", what,
                       where, key, x);
    return DT_OK;
}

static dt_status want_nonneg_int(const json_t *o, const char *key, int required,
                                 const char *what, const char *where, dt_err *err) {
    const json_t *v = json_object_get(o, key);
    if (!v && !required)
        return DT_OK;
    CHECK(want(v, json_is_integer(v) && json_integer_value(v) >= 0, what,
               "an integer >= 0", where, key, err));
    return DT_OK;
}

static dt_status check_sample(const json_t *s, int device, const char *what, const char *where,
                              dt_err *err) {
    if (!json_is_object(s))
        return dt_fail(err, DT_EINVAL, "%s: %s must be an object, found %s", what, where,
                       type_name(s));
    CHECK(want_nonneg_number(s, "us", 1, what, where, err));
    CHECK(want_nonneg_int(s, "round", 1, what, where, err));
    CHECK(want_nonneg_int(s, "index", 1, what, where, err));
    CHECK(want_nonneg_int(s, "position", 1, what, where, err));
    const json_t *reps = json_object_get(s, "reps");
    if (reps)
        CHECK(want(reps, json_is_integer(reps) && json_integer_value(reps) >= 1, what,
                   "an integer >= 1", where, "reps", err));
    if (!device)
        return DT_OK;
    CHECK(want_nonneg_number(s, "kernel_sum_us", 0, what, where, err));
    CHECK(want_nonneg_number(s, "kernel_span_us", 0, what, where, err));
    CHECK(want_nonneg_int(s, "kernel_count", 0, what, where, err));
    const json_t *ks = json_object_get(s, "kernels");
    if (!ks)
        return DT_OK;
    CHECK(want(ks, json_is_array(ks), what, "an array", where, "kernels", err));
    size_t i;
    json_t *k;
    char kw[512];
    json_array_foreach(ks, i, k) {
        snprintf(kw, sizeof kw, "%.480s.kernels[%zu]", where, i);
        if (!json_is_object(k))
            return dt_fail(err, DT_EINVAL, "%s: %s must be an object, found %s", what, kw,
                           type_name(k));
        CHECK(want_string(k, "name", what, kw, err));
        CHECK(want_nonneg_number(k, "count", 0, what, kw, err));
        CHECK(want_nonneg_number(k, "us", 0, what, kw, err));
    }
    return DT_OK;
}

static dt_status check_impl(const json_t *impl, const char *what, const char *where,
                            dt_err *err) {
    if (!json_is_object(impl))
        return dt_fail(err, DT_EINVAL, "%s: %s must be an object, found %s", what, where,
                       type_name(impl));
    const json_t *st = json_object_get(impl, "status");
    if (st)
        CHECK(want(st, json_is_string(st), what, "a string", where, "status", err));
    const json_t *samples = json_object_get(impl, "samples");
    if (!samples || json_is_null(samples))
        return DT_OK;
    CHECK(want(samples, json_is_object(samples), what, "an object", where, "samples", err));
    const char *scope;
    json_t *arr;
    char sw[400];
    json_object_foreach((json_t *)samples, scope, arr) {
        snprintf(sw, sizeof sw, "%.380s.samples", where);
        CHECK(want(arr, json_is_array(arr), what, "an array", sw, scope, err));
        int device = strncmp(scope, "e2e_", 4) != 0;
        size_t i, j;
        json_t *s;
        json_array_foreach(arr, i, s) {
            char w[512];
            snprintf(w, sizeof w, "%s.samples.%s[%zu]", where, scope, i);
            CHECK(check_sample(s, device, what, w, err));
            json_int_t r = json_integer_value(json_object_get(s, "round"));
            json_int_t x = json_integer_value(json_object_get(s, "index"));
            for (j = 0; j < i; j++) {
                const json_t *p = json_array_get(arr, j);
                if (json_integer_value(json_object_get(p, "round")) == r &&
                    json_integer_value(json_object_get(p, "index")) == x)
                    return dt_fail(err, DT_EINVAL,
                                   "%s: %s repeats round %lld index %lld of sample [%zu]", what,
                                   w, (long long)r, (long long)x, j);
            }
        }
    }
    return DT_OK;
}

dt_status dt_results_validate(const json_t *r, const char *what, dt_err *err) {
    if (!json_is_object(r))
        return dt_fail(err, DT_EINVAL, "%s: the top level must be a JSON object, found %s", what,
                       type_name(r));
    const json_t *fmt = json_object_get(r, "format");
    if (!json_is_string(fmt))
        return dt_fail(err, DT_EINVAL, "%s: not a dualtime results file (no \"format\" string)",
                       what);
    if (strcmp(json_string_value(fmt), DT_RESULTS_FORMAT) != 0)
        return dt_fail(err, DT_EINVAL, "%s: format is \"%s\", expected \"%s\"", what,
                       json_string_value(fmt), DT_RESULTS_FORMAT);
    const json_t *ver = json_object_get(r, "format_version");
    CHECK(want(ver, json_is_integer(ver), what, "an integer", "", "format_version", err));
    if (json_integer_value(ver) != DT_RESULTS_FORMAT_VERSION)
        return dt_fail(err, DT_EINVAL, "%s: unsupported format_version %lld (this build reads %d)",
                       what, (long long)json_integer_value(ver), DT_RESULTS_FORMAT_VERSION);
    const json_t *complete = json_object_get(r, "complete");
    if (complete)
        CHECK(want(complete, json_is_boolean(complete), what, "a boolean", "", "complete", err));
    const json_t *settings = json_object_get(r, "settings");
    if (settings) {
        CHECK(want(settings, json_is_object(settings), what, "an object", "", "settings", err));
        const json_t *bs = json_object_get(settings, "bootstrap");
        if (bs) {
            CHECK(want(bs, json_is_object(bs), what, "an object", "settings", "bootstrap", err));
            const json_t *rs = json_object_get(bs, "resamples");
            if (rs)
                CHECK(want(rs, json_is_integer(rs) && json_integer_value(rs) >= 1 &&
                                   json_integer_value(rs) <= 1000000,
                           what, "an integer in [1, 1000000]", "settings.bootstrap", "resamples",
                           err));
            const json_t *sd = json_object_get(bs, "seed");
            if (sd)
                CHECK(want(sd, json_is_integer(sd), what, "an integer", "settings.bootstrap",
                           "seed", err));
        }
        const json_t *rounds = json_object_get(settings, "rounds");
        if (rounds)
            CHECK(want(rounds, json_is_integer(rounds), what, "an integer", "settings", "rounds",
                       err));
    }

    const json_t *fws = json_object_get(r, "frameworks");
    CHECK(want(fws, json_is_array(fws), what, "an array", "", "frameworks", err));
    size_t i, ncand = 0, nbase = 0;
    json_t *fw;
    char w[256];
    json_array_foreach(fws, i, fw) {
        snprintf(w, sizeof w, "frameworks[%zu]", i);
        if (!json_is_object(fw))
            return dt_fail(err, DT_EINVAL, "%s: %s must be an object, found %s", what, w,
                           type_name(fw));
        CHECK(want_string(fw, "id", what, w, err));
        CHECK(want_string(fw, "role", what, w, err));
        const char *role = json_string_value(json_object_get(fw, "role"));
        if (strcmp(role, "candidate") == 0)
            ncand++;
        else if (strcmp(role, "baseline") == 0)
            nbase++;
        else
            return dt_fail(err, DT_EINVAL,
                           "%s: %s.role is \"%s\", expected \"candidate\" or \"baseline\"", what,
                           w, role);
    }
    if (ncand != 1 || nbase != 1)
        return dt_fail(err, DT_EINVAL,
                       "%s: frameworks must hold exactly one candidate and one baseline, found "
                       "%zu candidate(s) and %zu baseline(s)", what, ncand, nbase);
    const char *cand, *base;
    CHECK(dt_derive_roles(r, &cand, &base, err));

    const json_t *cases = json_object_get(r, "cases");
    CHECK(want(cases, json_is_array(cases), what, "an array", "", "cases", err));
    json_t *c;
    json_array_foreach(cases, i, c) {
        snprintf(w, sizeof w, "cases[%zu]", i);
        if (!json_is_object(c))
            return dt_fail(err, DT_EINVAL, "%s: %s must be an object, found %s", what, w,
                           type_name(c));
        CHECK(want_string(c, "id", what, w, err));
        CHECK(want_string(c, "op", what, w, err));
        const json_t *valid = json_object_get(c, "valid");
        CHECK(want(valid, json_is_boolean(valid), what, "a boolean", w, "valid", err));
        const char *id = json_string_value(json_object_get(c, "id"));
        snprintf(w, sizeof w, "cases[%zu] (%s)", i, id);
        for (size_t j = 0; j < i; j++)
            if (strcmp(json_string_value(json_object_get(json_array_get(cases, j), "id")), id) == 0)
                return dt_fail(err, DT_EINVAL, "%s: %s repeats the id of cases[%zu]", what, w, j);
        const json_t *impl = json_object_get(c, "impl");
        CHECK(want(impl, json_is_object(impl), what, "an object", w, "impl", err));
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)impl, key, v) {
            char iw[400];
            snprintf(iw, sizeof iw, "%s.impl.%s", w, key);
            CHECK(check_impl(v, what, iw, err));
        }
        if (json_is_true(valid))
            for (int f = 0; f < 2; f++) {
                const char *fid = f ? base : cand;
                if (!json_object_get(impl, fid))
                    return dt_fail(err, DT_EINVAL, "%s: %s is valid but has no impl.%s", what, w,
                                   fid);
            }
        const json_t *cm = json_object_get(c, "clocks_moved");
        if (cm && !json_is_null(cm))
            CHECK(want(cm, json_is_boolean(cm), what, "a boolean", w, "clocks_moved", err));
    }
    return DT_OK;
}

dt_status dt_results_load(const char *path, json_t **out, dt_err *err) {
    *out = NULL;
    /* A bound before parsing: a hostile or runaway file is refused with a message rather
     * than by running out of memory (a full H200 default-matrix run with device timing
     * writes ~50 MB). */
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > DT_RESULTS_MAX_BYTES)
        return dt_fail(err, DT_EINVAL, "%s: %llu bytes is larger than results.json may be "
                       "(%llu bytes)", path, (unsigned long long)sb.st_size,
                       (unsigned long long)DT_RESULTS_MAX_BYTES);
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return dt_fail(err, DT_EINVAL, "%s: not a regular file", path);
    json_error_t je;
    json_t *r = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!r) {
        if (access(path, R_OK) != 0)
            return dt_fail(err, DT_EIO, "%s: cannot read: %s", path, strerror(errno));
        return dt_fail(err, DT_EINVAL, "%s: not valid JSON (line %d, column %d): %s", path,
                       je.line, je.column, je.text);
    }
    dt_status st = dt_results_validate(r, path, err);
    if (st != DT_OK) {
        json_decref(r);
        return st;
    }
    *out = r;
    return DT_OK;
}

dt_status dt_results_write_text_atomic(const char *path, const char *text, size_t len,
                                       dt_err *err) {
    size_t plen = strlen(path);
    char *tmp = dt_xmalloc(plen + 16);
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        dt_status st = dt_fail(err, DT_EIO, "%s: cannot create a temporary file: %s", path,
                               strerror(errno));
        free(tmp);
        return st;
    }
    const char *why = NULL;
    int saved = 0;
    if (fchmod(fd, 0644) != 0) {
        why = "chmod";
        saved = errno;
    }
    size_t off = 0;
    while (!why && off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            why = "write";
            saved = errno;
            break;
        }
        off += (size_t)w;
    }
    if (!why && fsync(fd) != 0) {
        why = "fsync";
        saved = errno;
    }
    if (close(fd) != 0 && !why) {
        why = "close";
        saved = errno;
    }
    if (!why && rename(tmp, path) != 0) {
        why = "rename";
        saved = errno;
    }
    if (why) {
        unlink(tmp);
        free(tmp);
        return dt_fail(err, DT_EIO, "%s: %s failed: %s", path, why, strerror(saved));
    }
    free(tmp);
    /* Make the rename durable; some file systems refuse fsync on directories. */
    char *dir = dt_xstrdup(path);
    char *slash = strrchr(dir, '/');
    const char *d = ".";
    if (slash) {
        *slash = 0;
        d = slash == dir ? "/" : dir;
    }
    int dfd = open(d, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    free(dir);
    return DT_OK;
}

dt_status dt_results_write_atomic(const json_t *results, const char *path, dt_err *err) {
    char *text = json_dumps(results, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    if (!text)
        return dt_fail(err, DT_EINVAL, "%s: results cannot be serialized (invalid JSON value)",
                       path);
    size_t len = strlen(text);
    text = realloc(text, len + 2);
    DT_ASSERT(text);
    text[len++] = '\n';
    text[len] = 0;
    dt_status st = dt_results_write_text_atomic(path, text, len, err);
    free(text);
    return st;
}

dt_status dt_report_regenerate(const char *json_path, const char *md_path, dt_err *err) {
    json_t *r = NULL;
    dt_status st = dt_results_load(json_path, &r, err);
    if (st != DT_OK)
        return st;
    st = dt_derive(r, err);
    char *md = NULL;
    size_t len = 0;
    if (st == DT_OK)
        st = dt_report_md_string(r, &md, &len, err);
    if (st == DT_OK)
        st = dt_results_write_text_atomic(md_path, md, len, err);
    if (st == DT_OK) { /* the charts results.md links, next to it */
        char *dir = dt_xstrdup(md_path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = 0;
        st = dt_plot_write_all(r, slash ? (*dir ? dir : "/") : ".", NULL, err);
        free(dir);
    }
    free(md);
    json_decref(r);
    return st;
}
