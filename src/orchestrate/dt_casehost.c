/* dt_casehost.c — a case-round's host side and the preparer (see dt_casehost.h). */
#define _GNU_SOURCE
#include "dt_casehost.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/dt_affinity.h"
#include "dt_hostpass.h"
#include "dt_memcheck.h"

/* ---- making one ------------------------------------------------------------------------ */

/* The FP64 reference of input set `set` (a dt_cheat_ref_fn): from an earlier round's file
 * when one is trusted, else computed and, when a later round makes this set again, written
 * for it. A file not trusted is recomputed and said in the notes. */
typedef struct ref_ctx {
    const dt_casehost_cfg *cfg;
    dt_casehost *h;
} ref_ctx;

static dt_status set_ref(void *ctx, int set, const dt_case_layout *L, const uint8_t *pristine,
                         dt_oracle_ref *ref, dt_err *err) {
    ref_ctx *x = ctx;
    int next = x->h->round + 1;
    int again = next < x->cfg->rounds && (set == 0 || dt_cheat_round_checked(L->total_bytes, next));
    dt_refcache_outcome o;
    dt_status st = dt_refcache_get(x->cfg->refcache, x->h->spec->id, set, L, pristine, again,
                                   again, ref, &o, err);
    char line[720];
    if (o.rejected) {
        snprintf(line, sizeof line, "FP64 reference cache: %s input set %d round %d: %s; "
                 "recomputed", x->h->spec->id, set, x->h->round, o.why);
        dt_strv_push(&x->h->notes, line);
    } else if (st == DT_OK && again && !o.loaded && !o.saved && o.why[0]) {
        snprintf(line, sizeof line, "FP64 reference cache: %s input set %d not kept (%s); "
                 "later rounds recompute it", x->h->spec->id, set, o.why);
        dt_strv_push(&x->h->notes, line);
    }
    return st;
}

void dt_casehost_hash_inputs(dt_casehost *h) {
    h->n_inputs = 0;
    for (int b = 0; b < h->L.nbuffers; b++)
        if (!h->L.buf[b].is_output) h->input_buf[h->n_inputs++] = b;
    dt_hostpass_sha256_buffers(&h->L, h->pristine, h->input_buf, h->n_inputs, h->input_hex);
    h->want_sha = 1;
}

static void fail(dt_casehost *h, const char *stage, const char *msg) {
    h->fail_stage = stage;
    snprintf(h->fail_msg, sizeof h->fail_msg, "%s", msg);
}

void dt_casehost_make(const dt_casehost_cfg *cfg, const dt_case_spec *spec, int round,
                      int want_sha, int nshm, dt_casehost_phase_fn phase, void *ctx,
                      dt_casehost *h) {
    memset(h, 0, sizeof *h);
    h->spec = spec;
    h->round = round;
    h->want_sha = want_sha;
    dt_layout_make_typed(&h->L, spec->op, spec->m, spec->n, spec->k, spec->views, spec->dtype);
    h->L.inputs = (dt_inputs)cfg->inputs;
    if (phase) phase(ctx, "inputs");
    /* a failed allocation fails the case (its bytes named), never the run */
    h->pristine = malloc((size_t)h->L.total_bytes);
    if (!h->pristine) {
        char msg[128];
        snprintf(msg, sizeof msg, "could not allocate %lld bytes for the pristine inputs",
                 (long long)h->L.total_bytes);
        fail(h, "inputs", msg);
        return;
    }
    dt_arena_fill(&h->L, h->pristine, cfg->seed);
    if (want_sha) dt_casehost_hash_inputs(h);
    if (phase) phase(ctx, "FP64 reference");
    ref_ctx rx = {cfg, h};
    dt_err e;
    if (set_ref(&rx, 0, &h->L, h->pristine, &h->ref, &e) != DT_OK) {
        fail(h, "oracle", e.msg);
        return;
    }
    if (dt_cheat_round_checked(h->L.total_bytes, round)) {
        if (phase) phase(ctx, "input sets");
        if (dt_cheat_case_init_with(&h->cheat, &h->L, cfg->seed, h->pristine, &h->ref, set_ref,
                                    &rx, &e) != DT_OK)
            fail(h, "input sets", e.msg);
        if (h->fail_stage) return;
    }
    if (nshm > DT_CASEHOST_MAX_SHM) nshm = DT_CASEHOST_MAX_SHM;
    if (nshm > 0 && phase) phase(ctx, "arena copy");
    for (int i = 0; i < nshm; i++) {
        if (dt_shm_create(&h->shm[i], h->L.total_bytes, &e) != DT_OK) break;
        dt_hostpass_copy(h->shm[i].base, h->pristine, (size_t)h->L.total_bytes);
        h->nshm++;
    }
}

void dt_casehost_free(dt_casehost *h) {
    for (int i = 0; i < h->nshm; i++) dt_shm_destroy(&h->shm[i]); /* those not taken */
    dt_cheat_case_free(&h->cheat);
    dt_oracle_free(&h->ref);
    free(h->pristine);
    dt_strv_free(&h->notes);
    memset(h, 0, sizeof *h);
}

/* ---- the preparer ------------------------------------------------------------------------ */

enum { JOB_MAKE = 1, JOB_FREE = 2 };
#define QUEUE_LEN 16

typedef struct job {
    int kind;
    dt_casehost *h;        /* MAKE: made into it; FREE: freed */
    const dt_case_spec *spec;
    int round, want_sha, nshm_make;
    int64_t bytes;         /* MAKE: host bytes (dt_case_bytes_of), for the memory rule */
    int done;              /* MAKE: made */
    dt_shm *shm;           /* FREE: destroyed, then freed */
    int nshm;
} job;

/* A ring of jobs. */
typedef struct ring {
    job q[QUEUE_LEN];
    int head, count;
} ring;

struct dt_casehost_pool {
    dt_casehost_cfg cfg;
    cpu_set_t cpus;
    int ncpus;
    cpu_set_t wide;        /* usable CPUs (nwide 0: none) */
    int nwide;
    pid_t tids[CPU_SETSIZE]; /* the preparer's OpenMP team (thread ids), ntids of them */
    int ntids;
    int widened;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* a job queued, a job done, stop */
    ring makes;            /* made ahead, in the order they will be taken; the first
                              `started` of them are done or being made */
    int started;
    ring frees;            /* run before any make not yet started */
    int busy;              /* the kind of the job being run, 0 when idle */
    int stop;
    int abandoned;         /* dt_casehost_pool_abandon left it: the thread frees it all */
};

static job *at(ring *r, int i) { return &r->q[(r->head + i) % QUEUE_LEN]; }

/* Runs j (p NULL: a FREE in line on the caller's thread). */
static void run_job(dt_casehost_pool *p, job *j) {
    if (j->kind == JOB_MAKE) {
        dt_casehost_make(&p->cfg, j->spec, j->round, j->want_sha, j->nshm_make, NULL, NULL,
                         j->h);
        j->h->ahead = 1;
    } else {
        if (j->h) {
            dt_casehost_free(j->h);
            free(j->h);
        }
        for (int i = 0; i < j->nshm; i++) dt_shm_destroy(&j->shm[i]);
        free(j->shm);
    }
}

/* Pins every thread of the preparer's team to set (the team's threads are reused by its
 * later parallel regions of the same size: libgomp keeps a pool per master thread). */
static void team_pin(dt_casehost_pool *p, const cpu_set_t *set) {
    for (int i = 0; i < p->ntids; i++) (void)sched_setaffinity(p->tids[i], sizeof *set, set);
}

static void *thread_main(void *arg) {
    dt_casehost_pool *p = arg;
    (void)pthread_setaffinity_np(pthread_self(), sizeof p->cpus, &p->cpus);
    /* this thread's OpenMP team: as many threads as usable CPUs when it may spread over
     * them (dt_casehost_pool_take), else the spare CPUs' count; pinned to the spare ones */
    int team = p->nwide > p->ncpus ? p->nwide : p->ncpus;
    omp_set_num_threads(team);
    pid_t tids[CPU_SETSIZE];
    int n = 0;
#pragma omp parallel
    {
#pragma omp critical(dt_casehost_tids)
        if (n < CPU_SETSIZE) tids[n++] = (pid_t)syscall(SYS_gettid);
    }
    pthread_mutex_lock(&p->mu);
    memcpy(p->tids, tids, (size_t)n * sizeof *tids);
    p->ntids = n;
    team_pin(p, &p->cpus);
    for (;;) {
        while (!p->frees.count && p->started == p->makes.count && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->frees.count) { /* frees first: they give memory back */
            job j = *at(&p->frees, 0);
            p->frees.head = (p->frees.head + 1) % QUEUE_LEN;
            p->frees.count--;
            p->busy = JOB_FREE;
            pthread_mutex_unlock(&p->mu);
            run_job(p, &j);
            pthread_mutex_lock(&p->mu);
            p->busy = 0;
            pthread_cond_broadcast(&p->cv);
            continue;
        }
        if (p->started < p->makes.count) {
            job j = *at(&p->makes, p->started); /* h is heap: the copy makes into it */
            p->started++;
            p->busy = JOB_MAKE;
            pthread_mutex_unlock(&p->mu);
            run_job(p, &j);
            pthread_mutex_lock(&p->mu);
            p->busy = 0;
            for (int i = 0; i < p->makes.count; i++) /* it may have moved in the ring */
                if (at(&p->makes, i)->h == j.h) at(&p->makes, i)->done = 1;
            pthread_cond_broadcast(&p->cv);
            continue;
        }
        break; /* stop, and nothing left */
    }
    int abandoned = p->abandoned;
    pthread_mutex_unlock(&p->mu);
    if (abandoned) { /* nobody joins: what was made and the pool go with the thread */
        for (int i = 0; i < p->makes.count; i++) {
            dt_casehost_free(at(&p->makes, i)->h);
            free(at(&p->makes, i)->h);
        }
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        free(p);
    }
    return NULL;
}

dt_casehost_pool *dt_casehost_pool_start(const dt_casehost_cfg *cfg, const char *list,
                                         const char *wide, char *why, size_t why_len) {
    const char *env = getenv("DUALTIME_PREFETCH");
    cpu_set_t set;
    if (env && strcmp(env, "0") == 0) {
        snprintf(why, why_len, "off (DUALTIME_PREFETCH=0)");
        return NULL;
    }
    if (env && *env) { /* a CPU list: the preparer runs there, pinned or not (tests, A/B) */
        if (dt_affinity_parse(env, &set) != 0) {
            snprintf(why, why_len, "off: DUALTIME_PREFETCH=%s is not 0 or a CPU list", env);
            return NULL;
        }
        list = env;
        const char *w = getenv("DUALTIME_PREFETCH_WIDE"); /* and where it may spread */
        if (w && *w) wide = w;
    } else if (!list || !*list || dt_affinity_parse(list, &set) != 0) {
        snprintf(why, why_len, "off: no CPU is free of the workers and the orchestrator "
                 "(pinning %s)", list && *list ? "gave an unreadable list" : "left none spare");
        return NULL;
    }
    dt_casehost_pool *p = dt_xcalloc(1, sizeof *p);
    p->cfg = *cfg;
    p->cpus = set;
    p->ncpus = CPU_COUNT(&set);
    if (wide && *wide && dt_affinity_parse(wide, &p->wide) == 0) p->nwide = CPU_COUNT(&p->wide);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->th, NULL, thread_main, p) != 0) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        free(p);
        snprintf(why, why_len, "off: pthread_create failed");
        return NULL;
    }
    if (p->nwide > p->ncpus)
        snprintf(why, why_len, "on: the next case's host side on CPUs %s (%d), on %s (%d) "
                 "while the run waits for it", list, CPU_COUNT(&set), wide, p->nwide);
    else
        snprintf(why, why_len, "on: the next case's host side on CPUs %s (%d)", list,
                 CPU_COUNT(&set));
    return p;
}

/* Appends j to r, waiting while r is full. */
static void push(dt_casehost_pool *p, ring *r, const job *j) {
    pthread_mutex_lock(&p->mu);
    while (r->count == QUEUE_LEN) pthread_cond_wait(&p->cv, &p->mu);
    *at(r, r->count) = *j;
    r->count++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int dt_casehost_pool_submit(dt_casehost_pool *p, const dt_case_spec *spec, int round,
                            int want_sha, int nshm) {
    if (!p) return -1;
    dt_case_bytes b;
    dt_case_bytes_of(spec, nshm, &b);
    int64_t pending = 0;
    pthread_mutex_lock(&p->mu);
    int n = p->makes.count;
    for (int i = 0; i < n; i++) pending += at(&p->makes, i)->bytes;
    pthread_mutex_unlock(&p->mu);
    if (n >= DT_CASEHOST_AHEAD_MAX) return -1;
    dt_mem_free f;
    dt_mem_free_read(&f);
    /* those made are already out of MemAvailable, those not yet are not: counting both
     * again errs on the safe side */
    if (f.host_bytes >= 0 && pending + b.host_bytes + b.shm_bytes > f.host_bytes / 2) return -1;
    if (f.shm_bytes >= 0 && b.shm_bytes > f.shm_bytes / 2) return -1;
    job j = {JOB_MAKE, dt_xcalloc(1, sizeof(dt_casehost)), spec, round, want_sha, nshm,
             b.host_bytes + b.shm_bytes, 0, NULL, 0};
    push(p, &p->makes, &j);
    return 0;
}

dt_casehost *dt_casehost_pool_take(dt_casehost_pool *p, const dt_case_spec *spec, int round,
                                   int64_t *waited_ns) {
    *waited_ns = 0;
    if (!p) return NULL;
    int64_t t0 = dt_now_ns();
    pthread_mutex_lock(&p->mu);
    if (!p->makes.count) {
        pthread_mutex_unlock(&p->mu);
        return NULL;
    }
    if (p->started == 0) { /* not begun (the preparer is behind): made in line instead, on
                              every CPU, while the preparer goes on with the next one */
        dt_casehost *h = at(&p->makes, 0)->h;
        p->makes.head = (p->makes.head + 1) % QUEUE_LEN;
        p->makes.count--;
        pthread_mutex_unlock(&p->mu);
        free(h);
        return NULL;
    }
    if (!at(&p->makes, 0)->done && p->nwide > p->ncpus && p->ntids) {
        team_pin(p, &p->wide); /* the workers are idle while the run waits: spread out */
        p->widened = 1;
    }
    while (!at(&p->makes, 0)->done) {
        if (p->cfg.interrupted && p->cfg.interrupted()) {
            if (p->widened) team_pin(p, &p->cpus);
            p->widened = 0;
            pthread_mutex_unlock(&p->mu);
            *waited_ns = dt_now_ns() - t0;
            return NULL; /* still pending: dt_casehost_pool_abandon drops or leaves it */
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    }
    if (p->widened) team_pin(p, &p->cpus); /* back before anything is measured again */
    p->widened = 0;
    dt_casehost *h = at(&p->makes, 0)->h;
    p->makes.head = (p->makes.head + 1) % QUEUE_LEN;
    p->makes.count--;
    p->started--;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    *waited_ns = dt_now_ns() - t0;
    if (h->spec == spec && h->round == round) return h;
    dt_casehost_pool_free(p, h, NULL, 0); /* not the one asked for (cannot happen in order) */
    return NULL;
}

void dt_casehost_pool_free(dt_casehost_pool *p, dt_casehost *h, dt_shm *shm, int n) {
    dt_shm *copy = NULL;
    if (n > 0) {
        copy = dt_xmalloc((size_t)n * sizeof *copy);
        memcpy(copy, shm, (size_t)n * sizeof *copy);
        for (int i = 0; i < n; i++) memset(&shm[i], 0, sizeof shm[i]); /* moved */
    }
    job j = {JOB_FREE, h, NULL, 0, 0, 0, 0, 0, copy, n};
    if (p) push(p, &p->frees, &j);
    else run_job(NULL, &j); /* in line */
}

/* Stop asked for (under the lock): the makes not yet started are dropped; the thread
 * finishes the one in hand and every free. */
static void stop_locked(dt_casehost_pool *p) {
    p->stop = 1;
    for (int i = p->started; i < p->makes.count; i++) free(at(&p->makes, i)->h);
    p->makes.count = p->started;
    pthread_cond_broadcast(&p->cv);
}

/* Joins the thread and frees what it made ahead and nobody took, then the pool. */
static void join_free(dt_casehost_pool *p) {
    pthread_join(p->th, NULL);
    for (int i = 0; i < p->makes.count; i++) {
        dt_casehost_free(at(&p->makes, i)->h);
        free(at(&p->makes, i)->h);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

void dt_casehost_pool_stop(dt_casehost_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    stop_locked(p);
    pthread_mutex_unlock(&p->mu);
    join_free(p);
}

void dt_casehost_pool_abandon(dt_casehost_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    stop_locked(p);
    /* the frees give /dev/shm back: waited for (they are quick) */
    while ((p->frees.count || p->busy == JOB_FREE) && p->busy != JOB_MAKE)
        pthread_cond_wait(&p->cv, &p->mu);
    int making = p->busy == JOB_MAKE;
    if (making) { /* a reference can take a minute: not waited for; the process is ending */
        p->abandoned = 1; /* the thread frees the pool when the make is done */
        pthread_t th = p->th;
        pthread_mutex_unlock(&p->mu);
        pthread_detach(th);
        return;
    }
    pthread_mutex_unlock(&p->mu);
    join_free(p);
}
