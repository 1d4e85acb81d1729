/* fuzz_protocol.c — libFuzzer harness for the native worker's request handling
 * (workers/native/dt_native_request.h), without a process: the input is split into
 * lines as the worker reads stdin, and every line goes through dt_req_parse_line() and
 * then the validator of its command (prepare, run, device). A prepare request that
 * validates must describe buffers that lie inside arena_bytes, with guard bands, so
 * the worker could map it without touching memory outside the arena.
 * Build: fuzz/run.sh (see docs/fuzzing.md). */
#include "../workers/native/dt_native_request.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cuda is "available" or not depending on a bit of the input. */
static dt_status cuda_check(void *ctx, dt_err *err) {
    if (*(const int *)ctx) return DT_OK;
    return dt_fail(err, DT_EUNAVAIL, "cuda backend unavailable: fuzzing");
}

static void one_line(const char *line, size_t len, int cuda_ok) {
    while (len > 0 && (line[len - 1] == '\r')) len--;
    if (len == 0) return;
    json_t *req = NULL;
    const char *cmd = NULL;
    dt_err err = {{0}};
    if (dt_req_parse_line(line, len, &req, &cmd, &err) != DT_OK) {
        if (req || !err.msg[0]) abort();
        return;
    }
    if (!json_is_object(req) || !cmd) abort();
    if (strcmp(cmd, "prepare") == 0) {
        dt_prepare_req pr;
        if (dt_req_parse_prepare(req, cuda_check, &cuda_ok, &pr, &err) == DT_OK) {
            const dt_case_layout *L = &pr.L;
            if (pr.arena_bytes < L->total_bytes) abort();
            if (strncmp(pr.shm_name, "/dualtime-", 10) != 0 || strchr(pr.shm_name + 1, '/'))
                abort();
            if (pr.cuda && !cuda_ok) abort();
            for (int i = 0; i < L->nbuffers; i++) {
                const dt_buffer_layout *B = &L->buf[i];
                int64_t esz = B->dtype == DT_I64 ? 8 : 4;
                int64_t last = B->data_offset +
                               ((B->rows - 1) * B->row_stride + (B->cols - 1)) * esz + esz;
                if (B->region_offset < DT_GUARD_BYTES ||
                    B->region_offset + B->region_bytes + DT_GUARD_BYTES > pr.arena_bytes ||
                    B->data_offset < B->region_offset ||
                    last > B->region_offset + B->region_bytes)
                    abort();
            }
        } else if (!err.msg[0]) {
            abort();
        }
    } else if (strcmp(cmd, "run") == 0) {
        int64_t reps;
        if (dt_req_parse_reps(req, &reps, &err) == DT_OK) {
            if (reps < 1 || reps > DT_REQ_MAX_REPS) abort();
        } else if (!err.msg[0]) {
            abort();
        }
    } else if (strcmp(cmd, "device") == 0) {
        int probe, hold;
        int64_t reps, cap;
        if (dt_req_parse_device(req, &probe, &reps, &cap, &hold, &err) == DT_OK) {
            if (probe < 0 || probe > 2 || reps < 1 || cap < 0 || cap > DT_REQ_MAX_CAPACITY ||
                (hold != 0 && hold != 1))
                abort();
        } else if (!err.msg[0]) {
            abort();
        }
    }
    json_decref(req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    int cuda_ok = data[0] & 1;
    /* a copy so that reads past a line's end are caught */
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t len = nl ? (size_t)(nl - p) : n;
        char *line = malloc(len ? len : 1);
        if (!line) abort();
        memcpy(line, p, len);
        one_line(line, len, cuda_ok);
        free(line);
        if (!nl) break;
        p = nl + 1;
        n -= len + 1;
    }
    return 0;
}
