/* dt_format_compare.c — the Markdown of `dualtime compare A B` from a typed comparison
 * result. Contract in dt_format_compare.h; the rules are docs/results-format.md
 * ("Comparing two runs"). */
#define _GNU_SOURCE
#include "format/dt_format_compare.h"
#include "format/dt_format_util.h"

#include <math.h>
#include <string.h>

#define DIFFS_CAP 2048  /* a difference list is cut at DIFFS_CAP - 1 bytes */
#define SLOWER_CAP 1024 /* the regression list at SLOWER_CAP - 1 bytes */

/* Joins differences into one line, "backend differs (A \"cpu\", B \"cuda\"); ...",
 * into buf[DIFFS_CAP]. */
static void diffs_text(const dt_compare_diffs *d, char *buf) {
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < d->n; i++) {
        const dt_compare_diff *x = &d->v[i];
        int n = snprintf(buf + len, DIFFS_CAP - len, "%s%s differs (A %s, B %s)",
                         len ? "; " : "", x->what, x->a ? x->a : "absent",
                         x->b ? x->b : "absent");
        if (n > 0)
            len += (size_t)n < DIFFS_CAP - len ? (size_t)n : DIFFS_CAP - len - 1;
    }
}

/* "case scope, case scope" of the candidates' slower rows that make the regression. */
static void slower_text(const dt_compare_result *res, char *buf) {
    size_t len = 0;
    buf[0] = 0;
    for (size_t i = 0; i < res->n_cases; i++)
        for (size_t k = 0; k < res->cases[i].n_rows; k++) {
            const dt_compare_row *row = &res->cases[i].rows[k];
            if (row->verdict != DT_CMP_SLOWER || row->role != DT_ROLE_CANDIDATE ||
                dt_scope_is_probe(row->scope))
                continue;
            int n = snprintf(buf + len, SLOWER_CAP - len, "%s%s %s", len ? ", " : "",
                             res->cases[i].id, dt_scope_name(row->scope));
            if (n > 0 && (size_t)n < SLOWER_CAP - len)
                len += (size_t)n;
        }
}

static void header(FILE *out, const dt_compare_result *res) {
    fputs("# dualtime compare: B/A\n\n", out);
    fputs("A: ", out);
    dt_format_md_text_keep_amp(out, res->a_started_at);
    fputs(" (git ", out);
    dt_format_md_text_keep_amp(out, res->a_git_revision);
    fputs("); B: ", out);
    dt_format_md_text_keep_amp(out, res->b_started_at);
    fputs(" (git ", out);
    dt_format_md_text_keep_amp(out, res->b_git_revision);
    fputs(").\n\n", out);
    if (res->run_diffs.n) {
        char d[DIFFS_CAP];
        diffs_text(&res->run_diffs, d);
        fputs("Environments: **incomparable** — ", out);
        dt_format_md_text_keep_amp(out, d);
        fputs(".\n\n", out);
    } else {
        fputs("Environments: comparable (same backend, GPU, CPU, threads, input views and "
              "baseline framework version).\n\n", out);
    }
    dt_format_buf lv, t1, t2, t3;
    double t = res->threshold;
    fprintf(out,
            "B/A = median(B)/median(A) per framework, %s%% bootstrap interval (%u resamples, "
            "each run resampled independently). Threshold ±%s%%: slower when the interval "
            "lies above %s, faster when below %s. Round spread = the largest over the "
            "smallest per-round median within a run (the larger of A's and B's; runs with "
            "`--rounds` ≥ 2): a B/A inside it is not called a change, since the same code "
            "moves that much between rounds of one run.\n\n",
            dt_format_const(lv, 100 * res->ci_level), res->resamples,
            dt_format_num(t1, 100 * t), dt_format_ratio(t2, 1 + t), dt_format_ratio(t3, 1 - t));
    fprintf(out, "| Case | Scope | Framework | A p50 µs | B p50 µs | B/A [%s%% CI] | Round "
                 "spread | Verdict |\n|---|---|---|---:|---:|---|---:|---|\n",
            dt_format_const(lv, 100 * res->ci_level));
}

static void row_line(FILE *out, const char *case_id, const dt_compare_row *row) {
    dt_format_buf x, y, z;
    int slower = row->verdict == DT_CMP_SLOWER;
    fputs("| ", out);
    dt_format_md_text_keep_amp(out, case_id);
    fprintf(out, " | %s | ", dt_scope_name(row->scope));
    dt_format_md_text_keep_amp(out, row->impl_id);
    fprintf(out, " | %s", dt_format_num(x, row->a_p50_us));
    fprintf(out, " | %s | ", dt_format_num(y, row->b_p50_us));
    if (isfinite(row->ci_low))
        fprintf(out, "%s [%s, %s]", dt_format_ratio(x, row->ratio),
                dt_format_ratio(y, row->ci_low), dt_format_ratio(z, row->ci_high));
    else
        fputs(dt_format_ratio(x, row->ratio), out);
    fprintf(out, " | %s", isfinite(row->spread) ? dt_format_ratio(x, row->spread) : "—");
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

static void table_and_result(FILE *out, const dt_compare_result *res) {
    for (size_t i = 0; i < res->n_cases; i++) {
        const dt_compare_case *cc = &res->cases[i];
        for (size_t k = 0; k < cc->n_rows; k++)
            row_line(out, cc->id, &cc->rows[k]);
        if (cc->diffs.n) {
            char d[DIFFS_CAP];
            diffs_text(&cc->diffs, d);
            fputs("| ", out);
            dt_format_md_text_keep_amp(out, cc->id);
            fputs(" | — | — | — | — | — | incomparable: ", out);
            dt_format_md_text_keep_amp(out, d);
            fputs(" | incomparable |\n", out);
        }
    }
    fputs("\n", out);
    only_in(out, "A", &res->only_a);
    only_in(out, "B", &res->only_b);
    if (res->n_candidate_slower) {
        char sl[SLOWER_CAP];
        slower_text(res, sl);
        fprintf(out, "Result: **regression** of the candidate in %zu case/scope(s): ",
                res->n_candidate_slower);
        dt_format_md_text_keep_amp(out, sl);
        fputs(".\n", out);
    } else {
        fputs("Result: no certain regression of the candidate.\n", out);
    }
    if (res->n_baseline_slower)
        fprintf(out, "\nThe baseline is slower in %zu case/scope(s) too: the machine or its "
                "load may have changed between the runs.\n", res->n_baseline_slower);
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
