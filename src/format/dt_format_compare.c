/* dt_format_compare.c — the Markdown of `dualtime compare A B` from a typed comparison
 * result. Contract in dt_format_compare.h; the rules are docs/results-format.md
 * ("Comparing two runs"). */
#define _GNU_SOURCE
#include "format/dt_format_compare.h"
#include "format/dt_format_util.h"
#include "stats/dt_derive.h"

#include <math.h>
#include <string.h>

#define DIFFS_CAP 2048  /* a difference list is cut at DIFFS_CAP - 1 bytes */
#define SLOWER_CAP 1024 /* the regression list at SLOWER_CAP - 1 bytes */

/* Writes a case's differences, cut at DIFFS_CAP - 1 bytes, escaped. */
static void diffs_line(FILE *out, const dt_compare_diffs *d) {
    char *t = dt_compare_diffs_join(d);
    if (strlen(t) >= DIFFS_CAP)
        t[DIFFS_CAP - 1] = 0;
    dt_format_md_text_keep_amp(out, t);
    free(t);
}

/* "case scope, case scope" of the candidates' slower rows that make the regression (the
 * table names the framework). */
static void slower_text(const dt_compare_result *res, char *buf) {
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < res->n_cases; i++)
        for (size_t k = 0; k < res->cases[i].n_rows; k++) {
            const dt_compare_row *row = &res->cases[i].rows[k];
            if (row->verdict != DT_CMP_SLOWER || dt_scope_is_probe(row->scope))
                continue;
            int n = snprintf(buf + len, SLOWER_CAP - len, "%s%s %s", len ? ", " : "",
                             res->cases[i].id, dt_scope_name(row->scope));
            if (n > 0 && (size_t)n < SLOWER_CAP - len)
                len += (size_t)n;
        }
}

static void header(FILE *out, const dt_compare_result *res) {
    fputs("# dualtime compare: B against A\n\n", out);
    fputs("A: ", out);
    dt_format_md_text_keep_amp(out, res->a_started_at);
    fputs(" (git ", out);
    dt_format_md_text_keep_amp(out, res->a_git_revision);
    fputs("); B: ", out);
    dt_format_md_text_keep_amp(out, res->b_started_at);
    fputs(" (git ", out);
    dt_format_md_text_keep_amp(out, res->b_git_revision);
    fputs(").\n\n", out);
    fputs("Environments: comparable (same backend, GPU, CPU, threads, input views, "
          "implementations and baseline framework version).\n\n", out);
    dt_format_buf lv, t1, t2, t3, fl, mp;
    double t = res->threshold;
    fprintf(out,
            "Each candidate is judged on its paired ratio to the baseline within each run "
            "(median of candidate/baseline over pairs of the same round and index; the "
            "baseline is the drift control): change = ratio B / ratio A, %s%% bootstrap "
            "interval (%u resamples of each run's pairs, independently; at least %s pairs "
            "per run). Spread = the largest over the smallest per-round median ratio within "
            "a run, the larger of A's and B's (a run with one round counts as %s: \"floor\"), "
            "and in held device scopes at least the process band 1 + %.2f µs × kernels a call "
            "/ p50 of each implementation the row holds (held launches move that much between "
            "processes), and in E2E and dispatch scopes at least 1 + %.2f × the host-paced "
            "share of each implementation the row holds (1 for a batch window above its held "
            "control by more than the threshold in both runs, a single call's latency share "
            "(p50 − control) / p50; a window the host's launches pace moves that much between "
            "processes; a candidate's change there also needs its own B/A past its share). "
            "Threshold ±%s%%: slower only when the interval lies above both %s and the "
            "spread, faster only when below both %s and 1/spread. Detectable ≥ = "
            "max(%s, spread) × change / interval low: the smallest slowdown the row could "
            "have called. Baseline rows show the baseline's own B/A (medians): the machine's "
            "drift, never a regression.\n\n",
            dt_format_const(lv, 100 * res->ci_level), res->resamples,
            dt_format_const(mp, (double)res->min_pairs), dt_format_ratio(fl, res->spread_floor),
            DT_HELD_PROCESS_LAUNCH_US, DT_HOST_PROCESS_MOVE, dt_format_num(t1, 100 * t), dt_format_ratio(t2, 1 + t), dt_format_ratio(t3, 1 - t),
            dt_format_ratio(t2, 1 + t));
    fprintf(out, "| Case | Scope | Framework | A p50 µs | B p50 µs | A ratio | B ratio | "
                 "Change B/A [%s%% CI] | Spread | Detectable ≥ | Verdict |\n"
                 "|---|---|---|---:|---:|---:|---:|---|---:|---:|---|\n",
            dt_format_const(lv, 100 * res->ci_level));
}

static void row_line(FILE *out, const char *case_id, const dt_compare_row *row) {
    dt_format_buf x, y, z;
    int slower = row->verdict == DT_CMP_SLOWER;
    int cand = row->role == DT_ROLE_CANDIDATE;
    fputs("| ", out);
    dt_format_md_text_keep_amp(out, case_id);
    fprintf(out, " | %s | ", dt_scope_name(row->scope));
    dt_format_md_text_keep_amp(out, row->impl_id);
    fprintf(out, " | %s", dt_format_num(x, row->a.p50_us));
    fprintf(out, " | %s", dt_format_num(y, row->b.p50_us));
    fprintf(out, " | %s", cand ? dt_format_ratio(x, row->a.ratio) : "—");
    fprintf(out, " | %s | ", cand ? dt_format_ratio(x, row->b.ratio) : "—");
    if (isfinite(row->ci_low))
        fprintf(out, "%s [%s, %s]", dt_format_ratio(x, row->change),
                dt_format_ratio(y, row->ci_low), dt_format_ratio(z, row->ci_high));
    else
        fputs(dt_format_ratio(x, row->change), out);
    fprintf(out, " | %s%s", dt_format_ratio(x, row->spread),
            row->spread_measured ? "" : " (floor)");
    fprintf(out, " | %s", dt_format_ratio(x, row->detectable_slower));
    fprintf(out, " | %s%s%s |\n", slower ? "**" : "", dt_cmp_verdict_name(row->verdict),
            slower ? "**" : "");
}

static void only_in(FILE *out, const char *which, const dt_strv *ids) {
    if (!ids->n)
        return;
    fprintf(out, "Only in %s:", which);
    for (size_t i = 0; i < ids->n; i++) {
        fputs(" ", out);
        dt_format_md_text_keep_amp(out, ids->v[i]);
    }
    fputs("\n\n", out);
}

static void result_lines(FILE *out, const dt_compare_result *res) {
    if (res->n_candidate_slower) {
        char sl[SLOWER_CAP];
        slower_text(res, sl);
        fprintf(out, "Result: **regression** of the candidate in %zu case/scope(s): ",
                res->n_candidate_slower);
        dt_format_md_text_keep_amp(out, sl);
        fputs(".\n", out);
    } else {
        fputs("Result: no certain regression of the candidate (no change beyond the "
              "threshold and the run-to-run spread).\n", out);
    }
    if (res->n_baseline_moved)
        fprintf(out, "\nThe baseline itself moved in %zu case/scope(s) (machine slower %zu, "
                "faster %zu): the machine or its load changed between the runs; the "
                "candidates are judged on their ratio to it.\n", res->n_baseline_moved,
                res->n_verdict[DT_CMP_MACHINE_SLOWER], res->n_verdict[DT_CMP_MACHINE_FASTER]);
    if (res->n_verdict[DT_CMP_BASELINE_MOVED])
        fprintf(out, "\n%zu row(s) read \"baseline moved\": the paired ratio changed while "
                "the candidate's own time stayed within the threshold (held device scopes), or "
                "while the baseline's own row moved past its gate and the candidate's own time "
                "did not follow (host and dispatch scopes), so the baseline changed between the "
                "runs, not the candidate: never a regression.\n",
                res->n_verdict[DT_CMP_BASELINE_MOVED]);
}

static void table_and_result(FILE *out, const dt_compare_result *res) {
    for (size_t i = 0; i < res->n_cases; i++) {
        const dt_compare_case *cc = &res->cases[i];
        for (size_t k = 0; k < cc->n_rows; k++)
            row_line(out, cc->id, &cc->rows[k]);
        if (cc->diffs.n) {
            fputs("| ", out);
            dt_format_md_text_keep_amp(out, cc->id);
            fputs(" | — | — | — | — | — | — | incomparable: ", out);
            diffs_line(out, &cc->diffs);
            fputs(" | — | — | incomparable |\n", out);
        }
    }
    fputs("\n", out);
    only_in(out, "A", &res->only_a);
    only_in(out, "B", &res->only_b);
    result_lines(out, res);
}

dt_status dt_format_compare_md(const dt_compare_result *res, char **text, size_t *len,
                               dt_err *err) {
    *text = NULL;
    *len = 0;
    char *buf = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&buf, &n);
    if (!out)
        return dt_fail(err, DT_EIO, "compare: cannot open a memory stream");
    header(out, res);
    table_and_result(out, res);
    int bad = ferror(out);
    if (fclose(out) != 0 || bad) {
        free(buf);
        return dt_fail(err, DT_EIO, "compare: write error");
    }
    *text = buf;
    *len = n;
    return DT_OK;
}
