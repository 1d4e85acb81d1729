/* dt_timing.h — the C ABI of libdualtime_timing.so, the device-timing helper.
 *
 * Loaded by both workers: the native worker links it; the PyTorch worker loads it with
 * ctypes. Every loader checks dt_timing_abi_version() == DT_TIMING_ABI_VERSION and
 * refuses a mismatch. docs/device-timing.md explains every rule below and what each
 * scope measures.
 *
 * A region is begin_* ... end on one stream (a CUstream; NULL = legacy default stream),
 * with the caller's CUDA context current on the calling thread.
 *  - control: two CUDA events around the region. No hooks, no CUPTI.
 *  - probe:   CUPTI kernel activity records (kind chosen per begin) plus driver- and
 *             runtime-API launch callbacks, matched one-to-one by correlation id,
 *             timestamps on the host monotonic clock; the same two events around the
 *             region as the control.
 * What a probe region contains: every kernel launch made by any thread of the process
 * between begin and end, on any stream. Kernels on other streams are counted (and
 * reported in other_stream_kernels) if they have completed when the region's stream
 * reaches its end event; otherwise the region fails as incomplete.
 *
 * end() synchronizes the region, validates it and fails closed (returns 0, zeroes every
 * number of *result, sets last_error) when: begin is nested; end has no begin; capacity
 * is exceeded; CUPTI dropped records or returned zero or inverted timestamps; a launch
 * has no kernel record or a record no launch (or two records share a correlation id); a
 * launch returned an error; a record lies outside the region's host time window; the
 * region launched nothing (probe) or the events show no time (control); work was still
 * incomplete at end (the end event was not reached within the sync timeout, or a kernel
 * on another stream had not finished). After end(), success or failure, nothing of the
 * probe stays active in the process: activity disabled, callbacks unsubscribed, CUPTI
 * finalized (end therefore waits for the context's work before it returns) — except in
 * persistent mode.
 *
 * Persistent mode (dt_timing_set_persistent, for a process that only ever runs probes):
 * CUPTI is attached once and stays attached, its activity kind enabled, between probe
 * regions, so the per-session setup (attach, first-launch instrumentation of each
 * module) is paid by untimed work before a region instead of inside it. Launches outside
 * a region are not collected and their kernel records are discarded, even when delivered
 * during a later region (correlation id below the region's floor). Every fail-closed
 * rule still applies; a region that fails on a CUDA/CUPTI error, a timeout or a nested
 * begin tears CUPTI down and attaches it again. Control regions are refused while the
 * mode is on (CUPTI would perturb them).
 *
 * Held windows (ABI 2): dt_timing_hold(stream) before begin makes the region held: right
 * before its begin event (after the probe's warm-up and calibration) the stream is made
 * to wait on a host-written flag in mapped pinned memory (cuStreamWaitValue32, or a spin
 * kernel where stream memory operations are refused), so the begin event, the caller's
 * calls and the end event queue while the GPU waits; end() queues the end event and only
 * then releases the flag, so the event pair holds the GPU's work and not the host's
 * launch rate. A watchdog thread releases a hold after its timeout (default 1000 ms,
 * dt_timing_configure_hold): a call that synchronizes on the host inside the hold (lazy
 * module loading on a kernel's first launch, an allocator freeing memory, a device
 * synchronize) then returns, and the region fails closed ("hold timed out after N ms:
 * the calls synchronized on the host inside the hold ..."), never hangs. Warm every
 * kernel of the calls (and load modules eagerly) before holding. Unheld regions are
 * unchanged (the "dispatch" scope: what the GPU sees as the caller feeds it).
 *
 * Units: nanoseconds. Thread-safety: one region at a time per process; the functions
 * must be called from one thread (launches may come from any thread). Ownership:
 * records live in the helper until the next begin; copy them out with
 * dt_timing_kernel_record(). */
#ifndef DUALTIME_DT_TIMING_H
#define DUALTIME_DT_TIMING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: held windows (hold, release, configure_hold, result.held .. hold_queue_ns) */
#define DT_TIMING_ABI_VERSION 2u

enum dt_timing_scope { DT_TIMING_CONTROL = 0, DT_TIMING_PROBE = 1 };
/* CUPTI activity kind of a probe. */
enum dt_timing_probe_kind {
    DT_TIMING_PROBE_CONCURRENT = 0, /* CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL */
    DT_TIMING_PROBE_SERIALIZED = 1  /* CUPTI_ACTIVITY_KIND_KERNEL */
};
/* Argument of dt_timing_set_persistent. */
enum dt_timing_persistent {
    DT_TIMING_PERSISTENT_OFF = 0,        /* default: every probe end finalizes CUPTI */
    DT_TIMING_PERSISTENT_CONCURRENT = 1, /* on; attach now with the concurrent kind */
    DT_TIMING_PERSISTENT_SERIALIZED = 2  /* on; attach now with the serialized kind */
};
/* How probe timestamps reached the host monotonic clock. */
enum dt_timing_clock_source {
    DT_TIMING_CLOCK_NONE = 0,     /* control: no CUPTI timestamps */
    DT_TIMING_CLOCK_CALLBACK = 1, /* CUPTI used our CLOCK_MONOTONIC timestamp callback;
                                     the calibration confirmed it (|offset| small) */
    DT_TIMING_CLOCK_OFFSET = 2    /* callback unavailable or not honoured: records were
                                     converted by subtracting clock_offset_ns */
};

/* How a held region's stream waits for the flag (dt_timing_configure_hold, result). */
enum dt_timing_hold_method {
    DT_TIMING_HOLD_NONE = 0,       /* result: not held; configure: automatic choice */
    DT_TIMING_HOLD_WAIT_VALUE = 1, /* cuStreamWaitValue32 (GEQ) on mapped pinned memory */
    DT_TIMING_HOLD_SPIN_KERNEL = 2 /* a one-thread kernel polling the flag (fallback where
                                      stream memory operations are refused) */
};

/* The protocol's name of a dt_timing_hold_method ("none", "wait_value", "spin_kernel").
 * Header-only (no symbol of the ABI). */
static inline const char *dt_timing_hold_method_name(uint32_t method) {
    return method == DT_TIMING_HOLD_WAIT_VALUE    ? "wait_value"
           : method == DT_TIMING_HOLD_SPIN_KERNEL ? "spin_kernel"
                                                  : "none";
}

/* One kernel execution seen by the probe. */
typedef struct dt_timing_kernel {
    char name[256];          /* kernel name as CUPTI reports it (C++ names stay mangled),
                                NUL-terminated, truncated to 255 bytes */
    uint64_t start_ns;       /* kernel start, host monotonic clock (CLOCK_MONOTONIC) */
    uint64_t end_ns;         /* kernel end, same clock; end_ns > start_ns */
    uint32_t grid[3];        /* grid dimensions x, y, z (blocks) */
    uint32_t block[3];       /* block dimensions x, y, z (threads) */
    uint64_t correlation_id; /* CUPTI correlation id shared with the launch callback */
    uint32_t stream_id;      /* CUPTI stream id the kernel ran on */
    uint32_t pad_;           /* zero */
} dt_timing_kernel;

/* One launch API call seen by the probe's callbacks (the outermost call: a runtime
 * launch's nested driver launch is folded into it). ABI 2 addition (the version stays 2:
 * nothing existing changed; loaders look dt_timing_launch_record up by name and treat
 * its absence as "no launch timestamps"). 96 bytes. */
typedef struct dt_timing_launch {
    uint64_t enter_ns;           /* cuptiGetTimestamp at the API's entry (in the callback),
                                    on the host monotonic clock like the kernel records
                                    (converted by the calibration where needed) */
    uint64_t exit_ns;            /* the same at its exit */
    uint32_t correlation_id;     /* CUPTI correlation id of the call */
    uint32_t alt_correlation_id; /* a nested driver launch's id, or 0 */
    int32_t status;              /* the API's return value (0 on success) */
    uint32_t runtime;            /* 1: runtime API (cudaLaunchKernel ...), 0: driver API */
    char api[64];                /* the API function's name, NUL-terminated */
} dt_timing_launch;

/* Result of one region. On failure every field is zero except abi_version and scope.
 * ABI 2 appended held .. hold_queue_ns (ABI 1 ended at region_stream_id, pad_). */
typedef struct dt_timing_result {
    uint32_t abi_version;      /* DT_TIMING_ABI_VERSION */
    uint32_t scope;            /* dt_timing_scope */
    uint32_t probe_kind;       /* dt_timing_probe_kind (probe only; 0 for control) */
    uint32_t clock_source;     /* dt_timing_clock_source (probe only) */
    double stream_ns;          /* event interval around the region on its stream (both
                                  scopes); cuEventElapsedTime resolution is ~0.5 us */
    double kernel_sum_ns;      /* probe: sum of kernel durations; control: 0 */
    double kernel_span_ns;     /* probe: last kernel end - first kernel start; control: 0 */
    uint64_t kernel_count;     /* probe: kernel records matched (== launch_count) */
    uint64_t launch_count;     /* probe: launches seen by the callback API */
    uint64_t dropped_records;  /* probe: records CUPTI reported dropped (0 on success) */
    double clock_offset_ns;    /* probe: CUPTI clock - host monotonic clock, mean of the
                                  calibrations at begin and at end (~0 with the callback;
                                  as a double it is exact only below 2^53 ns: the helper
                                  converts with the exact integer internally) */
    double clock_uncertainty_ns; /* probe: max half-width of the two calibration brackets
                                    plus half the begin/end offset difference */
    uint64_t host_begin_ns;    /* host monotonic clock at begin (before the begin event) */
    uint64_t host_end_ns;      /* host monotonic clock at end (after the end event sync) */
    uint64_t records_stored;   /* kernel records retrievable with dt_timing_kernel_record
                                  (probe: == kernel_count, sorted by start_ns) */
    uint64_t other_stream_kernels; /* probe: records whose stream_id != region_stream_id */
    uint32_t region_stream_id; /* probe: CUPTI stream id of the region's stream;
                                  UINT32_MAX if CUPTI could not tell */
    uint32_t held;             /* 1: the region was held and end released it after
                                  queuing the end event (the window holds only the GPU's
                                  work); 0: unheld, or released early (dt_timing_release) */
    uint32_t hold_method;      /* dt_timing_hold_method of a held region, else 0 */
    uint32_t hold_timeout_ms;  /* the watchdog's timeout of a held region, else 0 */
    uint32_t pad_;             /* zero (144 bytes in all, naturally aligned) */
    uint64_t hold_queue_ns;    /* held: host time from the stream's wait being queued to
                                  its release (what the host took to queue the calls) */
} dt_timing_result;

uint32_t dt_timing_abi_version(void);
/* 1 on success, 0 on failure (see dt_timing_last_error). */
int dt_timing_begin_control(void *stream);
/* capacity: the most launches (and kernel records) the region may hold, 1..65536. */
int dt_timing_begin_probe(void *stream, uint32_t capacity, uint32_t probe_kind);
int dt_timing_end(dt_timing_result *result);
/* Copies record i (0 <= i < records_stored) of the last successful probe. 1/0. */
int dt_timing_kernel_record(uint64_t i, dt_timing_kernel *out);
/* Copies launch i (0 <= i < launch_count) of the last successful probe, in order of
 * entry. Launches live in the helper until the next begin, like the records. 1/0.
 * ABI 2 addition: see dt_timing_launch. */
int dt_timing_launch_record(uint64_t i, dt_timing_launch *out);
/* The first error since the last begin (or set_persistent), or "". Never NULL. */
const char *dt_timing_last_error(void);
/* Optional settings, outside a region only; 0 keeps (or restores) the default.
 *  activity_buffer_bytes: size of each CUPTI activity buffer (default 4 MiB; min 1024);
 *  max_activity_buffers:  buffers handed to CUPTI per region (default 0 = unlimited; a
 *                         small number provokes dropped records — for tests);
 *  sync_timeout_ms:       how long end waits for the end event before it declares the
 *                         work incomplete (default 10000). 1/0. */
int dt_timing_configure(uint64_t activity_buffer_bytes, uint32_t max_activity_buffers,
                        uint32_t sync_timeout_ms);
/* Persistent mode, outside a region only (see the top of this header). on: a
 * dt_timing_persistent value. On (1 or 2): attaches CUPTI now (subscription, launch
 * callbacks, timestamp callback, the given activity kind; no CUDA context needed), so
 * untimed calls made before the first region already run under the probe; later
 * regions keep it attached; a begin_probe of the other kind switches the enabled kind
 * (the first region after a switch may pay first-launch costs again). Off (0): tears
 * CUPTI down (waits for the current context's work, finalizes) and restores the default.
 * 1/0; on failure CUPTI is left detached, the mode as requested (the next probe begin
 * attaches again) and last_error says why. */
int dt_timing_set_persistent(int on);

/* Held windows (ABI 2; see the top of this header and docs/device-timing.md).
 * dt_timing_hold: outside a region only, with the caller's context current: the next
 * begin_control/begin_probe, which must be on the same stream, is held. Prepares the
 * flag for the current context (once: mapped pinned memory, and the wait method: a
 * trial cuStreamWaitValue32 on a scratch stream, the spin kernel if refused) and starts
 * the watchdog thread. Refused (0, last_error) when a hold is already asked for ("nested
 * hold"), when the device cannot map host memory, and inside an open region (which then
 * fails too, like a nested begin). A begin that fails drops the hold. 1/0. */
int dt_timing_hold(void *stream);
/* Releases the open region's hold now, before end ("early": the window then includes
 * the host's queueing after this call, result.held = 0). end() releases by itself right
 * after queuing the end event: call this only to unblock the stream early. Refused (0)
 * without a held region ("release without hold"; an open unheld region then fails) and
 * after the watchdog released it (the timeout reason). 1/0. */
int dt_timing_release(void);
/* Outside a region only; 0 keeps (or restores) the default. timeout_ms: the watchdog's
 * timeout (default 1000, at most 600000); method: a dt_timing_hold_method (0 = automatic:
 * wait value where the device takes it, else the spin kernel; 1, 2 force one; a forced
 * wait value the device refuses makes hold fail). Takes effect at the next hold. 1/0. */
int dt_timing_configure_hold(uint32_t timeout_ms, uint32_t method);

#ifdef __cplusplus
}
#endif

#endif
