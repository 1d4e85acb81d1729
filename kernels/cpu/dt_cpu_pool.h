/* dt_cpu_pool.h — internal to kernels/cpu: a work pool whose calling thread never waits
 * for a worker that has not started.
 *
 * Why: with OpenMP (libgomp) a parallel region ends at a barrier that waits for every
 * thread of the team; on a machine whose cores other processes share, a team thread that
 * the scheduler has parked holds the region for a scheduler slice (4-8 ms per call on the
 * 2-core development VM: gemm 512^3 with 2 threads 19-27 ms against 2.5 ms with one;
 * docs/perf.md, CPU v3). Here the items of a job are claimed one at a time from a shared
 * ticket by the caller and by the workers that are awake; the caller runs items until none
 * is left, then waits only for the items workers have already claimed. A worker the
 * scheduler has parked simply finds no work when it wakes.
 *
 * Workers: created at the first parallel job (pthreads, at most DT_CPU_POOL_MAX - 1),
 * never joined; after a job they spin for 1 ms (a batch of back-to-back calls finds them
 * awake), then sleep on a futex. Past the first 20 us of that spin a worker calls
 * sched_yield at every check, so it never holds a core that another thread could use
 * (on the 2-vCPU development VM the scheduler often queues the woken worker on the
 * caller's own vCPU; a worker spinning there kept the caller off it for a 4 ms tick).
 * DUALTIME_CPU_POOL_WAIT=spin: pause only, as before session 14. A job uses the caller
 * plus up to threads - 1 workers.
 *
 * Thread-safety: one job at a time; a call while another thread's job runs (or from inside
 * an item) runs all its items on the calling thread. Items must not call the pool.
 * Linux only (futex). */
#ifndef DT_CPU_POOL_H
#define DT_CPU_POOL_H

#include <stdint.h>

#define DT_CPU_POOL_MAX 64

/* Runs fn(ctx, item, slot) for every item in [0, nitems), each exactly once, on the
 * calling thread (slot 0) and up to threads - 1 pool workers (slots 1 .. threads - 1: a
 * slot is never used by two items at once, so per-slot scratch needs no lock); returns
 * when all have returned, their writes visible to the caller. threads <= 1 or
 * nitems <= 1: all on the caller. */
void dt_cpu_pool_run(int threads, int64_t nitems,
                     void (*fn)(void *ctx, int64_t item, int slot), void *ctx);

/* Row kernels: fn(args, i0, i1) over [0, m) cut into `threads` contiguous row ranges,
 * one per thread (the same split every call, as OpenMP's static schedule, so a thread's
 * rows tend to stay in its core's cache when both threads are awake). Default (steal):
 * each thread takes its range a chunk of about DT_CPU_ROWS_CHUNK_ELEMS elements (n per
 * row) at a time from the front, then chunks from the back of the fullest range left, so
 * a thread that starts late or runs slower costs at most one chunk's wait.
 * DUALTIME_CPU_ROWS=static (or DUALTIME_CPU_POOL=omp): one pool item per range (v3). */
#define DT_CPU_ROWS_CHUNK_ELEMS 16384
void dt_cpu_pool_rows(int threads, int64_t m, int64_t n,
                      void (*fn)(const void *args, int64_t i0, int64_t i1), const void *args);

/* Row split in use: 1 static (DUALTIME_CPU_ROWS=static), 0 steal (default). use_static 0
 * or 1 replaces the environment's choice for later jobs (tests; not while a job runs), -1
 * changes nothing; returns the previous choice. */
int dt_cpu_pool_rows_static(int use_static);

/* Threading in use: the pool (default) or, with DUALTIME_CPU_POOL=omp, one OpenMP region
 * per job (v2's threading; a parked team thread then holds the job). use_omp 0 or 1
 * replaces the environment's choice for later jobs (tests; not while a job runs), -1
 * changes nothing; returns the previous choice. */
int dt_cpu_pool_use_omp(int use_omp);

/* 1 when idle workers only spin (DUALTIME_CPU_POOL_WAIT=spin), 0 when they yield (default). */
int dt_cpu_pool_idle_spin(void);

/* Workers started so far (tests). */
int dt_cpu_pool_workers(void);

#endif
