/* dt_affinity.h — CPU pinning of a run (issue 12, item 6): CPU lists ("0", "2-3,5") in
 * and out of cpu_set_t, the plan that gives the orchestrator one core and each worker its
 * own cores, and pinning the calling process.
 *
 * The plan is pure (a list of usable CPUs in, lists out) so that it is tested without the
 * machine; dt_affinity_plan_here reads the caller's affinity mask (sched_getaffinity) and
 * plans on it. Workers are pinned at spawn (common/dt_spawn.h, opts.cpus). CPU ids are
 * the kernel's. Never prints, never exits. Thread-safety: reentrant (pin_self pins the
 * calling thread, which is the whole process before it starts threads). */
#ifndef DT_AFFINITY_H
#define DT_AFFINITY_H

#include <sched.h>
#include <stddef.h>

#define DT_PIN_MAX_WORKERS 4
#define DT_PIN_LIST_LEN 64

typedef struct dt_pin_plan {
    int pinned;                                      /* 1: the lists below are the plan */
    char orchestrator[DT_PIN_LIST_LEN];              /* CPU list, "" when not pinned */
    char worker[DT_PIN_MAX_WORKERS][DT_PIN_LIST_LEN]; /* per worker, "" when not pinned */
    char usable[DT_PIN_LIST_LEN];                    /* every usable CPU (the mask the
                                                        plan was made on) */
    char spare[DT_PIN_LIST_LEN];                     /* usable CPUs no worker, not the
                                                        orchestrator and not the system's
                                                        CPU got ("" none): where the
                                                        orchestrator's preparer runs
                                                        (orchestrate/dt_casehost.h) */
    char why[160];                                   /* not pinned: why, one line */
} dt_pin_plan;

/* Parses a CPU list ("0", "2-3", "0,4-7") into *out. 0, or -1 when malformed or empty. */
int dt_affinity_parse(const char *list, cpu_set_t *out);
/* Formats *set as a CPU list with ranges ("2-3,5") into out ("" for an empty set). */
void dt_affinity_format(const cpu_set_t *set, char *out, size_t len);

/* The plan for `workers` (1..DT_PIN_MAX_WORKERS) over the usable CPUs cpus[0..n) (sorted
 * ascending): pinned only when n >= 2 + workers and, with full_threads, when each share
 * holds `threads` CPUs (CPU kernels must not be squeezed onto fewer CPUs than threads).
 * Then cpus[0] is left to the system, the orchestrator gets cpus[1], and the rest is
 * split into `workers` equal consecutive shares, each capped at max(threads, 1) CPUs.
 * What is left of each share (take < share) and the CPUs past the last share are `spare`.
 * Otherwise pinned = 0 and why says so. */
void dt_affinity_plan(const int *cpus, int n, int workers, int threads, int full_threads,
                      dt_pin_plan *out);
/* CPUs per worker of a GPU run: its host thread, the driver's and CUPTI's threads; the
 * rest of each share is spare (the caller passes min(--threads, this) as threads). */
#define DT_PIN_GPU_WORKER_CPUS 3

/* dt_affinity_plan over this process's affinity mask. */
void dt_affinity_plan_here(int workers, int threads, int full_threads, dt_pin_plan *out);
/* Pins the calling thread (the process, before it has threads) to list; 0 or -1 (errno). */
int dt_affinity_pin_self(const char *list);
/* The calling thread's affinity as a CPU list into out; 0 or -1. */
int dt_affinity_self(char *out, size_t len);

#endif
