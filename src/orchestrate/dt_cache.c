/* dt_cache.c — cold-cache arithmetic (see dt_cache.h). */
#include "dt_cache.h"

#include <stdio.h>

int64_t dt_cache_flush_bytes(int64_t l2_bytes) {
    if (l2_bytes <= 0) return 0;
    return DT_CACHE_L2_FACTOR * l2_bytes + DT_CACHE_FLUSH_MARGIN_BYTES;
}

int64_t dt_cache_copies(int64_t copy_bytes, int64_t l2_bytes, int64_t calls) {
    if (copy_bytes <= 0 || l2_bytes <= 0 || calls <= 0) return 0;
    int64_t need = DT_CACHE_L2_FACTOR * l2_bytes / copy_bytes + 1;
    if (need > calls) need = calls;
    if (need > DT_CACHE_MAX_COPIES) need = DT_CACHE_MAX_COPIES;
    return need < 1 ? 1 : need;
}

int dt_cache_window_cold(int64_t copy_bytes, int64_t copies, int64_t calls, int64_t l2_bytes,
                         int64_t flushed_bytes, char *why, size_t why_len) {
    char dummy[1];
    if (!why || why_len == 0) {
        why = dummy;
        why_len = sizeof dummy;
    }
    why[0] = '\0';
    if (copy_bytes <= 0 || copies <= 0 || calls <= 0 || l2_bytes <= 0) {
        snprintf(why, why_len, "cold cache not established: copy bytes %lld, copies %lld, "
                 "calls %lld, L2 %lld bytes (all must be positive)", (long long)copy_bytes,
                 (long long)copies, (long long)calls, (long long)l2_bytes);
        return 0;
    }
    int64_t twice_l2 = DT_CACHE_L2_FACTOR * l2_bytes;
    if (flushed_bytes <= twice_l2) {
        snprintf(why, why_len, "the flush before the window wrote %lld bytes, not more than "
                 "2 x L2 = %lld bytes: the window may start with its data in L2",
                 (long long)flushed_bytes, (long long)twice_l2);
        return 0;
    }
    if (calls <= copies) return 1;
    /* copies x copy_bytes, without overflow */
    if (copies > twice_l2 / copy_bytes) return 1;
    snprintf(why, why_len, "a window of %lld calls reuses %lld copies of %lld bytes (%lld "
             "bytes <= 2 x L2 = %lld bytes): later calls read L2", (long long)calls,
             (long long)copies, (long long)copy_bytes, (long long)(copies * copy_bytes),
             (long long)twice_l2);
    return 0;
}
