/* test_native_worker.c — drives the built native worker (argv[1]) over its protocol
 * (docs/protocol.md) through pipes and a shared-memory arena: hello; for every op
 * (contiguous and strided views) prepare/upload/run(1)/download, arena check and FP64
 * reference, then run(100) again; bad requests get ok:false and the worker survives
 * them; DUALTIME_FAULT faults are caught (segv kills the worker on run, garbage answers
 * non-JSON, wrong/oob/input/short fail the checks, hang does not answer); the floor
 * request (timed like run, never runs the op, refused before prepare); the ceilings
 * request (cpu numbers, cuda refused without a GPU) directly and via dt_protocol_ceilings;
 * flop_ceilings (cpu refused, cuda: a positive FP32 FFMA ceiling where a GPU runs).
 * With --gpu-hold (ctest test_native_worker_gpu, label gpu; exit 77 without a CUDA
 * device with device timing) it tests held windows on the cuda backend instead (see
 * gpu_hold_main): held vs unheld control of 64 tiny launches, outputs still right, a
 * cuCtxSynchronize planted inside the hold (DUALTIME_FAULT=holdsync) failing in time with
 * the reason, held probe ~ held control for a large kernel (a probe_process worker), and
 * the held floors of the ceilings; it prints every number ("hold:" lines).
 * Run: ctest -R test_native_worker (or test_native_worker build/dualtime-native-worker). */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "data/dt_arena.h"
#include "data/dt_shm.h"
#include "session/dt_protocol.h"
#include "dt_test_ref.h"
#include "../dt_check.h"

static const char *g_worker;
static const char *g_backend = "cpu"; /* backend of prepare_req ("cuda" with --gpu-hold) */

typedef struct child {
    pid_t pid;
    int in_fd;   /* worker's stdin */
    int out_fd;  /* worker's stdout */
    char buf[1 << 16];
    size_t have;
} child;

static void spawn(child *c, const char *fault) {
    int to[2], from[2];
    DT_ASSERT(pipe(to) == 0 && pipe(from) == 0);
    memset(c, 0, sizeof *c);
    c->pid = fork();
    DT_ASSERT(c->pid >= 0);
    if (c->pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        if (fault) setenv("DUALTIME_FAULT", fault, 1);
        else unsetenv("DUALTIME_FAULT");
        execl(g_worker, g_worker, "--threads", "2", (char *)NULL);
        perror("execl");
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    c->in_fd = to[1];
    c->out_fd = from[0];
}

/* Sends line (+ newline) and reads one answer line into out (NUL-terminated). Returns 1
 * on an answer, 0 on EOF, -1 on timeout. */
static int request(child *c, const char *line, char *out, size_t out_len, int timeout_ms) {
    size_t n = strlen(line);
    if (write(c->in_fd, line, n) != (ssize_t)n || write(c->in_fd, "\n", 1) != 1) return 0;
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->have);
        if (nl) {
            size_t len = (size_t)(nl - c->buf);
            size_t cp = len < out_len - 1 ? len : out_len - 1;
            memcpy(out, c->buf, cp);
            out[cp] = '\0';
            memmove(c->buf, nl + 1, c->have - len - 1);
            c->have -= len + 1;
            return 1;
        }
        struct pollfd p = {c->out_fd, POLLIN, 0};
        int r = poll(&p, 1, timeout_ms);
        if (r == 0) return -1;
        if (r < 0 && errno == EINTR) continue;
        if (c->have == sizeof c->buf) return 0;
        ssize_t got = read(c->out_fd, c->buf + c->have, sizeof c->buf - c->have);
        if (got <= 0) return 0;
        c->have += (size_t)got;
    }
}

/* Closes stdin, waits; returns the wait status. */
static int finish(child *c) {
    int st = 0;
    close(c->in_fd);
    close(c->out_fd);
    waitpid(c->pid, &st, 0);
    return st;
}

/* Sends req and parses the answer; returns the JSON object (caller decrefs) or NULL. */
static json_t *ask(child *c, const char *req) {
    static char line[1 << 16];
    if (request(c, req, line, sizeof line, 120000) != 1) return NULL;
    json_t *o = json_loads(line, 0, NULL);
    if (o && !json_is_object(o)) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

static int is_ok(json_t *o) { return o && json_is_true(json_object_get(o, "ok")); }

/* ask + expect ok:true/false; returns 1 if as expected. */
static int expect(child *c, const char *req, int want_ok, const char *what) {
    json_t *o = ask(c, req);
    int got = o ? is_ok(o) : -1;
    if (o && !want_ok) {
        const char *e = json_string_value(json_object_get(o, "error"));
        CHECK(e && *e, "%s: ok:false without an error text", what);
    }
    CHECK(got == want_ok, "%s: want ok=%d, got %s", what, want_ok,
          got < 0 ? "no JSON answer" : got ? "ok:true" : "ok:false");
    json_decref(o);
    return got == want_ok;
}

/* The prepare request for layout L in shm s (caller frees). Optional tamper: a buffer
 * index and field to overwrite. */
static char *prepare_req(const dt_case_layout *L, const dt_shm *s, int64_t arena_bytes,
                         int tamper_buf, const char *tamper_key, int64_t tamper_val) {
    json_t *bufs = json_array();
    for (int i = 0; i < L->nbuffers; i++) {
        const dt_buffer_layout *B = &L->buf[i];
        json_t *b = json_pack("{s:s,s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:I}", "name", B->name, "dtype",
                              B->dtype == DT_I64 ? "i64" : "f32", "is_output", B->is_output,
                              "rows", (json_int_t)B->rows, "cols", (json_int_t)B->cols,
                              "row_stride", (json_int_t)B->row_stride, "data_offset",
                              (json_int_t)B->data_offset, "region_offset",
                              (json_int_t)B->region_offset, "region_bytes",
                              (json_int_t)B->region_bytes);
        if (i == tamper_buf) json_object_set_new(b, tamper_key, json_integer(tamper_val));
        json_array_append_new(bufs, b);
    }
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:s,s:I,s:o,s:b}", "cmd", "prepare",
                          "case", "test", "op", dt_op_get(L->op)->name, "backend", g_backend, "m",
                          (json_int_t)L->m, "n", (json_int_t)L->n, "k", (json_int_t)L->k, "shm",
                          s->name, "arena_bytes", (json_int_t)arena_bytes, "buffers", bufs,
                          "capture_sources", 0);
    char *txt = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return txt;
}

/* Checks the arena after a run: arena report and the reference. Returns the number of
 * problems (arena not ok counts 1, plus out-of-tolerance elements). */
static int64_t check_case(const dt_case_layout *L, const uint8_t *base, const uint8_t *pristine,
                          char *msg, size_t msg_len) {
    dt_arena_report rep;
    dt_arena_check(L, base, pristine, &rep);
    if (!rep.ok) {
        snprintf(msg, msg_len, "arena: %.200s", rep.first_problem);
        return 1;
    }
    const double *in[4] = {NULL, NULL, NULL, NULL};
    int nin = 0;
    for (int i = 0; i < L->nbuffers; i++) {
        if (L->buf[i].is_output) continue;
        double *d = dt_xmalloc((size_t)(L->buf[i].rows * L->buf[i].cols) * sizeof(double));
        dt_buffer_to_f64(L, i, base, d);
        in[nin++] = d;
    }
    const dt_buffer_layout *O = &L->buf[dt_layout_output(L)];
    int64_t cnt = O->rows * O->cols;
    double *ref = dt_xmalloc((size_t)cnt * sizeof(double)), *scale = dt_xmalloc((size_t)cnt * sizeof(double));
    ref_compute(L->op, L->m, L->n, L->k, in, ref, scale);
    int64_t bad = ref_check(L->op, cnt, (const float *)(base + O->data_offset), ref, scale, msg,
                            msg_len);
    for (int i = 0; i < nin; i++) free((void *)in[i]);
    free(ref);
    free(scale);
    return bad;
}

typedef struct arena {
    dt_case_layout L;
    dt_shm shm;
    uint8_t *pristine;
} arena;

static void arena_make(arena *a, dt_op op, int64_t m, int64_t n, int64_t k, int views) {
    dt_err err;
    dt_layout_make(&a->L, op, m, n, k, views);
    DT_ASSERT(dt_shm_create(&a->shm, a->L.total_bytes, &err) == DT_OK);
    a->pristine = dt_xmalloc((size_t)a->L.total_bytes);
    dt_arena_fill(&a->L, a->pristine, 1234);
    memcpy(a->shm.base, a->pristine, (size_t)a->L.total_bytes);
}

static void arena_free(arena *a) {
    dt_shm_destroy(&a->shm);
    free(a->pristine);
}

/* req must answer ok with a positive integer host_ns. */
static void expect_host_ns(child *c, const char *req, const char *name, const char *what) {
    json_t *o = ask(c, req);
    CHECK(is_ok(o) && json_is_integer(json_object_get(o, "host_ns")) &&
              json_integer_value(json_object_get(o, "host_ns")) > 0,
          "%s %s answer", name, what);
    json_decref(o);
}

/* Full protocol round for one case on worker c. */
static void case_round(child *c, dt_op op, int64_t m, int64_t n, int64_t k, int views) {
    arena a;
    arena_make(&a, op, m, n, k, views);
    const char *name = dt_op_get(op)->name;
    char *req = prepare_req(&a.L, &a.shm, a.L.total_bytes, -1, NULL, 0);
    json_t *o = ask(c, req);
    free(req);
    CHECK(is_ok(o), "%s prepare failed", name);
    if (is_ok(o)) {
        CHECK(json_is_string(json_object_get(o, "implementation")) &&
                  strcmp(json_string_value(json_object_get(o, "output_policy")), "preallocated") == 0 &&
                  json_is_object(json_object_get(o, "setup_ms")) &&
                  json_is_array(json_object_get(o, "sources")),
              "%s prepare answer lacks fields", name);
    }
    json_decref(o);
    expect(c, "{\"cmd\":\"upload\"}", 1, "upload");
    expect_host_ns(c, "{\"cmd\":\"run\",\"reps\":1}", name, "run(1)");
    expect(c, "{\"cmd\":\"download\"}", 1, "download");
    char msg[256];
    int64_t bad = check_case(&a.L, a.shm.base, a.pristine, msg, sizeof msg);
    CHECK(bad == 0, "%s %lldx%lldx%lld views=%d cold: %lld bad: %s", name, (long long)m,
          (long long)n, (long long)k, views, (long long)bad, msg);
    dt_arena_poison_outputs(&a.L, a.shm.base);
    expect(c, "{\"cmd\":\"upload\"}", 1, "upload");
    expect(c, "{\"cmd\":\"run\",\"reps\":100}", 1, "run(100)");
    expect(c, "{\"cmd\":\"download\"}", 1, "download");
    bad = check_case(&a.L, a.shm.base, a.pristine, msg, sizeof msg);
    CHECK(bad == 0, "%s %lldx%lldx%lld views=%d warm: %lld bad: %s", name, (long long)m,
          (long long)n, (long long)k, views, (long long)bad, msg);
    /* floor: the backend's empty call in this case's setting, timed like run; it must
     * not run the op (poisoned outputs stay poisoned, byte for byte) */
    dt_arena_poison_outputs(&a.L, a.shm.base);
    uint8_t *before = dt_xmalloc((size_t)a.L.total_bytes);
    memcpy(before, a.shm.base, (size_t)a.L.total_bytes);
    expect(c, "{\"cmd\":\"upload\"}", 1, "upload");
    expect_host_ns(c, "{\"cmd\":\"floor\",\"reps\":3,\"prime\":2}", name, "floor");
    expect(c, "{\"cmd\":\"floor\",\"reps\":0}", 0, "floor reps 0");
    expect(c, "{\"cmd\":\"floor\",\"reps\":1,\"prime\":17}", 0, "floor prime 17");
    expect(c, "{\"cmd\":\"download\"}", 1, "download");
    CHECK(memcmp(before, a.shm.base, (size_t)a.L.total_bytes) == 0,
          "%s: the floor call changed the arena", name);
    free(before);
    expect(c, "{\"cmd\":\"release\"}", 1, "release");
    arena_free(&a);
}

static void test_hello(child *c) {
    json_t *o = ask(c, "{\"cmd\":\"hello\"}");
    CHECK(is_ok(o), "hello failed");
    if (!o) return;
    CHECK(json_integer_value(json_object_get(o, "protocol")) == 1, "protocol != 1");
    json_t *be = json_object_get(o, "backends");
    CHECK(json_is_true(json_object_get(json_object_get(be, "cpu"), "available")), "cpu not available");
    json_t *cuda = json_object_get(be, "cuda");
    CHECK(json_is_boolean(json_object_get(cuda, "available")), "cuda.available missing");
    if (!json_is_true(json_object_get(cuda, "available")))
        CHECK(json_is_string(json_object_get(cuda, "reason")), "cuda unavailable without reason");
    CHECK(json_is_object(json_object_get(o, "device_timing")), "device_timing missing");
    CHECK(json_integer_value(json_object_get(json_object_get(o, "env"), "threads")) == 2,
          "env.threads != 2 with --threads 2");
    CHECK(strcmp(json_string_value(json_object_get(o, "worker")), "native") == 0, "worker name");
    /* held windows need eager module loading: the worker asks for it unless told */
    const char *ml = json_string_value(json_object_get(json_object_get(o, "env"),
                                                       "cuda_module_loading"));
    const char *mine = getenv("CUDA_MODULE_LOADING");
    CHECK(ml && strcmp(ml, mine ? mine : "EAGER") == 0, "env.cuda_module_loading = %s",
          ml ? ml : "(missing)");
    json_decref(o);
}

/* The ceilings request: cpu measures positive numbers; cuda answers ok:true only where
 * hello offers the cuda backend; bad backends are refused and the worker survives.
 * Then the same through the orchestrator's protocol module (a dt_worker). */
static double ceil_num(json_t *o, const char *key) {
    json_t *v = json_object_get(json_object_get(o, "ceilings"), key);
    return json_is_number(v) ? json_number_value(v) : -1;
}

static void ceilings_free(dt_ceilings_rec *c) {
    free(c->error);
    free(c->method);
    free(c->backend);
    memset(c, 0, sizeof *c);
}

static void test_ceilings(child *c) {
    json_t *h = ask(c, "{\"cmd\":\"hello\"}");
    int cuda = is_ok(h) && json_is_true(json_object_get(
                               json_object_get(json_object_get(h, "backends"), "cuda"), "available"));
    json_decref(h);
    static const char *keys[] = {"copy_gbps", "copy_bytes", "launch_sync_floor_us",
                                 "launch_queue_floor_us", "launch_sync_touch_floor_us"};
    for (int b = 0; b < 2; b++) {
        int64_t t0 = dt_now_ns();
        json_t *o = ask(c, b ? "{\"cmd\":\"ceilings\",\"backend\":\"cuda\"}"
                             : "{\"cmd\":\"ceilings\",\"backend\":\"cpu\"}");
        double s = (double)(dt_now_ns() - t0) / 1e9;
        const char *be = b ? "cuda" : "cpu";
        if (b && !cuda) {
            CHECK(o && !is_ok(o) && json_is_string(json_object_get(o, "error")),
                  "ceilings cuda without a GPU: want ok:false with an error");
            json_decref(o);
            continue;
        }
        CHECK(is_ok(o), "ceilings %s failed", be);
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            double x = ceil_num(o, keys[i]);
            CHECK(x > 0 && isfinite(x), "ceilings %s: %s = %g", be, keys[i], x);
        }
        CHECK(ceil_num(o, "copy_bytes") >= (1 << 20), "ceilings %s: copy_bytes too small", be);
        CHECK(ceil_num(o, "launch_sync_floor_us") >= ceil_num(o, "launch_queue_floor_us") * 0.5,
              "ceilings %s: sync floor far below the queued launch", be);
        CHECK(ceil_num(o, "launch_sync_touch_floor_us") >= ceil_num(o, "launch_sync_floor_us") * 0.5,
              "ceilings %s: touch floor %g us far below the empty floor %g us", be,
              ceil_num(o, "launch_sync_touch_floor_us"), ceil_num(o, "launch_sync_floor_us"));
        CHECK(json_is_string(json_object_get(json_object_get(o, "ceilings"), "method")),
              "ceilings %s: no method", be);
        CHECK(s < 30, "ceilings %s took %.1f s", be, s);
        fprintf(stderr,
                "  ceilings %s (%.2f s): copy %.1f GB/s, floor %.3f us, queue %.4f us, touch "
                "%.3f us\n",
                be, s, ceil_num(o, "copy_gbps"), ceil_num(o, "launch_sync_floor_us"),
                ceil_num(o, "launch_queue_floor_us"), ceil_num(o, "launch_sync_touch_floor_us"));
        json_decref(o);
    }
    expect(c, "{\"cmd\":\"ceilings\"}", 0, "ceilings without backend");
    expect(c, "{\"cmd\":\"ceilings\",\"backend\":\"tpu\"}", 0, "ceilings unknown backend");
    expect(c, "{\"cmd\":\"ceilings\",\"backend\":7}", 0, "ceilings non-string backend");
    expect(c, "{\"cmd\":\"hello\"}", 1, "hello after ceilings");
    /* flop_ceilings: the cpu backend offers none; cuda measures FP32 FFMA where it runs */
    expect(c, "{\"cmd\":\"flop_ceilings\",\"backend\":\"cpu\"}", 0, "flop_ceilings cpu");
    expect(c, "{\"cmd\":\"flop_ceilings\"}", 0, "flop_ceilings without backend");
    {
        json_t *o = ask(c, "{\"cmd\":\"flop_ceilings\",\"backend\":\"cuda\"}");
        json_t *f = json_object_get(o, "flop_ceilings");
        const double tf = json_number_value(json_object_get(f, "fp32_tflops"));
        if (cuda)
            CHECK(is_ok(o) && tf > 0 && isfinite(tf) && !json_object_get(f, "bf16_tflops"),
                  "flop_ceilings cuda: fp32_tflops %g", tf);
        else
            CHECK(o && !is_ok(o), "flop_ceilings cuda without a GPU: want ok:false");
        if (cuda) fprintf(stderr, "  flop_ceilings cuda: fp32 FFMA %.1f TFLOP/s\n", tf);
        json_decref(o);
    }

    /* the orchestrator's side (the protocol module, a dt_worker) */
    char *argv[] = {(char *)g_worker, "--threads", "2", NULL};
    dt_worker w;
    dt_worker_init(&w, argv);
    dt_err err = {{0}};
    CHECK(dt_worker_start(&w, &err) == DT_OK, "start worker: %s", err.msg);
    dt_ceilings_rec cr;
    dt_status st = dt_protocol_ceilings(&w, "cpu", 60, &cr, &err);
    CHECK(st == DT_OK, "dt_protocol_ceilings cpu: %s", err.msg);
    CHECK(cr.copy_gbps > 0, "measure: copy_gbps");
    CHECK(cr.launch_sync_touch_floor_us > 0, "measure: launch_sync_touch_floor_us");
    CHECK(strcmp(cr.backend ? cr.backend : "", "cpu") == 0, "measure: backend not recorded");
    ceilings_free(&cr);
    st = dt_protocol_ceilings(&w, "cuda", 60, &cr, &err);
    if (!cuda) {
        CHECK(st == DT_EWORKER && !cr.present, "dt_protocol_ceilings cuda without a GPU: status %d", st);
        CHECK(strstr(err.msg, "cuda") != NULL, "measure cuda error: %s", err.msg);
    } else {
        CHECK(st == DT_OK, "dt_protocol_ceilings cuda: %s", err.msg);
    }
    ceilings_free(&cr);
    dt_flop_ceilings_rec fr;
    st = dt_protocol_flop_ceilings(&w, "cpu", 60, &fr, &err);
    CHECK(st == DT_EWORKER && strstr(err.msg, "not offered") && fr.fp32_tflops == 0,
          "dt_protocol_flop_ceilings cpu: status %d %s", (int)st, err.msg);
    free(fr.method);
    CHECK(dt_worker_alive(&w), "worker died after a refused ceilings request");
    dt_worker_free(&w);

    /* the check of an answer */
    static const char *bad[] = {
        "{\"copy_bytes\":1,\"launch_sync_floor_us\":1,\"launch_queue_floor_us\":1}",
        "{\"copy_gbps\":0,\"copy_bytes\":1,\"launch_sync_floor_us\":1,\"launch_queue_floor_us\":1}",
        "{\"copy_gbps\":\"9\",\"copy_bytes\":1,\"launch_sync_floor_us\":1,\"launch_queue_floor_us\":1}",
        "{\"copy_gbps\":9,\"copy_bytes\":1,\"launch_sync_floor_us\":-1,\"launch_queue_floor_us\":1}",
        "{\"copy_gbps\":9,\"copy_bytes\":1,\"launch_sync_floor_us\":1,\"launch_queue_floor_us\":1,\"method\":3}",
        "[1]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st = dt_protocol_ceilings_parse(bad[i], strlen(bad[i]), "cpu", &cr, &err);
        CHECK(st == DT_EINVAL, "ceilings check accepted %s", bad[i]);
        ceilings_free(&cr);
    }
    const char *good = "{\"copy_gbps\":9.5,\"copy_bytes\":1048576,\"launch_sync_floor_us\":"
                       "8,\"launch_queue_floor_us\":2,\"method\":\"m\"}";
    st = dt_protocol_ceilings_parse(good, strlen(good), "cpu", &cr, &err);
    CHECK(st == DT_OK, "ceilings check refused a good answer: %s", err.msg);
    ceilings_free(&cr);
}

static void test_bad_requests(child *c) {
    arena a;
    arena_make(&a, DT_OP_ADD, 17, 257, 0, 1);
    expect(c, "{\"cmd\":\"run\",\"reps\":1}", 0, "run before prepare");
    expect(c, "{\"cmd\":\"floor\",\"reps\":1}", 0, "floor before prepare");
    expect(c, "{\"cmd\":\"upload\"}", 0, "upload before prepare");
    expect(c, "{\"cmd\":\"download\"}", 0, "download before prepare");
    expect(c, "{\"cmd\":\"release\"}", 0, "release before prepare");
    expect(c, "{\"cmd\":\"device\",\"scope\":\"control\",\"reps\":1}", 0, "device before prepare");
    expect(c, "{\"cmd\":\"prepare\",\"op\"", 0, "malformed JSON");
    expect(c, "[1,2,3]", 0, "not an object");
    expect(c, "{\"nocmd\":1}", 0, "no cmd");
    expect(c, "{\"cmd\":\"explode\"}", 0, "unknown cmd");
    char *req = prepare_req(&a.L, &a.shm, a.L.total_bytes, -1, NULL, 0);
    char *bad = dt_xmalloc(strlen(req) + 64);
    /* unknown op */
    json_t *o = json_loads(req, 0, NULL);
    json_object_set_new(o, "op", json_string("frobnicate"));
    char *t = json_dumps(o, JSON_COMPACT);
    expect(c, t, 0, "unknown op");
    free(t);
    /* negative m, huge n, non-integer m, k on gemm missing */
    json_object_set_new(o, "op", json_string("add"));
    json_object_set_new(o, "m", json_integer(-17));
    t = json_dumps(o, JSON_COMPACT);
    expect(c, t, 0, "negative m");
    free(t);
    json_object_set_new(o, "m", json_real(17.0));
    t = json_dumps(o, JSON_COMPACT);
    expect(c, t, 0, "non-integer m");
    free(t);
    json_object_set_new(o, "m", json_integer(17));
    json_object_set_new(o, "n", json_integer((json_int_t)1 << 21));
    t = json_dumps(o, JSON_COMPACT);
    expect(c, t, 0, "n too large");
    free(t);
    json_object_set_new(o, "n", json_integer(257));
    json_object_set_new(o, "arena_bytes", json_integer(a.L.total_bytes - 256));
    t = json_dumps(o, JSON_COMPACT);
    expect(c, t, 0, "arena_bytes too small");
    free(t);
    json_object_set_new(o, "arena_bytes", json_integer(a.L.total_bytes));
    json_object_set_new(o, "shm", json_string("/etc/passwd"));
    t = json_dumps(o, JSON_COMPACT);
    expect(c, t, 0, "bad shm name");
    free(t);
    json_object_set_new(o, "shm", json_string("/dualtime-0-0-doesnotexist"));
    t = json_dumps(o, JSON_COMPACT);
    expect(c, t, 0, "missing shm segment");
    free(t);
    json_object_set_new(o, "shm", json_string(a.shm.name));
    json_object_set_new(o, "buffers", json_array());
    t = json_dumps(o, JSON_COMPACT);
    expect(c, t, 0, "no buffers");
    free(t);
    json_object_set_new(o, "buffers", json_string("x"));
    t = json_dumps(o, JSON_COMPACT);
    expect(c, t, 0, "buffers not an array");
    free(t);
    json_decref(o);
    /* buffer outside the arena; wrong stride; wrong dtype */
    free(req);
    req = prepare_req(&a.L, &a.shm, a.L.total_bytes, 2, "data_offset", a.L.total_bytes + 4096);
    expect(c, req, 0, "output buffer outside the arena");
    free(req);
    req = prepare_req(&a.L, &a.shm, a.L.total_bytes, 0, "region_offset", (int64_t)1 << 40);
    expect(c, req, 0, "input region far outside the arena");
    free(req);
    req = prepare_req(&a.L, &a.shm, a.L.total_bytes, 1, "row_stride", 257);
    expect(c, req, 0, "inconsistent row_stride");
    free(req);
    req = prepare_req(&a.L, &a.shm, a.L.total_bytes, 0, "rows", -5);
    expect(c, req, 0, "negative rows");
    free(req);
    /* the worker survives all of it and still serves a case */
    expect(c, "{\"cmd\":\"hello\"}", 1, "hello after bad requests");
    req = prepare_req(&a.L, &a.shm, a.L.total_bytes, -1, NULL, 0);
    expect(c, req, 1, "good prepare after bad requests");
    expect(c, req, 0, "second prepare without release");
    free(req);
    expect(c, "{\"cmd\":\"run\",\"reps\":1}", 0, "run before upload");
    expect(c, "{\"cmd\":\"upload\"}", 1, "upload");
    expect(c, "{\"cmd\":\"run\",\"reps\":0}", 0, "run reps=0");
    expect(c, "{\"cmd\":\"run\",\"reps\":\"5\"}", 0, "run reps string");
    expect(c, "{\"cmd\":\"device\",\"scope\":\"control\",\"reps\":1,\"capacity\":0}", 0,
           "device on cpu");
    expect(c, "{\"cmd\":\"run\",\"reps\":3}", 1, "run after bad requests");
    expect(c, "{\"cmd\":\"release\"}", 1, "release");
    free(bad);
    arena_free(&a);
}

/* One case under DUALTIME_FAULT=what:op, on a fresh worker. Returns the worker. */
static void test_fault(const char *what) {
    char spec[64];
    snprintf(spec, sizeof spec, "%s:add", what);
    child c;
    spawn(&c, spec);
    expect(&c, "{\"cmd\":\"hello\"}", 1, "hello (fault worker)");
    /* a case of another op is untouched by the fault */
    case_round(&c, DT_OP_SOFTMAX, 17, 257, 0, 0);
    arena a;
    arena_make(&a, DT_OP_ADD, 17, 257, 0, 0);
    char *req = prepare_req(&a.L, &a.shm, a.L.total_bytes, -1, NULL, 0);
    expect(&c, req, 1, "prepare (fault)");
    free(req);
    expect(&c, "{\"cmd\":\"upload\"}", 1, "upload (fault)");
    char line[4096];
    int r = request(&c, "{\"cmd\":\"run\",\"reps\":1}", line, sizeof line,
                    strcmp(what, "hang") == 0 ? 1500 : 60000);
    if (strcmp(what, "segv") == 0) {
        CHECK(r == 0, "segv: worker answered run");
        int st = finish(&c);
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "segv: worker did not die of SIGSEGV (status %d)", st);
    } else if (strcmp(what, "hang") == 0) {
        CHECK(r == -1, "hang: worker answered run");
        kill(c.pid, SIGKILL);
        finish(&c);
    } else if (strcmp(what, "garbage") == 0) {
        CHECK(r == 1 && json_loads(line, 0, NULL) == NULL, "garbage: answer was JSON");
        finish(&c);
    } else {
        json_t *o = r == 1 ? json_loads(line, 0, NULL) : NULL;
        CHECK(is_ok(o), "%s: run failed", what);
        json_decref(o);
        expect(&c, "{\"cmd\":\"download\"}", 1, "download (fault)");
        char msg[256];
        int64_t bad = check_case(&a.L, a.shm.base, a.pristine, msg, sizeof msg);
        CHECK(bad > 0, "%s: injected fault not detected", what);
        fprintf(stderr, "  fault %s detected: %s\n", what, msg);
        expect(&c, "{\"cmd\":\"quit\"}", 1, "quit");
        int st = finish(&c);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: worker exit status %d", what, st);
    }
    arena_free(&a);
}

/* ---- held windows on the cuda backend (--gpu-hold) ------------------------------ */

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median stream interval per call (us) of `samples` device requests; NAN on failure.
 * Checks the result's hold fields against what was asked. */
static double device_per_call_us(child *c, const char *scope, int reps, int hold, int samples,
                                 const char *what) {
    double v[64];
    char req[256];
    /* probes: the serialized kind, the one the probe worker below was started with */
    snprintf(req, sizeof req,
             "{\"cmd\":\"device\",\"scope\":\"%s\",\"reps\":%d,\"capacity\":%d,\"hold\":%s,"
             "\"prime\":1%s}",
             scope, reps, 16 * reps + 64, hold ? "true" : "false",
             strcmp(scope, "probe") == 0 ? ",\"probe_kind\":\"serialized\"" : "");
    for (int s = 0; s < samples && s < 64; s++) {
        json_t *o = ask(c, req);
        json_t *r = json_object_get(o, "result");
        int ok = is_ok(o) && json_is_object(r);
        CHECK(ok, "%s: %s", what,
              o ? json_string_value(json_object_get(o, "error")) : "no answer");
        if (!ok) {
            json_decref(o);
            return NAN;
        }
        CHECK(json_is_boolean(json_object_get(r, "held")) &&
                  json_is_true(json_object_get(r, "held")) == hold,
              "%s: held field wrong", what);
        if (hold) {
            const char *m = json_string_value(json_object_get(r, "hold_method"));
            CHECK(m && (!strcmp(m, "wait_value") || !strcmp(m, "spin_kernel")) &&
                      json_integer_value(json_object_get(r, "hold_queue_ns")) > 0,
                  "%s: hold_method/hold_queue_ns missing", what);
        }
        v[s] = json_number_value(json_object_get(r, "stream_ns")) / reps / 1e3;
        json_decref(o);
    }
    qsort(v, (size_t)samples, sizeof *v, cmp_dbl);
    return samples % 2 ? v[samples / 2] : 0.5 * (v[samples / 2 - 1] + v[samples / 2]);
}

/* prepare + upload + run(2) of a on worker c. 1 if all answered ok. */
static int gpu_case_up(child *c, arena *a, const char *what) {
    char *req = prepare_req(&a->L, &a->shm, a->L.total_bytes, -1, NULL, 0);
    int ok = expect(c, req, 1, what);
    free(req);
    ok = ok && expect(c, "{\"cmd\":\"upload\"}", 1, what);
    ok = ok && expect(c, "{\"cmd\":\"run\",\"reps\":2}", 1, what);
    return ok;
}

/* Held vs unheld control of add 17x257, then the outputs are still right. */
static void gpu_hold_small(child *c) {
    arena a;
    arena_make(&a, DT_OP_ADD, 17, 257, 0, 0);
    if (gpu_case_up(c, &a, "hold: add 17x257")) {
        double ub = device_per_call_us(c, "control", 64, 0, 21, "unheld control batch");
        double hb = device_per_call_us(c, "control", 64, 1, 21, "held control batch");
        double us = device_per_call_us(c, "control", 1, 0, 21, "unheld control single");
        double hs = device_per_call_us(c, "control", 1, 1, 21, "held control single");
        fprintf(stderr, "  hold: native add 17x257 control us/call: batch of 64 unheld %.3f "
                "held %.3f (%.2fx); single unheld %.3f held %.3f (%.2fx)\n",
                ub, hb, hb / ub, us, hs, hs / us);
        CHECK(hb < 0.8 * ub, "held batch %.3f us/call not much shorter than unheld %.3f", hb, ub);
        CHECK(hs < us, "held single %.3f us not shorter than unheld %.3f", hs, us);
        dt_arena_poison_outputs(&a.L, a.shm.base);
        expect(c, "{\"cmd\":\"upload\"}", 1, "upload");
        json_t *o = ask(c, "{\"cmd\":\"device\",\"scope\":\"control\",\"reps\":3,\"hold\":true}");
        CHECK(is_ok(o), "held sample for the output check");
        json_decref(o);
        expect(c, "{\"cmd\":\"download\"}", 1, "download");
        char msg[256];
        CHECK(check_case(&a.L, a.shm.base, a.pristine, msg, sizeof msg) == 0,
              "outputs after a held window: %s", msg);
        expect(c, "{\"cmd\":\"release\"}", 1, "release");
    }
    arena_free(&a);
}

/* A cuCtxSynchronize planted inside the hold fails in time with the reason; the worker
 * stays usable (a held sample of another op succeeds). */
static void gpu_hold_planted_sync(void) {
    child c;
    spawn(&c, "holdsync:add");
    expect(&c, "{\"cmd\":\"hello\"}", 1, "hello (holdsync)");
    arena a;
    arena_make(&a, DT_OP_ADD, 17, 257, 0, 0);
    if (gpu_case_up(&c, &a, "holdsync: add")) {
        int64_t t0 = dt_now_ns();
        json_t *o = ask(&c, "{\"cmd\":\"device\",\"scope\":\"control\",\"reps\":8,\"hold\":true}");
        double s = (double)(dt_now_ns() - t0) / 1e9;
        const char *e = o ? json_string_value(json_object_get(o, "error")) : NULL;
        fprintf(stderr, "  hold: planted cuCtxSynchronize inside a hold: answered after %.3f s: "
                "%.200s\n", s, e ? e : "(ok)");
        CHECK(o && !is_ok(o) && e && strstr(e, "hold timed out after") &&
                  strstr(e, "synchronized on the host inside the hold"),
              "planted sync: want ok:false with the timeout reason, got %s", e ? e : "ok");
        CHECK(s < 5.0, "planted sync answered after %.2f s (watchdog 1 s)", s);
        json_decref(o);
        expect(&c, "{\"cmd\":\"device\",\"scope\":\"control\",\"reps\":8}", 1,
               "unheld sample after a timed-out hold");
        expect(&c, "{\"cmd\":\"release\"}", 1, "release");
    }
    arena_free(&a);
    arena b;
    arena_make(&b, DT_OP_SOFTMAX, 17, 257, 0, 0);
    if (gpu_case_up(&c, &b, "holdsync: softmax")) {
        expect(&c, "{\"cmd\":\"device\",\"scope\":\"control\",\"reps\":8,\"hold\":true}", 1,
               "a held sample of another op after the timeout");
        expect(&c, "{\"cmd\":\"release\"}", 1, "release");
    }
    arena_free(&b);
    expect(&c, "{\"cmd\":\"quit\"}", 1, "quit");
    finish(&c);
}

/* Held probe stream interval ~ held control for a large kernel: the probe window holds
 * only the work (the probe on its own probe_process worker, as the orchestrator does). */
static void gpu_hold_probe_large(child *c) {
    child p;
    spawn(&p, NULL);
    expect(&p, "{\"cmd\":\"hello\"}", 1, "hello (probe worker)");
    expect(&p, "{\"cmd\":\"probe_process\",\"probe_kind\":\"serialized\"}", 1, "probe_process");
    arena a;
    arena_make(&a, DT_OP_ADD, 4096, 4096, 0, 0);
    if (gpu_case_up(c, &a, "hold: add 4096^2 (control)") &&
        gpu_case_up(&p, &a, "hold: add 4096^2 (probe)")) {
        double cb = device_per_call_us(c, "control", 8, 1, 9, "held control batch large");
        double pb = device_per_call_us(&p, "probe", 8, 1, 9, "held probe batch large");
        double cs = device_per_call_us(c, "control", 1, 1, 9, "held control single large");
        double ps = device_per_call_us(&p, "probe", 1, 1, 9, "held probe single large");
        fprintf(stderr, "  hold: native add 4096x4096 us/call (serialized probe): batch of 8 "
                "control %.3f probe %.3f (%.3fx); single control %.3f probe %.3f (%.3fx)\n",
                cb, pb, pb / cb, cs, ps, ps / cs);
        CHECK(pb / cb >= 0.95 && pb / cb <= 1.05, "held probe/control batch %.3f outside "
              "[0.95, 1.05]", pb / cb);
        CHECK(ps / cs >= 0.95 && ps / cs <= 1.10, "held probe/control single %.3f outside "
              "[0.95, 1.10]", ps / cs);
        expect(c, "{\"cmd\":\"release\"}", 1, "release");
        expect(&p, "{\"cmd\":\"release\"}", 1, "release (probe)");
    }
    arena_free(&a);
    expect(&p, "{\"cmd\":\"quit\"}", 1, "quit (probe)");
    finish(&p);
}

/* The E2E decomposition's sample (issue 13): an unheld single-call probe with "decomp"
 * on a probe_process worker answers the host bracket and the launch API timestamps, on
 * the kernels' clock, in order; a held or batched decomp request is refused. */
static void gpu_decomp(void) {
    child p;
    spawn(&p, NULL);
    expect(&p, "{\"cmd\":\"hello\"}", 1, "hello (decomp probe worker)");
    expect(&p, "{\"cmd\":\"probe_process\"}", 1, "probe_process (decomp)");
    arena a;
    arena_make(&a, DT_OP_ADD, 17, 257, 0, 0);
    if (gpu_case_up(&p, &a, "decomp: add 17x257")) {
        expect(&p, "{\"cmd\":\"device\",\"scope\":\"probe\",\"reps\":1,\"hold\":true,"
               "\"decomp\":true}", 0, "decomp with a hold is refused");
        expect(&p, "{\"cmd\":\"device\",\"scope\":\"probe\",\"reps\":2,\"decomp\":true}",
               0, "decomp of two calls is refused");
        json_t *o = ask(&p, "{\"cmd\":\"device\",\"scope\":\"probe\",\"reps\":1,"
                            "\"capacity\":64,\"prime\":1,\"decomp\":true}");
        json_t *r = json_object_get(o, "result"), *d = json_object_get(r, "decomp");
        json_t *l = json_array_get(json_object_get(d, "launches"), 0);
        json_t *k = json_array_get(json_object_get(r, "kernels"), 0);
        CHECK(is_ok(o) && d && l && k, "decomp answer with a launch and a kernel");
        if (is_ok(o) && d && l && k) {
            double t0 = json_number_value(json_object_get(d, "call_start_ns"));
            double t1 = json_number_value(json_object_get(d, "sync_return_ns"));
            double en = json_number_value(json_object_get(l, "enter_ns"));
            double ex = json_number_value(json_object_get(l, "exit_ns"));
            double ks = json_number_value(json_object_get(k, "start_ns"));
            double ke = json_number_value(json_object_get(k, "end_ns"));
            double u = json_number_value(json_object_get(r, "clock_uncertainty_ns"));
            fprintf(stderr, "  decomp: native add 17x257 ns: dispatch %.0f launch %.0f queue "
                    "%.0f kernel %.0f completion %.0f (total %.0f, u %.0f, api %s)\n",
                    en - t0, ex - en, ks - ex, ke - ks, t1 - ke, t1 - t0, u,
                    json_string_value(json_object_get(l, "api")));
            CHECK(t0 - u <= en && en <= ex && en - u <= ks && ks < ke && ke <= t1 + u,
                  "decomp timestamps out of order");
            CHECK(json_array_size(json_object_get(d, "launches")) == 1, "one launch");
            CHECK(t1 - t0 < 1e6, "a small single call took %.0f ns", t1 - t0);
        }
        json_decref(o);
        expect(&p, "{\"cmd\":\"release\"}", 1, "release (decomp)");
    }
    arena_free(&a);
    expect(&p, "{\"cmd\":\"quit\"}", 1, "quit (decomp)");
    finish(&p);
}

/* The ceilings' held floors: present, positive, and below the synchronized floors. */
static void gpu_hold_ceilings(child *c) {
    json_t *o = ask(c, "{\"cmd\":\"ceilings\",\"backend\":\"cuda\"}");
    CHECK(is_ok(o), "ceilings cuda failed");
    static const char *keys[] = {"held_launch_floor_us", "held_launch_batch_floor_us",
                                 "held_touch_floor_us", "held_touch_batch_floor_us"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        double x = ceil_num(o, keys[i]);
        CHECK(x > 0 && isfinite(x), "ceilings cuda: %s = %g", keys[i], x);
    }
    fprintf(stderr, "  hold: ceilings cuda: sync floor %.3f us, queue %.3f, touch %.3f; held "
            "empty %.3f single / %.3f batch, held touch %.3f single / %.3f batch\n",
            ceil_num(o, "launch_sync_floor_us"), ceil_num(o, "launch_queue_floor_us"),
            ceil_num(o, "launch_sync_touch_floor_us"), ceil_num(o, keys[0]),
            ceil_num(o, keys[1]), ceil_num(o, keys[2]), ceil_num(o, keys[3]));
    CHECK(ceil_num(o, "held_touch_batch_floor_us") < ceil_num(o, "launch_sync_touch_floor_us"),
          "held touch batch floor not below the synchronized touch floor");
    CHECK(ceil_num(o, "held_launch_batch_floor_us") <= ceil_num(o, "held_launch_floor_us") * 1.5,
          "held empty batch floor far above the single one");
    dt_err err = {{0}};
    char *text = json_dumps(json_object_get(o, "ceilings"), 0);
    dt_ceilings_rec rec;
    CHECK(text && dt_protocol_ceilings_parse(text, strlen(text), "cuda", &rec, &err) == DT_OK,
          "the orchestrator's check refuses the answer: %s", err.msg);
    CHECK(rec.held_touch_floor_batch_us == ceil_num(o, "held_touch_batch_floor_us"),
          "the held touch batch floor lands in the record");
    free(text);
    free(rec.error);
    free(rec.method);
    free(rec.backend);
    json_decref(o);
}

/* --gpu-hold: 77 unless the worker offers cuda with device timing. */
static int gpu_hold_main(void) {
    child c;
    spawn(&c, NULL);
    json_t *h = ask(&c, "{\"cmd\":\"hello\"}");
    int cuda = is_ok(h) &&
               json_is_true(json_object_get(
                   json_object_get(json_object_get(h, "backends"), "cuda"), "available")) &&
               json_is_true(json_object_get(json_object_get(h, "device_timing"), "available"));
    json_decref(h);
    if (!cuda) {
        printf("SKIP: the native worker offers no cuda backend with device timing here\n");
        finish(&c);
        return 77;
    }
    g_backend = "cuda";
    gpu_hold_small(&c);
    gpu_hold_probe_large(&c);
    gpu_hold_ceilings(&c);
    finish(&c);
    gpu_hold_planted_sync();
    gpu_decomp();
    printf("test_native_worker --gpu-hold: %d checks, %d passed, %d failed\n", g_pass + g_fail,
           g_pass, g_fail);
    return g_fail ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_native_worker PATH-TO-dualtime-native-worker [--gpu-hold]\n");
        return 2;
    }
    g_worker = argv[1];
    signal(SIGPIPE, SIG_IGN);
    dt_shm_sweep_stale();
    if (argc > 2 && strcmp(argv[2], "--gpu-hold") == 0) return gpu_hold_main();

    child c;
    spawn(&c, NULL);
    test_hello(&c);
    for (int views = 0; views <= 1; views++) {
        case_round(&c, DT_OP_ADD, 17, 257, 0, views);
        case_round(&c, DT_OP_GELU_ADD, 1, 127, 0, views);
        case_round(&c, DT_OP_SUM, 128, 1024, 0, views);
        case_round(&c, DT_OP_SOFTMAX, 17, 257, 0, views);
        case_round(&c, DT_OP_RMSNORM, 17, 257, 0, views);
        case_round(&c, DT_OP_LAYERNORM, 64, 300, 0, views);
        case_round(&c, DT_OP_RESIDUAL_LAYERNORM, 17, 257, 0, views);
        case_round(&c, DT_OP_CROSS_ENTROPY, 33, 1000, 0, views);
        case_round(&c, DT_OP_GEMM, 127, 193, 61, views);
    }
    test_bad_requests(&c);
    test_ceilings(&c);
    /* end of input: exit 0 */
    int st = finish(&c);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "worker exit status %d at end of input", st);

    static const char *faults[] = {"segv", "hang", "garbage", "wrong", "oob", "input", "short"};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) test_fault(faults[i]);

    return dt_check_summary("test_native_worker");
}
