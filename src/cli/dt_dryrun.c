/* dt_dryrun.c — `run --dry-run`: the plan and its wall-time estimate (contract in
 * dt_dryrun.h). */
#include "cli/dt_dryrun.h"

#include "plan/dt_ops.h"

void dt_dryrun_scopes(const dt_dryrun *d, int *batch, int *single) {
    *batch = d->device_timing ? 3 : 1;
    *single = d->device_timing ? 3 : 1;
}

/* Seconds of one case in one round. */
static double case_s(const dt_dryrun *d) {
    int batch, single;
    dt_dryrun_scopes(d, &batch, &single);
    double per_impl_ms = d->warmup_ms + DT_DRYRUN_CALIB_SAMPLES * d->sample_ms +
                         (double)batch * (double)d->samples * d->sample_ms +
                         (double)single * (double)d->samples * DT_DRYRUN_SINGLE_MS;
    if (d->device_timing) per_impl_ms += d->warmup_ms; /* the probe worker's warmup */
    return (d->n_impls * per_impl_ms + DT_DRYRUN_SETUP_MS) / 1e3;
}

double dt_dryrun_estimate_s(const dt_dryrun *d) {
    return d->start_s + DT_DRYRUN_CEILINGS_S +
           case_s(d) * (double)d->plan->count * (double)d->rounds;
}

static void print_plan(FILE *o, const dt_dryrun *d) {
    fprintf(o, "cases, in plan order (rounds after the first rotate and reverse it):\n");
    for (int i = 0; i < d->plan->count; i++) {
        const dt_case_spec *c = &d->plan->cases[i];
        char shape[64];
        dt_shape s = {c->m, c->n, c->k};
        dt_shape_format(&s, shape, sizeof shape);
        fprintf(o, "  %3d  %-32s %-20s %s%s\n", i + 1, c->id, dt_op_get(c->op)->name, shape,
                c->views ? " (strided views)" : "");
    }
}

void dt_dryrun_print(FILE *o, const dt_dryrun *d) {
    int batch, single;
    dt_dryrun_scopes(d, &batch, &single);
    fprintf(o, "dry run: nothing is measured or written.\n");
    fprintf(o, "backend: %s (%s)\n", d->backend, d->backend_choice);
    fprintf(o, "implementations:");
    for (int k = 0; k < d->n_impls; k++)
        fprintf(o, "%s %s (%s, %s)", k ? "," : "", d->impl_ids[k], d->impl_roles[k],
                d->impl_frameworks[k] ? d->impl_frameworks[k] : "?");
    fprintf(o, "\n");
    fprintf(o, "samples: %lld per scope and round, %lld round(s), sample %g ms, warmup %g ms, "
               "prime %lld, %lld thread(s)\n",
            d->samples, d->rounds, d->sample_ms, d->warmup_ms, d->prime, d->threads);
    fprintf(o, "scopes: e2e_batch, e2e_single%s\n",
            d->device_timing ? ", control_batch, control_single, probe_batch, probe_single "
                               "(dispatch_* from the control windows)" : "");
    print_plan(o, d);
    double est = dt_dryrun_estimate_s(d);
    fprintf(o, "estimate: about %.0f s (%.1f min) of wall time\n", est, est / 60);
    fprintf(o, "  = workers' start %.1f s (measured now) + ceilings %.0f s\n"
               "  + %d case(s) x %lld round(s) x %.2f s, where one case and round is\n"
               "    %d implementation(s) x (warmup %g ms + calibration %d x %g ms\n"
               "      + %d batch scope(s) x %lld samples x %g ms\n"
               "      + %d single-call scope(s) x %lld samples x %g ms%s)\n"
               "    + %g ms setup (prepare, upload, checks, release, outputs written)\n"
               "  a budget, not a prediction: slow kernels (a single call above %g ms) and "
               "batch caps make it longer\n",
            d->start_s, DT_DRYRUN_CEILINGS_S, d->plan->count, d->rounds, case_s(d), d->n_impls,
            d->warmup_ms, DT_DRYRUN_CALIB_SAMPLES, d->sample_ms, batch, d->samples,
            d->sample_ms, single, d->samples, DT_DRYRUN_SINGLE_MS,
            d->device_timing ? " + probe warmup" : "", DT_DRYRUN_SETUP_MS, DT_DRYRUN_SINGLE_MS);
}
