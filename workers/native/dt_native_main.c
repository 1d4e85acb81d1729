/* dt_native_main.c — the native worker (dualtime-native-worker): speaks the worker
 * protocol (docs/protocol.md) on stdin/stdout and serves dualtime's own kernels through a
 * backend (dt_backend.h): the CPU backend always, the CUDA backend when the module
 * libdualtime_cuda.so (next to this executable) loads and finds a device.
 *
 * Run: dualtime-native-worker [--threads N] [--kernel-dir DIR]   (started by `dualtime
 * run`; by hand, type one JSON request per line, e.g. {"cmd":"hello"}). --kernel-dir: the
 * cuda backend runs the user's kernels of DIR instead of ours (dt_kernel_dir.h;
 * docs/cuda-backend.md, "User kernel directories"); the cpu backend is then unavailable.
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
#include "dt_kernel_dir.h"
#include "dt_native_request.h"

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
    FAULT_SHORT,
    FAULT_LOST, /* run fails as if the device context were lost (a CUDA kernel fault) */
    FAULT_HOLDSYNC, /* device: a cuCtxSynchronize inside a held window (the watchdog must
                       fail the sample in time) */
    FAULT_SEGV_WARM /* SIGSEGV in the case's second run (the first warm-up batch) */
} fault_kind;

typedef int (*dt_kernel_record_fn)(uint64_t i, dt_timing_kernel *out);
typedef int (*dt_launch_record_fn)(uint64_t i, dt_timing_launch *out);
typedef int (*dt_set_persistent_fn)(int on);
typedef const char *(*dt_last_error_fn)(void);

/* The process context: everything mutable lives here. */
typedef struct worker {
    int threads;                 /* OpenMP threads in use */
    int cuda_probed;             /* 1 once the CUDA module was looked for */
    void *cuda_handle;           /* dlopen handle of libdualtime_cuda.so, or NULL */
    const dt_backend *cuda;      /* its backend table when available, else NULL */
    char cuda_reason[512];       /* why CUDA is unavailable ("" when available) */
    dt_kernel_record_fn kernel_record; /* dt_timing_kernel_record, if the module has it */
    dt_launch_record_fn launch_record; /* dt_timing_launch_record, likewise (decomposition) */
    dt_set_persistent_fn set_persistent; /* dt_timing_set_persistent, likewise */
    dt_last_error_fn last_error;  /* dt_timing_last_error, likewise */
    fault_kind fault;            /* injected fault (tests only) */
    int lost;                    /* the backend can serve nothing more: exit after answering */
    int fault_op;                /* op it applies to, -1 for none */
    /* the prepared case */
    int prepared;                /* 1 between a successful prepare and release */
    int64_t runs;                /* run requests of the prepared case so far */
    int uploaded;                /* 1 after an upload of the prepared case */
    const dt_backend *be;        /* backend serving the case */
    void *state;                 /* its per-case state */
    dt_case_layout L;            /* the case's arena layout */
    dt_shm shm;                  /* the mapped arena */
    char kernel_dir[PATH_MAX];   /* --kernel-dir, absolute where it resolves ("" : none) */
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
        {"short", FAULT_SHORT}, {"lost", FAULT_LOST}, {"holdsync", FAULT_HOLDSYNC},
        {"segvwarm", FAULT_SEGV_WARM}};
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
    if (w->kernel_dir[0]) { /* the module runs the user's kernels from now on */
        void (*set_dir)(const char *) = NULL;
        void *sd = dlsym(h, "dt_cuda_set_kernel_dir");
        if (sd) memcpy(&set_dir, &sd, sizeof set_dir);
        if (!set_dir) {
            snprintf(w->cuda_reason, sizeof w->cuda_reason, "%.400s has no "
                     "dt_cuda_set_kernel_dir (--kernel-dir needs a newer module)", path);
            return;
        }
        set_dir(w->kernel_dir);
    }
    w->cuda = be;
    w->cuda_reason[0] = '\0';
    /* The timing helper is a dependency of the module: dlsym on the module's handle
     * searches its dependencies too. */
    void *rec = dlsym(h, "dt_timing_kernel_record");
    if (rec) memcpy(&w->kernel_record, &rec, sizeof w->kernel_record);
    void *lr = dlsym(h, "dt_timing_launch_record");
    if (lr) memcpy(&w->launch_record, &lr, sizeof w->launch_record);
    void *per = dlsym(h, "dt_timing_set_persistent");
    if (per) memcpy(&w->set_persistent, &per, sizeof w->set_persistent);
    void *le = dlsym(h, "dt_timing_last_error");
    if (le) memcpy(&w->last_error, &le, sizeof w->last_error);
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

/* ---- --kernel-dir ------------------------------------------------------------------- */

/* hello with --kernel-dir: worker "cuda-dir", "impl" (the files serving each op, their
 * SHA-256), the directory's hash in framework_version, cpu unavailable; a missing
 * directory, or one serving no op, makes the whole worker "unavailable". */
static void kernel_dir_hello(worker *w, json_t *o) {
    dt_err err = {{0}};
    json_t *files = json_array(), *ops = json_array(), *unsup = json_array(),
           *errors = json_array();
    char unavailable[DT_ERR_LEN] = "";
    char all[DT_OP_COUNT * 140] = "";
    if (dt_kdir_check(w->kernel_dir, &err) != DT_OK) {
        snprintf(unavailable, sizeof unavailable, "%s", err.msg);
    } else {
        for (int op = 0; op < DT_OP_COUNT; op++) {
            dt_kdir_file f;
            const char *name = dt_op_get((dt_op)op)->name;
            if (dt_kdir_find(w->kernel_dir, (dt_op)op, &f, &err) != DT_OK)
                json_array_append_new(errors, json_string(err.msg));
            if (f.kind == DT_KDIR_NONE) {
                json_array_append_new(unsup, json_string(name));
                continue;
            }
            char *data = NULL, sha[65] = "";
            size_t len = 0;
            if (dt_kdir_read(f.path, &data, &len, &err) != DT_OK) {
                json_array_append_new(errors, json_string(err.msg));
                json_array_append_new(unsup, json_string(name));
                continue;
            }
            dt_kdir_sha256(data, len, sha);
            free(data);
            json_array_append_new(files, json_pack("{s:s,s:s,s:s,s:I}", "op", name, "name",
                                                   f.name, "sha256", sha, "bytes", (json_int_t)len));
            json_array_append_new(ops, json_string(name));
            size_t used = strlen(all);
            snprintf(all + used, sizeof all - used, "%s %s\n", f.name, sha);
        }
        if (json_array_size(ops) == 0)
            snprintf(unavailable, sizeof unavailable, "--kernel-dir %.200s: no <op>.cu, <op>.ptx "
                     "or <op>.cubin for any op%s%.250s", w->kernel_dir,
                     json_array_size(errors) ? ": " : "",
                     json_array_size(errors) ? json_string_value(json_array_get(errors, 0)) : "");
    }
    char dir_sha[65];
    dt_kdir_sha256(all, strlen(all), dir_sha);
    char version[PATH_MAX + 200];
    snprintf(version, sizeof version, "%s kernel-dir=%s sha256=%s", DT_VERSION, w->kernel_dir,
             dir_sha);
    json_object_set_new(o, "worker", json_string("cuda-dir"));
    json_object_set_new(o, "framework_version", json_string(version));
    json_object_set_new(o, "impl", json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o}", "kind", "cuda-dir",
                                             "path", w->kernel_dir, "sha256", dir_sha, "files",
                                             files, "ops", ops, "unsupported", unsup, "errors",
                                             errors));
    json_t *be = json_object_get(o, "backends");
    json_object_set_new(be, "cpu", json_pack("{s:b,s:s}", "available", 0, "reason",
                                             "--kernel-dir serves the cuda backend only"));
    if (unavailable[0]) {
        json_object_set_new(o, "unavailable", json_string(unavailable));
        json_object_set_new(be, "cuda", json_pack("{s:b,s:s}", "available", 0, "reason",
                                                  unavailable));
    }
}

/* prepare with --kernel-dir, before the request is validated further: the cpu backend
 * and an op without a file (or with two) are refused, the latter as "unsupported".
 * Returns 1 when it answered. */
static int kernel_dir_refuse(worker *w, json_t *req) {
    const char *opname = json_string_value(json_object_get(req, "op"));
    const char *backend = json_string_value(json_object_get(req, "backend"));
    int op = opname ? dt_op_find(opname) : -1;
    if (op < 0) return 0; /* the validator names it */
    if (backend && strcmp(backend, "cpu") == 0) {
        emit_error("prepare: --kernel-dir serves the cuda backend only");
        return 1;
    }
    dt_err err = {{0}};
    dt_kdir_file f;
    if (dt_kdir_check(w->kernel_dir, &err) != DT_OK) {
        emit_error("prepare: %s", err.msg);
        return 1;
    }
    dt_status st = dt_kdir_find(w->kernel_dir, (dt_op)op, &f, &err);
    if (st == DT_OK && f.kind != DT_KDIR_NONE) return 0;
    char msg[DT_ERR_LEN + 200];
    if (st != DT_OK)
        snprintf(msg, sizeof msg, "prepare: %s", err.msg);
    else
        snprintf(msg, sizeof msg, "prepare: unsupported: --kernel-dir %.300s has no %.40s.cu, "
                 "%.40s.ptx or %.40s.cubin", w->kernel_dir, opname, opname, opname);
    fprintf(stderr, "dualtime-native-worker: %s\n", msg);
    emit(json_pack("{s:b,s:s,s:b}", "ok", 0, "error", msg, "unsupported", st == DT_OK));
    return 1;
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
    if (w->kernel_dir[0]) kernel_dir_hello(w, o);
    /* upload / download of byte ranges and the arena digest (docs/protocol.md): the
     * anti-cheat's checks by digest */
    json_object_set_new(o, "copy", json_pack("{s:b,s:s}", "ranges", 1, "digest", DT_DIGEST_NAME));
    /* how the driver loads modules (EAGER unless the caller set it: held windows) */
    const char *loading = getenv("CUDA_MODULE_LOADING");
    json_object_set_new(json_object_get(o, "env"), "cuda_module_loading",
                        json_string(loading ? loading : "unset"));
    emit(o);
}

/* The request validator's cuda check: probes the CUDA module once. */
static dt_status cuda_check(void *ctx, dt_err *err) {
    worker *w = ctx;
    probe_cuda(w);
    if (!w->cuda) return dt_fail(err, DT_EUNAVAIL, "cuda backend unavailable: %s", w->cuda_reason);
    return DT_OK;
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
    if (w->kernel_dir[0] && kernel_dir_refuse(w, req)) return;
    dt_err err = {{0}};
    dt_prepare_req pr;
    if (dt_req_parse_prepare(req, cuda_check, w, &pr, &err) != DT_OK) {
        emit_error("prepare: %s", err.msg);
        return;
    }
    const dt_backend *be = pr.cuda ? w->cuda : &dt_backend_cpu;
    int capture = pr.capture_sources;
    if (dt_shm_open(&w->shm, pr.shm_name, pr.arena_bytes, &err) != DT_OK) {
        emit_error("prepare: %s", err.msg);
        return;
    }
    w->L = pr.L;
    dt_prepare_info *info = dt_xcalloc(1, sizeof *info);
    if (be->prepare(&w->state, &w->L, w->shm.base, capture, info, &err) != DT_OK) {
        w->state = NULL;
        dt_shm_destroy(&w->shm);
        free(info);
        if (w->kernel_dir[0] && strncmp(err.msg, "unsupported:", 12) == 0) {
            /* --kernel-dir: the file lacks the entry point of the case's dtype */
            emit(json_pack("{s:b,s:s,s:b}", "ok", 0, "error", err.msg, "unsupported", 1));
            return;
        }
        emit_error("prepare: %s backend: %s", be->name, err.msg);
        return;
    }
    w->be = be;
    w->prepared = 1;
    w->runs = 0;
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

/* "only" / "digest" of an upload or download (docs/protocol.md): up to DT_COPY_MAX_RANGES
 * [offset, length] pairs inside the arena (digest: multiples of 8). *n -1: key absent.
 * 0 with an error emitted when malformed. */
#define DT_COPY_MAX_RANGES 16
static int parse_ranges(const worker *w, json_t *req, const char *cmd, const char *key,
                        int align8, int64_t (*r)[2], int *n) {
    json_t *a = json_object_get(req, key);
    *n = -1;
    if (!a) return 1;
    if (!json_is_array(a) || json_array_size(a) > DT_COPY_MAX_RANGES) {
        emit_error("%s: '%s' must be an array of at most %d [offset, length] pairs", cmd, key,
                   DT_COPY_MAX_RANGES);
        return 0;
    }
    *n = (int)json_array_size(a);
    for (int i = 0; i < *n; i++) {
        json_t *p = json_array_get(a, (size_t)i);
        json_t *o = json_array_get(p, 0), *l = json_array_get(p, 1);
        if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_integer(o) ||
            !json_is_integer(l)) {
            emit_error("%s: '%s'[%d] must be an [offset, length] pair of integers", cmd, key, i);
            return 0;
        }
        r[i][0] = json_integer_value(o);
        r[i][1] = json_integer_value(l);
        if (r[i][0] < 0 || r[i][1] < 0 || r[i][0] > w->L.total_bytes ||
            r[i][1] > w->L.total_bytes - r[i][0] || (align8 && (r[i][0] % 8 || r[i][1] % 8))) {
            emit_error("%s: '%s'[%d] = [%lld, %lld] is not a range of the %lld-byte arena%s", cmd,
                       key, i, (long long)r[i][0], (long long)r[i][1], (long long)w->L.total_bytes,
                       align8 ? " in multiples of 8" : "");
            return 0;
        }
    }
    return 1;
}

/* upload / download of the whole arena, or of the ranges "only" (a backend with
 * copy_ranges; the CPU backend computes in the arena: nothing to copy either way). */
static dt_status copy_some(worker *w, int to_device, const int64_t (*r)[2], int n, double *ms,
                           dt_err *err) {
    if (n < 0 || !w->be->copy_ranges)
        return to_device ? w->be->upload(w->state, ms, err) : w->be->download(w->state, ms, err);
    return w->be->copy_ranges(w->state, to_device, r, n, ms, err);
}

static void do_upload(worker *w, json_t *req) {
    if (!need_case(w, "upload", 0)) return;
    dt_err err = {{0}};
    double ms = 0;
    int64_t r[DT_COPY_MAX_RANGES][2];
    int n;
    if (!parse_ranges(w, req, "upload", "only", 0, r, &n)) return;
    if (n >= 0 && !w->uploaded) {
        emit_error("upload: 'only' before the first whole upload of the case");
        return;
    }
    if (copy_some(w, 1, (const int64_t(*)[2])r, n, &ms, &err) != DT_OK) {
        emit_error("upload: %s", err.msg);
        return;
    }
    w->uploaded = 1;
    emit(json_pack("{s:b,s:f}", "ok", 1, "ms", ms));
}

static void do_download(worker *w, json_t *req) {
    if (!need_case(w, "download", 1)) return;
    dt_err err = {{0}};
    double ms = 0;
    int64_t r[DT_COPY_MAX_RANGES][2], d[DT_COPY_MAX_RANGES][2];
    int n, nd;
    if (!parse_ranges(w, req, "download", "only", 0, r, &n) ||
        !parse_ranges(w, req, "download", "digest", 1, d, &nd))
        return;
    /* a planted data fault (DUALTIME_FAULT, tests) damages the arena after a whole
     * download; the digests are then taken of that arena, as if the device held it */
    const int faulty = w->be != &dt_backend_cpu && w->prepared && (int)w->L.op == w->fault_op &&
                       w->fault != FAULT_NONE;
    if (copy_some(w, 0, (const int64_t(*)[2])r, faulty ? -1 : n, &ms, &err) != DT_OK) {
        emit_error("download: %s", err.msg);
        return;
    }
    if (w->be != &dt_backend_cpu) apply_data_fault(w);
    json_t *ans = json_pack("{s:b,s:f}", "ok", 1, "ms", ms);
    if (nd >= 0) {
        uint64_t v[DT_COPY_MAX_RANGES];
        int on_host = w->be == &dt_backend_cpu || faulty; /* the arena holds what to digest */
        if (!on_host && !w->be->digest) {
            json_decref(ans);
            emit_error("download: the %s backend has no digest", w->be->name);
            return;
        }
        if (!on_host && w->be->digest(w->state, (const int64_t(*)[2])d, nd, v, &err) != DT_OK) {
            /* the digest is an economy, never a reason to fail a case: the whole mirror
             * comes back and the digests are taken of it on the host (the same answer) */
            static int warned;
            if (!warned++)
                fprintf(stderr, "dualtime-native-worker: device digest failed (%s): such "
                        "downloads copy the whole arena and digest it on the host\n", err.msg);
            if ((w->be->broken && w->be->broken()) || w->be->download(w->state, &ms, &err) != DT_OK) {
                json_decref(ans);
                emit_error("download: %s", err.msg);
                return;
            }
            json_object_set_new(ans, "ms", json_real(ms));
            on_host = 1;
        }
        if (on_host)
            for (int i = 0; i < nd; i++) v[i] = dt_arena_digest(w->shm.base, d[i][0], d[i][1]);
        json_t *a = json_array();
        for (int i = 0; i < nd; i++) {
            char hex[17];
            snprintf(hex, sizeof hex, "%016llx", (unsigned long long)v[i]);
            json_array_append_new(a, json_string(hex));
        }
        json_object_set_new(ans, "digest", a);
    }
    emit(ans);
}

static int get_reps(json_t *req, int64_t *reps, const char *cmd) {
    dt_err err = {{0}};
    if (dt_req_parse_reps(req, reps, &err) != DT_OK) {
        emit_error("%s: %s", cmd, err.msg);
        return 0;
    }
    return 1;
}

static void do_run(worker *w, json_t *req) {
    if (!need_case(w, "run", 1)) return;
    int64_t reps;
    if (!get_reps(req, &reps, "run")) return;
    w->runs++;
    if (fault_active(w, FAULT_SEGV) || (fault_active(w, FAULT_SEGV_WARM) && w->runs == 2)) {
        fprintf(stderr, "dualtime-native-worker: injected fault: SIGSEGV\n");
        signal(SIGSEGV, SIG_DFL); /* a real crash, even under a sanitizer's handler */
        raise(SIGSEGV);
    }
    if (fault_active(w, FAULT_HANG)) {
        fprintf(stderr, "dualtime-native-worker: injected fault: hang\n");
        for (;;) pause();
    }
    dt_err err = {{0}};
    int64_t host_ns = 0, prime = 0;
    if (fault_active(w, FAULT_LOST)) {
        emit_error("run: injected fault: device context lost; this worker exits");
        w->lost = 1;
        return;
    }
    if (dt_req_parse_prime(req, &prime, &err) != DT_OK) {
        emit_error("run: %s", err.msg);
        return;
    }
    if (prime > 0 && w->be->run(w->state, prime, &host_ns, &err) != DT_OK) {
        emit_error("run (prime): %s", err.msg);
        return;
    }
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

/* {"cmd":"floor","reps":R,"prime":P}: the backend's empty call in this case's setting
 * (docs/protocol.md, "floor"), timed like run: P untimed, then R timed -> host_ns. */
static void do_floor(worker *w, json_t *req) {
    if (!need_case(w, "floor", 1)) return;
    if (!w->be->floor) {
        emit_error("floor: the %s backend has no floor call", w->be->name);
        return;
    }
    int64_t reps, prime = 0, host_ns = 0;
    if (!get_reps(req, &reps, "floor")) return;
    dt_err err = {{0}};
    if (dt_req_parse_prime(req, &prime, &err) != DT_OK) {
        emit_error("floor: %s", err.msg);
        return;
    }
    if ((prime > 0 && w->be->floor(w->state, prime, &host_ns, &err) != DT_OK) ||
        w->be->floor(w->state, reps, &host_ns, &err) != DT_OK) {
        emit_error("floor: %s", err.msg);
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
    json_object_set_new(o, "held", json_boolean(r->held));
    if (r->hold_method) {
        json_object_set_new(o, "hold_method",
                            json_string(dt_timing_hold_method_name(r->hold_method)));
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

/* The E2E decomposition's part of a device answer (docs/protocol.md, "decomp"): the
 * host bracket of the call and every launch's API enter/exit; NULL (with *why) when the
 * backend or the helper cannot give them. */
static json_t *decomp_json(worker *w, const dt_timing_result *r, const char **why) {
    int64_t t0 = 0, t1 = 0;
    if (!w->be->decomp_bracket || !w->be->decomp_bracket(w->state, &t0, &t1)) {
        *why = "the backend gave no host bracket of the call";
        return NULL;
    }
    if (!w->launch_record) {
        *why = "the timing helper has no dt_timing_launch_record";
        return NULL;
    }
    json_t *arr = json_array();
    for (uint64_t i = 0; i < r->launch_count; i++) {
        dt_timing_launch l;
        if (!w->launch_record(i, &l)) break;
        json_array_append_new(arr, json_pack("{s:I,s:I,s:s,s:I,s:b}", "enter_ns",
                                             (json_int_t)l.enter_ns, "exit_ns",
                                             (json_int_t)l.exit_ns, "api", l.api,
                                             "correlation_id", (json_int_t)l.correlation_id,
                                             "runtime", (int)l.runtime));
    }
    return json_pack("{s:I,s:I,s:I,s:i,s:o}", "call_start_ns", (json_int_t)t0,
                     "sync_return_ns", (json_int_t)t1, "host_call_ns", (json_int_t)(t1 - t0),
                     "clock_source", (int)r->clock_source, "launches", arr);
}

/* The cold cache of a device request (or warm again) on the backend; on failure the
 * error is answered and DT_EDEVICE returned. */
static dt_status device_cache(worker *w, const dt_device_req *dq, int64_t *used) {
    dt_err err = {{0}};
    *used = 0;
    if (!w->be->cache) {
        emit_error("device: the %s backend has no cold cache", w->be->name);
        return DT_EUNAVAIL;
    }
    if (w->be->cache(w->state, dq->cold ? dq->copies : 0, dq->cold ? dq->flush_bytes : 0, used,
                     &err) != DT_OK) {
        emit_error("device: %s", err.msg);
        return DT_EDEVICE;
    }
    return DT_OK;
}

static void do_device(worker *w, json_t *req) {
    if (!need_case(w, "device", 1)) return;
    if (!w->be->device) {
        emit_error("device timing not available");
        return;
    }
    dt_device_req dq;
    dt_err err = {{0}};
    int decomp = 0;
    if (dt_req_parse_device_ex(req, &dq, &err) != DT_OK ||
        dt_req_parse_decomp(req, dq.probe, dq.hold, dq.reps, &decomp, &err) != DT_OK) {
        emit_error("device: %s", err.msg);
        return;
    }
    int probe = dq.probe, hold = dq.hold;
    int64_t reps = dq.reps, capacity = dq.capacity, used_copies = 0;
    if ((dq.cold || w->be->cache) && device_cache(w, &dq, &used_copies) != DT_OK) return;
    int64_t prime = 0, prime_ns = 0;
    if (dt_req_parse_prime(req, &prime, &err) != DT_OK) {
        emit_error("device: %s", err.msg);
        return;
    }
    if (prime > 0 && w->be->run(w->state, prime, &prime_ns, &err) != DT_OK) {
        emit_error("device (prime): %s", err.msg);
        return;
    }
    dt_timing_result res;
    memset(&res, 0, sizeof res);
    int flags = (hold ? DT_DEVICE_HOLD : 0) | (dq.graph ? DT_DEVICE_GRAPH : 0) |
                (hold && fault_active(w, FAULT_HOLDSYNC) ? DT_DEVICE_PLANT_SYNC : 0) |
                (decomp ? DT_DEVICE_DECOMP : 0);
    dt_status dst = w->be->device(w->state, probe, reps, capacity, flags, &res, &err);
    if (dst == DT_EUNAVAIL && dq.graph) { /* the scope is unavailable, the case is fine */
        emit(json_pack("{s:b,s:s}", "ok", 1, "unavailable", err.msg));
        return;
    }
    if (dst != DT_OK) {
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
    json_t *result = timing_result_json(&res, recs, nrecs);
    if (dq.graph) json_object_set_new(result, "graph", json_true());
    if (dq.cold) /* what the backend did: the orchestrator checks it (dt_cache.h) */
        json_object_set_new(result, "cache",
                            json_pack("{s:s,s:I,s:I}", "state", "cold", "copies",
                                      (json_int_t)used_copies, "flush_bytes",
                                      (json_int_t)dq.flush_bytes));
    free(recs);
    if (decomp) {
        const char *why = NULL;
        json_t *d = decomp_json(w, &res, &why);
        if (!d) {
            json_decref(o);
            json_decref(result);
            emit_error("device: decomp unavailable: %s", why);
            return;
        }
        json_object_set_new(result, "decomp", d);
    }
    json_object_set_new(o, "result", result);
    emit(o);
}

/* The backend a ceilings request (`what`: "ceilings", "flop_ceilings") names in
 * "backend"; NULL after answering the error. */
static const dt_backend *ceilings_backend(worker *w, json_t *req, const char *what) {
    const char *name = json_string_value(json_object_get(req, "backend"));
    if (!name) {
        emit_error("%s: missing or non-string 'backend'", what);
        return NULL;
    }
    if (strcmp(name, "cpu") == 0) return &dt_backend_cpu;
    if (strcmp(name, "cuda") == 0) {
        probe_cuda(w);
        if (!w->cuda) {
            emit_error("%s: cuda backend not available: %s", what, w->cuda_reason);
            return NULL;
        }
        return w->cuda;
    }
    char shown[64];
    snprintf(shown, sizeof shown, "%s", name);
    emit_error("%s: unknown backend '%s' (cpu or cuda)", what, shown);
    return NULL;
}

/* {"cmd":"flop_ceilings","backend":"cpu"|"cuda"}: the backend's FLOP ceilings
 * (dt_flop_ceilings: CUDA measures FP32 FFMA only); refused where not offered. */
static void do_flop_ceilings(worker *w, json_t *req) {
    const dt_backend *be = ceilings_backend(w, req, "flop_ceilings");
    if (!be) return;
    if (!be->flop_ceilings) {
        emit_error("flop_ceilings: not offered by the %s backend", be->name);
        return;
    }
    dt_flop_ceilings c;
    memset(&c, 0, sizeof c);
    dt_err err = {{0}};
    if (be->flop_ceilings(&c, &err) != DT_OK) {
        emit_error("flop_ceilings: %s backend: %s", be->name, err.msg);
        return;
    }
    c.method[sizeof c.method - 1] = '\0';
    json_t *f = json_pack("{s:s}", "method", c.method);
    const struct { const char *key; double v; } val[] = {
        {"fp32_tflops", c.fp32_tflops}, {"bf16_tflops", c.bf16_tflops},
        {"fp16_tflops", c.fp16_tflops}};
    for (size_t i = 0; f && i < sizeof val / sizeof val[0]; i++)
        if (val[i].v > 0) json_object_set_new(f, val[i].key, json_real(val[i].v));
    json_t *o = f ? json_pack("{s:b,s:o}", "ok", 1, "flop_ceilings", f) : NULL;
    if (!o) {
        emit_error("flop_ceilings: internal: cannot encode the answer");
        return;
    }
    emit(o);
}

/* {"cmd":"ceilings","backend":"cpu"|"cuda"}: the backend measures the device's copy
 * bandwidth and launch floors (dt_ceilings); no case is needed. */
static void do_ceilings(worker *w, json_t *req) {
    const dt_backend *be = ceilings_backend(w, req, "ceilings");
    if (!be) return;
    if (!be->ceilings) {
        emit_error("ceilings: the %s backend cannot measure ceilings", be->name);
        return;
    }
    dt_ceilings c;
    memset(&c, 0, sizeof c);
    dt_err err = {{0}};
    if (be->ceilings(&c, &err) != DT_OK) {
        emit_error("ceilings: %s backend: %s", be->name, err.msg);
        return;
    }
    c.method[sizeof c.method - 1] = '\0';
    json_t *o = json_pack("{s:b,s:{s:f,s:I,s:f,s:f,s:f,s:s}}", "ok", 1, "ceilings", "copy_gbps",
                          c.copy_gbps, "copy_bytes", (json_int_t)c.copy_bytes,
                          "launch_sync_floor_us", c.launch_sync_floor_us,
                          "launch_queue_floor_us", c.launch_queue_floor_us,
                          "launch_sync_touch_floor_us", c.launch_sync_touch_floor_us, "method",
                          c.method);
    /* the held floors are optional: present only when measured */
    const struct { const char *key; double us; } held[] = {
        {"held_launch_floor_us", c.held_launch_floor_us},
        {"held_launch_batch_floor_us", c.held_launch_batch_floor_us},
        {"held_touch_floor_us", c.held_touch_floor_us},
        {"held_touch_batch_floor_us", c.held_touch_batch_floor_us}};
    for (size_t i = 0; o && i < sizeof held / sizeof held[0]; i++)
        if (held[i].us > 0)
            json_object_set_new(json_object_get(o, "ceilings"), held[i].key, json_real(held[i].us));
    if (o && c.copy_gbps_iqr > 0) /* optional: the copy ceiling's own spread */
        json_object_set_new(json_object_get(o, "ceilings"), "copy_gbps_iqr",
                            json_real(c.copy_gbps_iqr));
    if (!o) {
        emit_error("ceilings: internal: cannot encode the answer");
        return;
    }
    emit(o);
}

/* {"cmd":"probe_process"[,"probe_kind":...]}: this worker process serves only probe
 * regions from now on; the timing helper's persistent mode keeps CUPTI attached between
 * them (docs/device-timing.md), so the untimed calls before a probe sample absorb its
 * setup. Control regions are refused afterwards. */
static void do_probe_process(worker *w, json_t *req) {
    json_t *k = json_object_get(req, "probe_kind");
    const char *kind = k ? json_string_value(k) : "concurrent";
    if (!kind || (strcmp(kind, "concurrent") != 0 && strcmp(kind, "serialized") != 0)) {
        emit_error("probe_process: 'probe_kind' must be \"concurrent\" or \"serialized\"");
        return;
    }
    probe_cuda(w);
    if (!w->cuda || !w->cuda->device || !w->set_persistent) {
        emit_error("probe_process: device timing not available: %s",
                   !w->cuda ? w->cuda_reason
                   : !w->cuda->device ? "the CUDA backend has no device timing"
                                      : "the timing helper has no dt_timing_set_persistent");
        return;
    }
    int on = strcmp(kind, "serialized") == 0 ? DT_TIMING_PERSISTENT_SERIALIZED
                                             : DT_TIMING_PERSISTENT_CONCURRENT;
    if (!w->set_persistent(on)) {
        emit_error("probe_process: dt_timing_set_persistent: %s",
                   w->last_error ? w->last_error() : "failed");
        return;
    }
    emit(json_pack("{s:b,s:b,s:s}", "ok", 1, "persistent", 1, "probe_kind", kind));
}

/* Handles one request line of len bytes; returns 1 when the worker should exit. */
static int handle_line(worker *w, const char *line, size_t len) {
    json_t *req;
    const char *cmd;
    dt_err perr = {{0}};
    if (dt_req_parse_line(line, len, &req, &cmd, &perr) != DT_OK) {
        emit_error("%s", perr.msg);
        return 0;
    }
    int quit = 0;
    if (strcmp(cmd, "hello") == 0) {
        do_hello(w);
    } else if (strcmp(cmd, "prepare") == 0) {
        do_prepare(w, req);
    } else if (strcmp(cmd, "upload") == 0) {
        do_upload(w, req);
    } else if (strcmp(cmd, "run") == 0) {
        do_run(w, req);
    } else if (strcmp(cmd, "floor") == 0) {
        do_floor(w, req);
    } else if (strcmp(cmd, "download") == 0) {
        do_download(w, req);
    } else if (strcmp(cmd, "device") == 0) {
        do_device(w, req);
    } else if (strcmp(cmd, "probe_process") == 0) {
        do_probe_process(w, req);
    } else if (strcmp(cmd, "ceilings") == 0) {
        do_ceilings(w, req);
    } else if (strcmp(cmd, "flop_ceilings") == 0) {
        do_flop_ceilings(w, req);
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
    if (w->be && w->be->broken && w->be->broken()) w->lost = 1;
    if (w->lost) {
        fprintf(stderr, "dualtime-native-worker: the %s backend can serve nothing more in "
                "this process (device context lost); exiting so a fresh worker takes over\n",
                w->be ? w->be->name : "?");
        fflush(stdout);
        exit(3);
    }
    return quit;
}

static void usage(void) {
    fprintf(stderr, "usage: dualtime-native-worker [--threads N] [--kernel-dir DIR]\n");
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
        } else if (strcmp(argv[i], "--kernel-dir") == 0 || strncmp(argv[i], "--kernel-dir=", 13) == 0) {
            const char *dir = argv[i][12] == '=' ? argv[i] + 13 : (i + 1 < argc ? argv[++i] : NULL);
            if (!dir || !*dir) {
                fprintf(stderr, "dualtime-native-worker: --kernel-dir needs a directory\n");
                return 2;
            }
            /* absolute where it resolves; a missing one stays as given (hello: unavailable) */
            if (!realpath(dir, w.kernel_dir)) snprintf(w.kernel_dir, sizeof w.kernel_dir, "%s", dir);
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
    /* Held windows must not meet lazy module loading (a first launch that loads code can
     * synchronize inside the hold): ask the driver for eager loading before it starts,
     * unless the caller chose otherwise (then the cold call and the prime still warm). */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    w.threads = omp_get_max_threads();
    parse_fault(&w);

    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0) continue; /* tolerate blank lines */
        if (handle_line(&w, line, (size_t)len)) break;
    }
    free(line);
    if (w.prepared) release_case(&w);
    return 0;
}
