/* test_record_cache.c — the incremental results.json encoder (src/record/dt_record_cache.c):
 * across sequences of mutations of several records (the v1 fixtures of tests/data, a
 * hand-built record with hostile strings, an empty one, a large synthetic one) every
 * incremental encode is byte-identical to dt_record_encode, with the reuse counts the
 * invariant implies; planted stale caches (a case changed without a touch) are caught by
 * the fingerprint guard or by verify mode, and without verify the stale bytes differ from
 * the full encode (so the comparisons here would see a wrong reuse). Prints full vs
 * incremental encode times of the large record (not asserted). CPU only. */
#define _GNU_SOURCE
#include "record/dt_record.h"
#include "record/dt_record_cache.h"
#include "record/dt_record_json.h"
#include "stats/dt_derive.h"

#include "../dt_check.h"

#include <math.h>
#include <string.h>

static const char *const k_cpu = DT_SOURCE_DIR "/tests/data/results-v1-cpu.json";
static const char *const k_dev = DT_SOURCE_DIR "/tests/data/results-v1-device.json";

/* 1 when the cache's encode of r equals dt_record_encode's (reported at the caller's line). */
static int same_bytes(int line, dt_record_cache *cache, const dt_record *r, const char *what) {
    char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    dt_err err = {{0}};
    int ia = dt_record_cache_encode(cache, r, &a, &na, &err) == DT_OK;
    CHECK_AT(line, ia, "%s: incremental: %s", what, err.msg);
    int ib = dt_record_encode(r, &b, &nb, &err) == DT_OK;
    CHECK_AT(line, ib, "%s: full: %s", what, err.msg);
    int ok = ia && ib;
    if (ok) {
        size_t at = 0;
        while (at < na && at < nb && a[at] == b[at]) at++;
        ok = na == nb && at == na && a[na] == 0 && na > 0 && a[na - 1] == '\n';
        CHECK_AT(line, ok, "%s: %zu vs %zu bytes, first difference at %zu", what, na, nb, at);
    }
    free(a);
    free(b);
    return ok;
}
#define SAME(cache, r, what) same_bytes(__LINE__, cache, r, what)

static void push_sample(dt_samples *s, double us, int64_t position) {
    dt_sample x = dt_sample_empty();
    x.us = us;
    x.reps = 8;
    x.round = 0;
    x.index = (int32_t)s->n;
    x.position = position;
    dt_samples_push(s, &x);
}

static void touch_all(dt_record *r) {
    for (size_t i = 0; i < r->n_cases; i++) dt_record_cache_touch(&r->cases[i]);
}

/* The run loop's pattern on a fixture: derived cleared, cases touched, one case changed
 * and touched per write, a case added, a derive and its clear, a case removed, an
 * implementation renamed. */
static void test_sequence(const char *path) {
    dt_record *r = NULL;
    dt_err err = {{0}};
    CHECK(dt_record_load(path, &r, &err) == DT_OK, "%s: %s", path, err.msg);
    if (!r) return;
    dt_record_cache *cache = dt_record_cache_new();
    dt_record_cache_set_verify(cache, 0);
    CHECK(r->n_cases >= 3, "%zu cases", r->n_cases);
    /* derived present (a v1 file has it): the full encoder, nothing cached */
    SAME(cache, r, "derived present");
    dt_record_cache_stats s0 = dt_record_cache_get_stats(cache);
    CHECK(s0.full == 1 && s0.cases_encoded == 0, "full %zu, encoded %zu", s0.full,
          s0.cases_encoded);
    dt_record_derived_clear(r);
    /* decoded cases have gen 0: encoded every time */
    SAME(cache, r, "gen 0 (1)");
    SAME(cache, r, "gen 0 (2)");
    dt_record_cache_stats s1 = dt_record_cache_get_stats(cache);
    CHECK(s1.cases_reused == 0 && s1.cases_encoded == 2 * r->n_cases, "gen 0: reused %zu",
          s1.cases_reused);
    touch_all(r);
    SAME(cache, r, "touched");
    SAME(cache, r, "unchanged");
    dt_record_cache_stats s2 = dt_record_cache_get_stats(cache);
    CHECK(s2.cases_reused == r->n_cases, "unchanged: all %zu reused (%zu)", r->n_cases,
          s2.cases_reused);
    int64_t pos = dt_record_next_position(r);
    for (int k = 0; k < 3; k++) { /* a round of one case, as run_case does it */
        dt_case *c = &r->cases[(size_t)k * 2 % r->n_cases];
        dt_record_cache_touch(c);
        push_sample(&c->impl[0].samples[DT_SCOPE_E2E_BATCH], 1.25 + k, pos++);
        push_sample(&c->impl[1].samples[DT_SCOPE_E2E_SINGLE], 1.0 / 3.0, pos++);
        c->impl[1].status = DT_IMPL_FAILED;
        dt_record_set_str(&c->impl[1].error, "warm: \"bad\"\n");
        c->valid = 0;
        dt_case_round_done_add(c, 7);
        dt_record_cache_touch(c);
        dt_record_cache_stats b = dt_record_cache_get_stats(cache);
        SAME(cache, r, "one case changed");
        dt_record_cache_stats a = dt_record_cache_get_stats(cache);
        CHECK(a.cases_encoded - b.cases_encoded == 1 &&
                  a.cases_reused - b.cases_reused == r->n_cases - 1,
              "one case re-encoded (%zu), the rest reused (%zu)", a.cases_encoded - b.cases_encoded,
              a.cases_reused - b.cases_reused);
    }
    /* a new case, not touched yet (gen 0), then touched */
    dt_case *nc = dt_record_case_add(r, "softmax_3x5");
    nc->op = DT_OP_SOFTMAX;
    nc->m = 3;
    nc->n = 5;
    dt_record_set_str(&nc->backend, "cpu");
    dt_record_set_str(&nc->tol_scale, "1");
    push_sample(&nc->impl[0].samples[DT_SCOPE_E2E_BATCH], 2.5, pos++);
    SAME(cache, r, "case added");
    dt_record_cache_touch(&r->cases[r->n_cases - 1]);
    SAME(cache, r, "case added, touched");
    /* derive, full write, clear: the cached texts stay right */
    CHECK(dt_derive_run(r, &err) == DT_OK, "derive: %s", err.msg);
    SAME(cache, r, "derived");
    dt_record_derived_clear(r);
    dt_record_cache_stats b = dt_record_cache_get_stats(cache);
    SAME(cache, r, "derived cleared");
    dt_record_cache_stats a = dt_record_cache_get_stats(cache);
    CHECK(a.cases_reused - b.cases_reused == r->n_cases, "after derive: all reused (%zu of %zu)",
          a.cases_reused - b.cases_reused, r->n_cases);
    /* a case removed in the middle: later cases move down one index */
    dt_record_case_remove(r, 1);
    SAME(cache, r, "case removed");
    /* an implementation renamed: its id is a key inside every case */
    dt_record_set_str(&r->impls[1].id, "native2");
    SAME(cache, r, "impl renamed");
    a = dt_record_cache_get_stats(cache);
    SAME(cache, r, "impl renamed, again");
    b = dt_record_cache_get_stats(cache);
    CHECK(b.cases_reused - a.cases_reused == r->n_cases, "renamed: reused after one encode");
    /* run-level changes between writes (notes, provenance) are always encoded */
    dt_strv_push(&r->notes, "a note");
    r->complete = 1;
    SAME(cache, r, "root changed");
    dt_record_cache_free(cache);
    dt_record_free(r);
}

/* Strings that look like the splice's mark, ids with quotes and newlines, no cases. */
static void test_hostile(void) {
    dt_record *r = dt_record_new();
    dt_record_cache *cache = dt_record_cache_new();
    dt_record_impl_add(r, "torch", DT_ROLE_BASELINE);
    dt_record_impl_add(r, "na\"ti\nve", DT_ROLE_CANDIDATE);
    SAME(cache, r, "no cases");
    dt_strv_push(&r->command_line, "\n  \"cases\": []");
    dt_strv_push(&r->notes, "\n  \"cases\": [],\n");
    dt_record_set_str(&r->env.gpu_json, "{\"cases\":[],\"x\":{\"cases\":[]}}");
    SAME(cache, r, "no cases, mark-like strings");
    for (int i = 0; i < 3; i++) {
        char id[64];
        snprintf(id, sizeof id, "add_%d\n  \"cases\": []", i);
        dt_case *c = dt_record_case_add(r, id);
        dt_record_set_str(&c->backend, "cpu");
        dt_record_set_str(&c->tol_scale, "é \t ü");
        c->atol = 1e-300 * (i + 1);
        c->rtol = NAN;
        push_sample(&c->impl[1].samples[DT_SCOPE_CONTROL_BATCH], 0.1 + 0.2, i);
        dt_record_cache_touch(c);
    }
    SAME(cache, r, "hostile cases");
    SAME(cache, r, "hostile cases, reused");
    /* a string that cannot be encoded fails the encode (and empties the cache) */
    dt_record_set_str(&r->cases[1].impl[0].error, "\xff\xfe");
    dt_record_cache_touch(&r->cases[1]);
    char *t = NULL;
    size_t n = 0;
    dt_err err = {{0}};
    CHECK(dt_record_cache_encode(cache, r, &t, &n, &err) == DT_EINVAL && t == NULL,
          "not UTF-8 refused: %s", err.msg);
    dt_record_set_str(&r->cases[1].impl[0].error, "fine");
    dt_record_cache_touch(&r->cases[1]);
    SAME(cache, r, "after a failed encode");
    dt_record_cache_free(cache);
    dt_record_free(r);
}

/* A case changed without a touch: the fingerprint guard, verify mode, and the bytes. */
static void test_stale(void) {
    dt_record *r = NULL;
    dt_err err = {{0}};
    CHECK(dt_record_load(k_cpu, &r, &err) == DT_OK, "%s", err.msg);
    if (!r) return;
    dt_record_derived_clear(r);
    touch_all(r);
    dt_record_cache *cache = dt_record_cache_new();
    SAME(cache, r, "primed");
    /* a pushed sample without a touch: the guard re-encodes */
    dt_case *c = &r->cases[2];
    push_sample(&c->impl[0].samples[DT_SCOPE_E2E_BATCH], 9.75, dt_record_next_position(r));
    dt_record_cache_stats b = dt_record_cache_get_stats(cache);
    SAME(cache, r, "forgotten touch, sample pushed");
    dt_record_cache_stats a = dt_record_cache_get_stats(cache);
    CHECK(a.guard_misses == b.guard_misses + 1, "the guard saw it (%zu)", a.guard_misses);
    /* a change the guard cannot see (an earlier sample's value): without verify the stale
     * text is reused and the document differs from the full encode ... */
    c->impl[0].samples[DT_SCOPE_E2E_BATCH].v[0].us += 1.0;
    char *inc = NULL, *full = NULL;
    size_t ni = 0, nf = 0;
    CHECK(dt_record_cache_encode(cache, r, &inc, &ni, &err) == DT_OK, "%s", err.msg);
    CHECK(dt_record_encode(r, &full, &nf, &err) == DT_OK, "%s", err.msg);
    CHECK(inc && full && (ni != nf || memcmp(inc, full, ni) != 0),
          "planted stale text: the bytes differ from the full encode (a reuse is visible)");
    free(inc);
    free(full);
    /* ... and verify mode refuses it, naming the case */
    dt_record_cache_set_verify(cache, 1);
    inc = NULL;
    CHECK(dt_record_cache_encode(cache, r, &inc, &ni, &err) == DT_EINVAL && inc == NULL &&
              strstr(err.msg, "differs from the full one") && strstr(err.msg, c->id),
          "verify: %s", err.msg);
    /* the failure emptied the cache: the next encode is right again */
    SAME(cache, r, "after verify caught it");
    dt_record_cache_touch(c);
    SAME(cache, r, "touched, verify on");
    dt_record_cache_free(cache);
    dt_record_free(r);
}

/* A large synthetic record: encode times of full vs incremental after one case changed. */
static void test_large(void) {
    dt_record *r = dt_record_new();
    dt_record_impl_add(r, "torch", DT_ROLE_BASELINE);
    dt_record_impl_add(r, "native", DT_ROLE_CANDIDATE);
    const int n_cases = 118, per_scope = 60;
    int64_t pos = 0;
    for (int i = 0; i < n_cases; i++) {
        char id[32];
        snprintf(id, sizeof id, "add_%dx%d", i + 1, 257);
        dt_case *c = dt_record_case_add(r, id);
        dt_record_set_str(&c->backend, "cuda");
        dt_record_set_str(&c->tol_scale, "|a| + |b|");
        for (size_t k = 0; k < r->n_impls; k++)
            for (int s = 0; s < DT_SCOPE_COUNT; s++)
                for (int j = 0; j < per_scope; j++, pos++)
                    push_sample(&c->impl[k].samples[s], 1.0 + 1.0 / (double)(pos + 3), pos);
        dt_record_cache_touch(c);
    }
    dt_record_cache *cache = dt_record_cache_new();
    SAME(cache, r, "large");
    double full_ms = 0, inc_ms = 0;
    size_t bytes = 0;
    const int reps = 5;
    int ok = 1;
    for (int k = 0; k < reps; k++) {
        dt_case *c = &r->cases[(size_t)k * 37 % (size_t)n_cases];
        push_sample(&c->impl[1].samples[DT_SCOPE_E2E_BATCH], 2.0, pos++);
        dt_record_cache_touch(c);
        char *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        dt_err err = {{0}};
        int64_t t0 = dt_now_ns();
        ok &= dt_record_cache_encode(cache, r, &a, &na, &err) == DT_OK;
        int64_t t1 = dt_now_ns();
        ok &= dt_record_encode(r, &b, &nb, &err) == DT_OK;
        int64_t t2 = dt_now_ns();
        ok &= a && b && na == nb && memcmp(a, b, na) == 0;
        inc_ms += (double)(t1 - t0) / 1e6;
        full_ms += (double)(t2 - t1) / 1e6;
        bytes = nb;
        free(a);
        free(b);
    }
    CHECK(ok, "large: %d incremental encodes equal the full ones", reps);
    printf("large record: %d cases, %lld samples, %.1f MB: full encode %.1f ms, incremental "
           "%.1f ms (mean of %d, one case changed each)\n", n_cases, (long long)pos,
           (double)bytes / 1e6, full_ms / reps, inc_ms / reps, reps);
    dt_record_cache_free(cache);
    dt_record_free(r);
}

int main(void) {
    test_sequence(k_cpu);
    test_sequence(k_dev);
    test_hostile();
    test_stale();
    test_large();
    return dt_check_summary("test_record_cache");
}
