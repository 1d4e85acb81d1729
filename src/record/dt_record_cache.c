/* dt_record_cache.c — incremental results.json encoding (dt_record_cache.h): the document
 * without its cases from the codec, the cases' texts from the cache where the invariant
 * allows, spliced into "cases": [] exactly where and as jansson's JSON_INDENT(2) dump puts
 * them. Tested by tests/unit/test_record_cache.c against dt_record_encode. */
#define _GNU_SOURCE
#include "record/dt_record_cache.h"

#include <stdatomic.h>
#include <string.h>

#include "record/dt_record_json.h"

/* One case's text as it was last encoded. */
typedef struct cache_entry {
    char *id;       /* the case's id then (NULL: empty slot) */
    uint64_t gen;   /* its gen then (never 0) */
    uint64_t print; /* its fingerprint then */
    char *text;     /* its text indented for depth 2 (no leading indent) */
    size_t len;
    size_t at;      /* where the text starts in the last spliced document */
} cache_entry;

struct dt_record_cache {
    cache_entry *v;  /* by case index */
    size_t n;        /* slots (the case count of the last encode) */
    dt_strv impls;   /* the implementation ids the texts were encoded with */
    int verify;      /* compare every incremental encode with dt_record_encode */
    dt_record_cache_stats stats;
};

#define TRY(expr)                                                                           \
    do {                                                                                    \
        dt_status try_st_ = (expr);                                                         \
        if (try_st_ != DT_OK) return try_st_;                                               \
    } while (0)

/* The process-wide source of gens: each touch takes the next (0 is never given). */
static atomic_uint_fast64_t g_next_gen;

void dt_record_cache_touch(dt_case *c) { c->gen = (uint64_t)atomic_fetch_add(&g_next_gen, 1) + 1; }

dt_record_cache *dt_record_cache_new(void) { return calloc(1, sizeof(dt_record_cache)); }

static void entry_clear(cache_entry *e) {
    free(e->id);
    free(e->text);
    memset(e, 0, sizeof *e);
}

/* Drops every text (the slots stay). */
static void cache_clear(dt_record_cache *cache) {
    for (size_t i = 0; i < cache->n; i++) entry_clear(&cache->v[i]);
    dt_strv_free(&cache->impls);
}

void dt_record_cache_free(dt_record_cache *cache) {
    if (!cache) return;
    cache_clear(cache);
    free(cache->v);
    free(cache);
}

void dt_record_cache_set_verify(dt_record_cache *cache, int verify) { cache->verify = verify; }

dt_record_cache_stats dt_record_cache_get_stats(const dt_record_cache *cache) {
    return cache->stats;
}

/* ---- the guards ---------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v) {
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 1099511628211ull; /* FNV-1a 64 */
    }
    return h;
}

static uint64_t mix_d(uint64_t h, double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return mix(h, b);
}

static uint64_t mix_samples(uint64_t h, const dt_samples *s) {
    h = mix(h, s->n);
    if (s->n) {
        h = mix_d(h, s->v[s->n - 1].us);
        h = mix(h, (uint64_t)s->v[s->n - 1].position);
    }
    return h;
}

/* The fingerprint: what the common changes to a case change (never proof of no change). */
static uint64_t case_print(const dt_case *c, size_t n_impls) {
    uint64_t h = 14695981039346656037ull;
    h = mix(h, c->n_rounds_done);
    h = mix(h, c->n_rounds_done ? (uint64_t)c->rounds_done[c->n_rounds_done - 1] : 0);
    h = mix(h, c->n_inputs);
    h = mix(h, c->n_clock_rounds);
    h = mix(h, (uint64_t)c->valid);
    h = mix(h, (uint64_t)c->floor_impl);
    h = mix_samples(h, &c->floor);
    for (size_t i = 0; i < n_impls; i++) {
        const dt_case_impl *ci = &c->impl[i];
        h = mix(h, (uint64_t)ci->present);
        h = mix(h, (uint64_t)ci->status);
        h = mix(h, ci->n_checks);
        h = mix(h, ci->n_calib_attempts);
        h = mix(h, ci->decomp.n);
        h = mix(h, ci->sources.n);
        for (int s = 0; s < DT_SCOPE_COUNT; s++) h = mix_samples(h, &ci->samples[s]);
    }
    return h;
}

/* Any derived block in r (then the whole record is encoded by dt_record_encode). */
static int has_derived(const dt_record *r) {
    if (r->derived.present) return 1;
    for (size_t i = 0; i < r->n_cases; i++)
        if (r->cases[i].derived.present) return 1;
    return 0;
}

/* Drops every text when r's implementation ids are not those the texts were made with. */
static void check_impls(dt_record_cache *cache, const dt_record *r) {
    int same = cache->impls.n == r->n_impls;
    for (size_t i = 0; same && i < r->n_impls; i++)
        same = strcmp(cache->impls.v[i], r->impls[i].id) == 0;
    if (same) return;
    cache_clear(cache);
    for (size_t i = 0; i < r->n_impls; i++) dt_strv_push(&cache->impls, r->impls[i].id);
}

/* cache->v sized to n slots (texts of slots past n dropped). */
static void resize(dt_record_cache *cache, size_t n) {
    for (size_t i = n; i < cache->n; i++) entry_clear(&cache->v[i]);
    if (n > cache->n) {
        cache->v = realloc(cache->v, n * sizeof *cache->v);
        DT_ASSERT(cache->v);
        memset(cache->v + cache->n, 0, (n - cache->n) * sizeof *cache->v);
    }
    cache->n = n;
}

/* ---- the texts ----------------------------------------------------------------------- */

/* text (depth 0) indented for depth 2: 4 spaces after every newline. jansson escapes
 * control characters in strings, so every newline in its output is indentation. */
static char *indent_depth2(const char *text, size_t len, size_t *out_len) {
    size_t nl = 0;
    for (size_t i = 0; i < len; i++) nl += text[i] == '\n';
    char *out = dt_xmalloc(len + 4 * nl + 1), *p = out;
    for (size_t i = 0; i < len; i++) {
        *p++ = text[i];
        if (text[i] == '\n') {
            memcpy(p, "    ", 4);
            p += 4;
        }
    }
    *p = 0;
    *out_len = (size_t)(p - out);
    return out;
}

/* Makes slot i hold case i's text: reused when the invariant allows, else encoded (and
 * kept when the case has a gen). */
static dt_status case_text(dt_record_cache *cache, const dt_record *r, size_t i, dt_err *err) {
    const dt_case *c = &r->cases[i];
    cache_entry *e = &cache->v[i];
    uint64_t print = case_print(c, r->n_impls);
    int same = c->gen != 0 && e->id && e->gen == c->gen && strcmp(e->id, c->id) == 0;
    if (same && e->print == print) {
        cache->stats.cases_reused++;
        return DT_OK;
    }
    if (same) cache->stats.guard_misses++;
    entry_clear(e);
    char *t = NULL;
    size_t n = 0;
    TRY(dt_record_encode_case(r, i, &t, &n, err));
    e->text = indent_depth2(t, n, &e->len);
    free(t);
    e->id = dt_xstrdup(c->id);
    e->gen = c->gen; /* 0: never matches (same needs gen != 0) */
    e->print = print;
    cache->stats.cases_encoded++;
    return DT_OK;
}

/* The document: skel with its `"cases": []` replaced by the slots' texts. */
static dt_status splice(dt_record_cache *cache, const char *skel, size_t skel_len,
                        char **text, size_t *len, dt_err *err) {
    static const char k_mark[] = "\n  \"cases\": []";
    const char *at = strstr(skel, k_mark);
    if (!at || strstr(at + 1, k_mark))
        return dt_fail(err, DT_EINVAL, "results: no single \"cases\" in the document");
    size_t head = (size_t)(at - skel) + sizeof k_mark - 3; /* up to the '[' */
    size_t total = skel_len - 2 + 1 + 4; /* "[]" becomes "[" ... "\n  ]" */
    for (size_t i = 0; i < cache->n; i++) total += 5 + cache->v[i].len + (i + 1 < cache->n);
    char *out = dt_xmalloc(total + 1), *p = out;
    memcpy(p, skel, head);
    p += head;
    *p++ = '[';
    for (size_t i = 0; i < cache->n; i++) {
        memcpy(p, "\n    ", 5);
        p += 5;
        cache->v[i].at = (size_t)(p - out);
        memcpy(p, cache->v[i].text, cache->v[i].len);
        p += cache->v[i].len;
        if (i + 1 < cache->n) *p++ = ',';
    }
    memcpy(p, "\n  ]", 4);
    p += 4;
    memcpy(p, skel + head + 2, skel_len - head - 2);
    p += skel_len - head - 2;
    *p = 0;
    DT_ASSERT((size_t)(p - out) == total);
    *text = out;
    *len = total;
    return DT_OK;
}

/* Verify mode: text must be dt_record_encode's; else DT_EINVAL naming where it differs. */
static dt_status verify(const dt_record_cache *cache, const dt_record *r, const char *text,
                        size_t len, dt_err *err) {
    char *full = NULL;
    size_t n = 0;
    TRY(dt_record_encode(r, &full, &n, err));
    size_t at = 0;
    while (at < len && at < n && text[at] == full[at]) at++;
    free(full);
    if (at == len && at == n) return DT_OK;
    const char *where = "outside the cases";
    for (size_t i = 0; i < cache->n; i++) /* the case whose text holds the first difference */
        if (at >= cache->v[i].at && at < cache->v[i].at + cache->v[i].len) where = cache->v[i].id;
    return dt_fail(err, DT_EINVAL, "results: incremental encoding differs from the full one "
                   "at byte %zu (case %s)", at, where);
}

dt_status dt_record_cache_encode(dt_record_cache *cache, const dt_record *r, char **text,
                                 size_t *len, dt_err *err) {
    *text = NULL;
    *len = 0;
    if (has_derived(r)) {
        TRY(dt_record_encode(r, text, len, err));
        cache->stats.encodes++;
        cache->stats.full++;
        return DT_OK;
    }
    char *skel = NULL;
    size_t skel_len = 0;
    dt_status st = dt_record_encode_without_cases(r, &skel, &skel_len, err);
    if (st == DT_OK) {
        check_impls(cache, r);
        resize(cache, r->n_cases);
    }
    for (size_t i = 0; st == DT_OK && i < r->n_cases; i++) st = case_text(cache, r, i, err);
    if (st == DT_OK && r->n_cases == 0) { /* the document is the skeleton */
        *text = skel;
        *len = skel_len;
        skel = NULL;
    } else if (st == DT_OK) {
        st = splice(cache, skel, skel_len, text, len, err);
    }
    free(skel);
    if (st == DT_OK && cache->verify) st = verify(cache, r, *text, *len, err);
    if (st != DT_OK) {
        free(*text);
        *text = NULL;
        *len = 0;
        cache_clear(cache);
        return st;
    }
    cache->stats.encodes++;
    return DT_OK;
}
