/* dt_derive.c — the derive step on the typed record: raw samples → summaries, paired
 * ratios, verdicts, probe diagnostics, rooflines, E2E floors and the run assessment.
 * Contract in dt_derive.h; the rules are docs/results-format.md's "Derived statistics". */
#define _GNU_SOURCE
#include "stats/dt_derive.h"

#include "plan/dt_ops.h"
#include "stats/dt_stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- small helpers ---- */

static int pos_finite(double x) { return isfinite(x) && x > 0; }

/* A printf-formatted owned string. */
static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s ? s : dt_xstrdup("(reason lost: out of memory)");
}

/* Appends a formatted finding to a reason list. */
static void reason_add(dt_strv *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason_add(dt_strv *sv, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    dt_strv_push(sv, s ? s : "(reason lost: out of memory)");
    free(s);
}

/* ---- findings: every reason of the assessment, with what it concerns ---- */

/* Kinds of finding, in the order the counted summary lists them within a level. */
typedef enum fkind {
    FK_RUN = 0,   /* run-wide (incomplete, no cases, rounds): applies to every scope */
    FK_FEW,       /* too few samples in one case x scope */
    FK_NOCONTROL, /* a cuda case without device control */
    FK_NOISE,     /* noise above the policy in one case x scope */
    FK_CLOCKS,    /* GPU clocks moved during a case: every scope of it */
    FK_PROBE,     /* probe/control outside the band: the probe batch scope */
} fkind;

typedef struct finding {
    char *text;
    dt_level level;  /* smoke or method audit */
    fkind kind;
    unsigned mask;   /* scopes concerned, bit 1 << scope */
    size_t case_ix;  /* the case (not FK_RUN) */
    int small;       /* the case is small (policy.small_case_max_elems) */
} finding;

typedef struct findings {
    finding *v;
    size_t n, cap;
} findings;

#define ALL_SCOPES ((1u << DT_SCOPE_COUNT) - 1u)
#define PROBE_SCOPES ((1u << DT_SCOPE_PROBE_BATCH) | (1u << DT_SCOPE_PROBE_SINGLE))
#define VERDICT_SCOPES (ALL_SCOPES & ~PROBE_SCOPES) /* the scopes the run level follows */

static void finding_add(findings *fs, dt_level level, fkind kind, unsigned mask, size_t case_ix,
                        int small, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void finding_add(findings *fs, dt_level level, fkind kind, unsigned mask, size_t case_ix,
                        int small, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *t = NULL;
    if (vasprintf(&t, fmt, ap) < 0)
        t = NULL;
    va_end(ap);
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? 2 * fs->cap : 16;
        finding *nv = realloc(fs->v, fs->cap * sizeof *nv);
        DT_ASSERT(nv);
        fs->v = nv;
    }
    fs->v[fs->n++] = (finding){.text = t ? t : dt_xstrdup("(reason lost: out of memory)"),
                               .level = level, .kind = kind, .mask = mask, .case_ix = case_ix,
                               .small = small};
}

static void findings_free(findings *fs) {
    for (size_t i = 0; i < fs->n; i++)
        free(fs->v[i].text);
    free(fs->v);
    memset(fs, 0, sizeof *fs);
}

/* A growing ", "-joined list for one reason ("native 3, torch 3"). */
typedef struct joined {
    char *s;
} joined;

static void joined_add(joined *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void joined_add(joined *j, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *item = NULL;
    if (vasprintf(&item, fmt, ap) < 0)
        item = NULL;
    va_end(ap);
    char *next = str_printf("%s%s%s", j->s ? j->s : "", j->s ? ", " : "", item ? item : "?");
    free(item);
    free(j->s);
    j->s = next;
}

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001B3ull;
    }
    return h;
}

uint64_t dt_derive_seed(uint64_t run_seed, const char *case_id, const char *scope) {
    uint64_t h = fnv1a(0xCBF29CE484222325ull, case_id);
    h = fnv1a(h ^ 0x2F, scope);
    uint64_t st = run_seed ^ h;
    return dt_stats_splitmix64(&st);
}

/* The `us` of every sample, in stored order, in a fresh array (NULL when n == 0). */
static double *samples_us(const dt_samples *s, size_t *n) {
    *n = s->n;
    if (s->n == 0)
        return NULL;
    double *v = dt_xmalloc(s->n * sizeof *v);
    for (size_t i = 0; i < s->n; i++)
        v[i] = s->v[i].us;
    return v;
}

/* Pairs samples of x and y with equal (round, index), in x's order, each y sample used
 * once; returns the pair count and fresh arrays of their `us` (caller frees). Pairs
 * where either value is not positive are skipped and counted in *skipped. */
static size_t pair_by_key(const dt_samples *x, const dt_samples *y, double **xo, double **yo,
                          size_t *skipped) {
    size_t n = 0;
    *xo = *yo = NULL;
    *skipped = 0;
    if (x->n == 0 || y->n == 0)
        return 0;
    unsigned char *used = dt_xcalloc(y->n, 1);
    *xo = dt_xmalloc(x->n * sizeof **xo);
    *yo = dt_xmalloc(x->n * sizeof **yo);
    for (size_t i = 0; i < x->n; i++) {
        const dt_sample *a = &x->v[i];
        for (size_t j = 0; j < y->n; j++) {
            const dt_sample *b = &y->v[j];
            if (used[j] || b->round != a->round || b->index != a->index)
                continue;
            used[j] = 1;
            if (pos_finite(a->us) && pos_finite(b->us)) {
                (*xo)[n] = a->us;
                (*yo)[n] = b->us;
                n++;
            } else {
                (*skipped)++;
            }
            break;
        }
    }
    free(used);
    return n;
}

static dt_rec_ratio rec_ratio(const dt_interval *iv, size_t skipped) {
    return (dt_rec_ratio){.median = iv->median, .ci_low = iv->ci_low, .ci_high = iv->ci_high,
                          .pairs = iv->pairs, .skipped_pairs = skipped};
}

/* ---- context ---- */

typedef struct derive_ctx {
    dt_record *r;
    const dt_policy *p;
    size_t *order;     /* report order of impls: candidates in record order, then baseline */
    findings smoke, audit; /* the cases' findings, in case order */
    int64_t max_round; /* largest round seen in any sample (-1: none) */
    size_t case_ix;    /* the case being derived */
    int small;         /* it is small (policy.small_case_max_elems) */
} derive_ctx;

static const char *impl_id(const derive_ctx *cx, size_t i) { return cx->r->impls[i].id; }

/* A case is valid when it says so and every impl recorded it with status ok. */
static int case_valid(const derive_ctx *cx, const dt_case *c) {
    if (!c->valid)
        return 0;
    for (size_t i = 0; i < cx->r->n_impls; i++)
        if (!c->impl[i].present || c->impl[i].status != DT_IMPL_OK)
            return 0;
    return 1;
}

static int scope_has_samples(const derive_ctx *cx, const dt_case *c, dt_scope s) {
    if (dt_scope_is_host(s))
        return 1; /* results.json always holds the host scopes, possibly empty */
    for (size_t i = 0; i < cx->r->n_impls; i++)
        if (c->impl[i].present && c->impl[i].samples[s].n > 0)
            return 1;
    return 0;
}

static const dt_samples *samples_of(const dt_case *c, size_t impl, dt_scope s) {
    static const dt_samples none = {0};
    return c->impl[impl].present ? &c->impl[impl].samples[s] : &none;
}

/* ---- probe summaries ---- */

/* Median over samples of a probe field (per call: divided by the sample's reps; reps 0,
 * not recorded, counts as 1). Samples without the field are left out; NaN when none. */
typedef enum probe_field { PF_SUM, PF_SPAN, PF_COUNT_PER_CALL } probe_field;

static double probe_field_median(const dt_samples *s, probe_field f) {
    if (s->n == 0)
        return NAN;
    double *v = dt_xmalloc(s->n * sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++) {
        const dt_sample *x = &s->v[i];
        if (!x->has_probe)
            continue;
        double reps = x->reps > 0 ? (double)x->reps : 1;
        double y = f == PF_SUM    ? x->probe.kernel_sum_us
                   : f == PF_SPAN ? x->probe.kernel_span_us
                   : x->probe.kernel_count == DT_NULL_I64 ? NAN
                                                          : (double)x->probe.kernel_count / reps;
        if (isfinite(y))
            v[m++] = y;
    }
    double med = dt_stats_median(v, m);
    free(v);
    return med;
}

typedef struct kname {
    const char *name; /* borrowed */
    size_t first;     /* first-seen order, for a stable sort */
    double us_p50, per_call_p50;
} kname;

static int cmp_kname(const void *pa, const void *pb) {
    const kname *a = pa, *b = pb;
    if (a->us_p50 != b->us_p50)
        return a->us_p50 > b->us_p50 ? -1 : 1;
    return (a->first > b->first) - (a->first < b->first);
}

static const dt_probe_kernel *sample_kernels(const dt_sample *x, size_t *n) {
    *n = x->has_probe && x->probe.has_kernels ? x->probe.n_kernels : 0;
    return *n ? x->probe.kernels : NULL;
}

/* Distinct kernel names over the samples, first-seen order (fresh array). */
static kname *kernel_names(const dt_samples *s, size_t *nk) {
    kname *ks = NULL;
    size_t cap = 0;
    *nk = 0;
    for (size_t i = 0; i < s->n; i++) {
        size_t nkern;
        const dt_probe_kernel *k = sample_kernels(&s->v[i], &nkern);
        for (size_t j = 0; j < nkern; j++) {
            if (!k[j].name)
                continue;
            size_t q;
            for (q = 0; q < *nk && strcmp(ks[q].name, k[j].name) != 0; q++)
                ;
            if (q < *nk)
                continue;
            if (*nk == cap) {
                cap = cap ? 2 * cap : 8;
                kname *nks = realloc(ks, cap * sizeof *nks);
                DT_ASSERT(nks);
                ks = nks;
            }
            ks[*nk] = (kname){.name = k[j].name, .first = *nk};
            (*nk)++;
        }
    }
    return ks;
}

/* Per kernel name: median over samples of its summed us and count/reps (a sample
 * without that kernel counts as 0), sorted by us_p50, largest first. */
static void probe_kernels(const dt_samples *s, dt_probe_summary *ps) {
    size_t nk, ns = s->n;
    kname *ks = kernel_names(s, &nk);
    double *us = dt_xmalloc((ns ? ns : 1) * sizeof *us);
    double *pc = dt_xmalloc((ns ? ns : 1) * sizeof *pc);
    for (size_t q = 0; q < nk; q++) {
        for (size_t i = 0; i < ns; i++) {
            size_t nkern;
            const dt_probe_kernel *k = sample_kernels(&s->v[i], &nkern);
            double u = 0, c = 0, reps = s->v[i].reps > 0 ? (double)s->v[i].reps : 1;
            for (size_t j = 0; j < nkern; j++)
                if (k[j].name && strcmp(k[j].name, ks[q].name) == 0) {
                    u += isfinite(k[j].us) ? k[j].us : 0;
                    c += k[j].count == DT_NULL_I64 ? 0 : (double)k[j].count;
                }
            us[i] = u;
            pc[i] = c / reps;
        }
        ks[q].us_p50 = dt_stats_median(us, ns);
        ks[q].per_call_p50 = dt_stats_median(pc, ns);
    }
    if (nk > 1)
        qsort(ks, nk, sizeof *ks, cmp_kname);
    ps->kernels = nk ? dt_xcalloc(nk, sizeof *ps->kernels) : NULL;
    ps->n_kernels = ps->cap_kernels = nk;
    for (size_t q = 0; q < nk; q++)
        ps->kernels[q] = (dt_probe_kernel_median){.name = dt_xstrdup(ks[q].name),
                                                  .per_call_p50 = ks[q].per_call_p50,
                                                  .us_p50 = ks[q].us_p50};
    free(us);
    free(pc);
    free(ks);
}

double dt_derive_kernels_per_call(const dt_samples *s) {
    return probe_field_median(s, PF_COUNT_PER_CALL);
}

double dt_derive_case_kernels_per_call(const dt_case *c, size_t impl) {
    static const dt_scope sc[] = {DT_SCOPE_PROBE_BATCH, DT_SCOPE_PROBE_SINGLE};
    for (size_t k = 0; k < 2; k++) {
        double m = dt_derive_kernels_per_call(samples_of(c, impl, sc[k]));
        if (isfinite(m) && m > 0) return m;
    }
    return 1;
}

int dt_derive_held_scope(dt_scope s) {
    return s == DT_SCOPE_CONTROL_BATCH || s == DT_SCOPE_CONTROL_SINGLE ||
           s == DT_SCOPE_PROBE_BATCH || s == DT_SCOPE_PROBE_SINGLE;
}

double dt_derive_process_band(double cand_p50, double cand_k, double base_p50, double base_k) {
    if (!(cand_p50 > 0) || !(base_p50 > 0)) return 1;
    return 1 + DT_HELD_PROCESS_LAUNCH_US / 2 * (cand_k / cand_p50 + base_k / base_p50);
}

static void probe_summary(const dt_samples *s, dt_probe_summary *ps) {
    ps->present = 1;
    ps->kernel_sum_us_p50 = probe_field_median(s, PF_SUM);
    ps->kernel_span_us_p50 = probe_field_median(s, PF_SPAN);
    ps->kernels_per_call_p50 = dt_derive_kernels_per_call(s);
    probe_kernels(s, ps);
}

/* ---- one scope of one case ---- */

/* The scope a probe scope is paired with: the control of the same window kind, i.e.
 * the held control, or in a file written before held windows (probe unheld) the unheld
 * window that such files call control and the record stores as dispatch. */
static dt_scope control_of(const dt_record *r, dt_scope s) {
    int batch = s == DT_SCOPE_PROBE_BATCH;
    if (!r->settings.held_windows)
        return batch ? DT_SCOPE_DISPATCH_BATCH : DT_SCOPE_DISPATCH_SINGLE;
    return batch ? DT_SCOPE_CONTROL_BATCH : DT_SCOPE_CONTROL_SINGLE;
}

/* Summaries and noise of every impl; for a valid case the too-few-samples and noise
 * findings (one reason per case and scope, naming the impls concerned). */
static void scope_summaries(derive_ctx *cx, dt_case *c, int valid, dt_scope s) {
    dt_scope_derived *sd = &c->derived.scopes[s];
    const dt_policy *p = cx->p;
    for (size_t i = 0; i < cx->r->n_impls; i++) {
        size_t n;
        double *v = samples_us(samples_of(c, i, s), &n);
        dt_summary sum = dt_stats_summarize(v, n);
        free(v);
        for (size_t q = 0; q < n; q++)
            if (samples_of(c, i, s)->v[q].round > cx->max_round)
                cx->max_round = samples_of(c, i, s)->v[q].round;
        dt_scope_impl *si = &sd->impl[i];
        si->summary = (dt_rec_summary){
            .n = n, .p50 = sum.p50, .p90 = sum.p90, .min = sum.min, .max = sum.max,
            .iqr = sum.iqr};
        si->noise = (n > 0 && sum.p50 > 0) ? sum.iqr / sum.p50 : NAN;
    }
    if (!valid)
        return;
    joined few = {0}, noisy = {0};
    for (size_t k = 0; k < cx->r->n_impls; k++) {
        size_t i = cx->order[k];
        if (s == DT_SCOPE_GRAPH_BATCH && c->impl[i].graph_unavailable)
            continue; /* an unavailable graph (recorded with its reason) is not too few */
        if (sd->impl[i].summary.n < p->min_samples)
            joined_add(&few, "%s %zu", impl_id(cx, i), sd->impl[i].summary.n);
    }
    if (few.s)
        finding_add(&cx->smoke, DT_LEVEL_SMOKE, FK_FEW, 1u << s, cx->case_ix, cx->small,
                    "%s %s: too few samples (%s; need %zu)", c->id, dt_scope_name(s), few.s,
                    p->min_samples);
    for (size_t k = 0; k < cx->r->n_impls; k++) {
        size_t i = cx->order[k];
        double nz = sd->impl[i].noise;
        if (isfinite(nz) && nz > p->max_noise)
            joined_add(&noisy, "%s %.1f%%", impl_id(cx, i), 100 * nz);
    }
    if (noisy.s)
        finding_add(&cx->audit, DT_LEVEL_METHOD_AUDIT, FK_NOISE, 1u << s, cx->case_ix,
                    cx->small, "%s %s: noise IQR/p50 above %.0f%% (%s)", c->id,
                    dt_scope_name(s), 100 * p->max_noise, noisy.s);
    free(few.s);
    free(noisy.s);
}

/* The scope name that seeds a scope's bootstrap: its own, except that the dispatch scopes
 * of a record from before held windows keep the name the file gave them (control_*), so
 * that such a file derives to the intervals it was written with. */
static const char *seed_name(const dt_record *r, dt_scope s) {
    if (!r->settings.held_windows && s == DT_SCOPE_DISPATCH_BATCH)
        return dt_scope_name(DT_SCOPE_CONTROL_BATCH);
    if (!r->settings.held_windows && s == DT_SCOPE_DISPATCH_SINGLE)
        return dt_scope_name(DT_SCOPE_CONTROL_SINGLE);
    return dt_scope_name(s);
}

/* Each candidate's paired ratio to the baseline with its interval, and its verdict. */
static dt_status scope_ratios(derive_ctx *cx, dt_case *c, int valid, dt_scope s,
                              dt_err *err) {
    dt_scope_derived *sd = &c->derived.scopes[s];
    const dt_policy *p = cx->p;
    uint64_t seed = dt_derive_seed(p->bootstrap_seed, c->id, seed_name(cx->r, s));
    for (size_t j = 1; j < cx->r->n_impls; j++) {
        double *cu = NULL, *bu = NULL;
        size_t skipped = 0;
        size_t np = pair_by_key(samples_of(c, j, s), samples_of(c, 0, s), &cu, &bu, &skipped);
        dt_scope_vs *vs = &sd->vs[j];
        vs->present = 1;
        vs->verdict = DT_REC_VERDICT_INVALID;
        /* an emulated side (FP32 standing in for the case dtype) gets no speed verdict and
         * no ratio: its times are shown, never compared (docs/statistics.md) */
        const int emulated = c->impl[0].emulated || c->impl[j].emulated;
        if (valid && np > 0 && !emulated) {
            dt_interval iv;
            dt_status st = dt_stats_paired_ratio_interval(cu, bu, np, p->bootstrap_resamples,
                                                          seed, &iv, err);
            if (st != DT_OK) {
                free(cu);
                free(bu);
                return st;
            }
            vs->has_ratio = 1;
            vs->ratio = rec_ratio(&iv, skipped);
            /* a held scope of a run with held windows: each implementation's process moves
             * its held launches by up to DT_HELD_PROCESS_LAUNCH_US / 2 a kernel, which the
             * pairs of one run cannot show; the verdict's interval is widened by that band
             * (the ratio keeps the bootstrap interval; process_band says by how much) */
            dt_interval vi = iv;
            if (cx->r->settings.held_windows && dt_derive_held_scope(s)) {
                vs->process_band = dt_derive_process_band(
                    sd->impl[j].summary.p50, dt_derive_case_kernels_per_call(c, j),
                    sd->impl[0].summary.p50, dt_derive_case_kernels_per_call(c, 0));
                vi.ci_low = iv.ci_low / vs->process_band;
                vi.ci_high = iv.ci_high * vs->process_band;
            }
            vs->verdict = (dt_rec_verdict)dt_stats_verdict_band(1, &vi, p->min_pairs_interval,
                                                                p->equiv_low, p->equiv_high);
        }
        free(cu);
        free(bu);
    }
    return DT_OK;
}

/* Probe scopes: per impl probe/control over (round, index) pairs and the probe medians;
 * for a valid case a batch probe/control outside the policy's band is a finding. */
static void scope_probe(derive_ctx *cx, dt_case *c, int valid, dt_scope s) {
    dt_scope_derived *sd = &c->derived.scopes[s];
    const dt_policy *p = cx->p;
    for (size_t k = 0; k < cx->r->n_impls; k++) {
        size_t i = cx->order[k];
        double *pu = NULL, *cu = NULL;
        size_t sk = 0;
        size_t n = pair_by_key(samples_of(c, i, s), samples_of(c, i, control_of(cx->r, s)), &pu,
                               &cu, &sk);
        double med = dt_stats_median_paired_ratio(pu, cu, n);
        free(pu);
        free(cu);
        dt_scope_impl *si = &sd->impl[i];
        si->has_probe_over_control = 1;
        si->probe_over_control = med;
        si->probe_over_control_pairs = n;
        if (valid && s == DT_SCOPE_PROBE_BATCH && isfinite(med) &&
            (med < p->probe_low || med > p->probe_high))
            finding_add(&cx->audit, DT_LEVEL_METHOD_AUDIT, FK_PROBE, 1u << DT_SCOPE_PROBE_BATCH,
                        cx->case_ix, cx->small, "%s: %s probe/control %.3f outside [%.2f, %.2f]",
                        c->id, impl_id(cx, i), med, p->probe_low, p->probe_high);
        if (samples_of(c, i, s)->n > 0)
            probe_summary(samples_of(c, i, s), &si->probe);
    }
}

static dt_status derive_scope(derive_ctx *cx, dt_case *c, int valid, dt_scope s, dt_err *err) {
    c->derived.scopes[s].present = 1;
    scope_summaries(cx, c, valid, s);
    dt_status st = scope_ratios(cx, c, valid, s, err);
    if (st != DT_OK)
        return st;
    if (dt_scope_is_probe(s))
        scope_probe(cx, c, valid, s);
    return DT_OK;
}

/* ---- rooflines and E2E floors ---- */

/* A p50 of a derived scope, NaN when the scope was not derived. */
static double scope_p50(const dt_case *c, dt_scope s, size_t impl) {
    const dt_scope_derived *sd = &c->derived.scopes[s];
    return sd->present && sd->impl[impl].summary.n > 0 ? sd->impl[impl].summary.p50 : NAN;
}

/* A usable ceilings value (NaN when the ceilings are absent or failed). */
static double ceiling(const dt_ceilings_rec *ce, double v) {
    return ce->present && !ce->error ? v : NAN;
}

/* The FLOP ceiling of dtype ty (environment.ceilings.flops); NAN where none measured. */
static double flop_ceiling(const dt_ceilings_rec *ce, dt_dtype ty) {
    const double t = !ce->present       ? 0
                     : ty == DT_BF16    ? ce->flops.bf16_tflops
                     : ty == DT_F16     ? ce->flops.fp16_tflops
                                        : ce->flops.fp32_tflops;
    return pos_finite(t) ? t : NAN;
}

/* The roofline of one valid case (docs/results-format.md): per impl the control_batch
 * p50 when present, else the dispatch_batch p50 (files before held windows), else the
 * e2e_batch p50; GB/s over the fewest bytes, % of the copy
 * ceiling (memory-bound ops), TFLOP/s and for gemm its % of the dtype's FLOP ceiling
 * when measured. Nothing without a positive copy ceiling. */
static void derive_roofline(const derive_ctx *cx, dt_case *c) {
    const dt_ceilings_rec *ce = &cx->r->env.ceilings;
    double copy = ceiling(ce, ce->copy_gbps);
    if (!pos_finite(copy) || (int)c->op < 0 || (int)c->op >= DT_OP_COUNT)
        return;
    int gemm = dt_op_get(c->op)->is_gemm;
    if (c->m < 1 || c->n < 1 || c->k < 0 || (gemm && c->k < 1))
        return;
    dt_roofline *rl = &c->derived.roofline;
    rl->present = 1;
    const dt_dtype ty = c->dtype == DT_ELEM_BF16 ? DT_BF16 : c->dtype == DT_ELEM_F16 ? DT_F16
                                                                                    : DT_F32;
    rl->min_bytes = (double)dt_op_min_bytes_typed(c->op, c->m, c->n, c->k, ty);
    rl->flops = dt_op_flops(c->op, c->m, c->n, c->k);
    rl->bound = gemm ? DT_BOUND_COMPUTE : DT_BOUND_MEMORY;
    rl->copy_gbps = copy;
    rl->flop_tflops = gemm ? flop_ceiling(ce, ty) : NAN;
    static const dt_scope pref[3] = {DT_SCOPE_CONTROL_BATCH, DT_SCOPE_DISPATCH_BATCH,
                                     DT_SCOPE_E2E_BATCH};
    for (size_t i = 0; i < cx->r->n_impls; i++) {
        dt_scope scope = pref[0];
        double us = NAN;
        for (int q = 0; q < 3 && !pos_finite(us); q++)
            us = scope_p50(c, scope = pref[q], i);
        if (!pos_finite(us))
            continue;
        dt_roofline_impl *ri = &rl->impl[i];
        ri->present = 1;
        ri->scope = scope;
        ri->us = us;
        ri->gbps = rl->min_bytes / (us * 1e3);
        ri->copy_pct = gemm ? NAN : 100.0 * ri->gbps / copy;
        ri->tflops = rl->flops / (us * 1e6);
        ri->flop_pct = pos_finite(rl->flop_tflops) ? 100.0 * ri->tflops / rl->flop_tflops : NAN;
    }
}

/* The paired E2E floor multiple of one impl: median of single/floor over (round, index)
 * pairs with its interval (seed from the case id and "e2e_floor/<impl id>"). */
static void floor_paired(const derive_ctx *cx, const dt_case *c, size_t i,
                         dt_e2e_floor_impl *fi) {
    double *su = NULL, *fu = NULL;
    size_t skipped = 0;
    size_t np = pair_by_key(samples_of(c, i, DT_SCOPE_E2E_SINGLE), &c->floor, &su, &fu,
                            &skipped);
    char *scope = str_printf("e2e_floor/%s", impl_id(cx, i));
    dt_interval iv;
    dt_err e2 = {{0}};
    if (np > 0 &&
        dt_stats_paired_ratio_interval(su, fu, np, cx->p->bootstrap_resamples,
                                       dt_derive_seed(cx->p->bootstrap_seed, c->id, scope), &iv,
                                       &e2) == DT_OK) {
        fi->over_floor = iv.median;
        fi->has_over_floor_ratio = 1;
        fi->over_floor_ratio = rec_ratio(&iv, skipped);
    }
    free(scope);
    free(su);
    free(fu);
}

/* The E2E floor of one valid small case (M*N <= policy.small_case_max_elems): per impl
 * the single-call E2E p50 over the case's paired floor samples (when it has some) or over
 * the run's launch+sync floor, and over the touch floor when measured. */
static void derive_e2e_floor(const derive_ctx *cx, dt_case *c) {
    const dt_ceilings_rec *ce = &cx->r->env.ceilings;
    if (c->m < 1 || c->n < 1)
        return;
    double floor_us = ceiling(ce, ce->launch_sync_floor_us);
    double touch_us = ceiling(ce, ce->launch_sync_touch_floor_us);
    int touch = pos_finite(touch_us);
    size_t nf = 0;
    double *fv = samples_us(&c->floor, &nf);
    double case_floor = nf ? dt_stats_median(fv, nf) : NAN;
    free(fv);
    int paired = pos_finite(case_floor);
    if (!(pos_finite(floor_us) || paired) || c->m * c->n > cx->p->small_case_max_elems)
        return;
    dt_e2e_floor *ef = &c->derived.e2e_floor;
    ef->present = 1;
    ef->source = paired ? DT_FLOOR_PAIRED : DT_FLOOR_CEILINGS;
    ef->floor_us = floor_us;
    ef->case_floor_us = paired ? case_floor : NAN;
    ef->touch_floor_us = touch ? touch_us : NAN;
    for (size_t i = 0; i < cx->r->n_impls; i++) {
        double single = scope_p50(c, DT_SCOPE_E2E_SINGLE, i);
        if (!pos_finite(single))
            continue;
        dt_e2e_floor_impl *fi = &ef->impl[i];
        fi->present = 1;
        fi->single_us = single;
        if (paired)
            floor_paired(cx, c, i, fi);
        else
            fi->over_floor = single / floor_us;
        if (touch)
            fi->over_touch_floor = single / touch_us;
    }
}

/* The held floor check of one valid small case (issue 12's target): per impl the held
 * control batch p50 over (kernels per call x the held touch floor batch); kernels per
 * call from the probe batch (kernels/call p50) when present, else 1. */
static void derive_held_floor(const derive_ctx *cx, dt_case *c) {
    const dt_ceilings_rec *ce = &cx->r->env.ceilings;
    double touch = ceiling(ce, ce->held_touch_floor_batch_us);
    if (!pos_finite(touch) || !cx->small || !c->derived.scopes[DT_SCOPE_CONTROL_BATCH].present)
        return;
    dt_held_floor *hf = &c->derived.held_floor;
    hf->present = 1;
    hf->touch_floor_us = touch;
    for (size_t i = 0; i < cx->r->n_impls; i++) {
        double us = scope_p50(c, DT_SCOPE_CONTROL_BATCH, i);
        if (!pos_finite(us))
            continue;
        const dt_scope_derived *pb = &c->derived.scopes[DT_SCOPE_PROBE_BATCH];
        double kpc = pb->present && pb->impl[i].probe.present
                         ? pb->impl[i].probe.kernels_per_call_p50 : NAN;
        dt_held_floor_impl *hi = &hf->impl[i];
        hi->present = 1;
        hi->control_batch_us = us;
        hi->kernels_from_probe = pos_finite(kpc);
        hi->kernels_per_call = hi->kernels_from_probe ? kpc : 1.0;
        hi->over_touch_floor = us / (hi->kernels_per_call * touch);
    }
}

/* ---- the run ---- */

static int case_small(const dt_policy *p, const dt_case *c) {
    return c->m >= 1 && c->n >= 1 && c->m * c->n <= p->small_case_max_elems;
}

/* Derives one case and adds its case-level findings and counts. */
static dt_status derive_case(derive_ctx *cx, size_t ci, int is_cuda, dt_err *err) {
    dt_record *r = cx->r;
    dt_case *c = &r->cases[ci];
    int valid = case_valid(cx, c);
    cx->case_ix = ci;
    cx->small = case_small(cx->p, c);
    c->derived.present = 1;
    for (int s = 0; s < DT_SCOPE_COUNT; s++) {
        if (!scope_has_samples(cx, c, (dt_scope)s))
            continue;
        dt_status st = derive_scope(cx, c, valid, (dt_scope)s, err);
        if (st != DT_OK)
            return st;
    }
    if (valid) {
        derive_roofline(cx, c);
        derive_e2e_floor(cx, c);
        derive_held_floor(cx, c);
        /* device timing: the control, or in a file before held windows its dispatch */
        int device = c->derived.scopes[DT_SCOPE_CONTROL_BATCH].present ||
                     (!r->settings.held_windows &&
                      c->derived.scopes[DT_SCOPE_DISPATCH_BATCH].present);
        if (is_cuda && !device)
            finding_add(&cx->smoke, DT_LEVEL_SMOKE, FK_NOCONTROL,
                        (1u << DT_SCOPE_CONTROL_BATCH) | (1u << DT_SCOPE_CONTROL_SINGLE), ci,
                        cx->small, "%s: no device control (control_batch) in a cuda run", c->id);
        unsigned derived = 0; /* clocks concern every scope the case measured */
        for (int s = 0; s < DT_SCOPE_COUNT; s++)
            derived |= c->derived.scopes[s].present ? 1u << s : 0u;
        if (c->clocks_moved)
            finding_add(&cx->audit, DT_LEVEL_METHOD_AUDIT, FK_CLOCKS, derived, ci, cx->small,
                        "%s: GPU clocks moved during the case", c->id);
    }
    r->derived.n_valid += valid;
    const dt_scope_derived *e2e = &c->derived.scopes[DT_SCOPE_E2E_BATCH];
    for (size_t j = 1; j < r->n_impls; j++) {
        dt_rec_verdict v = valid && e2e->present ? e2e->vs[j].verdict : DT_REC_VERDICT_INVALID;
        r->derived.vs[j].n[v]++;
    }
    return DT_OK;
}

/* Copies the texts of fs (those whose mask meets `mask`) into out, capped at
 * policy.max_reasons entries plus "... and N more". */
static void reasons_capped(const derive_ctx *cx, const findings *const *lists, size_t nlists,
                           unsigned mask, dt_strv *out) {
    size_t total = 0, shown = 0;
    for (size_t l = 0; l < nlists; l++)
        for (size_t k = 0; k < lists[l]->n; k++) {
            if (!(lists[l]->v[k].mask & mask))
                continue;
            if (shown < cx->p->max_reasons) {
                dt_strv_push(out, lists[l]->v[k].text);
                shown++;
            }
            total++;
        }
    if (total > shown)
        reason_add(out, "... and %zu more", total - shown);
}

/* One line of the counted summary: findings of one kind (and, for per-scope kinds, one
 * size class, call kind and probe-or-not), in how many scopes or cases. */
typedef struct sgroup {
    fkind kind;
    dt_level level;
    int small, single, probe;
    size_t count, last_case;
    const char *text; /* FK_RUN: the finding itself */
} sgroup;

static int cmp_sgroup(const void *pa, const void *pb) {
    const sgroup *a = pa, *b = pb;
    if (a->level != b->level)
        return a->level < b->level ? -1 : 1; /* smoke first */
    if (a->probe != b->probe)
        return a->probe - b->probe; /* diagnostics last */
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return 0;
}

static void group_add(sgroup **gs, size_t *ng, const finding *f) {
    int single = 0, probe = (f->mask & ~PROBE_SCOPES) == 0;
    for (int s = 0; s < DT_SCOPE_COUNT; s++)
        if ((f->mask & ALL_SCOPES) == (1u << s))
            single = dt_scope_is_single((dt_scope)s);
    int per_scope = f->kind == FK_FEW || f->kind == FK_NOISE;
    for (size_t g = 0; f->kind != FK_RUN && g < *ng; g++) {
        sgroup *x = &(*gs)[g];
        if (x->kind != f->kind || x->probe != probe ||
            (per_scope && (x->small != f->small || x->single != single)))
            continue;
        if (per_scope || x->last_case != f->case_ix) /* per case: distinct cases */
            x->count++;
        x->last_case = f->case_ix;
        return;
    }
    *gs = realloc(*gs, (*ng + 1) * sizeof **gs);
    DT_ASSERT(*gs);
    (*gs)[(*ng)++] = (sgroup){.kind = f->kind, .level = f->level, .small = f->small,
                              .single = single, .probe = probe, .count = 1,
                              .last_case = f->case_ix, .text = f->text};
}

/* "12 small single-call scopes", "3 large batch probe scopes (diagnostic)" */
static char *group_line(const dt_policy *p, const sgroup *g) {
    const char *pl = g->count == 1 ? "" : "s";
    const char *diag = g->probe ? " (probe: diagnostic)" : "";
    char *where = str_printf("%zu %s %s%s scope%s%s", g->count, g->small ? "small" : "large",
                             g->single ? "single-call" : "batch", g->probe ? " probe" : "", pl,
                             g->probe ? " (diagnostic)" : "");
    char *line;
    switch (g->kind) {
    case FK_FEW: line = str_printf("too few samples (< %zu) in %s", p->min_samples, where); break;
    case FK_NOISE: line = str_printf("noise > %g%% in %s", 100 * p->max_noise, where); break;
    case FK_NOCONTROL:
        line = str_printf("no device control in %zu case%s of a cuda run", g->count, pl);
        break;
    case FK_CLOCKS: line = str_printf("GPU clocks moved in %zu case%s", g->count, pl); break;
    case FK_PROBE:
        line = str_printf("probe/control outside [%.2f, %.2f] in %zu case%s%s", p->probe_low,
                          p->probe_high, g->count, pl, diag);
        break;
    default: line = dt_xstrdup(g->text); break;
    }
    free(where);
    return line;
}

/* The counted summary of every finding (run-wide first), one line per group. */
static void summarize(const derive_ctx *cx, const findings *const *lists, size_t nlists) {
    sgroup *gs = NULL;
    size_t ng = 0;
    for (size_t l = 0; l < nlists; l++)
        for (size_t k = 0; k < lists[l]->n; k++)
            group_add(&gs, &ng, &lists[l]->v[k]);
    if (ng > 1)
        qsort(gs, ng, sizeof *gs, cmp_sgroup);
    for (size_t g = 0; g < ng; g++) {
        char *line = group_line(cx->p, &gs[g]);
        dt_strv_push(&cx->r->derived.summary, line);
        free(line);
    }
    free(gs);
}

/* Per scope: present when some case derived it or a finding names it; its level the
 * lowest of its findings and the run-wide ones; its own findings as reasons. */
static void assess_scopes(derive_ctx *cx, const findings *run, const findings *const *lists,
                          size_t nlists) {
    dt_run_derived *d = &cx->r->derived;
    for (int s = 0; s < DT_SCOPE_COUNT; s++) {
        dt_scope_assessment *sa = &d->scopes[s];
        unsigned bit = 1u << s;
        for (size_t i = 0; i < cx->r->n_cases && !sa->present; i++)
            sa->present = cx->r->cases[i].derived.scopes[s].present;
        sa->level = DT_LEVEL_COMPARATIVE;
        for (size_t k = 0; k < run->n; k++)
            if (run->v[k].level < sa->level)
                sa->level = run->v[k].level;
        for (size_t l = 0; l < nlists; l++)
            for (size_t k = 0; k < lists[l]->n; k++)
                if (lists[l]->v[k].mask & bit) {
                    sa->present = 1;
                    if (lists[l]->v[k].level < sa->level)
                        sa->level = lists[l]->v[k].level;
                }
        if (sa->present)
            reasons_capped(cx, lists, nlists, bit, &sa->reasons);
    }
}

/* The assessment (SPEC §7). Findings: run-wide smoke, then the cases' smoke findings,
 * then their method-audit findings; the run's reasons list them all in that order
 * (capped at policy.max_reasons plus "... and N more"). Each scope gets the lowest level
 * of the findings that concern it and of the run-wide ones; the run gets the lowest
 * level over the scopes that carry verdicts (every scope but probe_*: a perturbing or
 * noisy probe makes the probe scope a method audit, not the control's or the run's). A
 * run without any finding gets one reason saying what was satisfied. */
static void assess(derive_ctx *cx, int is_cuda) {
    dt_record *r = cx->r;
    const dt_policy *p = cx->p;
    dt_run_derived *d = &r->derived;
    findings run = {0};
    if (!r->complete)
        finding_add(&run, DT_LEVEL_SMOKE, FK_RUN, ALL_SCOPES, 0, 0,
                    "run incomplete (complete is not true)");
    if (r->n_cases == 0)
        finding_add(&run, DT_LEVEL_SMOKE, FK_RUN, ALL_SCOPES, 0, 0, "no cases");
    else if (d->n_valid == 0)
        finding_add(&run, DT_LEVEL_SMOKE, FK_RUN, ALL_SCOPES, 0, 0, "no valid case");
    long long rounds = r->settings.rounds > 0 ? (long long)r->settings.rounds
                                              : (long long)cx->max_round + 1;
    if (rounds < p->min_rounds)
        finding_add(&run, DT_LEVEL_SMOKE, FK_RUN, ALL_SCOPES, 0, 0, "%lld round%s (< %d)",
                    rounds, rounds == 1 ? "" : "s", p->min_rounds);
    const findings *lists[3] = {&run, &cx->smoke, &cx->audit};
    d->level = DT_LEVEL_COMPARATIVE;
    for (size_t l = 0; l < 3; l++)
        for (size_t k = 0; k < lists[l]->n; k++)
            if ((lists[l]->v[k].mask & VERDICT_SCOPES) && lists[l]->v[k].level < d->level)
                d->level = lists[l]->v[k].level;
    assess_scopes(cx, &run, lists + 1, 2);
    if (run.n + cx->smoke.n + cx->audit.n == 0) {
        char *probe = is_cuda ? str_printf(", probe/control within [%.2f, %.2f]", p->probe_low,
                                           p->probe_high)
                              : dt_xstrdup("");
        reason_add(&d->reasons, "%zu valid case%s, >= %zu samples per scope, %lld rounds%s, "
                                "noise <= %.0f%%%s",
                   d->n_valid, d->n_valid == 1 ? "" : "s", p->min_samples, rounds,
                   is_cuda ? ", device control present" : "", 100 * p->max_noise, probe);
        free(probe);
        dt_strv_push(&d->summary, d->reasons.v[0]);
    } else {
        reasons_capped(cx, lists, 3, ALL_SCOPES, &d->reasons);
        summarize(cx, lists, 3);
    }
    findings_free(&run);
}

/* The policy to derive with: r->derived.policy with the run's bootstrap settings;
 * refuses what dt_stats cannot compute. */
static dt_status derive_policy(const dt_record *r, dt_policy *p, dt_err *err) {
    *p = r->derived.policy;
    p->bootstrap_resamples = r->settings.bootstrap_resamples;
    p->bootstrap_seed = r->settings.bootstrap_seed;
    if (r->n_impls == 0 || r->impls[0].role != DT_ROLE_BASELINE)
        return dt_fail(err, DT_EINVAL, "derive: the record has no baseline implementation");
    if (p->bootstrap_resamples == 0)
        return dt_fail(err, DT_EINVAL, "derive: bootstrap resamples must be at least 1");
    if (p->ci_level != 0.95 || p->min_pairs_interval != DT_STATS_MIN_PAIRS)
        return dt_fail(err, DT_EINVAL,
                       "derive: policy asks for a %g interval from %zu pairs; dt_stats computes "
                       "95%% intervals from %d pairs", p->ci_level, p->min_pairs_interval,
                       DT_STATS_MIN_PAIRS);
    return DT_OK;
}

dt_status dt_derive_run(dt_record *r, dt_err *err) {
    dt_policy policy;
    dt_status st = derive_policy(r, &policy, err);
    dt_record_derived_clear(r);
    r->derived.policy = policy;
    if (st != DT_OK)
        return st;
    derive_ctx cx = {.r = r, .p = &r->derived.policy, .max_round = -1};
    cx.order = dt_xmalloc(r->n_impls * sizeof *cx.order);
    for (size_t i = 1; i < r->n_impls; i++)
        cx.order[i - 1] = i;
    cx.order[r->n_impls - 1] = 0;
    int is_cuda = r->settings.backend && strcmp(r->settings.backend, "cuda") == 0;
    r->derived.n_cases = r->n_cases;
    for (size_t i = 0; i < r->n_cases && st == DT_OK; i++)
        st = derive_case(&cx, i, is_cuda, err);
    if (st == DT_OK) {
        assess(&cx, is_cuda);
        r->derived.present = 1;
    } else {
        dt_record_derived_clear(r);
        r->derived.policy = policy;
    }
    findings_free(&cx.smoke);
    findings_free(&cx.audit);
    free(cx.order);
    return st;
}
