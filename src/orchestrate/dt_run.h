/* dt_run.h — the orchestrator's run loop: for every case and round, prepare every
 * implementation's worker, check the cold call against the oracle, warm up, calibrate,
 * take interleaved host samples (a rotated Latin square over the implementations,
 * orchestrate/dt_latin.h: ABBA with two), check again, and write results after every
 * case.
 *
 * Policy lives here and only here (SPEC §4); workers only offer primitives. The session
 * members are the implementations in the record's order (index 0 the baseline, 1.. the
 * candidates); their ids come from the session (--impls names or the workers' hellos),
 * never from this code. Measurements go
 * into the typed record (record/dt_record.h), found there by implementation id.
 * Ownership: the caller owns the config, the session and the record; dt_run fills the
 * record and writes DIR/results.json, DIR/results.md and DIR/plots (dt_outputs_write)
 * before the first case and after every case. Not thread-safe. */
#ifndef DT_RUN_H
#define DT_RUN_H

#include "../common/dt_common.h"
#include "../plan/dt_plan.h"
#include "../session/dt_session.h"
#include "dt_clocks.h"
#include "../record/dt_record.h"

/* Caps of the timing policy (recorded in settings). */
#define DT_RUN_MAX_REPS 100000       /* host batch reps */
#define DT_RUN_DEVICE_REPS_CAP 64    /* device batch reps */
#define DT_RUN_PILOT_PAIRS 3         /* probe kind auto: held batch indexes per kind */
#define DT_RUN_PROBE_WARMUP_MS 50.0  /* a probe worker's warmup: min(--warmup-ms, this) */
#define DT_RUN_ENERGY_EVERY 3        /* NVML energy around batch samples 0, 3, 6, ... */

/* dt_run_config.probe_kind */
enum { DT_RUN_PROBE_CONCURRENT = 0, DT_RUN_PROBE_SERIALIZED = 1, DT_RUN_PROBE_AUTO = 2 };

/* The device samples of one index, by slot (dt_run_device_order). */
enum { DT_RUN_SLOT_CONTROL = 0, DT_RUN_SLOT_PROBE = 1, DT_RUN_SLOT_DISPATCH = 2 };

/* The order of the three device samples (control, probe, dispatch: DT_RUN_SLOT_*) at
 * sample index `index` (>= 0) into order[0..2]: the six permutations in turn, so that
 * control comes before probe exactly on even indexes, each aligned block of three
 * indexes puts every slot once in every position, and each block of six holds every
 * pairwise order equally often. The probe kind pilot uses it for (control, concurrent,
 * serialized). */
void dt_run_device_order(int index, int order[3]);

#define DT_RUN_STARTUP_MAX 8

typedef struct dt_run_config {
    const char *output_dir; /* exists and is empty */
    const char *backend;    /* "cpu" or "cuda" */
    dt_plan plan;
    int samples;
    double sample_ms, warmup_ms;
    int prime;              /* untimed calls before each timed sample, same request (0..16) */
    int rounds;
    uint64_t seed;
    int threads;
    double timeout_s;
    int device_timing;
    int probe_kind; /* DT_RUN_PROBE_*: concurrent, serialized, auto (a pilot per case and
                       implementation in its first round picks the kind) */
    int capture_sources;
    int64_t max_reps;       /* host batch cap (100000) */
    int64_t device_reps_cap; /* 64 */
    int progress;           /* 1: draw a progress line on stderr */
    const char *fw_ids[DT_SESSION_MAX_IMPLS]; /* the session members' ids, in its order
                                                 (0 the baseline) */
    dt_clocks *clocks;      /* NVML (cuda runs); NULL: clocks are not read */
    int inputs;             /* --inputs: a dt_inputs (src/data/dt_arena.h), 0 uniform */
    int graph;              /* --graph: graph_batch samples (held replay of a graph of R_dev
                               calls) after each index's device samples (issue 13) */
    int cache_cold;         /* --cache cold: every device window flushed first, batch calls
                               rotating over arena copies (orchestrate/dt_cache.h) */
    int64_t l2_bytes;       /* the device's L2 (from hello), sizes flush and rotation */
    const char *spare_cpus; /* CPUs no worker is pinned to (dt_pin_plan.spare): the
                               preparer's (orchestrate/dt_casehost.h); NULL or "": none */
    const char *usable_cpus; /* every usable CPU (dt_pin_plan.usable): where the preparer
                                may spread while the run loop waits for it; NULL: none */
    /* the start-up before the run loop (the CLI's steps, dt_now_ns() when each began):
     * written first into DUALTIME_PHASE_TRACE as case "-", round -1 lines, ns relative to
     * the loop's start (negative), so the trace covers the whole run */
    int n_startup;
    const char *startup_phase[DT_RUN_STARTUP_MAX];
    int64_t startup_ns[DT_RUN_STARTUP_MAX];
} dt_run_config;

/* The run loop's environment knobs, checked before a run starts (the CLI: exit 2, nothing
 * written): DUALTIME_WARMUP unset (cuda: the implementations' warm-ups at once; cpu: one
 * after the other), "serial" or "together"; anything else is DT_EINVAL naming it. */
dt_status dt_run_env_check(dt_err *err);

/* Runs the plan with the session's workers (started, hello done; each member's probe
 * worker is started on demand for device timing, so CUPTI never attaches to the process
 * that takes host and control samples; a dead worker is restarted at the next case).
 * r must already hold the run-level fields (tool, settings, the implementations with the
 * ids cfg->fw_ids, environment) and the cases of an interrupted run being resumed
 * (their finished rounds are kept). *any_invalid is set when a case failed. Returns
 * DT_OK unless the run could not go on at all (DIR unwritable, interrupted: then DT_EIO
 * with the reason; the outputs then hold the run as it was before the interrupted case,
 * marked interrupted). */
dt_status dt_run_plan(const dt_run_config *cfg, dt_session *session, dt_record *r,
                      int *any_invalid, dt_err *err);

/* Set from a signal handler: the run stops at the next request and keeps what it has. */
void dt_run_request_stop(int signo);
int dt_run_stop_requested(void);

#endif
