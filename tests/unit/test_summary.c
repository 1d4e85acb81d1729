/* test_summary.c — the end-of-run summary (format/dt_format_summary.h) on the stored v1
 * runs (tests/data/results-v1-*.json, loaded and derived): the results path, the
 * assessment level and first finding from r->derived, the verdict counts of each
 * candidate from r->derived.vs, and the slowest and fastest ratio found here by a scan
 * of the record independent of the formatter's. Run: ctest -R test_summary. */
#define _GNU_SOURCE
#include "format/dt_format_summary.h"
#include "format/dt_format_util.h"
#include "record/dt_record_json.h"
#include "stats/dt_derive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"

/* The extreme ratio's line as the summary must show it, by a plain scan (non-probe
 * scopes of valid cases whose impls are all ok). */
static void expected_line(const dt_record *r, int want_max, char *out, size_t cap) {
    double best = NAN;
    const dt_case *bc = NULL;
    int bs = 0;
    const dt_rec_ratio *br = NULL;
    for (size_t i = 0; i < r->n_cases; i++) {
        const dt_case *c = &r->cases[i];
        int ok = c->valid;
        for (size_t k = 0; k < r->n_impls; k++) ok = ok && c->impl[k].status == DT_IMPL_OK;
        for (int s = 0; ok && s < DT_SCOPE_COUNT; s++) {
            const dt_scope_derived *sd = &c->derived.scopes[s];
            if (s == DT_SCOPE_PROBE_BATCH || s == DT_SCOPE_PROBE_SINGLE || !sd->present) continue;
            if (!sd->vs[1].has_ratio) continue;
            double x = sd->vs[1].ratio.median;
            if (isnan(best) || (want_max ? x > best : x < best)) {
                best = x;
                bc = c;
                bs = s;
                br = &sd->vs[1].ratio;
            }
        }
    }
    dt_format_buf a, lo, hi;
    snprintf(out, cap, "%s %s %s %s [%s, %s]\n", want_max ? "slowest:   " : "fastest:   ",
             bc ? bc->id : "?", dt_scope_name((dt_scope)bs), dt_format_ratio(a, best),
             br ? dt_format_ratio(lo, br->ci_low) : "", br ? dt_format_ratio(hi, br->ci_high) : "");
}

static void test_file(const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/%s", DT_SOURCE_DIR, name);
    dt_record *r = NULL;
    dt_err e = {{0}};
    char *text = NULL;
    size_t len = 0;
    REQUIRE(dt_record_load(path, &r, &e) == DT_OK, "%s: %s", name, e.msg);
    REQUIRE(dt_derive_run(r, &e) == DT_OK, "%s: %s", name, e.msg);
    REQUIRE(dt_format_summary(r, "/abs/run dir", &text, &len, &e) == DT_OK, "%s", e.msg);
    CHECK(len == strlen(text));
    CHECK(strncmp(text, "results:    /abs/run dir  (results.md, results.json)\n", 53) == 0,
          "%s", text);
    char want[1024];
    snprintf(want, sizeof want, "assessment: %s — %s", dt_level_name(r->derived.level),
             r->derived.summary.n ? r->derived.summary.v[0] : r->derived.reasons.v[0]);
    CHECK(strstr(text, want) != NULL, "%s: wanted '%s' in:\n%s", name, want, text);
    const dt_verdict_counts *vc = &r->derived.vs[1];
    snprintf(want, sizeof want, "%s vs %s (e2e_batch verdicts): %zu faster, %zu slower, %zu "
             "indistinguishable, %zu insufficient, %zu invalid\n", r->impls[1].id,
             r->impls[0].id, vc->n[DT_REC_VERDICT_FASTER], vc->n[DT_REC_VERDICT_SLOWER],
             vc->n[DT_REC_VERDICT_INDISTINGUISHABLE], vc->n[DT_REC_VERDICT_INSUFFICIENT],
             vc->n[DT_REC_VERDICT_INVALID]);
    CHECK(strstr(text, want) != NULL, "%s: wanted '%s' in:\n%s", name, want, text);
    for (int mx = 0; mx < 2; mx++) {
        expected_line(r, mx, want, sizeof want);
        CHECK(strstr(text, want) != NULL, "%s: wanted '%s' in:\n%s", name, want, text);
    }
    /* plain text: no Markdown escapes */
    CHECK(strchr(text, '\\') == NULL && strstr(text, "&gt;") == NULL, "%s", text);
done:
    free(text);
    dt_record_free(r);
}

int main(void) {
    test_file("results-v1-cpu.json");
    test_file("results-v1-device.json");
    /* an underived record is refused */
    dt_record *r = dt_record_new();
    char *text = (char *)1;
    size_t len = 1;
    dt_err e = {{0}};
    CHECK(dt_format_summary(r, "/x", &text, &len, &e) == DT_EINVAL && !text && len == 0);
    dt_record_free(r);
    return dt_check_summary("test_summary");
}
