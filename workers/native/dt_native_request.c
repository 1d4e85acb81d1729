/* dt_native_request.c — request parsing and validation for the native worker (contract
 * in dt_native_request.h). */
#include "dt_native_request.h"

#include <string.h>

dt_status dt_req_parse_line(const char *line, size_t len, json_t **req, const char **cmd,
                            dt_err *err) {
    *req = NULL;
    *cmd = NULL;
    if (memchr(line, '\0', len)) return dt_fail(err, DT_EINVAL, "request contains a NUL byte");
    json_error_t jerr;
    json_t *r = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!r)
        return dt_fail(err, DT_EINVAL, "malformed JSON request: %s (column %d)", jerr.text,
                       jerr.column);
    if (!json_is_object(r)) {
        json_decref(r);
        return dt_fail(err, DT_EINVAL, "request is not a JSON object");
    }
    const char *c = json_string_value(json_object_get(r, "cmd"));
    if (!c) {
        json_decref(r);
        return dt_fail(err, DT_EINVAL, "request has no string 'cmd'");
    }
    *req = r;
    *cmd = c;
    return DT_OK;
}

dt_status dt_req_get_int(const json_t *obj, const char *key, int64_t *v, dt_err *err) {
    json_t *x = json_object_get(obj, key);
    if (!x) return dt_fail(err, DT_EINVAL, "missing '%s'", key);
    if (!json_is_integer(x)) return dt_fail(err, DT_EINVAL, "'%s' is not an integer", key);
    *v = (int64_t)json_integer_value(x);
    return DT_OK;
}

static const char *dtype_name(dt_dtype d) { return dt_dtype_name(d); }

/* The case dtype a request's buffers name: the dtype of its first floating-point buffer
 * ("f32", "bf16", "f16"; check_buffers then checks every buffer against the layout). */
static dt_status request_dtype(const json_t *bufs, dt_dtype *out, dt_err *err) {
    *out = DT_F32;
    size_t i;
    json_t *jb;
    json_array_foreach(bufs, i, jb) {
        const char *d = json_string_value(json_object_get(jb, "dtype"));
        if (!d || strcmp(d, "i64") == 0) continue;
        int t = dt_dtype_find(d);
        if (t < 0 || !dt_dtype_is_float((dt_dtype)t))
            return dt_fail(err, DT_EINVAL, "buffers[%zu]: unknown dtype '%.40s' (f32, bf16, f16, "
                           "i64)", i, d);
        *out = (dt_dtype)t;
        return DT_OK;
    }
    return DT_OK;
}

/* Validates the buffers[] of a prepare request against the layout L the worker computed
 * for the same op/shape/views. */
static dt_status check_buffers(const json_t *bufs, const dt_case_layout *L, int64_t arena_bytes,
                               dt_err *err) {
    if ((int)json_array_size(bufs) != L->nbuffers)
        return dt_fail(err, DT_EINVAL, "op %s has %d buffers, request lists %zu",
                       dt_op_get(L->op)->name, L->nbuffers, json_array_size(bufs));
    for (int i = 0; i < L->nbuffers; i++) {
        const dt_buffer_layout *B = &L->buf[i];
        json_t *jb = json_array_get(bufs, (size_t)i);
        if (!json_is_object(jb)) return dt_fail(err, DT_EINVAL, "buffers[%d] is not an object", i);
        json_t *nm = json_object_get(jb, "name"), *dt = json_object_get(jb, "dtype"),
               *io = json_object_get(jb, "is_output");
        if (!json_is_string(nm) || strcmp(json_string_value(nm), B->name) != 0)
            return dt_fail(err, DT_EINVAL, "buffers[%d]: name must be '%s'", i, B->name);
        if (!json_is_string(dt) || strcmp(json_string_value(dt), dtype_name(B->dtype)) != 0)
            return dt_fail(err, DT_EINVAL, "buffers[%d] '%s': dtype must be '%s'", i, B->name,
                           dtype_name(B->dtype));
        if (!json_is_boolean(io) || json_is_true(io) != (B->is_output != 0))
            return dt_fail(err, DT_EINVAL, "buffers[%d] '%s': is_output must be %s", i, B->name,
                           B->is_output ? "true" : "false");
        static const char *keys[] = {"rows", "cols", "row_stride", "data_offset",
                                     "region_offset", "region_bytes"};
        const int64_t want[] = {B->rows, B->cols, B->row_stride, B->data_offset,
                                B->region_offset, B->region_bytes};
        for (int k = 0; k < 6; k++) {
            int64_t v = 0; /* set by dt_req_get_int on success; GCC -O2 cannot see it */
            if (dt_req_get_int(jb, keys[k], &v, err) != DT_OK) {
                char m[DT_ERR_LEN];
                snprintf(m, sizeof m, "%s", err->msg);
                return dt_fail(err, DT_EINVAL, "buffers[%d] '%s': %s", i, B->name, m);
            }
            if (v != want[k])
                return dt_fail(err, DT_EINVAL,
                               "buffers[%d] '%s': %s is %lld, the layout says %lld", i,
                               B->name, keys[k], (long long)v, (long long)want[k]);
        }
        if (B->region_offset < DT_GUARD_BYTES ||
            B->region_offset + B->region_bytes + DT_GUARD_BYTES > arena_bytes)
            return dt_fail(err, DT_EINVAL, "buffers[%d] '%s' lies outside the arena (%lld bytes)",
                           i, B->name, (long long)arena_bytes);
    }
    return DT_OK;
}

dt_status dt_req_parse_prepare(const json_t *req, dt_req_cuda_check_fn cuda_check, void *ctx,
                               dt_prepare_req *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    dt_case_layout *L = &out->L;
    json_t *x = json_object_get(req, "case");
    if (x && !json_is_string(x)) return dt_fail(err, DT_EINVAL, "'case' is not a string");
    x = json_object_get(req, "op");
    if (!json_is_string(x)) return dt_fail(err, DT_EINVAL, "missing or non-string 'op'");
    int op = dt_op_find(json_string_value(x));
    if (op < 0) return dt_fail(err, DT_EINVAL, "unknown op '%s'", json_string_value(x));
    const dt_op_info *info = dt_op_get((dt_op)op);

    x = json_object_get(req, "backend");
    const char *bname = x ? json_string_value(x) : "cpu";
    if (!bname) return dt_fail(err, DT_EINVAL, "'backend' is not a string");
    if (strcmp(bname, "cpu") == 0) {
        out->cuda = 0;
    } else if (strcmp(bname, "cuda") == 0) {
        if (!cuda_check) return dt_fail(err, DT_EUNAVAIL, "cuda backend unavailable");
        dt_status st = cuda_check(ctx, err);
        if (st != DT_OK) return st;
        out->cuda = 1;
    } else {
        return dt_fail(err, DT_EINVAL, "unknown backend '%s'", bname);
    }

    int64_t m = 0, n = 0, k = 0;
    if (dt_req_get_int(req, "m", &m, err) != DT_OK || dt_req_get_int(req, "n", &n, err) != DT_OK)
        return DT_EINVAL;
    if (json_object_get(req, "k") && dt_req_get_int(req, "k", &k, err) != DT_OK) return DT_EINVAL;
    if (m < 1 || m > DT_REQ_MAX_DIM)
        return dt_fail(err, DT_EINVAL, "m=%lld out of [1, %d]", (long long)m, DT_REQ_MAX_DIM);
    if (n < 1 || n > DT_REQ_MAX_DIM)
        return dt_fail(err, DT_EINVAL, "n=%lld out of [1, %d]", (long long)n, DT_REQ_MAX_DIM);
    if (info->is_gemm) {
        if (k < 1 || k > DT_REQ_MAX_DIM)
            return dt_fail(err, DT_EINVAL, "k=%lld out of [1, %d]", (long long)k, DT_REQ_MAX_DIM);
    } else if (k < 0 || k > DT_REQ_MAX_DIM) {
        return dt_fail(err, DT_EINVAL, "k=%lld out of [0, %d]", (long long)k, DT_REQ_MAX_DIM);
    }

    x = json_object_get(req, "shm");
    if (!json_is_string(x)) return dt_fail(err, DT_EINVAL, "missing or non-string 'shm'");
    const char *shm_name = json_string_value(x);
    if (strncmp(shm_name, "/dualtime-", 10) != 0 || strlen(shm_name) >= sizeof out->shm_name ||
        strchr(shm_name + 1, '/'))
        return dt_fail(err, DT_EINVAL, "bad shared memory name");
    snprintf(out->shm_name, sizeof out->shm_name, "%s", shm_name);
    if (dt_req_get_int(req, "arena_bytes", &out->arena_bytes, err) != DT_OK) return DT_EINVAL;

    x = json_object_get(req, "capture_sources");
    if (x && !json_is_boolean(x)) return dt_fail(err, DT_EINVAL, "'capture_sources' is not a boolean");
    out->capture_sources = x ? json_is_true(x) : 0;

    json_t *bufs = json_object_get(req, "buffers");
    if (!json_is_array(bufs)) return dt_fail(err, DT_EINVAL, "missing or non-array 'buffers'");
    /* views: any buffer whose row_stride differs from its cols; the layout then says
     * exactly what every field must be. */
    int views = 0;
    json_t *v = json_object_get(req, "views");
    if (v) {
        if (!json_is_boolean(v)) return dt_fail(err, DT_EINVAL, "'views' is not a boolean");
        views = json_is_true(v);
    } else {
        size_t i;
        json_t *jb;
        json_array_foreach(bufs, i, jb) {
            json_t *rs = json_object_get(jb, "row_stride"), *c = json_object_get(jb, "cols");
            if (json_is_integer(rs) && json_is_integer(c) &&
                json_integer_value(rs) != json_integer_value(c))
                views = 1;
        }
    }
    dt_dtype dtype;
    if (request_dtype(bufs, &dtype, err) != DT_OK) return DT_EINVAL;
    dt_layout_make_typed(L, (dt_op)op, m, n, k, views, dtype);
    if (out->arena_bytes < L->total_bytes)
        return dt_fail(err, DT_EINVAL, "arena_bytes=%lld is smaller than the layout's %lld",
                       (long long)out->arena_bytes, (long long)L->total_bytes);
    return check_buffers(bufs, L, out->arena_bytes, err);
}

dt_status dt_req_parse_reps(const json_t *req, int64_t *reps, dt_err *err) {
    if (dt_req_get_int(req, "reps", reps, err) != DT_OK) return DT_EINVAL;
    if (*reps < 1 || *reps > DT_REQ_MAX_REPS)
        return dt_fail(err, DT_EINVAL, "reps=%lld out of [1, %lld]", (long long)*reps,
                       (long long)DT_REQ_MAX_REPS);
    return DT_OK;
}

dt_status dt_req_parse_prime(const json_t *req, int64_t *prime, dt_err *err) {
    *prime = 0;
    if (!json_object_get(req, "prime")) return DT_OK;
    if (dt_req_get_int(req, "prime", prime, err) != DT_OK) return DT_EINVAL;
    if (*prime < 0 || *prime > DT_REQ_MAX_PRIME)
        return dt_fail(err, DT_EINVAL, "prime=%lld out of [0, %d]", (long long)*prime,
                       DT_REQ_MAX_PRIME);
    return DT_OK;
}

/* "cache" of a device request into out (cold, copies, flush_bytes). */
static dt_status parse_cache(const json_t *req, dt_device_req *out, dt_err *err) {
    const json_t *c = json_object_get(req, "cache");
    out->cold = 0;
    out->copies = out->flush_bytes = 0;
    if (!c) return DT_OK;
    const char *v = json_string_value(c);
    if (!v || (strcmp(v, "warm") != 0 && strcmp(v, "cold") != 0))
        return dt_fail(err, DT_EINVAL, "'cache' must be \"warm\" or \"cold\"");
    if (strcmp(v, "warm") == 0) return DT_OK;
    out->cold = 1;
    if (dt_req_get_int(req, "copies", &out->copies, err) != DT_OK ||
        dt_req_get_int(req, "flush_bytes", &out->flush_bytes, err) != DT_OK)
        return DT_EINVAL;
    if (out->copies < 1 || out->copies > DT_REQ_MAX_COPIES)
        return dt_fail(err, DT_EINVAL, "copies=%lld out of [1, %d]", (long long)out->copies,
                       DT_REQ_MAX_COPIES);
    if (out->flush_bytes < 4 || out->flush_bytes > DT_REQ_MAX_FLUSH)
        return dt_fail(err, DT_EINVAL, "flush_bytes=%lld out of [4, 2^40]",
                       (long long)out->flush_bytes);
    return DT_OK;
}

dt_status dt_req_parse_device_ex(const json_t *req, dt_device_req *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    const char *scope = json_string_value(json_object_get(req, "scope"));
    if (scope && strcmp(scope, "graph") == 0) {
        const json_t *h = json_object_get(req, "hold");
        if (h && !json_is_boolean(h)) return dt_fail(err, DT_EINVAL, "'hold' must be true or false");
        out->hold = h && json_is_true(h);
        out->graph = 1;
        if (dt_req_parse_reps(req, &out->reps, err) != DT_OK) return DT_EINVAL;
    } else if (dt_req_parse_device(req, &out->probe, &out->reps, &out->capacity, &out->hold,
                                   err) != DT_OK) {
        return DT_EINVAL;
    }
    return parse_cache(req, out, err);
}

dt_status dt_req_parse_device(const json_t *req, int *probe, int64_t *reps, int64_t *capacity,
                              int *hold, dt_err *err) {
    *probe = 0;
    *capacity = 0;
    *hold = 0;
    const json_t *h = json_object_get(req, "hold");
    if (h && !json_is_boolean(h)) return dt_fail(err, DT_EINVAL, "'hold' must be true or false");
    *hold = h && json_is_true(h);
    const char *scope = json_string_value(json_object_get(req, "scope"));
    if (!scope || (strcmp(scope, "control") != 0 && strcmp(scope, "probe") != 0))
        return dt_fail(err, DT_EINVAL, "'scope' must be \"control\" or \"probe\"");
    if (dt_req_parse_reps(req, reps, err) != DT_OK) return DT_EINVAL;
    if (json_object_get(req, "capacity") && dt_req_get_int(req, "capacity", capacity, err) != DT_OK)
        return DT_EINVAL;
    if (*capacity < 0 || *capacity > DT_REQ_MAX_CAPACITY)
        return dt_fail(err, DT_EINVAL, "capacity=%lld out of [0, 2^24]", (long long)*capacity);
    int p = strcmp(scope, "probe") == 0;
    const char *kind = json_string_value(json_object_get(req, "probe_kind"));
    if (p && kind && strcmp(kind, "serialized") == 0) p = 2;
    else if (p && kind && strcmp(kind, "concurrent") != 0)
        return dt_fail(err, DT_EINVAL, "'probe_kind' must be \"concurrent\" or \"serialized\"");
    *probe = p;
    return DT_OK;
}

dt_status dt_req_parse_decomp(const json_t *req, int probe, int hold, int64_t reps, int *decomp,
                              dt_err *err) {
    const json_t *d = json_object_get(req, "decomp");
    *decomp = 0;
    if (d && !json_is_boolean(d)) return dt_fail(err, DT_EINVAL, "'decomp' must be true or false");
    if (!d || !json_is_true(d)) return DT_OK;
    if (!probe || hold || reps != 1)
        return dt_fail(err, DT_EINVAL, "'decomp' needs an unheld probe of one call (scope "
                       "probe, reps 1, no hold)");
    *decomp = 1;
    return DT_OK;
}
