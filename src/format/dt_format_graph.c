/* dt_format_graph.c — graph replay and cache state sections of results.md (see
 * dt_format_graph.h). */
#include "format/dt_format_graph.h"

#include "format/dt_format_util.h"

#include <math.h>
#include <string.h>

/* p50 of impl i in scope s (NAN when not derived). */
static double p50_of(const dt_case *c, dt_scope s, size_t i) {
    const dt_scope_derived *sd = &c->derived.scopes[s];
    if (!c->derived.present || !sd->present || !sd->impl || sd->impl[i].summary.n == 0) return NAN;
    return sd->impl[i].summary.p50;
}

static int graph_asked(const dt_record *r) {
    if (r->settings.graph == 1) return 1;
    for (size_t n = 0; n < r->n_cases; n++)
        for (size_t i = 0; i < r->n_impls; i++)
            if (r->cases[n].impl[i].samples[DT_SCOPE_GRAPH_BATCH].n > 0) return 1;
    return 0;
}

/* The candidate's graph_batch ratio to the baseline with its interval, or "—". */
static void graph_ratio_cell(FILE *o, const dt_case *c, size_t i) {
    const dt_scope_derived *sd = &c->derived.scopes[DT_SCOPE_GRAPH_BATCH];
    dt_format_buf a, b, d;
    const dt_scope_vs *vs = i > 0 && c->derived.present && sd->present && sd->vs ? &sd->vs[i] : NULL;
    if (!vs || !vs->present || !vs->has_ratio) {
        fputs(" | —", o);
        return;
    }
    if (isfinite(vs->ratio.ci_low) && isfinite(vs->ratio.ci_high))
        fprintf(o, " | %s [%s, %s] %s", dt_format_ratio(a, vs->ratio.median),
                dt_format_ratio(b, vs->ratio.ci_low), dt_format_ratio(d, vs->ratio.ci_high),
                dt_rec_verdict_name(vs->verdict));
    else
        fprintf(o, " | %s [no interval: %zu pairs]", dt_format_ratio(a, vs->ratio.median),
                vs->ratio.pairs);
}

/* The cache state of impl i's device numbers in case c, one cell. */
static void cache_cell(FILE *o, const dt_record *r, const dt_case_impl *ci) {
    if (!r->settings.cache || strcmp(r->settings.cache, "cold") != 0) {
        fputs(" | warm", o);
        return;
    }
    if (!ci->cache.present) {
        fputs(" | cold asked, nothing confirmed", o);
        return;
    }
    if (ci->cache.warm_reason) {
        fputs(" | **not confirmed cold**: ", o);
        dt_format_md_text(o, ci->cache.warm_reason);
        return;
    }
    fprintf(o, " | cold (%lld cop%s)", (long long)ci->cache.copies,
            ci->cache.copies == 1 ? "y" : "ies");
}

static void sec_graph(FILE *o, const dt_record *r) {
    fputs("## Graph replay vs held control vs dispatch (µs per call, batch)\n\n"
          "**Graph replay** (graph batch): the R_dev calls of a batch captured once per case "
          "into a CUDA graph (native: cuStreamBeginCapture … cuGraphInstantiate; PyTorch: "
          "torch.cuda.graph on a side stream), then replayed as one launch in a held "
          "window, per call. It removes the per-launch gaps that even a held window keeps "
          "between back-to-back launches; it is not what an eager caller gets (that is "
          "**dispatch**, the unheld window), and not a kernel duration (that is the probe). "
          "An implementation whose calls cannot be captured has no graph number: the "
          "reason is shown, and the case is not failed for it.\n\n"
          "| Case | Framework | Graph batch µs/call | GPU held batch µs/call | Dispatch batch "
          "µs/call | Graph / held | Graph ratio vs baseline [CI] | Cache |\n"
          "|---|---|---:|---:|---:|---:|---|---|\n", o);
    dt_format_buf a;
    for (size_t n = 0; n < r->n_cases; n++) {
        const dt_case *c = &r->cases[n];
        for (size_t k = 0; k < r->n_impls; k++) {
            size_t i = dt_format_impl_at(r, k);
            const dt_case_impl *ci = &c->impl[i];
            fputs("| ", o);
            dt_format_md_text(o, c->id);
            fputs(" | ", o);
            dt_format_md_text(o, r->impls[i].id);
            if (!dt_format_case_shown(r, c)) {
                fputs(" | FAILED | — | — | — | — | — |\n", o);
                continue;
            }
            double g = p50_of(c, DT_SCOPE_GRAPH_BATCH, i), h = p50_of(c, DT_SCOPE_CONTROL_BATCH, i);
            if (ci->graph_unavailable) {
                fputs(" | unavailable: ", o);
                dt_format_md_text(o, ci->graph_unavailable);
            } else {
                fprintf(o, " | %s", dt_format_num(a, g));
            }
            fprintf(o, " | %s", dt_format_num(a, h));
            fprintf(o, " | %s", dt_format_num(a, p50_of(c, DT_SCOPE_DISPATCH_BATCH, i)));
            fprintf(o, " | %s", dt_format_ratio(a, isfinite(g) && h > 0 ? g / h : NAN));
            graph_ratio_cell(o, c, i);
            cache_cell(o, r, ci);
            fputs(" |\n", o);
        }
    }
    fputs("\n", o);
}

static void sec_cache(FILE *o, const dt_record *r) {
    int cold = strcmp(r->settings.cache, "cold") == 0;
    fputs("## Cache state\n\n", o);
    if (!cold) {
        fputs("**Warm** (`--cache warm`, the default): every scope repeats the call on the "
              "same buffers, so inputs that fit in L2 are read from L2 after the first call. "
              "`--cache cold` measures the device scopes from DRAM.\n\n", o);
        return;
    }
    fputs("**Cold** (`--cache cold`) for the device scopes (held control, dispatch, probe, "
          "graph replay): before every window, single call or batch, the worker writes a "
          "flush buffer of more than 2 × L2 outside the window, and the calls of a batch "
          "rotate over copies of the case's arena (as many as the window has calls, or "
          "fewer whose total exceeds 2 × L2), so no call reads what an earlier one left in "
          "L2. The orchestrator checks what each worker confirms; a window it cannot confirm "
          "cold is named below. The **host E2E scopes stay warm** (no flush between host "
          "calls).\n\n"
          "| Case | Framework | Arena bytes | Copies | Flush bytes | L2 bytes | Device numbers |\n"
          "|---|---|---:|---:|---:|---:|---|\n", o);
    dt_format_buf a, b, d;
    for (size_t n = 0; n < r->n_cases; n++) {
        const dt_case *c = &r->cases[n];
        for (size_t k = 0; k < r->n_impls; k++) {
            size_t i = dt_format_impl_at(r, k);
            const dt_case_impl *ci = &c->impl[i];
            fputs("| ", o);
            dt_format_md_text(o, c->id);
            fputs(" | ", o);
            dt_format_md_text(o, r->impls[i].id);
            if (!ci->cache.present) {
                fputs(" | — | — | — | — | no device window confirmed |\n", o);
                continue;
            }
            fprintf(o, " | %s | %lld | %s | %s", dt_format_bytes(a, (double)ci->cache.copy_bytes),
                    (long long)ci->cache.copies, dt_format_bytes(b, (double)ci->cache.flush_bytes),
                    dt_format_bytes(d, (double)ci->cache.l2_bytes));
            cache_cell(o, r, ci);
            fputs(" |\n", o);
        }
    }
    fputs("\n", o);
}

void dt_format_md_graph_cache(FILE *o, const dt_record *r) {
    if (graph_asked(r)) sec_graph(o, r);
    if (r->settings.cache) sec_cache(o, r);
}
