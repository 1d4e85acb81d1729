/* fuzz_answers.c — libFuzzer harness for the orchestrator's parsers of worker answers
 * (src/session/dt_protocol.h), without a worker: the first byte of the input picks the
 * parser, the rest is the answer text.
 *   byte % 4 == 0  dt_hello_parse            (a hello line)
 *   byte % 4 == 1  dt_protocol_device_parse  control region (reps from the byte's high bits)
 *   byte % 4 == 2  dt_protocol_device_parse  probe region: kernels, records, launch
 *   byte % 4 == 3  dt_protocol_ceilings_parse (the "ceilings" object)
 * A parser must never crash or leak on any text, and what it accepts must keep its
 * contract: a hello has its canonical text; a device sample a positive per-call time
 * and, for a probe, record rows whose name index is one of its names; ceilings present
 * with positive finite required fields and a backend.
 * Build and run: fuzz/run.sh 20 fuzz_answers (see docs/fuzzing.md). */
#include "session/dt_protocol.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_hello(const char *text, size_t len) {
    dt_hello h;
    dt_err err = {{0}};
    if (dt_hello_parse(text, len, &h, &err) == DT_OK) {
        if (!h.text) abort();
    } else if (!err.msg[0]) {
        abort();
    }
    dt_hello_free(&h);
}

static void check_device(const char *text, size_t len, int probe, int64_t reps) {
    dt_sample s;
    dt_err err = {{0}};
    if (dt_protocol_device_parse(text, len, probe, reps, &s, &err) != DT_OK) {
        if (!err.msg[0] || s.has_probe) abort();
        return;
    }
    if (!(s.us > 0) || s.reps != reps || s.has_probe != probe) abort();
    const dt_probe_records *rec = &s.probe.records;
    for (size_t i = 0; probe && i < rec->n_rows; i++)
        if (rec->rows[i].name_index < 0 || (size_t)rec->rows[i].name_index >= rec->names.n)
            abort();
    dt_samples all = {0};
    dt_samples_push(&all, &s); /* the samples now own the probe arrays */
    dt_samples_free(&all);
}

static void check_ceilings(const char *text, size_t len) {
    dt_ceilings_rec c;
    dt_err err = {{0}};
    if (dt_protocol_ceilings_parse(text, len, "cuda", &c, &err) == DT_OK) {
        if (!c.present || !c.backend || !(c.copy_gbps > 0) || !isfinite(c.copy_gbps) ||
            !(c.launch_sync_floor_us > 0) || c.copy_bytes < 0)
            abort();
    } else if (!err.msg[0]) {
        abort();
    }
    free(c.error);
    free(c.method);
    free(c.backend);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    int64_t reps = 1 + (data[0] >> 2); /* 1..64 */
    switch (data[0] & 3) {
    case 0: check_hello(text, len); break;
    case 1: check_device(text, len, 0, reps); break;
    case 2: check_device(text, len, 1, reps); break;
    default: check_ceilings(text, len); break;
    }
    return 0;
}
