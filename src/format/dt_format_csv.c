/* dt_format_csv.c — the flat table of a run and its RFC 4180 CSV (contract in
 * dt_format_csv.h). */
#define _GNU_SOURCE
#include "format/dt_format_csv.h"

#include "format/dt_format_util.h"
#include "plan/dt_ops.h"
#include "plan/dt_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_columns[] = {
    "case", "op", "dtype", "shape", "m", "n", "k", "valid", "implementation", "role", "scope",
    "samples", "p50_us", "p90_us", "min_us", "iqr_us", "noise", "ratio", "ci_low", "ci_high",
    "pairs", "verdict", "process_band"};

const char *const *dt_format_table_columns(size_t *n) {
    *n = sizeof k_columns / sizeof k_columns[0];
    return k_columns;
}

/* The row of case c, implementation i, scope s. */
static void row_fill(const dt_record *r, const dt_case *c, size_t i, dt_scope s,
                     dt_table_row *w) {
    memset(w, 0, sizeof *w);
    const dt_scope_derived *sd = &c->derived.scopes[s];
    const dt_rec_summary *sm = &sd->impl[i].summary;
    w->case_id = c->id;
    w->op = dt_op_get(c->op)->name;
    w->dtype = dt_elem_type_name(c->dtype);
    dt_shape sh = {c->m, c->n, dt_op_get(c->op)->is_gemm ? c->k : 0};
    dt_shape_format(&sh, w->shape, sizeof w->shape);
    w->m = c->m;
    w->n = c->n;
    w->k = sh.k;
    w->valid = c->valid;
    w->impl = r->impls[i].id;
    w->role = dt_role_name(r->impls[i].role);
    w->scope = s;
    w->n_samples = sm->n;
    w->p50_us = sm->p50;
    w->p90_us = sm->p90;
    w->min_us = sm->min;
    w->iqr_us = sm->iqr;
    w->noise = sd->impl[i].noise;
    w->ratio = w->ci_low = w->ci_high = NAN;
    const dt_scope_vs *v = i > 0 && sd->vs ? &sd->vs[i] : NULL;
    if (v && v->present && v->has_ratio) {
        w->has_ratio = 1;
        w->ratio = v->ratio.median;
        w->ci_low = v->ratio.ci_low;
        w->ci_high = v->ratio.ci_high;
        w->pairs = v->ratio.pairs;
        w->verdict = dt_rec_verdict_name(v->verdict);
    }
    w->process_band = v && v->present && v->process_band > 0 ? v->process_band : NAN;
}

dt_status dt_format_table_rows(const dt_record *r, dt_table_row **rows, size_t *n_rows,
                               dt_err *err) {
    *rows = NULL;
    *n_rows = 0;
    if (!r || !r->derived.present) return dt_fail(err, DT_EINVAL, "table: the record is not derived");
    size_t cap = r->n_cases * r->n_impls * DT_SCOPE_COUNT; /* an upper bound */
    if (cap) *rows = dt_xcalloc(cap, sizeof **rows);
    for (size_t ci = 0; ci < r->n_cases; ci++) {
        const dt_case *c = &r->cases[ci];
        if (!c->derived.present) continue;
        for (size_t k = 0; k < r->n_impls; k++) {
            size_t i = dt_format_impl_at(r, k);
            for (int s = 0; s < DT_SCOPE_COUNT; s++) {
                const dt_scope_derived *sd = &c->derived.scopes[s];
                if (!sd->present || !sd->impl || sd->impl[i].summary.n == 0) continue;
                row_fill(r, c, i, (dt_scope)s, &(*rows)[(*n_rows)++]);
            }
        }
    }
    return DT_OK;
}

/* One field, quoted when it must be (RFC 4180). */
static void field(FILE *o, const char *s, int last) {
    if (s && strpbrk(s, ",\"\r\n")) {
        fputc('"', o);
        for (; *s; s++) {
            if (*s == '"') fputc('"', o);
            fputc(*s, o);
        }
        fputc('"', o);
    } else if (s) {
        fputs(s, o);
    }
    fputs(last ? "\r\n" : ",", o);
}

static void num(FILE *o, double x) {
    if (isfinite(x)) fprintf(o, "%.9g,", x);
    else fputc(',', o);
}

static void row_write(FILE *o, const dt_table_row *w) {
    field(o, w->case_id, 0);
    field(o, w->op, 0);
    field(o, w->dtype, 0);
    field(o, w->shape, 0);
    fprintf(o, "%lld,%lld,%lld,%d,", (long long)w->m, (long long)w->n, (long long)w->k, w->valid);
    field(o, w->impl, 0);
    field(o, w->role, 0);
    field(o, dt_scope_name(w->scope), 0);
    fprintf(o, "%zu,", w->n_samples);
    num(o, w->p50_us);
    num(o, w->p90_us);
    num(o, w->min_us);
    num(o, w->iqr_us);
    num(o, w->noise);
    num(o, w->ratio);
    num(o, w->ci_low);
    num(o, w->ci_high);
    if (w->has_ratio) fprintf(o, "%zu,", w->pairs);
    else fputc(',', o);
    field(o, w->verdict ? w->verdict : "", 0);
    if (isfinite(w->process_band)) fprintf(o, "%.9g", w->process_band);
    fputs("\r\n", o);
}

dt_status dt_format_csv(const dt_record *r, char **text, size_t *len, dt_err *err) {
    *text = NULL;
    *len = 0;
    dt_table_row *rows = NULL;
    size_t n = 0, nc;
    dt_status st = dt_format_table_rows(r, &rows, &n, err);
    if (st != DT_OK) return st;
    FILE *o = open_memstream(text, len);
    if (!o) {
        free(rows);
        return dt_fail(err, DT_EIO, "csv: cannot open a memory stream");
    }
    const char *const *cols = dt_format_table_columns(&nc);
    for (size_t i = 0; i < nc; i++) field(o, cols[i], i + 1 == nc);
    for (size_t i = 0; i < n; i++) row_write(o, &rows[i]);
    free(rows);
    if (fclose(o) != 0) {
        free(*text);
        *text = NULL;
        *len = 0;
        return dt_fail(err, DT_EIO, "csv: the memory stream failed");
    }
    return DT_OK;
}
