/* dt_format_decomp.c — the E2E decomposition section of results.md (dt_format_decomp.h). */
#include "format/dt_format_decomp.h"

#include <math.h>
#include <string.h>

#include "format/dt_format_util.h"
#include "stats/dt_decomp.h"

/* What r holds: 0 nothing (older files: no section), 1 only reasons, 2 some sample;
 * *reason the first reason recorded. */
static int run_holds(const dt_record *r, const char **reason) {
    int got = 0;
    *reason = NULL;
    for (size_t n = 0; n < r->n_cases; n++)
        for (size_t i = 0; i < r->n_impls; i++) {
            const dt_case_impl *ci = &r->cases[n].impl[i];
            if (!ci->present) continue;
            if (ci->decomp.n > 0) got = 2;
            if (ci->decomp.unavailable) {
                if (!*reason) *reason = ci->decomp.unavailable;
                if (!got) got = 1;
            }
        }
    return got;
}

static void us_cell(FILE *o, double ns) {
    dt_format_buf b;
    fprintf(o, " %s |", isfinite(ns) ? dt_format_num(b, ns / 1e3) : "—");
}

/* The uninstrumented single-call E2E p50 of impl i in c, in ns (NAN: not derived). */
static double e2e_single_ns(const dt_case *c, size_t i) {
    const dt_scope_derived *sd = &c->derived.scopes[DT_SCOPE_E2E_SINGLE];
    if (!c->derived.present || !sd->present || !sd->impl || sd->impl[i].summary.n == 0)
        return NAN;
    return sd->impl[i].summary.p50 * 1e3;
}

/* One table row: case, implementation, the segments, sum, measured, ±, E2E single p50,
 * counts, check. */
static void row(FILE *o, const dt_case *c, size_t i, const char *impl,
                const dt_decomp_set *set) {
    fputs("| ", o);
    dt_format_md_text(o, c->id);
    fputs(" | ", o);
    dt_format_md_text(o, impl);
    fputs(" |", o);
    const dt_decomp_raw *raw = dt_decomp_set_median(set);
    if (!raw) {
        fputs(" — | — | — | — | — | — | — | — |", o);
        us_cell(o, e2e_single_ns(c, i));
        fputs(" — | unavailable: ", o);
        dt_format_md_text(o, set->unavailable ? set->unavailable : "no sample");
        fputs(" |\n", o);
        return;
    }
    dt_decomp_segments s;
    dt_decomp_compute(raw, &s);
    us_cell(o, s.dispatch_ns);
    if (s.n_launches > 1) { /* several launches: the time inside the APIs too */
        dt_format_buf b1, b2;
        fprintf(o, " %s (in API %s) |", dt_format_num(b1, s.launch_ns / 1e3),
                dt_format_num(b2, s.launch_api_sum_ns / 1e3));
    } else {
        us_cell(o, s.launch_ns);
    }
    us_cell(o, s.queue_ns);
    us_cell(o, s.kernel_ns);
    us_cell(o, s.completion_ns);
    us_cell(o, s.sum_ns);
    us_cell(o, s.measured_ns);
    dt_format_buf b;
    fprintf(o, " ±%s |", isfinite(s.uncertainty_ns) ? dt_format_num(b, s.uncertainty_ns / 1e3)
                                                     : "—");
    us_cell(o, e2e_single_ns(c, i));
    fprintf(o, " %zu / %zu |", s.n_launches, s.n_kernels);
    if (s.consistent) {
        fputs(s.overlap_ns > 0 ? " adds up (overlap) |\n" : " adds up |\n", o);
    } else {
        fputs(" **flagged**: ", o);
        dt_format_md_text(o, s.reason);
        fputs(" |\n", o);
    }
}

void dt_format_decomp_md(FILE *o, const dt_record *r) {
    const char *why = NULL;
    int holds = run_holds(r, &why);
    if (holds == 0) return;
    fputs("## E2E decomposition (single call, µs)\n\n", o);
    if (holds == 1) {
        fputs("Unavailable: ", o);
        dt_format_md_text(o, why);
        fputs(".\n\n", o);
        return;
    }
    fputs("Three *unheld* single-call probe samples per implementation and round (the "
          "median by measured call is shown), on one clock: the worker reads the host clock before "
          "the call and after its synchronization returns; CUPTI's launch callbacks stamp "
          "every launch API's entry and exit and its activity records every kernel, on the "
          "host clock through the calibration. **dispatch** = call start to the first launch "
          "API entry; **launch** = first entry to the last exit (between launches included; with "
          "several launches the time inside the APIs alone follows as *in API*); "
          "**queue** = last launch exit to the first kernel start (negative: the GPU started "
          "before the host's last launch returned, *overlap*); **kernel** = first kernel start "
          "to last kernel end; **completion** = last kernel end to the synchronization's "
          "return. ± is the calibration's uncertainty between the CUPTI and host clocks; it "
          "applies to dispatch and completion (the segments that cross clocks). The check "
          "compares the sum with the measured call (within 2× ± plus 0.1 µs) and the order "
          "of the timestamps (docs/device-timing.md, \"E2E decomposition\"). The probe is "
          "attached (CUPTI perturbs launches), so these are the probe's segments, not an "
          "uninstrumented call's: *E2E single p50* is the uninstrumented single call of the "
          "main table, for comparison (the difference is the probe's cost and the "
          "sample's own noise).\n\n"
          "| Case | Implementation | Dispatch | Launch | Queue | Kernel | Completion | Sum | "
          "Measured | Calibration ± | E2E single p50 | Launches / kernels | Check |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n", o);
    for (size_t n = 0; n < r->n_cases; n++)
        for (size_t k = 0; k < r->n_impls; k++) {
            size_t i = dt_format_impl_at(r, k);
            const dt_case_impl *ci = &r->cases[n].impl[i];
            if (!ci->present || (ci->decomp.n == 0 && !ci->decomp.unavailable)) continue;
            row(o, &r->cases[n], i, r->impls[i].id, &ci->decomp);
        }
    fputs("\n", o);
}
