/* dt_casehost.h — the host side of one case-round, and making the next one while the
 * current one is measured (issue 12: a default CUDA run's wall time).
 *
 * A case's host side is everything the orchestrator computes before any worker sees the
 * case: the layout, the pristine arena (inputs from --seed and --inputs, guards, poisoned
 * outputs), the FP64 reference of input set 0 (through the run's reference cache,
 * dt_refcache.h), the anti-cheat input sets with their references (in the rounds that
 * check them, dt_cheat_round_checked), and the inputs' SHA-256 when the case is new to
 * the record; and, when asked, the implementations' shared arenas (/dev/shm) holding a copy
 * of the pristine arena each. dt_casehost_make does it on the calling thread.
 *
 * The preparer (dt_casehost_pool) is one long-lived thread that makes the NEXT case-rounds
 * (up to DT_CASEHOST_AHEAD_MAX, as memory allows) while the current one is measured, so an
 * expensive one (a gemm 4096^3 reference) starts cases early, and frees the finished ones
 * (arena, reference, input sets and the implementations' shared arenas): one job at a
 * time, frees before makes, makes in the order they are submitted. It runs on CPUs that
 * no worker and not the orchestrator's own thread are pinned to (dt_pin_plan.spare), so
 * the workers' timed calls do not share a core with it; while the run loop waits for the
 * case-round it is making (the workers idle), its OpenMP team spreads over every usable
 * CPU and comes back before anything is measured. With no spare CPU there is no preparer
 * and everything happens in line, as before. A next case is made ahead only when its host
 * bytes, with those of the pending ones, fit in half of MemAvailable at that moment (else
 * in line, after the current case is freed). DUALTIME_PREFETCH=0 turns the preparer off;
 * DUALTIME_PREFETCH=LIST runs it on that CPU list even where nothing is pinned (CPU 0
 * alone is "0-0"), and
 * DUALTIME_PREFETCH_WIDE=LIST with it is where it spreads while waited for (tests, A/B;
 * docs/device-workflow.md).
 *
 * Ownership: a dt_casehost owns its buffers (dt_casehost_free); one made by the preparer is
 * owned by whoever takes it. Notes (reference-cache findings) are collected in `notes`
 * for the caller to move into the record on its own thread. Thread-safety: the preparer's
 * thread is the only user of the dt_refcache while it is running a job; the caller must
 * not use the same refcache concurrently (it takes the job first). Library code: no
 * output, no exit. */
#ifndef DT_CASEHOST_H
#define DT_CASEHOST_H

#include <stdint.h>

#include "../common/dt_common.h"
#include "../data/dt_arena.h"
#include "../data/dt_shm.h"
#include "../oracle/dt_oracle.h"
#include "../plan/dt_plan.h"
#include "../record/dt_record.h"
#include "dt_cheat.h"
#include "dt_refcache.h"

typedef struct dt_casehost_cfg {
    uint64_t seed;
    int inputs;            /* dt_inputs */
    int rounds;            /* the run's rounds (whether a later round needs a reference) */
    dt_refcache *refcache; /* the run's */
    int (*interrupted)(void); /* nonzero: a wait in dt_casehost_pool_take gives up (NULL: never) */
} dt_casehost_cfg;

#define DT_CASEHOST_MAX_SHM 8

typedef struct dt_casehost {
    const dt_case_spec *spec;
    int round;
    dt_case_layout L;      /* the input sets point at it: a dt_casehost never moves */
    uint8_t *pristine;     /* NULL: could not be allocated (fail_stage "inputs") */
    dt_oracle_ref ref;     /* input set 0 */
    dt_cheat_case cheat;   /* nsets 0: this round checks no sample */
    const char *fail_stage; /* NULL, or "inputs", "oracle", "input sets" */
    char fail_msg[DT_ERR_LEN];
    dt_strv notes;         /* for the record's notes, in order */
    int want_sha;          /* the inputs' SHA-256 were asked for (a case new to the record) */
    int n_inputs;
    int input_buf[DT_MAX_BUFFERS];
    char input_hex[DT_MAX_BUFFERS][65];
    int nshm;              /* the implementations' shared arenas, made and filled with the
                              pristine arena (taken over by the run loop: zeroed there) */
    dt_shm shm[DT_CASEHOST_MAX_SHM];
    int ahead;             /* 1: made by the preparer while the case before was measured */
} dt_casehost;

/* Called at each part's start on the making thread (NULL: none): "inputs",
 * "FP64 reference", "input sets". */
typedef void (*dt_casehost_phase_fn)(void *ctx, const char *phase);

/* Makes the host side of (spec, round) into *h (zeroed first), with nshm shared arenas
 * (0..DT_CASEHOST_MAX_SHM; "arena copy" is their phase). A failure leaves fail_stage and
 * fail_msg set and whatever was made (free it all with dt_casehost_free); a shared arena
 * that cannot be made is not a failure of the case here (nshm counts those made: the run
 * loop makes the rest itself and fails that implementation with the reason). */
void dt_casehost_make(const dt_casehost_cfg *cfg, const dt_case_spec *spec, int round,
                      int want_sha, int nshm, dt_casehost_phase_fn phase, void *ctx,
                      dt_casehost *h);
void dt_casehost_free(dt_casehost *h);
/* The SHA-256 of each input buffer of h's pristine arena (not NULL) into input_buf /
 * input_hex / n_inputs, on parallel threads; want_sha becomes 1. */
void dt_casehost_hash_inputs(dt_casehost *h);

/* The preparer. */
typedef struct dt_casehost_pool dt_casehost_pool;

/* Starts it on the CPUs of list (a CPU list, dt_affinity_parse), or of DUALTIME_PREFETCH
 * when that is a list; NULL when there is no list, it cannot be parsed, or
 * DUALTIME_PREFETCH is "0" (why says which, for the record). wide (NULL: none): every
 * usable CPU; the preparer's OpenMP team is then sized to it (oversubscribing the spare
 * CPUs while cases are measured) and spread over it while dt_casehost_pool_take waits for
 * a case-round in the making: the workers are idle then, and a gemm 8192^3 reference on
 * half the CPUs would keep the run waiting twice as long as in line. */
dt_casehost_pool *dt_casehost_pool_start(const dt_casehost_cfg *cfg, const char *list,
                                         const char *wide, char *why, size_t why_len);
/* Submits making (spec, round) ahead with nshm shared arenas, after those submitted
 * before (they are taken in that order); 0, or -1 when it is not made ahead
 * (DT_CASEHOST_AHEAD_MAX are pending, or its host bytes and arenas with those of the
 * pending ones do not fit in half of MemAvailable, or its arenas in half of /dev/shm's
 * free bytes, now). */
#define DT_CASEHOST_AHEAD_MAX 8
int dt_casehost_pool_submit(dt_casehost_pool *p, const dt_case_spec *spec, int round,
                            int want_sha, int nshm);
/* The first case-round submitted and not yet taken when it is (spec, round) (waits for it
 * to be made), else NULL (that one is freed); NULL when none is pending, when the
 * preparer has not begun it (it is dropped: the caller makes it in line, on every CPU), or
 * when
 * cfg.interrupted says so while waiting (checked every 50 ms). *waited_ns: how long this
 * waited. */
dt_casehost *dt_casehost_pool_take(dt_casehost_pool *p, const dt_case_spec *spec, int round,
                                   int64_t *waited_ns);
/* Frees h (heap-allocated, owned by the caller until now) and the shared arenas shm[0..n)
 * (each destroyed: unmapped, unlinked) on the preparer, after the jobs before. */
void dt_casehost_pool_free(dt_casehost_pool *p, dt_casehost *h, dt_shm *shm, int n);
/* Waits for every job, stops the thread, frees what is left. NULL is fine. */
void dt_casehost_pool_stop(dt_casehost_pool *p);
/* For an interrupted run: drops the makes not started, waits for the frees, and does not
 * wait for a make in progress (an FP64 reference can take a minute): the thread is then
 * left to finish on its own and then frees what it made and the pool (a process that ends
 * first leaves a shared arena of it to the next start's sweep, dt_shm_sweep_stale). NULL is
 * fine; p is not to be used after. */
void dt_casehost_pool_abandon(dt_casehost_pool *p);

#endif
