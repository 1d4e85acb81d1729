/* dt_devices.c — LIST parsing, GPU enumeration, CPU shares, --replicate and the merged
 * record's device facts (dt_devices.h). */
#define _GNU_SOURCE
#include "orchestrate/dt_devices.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrate/dt_clocks.h"
#include "plan/dt_ops.h"

/* ---- --devices LIST ------------------------------------------------------------------- */

/* One index of LIST (text[0..len)) into *v: 0 or -1 when it is not a whole number. */
static int parse_index(const char *text, size_t len, int *v) {
    if (len == 0 || len > 6) return -1;
    int x = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') return -1;
        x = x * 10 + (text[i] - '0');
    }
    *v = x;
    return 0;
}

dt_status dt_devices_parse(const char *list, int n_present, const char *why_unknown, int *out,
                           int *n, dt_err *err) {
    *n = 0;
    if (!list || !*list)
        return dt_fail(err, DT_EINVAL, "--devices: empty list (give indexes like 0,1,3 or all)");
    if (strcmp(list, "all") == 0) {
        int count = n_present < 0 ? 1 : n_present;
        if (count > DT_DEVICES_MAX) count = DT_DEVICES_MAX;
        for (int i = 0; i < count; i++) out[(*n)++] = i;
        return DT_OK;
    }
    const char *p = list;
    while (1) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int v;
        if (parse_index(p, len, &v) != 0)
            return dt_fail(err, DT_EINVAL,
                           "--devices: '%s': '%.*s' is not a device index "
                           "(give indexes like 0,1,3 or all)",
                           list, (int)len, p);
        if (n_present < 0 && v != 0)
            return dt_fail(err, DT_EINVAL,
                           "--devices: '%s': device %d cannot be checked, the "
                           "GPUs cannot be counted (%s); only 0 is accepted",
                           list, v, why_unknown ? why_unknown : "NVML unavailable");
        if (n_present >= 0 && v >= n_present)
            return dt_fail(err, DT_EINVAL,
                           "--devices: '%s': there is no device %d (this machine "
                           "has %d GPU%s: 0..%d)",
                           list, v, n_present, n_present == 1 ? "" : "s", n_present - 1);
        for (int i = 0; i < *n; i++)
            if (out[i] == v)
                return dt_fail(err, DT_EINVAL, "--devices: '%s': device %d is given twice", list,
                               v);
        if (*n == DT_DEVICES_MAX)
            return dt_fail(err, DT_EINVAL, "--devices: '%s': more than %d devices", list,
                           DT_DEVICES_MAX);
        out[(*n)++] = v;
        if (!comma) break;
        p = comma + 1;
    }
    return DT_OK;
}

/* ---- the GPUs present --------------------------------------------------------------------- */

int dt_devices_enumerate(dt_device_info *out, int max, char *why, size_t len) {
    int n = 0;
    for (; n < max; n++) {
        char w[DT_ERR_LEN];
        dt_clocks *h = dt_clocks_open(n, w, sizeof w);
        if (!h) {
            if (n == 0) snprintf(why, len, "%s", w);
            break;
        }
        dt_nvml d;
        memset(&d, 0, sizeof d);
        dt_clocks_describe(h, &d);
        dt_device_info *o = &out[n];
        memset(o, 0, sizeof *o);
        o->index = n;
        snprintf(o->name, sizeof o->name, "%s", d.name ? d.name : "");
        snprintf(o->uuid, sizeof o->uuid, "%s", d.uuid ? d.uuid : "");
        snprintf(o->pci_bus_id, sizeof o->pci_bus_id, "%s", d.pci_bus_id ? d.pci_bus_id : "");
        free(d.library);
        free(d.name);
        free(d.uuid);
        free(d.driver_version);
        free(d.nvml_version);
        free(d.pci_bus_id);
        dt_clocks_close(h);
    }
    return n > 0 ? n : -1;
}

/* ---- CPU shares --------------------------------------------------------------------------- */

int dt_devices_split_cpus(const int *cpus, int n, int parts, char (*lists)[DT_PIN_LIST_LEN]) {
    if (parts < 1 || n < parts) return 0;
    int each = n / parts;
    for (int p = 0; p < parts; p++) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int i = p * each; i < (p + 1) * each; i++) CPU_SET(cpus[i], &set);
        dt_affinity_format(&set, lists[p], DT_PIN_LIST_LEN);
    }
    return 1;
}

/* ---- --replicate --------------------------------------------------------------------------- */

static int plan_find(const dt_plan *plan, const char *id, size_t len) {
    for (int i = 0; i < plan->count; i++)
        if (strlen(plan->cases[i].id) == len && strncmp(plan->cases[i].id, id, len) == 0) return i;
    return -1;
}

/* The plan's ids (the first few) into buf, for a refusal. */
static void some_ids(const dt_plan *plan, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < plan->count && i < 8 && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", plan->cases[i].id);
    if (plan->count > 8 && used < len)
        snprintf(buf + used, len - used, " and %d more", plan->count - 8);
}

dt_status dt_devices_replicate_select(const char *list, const dt_plan *plan, dt_strv *ids,
                                      dt_err *err) {
    if (!list || !*list)
        return dt_fail(err, DT_EINVAL, "--replicate: empty list (give case ids or all)");
    int *chosen = dt_xcalloc((size_t)plan->count + 1, sizeof *chosen);
    dt_status st = DT_OK;
    if (strcmp(list, "all") == 0) {
        for (int i = 0; i < plan->count; i++) chosen[i] = 1;
    } else {
        for (const char *p = list; st == DT_OK;) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            int at = plan_find(plan, p, len);
            if (at < 0) {
                char known[600];
                some_ids(plan, known, sizeof known);
                st = dt_fail(err, DT_EINVAL,
                             "--replicate: '%.*s' is not a case of this run "
                             "(cases: %s)",
                             (int)len, p, known);
            } else if (chosen[at]) {
                st = dt_fail(err, DT_EINVAL, "--replicate: '%.*s' is given twice", (int)len, p);
            } else {
                chosen[at] = 1;
            }
            if (!comma) break;
            p = comma + 1;
        }
    }
    for (int i = 0; st == DT_OK && i < plan->count; i++)
        if (chosen[i]) dt_strv_push(ids, plan->cases[i].id);
    free(chosen);
    return st;
}

/* Appends item to the comma list buf (len bytes) unless it is there already. */
static void list_add(char *buf, size_t len, const char *item) {
    size_t il = strlen(item);
    for (const char *p = buf; *p;) {
        const char *comma = strchr(p, ',');
        size_t l = comma ? (size_t)(comma - p) : strlen(p);
        if (l == il && strncmp(p, item, il) == 0) return;
        if (!comma) break;
        p = comma + 1;
    }
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", used ? "," : "", item);
}

void dt_devices_replicate_flags(const dt_plan *plan, const dt_strv *ids, dt_strv *argv_out) {
    char ops[512] = "", rows[4096] = "", gemms[4096] = "", dtypes[64] = "";
    for (size_t q = 0; q < ids->n; q++) {
        int at = plan_find(plan, ids->v[q], strlen(ids->v[q]));
        if (at < 0) continue;
        const dt_case_spec *c = &plan->cases[at];
        const dt_op_info *info = dt_op_get(c->op);
        list_add(ops, sizeof ops, info->name);
        dt_shape s = {c->m, c->n, info->is_gemm ? c->k : 0};
        char shape[64];
        dt_shape_format(&s, shape, sizeof shape);
        list_add(info->is_gemm ? gemms : rows, info->is_gemm ? sizeof gemms : sizeof rows, shape);
        list_add(dtypes, sizeof dtypes, dt_dtype_name(c->dtype));
    }
    const char *const pairs[][2] = {{"--operations", ops},
                                    {"--row-shapes", rows},
                                    {"--gemm-shapes", gemms},
                                    {"--dtypes", dtypes}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        if (!pairs[i][1][0]) continue;
        dt_strv_push(argv_out, pairs[i][0]);
        dt_strv_push(argv_out, pairs[i][1]);
    }
}

/* ---- the merged record ------------------------------------------------------------------- */

void dt_devices_mark_cases(dt_record *r) {
    for (size_t i = 0; i < r->n_cases; i++) {
        dt_case *c = &r->cases[i];
        for (size_t k = 0; k < r->n_devices; k++) {
            const dt_device_rec *d = &r->devices[k];
            if (c->shard == DT_NULL_I64 || d->shard != c->shard) continue;
            c->device = d->index;
            dt_record_set_str(&c->device_name, d->name);
            dt_record_set_str(&c->device_uuid, d->uuid);
            break;
        }
    }
}

void dt_devices_count_cases(dt_record *r) {
    for (size_t k = 0; k < r->n_devices; k++) {
        dt_device_rec *d = &r->devices[k];
        d->cases = d->valid = 0;
        for (size_t i = 0; i < r->n_cases; i++) {
            if (r->cases[i].device != d->index) continue;
            d->cases++;
            d->valid += r->cases[i].valid != 0;
        }
    }
}

/* p50 of implementation `impl_id` in scope s of case `id` of rec; NAN when absent. */
static double case_p50(const dt_record *rec, const char *id, const char *impl_id, dt_scope s) {
    if (!rec) return NAN;
    int at = dt_record_case_find(rec, id), im = dt_record_impl_find(rec, impl_id);
    if (at < 0 || im < 0) return NAN;
    const dt_case *c = &rec->cases[at];
    const dt_scope_derived *sd = &c->derived.scopes[s];
    if (!c->valid || !c->derived.present || !sd->present || !sd->impl) return NAN;
    const dt_rec_summary *sum = &sd->impl[im].summary;
    return sum->n > 0 ? sum->p50 : NAN;
}

/* (max - min) / min over the finite values of us[0..n); NAN with fewer than 2. */
static double spread_of(const double *us, size_t n) {
    double lo = INFINITY, hi = -INFINITY;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(us[i])) continue;
        k++;
        if (us[i] < lo) lo = us[i];
        if (us[i] > hi) hi = us[i];
    }
    return k >= 2 && lo > 0 ? (hi - lo) / lo : NAN;
}

void dt_devices_replicas(dt_record *r, const dt_record *const *reps, size_t n, const dt_strv *ids) {
    static const dt_scope k_scopes[] = {DT_SCOPE_E2E_BATCH, DT_SCOPE_CONTROL_BATCH};
    for (size_t q = 0; q < ids->n; q++)
        for (size_t si = 0; si < sizeof k_scopes / sizeof k_scopes[0]; si++)
            for (size_t im = 0; im < r->n_impls; im++) {
                double *us = dt_xcalloc(n ? n : 1, sizeof *us);
                int any = 0;
                for (size_t d = 0; d < n; d++) {
                    us[d] = case_p50(reps[d], ids->v[q], r->impls[im].id, k_scopes[si]);
                    any |= isfinite(us[d]);
                }
                if (any || si == 0) {
                    dt_replica_rec *x = dt_record_replica_add(r, n);
                    x->case_id = dt_xstrdup(ids->v[q]);
                    x->impl_id = dt_xstrdup(r->impls[im].id);
                    x->scope = k_scopes[si];
                    memcpy(x->us, us, n * sizeof *us);
                    x->spread = spread_of(us, n);
                }
                free(us);
            }
}
