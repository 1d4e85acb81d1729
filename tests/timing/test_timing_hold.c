/* test_timing_hold.c — host-only test of the hold and its watchdog
 * (src/timing/dt_timing_hold.c), the part of held windows that needs no GPU. The flag
 * is a plain word in memory and "the stream" is the cyclic GEQ test the GPU applies
 * ((int32_t)(flag - v) >= 0). With a fake clock: a hold released in time passes and is
 * reported held with its queue time; one not released is released by the watchdog
 * step exactly at its deadline and fails closed with the reason; nested hold, release
 * without hold, a stream mismatch and bad timeouts are refused; end before release
 * (finish without release) never leaves the stream blocked and fails; early release is
 * not "held"; cancel; sequence wrap. With the real watchdog thread and clock: a
 * "synchronizing call" (the main thread blocked until the simulated stream passes the
 * flag) is unblocked within the timeout, and a hold released in time is never fired on
 * later. No GPU. Run: ctest -R timing_hold (exit 1 on any failure). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "timing/dt_timing_hold.h"
#include "../dt_check.h"

/* ---- fake clock and flag ---------------------------------------------------------- */

typedef struct fake {
    uint64_t now_ns;         /* the fake clock */
    volatile uint32_t flag;  /* the host-written flag */
    int writes;              /* flag writes */
    int real_clock;          /* 1: CLOCK_MONOTONIC instead of now_ns */
} fake;

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t fake_clock(void *ctx) {
    fake *f = ctx;
    return f->real_clock ? mono_ns() : f->now_ns;
}

static void fake_write(void *ctx, uint32_t v) {
    fake *f = ctx;
    __atomic_store_n(&f->flag, v, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&f->writes, 1, __ATOMIC_SEQ_CST);
}

/* What the GPU's wait decides: may work behind the wait for v run? */
static int stream_may_run(const fake *f, uint32_t v) {
    return (int32_t)(__atomic_load_n(&f->flag, __ATOMIC_SEQ_CST) - v) >= 0;
}

#define MS 1000000ull

static void setup(dt_hold *h, fake *f) {
    memset(f, 0, sizeof *f);
    f->now_ns = 1000 * MS;
    CHECK(dt_hold_init(h, fake_clock, fake_write, f) == 1, "init");
}

/* ---- fake-clock cases ------------------------------------------------------------- */

static void test_released_in_time(void) {
    dt_hold h;
    fake f;
    setup(&h, &f);
    char err[512] = "";
    int s = 7; /* any object's address serves as the stream */
    CHECK(dt_hold_arm(&h, &s, 100, err, sizeof err) == 1, "arm: %s", err);
    CHECK(dt_hold_armed(&h) == 1, "armed");
    uint32_t v = 0;
    CHECK(dt_hold_engage(&h, &s, &v, err, sizeof err) == 1 && v == 1, "engage v=%u", v);
    CHECK(!stream_may_run(&f, v), "the stream must wait once engaged (flag %u, v %u)", f.flag, v);
    f.now_ns += 5 * MS;
    uint64_t wait_ns = 0;
    CHECK(dt_hold_poll(&h, f.now_ns, &wait_ns) == 0, "no fire before the deadline");
    CHECK(wait_ns == 95 * MS, "watchdog waits the rest: %llu ns", (unsigned long long)wait_ns);
    CHECK(!stream_may_run(&f, v) && f.writes == 0, "poll must not write early");
    CHECK(dt_hold_release(&h, 0, err, sizeof err) == 1, "release: %s", err);
    CHECK(stream_may_run(&f, v) && f.writes == 1, "release writes the flag once");
    f.now_ns += 500 * MS;
    CHECK(dt_hold_poll(&h, f.now_ns, &wait_ns) == 0 && wait_ns == 0,
          "a released hold never fires later");
    dt_hold_outcome o;
    CHECK(dt_hold_finish(&h, &o, err, sizeof err) == 1, "finish: %s", err);
    CHECK(o.engaged && o.held && !o.early && o.timeout_ms == 100, "outcome held");
    CHECK(o.queued_ns == 5 * MS, "queued %llu ns", (unsigned long long)o.queued_ns);
    CHECK(dt_hold_get_state(&h) == DT_HOLD_IDLE, "idle after finish");
    dt_hold_destroy(&h);
}

static void test_not_released_fails_closed(void) {
    dt_hold h;
    fake f;
    setup(&h, &f);
    char err[512] = "";
    int s;
    uint32_t v = 0;
    CHECK(dt_hold_arm(&h, &s, 100, err, sizeof err) && dt_hold_engage(&h, &s, &v, err, sizeof err),
          "arm+engage: %s", err);
    f.now_ns += 100 * MS - 1;
    CHECK(dt_hold_poll(&h, f.now_ns, NULL) == 0 && !stream_may_run(&f, v), "1 ns before: held");
    f.now_ns += 1;
    CHECK(dt_hold_poll(&h, f.now_ns, NULL) == 1, "fires at the deadline");
    CHECK(stream_may_run(&f, v), "the watchdog released the stream (flag %u)", f.flag);
    CHECK(dt_hold_get_state(&h) == DT_HOLD_TIMED_OUT, "timed out");
    CHECK(dt_hold_poll(&h, f.now_ns + MS, NULL) == 0 && f.writes == 1, "fires once");
    /* the region's end: release then finish, both fail with the reason */
    CHECK(dt_hold_release(&h, 0, err, sizeof err) == 0, "release after timeout must fail");
    CHECK(strstr(err, "hold timed out after 100 ms: the calls synchronized on the host") != NULL,
          "reason: %s", err);
    dt_hold_outcome o;
    err[0] = '\0';
    CHECK(dt_hold_finish(&h, &o, err, sizeof err) == 0, "finish after timeout must fail");
    CHECK(strstr(err, "hold timed out after 100 ms") != NULL, "finish reason: %s", err);
    CHECK(o.engaged && !o.held && o.queued_ns == 100 * MS, "outcome: not held, 100 ms");
    CHECK(dt_hold_get_state(&h) == DT_HOLD_IDLE, "idle after a failed finish");
    /* the next hold works, with the next value */
    uint32_t v2 = 0;
    CHECK(dt_hold_arm(&h, &s, 100, err, sizeof err) && dt_hold_engage(&h, &s, &v2, err, sizeof err),
          "next hold: %s", err);
    CHECK(v2 == v + 1 && !stream_may_run(&f, v2), "next hold blocks again (v %u)", v2);
    CHECK(dt_hold_release(&h, 0, err, sizeof err) && stream_may_run(&f, v2), "next release");
    CHECK(dt_hold_finish(&h, &o, err, sizeof err) && o.held, "next finish held");
    dt_hold_destroy(&h);
}

static void test_refusals(void) {
    dt_hold h;
    fake f;
    setup(&h, &f);
    char err[512] = "";
    int s, other;
    uint32_t v = 0;
    /* release without hold: idle and armed */
    CHECK(dt_hold_release(&h, 0, err, sizeof err) == 0 && strstr(err, "release without hold"),
          "idle release: %s", err);
    CHECK(dt_hold_release(&h, 1, err, sizeof err) == 0, "idle early release");
    CHECK(dt_hold_arm(&h, &s, 50, err, sizeof err), "arm");
    CHECK(dt_hold_release(&h, 0, err, sizeof err) == 0 && strstr(err, "release without hold"),
          "armed release: %s", err);
    /* nested hold: armed and engaged; the first hold is untouched */
    CHECK(dt_hold_arm(&h, &s, 50, err, sizeof err) == 0 && strstr(err, "nested hold"),
          "nested (armed): %s", err);
    CHECK(dt_hold_engage(&h, &s, &v, err, sizeof err), "engage after nested");
    CHECK(dt_hold_arm(&h, &s, 50, err, sizeof err) == 0 && strstr(err, "nested hold"),
          "nested (engaged): %s", err);
    CHECK(dt_hold_get_state(&h) == DT_HOLD_ENGAGED && f.writes == 0, "still engaged, unwritten");
    CHECK(dt_hold_release(&h, 0, err, sizeof err), "release");
    dt_hold_outcome o;
    CHECK(dt_hold_finish(&h, &o, err, sizeof err) && o.held, "finish");
    /* engage with nothing armed, or on another stream */
    CHECK(dt_hold_engage(&h, &s, &v, err, sizeof err) == 0 && strstr(err, "without an armed"),
          "engage unarmed: %s", err);
    CHECK(dt_hold_arm(&h, &s, 50, err, sizeof err), "arm for s");
    CHECK(dt_hold_engage(&h, &other, &v, err, sizeof err) == 0 && strstr(err, "stream"),
          "stream mismatch: %s", err);
    CHECK(dt_hold_get_state(&h) == DT_HOLD_IDLE, "mismatch drops the hold");
    /* timeouts */
    CHECK(dt_hold_arm(&h, &s, 0, err, sizeof err) == 0 && strstr(err, "timeout"), "0 ms");
    CHECK(dt_hold_arm(&h, &s, DT_HOLD_MAX_TIMEOUT_MS + 1, err, sizeof err) == 0, "too long");
    CHECK(dt_hold_get_state(&h) == DT_HOLD_IDLE, "bad timeouts leave it idle");
    dt_hold_destroy(&h);
}

static void test_end_before_release(void) {
    dt_hold h;
    fake f;
    setup(&h, &f);
    char err[512] = "";
    int s;
    uint32_t v = 0;
    dt_hold_outcome o;
    /* finish without release: the flag is written (never a blocked stream), and it fails */
    CHECK(dt_hold_arm(&h, &s, 100, err, sizeof err) && dt_hold_engage(&h, &s, &v, err, sizeof err),
          "engage");
    f.now_ns += 3 * MS;
    CHECK(dt_hold_finish(&h, &o, err, sizeof err) == 0 && strstr(err, "before release"),
          "finish before release: %s", err);
    CHECK(stream_may_run(&f, v), "finish released the stream");
    CHECK(!o.held && o.engaged && o.queued_ns == 3 * MS, "outcome");
    /* the end path: end releases itself (release(early=0)) then finishes: held */
    CHECK(dt_hold_arm(&h, &s, 100, err, sizeof err) && dt_hold_engage(&h, &s, &v, err, sizeof err),
          "engage 2");
    CHECK(dt_hold_release(&h, 0, err, sizeof err) && dt_hold_finish(&h, &o, err, sizeof err),
          "end path: %s", err);
    CHECK(o.held && !o.early, "end path is held");
    /* early release, then end's own release: fine, but not held */
    CHECK(dt_hold_arm(&h, &s, 100, err, sizeof err) && dt_hold_engage(&h, &s, &v, err, sizeof err),
          "engage 3");
    CHECK(dt_hold_release(&h, 1, err, sizeof err) && stream_may_run(&f, v), "early release");
    CHECK(dt_hold_release(&h, 0, err, sizeof err), "end's release after an early one");
    CHECK(dt_hold_finish(&h, &o, err, sizeof err) && !o.held && o.early, "early: not held");
    /* cancel: armed -> idle without a write; engaged -> flag written */
    int writes = f.writes;
    CHECK(dt_hold_arm(&h, &s, 100, err, sizeof err), "arm 4");
    dt_hold_cancel(&h);
    CHECK(dt_hold_get_state(&h) == DT_HOLD_IDLE && f.writes == writes, "cancel armed");
    CHECK(dt_hold_arm(&h, &s, 100, err, sizeof err) && dt_hold_engage(&h, &s, &v, err, sizeof err),
          "engage 5");
    dt_hold_cancel(&h);
    CHECK(stream_may_run(&f, v) && dt_hold_get_state(&h) == DT_HOLD_IDLE, "cancel engaged");
    /* finish with no hold at all: fine, nothing held */
    CHECK(dt_hold_finish(&h, &o, err, sizeof err) && !o.engaged && !o.held, "finish idle");
    dt_hold_destroy(&h);
}

static void test_wrap(void) {
    dt_hold h;
    fake f;
    setup(&h, &f);
    char err[512] = "";
    int s;
    uint32_t v = 0;
    dt_hold_outcome o;
    h.seq = UINT32_MAX - 1;
    f.flag = UINT32_MAX - 1; /* as the previous release left it */
    for (int i = 0; i < 3; i++) {
        CHECK(dt_hold_arm(&h, &s, 10, err, sizeof err) && dt_hold_engage(&h, &s, &v, err, sizeof err),
              "engage %d", i);
        CHECK(v != 0 && !stream_may_run(&f, v), "wrap %d: v=%u flag=%u blocks", i, v, f.flag);
        CHECK(dt_hold_release(&h, 0, err, sizeof err) && stream_may_run(&f, v), "wrap %d released", i);
        CHECK(dt_hold_finish(&h, &o, err, sizeof err) && o.held, "wrap %d finish", i);
    }
    dt_hold_destroy(&h);
}

/* ---- the real watchdog thread ------------------------------------------------------ */

typedef struct stream_sim {
    fake *f;
    uint32_t v;
    uint64_t ran_ns; /* when the simulated stream passed the wait */
} stream_sim;

/* The simulated GPU: waits (polling) until the flag lets it run. */
static void *stream_thread(void *arg) {
    stream_sim *ss = arg;
    while (!stream_may_run(ss->f, ss->v)) {
        struct timespec d = {0, 100000};
        nanosleep(&d, NULL);
    }
    ss->ran_ns = mono_ns();
    return NULL;
}

static void test_watchdog_thread(void) {
    dt_hold h;
    fake f;
    setup(&h, &f);
    f.real_clock = 1;
    char err[512] = "";
    int s;
    CHECK(dt_hold_start_watchdog(&h, err, sizeof err) == 1, "watchdog: %s", err);
    CHECK(dt_hold_start_watchdog(&h, err, sizeof err) == 1, "second start is a no-op");

    /* a planted synchronizing call: the host blocks until the stream has run */
    stream_sim ss = {.f = &f};
    CHECK(dt_hold_arm(&h, &s, 50, err, sizeof err) && dt_hold_engage(&h, &s, &ss.v, err, sizeof err),
          "engage: %s", err);
    uint64_t t0 = mono_ns();
    pthread_t th;
    CHECK(pthread_create(&th, NULL, stream_thread, &ss) == 0, "stream thread");
    pthread_join(th, NULL); /* "cuCtxSynchronize" inside the hold */
    double waited_ms = (double)(ss.ran_ns - t0) / 1e6;
    printf("watchdog: a synchronizing call inside a 50 ms hold returned after %.1f ms\n",
           waited_ms);
    CHECK(waited_ms >= 49.0 && waited_ms < 1000.0, "unblocked after %.1f ms (want 50..1000)",
          waited_ms);
    CHECK(dt_hold_get_state(&h) == DT_HOLD_TIMED_OUT, "state %s",
          dt_hold_state_name(dt_hold_get_state(&h)));
    dt_hold_outcome o;
    CHECK(dt_hold_release(&h, 0, err, sizeof err) == 0 && strstr(err, "hold timed out after 50 ms"),
          "end's release fails: %s", err);
    CHECK(dt_hold_finish(&h, &o, err, sizeof err) == 0 && !o.held, "finish fails closed");

    /* a hold released in time: no late firing, and the next hold gets a fresh deadline */
    uint32_t v = 0;
    CHECK(dt_hold_arm(&h, &s, 200, err, sizeof err) && dt_hold_engage(&h, &s, &v, err, sizeof err),
          "engage 2");
    struct timespec d = {0, 10 * 1000000};
    nanosleep(&d, NULL);
    CHECK(dt_hold_get_state(&h) == DT_HOLD_ENGAGED && !stream_may_run(&f, v), "held at 10 ms");
    CHECK(dt_hold_release(&h, 0, err, sizeof err) && dt_hold_finish(&h, &o, err, sizeof err),
          "release in time: %s", err);
    CHECK(o.held && o.queued_ns >= 10 * MS && o.queued_ns < 200 * MS, "queued %.1f ms",
          (double)o.queued_ns / 1e6);
    int writes = f.writes;
    CHECK(dt_hold_arm(&h, &s, 300, err, sizeof err) && dt_hold_engage(&h, &s, &v, err, sizeof err),
          "engage 3");
    struct timespec d2 = {0, 250 * 1000000}; /* past the previous hold's deadline */
    nanosleep(&d2, NULL);
    CHECK(dt_hold_get_state(&h) == DT_HOLD_ENGAGED && f.writes == writes && !stream_may_run(&f, v),
          "the watchdog kept the new deadline (state %s)",
          dt_hold_state_name(dt_hold_get_state(&h)));
    /* destroy with an engaged hold: released, thread joined */
    dt_hold_destroy(&h);
    CHECK(stream_may_run(&f, v), "destroy releases an engaged hold");
}

int main(void) {
    test_released_in_time();
    test_not_released_fails_closed();
    test_refusals();
    test_end_before_release();
    test_wrap();
    test_watchdog_thread();
    printf("test_timing_hold: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
