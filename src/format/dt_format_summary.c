/* dt_format_summary.c — the end-of-run summary on the terminal (contract in
 * dt_format_summary.h). */
#define _GNU_SOURCE
#include "format/dt_format_summary.h"

#include "format/dt_format_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many counted findings the assessment line shows. */
#define SUMMARY_FINDINGS 2

/* One extreme ratio: the case, the scope and the ratio. */
typedef struct extreme {
    const dt_case *c;
    dt_scope s;
    const dt_rec_ratio *ratio;
} extreme;

static void assessment_line(FILE *o, const dt_run_derived *d) {
    fprintf(o, "assessment: %s", dt_level_name(d->level));
    const dt_strv *sum = d->summary.n ? &d->summary : &d->reasons;
    size_t shown = sum->n < SUMMARY_FINDINGS ? sum->n : SUMMARY_FINDINGS;
    for (size_t i = 0; i < shown; i++) fprintf(o, "%s%s", i ? "; " : " — ", sum->v[i]);
    if (sum->n > shown) fprintf(o, "; and %zu more kinds (results.md)", sum->n - shown);
    fputc('\n', o);
}

static void counts_line(FILE *o, const dt_record *r, size_t k) {
    const dt_verdict_counts *vc = &r->derived.vs[k];
    static const dt_rec_verdict order[] = {DT_REC_VERDICT_FASTER, DT_REC_VERDICT_SLOWER,
                                           DT_REC_VERDICT_INDISTINGUISHABLE,
                                           DT_REC_VERDICT_INSUFFICIENT, DT_REC_VERDICT_INVALID};
    fprintf(o, "%s vs %s (e2e_batch verdicts):", r->impls[k].id, r->impls[0].id);
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        fprintf(o, "%s %zu %s", i ? "," : "", vc->n[order[i]], dt_rec_verdict_name(order[i]));
    fputc('\n', o);
}

/* The largest (want_max) or smallest ratio of candidate k over the shown cases. */
static extreme find_extreme(const dt_record *r, size_t k, int want_max) {
    extreme best = {NULL, DT_SCOPE_E2E_BATCH, NULL};
    for (size_t i = 0; i < r->n_cases; i++) {
        const dt_case *c = &r->cases[i];
        if (!c->derived.present || !dt_format_case_shown(r, c)) continue;
        for (int s = 0; s < DT_SCOPE_COUNT; s++) {
            const dt_scope_derived *sd = &c->derived.scopes[s];
            if (dt_scope_is_probe((dt_scope)s) || !sd->present || !sd->vs) continue;
            const dt_scope_vs *v = &sd->vs[k];
            if (!v->present || !v->has_ratio || !isfinite(v->ratio.median)) continue;
            double x = v->ratio.median;
            if (!best.ratio || (want_max ? x > best.ratio->median : x < best.ratio->median))
                best = (extreme){c, (dt_scope)s, &v->ratio};
        }
    }
    return best;
}

static void extreme_line(FILE *o, const char *label, extreme e) {
    if (!e.ratio) {
        fprintf(o, "%s no ratio (no valid case)\n", label);
        return;
    }
    dt_format_buf a, lo, hi;
    fprintf(o, "%s %s %s %s [%s, %s]\n", label, e.c->id, dt_scope_name(e.s),
            dt_format_ratio(a, e.ratio->median), dt_format_ratio(lo, e.ratio->ci_low),
            dt_format_ratio(hi, e.ratio->ci_high));
}

dt_status dt_format_summary(const dt_record *r, const char *results_dir, char **text,
                            size_t *len, dt_err *err) {
    *text = NULL;
    *len = 0;
    if (!r || !r->derived.present || !results_dir)
        return dt_fail(err, DT_EINVAL, "summary: the record is not derived");
    FILE *o = open_memstream(text, len);
    if (!o) return dt_fail(err, DT_EIO, "summary: cannot open a memory stream");
    fprintf(o, "results:    %s  (results.md, results.json)\n", results_dir);
    assessment_line(o, &r->derived);
    fprintf(o, "cases:      %zu (%zu valid)\n", r->derived.n_cases, r->derived.n_valid);
    for (size_t k = 1; k < r->n_impls; k++) {
        counts_line(o, r, k);
        extreme_line(o, "slowest:   ", find_extreme(r, k, 1));
        extreme_line(o, "fastest:   ", find_extreme(r, k, 0));
    }
    if (fclose(o) != 0) {
        free(*text);
        *text = NULL;
        *len = 0;
        return dt_fail(err, DT_EIO, "summary: the memory stream failed");
    }
    return DT_OK;
}
