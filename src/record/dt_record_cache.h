/* dt_record_cache.h — incremental encoding of results.json: dt_record_encode's exact bytes
 * without re-encoding the cases that did not change since the last encode (issue 12).
 *
 * `dualtime run` writes results.json after every case; the file holds every raw sample,
 * 20-40 MB over a default CUDA run, and encoding all of it after each case cost 0.15-0.6 s
 * a case on the H200. Between two writes only the case just run changes. The cache keeps
 * each case's encoded text (as it sits in the document: indented for depth 2) and on each
 * encode re-encodes only the document without its cases (small,
 * dt_record_encode_without_cases) plus the cases whose text it cannot reuse, and splices
 * the case texts into the "cases": [] of the document.
 *
 * THE INVARIANT (what makes a reuse safe): dt_case.gen names one content of one case.
 * dt_record_cache_touch gives a case a new gen, process-unique and never 0; code that
 * changes a case (anything but its derived block) must touch it after the change and
 * before the next encode (the run loop touches the case it runs at the start and at the
 * end of run_case). A case's cached text is reused only when ALL of these hold:
 *   - the case's gen is not 0 (a new or decoded case, never touched, is always encoded)
 *     and equals the gen its text was encoded at;
 *   - it is at the same index with the same id;
 *   - the record's implementation ids (the keys of the case's "impl") are those the cache
 *     encoded with (else every entry is dropped);
 *   - a cheap fingerprint of the case (sample counts and the last sample of every scope,
 *     rounds done, checks, clock rounds, floor, status and validity) is unchanged: a
 *     second guard that catches a forgotten touch for the common changes (never a reason
 *     to reuse on its own).
 * A record with any derived block (the run's or a case's) is encoded whole with
 * dt_record_encode and the cache is left as it was (derived blocks are rewritten by every
 * derive, without touching; the cache never stores nor reuses a case with one). In
 * verify mode every incremental encode is also compared with dt_record_encode's bytes and
 * a difference is DT_EINVAL naming its offset (tests; DUALTIME_RESULTS_VERIFY=1 in a run).
 *
 * Ownership: the cache owns copies of the case texts (about the document's size); *text
 * of an encode is the caller's (free). The record is only read. Thread-safety: none; one
 * cache serves one record at a time (a different record is safe, only slower: its cases
 * carry other gens). dt_record_cache_touch is thread-safe. Never prints. */
#ifndef DT_RECORD_CACHE_H
#define DT_RECORD_CACHE_H

#include "common/dt_common.h"
#include "record/dt_record.h"

#include <stddef.h>

typedef struct dt_record_cache dt_record_cache;

/* Counts of what the encodes did (cumulative since the cache was made). */
typedef struct dt_record_cache_stats {
    size_t encodes;       /* dt_record_cache_encode calls that succeeded */
    size_t full;          /* of them, encoded whole by dt_record_encode (derived present) */
    size_t cases_reused;  /* case texts spliced from the cache */
    size_t cases_encoded; /* case texts encoded (new, touched, gen 0, or guarded) */
    size_t guard_misses;  /* gen matched but the fingerprint did not: a touch was missing */
} dt_record_cache_stats;

dt_record_cache *dt_record_cache_new(void);
/* Frees the cache and its texts. NULL is fine. */
void dt_record_cache_free(dt_record_cache *cache);

/* verify 1: every incremental encode is compared with dt_record_encode (twice the cost). */
void dt_record_cache_set_verify(dt_record_cache *cache, int verify);

/* Gives c a new content generation (see the invariant above). */
void dt_record_cache_touch(dt_case *c);

/* results.json text of r, byte-identical to dt_record_encode's (NUL-terminated; *len
 * excludes the NUL); the cache keeps the texts of r's cases for the next call. Errors as
 * dt_record_encode's; in verify mode also DT_EINVAL "results: incremental encoding
 * differs from the full one at byte N (case ID)". On error the cache is emptied. */
dt_status dt_record_cache_encode(dt_record_cache *cache, const dt_record *r, char **text,
                                 size_t *len, dt_err *err);

dt_record_cache_stats dt_record_cache_get_stats(const dt_record_cache *cache);

#endif
