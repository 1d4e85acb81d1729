/* dt_session.h — the workers of one run: which programs they are, starting them, the
 * backend the run uses and why, and stopping them.
 *
 * A session has one member per implementation, in the run's order: index 0 the
 * baseline, 1.. the candidates (the record's order, record/dt_record.h). Each member has
 * a main worker (checks, host, control and dispatch samples) and a probe worker per
 * CUPTI kind (concurrent, serialized): more processes of the same command, started only
 * when a step needs them (the CUPTI probe scopes; probe kind auto pilots both), so CUPTI
 * never attaches to the process that takes host samples and a probe process keeps one
 * kind for its life. The step asks for the worker it needs (dt_session_worker); nobody
 * swaps workers. Workers start pinned to the member's CPU list when
 * dt_session_settings.cpus names one (common/dt_spawn.h).
 *
 * The members are the specs of --impls (session/dt_impl_spec.h: native, torch,
 * torch-compile[:MODE], py:, cuda:, worker:) or, without it, the older spellings: the
 * baseline --baseline-worker or the PyTorch worker, the candidate --candidate-worker or
 * the native worker. The native worker is the one next to the dualtime binary; the
 * PyTorch worker is the script next to the binary, run by the first interpreter
 * (dt_session_python_candidates: --python, else DUALTIME_PYTHON, else python3 on PATH
 * then /usr/bin/python3) whose worker answers hello; a command is split like a shell
 * does (dt_words_split). Every command gets "--threads N" appended. Ids: a spec's name;
 * for the older spellings the workers' hellos ("baseline"/"candidate" when one is
 * missing or they are equal). A hello answering "unavailable": "reason" (the worker
 * cannot provide what it was started as: torch.compile on an old torch) refuses the
 * start: "--impls NAME: reason". This module names no framework beyond the default
 * workers' names for people ("the PyTorch worker", "the native worker"). A start that
 * does not answer hello within start_timeout_s fails with "...'s start-up timed out
 * after N s" and the command. The backend is the requested one (refused when a worker
 * does not offer it) or, automatically, cuda when every worker offers it, else cpu;
 * backend_choice says why.
 *
 * Used by `dualtime run` (dt_session_start) and `dualtime doctor` (the interpreter
 * search). Ownership: the session owns its workers and hellos; dt_session_stop releases
 * everything (safe on a zeroed or half-started session). Errors are one line in dt_err
 * naming the option at fault. Never prints. Not thread-safe. */
#ifndef DT_SESSION_H
#define DT_SESSION_H

#include <limits.h>

#include "../common/dt_common.h"
#include "dt_impl_spec.h"
#include "dt_protocol.h"
#include "dt_worker.h"

#define DT_SESSION_MAX_IMPLS DT_IMPL_SPEC_MAX /* members of one session */
#define DT_SESSION_ID_LEN 64

/* What starting a run's workers needs (from the command line). */
typedef struct dt_session_settings {
    const char *exe_dir;       /* directory of the dualtime binary and its workers */
    const char *python;        /* --python, or NULL */
    const char *candidate_cmd; /* --candidate-worker (split like a shell), or NULL */
    const char *baseline_cmd;  /* --baseline-worker, or NULL; both only when impls is NULL */
    const char *backend;       /* --backends: "cpu", "cuda", or NULL for automatic */
    int threads;               /* --threads, passed to every worker */
    double timeout_s;          /* --timeout: per request */
    const char *cpus[DT_SESSION_MAX_IMPLS]; /* CPU list each member's workers are pinned
                                  to (the members' order: 0 the baseline); NULL: not pinned */
    double start_timeout_s;    /* --start-timeout: a worker's start up to its hello answer
                                  (0: DT_WORKER_START_S) */
    /* Called (when not NULL) as each worker process starts, with what starts as a phrase
     * ("the PyTorch worker", "the native worker", "the NAME worker" for a given command)
     * and, once it answered or failed, with NULL: the CLI draws it on a terminal. */
    void (*on_start)(void *ctx, const char *what);
    void *on_start_ctx;
    const dt_impl_specs *impls; /* --impls (not owned); NULL: the older spellings above */
    /* steps (bit 1 << step, never the main worker's) whose workers are spawned and sent
     * hello with each member's main worker, before its hello is read, so their start-ups
     * overlap the main workers' (session 8: 4.5 s of the default CUDA run's 10 s start-up
     * were the probe workers after the main ones). Their hellos are read by
     * dt_session_prestart or, at the latest, dt_session_ready. 0: none. */
    unsigned early_steps;
} dt_session_settings;

/* Which worker of a member a step needs. */
typedef enum dt_session_step {
    DT_STEP_MAIN = 0,         /* checks, warmup, calibration, host, control, dispatch */
    DT_STEP_PROBE = 1,        /* the CUPTI probe scopes, concurrent kind */
    DT_STEP_PROBE_SERIAL = 2, /* the CUPTI probe scopes, serialized kind */
    DT_STEP_COUNT
} dt_session_step;

/* One implementation of the run and its two worker processes. */
typedef struct dt_session_member {
    const char *role;           /* "baseline" (member 0) or "candidate" */
    char label[96];             /* who it is in messages: "--impls NAME", or "baseline
                                   worker" / "candidate worker" (the older spellings) */
    char what[96];              /* "the PyTorch worker", "the native worker", "the X worker" */
    char id[DT_SESSION_ID_LEN]; /* from hello (or the role) */
    dt_worker worker[DT_STEP_COUNT]; /* by step (initialised, maybe not started) */
    char cpus[64];              /* CPU list its workers are pinned to, "" when not */
    dt_hello hello;             /* the main worker's first hello */
    int fresh[DT_STEP_COUNT];   /* started by dt_session_prestart, not yet given to a step */
    int pending[DT_STEP_COUNT]; /* spawned and sent hello (early_steps), hello not read yet */
} dt_session_member;

typedef struct dt_session {
    int count;                                /* members, once started */
    dt_session_member member[DT_SESSION_MAX_IMPLS];
    char python[PATH_MAX];                    /* interpreter of the PyTorch worker, "" if none */
    char backend[16];                         /* "cpu" or "cuda" */
    char backend_choice[600];                 /* why this backend */
    double timeout_s, start_timeout_s;
    void (*on_start)(void *ctx, const char *what);
    void *on_start_ctx;
} dt_session;

/* The interpreters to try for the PyTorch worker, in order, into cands (at most 2; the
 * count is returned) and how they were chosen into *how ("--python", "DUALTIME_PYTHON",
 * "python3 on PATH, then /usr/bin/python3"). python_arg: --python or NULL. */
int dt_session_python_candidates(const char *python_arg, const char *cands[2], const char **how);

/* Starts every member's main worker in order (hello checked, "unavailable" refused),
 * fixes the ids and chooses the backend. On failure everything started is stopped. */
dt_status dt_session_start(dt_session *s, const dt_session_settings *set, dt_err *err);

/* Starts the workers of every member for the steps in mask (bit 1 << step; the main
 * worker is never in it) that are not running, all at once: each is spawned and sent
 * hello, then every hello is read (start_timeout_s each), those sent at the session's
 * start (early_steps) included. Nothing else runs meanwhile
 * (the CLI calls it before the ceilings are measured), so starting the probe processes
 * together costs the slowest start instead of their sum. A worker that fails to start is
 * left stopped: dt_session_ready starts it again when a step needs it, and that failure
 * (with its reason) is the step's. Returns how many started. */
int dt_session_prestart(dt_session *s, unsigned mask);

/* The worker of member i that step needs (started or not). */
dt_worker *dt_session_worker(dt_session *s, int i, dt_session_step step);

/* Makes sure the worker of member i for step runs: a stopped or dead one is started again
 * and its hello checked (the answer is not kept). *started says whether it was started
 * for this step: here, or by dt_session_prestart and not given to a step before. */
dt_status dt_session_ready(dt_session *s, int i, dt_session_step step, int *started,
                           dt_err *err);

/* Stops every worker and frees the session's hellos. */
void dt_session_stop(dt_session *s);

#endif
