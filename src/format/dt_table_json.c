/* dt_table_json.c — the flat table of a run as a JSON array (contract in
 * dt_table_json.h). */
#include "format/dt_table_json.h"

#include "format/dt_format_csv.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }
static json_t *str(const char *s) { return s ? json_string(s) : json_null(); }

/* The row as an object, keys in column order; NULL when a string is not UTF-8. */
static json_t *row_json(const dt_table_row *w) {
    json_t *v[] = {str(w->case_id), str(w->op), str(w->dtype), str(w->shape),
                   json_integer(w->m), json_integer(w->n), json_integer(w->k),
                   json_boolean(w->valid), str(w->impl), str(w->role),
                   str(dt_scope_name(w->scope)), json_integer((json_int_t)w->n_samples),
                   num(w->p50_us), num(w->p90_us), num(w->min_us), num(w->iqr_us),
                   num(w->noise), num(w->ratio), num(w->ci_low), num(w->ci_high),
                   w->has_ratio ? json_integer((json_int_t)w->pairs) : json_null(),
                   str(w->verdict), num(w->process_band)};
    size_t nc, nv = sizeof v / sizeof v[0];
    const char *const *cols = dt_format_table_columns(&nc);
    DT_ASSERT(nc == nv);
    json_t *o = json_object();
    int ok = 1;
    for (size_t i = 0; i < nv; i++) {
        if (!v[i]) ok = 0;
        else json_object_set_new(o, cols[i], v[i]);
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

dt_status dt_table_json(const dt_record *r, char **text, size_t *len, dt_err *err) {
    *text = NULL;
    *len = 0;
    dt_table_row *rows = NULL;
    size_t n = 0;
    dt_status st = dt_format_table_rows(r, &rows, &n, err);
    if (st != DT_OK) return st;
    json_t *a = json_array();
    for (size_t i = 0; i < n && a; i++) {
        json_t *o = row_json(&rows[i]);
        if (!o) {
            json_decref(a);
            a = NULL;
        } else {
            json_array_append_new(a, o);
        }
    }
    free(rows);
    if (!a) return dt_fail(err, DT_EINVAL, "table json: a string is not UTF-8");
    char *s = json_dumps(a, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(a);
    if (!s) return dt_fail(err, DT_EIO, "table json: cannot encode");
    *len = strlen(s) + 1;
    *text = malloc(*len + 1);
    if (!*text) {
        free(s);
        return dt_fail(err, DT_EIO, "table json: out of memory");
    }
    memcpy(*text, s, *len - 1);
    (*text)[*len - 1] = '\n';
    (*text)[*len] = 0;
    free(s);
    return DT_OK;
}
