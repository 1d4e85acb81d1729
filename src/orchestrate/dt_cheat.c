/* dt_cheat.c — the anti-cheat checks (dt_cheat.h, docs/anti-cheat.md). */
#define _GNU_SOURCE
#include "dt_cheat.h"
#include "dt_hostpass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../stats/dt_stats.h"

uint64_t dt_cheat_set_seed(uint64_t seed, int k) {
    return seed + (uint64_t)k * 0x9E3779B97F4A7C15ull; /* golden-ratio step: distinct */
}

int dt_cheat_sample_set(int index) { return (index >> 1) % DT_CHEAT_INPUT_SETS; }

int dt_cheat_sample_checked(int64_t arena_bytes, int index) {
    return arena_bytes <= DT_CHEAT_FULL_BYTES || index == 1 || index == 2;
}

int dt_cheat_device_sample_checked(int64_t arena_bytes, int index) {
    return arena_bytes <= DT_CHEAT_FULL_BYTES && index >= 0 && index <= 2;
}

int dt_cheat_round_checked(int64_t arena_bytes, int round) {
    return arena_bytes <= DT_CHEAT_FULL_BYTES || round == 0;
}

int dt_cheat_first_checked(int64_t arena_bytes) { return arena_bytes <= DT_CHEAT_FULL_BYTES ? 0 : 1; }

dt_status dt_cheat_case_init(dt_cheat_case *cc, const dt_case_layout *L, uint64_t seed,
                             uint8_t *pristine0, const dt_oracle_ref *ref0, dt_err *err) {
    return dt_cheat_case_init_with(cc, L, seed, pristine0, ref0, NULL, NULL, err);
}

dt_status dt_cheat_case_init_with(dt_cheat_case *cc, const dt_case_layout *L, uint64_t seed,
                                  uint8_t *pristine0, const dt_oracle_ref *ref0,
                                  dt_cheat_ref_fn ref_fn, void *ctx, dt_err *err) {
    memset(cc, 0, sizeof *cc);
    cc->L = L;
    cc->pristine[0] = pristine0;
    cc->ref[0] = *ref0;
    for (int k = 1; k < DT_CHEAT_INPUT_SETS; k++) {
        cc->pristine[k] = malloc((size_t)L->total_bytes);
        dt_status st = DT_OK;
        if (!cc->pristine[k]) {
            st = dt_fail(err, DT_EIO, "could not allocate %lld bytes for input set %d",
                         (long long)L->total_bytes, k);
        } else {
            dt_arena_fill(L, cc->pristine[k], dt_cheat_set_seed(seed, k));
            st = ref_fn ? ref_fn(ctx, k, L, cc->pristine[k], &cc->ref[k], err)
                        : dt_oracle_compute(L, cc->pristine[k], &cc->ref[k], err);
        }
        if (st != DT_OK) {
            cc->nsets = k + 1; /* free what exists */
            dt_cheat_case_free(cc);
            return st;
        }
    }
    cc->nsets = DT_CHEAT_INPUT_SETS;
    dt_layout_output_slot(L, &cc->slot_off, &cc->slot_len);
    const int64_t slot_end = cc->slot_off + cc->slot_len;
    if (cc->slot_off > 0) {
        cc->rest[cc->nrest][0] = 0;
        cc->rest[cc->nrest++][1] = cc->slot_off;
    }
    if (slot_end < L->total_bytes) {
        cc->rest[cc->nrest][0] = slot_end;
        cc->rest[cc->nrest++][1] = L->total_bytes - slot_end;
    }
    for (int k = 0; k < cc->nsets; k++)
        for (int r = 0; r < cc->nrest; r++)
            cc->digest[k][r] = dt_arena_digest(cc->pristine[k], cc->rest[r][0], cc->rest[r][1]);
    return DT_OK;
}

void dt_cheat_case_free(dt_cheat_case *cc) {
    for (int k = 1; k < cc->nsets; k++) {
        free(cc->pristine[k]);
        dt_oracle_free(&cc->ref[k]);
    }
    memset(cc, 0, sizeof *cc);
}

int64_t dt_cheat_extra_host_bytes(const dt_case_layout *L) {
    const dt_buffer_layout *O = &L->buf[dt_layout_output(L)];
    int64_t ref = 2 * O->rows * O->cols * (int64_t)sizeof(double);
    return (DT_CHEAT_INPUT_SETS - 1) * (L->total_bytes + ref);
}

void dt_cheat_arm(const dt_cheat_case *cc, int set, uint8_t *arena) {
    DT_ASSERT(set >= 0 && set < cc->nsets);
    dt_hostpass_copy(arena, cc->pristine[set], (size_t)cc->L->total_bytes); /* parallel */
}

void dt_cheat_arm_output(const dt_cheat_case *cc, int set, uint8_t *arena) {
    DT_ASSERT(set >= 0 && set < cc->nsets);
    dt_hostpass_copy(arena + cc->slot_off, cc->pristine[set] + cc->slot_off, (size_t)cc->slot_len);
}

static void look_span(const dt_cheat_case *cc, int set, const uint8_t *arena, int64_t lo,
                      int64_t hi, dt_cheat_look *lk);

void dt_cheat_look_at(const dt_cheat_case *cc, int set, const uint8_t *arena, dt_cheat_look *lk) {
    look_span(cc, set, arena, 0, cc->L->total_bytes, lk);
}

void dt_cheat_look_at_output(const dt_cheat_case *cc, int set, const uint8_t *arena,
                             dt_cheat_look *lk) {
    look_span(cc, set, arena, cc->slot_off, cc->slot_off + cc->slot_len, lk);
}

static void look_span(const dt_cheat_case *cc, int set, const uint8_t *arena, int64_t lo,
                      int64_t hi, dt_cheat_look *lk) {
    memset(lk, 0, sizeof *lk);
    dt_arena_check_span(cc->L, arena, cc->pristine[set], lo, hi, &lk->ar);
    dt_oracle_check(&cc->ref[set], cc->L, arena, &lk->orp);
    lk->ok = lk->ar.ok && lk->orp.ok;
    lk->other_set_ok = -1;
    lk->other_set = -1;
    if (lk->orp.ok || lk->ar.output_unwritten > 0) return;
    for (int k = 0; k < cc->nsets; k++) { /* a written, wrong output: another set's? */
        if (k == set) continue;
        dt_oracle_report o;
        dt_oracle_check(&cc->ref[k], cc->L, arena, &o);
        lk->other_set_ok = o.ok;
        lk->other_set = k;
        if (o.ok) return;
    }
}

int64_t dt_cheat_output_written(const dt_case_layout *L, const uint8_t *arena) {
    const dt_buffer_layout *O = &L->buf[dt_layout_output(L)];
    const uint32_t poison = dt_poison_bits(O->dtype);
    int64_t n = 0;
    for (int64_t i = 0; i < O->rows; i++)
        for (int64_t j = 0; j < O->cols; j++) {
            uint32_t w = 0;
            memcpy(&w, arena + dt_elem_offset(O, i, j), (size_t)O->elem_bytes);
            n += w != poison;
        }
    return n;
}

int dt_cheat_classify(const dt_cheat_obs *o, int cold, char *reason, size_t len) {
    const dt_cheat_look *now = &o->now;
    if (now->ar.input_elems_changed > 0) {
        snprintf(reason, len, "the call wrote its input: %s", now->ar.first_problem);
        return DT_CHEAT_WROTE_INPUT;
    }
    if (cold) {
        if (now->ok) return -2;
        snprintf(reason, len, "%s", !now->ar.ok ? now->ar.first_problem : now->orp.first_failure);
        return -1;
    }
    if (o->direct && o->written_at_download > 0) {
        snprintf(reason, len, "%lld output elements were written by download, not by the "
                 "call (the output must be in the case's memory when the call returns): a "
                 "lazy or aliased output%s", (long long)o->written_at_download,
                 now->ar.output_unwritten > 0 ? " (the call left it poisoned)" : "");
        return DT_CHEAT_ALIASED_OUTPUT;
    }
    if ((o->direct && o->written_late > 0) ||
        (!o->direct && now->ar.output_unwritten > 0 && o->has_late && o->late.ok)) {
        snprintf(reason, len, "%lld output elements were written after the call returned "
                 "(after its synchronization): work went on on a side stream or thread",
                 (long long)(o->direct ? o->written_late : now->ar.output_unwritten));
        return DT_CHEAT_SIDE_STREAM;
    }
    if (now->ar.output_unwritten > 0) {
        snprintf(reason, len, "the timed call left %lld output elements poisoned (the "
                 "output was poisoned before it): it skipped work; %s",
                 (long long)now->ar.output_unwritten, now->ar.first_problem);
        return DT_CHEAT_SKIPPED_WORK;
    }
    if (now->ok) return -2;
    if (now->ar.ok && now->other_set_ok == 1) {
        snprintf(reason, len, "the output fails the oracle of the inputs it was given but "
                 "passes the oracle of input set %d: a replayed (cached) result; %s",
                 now->other_set, now->orp.first_failure);
        return DT_CHEAT_CACHED_RESULT;
    }
    snprintf(reason, len, "%s", !now->ar.ok ? now->ar.first_problem : now->orp.first_failure);
    return -1;
}

int dt_cheat_in_text(const char *text) {
    for (int k = 0; text && k < DT_CHEAT_COUNT; k++) {
        const char *name = dt_cheat_check_name((dt_cheat_check)k);
        const char *p = strstr(text, name);
        if (p && p[strlen(name)] == ':') return k;
    }
    return -1;
}

void dt_cheat_begin(dt_cheat_rec *rec, int input_sets) {
    rec->present = 1;
    if (input_sets > rec->input_sets) rec->input_sets = input_sets;
}

void dt_cheat_mark(dt_cheat_rec *rec, dt_cheat_check k, const char *note) {
    dt_cheat_begin(rec, 0);
    dt_cheat_result *r = &rec->check[k];
    if (r->status == DT_CHEAT_CAUGHT) return;
    r->status = DT_CHEAT_CAUGHT;
    dt_record_set_str(&r->note, note);
}

static void settle_one(dt_cheat_rec *rec, dt_cheat_check k, const char *na) {
    dt_cheat_result *r = &rec->check[k];
    if (r->status == DT_CHEAT_CAUGHT) return;
    r->status = na ? DT_CHEAT_NOT_APPLICABLE : DT_CHEAT_PASSED;
    dt_record_set_str(&r->note, na);
}

void dt_cheat_settle(dt_cheat_rec *rec, int lazy_checked, const char *backend,
                     int64_t checked_calls) {
    dt_cheat_begin(rec, 0);
    int none = rec->sample_checks == 0;
    const char *no_samples = "no timed sample was checked (the implementation failed first)";
    settle_one(rec, DT_CHEAT_CACHED_RESULT, none ? no_samples : NULL);
    settle_one(rec, DT_CHEAT_SKIPPED_WORK, none ? no_samples : NULL);
    settle_one(rec, DT_CHEAT_SIDE_STREAM, none ? no_samples : NULL);
    settle_one(rec, DT_CHEAT_WROTE_INPUT, none && checked_calls == 0
                                              ? "no call was checked (the implementation "
                                                "failed first)"
                                              : NULL);
    const char *lazy = none ? no_samples
                       : lazy_checked ? NULL
                       : backend && strcmp(backend, "cpu") == 0
                           ? "functional output policy: the worker publishes the result at "
                             "download (its own check of the returned tensor applies)"
                           : "device mirror: the output reaches shared memory only at "
                             "download (the worker's own check of returned tensors applies)";
    settle_one(rec, DT_CHEAT_ALIASED_OUTPUT, lazy);
}

/* ---- physics ------------------------------------------------------------------------- */

/* An integer field `"key":N` of a canonical JSON object text (the worker's device
 * description); NAN when absent. Not a JSON parser: the text is the codec's canonical
 * form, keys are unique and never appear inside strings we look at. */
static double json_text_int(const char *text, const char *key) {
    if (!text) return NAN;
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p) return NAN;
    p += strlen(pat);
    while (*p == ' ') p++;
    char *end = NULL;
    double v = strtod(p, &end);
    return end != p && v > 0 ? v : NAN;
}

/* CPUs in a sysfs CPU list ("0-3,8,10-11"); 0 when unreadable. */
static long cpu_list_count(const char *path) {
    FILE *fp = fopen(path, "r");
    if (!fp) return 0;
    char buf[4096];
    long n = 0;
    if (fgets(buf, sizeof buf, fp)) {
        for (char *save = NULL, *t = strtok_r(buf, ",\n", &save); t; t = strtok_r(NULL, ",\n", &save)) {
            long lo = 0, hi = 0;
            int k = sscanf(t, "%ld-%ld", &lo, &hi);
            n += k == 2 && hi >= lo ? hi - lo + 1 : k == 1 ? 1 : 0;
        }
    }
    fclose(fp);
    return n;
}

/* The largest cache of this host in bytes, all its instances together (sysfs: cpu0's
 * cache levels, size x online CPUs / CPUs sharing one instance), NAN when unknown. */
static double cpu_cache_bytes(void) {
    double best = NAN;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 0; i < 8; i++) {
        char path[128], buf[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        FILE *fp = fopen(path, "r");
        if (!fp) continue;
        double v = 0;
        if (fgets(buf, sizeof buf, fp)) {
            char *end = NULL;
            v = strtod(buf, &end);
            if (end && (*end == 'K' || *end == 'k')) v *= 1024.0;
            else if (end && *end == 'M') v *= 1024.0 * 1024.0;
        }
        fclose(fp);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
        long share = cpu_list_count(path);
        if (share > 0 && cpus > share) v *= (double)((cpus + share - 1) / share);
        if (v > 0 && !(v <= best)) best = v;
    }
    return best;
}

void dt_cheat_limits_read(const dt_record *r, const char *backend, dt_cheat_limits *lim) {
    memset(lim, 0, sizeof *lim);
    const dt_ceilings_rec *ce = &r->env.ceilings;
    lim->copy_gbps = ce->present && !ce->error && ce->copy_gbps > 0 ? ce->copy_gbps : NAN;
    lim->cache_bytes = lim->peak_flops_f32 = lim->peak_flops_narrow = NAN;
    lim->bw_margin = DT_CHEAT_BW_MARGIN;
    if (backend && strcmp(backend, "cuda") == 0) {
        lim->cache_bytes = json_text_int(r->env.gpu_json, "l2_bytes");
        double sms = json_text_int(r->env.gpu_json, "sm_count");
        double khz = json_text_int(r->env.gpu_json, "sm_clock_khz");
        /* per SM and cycle: 128 FP32 FMA lanes (256 flop), dense bf16/f16 tensor cores at
         * most 4096 flop (Hopper); both above any current SM */
        if (sms > 0 && khz > 0) {
            lim->peak_flops_f32 = sms * khz * 1e3 * 256.0;
            lim->peak_flops_narrow = sms * khz * 1e3 * 4096.0;
        }
    } else {
        lim->bw_margin = DT_CHEAT_BW_MARGIN_CPU;
        lim->cache_bytes = cpu_cache_bytes();
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        /* per core and cycle at 6 GHz: two 16-lane FP32 FMA units (64 flop), 1024 for
         * bf16/f16 (AMX): above any current x86 or Arm core */
        if (cores > 0) {
            lim->peak_flops_f32 = (double)cores * 6e9 * 64.0;
            lim->peak_flops_narrow = (double)cores * 6e9 * 1024.0;
        }
    }
    snprintf(lim->why, sizeof lim->why, "%s%s%s", !(lim->copy_gbps > 0) ? "no copy ceiling; " : "",
             !(lim->cache_bytes > 0) ? "cache size unknown; " : "",
             !(lim->peak_flops_f32 > 0) ? "peak unknown" : "");
}

/* The fastest p50 per call over the impl's raw batch scopes; NAN when none. */
static double fastest_batch_p50(const dt_case *c, size_t impl, dt_scope *which) {
    static const dt_scope k[3] = {DT_SCOPE_E2E_BATCH, DT_SCOPE_CONTROL_BATCH,
                                  DT_SCOPE_DISPATCH_BATCH};
    double best = NAN;
    for (int q = 0; q < 3; q++) {
        const dt_samples *s = &c->impl[impl].samples[k[q]];
        if (s->n == 0) continue;
        double *x = dt_xcalloc(s->n, sizeof *x);
        for (size_t i = 0; i < s->n; i++) x[i] = s->v[i].us;
        double p50 = dt_stats_median(x, s->n);
        free(x);
        if (p50 > 0 && !(p50 >= best)) {
            best = p50;
            *which = k[q];
        }
    }
    return best;
}

int dt_cheat_physics(const dt_cheat_limits *lim, const dt_case *c, size_t impl, char *reason,
                     size_t len) {
    dt_scope scope = DT_SCOPE_E2E_BATCH;
    double us = fastest_batch_p50(c, impl, &scope);
    if (!(us > 0)) {
        snprintf(reason, len, "no batch samples");
        return -1;
    }
    const dt_dtype ty = c->dtype == DT_ELEM_BF16 ? DT_BF16 : c->dtype == DT_ELEM_F16 ? DT_F16
                                                                                    : DT_F32;
    double bytes = (double)dt_op_min_bytes_typed(c->op, c->m, c->n, c->k, ty);
    double flops = dt_op_flops(c->op, c->m, c->n, c->k);
    double peak = ty == DT_F32 ? lim->peak_flops_f32 : lim->peak_flops_narrow;
    int bytes_rule = lim->copy_gbps > 0 && lim->cache_bytes > 0 &&
                     bytes > DT_CHEAT_CACHE_FACTOR * lim->cache_bytes;
    int flops_rule = peak > 0 && flops > 0;
    double margin = lim->bw_margin > 0 ? lim->bw_margin : DT_CHEAT_BW_MARGIN;
    double bytes_us = bytes_rule ? bytes / (lim->copy_gbps * margin * 1e3) : NAN;
    double flops_us = flops_rule ? flops / (peak * DT_CHEAT_FLOPS_MARGIN) * 1e6 : NAN;
    if (bytes_rule && us < bytes_us) {
        snprintf(reason, len, "%s p50 %.4g us per call is faster than physics: %.4g bytes "
                 "(more than %.0fx the %.4g-byte cache) at %.0f%% of the measured copy "
                 "ceiling %.4g GB/s need at least %.4g us", dt_scope_name(scope), us, bytes,
                 DT_CHEAT_CACHE_FACTOR, lim->cache_bytes, 100.0 * margin,
                 lim->copy_gbps, bytes_us);
        return 1;
    }
    if (flops_rule && us < flops_us) {
        snprintf(reason, len, "%s p50 %.4g us per call is faster than physics: %.4g flop at "
                 "%.0f%% of the peak %.4g flop/s need at least %.4g us", dt_scope_name(scope),
                 us, flops, 100.0 * DT_CHEAT_FLOPS_MARGIN, peak, flops_us);
        return 1;
    }
    if (!bytes_rule && !flops_rule) {
        snprintf(reason, len, "%s", lim->why[0] ? lim->why : "no applicable limit");
        return -1;
    }
    char b[64] = "n/a (fits in cache or no ceiling)", f[64] = "n/a";
    if (bytes_rule) snprintf(b, sizeof b, "%.4g us", bytes_us);
    if (flops_rule) snprintf(f, sizeof f, "%.4g us", flops_us);
    snprintf(reason, len, "%s p50 %.4g us per call; at least: bytes %s, flops %s",
             dt_scope_name(scope), us, b, f);
    return 0;
}
