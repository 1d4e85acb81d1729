/* dt_run.c — the run loop (see dt_run.h). Order of one case, per round:
 *
 *   the host side (dt_casehost.h: pristine arena, FP64 reference, input sets, shared
 *   arenas), made ahead on the preparer while the case-round before was measured, or here
 *   every implementation's prepare sent, then each answer; per implementation: cold call
 *   → download → check("cold")
 *   per implementation: warmup (batches) → calibrate R
 *   batch samples, then single samples, the implementations in the rotated Latin square
 *   of dt_latin_order at every sample index (ABBA with two)
 *   [device timing: probe workers prepared (probe kind auto: a pilot of both kinds in
 *    round 0 picks the less perturbing one); per sample index control (held), probe
 *    (held, on the probe worker of the kind) and dispatch (unheld) in a rotated order;
 *    then unheld single-call probes with timestamps: the E2E decomposition]
 *   per implementation: poison → upload → call → download → check("warm") → release
 *   write results.json + results.md + plots (dt_outputs_write)
 *
 * Everything measured goes into the typed record (record/dt_record.h); requests and
 * answers go through the protocol module. An implementation whose check fails is never
 * timed; a worker that dies fails its case only and is restarted at the next case. */
#define _GNU_SOURCE
#include "dt_run.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../data/dt_arena.h"
#include "../data/dt_shm.h"
#include "../format/dt_outputs.h"
#include "../oracle/dt_oracle.h"
#include "../record/dt_file_async.h"
#include "../record/dt_record_cache.h"
#include "../record/dt_record_json.h"
#include "../stats/dt_derive.h"
#include "../session/dt_protocol.h"
#include "../stats/dt_stats.h"
#include "dt_cache.h"
#include "dt_casehost.h"
#include "dt_cheat.h"
#include "dt_hostpass.h"
#include "dt_latin.h"
#include "dt_refcache.h"

static volatile sig_atomic_t g_stop_signal;

void dt_run_request_stop(int signo) { g_stop_signal = signo; }
int dt_run_stop_requested(void) { return g_stop_signal != 0; }

/* Per-implementation state of the case being run. */
typedef struct fw_case {
    int index;          /* session member: 0 the baseline, 1.. the candidates */
    const char *id;     /* implementation id */
    dt_worker *w[DT_STEP_COUNT]; /* by step: the session's workers */
    dt_case_impl *ci;   /* this implementation's part of the case (in the record) */
    dt_shm shm;         /* this implementation's arena (the probe worker maps it too) */
    dt_protocol_prepare_req req; /* kept for the probe worker */
    int prepared;       /* prepare succeeded: release owed */
    int probe_prepared[DT_STEP_COUNT]; /* prepare on that probe worker succeeded: release owed */
    dt_session_step probe_step; /* the probe worker (kind) whose samples are kept */
    int graph_off;      /* the graph scope is unavailable for this impl (reason recorded) */
    int ok;             /* still eligible for timing */
    int64_t reps;       /* calibrated batch size */
    int mirror_set1[DT_STEP_COUNT]; /* by step: 1 + the input set that worker's device mirror
                                       was last given whole by a sample's arm (fw_sample_arm),
                                       0 unknown (docs/anti-cheat.md, "Checks by digest") */
} fw_case;

/* Everything the loop carries between cases. */
typedef struct run_ctx {
    const dt_run_config *cfg;
    dt_session *session;
    dt_record *r;
    int n;              /* implementations (session members) */
    int ri[DT_SESSION_MAX_IMPLS]; /* record impl index of each session member */
    int64_t position;   /* global sample counter */
    int cases_done, cases_total;
    int64_t t_start_ns;
    const char *current;
    int floor_off;      /* the first candidate's worker has no floor call: asked no more */
    FILE *trace;        /* DUALTIME_PHASE_TRACE: one line per phase change, or NULL */
    int round;          /* round of the case in flight (the trace's column) */
    int64_t full_write_ns, full_write_cost_ns; /* the last write of every output: when, how long */
    dt_refcache refcache; /* FP64 references kept on disk between rounds (dt_refcache.h) */
    dt_casehost_cfg hcfg; /* how a case's host side is made (dt_casehost.h) */
    dt_casehost_pool *pool; /* the preparer, or NULL (everything in line) */
    int *seq, seq_count;  /* the case-rounds in run order: (plan index, round) pairs */
    int seq_ahead;        /* the first of them not yet given to the preparer */
    dt_record_cache *rcache; /* case texts of results.json between writes (dt_record_cache.h) */
    dt_file_async *writer; /* results.json after a case, written in the background */
    int digest_off;       /* DUALTIME_CHEAT_DIGEST=0: every checked sample copies the whole arena */
} run_ctx;

/* One case in flight. */
typedef struct case_run {
    const dt_case_spec *spec;
    dt_case *cj;        /* the case in the record */
    dt_casehost *h;     /* layout, pristine arena, FP64 reference, input sets (anti-cheat;
                           cheat.nsets 0: none), shared arenas not yet taken */
    int round, flip;
    fw_case fw[DT_SESSION_MAX_IMPLS];
    /* releases sent (case_release_send), their answers read in case_finish */
    struct fw_step *released;
    int nreleased, release_sent;
} case_run;

/* The CUPTI kind of a probe step. */
static const char *kind_name(dt_session_step step) {
    return step == DT_STEP_PROBE_SERIAL ? "serialized" : "concurrent";
}

void dt_run_device_order(int index, int order[3]) {
    /* all six permutations of (control, probe, dispatch): control before probe exactly
     * on even indexes; every aligned three indexes a Latin square (each slot once in each
     * position); every six each pairwise order three times */
    static const int k_order[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1},
                                      {2, 1, 0}, {0, 2, 1}, {1, 0, 2}};
    int r = index % 6;
    if (r < 0) r += 6;
    for (int q = 0; q < 3; q++) order[q] = k_order[r][q];
}

/* ---- progress --------------------------------------------------------------------- */

/* The phase trace (docs/device-workflow.md, "Where a run's time goes"): DUALTIME_PHASE_TRACE
 * names a file that gets "ns case round implementation phase" at every phase change; a
 * phase lasts until the next line. scripts/phase_times.py sums it per phase and case. */
static void trace_line(run_ctx *c, const char *fw, const char *phase) {
    if (!c->trace) return;
    fprintf(c->trace, "%lld\t%s\t%d\t%s\t%s\n", (long long)(dt_now_ns() - c->t_start_ns),
            c->current ? c->current : "-", c->round, fw ? fw : "-", phase);
}

static void progress(run_ctx *c, const char *fw, const char *phase) {
    trace_line(c, fw, phase);
    if (!c->cfg->progress) return;
    double el = (double)(dt_now_ns() - c->t_start_ns) / 1e9;
    char eta[32] = "--";
    if (c->cases_done > 0) {
        double left = el / c->cases_done * (c->cases_total - c->cases_done);
        snprintf(eta, sizeof eta, "%dm%02ds", (int)(left / 60), (int)left % 60);
    }
    fprintf(stderr, "\r\033[K[%d/%d] %s %s %s  elapsed %dm%02ds  ETA %s", c->cases_done + 1,
            c->cases_total, c->current ? c->current : "", fw ? fw : "", phase,
            (int)(el / 60), (int)el % 60, eta);
    fflush(stderr);
}

/* ---- worker requests ---------------------------------------------------------------- */

/* Marks f failed (the first reason wins) with the stderr tail of its worker for step. */
static void fw_fail(fw_case *f, dt_session_step step, const char *stage, const char *msg) {
    if (!f->ok && f->ci->error) return; /* first wins */
    f->ok = 0;
    int cheat = dt_cheat_in_text(msg); /* a worker's own anti-cheat finding */
    if (cheat >= 0) dt_cheat_mark(&f->ci->cheat, (dt_cheat_check)cheat, msg);
    char line[700];
    snprintf(line, sizeof line, "%s: %s", stage, msg);
    f->ci->status = DT_IMPL_FAILED;
    dt_record_set_str(&f->ci->error, line);
    char tail[DT_STDERR_TAIL];
    dt_worker_stderr_tail(f->w[step], tail, sizeof tail);
    dt_record_set_str(&f->ci->stderr_tail, tail);
}

/* The worker of f for step, when a request may go to it now; else f is failed with stage
 * (interrupted, or the worker is not running) and NULL is returned. */
static dt_worker *fw_worker(fw_case *f, dt_session_step step, const char *stage) {
    if (dt_run_stop_requested()) {
        char msg[64];
        snprintf(msg, sizeof msg, "interrupted by signal %d", (int)g_stop_signal);
        fw_fail(f, step, stage, msg);
        return NULL;
    }
    if (!dt_worker_alive(f->w[step])) {
        fw_fail(f, step, stage, "worker is not running");
        return NULL;
    }
    return f->w[step];
}

/* A request's outcome: on failure f is failed with stage and the reason. */
static dt_status fw_done(fw_case *f, dt_session_step step, const char *stage, dt_status st,
                         const dt_err *e) {
    if (st != DT_OK) fw_fail(f, step, stage, e->msg);
    return st;
}

/* run(reps) with `prime` untimed calls before the timed part (0: none). */
static dt_status fw_run_primed(run_ctx *c, fw_case *f, dt_session_step step, const char *stage,
                               int64_t reps, int prime, int64_t *host_ns) {
    dt_worker *w = fw_worker(f, step, stage);
    if (!w) return DT_EWORKER;
    dt_err e;
    dt_status st = dt_protocol_run(w, reps, prime, c->cfg->timeout_s, host_ns, &e);
    return fw_done(f, step, stage, st, &e);
}

static dt_status fw_run(run_ctx *c, fw_case *f, dt_session_step step, const char *stage,
                        int64_t reps, int64_t *host_ns) {
    return fw_run_primed(c, f, step, stage, reps, 0, host_ns);
}

/* A whole-arena upload or download. An upload makes what f's mirror holds unknown until
 * the caller says (fw_sample_arm). */
static dt_status fw_copy(run_ctx *c, fw_case *f, dt_session_step step, const char *cmd,
                         double *ms) {
    dt_worker *w = fw_worker(f, step, cmd);
    if (!w) return DT_EWORKER;
    if (strcmp(cmd, "upload") == 0) f->mirror_set1[step] = 0;
    dt_err e;
    return fw_done(f, step, cmd, dt_protocol_copy(w, cmd, c->cfg->timeout_s, ms, &e), &e);
}

/* upload / download of the ranges `only`; a download also answers the digests of the
 * ranges `digest` into digests (dt_protocol_copy_ranges). */
static dt_status fw_copy_ranges(run_ctx *c, fw_case *f, dt_session_step step, const char *cmd,
                                const dt_byte_range *only, int nonly,
                                const dt_byte_range *digest, int ndigest, double *ms,
                                uint64_t *digests) {
    dt_worker *w = fw_worker(f, step, cmd);
    if (!w) return DT_EWORKER;
    dt_err e;
    return fw_done(f, step, cmd,
                   dt_protocol_copy_ranges(w, cmd, only, nonly, digest, ndigest,
                                           c->cfg->timeout_s, ms, digests, &e),
                   &e);
}

static void fw_release(run_ctx *c, fw_case *f, dt_session_step step) {
    dt_worker *w = fw_worker(f, step, "release");
    if (!w) return;
    dt_err e;
    fw_done(f, step, "release", dt_protocol_release(w, c->cfg->timeout_s, &e), &e);
}

/* One worker of one implementation (a step of f). */
typedef struct fw_step {
    fw_case *f;
    dt_session_step step;
} fw_step;

/* ---- checks --------------------------------------------------------------------------- */

/* One checked call's findings into a new check of f's case. */
static void check_record(fw_case *f, const char *when, const dt_arena_report *ar,
                         const dt_oracle_report *orp) {
    dt_check *k = dt_case_impl_check_add(f->ci);
    k->when = dt_xstrdup(when);
    k->ok = ar->ok && orp->ok;
    k->arena.guard_bytes_changed = ar->guard_bytes_changed;
    k->arena.input_elems_changed = ar->input_elems_changed;
    k->arena.output_unwritten = ar->output_unwritten;
    k->arena.output_nonfinite = ar->output_nonfinite;
    k->arena.first_problem = dt_xstrdup(ar->first_problem);
    dt_check_oracle *o = &k->oracle;
    o->ok = orp->ok;
    o->elements = orp->elements;
    o->failures = orp->failures;
    /* no infinity in results: a NaN/Inf output or an inexact exact op is recorded as null */
    o->max_abs_error = isfinite(orp->max_abs_error) ? orp->max_abs_error : NAN;
    o->max_budget_used = isfinite(orp->max_budget_used) ? orp->max_budget_used : NAN;
    if (!orp->ok) {
        o->has_first_failure = 1;
        o->first_row = orp->first_fail_row;
        o->first_col = orp->first_fail_col;
        o->first_value = isfinite(orp->first_fail_value) ? orp->first_fail_value : 0.0;
        o->first_ref = orp->first_fail_ref;
        o->first_bound = orp->first_fail_bound;
        o->first_text = dt_xstrdup(orp->first_failure);
    }
}

static void fw_cheat_name(const case_run *cr, fw_case *f, int cold, const dt_arena_report *ar,
                          const dt_oracle_report *orp, char *msg, size_t len);

/* One checked call: poison, upload, call, download, check arena and oracle. Appends a
 * check to the case; setup (round 0's cold call) gets the phase times. Returns DT_OK
 * when everything passed. when NULL: a cold call left unchecked (poison, upload, call:
 * no download, no check; case_setup). */
static dt_status fw_checked_call(run_ctx *c, fw_case *f, const char *when, const case_run *cr,
                                 int setup) {
    const int unchecked = when == NULL;
    if (unchecked) when = "cold";
    int cold = strcmp(when, "cold") == 0;
    /* input set 0 again (samples rotate them), outputs poisoned; the cold call's arena was
     * copied from set 0 just before the prepare: poisoning its outputs suffices (anything
     * else the prepare changed is the arena check's finding, not restored) */
    if (cr->h->cheat.nsets && !cold)
        dt_cheat_arm(&cr->h->cheat, 0, f->shm.base);
    else
        dt_arena_poison_outputs(&cr->h->L, f->shm.base);
    double up_ms = 0, down_ms = 0;
    int64_t ns = 0;
    if (fw_copy(c, f, DT_STEP_MAIN, "upload", &up_ms) != DT_OK) return DT_EWORKER;
    if (fw_run(c, f, DT_STEP_MAIN, cold ? "cold call" : "checked call", 1, &ns) != DT_OK)
        return DT_EWORKER;
    if (unchecked) return DT_OK;
    if (fw_copy(c, f, DT_STEP_MAIN, "download", &down_ms) != DT_OK) return DT_EWORKER;
    if (setup) {
        f->ci->setup_ms.upload = up_ms;
        f->ci->setup_ms.cold_call = (double)ns / 1e6;
        f->ci->setup_ms.download = down_ms;
    }
    dt_arena_report ar;
    dt_arena_check(&cr->h->L, f->shm.base, cr->h->pristine, &ar);
    dt_oracle_report orp;
    dt_oracle_check(&cr->h->ref, &cr->h->L, f->shm.base, &orp);
    check_record(f, when, &ar, &orp);
    if (!ar.ok || !orp.ok) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s", !ar.ok ? ar.first_problem : orp.first_failure);
        fw_cheat_name(cr, f, cold, &ar, &orp, msg, sizeof msg);
        fw_fail(f, DT_STEP_MAIN, cold ? "check after cold call" : "check after timing", msg);
        return DT_ECHECK;
    }
    return DT_OK;
}

/* ---- anti-cheat hooks (dt_cheat.h, docs/anti-cheat.md): per (case, implementation) -- */

/* A failed checked call's named check, if any: msg becomes "cheat.<name>: <reason>". */
static void fw_cheat_name(const case_run *cr, fw_case *f, int cold, const dt_arena_report *ar,
                          const dt_oracle_report *orp, char *msg, size_t len) {
    if (!cr->h->cheat.nsets) return;
    dt_cheat_obs o;
    memset(&o, 0, sizeof o);
    o.now.ar = *ar;
    o.now.orp = *orp;
    o.now.other_set_ok = -1;
    char reason[480];
    int k = dt_cheat_classify(&o, cold, reason, sizeof reason);
    if (k < 0) return;
    dt_cheat_mark(&f->ci->cheat, (dt_cheat_check)k, reason);
    snprintf(msg, len, "%s: %s", dt_cheat_check_name((dt_cheat_check)k), reason);
}

/* The worker computes in the shared arena (cpu, not the functional output policy): its
 * output must be there when the call returns, before any download. */
static int fw_direct(const run_ctx *c, const fw_case *f) {
    return strcmp(c->cfg->backend, "cpu") == 0 &&
           !(f->ci->output_policy && strcmp(f->ci->output_policy, "functional") == 0);
}

/* Checks by digest (docs/anti-cheat.md): the worker of step keeps a device mirror (not
 * direct) and its hello offers copy ranges and the dt-mix64-1 digest, unless
 * DUALTIME_CHEAT_DIGEST=0. */
static int fw_digest(const run_ctx *c, const fw_case *f, dt_session_step step) {
    if (c->digest_off || (step == DT_STEP_MAIN && fw_direct(c, f))) return 0;
    const dt_hello *h = &c->session->member[f->index].hello;
    return h->copy_ranges && h->copy_digest;
}

/* Checks by digest apply to this sample: the worker offers them and its mirror was last
 * given input set `set` whole (fw_sample_arm). */
static int fw_mirror_holds(const run_ctx *c, const fw_case *f, dt_session_step step, int set) {
    return fw_digest(c, f, step) && f->mirror_set1[step] == set + 1;
}

/* Before timed sample `index` (on the worker of step; device: a device sample): its input
 * set and poisoned outputs into f's arena, then upload. Returns the set, or -1 (no
 * anti-cheat state, a sample not checked (dt_cheat_sample_checked), or f failed). */
static int fw_sample_arm(run_ctx *c, const case_run *cr, fw_case *f, dt_session_step step,
                         int index, int device) {
    if (!cr->h->cheat.nsets || !(device ? dt_cheat_device_sample_checked(cr->h->L.total_bytes, index)
                                     : dt_cheat_sample_checked(cr->h->L.total_bytes, index)))
        return -1;
    int set = dt_cheat_sample_set(index);
    dt_cheat_begin(&f->ci->cheat, cr->h->cheat.nsets);
    double ms;
    if (fw_mirror_holds(c, f, step, set)) {
        /* the mirror still holds this set's inputs (each check since proved it by digest, or
         * found the change and failed f): the output's slot alone, poisoned again */
        const dt_cheat_case *cc = &cr->h->cheat;
        dt_cheat_arm_output(cc, set, f->shm.base);
        dt_byte_range slot = {cc->slot_off, cc->slot_len};
        return fw_copy_ranges(c, f, step, "upload", &slot, 1, NULL, 0, &ms, NULL) == DT_OK ? set
                                                                                         : -1;
    }
    dt_cheat_arm(&cr->h->cheat, set, f->shm.base);
    if (fw_copy(c, f, step, "upload", &ms) != DT_OK) return -1;
    f->mirror_set1[step] = set + 1;
    return set;
}

/* After timed sample `index` given input set `set`: the output read and checked (direct
 * workers before download, then re-poisoned and watched through download and, on the
 * first checked index, for DT_CHEAT_LATE_MS; device mirrors after download, re-read while still
 * poisoned), classified (dt_cheat_classify); a failure fails f, naming its check. */
static void fw_sample_check(run_ctx *c, const case_run *cr, fw_case *f, dt_session_step step,
                            int set, dt_scope scope, int index) {
    if (set < 0 || !f->ok) return;
    dt_cheat_obs o;
    memset(&o, 0, sizeof o);
    o.direct = step == DT_STEP_MAIN && fw_direct(c, f);
    double ms;
    if (o.direct) {
        dt_cheat_look_at(&cr->h->cheat, set, f->shm.base, &o.now);
        dt_arena_poison_outputs(&cr->h->L, f->shm.base);
        if (fw_copy(c, f, step, "download", &ms) != DT_OK) return;
        o.written_at_download = dt_cheat_output_written(&cr->h->L, f->shm.base);
        if (index == dt_cheat_first_checked(cr->h->L.total_bytes) && o.written_at_download == 0) {
            usleep(DT_CHEAT_LATE_MS * 1000);
            o.written_late = dt_cheat_output_written(&cr->h->L, f->shm.base);
        }
    } else {
        /* by digest: the output's slot copied back, the rest proved equal to the set's
         * pristine bytes on the device; a mismatch (or no digest) reads the whole arena */
        const dt_cheat_case *cc = &cr->h->cheat;
        int by_digest = 0;
        if (fw_mirror_holds(c, f, step, set)) {
            dt_byte_range slot = {cc->slot_off, cc->slot_len}, rest[2];
            uint64_t got[2];
            for (int r = 0; r < cc->nrest; r++) rest[r] = (dt_byte_range){cc->rest[r][0], cc->rest[r][1]};
            if (fw_copy_ranges(c, f, step, "download", &slot, 1, rest, cc->nrest, &ms, got) != DT_OK)
                return;
            by_digest = 1;
            for (int r = 0; r < cc->nrest; r++) by_digest &= got[r] == cc->digest[set][r];
        }
        if (by_digest) {
            dt_cheat_look_at_output(cc, set, f->shm.base, &o.now);
        } else {
            f->mirror_set1[step] = 0;
            if (fw_copy(c, f, step, "download", &ms) != DT_OK) return;
            dt_cheat_look_at(cc, set, f->shm.base, &o.now);
        }
        for (int t = 0; !o.now.ok && o.now.ar.output_unwritten > 0 && t < 20; t++) {
            usleep(DT_CHEAT_LATE_MS * 1000);
            if (fw_copy(c, f, step, "download", &ms) != DT_OK) return;
            dt_cheat_look_at(cc, set, f->shm.base, &o.late);
            o.has_late = 1;
            if (o.late.ok) break;
        }
        if (by_digest) f->ci->cheat.digest_checks++;
    }
    f->ci->cheat.sample_checks++;
    char reason[480], when[96], msg[600];
    int k = dt_cheat_classify(&o, 0, reason, sizeof reason);
    if (k == -2) return;
    snprintf(when, sizeof when, "sample %s #%d (input set %d)", dt_scope_name(scope), index, set);
    check_record(f, when, &o.now.ar, &o.now.orp);
    if (k >= 0) {
        dt_cheat_mark(&f->ci->cheat, (dt_cheat_check)k, reason);
        snprintf(msg, sizeof msg, "%s: %s", dt_cheat_check_name((dt_cheat_check)k), reason);
    } else {
        snprintf(msg, sizeof msg, "%s", reason);
    }
    fw_fail(f, step, "check after timed sample", msg);
}

/* After the case's round: the physics check (a catch fails f), then every check settled
 * (also in rounds that check no sample: large arenas after round 0). */
static void fw_cheat_finish(run_ctx *c, case_run *cr, fw_case *f) {
    dt_cheat_rec *rec = &f->ci->cheat;
    dt_cheat_begin(rec, cr->h->cheat.nsets);
    char reason[480];
    dt_cheat_limits lim;
    dt_cheat_limits_read(c->r, c->cfg->backend, &lim);
    int p = f->ok ? dt_cheat_physics(&lim, cr->cj, (size_t)c->ri[f->index], reason, sizeof reason)
                  : -1;
    if (p == 1) {
        dt_cheat_mark(rec, DT_CHEAT_FASTER_THAN_PHYSICS, reason);
        char msg[600];
        snprintf(msg, sizeof msg, "%s: %s", dt_cheat_check_name(DT_CHEAT_FASTER_THAN_PHYSICS),
                 reason);
        fw_fail(f, DT_STEP_MAIN, "physics", msg);
    } else if (rec->check[DT_CHEAT_FASTER_THAN_PHYSICS].status != DT_CHEAT_CAUGHT) {
        dt_cheat_result *ph = &rec->check[DT_CHEAT_FASTER_THAN_PHYSICS];
        ph->status = p == 0 ? DT_CHEAT_PASSED : DT_CHEAT_NOT_APPLICABLE;
        dt_record_set_str(&ph->note, f->ok ? reason : "the implementation failed first");
    }
    dt_cheat_settle(rec, fw_direct(c, f), c->cfg->backend, (int64_t)f->ci->n_checks);
}

/* ---- timing policy -------------------------------------------------------------------- */

static int64_t device_reps(const run_ctx *c, const fw_case *f);

/* Warm-ups, every worker of ws at once (nothing is timed; each worker still runs for the
 * whole time): a batch is sent to every warming worker, then every answer read, until ms
 * have passed. The main workers' batches grow 1, 2, 4, 8, 8, ... calls (SPEC §4 step 2); a
 * probe worker's (grow 0) are its device reps. The GPU's clocks and caches and each
 * module's first launches are what a warm-up is for; at once, the wall time is one warm-up
 * a case-round instead of one per worker. A worker that fails is failed with the stage and
 * drops out, the others go on; calls[k] counts the calls worker k answered. */
static void warm_at_once(run_ctx *c, const fw_step *ws, int n, const char *stage, double ms,
                         int grow, int64_t *calls) {
    int64_t t0 = dt_now_ns(), batch = 1;
    int sent[DT_SESSION_MAX_IMPLS * DT_STEP_COUNT];
    int64_t reps[DT_SESSION_MAX_IMPLS * DT_STEP_COUNT];
    dt_err e;
    for (int k = 0; k < n; k++) calls[k] = 0;
    while ((double)(dt_now_ns() - t0) < ms * 1e6) {
        int any = 0;
        for (int k = 0; k < n; k++) {
            fw_case *f = ws[k].f;
            int ready = f->ok && (ws[k].step == DT_STEP_MAIN || f->probe_prepared[ws[k].step]);
            dt_worker *w = ready ? fw_worker(f, ws[k].step, stage) : NULL;
            reps[k] = grow ? batch : device_reps(c, f);
            sent[k] = w && fw_done(f, ws[k].step, stage,
                                   dt_protocol_run_send(w, reps[k], 0, &e), &e) == DT_OK;
            any |= sent[k];
        }
        for (int k = 0; k < n; k++) {
            dt_worker *w = sent[k] ? fw_worker(ws[k].f, ws[k].step, stage) : NULL;
            int64_t ns;
            if (w && fw_done(ws[k].f, ws[k].step, stage,
                             dt_protocol_run_receive(w, c->cfg->timeout_s, &ns, &e), &e) == DT_OK)
                calls[k] += reps[k];
        }
        if (!any) break;
        if (batch < 8) batch *= 2;
    }
}

/* The main workers' warm-ups (--warmup-ms). On cuda all implementations at once since
 * session 6 (warm_at_once: the work is the GPU's, which runs both contexts' kernels, and
 * each worker's host thread has CPUs of its own); on cpu one after the other, because
 * the workers' threads would share the cores: at once on the 2-core VM a multithreaded
 * gemm made 127 warm-up calls in 150 ms instead of 5175. DUALTIME_WARMUP=serial|together
 * overrides (A/B, tests). Each warmed implementation records its own time and calls. */
static void warmups(run_ctx *c, fw_case *const *fs, int n) {
    fw_step ws[DT_SESSION_MAX_IMPLS];
    int64_t calls[DT_SESSION_MAX_IMPLS];
    const char *mode = getenv("DUALTIME_WARMUP");
    int serial = mode && *mode ? strcmp(mode, "together") != 0
                               : strcmp(c->cfg->backend, "cuda") != 0;
    for (int k = 0; k < n; k++) ws[k] = (fw_step){fs[k], DT_STEP_MAIN};
    for (int k = 0; k < n; k += serial ? 1 : n) {
        int m = serial ? 1 : n;
        progress(c, m == 1 ? fs[k]->id : NULL, "warmup");
        int64_t t0 = dt_now_ns();
        warm_at_once(c, &ws[k], m, "warmup", c->cfg->warmup_ms, 1, &calls[k]);
        double ms = (double)(dt_now_ns() - t0) / 1e6;
        for (int j = k; j < k + m; j++) {
            if (!fs[j]->ok) continue;
            fs[j]->ci->has_warmup = 1;
            fs[j]->ci->warmup_ms = ms;
            fs[j]->ci->warmup_calls = calls[j];
        }
    }
}

/* Seed rule: from R = 1, up to 8 attempts; stop when a batch lasts >= 0.8 * sample_ms or
 * R reaches the cap; else R <- clamp(floor(R * target / elapsed), R + 1, cap). The
 * attempts are recorded only when calibration completes. */
static dt_status fw_calibrate(run_ctx *c, fw_case *f) {
    double target_ns = c->cfg->sample_ms * 1e6;
    int64_t r = 1, cap = c->cfg->max_reps;
    dt_calib_attempt att[8];
    int n = 0;
    for (int a = 0; a < 8; a++) {
        int64_t ns;
        if (fw_run(c, f, DT_STEP_MAIN, "calibration", r, &ns) != DT_OK) return DT_EWORKER;
        att[n].reps = r;
        att[n++].us_per_call = (double)ns / 1e3 / (double)r;
        if ((double)ns >= 0.8 * target_ns || r >= cap) break;
        double want = floor((double)r * target_ns / (double)(ns > 0 ? ns : 1));
        int64_t next = want > (double)cap ? cap : (int64_t)want;
        if (next < r + 1) next = r + 1;
        if (next > cap) next = cap;
        r = next;
    }
    f->reps = r;
    for (int a = 0; a < n; a++) dt_case_impl_calib_add(f->ci, att[a].reps, att[a].us_per_call);
    f->ci->has_calibration = 1;
    f->ci->calib_reps = r;
    return DT_OK;
}

dt_status dt_run_env_check(dt_err *err) {
    const char *wm = getenv("DUALTIME_WARMUP"); /* warmups() reads it */
    if (wm && *wm && strcmp(wm, "serial") != 0 && strcmp(wm, "together") != 0)
        return dt_fail(err, DT_EINVAL, "DUALTIME_WARMUP=%s: expected serial or together", wm);
    const char *dg = getenv("DUALTIME_CHEAT_DIGEST"); /* dt_run reads it */
    if (dg && *dg && strcmp(dg, "0") != 0 && strcmp(dg, "1") != 0)
        return dt_fail(err, DT_EINVAL, "DUALTIME_CHEAT_DIGEST=%s: expected 0 or 1", dg);
    return DT_OK;
}

/* Warm-ups then calibrations of every implementation still ok in cr. A case calibrates R
 * once, in the first round it runs in; later rounds (and a resume's) reuse the recorded R,
 * so every round's batches have the same length and the calibration's calls (3.3 s of a
 * default CUDA run's second round on the H200, session 7) are not spent again. */
static void warm_and_calibrate(run_ctx *c, case_run *cr) {
    fw_case *fs[DT_SESSION_MAX_IMPLS];
    int n = 0;
    for (int i = 0; i < c->n; i++)
        if (cr->fw[i].ok) fs[n++] = &cr->fw[i];
    if (n > 0) warmups(c, fs, n);
    for (int k = 0; k < n; k++) {
        if (!fs[k]->ok) continue;
        if (fs[k]->ci->has_calibration && fs[k]->ci->calib_reps > 0) {
            fs[k]->reps = fs[k]->ci->calib_reps;
            continue;
        }
        progress(c, fs[k]->id, "calibration");
        fw_calibrate(c, fs[k]);
    }
}

/* A host sample (or a floor sample: reps 0) at the next position. */
static dt_sample host_sample(run_ctx *c, double us, int64_t reps, int round, int index) {
    dt_sample s = dt_sample_empty();
    s.us = us;
    s.reps = reps;
    s.round = round;
    s.index = index;
    s.position = c->position++;
    return s;
}

/* One floor sample (docs/protocol.md, "floor": the candidate worker's empty call, primed
 * like a sample) into the case's floor samples, paired by (round, index) with the single
 * samples that follow it. A worker without a floor call answers ok:false: that is
 * recorded once (floor_unavailable) and no more are asked for in this run. */
static void take_floor_sample(run_ctx *c, case_run *cr, fw_case *f, int i) {
    dt_worker *w = f->w[DT_STEP_MAIN];
    if (c->floor_off || !f->ok || !dt_worker_alive(w)) return;
    dt_err e;
    progress(c, f->id, "floor samples");
    int64_t ns = 0;
    if (dt_protocol_floor(w, c->cfg->prime, c->cfg->timeout_s, &ns, &e) != DT_OK) {
        if (!dt_worker_alive(w)) {
            fw_fail(f, DT_STEP_MAIN, "floor sample", e.msg);
        } else {
            c->floor_off = 1;
            char line[DT_ERR_LEN + 64];
            snprintf(line, sizeof line, "%s worker: %s", f->id, e.msg);
            dt_record_set_str(&c->r->floor_unavailable, line);
        }
        return;
    }
    if (cr->cj->floor_impl < 0) cr->cj->floor_impl = c->ri[f->index];
    dt_sample s = host_sample(c, (double)ns / 1e3, 0, cr->round, i);
    dt_samples_push(&cr->cj->floor, &s);
}

/* ---- energy (issue 15): NVML's total-energy counter around each e2e batch sample ---- */

/* The start of one energy window: 1 when the counter was read. */
static int energy_begin(const run_ctx *c, unsigned long long *mj, int64_t *t0_ns) {
    if (!c->cfg->clocks || !dt_clocks_energy_mj(c->cfg->clocks, mj, NULL, 0)) return 0;
    *t0_ns = dt_now_ns();
    return 1;
}

/* The end of the window: adds its joules, seconds and calls to f's case record. A
 * window's delta is quantized by the counter's update rate; summing every window of every
 * round before dividing averages that out. */
static void energy_end(const run_ctx *c, fw_case *f, unsigned long long mj0, int64_t t0_ns,
                       int64_t calls) {
    unsigned long long mj1;
    int64_t t1_ns = dt_now_ns();
    if (!dt_clocks_energy_mj(c->cfg->clocks, &mj1, NULL, 0) || mj1 < mj0 || calls <= 0) return;
    dt_case_impl *ci = f->ci;
    if (!isfinite(ci->energy_j)) ci->energy_j = ci->energy_window_s = 0;
    ci->energy_j += (double)(mj1 - mj0) / 1e3;
    ci->energy_window_s += (double)(t1_ns - t0_ns) / 1e9;
    ci->energy_calls += calls;
    ci->has_energy = 1;
    ci->energy_j_per_call = ci->energy_j / (double)ci->energy_calls;
    ci->avg_power_w = ci->energy_window_s > 0 ? ci->energy_j / ci->energy_window_s : NAN;
    dt_record_set_str(&ci->energy_reason, NULL);
}

/* Why an implementation without energy readings has none: the cpu backend, no NVML, or
 * NVML without the energy counter. Leaves accumulated readings alone. */
static void energy_null_reasons(const run_ctx *c, case_run *cr) {
    char why[DT_ERR_LEN];
    unsigned long long mj;
    const char *reason = strcmp(c->cfg->backend, "cuda") != 0 ? "cpu backend"
                         : !c->cfg->clocks ? "NVML not available (see environment.nvml)"
                         : dt_clocks_energy_mj(c->cfg->clocks, &mj, why, sizeof why) ? NULL : why;
    for (int i = 0; reason && i < c->n; i++) {
        dt_case_impl *ci = cr->fw[i].ci;
        if (!ci || (ci->has_energy && isfinite(ci->energy_j_per_call))) continue;
        ci->has_energy = 1;
        dt_record_set_str(&ci->energy_reason, reason);
    }
}

/* Takes samples of one scope for every implementation, at each index in the order of
 * dt_latin_order (ABBA with two); flip reverses it (alternate rounds). single: one call
 * per sample, each index's samples preceded by a floor sample on the first candidate's
 * worker. */
static void take_samples(run_ctx *c, case_run *cr, int single) {
    dt_scope scope = single ? DT_SCOPE_E2E_SINGLE : DT_SCOPE_E2E_BATCH;
    for (int i = 0; i < c->cfg->samples; i++) {
        if (single) take_floor_sample(c, cr, &cr->fw[c->n > 1 ? 1 : 0], i);
        int order[DT_SESSION_MAX_IMPLS];
        dt_latin_order(c->n, i, cr->flip, order);
        for (int j = 0; j < c->n; j++) {
            fw_case *f = &cr->fw[order[j]];
            if (!f->ok) continue;
            const char *phase = single ? "single samples" : "batch samples";
            int64_t reps = single ? 1 : f->reps, ns = 0, e_t0 = 0;
            unsigned long long e_mj = 0;
            /* the trace splits a sample's host work from its request (trace only) */
            trace_line(c, f->id, "sample checks");
            int set = fw_sample_arm(c, cr, f, DT_STEP_MAIN, i, 0); /* anti-cheat: inputs, poison */
            if (set < 0 && !f->ok) continue;
            /* NVML's energy counter costs ~3 ms a read on the H200 (session 5): read
             * around every DT_RUN_ENERGY_EVERY-th batch sample, not each */
            int energy = !single && i % DT_RUN_ENERGY_EVERY == 0 && c->cfg->clocks;
            if (energy) trace_line(c, f->id, "energy reads");
            energy = energy && energy_begin(c, &e_mj, &e_t0);
            progress(c, f->id, phase);
            /* untimed calls right before (--prime, default 1), in the same request: on a
             * GPU shared by two worker processes they take the context switch away from
             * the sample (docs/protocol.md, "Priming") */
            if (fw_run_primed(c, f, DT_STEP_MAIN, dt_scope_name(scope), reps, c->cfg->prime,
                              &ns) != DT_OK)
                continue;
            if (energy) {
                trace_line(c, f->id, "energy reads");
                energy_end(c, f, e_mj, e_t0, reps + c->cfg->prime);
            }
            dt_sample s = host_sample(c, (double)ns / 1e3 / (double)reps, reps, cr->round, i);
            dt_samples_push(&f->ci->samples[scope], &s);
            trace_line(c, f->id, "sample checks");
            fw_sample_check(c, cr, f, DT_STEP_MAIN, set, scope, i);
        }
    }
}

/* ---- device phase ---------------------------------------------------------------------- */

static dt_status fw_device_scope(run_ctx *c, fw_case *f, dt_session_step step, int scope,
                                 int hold, int64_t reps, const char *stage, dt_sample *s);

/* One device region on the worker of step (main: control or dispatch; a probe step: a
 * probe of that step's kind), held or not. A failure (a held window the watchdog had to
 * release included) fails f with stage and the worker's reason, like any device sample. */
static dt_status fw_device(run_ctx *c, fw_case *f, dt_session_step step, int hold,
                           int64_t reps, const char *stage, dt_sample *s) {
    return fw_device_scope(c, f, step,
                           step != DT_STEP_MAIN ? DT_PROTOCOL_DEVICE_PROBE
                                                : DT_PROTOCOL_DEVICE_CONTROL,
                           hold, reps, stage, s);
}

/* --cache cold: what the worker echoed for a window of reps calls, checked
 * (dt_cache_window_cold) into f's record; the first doubt is kept as warm_reason. */
static void cache_confirm(run_ctx *c, fw_case *f, int64_t reps, const dt_protocol_device_extra *x) {
    dt_case_impl *ci = f->ci;
    int64_t bytes = f->req.layout ? f->req.layout->total_bytes : 0;
    char why[300];
    int cold = x->cache_cold &&
               dt_cache_window_cold(bytes, x->copies, reps, c->cfg->l2_bytes, x->flushed_bytes,
                                    why, sizeof why);
    if (!x->cache_cold)
        snprintf(why, sizeof why, "the %s worker did not confirm a cold cache (its device "
                 "answer has no result.cache with state cold)", f->id);
    if (!ci->cache.present) {
        ci->cache.present = 1;
        ci->cache.copies = 0;
    }
    if (x->copies > ci->cache.copies) ci->cache.copies = x->copies;
    ci->cache.copy_bytes = bytes;
    ci->cache.l2_bytes = c->cfg->l2_bytes;
    if (x->flushed_bytes > 0) ci->cache.flush_bytes = x->flushed_bytes;
    if (!cold && !ci->cache.warm_reason) dt_record_set_str(&ci->cache.warm_reason, why);
}

/* One device window of scope (DT_PROTOCOL_DEVICE_*) on the worker of step; with --cache
 * cold the request carries the flush and the rotation and the answer's echo is checked.
 * A graph the worker cannot capture comes back DT_EUNAVAIL with the reason recorded in
 * f's graph_unavailable (f stays ok). */
static dt_status fw_device_scope(run_ctx *c, fw_case *f, dt_session_step step, int scope,
                                 int hold, int64_t reps, const char *stage, dt_sample *s) {
    int probe = scope == DT_PROTOCOL_DEVICE_PROBE;
    dt_worker *w = fw_worker(f, step, stage);
    if (!w) return DT_EWORKER;
    int64_t bytes = f->req.layout ? f->req.layout->total_bytes : 0;
    dt_protocol_device_opts o = {scope, hold, reps, kind_name(probe ? step : f->probe_step),
                                 c->cfg->prime, c->cfg->cache_cold,
                                 dt_cache_copies(bytes, c->cfg->l2_bytes, reps),
                                 dt_cache_flush_bytes(c->cfg->l2_bytes)};
    dt_protocol_device_extra x;
    dt_err e;
    dt_status st = dt_protocol_device_ex(w, &o, c->cfg->timeout_s, s, &x, &e);
    if (st == DT_OK && x.unavailable) {
        f->graph_off = 1;
        if (!f->ci->graph_unavailable) dt_record_set_str(&f->ci->graph_unavailable, x.unavailable);
        dt_protocol_device_extra_free(&x);
        return DT_EUNAVAIL;
    }
    if (st == DT_OK && c->cfg->cache_cold) cache_confirm(c, f, reps, &x);
    dt_protocol_device_extra_free(&x);
    return fw_done(f, step, stage, st, &e);
}

/* One graph_batch sample of f at index i (the held replay of a graph of reps calls), unless
 * the scope is off for f; an unavailable graph turns it off for the case. */
static void take_graph_sample(run_ctx *c, case_run *cr, fw_case *f, int64_t reps, int i) {
    if (!c->cfg->graph || f->graph_off || f->ci->graph_unavailable || !f->ok) return;
    progress(c, f->id, dt_scope_name(DT_SCOPE_GRAPH_BATCH));
    dt_sample s;
    if (fw_device_scope(c, f, DT_STEP_MAIN, DT_PROTOCOL_DEVICE_GRAPH, 1, reps, "graph sample",
                        &s) != DT_OK)
        return;
    s.round = cr->round;
    s.index = i;
    s.position = c->position++;
    dt_samples_push(&f->ci->samples[DT_SCOPE_GRAPH_BATCH], &s);
}

/* --graph without device windows: the reason for every impl of the case. */
static void graph_unavailable_all(const run_ctx *c, case_run *cr) {
    if (!c->cfg->graph || c->cfg->device_timing) return;
    const char *why = strcmp(c->cfg->backend, "cuda") != 0 ? DT_GRAPH_CPU_REASON
                                                           : DT_GRAPH_NO_TIMING_REASON;
    for (int i = 0; i < c->n; i++)
        if (!cr->fw[i].ci->graph_unavailable)
            dt_record_set_str(&cr->fw[i].ci->graph_unavailable, why);
}

/* Starts (if needed) the probe worker of f for step (its kind) and sends it the prepare
 * of the same arena (the probe workers of a case prepare at once). 1 when sent. */
static int fw_probe_send(run_ctx *c, fw_case *f, dt_session_step step) {
    dt_err e;
    int started = 0;
    if (dt_session_ready(c->session, f->index, step, &started, &e) != DT_OK) {
        fw_fail(f, step, "start probe worker", e.msg);
        return 0;
    }
    dt_worker *w;
    dt_status st;
    if (started) {
        /* A dedicated probe process: CUPTI stays attached between probe regions, so the
         * warmup and prime calls pay its setup (docs/device-timing.md, persistent mode). */
        const char *stage = "probe worker probe_process";
        if (!(w = fw_worker(f, step, stage))) return 0;
        st = dt_protocol_probe_process(w, kind_name(step), c->cfg->timeout_s, &e);
        if (fw_done(f, step, stage, st, &e) != DT_OK) return 0;
    }
    if (!(w = fw_worker(f, step, "probe worker prepare"))) return 0;
    return fw_done(f, step, "probe worker prepare", dt_protocol_prepare_send(w, &f->req, &e),
                   &e) == DT_OK;
}

/* The probe worker's prepare answer (fw_probe_send sent it), then its upload. */
static dt_status fw_probe_receive(run_ctx *c, fw_case *f, dt_session_step step) {
    dt_err e;
    dt_worker *w = fw_worker(f, step, "probe worker prepare");
    if (!w) return DT_EWORKER;
    dt_status st = dt_protocol_prepare_receive(w, c->cfg->timeout_s, NULL, &e);
    if ((st = fw_done(f, step, "probe worker prepare", st, &e)) == DT_OK) {
        f->probe_prepared[step] = 1; /* release owed */
        if (!f->ok) return DT_EWORKER; /* its other probe worker failed: answer read, no more */
        double ms;
        st = fw_copy(c, f, step, "upload", &ms);
    }
    return st;
}

/* The probe workers' warm-ups (warm_at_once, all at once), until min(--warmup-ms,
 * DT_RUN_PROBE_WARMUP_MS) have passed. The GPU is warm from the main workers' samples just
 * before; a probe worker's own warm-up pays CUPTI's first launches of the module: capped
 * (the default run's budget). */
static void probe_warmups_at_once(run_ctx *c, const fw_step *ws, int n) {
    double wms = c->cfg->warmup_ms < DT_RUN_PROBE_WARMUP_MS ? c->cfg->warmup_ms
                                                           : DT_RUN_PROBE_WARMUP_MS;
    int64_t calls[DT_SESSION_MAX_IMPLS * DT_STEP_COUNT];
    warm_at_once(c, ws, n, "probe worker warmup", wms, 0, calls);
}

static void probe_warmups(run_ctx *c, const fw_step *ws, int n) {
    /* DUALTIME_PROBE_WARMUP=serial: one worker after the other, as before session 5 (A/B) */
    const char *mode = getenv("DUALTIME_PROBE_WARMUP");
    if (mode && strcmp(mode, "serial") == 0 && n > 1) {
        for (int k = 0; k < n; k++) probe_warmups_at_once(c, &ws[k], 1);
        return;
    }
    probe_warmups_at_once(c, ws, n);
}

static double median3(double *x, int n) {
    dt_stats_sort(x, (size_t)n);
    return dt_stats_quantile_sorted(x, (size_t)n, 0.5);
}

/* Probe kind auto (docs/device-workflow.md, "Probe kind auto"): DT_RUN_PILOT_PAIRS
 * indexes of a held control batch and a held probe batch of each kind, in the rotated
 * order of dt_run_device_order (control, concurrent, serialized), both probe workers
 * prepared. Each kind's probe/control is the median of its paired ratios (recorded); the
 * kind whose ratio is closer to 1 (smaller |log ratio|; a tie keeps concurrent) takes the
 * samples, the other worker's case is released. Pilot samples are not stored. */
static void fw_pilot(run_ctx *c, fw_case *f, int64_t reps) {
    static const dt_session_step k_step[3] = {DT_STEP_MAIN, DT_STEP_PROBE, DT_STEP_PROBE_SERIAL};
    static const char *const k_stage[3] = {"pilot control sample", "pilot probe sample (concurrent)",
                                           "pilot probe sample (serialized)"};
    double ratio[2][DT_RUN_PILOT_PAIRS];
    for (int i = 0; i < DT_RUN_PILOT_PAIRS; i++) {
        int order[3];
        double us[3] = {0, 0, 0};
        dt_run_device_order(i, order);
        for (int q = 0; q < 3; q++) {
            int slot = order[q];
            progress(c, f->id, "probe kind pilot");
            dt_samples tmp = {0};
            dt_sample s;
            if (fw_device(c, f, k_step[slot], 1, reps, k_stage[slot], &s) != DT_OK) return;
            us[slot] = s.us;
            dt_samples_push(&tmp, &s);
            dt_samples_free(&tmp);
        }
        ratio[0][i] = us[1] / us[0];
        ratio[1][i] = us[2] / us[0];
    }
    f->ci->pilot_poc_concurrent = median3(ratio[0], DT_RUN_PILOT_PAIRS);
    f->ci->pilot_poc_serialized = median3(ratio[1], DT_RUN_PILOT_PAIRS);
    int serial = fabs(log(f->ci->pilot_poc_serialized)) < fabs(log(f->ci->pilot_poc_concurrent));
    f->probe_step = serial ? DT_STEP_PROBE_SERIAL : DT_STEP_PROBE;
    dt_session_step other = serial ? DT_STEP_PROBE : DT_STEP_PROBE_SERIAL;
    if (f->probe_prepared[other] && dt_worker_alive(f->w[other])) fw_release(c, f, other);
    f->probe_prepared[other] = 0;
}

/* The probe workers of f for this round: the kind of an earlier round (recorded), else
 * the forced kind, else (auto) both, piloted. 1: pilot (both kinds). */
static int fw_probe_plan(run_ctx *c, fw_case *f) {
    if (f->ci->probe_kind)
        f->probe_step = strcmp(f->ci->probe_kind, "serialized") == 0 ? DT_STEP_PROBE_SERIAL
                                                                      : DT_STEP_PROBE;
    else if (c->cfg->probe_kind == DT_RUN_PROBE_AUTO)
        return 1;
    else
        f->probe_step = c->cfg->probe_kind == DT_RUN_PROBE_SERIALIZED ? DT_STEP_PROBE_SERIAL
                                                                      : DT_STEP_PROBE;
    return 0;
}

/* Every implementation's probe workers (fw_probe_plan): all prepares sent, then each
 * answered, uploaded and warmed; then the pilots (timed: nothing else runs). Records the
 * kind used. */
static void case_probe_setup(run_ctx *c, case_run *cr) {
    int pilot[DT_SESSION_MAX_IMPLS] = {0}, sent[DT_SESSION_MAX_IMPLS][DT_STEP_COUNT];
    memset(sent, 0, sizeof sent);
    for (int i = 0; i < c->n; i++) {
        fw_case *f = &cr->fw[i];
        if (!f->ok) continue;
        progress(c, f->id, "probe worker prepare");
        pilot[i] = fw_probe_plan(c, f);
        if (pilot[i]) {
            sent[i][DT_STEP_PROBE] = fw_probe_send(c, f, DT_STEP_PROBE);
            if (f->ok) sent[i][DT_STEP_PROBE_SERIAL] = fw_probe_send(c, f, DT_STEP_PROBE_SERIAL);
        } else {
            sent[i][f->probe_step] = fw_probe_send(c, f, f->probe_step);
        }
    }
    fw_step warm[DT_SESSION_MAX_IMPLS * DT_STEP_COUNT];
    int nw = 0;
    for (int i = 0; i < c->n; i++) {
        fw_case *f = &cr->fw[i];
        progress(c, f->id, "probe worker prepare");
        for (int k = DT_STEP_PROBE; k < DT_STEP_COUNT; k++) /* every answer sent for is read */
            if (sent[i][k] && dt_worker_alive(f->w[k]) &&
                fw_probe_receive(c, f, (dt_session_step)k) == DT_OK)
                warm[nw++] = (fw_step){f, (dt_session_step)k};
    }
    if (nw) progress(c, NULL, "probe worker warmup");
    probe_warmups(c, warm, nw);
    for (int i = 0; i < c->n; i++) {
        fw_case *f = &cr->fw[i];
        if (pilot[i] && f->ok && f->probe_prepared[DT_STEP_PROBE] &&
            f->probe_prepared[DT_STEP_PROBE_SERIAL])
            fw_pilot(c, f, device_reps(c, f));
        if (f->ok) dt_record_set_str(&f->ci->probe_kind, kind_name(f->probe_step));
    }
}

/* Calls per device batch window (SPEC §4): R_dev = min(R, --device-reps cap). */
static int64_t device_reps(const run_ctx *c, const fw_case *f) {
    return f->reps < c->cfg->device_reps_cap ? f->reps : c->cfg->device_reps_cap;
}

/* Device samples: per index i, implementations in the order of dt_latin_order (ABBA
 * with two), and within one the held control, the held probe and the unheld dispatch in
 * dt_run_device_order(i) (control before probe on even i, as pairs always were). */
static void take_device_samples(run_ctx *c, case_run *cr, int single) {
    static const dt_scope k_scope[2][3] = {
        {DT_SCOPE_CONTROL_BATCH, DT_SCOPE_PROBE_BATCH, DT_SCOPE_DISPATCH_BATCH},
        {DT_SCOPE_CONTROL_SINGLE, DT_SCOPE_PROBE_SINGLE, DT_SCOPE_DISPATCH_SINGLE}};
    static const char *const k_stage[3] = {"control sample", "probe sample", "dispatch sample"};
    for (int i = 0; i < c->cfg->samples; i++) {
        int impl_order[DT_SESSION_MAX_IMPLS];
        dt_latin_order(c->n, i, cr->flip, impl_order);
        for (int j = 0; j < c->n; j++) {
            fw_case *f = &cr->fw[impl_order[j]];
            if (!f->ok) continue;
            int64_t reps = single ? 1 : device_reps(c, f);
            int order[3];
            dt_run_device_order(i, order);
            /* graph_batch: first on odd indexes, last on even ones */
            if (!single && (i & 1)) take_graph_sample(c, cr, f, reps, i);
            for (int q = 0; q < 3; q++) {
                int slot = order[q];
                dt_scope scope = k_scope[single][slot];
                dt_session_step step = slot == DT_RUN_SLOT_PROBE ? f->probe_step : DT_STEP_MAIN;
                dt_sample s;
                trace_line(c, f->id, "sample checks"); /* trace only, as in take_samples */
                int set = fw_sample_arm(c, cr, f, step, i, 1); /* anti-cheat: indexes 0..2 */
                if (set < 0 && !f->ok) break;
                progress(c, f->id, dt_scope_name(scope));
                if (fw_device(c, f, step, slot != DT_RUN_SLOT_DISPATCH, reps, k_stage[slot], &s) !=
                    DT_OK)
                    break;
                s.round = cr->round;
                s.index = i;
                s.position = c->position++;
                dt_samples_push(&f->ci->samples[scope], &s);
                trace_line(c, f->id, "sample checks");
                fw_sample_check(c, cr, f, step, set, scope, i);
                if (!f->ok) break;
            }
            if (!single && !(i & 1)) take_graph_sample(c, cr, f, reps, i);
        }
    }
}

/* E2E decomposition (issue 13, src/stats/dt_decomp.h): DT_RUN_DECOMP_SAMPLES unheld
 * single-call probe samples per implementation and round on its probe worker, the
 * implementations alternating. A worker that refuses one and stays alive leaves the
 * reason (the decomposition is then unavailable there); one that dies fails its case
 * like any sample. */
#define DT_RUN_DECOMP_SAMPLES 3
static void take_decomp_samples(run_ctx *c, case_run *cr) {
    for (int k = 0; k < c->n * DT_RUN_DECOMP_SAMPLES; k++) {
        int order[DT_SESSION_MAX_IMPLS];
        dt_latin_order(c->n, k / c->n, cr->flip, order);
        fw_case *f = &cr->fw[order[k % c->n]];
        if (!f->ok || (f->ci->decomp.unavailable && f->ci->decomp.n == 0)) continue;
        dt_worker *w = fw_worker(f, f->probe_step, "decomposition sample");
        if (!w) continue;
        progress(c, f->id, "decomposition");
        dt_decomp_raw d;
        dt_err e;
        if (dt_protocol_decomp(w, kind_name(f->probe_step), c->cfg->prime, c->cfg->timeout_s,
                               &d, &e) != DT_OK) {
            if (dt_worker_alive(w)) dt_decomp_set_unavailable(&f->ci->decomp, e.msg);
            else fw_fail(f, f->probe_step, "decomposition sample", e.msg);
            continue;
        }
        d.round = cr->round;
        d.position = c->position++;
        dt_decomp_set_push(&f->ci->decomp, &d);
    }
}

/* ---- the case in the record ------------------------------------------------------------- */

/* Adds the case of spec to the record: op, shape, tolerance, input hashes. */
static dt_case *case_new(run_ctx *c, const dt_case_spec *spec, dt_casehost *h) {
    const dt_op_info *info = dt_op_get(spec->op);
    dt_case *cj = dt_record_case_add(c->r, spec->id);
    cj->op = spec->op;
    cj->m = spec->m;
    cj->n = spec->n;
    cj->k = spec->k;
    cj->views = spec->views;
    cj->dtype = spec->dtype == DT_BF16 ? DT_ELEM_BF16 : spec->dtype == DT_F16 ? DT_ELEM_F16
                                                                              : DT_ELEM_F32;
    dt_record_set_str(&cj->backend, c->cfg->backend);
    cj->valid = 1;
    const dt_tolerance tol = dt_op_tolerance(spec->op, spec->dtype);
    cj->atol = tol.atol;
    cj->rtol = tol.rtol;
    dt_record_set_str(&cj->tol_scale, info->scale_doc);
    const dt_case_layout *L = &h->L;
    if (h->pristine && !h->want_sha) dt_casehost_hash_inputs(h); /* made without them */
    for (int j = 0; h->pristine && j < h->n_inputs; j++) /* no inputs: none could be made */
        dt_case_input_add(cj, L->buf[h->input_buf[j]].name, h->input_hex[j],
                          L->buf[h->input_buf[j]].rows, L->buf[h->input_buf[j]].cols);
    return cj;
}

static int source_known(const dt_record *r, const char *sha) {
    for (size_t j = 0; j < r->prov.n_sources; j++)
        if (r->prov.sources[j].sha256 && strcmp(r->prov.sources[j].sha256, sha) == 0) return 1;
    return 0;
}

/* Stores captured sources (once) under DIR/sources and records them in provenance. */
static void keep_sources(run_ctx *c, fw_case *f, const dt_protocol_prepare_answer *ans) {
    for (size_t i = 0; i < ans->n_sources; i++) {
        const dt_protocol_source *s = &ans->sources[i];
        if (!s->sha256) continue;
        dt_strv_push(&f->ci->sources, s->sha256);
        if (source_known(c->r, s->sha256)) continue;
        dt_prov_source *p = dt_record_prov_source_add(c->r, s->sha256, s->name, f->id);
        for (size_t k = 0; k < s->options.n; k++) dt_strv_push(&p->options, s->options.v[k]);
        if (!c->cfg->capture_sources || !s->text) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/sources", c->cfg->output_dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/sources/%s.cu", c->cfg->output_dir, s->sha256);
        FILE *fp = fopen(path, "wx");
        if (fp) {
            fputs(s->text, fp);
            fclose(fp);
        }
    }
}

/* ---- one case ------------------------------------------------------------------------- */

/* Arena and the prepare request of one implementation (sent: the workers of a case
 * prepare at once; nothing is timed then). 1 when sent. */
static int fw_setup_send(run_ctx *c, case_run *cr, fw_case *f) {
    const dt_run_config *cfg = c->cfg;
    dt_err e;
    int restarted;
    if (dt_session_ready(c->session, f->index, DT_STEP_MAIN, &restarted, &e) != DT_OK) {
        fw_fail(f, DT_STEP_MAIN, "restart worker", e.msg);
        return 0;
    }
    dt_casehost *h = cr->h;
    if (f->index < h->nshm && h->shm[f->index].base) { /* made with the host side */
        f->shm = h->shm[f->index];
        memset(&h->shm[f->index], 0, sizeof h->shm[f->index]); /* taken */
    } else {
        if (dt_shm_create(&f->shm, h->L.total_bytes, &e) != DT_OK) {
            fw_fail(f, DT_STEP_MAIN, "shared memory", e.msg);
            return 0;
        }
        progress(c, f->id, "arena copy");
        dt_hostpass_copy(f->shm.base, h->pristine, (size_t)h->L.total_bytes);
    }
    progress(c, f->id, "prepare");
    const dt_case_spec *spec = cr->spec;
    dt_protocol_prepare_req q = {spec->id, dt_op_get(spec->op)->name, cfg->backend, spec->m, spec->n,
                        spec->k, f->shm.name, &h->L, cfg->capture_sources};
    f->req = q;
    dt_worker *w = fw_worker(f, DT_STEP_MAIN, "prepare");
    return w && fw_done(f, DT_STEP_MAIN, "prepare", dt_protocol_prepare_send(w, &f->req, &e),
                        &e) == DT_OK;
}

/* The prepare answer of one implementation (fw_setup_send sent it), its setup record. */
static void fw_setup_receive(run_ctx *c, case_run *cr, fw_case *f) {
    dt_err e;
    progress(c, f->id, "prepare");
    dt_worker *w = fw_worker(f, DT_STEP_MAIN, "prepare");
    if (!w) return;
    dt_protocol_prepare_answer ans;
    dt_status st = dt_protocol_prepare_receive(w, c->cfg->timeout_s, &ans, &e);
    if (fw_done(f, DT_STEP_MAIN, "prepare", st, &e) != DT_OK) return;
    f->prepared = 1;
    if (cr->round == 0) {
        f->ci->setup_ms.compile = ans.compile_ms;
        f->ci->setup_ms.alloc = ans.alloc_ms;
        if (ans.output_policy) dt_record_set_str(&f->ci->output_policy, ans.output_policy);
        if (ans.implementation) dt_record_set_str(&f->ci->implementation, ans.implementation);
        f->ci->emulated = ans.emulated;
        keep_sources(c, f, &ans);
    }
    dt_protocol_prepare_answer_free(&ans);
}

/* 1 when f's record already holds a checked cold call (an earlier round, or the run this
 * one resumes). */
static int cold_checked(const fw_case *f) {
    for (size_t k = 0; k < f->ci->n_checks; k++)
        if (f->ci->checks[k].when && strcmp(f->ci->checks[k].when, "cold") == 0) return 1;
    return 0;
}

/* Arena, prepare and cold check of every implementation: the prepares at once, then each
 * cold call alone (it is timed: the setup phases). The cold call of a later round is the
 * worker's first call after its prepare again, but untimed (setup_ms are the first
 * round's) and unchecked: the check after timing covers that round's outputs (the two
 * checks of a GiB output cost ~0.35 s each on the H200 host; session 8). */
static void case_setup(run_ctx *c, case_run *cr) {
    int sent[DT_SESSION_MAX_IMPLS] = {0};
    for (int i = 0; i < c->n; i++)
        if (cr->fw[i].ok) sent[i] = fw_setup_send(c, cr, &cr->fw[i]);
    for (int i = 0; i < c->n; i++) /* every answer sent for is read: never left in a pipe */
        if (sent[i]) fw_setup_receive(c, cr, &cr->fw[i]);
    for (int i = 0; i < c->n; i++) {
        fw_case *f = &cr->fw[i];
        if (!f->prepared || !f->ok) continue;
        const int check = !cold_checked(f);
        progress(c, f->id, check ? "cold call + check" : "cold call (unchecked)");
        fw_checked_call(c, f, check ? "cold" : NULL, cr, cr->round == 0);
    }
}

/* The timed part: host samples, then (device timing) control and probe samples, the
 * clocks bracketing them. */
static void timed_part(run_ctx *c, case_run *cr) {
    const dt_run_config *cfg = c->cfg;
    /* clocks bracket the timed part; warmup and calibration just ran the GPU, so both
     * snapshots see working clocks, not the idle clocks of the pause between cases */
    dt_clock_snapshot before, after;
    if (cfg->clocks) dt_clocks_read(cfg->clocks, &before);
    energy_null_reasons(c, cr);
    graph_unavailable_all(c, cr);
    take_samples(c, cr, 0);
    take_samples(c, cr, 1);
    if (cfg->device_timing) {
        case_probe_setup(c, cr);
        take_device_samples(c, cr, 0);
        take_device_samples(c, cr, 1);
        take_decomp_samples(c, cr);
    } else {
        for (int i = 0; i < c->n; i++) /* said in results.md (src/format/dt_format_decomp.h) */
            dt_decomp_set_unavailable(&cr->fw[i].ci->decomp, strcmp(cfg->backend, "cpu") == 0
                                          ? "the cpu backend has no CUPTI timestamps"
                                          : "device timing is off (--no-device-timing)");
    }
    if (cfg->clocks) {
        dt_clocks_read(cfg->clocks, &after);
        dt_clocks_record(cr->cj, cr->round, &before, &after);
    }
}

/* Checked call after timing, releases, validity and the round's bookkeeping. */
/* Every worker's release of the case sent (each answer read in case_finish): the workers
 * free their memory (device buffers, the arena's host registration: hundreds of ms for a
 * GiB) at once, while the run loop hashes the outputs it already holds. */
static void case_release_send(run_ctx *c, case_run *cr) {
    dt_err e;
    cr->release_sent = 1;
    for (int i = 0; i < c->n; i++) {
        fw_case *f = &cr->fw[i];
        for (int k = 0; k < DT_STEP_COUNT; k++) {
            int owed = k == DT_STEP_MAIN ? f->prepared : f->probe_prepared[k];
            dt_worker *w = owed && dt_worker_alive(f->w[k]) ? fw_worker(f, (dt_session_step)k,
                                                                        "release") : NULL;
            if (w && fw_done(f, (dt_session_step)k, "release", dt_protocol_release_send(w, &e),
                             &e) == DT_OK)
                cr->released[cr->nreleased++] = (fw_step){f, (dt_session_step)k};
        }
    }
}

static void case_finish(run_ctx *c, case_run *cr) {
    dt_shm shm[DT_SESSION_MAX_IMPLS];
    dt_err e;
    if (!cr->release_sent) case_release_send(c, cr);
    trace_line(c, NULL, "release");
    for (int q = 0; q < cr->nreleased; q++) {
        dt_worker *w = fw_worker(cr->released[q].f, cr->released[q].step, "release");
        if (w) fw_done(cr->released[q].f, cr->released[q].step, "release",
                       dt_protocol_release_receive(w, c->cfg->timeout_s, &e), &e);
    }
    for (int i = 0; i < c->n; i++) {
        shm[i] = cr->fw[i].shm;
        memset(&cr->fw[i].shm, 0, sizeof cr->fw[i].shm);
    }
    /* the arenas, the reference and the input sets are freed on the preparer (unmapping
     * gigabytes takes a while), after the next case's host side is made */
    dt_casehost_pool_free(c->pool, cr->h, shm, c->n);
    cr->h = NULL;
    int valid = 1;
    for (int i = 0; i < c->n; i++)
        if (!cr->fw[i].ok || cr->fw[i].ci->status != DT_IMPL_OK) valid = 0;
    cr->cj->valid = valid;
    dt_case_round_done_add(cr->cj, cr->round);
}

/* The phase callback of a host side made in line: the trace and the progress line. */
static void host_phase(void *ctx, const char *phase) { progress(ctx, NULL, phase); }

/* The host side of (spec, round): the one the preparer made ahead, else made here. Its
 * notes go into the record. */
static dt_casehost *case_host(run_ctx *c, const dt_case_spec *spec, int round) {
    int64_t waited = 0;
    trace_line(c, NULL, "host side (made ahead: wait)");
    dt_casehost *h = dt_casehost_pool_take(c->pool, spec, round, &waited);
    if (!h && dt_run_stop_requested()) { /* a signal while waiting: nothing is made here */
        h = dt_xcalloc(1, sizeof *h);
        h->spec = spec;
        h->round = round;
        h->fail_stage = "inputs";
        snprintf(h->fail_msg, sizeof h->fail_msg, "interrupted by signal %d", (int)g_stop_signal);
    } else if (!h) {
        h = dt_xcalloc(1, sizeof *h);
        dt_casehost_make(&c->hcfg, spec, round, dt_record_case_find(c->r, spec->id) < 0, c->n,
                         host_phase, c, h);
    }
    for (size_t i = 0; i < h->notes.n; i++) dt_strv_push(&c->r->notes, h->notes.v[i]);
    return h;
}

/* Makes the host sides of the case-rounds after this one ahead, on the preparer, while
 * this one is measured: as many as dt_casehost.h takes (count and memory), in run order. */
static void case_host_ahead(run_ctx *c) {
    while (c->pool && c->seq_ahead < c->seq_count) {
        const dt_case_spec *next = &c->cfg->plan.cases[c->seq[2 * c->seq_ahead]];
        if (dt_casehost_pool_submit(c->pool, next, c->seq[2 * c->seq_ahead + 1],
                                    dt_record_case_find(c->r, next->id) < 0, c->n) != 0)
            break;
        c->seq_ahead++;
    }
}

static void run_case(run_ctx *c, const dt_case_spec *spec, int round, int flip) {
    c->current = spec->id;
    case_run cr;
    memset(&cr, 0, sizeof cr);
    fw_step released[DT_SESSION_MAX_IMPLS * DT_STEP_COUNT];
    cr.spec = spec;
    cr.round = round;
    cr.flip = flip;
    cr.released = released;
    cr.h = case_host(c, spec, round);
    int at = dt_record_case_find(c->r, spec->id);
    cr.cj = at >= 0 ? &c->r->cases[at] : case_new(c, spec, cr.h);
    dt_record_cache_touch(cr.cj); /* the case changes from here (dt_record_cache.h) */
    case_host_ahead(c);
    for (int i = 0; i < c->n; i++) {
        fw_case *f = &cr.fw[i];
        f->index = i;
        f->id = c->cfg->fw_ids[i];
        for (int k = 0; k < DT_STEP_COUNT; k++)
            f->w[k] = dt_session_worker(c->session, i, (dt_session_step)k);
        f->probe_step = DT_STEP_PROBE;
        f->ci = &cr.cj->impl[c->ri[i]];
        /* an implementation that failed in an earlier round stays failed */
        f->ok = f->ci->status == DT_IMPL_OK;
    }
    if (cr.h->fail_stage) {
        for (int i = 0; i < c->n; i++) fw_fail(&cr.fw[i], DT_STEP_MAIN, cr.h->fail_stage,
                                               cr.h->fail_msg);
    } else {
        case_setup(c, &cr);
        warm_and_calibrate(c, &cr);
        timed_part(c, &cr);
        /* checked call after timing; the output's SHA-256 (the record keeps one per case
         * and implementation: the last round's) in the last round, the implementations'
         * outputs hashed on parallel threads */
        const uint8_t *outs[DT_SESSION_MAX_IMPLS] = {NULL};
        for (int i = 0; i < c->n; i++) {
            fw_case *f = &cr.fw[i];
            if (!f->ok) continue;
            progress(c, f->id, "check after timing");
            if (fw_checked_call(c, f, "warm", &cr, 0) == DT_OK && round + 1 >= c->cfg->rounds)
                outs[i] = f->shm.base;
        }
        char hex[DT_SESSION_MAX_IMPLS][65];
        /* the outputs are in the arenas (downloaded by the checked call): the workers may
         * free their side while they are hashed */
        case_release_send(c, &cr);
        trace_line(c, NULL, "output SHA-256");
        dt_hostpass_sha256_arenas(&cr.h->L, dt_layout_output(&cr.h->L), outs, c->n, hex);
        for (int i = 0; i < c->n; i++)
            if (outs[i]) dt_record_set_str(&cr.fw[i].ci->output_sha256, hex[i]);
        for (int i = 0; i < c->n; i++) fw_cheat_finish(c, &cr, &cr.fw[i]);
    }
    case_finish(c, &cr);
    dt_record_cache_touch(cr.cj); /* and changed: its results.json text is encoded again */
}

/* ---- the plan ---------------------------------------------------------------------------- */

/* Has (case id, round) been finished already (a resumed run)? */
static int round_done(const dt_record *r, const char *id, int round) {
    int at = dt_record_case_find(r, id);
    return at >= 0 && dt_case_round_is_done(&r->cases[at], round);
}

static void set_finished(dt_record *r) {
    char buf[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    dt_record_set_str(&r->finished_at, buf);
}

/* After a signal: the results on disk (written after the last finished case, or before
 * the first) are the run as it was before the interrupted case; they are written again
 * marked interrupted, so a resume redoes that case from scratch. */
static dt_status write_interrupted(run_ctx *c, dt_err *err) {
    const dt_run_config *cfg = c->cfg;
    if (cfg->progress) fputs("\n", stderr);
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", cfg->output_dir);
    dt_record *before = NULL;
    dt_err e;
    dt_err we; /* the last case's write, on disk after the join (or its failure said) */
    int write_failed = dt_file_async_join(c->writer, &we) != DT_OK;
    if (dt_record_load(path, &before, &e) == DT_OK) {
        before->complete = 0;
        before->interrupted_signal = (int)g_stop_signal;
        set_finished(before);
        if (dt_derive_run(before, &e) == DT_OK) dt_outputs_write(before, cfg->output_dir, &e);
        dt_record_free(before);
    }
    return dt_fail(err, DT_EIO, "interrupted by signal %d after %d of %d cases; results so far "
                   "are in %s%s%s", (int)g_stop_signal, c->cases_done, c->cases_total,
                   cfg->output_dir, write_failed ? "; the last results.json write failed: " : "",
                   write_failed ? we.msg : "");
}

/* Derives and writes the outputs of the run so far (complete or not). */
static dt_status write_now(run_ctx *c, int complete, dt_err *err) {
    dt_status st = dt_file_async_join(c->writer, err); /* before results.json is rewritten */
    if (st != DT_OK) return st;
    int64_t t0 = dt_now_ns();
    c->r->complete = complete;
    set_finished(c->r);
    st = dt_derive_run(c->r, err);
    if (st == DT_OK) st = dt_outputs_write(c->r, c->cfg->output_dir, err);
    c->full_write_ns = dt_now_ns();
    c->full_write_cost_ns = c->full_write_ns - t0;
    return st;
}

/* After a case: results.json always (durable: what a resume or an interruption starts
 * from); the derived sections, results.md and the plots only when DT_RUN_FULL_WRITE_S
 * have passed since their last write and at least 20 times as long as it took, because
 * deriving is over every case so far (bootstrap intervals): written after each case it
 * grew with the square of the cases (~90 s of a default CUDA run on the H200). In
 * between, results.json holds the record without derived sections (readers derive;
 * docs/results-format.md). 180 s since session 7 (60 in session 5; the four periodic writes of
 * a default CUDA run cost 4.7 s of its 247 s on the H200): the incremental results.json is the
 * durable record; a full write (~1-2 s at 100 case-rounds) is a view for whoever looks in. */
#define DT_RUN_FULL_WRITE_S 180
static dt_status write_after_case(run_ctx *c, dt_err *err) {
    int64_t since = dt_now_ns() - c->full_write_ns;
    if (since >= (int64_t)DT_RUN_FULL_WRITE_S * 1000000000 && since >= 20 * c->full_write_cost_ns)
        return write_now(c, 0, err);
    c->r->complete = 0;
    set_finished(c->r);
    dt_record_derived_clear(c->r);
    char path[4096], *text = NULL; /* incrementally: only the case just run is encoded */
    size_t len = 0;
    snprintf(path, sizeof path, "%s/results.json", c->cfg->output_dir);
    dt_status st = dt_record_cache_encode(c->rcache, c->r, &text, &len, err);
    /* written while the next case runs; a failure fails the run at the next write */
    return st == DT_OK ? dt_file_async_start(c->writer, path, text, len, err) : st;
}

/* Every round of the plan: the state before the first case (so an interruption has one
 * to keep), each case, the outputs after each case, the final outputs. */
static dt_status run_rounds(run_ctx *c, dt_err *err) {
    const dt_run_config *cfg = c->cfg;
    dt_record *r = c->r;
    dt_status st = write_now(c, 0, err);
    if (st != DT_OK) return st;
    /* the case-rounds in the order they run: rotated by the round, reversed in alternate
     * rounds; those finished before an interruption are kept as they are */
    int n = cfg->plan.count, count = 0;
    int *seq = dt_xmalloc((size_t)(n * cfg->rounds + 1) * 2 * sizeof *seq);
    for (int round = 0; round < cfg->rounds; round++)
        for (int j = 0; j < n; j++) {
            int idx = (j + round) % n;
            if (round & 1) idx = n - 1 - idx;
            if (round_done(r, cfg->plan.cases[idx].id, round)) {
                c->cases_total--;
                continue;
            }
            seq[2 * count] = idx;
            seq[2 * count + 1] = round;
            count++;
        }
    c->seq = seq;
    c->seq_count = count;
    for (int q = 0; q < count && st == DT_OK; q++) {
        int idx = seq[2 * q], round = seq[2 * q + 1];
        c->round = round;
        if (c->seq_ahead <= q) c->seq_ahead = q + 1; /* this one is made here or was ahead */
        run_case(c, &cfg->plan.cases[idx], round, round & 1);
        if (dt_run_stop_requested()) {
            st = write_interrupted(c, err);
            break;
        }
        c->cases_done++;
        trace_line(c, NULL, "write outputs");
        st = write_after_case(c, err);
    }
    c->seq = NULL;
    free(seq);
    if (st != DT_OK) return st;
    if (cfg->progress) fputs("\r\033[K", stderr);
    dt_casehost_pool_stop(c->pool); /* nothing of it uses the refcache after this */
    c->pool = NULL;
    dt_refcache_finish(&c->refcache);
    trace_line(c, NULL, "write outputs");
    st = write_now(c, 1, err);
    trace_line(c, NULL, "done");
    return st;
}

dt_status dt_run_plan(const dt_run_config *cfg, dt_session *session, dt_record *r,
                      int *any_invalid, dt_err *err) {
    run_ctx c = {cfg, session, r, session->count, {0}, dt_record_next_position(r), 0,
                 cfg->plan.count * cfg->rounds, dt_now_ns(), NULL,
                 /* a resumed run keeps not asking a worker that had no floor call */
                 r->floor_unavailable != NULL, NULL, 0, 0, 0, {0, {0}}, {0, 0, 0, NULL, NULL},
                 NULL, NULL, 0, 0, NULL, NULL, 0};
    if (dt_run_env_check(err) != DT_OK) return DT_EINVAL;
    const char *dg = getenv("DUALTIME_CHEAT_DIGEST");
    c.digest_off = dg && strcmp(dg, "0") == 0;
    const char *trace = getenv("DUALTIME_PHASE_TRACE");
    if (trace && *trace && !(c.trace = fopen(trace, "a")))
        return dt_fail(err, DT_EIO, "DUALTIME_PHASE_TRACE=%s: cannot open: %s", trace,
                       strerror(errno));
    for (int i = 0; c.trace && i < cfg->n_startup; i++)
        fprintf(c.trace, "%lld\t-\t-1\t-\t%s\n", (long long)(cfg->startup_ns[i] - c.t_start_ns),
                cfg->startup_phase[i]);
    dt_refcache_init(&c.refcache, cfg->output_dir, getenv("DUALTIME_REF_CACHE"));
    c.hcfg = (dt_casehost_cfg){cfg->seed, cfg->inputs, cfg->rounds, &c.refcache,
                               dt_run_stop_requested};
    char why[200], line[260];
    c.pool = dt_casehost_pool_start(&c.hcfg, cfg->spare_cpus, cfg->usable_cpus, why,
                                    sizeof why);
    const char *pre = getenv("DUALTIME_PREFETCH");
    if (c.pool || (pre && *pre)) { /* said when on or asked for: off is how runs were before */
        snprintf(line, sizeof line, "host preparation ahead (orchestrate/dt_casehost.h): %s",
                 why);
        dt_strv_push(&r->notes, line);
    }
    for (int i = 0; i < c.n; i++) {
        c.ri[i] = dt_record_impl_find(r, cfg->fw_ids[i]);
        DT_ASSERT(c.ri[i] >= 0);
    }
    *any_invalid = 0;
    c.rcache = dt_record_cache_new();
    const char *verify = getenv("DUALTIME_RESULTS_VERIFY"); /* 1: each write checked */
    dt_record_cache_set_verify(c.rcache, verify && strcmp(verify, "1") == 0);
    for (size_t i = 0; i < r->n_cases; i++) dt_record_cache_touch(&r->cases[i]); /* resumed */
    c.writer = dt_file_async_new();
    dt_status st = run_rounds(&c, err);
    /* an error or an interruption: a signal must not wait for a reference in the making */
    if (dt_run_stop_requested()) dt_casehost_pool_abandon(c.pool);
    else dt_casehost_pool_stop(c.pool);
    dt_err we; /* a write still in flight (an early return): its failure is the run's */
    if (dt_file_async_join(c.writer, &we) != DT_OK && st == DT_OK)
        st = dt_fail(err, DT_EIO, "%s", we.msg);
    dt_file_async_free(c.writer);
    dt_record_cache_free(c.rcache);
    if (c.trace) fclose(c.trace);
    if (st != DT_OK) return st;
    for (size_t i = 0; i < r->n_cases; i++)
        if (!r->cases[i].valid) *any_invalid = 1;
    return DT_OK;
}
