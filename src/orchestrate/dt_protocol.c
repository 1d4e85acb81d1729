/* dt_protocol.c — protocol requests and answers as C structs (contract in dt_protocol.h). */
#define _GNU_SOURCE
#include "dt_protocol.h"

#include <jansson.h>
#include <string.h>

static char *dup_or_null(const char *s) { return s ? dt_xstrdup(s) : NULL; }

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
    backend_of(o, "cpu", &h->cpu);
    backend_of(o, "cuda", &h->cuda);
    const json_t *th = json_object_get(json_object_get(o, "env"), "threads");
    h->threads = json_is_integer(th) ? json_integer_value(th) : -1;
    const json_t *info = json_object_get(json_object_get(json_object_get(o, "backends"), "cuda"),
                                         "info");
    if (json_is_object(info)) h->cuda_info_json = json_dumps(info, JSON_COMPACT);
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
    free(h->text);
    memset(h, 0, sizeof *h);
}

dt_status dt_protocol_start(dt_worker *w, double timeout_s, dt_hello *hello, dt_err *err) {
    memset(hello, 0, sizeof *hello);
    dt_status st = dt_worker_start(w, err);
    if (st != DT_OK) return st;
    json_t *req = json_pack("{s:s}", "cmd", "hello");
    json_t *resp = NULL;
    /* starting a framework (importing torch, creating a CUDA context) can take far longer
     * than one request: the start gets at least DT_WORKER_START_S */
    st = dt_worker_call(w, req, timeout_s > DT_WORKER_START_S ? timeout_s : DT_WORKER_START_S,
                        &resp, err);
    json_decref(req);
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
    hello_fill(resp, hello);
    json_decref(resp);
    return DT_OK;
}
