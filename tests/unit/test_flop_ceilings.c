/* test_flop_ceilings.c — the FLOP ceilings of a run (issue 18 item 6) without a worker:
 * the protocol module's check of a `flop_ceilings` answer
 * (dt_protocol_flop_ceilings_parse: each of fp32_tflops, bf16_tflops, fp16_tflops absent
 * or a positive finite number, at least one, method a string) and the merge of several
 * workers' answers (dt_flop_ceilings_merge / _note: the larger value per dtype, the
 * method naming who said what). The report side (% of peak in the roofline table, the
 * codec) is tested in test_report.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"
#include "orchestrate/dt_flop_ceilings.h"
#include "session/dt_protocol.h"

static dt_status parse(const char *text, dt_flop_ceilings_rec *f, dt_err *err) {
    return dt_protocol_flop_ceilings_parse(text, strlen(text), f, err);
}

static void parse_cases(void) {
    dt_flop_ceilings_rec f;
    dt_err err = {{0}};
    CHECK(parse("{\"fp32_tflops\":61.5,\"method\":\"ffma\"}", &f, &err) == DT_OK &&
              f.fp32_tflops == 61.5 && f.bf16_tflops == 0 && f.fp16_tflops == 0 && f.method &&
              strcmp(f.method, "ffma") == 0,
          "fp32 only: %s", err.msg);
    free(f.method);
    CHECK(parse("{\"bf16_tflops\":780,\"fp16_tflops\":700.25}", &f, &err) == DT_OK &&
              f.fp32_tflops == 0 && f.bf16_tflops == 780 && f.fp16_tflops == 700.25 && !f.method,
          "bf16+fp16: %s", err.msg);
    free(f.method);
    static const struct { const char *text, *needle; } bad[] = {
        {"{}", "none of"},
        {"{\"method\":\"m\"}", "none of"},
        {"{\"fp32_tflops\":0}", "'fp32_tflops'"},
        {"{\"bf16_tflops\":-3}", "'bf16_tflops'"},
        {"{\"fp16_tflops\":\"700\"}", "'fp16_tflops'"},
        {"{\"fp32_tflops\":1,\"fp16_tflops\":null}", "'fp16_tflops'"},
        {"{\"fp32_tflops\":1,\"method\":7}", "'method'"},
        {"[1]", "not an object"},
        {"nope", "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        dt_status st = parse(bad[i].text, &f, &err);
        CHECK(st == DT_EINVAL && strstr(err.msg, bad[i].needle) &&
                  strncmp(err.msg, "flop_ceilings: ", 15) == 0,
              "%s: status %d message '%s' (want '%s')", bad[i].text, (int)st, err.msg,
              bad[i].needle);
        free(f.method);
    }
}

static void merge_cases(void) {
    dt_flop_ceilings_rec into = {0}, a = {0}, b = {0};
    a.fp32_tflops = 60;
    a.method = "fp32: ffma";
    b.bf16_tflops = 780;
    b.fp16_tflops = 700;
    b.fp32_tflops = 50; /* lower than native's: the larger stays */
    b.method = "bf16/fp16: matmul";
    dt_flop_ceilings_merge(&into, &a, "native");
    dt_flop_ceilings_merge(&into, &b, "torch");
    CHECK(into.fp32_tflops == 60 && into.bf16_tflops == 780 && into.fp16_tflops == 700,
          "merge: %g %g %g", into.fp32_tflops, into.bf16_tflops, into.fp16_tflops);
    CHECK(into.method && strcmp(into.method, "native: fp32: ffma; torch: bf16/fp16: matmul") == 0,
          "merge method: %s", into.method ? into.method : "(null)");
    /* a higher answer replaces; no method given is said so */
    dt_flop_ceilings_rec c = {0};
    c.bf16_tflops = 800;
    dt_flop_ceilings_merge(&into, &c, "mine");
    CHECK(into.bf16_tflops == 800 && into.fp32_tflops == 60 &&
              strstr(into.method, "; mine: (no method given)"),
          "merge 3: %g %s", into.bf16_tflops, into.method);
    free(into.method);
    /* refusals: noted in order */
    dt_flop_ceilings_rec none = {0};
    dt_flop_ceilings_note(&none, "native", "flop_ceilings: not offered by the cpu backend");
    dt_flop_ceilings_note(&none, "torch", "flop_ceilings: offered for the cuda backend only");
    CHECK(none.method && strcmp(none.method, "native: flop_ceilings: not offered by the cpu "
                                             "backend; torch: flop_ceilings: offered for the "
                                             "cuda backend only") == 0 &&
              none.fp32_tflops == 0,
          "note: %s", none.method ? none.method : "(null)");
    free(none.method);
}

int main(void) {
    parse_cases();
    merge_cases();
    return dt_check_summary("test_flop_ceilings");
}
