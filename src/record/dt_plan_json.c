/* dt_plan_json.c — plan.json encode / decode and the plan id (dt_plan_json.h). The only
 * code that knows plan.json's keys. */
#include "record/dt_plan_json.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "record/dt_file.h"

#define PLAN_MAX_BYTES (64u << 20)

static json_t *jstr(const char *s) { return s ? json_string(s) : json_null(); }

/* SHA-256 hex of the canonical text of o (its "plan_id" not included). */
static int plan_hash(const json_t *o, char hex[65]) {
    json_t *c = json_deep_copy(o);
    json_object_del(c, "plan_id");
    char *t = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(c);
    if (!t) return -1;
    unsigned char md[32];
    unsigned int n = 0;
    int ok = EVP_Digest(t, strlen(t), md, &n, EVP_sha256(), NULL) == 1 && n == 32;
    free(t);
    for (unsigned i = 0; ok && i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return ok ? 0 : -1;
}

static json_t *enc_settings(const dt_plan_settings *s) {
    json_t *o = json_object();
    json_object_set_new(o, "backend", jstr(s->backend));
    json_object_set_new(o, "operations", jstr(s->operations));
    json_object_set_new(o, "samples", json_integer(s->samples));
    json_object_set_new(o, "sample_ms", json_real(s->sample_ms));
    json_object_set_new(o, "warmup_ms", json_real(s->warmup_ms));
    json_object_set_new(o, "prime", json_integer(s->prime));
    json_object_set_new(o, "rounds", json_integer(s->rounds));
    json_object_set_new(o, "seed", json_integer(s->seed));
    json_object_set_new(o, "threads", json_integer(s->threads));
    json_object_set_new(o, "timeout_s", json_real(s->timeout_s));
    json_object_set_new(o, "quick", json_boolean(s->quick));
    json_object_set_new(o, "input_views", json_boolean(s->input_views));
    json_object_set_new(o, "device_timing", json_boolean(s->device_timing));
    json_object_set_new(o, "probe_kind", jstr(s->probe_kind));
    json_object_set_new(o, "capture_sources", json_boolean(s->capture_sources));
    json_object_set_new(o, "candidate_worker", jstr(s->candidate_cmd));
    json_object_set_new(o, "baseline_worker", jstr(s->baseline_cmd));
    json_object_set_new(o, "python", jstr(s->python));
    return o;
}

static json_t *enc_cases(const dt_plan_doc *doc) {
    json_t *a = json_array();
    for (int i = 0; i < doc->cases.count; i++) {
        const dt_case_spec *c = &doc->cases.cases[i];
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer(i));
        json_object_set_new(o, "id", json_string(c->id));
        json_object_set_new(o, "op", json_string(dt_op_get(c->op)->name));
        json_object_set_new(o, "dtype", json_string(dt_dtype_name(c->dtype)));
        json_object_set_new(o, "m", json_integer(c->m));
        json_object_set_new(o, "n", json_integer(c->n));
        json_object_set_new(o, "k", json_integer(c->k));
        json_object_set_new(o, "views", json_boolean(c->views));
        json_object_set_new(o, "shard", json_integer(doc->shard_of[i]));
        json_array_append_new(a, o);
    }
    return a;
}

dt_status dt_plan_encode(dt_plan_doc *doc, char **text, size_t *len, dt_err *err) {
    *text = NULL;
    *len = 0;
    json_t *o = json_object(), *tool = json_object(), *args = json_array();
    json_object_set_new(o, "format", json_string(DT_PLAN_FORMAT));
    json_object_set_new(o, "format_version", json_integer(DT_PLAN_FORMAT_VERSION));
    json_object_set_new(tool, "name", json_string("dualtime"));
    json_object_set_new(tool, "version", jstr(doc->tool_version));
    json_object_set_new(tool, "git_revision", jstr(doc->git_revision));
    json_object_set_new(o, "tool", tool);
    json_object_set_new(o, "created_at", jstr(doc->created_at));
    for (size_t i = 0; i < doc->n_run_args; i++)
        json_array_append_new(args, json_string(doc->run_args[i]));
    json_object_set_new(o, "run_args", args);
    json_object_set_new(o, "settings", enc_settings(&doc->settings));
    json_object_set_new(o, "shards", json_integer(doc->n_shards));
    json_object_set_new(o, "assignment", json_string("round-robin: case i runs in shard i mod N"));
    json_object_set_new(o, "cases", enc_cases(doc));
    if (plan_hash(o, doc->plan_id) != 0) {
        json_decref(o);
        return dt_fail(err, DT_EINVAL, "plan: cannot be encoded (not UTF-8?)");
    }
    json_object_set_new(o, "plan_id", json_string(doc->plan_id));
    char *t = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (!t) return dt_fail(err, DT_EINVAL, "plan: cannot be serialized");
    size_t n = strlen(t);
    char *out = realloc(t, n + 2);
    DT_ASSERT(out);
    out[n++] = '\n';
    out[n] = 0;
    *text = out;
    *len = n;
    return DT_OK;
}

/* ---- decoding ------------------------------------------------------------------------ */

static dt_status bad_key(dt_err *err, const char *path, const char *key, const char *want) {
    return dt_fail(err, DT_EINVAL, "%s: %s must be %s", path, key, want);
}

/* o[key] as a copy (NULL for null); -1 when it is present and not a string or null. */
static int opt_str(const json_t *o, const char *key, char **out) {
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v)) return -1;
    *out = dt_xstrdup(json_string_value(v));
    return 0;
}

static int get_i64(const json_t *o, const char *key, int64_t *out) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) return -1;
    *out = (int64_t)json_integer_value(v);
    return 0;
}

static int get_dbl(const json_t *o, const char *key, double *out) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) return -1;
    *out = json_number_value(v);
    return 0;
}

static int get_flag(const json_t *o, const char *key, int *out) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_boolean(v)) return -1;
    *out = json_is_true(v);
    return 0;
}

static dt_status dec_settings(const json_t *root, const char *path, dt_plan_settings *s,
                              dt_err *err) {
    const json_t *o = json_object_get(root, "settings");
    if (!json_is_object(o)) return bad_key(err, path, "settings", "an object");
    if (opt_str(o, "backend", &s->backend) || !s->backend)
        return bad_key(err, path, "settings.backend", "a string");
    if (opt_str(o, "operations", &s->operations) || opt_str(o, "probe_kind", &s->probe_kind) ||
        opt_str(o, "candidate_worker", &s->candidate_cmd) ||
        opt_str(o, "baseline_worker", &s->baseline_cmd) || opt_str(o, "python", &s->python))
        return bad_key(err, path, "settings' strings", "strings or null");
    if (get_i64(o, "samples", &s->samples) || get_i64(o, "rounds", &s->rounds) ||
        get_i64(o, "seed", &s->seed) || get_i64(o, "threads", &s->threads) ||
        get_i64(o, "prime", &s->prime))
        return bad_key(err, path, "settings.samples/rounds/seed/threads/prime", "integers");
    if (get_dbl(o, "sample_ms", &s->sample_ms) || get_dbl(o, "warmup_ms", &s->warmup_ms) ||
        get_dbl(o, "timeout_s", &s->timeout_s))
        return bad_key(err, path, "settings.sample_ms/warmup_ms/timeout_s", "numbers");
    if (get_flag(o, "quick", &s->quick) || get_flag(o, "input_views", &s->input_views) ||
        get_flag(o, "device_timing", &s->device_timing) ||
        get_flag(o, "capture_sources", &s->capture_sources))
        return bad_key(err, path, "settings.quick/input_views/device_timing/capture_sources",
                       "booleans");
    return DT_OK;
}

static dt_status dec_case(const json_t *c, int i, const char *path, dt_plan_doc *doc,
                          dt_err *err) {
    dt_case_spec *cs = &doc->cases.cases[i];
    const char *id = json_string_value(json_object_get(c, "id"));
    const char *op = json_string_value(json_object_get(c, "op"));
    int64_t index, shard;
    if (!json_is_object(c) || !id || !op || strlen(id) >= sizeof cs->id ||
        get_i64(c, "index", &index) || index != i || get_i64(c, "m", &cs->m) ||
        get_i64(c, "n", &cs->n) || get_i64(c, "k", &cs->k) || get_flag(c, "views", &cs->views) ||
        get_i64(c, "shard", &shard))
        return dt_fail(err, DT_EINVAL, "%s: cases[%d] must be an object with index %d, id, op, "
                       "m, n, k, views and shard", path, i, i);
    if (dt_op_find(op) < 0)
        return dt_fail(err, DT_EINVAL, "%s: cases[%d].op '%s' is not an operation", path, i, op);
    if (shard < 0 || shard >= doc->n_shards)
        return dt_fail(err, DT_EINVAL, "%s: cases[%d].shard %lld is not in 0..%d", path, i,
                       (long long)shard, doc->n_shards - 1);
    for (int j = 0; j < i; j++)
        if (strcmp(doc->cases.cases[j].id, id) == 0)
            return dt_fail(err, DT_EINVAL, "%s: cases[%d] repeats the id %s", path, i, id);
    const char *dtype = json_string_value(json_object_get(c, "dtype"));
    int dt = dtype ? dt_dtype_find(dtype) : DT_F32; /* absent: f32 */
    if (dt < 0 || (dt != DT_F32 && dt != DT_BF16 && dt != DT_F16))
        return dt_fail(err, DT_EINVAL, "%s: cases[%d].dtype '%s' is not f32, bf16 or f16", path,
                       i, dtype);
    cs->dtype = (dt_dtype)dt;
    cs->op = (dt_op)dt_op_find(op);
    snprintf(cs->id, sizeof cs->id, "%s", id);
    doc->shard_of[i] = (int)shard;
    return DT_OK;
}

static dt_status dec_plan(const json_t *o, const char *path, dt_plan_doc *doc, dt_err *err) {
    const char *fmt = json_string_value(json_object_get(o, "format"));
    int64_t ver = 0, shards = 0;
    if (!fmt || strcmp(fmt, DT_PLAN_FORMAT) != 0 || get_i64(o, "format_version", &ver) ||
        ver != DT_PLAN_FORMAT_VERSION)
        return dt_fail(err, DT_EINVAL, "%s: not a dualtime plan (format \"%s\" version %d)",
                       path, DT_PLAN_FORMAT, DT_PLAN_FORMAT_VERSION);
    const char *id = json_string_value(json_object_get(o, "plan_id"));
    if (!id || plan_hash(o, doc->plan_id) != 0 || strcmp(id, doc->plan_id) != 0)
        return dt_fail(err, DT_EINVAL, "%s: plan_id does not match the plan's contents (an "
                       "edited plan? make a new one with dualtime plan)", path);
    const json_t *tool = json_object_get(o, "tool");
    if (opt_str(tool, "version", &doc->tool_version) ||
        opt_str(tool, "git_revision", &doc->git_revision) ||
        opt_str(o, "created_at", &doc->created_at))
        return bad_key(err, path, "tool.version/git_revision, created_at", "strings");
    const json_t *args = json_object_get(o, "run_args"), *a;
    if (!json_is_array(args)) return bad_key(err, path, "run_args", "an array of strings");
    doc->run_args = dt_xcalloc(json_array_size(args) + 1, sizeof *doc->run_args);
    size_t k;
    json_array_foreach(args, k, a) {
        if (!json_is_string(a)) return bad_key(err, path, "run_args", "an array of strings");
        doc->run_args[doc->n_run_args++] = dt_xstrdup(json_string_value(a));
    }
    dt_status st = dec_settings(o, path, &doc->settings, err);
    if (st != DT_OK) return st;
    const json_t *cases = json_object_get(o, "cases");
    if (get_i64(o, "shards", &shards) || shards < 1 || shards > DT_SHARDS_MAX)
        return bad_key(err, path, "shards", "an integer in 1..4096");
    if (!json_is_array(cases) || json_array_size(cases) < 1 || json_array_size(cases) > 1000000)
        return bad_key(err, path, "cases", "a non-empty array");
    doc->n_shards = (int)shards;
    int n = (int)json_array_size(cases);
    doc->cases.cases = dt_xcalloc((size_t)n, sizeof *doc->cases.cases);
    doc->shard_of = dt_xcalloc((size_t)n, sizeof *doc->shard_of);
    doc->cases.count = n;
    for (int i = 0; i < n; i++)
        if ((st = dec_case(json_array_get(cases, (size_t)i), i, path, doc, err)) != DT_OK)
            return st;
    return DT_OK;
}

dt_status dt_plan_load(const char *path, dt_plan_doc *doc, dt_err *err) {
    memset(doc, 0, sizeof *doc);
    char *text = NULL;
    size_t len = 0;
    dt_status st = dt_file_read(path, PLAN_MAX_BYTES, "plan.json", &text, &len, err);
    if (st != DT_OK) return st;
    json_error_t je;
    json_t *o = json_loadb(text, len, 0, &je);
    free(text);
    if (!o) return dt_fail(err, DT_EINVAL, "%s: not JSON (line %d: %s)", path, je.line, je.text);
    st = json_is_object(o) ? dec_plan(o, path, doc, err)
                           : dt_fail(err, DT_EINVAL, "%s: must be a JSON object", path);
    json_decref(o);
    if (st != DT_OK) dt_plan_doc_free(doc);
    return st;
}
