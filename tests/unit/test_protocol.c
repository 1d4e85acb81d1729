/* test_protocol.c — the orchestrator's protocol edge (src/session/dt_protocol.h)
 * against a scripted worker (/bin/sh answering fixed lines): hello into a struct (ids,
 * backends, the device description with its name, the text kept), the protocol version
 * check, run/floor answers and their host_ns rule, ok:false keeps the worker, garbage
 * kills it, "unavailable" in a hello, a probe device answer into a typed sample (per-call kernel totals in
 * first-seen order, compact records), a held request (hold:true sent, an answer without
 * held:true refused), the ceilings check, and the resumption note. */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"
#include "session/dt_protocol.h"

/* A worker that answers each request line by its cmd. */
static const char k_script[] =
    "while read -r l; do case \"$l\" in\n"
    "*hello*) echo '{\"ok\":true,\"protocol\":1,\"worker\":\"fake\",\"framework\":\"fw\","
    "\"framework_version\":\"1.2\",\"backends\":{\"cpu\":{\"available\":true},\"cuda\":"
    "{\"available\":true,\"info\":{\"gpu\":\"Fake GPU\",\"pci_bus\":27}}},\"env\":{\"threads\":3}}';;\n"
    "*'\"reps\":7'*) echo '{\"ok\":true}';;\n"
    "*'\"cmd\":\"run\"'*) echo '{\"ok\":true,\"host_ns\":1500}';;\n"
    "*floor*) echo '{\"ok\":false,\"error\":\"unknown cmd floor\"}';;\n"
    "*'\"reps\":5'*'\"hold\":true'*) echo '{\"ok\":true,\"result\":{\"stream_ns\":5000.0,"
    "\"held\":true}}';;\n"
    "*'\"hold\":true'*'\"hold\":true'*) echo '{\"ok\":false,\"error\":\"hold twice\"}';;\n"
    "*device*) echo '{\"ok\":true,\"result\":{\"stream_ns\":4000.0,\"kernel_sum_ns\":3000.0,"
    "\"kernel_span_ns\":3500.0,\"kernel_count\":3,\"launch_count\":2,\"clock_offset_ns\":5.0,"
    "\"kernels\":[{\"name\":\"b\",\"start_ns\":1100,\"end_ns\":1600,\"grid\":[2,1,1],\"block\":[64,1,1],"
    "\"stream_id\":7},{\"name\":\"a\",\"start_ns\":1000,\"end_ns\":2000,\"grid\":[1,1,1],"
    "\"block\":[32,1,1]},{\"name\":\"b\",\"start_ns\":2100,\"end_ns\":3600,\"grid\":[2,1,1],"
    "\"block\":[64,1,1],\"stream_id\":7}]}}';;\n"
    "*ceilings*) echo '{\"ok\":true,\"ceilings\":{\"copy_gbps\":10,\"copy_bytes\":1024,"
    "\"launch_sync_floor_us\":8,\"launch_queue_floor_us\":2}}';;\n"
    "*garbage*) echo 'not json';;\n"
    "*quit*) echo '{\"ok\":true}'; exit 0;;\n"
    "*) echo '{\"ok\":false,\"error\":\"what\"}';;\n"
    "esac; done\n";

static void start(dt_worker *w, dt_hello *h) {
    char *argv[] = {"/bin/sh", "-c", (char *)k_script, NULL};
    dt_worker_init(w, argv);
    dt_err err = {{0}};
    CHECK(dt_protocol_start(w, 10, h, &err) == DT_OK, "start: %s", err.msg);
}

static void test_hello(void) {
    dt_worker w;
    dt_hello h;
    start(&w, &h);
    CHECK(h.protocol == 1 && h.worker && strcmp(h.worker, "fake") == 0, "id");
    CHECK(h.framework && strcmp(h.framework, "fw") == 0 && strcmp(h.framework_version, "1.2") == 0,
          "framework");
    CHECK(h.cpu.available && h.cuda.available && !h.cpu.reason, "backends");
    CHECK(h.threads == 3, "threads %lld", h.threads);
    CHECK(h.cuda_name && strcmp(h.cuda_name, "Fake GPU") == 0 && h.cuda_pci_bus == 27,
          "device: name from gpu, bus");
    CHECK(h.cuda_info_json && strstr(h.cuda_info_json, "\"name\":\"Fake GPU\""), "%s",
          h.cuda_info_json);
    CHECK(h.text && strstr(h.text, "\"worker\":\"fake\""), "text kept");
    CHECK(dt_hello_backend_get(&h, "cuda") == &h.cuda && !dt_hello_backend_get(&h, "tpu"),
          "backend lookup");
    dt_hello_free(&h);

    dt_err err = {{0}};
    int64_t ns = 0;
    CHECK(dt_protocol_run(&w, 3, 1, 10, &ns, &err) == DT_OK && ns == 1500, "run: %s", err.msg);
    CHECK(dt_protocol_run(&w, 7, 0, 10, &ns, &err) == DT_EWORKER &&
              strstr(err.msg, "without a positive integer host_ns"),
          "run without host_ns: %s", err.msg);
    CHECK(dt_protocol_floor(&w, 1, 10, &ns, &err) == DT_EWORKER &&
              strcmp(err.msg, "unknown cmd floor") == 0 && dt_worker_alive(&w),
          "ok:false keeps the worker: %s", err.msg);
    dt_ceilings_rec c;
    CHECK(dt_protocol_ceilings(&w, "cpu", 10, &c, &err) == DT_OK && c.present &&
              c.copy_gbps == 10 && c.copy_bytes == 1024 && isnan(c.launch_sync_touch_floor_us) &&
              c.backend && strcmp(c.backend, "cpu") == 0,
          "ceilings: %s", err.msg);
    free(c.backend);
    free(c.method);
    double ms = 0;
    CHECK(dt_protocol_copy(&w, "garbage", 10, &ms, &err) == DT_EWORKER &&
              strstr(err.msg, "not a protocol line") && !dt_worker_alive(&w),
          "garbage kills: %s", err.msg);
    dt_worker_free(&w);
}

/* "unavailable" in a hello (docs/protocol.md, hello): kept as a string, ignored when it
 * is not one; absent in the scripted worker's hello. */
static void test_unavailable(void) {
    dt_hello h;
    dt_err err = {{0}};
    const char *a = "{\"ok\":true,\"protocol\":1,\"unavailable\":\"torch.compile needs torch 2\"}";
    CHECK(dt_hello_parse(a, strlen(a), &h, &err) == DT_OK && h.unavailable &&
              strcmp(h.unavailable, "torch.compile needs torch 2") == 0, "the reason kept");
    dt_hello_free(&h);
    const char *b = "{\"ok\":true,\"protocol\":1,\"unavailable\":true}";
    CHECK(dt_hello_parse(b, strlen(b), &h, &err) == DT_OK && !h.unavailable, "not a string");
    dt_hello_free(&h);
    const char *c = "{\"ok\":true,\"protocol\":1}";
    CHECK(dt_hello_parse(c, strlen(c), &h, &err) == DT_OK && !h.unavailable, "absent");
    dt_hello_free(&h);
}

static void test_device(void) {
    dt_worker w;
    dt_hello h;
    start(&w, &h);
    dt_hello_free(&h);
    dt_sample s;
    dt_err err = {{0}};
    CHECK(dt_protocol_device(&w, 1, 0, 2, "concurrent", 1, 10, &s, &err) == DT_OK, "%s", err.msg);
    CHECK(s.us == 2.0 && s.reps == 2 && s.has_probe, "us per call %g", s.us);
    const dt_probe *p = &s.probe;
    CHECK(p->kernel_sum_us == 1.5 && p->kernel_span_us == 1.75 && p->kernel_count == 3 &&
              p->launch_count == 2 && p->clock_offset_ns == 5.0 && isnan(p->clock_uncertainty_ns),
          "probe fields");
    CHECK(p->has_kernels && p->n_kernels == 2 && strcmp(p->kernels[0].name, "b") == 0 &&
              p->kernels[0].count == 2 && p->kernels[0].us == 1.0 &&
              strcmp(p->kernels[1].name, "a") == 0 && p->kernels[1].us == 0.5,
          "kernel totals per call, first-seen order");
    const dt_probe_records *r = &p->records;
    CHECK(r->present && r->t0_ns == 1000 && r->names.n == 2 && r->n_rows == 3, "records");
    CHECK(r->n_rows == 3 && r->rows[0].name_index == 0 && r->rows[0].start_ns == 100 &&
              r->rows[0].end_ns == 600 && r->rows[0].stream_id == 7 &&
              r->rows[1].stream_id == DT_NULL_I64 && r->launch[0].grid[0] == 2 &&
              r->launch[1].block[0] == 32,
          "rows relative to t0, stream ids, launches");
    dt_samples v = {0};
    dt_samples_push(&v, &s); /* the sample's arrays now belong to v */
    /* held: the request carries "hold":true once, the answer must say held:true */
    dt_sample hs;
    CHECK(dt_protocol_device(&w, 0, 1, 5, "concurrent", 1, 10, &hs, &err) == DT_OK && hs.us == 1.0,
          "held control: %s", err.msg);
    CHECK(dt_protocol_device(&w, 1, 1, 2, "concurrent", 1, 10, &hs, &err) == DT_EWORKER &&
              strstr(err.msg, "without held:true") && dt_worker_alive(&w),
          "a held request answered unheld fails closed: %s", err.msg);
    dt_samples_free(&v);
    dt_worker_free(&w);
}

static void test_note(void) {
    char *out = NULL;
    dt_err err = {{0}};
    const char *run = "{\"format\":\"x\",\"tool\":{\"name\":\"dualtime\"},\"frameworks\":[1],"
                      "\"environment\":{\"python\":\"\"},\"cases\":[]}";
    CHECK(dt_protocol_resume_note("[{\"at\":\"t0\"}]", "t1", run, &out, &err) == DT_OK && out,
          "%s", err.msg);
    CHECK(out && strcmp(out, "[{\"at\":\"t0\"},{\"at\":\"t1\",\"tool\":{\"name\":\"dualtime\"},"
                             "\"frameworks\":[1],\"environment\":{\"python\":\"\"}}]") == 0,
          "%s", out);
    free(out);
    CHECK(dt_protocol_resume_note(NULL, "t", "not json", &out, &err) == DT_EINVAL && !out,
          "bad text refused");
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    test_hello();
    test_unavailable();
    test_device();
    test_note();
    printf("test_protocol: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
