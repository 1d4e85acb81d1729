/* dt_decomp.h — the E2E decomposition of one single call (issue 13 item 3, SPEC §4):
 * the arithmetic only, no CUDA, no JSON (CI tests it on recorded timestamps:
 * tests/unit/test_decomp.c).
 *
 * Input (dt_decomp_raw): what one *unheld* single-call probe sample saw, every timestamp
 * on one clock, the host monotonic clock (CLOCK_MONOTONIC, ns):
 *   call_start_ns   host clock read by the worker right before the call
 *   launches[]      each launch API call of the call (CUPTI callback API, driver and
 *                   runtime domains, outermost call only): enter and exit, read with
 *                   cuptiGetTimestamp inside the callback and put on the host clock by
 *                   the helper's calibration
 *   kernels[]       each kernel the call ran (CUPTI activity records): start, end
 *   sync_return_ns  host clock read by the worker right after the stream
 *                   synchronization returned
 *   host_call_ns    the worker's own measured single call (its timer around call and
 *                   synchronization: = sync_return - call_start when the sample is
 *                   consistent; carried separately so a mismatch is caught)
 *   clock_uncertainty_ns  the calibration's uncertainty between the CUPTI timestamp
 *                   clock and the host clock (the helper's tightest bracket, begin and
 *                   end combined; docs/device-timing.md "Clock calibration")
 *
 * Segments (dt_decomp_segments), a chain of milestones, each the difference of two:
 *   dispatch   = first launch enter   - call_start        (host work before the launch)
 *   launch     = last launch exit     - first launch enter (inside the launch APIs and
 *                between them: first enter to last exit; launch_api_sum_ns gives the
 *                time inside the APIs alone, summed over launches)
 *   queue      = first kernel start   - last launch exit  (negative when the GPU started
 *                the first kernel before the host's last launch returned: overlap_ns)
 *   kernel     = last kernel end      - first kernel start (GPU span of the call)
 *   completion = sync_return          - last kernel end   (the caller seeing it)
 * Their sum is sync_return - call_start by construction; the check compares it with
 * the measured host_call_ns. Segments that cross clocks (dispatch, completion) carry
 * the calibration uncertainty u; launch, queue and kernel are CUPTI-clock differences
 * and carry none from the calibration.
 *
 * Checks (consistent = 1 only when all hold; reason names the first broken):
 *   - at least one launch and one kernel; every interval ordered (exit >= enter,
 *     end >= start);
 *   - adds up: |sum - host_call_ns| <= tolerance_ns = 2u + DT_DECOMP_SLACK_NS;
 *   - order on one clock within u: call_start <= first enter, last kernel end <=
 *     sync_return, last exit <= sync_return, first kernel start >= first enter (no
 *     kernel before its launch was entered), every launch and kernel inside
 *     [call_start - u, sync_return + u]. (Kernel timestamps also carry CUPTI's own
 *     GPU-to-CPU conversion error, which u does not measure: a flagged order says so.)
 * A negative queue inside these rules is overlap, not an error.
 *
 * Units: ns. Ownership: dt_decomp_raw owns its arrays (dt_decomp_raw_free). Pure,
 * reentrant. */
#ifndef DT_DECOMP_H
#define DT_DECOMP_H

#include <stddef.h>
#include <stdint.h>

#include "record/dt_decomp_raw.h"

/* Timer slack added to 2u in the add-up check: the host clock read's own cost. */
#define DT_DECOMP_SLACK_NS 100.0

typedef struct dt_decomp_segments {
    double dispatch_ns, launch_ns, queue_ns, kernel_ns, completion_ns;
    double sum_ns;              /* the five added */
    double measured_ns;         /* host_call_ns */
    double residual_ns;         /* measured - sum */
    double uncertainty_ns;      /* u: on dispatch and on completion */
    double tolerance_ns;        /* 2u + DT_DECOMP_SLACK_NS: the add-up check's bound */
    double launch_api_sum_ns;   /* sum over launches of (exit - enter) */
    double overlap_ns;          /* max(0, -queue) */
    double kernel_sum_ns;       /* sum over kernels of (end - start) */
    size_t n_launches, n_kernels;
    int adds_up;                /* |residual| <= tolerance */
    int consistent;             /* every check holds (adds_up included) */
    char reason[160];           /* the first broken check, "" when consistent */
} dt_decomp_segments;

/* Computes the segments of *raw. Returns consistent (1/0); *out is always filled (the
 * segments stay NAN when there is no launch or no kernel). */
int dt_decomp_compute(const dt_decomp_raw *raw, dt_decomp_segments *out);

/* The sample the report shows: the one whose measured call is the median (lower
 * median for an even count); NULL when empty. */
const dt_decomp_raw *dt_decomp_set_median(const dt_decomp_set *set);

#endif
