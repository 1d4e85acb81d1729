/* dt_cpu_pool.c — the work pool of dt_cpu_pool.h: a ticket word (generation << 32 | next
 * item, or CLOSED between jobs) that the caller and the awake workers advance by
 * compare-and-swap, a done counter the caller waits on for the items workers claimed, and
 * a futex word workers sleep on after a short spin. Compiled once (no -march).
 *
 * Why a claim cannot run an item of the wrong job: a worker reads the ticket, then the
 * job's fields, then claims with a CAS that expects the ticket it read. The caller closes
 * the ticket when its job is complete and only then writes the next job's fields, so a CAS
 * that succeeds found the ticket unchanged, i.e. the job it read the fields of still open
 * with that item unclaimed. All atomics are sequentially consistent (a few per item). */
#define _GNU_SOURCE
#include "dt_cpu_pool.h"

#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define POOL_CLOSED 0xffffffffu
#define POOL_SPIN_NS 1000000 /* a worker spins this long after its last job, then sleeps */
#define POOL_YIELD_AFTER_NS 20000 /* then yields its core at every check (not with spin) */
static int g_idle_spin; /* DUALTIME_CPU_POOL_WAIT=spin: v3's idle worker, pause only */

typedef void (*pool_fn)(void *, int64_t, int);

static _Atomic uint64_t g_ticket = POOL_CLOSED; /* gen << 32 | next item */
static _Atomic uint32_t g_seq;                  /* futex word: +1 per job */
static _Atomic int g_sleepers;
static _Atomic int64_t g_done; /* items finished by workers in the current job */
static _Atomic(pool_fn) g_fn;
static _Atomic(void *) g_ctx;
static _Atomic int64_t g_nitems;
static _Atomic int g_allowed; /* workers (slots 1..) that may take part in the job */
static int g_nworkers;        /* started; under g_lock */
static uint32_t g_gen;        /* under g_lock */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int t_in_item;

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Claims and runs items of the open job while there are any; slot > 0 only if allowed.
 * Returns the number run. */
static int64_t run_items(int slot) {
    int64_t ran = 0;
    for (;;) {
        uint64_t t = atomic_load(&g_ticket);
        const uint32_t idx = (uint32_t)t;
        if (idx == POOL_CLOSED) return ran;
        const pool_fn fn = atomic_load(&g_fn);
        void *ctx = atomic_load(&g_ctx);
        if ((int64_t)idx >= atomic_load(&g_nitems) || (slot > 0 && slot > atomic_load(&g_allowed)))
            return ran;
        if (!atomic_compare_exchange_weak(&g_ticket, &t, t + 1)) continue;
        t_in_item = 1;
        fn(ctx, (int64_t)idx, slot);
        t_in_item = 0;
        ran++;
        if (slot > 0) atomic_fetch_add(&g_done, 1);
    }
}

static int64_t mono_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void *worker_main(void *arg) {
    const int slot = (int)(intptr_t)arg;
    uint32_t seen = atomic_load(&g_seq);
    for (;;) {
        run_items(slot);
        /* spin (a batch of back-to-back calls finds the worker awake), then sleep */
        const int64_t t0 = mono_ns();
        for (int spins = 0;;) {
            const uint32_t s = atomic_load(&g_seq);
            if (s != seen) {
                seen = s;
                break;
            }
            cpu_relax();
            if ((++spins & 255) != 0) continue;
            const int64_t el = mono_ns() - t0;
            if (el < POOL_SPIN_NS) {
                /* past the first POOL_YIELD_AFTER_NS, give the core to whatever else is
                 * runnable on it (the caller itself, when the scheduler put both on one) */
                if (!g_idle_spin && el > POOL_YIELD_AFTER_NS) sched_yield();
                continue;
            }
            atomic_fetch_add(&g_sleepers, 1);
            if (atomic_load(&g_seq) == seen)
                syscall(SYS_futex, (uint32_t *)&g_seq, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
            atomic_fetch_sub(&g_sleepers, 1);
            spins = 0;
        }
    }
    return NULL;
}

/* Starts workers up to want (slots 1..want); fewer if pthread_create fails. Under g_lock. */
static void start_workers(int want) {
    if (want > DT_CPU_POOL_MAX - 1) want = DT_CPU_POOL_MAX - 1;
    while (g_nworkers < want) {
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        const int rc = pthread_create(&th, &at, worker_main, (void *)(intptr_t)(g_nworkers + 1));
        pthread_attr_destroy(&at);
        if (rc != 0) break;
        g_nworkers++;
    }
}

static int g_use_omp; /* DUALTIME_CPU_POOL=omp */
static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;

static int g_rows_static; /* DUALTIME_CPU_ROWS=static */

static void read_env(void) {
    const char *v = getenv("DUALTIME_CPU_POOL");
    g_use_omp = v && strcmp(v, "omp") == 0;
    const char *w = getenv("DUALTIME_CPU_POOL_WAIT");
    g_idle_spin = w && strcmp(w, "spin") == 0;
    const char *r = getenv("DUALTIME_CPU_ROWS");
    g_rows_static = r && strcmp(r, "static") == 0;
}

int dt_cpu_pool_idle_spin(void) {
    pthread_once(&g_env_once, read_env);
    return g_idle_spin;
}

int dt_cpu_pool_use_omp(int use_omp) {
    pthread_once(&g_env_once, read_env);
    const int was = g_use_omp;
    if (use_omp >= 0) g_use_omp = use_omp != 0;
    return was;
}

/* v1's threading, kept selectable (DUALTIME_CPU_POOL=omp): one OpenMP region per job,
 * items in order over the team (one item per thread when nitems == threads, as the
 * static schedule of the row kernels' v2 split), slot = OpenMP thread number. */
static void run_omp(int threads, int64_t nitems, void (*fn)(void *, int64_t, int), void *ctx) {
#pragma omp parallel for schedule(static, 1) num_threads(threads)
    for (int64_t i = 0; i < nitems; i++) fn(ctx, i, omp_get_thread_num());
}

void dt_cpu_pool_run(int threads, int64_t nitems, void (*fn)(void *, int64_t, int),
                     void *ctx) {
    pthread_once(&g_env_once, read_env);
    if (threads > DT_CPU_POOL_MAX) threads = DT_CPU_POOL_MAX;
    if (g_use_omp && threads > 1 && nitems > 1 && !t_in_item) {
        run_omp(threads, nitems, fn, ctx);
        return;
    }
    if (threads <= 1 || nitems <= 1 || nitems >= (int64_t)POOL_CLOSED || t_in_item ||
        pthread_mutex_trylock(&g_lock) != 0) {
        for (int64_t i = 0; i < nitems; i++) fn(ctx, i, 0);
        return;
    }
    start_workers(threads - 1);
    const int allowed = threads - 1 < g_nworkers ? threads - 1 : g_nworkers;
    atomic_store(&g_done, 0);
    atomic_store(&g_fn, fn);
    atomic_store(&g_ctx, ctx);
    atomic_store(&g_nitems, nitems);
    atomic_store(&g_allowed, allowed);
    const uint32_t gen = ++g_gen;
    atomic_store(&g_ticket, (uint64_t)gen << 32); /* open: item 0 next */
    atomic_fetch_add(&g_seq, 1);
    if (atomic_load(&g_sleepers) > 0)
        syscall(SYS_futex, (uint32_t *)&g_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    const int64_t mine = run_items(0);
    for (int spins = 0; atomic_load(&g_done) + mine < nitems;) {
        if (++spins < 1000) {
            cpu_relax();
        } else {
            sched_yield();
            spins = 0;
        }
    }
    atomic_store(&g_ticket, ((uint64_t)gen << 32) | POOL_CLOSED);
    pthread_mutex_unlock(&g_lock);
}

/* ---- row kernels -------------------------------------------------------------------
 * static (v3, DUALTIME_CPU_ROWS=static): one contiguous range per thread, one pool item
 * each; a thread that starts late (or is slower) holds the job for its whole range, and a
 * range nobody has claimed when the caller is done is run by the caller alone.
 * steal (the default): the same ranges, each a (next, end) word that its owner advances
 * from the front a chunk of rows at a time; a thread whose own range is empty takes chunks
 * from the back of the range with the most rows left. When both threads run alike each
 * still does its own range (the same rows on the same core every call); when one is late
 * or slow the other takes over the rest of its range chunk by chunk, so the job waits at
 * most for the chunk that thread is running. */
typedef struct rows_range {
    _Alignas(64) _Atomic uint64_t r; /* next << 32 | end; its own cache line */
} rows_range;

typedef struct rows_job {
    void (*fn)(const void *, int64_t, int64_t);
    const void *args;
    int64_t m, per;
    int64_t chunk;       /* steal: rows a claim takes */
    int nparts;          /* steal: ranges */
    rows_range *ranges;  /* steal: nparts of them */
} rows_job;

static void rows_item(void *ctx, int64_t item, int slot) {
    (void)slot;
    const rows_job *j = ctx;
    const int64_t i0 = item * j->per, i1 = i0 + j->per < j->m ? i0 + j->per : j->m;
    j->fn(j->args, i0, i1);
}

/* Item `item` of a steal job: range `item` from the front, then every range from the back. */
static void rows_steal_item(void *ctx, int64_t item, int slot) {
    (void)slot;
    const rows_job *j = ctx;
    const uint64_t chunk = (uint64_t)j->chunk;
    _Atomic uint64_t *own = &j->ranges[item].r;
    for (uint64_t r = atomic_load(own);;) {
        const uint64_t next = r >> 32, end = r & 0xffffffffu;
        if (next >= end) break;
        const uint64_t take = end - next < chunk ? end - next : chunk;
        if (!atomic_compare_exchange_weak(own, &r, ((next + take) << 32) | end)) continue;
        j->fn(j->args, (int64_t)next, (int64_t)(next + take));
        r = atomic_load(own);
    }
    for (;;) {
        int victim = -1;
        uint64_t most = 0, r = 0;
        for (int p = 0; p < j->nparts; p++) {
            const uint64_t v = atomic_load(&j->ranges[p].r);
            const uint64_t next = v >> 32, end = v & 0xffffffffu;
            if (next < end && end - next > most) most = end - next, victim = p, r = v;
        }
        if (victim < 0) return;
        const uint64_t next = r >> 32, end = r & 0xffffffffu;
        const uint64_t take = end - next < chunk ? end - next : chunk;
        if (atomic_compare_exchange_strong(&j->ranges[victim].r, &r, (next << 32) | (end - take)))
            j->fn(j->args, (int64_t)(end - take), (int64_t)end);
    }
}

int dt_cpu_pool_rows_static(int use_static) {
    pthread_once(&g_env_once, read_env);
    const int was = g_rows_static;
    if (use_static >= 0) g_rows_static = use_static != 0;
    return was;
}

void dt_cpu_pool_rows(int threads, int64_t m, int64_t n,
                      void (*fn)(const void *, int64_t, int64_t), const void *args) {
    if (threads <= 1 || m <= 1) {
        fn(args, 0, m);
        return;
    }
    if (threads > DT_CPU_POOL_MAX) threads = DT_CPU_POOL_MAX;
    const int64_t per = (m + threads - 1) / threads;
    rows_job j = {fn, args, m, per, 0, (int)((m + per - 1) / per), NULL};
    if (dt_cpu_pool_rows_static(-1) || dt_cpu_pool_use_omp(-1) || m >= ((int64_t)1 << 31)) {
        dt_cpu_pool_run(threads, j.nparts, rows_item, &j);
        return;
    }
    rows_range ranges[DT_CPU_POOL_MAX];
    for (int p = 0; p < j.nparts; p++) {
        const uint64_t i0 = (uint64_t)p * (uint64_t)per;
        const uint64_t i1 = i0 + (uint64_t)per < (uint64_t)m ? i0 + (uint64_t)per : (uint64_t)m;
        atomic_init(&ranges[p].r, (i0 << 32) | i1);
    }
    const int64_t cols = n > 0 ? n : 1;
    j.chunk = DT_CPU_ROWS_CHUNK_ELEMS / cols > 0 ? DT_CPU_ROWS_CHUNK_ELEMS / cols : 1;
    j.ranges = ranges;
    dt_cpu_pool_run(threads, j.nparts, rows_steal_item, &j);
}

int dt_cpu_pool_workers(void) {
    pthread_mutex_lock(&g_lock);
    const int n = g_nworkers;
    pthread_mutex_unlock(&g_lock);
    return n;
}
