/* dt_timing_logic.h — the pure logic of the device-timing helper (no CUDA, no CUPTI).
 *
 * libdualtime_timing.so collects launches (from CUPTI callbacks) and kernel records
 * (from CUPTI activity buffers); this module decides whether they form a valid region
 * and computes its numbers: one-to-one matching by correlation id, capacity, dropped
 * records, zero/inverted timestamps, the host time window, sum/span/count, and the
 * CUPTI-clock calibration arithmetic. Keeping it free of CUDA lets CI test every
 * fail-closed rule with constructed records (tests/timing/test_timing_logic.c).
 *
 * Ownership: callers own every array; dt_tl_validate sorts `records` in place by start
 * time. Units: nanoseconds. Thread-safety: reentrant, no global state. */
#ifndef DT_TIMING_LOGIC_H
#define DT_TIMING_LOGIC_H

#include <stddef.h>
#include <stdint.h>

#include "dualtime/dt_timing.h"

/* One launch seen by the callback API. A runtime-API launch may issue a nested
 * driver-API launch callback with its own correlation id; that id is kept as alt_id
 * and a kernel record may match either id (never both). */
typedef struct dt_tl_launch {
    uint32_t corr_id;  /* correlation id of the outermost launch API call (nonzero) */
    uint32_t alt_id;   /* correlation id of a nested driver launch call, or 0 */
    int32_t status;    /* the launch API's return value (0 = success) */
    uint32_t runtime;  /* 1: runtime API (cudaLaunch*), 0: driver API (cuLaunch*) */
    const char *api;   /* API function name (a CUPTI global constant), or NULL */
    uint64_t enter_ns; /* cuptiGetTimestamp at the outermost call's entry (CUPTI clock;
                          on the host clock after end converts it like the records) */
    uint64_t exit_ns;  /* the same at its exit (0: not seen) */
} dt_tl_launch;

/* What the collector saw during one probe region. */
typedef struct dt_tl_region {
    const dt_tl_launch *launches; /* launches stored (min(launch_total, capacity)) */
    uint64_t launch_total;        /* launches seen, stored or not */
    dt_timing_kernel *records;    /* kernel records stored, timestamps already on the
                                     host clock (see dt_tl_to_host_ns) */
    uint64_t record_total;        /* kernel records seen, stored or not */
    uint64_t capacity;            /* the region's capacity */
    uint64_t dropped;             /* records CUPTI reported dropped */
    uint64_t window_begin_ns;     /* host clock at begin (0 = no window check) */
    uint64_t window_end_ns;       /* host clock after the end synchronization */
    uint64_t window_slack_ns;     /* tolerance on both window edges */
    uint32_t region_stream_id;    /* CUPTI id of the region stream, UINT32_MAX unknown */
} dt_tl_region;

/* The numbers of a valid region. */
typedef struct dt_tl_summary {
    double kernel_sum_ns;          /* sum of (end - start) */
    double kernel_span_ns;         /* max end - min start */
    uint64_t kernel_count;         /* records matched */
    uint64_t launch_count;         /* launches seen */
    uint64_t other_stream_kernels; /* records with stream_id != region_stream_id */
} dt_tl_summary;

/* Validates the region and fills *out. Returns 1 if valid; else 0 with one line in err
 * (the first rule broken, in the order of docs/device-timing.md) and *out zeroed.
 * Sorts region->records by start_ns on success. */
int dt_tl_validate(const dt_tl_region *region, dt_tl_summary *out, char *err,
                   size_t err_len);

/* One calibration: a CUPTI timestamp read between two host monotonic reads. */
typedef struct dt_tl_calib {
    int64_t offset_ns;     /* cupti - (host_before + host_after) / 2, whole ns (an int:
                              CUPTI's default clock is ~1.8e18 ns, beyond a double's
                              integer precision) */
    double uncertainty_ns; /* (host_after - host_before) / 2 */
} dt_tl_calib;

/* Fills *out from one bracket. 0 (with err) when the bracket is inverted or a reading
 * is zero. */
int dt_tl_calib_bracket(uint64_t host_before_ns, uint64_t cupti_ns, uint64_t host_after_ns,
                        dt_tl_calib *out, char *err, size_t err_len);

/* The tightest of n >= 1 brackets (smallest uncertainty; the first of equals): a
 * calibration takes several host/CUPTI/host brackets in a row and keeps this one. */
dt_tl_calib dt_tl_calib_tightest(const dt_tl_calib *brackets, size_t n);

/* Combines the calibrations at begin and end: offset = mean, uncertainty =
 * max(half-widths) + |offset difference| / 2. */
dt_tl_calib dt_tl_calib_combine(dt_tl_calib at_begin, dt_tl_calib at_end);

/* Whether the CUPTI clock already is the host clock: |offset| <= uncertainty + tol. */
int dt_tl_clock_is_host(dt_tl_calib c, double tol_ns);

/* CUPTI timestamp -> host monotonic ns, subtracting offset_ns. 0 stays 0, and a result
 * that would be <= 0 becomes 0, so the zero-timestamp rule catches both. */
uint64_t dt_tl_to_host_ns(uint64_t cupti_ns, int64_t offset_ns);

/* ---- records outside regions (persistent mode) -------------------------------------
 * In persistent mode CUPTI stays attached between regions, so records of untimed work
 * (and of the begin's warm-up launch) keep arriving, possibly late, while a region
 * collects. CUPTI hands out correlation ids in increasing order, so a region's floor is
 * one above the largest id any launch callback saw before the region started collecting;
 * a record below it belongs to earlier work and is discarded, never stored or counted.
 * A record at or above the floor with no launch in the region (a graph launch) is kept
 * and fails the region as before. Ids are 32-bit in CUPTI; a wrap after 2^32 API calls
 * is not handled (the region would then fail closed: launch without record). */

/* Raises *max_seen to id if larger (called for every launch, in a region or not). */
void dt_tl_note_corr(uint64_t *max_seen, uint64_t id);

/* The floor of a region that starts collecting now: max_seen + 1 (>= 1: id 0 is never a
 * valid launch). */
uint64_t dt_tl_corr_floor(uint64_t max_seen);

/* Whether a kernel record delivered now belongs to the region: 1 to store it, 0 to
 * discard it (no region collecting, or its correlation id lies below the floor). */
int dt_tl_record_in_region(int collecting, uint64_t floor, uint64_t corr_id);

#endif
