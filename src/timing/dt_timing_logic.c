/* dt_timing_logic.c — validation, matching and calibration arithmetic of the timing
 * helper. See dt_timing_logic.h; no CUDA here, tested by tests/timing. */
#include "timing/dt_timing_logic.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tl_fail(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int tl_fail(char *err, size_t err_len, const char *fmt, ...) {
    if (err && err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return 0;
}

/* (correlation id, launch index) pairs, sorted by id for binary search. */
typedef struct tl_key {
    uint32_t id;
    uint32_t launch;
} tl_key;

static int tl_key_cmp(const void *a, const void *b) {
    const tl_key *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return x->launch < y->launch ? -1 : (x->launch > y->launch);
}

static int tl_record_cmp(const void *a, const void *b) {
    const dt_timing_kernel *x = a, *y = b;
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    if (x->correlation_id != y->correlation_id)
        return x->correlation_id < y->correlation_id ? -1 : 1;
    return 0;
}

static const tl_key *tl_find(const tl_key *keys, size_t n, uint32_t id) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return (lo < n && keys[lo].id == id) ? &keys[lo] : NULL;
}

/* Rules 1-5 (dt_tl_validate): drops, capacity, empty region, failed launches, record
 * timestamps. 1 when they hold, else 0 with the message in err. */
static int tl_check_records(const dt_tl_region *r, char *err, size_t err_len) {
    /* 1. dropped records: the record set is known to be incomplete. */
    if (r->dropped > 0)
        return tl_fail(err, err_len,
                       "CUPTI dropped %" PRIu64 " activity record(s): the kernel record "
                       "set is incomplete (activity buffers too small or too few)",
                       r->dropped);
    /* 2. capacity: beyond it nothing was stored, so nothing can be validated. */
    if (r->launch_total > r->capacity || r->record_total > r->capacity)
        return tl_fail(err, err_len,
                       "capacity exceeded: %" PRIu64 " launch(es) and %" PRIu64
                       " kernel record(s) in a region of capacity %" PRIu64,
                       r->launch_total, r->record_total, r->capacity);
    /* 3. empty region. */
    if (r->launch_total == 0 && r->record_total == 0)
        return tl_fail(err, err_len,
                       "empty region: no kernel was launched between begin and end");
    /* 4. failed launches: no kernel ran for them. */
    for (uint64_t i = 0; i < r->launch_total; i++) {
        const dt_tl_launch *l = &r->launches[i];
        if (l->status != 0)
            return tl_fail(err, err_len,
                           "launch %s (correlation id %" PRIu32 ") returned error %" PRId32
                           ": no kernel ran for it",
                           l->api ? l->api : "?", l->corr_id, l->status);
        if (l->corr_id == 0)
            return tl_fail(err, err_len, "launch %s has correlation id 0",
                           l->api ? l->api : "?");
    }
    /* 5. timestamps of every record. */
    for (uint64_t i = 0; i < r->record_total; i++) {
        const dt_timing_kernel *k = &r->records[i];
        if (k->start_ns == 0 || k->end_ns == 0)
            return tl_fail(err, err_len,
                           "kernel record %s (correlation id %" PRIu64 ") has a zero "
                           "timestamp (start %" PRIu64 ", end %" PRIu64 "): the kernel was "
                           "incomplete at end or CUPTI could not time it",
                           k->name, k->correlation_id, k->start_ns, k->end_ns);
        if (k->end_ns <= k->start_ns)
            return tl_fail(err, err_len,
                           "kernel record %s (correlation id %" PRIu64 ") has inverted or "
                           "equal timestamps (start %" PRIu64 " >= end %" PRIu64 ")",
                           k->name, k->correlation_id, k->start_ns, k->end_ns);
    }
    return 1;
}

/* Rule 6: launches and kernel records match one to one by correlation id (a launch's
 * alternate id counts as its own), and their counts are equal. */
static int tl_check_matching(const dt_tl_region *r, char *err, size_t err_len) {
    /* 6. one-to-one matching by correlation id. */
    size_t nkeys = 0;
    tl_key *keys = calloc(2 * (size_t)r->launch_total + 1, sizeof *keys);
    uint8_t *matched = calloc((size_t)r->launch_total + 1, 1);
    if (!keys || !matched) {
        free(keys);
        free(matched);
        return tl_fail(err, err_len, "out of memory while matching records");
    }
    for (uint64_t i = 0; i < r->launch_total; i++) {
        keys[nkeys++] = (tl_key){r->launches[i].corr_id, (uint32_t)i};
        if (r->launches[i].alt_id && r->launches[i].alt_id != r->launches[i].corr_id)
            keys[nkeys++] = (tl_key){r->launches[i].alt_id, (uint32_t)i};
    }
    qsort(keys, nkeys, sizeof *keys, tl_key_cmp);
    int ok = 1;
    for (size_t i = 1; i < nkeys && ok; i++)
        if (keys[i].id == keys[i - 1].id)
            ok = tl_fail(err, err_len,
                         "two launches share correlation id %" PRIu32, keys[i].id);
    for (uint64_t i = 0; i < r->record_total && ok; i++) {
        const dt_timing_kernel *k = &r->records[i];
        const tl_key *key =
            k->correlation_id > UINT32_MAX ? NULL
                                           : tl_find(keys, nkeys, (uint32_t)k->correlation_id);
        if (!key)
            ok = tl_fail(err, err_len,
                         "kernel record without launch: %s (correlation id %" PRIu64
                         ", stream %" PRIu32 ") was not launched inside the region through "
                         "a traced launch API (graph launch, or work from before begin?)",
                         k->name, k->correlation_id, k->stream_id);
        else if (matched[key->launch])
            ok = tl_fail(err, err_len,
                         "two kernel records for one launch (correlation id %" PRIu64
                         ", kernel %s)",
                         k->correlation_id, k->name);
        else
            matched[key->launch] = 1;
    }
    for (uint64_t i = 0; i < r->launch_total && ok; i++)
        if (!matched[i])
            ok = tl_fail(err, err_len,
                         "launch without kernel record: %s (correlation id %" PRIu32
                         ") has no record: the kernel was still running at end (another "
                         "stream not joined?) or CUPTI lost it",
                         r->launches[i].api ? r->launches[i].api : "?",
                         r->launches[i].corr_id);
    free(keys);
    free(matched);
    if (!ok) return 0;
    /* With one-to-one matching proven, the counts are equal. */
    if (r->launch_total != r->record_total)
        return tl_fail(err, err_len,
                       "launch count %" PRIu64 " != kernel record count %" PRIu64,
                       r->launch_total, r->record_total);
    return 1;
}

/* Rule 7: every kernel ran inside the region's host window (when the window is known). */
static int tl_check_window(const dt_tl_region *r, char *err, size_t err_len) {
    /* 7. host time window: every kernel ran between begin and the end synchronization. */
    if (r->window_begin_ns) {
        for (uint64_t i = 0; i < r->record_total; i++) {
            const dt_timing_kernel *k = &r->records[i];
            if (k->start_ns + r->window_slack_ns < r->window_begin_ns ||
                k->end_ns > r->window_end_ns + r->window_slack_ns)
                return tl_fail(err, err_len,
                               "kernel record %s (correlation id %" PRIu64 ") lies outside "
                               "the region's host window: start %+.0f ns after begin, end "
                               "%+.0f ns after the end sync (slack %" PRIu64 " ns): clock "
                               "calibration wrong or work incomplete at end",
                               k->name, k->correlation_id,
                               (double)k->start_ns - (double)r->window_begin_ns,
                               (double)k->end_ns - (double)r->window_end_ns,
                               r->window_slack_ns);
        }
    }
    return 1;
}

/* Rule 8 once the others hold: sorts the records by start and fills out. */
static void tl_summarize(const dt_tl_region *r, dt_tl_summary *out) {
    qsort(r->records, (size_t)r->record_total, sizeof *r->records, tl_record_cmp);
    uint64_t first = UINT64_MAX, last = 0;
    double sum = 0;
    for (uint64_t i = 0; i < r->record_total; i++) {
        const dt_timing_kernel *k = &r->records[i];
        sum += (double)(k->end_ns - k->start_ns);
        if (k->start_ns < first) first = k->start_ns;
        if (k->end_ns > last) last = k->end_ns;
        if (r->region_stream_id != UINT32_MAX && k->stream_id != r->region_stream_id)
            out->other_stream_kernels++;
    }
    out->kernel_sum_ns = sum;
    out->kernel_span_ns = (double)(last - first);
    out->kernel_count = r->record_total;
    out->launch_count = r->launch_total;
}

int dt_tl_validate(const dt_tl_region *r, dt_tl_summary *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    if (err && err_len) err[0] = '\0';
    if (!tl_check_records(r, err, err_len) || !tl_check_matching(r, err, err_len) ||
        !tl_check_window(r, err, err_len))
        return 0;
    tl_summarize(r, out);
    return 1;
}

int dt_tl_calib_bracket(uint64_t host_before_ns, uint64_t cupti_ns, uint64_t host_after_ns,
                        dt_tl_calib *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    if (host_before_ns == 0 || host_after_ns == 0 || cupti_ns == 0)
        return tl_fail(err, err_len,
                       "clock calibration read zero (host %" PRIu64 "/%" PRIu64
                       ", CUPTI %" PRIu64 ")",
                       host_before_ns, host_after_ns, cupti_ns);
    if (host_after_ns < host_before_ns)
        return tl_fail(err, err_len,
                       "clock calibration bracket inverted (host %" PRIu64 " then %" PRIu64
                       ")",
                       host_before_ns, host_after_ns);
    /* Integer arithmetic: the CUPTI clock may be CLOCK_REALTIME (~1.8e18 ns). */
    uint64_t width = host_after_ns - host_before_ns;
    int64_t rel = cupti_ns >= host_before_ns ? (int64_t)(cupti_ns - host_before_ns)
                                             : -(int64_t)(host_before_ns - cupti_ns);
    out->offset_ns = rel - (int64_t)(width / 2);
    out->uncertainty_ns = (double)width / 2.0;
    return 1;
}

dt_tl_calib dt_tl_calib_tightest(const dt_tl_calib *brackets, size_t n) {
    dt_tl_calib best = brackets[0];
    for (size_t i = 1; i < n; i++)
        if (brackets[i].uncertainty_ns < best.uncertainty_ns) best = brackets[i];
    return best;
}

dt_tl_calib dt_tl_calib_combine(dt_tl_calib a, dt_tl_calib b) {
    dt_tl_calib c;
    int64_t diff = b.offset_ns - a.offset_ns;
    c.offset_ns = a.offset_ns + diff / 2;
    c.uncertainty_ns = (a.uncertainty_ns > b.uncertainty_ns ? a.uncertainty_ns
                                                            : b.uncertainty_ns) +
                       fabs((double)diff) / 2.0;
    return c;
}

int dt_tl_clock_is_host(dt_tl_calib c, double tol_ns) {
    return fabs((double)c.offset_ns) <= c.uncertainty_ns + tol_ns;
}

uint64_t dt_tl_to_host_ns(uint64_t cupti_ns, int64_t offset_ns) {
    if (cupti_ns == 0) return 0;
    if (offset_ns >= 0)
        return cupti_ns > (uint64_t)offset_ns ? cupti_ns - (uint64_t)offset_ns : 0;
    return cupti_ns + (uint64_t)(-offset_ns);
}

void dt_tl_note_corr(uint64_t *max_seen, uint64_t id) {
    if (id > *max_seen) *max_seen = id;
}

uint64_t dt_tl_corr_floor(uint64_t max_seen) {
    return max_seen == UINT64_MAX ? UINT64_MAX : max_seen + 1;
}

int dt_tl_record_in_region(int collecting, uint64_t floor, uint64_t corr_id) {
    return collecting && corr_id >= floor;
}
