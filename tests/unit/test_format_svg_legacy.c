/* test_format_svg_legacy.c — the typed formatters against the old jansson writers, byte
 * for byte: for hand-built runs (dt_results_fixture.h) and the format-1 files of today's
 * main (tests/data/results-v1-*.json), the SVG charts of dt_format_svg (record decoded by
 * dt_record_decode / dt_record_load, derived by dt_derive_run) equal those of dt_plot
 * (JSON derived by dt_derive). (Its compare part was dropped: the compare text and
 * rules changed by design in issue 12 item 5, so the old dt_compare is no oracle for
 * them any more; tests/unit/test_compare.c covers compare.) This test goes with the old
 * code: whoever deletes src/report/dt_plot.c deletes it too.
 * Run: ctest -R test_format_svg_legacy (no GPU). */
#define _GNU_SOURCE
#include "dt_results_fixture.h"

#include "format/dt_format_svg.h"
#include "record/dt_record.h"
#include "record/dt_record_json.h"
#include "report/dt_derive.h"
#include "report/dt_plot.h"
#include "report/dt_results_io.h"
#include "stats/dt_derive.h"

#ifndef DT_SOURCE_DIR
#define DT_SOURCE_DIR "."
#endif

static const fx_run CPU_OK = {.backend = "cpu", .samples = 9, .rounds = 2, .complete = 1,
                              .seed = 21};
static const fx_run CUDA_OK = {.backend = "cuda", .samples = 9, .rounds = 2, .complete = 1,
                               .device = 1, .probe_factor = 1.0, .seed = 22};

/* Equal texts, or a failed check naming what and where they first differ. */
static void check_same(const char *what, const char *old_text, const char *new_text) {
    int same = old_text && new_text && strcmp(old_text, new_text) == 0;
    char msg[600];
    if (!same && old_text && new_text) {
        size_t i = 0;
        while (old_text[i] && old_text[i] == new_text[i])
            i++;
        size_t from = i > 60 ? i - 60 : 0;
        snprintf(msg, sizeof msg, "%s: differ at byte %zu: old ...%.120s | new ...%.120s", what,
                 i, old_text + from, new_text + from);
    } else {
        snprintf(msg, sizeof msg, "%s: %s", what, same ? "same" : "missing text");
    }
    CHECK_MSG(same, msg);
}

static dt_record *decode_json(const json_t *j, const char *what) {
    dt_record *r = fx_record(j);
    CHECK_MSG(r != NULL, what);
    return r;
}

/* ---- SVG ---- */

/* Old and new charts of one results object (JSON; derived here on both paths). */
static void svg_same(const char *what, json_t *j) {
    dt_err err = {{0}};
    dt_record *r = decode_json(j, what);
    CHECK_MSG(dt_derive(j, &err) == DT_OK, err.msg);
    if (!r)
        return;
    CHECK_MSG(dt_derive_run(r, &err) == DT_OK, err.msg);
    char *o = NULL, *n = NULL, buf[160];
    size_t ol = 0, nl = 0;
    CHECK_MSG(dt_plot_ratios_svg(j, &o, &ol, &err) == DT_OK, err.msg);
    CHECK_MSG(dt_format_svg_ratios(r, &n, &nl, &err) == DT_OK, err.msg);
    snprintf(buf, sizeof buf, "%s ratios.svg", what);
    check_same(buf, o, n);
    CHECK(ol == nl);
    free(o);
    free(n);
    o = n = NULL;
    CHECK(dt_plot_has_roofline(j) == dt_format_svg_has_roofline(r));
    CHECK_MSG(dt_plot_roofline_svg(j, &o, &ol, &err) == DT_OK, err.msg);
    CHECK_MSG(dt_format_svg_roofline(r, &n, &nl, &err) == DT_OK, err.msg);
    snprintf(buf, sizeof buf, "%s roofline.svg", what);
    if (o || n)
        check_same(buf, o, n);
    CHECK(ol == nl);
    free(o);
    free(n);
    dt_record_free(r);
}

static void set_ceilings(json_t *j, double copy_gbps) {
    json_object_set_new(json_object_get(j, "environment"), "ceilings",
                        json_pack("{s:f,s:f}", "copy_gbps", copy_gbps, "launch_sync_floor_us",
                                  8.0));
}

static void test_svg_fixtures(void) {
    json_t *j = fx_results(&CPU_OK);
    fx_add_case(j, &CPU_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(j, &CPU_OK, "softmax_1x127", 10.0, 10.0, 0.02, 1);
    fx_add_case(j, &CPU_OK, "sum_127x193", 3.0, 10.0, 0.02, 1);
    fx_add_case(j, &CPU_OK, "gemm_fail", 5.0, 10.0, 0.02, 0);
    fx_add_case(j, &CPU_OK, "odd <&> \"id\"", 20.0, 10.0, 0.02, 1);
    fx_add_case(j, &CPU_OK, "layernorm_64x4096", 1.2, 10.0, 0.02, 1);
    svg_same("cpu fixture", j);
    json_decref(j);

    j = fx_results(&CUDA_OK);
    set_ceilings(j, 3000.0);
    fx_add_case(j, &CUDA_OK, "add_17x257", 6.0, 10.0, 0.02, 1);
    fx_add_case(j, &CUDA_OK, "a<&>b", 9.0, 10.0, 0.02, 1);
    fx_add_case(j, &CUDA_OK, "gemm_fail", 5.0, 10.0, 0.02, 0);
    svg_same("cuda fixture with ceilings", j);
    json_decref(j);

    /* 2 samples, 1 round: hollow markers */
    fx_run o = CPU_OK;
    o.samples = 2;
    o.rounds = 1;
    j = fx_results(&o);
    fx_add_case(j, &o, "add_17x257", 6.0, 10.0, 0.02, 1);
    svg_same("two pairs", j);
    json_decref(j);

    j = fx_results(&CPU_OK);
    svg_same("no cases", j);
    json_decref(j);

    /* other ids; a long UTF-8 id (shortened, full text in a <title>); extreme ratios
     * (clamped axis, decades only); a case valid but with a failed implementation; a
     * tiny copy ceiling (bars above 100%, capped at 1000%) */
    fx_run x = CUDA_OK;
    x.cand_id = "cuda-x";
    x.base_id = "eager";
    x.seed = 33;
    j = fx_results(&x);
    set_ceilings(j, 0.5);
    fx_add_case(j, &x, "µ-kernel with a very long name, longer than forty characters", 6.0,
                10.0, 0.02, 1);
    fx_add_case(j, &x, "huge_ratio", 20000.0, 1.0, 0.02, 1);
    fx_add_case(j, &x, "tiny_ratio", 0.0005, 10.0, 0.02, 1);
    json_t *c = fx_add_case(j, &x, "impl_failed", 6.0, 10.0, 0.02, 1);
    json_object_set_new(json_object_get(json_object_get(c, "impl"), "eager"), "status",
                        json_string("failed"));
    svg_same("other ids, long id, extreme ratios", j);
    json_decref(j);

    /* a candidate far slower than the baseline only (axis from 0.5 up) */
    j = fx_results(&CPU_OK);
    fx_add_case(j, &CPU_OK, "slow_only", 30.0, 10.0, 0.02, 1);
    svg_same("slower only", j);
    json_decref(j);
}

static void test_svg_files(void) {
    static const char *const files[] = {"results-v1-cpu.json", "results-v1-device.json"};
    for (size_t f = 0; f < 2; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/data/%s", DT_SOURCE_DIR, files[f]);
        json_t *j = NULL;
        dt_err err = {{0}};
        CHECK_MSG(dt_results_load(path, &j, &err) == DT_OK, err.msg);
        if (!j)
            continue;
        svg_same(files[f], j);
        /* with a ceiling on the device run too */
        set_ceilings(j, 900.0);
        svg_same(files[f], j);
        json_decref(j);
    }
}

int main(void) {
    test_svg_fixtures();
    test_svg_files();
    return fx_summary();
}
