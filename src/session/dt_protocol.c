/* dt_protocol.c — protocol requests and answers as C structs (contract in dt_protocol.h). */
#define _GNU_SOURCE
#include "dt_protocol.h"
#include "../data/dt_arena.h"
#include "dt_ops_json.h"
#include "dualtime/dt_worker_sdk.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

static char *dup_or_null(const char *s) { return s ? dt_xstrdup(s) : NULL; }

/* Sends req (consumed) and reads the answer: it must be a JSON object with a boolean ok
 * (else the worker is killed: it does not speak the protocol); ok:false becomes
 * DT_EWORKER with the worker's error text (the worker stays usable). On DT_OK *resp is
 * the answer (caller decrefs; resp NULL: dropped). */
static dt_status call_send(dt_worker *w, json_t *req, dt_err *err) {
    DT_ASSERT(req);
    char *line = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    DT_ASSERT(line);
    dt_status st = dt_worker_send(w, line, err);
    free(line);
    return st;
}

/* The answer to the request call_send sent (call's second half). */
static dt_status call_receive(dt_worker *w, double timeout_s, json_t **resp, dt_err *err) {
    if (resp) *resp = NULL;
    char *answer = NULL;
    dt_status st = dt_worker_receive(w, timeout_s, &answer, err);
    if (st != DT_OK) return st;
    json_error_t jerr;
    json_t *obj = json_loads(answer, 0, &jerr);
    if (!json_is_object(obj) || !json_is_boolean(json_object_get(obj, "ok"))) {
        char what[200];
        snprintf(what, sizeof what, "answered something that is not a protocol line: '%.80s'",
                 answer);
        json_decref(obj);
        free(answer);
        return dt_worker_fail(w, what, err);
    }
    free(answer);
    if (!json_is_true(json_object_get(obj, "ok"))) {
        const char *e = json_string_value(json_object_get(obj, "error"));
        st = dt_fail(err, DT_EWORKER, "%s", e ? e : "worker answered ok:false without an error");
        json_decref(obj);
        return st;
    }
    if (resp) *resp = obj;
    else json_decref(obj);
    return DT_OK;
}

static dt_status call(dt_worker *w, json_t *req, double timeout_s, json_t **resp, dt_err *err) {
    if (resp) *resp = NULL;
    dt_status st = call_send(w, req, err);
    return st != DT_OK ? st : call_receive(w, timeout_s, resp, err);
}

static void backend_of(const json_t *hello, const char *name, dt_hello_backend *b) {
    const json_t *o = json_object_get(json_object_get(hello, "backends"), name);
    b->available = json_is_true(json_object_get(o, "available"));
    b->reason = dup_or_null(json_string_value(json_object_get(o, "reason")));
}

/* Fills h from a parsed hello object (not consumed). */
static void hello_fill(const json_t *o, dt_hello *h) {
    memset(h, 0, sizeof *h);
    h->protocol = json_integer_value(json_object_get(o, "protocol"));
    h->worker = dup_or_null(json_string_value(json_object_get(o, "worker")));
    h->framework = dup_or_null(json_string_value(json_object_get(o, "framework")));
    h->framework_version =
        dup_or_null(json_string_value(json_object_get(o, "framework_version")));
    h->unavailable = dup_or_null(json_string_value(json_object_get(o, "unavailable")));
    backend_of(o, "cpu", &h->cpu);
    backend_of(o, "cuda", &h->cuda);
    const json_t *th = json_object_get(json_object_get(o, "env"), "threads");
    h->threads = json_is_integer(th) ? json_integer_value(th) : -1;
    const json_t *info = json_object_get(json_object_get(json_object_get(o, "backends"), "cuda"),
                                         "info");
    h->cuda_pci_bus = DT_NULL_I64;
    h->cuda_memory_free_bytes = -1;
    h->cuda_l2_bytes = -1;
    if (json_is_object(info)) {
        /* the device description, plus "name" */
        json_t *gpu = json_deep_copy(info);
        json_t *nm = json_object_get(gpu, "gpu");
        if (json_is_string(nm) && !json_object_get(gpu, "name")) json_object_set(gpu, "name", nm);
        h->cuda_info_json = json_dumps(gpu, JSON_COMPACT);
        h->cuda_name = dup_or_null(json_string_value(json_object_get(gpu, "name")));
        const json_t *bus = json_object_get(gpu, "pci_bus");
        if (json_is_integer(bus)) h->cuda_pci_bus = json_integer_value(bus);
        const json_t *mf = json_object_get(gpu, "memory_free_bytes");
        if (json_is_integer(mf) && json_integer_value(mf) >= 0)
            h->cuda_memory_free_bytes = json_integer_value(mf);
        const json_t *l2 = json_object_get(gpu, "l2_bytes");
        if (json_is_integer(l2) && json_integer_value(l2) > 0)
            h->cuda_l2_bytes = json_integer_value(l2);
        json_decref(gpu);
    }
    const json_t *cp = json_object_get(o, "copy");
    h->copy_ranges = json_is_true(json_object_get(cp, "ranges"));
    const char *dg = json_string_value(json_object_get(cp, "digest"));
    h->copy_digest = h->copy_ranges && dg && strcmp(dg, DT_DIGEST_NAME) == 0;
    h->text = json_dumps(o, JSON_COMPACT);
    DT_ASSERT(h->text);
}

dt_status dt_hello_parse(const char *text, size_t len, dt_hello *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *o = json_loadb(text, len, 0, &jerr);
    if (!json_is_object(o) || !json_is_true(json_object_get(o, "ok"))) {
        json_decref(o);
        return dt_fail(err, DT_EINVAL, "not a hello answer (a JSON object with ok:true)");
    }
    hello_fill(o, out);
    json_decref(o);
    return DT_OK;
}

const dt_hello_backend *dt_hello_backend_get(const dt_hello *h, const char *backend) {
    if (strcmp(backend, "cpu") == 0) return &h->cpu;
    if (strcmp(backend, "cuda") == 0) return &h->cuda;
    return NULL;
}

void dt_hello_free(dt_hello *h) {
    free(h->worker);
    free(h->framework);
    free(h->framework_version);
    free(h->cpu.reason);
    free(h->cuda.reason);
    free(h->cuda_info_json);
    free(h->cuda_name);
    free(h->unavailable);
    free(h->text);
    memset(h, 0, sizeof *h);
}

dt_status dt_protocol_start_send(dt_worker *w, dt_err *err) {
    dt_status st = dt_worker_start(w, err);
    if (st != DT_OK) return st;
    /* the op table travels with hello: a worker that is not C learns the ops from it
     * (docs/protocol.md, "The op table"); the native worker reads the registry itself */
    st = call_send(w, json_pack("{s:s,s:i,s:o}", "cmd", "hello", "protocol", DT_PROTOCOL_VERSION,
                                "ops", dt_ops_json()),
                   err);
    if (st != DT_OK) dt_worker_kill(w, "hello failed");
    return st;
}

dt_status dt_protocol_start(dt_worker *w, double timeout_s, dt_hello *hello, dt_err *err) {
    memset(hello, 0, sizeof *hello);
    dt_status st = dt_protocol_start_send(w, err);
    return st != DT_OK ? st : dt_protocol_start_receive(w, timeout_s, hello, err);
}

dt_status dt_protocol_start_receive(dt_worker *w, double timeout_s, dt_hello *hello, dt_err *err) {
    memset(hello, 0, sizeof *hello);
    json_t *resp = NULL;
    /* starting a framework (importing torch, creating a CUDA context) can take far longer
     * than one request: the caller gives the start its own limit (--start-timeout,
     * default DT_WORKER_START_S) */
    dt_status st = call_receive(w, timeout_s, &resp, err);
    if (st != DT_OK) {
        json_decref(resp);
        dt_worker_kill(w, "hello failed");
        return st;
    }
    json_int_t proto = json_integer_value(json_object_get(resp, "protocol"));
    if (proto != DT_PROTOCOL_VERSION) {
        json_decref(resp);
        dt_worker_kill(w, "protocol mismatch");
        return dt_fail(err, DT_EWORKER, "worker %s speaks protocol %lld, dualtime speaks %d",
                       w->argv[0], (long long)proto, DT_PROTOCOL_VERSION);
    }
    /* a worker built with the C worker SDK names the SDK version it was compiled
     * against (docs/worker-sdk.md, "Versioning"): it must be this dualtime's */
    const json_t *sdkv = json_object_get(resp, "sdk_version");
    if (sdkv && (!json_is_integer(sdkv) || json_integer_value(sdkv) != DT_SDK_VERSION)) {
        long long v = json_is_integer(sdkv) ? (long long)json_integer_value(sdkv) : -1;
        json_decref(resp);
        dt_worker_kill(w, "worker SDK version mismatch");
        return dt_fail(err, DT_EWORKER,
                       "worker %s was built with worker SDK version %lld, this dualtime's SDK "
                       "is version %d: rebuild it against this dualtime's "
                       "include/dualtime/dt_worker_sdk.h and libdualtime_worker_sdk.a",
                       w->argv[0], v, DT_SDK_VERSION);
    }
    hello_fill(resp, hello);
    json_decref(resp);
    return DT_OK;
}

/* ---- prepare --------------------------------------------------------------------------- */

static json_t *buffers_json(const dt_case_layout *L) {
    json_t *a = json_array();
    for (int b = 0; b < L->nbuffers; b++) {
        const dt_buffer_layout *B = &L->buf[b];
        json_array_append_new(
            a, json_pack("{s:s,s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:I}", "name", B->name, "dtype",
                         dt_dtype_name(B->dtype), "is_output", B->is_output, "rows",
                         (json_int_t)B->rows, "cols", (json_int_t)B->cols, "row_stride",
                         (json_int_t)B->row_stride, "data_offset", (json_int_t)B->data_offset,
                         "region_offset", (json_int_t)B->region_offset, "region_bytes",
                         (json_int_t)B->region_bytes));
    }
    return a;
}

static double number_or_nan(const json_t *v) { return json_is_number(v) ? json_number_value(v) : NAN; }

static void sources_fill(const json_t *arr, dt_protocol_prepare_answer *a) {
    size_t n = json_array_size(arr);
    if (n == 0) return;
    a->sources = dt_xcalloc(n, sizeof *a->sources);
    size_t i;
    const json_t *s;
    json_array_foreach(arr, i, s) {
        dt_protocol_source *d = &a->sources[a->n_sources++];
        d->sha256 = dup_or_null(json_string_value(json_object_get(s, "sha256")));
        d->name = dup_or_null(json_string_value(json_object_get(s, "name")));
        d->text = dup_or_null(json_string_value(json_object_get(s, "text")));
        size_t k;
        const json_t *o;
        json_array_foreach(json_object_get(s, "options"), k, o) {
            if (json_is_string(o)) dt_strv_push(&d->options, json_string_value(o));
        }
    }
}

dt_status dt_protocol_prepare_send(dt_worker *w, const dt_protocol_prepare_req *q, dt_err *err) {
    json_t *req = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:s,s:I,s:o,s:b}", "cmd", "prepare",
                            "case", q->case_id, "op", q->op, "backend", q->backend, "m",
                            (json_int_t)q->m, "n", (json_int_t)q->n, "k", (json_int_t)q->k,
                            "shm", q->shm, "arena_bytes", (json_int_t)q->layout->total_bytes,
                            "buffers", buffers_json(q->layout), "capture_sources",
                            q->capture_sources);
    return call_send(w, req, err);
}

dt_status dt_protocol_prepare_receive(dt_worker *w, double timeout_s,
                                      dt_protocol_prepare_answer *ans, dt_err *err) {
    if (ans) memset(ans, 0, sizeof *ans);
    json_t *resp = NULL;
    dt_status st = call_receive(w, timeout_s, ans ? &resp : NULL, err);
    if (st != DT_OK || !ans) return st;
    const json_t *sm = json_object_get(resp, "setup_ms");
    ans->compile_ms = number_or_nan(json_object_get(sm, "compile"));
    ans->alloc_ms = number_or_nan(json_object_get(sm, "alloc"));
    ans->output_policy = dup_or_null(json_string_value(json_object_get(resp, "output_policy")));
    ans->implementation = dup_or_null(json_string_value(json_object_get(resp, "implementation")));
    ans->emulated = json_is_true(json_object_get(resp, "emulated"));
    sources_fill(json_object_get(resp, "sources"), ans);
    json_decref(resp);
    return DT_OK;
}

dt_status dt_protocol_prepare(dt_worker *w, const dt_protocol_prepare_req *q, double timeout_s,
                              dt_protocol_prepare_answer *ans, dt_err *err) {
    if (ans) memset(ans, 0, sizeof *ans);
    dt_status st = dt_protocol_prepare_send(w, q, err);
    return st != DT_OK ? st : dt_protocol_prepare_receive(w, timeout_s, ans, err);
}

void dt_protocol_prepare_answer_free(dt_protocol_prepare_answer *a) {
    for (size_t i = 0; i < a->n_sources; i++) {
        free(a->sources[i].sha256);
        free(a->sources[i].name);
        free(a->sources[i].text);
        dt_strv_free(&a->sources[i].options);
    }
    free(a->sources);
    free(a->output_policy);
    free(a->implementation);
    memset(a, 0, sizeof *a);
}

/* ---- timed and untimed calls ------------------------------------------------------------ */

/* A run or floor request; the answer's positive integer host_ns into *ns. */
static dt_status timed_send(dt_worker *w, const char *cmd, int64_t reps, int prime,
                            dt_err *err) {
    json_t *req = json_pack("{s:s,s:I}", "cmd", cmd, "reps", (json_int_t)reps);
    if (prime > 0 || strcmp(cmd, "floor") == 0)
        json_object_set_new(req, "prime", json_integer(prime));
    return call_send(w, req, err);
}

static dt_status timed_receive(dt_worker *w, const char *cmd, double timeout_s, int64_t *ns,
                               dt_err *err) {
    json_t *resp = NULL;
    dt_status st = call_receive(w, timeout_s, &resp, err);
    if (st != DT_OK) return st;
    const json_t *v = json_object_get(resp, "host_ns");
    int have = json_is_integer(v) && json_integer_value(v) > 0;
    if (have) *ns = json_integer_value(v);
    json_decref(resp);
    if (!have)
        return dt_fail(err, DT_EWORKER, "worker answered %s without a positive integer host_ns",
                       cmd);
    return DT_OK;
}

/* A run or floor request; the answer's positive integer host_ns into *ns. */
static dt_status timed_call(dt_worker *w, const char *cmd, int64_t reps, int prime,
                            double timeout_s, int64_t *ns, dt_err *err) {
    dt_status st = timed_send(w, cmd, reps, prime, err);
    return st != DT_OK ? st : timed_receive(w, cmd, timeout_s, ns, err);
}

dt_status dt_protocol_run_send(dt_worker *w, int64_t reps, int prime, dt_err *err) {
    return timed_send(w, "run", reps, prime, err);
}

dt_status dt_protocol_run_receive(dt_worker *w, double timeout_s, int64_t *host_ns, dt_err *err) {
    return timed_receive(w, "run", timeout_s, host_ns, err);
}

dt_status dt_protocol_run(dt_worker *w, int64_t reps, int prime, double timeout_s,
                          int64_t *host_ns, dt_err *err) {
    return timed_call(w, "run", reps, prime, timeout_s, host_ns, err);
}

dt_status dt_protocol_floor(dt_worker *w, int prime, double timeout_s, int64_t *host_ns,
                            dt_err *err) {
    return timed_call(w, "floor", 1, prime, timeout_s, host_ns, err);
}

dt_status dt_protocol_copy(dt_worker *w, const char *cmd, double timeout_s, double *ms,
                           dt_err *err) {
    json_t *resp = NULL;
    dt_status st = call(w, json_pack("{s:s}", "cmd", cmd), timeout_s, &resp, err);
    if (st != DT_OK) return st;
    *ms = json_number_value(json_object_get(resp, "ms"));
    json_decref(resp);
    return DT_OK;
}

static json_t *ranges_json(const dt_byte_range *r, int n) {
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_pack("[I,I]", (json_int_t)r[i].off, (json_int_t)r[i].len));
    return a;
}

dt_status dt_protocol_copy_ranges(dt_worker *w, const char *cmd, const dt_byte_range *only,
                                  int nonly, const dt_byte_range *digest, int ndigest,
                                  double timeout_s, double *ms, uint64_t *digests, dt_err *err) {
    json_t *req = json_pack("{s:s,s:o}", "cmd", cmd, "only", ranges_json(only, nonly));
    if (ndigest > 0) json_object_set_new(req, "digest", ranges_json(digest, ndigest));
    json_t *resp = NULL;
    dt_status st = call(w, req, timeout_s, &resp, err);
    if (st != DT_OK) return st;
    *ms = json_number_value(json_object_get(resp, "ms"));
    const json_t *d = json_object_get(resp, "digest");
    if (ndigest > 0 && (!json_is_array(d) || (int)json_array_size(d) != ndigest)) {
        json_decref(resp);
        return dt_fail(err, DT_EWORKER, "%s answer has no 'digest' array of %d", cmd, ndigest);
    }
    for (int i = 0; i < ndigest; i++) {
        const char *hex = json_string_value(json_array_get(d, (size_t)i));
        char *end = NULL;
        errno = 0;
        unsigned long long v = hex ? strtoull(hex, &end, 16) : 0;
        if (!hex || strlen(hex) != 16 || *end || errno) {
            json_decref(resp);
            return dt_fail(err, DT_EWORKER, "%s answer: digest %d is not 16 hex digits", cmd, i);
        }
        digests[i] = (uint64_t)v;
    }
    json_decref(resp);
    return DT_OK;
}

dt_status dt_protocol_release(dt_worker *w, double timeout_s, dt_err *err) {
    return call(w, json_pack("{s:s}", "cmd", "release"), timeout_s, NULL, err);
}

dt_status dt_protocol_release_send(dt_worker *w, dt_err *err) {
    return call_send(w, json_pack("{s:s}", "cmd", "release"), err);
}

dt_status dt_protocol_release_receive(dt_worker *w, double timeout_s, dt_err *err) {
    return call_receive(w, timeout_s, NULL, err);
}

dt_status dt_protocol_probe_process(dt_worker *w, const char *probe_kind, double timeout_s,
                                    dt_err *err) {
    return call(w, json_pack("{s:s,s:s}", "cmd", "probe_process", "probe_kind", probe_kind),
                timeout_s, NULL, err);
}

/* ---- device ------------------------------------------------------------------------------ */

static int64_t int_or_null(const json_t *v) {
    if (json_is_integer(v)) return json_integer_value(v);
    if (json_is_real(v) && fabs(json_real_value(v)) < 9.0e18) return (int64_t)json_real_value(v);
    return DT_NULL_I64;
}

/* Every kernel record of a probe region, compactly (a run keeps tens of thousands):
 * t0 = the first start (host monotonic), names in first-seen order with their launch,
 * rows of (name index, start - t0, end - t0, stream id). */
static void records_fill(const json_t *recs, dt_probe_records *out) {
    memset(out, 0, sizeof *out);
    out->present = 1;
    double t0 = 0;
    size_t i;
    const json_t *k;
    json_array_foreach(recs, i, k) {
        double st = json_number_value(json_object_get(k, "start_ns"));
        if (i == 0 || st < t0) t0 = st;
    }
    out->t0_ns = (int64_t)t0;
    json_array_foreach(recs, i, k) {
        const char *name = json_string_value(json_object_get(k, "name"));
        dt_probe_launch launch;
        memset(&launch, 0, sizeof launch);
        for (size_t d = 0; d < 3; d++) {
            launch.grid[d] = json_integer_value(json_array_get(json_object_get(k, "grid"), d));
            launch.block[d] = json_integer_value(json_array_get(json_object_get(k, "block"), d));
        }
        dt_probe_row row;
        row.name_index = (int64_t)dt_probe_records_name(out, name ? name : "?", &launch);
        row.start_ns = (int64_t)(json_number_value(json_object_get(k, "start_ns")) - t0);
        row.end_ns = (int64_t)(json_number_value(json_object_get(k, "end_ns")) - t0);
        row.stream_id = int_or_null(json_object_get(k, "stream_id"));
        dt_probe_row_add(out, &row);
    }
}

/* Per-kernel-name totals (per call), names in first-seen order. */
static void kernels_fill(const json_t *recs, double reps, dt_probe *p) {
    size_t n = json_array_size(recs), nn = 0;
    const char **names = dt_xcalloc(n + 1, sizeof *names);
    double *ns = dt_xcalloc(n + 1, sizeof *ns);
    int64_t *count = dt_xcalloc(n + 1, sizeof *count);
    size_t i;
    const json_t *k;
    json_array_foreach(recs, i, k) {
        const char *name = json_string_value(json_object_get(k, "name"));
        if (!name) continue;
        size_t j = 0;
        while (j < nn && strcmp(names[j], name) != 0) j++;
        if (j == nn) names[nn++] = name;
        ns[j] += json_number_value(json_object_get(k, "end_ns")) -
                 json_number_value(json_object_get(k, "start_ns"));
        count[j]++;
    }
    p->has_kernels = 1;
    for (size_t j = 0; j < nn; j++) dt_probe_kernel_add(p, names[j], count[j], ns[j] / 1e3 / reps);
    free(names);
    free(ns);
    free(count);
}

/* Every kernel record of a probe answer must carry finite start/end timestamps in
 * [0, 2^62] ns with end >= start (the records are stored as int64 offsets from the first
 * start); the fuzz harness found 1e19 cast to int64 (undefined behaviour) before. */
static dt_status records_check(const json_t *res, dt_err *err) {
    const json_t *recs = json_object_get(res, "kernels"), *k;
    size_t i;
    json_array_foreach(recs, i, k) {
        double st = json_number_value(json_object_get(k, "start_ns"));
        double en = json_number_value(json_object_get(k, "end_ns"));
        if (!(st >= 0 && st <= 4.6e18) || !(en >= st && en <= 4.6e18))
            return dt_fail(err, DT_EWORKER, "worker answered a probe kernel record (%zu) with "
                           "timestamps outside [0, 2^62] ns or ending before it starts", i);
    }
    return DT_OK;
}

static void probe_fill(const json_t *res, double reps, dt_sample *smp) {
    dt_probe *p = &smp->probe;
    smp->has_probe = 1;
    p->kernel_sum_us = json_number_value(json_object_get(res, "kernel_sum_ns")) / 1e3 / reps;
    p->kernel_span_us = json_number_value(json_object_get(res, "kernel_span_ns")) / 1e3 / reps;
    p->kernel_count = int_or_null(json_object_get(res, "kernel_count"));
    p->launch_count = int_or_null(json_object_get(res, "launch_count"));
    p->clock_offset_ns = number_or_nan(json_object_get(res, "clock_offset_ns"));
    p->clock_uncertainty_ns = number_or_nan(json_object_get(res, "clock_uncertainty_ns"));
    const json_t *recs = json_object_get(res, "kernels");
    kernels_fill(recs, reps, p);
    records_fill(recs, &p->records);
}

/* The answer resp (not consumed) of a device request into *out (see dt_protocol_device);
 * hold: the request asked for a held window, so the answer must say held:true. */
static dt_status device_from(const json_t *resp, int probe, int hold, int64_t reps,
                             dt_sample *out, dt_err *err) {
    const json_t *r = json_object_get(resp, "result");
    double stream_ns = json_number_value(json_object_get(r, "stream_ns"));
    if (!json_is_object(r) || !(stream_ns > 0))
        return dt_fail(err, DT_EWORKER, "worker answered device without a positive result.stream_ns");
    if (hold && !json_is_true(json_object_get(r, "held")))
        return dt_fail(err, DT_EWORKER, "worker answered a held device request without "
                       "held:true (its window was not held)");
    out->us = stream_ns / 1e3 / (double)reps;
    out->reps = reps;
    if (probe) {
        dt_status st = records_check(r, err);
        if (st != DT_OK) return st;
        probe_fill(r, (double)reps, out);
    }
    return DT_OK;
}

dt_status dt_protocol_device(dt_worker *w, int probe, int hold, int64_t reps,
                             const char *probe_kind, int prime, double timeout_s, dt_sample *out,
                             dt_err *err) {
    dt_protocol_device_opts o = {probe ? DT_PROTOCOL_DEVICE_PROBE : DT_PROTOCOL_DEVICE_CONTROL,
                                 hold, reps, probe_kind, prime, 0, 0, 0};
    dt_protocol_device_extra x;
    dt_status st = dt_protocol_device_ex(w, &o, timeout_s, out, &x, err);
    dt_protocol_device_extra_free(&x);
    return st;
}

dt_status dt_protocol_device_parse(const char *text, size_t len, int probe, int64_t reps,
                                   dt_sample *out, dt_err *err) {
    *out = dt_sample_empty();
    if (reps < 1) return dt_fail(err, DT_EINVAL, "device: reps must be positive");
    json_t *resp = json_loadb(text, len, 0, NULL);
    dt_status st;
    if (!json_is_object(resp) || !json_is_true(json_object_get(resp, "ok")))
        st = dt_fail(err, DT_EWORKER, "device: not an ok:true answer");
    else
        st = device_from(resp, probe, 0, reps, out, err);
    json_decref(resp);
    return st;
}

/* ---- decomposition (issue 13) ----------------------------------------------------------- */

/* arr[i][ka], arr[i][kb] as integers into a fresh interval array. 0 when an element lacks
 * them (or they are not integers in [0, 2^62]). */
static int intervals_from(const json_t *arr, const char *ka, const char *kb,
                          dt_decomp_interval **out, size_t *n) {
    size_t i;
    const json_t *x;
    *n = 0;
    *out = json_array_size(arr) ? dt_xcalloc(json_array_size(arr), sizeof **out) : NULL;
    json_array_foreach(arr, i, x) {
        const json_t *a = json_object_get(x, ka), *b = json_object_get(x, kb);
        if (!json_is_integer(a) || !json_is_integer(b) || json_integer_value(a) < 0 ||
            json_integer_value(b) < 0 || json_integer_value(a) > ((json_int_t)1 << 62) ||
            json_integer_value(b) > ((json_int_t)1 << 62))
            return 0;
        (*out)[(*n)++] = (dt_decomp_interval){json_integer_value(a), json_integer_value(b)};
    }
    return 1;
}

static dt_status decomp_from(const json_t *resp, dt_decomp_raw *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    out->position = DT_NULL_I64;
    const json_t *r = json_object_get(resp, "result");
    const json_t *d = json_object_get(r, "decomp");
    const json_t *t0 = json_object_get(d, "call_start_ns"), *t1 = json_object_get(d, "sync_return_ns");
    if (!json_is_object(d) || !json_is_integer(t0) || !json_is_integer(t1) ||
        json_integer_value(t0) <= 0 || json_integer_value(t1) < json_integer_value(t0))
        return dt_fail(err, DT_EWORKER, "worker answered decomp without result.decomp "
                       "call_start_ns <= sync_return_ns (positive integers)");
    out->call_start_ns = json_integer_value(t0);
    out->sync_return_ns = json_integer_value(t1);
    out->host_call_ns = number_or_nan(json_object_get(d, "host_call_ns"));
    if (!isfinite(out->host_call_ns))
        out->host_call_ns = (double)(out->sync_return_ns - out->call_start_ns);
    out->clock_offset_ns = number_or_nan(json_object_get(r, "clock_offset_ns"));
    out->clock_uncertainty_ns = number_or_nan(json_object_get(r, "clock_uncertainty_ns"));
    if (!(out->clock_uncertainty_ns >= 0))
        return dt_fail(err, DT_EWORKER, "worker answered decomp without a clock_uncertainty_ns >= 0");
    out->clock_source = int_or_null(json_object_get(d, "clock_source"));
    if (!intervals_from(json_object_get(d, "launches"), "enter_ns", "exit_ns", &out->launches,
                        &out->n_launches) ||
        !intervals_from(json_object_get(r, "kernels"), "start_ns", "end_ns", &out->kernels,
                        &out->n_kernels)) {
        dt_decomp_raw_free(out);
        return dt_fail(err, DT_EWORKER, "worker answered decomp with a launch or kernel "
                       "lacking integer timestamps in [0, 2^62] ns");
    }
    return DT_OK;
}

/* ---- device, with options (issue 13: graph replay, cold cache) ------------------------ */

static const char *const k_dev_scope[] = {"control", "probe", "graph"};

/* The answer resp of an extended device request into *out and *x. */
static dt_status device_ex_from(const json_t *resp, const dt_protocol_device_opts *o,
                                dt_sample *out, dt_protocol_device_extra *x, dt_err *err) {
    const json_t *un = json_object_get(resp, "unavailable");
    if (un) {
        if (o->scope != DT_PROTOCOL_DEVICE_GRAPH || !json_is_string(un) ||
            json_string_length(un) == 0)
            return dt_fail(err, DT_EWORKER, "worker answered device with 'unavailable' that is "
                           "not a non-empty string of a graph request");
        x->unavailable = dt_xstrdup(json_string_value(un));
        return DT_OK;
    }
    dt_status st = device_from(resp, o->scope == DT_PROTOCOL_DEVICE_PROBE, o->hold, o->reps,
                               out, err);
    if (st != DT_OK) return st;
    const json_t *c = json_object_get(json_object_get(resp, "result"), "cache");
    if (json_is_object(c)) {
        const json_t *cp = json_object_get(c, "copies"), *fb = json_object_get(c, "flush_bytes");
        const char *state = json_string_value(json_object_get(c, "state"));
        x->cache_cold = state && strcmp(state, "cold") == 0;
        x->copies = json_is_integer(cp) ? json_integer_value(cp) : 0;
        x->flushed_bytes = json_is_integer(fb) ? json_integer_value(fb) : 0;
    }
    return DT_OK;
}

dt_status dt_protocol_decomp(dt_worker *w, const char *probe_kind, int prime, double timeout_s,
                             dt_decomp_raw *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    json_t *req = json_pack("{s:s,s:s,s:i,s:i,s:s,s:i,s:b}", "cmd", "device", "scope", "probe",
                            "reps", 1, "capacity", 64, "probe_kind", probe_kind, "prime", prime,
                            "decomp", 1);
    json_t *resp = NULL;
    dt_status st = call(w, req, timeout_s, &resp, err);
    if (st != DT_OK) return st;
    st = decomp_from(resp, out, err);
    json_decref(resp);
    return st;
}

dt_status dt_protocol_decomp_parse(const char *text, size_t len, dt_decomp_raw *out,
                                   dt_err *err) {
    memset(out, 0, sizeof *out);
    json_t *resp = json_loadb(text, len, 0, NULL);
    dt_status st;
    if (!json_is_object(resp) || !json_is_true(json_object_get(resp, "ok")))
        st = dt_fail(err, DT_EWORKER, "decomp: not an ok:true answer");
    else
        st = decomp_from(resp, out, err);
    json_decref(resp);
    return st;
}

/* The request of o as JSON. */
static json_t *device_ex_request(const dt_protocol_device_opts *o) {
    json_t *req = json_pack("{s:s,s:s,s:I,s:I,s:s,s:i}", "cmd", "device", "scope",
                            k_dev_scope[o->scope], "reps", (json_int_t)o->reps, "capacity",
                            (json_int_t)(o->reps * 16 + 64), "probe_kind",
                            o->probe_kind ? o->probe_kind : "concurrent", "prime", o->prime);
    if (o->hold) json_object_set_new(req, "hold", json_true());
    if (o->cache_cold) {
        json_object_set_new(req, "cache", json_string("cold"));
        json_object_set_new(req, "copies", json_integer((json_int_t)o->copies));
        json_object_set_new(req, "flush_bytes", json_integer((json_int_t)o->flush_bytes));
    }
    return req;
}

dt_status dt_protocol_device_ex(dt_worker *w, const dt_protocol_device_opts *o, double timeout_s,
                                dt_sample *out, dt_protocol_device_extra *x, dt_err *err) {
    *out = dt_sample_empty();
    memset(x, 0, sizeof *x);
    if (o->reps < 1) return dt_fail(err, DT_EINVAL, "device: reps must be positive");
    json_t *resp = NULL;
    dt_status st = call(w, device_ex_request(o), timeout_s, &resp, err);
    if (st != DT_OK) return st;
    st = device_ex_from(resp, o, out, x, err);
    json_decref(resp);
    if (st != DT_OK) dt_protocol_device_extra_free(x);
    return st;
}

dt_status dt_protocol_device_ex_parse(const char *text, size_t len,
                                      const dt_protocol_device_opts *o, dt_sample *out,
                                      dt_protocol_device_extra *x, dt_err *err) {
    *out = dt_sample_empty();
    memset(x, 0, sizeof *x);
    if (o->reps < 1) return dt_fail(err, DT_EINVAL, "device: reps must be positive");
    json_t *resp = json_loadb(text, len, 0, NULL);
    dt_status st;
    if (!json_is_object(resp) || !json_is_true(json_object_get(resp, "ok")))
        st = dt_fail(err, DT_EWORKER, "device: not an ok:true answer");
    else
        st = device_ex_from(resp, o, out, x, err);
    json_decref(resp);
    if (st != DT_OK) dt_protocol_device_extra_free(x);
    return st;
}

void dt_protocol_device_extra_free(dt_protocol_device_extra *x) {
    free(x->unavailable);
    x->unavailable = NULL;
}

/* ---- ceilings ----------------------------------------------------------------------------- */

/* c[key] must be a positive finite number; absent is fine unless required (then NAN). */
static dt_status positive(const json_t *c, const char *key, int required, double *out,
                          dt_err *err) {
    const json_t *v = json_object_get(c, key);
    *out = NAN;
    if (!v)
        return required ? dt_fail(err, DT_EINVAL, "ceilings: missing '%s'", key) : DT_OK;
    if (!json_is_number(v))
        return dt_fail(err, DT_EINVAL, "ceilings: '%s' is not a number", key);
    double x = json_number_value(v);
    if (!isfinite(x) || x <= 0)
        return dt_fail(err, DT_EINVAL, "ceilings: '%s' = %g is not a positive finite number",
                       key, x);
    *out = x;
    return DT_OK;
}

static dt_status ceilings_from(const json_t *c, const char *backend, dt_ceilings_rec *out,
                               dt_err *err) {
    memset(out, 0, sizeof *out);
    if (!json_is_object(c)) return dt_fail(err, DT_EINVAL, "ceilings: not an object");
    double bytes;
    if (positive(c, "copy_gbps", 1, &out->copy_gbps, err) != DT_OK ||
        positive(c, "copy_bytes", 1, &bytes, err) != DT_OK ||
        positive(c, "launch_sync_floor_us", 1, &out->launch_sync_floor_us, err) != DT_OK ||
        positive(c, "launch_queue_floor_us", 1, &out->launch_queue_floor_us, err) != DT_OK ||
        /* optional: older results.json files and other workers lack it */
        positive(c, "launch_sync_touch_floor_us", 0, &out->launch_sync_touch_floor_us, err) != DT_OK ||
        /* optional: held windows around one call / per call of a batch of the empty and
         * the touch kernel (docs/protocol.md, "ceilings") */
        positive(c, "held_launch_floor_us", 0, &out->held_floor_single_us, err) != DT_OK ||
        positive(c, "held_launch_batch_floor_us", 0, &out->held_floor_batch_us, err) != DT_OK ||
        positive(c, "held_touch_floor_us", 0, &out->held_touch_floor_single_us, err) != DT_OK ||
        positive(c, "held_touch_batch_floor_us", 0, &out->held_touch_floor_batch_us, err) != DT_OK ||
        /* optional: the spread of the copy ceiling's own measurement (IQR, GB/s) */
        positive(c, "copy_gbps_iqr", 0, &out->copy_gbps_iqr, err) != DT_OK)
        return DT_EINVAL;
    const json_t *m = json_object_get(c, "method");
    if (m && !json_is_string(m)) return dt_fail(err, DT_EINVAL, "ceilings: 'method' is not a string");
    if (bytes > 9.0e18) /* beyond int64_t: the cast would be undefined */
        return dt_fail(err, DT_EINVAL, "ceilings: 'copy_bytes' = %g is too large", bytes);
    out->copy_bytes = (int64_t)bytes;
    out->method = dup_or_null(json_string_value(m));
    const char *b = json_string_value(json_object_get(c, "backend"));
    out->backend = dup_or_null(b ? b : backend);
    out->present = 1;
    return DT_OK;
}

dt_status dt_protocol_ceilings(dt_worker *w, const char *backend, double timeout_s,
                               dt_ceilings_rec *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    if (!backend) return dt_fail(err, DT_EINVAL, "ceilings: no backend");
    json_t *req = json_pack("{s:s,s:s}", "cmd", "ceilings", "backend", backend);
    if (!req) return dt_fail(err, DT_EINVAL, "ceilings: backend name is not UTF-8");
    json_t *resp = NULL;
    dt_status st = call(w, req, timeout_s, &resp, err);
    if (st != DT_OK) return st;
    st = ceilings_from(json_object_get(resp, "ceilings"), backend, out, err);
    json_decref(resp);
    return st;
}

dt_status dt_protocol_ceilings_parse(const char *text, size_t len, const char *backend,
                                     dt_ceilings_rec *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    json_t *c = json_loadb(text, len, 0, NULL);
    if (!c) return dt_fail(err, DT_EINVAL, "ceilings: not JSON");
    dt_status st = ceilings_from(c, backend, out, err);
    json_decref(c);
    return st;
}

/* ---- flop ceilings ------------------------------------------------------------------------ */

static dt_status flop_ceilings_from(const json_t *c, dt_flop_ceilings_rec *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    if (!json_is_object(c)) return dt_fail(err, DT_EINVAL, "flop_ceilings: not an object");
    static const char *const keys[3] = {"fp32_tflops", "bf16_tflops", "fp16_tflops"};
    double *dst[3] = {&out->fp32_tflops, &out->bf16_tflops, &out->fp16_tflops};
    int any = 0;
    for (int i = 0; i < 3; i++) {
        const json_t *v = json_object_get(c, keys[i]);
        if (!v) continue;
        const double x = json_is_number(v) ? json_number_value(v) : NAN;
        if (!isfinite(x) || x <= 0)
            return dt_fail(err, DT_EINVAL,
                           "flop_ceilings: '%s' is not a positive finite number", keys[i]);
        *dst[i] = x;
        any = 1;
    }
    if (!any)
        return dt_fail(err, DT_EINVAL,
                       "flop_ceilings: none of fp32_tflops, bf16_tflops, fp16_tflops");
    const json_t *m = json_object_get(c, "method");
    if (m && !json_is_string(m))
        return dt_fail(err, DT_EINVAL, "flop_ceilings: 'method' is not a string");
    out->method = dup_or_null(json_string_value(m));
    return DT_OK;
}

dt_status dt_protocol_flop_ceilings(dt_worker *w, const char *backend, double timeout_s,
                                    dt_flop_ceilings_rec *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    if (!backend) return dt_fail(err, DT_EINVAL, "flop_ceilings: no backend");
    json_t *req = json_pack("{s:s,s:s}", "cmd", "flop_ceilings", "backend", backend);
    if (!req) return dt_fail(err, DT_EINVAL, "flop_ceilings: backend name is not UTF-8");
    json_t *resp = NULL;
    dt_status st = call(w, req, timeout_s, &resp, err);
    if (st != DT_OK) return st;
    st = flop_ceilings_from(json_object_get(resp, "flop_ceilings"), out, err);
    json_decref(resp);
    return st;
}

dt_status dt_protocol_flop_ceilings_parse(const char *text, size_t len,
                                          dt_flop_ceilings_rec *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    json_t *c = json_loadb(text, len, 0, NULL);
    if (!c) return dt_fail(err, DT_EINVAL, "flop_ceilings: not JSON");
    dt_status st = flop_ceilings_from(c, out, err);
    json_decref(c);
    return st;
}

/* ---- resumption notes --------------------------------------------------------------------- */

dt_status dt_protocol_resume_note(const char *old_notes, const char *at, const char *run_json,
                                  char **out, dt_err *err) {
    *out = NULL;
    json_t *notes = old_notes ? json_loads(old_notes, 0, NULL) : json_array();
    json_t *run = json_loads(run_json, 0, NULL);
    if (!json_is_array(notes) || !json_is_object(run)) {
        json_decref(notes);
        json_decref(run);
        return dt_fail(err, DT_EINVAL, "resumption notes: not JSON");
    }
    json_t *note = json_pack("{s:s}", "at", at);
    static const char *const k_keys[] = {"tool", "frameworks", "environment"};
    for (size_t i = 0; i < 3; i++) {
        json_t *v = json_object_get(run, k_keys[i]);
        json_object_set(note, k_keys[i], v ? v : json_null());
    }
    json_array_append_new(notes, note);
    *out = json_dumps(notes, JSON_COMPACT);
    json_decref(notes);
    json_decref(run);
    DT_ASSERT(*out);
    return DT_OK;
}
