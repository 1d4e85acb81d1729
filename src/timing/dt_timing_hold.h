/* dt_timing_hold.h — the hold of a device-timing region and its watchdog, in pure C (no
 * CUDA): the state machine and the thread that releases a hold nobody released in time.
 *
 * A held region (docs/device-timing.md, "Held windows"): before the begin event is
 * queued the stream is made to wait on a host-written 32-bit flag (cuStreamWaitValue32
 * GEQ, or a spin kernel); the host queues begin event, calls and end event while the
 * GPU waits, then writes the flag, so the event pair brackets the GPU's work and not the
 * host's launch rate. If a call synchronizes on the host inside the hold (lazy module
 * loading, an allocator freeing memory, a device synchronize) the host thread blocks
 * forever waiting for a stream that waits for it: the watchdog thread writes the flag
 * after timeout_ms, the blocked call returns, and the region fails closed with the
 * reason instead of hanging. libdualtime_timing.so owns one dt_hold; the flag write and
 * the clock are callbacks so that tests/timing/test_timing_hold.c drives every rule
 * with a fake clock and a plain memory flag.
 *
 * States: IDLE -> arm -> ARMED -> engage -> ENGAGED -> release (end, after the end
 * event) -> RELEASED, or release_early -> RELEASED_EARLY, or watchdog -> TIMED_OUT;
 * finish -> IDLE. Each engage uses the next sequence value v (the stream waits for
 * (int32_t)(flag - v) >= 0); releasing writes v, so the flag is never reset.
 *
 * Ownership: the dt_hold is the caller's; callbacks' ctx is the caller's. Units: ns for
 * clocks, ms for timeouts. Thread-safety: every function locks h->mu; the write
 * callback runs with it held (it must only store the flag). */
#ifndef DT_TIMING_HOLD_H
#define DT_TIMING_HOLD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef enum dt_hold_state {
    DT_HOLD_IDLE = 0,           /* no hold */
    DT_HOLD_ARMED = 1,          /* hold asked for; the next begin engages it */
    DT_HOLD_ENGAGED = 2,        /* the stream waits for the flag since engaged_ns */
    DT_HOLD_RELEASED = 3,       /* released at end, after the end event was queued */
    DT_HOLD_RELEASED_EARLY = 4, /* released before end (dt_timing_release) */
    DT_HOLD_TIMED_OUT = 5       /* released by the watchdog: the region fails */
} dt_hold_state;

/* Monotonic clock in ns (CLOCK_MONOTONIC for a running watchdog thread). */
typedef uint64_t (*dt_hold_clock_fn)(void *ctx);
/* Stores value into the flag (visible to the device). */
typedef void (*dt_hold_write_fn)(void *ctx, uint32_t value);

typedef struct dt_hold {
    pthread_mutex_t mu;       /* guards everything below */
    pthread_cond_t cv;        /* wakes the watchdog (engage, stop) */
    pthread_t thread;         /* the watchdog, when started */
    int thread_started;       /* 1 once dt_hold_start_watchdog succeeded */
    int stop;                 /* asks the watchdog to exit (dt_hold_destroy) */
    dt_hold_state state;
    const void *stream;       /* the stream the hold is armed for / engaged on */
    uint32_t seq;             /* value of the last engage (0: none yet) */
    uint32_t timeout_ms;      /* of the armed / engaged hold */
    uint64_t engaged_ns;      /* clock at engage */
    uint64_t released_ns;     /* clock at release (any kind) */
    dt_hold_clock_fn clock;
    dt_hold_write_fn write;
    void *ctx;                /* passed to clock and write */
} dt_hold;

/* What a finished hold was, for the region's result. */
typedef struct dt_hold_outcome {
    int engaged;              /* the stream was held */
    int held;                 /* released at end after the end event: the window held
                                 only the GPU's work */
    int early;                /* released before end */
    uint32_t timeout_ms;
    uint64_t queued_ns;       /* engage -> release: how long the host took to queue */
} dt_hold_outcome;

/* Longest timeout accepted by dt_hold_arm (10 minutes). */
#define DT_HOLD_MAX_TIMEOUT_MS 600000u

/* Sets up h (IDLE, no thread). clock and write must not be NULL. 1/0 (pthread init). */
int dt_hold_init(dt_hold *h, dt_hold_clock_fn clock, dt_hold_write_fn write, void *ctx);
/* Starts the watchdog thread (once; later calls return 1). Its clock must be
 * CLOCK_MONOTONIC. 1/0 with err. */
int dt_hold_start_watchdog(dt_hold *h, char *err, size_t err_len);
/* Releases an engaged hold, stops and joins the watchdog, frees h's primitives. */
void dt_hold_destroy(dt_hold *h);

/* IDLE -> ARMED for stream, timeout_ms in 1..DT_HOLD_MAX_TIMEOUT_MS. Refused (0 with
 * err, state unchanged) when a hold is armed or engaged ("nested hold") or the timeout
 * is out of range. */
int dt_hold_arm(dt_hold *h, const void *stream, uint32_t timeout_ms, char *err, size_t err_len);
/* 1 if a hold is armed (not yet engaged). */
int dt_hold_armed(dt_hold *h);
/* ARMED -> ENGAGED: *wait_value is the value the stream must wait for (GEQ); the
 * deadline starts now and the watchdog is woken. 0 with err (and the hold dropped to
 * IDLE) when nothing is armed or stream is not the armed one. */
int dt_hold_engage(dt_hold *h, const void *stream, uint32_t *wait_value, char *err,
                   size_t err_len);
/* ENGAGED -> RELEASED (early = 0: end, after queuing the end event) or RELEASED_EARLY:
 * writes the flag. Already released: 1, unchanged. TIMED_OUT: 0 with the timeout
 * reason. IDLE or ARMED: 0 with "release without hold". */
int dt_hold_release(dt_hold *h, int early, char *err, size_t err_len);
/* Drops whatever hold there is, writing the flag if engaged (a failed begin, a
 * teardown): never leaves a stream blocked. -> IDLE. */
void dt_hold_cancel(dt_hold *h);
/* The watchdog's step at time now_ns: an ENGAGED hold past its deadline is released
 * (flag written) and becomes TIMED_OUT; returns 1 then. *wait_ns (may be NULL): ns to
 * the deadline of an engaged hold, 0 when none is engaged. */
int dt_hold_poll(dt_hold *h, uint64_t now_ns, uint64_t *wait_ns);
/* -> IDLE, filling *out. 1 for a hold released in time or none at all; 0 with the
 * reason for TIMED_OUT, or for ENGAGED (finish before release: the flag is written
 * first, the region must fail). */
int dt_hold_finish(dt_hold *h, dt_hold_outcome *out, char *err, size_t err_len);
dt_hold_state dt_hold_get_state(dt_hold *h);
const char *dt_hold_state_name(dt_hold_state s);

#endif
