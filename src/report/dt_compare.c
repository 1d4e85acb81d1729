/* dt_compare.c — `dualtime compare A B`: per case and scope, B/A with a bootstrap
 * interval and a verdict; flags certain regressions. Contract in dt_compare.h; the
 * method is documented in docs/results-format.md ("Comparing two runs"). */
#include "report/dt_compare.h"
#include "report/dt_report_util.h"

#include "report/dt_derive.h"
#include "stats/dt_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void md_text(FILE *o, const char *s) {
    for (; s && *s; s++) {
        if (strchr("|\\*_`[]#~", *s)) {
            fputc('\\', o);
            fputc(*s, o);
        } else if (*s == '<') {
            fputs("&lt;", o);
        } else if (*s == '>') {
            fputs("&gt;", o);
        } else if (*s == '\n' || *s == '\r' || *s == '\t') {
            fputc(' ', o);
        } else {
            fputc(*s, o);
        }
    }
}


/* Differences accumulate into one line: "backend (A cpu, B cuda); ...". */
typedef struct diffs {
    char text[2048];
    size_t len;
} diffs;

static void diff_add(diffs *d, const char *what, const json_t *va, const json_t *vb) {
    char *sa = va ? json_dumps(va, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    char *sb = vb ? json_dumps(vb, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    int n = snprintf(d->text + d->len, sizeof d->text - d->len, "%s%s differs (A %s, B %s)",
                     d->len ? "; " : "", what, sa ? sa : "absent", sb ? sb : "absent");
    if (n > 0)
        d->len += (size_t)n < sizeof d->text - d->len ? (size_t)n : sizeof d->text - d->len - 1;
    free(sa);
    free(sb);
}

static void diff_if(diffs *d, const char *what, const json_t *va, const json_t *vb) {
    if ((va || vb) && !(va && vb && json_equal((json_t *)va, (json_t *)vb)))
        diff_add(d, what, va, vb);
}

static void run_diffs(const json_t *a, const json_t *b, const char *ids_a[2],
                      const char *ids_b[2], diffs *d) {
    const json_t *sa = dt_jget(a, "settings"), *sb = dt_jget(b, "settings");
    diff_if(d, "backend", dt_jget(sa, "backend"), dt_jget(sb, "backend"));
    diff_if(d, "threads", dt_jget(sa, "threads"), dt_jget(sb, "threads"));
    diff_if(d, "input views", dt_jget(sa, "input_views"), dt_jget(sb, "input_views"));
    diff_if(d, "GPU name", dt_jget(dt_jget(dt_jget(a, "environment"), "gpu"), "name"),
            dt_jget(dt_jget(dt_jget(b, "environment"), "gpu"), "name"));
    diff_if(d, "CPU", dt_jget(dt_jget(dt_jget(a, "environment"), "host"), "cpu"),
            dt_jget(dt_jget(dt_jget(b, "environment"), "host"), "cpu"));
    static const char *const roles[2] = {"candidate", "baseline"};
    for (int f = 0; f < 2; f++) {
        char what[96];
        if (strcmp(ids_a[f], ids_b[f]) != 0) {
            json_t *x = json_string(ids_a[f]), *y = json_string(ids_b[f]);
            snprintf(what, sizeof what, "%s id", roles[f]);
            diff_add(d, what, x, y);
            json_decref(x);
            json_decref(y);
        }
        const json_t *fa = dt_framework(a, ids_a[f]), *fb = dt_framework(b, ids_b[f]);
        snprintf(what, sizeof what, "%s framework", roles[f]);
        diff_if(d, what, dt_jget(fa, "framework"), dt_jget(fb, "framework"));
        if (f == 1) {
            snprintf(what, sizeof what, "%s framework_version", roles[f]);
            diff_if(d, what, dt_jget(fa, "framework_version"), dt_jget(fb, "framework_version"));
        }
    }
}

static void case_diffs(const json_t *ca, const json_t *cb, diffs *d) {
    static const char *const keys[] = {"op", "m", "n", "k", "views", "backend"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        diff_if(d, keys[i], dt_jget(ca, keys[i]), dt_jget(cb, keys[i]));
    const json_t *ia = dt_jget(ca, "inputs"), *ib = dt_jget(cb, "inputs");
    if (json_array_size(ia) != json_array_size(ib)) {
        diff_if(d, "inputs", ia, ib);
        return;
    }
    size_t i;
    json_t *x;
    json_array_foreach(ia, i, x) {
        const json_t *y = json_array_get(ib, i);
        if (!json_equal((json_t *)dt_jget(x, "sha256"), (json_t *)dt_jget(y, "sha256"))) {
            char what[128];
            const char *name = json_string_value(dt_jget(x, "name"));
            snprintf(what, sizeof what, "input %s sha256", name ? name : "?");
            diff_add(d, what, dt_jget(x, "sha256"), dt_jget(y, "sha256"));
        }
    }
}

static const json_t *find_case(const json_t *r, const char *id) {
    size_t i;
    json_t *c;
    json_array_foreach(dt_jget(r, "cases"), i, c) {
        const char *cid = json_string_value(dt_jget(c, "id"));
        if (cid && strcmp(cid, id) == 0)
            return c;
    }
    return NULL;
}

const char *dt_compare_verdict(double ci_low, double ci_high, double threshold, double spread) {
    if (!isfinite(ci_low) || !isfinite(ci_high)) return "insufficient";
    if (ci_low > 1 + threshold && !(ci_low <= spread)) return "slower";
    if (ci_high < 1 - threshold && !(ci_high >= 1 / spread)) return "faster";
    if (ci_low > 1 + threshold || ci_high < 1 - threshold) return "within round spread";
    return "unchanged";
}

/* Run-to-run spread of one framework's scope within one run: the largest over the
 * smallest of its per-round medians (1 = steady); NAN with fewer than 2 rounds. A
 * difference between two runs that is no larger than the differences between rounds of
 * one run is not called a change. */
static double round_spread(const json_t *c, const char *fw, const char *scope) {
    const json_t *arr = dt_jget(dt_jget(dt_jget(dt_jget(c, "impl"), fw), "samples"), scope);
    size_t n = json_array_size(arr), i;
    if (n == 0) return NAN;
    double lo = INFINITY, hi = -INFINITY;
    int rounds = 0;
    double *v = malloc(n * sizeof *v);
    if (!v) return NAN;
    for (int r = 0;; r++) {
        size_t k = 0, seen_higher = 0;
        const json_t *smp;
        json_array_foreach(arr, i, smp) {
            json_int_t sr = json_integer_value(dt_jget(smp, "round"));
            if (sr == r) v[k++] = dt_jnum(smp, "us");
            else if (sr > r) seen_higher = 1;
        }
        if (k) {
            double m = dt_stats_median(v, k);
            if (m < lo) lo = m;
            if (m > hi) hi = m;
            rounds++;
        }
        if (!seen_higher) break;
    }
    free(v);
    return rounds >= 2 && lo > 0 ? hi / lo : NAN;
}

static int has_scope(const json_t *c, const char *fw, const char *scope) {
    return json_array_size(dt_jget(dt_jget(dt_jget(dt_jget(c, "impl"), fw), "samples"), scope)) > 0;
}

dt_status dt_compare(const json_t *a, const json_t *b, double threshold, FILE *out,
                     int *regression, dt_err *err) {
    *regression = 0;
    if (!(threshold >= 0 && threshold < 1))
        return dt_fail(err, DT_EINVAL, "compare: threshold %g must be in [0, 1)", threshold);
    const char *ids_a[2], *ids_b[2];
    dt_status st = dt_derive_roles(a, &ids_a[0], &ids_a[1], err);
    if (st != DT_OK)
        return st;
    st = dt_derive_roles(b, &ids_b[0], &ids_b[1], err);
    if (st != DT_OK)
        return st;
    unsigned resamples;
    uint64_t seed;
    dt_derive_bootstrap_settings(a, &resamples, &seed);

    diffs rd = {{0}, 0};
    run_diffs(a, b, ids_a, ids_b, &rd);
    fputs("# dualtime compare: B/A\n\n", out);
    const json_t *ta = dt_jget(a, "tool"), *tb = dt_jget(b, "tool");
    fputs("A: ", out);
    md_text(out, json_string_value(dt_jget(a, "started_at")));
    fputs(" (git ", out);
    md_text(out, json_string_value(dt_jget(ta, "git_revision")));
    fputs("); B: ", out);
    md_text(out, json_string_value(dt_jget(b, "started_at")));
    fputs(" (git ", out);
    md_text(out, json_string_value(dt_jget(tb, "git_revision")));
    fputs(").\n\n", out);
    if (rd.len) {
        fputs("Environments: **incomparable** — ", out);
        md_text(out, rd.text);
        fputs(".\n\n", out);
    } else {
        fputs("Environments: comparable (same backend, GPU, CPU, threads, input views and "
              "baseline framework version).\n\n", out);
    }
    dt_numbuf t1, t2, t3;
    fprintf(out,
            "B/A = median(B)/median(A) per framework, 95%% bootstrap interval (%u resamples, "
            "each run resampled independently). Threshold ±%s%%: slower when the interval "
            "lies above %s, faster when below %s. Round spread = the largest over the "
            "smallest per-round median within a run (the larger of A's and B's; runs with "
            "`--rounds` ≥ 2): a B/A inside it is not called a change, since the same code "
            "moves that much between rounds of one run.\n\n",
            resamples, dt_fnum(t1, 100 * threshold), dt_fratio(t2, 1 + threshold),
            dt_fratio(t3, 1 - threshold));
    fputs("| Case | Scope | Framework | A p50 µs | B p50 µs | B/A [95% CI] | Round spread | Verdict |\n"
          "|---|---|---|---:|---:|---|---:|---|\n", out);

    size_t i, nslower = 0, nbase_slower = 0, only_a = 0;
    json_t *ca;
    char slower_list[1024] = "";
    size_t sl_len = 0;
    json_array_foreach(dt_jget(a, "cases"), i, ca) {
        const char *id = json_string_value(dt_jget(ca, "id"));
        if (!id)
            continue;
        const json_t *cb = find_case(b, id);
        if (!cb) {
            only_a++;
            continue;
        }
        diffs cd = {{0}, 0};
        case_diffs(ca, cb, &cd);
        int invalid = !json_is_true(dt_jget(ca, "valid")) || !json_is_true(dt_jget(cb, "valid"));
        int incomparable = rd.len || cd.len;
        for (size_t k = 0; k < dt_derive_known_scope_count; k++) {
            const char *scope = dt_derive_known_scopes[k];
            for (int f = 0; f < 2; f++) {
                if (!has_scope(ca, ids_a[f], scope) && !has_scope(cb, ids_b[f], scope))
                    continue;
                size_t na, nb;
                double *va = dt_derive_scope_us(ca, ids_a[f], scope, &na);
                double *vb = dt_derive_scope_us(cb, ids_b[f], scope, &nb);
                dt_interval iv = {NAN, NAN, NAN, 0};
                dt_err e2;
                uint64_t s2 = dt_derive_scope_seed(seed, id, scope) ^ (uint64_t)(f + 1);
                if (na && nb &&
                    dt_stats_ratio_of_medians_interval(va, na, vb, nb, resamples, s2, &iv, &e2) != DT_OK)
                    iv.median = iv.ci_low = iv.ci_high = NAN; /* zero samples: no ratio */
                double sa = round_spread(ca, ids_a[f], scope), sb = round_spread(cb, ids_b[f], scope);
                double spread = isfinite(sa) && isfinite(sb) ? (sa > sb ? sa : sb) : NAN;
                const char *verdict =
                    invalid ? "invalid"
                    : incomparable ? "incomparable"
                    : dt_compare_verdict(iv.ci_low, iv.ci_high, threshold, spread);
                int slower = strcmp(verdict, "slower") == 0;
                if (slower && f == 0 && strncmp(scope, "probe_", 6) != 0) {
                    nslower++;
                    int n = snprintf(slower_list + sl_len, sizeof slower_list - sl_len,
                                     "%s%s %s", sl_len ? ", " : "", id, scope);
                    if (n > 0 && (size_t)n < sizeof slower_list - sl_len)
                        sl_len += (size_t)n;
                }
                if (slower && f == 1)
                    nbase_slower++;
                dt_numbuf x, y, z;
                fputs("| ", out);
                md_text(out, id);
                fprintf(out, " | %s | ", scope);
                md_text(out, ids_a[f]);
                fprintf(out, " | %s", dt_fnum(x, dt_stats_median(va, na)));
                fprintf(out, " | %s | ", dt_fnum(y, dt_stats_median(vb, nb)));
                if (isfinite(iv.ci_low))
                    fprintf(out, "%s [%s, %s]", dt_fratio(x, iv.median), dt_fratio(y, iv.ci_low),
                            dt_fratio(z, iv.ci_high));
                else
                    fputs(dt_fratio(x, iv.median), out);
                fprintf(out, " | %s", isfinite(spread) ? dt_fratio(x, spread) : "—");
                fprintf(out, " | %s%s%s |\n", slower ? "**" : "", verdict, slower ? "**" : "");
                free(va);
                free(vb);
            }
        }
        if (cd.len) {
            fputs("| ", out);
            md_text(out, id);
            fputs(" | — | — | — | — | — | incomparable: ", out);
            md_text(out, cd.text);
            fputs(" | incomparable |\n", out);
        }
    }
    fputs("\n", out);
    if (only_a) {
        fputs("Only in A:", out);
        json_array_foreach(dt_jget(a, "cases"), i, ca) {
            const char *id = json_string_value(dt_jget(ca, "id"));
            if (id && !find_case(b, id)) {
                fputs(" ", out);
                md_text(out, id);
            }
        }
        fputs("\n\n", out);
    }
    int only_b = 0;
    json_array_foreach(dt_jget(b, "cases"), i, ca) {
        const char *id = json_string_value(dt_jget(ca, "id"));
        if (id && !find_case(a, id)) {
            if (!only_b++)
                fputs("Only in B:", out);
            fputs(" ", out);
            md_text(out, id);
        }
    }
    if (only_b)
        fputs("\n\n", out);
    if (nslower) {
        *regression = 1;
        fprintf(out, "Result: **regression** of the candidate in %zu case/scope(s): ", nslower);
        md_text(out, slower_list);
        fputs(".\n", out);
    } else {
        fputs("Result: no certain regression of the candidate.\n", out);
    }
    if (nbase_slower)
        fprintf(out, "\nThe baseline is slower in %zu case/scope(s) too: the machine or its "
                "load may have changed between the runs.\n", nbase_slower);
    if (ferror(out))
        return dt_fail(err, DT_EIO, "compare: write error");
    return DT_OK;
}
