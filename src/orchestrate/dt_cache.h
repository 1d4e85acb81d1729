/* dt_cache.h — the arithmetic of `--cache cold` (issue 13 item 2; docs/device-timing.md,
 * "Cold cache"), and the names of the graph replay scope's unavailability reasons.
 *
 * Cold means: before every device window (single call, batch, graph replay) the worker
 * writes a flush buffer of more than 2 x L2 bytes on the stream, outside the window; and
 * the calls of a batch window rotate over `copies` full copies of the case's arena, so
 * that no call of a window reads data an earlier call of the same window left in L2.
 * The orchestrator owns the policy: it computes copies and flush bytes here and sends
 * them with every device request; the worker echoes what it did and the orchestrator
 * checks the echo with dt_cache_window_cold (a worker that ignored the request, or a
 * rotation capped below what the window needs, is flagged, never reported as cold).
 *
 * Pure functions on integers: no I/O, no globals, thread-safe. Units: bytes. */
#ifndef DT_CACHE_H
#define DT_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* Flush and rotation cover this many L2s. */
#define DT_CACHE_L2_FACTOR 2
/* The flush buffer's margin above DT_CACHE_L2_FACTOR x L2. */
#define DT_CACHE_FLUSH_MARGIN_BYTES ((int64_t)4 << 20)
/* The most arena copies a rotation uses (a bound on the worker's memory and set-up). */
#define DT_CACHE_MAX_COPIES 1024

/* The graph scope's reason on the cpu backend (recorded, not a failure). */
#define DT_GRAPH_CPU_REASON "cpu: no graphs"
/* ... and in a cuda run without device timing. */
#define DT_GRAPH_NO_TIMING_REASON "device timing is off (--no-device-timing)"

/* Bytes of the flush buffer for an L2 of l2_bytes: 2 x L2 + 4 MiB (> 2 x L2). 0 when
 * l2_bytes <= 0 (unknown: no cold cache possible). */
int64_t dt_cache_flush_bytes(int64_t l2_bytes);

/* Arena copies a window of `calls` calls rotates over: the fewest whose total exceeds
 * 2 x L2 (floor(2 x L2 / copy_bytes) + 1), but no more than the window has calls (every
 * window is flushed first, so a call that reads a copy no earlier call of the window read
 * reads it from DRAM) and no more than DT_CACHE_MAX_COPIES; at least 1. 0 for a
 * non-positive argument. */
int64_t dt_cache_copies(int64_t copy_bytes, int64_t l2_bytes, int64_t calls);

/* Does a flushed window of `calls` calls rotating over `copies` copies of copy_bytes each
 * read every call's data from DRAM? Yes (1) when flushed_bytes > 2 x L2 and either no
 * copy is read twice (calls <= copies) or a copy read again was pushed out by more than
 * 2 x L2 of other copies in between (copies x copy_bytes > 2 x L2). Otherwise 0 and a
 * one-line reason in why (when why_len > 0): the flush too small or missing, or the
 * rotation too short ("a window of 64 calls reuses 4 copies of 1024 bytes (4096 bytes
 * <= 2 x L2 = 104857600 bytes): later calls read L2"). Non-positive sizes give 0. */
int dt_cache_window_cold(int64_t copy_bytes, int64_t copies, int64_t calls, int64_t l2_bytes,
                         int64_t flushed_bytes, char *why, size_t why_len);

#endif
