/* test_native_request.c — the native worker's request parser without a process
 * (workers/native/dt_native_request.h): framing errors, every prepare field against the
 * layout, run/device limits, and hostile values (huge numbers, long names, duplicate
 * keys). Checks through tests/dt_check.h; exit 1 on a failure. */
#include "../../workers/native/dt_native_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"

/* Parses line; returns its error message ("" when it parsed) into msg. */
static dt_status line_err(const char *line, char *msg) {
    json_t *req;
    const char *cmd;
    dt_err err = {{0}};
    dt_status st = dt_req_parse_line(line, strlen(line), &req, &cmd, &err);
    strcpy(msg, st == DT_OK ? "" : err.msg);
    if (st == DT_OK) json_decref(req);
    else CHECK(req == NULL);
    return st;
}

/* A valid prepare request for op/shape (buffers from the worker's own layout). */
static json_t *prepare_req(const char *op, int m, int n, int k) {
    dt_case_layout L;
    dt_layout_make(&L, (dt_op)dt_op_find(op), m, n, k, 0);
    json_t *bufs = json_array();
    for (int i = 0; i < L.nbuffers; i++) {
        const dt_buffer_layout *B = &L.buf[i];
        json_array_append_new(
            bufs, json_pack("{s:s,s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:I}", "name", B->name, "dtype",
                            B->dtype == DT_I64 ? "i64" : "f32", "is_output", B->is_output,
                            "rows", (json_int_t)B->rows, "cols", (json_int_t)B->cols,
                            "row_stride", (json_int_t)B->row_stride, "data_offset",
                            (json_int_t)B->data_offset, "region_offset",
                            (json_int_t)B->region_offset, "region_bytes",
                            (json_int_t)B->region_bytes));
    }
    return json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:s,s:I,s:o}", "cmd", "prepare", "op", op,
                     "backend", "cpu", "m", m, "n", n, "k", k, "shm", "/dualtime-test-1",
                     "arena_bytes", (json_int_t)L.total_bytes, "buffers", bufs);
}

static dt_status cuda_yes(void *ctx, dt_err *err) { (void)ctx; (void)err; return DT_OK; }
static dt_status cuda_no(void *ctx, dt_err *err) {
    return dt_fail(err, DT_EUNAVAIL, "cuda backend unavailable: %s", (const char *)ctx);
}

static dt_status prep(json_t *req, dt_prepare_req *out, char *msg) {
    dt_err err = {{0}};
    dt_status st = dt_req_parse_prepare(req, cuda_no, "no driver", out, &err);
    strcpy(msg, st == DT_OK ? "" : err.msg);
    return st;
}

/* Issue 13: device requests with scope graph and the cold cache fields. */
static void test_device_ex(void) {
    dt_err err = {{0}};
    dt_device_req d;
    json_t *req = json_pack("{s:s,s:s,s:i,s:b}", "cmd", "device", "scope", "graph", "reps", 64,
                            "hold", 1);
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_OK && d.graph && d.hold && d.reps == 64 &&
          !d.probe && !d.cold, "%s", err.msg);
    int probe, hold;
    int64_t reps, cap;
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_EINVAL,
          "the old parser knows no graph");
    json_object_set_new(req, "cache", json_string("warm"));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_OK && !d.cold);
    json_object_set_new(req, "cache", json_string("cold"));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_EINVAL && strstr(err.msg, "copies"), "%s", err.msg);
    json_object_set_new(req, "copies", json_integer(6));
    json_object_set_new(req, "flush_bytes", json_integer(130023424));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_OK && d.cold && d.copies == 6 &&
          d.flush_bytes == 130023424, "%s", err.msg);
    json_object_set_new(req, "copies", json_integer(0));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_EINVAL && strstr(err.msg, "copies=0 out of [1, 1024]"), "%s", err.msg);
    json_object_set_new(req, "copies", json_integer(1025));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_EINVAL);
    json_object_set_new(req, "copies", json_integer(1));
    json_object_set_new(req, "flush_bytes", json_integer(2));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_EINVAL && strstr(err.msg, "flush_bytes=2"), "%s", err.msg);
    json_object_set_new(req, "cache", json_string("tepid"));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_EINVAL && strstr(err.msg, "'cache' must be"), "%s", err.msg);
    json_object_set_new(req, "cache", json_integer(1));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_EINVAL);
    json_object_del(req, "cache");
    json_object_set_new(req, "hold", json_string("yes"));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_EINVAL && strstr(err.msg, "'hold'"));
    json_object_set_new(req, "hold", json_true());
    json_object_set_new(req, "scope", json_string("probe"));
    json_object_set_new(req, "probe_kind", json_string("serialized"));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_OK && d.probe == 2 && !d.graph);
    json_object_set_new(req, "scope", json_string("graphs"));
    CHECK(dt_req_parse_device_ex(req, &d, &err) == DT_EINVAL && strstr(err.msg, "'scope' must be"));
    json_decref(req);
}

int main(void) {
    char msg[DT_ERR_LEN];
    test_device_ex();
    dt_prepare_req pr;

    /* framing */
    json_t *req;
    const char *cmd;
    dt_err err = {{0}};
    CHECK(dt_req_parse_line("{\"cmd\":\"run\"}\0x", 15, &req, &cmd, &err) == DT_EINVAL);
    CHECK(strcmp(err.msg, "request contains a NUL byte") == 0);
    CHECK(line_err("{\"cmd\":", msg) == DT_EINVAL && strncmp(msg, "malformed JSON request: ", 24) == 0);
    CHECK(line_err("{\"cmd\":\"run\",\"cmd\":\"quit\"}", msg) == DT_EINVAL && strstr(msg, "duplicate"));
    CHECK(line_err("[1,2]", msg) == DT_EINVAL && strcmp(msg, "request is not a JSON object") == 0);
    CHECK(line_err("{\"cmd\":7}", msg) == DT_EINVAL && strcmp(msg, "request has no string 'cmd'") == 0);
    CHECK(line_err("{\"cmd\":\"hello\"} x", msg) == DT_EINVAL);
    CHECK(line_err("{\"cmd\":\"hello\"}", msg) == DT_OK);
    char deep[20001];
    for (int i = 0; i < 10000; i++) deep[i] = '[', deep[10000 + i] = ']';
    deep[20000] = '\0';
    CHECK(line_err(deep, msg) == DT_EINVAL); /* nesting: refused, no stack overflow */

    /* prepare: the valid request, then one field wrong at a time */
    req = prepare_req("add", 17, 257, 0);
    CHECK(prep(req, &pr, msg) == DT_OK && !pr.cuda && strcmp(pr.shm_name, "/dualtime-test-1") == 0);
    CHECK(pr.L.m == 17 && pr.L.n == 257 && pr.arena_bytes == pr.L.total_bytes);
    json_t *b0 = json_array_get(json_object_get(req, "buffers"), 0);
    json_object_set_new(b0, "region_offset", json_integer(0));
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strstr(msg, "region_offset is 0, the layout says"));
    json_decref(req);

    req = prepare_req("gemm", 7, 9, 5);
    CHECK(prep(req, &pr, msg) == DT_OK);
    json_object_set_new(req, "k", json_integer(0));
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strstr(msg, "k=0 out of [1, 1048576]"));
    json_object_set_new(req, "k", json_integer(5));
    json_object_set_new(req, "m", json_integer(INT64_MAX));
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strstr(msg, "m=9223372036854775807 out of"));
    json_object_set_new(req, "m", json_real(7.0));
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strcmp(msg, "'m' is not an integer") == 0);
    json_object_set_new(req, "m", json_integer(7));
    json_object_set_new(req, "arena_bytes", json_integer(100));
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strstr(msg, "arena_bytes=100 is smaller"));
    json_object_set_new(req, "arena_bytes", json_integer(INT64_MAX));
    CHECK(prep(req, &pr, msg) == DT_OK); /* larger is fine: the mapping checks the segment */
    json_object_set_new(req, "shm", json_string("/dualtime-a/../../etc"));
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strcmp(msg, "bad shared memory name") == 0);
    char longname[100];
    memset(longname, 'x', sizeof longname - 1);
    memcpy(longname, "/dualtime-", 10);
    longname[99] = '\0';
    json_object_set_new(req, "shm", json_string(longname));
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strcmp(msg, "bad shared memory name") == 0);
    json_object_set_new(req, "shm", json_string("/dualtime-ok"));
    json_object_set_new(req, "backend", json_string("cuda"));
    CHECK(prep(req, &pr, msg) == DT_EUNAVAIL && strcmp(msg, "cuda backend unavailable: no driver") == 0);
    err.msg[0] = '\0';
    CHECK(dt_req_parse_prepare(req, cuda_yes, NULL, &pr, &err) == DT_OK && pr.cuda == 1);
    CHECK(dt_req_parse_prepare(req, NULL, NULL, &pr, &err) == DT_EUNAVAIL);
    json_object_set_new(req, "backend", json_string("metal"));
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strcmp(msg, "unknown backend 'metal'") == 0);
    json_object_set_new(req, "backend", json_string("cpu"));
    json_array_remove(json_object_get(req, "buffers"), 2);
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strstr(msg, "op gemm has 3 buffers, request lists 2"));
    json_object_set_new(req, "buffers", json_object());
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strcmp(msg, "missing or non-array 'buffers'") == 0);
    json_object_set_new(req, "op", json_string("gemm\xc3\xa9"));
    CHECK(prep(req, &pr, msg) == DT_EINVAL && strncmp(msg, "unknown op", 10) == 0);
    json_decref(req);

    /* run and device */
    req = json_pack("{s:s,s:I}", "cmd", "run", "reps", (json_int_t)DT_REQ_MAX_REPS + 1);
    int64_t reps, cap;
    int probe, hold;
    CHECK(dt_req_parse_reps(req, &reps, &err) == DT_EINVAL && strstr(err.msg, "reps=2147483649 out of [1, 2147483648]"));
    json_object_set_new(req, "reps", json_integer(0));
    CHECK(dt_req_parse_reps(req, &reps, &err) == DT_EINVAL);
    json_object_set_new(req, "reps", json_string("8"));
    CHECK(dt_req_parse_reps(req, &reps, &err) == DT_EINVAL && strcmp(err.msg, "'reps' is not an integer") == 0);
    json_object_del(req, "reps");
    CHECK(dt_req_parse_reps(req, &reps, &err) == DT_EINVAL && strcmp(err.msg, "missing 'reps'") == 0);
    json_object_set_new(req, "reps", json_integer(8));
    CHECK(dt_req_parse_reps(req, &reps, &err) == DT_OK && reps == 8);
    int64_t prime = -5;
    CHECK(dt_req_parse_prime(req, &prime, &err) == DT_OK && prime == 0); /* absent */
    json_object_set_new(req, "prime", json_integer(1));
    CHECK(dt_req_parse_prime(req, &prime, &err) == DT_OK && prime == 1);
    json_object_set_new(req, "prime", json_integer(17));
    CHECK(dt_req_parse_prime(req, &prime, &err) == DT_EINVAL && strstr(err.msg, "prime=17 out of [0, 16]"));
    json_object_set_new(req, "prime", json_integer(-1));
    CHECK(dt_req_parse_prime(req, &prime, &err) == DT_EINVAL);
    json_object_del(req, "prime");
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_EINVAL && strstr(err.msg, "'scope' must be"));
    json_object_set_new(req, "scope", json_string("probe"));
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_OK && probe == 1 && cap == 0);
    json_object_set_new(req, "probe_kind", json_string("serialized"));
    json_object_set_new(req, "capacity", json_integer(64));
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_OK && probe == 2 && cap == 64);
    json_object_set_new(req, "capacity", json_integer((json_int_t)1 << 40));
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_EINVAL && strstr(err.msg, "capacity=1099511627776 out of [0, 2^24]"));
    json_object_set_new(req, "capacity", json_integer(1));
    json_object_set_new(req, "probe_kind", json_string("fast"));
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_EINVAL && strstr(err.msg, "'probe_kind' must be"));
    /* "hold": absent = false, true/false, anything else refused */
    json_object_set_new(req, "probe_kind", json_string("concurrent"));
    hold = -1;
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_OK && hold == 0);
    json_object_set_new(req, "hold", json_true());
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_OK && hold == 1 && probe == 1);
    json_object_set_new(req, "hold", json_false());
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_OK && hold == 0);
    json_object_set_new(req, "hold", json_integer(1));
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_EINVAL && strstr(err.msg, "'hold' must be true or false"));
    json_object_set_new(req, "hold", json_string("yes"));
    CHECK(dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_EINVAL);
    json_decref(req);

    /* "decomp" (the E2E decomposition's sample): absent/false = 0; true only for an unheld
     * probe of one call; a non-boolean refused */
    int decomp = -1;
    req = json_pack("{s:s}", "cmd", "device");
    CHECK(dt_req_parse_decomp(req, 1, 0, 1, &decomp, &err) == DT_OK && decomp == 0);
    json_object_set_new(req, "decomp", json_false());
    CHECK(dt_req_parse_decomp(req, 1, 0, 1, &decomp, &err) == DT_OK && decomp == 0);
    json_object_set_new(req, "decomp", json_true());
    CHECK(dt_req_parse_decomp(req, 1, 0, 1, &decomp, &err) == DT_OK && decomp == 1);
    CHECK(dt_req_parse_decomp(req, 2, 0, 1, &decomp, &err) == DT_OK && decomp == 1);
    CHECK(dt_req_parse_decomp(req, 0, 0, 1, &decomp, &err) == DT_EINVAL &&
          strstr(err.msg, "'decomp' needs an unheld probe of one call"));
    CHECK(dt_req_parse_decomp(req, 1, 1, 1, &decomp, &err) == DT_EINVAL && decomp == 0);
    CHECK(dt_req_parse_decomp(req, 1, 0, 2, &decomp, &err) == DT_EINVAL && decomp == 0);
    json_object_set_new(req, "decomp", json_integer(1));
    CHECK(dt_req_parse_decomp(req, 1, 0, 1, &decomp, &err) == DT_EINVAL &&
          strstr(err.msg, "'decomp' must be true or false"));
    json_decref(req);

    return dt_check_summary("test_native_request");
}
