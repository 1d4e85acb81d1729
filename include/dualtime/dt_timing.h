/* dt_timing.h — the C ABI of libdualtime_timing.so, the device-timing helper.
 *
 * Loaded by both workers: the native worker links it; the PyTorch worker loads it with
 * ctypes. Every loader checks dt_timing_abi_version() == DT_TIMING_ABI_VERSION and
 * refuses a mismatch.
 *
 * A region is begin_* ... end on one stream (a CUstream; NULL = legacy default stream).
 *  - control: two CUDA events around the region. No hooks, no CUPTI.
 *  - probe:   CUPTI kernel activity records (kind chosen per begin) plus launch
 *             callbacks, matched one-to-one by correlation id, timestamps on the host
 *             monotonic clock; the same two events around the region as the control.
 * end() synchronizes the region, validates it and fails closed (returns 0, fills no
 * number, sets last_error) when: begin is nested; end has no begin; capacity is
 * exceeded; CUPTI dropped records or returned zero or inverted timestamps; a launch has
 * no kernel record or a record no launch; the region launched nothing (probe) or
 * recorded nothing (control with zero interval); work was still incomplete at end.
 * After end(), nothing of the probe stays active in the process (CUPTI finalized).
 *
 * Units: nanoseconds. Thread-safety: one region at a time per process; the functions
 * must be called from one thread. Ownership: records live in the helper until the next
 * begin; copy them out with dt_timing_kernel_record(). */
#ifndef DUALTIME_DT_TIMING_H
#define DUALTIME_DT_TIMING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DT_TIMING_ABI_VERSION 1u

enum dt_timing_scope { DT_TIMING_CONTROL = 0, DT_TIMING_PROBE = 1 };
/* CUPTI activity kind of a probe. */
enum dt_timing_probe_kind {
    DT_TIMING_PROBE_CONCURRENT = 0, /* CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL */
    DT_TIMING_PROBE_SERIALIZED = 1  /* CUPTI_ACTIVITY_KIND_KERNEL */
};

typedef struct dt_timing_kernel {
    char name[256];          /* demangled if possible, truncated */
    uint64_t start_ns;       /* host monotonic clock (CLOCK_MONOTONIC) */
    uint64_t end_ns;
    uint32_t grid[3];
    uint32_t block[3];
    uint64_t correlation_id;
    uint32_t stream_id;
    uint32_t pad_;
} dt_timing_kernel;

typedef struct dt_timing_result {
    uint32_t abi_version;
    uint32_t scope;            /* dt_timing_scope */
    uint32_t probe_kind;       /* dt_timing_probe_kind (probe only) */
    uint32_t pad_;
    double stream_ns;          /* event interval around the region */
    double kernel_sum_ns;      /* probe: sum of kernel durations; control: 0 */
    double kernel_span_ns;     /* probe: last end - first start; control: 0 */
    uint64_t kernel_count;     /* probe: kernel records */
    uint64_t launch_count;     /* probe: launches seen by the callback API */
    uint64_t dropped_records;  /* probe: records CUPTI reported dropped (always 0 on success) */
    double clock_offset_ns;    /* probe: CUPTI clock - host monotonic clock at calibration */
    double clock_uncertainty_ns; /* probe: half-width of the calibration bracket */
    uint64_t host_begin_ns;    /* host monotonic clock at begin */
    uint64_t host_end_ns;      /* host monotonic clock at end (after synchronization) */
    uint64_t records_stored;   /* kernel records retrievable with dt_timing_kernel_record */
} dt_timing_result;

uint32_t dt_timing_abi_version(void);
/* 1 on success, 0 on failure (see dt_timing_last_error). */
int dt_timing_begin_control(void *stream);
int dt_timing_begin_probe(void *stream, uint32_t capacity, uint32_t probe_kind);
int dt_timing_end(dt_timing_result *result);
/* Copies record i (0 <= i < records_stored) of the last successful probe. 1/0. */
int dt_timing_kernel_record(uint64_t i, dt_timing_kernel *out);
/* The first error since the last begin, or "" . Never NULL. */
const char *dt_timing_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
