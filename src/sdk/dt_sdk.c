/* dt_sdk.c — the worker SDK's protocol loop (contract in include/dualtime/dt_worker_sdk.h;
 * the protocol in docs/protocol.md). Requests are parsed and validated by the native
 * worker's parser (workers/native/dt_native_request.c, linked into the library), so an
 * SDK worker accepts exactly what the native worker accepts. stdout carries only
 * protocol lines (flushed after each); diagnostics go to stderr. */
#define _GNU_SOURCE
#include "../../include/dualtime/dt_worker_sdk.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../workers/native/dt_native_request.h"
#include "../data/dt_shm.h"
#include "dt_sdk_cuda.h"

#define DT_SDK_MAX_RECORDS_OUT 20000 /* kernel records in one device answer at most */

struct dt_sdk {
    dt_sdk_spec spec;
    int threads;
    int registered[DT_OP_COUNT];
    dt_sdk_op ops[DT_OP_COUNT];
    int cuda_ok;          /* CUDA mode: the driver loaded and a device is current */
    char cuda_reason[512];
    /* the prepared case */
    int prepared, uploaded, warm;
    const dt_sdk_op *op;
    dt_case_layout L;
    dt_shm shm;
    uint64_t dptr;        /* CUDA mode: the arena's device mirror */
    dt_sdk_case c;
    dt_sdk_buffer bufs[DT_MAX_BUFFERS];
    char case_id[128];
};

/* ---- output ---------------------------------------------------------------------- */

static const char *who(const dt_sdk *s) { return s->spec.worker ? s->spec.worker : "sdk-worker"; }

/* Writes one response line (steals o) and flushes. */
static void emit(json_t *o) {
    char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    json_decref(o);
    fputs(txt ? txt : "{\"ok\":false,\"error\":\"internal: cannot encode response\"}", stdout);
    fputc('\n', stdout);
    free(txt);
    fflush(stdout);
}

static void emit_error(const dt_sdk *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit_error(const dt_sdk *s, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(stderr, "%s: %s\n", who(s), msg);
    json_t *o = json_pack("{s:b,s:s}", "ok", 0, "error", msg);
    emit(o ? o : json_pack("{s:b,s:s}", "ok", 0, "error", "invalid error text"));
}

/* ---- public helpers -------------------------------------------------------------- */

int dt_sdk_error(dt_sdk_case *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error, sizeof c->error, fmt, ap);
    va_end(ap);
    return -1;
}

dt_sdk_buffer *dt_sdk_buf(dt_sdk_case *c, const char *name) {
    for (int i = 0; i < c->nbuffers; i++)
        if (strcmp(c->buf[i].name, name) == 0) return &c->buf[i];
    return NULL;
}

int dt_sdk_threads(const dt_sdk *sdk) { return sdk->threads; }

int dt_sdk_register_op(dt_sdk *sdk, const char *op, const dt_sdk_op *ops) {
    int i = op ? dt_op_find(op) : -1;
    if (i < 0 || !ops || !ops->call) {
        fprintf(stderr, "%s: dt_sdk_register: unknown op '%s' or no call (see `dualtime list`)\n",
                who(sdk), op ? op : "(null)");
        return -1;
    }
    if (sdk->registered[i]) {
        fprintf(stderr, "%s: dt_sdk_register: op '%s' registered twice\n", who(sdk), op);
        return -1;
    }
    sdk->registered[i] = 1;
    sdk->ops[i] = *ops;
    return 0;
}

int dt_sdk_register(dt_sdk *sdk, const char *op, dt_sdk_call_fn call, void *ctx) {
    dt_sdk_op o = {call, NULL, NULL, NULL, ctx};
    return dt_sdk_register_op(sdk, op, &o);
}

/* ---- hello ----------------------------------------------------------------------- */

static int is_cuda(const dt_sdk *s) { return s->spec.backend == DT_SDK_CUDA; }

static void do_hello(dt_sdk *s) {
    json_t *cpu, *cuda, *timing, *ops = json_array();
    for (int i = 0; i < DT_OP_COUNT; i++)
        if (s->registered[i]) json_array_append_new(ops, json_string(dt_op_get((dt_op)i)->name));
    char reason[512] = "";
    if (is_cuda(s)) {
        cpu = json_pack("{s:b,s:s}", "available", 0, "reason", "this SDK worker serves cuda only");
        if (s->cuda_ok) {
            char info[1024];
            dt_sdk_cuda_describe(info, sizeof info);
            cuda = json_pack("{s:b,s:o}", "available", 1, "info", json_loads(info, 0, NULL));
        } else {
            cuda = json_pack("{s:b,s:s}", "available", 0, "reason", s->cuda_reason);
        }
        if (s->cuda_ok && dt_sdk_timing_load(reason, sizeof reason))
            timing = json_pack("{s:b}", "available", 1);
        else
            timing = json_pack("{s:b,s:s}", "available", 0, "reason",
                               s->cuda_ok ? reason : "device timing not offered: no CUDA device");
    } else {
        cpu = json_pack("{s:b}", "available", 1);
        cuda = json_pack("{s:b,s:s}", "available", 0, "reason", "this SDK worker serves cpu only");
        timing = json_pack("{s:b,s:s}", "available", 0, "reason",
                           "device timing not offered: cpu worker");
    }
    json_t *o = json_pack(
        "{s:b,s:i,s:i,s:{s:s,s:i},s:s,s:s,s:s,s:{s:o,s:o},s:o,s:{s:o},s:{s:i,s:s}}", "ok", 1,
        "protocol", DT_SDK_PROTOCOL, "sdk_version", s->spec.sdk_version, "sdk", "name",
        "dualtime-worker-sdk", "library_version", DT_SDK_VERSION, "worker", who(s), "framework",
        s->spec.framework ? s->spec.framework : "unknown", "framework_version",
        s->spec.framework_version ? s->spec.framework_version : "unknown", "backends", "cpu", cpu,
        "cuda", cuda, "device_timing", timing, "ops", "registered", ops, "env", "threads",
        s->threads, "compiler", "gcc " __VERSION__);
    if (!o) {
        emit_error(s, "internal: cannot build hello (non-UTF-8 worker, framework or version?)");
        return;
    }
    emit(o);
}

/* ---- prepare / release ----------------------------------------------------------- */

static dt_status cuda_check(void *ctx, dt_err *err) {
    dt_sdk *s = ctx;
    if (!is_cuda(s)) return dt_fail(err, DT_EUNAVAIL, "this SDK worker serves cpu only");
    if (!s->cuda_ok) return dt_fail(err, DT_EUNAVAIL, "cuda backend unavailable: %s", s->cuda_reason);
    return DT_OK;
}

/* The callbacks' view of the layout: one typed buffer per arena buffer. */
static void make_views(dt_sdk *s, const char *op_name) {
    dt_sdk_case *c = &s->c;
    memset(c, 0, sizeof *c);
    c->op = op_name;
    c->id = s->case_id;
    c->backend = s->spec.backend;
    c->m = s->L.m;
    c->n = s->L.n;
    c->k = dt_op_get(s->L.op)->is_gemm ? s->L.k : 0;
    c->nbuffers = s->L.nbuffers;
    c->buf = s->bufs;
    for (int i = 0; i < s->L.nbuffers; i++) {
        const dt_buffer_layout *B = &s->L.buf[i];
        dt_sdk_buffer *v = &s->bufs[i];
        v->name = B->name;
        v->dtype = (dt_sdk_dtype)B->dtype;
        v->is_output = B->is_output;
        v->rows = B->rows;
        v->cols = B->cols;
        v->row_stride = B->row_stride;
        v->elem_bytes = B->elem_bytes;
        v->host = s->shm.base + B->data_offset;
        v->device = s->dptr ? (void *)(uintptr_t)(s->dptr + (uint64_t)B->data_offset) : NULL;
        v->base = is_cuda(s) ? v->device : v->host;
    }
}

static void release_case(dt_sdk *s) {
    if (s->op && s->op->release) s->op->release(&s->c, s->op->ctx);
    if (is_cuda(s)) dt_sdk_cuda_case_close(s->dptr, s->c.stream);
    s->dptr = 0;
    s->c.stream = NULL;
    dt_shm_destroy(&s->shm);
    s->prepared = s->uploaded = s->warm = 0;
    s->op = NULL;
}

/* Maps the arena, opens the device mirror (CUDA mode) and runs the op's prepare hook. */
static dt_status open_case(dt_sdk *s, const dt_prepare_req *pr, double *alloc_ms, dt_err *err) {
    if (dt_shm_open(&s->shm, pr->shm_name, pr->arena_bytes, err) != DT_OK) return DT_EIO;
    s->L = pr->L;
    s->op = &s->ops[s->L.op];
    void *stream = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (is_cuda(s) && dt_sdk_cuda_case_open(s->L.total_bytes, &s->dptr, &stream, err) != DT_OK) {
        dt_shm_destroy(&s->shm);
        s->op = NULL;
        return DT_EDEVICE;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *alloc_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    make_views(s, dt_op_get(s->L.op)->name);
    s->c.stream = stream;
    if (s->op->prepare && s->op->prepare(&s->c, s->op->ctx) != 0) {
        dt_fail(err, DT_EINVAL, "%s", s->c.error[0] ? s->c.error : "the op's prepare hook failed");
        s->op = NULL; /* no release hook for a case its prepare refused */
        release_case(s);
        return DT_EINVAL;
    }
    return DT_OK;
}

static void do_prepare(dt_sdk *s, json_t *req) {
    if (s->prepared) {
        emit_error(s, "prepare: a case is already prepared (release it first)");
        return;
    }
    dt_err err = {{0}};
    dt_prepare_req pr;
    if (dt_req_parse_prepare(req, cuda_check, s, &pr, &err) != DT_OK) {
        emit_error(s, "prepare: %s", err.msg);
        return;
    }
    if (!pr.cuda && is_cuda(s)) {
        emit_error(s, "prepare: this SDK worker serves cuda only");
        return;
    }
    const char *op_name = dt_op_get(pr.L.op)->name;
    if (!s->registered[pr.L.op]) {
        emit_error(s, "prepare: op '%s' is not registered by this worker", op_name);
        return;
    }
    const char *cid = json_string_value(json_object_get(req, "case"));
    snprintf(s->case_id, sizeof s->case_id, "%s", cid ? cid : "");
    double alloc_ms = 0;
    if (open_case(s, &pr, &alloc_ms, &err) != DT_OK) {
        emit_error(s, "prepare: %s", err.msg);
        return;
    }
    s->prepared = 1;
    char impl[512];
    snprintf(impl, sizeof impl, "%s", s->op->implementation ? s->op->implementation : "");
    if (!impl[0]) snprintf(impl, sizeof impl, "%s: %s (worker SDK callback)", who(s), op_name);
    json_t *o = json_pack("{s:b,s:s,s:s,s:{s:f,s:f},s:[]}", "ok", 1, "output_policy",
                          "preallocated", "implementation", impl, "setup_ms", "compile", 0.0,
                          "alloc", alloc_ms, "sources");
    if (!o) {
        emit_error(s, "prepare: internal: cannot encode the answer (non-UTF-8 implementation?)");
        return;
    }
    emit(o);
}

static int need_case(dt_sdk *s, const char *cmd, int need_upload) {
    if (!s->prepared) {
        emit_error(s, "%s before prepare", cmd);
        return 0;
    }
    if (need_upload && !s->uploaded) {
        emit_error(s, "%s before upload", cmd);
        return 0;
    }
    return 1;
}

/* upload (to_device 1) or download: the whole arena; nothing to do on the CPU. */
static void do_copy(dt_sdk *s, int to_device) {
    const char *cmd = to_device ? "upload" : "download";
    if (!need_case(s, cmd, !to_device)) return;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    dt_err err = {{0}};
    if (is_cuda(s) &&
        dt_sdk_cuda_copy(to_device, s->dptr, s->shm.base, s->L.total_bytes, &err) != DT_OK) {
        emit_error(s, "%s: %s", cmd, err.msg);
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (to_device) s->uploaded = 1;
    double ms = is_cuda(s) ? (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                                 (double)(t1.tv_nsec - t0.tv_nsec) / 1e6
                           : 0.0;
    emit(json_pack("{s:b,s:f}", "ok", 1, "ms", ms));
}

/* ---- calls ----------------------------------------------------------------------- */

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void empty_call(void) {}

/* n calls of the op (floor: of the empty call), no synchronization. */
static dt_status calls(dt_sdk *s, int64_t n, int floor, dt_err *err) {
    void (*volatile fp)(void) = empty_call;
    for (int64_t i = 0; i < n; i++) {
        if (floor) {
            if (!is_cuda(s)) fp();
            else if (dt_sdk_cuda_empty(s->c.stream, err) != DT_OK) return DT_EDEVICE;
            continue;
        }
        s->c.error[0] = '\0';
        if (s->op->call(&s->c, s->op->ctx) != 0)
            return dt_fail(err, DT_EINVAL, "%s: %s", s->c.op,
                           s->c.error[0] ? s->c.error : "the op's callback failed");
    }
    if (!floor) s->warm = 1;
    return DT_OK;
}

static dt_status sync_device(dt_sdk *s, dt_err *err) {
    return is_cuda(s) ? dt_sdk_cuda_sync(err) : DT_OK;
}

/* run or floor: P untimed calls and a sync, then sync; t0; R calls; sync; t1. */
static void do_timed(dt_sdk *s, json_t *req, int floor) {
    const char *cmd = floor ? "floor" : "run";
    if (!need_case(s, cmd, 1)) return;
    int64_t reps = 0, prime = 0;
    dt_err err = {{0}};
    if (dt_req_parse_reps(req, &reps, &err) != DT_OK ||
        dt_req_parse_prime(req, &prime, &err) != DT_OK) {
        emit_error(s, "%s: %s", cmd, err.msg);
        return;
    }
    if (calls(s, prime, floor, &err) != DT_OK || sync_device(s, &err) != DT_OK) {
        emit_error(s, "%s (prime): %s", cmd, err.msg);
        return;
    }
    int64_t t0 = now_ns();
    dt_status st = calls(s, reps, floor, &err);
    if (st == DT_OK) st = sync_device(s, &err);
    int64_t t1 = now_ns();
    if (st != DT_OK) {
        emit_error(s, "%s: %s", cmd, err.msg);
        return;
    }
    emit(json_pack("{s:b,s:I}", "ok", 1, "host_ns", (json_int_t)(t1 - t0 > 0 ? t1 - t0 : 1)));
}

/* ---- device timing --------------------------------------------------------------- */

/* The helper's result as the protocol's result object, with up to nrecs kernel records. */
static json_t *timing_json(const dt_timing_result *r, const dt_timing_kernel *recs, uint64_t nrecs) {
    json_t *o = json_pack(
        "{s:i,s:s,s:f,s:f,s:f,s:I,s:I,s:I,s:f,s:f,s:I,s:I,s:I,s:b}", "abi_version",
        (int)r->abi_version, "scope", r->scope == DT_TIMING_PROBE ? "probe" : "control",
        "stream_ns", r->stream_ns, "kernel_sum_ns", r->kernel_sum_ns, "kernel_span_ns",
        r->kernel_span_ns, "kernel_count", (json_int_t)r->kernel_count, "launch_count",
        (json_int_t)r->launch_count, "dropped_records", (json_int_t)r->dropped_records,
        "clock_offset_ns", r->clock_offset_ns, "clock_uncertainty_ns", r->clock_uncertainty_ns,
        "host_begin_ns", (json_int_t)r->host_begin_ns, "host_end_ns", (json_int_t)r->host_end_ns,
        "records_stored", (json_int_t)r->records_stored, "held", (int)r->held);
    if (r->scope == DT_TIMING_PROBE)
        json_object_set_new(o, "probe_kind", json_string(r->probe_kind == DT_TIMING_PROBE_SERIALIZED
                                                             ? "serialized"
                                                             : "concurrent"));
    if (r->hold_method) {
        json_object_set_new(o, "hold_method", json_string(dt_timing_hold_method_name(r->hold_method)));
        json_object_set_new(o, "hold_timeout_ms", json_integer((json_int_t)r->hold_timeout_ms));
        json_object_set_new(o, "hold_queue_ns", json_integer((json_int_t)r->hold_queue_ns));
    }
    json_t *arr = json_array();
    for (uint64_t i = 0; i < nrecs; i++) {
        const dt_timing_kernel *k = &recs[i];
        char name[sizeof k->name + 1];
        memcpy(name, k->name, sizeof k->name);
        name[sizeof k->name] = '\0';
        json_t *jn = json_string(name);
        json_array_append_new(
            arr, json_pack("{s:o,s:I,s:I,s:[i,i,i],s:[i,i,i],s:I,s:i}", "name",
                           jn ? jn : json_string("(name not UTF-8)"), "start_ns",
                           (json_int_t)k->start_ns, "end_ns", (json_int_t)k->end_ns, "grid",
                           (int)k->grid[0], (int)k->grid[1], (int)k->grid[2], "block",
                           (int)k->block[0], (int)k->block[1], (int)k->block[2],
                           "correlation_id", (json_int_t)k->correlation_id, "stream_id",
                           (int)k->stream_id));
    }
    json_object_set_new(o, "kernels", arr);
    json_object_set_new(o, "kernels_truncated", json_boolean(nrecs < r->records_stored));
    return o;
}

/* One region: [hold] begin; reps calls; end. */
static dt_status device_region(dt_sdk *s, const dt_sdk_timing_api *T, int probe, int64_t reps,
                               int64_t capacity, int hold, dt_timing_result *res, dt_err *err) {
    if (hold && !s->warm && (calls(s, 1, 0, err) != DT_OK || sync_device(s, err) != DT_OK))
        return DT_EINVAL;
    if (hold && !T->hold(s->c.stream)) return dt_fail(err, DT_EDEVICE, "timing hold: %s", T->last_error());
    int began = probe ? T->begin_probe(s->c.stream, (uint32_t)(capacity > 0 ? capacity : 1),
                                       probe == 2 ? DT_TIMING_PROBE_SERIALIZED
                                                  : DT_TIMING_PROBE_CONCURRENT)
                      : T->begin_control(s->c.stream);
    if (!began) return dt_fail(err, DT_EDEVICE, "timing begin: %s", T->last_error());
    dt_status st = calls(s, reps, 0, err);
    if (!T->end(res)) {
        if (st != DT_OK) return st;
        return dt_fail(err, DT_EDEVICE, "timing end: %s", T->last_error());
    }
    if (st != DT_OK) return st;
    if (hold && !res->held) return dt_fail(err, DT_EDEVICE, "timing end: the region was not held");
    return sync_device(s, err);
}

static void do_device(dt_sdk *s, json_t *req) {
    if (!need_case(s, "device", 1)) return;
    char reason[512] = "device timing not offered: cpu worker";
    const dt_sdk_timing_api *T = is_cuda(s) ? dt_sdk_timing_load(reason, sizeof reason) : NULL;
    if (!T) {
        emit_error(s, "%s", reason);
        return;
    }
    int probe = 0, hold = 0;
    int64_t reps = 0, capacity = 0, prime = 0;
    dt_err err = {{0}};
    if (dt_req_parse_device(req, &probe, &reps, &capacity, &hold, &err) != DT_OK ||
        dt_req_parse_prime(req, &prime, &err) != DT_OK) {
        emit_error(s, "device: %s", err.msg);
        return;
    }
    if (calls(s, prime, 0, &err) != DT_OK || sync_device(s, &err) != DT_OK) {
        emit_error(s, "device (prime): %s", err.msg);
        return;
    }
    dt_timing_result res;
    memset(&res, 0, sizeof res);
    if (device_region(s, T, probe, reps, capacity, hold, &res, &err) != DT_OK) {
        emit_error(s, "device: %s", err.msg);
        return;
    }
    uint64_t nrecs = 0, want = probe ? res.records_stored : 0;
    if (want > DT_SDK_MAX_RECORDS_OUT) want = DT_SDK_MAX_RECORDS_OUT;
    dt_timing_kernel *recs = want ? calloc((size_t)want, sizeof *recs) : NULL;
    while (recs && nrecs < want && T->kernel_record(nrecs, &recs[nrecs])) nrecs++;
    json_t *o = json_pack("{s:b}", "ok", 1);
    json_object_set_new(o, "result", timing_json(&res, recs, nrecs));
    free(recs);
    emit(o);
}

static void do_probe_process(dt_sdk *s, json_t *req) {
    json_t *k = json_object_get(req, "probe_kind");
    const char *kind = k ? json_string_value(k) : "concurrent";
    if (!kind || (strcmp(kind, "concurrent") != 0 && strcmp(kind, "serialized") != 0)) {
        emit_error(s, "probe_process: 'probe_kind' must be \"concurrent\" or \"serialized\"");
        return;
    }
    char reason[512] = "device timing not offered: cpu worker";
    const dt_sdk_timing_api *T = is_cuda(s) && s->cuda_ok ? dt_sdk_timing_load(reason, sizeof reason) : NULL;
    if (!T) {
        emit_error(s, "probe_process: %s", reason);
        return;
    }
    int on = strcmp(kind, "serialized") == 0 ? DT_TIMING_PERSISTENT_SERIALIZED
                                             : DT_TIMING_PERSISTENT_CONCURRENT;
    if (!T->set_persistent(on)) {
        emit_error(s, "probe_process: dt_timing_set_persistent: %s", T->last_error());
        return;
    }
    emit(json_pack("{s:b,s:b,s:s}", "ok", 1, "persistent", 1, "probe_kind", kind));
}

/* ---- the loop -------------------------------------------------------------------- */

/* Handles one request line; returns 1 when the worker should exit. */
static int handle_line(dt_sdk *s, const char *line, size_t len) {
    json_t *req;
    const char *cmd;
    dt_err perr = {{0}};
    if (dt_req_parse_line(line, len, &req, &cmd, &perr) != DT_OK) {
        emit_error(s, "%s", perr.msg);
        return 0;
    }
    int quit = 0;
    if (strcmp(cmd, "hello") == 0) do_hello(s);
    else if (strcmp(cmd, "prepare") == 0) do_prepare(s, req);
    else if (strcmp(cmd, "upload") == 0) do_copy(s, 1);
    else if (strcmp(cmd, "download") == 0) do_copy(s, 0);
    else if (strcmp(cmd, "run") == 0) do_timed(s, req, 0);
    else if (strcmp(cmd, "floor") == 0) do_timed(s, req, 1);
    else if (strcmp(cmd, "device") == 0) do_device(s, req);
    else if (strcmp(cmd, "probe_process") == 0) do_probe_process(s, req);
    else if (strcmp(cmd, "ceilings") == 0)
        emit_error(s, "ceilings: not offered by this worker (a worker SDK worker)");
    else if (strcmp(cmd, "release") == 0) {
        if (need_case(s, "release", 0)) {
            release_case(s);
            emit(json_pack("{s:b}", "ok", 1));
        }
    } else if (strcmp(cmd, "quit") == 0) {
        emit(json_pack("{s:b}", "ok", 1));
        quit = 1;
    } else {
        char shown[64];
        snprintf(shown, sizeof shown, "%s", cmd);
        emit_error(s, "unknown cmd '%s'", shown);
    }
    json_decref(req);
    return quit;
}

/* --threads N (appended by dualtime) and --help. 1 to go on, else 0 (*rc set). */
static int parse_args(dt_sdk *s, int argc, char **argv, int *rc) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            char *end = NULL;
            long t = strtol(argv[++i], &end, 10);
            if (!end || *end || t < 1 || t > 4096) {
                fprintf(stderr, "%s: bad --threads '%s'\n", who(s), argv[i]);
                *rc = 2;
                return 0;
            }
            s->threads = (int)t;
        } else {
            fprintf(stderr, "usage: %s [--threads N]   (a dualtime worker: it speaks the worker "
                    "protocol on stdin/stdout; docs/worker-sdk.md)\n", argv[0]);
            *rc = strcmp(argv[i], "--help") == 0 ? 0 : 2;
            return 0;
        }
    }
    return 1;
}

int dt_sdk_main(int argc, char **argv, const dt_sdk_spec *spec) {
    static dt_sdk s; /* one per process: the loop serves one orchestrator */
    memset(&s, 0, sizeof s);
    s.spec = *spec;
    int rc = 0;
    if (!parse_args(&s, argc, argv, &rc)) return rc;
    if (spec->init && spec->init(&s, spec->user) != 0) {
        fprintf(stderr, "%s: init failed\n", who(&s));
        return 2;
    }
    /* held windows must not meet lazy module loading (a first launch that loads code can
     * synchronize inside the hold): eager unless the caller chose, as the native worker */
    if (is_cuda(&s)) setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    if (is_cuda(&s)) s.cuda_ok = dt_sdk_cuda_load(s.cuda_reason, sizeof s.cuda_reason);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0) continue;
        if (handle_line(&s, line, (size_t)len)) break;
        if (is_cuda(&s) && dt_sdk_cuda_lost()) {
            /* as the native worker: exit so that a fresh worker serves the next case */
            fprintf(stderr, "%s: the CUDA context is lost (a kernel fault); exiting so a fresh "
                    "worker takes over\n", who(&s));
            free(line);
            return 3;
        }
    }
    free(line);
    if (s.prepared) release_case(&s);
    return 0;
}
