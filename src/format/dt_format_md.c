/* dt_format_md.c — results.md from a derived run record: one function per section, in
 * the order of docs/results-format.md. Reads only; contract in dt_format_md.h. */
#define _GNU_SOURCE
#include "format/dt_format_md.h"
#include "format/dt_demangle.h"
#include "format/dt_format_decomp.h"
#include "format/dt_format_devices.h"
#include "format/dt_format_graph.h"

#include "format/dt_format_svg.h"
#include "format/dt_format_util.h"

#include "data/dt_arena.h"
#include "plan/dt_ops.h"
#include "stats/dt_derive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What every section reads: the stream, the record and the thresholds it was derived
 * with (prose numbers come from here). */
typedef struct md {
    FILE *o;
    const dt_record *r;
    const dt_policy *pol;
} md;

static void text(const md *m, const char *s) { dt_format_md_text(m->o, s); }

/* ---- reading the derived blocks (NULL / NaN where the record has nothing) ---- */

static const dt_scope_derived *dscope(const dt_case *c, dt_scope s) {
    const dt_scope_derived *sd = &c->derived.scopes[s];
    return c->derived.present && sd->present ? sd : NULL;
}

static const dt_scope_impl *dimpl(const dt_case *c, dt_scope s, size_t i) {
    const dt_scope_derived *sd = dscope(c, s);
    return sd && sd->impl ? &sd->impl[i] : NULL;
}

/* Candidate k against the baseline in scope s. */
static const dt_scope_vs *dvs(const dt_case *c, dt_scope s, size_t k) {
    const dt_scope_derived *sd = dscope(c, s);
    return sd && sd->vs && k > 0 && sd->vs[k].present ? &sd->vs[k] : NULL;
}

static double p50(const dt_case *c, dt_scope s, size_t i) {
    const dt_scope_impl *si = dimpl(c, s, i);
    return si && si->summary.n > 0 ? si->summary.p50 : NAN;
}

static double p90(const dt_case *c, dt_scope s, size_t i) {
    const dt_scope_impl *si = dimpl(c, s, i);
    return si && si->summary.n > 0 ? si->summary.p90 : NAN;
}

/* Probe/control of impl i in a probe scope, NaN when not derived. */
static double probe_over_control(const dt_case *c, dt_scope s, size_t i) {
    const dt_scope_impl *si = dimpl(c, s, i);
    return si && si->has_probe_over_control ? si->probe_over_control : NAN;
}

static const dt_probe_summary *probe_of(const dt_case *c, size_t i) {
    const dt_scope_impl *si = dimpl(c, DT_SCOPE_PROBE_BATCH, i);
    return si && si->probe.present ? &si->probe : NULL;
}

static int any_scope(const dt_record *r, dt_scope s) {
    for (size_t i = 0; i < r->n_cases; i++)
        if (dscope(&r->cases[i], s))
            return 1;
    return 0;
}

static int have_i64(int64_t x) { return x != DT_NULL_I64; }

/* ---- cells ---- */

/* "0.602 [0.581, 0.623]", "0.602 [no interval: 2 pairs]", or "—" for NULL. */
static void interval_cell(const md *m, const dt_rec_ratio *q) {
    dt_format_buf a, b, c;
    if (!q)
        fputs("—", m->o);
    else if (isfinite(q->ci_low) && isfinite(q->ci_high))
        fprintf(m->o, "%s [%s, %s]", dt_format_ratio(a, q->median), dt_format_ratio(b, q->ci_low),
                dt_format_ratio(c, q->ci_high));
    else
        fprintf(m->o, "%s [no interval: %zu pairs]", dt_format_ratio(a, q->median), q->pairs);
}

/* Candidate k's ratio in scope s. */
static void ratio_cell(const md *m, const dt_case *c, dt_scope s, size_t k) {
    const dt_scope_vs *vs = dvs(c, s, k);
    interval_cell(m, vs && vs->has_ratio ? &vs->ratio : NULL);
}

static void verdict_cell(const md *m, const dt_case *c, dt_scope s, size_t k) {
    const dt_scope_vs *vs = dvs(c, s, k);
    if (!vs)
        fputs("—", m->o);
    else if (c->impl[0].emulated || c->impl[k].emulated)
        fputs("emulated: no verdict", m->o); /* FP32 stood in for the case dtype */
    else if (vs->verdict == DT_REC_VERDICT_FASTER || vs->verdict == DT_REC_VERDICT_SLOWER)
        fprintf(m->o, "**%s**", dt_rec_verdict_name(vs->verdict));
    else
        fputs(dt_rec_verdict_name(vs->verdict), m->o);
    if (vs && vs->process_band >= 1.005) { /* a held verdict read on a widened interval */
        dt_format_buf b;
        fprintf(m->o, " (band ×%s)", dt_format_ratio(b, vs->process_band));
    }
}

/* A code fence longer than any backtick run in s. */
static void fence(const md *m, const char *s) {
    size_t run = 0, best = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    for (size_t i = 0; i < (best < 3 ? 3 : best + 1); i++)
        fputc('`', m->o);
}

/* " <impl id> <what> |" of a table head. */
static void head_impl(const md *m, size_t i, const char *what) {
    fputs(" ", m->o);
    text(m, m->r->impls[i].id);
    fprintf(m->o, " %s |", what);
}

/* "| <case id> | <impl id>" that opens a per-implementation row. */
static void row_open(const md *m, const dt_case *c, size_t i) {
    fputs("| ", m->o);
    text(m, c->id);
    fputs(" | ", m->o);
    text(m, m->r->impls[i].id);
}

/* The interval level of the policy as a percentage ("95"). */
static const char *ci_pct(dt_format_buf b, const md *m) {
    return dt_format_const(b, 100 * m->pol->ci_level);
}

/* ---- title, assessment, what was run ---- */

static void sec_title(const md *m) {
    fputs("# dualtime results: ", m->o);
    for (size_t k = 1; k < m->r->n_impls; k++) {
        if (k > 1)
            fputs(", ", m->o);
        text(m, m->r->impls[k].id);
    }
    fputs(" vs ", m->o);
    text(m, m->r->impls[0].id);
    fputs("\n\n", m->o);
}

/* Scopes in report order: host, held control, dispatch, graph, then the probe
 * (diagnostics). */
static const dt_scope k_scope_order[DT_SCOPE_COUNT] = {
    DT_SCOPE_E2E_BATCH,      DT_SCOPE_E2E_SINGLE,      DT_SCOPE_CONTROL_BATCH,
    DT_SCOPE_CONTROL_SINGLE, DT_SCOPE_DISPATCH_BATCH,  DT_SCOPE_DISPATCH_SINGLE,
    DT_SCOPE_GRAPH_BATCH,    DT_SCOPE_PROBE_BATCH,     DT_SCOPE_PROBE_SINGLE};

/* How many counted summary lines the headline shows (the rest: Assessment details). */
#define MD_HEADLINE_GROUPS 4

/* The headline, at most three lines (SPEC §6): the run level with the scopes grouped by
 * level, the main findings counted, and where the details are. */
static void sec_assessment(const md *m) {
    const dt_run_derived *d = &m->r->derived;
    fprintf(m->o, "Assessment: **%s**", d->present ? dt_level_name(d->level) : "unassessed");
    if (!d->present) {
        fputs("\n\n", m->o);
        return;
    }
    int any = 0;
    for (int l = DT_LEVEL_SMOKE; l <= DT_LEVEL_COMPARATIVE; l++) {
        int first = 1;
        for (size_t q = 0; q < DT_SCOPE_COUNT; q++) {
            dt_scope s = k_scope_order[q];
            const dt_scope_assessment *sa = &d->scopes[s];
            if (!sa->present || (int)sa->level != l)
                continue;
            if (first)
                fprintf(m->o, "%s%s: ", any ? "; " : " — by scope: ", dt_level_name((dt_level)l));
            else
                fputs(", ", m->o);
            text(m, dt_scope_name(s));
            if (dt_scope_is_probe(s))
                fputs(" (diagnostic)", m->o);
            first = 0;
            any = 1;
        }
    }
    fputs(".\\\n", m->o);
    const dt_strv *sum = d->summary.n ? &d->summary : &d->reasons;
    /* no finding at all: the one reason says what was satisfied */
    int satisfied = d->level == DT_LEVEL_COMPARATIVE && d->reasons.n == 1 && sum->n == 1 &&
                    strcmp(sum->v[0], d->reasons.v[0]) == 0;
    for (int s = 0; satisfied && s < DT_SCOPE_COUNT; s++)
        satisfied = !d->scopes[s].present || d->scopes[s].level == DT_LEVEL_COMPARATIVE;
    fputs(satisfied ? "Why: " : "Main reasons: ", m->o);
    size_t shown = sum->n < MD_HEADLINE_GROUPS ? sum->n : MD_HEADLINE_GROUPS;
    for (size_t i = 0; i < shown; i++) {
        if (i)
            fputs("; ", m->o);
        text(m, sum->v[i]);
    }
    if (sum->n > shown)
        fprintf(m->o, "; and %zu more kinds", sum->n - shown);
    fputs(".\\\n", m->o);
    fputs("Every finding, by scope: [Assessment details](#assessment-details).\n\n", m->o);
}

/* The full assessment: per scope its level and findings, the rule, every reason. */
static void sec_assessment_details(const md *m) {
    const dt_run_derived *d = &m->r->derived;
    if (!d->present)
        return;
    dt_format_buf a, b, c;
    fprintf(m->o, "## Assessment details\n\nEach scope is assessed on its own: **smoke** when "
            "a case has fewer than %zu samples in it, the run has fewer than %d rounds or is "
            "incomplete, or a cuda case has no device control; **method audit** when its "
            "noise (IQR/p50) is above %s%% or the clocks moved (NVML); else **comparative**. "
            "Probe scopes are diagnostics: a probe/control outside [%s, %s] makes the probe "
            "scope a method audit, not the control's or the run's. The run's level is the "
            "lowest level of the scopes that carry verdicts (all but probe).\n\n",
            m->pol->min_samples, m->pol->min_rounds, dt_format_const(a, 100 * m->pol->max_noise),
            dt_format_const(b, m->pol->probe_low), dt_format_const(c, m->pol->probe_high));
    fputs("| Scope | Level | Findings |\n|---|---|---:|\n", m->o);
    for (size_t q = 0; q < DT_SCOPE_COUNT; q++) {
        dt_scope s = k_scope_order[q];
        const dt_scope_assessment *sa = &d->scopes[s];
        if (!sa->present)
            continue;
        fputs("| ", m->o);
        text(m, dt_scope_name(s));
        size_t nr = sa->reasons.n; /* a capped list ends in "... and N more" */
        if (nr && strncmp(sa->reasons.v[nr - 1], "... and ", 8) == 0)
            nr = nr - 1 + strtoul(sa->reasons.v[nr - 1] + 8, NULL, 10);
        fprintf(m->o, "%s | %s | %zu |\n", dt_scope_is_probe(s) ? " (diagnostic)" : "",
                dt_level_name(sa->level), nr);
    }
    fputs("\nCounted:\n\n", m->o);
    for (size_t i = 0; i < d->summary.n; i++) {
        fputs("- ", m->o);
        text(m, d->summary.v[i]);
        fputs("\n", m->o);
    }
    fputs("\nEvery finding:\n\n", m->o);
    for (size_t i = 0; i < d->reasons.n; i++) {
        fputs("- ", m->o);
        text(m, d->reasons.v[i]);
        fputs("\n", m->o);
    }
    fputs("\n", m->o);
}

/* Backend, then each implementation with its framework and version. */
static void what_impls(const md *m) {
    const dt_settings *st = &m->r->settings;
    fputs("## What was run\n\nBackend **", m->o);
    text(m, st->backend ? st->backend : "unknown");
    fputs("**", m->o);
    if (st->backend_choice) {
        fputs(" (", m->o);
        text(m, st->backend_choice);
        fputs(")", m->o);
    }
    fputs(". ", m->o);
    size_t n = m->r->n_impls;
    for (size_t k = 0; k < n; k++) {
        const dt_impl *im = &m->r->impls[dt_format_impl_at(m->r, k)];
        const char *role = im->role == DT_ROLE_BASELINE ? "baseline" : k == 0 ? "Candidate" : "candidate";
        fprintf(m->o, "%s **", role);
        text(m, im->id);
        fputs("** = ", m->o);
        text(m, im->framework ? im->framework : "?");
        fputs(" ", m->o);
        text(m, im->framework_version ? im->framework_version : "?");
        if (im->cpus) {
            fputs(" (CPUs ", m->o);
            text(m, im->cpus);
            fputs(")", m->o);
        }
        fputs(k + 1 < n ? "; " : ". ", m->o);
    }
    fputs("Ratios are candidate/baseline of paired samples (< 1: the candidate is faster).\n\n",
          m->o);
}

static void what_settings(const md *m) {
    const dt_settings *st = &m->r->settings;
    dt_format_buf a;
    FILE *o = m->o;
    fputs("Settings:", o);
    if (have_i64(st->samples))
        fprintf(o, " %lld samples per scope,", (long long)st->samples);
    if (have_i64(st->rounds) && st->rounds > 0) /* 0: an old file without rounds */
        fprintf(o, " %lld round%s,", (long long)st->rounds, st->rounds == 1 ? "" : "s");
    if (isfinite(st->sample_ms))
        fprintf(o, " sample %s ms,", dt_format_num(a, st->sample_ms));
    if (isfinite(st->warmup_ms))
        fprintf(o, " warmup %s ms,", dt_format_num(a, st->warmup_ms));
    if (have_i64(st->seed))
        fprintf(o, " seed %lld,", (long long)st->seed);
    if (have_i64(st->threads))
        fprintf(o, " %lld thread%s,", (long long)st->threads, st->threads == 1 ? "" : "s");
    fprintf(o, " input views %s, device timing %s, quick %s",
            st->input_views ? "on (strided)" : "off (contiguous)", st->device_timing ? "on" : "off",
            st->quick ? "on" : "off");
    fprintf(o, "; bootstrap %u resamples, seed %llu", st->bootstrap_resamples,
            (unsigned long long)st->bootstrap_seed);
    if (st->device_timing) {
        fputs(st->held_windows ? "; device windows held (control, probe)"
                               : "; device windows not held (a file from before held windows: "
                                 "its control reads as dispatch)", o);
        if (st->probe_kind) {
            fputs("; probe kind ", o);
            text(m, st->probe_kind);
        }
    }
    if (st->pin >= 0)
        fprintf(o, "; pinning %s", st->pin ? "on" : "off");
    if (m->r->env.orchestrator_cpus) {
        fputs(" (orchestrator CPUs ", o);
        text(m, m->r->env.orchestrator_cpus);
        fputs(")", o);
    }
    fputs(".\n\n", o);
    for (size_t i = 0; i < m->r->notes.n; i++) {
        fputs(i ? "; " : "Notes: ", o);
        text(m, m->r->notes.v[i]);
        fputs(i + 1 == m->r->notes.n ? ".\n\n" : "", o);
    }
}

/* Case counts and, per candidate, the E2E batch verdict counts. */
static void what_counts(const md *m) {
    const dt_run_derived *d = &m->r->derived;
    if (!d->present)
        return;
    fprintf(m->o, "Cases: %zu (%zu valid). ", d->n_cases, d->n_valid);
    for (size_t k = 1; k < m->r->n_impls; k++) {
        const size_t *n = d->vs[k].n;
        if (m->r->n_impls > 2) {
            fputs(k > 1 ? "; E2E batch verdicts of " : "E2E batch verdicts of ", m->o);
            text(m, m->r->impls[k].id);
            fputs(": ", m->o);
        } else {
            fputs("E2E batch verdicts: ", m->o);
        }
        fprintf(m->o, "%zu faster, %zu slower, %zu indistinguishable, %zu insufficient, %zu invalid",
                n[DT_REC_VERDICT_FASTER], n[DT_REC_VERDICT_SLOWER],
                n[DT_REC_VERDICT_INDISTINGUISHABLE], n[DT_REC_VERDICT_INSUFFICIENT],
                n[DT_REC_VERDICT_INVALID]);
    }
    fputs(".\n\n", m->o);
}

static void what_tool_and_times(const md *m) {
    const dt_record *r = m->r;
    const dt_tool *t = &r->tool;
    if (t->name || t->version || t->git_revision) {
        fputs(" Tool: ", m->o);
        text(m, t->name ? t->name : "dualtime");
        fputs(" ", m->o);
        text(m, t->version ? t->version : "?");
        fputs(" (git ", m->o);
        text(m, t->git_revision ? t->git_revision : "unknown");
        fputs(t->git_dirty == 1 ? ", dirty tree)." : ").", m->o);
    }
    if (r->started_at) {
        fputs(" Started ", m->o);
        text(m, r->started_at);
        if (r->finished_at) {
            fputs(", finished ", m->o);
            text(m, r->finished_at);
        }
        fputs(".", m->o);
    }
    if (!r->complete)
        fputs(" **The run is incomplete**: only the cases below were finished.", m->o);
    fputs("\n\n", m->o);
}

static void what_machine(const md *m) {
    const dt_environment *env = &m->r->env;
    fputs("Machine: ", m->o);
    text(m, env->host.cpu ? env->host.cpu : "unknown CPU");
    if (have_i64(env->host.cores))
        fprintf(m->o, ", %lld cores", (long long)env->host.cores);
    if (env->host.os) {
        fputs(", ", m->o);
        text(m, env->host.os);
    }
    fputs("; GPU: ", m->o);
    if (env->gpu_json)
        text(m, env->gpu_name ? env->gpu_name : "unknown");
    else
        fputs("none", m->o);
    fputs(".", m->o);
    what_tool_and_times(m);
    const dt_strv *cl = &m->r->command_line;
    if (cl->n > 0) {
        /* shell-quoted (POSIX), as one code span: it can be pasted back into a shell */
        char *line = NULL;
        size_t n = 0;
        FILE *q = open_memstream(&line, &n);
        for (size_t i = 0; q && i < cl->n; i++) {
            if (i)
                fputc(' ', q);
            dt_format_shell_quote(q, cl->v[i]);
        }
        if (q && fclose(q) == 0) {
            fputs("Command line: ", m->o);
            dt_format_md_code(m->o, line, 0);
            fputs("\n\n", m->o);
        }
        free(line);
    }
}

/* ---- host end-to-end, plots ---- */

/* The E2E table of candidate k against the baseline. */
static void main_table(const md *m, size_t k) {
    FILE *o = m->o;
    dt_format_buf b;
    fputs("| Case |", o);
    head_impl(m, k, "E2E batch p50");
    head_impl(m, 0, "p50");
    head_impl(m, k, "p90");
    head_impl(m, 0, "p90");
    head_impl(m, k, "single p50");
    head_impl(m, 0, "single p50");
    fprintf(o, " Ratio [%s%% CI] | Verdict |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n",
            ci_pct(b, m));
    for (size_t i = 0; i < m->r->n_cases; i++) {
        const dt_case *c = &m->r->cases[i];
        fputs("| ", o);
        text(m, c->id);
        if (!dt_format_case_shown(m->r, c)) {
            fputs(" | — | — | — | — | — | — | FAILED | invalid |\n", o);
            continue;
        }
        fprintf(o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_E2E_BATCH, k)));
        fprintf(o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_E2E_BATCH, 0)));
        fprintf(o, " | %s", dt_format_num(b, p90(c, DT_SCOPE_E2E_BATCH, k)));
        fprintf(o, " | %s", dt_format_num(b, p90(c, DT_SCOPE_E2E_BATCH, 0)));
        fprintf(o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_E2E_SINGLE, k)));
        fprintf(o, " | %s | ", dt_format_num(b, p50(c, DT_SCOPE_E2E_SINGLE, 0)));
        ratio_cell(m, c, DT_SCOPE_E2E_BATCH, k);
        fputs(" | ", o);
        verdict_cell(m, c, DT_SCOPE_E2E_BATCH, k);
        fputs(" |\n", o);
    }
}

/* The E2E table of three or more implementations: one column group per implementation,
 * the baseline's first (p50, p90, single p50), then each candidate's with its ratio to
 * the baseline and verdict. */
static void main_table_groups(const md *m) {
    FILE *o = m->o;
    dt_format_buf b;
    const size_t n = m->r->n_impls;
    fputs("| Case |", o);
    head_impl(m, 0, "E2E batch p50");
    head_impl(m, 0, "p90");
    head_impl(m, 0, "single p50");
    for (size_t k = 1; k < n; k++) {
        head_impl(m, k, "p50");
        head_impl(m, k, "p90");
        head_impl(m, k, "single p50");
        char what[48];
        snprintf(what, sizeof what, "ratio [%s%% CI]", ci_pct(b, m));
        head_impl(m, k, what);
        head_impl(m, k, "verdict");
    }
    fputs("\n|---|---:|---:|---:|", o);
    for (size_t k = 1; k < n; k++)
        fputs("---:|---:|---:|---|---|", o);
    fputs("\n", o);
    for (size_t i = 0; i < m->r->n_cases; i++) {
        const dt_case *c = &m->r->cases[i];
        fputs("| ", o);
        text(m, c->id);
        if (!dt_format_case_shown(m->r, c)) {
            fputs(" | — | — | — |", o);
            for (size_t k = 1; k < n; k++)
                fputs(" — | — | — | FAILED | invalid |", o);
            fputs("\n", o);
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            fprintf(o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_E2E_BATCH, k)));
            fprintf(o, " | %s", dt_format_num(b, p90(c, DT_SCOPE_E2E_BATCH, k)));
            fprintf(o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_E2E_SINGLE, k)));
            if (k == 0)
                continue;
            fputs(" | ", o);
            ratio_cell(m, c, DT_SCOPE_E2E_BATCH, k);
            fputs(" | ", o);
            verdict_cell(m, c, DT_SCOPE_E2E_BATCH, k);
        }
        fputs(" |\n", o);
    }
}

static void sec_main(const md *m) {
    fputs("## Host end-to-end (µs per call)\n\n", m->o);
    if (m->r->n_impls > 2) {
        main_table_groups(m);
        fputs("\nEach ratio is that candidate's against the baseline, ", m->o);
        text(m, m->r->impls[0].id);
        fputs(".", m->o);
    }
    for (size_t k = 1; m->r->n_impls <= 2 && k < m->r->n_impls; k++)
        main_table(m, k);
    fputs(m->r->n_impls > 2 ? " " : "\n", m->o);
    fputs("The ratio and verdict are for E2E batch; single-call ratios are in results.json "
          "(cases[].derived.scopes.e2e_single).\n\n", m->o);
}

/* Links to the charts that dt_outputs writes next to results.md. */
static void sec_plots(const md *m) {
    dt_format_buf b;
    fprintf(m->o, "## Plots\n\nPer case, the candidate/baseline ratio of each scope with its %s%% "
            "interval (log axis; left of 1: the candidate is faster; hollow: no interval).\n\n"
            "![ratios](" DT_FORMAT_SVG_RATIOS ")\n\n", ci_pct(b, m));
    for (size_t k = 2; k < m->r->n_impls; k++) { /* one chart per further candidate */
        char name[128];
        dt_format_svg_ratios_name(m->r, k, name, sizeof name);
        fputs("![ratios of ", m->o);
        text(m, m->r->impls[k].id);
        fprintf(m->o, "](%s)\n\n", name);
    }
    if (dt_format_has_roofline(m->r))
        fputs("Achieved bandwidth as % of the device copy ceiling:\n\n"
              "![roofline](" DT_FORMAT_SVG_ROOFLINE ")\n\n", m->o);
}

/* ---- setup, correctness ---- */

static void setup_row(const md *m, const dt_case *c, size_t i) {
    const dt_case_impl *ci = &c->impl[i];
    const dt_setup_ms *sm = &ci->setup_ms;
    double phases[5] = {sm->compile, sm->alloc, sm->upload, sm->cold_call, sm->download};
    int warm = ci->present && ci->has_warmup;
    dt_format_buf b;
    row_open(m, c, i);
    for (size_t p = 0; p < 5; p++)
        fprintf(m->o, " | %s", dt_format_num(b, ci->present ? phases[p] : NAN));
    fprintf(m->o, " | %s", dt_format_num(b, warm ? ci->warmup_ms : NAN));
    if (warm && have_i64(ci->warmup_calls))
        fprintf(m->o, " (%lld calls)", (long long)ci->warmup_calls);
    if (ci->present && ci->has_calibration && have_i64(ci->calib_reps))
        fprintf(m->o, " | %lld |\n", (long long)ci->calib_reps);
    else
        fputs(" | — |\n", m->o);
}

static void sec_setup(const md *m) {
    fputs("## Setup and cold-call phases (ms)\n\n"
          "| Case | Framework | Compile | Alloc | Upload | Cold call | Download | Warmup | "
          "Batch R |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n", m->o);
    for (size_t i = 0; i < m->r->n_cases; i++)
        for (size_t k = 0; k < m->r->n_impls; k++)
            setup_row(m, &m->r->cases[i], dt_format_impl_at(m->r, k));
    fputs("\n", m->o);
}

static void correctness_row(const md *m, const dt_case *c, size_t i) {
    const dt_case_impl *ci = &c->impl[i];
    double maxerr = NAN, budget = NAN;
    size_t nck = 0, nok = 0;
    for (size_t j = 0; ci->present && j < ci->n_checks; j++) {
        const dt_check *ck = &ci->checks[j];
        nck++;
        nok += ck->ok != 0;
        double e = ck->oracle.max_abs_error, u = ck->oracle.max_budget_used;
        if (isfinite(e) && (!isfinite(maxerr) || e > maxerr))
            maxerr = e;
        if (isfinite(u) && (!isfinite(budget) || u > budget))
            budget = u;
    }
    dt_format_buf b, b2;
    row_open(m, c, i);
    fprintf(m->o, " | %zu/%zu%s | %s | %s | ", nok, nck, nok < nck || nck == 0 ? " ✗" : "",
            dt_format_num(b, maxerr), dt_format_pct(b2, budget));
    if (isfinite(c->atol) || isfinite(c->rtol) || c->tol_scale) {
        fprintf(m->o, "atol %s, rtol %s", dt_format_num(b, c->atol), dt_format_num(b2, c->rtol));
        if (c->tol_scale) {
            fputs(", scale ", m->o);
            text(m, c->tol_scale);
        }
    } else {
        fputs("—", m->o);
    }
    fputs(" | ", m->o);
    text(m, ci->present && ci->output_policy ? ci->output_policy : "—");
    fputs(" |\n", m->o);
}

/* Inputs and the tolerance of every (op, dtype) the run has, with its reason (issue 16);
 * implementations that computed a narrow dtype in FP32 are listed as emulated. */
static void sec_tolerances(const md *m) {
    if (!m->r->settings.inputs) return; /* an older run: its report stays as it was */
    const char *inputs = m->r->settings.inputs ? m->r->settings.inputs : "uniform";
    int known = dt_inputs_find(inputs);
    fputs("Inputs: `", m->o);
    text(m, inputs);
    fputs("`", m->o);
    if (known >= 0) {
        fputs(" (", m->o);
        text(m, dt_inputs_describe((dt_inputs)known));
        fputs(")", m->o);
    }
    fputs(".\n\n| Op | Dtype | ulps at \\|ref\\| | ulps at scale | atol | rtol | Why |\n"
          "|---|---|---:|---:|---:|---:|---|\n", m->o);
    unsigned seen[DT_OP_COUNT] = {0};
    for (size_t i = 0; i < m->r->n_cases; i++) {
        const dt_case *c = &m->r->cases[i];
        const dt_dtype d = c->dtype == DT_ELEM_BF16 ? DT_BF16
                           : c->dtype == DT_ELEM_F16 ? DT_F16 : DT_F32;
        if (c->op < 0 || c->op >= DT_OP_COUNT || (seen[c->op] & (1u << d))) continue;
        seen[c->op] |= 1u << d;
        const dt_tolerance t = dt_op_tolerance(c->op, d);
        dt_format_buf b, b2;
        fprintf(m->o, "| %s | %s | %g | %g | %s | %s | ", dt_op_get(c->op)->name,
                dt_dtype_name(d), t.ulps, t.scale_ulps, dt_format_num(b, t.atol),
                dt_format_num(b2, t.rtol));
        text(m, t.reason);
        fputs(" |\n", m->o);
    }
    int any = 0;
    for (size_t i = 0; i < m->r->n_cases; i++)
        for (size_t k = 0; k < m->r->n_impls; k++) {
            const dt_case_impl *ci = &m->r->cases[i].impl[k];
            if (!ci->present || !ci->emulated) continue;
            fputs(any ? ", " : "\nEmulated (computed in FP32 from the same inputs and rounded "
                               "to the case dtype; times shown, no speed verdict): ", m->o);
            text(m, m->r->cases[i].id);
            fputs(" ", m->o);
            text(m, m->r->impls[k].id);
            any = 1;
        }
    fputs(any ? ".\n\n" : "\n", m->o);
}

static void sec_correctness(const md *m) {
    fputs("## Correctness (FP64 oracle)\n\n"
          "| Case | Framework | Checks passed | Max abs error | Budget used | Tolerance | "
          "Output policy |\n|---|---|---:|---:|---:|---|---|\n", m->o);
    for (size_t i = 0; i < m->r->n_cases; i++)
        for (size_t k = 0; k < m->r->n_impls; k++)
            correctness_row(m, &m->r->cases[i], dt_format_impl_at(m->r, k));
    fputs("\nBudget used = max over elements of |out − ref| / (atol + rtol·scale); 100% is "
          "the limit.\n\n", m->o);
    sec_tolerances(m);
}

/* ---- anti-cheat (issue 17 item 7, docs/anti-cheat.md) ---- */

/* One implementation's anti-cheat row: samples checked, then every check that did not
 * simply pass (caught first, with its reason; not applicable with why). */
static void anti_cheat_row(const md *m, const dt_case *c, size_t i) {
    const dt_cheat_rec *ac = &c->impl[i].cheat;
    if (!c->impl[i].present || !ac->present)
        return;
    row_open(m, c, i);
    fprintf(m->o, " | %lld (%lld input sets", (long long)ac->sample_checks,
            (long long)ac->input_sets);
    if (ac->digest_checks > 0)
        fprintf(m->o, "; inputs of %lld by device digest", (long long)ac->digest_checks);
    fputs(") | ", m->o);
    int shown = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < DT_CHEAT_COUNT; k++) {
            const dt_cheat_result *x = &ac->check[k];
            if (x->status != (pass == 0 ? DT_CHEAT_CAUGHT : DT_CHEAT_NOT_APPLICABLE))
                continue;
            fputs(shown++ ? "; " : "", m->o);
            fprintf(m->o, pass == 0 ? "**CAUGHT `%s`**: " : "`%s` not applicable: ",
                    dt_cheat_check_name((dt_cheat_check)k));
            text(m, x->note ? x->note : "");
        }
    fputs(shown ? " |\n" : "every check passed |\n", m->o);
}

static void sec_anti_cheat(const md *m) {
    int any = 0;
    for (size_t n = 0; n < m->r->n_cases && !any; n++)
        for (size_t i = 0; i < m->r->n_impls; i++)
            any |= m->r->cases[n].impl[i].cheat.present;
    if (!any)
        return;
    fputs("## Anti-cheat checks\n\n"
          "Each implementation is checked for the attacks benchmark harnesses met "
          "(docs/anti-cheat.md): `cheat.cached_result` (inputs rotate between timed samples "
          "over distinct input sets; every sample's output is checked against its set's "
          "oracle), `cheat.skipped_work` (outputs are poisoned before every timed sample), "
          "`cheat.side_stream` (writes after the call returned), `cheat.wrote_input`, "
          "`cheat.aliased_output` (lazy, view or aliased outputs), "
          "`cheat.faster_than_physics` (faster than the fewest bytes at the measured copy "
          "ceiling or the flops at peak). A caught check fails the case: no verdict.\n\n"
          "| Case | Framework | Samples checked | Findings |\n|---|---|---:|---|\n", m->o);
    for (size_t i = 0; i < m->r->n_cases; i++)
        for (size_t k = 0; k < m->r->n_impls; k++)
            anti_cheat_row(m, &m->r->cases[i], dt_format_impl_at(m->r, k));
    fputs("\n", m->o);
}

/* ---- device control, kernel probe ---- */

/* Small cases' held control batch over (kernels per call x the held touch floor batch),
 * derived.held_floor (absent without a held touch floor). */
static void held_floor_table(const md *m) {
    size_t rows = 0;
    dt_format_buf a, b;
    for (size_t n = 0; n < m->r->n_cases; n++) {
        const dt_case *c = &m->r->cases[n];
        const dt_held_floor *hf = &c->derived.held_floor;
        if (!c->derived.present || !hf->present || !dt_format_case_shown(m->r, c))
            continue;
        if (rows++ == 0)
            fprintf(m->o, "### Held control over the held touch floor (small cases)\n\n"
                    "For each small case (M·N ≤ %lld): the held control batch p50 per call over "
                    "(kernels per call × the held touch floor batch, **%s µs**: a one-block "
                    "kernel that reads and writes 512 B, per call of a held batch). Kernels per "
                    "call come from the probe (kernels/call p50) where measured, else 1. Near "
                    "1: each kernel costs what the smallest real kernel costs in a held "
                    "stream.\n\n| Case | Framework | Held batch µs/call | Kernels/call | "
                    "/ (kernels × held touch floor) |\n|---|---|---:|---:|---:|\n",
                    (long long)m->pol->small_case_max_elems, dt_format_num(a, hf->touch_floor_us));
        for (size_t k = 0; k < m->r->n_impls; k++) {
            size_t i = dt_format_impl_at(m->r, k);
            const dt_held_floor_impl *hi = &hf->impl[i];
            row_open(m, c, i);
            if (!hi->present) {
                fputs(" | — | — | — |\n", m->o);
                continue;
            }
            dt_format_buf c3;
            fprintf(m->o, " | %s | %s%s | %s |\n", dt_format_num(a, hi->control_batch_us),
                    dt_format_num(b, hi->kernels_per_call),
                    hi->kernels_from_probe ? "" : " (no probe)",
                    dt_format_ratio(c3, hi->over_touch_floor));
        }
    }
    if (rows)
        fputs("\n", m->o);
}

/* Which device window scopes the run has: control (held), dispatch (unheld). */
typedef struct dev_cols {
    int control, dispatch;
} dev_cols;

static dev_cols device_cols(const dt_record *r) {
    dev_cols d = {any_scope(r, DT_SCOPE_CONTROL_BATCH) || any_scope(r, DT_SCOPE_CONTROL_SINGLE),
                  any_scope(r, DT_SCOPE_DISPATCH_BATCH) ||
                      any_scope(r, DT_SCOPE_DISPATCH_SINGLE)};
    return d;
}

/* " ratio | verdict" pairs of candidate k for a batch and a single scope. */
static void ratio_pair(const md *m, const dt_case *c, dt_scope batch, dt_scope single, size_t k) {
    dt_scope sc[2] = {batch, single};
    for (int q = 0; q < 2; q++) {
        fputs(" | ", m->o);
        ratio_cell(m, c, sc[q], k);
        fputs(" | ", m->o);
        verdict_cell(m, c, sc[q], k);
    }
}

/* The device ratio table of candidate k against the baseline: held control and
 * dispatch, batch and single, each with its verdict. */
static void control_ratio_table(const md *m, size_t k, dev_cols dc) {
    dt_format_buf b;
    const char *pct = ci_pct(b, m);
    int ncol = 1;
    fputs("| Case |", m->o);
    if (dc.control) {
        fprintf(m->o, " GPU batch ratio [%s%% CI] | Verdict | GPU single ratio [%s%% CI] | "
                "Verdict |", pct, pct);
        ncol += 4;
    }
    if (dc.dispatch) {
        fprintf(m->o, " Dispatch batch ratio [%s%% CI] | Verdict | Dispatch single ratio "
                "[%s%% CI] | Verdict |", pct, pct);
        ncol += 4;
    }
    fputs("\n|---|", m->o);
    for (int q = 1; q < ncol; q++)
        fputs("---|", m->o);
    fputs("\n", m->o);
    for (size_t i = 0; i < m->r->n_cases; i++) {
        const dt_case *c = &m->r->cases[i];
        fputs("| ", m->o);
        text(m, c->id);
        if (!dt_format_case_shown(m->r, c)) {
            for (int q = 1; q < ncol; q += 2)
                fputs(" | FAILED | invalid", m->o);
            fputs(" |\n", m->o);
            continue;
        }
        if (dc.control)
            ratio_pair(m, c, DT_SCOPE_CONTROL_BATCH, DT_SCOPE_CONTROL_SINGLE, k);
        if (dc.dispatch)
            ratio_pair(m, c, DT_SCOPE_DISPATCH_BATCH, DT_SCOPE_DISPATCH_SINGLE, k);
        fputs(" |\n", m->o);
    }
}

/* What the device scopes of this run are, and what each does not establish. */
static void control_prose(const md *m, dev_cols dc) {
    if (dc.control)
        fputs("**Held control** (GPU held batch, held single; the GPU ratios): the stream waits on a host flag "
              "while the begin event, the calls and the end event are queued, then runs them "
              "back to back. It is the GPU time of the work alone, with no launch gaps; it "
              "does not include what a caller pays to feed the GPU.\n\n", m->o);
    if (dc.dispatch)
        fputs("**Dispatch** (dispatch batch, dispatch single): the same events without a hold, "
              "as a caller feeds the GPU: launch gaps are included, so at launch-bound shapes "
              "it measures the host's launch rate, not the kernels.\n\n", m->o);
    if (!m->r->settings.held_windows)
        fputs("This file was written before held windows: its device control samples were "
              "unheld and are shown as **dispatch**, so that comparisons with newer runs "
              "compare like with like.\n\n", m->o);
}

static void sec_control(const md *m) {
    dev_cols dc = device_cols(m->r);
    if (!dc.control && !dc.dispatch)
        return;
    fputs("## Device control and dispatch (µs per call, stream events)\n\n", m->o);
    control_prose(m, dc);
    fputs("| Case | Framework |", m->o);
    int ncol = 2;
    if (dc.control) {
        fputs(" GPU held batch µs/call | GPU held single µs |", m->o);
        ncol += 2;
    }
    if (dc.dispatch) {
        fputs(" Dispatch batch µs/call | Dispatch single µs |", m->o);
        ncol += 2;
    }
    fputs(" E2E batch µs/call | E2E single µs | Probe/control batch |\n|---|---|", m->o);
    for (int q = 2; q < ncol + 3; q++)
        fputs("---:|", m->o);
    fputs("\n", m->o);
    dt_format_buf b;
    for (size_t n = 0; n < m->r->n_cases; n++) {
        const dt_case *c = &m->r->cases[n];
        for (size_t k = 0; k < m->r->n_impls; k++) {
            size_t i = dt_format_impl_at(m->r, k);
            row_open(m, c, i);
            if (!dt_format_case_shown(m->r, c)) {
                fputs(" | FAILED", m->o);
                for (int q = 3; q < ncol + 3; q++)
                    fputs(" | —", m->o);
                fputs(" |\n", m->o);
                continue;
            }
            if (dc.control) {
                fprintf(m->o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_CONTROL_BATCH, i)));
                fprintf(m->o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_CONTROL_SINGLE, i)));
            }
            if (dc.dispatch) {
                fprintf(m->o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_DISPATCH_BATCH, i)));
                fprintf(m->o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_DISPATCH_SINGLE, i)));
            }
            fprintf(m->o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_E2E_BATCH, i)));
            fprintf(m->o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_E2E_SINGLE, i)));
            fprintf(m->o, " | %s |\n",
                    dt_format_ratio(b, probe_over_control(c, DT_SCOPE_PROBE_BATCH, i)));
        }
    }
    for (size_t k = 1; k < m->r->n_impls; k++) {
        fputs("\n", m->o);
        if (m->r->n_impls > 2) { /* whose table: several candidates */
            fputs("Ratios of **", m->o);
            text(m, m->r->impls[k].id);
            fputs("** to the baseline **", m->o);
            text(m, m->r->impls[0].id);
            fputs("**:\n\n", m->o);
        }
        control_ratio_table(m, k, dc);
    }
    fputs("\n", m->o);
    held_floor_table(m);
}

static void probe_row(const md *m, const dt_case *c, size_t i) {
    const dt_probe_summary *pb = probe_of(c, i);
    dt_format_buf b;
    row_open(m, c, i);
    if (!dt_format_case_shown(m->r, c)) {
        fputs(" | FAILED | — | — | — | — | — |\n", m->o);
        return;
    }
    fprintf(m->o, " | %s", dt_format_num(b, p50(c, DT_SCOPE_PROBE_BATCH, i)));
    fprintf(m->o, " | %s", dt_format_num(b, pb ? pb->kernel_sum_us_p50 : NAN));
    fprintf(m->o, " | %s", dt_format_num(b, pb ? pb->kernel_span_us_p50 : NAN));
    fprintf(m->o, " | %s", dt_format_num(b, pb ? pb->kernels_per_call_p50 : NAN));
    fprintf(m->o, " | %s", dt_format_ratio(b, probe_over_control(c, DT_SCOPE_PROBE_BATCH, i)));
    fprintf(m->o, " | %s |\n", dt_format_ratio(b, probe_over_control(c, DT_SCOPE_PROBE_SINGLE, i)));
}

/* Per kernel name of the probe batch scope, for shown cases; names demangled and
 * shortened (dt_demangle_short), the record keeps the recorded name. */
static void probe_kernels(const md *m) {
    fputs("\n### Per-kernel breakdown (probe batch, p50 per call)\n\n"
          "| Case | Framework | Kernel | Launches/call | µs/call |\n"
          "|---|---|---|---:|---:|\n", m->o);
    size_t rows = 0;
    dt_format_buf b, b2;
    for (size_t n = 0; n < m->r->n_cases; n++) {
        const dt_case *c = &m->r->cases[n];
        for (size_t k = 0; k < m->r->n_impls && dt_format_case_shown(m->r, c); k++) {
            size_t i = dt_format_impl_at(m->r, k);
            const dt_probe_summary *pb = probe_of(c, i);
            for (size_t j = 0; pb && j < pb->n_kernels; j++) {
                const dt_probe_kernel_median *km = &pb->kernels[j];
                row_open(m, c, i);
                fputs(" | ", m->o);
                char *shown = dt_demangle_short(km->name ? km->name : "?",
                                                DT_DEMANGLE_SHORT_CHARS);
                dt_format_md_code(m->o, shown, 1);
                free(shown);
                fprintf(m->o, " | %s | %s |\n", dt_format_num(b, km->per_call_p50),
                        dt_format_num(b2, km->us_p50));
                rows++;
            }
        }
    }
    if (rows == 0)
        fputs("| — | — | no kernel records | — | — |\n", m->o);
}

/* Per case and implementation: the probe kind used and the pilot's probe/control of
 * each kind (probe kind auto); nothing when no implementation recorded a kind. */
static void probe_kinds(const md *m) {
    size_t rows = 0;
    dt_format_buf a, b;
    for (size_t n = 0; n < m->r->n_cases; n++) {
        const dt_case *c = &m->r->cases[n];
        for (size_t k = 0; k < m->r->n_impls; k++) {
            size_t i = dt_format_impl_at(m->r, k);
            const dt_case_impl *ci = &c->impl[i];
            if (!ci->present || (!ci->probe_kind && !isfinite(ci->pilot_poc_concurrent) &&
                                 !isfinite(ci->pilot_poc_serialized)))
                continue;
            if (rows++ == 0)
                fputs("\n### Probe kind (pilot probe/control of each CUPTI kind)\n\n"
                      "With probe kind auto the pilot measures both kinds and the case uses "
                      "the one that perturbs it less (probe/control nearer 1).\n\n"
                      "| Case | Framework | Kind used | Pilot concurrent | Pilot serialized |\n"
                      "|---|---|---|---:|---:|\n", m->o);
            row_open(m, c, i);
            fputs(" | ", m->o);
            text(m, ci->probe_kind ? ci->probe_kind : "—");
            fprintf(m->o, " | %s | %s |\n", dt_format_ratio(a, ci->pilot_poc_concurrent),
                    dt_format_ratio(b, ci->pilot_poc_serialized));
        }
    }
}

static void sec_probe(const md *m) {
    if (!any_scope(m->r, DT_SCOPE_PROBE_BATCH) && !any_scope(m->r, DT_SCOPE_PROBE_SINGLE))
        return;
    fputs("## Kernel probe diagnostics (CUPTI; µs per call)\n\n"
          "| Case | Framework | Probe stream µs/call | Kernel sum | Kernel span | "
          "Kernels/call | Probe/control batch | Probe/control single |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|\n", m->o);
    for (size_t n = 0; n < m->r->n_cases; n++)
        for (size_t k = 0; k < m->r->n_impls; k++)
            probe_row(m, &m->r->cases[n], dt_format_impl_at(m->r, k));
    probe_kernels(m);
    probe_kinds(m);
    fputs("\nProbe/control is the median over pairs (same round and index) of probe "
          "stream time / control stream time: the observer effect of the probe. It is "
          "never used to correct a number.", m->o);
    if (m->r->probe_unheld)
        fputs(" **This file's probe windows were not held** (written before held windows): "
              "its probe/control compares unheld windows, CUPTI's host-side cost stretching "
              "launch gaps included.", m->o);
    fputs("\n\n", m->o);
}

/* ---- GPU clocks (NVML; dt_case.clock_rounds) ---- */

static double i64_or_nan(int64_t x) { return have_i64(x) ? (double)x : NAN; }

/* One reading of a snapshot: 0 SM MHz, 1 memory MHz, 2 temperature °C, 3 power W. */
static double snap_field(const dt_clock_snapshot *s, int field) {
    switch (field) {
    case 0: return i64_or_nan(s->sm_mhz);
    case 1: return i64_or_nan(s->mem_mhz);
    case 2: return i64_or_nan(s->temp_c);
    default: return s->power_w;
    }
}

/* "a→b" of one field of a round's before/after; "—" for a missing value. */
static void clocks_pair(const md *m, const dt_clock_round *cr, int field) {
    dt_format_buf a, b;
    fprintf(m->o, "%s→%s",
            dt_format_reading(a, cr->has_before ? snap_field(&cr->before, field) : NAN),
            dt_format_reading(b, cr->has_after ? snap_field(&cr->after, field) : NAN));
}

/* Reason names of one snapshot, ", "-separated; "none" when empty, "—" when unread. */
static void clocks_reasons(const md *m, int has, const dt_clock_snapshot *s) {
    if (!has || !s->has_throttle) {
        fputs("—", m->o);
        return;
    }
    if (s->throttle_reasons.n == 0)
        fputs("none", m->o);
    for (size_t i = 0; i < s->throttle_reasons.n; i++) {
        if (i)
            fputs(", ", m->o);
        text(m, s->throttle_reasons.v[i]);
    }
}

/* min/max of one field over readings. */
typedef struct clocks_range {
    double lo, hi;
} clocks_range;

static void clocks_range_add(clocks_range *g, double x) {
    if (!isfinite(x))
        return;
    if (!isfinite(g->lo) || x < g->lo)
        g->lo = x;
    if (!isfinite(g->hi) || x > g->hi)
        g->hi = x;
}

static void clocks_range_print(const md *m, const clocks_range *g, const char *unit) {
    dt_format_buf a, b;
    if (!isfinite(g->lo))
        fprintf(m->o, "— %s", unit);
    else if (g->lo == g->hi)
        fprintf(m->o, "%s %s", dt_format_reading(a, g->lo), unit);
    else
        fprintf(m->o, "%s–%s %s", dt_format_reading(a, g->lo), dt_format_reading(b, g->hi), unit);
}

/* No case moved: one line with the ranges over every reading. */
static void clocks_steady(const md *m, size_t ncl) {
    clocks_range g[4] = {{NAN, NAN}, {NAN, NAN}, {NAN, NAN}, {NAN, NAN}};
    size_t nread = 0;
    for (size_t n = 0; n < m->r->n_cases; n++) {
        const dt_case *c = &m->r->cases[n];
        for (size_t j = 0; j < c->n_clock_rounds; j++) {
            const dt_clock_round *cr = &c->clock_rounds[j];
            for (int k = 0; k < 2; k++) {
                if (!(k ? cr->has_after : cr->has_before))
                    continue;
                nread++;
                for (int f = 0; f < 4; f++)
                    clocks_range_add(&g[f], snap_field(k ? &cr->after : &cr->before, f));
            }
        }
    }
    if (ncl == 1)
        fprintf(m->o, "Clocks steady in the one case with readings (%zu readings): SM ", nread);
    else
        fprintf(m->o, "Clocks steady in all %zu cases with readings (%zu readings): SM ", ncl,
                nread);
    clocks_range_print(m, &g[0], "MHz");
    fputs(", memory ", m->o);
    clocks_range_print(m, &g[1], "MHz");
    fputs(", ", m->o);
    clocks_range_print(m, &g[2], "°C");
    fputs(", ", m->o);
    clocks_range_print(m, &g[3], "W");
    fputs("; no throttle reasons besides GPU idle and application clocks.\n\n", m->o);
}

static void clocks_row(const md *m, const dt_case *c) {
    const dt_clock_round *cr = dt_case_clock_shown(c);
    fputs("| ", m->o);
    text(m, c->id);
    for (int f = 0; f < 4; f++) {
        fputs(" | ", m->o);
        clocks_pair(m, cr, f);
    }
    fputs(" | ", m->o);
    clocks_reasons(m, cr->has_before, &cr->before);
    fputs("→", m->o);
    clocks_reasons(m, cr->has_after, &cr->after);
    if (!cr->moved) {
        fputs(" | no |\n", m->o);
        return;
    }
    fputs(" | **yes**", m->o);
    if (c->n_clock_rounds > 1) {
        size_t nmoved = 0;
        for (size_t j = 0; j < c->n_clock_rounds; j++)
            nmoved += c->clock_rounds[j].moved != 0;
        fprintf(m->o, " (round %lld; %zu of %zu rounds)", (long long)cr->round, nmoved,
                c->n_clock_rounds);
    }
    fputs(": ", m->o);
    text(m, cr->why ? cr->why : "");
    fputs(" |\n", m->o);
}

static void sec_clocks(const md *m) {
    size_t ncl = 0, nmoved = 0;
    for (size_t n = 0; n < m->r->n_cases; n++) {
        const dt_clock_round *cr = dt_case_clock_shown(&m->r->cases[n]);
        ncl += cr != NULL;
        nmoved += cr && cr->moved;
    }
    const dt_nvml *nv = &m->r->env.nvml;
    if (ncl == 0) {
        if (nv->present && !nv->available) {
            fputs("## GPU clocks (NVML)\n\nNot read: ", m->o);
            text(m, nv->reason ? nv->reason : "NVML unavailable");
            fputs(".\n\n", m->o);
        }
        return;
    }
    fputs("## GPU clocks (NVML)\n\n", m->o);
    if (nmoved == 0) {
        clocks_steady(m, ncl);
        return;
    }
    fputs("| Case | SM MHz | Memory MHz | Temp °C | Power W | Throttle reasons | Moved |\n"
          "|---|---|---|---|---|---|---|\n", m->o);
    for (size_t n = 0; n < m->r->n_cases; n++)
        if (m->r->cases[n].n_clock_rounds > 0)
            clocks_row(m, &m->r->cases[n]);
    dt_format_buf sm, temp;
    fprintf(m->o, "\nReadings are taken before and after the timed part of each case and round; "
            "a moved case shows the first round that moved. A case is flagged when the SM "
            "clock changed by more than %s%%, the memory clock changed, the temperature rose "
            "by more than %s °C, or a throttle reason other than GPU idle or application "
            "clocks was active.\n\n",
            dt_format_const(sm, 100 * m->pol->clocks_sm_tolerance),
            dt_format_const(temp, m->pol->clocks_max_temp_rise_c));
}

/* ---- rooflines, E2E floor ---- */

/* "; held empty-kernel floor 1.03 µs per call batched, 3.23 µs single; held touch
 * floor ..." for the held floors present (nothing when none is). */
static void held_floors_text(const md *m, const dt_ceilings_rec *ce) {
    const char *what[2] = {"held empty-kernel floor", "held touch floor"};
    double v[2][2] = {{ce->held_floor_batch_us, ce->held_floor_single_us},
                      {ce->held_touch_floor_batch_us, ce->held_touch_floor_single_us}};
    dt_format_buf a;
    for (int q = 0; q < 2; q++) {
        int batch = isfinite(v[q][0]), single = isfinite(v[q][1]);
        if (!batch && !single)
            continue;
        fprintf(m->o, "; %s (stream events in a held window)", what[q]);
        if (batch)
            fprintf(m->o, " **%s µs** per call of a batch", dt_format_num(a, v[q][0]));
        if (single)
            fprintf(m->o, "%s **%s µs** as one call", batch ? "," : "", dt_format_num(a, v[q][1]));
    }
}

/* 1 when the run measured at least one FLOP ceiling. */
static int have_flop_ceilings(const dt_flop_ceilings_rec *f) {
    return f->fp32_tflops > 0 || f->bf16_tflops > 0 || f->fp16_tflops > 0;
}

/* The FLOP ceilings sentence (after the ceilings sentence); nothing when none measured. */
static void flop_ceilings_text(const md *m, const dt_flop_ceilings_rec *f) {
    if (!have_flop_ceilings(f))
        return;
    const struct { const char *what; double v; } val[] = {
        {"FP32 (FFMA)", f->fp32_tflops},
        {"BF16 (tensor cores)", f->bf16_tflops},
        {"FP16 (tensor cores)", f->fp16_tflops}};
    dt_format_buf a;
    fputs(" FLOP ceilings (the peak a gemm row's % of peak is against):", m->o);
    const char *sep = " ";
    for (size_t i = 0; i < sizeof val / sizeof val[0]; i++) {
        if (!(val[i].v > 0))
            continue;
        fprintf(m->o, "%s%s **%s TFLOP/s**", sep, val[i].what, dt_format_num(a, val[i].v));
        sep = ", ";
    }
    fputs(".", m->o);
    if (f->method) {
        fputs(" Method: ", m->o);
        text(m, f->method);
        fputs(".", m->o);
    }
}

/* The ceilings sentence of the roofline section. */
static void roofline_ceilings(const md *m, const dt_ceilings_rec *ce) {
    dt_format_buf a, b;
    fputs("Ceilings measured once at the start of the run", m->o);
    if (ce->backend) {
        fputs(" on the ", m->o);
        text(m, ce->backend);
        fputs(" backend", m->o);
    }
    fprintf(m->o, ": copy bandwidth **%s GB/s** (bytes read + bytes written",
            dt_format_num(a, ce->copy_gbps));
    if (have_i64(ce->copy_bytes))
        fprintf(m->o, ", copies of %s", dt_format_bytes(b, (double)ce->copy_bytes));
    fprintf(m->o, "); launch+sync floor **%s µs**; queued launch %s µs per call",
            dt_format_num(a, ce->launch_sync_floor_us), dt_format_num(b, ce->launch_queue_floor_us));
    double touch_us = ce->launch_sync_touch_floor_us; /* optional */
    if (isfinite(touch_us) && touch_us > 0)
        fprintf(m->o, "; touch floor, a one-block kernel that reads and writes 512 B (CPU: a "
                "call that copies 512 B): **%s µs**", dt_format_num(a, touch_us));
    held_floors_text(m, ce);
    fputs(".", m->o);
    if (ce->method) {
        fputs(" Method: ", m->o);
        text(m, ce->method);
        fputs(".", m->o);
    }
    flop_ceilings_text(m, &ce->flops);
}

static void roofline_row(const md *m, const dt_case *c, size_t i) {
    const dt_roofline *rl = &c->derived.roofline;
    const dt_roofline_impl *e =
        c->derived.present && rl->present && rl->impl && rl->impl[i].present ? &rl->impl[i] : NULL;
    dt_format_buf a, b;
    row_open(m, c, i);
    if (!dt_format_case_shown(m->r, c)) {
        fputs(" | FAILED | — | — | — | — | — |\n", m->o);
        return;
    }
    if (!e) {
        fputs(" | — | — | — | — | — | — |\n", m->o);
        return;
    }
    fprintf(m->o, " | %s | %s | %s",
            e->scope == DT_SCOPE_CONTROL_BATCH    ? "device control batch"
            : e->scope == DT_SCOPE_DISPATCH_BATCH ? "device dispatch batch"
            : e->scope == DT_SCOPE_E2E_BATCH      ? "host E2E batch"
                                                  : "?",
            dt_format_num(a, e->us), dt_format_bytes(b, rl->min_bytes));
    if (rl->bound == DT_BOUND_COMPUTE && isfinite(e->flop_pct))
        fprintf(m->o, " | — | — | %s (%s of peak) |\n", dt_format_num(a, e->tflops),
                dt_format_pct_num(b, e->flop_pct));
    else if (rl->bound == DT_BOUND_COMPUTE)
        fprintf(m->o, " | — | — | %s |\n", dt_format_num(a, e->tflops));
    else
        fprintf(m->o, " | %s | %s%s | — |\n", dt_format_num(a, e->gbps),
                dt_format_pct_num(b, e->copy_pct),
                isfinite(e->copy_pct) && e->copy_pct > 100 ? " (in cache: above the copy ceiling)"
                                                           : "");
}

/* Rooflines against the ceilings the run measured (absent without a copy ceiling). */
static void sec_roofline(const md *m) {
    const dt_ceilings_rec *ce = &m->r->env.ceilings;
    if (!(ce->present && isfinite(ce->copy_gbps) && ce->copy_gbps > 0))
        return;
    fputs("## Rooflines (against ceilings measured in this run)\n\n", m->o);
    roofline_ceilings(m, ce);
    fputs("\n\nAchieved GB/s = the fewest bytes the op must move (every input read once, the "
          "output written once) / time per call; TFLOP/s = the op's FLOPs / time per call. "
          "Time: the **device control batch p50** (stream events) where the case has one, "
          "else the device dispatch batch p50 (files before held windows), else the **host "
          "E2E batch p50**; the Time column says which. ", m->o);
    fputs(have_flop_ceilings(&ce->flops)
              ? "gemm shows TFLOP/s and its % of the FLOP ceiling of its dtype (above). "
              : "gemm shows TFLOP/s only: no FLOP ceiling is measured. ", m->o);
    fputs("The copy ceiling is measured on buffers far "
          "larger than the caches, so a case whose data stay in cache between calls can "
          "exceed 100%.\n\n", m->o);
    fputs("| Case | Framework | Time | µs/call | Fewest bytes | GB/s | % of copy ceiling | "
          "TFLOP/s |\n|---|---|---|---:|---:|---:|---:|---:|\n", m->o);
    for (size_t n = 0; n < m->r->n_cases; n++)
        for (size_t k = 0; k < m->r->n_impls; k++)
            roofline_row(m, &m->r->cases[n], dt_format_impl_at(m->r, k));
    fputs("\n", m->o);
}

static const dt_e2e_floor *floor_of(const dt_case *c) {
    return c->derived.present && c->derived.e2e_floor.present ? &c->derived.e2e_floor : NULL;
}

/* The prose above the E2E floor table. */
static void floor_prose(const md *m, double floor_us, int paired, double touch_us) {
    dt_format_buf a;
    if (isfinite(floor_us) && floor_us > 0)
        fprintf(m->o, "Launch+sync floor: **%s µs**, the host time of one "
                "synchronized empty call (CUDA: an empty kernel; CPU: an empty function "
                "call), the least a single-call E2E can take on this machine. ",
                dt_format_num(a, floor_us));
    fprintf(m->o, "Small cases (M·N ≤ %lld): single-call E2E p50 and its multiple of the floor.",
            (long long)m->pol->small_case_max_elems);
    if (paired)
        fprintf(m->o, " Each case measured its own floor: before every pair of single-call "
                "samples the candidate's worker timed one synchronized empty call, primed like "
                "the samples (docs/protocol.md, `floor`); \"floor p50\" is their median and "
                "\"/ floor\" the median of the paired ratios single / floor sample with its "
                "%s%% interval, so that drift between the floor and the samples cancels.",
                ci_pct(a, m));
    if (m->r->floor_unavailable) {
        fputs(" No per-case floor samples: ", m->o);
        text(m, m->r->floor_unavailable);
        fputs(".", m->o);
    }
    fputs("\n\n", m->o);
    if (isfinite(touch_us) && touch_us > 0)
        fprintf(m->o, "Touch floor: **%s µs**, the host time of one synchronized call of a "
                "one-block kernel that reads and writes 512 B (CPU: a function call that "
                "copies 512 B), launch cost plus a real kernel's least memory latency; "
                "the \"/ touch floor\" columns are single-call E2E p50 over it.\n\n",
                dt_format_num(a, touch_us));
    const dt_ceilings_rec *ce = &m->r->env.ceilings;
    if (ce->present && !ce->error &&
        (isfinite(ce->held_floor_single_us) || isfinite(ce->held_touch_floor_single_us) ||
         isfinite(ce->held_floor_batch_us) || isfinite(ce->held_touch_floor_batch_us))) {
        fputs("Device floors for comparison (GPU time, not host time)", m->o);
        held_floors_text(m, ce);
        fputs(".\n\n", m->o);
    }
}

/* The table head; returns the column count. */
static int floor_head(const md *m, int paired, int touch) {
    int ncol = 1;
    fputs("| Case |", m->o);
    if (paired) {
        fputs(" floor p50 µs |", m->o);
        ncol++;
    }
    for (size_t k = 0; k < m->r->n_impls; k++) {
        size_t i = dt_format_impl_at(m->r, k);
        head_impl(m, i, "single p50 µs");
        head_impl(m, i, "/ floor");
        ncol += 2;
        if (touch) {
            head_impl(m, i, "/ touch floor");
            ncol++;
        }
    }
    fputs("\n|---|", m->o);
    for (int k = 1; k < ncol; k++)
        fputs("---:|", m->o);
    fputs("\n", m->o);
    return ncol;
}

static void floor_row(const md *m, const dt_case *c, const dt_e2e_floor *ef, int paired,
                      int touch) {
    dt_format_buf a;
    fputs("| ", m->o);
    text(m, c->id);
    if (paired)
        fprintf(m->o, " | %s", dt_format_num(a, ef->case_floor_us));
    for (size_t k = 0; k < m->r->n_impls; k++) {
        size_t i = dt_format_impl_at(m->r, k);
        const dt_e2e_floor_impl *e = ef->impl && ef->impl[i].present ? &ef->impl[i] : NULL;
        fprintf(m->o, " | %s | ", dt_format_num(a, e ? e->single_us : NAN));
        if (e && e->has_over_floor_ratio)
            interval_cell(m, &e->over_floor_ratio);
        else
            fputs(dt_format_num(a, e ? e->over_floor : NAN), m->o);
        if (touch)
            fprintf(m->o, " | %s", dt_format_num(a, e ? e->over_touch_floor : NAN));
    }
    fputs(" |\n", m->o);
}

/* E2E floor (docs/results-format.md): small cases' single-call E2E over the floor, the
 * case's own paired floor samples when the run took them, else the ceilings' floor. */
static void sec_e2e_floor(const md *m) {
    const dt_ceilings_rec *ce = &m->r->env.ceilings;
    double floor_us = ce->present ? ce->launch_sync_floor_us : NAN;
    double touch_us = ce->present ? ce->launch_sync_touch_floor_us : NAN;
    int paired = 0; /* some case measured its own floor */
    for (size_t n = 0; n < m->r->n_cases; n++) {
        const dt_e2e_floor *ef = floor_of(&m->r->cases[n]);
        paired |= ef && ef->source == DT_FLOOR_PAIRED;
    }
    if (!(isfinite(floor_us) && floor_us > 0) && !paired) {
        if (m->r->floor_unavailable) {
            fputs("## E2E floor\n\nNo floor was measured: no ceilings, and no per-case floor "
                  "samples: ", m->o);
            text(m, m->r->floor_unavailable);
            fputs(".\n\n", m->o);
        }
        return;
    }
    fputs("## E2E floor\n\n", m->o);
    floor_prose(m, floor_us, paired, touch_us);
    int touch = isfinite(touch_us) && touch_us > 0;
    int ncol = floor_head(m, paired, touch);
    size_t rows = 0;
    for (size_t n = 0; n < m->r->n_cases; n++) {
        const dt_case *c = &m->r->cases[n];
        const dt_e2e_floor *ef = floor_of(c);
        if (!ef || !dt_format_case_shown(m->r, c))
            continue;
        floor_row(m, c, ef, paired, touch);
        rows++;
    }
    if (rows == 0) {
        fputs("| no small valid case |", m->o);
        for (int k = 1; k < ncol; k++)
            fputs(" — |", m->o);
        fputs("\n", m->o);
    }
    fputs("\n", m->o);
}

/* ---- failures ---- */

/* A real as jansson's compact dump writes it (%.17g, ".0" when integral, exponent
 * without '+' or leading zeros), or null. */
static void json_real_text(FILE *o, double x) {
    char buf[64];
    if (!isfinite(x)) {
        fputs("null", o);
        return;
    }
    int n = snprintf(buf, sizeof buf - 3, "%.17g", x);
    if (!strchr(buf, '.') && !strchr(buf, 'e'))
        memcpy(buf + n, ".0", 3);
    char *e = strchr(buf, 'e');
    if (e) {
        char *start = e + 1, *end = e + 2;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start)
            memmove(start, end, strlen(end) + 1);
    }
    fputs(buf, o);
}

static void json_int_text(FILE *o, int64_t x) {
    if (have_i64(x))
        fprintf(o, "%lld", (long long)x);
    else
        fputs("null", o);
}


/* The oracle's first failure as the old report printed it: the JSON object with sorted
 * keys, compact (then escaped for Markdown like any text). */
static void first_failure_text(const md *m, const dt_check_oracle *orc) {
    char *buf = NULL;
    size_t n = 0;
    FILE *j = open_memstream(&buf, &n);
    if (!j)
        return;
    fputs("{\"bound\":", j);
    json_real_text(j, orc->first_bound);
    fputs(",\"col\":", j);
    json_int_text(j, orc->first_col);
    fputs(",\"ref\":", j);
    json_real_text(j, orc->first_ref);
    fputs(",\"row\":", j);
    json_int_text(j, orc->first_row);
    fputs(",\"text\":", j);
    if (orc->first_text)
        dt_json_string_write(j, orc->first_text);
    else
        fputs("null", j);
    fputs(",\"value\":", j);
    json_real_text(j, orc->first_value);
    fputc('}', j);
    if (fclose(j) == 0)
        text(m, buf);
    free(buf);
}

static void failure_checks(const md *m, const dt_case_impl *ci) {
    for (size_t j = 0; j < ci->n_checks; j++) {
        const dt_check *ck = &ci->checks[j];
        if (ck->ok)
            continue;
        fputs("- check ", m->o);
        text(m, ck->when ? ck->when : "?");
        fputs(" failed", m->o);
        const char *fp = ck->arena.first_problem ? ck->arena.first_problem : "";
        if (*fp) {
            fputs(": arena: ", m->o);
            text(m, fp);
        }
        const dt_check_oracle *orc = &ck->oracle;
        if (!orc->ok && (have_i64(orc->elements) || have_i64(orc->failures))) { /* recorded */
            fprintf(m->o, "; oracle: %lld failing elements",
                    (long long)(have_i64(orc->failures) ? orc->failures : 0));
            if (orc->has_first_failure) {
                fputs(", first: ", m->o);
                first_failure_text(m, orc);
            }
        }
        fputs("\n", m->o);
    }
}

static size_t bad_checks(const dt_case_impl *ci) {
    size_t n = 0;
    for (size_t j = 0; ci->present && j < ci->n_checks; j++)
        n += !ci->checks[j].ok;
    return n;
}

/* One implementation of one case that failed or has a failed check. */
static void failure_impl(const md *m, const dt_case *c, size_t i) {
    const dt_case_impl *ci = &c->impl[i];
    size_t nbad = bad_checks(ci);
    fputs("### ", m->o);
    text(m, c->id);
    fputs(" — ", m->o);
    text(m, m->r->impls[i].id);
    fputs("\n\nStatus: ", m->o);
    text(m, ci->present ? dt_impl_status_name(ci->status) : "missing");
    if (ci->present && ci->error) {
        fputs(". Error: ", m->o);
        text(m, ci->error);
    }
    fputs("\n\n", m->o);
    if (ci->present)
        failure_checks(m, ci);
    if (nbad)
        fputs("\n", m->o);
    const char *tail = ci->present && ci->stderr_tail ? ci->stderr_tail : "";
    if (*tail) {
        fputs("stderr tail:\n\n", m->o);
        fence(m, tail);
        fputs("\n", m->o);
        fputs(tail, m->o);
        if (tail[strlen(tail) - 1] != '\n')
            fputs("\n", m->o);
        fence(m, tail);
        fputs("\n\n", m->o);
    }
}

static int impl_failed(const dt_case_impl *ci) {
    return !ci->present || ci->status != DT_IMPL_OK || bad_checks(ci) > 0;
}

static void sec_failures(const md *m) {
    fputs("## Failures\n\n", m->o);
    size_t nfail = 0;
    for (size_t n = 0; n < m->r->n_cases; n++)
        for (size_t k = 0; k < m->r->n_impls; k++) {
            size_t i = dt_format_impl_at(m->r, k);
            if (impl_failed(&m->r->cases[n].impl[i])) {
                failure_impl(m, &m->r->cases[n], i);
                nfail++;
            }
        }
    for (size_t n = 0; n < m->r->n_cases; n++) {
        const dt_case *c = &m->r->cases[n];
        if (dt_format_case_shown(m->r, c))
            continue;
        int listed = 0;
        for (size_t i = 0; i < m->r->n_impls; i++)
            listed |= impl_failed(&c->impl[i]);
        if (!listed) {
            nfail++;
            fputs("### ", m->o);
            text(m, c->id);
            fputs("\n\nThe case is marked invalid; no implementation recorded a failure.\n\n", m->o);
        }
    }
    if (nfail == 0)
        fputs("None.\n\n", m->o);
}

/* ---- what the numbers do not establish ---- */

/* "±2%" for a band symmetric around 1, else "[0.98, 1.03]". */
static void equiv_band(const md *m) {
    dt_format_buf a, b;
    double lo = m->pol->equiv_low, hi = m->pol->equiv_high;
    if (fabs((1 - lo) - (hi - 1)) < 1e-12)
        fprintf(m->o, "±%s%%", dt_format_const(a, 100 * (hi - 1)));
    else
        fprintf(m->o, "[%s, %s]", dt_format_const(a, lo), dt_format_const(b, hi));
}

static void sec_limits(const md *m) {
    int device = 0;
    for (int s = DT_SCOPE_CONTROL_BATCH; s < DT_SCOPE_COUNT; s++)
        device |= any_scope(m->r, (dt_scope)s);
    dt_format_buf b;
    fputs("## What these numbers do not establish\n\n"
          "- **Host E2E** is the time a caller waits per call: it includes Python or C "
          "binding, argument checks, launch and queueing overhead and synchronization, so "
          "it is not kernel time. Batch p50 amortizes completion over R calls; single "
          "includes one full synchronization per call.\n", m->o);
    if (device)
        fputs("- **Device control** is the GPU interval between two stream events around "
              "the calls in a held stream: it includes every kernel, copy and gap between "
              "kernels the GPU itself leaves, so it is not pure kernel time either, and it "
              "does not include launch cost. **Dispatch** is the same interval unheld: it "
              "includes the host's launch gaps, so it is not GPU work time.\n"
              "- **Kernel probe** numbers come from CUPTI, which perturbs what it measures; "
              "they are diagnostics shown next to the control, with the measured "
              "probe/control ratio, and never replace or correct it.\n", m->o);
    if (device && m->r->settings.held_windows)
        fprintf(m->o, "- **Held verdicts** (control and probe scopes) read the ratio's interval "
                "widened by the process band (\"band ×1.12\" beside the verdict where it is "
                "0.5%% or more): each implementation's worker process moves every held kernel "
                "launch by up to ±%.2f µs, which no interval of one run can show "
                "(docs/results-format.md, \"Process band of a held verdict\").\n",
                DT_HELD_PROCESS_LAUNCH_US / 2);
    fprintf(m->o, "- **Ratios** are medians of paired candidate/baseline ratios (pairs share a "
            "round and index), not ratios of means or of medians; the %s%% interval is a "
            "bootstrap over pairs and only covers sample-to-sample noise of this run.\n"
            "- **One machine, one run**: clocks, thermals, drivers, library versions and "
            "other load are not varied; another machine or another day can rank the "
            "implementations differently. \"indistinguishable\" means the interval contains "
            "1 or stays within ", ci_pct(b, m));
    equiv_band(m);
    fputs(", not that the implementations are equal.\n"
          "- Correctness is checked against an FP64 oracle on the deterministic inputs "
          "listed in results.json, not on every possible input.\n", m->o);
}

/* "## Energy (NVML)" (issue 15; only when some case recorded an energy block): per case
 * and framework joules per call and average power over its e2e batch windows, or one
 * line with the reason when no implementation has a reading (all share it). */
static void sec_energy(const md *m) {
    const dt_record *r = m->r;
    const char *reason = NULL;
    int any = 0, values = 0;
    for (size_t n = 0; n < r->n_cases; n++)
        for (size_t i = 0; i < r->n_impls; i++) {
            const dt_case_impl *ci = &r->cases[n].impl[i];
            if (!ci->present || !ci->has_energy) continue;
            any = 1;
            values |= isfinite(ci->energy_j_per_call);
            if (!reason && ci->energy_reason) reason = ci->energy_reason;
        }
    if (!any) return;
    fputs("## Energy (NVML)\n\n", m->o);
    if (!values) {
        fputs("Not measured: ", m->o);
        text(m, reason ? reason : "no reading");
        fputs(".\n\n", m->o);
        return;
    }
    fputs("The GPU's total-energy counter read around each host E2E batch sample, summed over "
          "the samples of every round and divided by their calls (priming included); the "
          "counter is the whole GPU's.\n\n| Case | Framework | mJ per call | Average power W "
          "| Window s |\n|---|---|---:|---:|---:|\n", m->o);
    dt_format_buf a, b, c;
    for (size_t n = 0; n < r->n_cases; n++)
        for (size_t k = 0; k < r->n_impls; k++) {
            size_t i = dt_format_impl_at(r, k);
            const dt_case_impl *ci = &r->cases[n].impl[i];
            if (!ci->present || !ci->has_energy) continue;
            row_open(m, &r->cases[n], i);
            if (isfinite(ci->energy_j_per_call)) {
                fprintf(m->o, " | %s | %s | %s |\n", dt_format_num(a, 1e3 * ci->energy_j_per_call),
                        dt_format_num(b, ci->avg_power_w), dt_format_num(c, ci->energy_window_s));
            } else {
                fputs(" | — | — | — (", m->o);
                text(m, ci->energy_reason ? ci->energy_reason : "no reading");
                fputs(") |\n", m->o);
            }
        }
    fputs("\n", m->o);
}

/* ---- entry ---- */

static void write_all(const md *m) {
    sec_title(m);
    sec_assessment(m);
    what_impls(m);
    what_settings(m);
    what_counts(m);
    what_machine(m);
    dt_format_devices_md(m->o, m->r);
    sec_main(m);
    sec_plots(m);
    sec_setup(m);
    sec_correctness(m);
    sec_anti_cheat(m);
    sec_control(m);
    dt_format_md_graph_cache(m->o, m->r); /* issue 13: graph replay, cache state */
    sec_probe(m);
    dt_format_decomp_md(m->o, m->r);
    sec_clocks(m);
    sec_energy(m);
    sec_roofline(m);
    sec_e2e_floor(m);
    sec_failures(m);
    sec_assessment_details(m);
    sec_limits(m);
}

dt_status dt_format_md(const dt_record *r, char **text, size_t *len, dt_err *err) {
    *text = NULL;
    *len = 0;
    if (r->n_impls < 2 || r->impls[0].role != DT_ROLE_BASELINE)
        return dt_fail(err, DT_EINVAL, "results.md: the run needs a baseline and a candidate "
                                       "(%zu implementations)", r->n_impls);
    char *buf = NULL;
    size_t n = 0;
    FILE *o = open_memstream(&buf, &n);
    if (!o)
        return dt_fail(err, DT_EIO, "results.md: cannot open a memory stream");
    md m = {.o = o, .r = r, .pol = &r->derived.policy};
    write_all(&m);
    int bad = ferror(o);
    if (fclose(o) != 0 || bad) {
        free(buf);
        return dt_fail(err, DT_EIO, "results.md: memory stream failed");
    }
    *text = buf;
    *len = n;
    return DT_OK;
}
