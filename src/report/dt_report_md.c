/* dt_report_md.c — writes results.md from a derived results object. Reads only; the
 * section order and wording are specified in docs/results-format.md. */
#define _GNU_SOURCE
#include "report/dt_report_md.h"
#include "report/dt_report_util.h"

#include "report/dt_derive.h"
#include "report/dt_plot.h"

#include <math.h>
#include <string.h>

static const json_t *dscope(const json_t *cas, const char *scope) {
    return dt_jget(dt_jget(dt_jget(cas, "derived"), "scopes"), scope);
}

/* derived.scopes.<scope>.<fw>.<stat> */
static double dstat(const json_t *cas, const char *scope, const char *fw, const char *stat) {
    return dt_jnum(dt_jget(dscope(cas, scope), fw), stat);
}

/* ---- formatting (dt_fnum, dt_fratio: report/dt_report_util.h) ---- */

static const char *fpct(dt_numbuf b, double x) {
    if (!isfinite(x))
        snprintf(b, sizeof(dt_numbuf), "—");
    else
        snprintf(b, sizeof(dt_numbuf), "%.1f%%", 100 * x);
    return b;
}

/* Text escaped for Markdown (table cells and prose): no HTML, no emphasis, no cell
 * breaks, no line breaks. */
static void md_text(FILE *o, const char *s) {
    if (!s)
        return;
    for (; *s; s++) {
        switch (*s) {
        case '|': case '\\': case '*': case '_': case '`': case '[': case ']': case '#':
        case '~':
            fputc('\\', o);
            fputc(*s, o);
            break;
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '\n': case '\r': case '\t': fputc(' ', o); break;
        default: fputc(*s, o);
        }
    }
}

/* "0.602 [0.581, 0.623]" from a derived interval object (median, ci_low, ci_high,
 * pairs), or "—". */
static void interval_cell(FILE *o, const json_t *r) {
    dt_numbuf a, b, c;
    if (!r) {
        fputs("—", o);
        return;
    }
    double lo = dt_jnum(r, "ci_low"), hi = dt_jnum(r, "ci_high");
    if (isfinite(lo) && isfinite(hi))
        fprintf(o, "%s [%s, %s]", dt_fratio(a, dt_jnum(r, "median")), dt_fratio(b, lo), dt_fratio(c, hi));
    else
        fprintf(o, "%s [no interval: %lld pairs]", dt_fratio(a, dt_jnum(r, "median")),
                (long long)json_integer_value(dt_jget(r, "pairs")));
}

/* The derived ratio of a scope. */
static void ratio_cell(FILE *o, const json_t *so) { interval_cell(o, dt_jget(so, "ratio")); }

static void verdict_cell(FILE *o, const json_t *so) {
    const char *v = dt_jstr(so, "verdict", NULL);
    if (!v)
        fputs("—", o);
    else if (strcmp(v, "faster") == 0 || strcmp(v, "slower") == 0)
        fprintf(o, "**%s**", v);
    else
        fputs(v, o);
}

/* A code fence longer than any backtick run in s. */
static void fence(FILE *o, const char *s) {
    size_t run = 0, best = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    for (size_t i = 0; i < (best < 3 ? 3 : best + 1); i++)
        fputc('`', o);
}

static int any_scope(const json_t *cases, const char *scope) {
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) if (dscope(c, scope)) return 1;
    return 0;
}

/* ---- sections ---- */

static void sec_assessment(FILE *o, const json_t *r) {
    const json_t *as = dt_jget(dt_jget(r, "derived"), "assessment");
    fprintf(o, "Assessment: **%s**", dt_jstr(as, "level", "unassessed"));
    const json_t *reasons = dt_jget(as, "reasons");
    size_t i;
    json_t *s;
    json_array_foreach(reasons, i, s) {
        fputs(i == 0 ? " — " : "; ", o);
        md_text(o, json_string_value(s));
    }
    fputs("\n\n", o);
}

static void sec_what(FILE *o, const json_t *r, const char *cand, const char *base) {
    const json_t *st = dt_jget(r, "settings");
    dt_numbuf a, b;
    fputs("## What was run\n\n", o);
    fputs("Backend **", o);
    md_text(o, dt_jstr(st, "backend", "unknown"));
    fputs("**", o);
    if (dt_jget(st, "backend_choice")) {
        fputs(" (", o);
        md_text(o, dt_jstr(st, "backend_choice", ""));
        fputs(")", o);
    }
    fputs(". ", o);
    const char *ids[2] = {cand, base}, *roles[2] = {"Candidate", "baseline"};
    for (int f = 0; f < 2; f++) {
        const json_t *fw = dt_framework(r, ids[f]);
        fprintf(o, "%s **", roles[f]);
        md_text(o, ids[f]);
        fputs("** = ", o);
        md_text(o, dt_jstr(fw, "framework", "?"));
        fputs(" ", o);
        md_text(o, dt_jstr(fw, "framework_version", "?"));
        fputs(f == 0 ? "; " : ". ", o);
    }
    fputs("Ratios are candidate/baseline of paired samples (< 1: the candidate is faster).\n\n",
          o);
    const json_t *v;
    fputs("Settings:", o);
    if ((v = dt_jget(st, "samples")) && json_is_integer(v))
        fprintf(o, " %lld samples per scope,", (long long)json_integer_value(v));
    if ((v = dt_jget(st, "rounds")) && json_is_integer(v))
        fprintf(o, " %lld round%s,", (long long)json_integer_value(v),
                json_integer_value(v) == 1 ? "" : "s");
    if (isfinite(dt_jnum(st, "sample_ms")))
        fprintf(o, " sample %s ms,", dt_fnum(a, dt_jnum(st, "sample_ms")));
    if (isfinite(dt_jnum(st, "warmup_ms")))
        fprintf(o, " warmup %s ms,", dt_fnum(b, dt_jnum(st, "warmup_ms")));
    if ((v = dt_jget(st, "seed")) && json_is_integer(v))
        fprintf(o, " seed %lld,", (long long)json_integer_value(v));
    if ((v = dt_jget(st, "threads")) && json_is_integer(v))
        fprintf(o, " %lld thread%s,", (long long)json_integer_value(v),
                json_integer_value(v) == 1 ? "" : "s");
    fprintf(o, " input views %s, device timing %s, quick %s",
            json_is_true(dt_jget(st, "input_views")) ? "on (strided)" : "off (contiguous)",
            json_is_true(dt_jget(st, "device_timing")) ? "on" : "off",
            json_is_true(dt_jget(st, "quick")) ? "on" : "off");
    const json_t *bs = dt_jget(st, "bootstrap");
    unsigned res;
    uint64_t seed;
    dt_derive_bootstrap_settings(r, &res, &seed);
    fprintf(o, "; bootstrap %u resamples, seed %llu%s.\n\n", res, (unsigned long long)seed,
            bs ? "" : " (defaults)");

    const json_t *cnt = dt_jget(dt_jget(r, "derived"), "counts");
    if (cnt)
        fprintf(o,
                "Cases: %lld (%lld valid). E2E batch verdicts: %lld faster, %lld slower, "
                "%lld indistinguishable, %lld insufficient, %lld invalid.\n\n",
                (long long)json_integer_value(dt_jget(cnt, "cases")),
                (long long)json_integer_value(dt_jget(cnt, "valid")),
                (long long)json_integer_value(dt_jget(cnt, "faster")),
                (long long)json_integer_value(dt_jget(cnt, "slower")),
                (long long)json_integer_value(dt_jget(cnt, "indistinguishable")),
                (long long)json_integer_value(dt_jget(cnt, "insufficient")),
                (long long)json_integer_value(dt_jget(cnt, "invalid")));

    const json_t *env = dt_jget(r, "environment"), *host = dt_jget(env, "host"), *gpu = dt_jget(env, "gpu");
    fputs("Machine: ", o);
    md_text(o, dt_jstr(host, "cpu", "unknown CPU"));
    if (json_is_integer(dt_jget(host, "cores")))
        fprintf(o, ", %lld cores", (long long)json_integer_value(dt_jget(host, "cores")));
    if (dt_jget(host, "os")) {
        fputs(", ", o);
        md_text(o, dt_jstr(host, "os", ""));
    }
    fputs("; GPU: ", o);
    if (json_is_object(gpu)) {
        md_text(o, dt_jstr(gpu, "name", "unknown"));
        if (dt_jget(gpu, "driver")) {
            fputs(", driver ", o);
            md_text(o, dt_jstr(gpu, "driver", ""));
        }
    } else {
        fputs("none", o);
    }
    fputs(".", o);
    const json_t *tool = dt_jget(r, "tool");
    if (tool) {
        fputs(" Tool: ", o);
        md_text(o, dt_jstr(tool, "name", "dualtime"));
        fputs(" ", o);
        md_text(o, dt_jstr(tool, "version", "?"));
        fputs(" (git ", o);
        md_text(o, dt_jstr(tool, "git_revision", "unknown"));
        fputs(json_is_true(dt_jget(tool, "git_dirty")) ? ", dirty tree)" : ")", o);
        fputs(".", o);
    }
    if (dt_jget(r, "started_at")) {
        fputs(" Started ", o);
        md_text(o, dt_jstr(r, "started_at", ""));
        if (dt_jget(r, "finished_at")) {
            fputs(", finished ", o);
            md_text(o, dt_jstr(r, "finished_at", ""));
        }
        fputs(".", o);
    }
    if (!json_is_true(dt_jget(r, "complete")))
        fputs(" **The run is incomplete**: only the cases below were finished.", o);
    fputs("\n\n", o);
    const json_t *cl = dt_jget(r, "command_line");
    if (json_array_size(cl) > 0) {
        fputs("Command line: ", o);
        size_t i;
        json_t *s;
        json_array_foreach(cl, i, s) {
            if (i)
                fputc(' ', o);
            md_text(o, json_string_value(s));
        }
        fputs("\n\n", o);
    }
}

static void head_fw(FILE *o, const char *fw, const char *what) {
    fputs(" ", o);
    md_text(o, fw);
    fprintf(o, " %s |", what);
}

static void sec_main(FILE *o, const json_t *cases, const char *cand, const char *base) {
    fputs("## Host end-to-end (µs per call)\n\n| Case |", o);
    head_fw(o, cand, "E2E batch p50");
    head_fw(o, base, "p50");
    head_fw(o, cand, "p90");
    head_fw(o, base, "p90");
    head_fw(o, cand, "single p50");
    head_fw(o, base, "single p50");
    fputs(" Ratio [95% CI] | Verdict |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n", o);
    size_t i;
    json_t *c;
    dt_numbuf b;
    json_array_foreach(cases, i, c) {
        fputs("| ", o);
        md_text(o, dt_jstr(c, "id", "?"));
        if (!dt_case_shown(c)) {
            fputs(" | — | — | — | — | — | — | FAILED | invalid |\n", o);
            continue;
        }
        fprintf(o, " | %s", dt_fnum(b, dstat(c, "e2e_batch", cand, "p50")));
        fprintf(o, " | %s", dt_fnum(b, dstat(c, "e2e_batch", base, "p50")));
        fprintf(o, " | %s", dt_fnum(b, dstat(c, "e2e_batch", cand, "p90")));
        fprintf(o, " | %s", dt_fnum(b, dstat(c, "e2e_batch", base, "p90")));
        fprintf(o, " | %s", dt_fnum(b, dstat(c, "e2e_single", cand, "p50")));
        fprintf(o, " | %s | ", dt_fnum(b, dstat(c, "e2e_single", base, "p50")));
        ratio_cell(o, dscope(c, "e2e_batch"));
        fputs(" | ", o);
        verdict_cell(o, dscope(c, "e2e_batch"));
        fputs(" |\n", o);
    }
    fputs("\nThe ratio and verdict are for E2E batch; single-call ratios are in results.json "
          "(cases[].derived.scopes.e2e_single).\n\n", o);
}

static void sec_setup(FILE *o, const json_t *cases, const char *ids[2]) {
    fputs("## Setup and cold-call phases (ms)\n\n"
          "| Case | Framework | Compile | Alloc | Upload | Cold call | Download | Warmup | "
          "Batch R |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n", o);
    static const char *const phases[] = {"compile", "alloc", "upload", "cold_call", "download"};
    size_t i;
    json_t *c;
    dt_numbuf b;
    json_array_foreach(cases, i, c) {
        for (int f = 0; f < 2; f++) {
            const json_t *impl = dt_jget(dt_jget(c, "impl"), ids[f]);
            const json_t *sm = dt_jget(impl, "setup_ms");
            fputs("| ", o);
            md_text(o, dt_jstr(c, "id", "?"));
            fputs(" | ", o);
            md_text(o, ids[f]);
            for (size_t p = 0; p < 5; p++)
                fprintf(o, " | %s", dt_fnum(b, dt_jnum(sm, phases[p])));
            const json_t *wu = dt_jget(impl, "warmup");
            fprintf(o, " | %s", dt_fnum(b, dt_jnum(wu, "ms")));
            if (json_is_integer(dt_jget(wu, "calls")))
                fprintf(o, " (%lld calls)", (long long)json_integer_value(dt_jget(wu, "calls")));
            const json_t *reps = dt_jget(dt_jget(impl, "calibration"), "reps");
            if (json_is_integer(reps))
                fprintf(o, " | %lld |\n", (long long)json_integer_value(reps));
            else
                fputs(" | — |\n", o);
        }
    }
    fputs("\n", o);
}

static void sec_correctness(FILE *o, const json_t *cases, const char *ids[2]) {
    fputs("## Correctness (FP64 oracle)\n\n"
          "| Case | Framework | Checks passed | Max abs error | Budget used | Tolerance | "
          "Output policy |\n|---|---|---:|---:|---:|---|---|\n", o);
    size_t i, j;
    json_t *c, *ck;
    dt_numbuf b, b2, b3;
    json_array_foreach(cases, i, c) {
        const json_t *tol = dt_jget(c, "tolerance");
        for (int f = 0; f < 2; f++) {
            const json_t *impl = dt_jget(dt_jget(c, "impl"), ids[f]);
            double maxerr = NAN, budget = NAN;
            size_t nck = 0, nok = 0;
            json_array_foreach(dt_jget(impl, "checks"), j, ck) {
                nck++;
                nok += json_is_true(dt_jget(ck, "ok"));
                const json_t *orc = dt_jget(ck, "oracle");
                double e = dt_jnum(orc, "max_abs_error"), u = dt_jnum(orc, "max_budget_used");
                if (isfinite(e) && (!isfinite(maxerr) || e > maxerr))
                    maxerr = e;
                if (isfinite(u) && (!isfinite(budget) || u > budget))
                    budget = u;
            }
            fputs("| ", o);
            md_text(o, dt_jstr(c, "id", "?"));
            fputs(" | ", o);
            md_text(o, ids[f]);
            fprintf(o, " | %zu/%zu%s | %s | %s | ", nok, nck, nok < nck || nck == 0 ? " ✗" : "",
                    dt_fnum(b, maxerr), fpct(b2, budget));
            if (tol) {
                fprintf(o, "atol %s, rtol %s", dt_fnum(b, dt_jnum(tol, "atol")),
                        dt_fnum(b3, dt_jnum(tol, "rtol")));
                if (dt_jget(tol, "scale")) {
                    fputs(", scale ", o);
                    md_text(o, dt_jstr(tol, "scale", ""));
                }
            } else {
                fputs("—", o);
            }
            fputs(" | ", o);
            md_text(o, dt_jstr(impl, "output_policy", "—"));
            fputs(" |\n", o);
        }
    }
    fputs("\nBudget used = max over elements of |out − ref| / (atol + rtol·scale); 100% is "
          "the limit.\n\n", o);
}

static void sec_device(FILE *o, const json_t *cases, const char *cand, const char *base) {
    const char *ids[2] = {cand, base};
    int has_ctl = any_scope(cases, "control_batch") || any_scope(cases, "control_single");
    int has_probe = any_scope(cases, "probe_batch") || any_scope(cases, "probe_single");
    size_t i;
    json_t *c;
    dt_numbuf b, b2;
    if (has_ctl) {
        fputs("## Device control (µs per call, stream events)\n\n"
              "| Case | Framework | GPU batch µs/call | GPU single µs | E2E batch µs/call | "
              "E2E single µs | Probe/control batch |\n|---|---|---:|---:|---:|---:|---:|\n", o);
        json_array_foreach(cases, i, c) {
            for (int f = 0; f < 2; f++) {
                fputs("| ", o);
                md_text(o, dt_jstr(c, "id", "?"));
                fputs(" | ", o);
                md_text(o, ids[f]);
                if (!dt_case_shown(c)) {
                    fputs(" | FAILED | — | — | — | — |\n", o);
                    continue;
                }
                fprintf(o, " | %s", dt_fnum(b, dstat(c, "control_batch", ids[f], "p50")));
                fprintf(o, " | %s", dt_fnum(b, dstat(c, "control_single", ids[f], "p50")));
                fprintf(o, " | %s", dt_fnum(b, dstat(c, "e2e_batch", ids[f], "p50")));
                fprintf(o, " | %s", dt_fnum(b, dstat(c, "e2e_single", ids[f], "p50")));
                const json_t *poc = dt_jget(dt_jget(dscope(c, "probe_batch"), "probe_over_control"), ids[f]);
                fprintf(o, " | %s |\n", dt_fratio(b2, dt_jnum(poc, "median")));
            }
        }
        fputs("\n| Case | GPU batch ratio [95% CI] | Verdict | GPU single ratio [95% CI] | "
              "Verdict |\n|---|---|---|---|---|\n", o);
        json_array_foreach(cases, i, c) {
            fputs("| ", o);
            md_text(o, dt_jstr(c, "id", "?"));
            if (!dt_case_shown(c)) {
                fputs(" | FAILED | invalid | FAILED | invalid |\n", o);
                continue;
            }
            fputs(" | ", o);
            ratio_cell(o, dscope(c, "control_batch"));
            fputs(" | ", o);
            verdict_cell(o, dscope(c, "control_batch"));
            fputs(" | ", o);
            ratio_cell(o, dscope(c, "control_single"));
            fputs(" | ", o);
            verdict_cell(o, dscope(c, "control_single"));
            fputs(" |\n", o);
        }
        fputs("\n", o);
    }
    if (has_probe) {
        fputs("## Kernel probe diagnostics (CUPTI; µs per call)\n\n"
              "| Case | Framework | Probe stream µs/call | Kernel sum | Kernel span | "
              "Kernels/call | Probe/control batch | Probe/control single |\n"
              "|---|---|---:|---:|---:|---:|---:|---:|\n", o);
        json_array_foreach(cases, i, c) {
            for (int f = 0; f < 2; f++) {
                const json_t *pb = dt_jget(dt_jget(dscope(c, "probe_batch"), "probe"), ids[f]);
                fputs("| ", o);
                md_text(o, dt_jstr(c, "id", "?"));
                fputs(" | ", o);
                md_text(o, ids[f]);
                if (!dt_case_shown(c)) {
                    fputs(" | FAILED | — | — | — | — | — |\n", o);
                    continue;
                }
                fprintf(o, " | %s", dt_fnum(b, dstat(c, "probe_batch", ids[f], "p50")));
                fprintf(o, " | %s", dt_fnum(b, dt_jnum(pb, "kernel_sum_us_p50")));
                fprintf(o, " | %s", dt_fnum(b, dt_jnum(pb, "kernel_span_us_p50")));
                fprintf(o, " | %s", dt_fnum(b, dt_jnum(pb, "kernels_per_call_p50")));
                const json_t *pcb = dt_jget(dt_jget(dscope(c, "probe_batch"), "probe_over_control"), ids[f]);
                const json_t *pcs = dt_jget(dt_jget(dscope(c, "probe_single"), "probe_over_control"), ids[f]);
                fprintf(o, " | %s", dt_fratio(b, dt_jnum(pcb, "median")));
                fprintf(o, " | %s |\n", dt_fratio(b2, dt_jnum(pcs, "median")));
            }
        }
        fputs("\n### Per-kernel breakdown (probe batch, p50 per call)\n\n"
              "| Case | Framework | Kernel | Launches/call | µs/call |\n"
              "|---|---|---|---:|---:|\n", o);
        size_t rows = 0, j;
        json_t *k;
        json_array_foreach(cases, i, c) {
            for (int f = 0; f < 2 && dt_case_shown(c); f++) {
                const json_t *pb = dt_jget(dt_jget(dscope(c, "probe_batch"), "probe"), ids[f]);
                json_array_foreach(dt_jget(pb, "kernels"), j, k) {
                    fputs("| ", o);
                    md_text(o, dt_jstr(c, "id", "?"));
                    fputs(" | ", o);
                    md_text(o, ids[f]);
                    fputs(" | ", o);
                    md_text(o, dt_jstr(k, "name", "?"));
                    fprintf(o, " | %s | %s |\n", dt_fnum(b, dt_jnum(k, "per_call_p50")),
                            dt_fnum(b2, dt_jnum(k, "us_p50")));
                    rows++;
                }
            }
        }
        if (rows == 0)
            fputs("| — | — | no kernel records | — | — |\n", o);
        fputs("\nProbe/control is the median over pairs (same round and index) of probe "
              "stream time / control stream time: the observer effect of the probe. It is "
              "never used to correct a number.\n\n", o);
    }
}

/* "12.3 KiB" / "4.00 MiB" / "512 B". */
static const char *fbytes(dt_numbuf b, double x) {
    dt_numbuf t;
    if (!isfinite(x))
        snprintf(b, sizeof(dt_numbuf), "—");
    else if (x >= 1048576.0)
        snprintf(b, sizeof(dt_numbuf), "%s MiB", dt_fnum(t, x / 1048576.0));
    else if (x >= 1024.0)
        snprintf(b, sizeof(dt_numbuf), "%s KiB", dt_fnum(t, x / 1024.0));
    else
        snprintf(b, sizeof(dt_numbuf), "%.0f B", x);
    return b;
}

/* "12.3%" with about three significant digits, or "—". */
static const char *fpct_num(dt_numbuf b, double pct) {
    dt_numbuf t;
    if (!isfinite(pct))
        snprintf(b, sizeof(dt_numbuf), "—");
    else
        snprintf(b, sizeof(dt_numbuf), "%s%%", dt_fnum(t, pct));
    return b;
}

/* Rooflines: achieved bandwidth / FLOP rate against the ceilings the run measured
 * (environment.ceilings; numbers from cases[].derived.roofline). Absent when no copy
 * ceiling was measured. */
static void sec_roofline(FILE *o, const json_t *r, const json_t *cases, const char *ids[2]) {
    const json_t *ceil = dt_jget(dt_jget(r, "environment"), "ceilings");
    double copy = dt_jnum(ceil, "copy_gbps");
    if (!(isfinite(copy) && copy > 0))
        return;
    dt_numbuf a, b, c;
    double floor_us = dt_jnum(ceil, "launch_sync_floor_us");
    fputs("## Rooflines (against ceilings measured in this run)\n\n", o);
    fputs("Ceilings measured once at the start of the run", o);
    if (dt_jget(ceil, "backend")) {
        fputs(" on the ", o);
        md_text(o, dt_jstr(ceil, "backend", ""));
        fputs(" backend", o);
    }
    fprintf(o, ": copy bandwidth **%s GB/s** (bytes read + bytes written", dt_fnum(a, copy));
    if (isfinite(dt_jnum(ceil, "copy_bytes")))
        fprintf(o, ", copies of %s", fbytes(b, dt_jnum(ceil, "copy_bytes")));
    fprintf(o, "); launch+sync floor **%s µs**; queued launch %s µs per call", dt_fnum(a, floor_us),
            dt_fnum(c, dt_jnum(ceil, "launch_queue_floor_us")));
    double touch_us = dt_jnum(ceil, "launch_sync_touch_floor_us"); /* optional */
    if (isfinite(touch_us) && touch_us > 0)
        fprintf(o, "; touch floor, a one-block kernel that reads and writes 512 B (CPU: a "
                   "call that copies 512 B): **%s µs**",
                dt_fnum(a, touch_us));
    fputs(".", o);
    if (dt_jget(ceil, "method")) {
        fputs(" Method: ", o);
        md_text(o, dt_jstr(ceil, "method", ""));
        fputs(".", o);
    }
    fputs("\n\nAchieved GB/s = the fewest bytes the op must move (every input read once, the "
          "output written once) / time per call; TFLOP/s = the op's FLOPs / time per call. "
          "Time: the **device control batch p50** (stream events) where the case has one, "
          "else the **host E2E batch p50**; the Time column says which. gemm shows TFLOP/s "
          "only: no FLOP ceiling is measured. The copy ceiling is measured on buffers far "
          "larger than the caches, so a case whose data stay in cache between calls can "
          "exceed 100%.\n\n", o);
    fputs("| Case | Framework | Time | µs/call | Fewest bytes | GB/s | % of copy ceiling | "
          "TFLOP/s |\n|---|---|---|---:|---:|---:|---:|---:|\n", o);
    size_t i;
    json_t *cs;
    json_array_foreach(cases, i, cs) {
        const json_t *rl = dt_jget(dt_jget(cs, "derived"), "roofline");
        for (int f = 0; f < 2; f++) {
            const json_t *e = dt_jget(dt_jget(rl, "impl"), ids[f]);
            fputs("| ", o);
            md_text(o, dt_jstr(cs, "id", "?"));
            fputs(" | ", o);
            md_text(o, ids[f]);
            if (!dt_case_shown(cs)) {
                fputs(" | FAILED | — | — | — | — | — |\n", o);
                continue;
            }
            if (!e) {
                fputs(" | — | — | — | — | — | — |\n", o);
                continue;
            }
            const char *scope = dt_jstr(e, "scope", "");
            int compute = strcmp(dt_jstr(rl, "bound", ""), "compute") == 0;
            fprintf(o, " | %s | %s | %s",
                    strcmp(scope, "control_batch") == 0 ? "device control batch"
                    : strcmp(scope, "e2e_batch") == 0  ? "host E2E batch"
                                                       : "?",
                    dt_fnum(a, dt_jnum(e, "us")), fbytes(b, dt_jnum(rl, "min_bytes")));
            if (compute)
                fprintf(o, " | — | — | %s |\n", dt_fnum(a, dt_jnum(e, "tflops")));
            else
                fprintf(o, " | %s | %s | — |\n", dt_fnum(a, dt_jnum(e, "gbps")),
                        fpct_num(b, dt_jnum(e, "copy_pct")));
        }
    }
    fputs("\n", o);
}

/* E2E floor (docs/results-format.md): small cases' single-call E2E over the floor, the
 * case's own paired floor samples when the run took them, else the ceilings' floor. */
static void sec_e2e_floor(FILE *o, const json_t *r, const json_t *cases, const char *ids[2]) {
    const json_t *ceil = dt_jget(dt_jget(r, "environment"), "ceilings");
    double floor_us = dt_jnum(ceil, "launch_sync_floor_us");
    double touch_us = dt_jnum(ceil, "launch_sync_touch_floor_us");
    dt_numbuf a, b;
    size_t i;
    const json_t *cs;
    int paired = 0; /* some case measured its own floor (cases[].floor) */
    json_array_foreach(cases, i, cs) {
        const json_t *ef = dt_jget(dt_jget(cs, "derived"), "e2e_floor");
        paired |= strcmp(dt_jstr(ef, "floor_source", ""), "paired") == 0;
    }
    if (!(isfinite(floor_us) && floor_us > 0) && !paired) {
        if (dt_jget(r, "floor_unavailable")) {
            fputs("## E2E floor\n\nNo floor was measured: no ceilings, and no per-case floor "
                  "samples: ", o);
            md_text(o, dt_jstr(r, "floor_unavailable", ""));
            fputs(".\n\n", o);
        }
        return;
    }
    fputs("## E2E floor\n\n", o);
    if (isfinite(floor_us) && floor_us > 0)
        fprintf(o, "Launch+sync floor: **%s µs**, the host time of one "
                   "synchronized empty call (CUDA: an empty kernel; CPU: an empty function "
                   "call), the least a single-call E2E can take on this machine. ",
                dt_fnum(a, floor_us));
    fputs("Small cases (M·N ≤ 131072): single-call E2E p50 and its multiple of the floor.",
          o);
    if (paired)
        fputs(" Each case measured its own floor: before every pair of single-call samples "
              "the candidate's worker timed one synchronized empty call, primed like the "
              "samples (docs/protocol.md, `floor`); \"floor p50\" is their median and "
              "\"/ floor\" the median of the paired ratios single / floor sample with its 95% "
              "interval, so that drift between the floor and the samples cancels.",
              o);
    if (dt_jget(r, "floor_unavailable")) {
        fputs(" No per-case floor samples: ", o);
        md_text(o, dt_jstr(r, "floor_unavailable", ""));
        fputs(".", o);
    }
    fputs("\n\n", o);
    /* optional (older results lack it): the touch floor and a column per framework */
    int touch = isfinite(touch_us) && touch_us > 0;
    if (touch)
        fprintf(o, "Touch floor: **%s µs**, the host time of one synchronized call of a "
                   "one-block kernel that reads and writes 512 B (CPU: a function call that "
                   "copies 512 B), launch cost plus a real kernel's least memory latency; "
                   "the \"/ touch floor\" columns are single-call E2E p50 over it.\n\n",
                dt_fnum(a, touch_us));
    fputs("| Case |", o);
    int ncol = 1;
    if (paired) {
        fputs(" floor p50 µs |", o);
        ncol++;
    }
    for (int f = 0; f < 2; f++) {
        head_fw(o, ids[f], "single p50 µs");
        head_fw(o, ids[f], "/ floor");
        ncol += 2;
        if (touch) {
            head_fw(o, ids[f], "/ touch floor");
            ncol++;
        }
    }
    fputs("\n|---|", o);
    for (int k = 1; k < ncol; k++)
        fputs("---:|", o);
    fputs("\n", o);
    size_t rows = 0;
    json_array_foreach(cases, i, cs) {
        const json_t *ef = dt_jget(dt_jget(cs, "derived"), "e2e_floor");
        if (!ef || !dt_case_shown(cs))
            continue;
        fputs("| ", o);
        md_text(o, dt_jstr(cs, "id", "?"));
        if (paired)
            fprintf(o, " | %s", dt_fnum(a, dt_jnum(ef, "case_floor_us")));
        for (int f = 0; f < 2; f++) {
            const json_t *e = dt_jget(ef, ids[f]);
            fprintf(o, " | %s | ", dt_fnum(a, dt_jnum(e, "single_us")));
            if (dt_jget(e, "over_floor_ratio"))
                interval_cell(o, dt_jget(e, "over_floor_ratio"));
            else
                fputs(dt_fnum(b, dt_jnum(e, "over_floor")), o);
            if (touch)
                fprintf(o, " | %s", dt_fnum(a, dt_jnum(e, "over_touch_floor")));
        }
        fputs(" |\n", o);
        rows++;
    }
    if (rows == 0) {
        fputs("| no small valid case |", o);
        for (int k = 1; k < ncol; k++)
            fputs(" — |", o);
        fputs("\n", o);
    }
    fputs("\n", o);
}

static void print_failure_detail(FILE *o, const json_t *impl) {
    size_t j;
    json_t *ck;
    json_array_foreach(dt_jget(impl, "checks"), j, ck) {
        if (json_is_true(dt_jget(ck, "ok")))
            continue;
        fputs("- check ", o);
        md_text(o, dt_jstr(ck, "when", "?"));
        fputs(" failed", o);
        const json_t *ar = dt_jget(ck, "arena");
        const char *fp = dt_jstr(ar, "first_problem", "");
        if (*fp) {
            fputs(": arena: ", o);
            md_text(o, fp);
        }
        const json_t *orc = dt_jget(ck, "oracle");
        if (orc && !json_is_true(dt_jget(orc, "ok"))) {
            fprintf(o, "; oracle: %lld failing elements",
                    (long long)json_integer_value(dt_jget(orc, "failures")));
            const json_t *ff = dt_jget(orc, "first_failure");
            if (ff && !json_is_null(ff)) {
                char *s = json_is_string(ff) ? NULL : json_dumps(ff, JSON_COMPACT | JSON_SORT_KEYS);
                fputs(", first: ", o);
                md_text(o, s ? s : json_string_value(ff));
                free(s);
            }
        }
        fputs("\n", o);
    }
}

static void sec_failures(FILE *o, const json_t *cases, const char *ids[2]) {
    fputs("## Failures\n\n", o);
    size_t i, nfail = 0;
    json_t *c;
    json_array_foreach(cases, i, c) {
        for (int f = 0; f < 2; f++) {
            const json_t *impl = dt_jget(dt_jget(c, "impl"), ids[f]);
            const char *st = dt_jstr(impl, "status", impl ? "ok" : "missing");
            int bad_checks = 0;
            size_t j;
            json_t *ck;
            json_array_foreach(dt_jget(impl, "checks"), j, ck) bad_checks += !json_is_true(dt_jget(ck, "ok"));
            if (strcmp(st, "ok") == 0 && !bad_checks)
                continue;
            nfail++;
            fputs("### ", o);
            md_text(o, dt_jstr(c, "id", "?"));
            fputs(" — ", o);
            md_text(o, ids[f]);
            fputs("\n\n", o);
            fputs("Status: ", o);
            md_text(o, st);
            const char *e = dt_jstr(impl, "error", NULL);
            if (e) {
                fputs(". Error: ", o);
                md_text(o, e);
            }
            fputs("\n\n", o);
            print_failure_detail(o, impl);
            if (bad_checks)
                fputs("\n", o);
            const char *tail = dt_jstr(impl, "stderr_tail", "");
            if (*tail) {
                fputs("stderr tail:\n\n", o);
                fence(o, tail);
                fputs("\n", o);
                fputs(tail, o);
                if (tail[strlen(tail) - 1] != '\n')
                    fputs("\n", o);
                fence(o, tail);
                fputs("\n\n", o);
            }
        }
    }
    json_array_foreach(cases, i, c) {
        if (dt_case_shown(c))
            continue;
        int listed = 0;
        for (int f = 0; f < 2; f++) {
            const json_t *impl = dt_jget(dt_jget(c, "impl"), ids[f]);
            size_t j;
            json_t *ck;
            int bad = impl && strcmp(dt_jstr(impl, "status", "ok"), "ok") != 0;
            json_array_foreach(dt_jget(impl, "checks"), j, ck) bad |= !json_is_true(dt_jget(ck, "ok"));
            listed |= bad || !impl;
        }
        if (!listed) {
            nfail++;
            fputs("### ", o);
            md_text(o, dt_jstr(c, "id", "?"));
            fputs("\n\nThe case is marked invalid; no implementation recorded a failure.\n\n", o);
        }
    }
    if (nfail == 0)
        fputs("None.\n\n", o);
}

/* Links to the charts dt_plot_write_all writes next to results.md (always written with
 * it: by dt_report_regenerate and by the run). */
static void sec_plots(FILE *o, const json_t *r) {
    fputs("## Plots\n\n"
          "Per case, the candidate/baseline ratio of each scope with its 95% interval (log "
          "axis; left of 1: the candidate is faster; hollow: no interval).\n\n"
          "![ratios](" DT_PLOT_RATIOS ")\n\n", o);
    if (dt_plot_has_roofline(r))
        fputs("Achieved bandwidth as % of the device copy ceiling:\n\n"
              "![roofline](" DT_PLOT_ROOFLINE ")\n\n", o);
}

/* ---- GPU clocks (NVML; cases[].clocks written by dt_clocks_record) ---- */

/* A reading: whole numbers (MHz, °C) as they are, others with fnum's three digits. */
static const char *fclk(dt_numbuf b, double x) {
    if (isfinite(x) && x == floor(x) && fabs(x) < 1e9)
        snprintf(b, sizeof(dt_numbuf), "%.0f", x);
    else
        dt_fnum(b, x);
    return b;
}

/* "a→b" of one snapshot field of before/after; "—" for a missing value. */
static void clocks_pair(FILE *o, const json_t *cl, const char *key) {
    dt_numbuf a, b;
    fprintf(o, "%s→%s", fclk(a, dt_jnum(dt_jget(cl, "before"), key)),
            fclk(b, dt_jnum(dt_jget(cl, "after"), key)));
}

/* Reason names of one snapshot, ", "-separated; "none" when empty, "—" when unread. */
static void clocks_reasons(FILE *o, const json_t *snap) {
    const json_t *rs = dt_jget(snap, "throttle_reasons");
    if (!json_is_array(rs)) {
        fputs("—", o);
        return;
    }
    if (json_array_size(rs) == 0)
        fputs("none", o);
    size_t i;
    json_t *s;
    json_array_foreach(rs, i, s) {
        if (i)
            fputs(", ", o);
        md_text(o, json_string_value(s));
    }
}

/* min/max of a field over every reading of every case with clocks. */
typedef struct clocks_range {
    double lo, hi;
} clocks_range;

static void clocks_range_add(clocks_range *r, const json_t *snap, const char *key) {
    double x = dt_jnum(snap, key);
    if (!isfinite(x))
        return;
    if (!isfinite(r->lo) || x < r->lo)
        r->lo = x;
    if (!isfinite(r->hi) || x > r->hi)
        r->hi = x;
}

static void clocks_range_print(FILE *o, const clocks_range *r, const char *unit) {
    dt_numbuf a, b;
    if (!isfinite(r->lo))
        fprintf(o, "— %s", unit);
    else if (r->lo == r->hi)
        fprintf(o, "%s %s", fclk(a, r->lo), unit);
    else
        fprintf(o, "%s–%s %s", fclk(a, r->lo), fclk(b, r->hi), unit);
}

static void sec_clocks(FILE *o, const json_t *r, const json_t *cases) {
    size_t i, j, ncl = 0, nmoved = 0;
    json_t *c, *rd;
    json_array_foreach(cases, i, c) {
        if (!json_is_object(dt_jget(c, "clocks")))
            continue;
        ncl++;
        nmoved += json_is_true(dt_jget(dt_jget(c, "clocks"), "moved"));
    }
    const json_t *nvml = dt_jget(dt_jget(r, "environment"), "nvml");
    if (ncl == 0) {
        if (json_is_object(nvml) && !json_is_true(dt_jget(nvml, "available"))) {
            fputs("## GPU clocks (NVML)\n\nNot read: ", o);
            md_text(o, dt_jstr(nvml, "reason", "NVML unavailable"));
            fputs(".\n\n", o);
        }
        return;
    }
    fputs("## GPU clocks (NVML)\n\n", o);
    if (nmoved == 0) {
        clocks_range sm = {NAN, NAN}, mem = {NAN, NAN}, temp = {NAN, NAN}, pw = {NAN, NAN};
        size_t nread = 0;
        json_array_foreach(cases, i, c) {
            const json_t *cl = dt_jget(c, "clocks");
            if (!json_is_object(cl))
                continue;
            const json_t *rounds = dt_jget(cl, "rounds");
            json_t *one = json_pack("[O]", (json_t *)cl); /* no rounds: the summary itself */
            json_array_foreach(json_is_array(rounds) ? (json_t *)rounds : one, j, rd) {
                for (int k = 0; k < 2; k++) {
                    const json_t *s = dt_jget(rd, k ? "after" : "before");
                    if (!json_is_object(s))
                        continue;
                    nread++;
                    clocks_range_add(&sm, s, "sm_mhz");
                    clocks_range_add(&mem, s, "mem_mhz");
                    clocks_range_add(&temp, s, "temp_c");
                    clocks_range_add(&pw, s, "power_w");
                }
            }
            json_decref(one);
        }
        if (ncl == 1)
            fprintf(o, "Clocks steady in the one case with readings (%zu readings): SM ", nread);
        else
            fprintf(o, "Clocks steady in all %zu cases with readings (%zu readings): SM ", ncl,
                    nread);
        clocks_range_print(o, &sm, "MHz");
        fputs(", memory ", o);
        clocks_range_print(o, &mem, "MHz");
        fputs(", ", o);
        clocks_range_print(o, &temp, "°C");
        fputs(", ", o);
        clocks_range_print(o, &pw, "W");
        fputs("; no throttle reasons besides GPU idle and application clocks.\n\n", o);
        return;
    }
    fputs("| Case | SM MHz | Memory MHz | Temp °C | Power W | Throttle reasons | Moved |\n"
          "|---|---|---|---|---|---|---|\n", o);
    json_array_foreach(cases, i, c) {
        const json_t *cl = dt_jget(c, "clocks");
        if (!json_is_object(cl))
            continue;
        fputs("| ", o);
        md_text(o, dt_jstr(c, "id", "?"));
        fputs(" | ", o);
        clocks_pair(o, cl, "sm_mhz");
        fputs(" | ", o);
        clocks_pair(o, cl, "mem_mhz");
        fputs(" | ", o);
        clocks_pair(o, cl, "temp_c");
        fputs(" | ", o);
        clocks_pair(o, cl, "power_w");
        fputs(" | ", o);
        clocks_reasons(o, dt_jget(cl, "before"));
        fputs("→", o);
        clocks_reasons(o, dt_jget(cl, "after"));
        if (json_is_true(dt_jget(cl, "moved"))) {
            fputs(" | **yes**", o);
            const json_t *rounds = dt_jget(cl, "rounds");
            if (json_array_size(rounds) > 1)
                fprintf(o, " (round %lld; %lld of %zu rounds)",
                        (long long)json_integer_value(dt_jget(cl, "round")),
                        (long long)json_integer_value(dt_jget(cl, "rounds_moved")),
                        json_array_size(rounds));
            fputs(": ", o);
            md_text(o, dt_jstr(cl, "why", ""));
            fputs(" |\n", o);
        } else {
            fputs(" | no |\n", o);
        }
    }
    fputs("\nReadings are taken before and after the timed part of each case and round; a "
          "moved case shows the first round that moved. A case "
          "is flagged when the SM clock changed by more than 2%, the memory clock changed, "
          "the temperature rose by more than 10 °C, or a throttle reason other than GPU idle "
          "or application clocks was active.\n\n", o);
}

static void sec_limits(FILE *o, int device) {
    fputs("## What these numbers do not establish\n\n"
          "- **Host E2E** is the time a caller waits per call: it includes Python or C "
          "binding, argument checks, launch and queueing overhead and synchronization, so "
          "it is not kernel time. Batch p50 amortizes completion over R calls; single "
          "includes one full synchronization per call.\n", o);
    if (device)
        fputs("- **Device control** is the GPU interval between two stream events around "
              "the calls: it includes every kernel, copy and in-stream gap between launches, "
              "so it is not pure kernel time either.\n"
              "- **Kernel probe** numbers come from CUPTI, which perturbs what it measures; "
              "they are diagnostics shown next to the control, with the measured "
              "probe/control ratio, and never replace or correct it.\n", o);
    fputs("- **Ratios** are medians of paired candidate/baseline ratios (pairs share a round "
          "and index), not ratios of means or of medians; the 95% interval is a bootstrap "
          "over pairs and only covers sample-to-sample noise of this run.\n"
          "- **One machine, one run**: clocks, thermals, drivers, library versions and "
          "other load are not varied; another machine or another day can rank the "
          "implementations differently. \"indistinguishable\" means the interval contains "
          "1 or stays within ±2%, not that the implementations are equal.\n"
          "- Correctness is checked against an FP64 oracle on the deterministic inputs "
          "listed in results.json, not on every possible input.\n", o);
}

dt_status dt_report_md_write(const json_t *results, FILE *out, dt_err *err) {
    const char *cand, *base;
    dt_status st = dt_derive_roles(results, &cand, &base, err);
    if (st != DT_OK)
        return st;
    const json_t *cases = dt_jget(results, "cases");
    if (!json_is_array(cases))
        return dt_fail(err, DT_EINVAL, "results: cases is missing or not an array");
    const char *ids[2] = {cand, base};
    fputs("# dualtime results: ", out);
    md_text(out, cand);
    fputs(" vs ", out);
    md_text(out, base);
    fputs("\n\n", out);
    sec_assessment(out, results);
    sec_what(out, results, cand, base);
    sec_main(out, cases, cand, base);
    sec_plots(out, results);
    sec_setup(out, cases, ids);
    sec_correctness(out, cases, ids);
    sec_device(out, cases, cand, base);
    sec_clocks(out, results, cases);
    sec_roofline(out, results, cases, ids);
    sec_e2e_floor(out, results, cases, ids);
    sec_failures(out, cases, ids);
    int device = 0;
    for (size_t k = 2; k < dt_derive_known_scope_count; k++)
        device |= any_scope(cases, dt_derive_known_scopes[k]);
    sec_limits(out, device);
    if (ferror(out))
        return dt_fail(err, DT_EIO, "results.md: write error");
    return DT_OK;
}

dt_status dt_report_md_string(const json_t *results, char **text, size_t *len, dt_err *err) {
    *text = NULL;
    *len = 0;
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    if (!m)
        return dt_fail(err, DT_EIO, "results.md: cannot open a memory stream");
    dt_status st = dt_report_md_write(results, m, err);
    if (fclose(m) != 0 && st == DT_OK)
        st = dt_fail(err, DT_EIO, "results.md: memory stream failed");
    if (st != DT_OK) {
        free(buf);
        return st;
    }
    *text = buf;
    *len = n;
    return DT_OK;
}
