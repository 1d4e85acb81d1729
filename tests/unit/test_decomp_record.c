/* test_decomp_record.c — the E2E decomposition from a worker's answer to results.md:
 * dt_protocol_decomp_parse on recorded answer lines (a native one-launch call, a torch
 * two-launch call whose first kernel starts before the second launch returns, refusals),
 * the samples in a typed record through the codec (round trip, a malformed sample
 * refused with its path) and the results.md table (values, the flagged sample, the
 * unavailable line, and no section at all for files without decompositions). */
#include "dt_results_fixture.h"

#include "format/dt_format_md.h"
#include "session/dt_protocol.h"
#include "stats/dt_decomp.h"
#include "stats/dt_derive.h"

#include <stdlib.h>

/* A native-like answer: one cuLaunchKernel, 9.8 us call, u = 180 ns. */
static const char *k_native =
    "{\"ok\":true,\"result\":{\"abi_version\":2,\"scope\":\"probe\",\"stream_ns\":9000.0,"
    "\"clock_offset_ns\":90.0,\"clock_uncertainty_ns\":180.0,\"kernels\":[{\"name\":\"add_f32\","
    "\"start_ns\":1000000005200,\"end_ns\":1000000006100,\"grid\":[5,1,1],\"block\":[256,1,1],"
    "\"correlation_id\":77,\"stream_id\":13}],\"decomp\":{\"call_start_ns\":1000000000000,"
    "\"sync_return_ns\":1000000009800,\"host_call_ns\":9800,\"clock_source\":1,\"launches\":"
    "[{\"enter_ns\":1000000001200,\"exit_ns\":1000000003900,\"api\":\"cuLaunchKernel\","
    "\"correlation_id\":77,\"runtime\":false}]}}}";

/* A torch-like answer: two runtime launches, kernel 1 running while launch 2 is in the
 * API (queue -1.9 us), and a measured call that does not match the timestamps. */
static const char *k_torch_bad =
    "{\"ok\":true,\"result\":{\"stream_ns\":14000.0,\"clock_offset_ns\":0.0,"
    "\"clock_uncertainty_ns\":250.0,\"kernels\":[{\"name\":\"k1\",\"start_ns\":2000000007000,"
    "\"end_ns\":2000000009500},{\"name\":\"k2\",\"start_ns\":2000000009900,\"end_ns\":"
    "2000000012000}],\"decomp\":{\"call_start_ns\":2000000000000,\"sync_return_ns\":"
    "2000000015500,\"host_call_ns\":25500,\"clock_source\":1,\"launches\":[{\"enter_ns\":"
    "2000000002500,\"exit_ns\":2000000005600,\"api\":\"cudaLaunchKernel\"},{\"enter_ns\":"
    "2000000006400,\"exit_ns\":2000000008900,\"api\":\"cudaLaunchKernel\"}]}}}";

static dt_decomp_raw parse(const char *text) {
    dt_decomp_raw raw;
    dt_err err = {{0}};
    dt_status st = dt_protocol_decomp_parse(text, strlen(text), &raw, &err);
    CHECK_MSG(st == DT_OK, err.msg);
    return raw;
}

static void test_parse(void) {
    dt_decomp_raw n = parse(k_native);
    CHECK(n.call_start_ns == 1000000000000LL && n.sync_return_ns == 1000000009800LL);
    CHECK(n.host_call_ns == 9800 && n.clock_uncertainty_ns == 180 && n.clock_offset_ns == 90);
    CHECK(n.clock_source == 1 && n.n_launches == 1 && n.n_kernels == 1);
    CHECK(n.launches[0].a_ns == 1000000001200LL && n.kernels[0].b_ns == 1000000006100LL);
    dt_decomp_segments s;
    CHECK(dt_decomp_compute(&n, &s) == 1 && s.queue_ns == 1300);
    dt_decomp_raw_free(&n);
    /* refusals: no decomp object, no uncertainty, a timestamp that is not an integer */
    static const char *bad[] = {
        "{\"ok\":true,\"result\":{\"clock_uncertainty_ns\":1.0,\"kernels\":[]}}",
        "{\"ok\":true,\"result\":{\"kernels\":[],\"decomp\":{\"call_start_ns\":5,"
        "\"sync_return_ns\":9,\"launches\":[]}}}",
        "{\"ok\":true,\"result\":{\"clock_uncertainty_ns\":1.0,\"kernels\":[{\"start_ns\":6.5,"
        "\"end_ns\":7}],\"decomp\":{\"call_start_ns\":5,\"sync_return_ns\":9,\"launches\":[]}}}",
        "{\"ok\":true,\"result\":{\"clock_uncertainty_ns\":1.0,\"kernels\":[],\"decomp\":"
        "{\"call_start_ns\":9,\"sync_return_ns\":5,\"launches\":[]}}}",
        "{\"ok\":false,\"error\":\"device: decomp unavailable: no helper\"}",
    };
    static const char *want[] = {"call_start_ns <= sync_return_ns", "clock_uncertainty_ns",
                                 "integer timestamps", "call_start_ns <= sync_return_ns",
                                 "not an ok:true"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dt_decomp_raw r;
        dt_err err = {{0}};
        CHECK_MSG(dt_protocol_decomp_parse(bad[i], strlen(bad[i]), &r, &err) == DT_EWORKER &&
                      strstr(err.msg, want[i]) != NULL,
                  err.msg);
    }
}

static const fx_run CUDA_RUN = {.backend = "cuda", .samples = 5, .rounds = 1, .complete = 1,
                                .device = 1, .probe_factor = 1.05, .seed = 3};

static char *md_of(dt_record *r) {
    dt_err err = {{0}};
    CHECK_MSG(dt_derive_run(r, &err) == DT_OK, err.msg);
    char *t = NULL;
    size_t n = 0;
    CHECK_MSG(dt_format_md(r, &t, &n, &err) == DT_OK, err.msg);
    return t ? t : dt_xstrdup("");
}

static dt_record *fixture(void) {
    json_t *j = fx_results(&CUDA_RUN);
    fx_add_case(j, &CUDA_RUN, "add_17x257", 6.0, 10.0, 0.02, 1);
    dt_record *r = fx_record(j);
    json_decref(j);
    return r;
}

/* impl index of id in r */
static dt_case_impl *impl_of(dt_record *r, const char *id) {
    for (size_t i = 0; i < r->n_impls; i++)
        if (strcmp(r->impls[i].id, id) == 0) return &r->cases[0].impl[i];
    return NULL;
}

static void test_record_and_md(void) {
    dt_record *r = fixture();
    CHECK(r != NULL);
    if (!r) return;
    char *md = md_of(r);
    CHECK(strstr(md, "E2E decomposition") == NULL); /* files without it: no section */
    free(md);
    dt_decomp_raw n = parse(k_native), t = parse(k_torch_bad);
    n.position = 40;
    t.position = 41;
    dt_decomp_set_push(&impl_of(r, "native")->decomp, &n);
    dt_decomp_set_push(&impl_of(r, "torch")->decomp, &t);
    md = md_of(r);
    CHECK(strstr(md, "## E2E decomposition (single call, µs)\n") != NULL);
    /* the E2E single p50 column is the main table's single p50 (18.1, 30.2 here) */
    CHECK(strstr(md, "| add_17x257 | native | 4.84 | 14.3 | 5.93 | 18.1 |") != NULL);
    CHECK_MSG(strstr(md, "| add_17x257 | native | 1.20 | 2.70 | 1.30 | 0.900 | 3.70 | 9.80 | "
                         "9.80 | ±0.180 | 18.1 | 1 / 1 | adds up |\n") != NULL, md);
    CHECK_MSG(strstr(md, "| add_17x257 | torch | 2.50 | 6.40 (in API 5.60) | -1.90 | 5.00 | 3.50 | 15.5 | "
                         "25.5 | ±0.250 | 30.2 | 2 / 2 | **flagged**: segments add up to 15500 ns, "
                         "the measured call is 25500 ns |\n") != NULL, md);
    /* round trip through results.json */
    char *text = NULL;
    size_t len = 0;
    dt_err err = {{0}};
    CHECK_MSG(dt_record_encode(r, &text, &len, &err) == DT_OK, err.msg);
    CHECK(text && strstr(text, "\"decomposition\"") && strstr(text, "\"call_start_ns\""));
    dt_record *back = NULL;
    CHECK_MSG(text && dt_record_decode(text, len, "round trip", &back, &err) == DT_OK, err.msg);
    if (back) {
        const dt_decomp_set *bs = &impl_of(back, "torch")->decomp;
        CHECK(bs->n == 1 && bs->v[0].n_launches == 2 && bs->v[0].n_kernels == 2 &&
              bs->v[0].launches[1].b_ns == 2000000008900LL && bs->v[0].host_call_ns == 25500 &&
              bs->v[0].clock_uncertainty_ns == 250 && bs->v[0].position == 41 &&
              bs->v[0].clock_source == 1);
        char *md2 = md_of(back);
        CHECK(strcmp(md, md2) == 0);
        free(md2);
        dt_record_free(back);
    }
    free(text);
    free(md);
    dt_record_free(r);
}

/* A decomposition sample whose launch pair has three numbers: refused, path named. */
static void test_decode_refusal(void) {
    json_t *j = fx_results(&CUDA_RUN);
    json_t *c = fx_add_case(j, &CUDA_RUN, "add_17x257", 6.0, 10.0, 0.02, 1);
    json_t *im = json_object_get(json_object_get(c, "impl"), "native");
    json_object_set_new(im, "decomposition",
                        json_pack("{s:[{s:i,s:I,s:I,s:f,s:f,s:[[i,i,i]],s:[]}]}", "samples",
                                  "round", 0, "call_start_ns", (json_int_t)100,
                                  "sync_return_ns", (json_int_t)200, "host_call_ns", 100.0,
                                  "clock_uncertainty_ns", 5.0, "launches", 1, 2, 3, "kernels"));
    char *text = json_dumps(j, 0);
    dt_record *r = NULL;
    dt_err err = {{0}};
    CHECK_MSG(dt_record_decode(text, strlen(text), "fixture", &r, &err) == DT_EINVAL &&
                  strstr(err.msg, "decomposition") && strstr(err.msg, "pair of integers"),
              err.msg);
    dt_record_free(r);
    free(text);
    /* and one reason only: the unavailable line */
    json_object_set_new(im, "decomposition", json_pack("{s:[],s:s}", "samples", "unavailable",
                                                       "the cpu backend has no CUPTI timestamps"));
    text = json_dumps(j, 0);
    r = NULL;
    CHECK_MSG(dt_record_decode(text, strlen(text), "fixture", &r, &err) == DT_OK, err.msg);
    if (r) {
        char *md = md_of(fx_as_held(r));
        CHECK_MSG(strstr(md, "## E2E decomposition (single call, µs)\n\nUnavailable: the cpu "
                             "backend has no CUPTI timestamps.\n") != NULL, md);
        free(md);
        dt_record_free(r);
    }
    free(text);
    json_decref(j);
}

int main(void) {
    test_parse();
    test_record_and_md();
    test_decode_refusal();
    return fx_summary();
}
