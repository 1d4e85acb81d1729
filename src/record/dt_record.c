/* dt_record.c — the typed run record: name tables, constructors, appenders and free.
 * Contract in dt_record.h. */
#include "record/dt_record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Grows *p (element size elem, capacity *cap) to hold at least need elements; new
 * elements are zeroed. */
static void grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return;
    size_t nc = *cap ? *cap * 2 : 4;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * elem);
    DT_ASSERT(q);
    memset((char *)q + *cap * elem, 0, (nc - *cap) * elem);
    *p = q;
    *cap = nc;
}
#define GROW(ptr, n, cap) grow((void **)&(ptr), &(cap), (n) + 1, sizeof *(ptr))

static char *dup_or_null(const char *s) { return s ? dt_xstrdup(s) : NULL; }

void dt_record_set_str(char **dst, const char *s) {
    char *v = dup_or_null(s);
    free(*dst);
    *dst = v;
}

/* ---- name tables ---------------------------------------------------------------------- */

static const char *const k_scope_names[DT_SCOPE_COUNT] = {
    "e2e_batch",     "e2e_single",     "control_batch",   "control_single", "probe_batch",
    "probe_single",  "dispatch_batch", "dispatch_single", "graph_batch"};

/* Index of name in a table of n names, or -1. */
static int table_find(const char *const *table, int n, const char *name) {
    if (!name)
        return -1;
    for (int i = 0; i < n; i++)
        if (strcmp(table[i], name) == 0)
            return i;
    return -1;
}

const char *dt_scope_name(dt_scope s) {
    DT_ASSERT((int)s >= 0 && s < DT_SCOPE_COUNT);
    return k_scope_names[s];
}
int dt_scope_find(const char *name) { return table_find(k_scope_names, DT_SCOPE_COUNT, name); }
int dt_scope_is_host(dt_scope s) { return s == DT_SCOPE_E2E_BATCH || s == DT_SCOPE_E2E_SINGLE; }
int dt_scope_is_probe(dt_scope s) {
    return s == DT_SCOPE_PROBE_BATCH || s == DT_SCOPE_PROBE_SINGLE;
}
int dt_scope_is_single(dt_scope s) {
    return s == DT_SCOPE_E2E_SINGLE || s == DT_SCOPE_CONTROL_SINGLE ||
           s == DT_SCOPE_PROBE_SINGLE || s == DT_SCOPE_DISPATCH_SINGLE;
}

static const char *const k_elem_names[DT_ELEM_COUNT] = {"f32", "bf16", "f16"};
const char *dt_elem_type_name(dt_elem_type t) {
    DT_ASSERT((int)t >= 0 && t < DT_ELEM_COUNT);
    return k_elem_names[t];
}
int dt_elem_type_find(const char *name) { return table_find(k_elem_names, DT_ELEM_COUNT, name); }

const char *dt_role_name(dt_role r) { return r == DT_ROLE_BASELINE ? "baseline" : "candidate"; }
const char *dt_impl_status_name(dt_impl_status s) { return s == DT_IMPL_OK ? "ok" : "failed"; }

static const char *const k_cheat_names[DT_CHEAT_COUNT] = {
    "cheat.cached_result", "cheat.skipped_work",   "cheat.side_stream",
    "cheat.wrote_input",   "cheat.aliased_output", "cheat.faster_than_physics"};
const char *dt_cheat_check_name(dt_cheat_check c) {
    DT_ASSERT((int)c >= 0 && c < DT_CHEAT_COUNT);
    return k_cheat_names[c];
}
int dt_cheat_check_find(const char *name) {
    for (int i = 0; name && i < DT_CHEAT_COUNT; i++)
        if (strcmp(name, k_cheat_names[i]) == 0) return i;
    return -1;
}
static const char *const k_cheat_status[DT_CHEAT_STATUS_COUNT] = {"unset", "passed", "caught",
                                                                  "not_applicable"};
const char *dt_cheat_status_name(dt_cheat_status s) {
    DT_ASSERT((int)s >= 0 && s < DT_CHEAT_STATUS_COUNT);
    return k_cheat_status[s];
}
int dt_cheat_status_find(const char *name) {
    for (int i = 1; name && i < DT_CHEAT_STATUS_COUNT; i++)
        if (strcmp(name, k_cheat_status[i]) == 0) return i;
    return -1;
}

static const char *const k_verdict_names[DT_REC_VERDICT_COUNT] = {
    "invalid", "insufficient", "indistinguishable", "faster", "slower"};
const char *dt_rec_verdict_name(dt_rec_verdict v) {
    DT_ASSERT((int)v >= 0 && v < DT_REC_VERDICT_COUNT);
    return k_verdict_names[v];
}
int dt_rec_verdict_find(const char *name) {
    return table_find(k_verdict_names, DT_REC_VERDICT_COUNT, name);
}

static const char *const k_level_names[] = {"smoke", "method audit", "comparative"};
const char *dt_level_name(dt_level l) {
    DT_ASSERT((int)l >= 0 && l <= DT_LEVEL_COMPARATIVE);
    return k_level_names[l];
}
int dt_level_find(const char *name) { return table_find(k_level_names, 3, name); }

const char *dt_bound_name(dt_bound b) { return b == DT_BOUND_COMPUTE ? "compute" : "memory"; }
const char *dt_floor_source_name(dt_floor_source s) {
    return s == DT_FLOOR_CEILINGS ? "ceilings" : "paired";
}

dt_policy dt_policy_default(void) {
    dt_policy p;
    memset(&p, 0, sizeof p);
    p.equiv_low = 0.98;
    p.equiv_high = 1.02;
    p.min_pairs_interval = 3;
    p.ci_level = 0.95;
    p.bootstrap_resamples = 2000u;
    p.bootstrap_seed = 20261130ull;
    p.max_noise = 0.10;
    p.probe_low = 0.90;
    p.probe_high = 1.10;
    p.min_samples = 5;
    p.min_rounds = 2;
    p.small_case_max_elems = 131072;
    p.max_reasons = 20;
    p.clocks_sm_tolerance = 0.02;
    p.clocks_max_temp_rise_c = 10;
    p.compare_threshold = 0.05;
    p.compare_min_samples = 3;
    return p;
}

/* ---- strings and samples ------------------------------------------------------------ */

void dt_strv_push(dt_strv *sv, const char *s) {
    DT_ASSERT(s);
    GROW(sv->v, sv->n, sv->cap);
    sv->v[sv->n++] = dt_xstrdup(s);
}

void dt_strv_free(dt_strv *sv) {
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    memset(sv, 0, sizeof *sv);
}

dt_sample dt_sample_empty(void) {
    dt_sample s;
    memset(&s, 0, sizeof s);
    s.probe.kernel_sum_us = s.probe.kernel_span_us = NAN;
    s.probe.clock_offset_ns = s.probe.clock_uncertainty_ns = NAN;
    s.probe.kernel_count = s.probe.launch_count = DT_NULL_I64;
    return s;
}

dt_sample *dt_samples_push(dt_samples *samples, const dt_sample *s) {
    GROW(samples->v, samples->n, samples->cap);
    samples->v[samples->n] = *s;
    return &samples->v[samples->n++];
}

void dt_probe_kernel_add(dt_probe *p, const char *name, int64_t count, double us) {
    GROW(p->kernels, p->n_kernels, p->cap_kernels);
    dt_probe_kernel *k = &p->kernels[p->n_kernels++];
    k->name = dt_xstrdup(name);
    k->count = count;
    k->us = us;
    p->has_kernels = 1;
}

void dt_probe_row_add(dt_probe_records *rec, const dt_probe_row *row) {
    GROW(rec->rows, rec->n_rows, rec->cap_rows);
    rec->rows[rec->n_rows++] = *row;
    rec->present = 1;
}

size_t dt_probe_records_name(dt_probe_records *rec, const char *name,
                             const dt_probe_launch *launch) {
    for (size_t i = 0; i < rec->names.n; i++)
        if (strcmp(rec->names.v[i], name) == 0)
            return i;
    size_t old_cap = rec->names.cap;
    dt_strv_push(&rec->names, name);
    if (rec->names.cap != old_cap) { /* launch[] follows names' capacity */
        rec->launch = realloc(rec->launch, rec->names.cap * sizeof *rec->launch);
        DT_ASSERT(rec->launch);
    }
    dt_probe_launch *l = &rec->launch[rec->names.n - 1];
    if (launch)
        *l = *launch;
    else
        memset(l, 0, sizeof *l);
    rec->present = 1;
    return rec->names.n - 1;
}

static void probe_free(dt_probe *p) {
    for (size_t i = 0; i < p->n_kernels; i++)
        free(p->kernels[i].name);
    free(p->kernels);
    dt_strv_free(&p->records.names);
    free(p->records.launch);
    free(p->records.rows);
}

void dt_samples_free(dt_samples *samples) {
    for (size_t i = 0; i < samples->n; i++)
        if (samples->v[i].has_probe)
            probe_free(&samples->v[i].probe);
    free(samples->v);
    memset(samples, 0, sizeof *samples);
}

/* ---- case implementations, clocks ---------------------------------------------------- */

dt_check *dt_case_impl_check_add(dt_case_impl *ci) {
    GROW(ci->checks, ci->n_checks, ci->cap_checks);
    return &ci->checks[ci->n_checks++];
}

void dt_case_impl_calib_add(dt_case_impl *ci, int64_t reps, double us_per_call) {
    GROW(ci->calib_attempts, ci->n_calib_attempts, ci->cap_calib_attempts);
    ci->calib_attempts[ci->n_calib_attempts].reps = reps;
    ci->calib_attempts[ci->n_calib_attempts++].us_per_call = us_per_call;
    ci->has_calibration = 1;
}

static void check_free(dt_check *c) {
    free(c->when);
    free(c->arena.first_problem);
    free(c->oracle.first_text);
}

static void case_impl_free(dt_case_impl *ci) {
    free(ci->error);
    free(ci->stderr_tail);
    free(ci->output_policy);
    free(ci->implementation);
    free(ci->calib_attempts);
    for (size_t i = 0; i < ci->n_checks; i++)
        check_free(&ci->checks[i]);
    free(ci->checks);
    free(ci->output_sha256);
    free(ci->energy_reason);
    free(ci->probe_kind);
    dt_decomp_set_free(&ci->decomp);
    free(ci->graph_unavailable);
    free(ci->cache.warm_reason);
    for (int k = 0; k < DT_CHEAT_COUNT; k++)
        free(ci->cheat.check[k].note);
    for (int s = 0; s < DT_SCOPE_COUNT; s++)
        dt_samples_free(&ci->samples[s]);
    dt_strv_free(&ci->sources);
}

dt_input *dt_case_input_add(dt_case *c, const char *name, const char *sha256, int64_t rows,
                            int64_t cols) {
    GROW(c->inputs, c->n_inputs, c->cap_inputs);
    dt_input *in = &c->inputs[c->n_inputs++];
    in->name = dup_or_null(name);
    in->sha256 = dup_or_null(sha256);
    in->rows = rows;
    in->cols = cols;
    return in;
}

void dt_case_round_done_add(dt_case *c, int32_t round) {
    GROW(c->rounds_done, c->n_rounds_done, c->cap_rounds_done);
    c->rounds_done[c->n_rounds_done++] = round;
}

int dt_case_round_is_done(const dt_case *c, int32_t round) {
    for (size_t i = 0; i < c->n_rounds_done; i++)
        if (c->rounds_done[i] == round)
            return 1;
    return 0;
}

dt_clock_round *dt_case_clock_round_add(dt_case *c, const dt_clock_round *cr) {
    GROW(c->clock_rounds, c->n_clock_rounds, c->cap_clock_rounds);
    c->clock_rounds[c->n_clock_rounds] = *cr;
    if (cr->moved)
        c->clocks_moved = 1;
    return &c->clock_rounds[c->n_clock_rounds++];
}

const dt_clock_round *dt_case_clock_shown(const dt_case *c) {
    for (size_t i = 0; i < c->n_clock_rounds; i++)
        if (c->clock_rounds[i].moved)
            return &c->clock_rounds[i];
    return c->n_clock_rounds ? &c->clock_rounds[c->n_clock_rounds - 1] : NULL;
}

static void clock_round_free(dt_clock_round *cr) {
    dt_strv_free(&cr->before.throttle_reasons);
    dt_strv_free(&cr->after.throttle_reasons);
    free(cr->why);
}

/* ---- derived ---------------------------------------------------------------------------- */

static void probe_summary_free(dt_probe_summary *p) {
    for (size_t i = 0; i < p->n_kernels; i++)
        free(p->kernels[i].name);
    free(p->kernels);
    memset(p, 0, sizeof *p);
}

static void roofline_impl_reset(dt_roofline_impl *ri) {
    memset(ri, 0, sizeof *ri);
    ri->us = ri->gbps = ri->copy_pct = ri->tflops = NAN;
}

void dt_case_derived_clear(const dt_record *r, dt_case *c) {
    dt_case_derived *d = &c->derived;
    size_t n = r->n_impls;
    d->present = 0;
    for (int s = 0; s < DT_SCOPE_COUNT; s++) {
        dt_scope_derived *sd = &d->scopes[s];
        if (!sd->impl)
            sd->impl = dt_xcalloc(n ? n : 1, sizeof *sd->impl);
        if (!sd->vs)
            sd->vs = dt_xcalloc(n ? n : 1, sizeof *sd->vs);
        sd->present = 0;
        for (size_t i = 0; i < n; i++) {
            probe_summary_free(&sd->impl[i].probe);
            memset(&sd->impl[i], 0, sizeof sd->impl[i]);
            sd->impl[i].noise = sd->impl[i].probe_over_control = NAN;
            memset(&sd->vs[i], 0, sizeof sd->vs[i]);
        }
    }
    dt_roofline *rf = &d->roofline;
    if (!rf->impl)
        rf->impl = dt_xcalloc(n ? n : 1, sizeof *rf->impl);
    rf->present = 0;
    rf->min_bytes = rf->flops = rf->copy_gbps = NAN;
    rf->bound = DT_BOUND_MEMORY;
    for (size_t i = 0; i < n; i++)
        roofline_impl_reset(&rf->impl[i]);
    dt_e2e_floor *ef = &d->e2e_floor;
    if (!ef->impl)
        ef->impl = dt_xcalloc(n ? n : 1, sizeof *ef->impl);
    ef->present = 0;
    ef->source = DT_FLOOR_PAIRED;
    ef->floor_us = ef->case_floor_us = ef->touch_floor_us = NAN;
    for (size_t i = 0; i < n; i++) {
        memset(&ef->impl[i], 0, sizeof ef->impl[i]);
        ef->impl[i].single_us = ef->impl[i].over_floor = ef->impl[i].over_touch_floor = NAN;
    }
    dt_held_floor *hf = &d->held_floor;
    if (!hf->impl)
        hf->impl = dt_xcalloc(n ? n : 1, sizeof *hf->impl);
    hf->present = 0;
    hf->touch_floor_us = NAN;
    for (size_t i = 0; i < n; i++) {
        memset(&hf->impl[i], 0, sizeof hf->impl[i]);
        hf->impl[i].control_batch_us = hf->impl[i].kernels_per_call = NAN;
        hf->impl[i].over_touch_floor = NAN;
    }
}

static void case_derived_free(const dt_record *r, dt_case *c) {
    dt_case_derived_clear(r, c);
    for (int s = 0; s < DT_SCOPE_COUNT; s++) {
        free(c->derived.scopes[s].impl);
        free(c->derived.scopes[s].vs);
    }
    free(c->derived.roofline.impl);
    free(c->derived.e2e_floor.impl);
    free(c->derived.held_floor.impl);
}

void dt_record_derived_clear(dt_record *r) {
    dt_run_derived *d = &r->derived;
    d->present = 0;
    d->level = DT_LEVEL_SMOKE;
    dt_strv_free(&d->reasons);
    dt_strv_free(&d->summary);
    for (int s = 0; s < DT_SCOPE_COUNT; s++) {
        dt_strv_free(&d->scopes[s].reasons);
        memset(&d->scopes[s], 0, sizeof d->scopes[s]);
    }
    d->n_cases = d->n_valid = 0;
    if (d->vs)
        memset(d->vs, 0, r->n_impls * sizeof *d->vs);
    d->policy = dt_policy_default();
    d->policy.bootstrap_resamples = r->settings.bootstrap_resamples;
    d->policy.bootstrap_seed = r->settings.bootstrap_seed;
    for (size_t i = 0; i < r->n_cases; i++)
        dt_case_derived_clear(r, &r->cases[i]);
}

/* ---- the record ----------------------------------------------------------------------- */

dt_record *dt_record_new(void) {
    dt_record *r = dt_xcalloc(1, sizeof *r);
    r->format_version = DT_RECORD_FORMAT_VERSION;
    r->tool.git_dirty = -1;
    dt_policy p = dt_policy_default();
    r->settings.bootstrap_resamples = p.bootstrap_resamples;
    r->settings.bootstrap_seed = p.bootstrap_seed;
    r->settings.sample_ms = r->settings.warmup_ms = r->settings.timeout_s = NAN;
    r->settings.samples = r->settings.prime = r->settings.seed = DT_NULL_I64;
    r->settings.threads = r->settings.max_reps = r->settings.device_reps_cap = DT_NULL_I64;
    r->settings.held_windows = 1;
    r->settings.pin = -1;
    r->settings.graph = -1;
    r->env.host.cores = DT_NULL_I64;
    r->env.ceilings.copy_gbps = r->env.ceilings.launch_sync_floor_us = NAN;
    r->env.ceilings.launch_queue_floor_us = r->env.ceilings.launch_sync_touch_floor_us = NAN;
    r->env.ceilings.copy_bytes = DT_NULL_I64;
    r->env.ceilings.held_floor_batch_us = r->env.ceilings.held_floor_single_us = NAN;
    r->env.ceilings.held_touch_floor_batch_us = r->env.ceilings.held_touch_floor_single_us = NAN;
    r->env.ceilings.copy_gbps_iqr = NAN;
    r->env.nvml.device_index = r->env.nvml.pci_bus = DT_NULL_I64;
    r->derived.policy = p;
    return r;
}

dt_impl *dt_record_impl_add(dt_record *r, const char *id, dt_role role) {
    DT_ASSERT(r->n_cases == 0);
    DT_ASSERT((r->n_impls == 0) == (role == DT_ROLE_BASELINE));
    size_t old_cap = r->cap_impls;
    GROW(r->impls, r->n_impls, r->cap_impls);
    if (r->cap_impls != old_cap) { /* derived.vs follows impls' capacity */
        r->derived.vs = realloc(r->derived.vs, r->cap_impls * sizeof *r->derived.vs);
        DT_ASSERT(r->derived.vs);
    }
    memset(&r->derived.vs[r->n_impls], 0, sizeof *r->derived.vs);
    dt_impl *im = &r->impls[r->n_impls++];
    im->id = dt_xstrdup(id);
    im->role = role;
    return im;
}

int dt_record_impl_find(const dt_record *r, const char *id) {
    for (size_t i = 0; id && i < r->n_impls; i++)
        if (strcmp(r->impls[i].id, id) == 0)
            return (int)i;
    return -1;
}

static void case_impl_init(dt_case_impl *ci) {
    ci->present = 1;
    ci->status = DT_IMPL_OK;
    ci->stderr_tail = dt_xstrdup("");
    ci->output_policy = dt_xstrdup("");
    ci->implementation = dt_xstrdup("");
    ci->setup_ms.compile = ci->setup_ms.alloc = ci->setup_ms.upload = NAN;
    ci->setup_ms.cold_call = ci->setup_ms.download = NAN;
    ci->warmup_ms = NAN;
    ci->pilot_poc_concurrent = ci->pilot_poc_serialized = NAN;
    ci->energy_j = ci->energy_window_s = ci->energy_j_per_call = ci->avg_power_w = NAN;
}

dt_case *dt_record_case_add(dt_record *r, const char *id) {
    DT_ASSERT(r->n_impls >= 1);
    GROW(r->cases, r->n_cases, r->cap_cases);
    dt_case *c = &r->cases[r->n_cases++];
    memset(c, 0, sizeof *c);
    c->id = dt_xstrdup(id);
    c->dtype = DT_ELEM_F32;
    c->valid = 1;
    c->atol = c->rtol = NAN;
    c->floor_impl = -1;
    c->shard = DT_NULL_I64;
    c->device = DT_NULL_I64;
    c->impl = dt_xcalloc(r->n_impls, sizeof *c->impl);
    for (size_t i = 0; i < r->n_impls; i++)
        case_impl_init(&c->impl[i]);
    dt_case_derived_clear(r, c);
    return c;
}

int dt_record_case_find(const dt_record *r, const char *id) {
    for (size_t i = 0; id && i < r->n_cases; i++)
        if (strcmp(r->cases[i].id, id) == 0)
            return (int)i;
    return -1;
}

static int64_t max_position(const dt_samples *s, int64_t best) {
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].position > best)
            best = s->v[i].position;
    return best;
}

int64_t dt_record_next_position(const dt_record *r) {
    int64_t best = -1;
    for (size_t c = 0; c < r->n_cases; c++) {
        best = max_position(&r->cases[c].floor, best);
        for (size_t i = 0; i < r->n_impls; i++)
            for (int s = 0; s < DT_SCOPE_COUNT; s++)
                best = max_position(&r->cases[c].impl[i].samples[s], best);
    }
    return best + 1;
}

void dt_record_prov_file_add(dt_record *r, const char *what, const char *path,
                             const char *sha256) {
    dt_provenance *p = &r->prov;
    GROW(p->files, p->n_files, p->cap_files);
    dt_prov_file *f = &p->files[p->n_files++];
    f->what = dup_or_null(what);
    f->path = dup_or_null(path);
    f->sha256 = dup_or_null(sha256);
}

dt_prov_source *dt_record_prov_source_add(dt_record *r, const char *sha256, const char *name,
                                          const char *framework) {
    dt_provenance *p = &r->prov;
    GROW(p->sources, p->n_sources, p->cap_sources);
    dt_prov_source *s = &p->sources[p->n_sources++];
    s->sha256 = dup_or_null(sha256);
    s->name = dup_or_null(name);
    s->framework = dup_or_null(framework);
    return s;
}

static void case_free(const dt_record *r, dt_case *c) {
    free(c->id);
    free(c->backend);
    free(c->tol_scale);
    for (size_t i = 0; i < c->n_inputs; i++) {
        free(c->inputs[i].name);
        free(c->inputs[i].sha256);
    }
    free(c->inputs);
    free(c->rounds_done);
    for (size_t i = 0; i < r->n_impls; i++)
        case_impl_free(&c->impl[i]);
    free(c->impl);
    for (size_t i = 0; i < c->n_clock_rounds; i++)
        clock_round_free(&c->clock_rounds[i]);
    free(c->clock_rounds);
    dt_samples_free(&c->floor);
    case_derived_free(r, c);
    free(c->host);
    free(c->device_name);
    free(c->device_uuid);
}

void dt_record_case_remove(dt_record *r, size_t i) {
    DT_ASSERT(i < r->n_cases);
    case_free(r, &r->cases[i]);
    memmove(&r->cases[i], &r->cases[i + 1], (r->n_cases - i - 1) * sizeof *r->cases);
    r->n_cases--;
}

static void env_free(dt_environment *e) {
    free(e->host.cpu);
    free(e->host.os);
    free(e->host.kernel);
    free(e->host.machine);
    free(e->host.hostname);
    free(e->gpu_json);
    free(e->gpu_name);
    free(e->python);
    free(e->orchestrator_cpus);
    free(e->ceilings.error);
    free(e->ceilings.method);
    free(e->ceilings.backend);
    free(e->ceilings.flops.method);
    dt_nvml *n = &e->nvml;
    free(n->reason);
    free(n->library);
    free(n->name);
    free(n->uuid);
    free(n->driver_version);
    free(n->nvml_version);
    free(n->pci_bus_id);
}

static void prov_free(dt_provenance *p) {
    for (size_t i = 0; i < p->n_files; i++) {
        free(p->files[i].what);
        free(p->files[i].path);
        free(p->files[i].sha256);
    }
    free(p->files);
    for (size_t i = 0; i < p->n_sources; i++) {
        free(p->sources[i].sha256);
        free(p->sources[i].name);
        free(p->sources[i].framework);
        dt_strv_free(&p->sources[i].options);
    }
    free(p->sources);
}

/* ---- devices (--devices runs) ---- */

static void ceilings_strings_free(dt_ceilings_rec *c) {
    free(c->error);
    free(c->method);
    free(c->backend);
    free(c->flops.method);
}

static void devices_free(dt_record *r) {
    for (size_t i = 0; i < r->n_devices; i++) {
        dt_device_rec *d = &r->devices[i];
        free(d->name);
        free(d->uuid);
        free(d->pci_bus_id);
        free(d->cpus);
        free(d->dir);
        free(d->started_at);
        free(d->finished_at);
        ceilings_strings_free(&d->ceilings);
    }
    free(r->devices);
    for (size_t i = 0; i < r->n_replicas; i++) {
        free(r->replicas[i].case_id);
        free(r->replicas[i].impl_id);
        free(r->replicas[i].us);
    }
    free(r->replicas);
}

dt_device_rec *dt_record_device_add(dt_record *r) {
    dt_device_rec *grown = realloc(r->devices, (r->n_devices + 1) * sizeof *grown);
    DT_ASSERT(grown);
    r->devices = grown;
    dt_device_rec *d = &r->devices[r->n_devices++];
    memset(d, 0, sizeof *d);
    d->index = d->shard = d->exit_status = d->cases = d->valid = DT_NULL_I64;
    dt_ceilings_rec *c = &d->ceilings;
    c->copy_gbps = c->launch_sync_floor_us = c->launch_queue_floor_us = NAN;
    c->launch_sync_touch_floor_us = c->held_floor_batch_us = c->held_floor_single_us = NAN;
    c->held_touch_floor_batch_us = c->held_touch_floor_single_us = c->copy_gbps_iqr = NAN;
    c->copy_bytes = DT_NULL_I64;
    return d;
}

dt_replica_rec *dt_record_replica_add(dt_record *r, size_t n_us) {
    dt_replica_rec *grown = realloc(r->replicas, (r->n_replicas + 1) * sizeof *grown);
    DT_ASSERT(grown);
    r->replicas = grown;
    dt_replica_rec *q = &r->replicas[r->n_replicas++];
    memset(q, 0, sizeof *q);
    q->us = dt_xcalloc(n_us ? n_us : 1, sizeof *q->us);
    q->n_us = n_us;
    for (size_t i = 0; i < n_us; i++) q->us[i] = NAN;
    q->spread = NAN;
    return q;
}

void dt_ceilings_copy(dt_ceilings_rec *dst, const dt_ceilings_rec *src) {
    *dst = *src;
    dst->error = src->error ? dt_xstrdup(src->error) : NULL;
    dst->method = src->method ? dt_xstrdup(src->method) : NULL;
    dst->backend = src->backend ? dt_xstrdup(src->backend) : NULL;
    dst->flops.method = src->flops.method ? dt_xstrdup(src->flops.method) : NULL;
}

void dt_record_free(dt_record *r) {
    if (!r)
        return;
    free(r->tool.name);
    free(r->tool.version);
    free(r->tool.git_revision);
    free(r->tool.git_source);
    dt_strv_free(&r->command_line);
    free(r->started_at);
    free(r->finished_at);
    free(r->settings.backend);
    free(r->settings.backend_choice);
    free(r->settings.operations);
    free(r->settings.probe_kind);
    free(r->settings.pin_reason);
    free(r->settings.inputs);
    free(r->settings.dtypes);
    free(r->settings.cache);
    for (size_t i = 0; i < r->n_cases; i++)
        case_free(r, &r->cases[i]);
    free(r->cases);
    for (size_t i = 0; i < r->n_impls; i++) {
        free(r->impls[i].id);
        free(r->impls[i].framework);
        free(r->impls[i].framework_version);
        dt_strv_free(&r->impls[i].command);
        free(r->impls[i].hello_json);
        free(r->impls[i].cpus);
    }
    free(r->impls);
    env_free(&r->env);
    prov_free(&r->prov);
    free(r->floor_unavailable);
    free(r->resumes_json);
    dt_strv_free(&r->notes);
    free(r->plan.plan_id);
    free(r->shards_json);
    devices_free(r);
    dt_strv_free(&r->derived.reasons);
    dt_strv_free(&r->derived.summary);
    for (int s = 0; s < DT_SCOPE_COUNT; s++)
        dt_strv_free(&r->derived.scopes[s].reasons);
    free(r->derived.vs);
    free(r);
}
