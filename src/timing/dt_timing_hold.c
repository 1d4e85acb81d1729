/* dt_timing_hold.c — the hold state machine and its watchdog thread (see
 * dt_timing_hold.h). No CUDA here: the flag write and the clock are callbacks; tested on
 * the host by tests/timing/test_timing_hold.c. */
#define _GNU_SOURCE
#include "timing/dt_timing_hold.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int hd_fail(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int hd_fail(char *err, size_t err_len, const char *fmt, ...) {
    if (err && err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return 0;
}

/* The reason of a hold the watchdog had to release. */
static int hd_timeout_reason(const dt_hold *h, char *err, size_t err_len) {
    return hd_fail(err, err_len,
                   "hold timed out after %" PRIu32 " ms: the calls synchronized on the host "
                   "inside the hold (a lazy module load on a kernel's first launch, an "
                   "allocator freeing memory, a device synchronize) or queued more work "
                   "than the stream takes; the watchdog released the stream and the sample "
                   "fails",
                   h->timeout_ms);
}

const char *dt_hold_state_name(dt_hold_state s) {
    switch (s) {
    case DT_HOLD_IDLE: return "idle";
    case DT_HOLD_ARMED: return "armed";
    case DT_HOLD_ENGAGED: return "engaged";
    case DT_HOLD_RELEASED: return "released";
    case DT_HOLD_RELEASED_EARLY: return "released early";
    case DT_HOLD_TIMED_OUT: return "timed out";
    }
    return "?";
}

int dt_hold_init(dt_hold *h, dt_hold_clock_fn clock, dt_hold_write_fn write, void *ctx) {
    memset(h, 0, sizeof *h);
    h->clock = clock;
    h->write = write;
    h->ctx = ctx;
    if (!clock || !write) return 0;
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0) return 0;
    int ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
             pthread_cond_init(&h->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (!ok) return 0;
    if (pthread_mutex_init(&h->mu, NULL) != 0) {
        pthread_cond_destroy(&h->cv);
        return 0;
    }
    return 1;
}

/* With h->mu held. */
static int hd_poll_locked(dt_hold *h, uint64_t now_ns, uint64_t *wait_ns) {
    if (wait_ns) *wait_ns = 0;
    if (h->state != DT_HOLD_ENGAGED) return 0;
    uint64_t limit_ns = (uint64_t)h->timeout_ms * 1000000ull;
    uint64_t elapsed = now_ns > h->engaged_ns ? now_ns - h->engaged_ns : 0;
    if (elapsed < limit_ns) {
        if (wait_ns) *wait_ns = limit_ns - elapsed;
        return 0;
    }
    h->write(h->ctx, h->seq);
    h->state = DT_HOLD_TIMED_OUT;
    h->released_ns = now_ns;
    return 1;
}

int dt_hold_poll(dt_hold *h, uint64_t now_ns, uint64_t *wait_ns) {
    pthread_mutex_lock(&h->mu);
    int fired = hd_poll_locked(h, now_ns, wait_ns);
    pthread_mutex_unlock(&h->mu);
    return fired;
}

/* The watchdog: sleeps until an engaged hold's deadline (or forever while none is
 * engaged), then releases it if it is still engaged. */
static void *hd_watchdog(void *arg) {
    dt_hold *h = arg;
    pthread_mutex_lock(&h->mu);
    while (!h->stop) {
        uint64_t wait_ns = 0;
        hd_poll_locked(h, h->clock(h->ctx), &wait_ns);
        if (h->stop) break;
        if (wait_ns == 0) {
            pthread_cond_wait(&h->cv, &h->mu);
        } else {
            struct timespec abs;
            clock_gettime(CLOCK_MONOTONIC, &abs);
            uint64_t ns = (uint64_t)abs.tv_nsec + wait_ns;
            abs.tv_sec += (time_t)(ns / 1000000000ull);
            abs.tv_nsec = (long)(ns % 1000000000ull);
            pthread_cond_timedwait(&h->cv, &h->mu, &abs);
        }
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

int dt_hold_start_watchdog(dt_hold *h, char *err, size_t err_len) {
    pthread_mutex_lock(&h->mu);
    int ok = 1;
    if (!h->thread_started) {
        h->stop = 0;
        int rc = pthread_create(&h->thread, NULL, hd_watchdog, h);
        if (rc == 0)
            h->thread_started = 1;
        else
            ok = hd_fail(err, err_len, "cannot start the hold watchdog thread: %s",
                         strerror(rc));
    }
    pthread_mutex_unlock(&h->mu);
    return ok;
}

void dt_hold_destroy(dt_hold *h) {
    dt_hold_cancel(h);
    pthread_mutex_lock(&h->mu);
    int joined = h->thread_started;
    h->stop = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    if (joined) pthread_join(h->thread, NULL);
    h->thread_started = 0;
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
}

int dt_hold_arm(dt_hold *h, const void *stream, uint32_t timeout_ms, char *err, size_t err_len) {
    pthread_mutex_lock(&h->mu);
    int ok;
    if (h->state == DT_HOLD_ARMED || h->state == DT_HOLD_ENGAGED) {
        ok = hd_fail(err, err_len,
                     "nested hold: a hold is already %s (hold called twice without the "
                     "region's end)",
                     dt_hold_state_name(h->state));
    } else if (h->state != DT_HOLD_IDLE) {
        ok = hd_fail(err, err_len,
                     "hold refused: the previous hold (%s) was not finished by its region's "
                     "end",
                     dt_hold_state_name(h->state));
    } else if (timeout_ms == 0 || timeout_ms > DT_HOLD_MAX_TIMEOUT_MS) {
        ok = hd_fail(err, err_len, "hold timeout %" PRIu32 " ms outside 1..%u", timeout_ms,
                     DT_HOLD_MAX_TIMEOUT_MS);
    } else {
        h->state = DT_HOLD_ARMED;
        h->stream = stream;
        h->timeout_ms = timeout_ms;
        h->engaged_ns = h->released_ns = 0;
        ok = 1;
    }
    pthread_mutex_unlock(&h->mu);
    return ok;
}

int dt_hold_armed(dt_hold *h) {
    pthread_mutex_lock(&h->mu);
    int armed = h->state == DT_HOLD_ARMED;
    pthread_mutex_unlock(&h->mu);
    return armed;
}

int dt_hold_engage(dt_hold *h, const void *stream, uint32_t *wait_value, char *err,
                   size_t err_len) {
    pthread_mutex_lock(&h->mu);
    int ok = 1;
    if (h->state != DT_HOLD_ARMED) {
        ok = hd_fail(err, err_len, "engage without an armed hold (state %s)",
                     dt_hold_state_name(h->state));
    } else if (h->stream != stream) {
        ok = hd_fail(err, err_len,
                     "the hold was asked for stream %p but the region is on stream %p",
                     h->stream, stream);
        h->state = DT_HOLD_IDLE;
    } else {
        h->seq++;
        if (h->seq == 0) h->seq = 1; /* 0 is the flag's initial value */
        *wait_value = h->seq;
        h->engaged_ns = h->clock(h->ctx);
        h->state = DT_HOLD_ENGAGED;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->mu);
    return ok;
}

int dt_hold_release(dt_hold *h, int early, char *err, size_t err_len) {
    pthread_mutex_lock(&h->mu);
    int ok = 1;
    switch (h->state) {
    case DT_HOLD_ENGAGED:
        h->write(h->ctx, h->seq);
        h->released_ns = h->clock(h->ctx);
        h->state = early ? DT_HOLD_RELEASED_EARLY : DT_HOLD_RELEASED;
        pthread_cond_broadcast(&h->cv);
        break;
    case DT_HOLD_RELEASED:
    case DT_HOLD_RELEASED_EARLY: break;
    case DT_HOLD_TIMED_OUT: ok = hd_timeout_reason(h, err, err_len); break;
    case DT_HOLD_IDLE:
    case DT_HOLD_ARMED:
        ok = hd_fail(err, err_len, "release without hold: no held region is open (state %s)",
                     dt_hold_state_name(h->state));
        break;
    }
    pthread_mutex_unlock(&h->mu);
    return ok;
}

void dt_hold_cancel(dt_hold *h) {
    pthread_mutex_lock(&h->mu);
    if (h->state == DT_HOLD_ENGAGED) {
        h->write(h->ctx, h->seq);
        h->released_ns = h->clock(h->ctx);
    }
    h->state = DT_HOLD_IDLE;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

int dt_hold_finish(dt_hold *h, dt_hold_outcome *out, char *err, size_t err_len) {
    pthread_mutex_lock(&h->mu);
    memset(out, 0, sizeof *out);
    int ok = 1;
    dt_hold_state s = h->state;
    if (s == DT_HOLD_ENGAGED) {
        /* Never leave the stream blocked, but the window was not closed properly. */
        h->write(h->ctx, h->seq);
        h->released_ns = h->clock(h->ctx);
        ok = hd_fail(err, err_len, "hold finished before release: the end event was not "
                                   "queued behind the hold");
    } else if (s == DT_HOLD_TIMED_OUT) {
        ok = hd_timeout_reason(h, err, err_len);
    }
    if (s == DT_HOLD_ENGAGED || s == DT_HOLD_RELEASED || s == DT_HOLD_RELEASED_EARLY ||
        s == DT_HOLD_TIMED_OUT) {
        out->engaged = 1;
        out->timeout_ms = h->timeout_ms;
        out->queued_ns = h->released_ns > h->engaged_ns ? h->released_ns - h->engaged_ns : 0;
    }
    out->held = ok && s == DT_HOLD_RELEASED;
    out->early = s == DT_HOLD_RELEASED_EARLY;
    h->state = DT_HOLD_IDLE;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return ok;
}

dt_hold_state dt_hold_get_state(dt_hold *h) {
    pthread_mutex_lock(&h->mu);
    dt_hold_state s = h->state;
    pthread_mutex_unlock(&h->mu);
    return s;
}
