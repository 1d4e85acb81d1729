/* dt_report_util.c — JSON lookups and number formatting for the report writers. */
#include "report/dt_report_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const json_t *dt_jget(const json_t *o, const char *k) {
    return json_is_object(o) ? json_object_get(o, k) : NULL;
}

double dt_jnum(const json_t *o, const char *k) {
    const json_t *v = dt_jget(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *dt_jstr(const json_t *o, const char *k, const char *dflt) {
    const char *s = json_string_value(dt_jget(o, k));
    return s ? s : dflt;
}

const json_t *dt_framework(const json_t *results, const char *id) {
    size_t i;
    json_t *f;
    json_array_foreach(dt_jget(results, "frameworks"), i, f) {
        const char *fid = json_string_value(dt_jget(f, "id"));
        if (fid && strcmp(fid, id) == 0) return f;
    }
    return NULL;
}

int dt_case_shown(const json_t *cas) {
    if (!json_is_true(dt_jget(cas, "valid"))) return 0;
    const char *key;
    json_t *impl;
    json_object_foreach((json_t *)dt_jget(cas, "impl"), key, impl) {
        const char *st = json_string_value(dt_jget(impl, "status"));
        if (st && strcmp(st, "ok") != 0) return 0;
    }
    return 1;
}

const char *dt_fnum(dt_numbuf b, double x) {
    double a = fabs(x);
    if (!isfinite(x))
        snprintf(b, sizeof(dt_numbuf), "—");
    else if (a == 0)
        snprintf(b, sizeof(dt_numbuf), "0");
    else if (a >= 100)
        snprintf(b, sizeof(dt_numbuf), "%.0f", x);
    else if (a >= 10)
        snprintf(b, sizeof(dt_numbuf), "%.1f", x);
    else if (a >= 1)
        snprintf(b, sizeof(dt_numbuf), "%.2f", x);
    else if (a >= 0.001)
        snprintf(b, sizeof(dt_numbuf), "%#.3g", x);
    else
        snprintf(b, sizeof(dt_numbuf), "%.2e", x);
    return b;
}

const char *dt_fratio(dt_numbuf b, double x) {
    if (isfinite(x) && fabs(x) < 10 && fabs(x) >= 0.001)
        snprintf(b, sizeof(dt_numbuf), "%.3f", x);
    else
        dt_fnum(b, x);
    return b;
}
