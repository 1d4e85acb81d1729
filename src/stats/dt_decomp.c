/* dt_decomp.c — the E2E decomposition's arithmetic (see dt_decomp.h). */
#include "dt_decomp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/dt_common.h"

/* Bounds of a list of intervals: first a, last a, max b; sum of (b - a). 0 when empty or
 * some interval ends before it starts (*bad set). */
static int span_of(const dt_decomp_interval *v, size_t n, int64_t *first_a, int64_t *last_b,
                   double *sum, int *bad) {
    *bad = 0;
    *sum = 0;
    if (n == 0) return 0;
    *first_a = v[0].a_ns;
    *last_b = v[0].b_ns;
    for (size_t i = 0; i < n; i++) {
        if (v[i].b_ns < v[i].a_ns) *bad = 1;
        if (v[i].a_ns < *first_a) *first_a = v[i].a_ns;
        if (v[i].b_ns > *last_b) *last_b = v[i].b_ns;
        *sum += (double)(v[i].b_ns - v[i].a_ns);
    }
    return !*bad;
}

/* Whether every interval lies in [lo, hi]. */
static int inside(const dt_decomp_interval *v, size_t n, double lo, double hi) {
    for (size_t i = 0; i < n; i++)
        if ((double)v[i].a_ns < lo || (double)v[i].b_ns > hi) return 0;
    return 1;
}

/* Marks o inconsistent; the first reason wins. printf-style. */
static int fail(dt_decomp_segments *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(dt_decomp_segments *o, const char *fmt, ...) {
    if (!o->reason[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(o->reason, sizeof o->reason, fmt, ap);
        va_end(ap);
    }
    o->consistent = 0;
    return 0;
}

/* The ordering checks on one clock, within u (see the header). */
static void order_checks(const dt_decomp_raw *r, dt_decomp_segments *o, double first_enter,
                         double last_exit, double first_start, double last_end) {
    double u = o->uncertainty_ns, t0 = (double)r->call_start_ns, t1 = (double)r->sync_return_ns;
    if (first_enter < t0 - u)
        fail(o, "first launch entered %.0f ns before the call started (u %.0f ns)",
             t0 - first_enter, u);
    if (last_end > t1 + u)
        fail(o, "last kernel ended %.0f ns after the synchronization returned (u %.0f ns)",
             last_end - t1, u);
    if (last_exit > t1 + u)
        fail(o, "last launch returned %.0f ns after the synchronization returned (u %.0f ns)",
             last_exit - t1, u);
    if (first_start < first_enter - u)
        fail(o, "first kernel started %.0f ns before the first launch was entered (u %.0f ns)",
             first_enter - first_start, u);
    if (!inside(r->launches, r->n_launches, t0 - u, t1 + u) ||
        !inside(r->kernels, r->n_kernels, t0 - u, t1 + u))
        fail(o, "a launch or kernel lies outside the call's host window (u %.0f ns)", u);
}

int dt_decomp_compute(const dt_decomp_raw *r, dt_decomp_segments *o) {
    memset(o, 0, sizeof *o);
    o->dispatch_ns = o->launch_ns = o->queue_ns = o->kernel_ns = o->completion_ns = NAN;
    o->sum_ns = o->residual_ns = NAN;
    o->measured_ns = r->host_call_ns;
    o->uncertainty_ns = r->clock_uncertainty_ns >= 0 ? r->clock_uncertainty_ns : NAN;
    o->tolerance_ns = 2.0 * o->uncertainty_ns + DT_DECOMP_SLACK_NS;
    o->n_launches = r->n_launches;
    o->n_kernels = r->n_kernels;
    o->consistent = 1;
    int64_t fe = 0, le = 0, fs = 0, ke = 0;
    int bad_l = 0, bad_k = 0;
    int have_l = span_of(r->launches, r->n_launches, &fe, &le, &o->launch_api_sum_ns, &bad_l);
    int have_k = span_of(r->kernels, r->n_kernels, &fs, &ke, &o->kernel_sum_ns, &bad_k);
    if (r->n_launches == 0 || r->n_kernels == 0)
        return fail(o, "no launch or no kernel recorded (%zu launches, %zu kernels)",
                    r->n_launches, r->n_kernels);
    if (!have_l || !have_k)
        return fail(o, "a %s ends before it starts", bad_l ? "launch" : "kernel");
    if (!(o->uncertainty_ns >= 0) || !isfinite(o->measured_ns))
        return fail(o, "no calibration uncertainty or no measured call (%g, %g)",
                    r->clock_uncertainty_ns, r->host_call_ns);
    /* first enter, last exit (the latest of any launch), first start, last end */
    o->dispatch_ns = (double)(fe - r->call_start_ns);
    o->launch_ns = (double)(le - fe);
    o->queue_ns = (double)(fs - le);
    o->kernel_ns = (double)(ke - fs);
    o->completion_ns = (double)(r->sync_return_ns - ke);
    o->sum_ns = o->dispatch_ns + o->launch_ns + o->queue_ns + o->kernel_ns + o->completion_ns;
    o->overlap_ns = o->queue_ns < 0 ? -o->queue_ns : 0;
    o->residual_ns = o->measured_ns - o->sum_ns;
    o->adds_up = fabs(o->residual_ns) <= o->tolerance_ns;
    if (!o->adds_up)
        fail(o, "segments add up to %.0f ns, the measured call is %.0f ns", o->sum_ns,
             o->measured_ns);
    order_checks(r, o, (double)fe, (double)le, (double)fs, (double)ke);
    return o->consistent;
}

const dt_decomp_raw *dt_decomp_set_median(const dt_decomp_set *set) {
    if (!set || set->n == 0) return NULL;
    /* rank of each sample by measured call; the lower median */
    size_t want = (set->n - 1) / 2;
    for (size_t i = 0; i < set->n; i++) {
        size_t below = 0, equal_before = 0;
        for (size_t j = 0; j < set->n; j++) {
            if (set->v[j].host_call_ns < set->v[i].host_call_ns) below++;
            else if (j < i && set->v[j].host_call_ns == set->v[i].host_call_ns) equal_before++;
        }
        if (below + equal_before == want) return &set->v[i];
    }
    return &set->v[0];
}

