/* dt_format_devices.c — the "Devices" section of results.md (dt_format_devices.h). */
#define _GNU_SOURCE
#include "format/dt_format_devices.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/dt_format_util.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorted in place); NAN when n is 0. */
static double median(double *v, size_t n) {
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Seconds between two "YYYY-MM-DDTHH:MM:SSZ" times; NAN when either is absent. */
static double wall_s(const char *from, const char *to) {
    struct tm a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (!from || !to || !strptime(from, "%Y-%m-%dT%H:%M:%SZ", &a) ||
        !strptime(to, "%Y-%m-%dT%H:%M:%SZ", &b))
        return NAN;
    return difftime(timegm(&b), timegm(&a));
}

/* Median over device d's cases of the SM clock before their timed parts (MHz). */
static double sm_p50(const dt_record *r, int64_t d) {
    size_t total = 1, n = 0;
    for (size_t i = 0; i < r->n_cases; i++) total += r->cases[i].n_clock_rounds;
    double *v = dt_xcalloc(total, sizeof *v);
    for (size_t i = 0; i < r->n_cases; i++) {
        const dt_case *c = &r->cases[i];
        for (size_t k = 0; c->device == d && k < c->n_clock_rounds; k++) {
            const dt_clock_round *cr = &c->clock_rounds[k];
            if (cr->has_before && cr->before.sm_mhz != DT_NULL_I64)
                v[n++] = (double)cr->before.sm_mhz;
        }
    }
    double m = median(v, n);
    free(v);
    return m;
}

/* Median over device d's valid cases of candidate k's paired ratio in scope s. */
static double ratio_p50(const dt_record *r, int64_t d, size_t k, dt_scope s) {
    double *v = dt_xcalloc(r->n_cases + 1, sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < r->n_cases; i++) {
        const dt_case *c = &r->cases[i];
        const dt_scope_derived *sd = &c->derived.scopes[s];
        if (c->device != d || !c->valid || !c->derived.present || !sd->present || !sd->vs) continue;
        const dt_scope_vs *vs = &sd->vs[k];
        if (vs->present && vs->has_ratio && isfinite(vs->ratio.median)) v[n++] = vs->ratio.median;
    }
    double m = median(v, n);
    free(v);
    return m;
}

static int any_ratio(const dt_record *r, size_t k, dt_scope s) {
    for (size_t i = 0; i < r->n_devices; i++)
        if (isfinite(ratio_p50(r, r->devices[i].index, k, s))) return 1;
    return 0;
}

static void text_cell(FILE *o, const char *s) {
    fputs(" | ", o);
    if (s && *s)
        dt_format_md_text(o, s);
    else
        fputs("—", o);
}

static void i64_cell(FILE *o, int64_t x) {
    if (x == DT_NULL_I64)
        fputs(" | —", o);
    else
        fprintf(o, " | %lld", (long long)x);
}

/* The consistency table: one row per device. */
static void device_table(FILE *o, const dt_record *r) {
    size_t k = r->n_impls > 1 ? dt_format_first_candidate(r) : 0;
    int ctl = k && any_ratio(r, k, DT_SCOPE_CONTROL_BATCH);
    const char *cand = k ? r->impls[k].id : "?", *base = r->impls[0].id;
    fputs("| device | name | UUID | PCI bus | CPUs | cases | valid | wall s | SM MHz p50 | "
          "copy GB/s | launch sync floor µs | held touch floor µs | ",
          o);
    dt_format_md_text(o, cand);
    fputs("/", o);
    dt_format_md_text(o, base);
    fputs(" e2e_batch p50", o);
    if (ctl) fputs(" | control_batch p50", o);
    fputs(" |\n|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|", o);
    fputs(ctl ? "---:|\n" : "\n", o);
    for (size_t i = 0; i < r->n_devices; i++) {
        const dt_device_rec *d = &r->devices[i];
        const dt_ceilings_rec *ce = &d->ceilings;
        int have = ce->present && !ce->error;
        dt_format_buf a, b, c, e, f, g;
        fprintf(o, "| %lld", (long long)d->index);
        text_cell(o, d->name);
        text_cell(o, d->uuid);
        text_cell(o, d->pci_bus_id);
        text_cell(o, d->cpus);
        i64_cell(o, d->cases);
        i64_cell(o, d->valid);
        fprintf(o, " | %s | %s | %s | %s | %s | %s",
                dt_format_num(a, wall_s(d->started_at, d->finished_at)),
                dt_format_reading(b, sm_p50(r, d->index)),
                dt_format_num(c, have ? ce->copy_gbps : NAN),
                dt_format_num(e, have ? ce->launch_sync_floor_us : NAN),
                dt_format_num(f, have ? ce->held_touch_floor_batch_us : NAN),
                dt_format_ratio(g, k ? ratio_p50(r, d->index, k, DT_SCOPE_E2E_BATCH) : NAN));
        if (ctl)
            fprintf(o, " | %s",
                    dt_format_ratio(a, ratio_p50(r, d->index, k, DT_SCOPE_CONTROL_BATCH)));
        fputs(" |\n", o);
    }
    fputs("\n", o);
    for (size_t i = 0; i < r->n_devices; i++) {
        const dt_device_rec *d = &r->devices[i];
        if (d->ceilings.present && d->ceilings.error) {
            fprintf(o, "- device %lld: no ceilings (", (long long)d->index);
            dt_format_md_text(o, d->ceilings.error);
            fputs(")\n", o);
        }
        if (d->exit_status != DT_NULL_I64 && d->exit_status != 0)
            fprintf(o, "- device %lld: its run exited %lld (its own results: `%s`)\n",
                    (long long)d->index, (long long)d->exit_status, d->dir ? d->dir : "?");
    }
}

/* The replicated cases: p50 per device and the spread. */
static void replica_table(FILE *o, const dt_record *r) {
    fputs("\n### Replicated cases (--replicate): the same case on every device\n\n"
          "Each case below was run again on every device after the matrix (a run of its own "
          "per device, same inputs and settings). Spread = (max - min) / min of the per-device "
          "p50s; devices that agree show a spread near the cases' own noise.\n\n"
          "| case | implementation | scope |",
          o);
    for (size_t i = 0; i < r->n_devices; i++)
        fprintf(o, " gpu %lld µs |", (long long)r->devices[i].index);
    fputs(" spread |\n|---|---|---|", o);
    for (size_t i = 0; i < r->n_devices; i++) fputs("---:|", o);
    fputs("---:|\n", o);
    for (size_t q = 0; q < r->n_replicas; q++) {
        const dt_replica_rec *x = &r->replicas[q];
        fputs("| ", o);
        dt_format_md_text(o, x->case_id);
        text_cell(o, x->impl_id);
        fprintf(o, " | %s |", dt_scope_name(x->scope));
        for (size_t i = 0; i < x->n_us; i++) {
            dt_format_buf b;
            fprintf(o, " %s |", dt_format_num(b, x->us[i]));
        }
        dt_format_buf b;
        fprintf(o, " %s |\n", dt_format_pct(b, x->spread));
    }
    fputs("\n", o);
}

void dt_format_devices_md(FILE *o, const dt_record *r) {
    if (!r->n_devices) return;
    fprintf(o,
            "## Devices (--devices)\n\n%zu device%s ran this run at the same time, each its "
            "own shard of the plan with its own workers, CPUs, clocks and ceilings (measured "
            "on that device); every case names its device in results.json. The ratio columns "
            "hold the median over the device's valid cases of the candidate's paired ratio to "
            "the baseline: devices that measure alike give about the same value.\n\n",
            r->n_devices, r->n_devices == 1 ? "" : "s");
    device_table(o, r);
    if (r->n_replicas) replica_table(o, r);
}
