/* dt_native_main.c — the native worker (dualtime-native-worker): speaks the worker
 * protocol (docs/protocol.md) on stdin/stdout and serves dualtime's own kernels through a
 * backend (dt_backend.h): the CPU backend always, the CUDA backend when the module
 * libdualtime_cuda.so (next to this executable) loads and finds a device.
 *
 * Run: dualtime-native-worker [--threads N]   (started by `dualtime run`; by hand, type
 * one JSON request per line, e.g. {"cmd":"hello"}).
 * stdout carries only protocol lines (flushed after each); diagnostics go to stderr.
 * Every request is validated; a bad one gets {"ok":false,"error":...} and the worker
 * stays usable. End of input or {"cmd":"quit"} exits 0.
 * Tests only: DUALTIME_FAULT=<what>:<op> injects a fault (see docs/protocol.md). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <omp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/dualtime/dt_timing.h"
#include "../../src/data/dt_shm.h"
#include "dt_backend.h"

#define DT_MAX_DIM (1 << 20)
#define DT_MAX_REPS ((int64_t)1 << 31)
/* Kernel records put into one device answer at most (a line is at most 16 MiB). */
#define DT_MAX_RECORDS_OUT 20000

typedef enum fault_kind {
    FAULT_NONE = 0,
    FAULT_SEGV,
    FAULT_HANG,
    FAULT_GARBAGE,
    FAULT_WRONG,
    FAULT_OOB,
    FAULT_INPUT,
    FAULT_SHORT
} fault_kind;

typedef int (*dt_kernel_record_fn)(uint64_t i, dt_timing_kernel *out);

/* The process context: everything mutable lives here. */
typedef struct worker {
    int threads;                 /* OpenMP threads in use */
    int cuda_probed;             /* 1 once the CUDA module was looked for */
    void *cuda_handle;           /* dlopen handle of libdualtime_cuda.so, or NULL */
    const dt_backend *cuda;      /* its backend table when available, else NULL */
    char cuda_reason[512];       /* why CUDA is unavailable ("" when available) */
    dt_kernel_record_fn kernel_record; /* dt_timing_kernel_record, if the module has it */
    fault_kind fault;            /* injected fault (tests only) */
    int fault_op;                /* op it applies to, -1 for none */
    /* the prepared case */
    int prepared;                /* 1 between a successful prepare and release */
    int uploaded;                /* 1 after an upload of the prepared case */
    const dt_backend *be;        /* backend serving the case */
    void *state;                 /* its per-case state */
    dt_case_layout L;            /* the case's arena layout */
    dt_shm shm;                  /* the mapped arena */
} worker;

/* ---- output ---------------------------------------------------------------------- */

/* Writes one response line (steals the reference to o) and flushes. */
static void emit(json_t *o) {
    char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(o);
    if (!s) {
        fputs("{\"ok\":false,\"error\":\"internal: cannot encode response\"}\n", stdout);
    } else {
        fputs(s, stdout);
        fputc('\n', stdout);
        free(s);
    }
    fflush(stdout);
}

static json_t *ok_obj(void) { return json_pack("{s:b}", "ok", 1); }

static void emit_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit_error(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(stderr, "dualtime-native-worker: %s\n", msg);
    json_t *o = json_pack("{s:b,s:s}", "ok", 0, "error", msg);
    if (!o) o = json_pack("{s:b,s:s}", "ok", 0, "error", "invalid error text");
    emit(o);
}

/* ---- faults ---------------------------------------------------------------------- */

static void parse_fault(worker *w) {
    w->fault = FAULT_NONE;
    w->fault_op = -1;
    const char *f = getenv("DUALTIME_FAULT");
    if (!f || !*f) return;
    static const struct { const char *name; fault_kind kind; } kinds[] = {
        {"segv", FAULT_SEGV}, {"hang", FAULT_HANG}, {"garbage", FAULT_GARBAGE},
        {"wrong", FAULT_WRONG}, {"oob", FAULT_OOB}, {"input", FAULT_INPUT},
        {"short", FAULT_SHORT}};
    const char *colon = strchr(f, ':');
    if (!colon) {
        fprintf(stderr, "dualtime-native-worker: ignoring DUALTIME_FAULT='%s' (want what:op)\n", f);
        return;
    }
    int op = dt_op_find(colon + 1);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].name) == (size_t)(colon - f) &&
            strncmp(kinds[i].name, f, (size_t)(colon - f)) == 0 && op >= 0) {
            w->fault = kinds[i].kind;
            w->fault_op = op;
            fprintf(stderr, "dualtime-native-worker: fault injection %s\n", f);
            return;
        }
    fprintf(stderr, "dualtime-native-worker: ignoring unknown DUALTIME_FAULT='%s'\n", f);
}

static int fault_active(const worker *w, fault_kind k) {
    return w->fault == k && w->prepared && (int)w->L.op == w->fault_op;
}

/* Damages the shared arena after the output was computed there (CPU: after run; device
 * backends: after download, since download rewrites the whole arena). */
static void apply_data_fault(worker *w) {
    if (!w->prepared || (int)w->L.op != w->fault_op) return;
    uint8_t *base = w->shm.base;
    const dt_buffer_layout *o = &w->L.buf[dt_layout_output(&w->L)];
    float v;
    switch (w->fault) {
    case FAULT_WRONG:
        memcpy(&v, base + o->data_offset, 4);
        v += 1.0f;
        memcpy(base + o->data_offset, &v, 4);
        break;
    case FAULT_OOB: /* one float just past the last element: the back guard */
        v = 1.0f;
        memcpy(base + o->data_offset + o->rows * o->cols * 4, &v, 4);
        break;
    case FAULT_INPUT: {
        const dt_buffer_layout *b0 = &w->L.buf[0];
        if (b0->dtype == DT_I64) {
            int64_t x;
            memcpy(&x, base + b0->data_offset, 8);
            x = (x + 1) % (w->L.n > 0 ? w->L.n : 1);
            memcpy(base + b0->data_offset, &x, 8);
        } else {
            memcpy(&v, base + b0->data_offset, 4);
            v += 1.0f;
            memcpy(base + b0->data_offset, &v, 4);
        }
        break;
    }
    case FAULT_SHORT: {
        uint32_t poison = DT_POISON_U32;
        memcpy(base + dt_elem_offset(o, o->rows - 1, o->cols - 1), &poison, 4);
        break;
    }
    default: break;
    }
}

/* ---- CUDA module ----------------------------------------------------------------- */

/* Looks for libdualtime_cuda.so next to /proc/self/exe once; fills cuda / cuda_reason. */
static void probe_cuda(worker *w) {
    if (w->cuda_probed) return;
    w->cuda_probed = 1;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(w->cuda_reason, sizeof w->cuda_reason, "cannot read /proc/self/exe");
        return;
    }
    exe[n] = '\0';
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/libdualtime_cuda.so", dirname(exe));
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(w->cuda_reason, sizeof w->cuda_reason, "%s", e ? e : "dlopen failed");
        return;
    }
    dt_cuda_backend_fn fn;
    void *sym = dlsym(h, DT_CUDA_BACKEND_SYMBOL);
    memcpy(&fn, &sym, sizeof fn);
    if (!sym) {
        snprintf(w->cuda_reason, sizeof w->cuda_reason, "%.400s: no symbol %s", path,
                 DT_CUDA_BACKEND_SYMBOL);
        dlclose(h);
        return;
    }
    const dt_backend *be = fn();
    if (!be || !be->available) {
        snprintf(w->cuda_reason, sizeof w->cuda_reason, "%.400s returned no backend", path);
        dlclose(h);
        return;
    }
    char reason[512] = "";
    if (!be->available(reason, sizeof reason)) {
        snprintf(w->cuda_reason, sizeof w->cuda_reason, "%s",
                 reason[0] ? reason : "CUDA backend unavailable");
        /* keep the module loaded: unloading CUDA libraries is not reliably safe */
        w->cuda_handle = h;
        return;
    }
    w->cuda_handle = h;
    w->cuda = be;
    w->cuda_reason[0] = '\0';
    /* The timing helper is a dependency of the module: dlsym on the module's handle
     * searches its dependencies too. */
    void *rec = dlsym(h, "dt_timing_kernel_record");
    if (rec) memcpy(&w->kernel_record, &rec, sizeof w->kernel_record);
}

/* Parses a backend's describe() text; NULL when it is not a JSON object. */
static json_t *describe_json(const dt_backend *be) {
    if (!be->describe) return NULL;
    char buf[4096] = "{}";
    be->describe(buf, sizeof buf);
    json_t *o = json_loads(buf, 0, NULL);
    if (o && !json_is_object(o)) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

/* ---- requests -------------------------------------------------------------------- */

static void do_hello(worker *w) {
    probe_cuda(w);
    json_t *cpu = json_pack("{s:b}", "available", 1);
    json_t *info = describe_json(&dt_backend_cpu);
    if (info) json_object_set_new(cpu, "info", info);
    json_t *cuda;
    if (w->cuda) {
        cuda = json_pack("{s:b}", "available", 1);
        info = describe_json(w->cuda);
        if (info) json_object_set_new(cuda, "info", info);
    } else {
        cuda = json_pack("{s:b,s:s}", "available", 0, "reason", w->cuda_reason);
    }
    json_t *timing;
    if (w->cuda && w->cuda->device)
        timing = json_pack("{s:b}", "available", 1);
    else
        timing = json_pack("{s:b,s:s}", "available", 0, "reason",
                           w->cuda ? "the CUDA backend has no device timing"
                                   : "cpu only: no usable CUDA backend");
    json_t *o = json_pack("{s:b,s:i,s:s,s:s,s:s,s:{s:o,s:o},s:o,s:{s:i,s:s,s:i}}", "ok", 1,
                          "protocol", 1, "worker", "native", "framework", "dualtime-native",
                          "framework_version", DT_VERSION, "backends", "cpu", cpu, "cuda",
                          cuda, "device_timing", timing, "env", "threads", w->threads,
                          "compiler", "gcc " __VERSION__, "openmp", (int)_OPENMP);
    if (!o) {
        emit_error("internal: cannot build hello");
        return;
    }
    emit(o);
}

/* Reads integer member `key` of obj into *v; 0 with a message in err on failure. */
static int get_int(json_t *obj, const char *key, int64_t *v, dt_err *err) {
    json_t *x = json_object_get(obj, key);
    if (!x) return dt_fail(err, DT_EINVAL, "missing '%s'", key), 0;
    if (!json_is_integer(x)) return dt_fail(err, DT_EINVAL, "'%s' is not an integer", key), 0;
    *v = (int64_t)json_integer_value(x);
    return 1;
}

static const char *dtype_name(dt_dtype d) { return d == DT_I64 ? "i64" : "f32"; }

/* Validates the buffers[] of a prepare request against the layout L the worker computed
 * for the same op/shape/views. */
static dt_status check_buffers(json_t *bufs, const dt_case_layout *L, int64_t arena_bytes,
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
            int64_t v;
            if (!get_int(jb, keys[k], &v, err)) {
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

/* Parses and validates a prepare request into L, backend, shm name and flags. */
static dt_status parse_prepare(worker *w, json_t *req, dt_case_layout *L,
                               const dt_backend **be, const char **shm_name,
                               int64_t *arena_bytes, int *capture, dt_err *err) {
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
        *be = &dt_backend_cpu;
    } else if (strcmp(bname, "cuda") == 0) {
        probe_cuda(w);
        if (!w->cuda) return dt_fail(err, DT_EUNAVAIL, "cuda backend unavailable: %s", w->cuda_reason);
        *be = w->cuda;
    } else {
        return dt_fail(err, DT_EINVAL, "unknown backend '%s'", bname);
    }

    int64_t m, n, k = 0;
    if (!get_int(req, "m", &m, err) || !get_int(req, "n", &n, err)) return DT_EINVAL;
    if (json_object_get(req, "k") && !get_int(req, "k", &k, err)) return DT_EINVAL;
    if (m < 1 || m > DT_MAX_DIM) return dt_fail(err, DT_EINVAL, "m=%lld out of [1, %d]", (long long)m, DT_MAX_DIM);
    if (n < 1 || n > DT_MAX_DIM) return dt_fail(err, DT_EINVAL, "n=%lld out of [1, %d]", (long long)n, DT_MAX_DIM);
    if (info->is_gemm) {
        if (k < 1 || k > DT_MAX_DIM)
            return dt_fail(err, DT_EINVAL, "k=%lld out of [1, %d]", (long long)k, DT_MAX_DIM);
    } else if (k < 0 || k > DT_MAX_DIM) {
        return dt_fail(err, DT_EINVAL, "k=%lld out of [0, %d]", (long long)k, DT_MAX_DIM);
    }

    x = json_object_get(req, "shm");
    if (!json_is_string(x)) return dt_fail(err, DT_EINVAL, "missing or non-string 'shm'");
    *shm_name = json_string_value(x);
    if (strncmp(*shm_name, "/dualtime-", 10) != 0 || strlen(*shm_name) >= 64 ||
        strchr(*shm_name + 1, '/'))
        return dt_fail(err, DT_EINVAL, "bad shared memory name");
    if (!get_int(req, "arena_bytes", arena_bytes, err)) return DT_EINVAL;

    x = json_object_get(req, "capture_sources");
    if (x && !json_is_boolean(x)) return dt_fail(err, DT_EINVAL, "'capture_sources' is not a boolean");
    *capture = x ? json_is_true(x) : 0;

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
    dt_layout_make(L, (dt_op)op, m, n, k, views);
    if (*arena_bytes < L->total_bytes)
        return dt_fail(err, DT_EINVAL, "arena_bytes=%lld is smaller than the layout's %lld",
                       (long long)*arena_bytes, (long long)L->total_bytes);
    return check_buffers(bufs, L, *arena_bytes, err);
}

static void release_case(worker *w) {
    if (w->state && w->be) w->be->release(w->state);
    w->state = NULL;
    dt_shm_destroy(&w->shm);
    w->prepared = 0;
    w->uploaded = 0;
    w->be = NULL;
}

static void do_prepare(worker *w, json_t *req) {
    if (w->prepared) {
        emit_error("prepare: a case is already prepared (release it first)");
        return;
    }
    dt_err err = {{0}};
    dt_case_layout L;
    const dt_backend *be = NULL;
    const char *shm_name = NULL;
    int64_t arena_bytes = 0;
    int capture = 0;
    if (parse_prepare(w, req, &L, &be, &shm_name, &arena_bytes, &capture, &err) != DT_OK) {
        emit_error("prepare: %s", err.msg);
        return;
    }
    if (dt_shm_open(&w->shm, shm_name, arena_bytes, &err) != DT_OK) {
        emit_error("prepare: %s", err.msg);
        return;
    }
    w->L = L;
    dt_prepare_info *info = dt_xcalloc(1, sizeof *info);
    if (be->prepare(&w->state, &w->L, w->shm.base, capture, info, &err) != DT_OK) {
        w->state = NULL;
        dt_shm_destroy(&w->shm);
        free(info);
        emit_error("prepare: %s backend: %s", be->name, err.msg);
        return;
    }
    w->be = be;
    w->prepared = 1;
    w->uploaded = 0;
    json_t *sources = json_array();
    for (int i = 0; i < info->nsources && i < DT_MAX_SOURCES; i++) {
        const dt_source_record *s = &info->sources[i];
        json_t *opts = json_array();
        char tmp[sizeof s->options];
        snprintf(tmp, sizeof tmp, "%s", s->options);
        for (char *save = NULL, *t = strtok_r(tmp, " ", &save); t; t = strtok_r(NULL, " ", &save))
            json_array_append_new(opts, json_string(t));
        json_t *js = json_pack("{s:s,s:s,s:o}", "name", s->name, "sha256", s->sha256,
                               "options", opts);
        if (js && capture && s->text) json_object_set_new(js, "text", json_string(s->text));
        if (js) json_array_append_new(sources, js);
    }
    json_t *o = json_pack("{s:b,s:s,s:s,s:{s:f,s:f},s:o}", "ok", 1, "output_policy",
                          info->output_policy, "implementation", info->implementation,
                          "setup_ms", "compile", info->compile_ms, "alloc", info->alloc_ms,
                          "sources", sources);
    free(info);
    if (!o) {
        emit_error("prepare: internal: cannot encode the answer (non-UTF-8 text?)");
        return;
    }
    emit(o);
}

static int need_case(worker *w, const char *cmd, int need_upload) {
    if (!w->prepared) {
        emit_error("%s before prepare", cmd);
        return 0;
    }
    if (need_upload && !w->uploaded) {
        emit_error("%s before upload", cmd);
        return 0;
    }
    return 1;
}

static void do_upload(worker *w) {
    if (!need_case(w, "upload", 0)) return;
    dt_err err = {{0}};
    double ms = 0;
    if (w->be->upload(w->state, &ms, &err) != DT_OK) {
        emit_error("upload: %s", err.msg);
        return;
    }
    w->uploaded = 1;
    emit(json_pack("{s:b,s:f}", "ok", 1, "ms", ms));
}

static void do_download(worker *w) {
    if (!need_case(w, "download", 1)) return;
    dt_err err = {{0}};
    double ms = 0;
    if (w->be->download(w->state, &ms, &err) != DT_OK) {
        emit_error("download: %s", err.msg);
        return;
    }
    if (w->be != &dt_backend_cpu) apply_data_fault(w);
    emit(json_pack("{s:b,s:f}", "ok", 1, "ms", ms));
}

static int get_reps(json_t *req, int64_t *reps, const char *cmd) {
    dt_err err = {{0}};
    if (!get_int(req, "reps", reps, &err)) {
        emit_error("%s: %s", cmd, err.msg);
        return 0;
    }
    if (*reps < 1 || *reps > DT_MAX_REPS) {
        emit_error("%s: reps=%lld out of [1, %lld]", cmd, (long long)*reps,
                   (long long)DT_MAX_REPS);
        return 0;
    }
    return 1;
}

static void do_run(worker *w, json_t *req) {
    if (!need_case(w, "run", 1)) return;
    int64_t reps;
    if (!get_reps(req, &reps, "run")) return;
    if (fault_active(w, FAULT_SEGV)) {
        fprintf(stderr, "dualtime-native-worker: injected fault: SIGSEGV\n");
        signal(SIGSEGV, SIG_DFL); /* a real crash, even under a sanitizer's handler */
        raise(SIGSEGV);
    }
    if (fault_active(w, FAULT_HANG)) {
        fprintf(stderr, "dualtime-native-worker: injected fault: hang\n");
        for (;;) pause();
    }
    dt_err err = {{0}};
    int64_t host_ns = 0;
    if (w->be->run(w->state, reps, &host_ns, &err) != DT_OK) {
        emit_error("run: %s", err.msg);
        return;
    }
    if (w->be == &dt_backend_cpu) apply_data_fault(w);
    if (fault_active(w, FAULT_GARBAGE)) {
        fputs("this is not JSON: injected fault\n", stdout);
        fflush(stdout);
        return;
    }
    emit(json_pack("{s:b,s:I}", "ok", 1, "host_ns", (json_int_t)host_ns));
}

/* The device-scope result as a JSON object: the helper's fields plus up to nrecs kernel
 * records (recs may be NULL with nrecs 0). Units: ns. */
static json_t *timing_result_json(const dt_timing_result *r, const dt_timing_kernel *recs,
                                  uint64_t nrecs) {
    json_t *o = json_object();
    json_object_set_new(o, "abi_version", json_integer(r->abi_version));
    json_object_set_new(o, "scope", json_string(r->scope == DT_TIMING_PROBE ? "probe" : "control"));
    if (r->scope == DT_TIMING_PROBE)
        json_object_set_new(o, "probe_kind", json_string(r->probe_kind == DT_TIMING_PROBE_SERIALIZED
                                                             ? "serialized"
                                                             : "concurrent"));
    json_object_set_new(o, "stream_ns", json_real(r->stream_ns));
    json_object_set_new(o, "kernel_sum_ns", json_real(r->kernel_sum_ns));
    json_object_set_new(o, "kernel_span_ns", json_real(r->kernel_span_ns));
    json_object_set_new(o, "kernel_count", json_integer((json_int_t)r->kernel_count));
    json_object_set_new(o, "launch_count", json_integer((json_int_t)r->launch_count));
    json_object_set_new(o, "dropped_records", json_integer((json_int_t)r->dropped_records));
    json_object_set_new(o, "clock_offset_ns", json_real(r->clock_offset_ns));
    json_object_set_new(o, "clock_uncertainty_ns", json_real(r->clock_uncertainty_ns));
    json_object_set_new(o, "host_begin_ns", json_integer((json_int_t)r->host_begin_ns));
    json_object_set_new(o, "host_end_ns", json_integer((json_int_t)r->host_end_ns));
    json_object_set_new(o, "records_stored", json_integer((json_int_t)r->records_stored));
    json_t *arr = json_array();
    for (uint64_t i = 0; i < nrecs; i++) {
        const dt_timing_kernel *k = &recs[i];
        char name[sizeof k->name + 1];
        memcpy(name, k->name, sizeof k->name);
        name[sizeof k->name] = '\0';
        json_t *jn = json_string(name);
        if (!jn) jn = json_string("(name not UTF-8)");
        json_array_append_new(
            arr, json_pack("{s:o,s:I,s:I,s:[i,i,i],s:[i,i,i],s:I,s:i}", "name", jn, "start_ns",
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

static void do_device(worker *w, json_t *req) {
    if (!need_case(w, "device", 1)) return;
    if (!w->be->device) {
        emit_error("device timing not available");
        return;
    }
    json_t *sc = json_object_get(req, "scope");
    const char *scope = json_string_value(sc);
    if (!scope || (strcmp(scope, "control") != 0 && strcmp(scope, "probe") != 0)) {
        emit_error("device: 'scope' must be \"control\" or \"probe\"");
        return;
    }
    int64_t reps, capacity = 0;
    if (!get_reps(req, &reps, "device")) return;
    dt_err err = {{0}};
    if (json_object_get(req, "capacity") && !get_int(req, "capacity", &capacity, &err)) {
        emit_error("device: %s", err.msg);
        return;
    }
    if (capacity < 0 || capacity > ((int64_t)1 << 24)) {
        emit_error("device: capacity=%lld out of [0, 2^24]", (long long)capacity);
        return;
    }
    dt_timing_result res;
    memset(&res, 0, sizeof res);
    int probe = strcmp(scope, "probe") == 0;
    const char *kind = json_string_value(json_object_get(req, "probe_kind"));
    if (probe && kind && strcmp(kind, "serialized") == 0) probe = 2;
    else if (probe && kind && strcmp(kind, "concurrent") != 0) {
        emit_error("device: 'probe_kind' must be \"concurrent\" or \"serialized\"");
        return;
    }
    if (w->be->device(w->state, probe, reps, capacity, &res, &err) != DT_OK) {
        emit_error("device: %s", err.msg);
        return;
    }
    /* Kernel records: fetched from the timing helper the CUDA module loaded, when its
     * dt_timing_kernel_record is reachable. TODO: if the backend grows its own record
     * accessor, use that instead. */
    uint64_t nrecs = 0;
    dt_timing_kernel *recs = NULL;
    if (probe && w->kernel_record && res.records_stored > 0) {
        uint64_t want = res.records_stored < DT_MAX_RECORDS_OUT ? res.records_stored
                                                                : DT_MAX_RECORDS_OUT;
        recs = dt_xcalloc((size_t)want, sizeof *recs);
        while (nrecs < want && w->kernel_record(nrecs, &recs[nrecs])) nrecs++;
    }
    json_t *o = ok_obj();
    json_object_set_new(o, "result", timing_result_json(&res, recs, nrecs));
    free(recs);
    emit(o);
}

/* Handles one request line; returns 1 when the worker should exit. */
static int handle_line(worker *w, const char *line) {
    json_error_t jerr;
    json_t *req = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
    if (!req) {
        emit_error("malformed JSON request: %s (column %d)", jerr.text, jerr.column);
        return 0;
    }
    if (!json_is_object(req)) {
        json_decref(req);
        emit_error("request is not a JSON object");
        return 0;
    }
    const char *cmd = json_string_value(json_object_get(req, "cmd"));
    int quit = 0;
    if (!cmd) {
        emit_error("request has no string 'cmd'");
    } else if (strcmp(cmd, "hello") == 0) {
        do_hello(w);
    } else if (strcmp(cmd, "prepare") == 0) {
        do_prepare(w, req);
    } else if (strcmp(cmd, "upload") == 0) {
        do_upload(w);
    } else if (strcmp(cmd, "run") == 0) {
        do_run(w, req);
    } else if (strcmp(cmd, "download") == 0) {
        do_download(w);
    } else if (strcmp(cmd, "device") == 0) {
        do_device(w, req);
    } else if (strcmp(cmd, "release") == 0) {
        if (need_case(w, "release", 0)) {
            release_case(w);
            emit(ok_obj());
        }
    } else if (strcmp(cmd, "quit") == 0) {
        emit(ok_obj());
        quit = 1;
    } else {
        char shown[64];
        snprintf(shown, sizeof shown, "%s", cmd);
        emit_error("unknown cmd '%s'", shown);
    }
    json_decref(req);
    return quit;
}

static void usage(void) {
    fprintf(stderr, "usage: dualtime-native-worker [--threads N]\n");
}

int main(int argc, char **argv) {
    static worker w;
    w.threads = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            char *end = NULL;
            long t = strtol(argv[++i], &end, 10);
            if (!end || *end || t < 1 || t > 4096) {
                fprintf(stderr, "dualtime-native-worker: bad --threads '%s'\n", argv[i]);
                return 2;
            }
            w.threads = (int)t;
        } else if (strcmp(argv[i], "--help") == 0) {
            usage();
            return 0;
        } else {
            fprintf(stderr, "dualtime-native-worker: unknown argument '%s'\n", argv[i]);
            usage();
            return 2;
        }
    }
    if (w.threads > 0) omp_set_num_threads(w.threads);
    w.threads = omp_get_max_threads();
    parse_fault(&w);

    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0) continue; /* tolerate blank lines */
        if ((size_t)len != strlen(line)) {
            emit_error("request contains a NUL byte");
            continue;
        }
        if (handle_line(&w, line)) break;
    }
    free(line);
    if (w.prepared) release_case(&w);
    return 0;
}
