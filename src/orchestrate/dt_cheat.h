/* dt_cheat.h — "impossible to fool" (issue 17 item 7; docs/anti-cheat.md): one named
 * check per attack that KernelBench's and gpu-mode's harnesses met, applied to every
 * implementation of every case. The record keeps what each found (dt_cheat_rec in
 * record/dt_record.h, names "cheat.cached_result" ...); the run loop calls the hooks.
 *
 *   cheat.cached_result       inputs rotate between timed samples over DT_CHEAT_INPUT_SETS
 *                             input sets (seeds dt_cheat_set_seed); the output of every
 *                             e2e sample (the single call, the last call of a batch) is
 *                             checked against the oracle of the set it was given; an
 *                             output that fails its own set's oracle and passes another's
 *                             is a replayed result
 *   cheat.skipped_work        outputs are poisoned (NaN pattern) before every timed sample
 *                             (the set repeats for two samples in a row, so unchanged
 *                             inputs meet a poisoned output): a sample that leaves poison
 *                             behind skipped its work
 *   cheat.side_stream         the workers end every E2E window with a device-wide
 *                             synchronization and the output is read only after it (code
 *                             review, docs/anti-cheat.md); the orchestrator's part: an
 *                             output written after the call returned (re-poisoned and
 *                             watched for DT_CHEAT_LATE_MS on the first sample of each
 *                             scope; a device mirror: still poisoned when downloaded and
 *                             present later) came from work that went on after it
 *   cheat.wrote_input         the arena check's input comparison (with the input hashes)
 *                             after every checked call and sample
 *   cheat.aliased_output      workers computing in the shared arena (cpu, output policy
 *                             not functional) must have the output there when the call
 *                             returns: an output first written by `download` was lazy; a
 *                             worker may also report a caught alias itself (an error
 *                             starting with the check's name, as the PyTorch worker does
 *                             for a returned tensor that is a view, a subclass or an
 *                             input's storage)
 *   cheat.faster_than_physics a case whose fewest bytes exceed DT_CHEAT_CACHE_FACTOR x the
 *                             cache (L2 on cuda, the largest CPU cache on cpu) faster
 *                             than fewest bytes / (copy ceiling x DT_CHEAT_BW_MARGIN; cpu:
 *                             DT_CHEAT_BW_MARGIN_CPU), or
 *                             any case faster than flops / (peak x DT_CHEAT_FLOPS_MARGIN)
 *
 * A caught check fails its implementation (status failed, error "…: cheat.<name>: …"),
 * so the case is invalid and gets no speed verdict. State is per case (the input sets
 * and their references, read-only while samples run) and per (case, implementation)
 * (the dt_cheat_rec), so hooks stay correct when implementations run concurrently.
 * Ownership: dt_cheat_case owns its extra sets; set 0 is borrowed from the caller.
 * Units: bytes, µs, GB/s (1e9 B/s), flop/s. Library code: no output, no exit. */
#ifndef DT_CHEAT_H
#define DT_CHEAT_H

#include <stddef.h>
#include <stdint.h>

#include "../common/dt_common.h"
#include "../data/dt_arena.h"
#include "../oracle/dt_oracle.h"
#include "../record/dt_record.h"

#define DT_CHEAT_INPUT_SETS 2      /* input sets per case (set 0 = the case's --seed) */
#define DT_CHEAT_LATE_MS 50        /* how long an output is watched for late writes */
#define DT_CHEAT_BW_MARGIN 2.0     /* physics: allowed over the measured copy ceiling (cuda) */
#define DT_CHEAT_BW_MARGIN_CPU 3.0 /* the same on cpu: a shared host's ceiling is noisier */
#define DT_CHEAT_CACHE_FACTOR 4.0  /* physics: bytes rule only above this x the cache */
#define DT_CHEAT_FLOPS_MARGIN 1.25 /* physics: allowed over the (generous) peak */

/* The seed of input set k of a run with seed `seed` (k = 0: seed itself). */
uint64_t dt_cheat_set_seed(uint64_t seed, int k);
/* The input set of timed sample `index` (0, 0, 1, 1, 0, 0, ...): the same for every
 * implementation at one index (pairs compare equal inputs), repeated twice in a row. */
int dt_cheat_sample_set(int index);

/* Whether timed sample `index` of a case with arena_bytes is armed and checked: every
 * sample up to DT_CHEAT_FULL_BYTES; above it (each check copies, uploads, downloads and
 * compares the whole arena: seconds) e2e samples 1 and 2 of each scope in round 0 only
 * (set 0 after the warmup's set 0: skipped work; set 1: a replay), and no device sample;
 * the physics check, every round, covers the rest (such cases are far over every cache).
 * dt_cheat_round_checked: whether round `round` makes the input sets at all. */
#define DT_CHEAT_FULL_BYTES (256ll << 20)
int dt_cheat_sample_checked(int64_t arena_bytes, int index);
/* The same for a device sample (control, probe, dispatch: three per index): indexes 0..2
 * (sets 0, 0, 1) of arenas up to DT_CHEAT_FULL_BYTES, none above. */
int dt_cheat_device_sample_checked(int64_t arena_bytes, int index);
int dt_cheat_round_checked(int64_t arena_bytes, int round);
/* The first checked index (0, or 1 above DT_CHEAT_FULL_BYTES): where a direct worker's
 * output is watched for late writes. */
int dt_cheat_first_checked(int64_t arena_bytes);

/* The input sets of one case. */
typedef struct dt_cheat_case {
    const dt_case_layout *L;
    int nsets;                               /* 0: not initialised (no checks) */
    uint8_t *pristine[DT_CHEAT_INPUT_SETS];  /* [0] borrowed, others owned */
    dt_oracle_ref ref[DT_CHEAT_INPUT_SETS];  /* [0] borrowed (a copy of the struct) */
    /* Checks by digest (docs/anti-cheat.md): the output's slot (dt_layout_output_slot),
     * the rest of the arena as its nrest non-empty {offset, length} ranges (before and
     * after the slot), and each set's dt_arena_digest of each of them */
    int64_t slot_off, slot_len;
    int nrest;
    int64_t rest[2][2];
    uint64_t digest[DT_CHEAT_INPUT_SETS][2];
} dt_cheat_case;

/* Makes sets 1.. (arena + FP64 reference) next to set 0 (pristine0, ref0: the caller's,
 * must outlive cc). A failed allocation or reference fails with the reason (cc left
 * with nsets 0 and nothing to free). */
dt_status dt_cheat_case_init(dt_cheat_case *cc, const dt_case_layout *L, uint64_t seed,
                             uint8_t *pristine0, const dt_oracle_ref *ref0, dt_err *err);
/* The same with the FP64 reference of each extra set k made by ref_fn (NULL:
 * dt_oracle_compute), e.g. the run's reference cache (orchestrate/dt_refcache.h). */
typedef dt_status (*dt_cheat_ref_fn)(void *ctx, int set, const dt_case_layout *L,
                                     const uint8_t *pristine, dt_oracle_ref *ref, dt_err *err);
dt_status dt_cheat_case_init_with(dt_cheat_case *cc, const dt_case_layout *L, uint64_t seed,
                                  uint8_t *pristine0, const dt_oracle_ref *ref0,
                                  dt_cheat_ref_fn ref_fn, void *ctx, dt_err *err);
void dt_cheat_case_free(dt_cheat_case *cc);
/* Host bytes one case's extra sets need (memory check): arenas and references. */
int64_t dt_cheat_extra_host_bytes(const dt_case_layout *L);

/* Writes input set `set` into arena: inputs, guards and poisoned outputs (the whole
 * pristine arena of the set). */
void dt_cheat_arm(const dt_cheat_case *cc, int set, uint8_t *arena);

/* One look at an arena after a call that was given input set `set`. */
typedef struct dt_cheat_look {
    int ok;                 /* arena and oracle passed */
    dt_arena_report ar;
    dt_oracle_report orp;
    int other_set_ok;       /* the output passes another set's oracle (-1: not tried) */
    int other_set;
} dt_cheat_look;
void dt_cheat_look_at(const dt_cheat_case *cc, int set, const uint8_t *arena, dt_cheat_look *lk);
/* The same, but the arena check only over the output's slot (its guards and elements):
 * after a download of that slot alone, the rest proven unchanged by digest. */
void dt_cheat_look_at_output(const dt_cheat_case *cc, int set, const uint8_t *arena,
                             dt_cheat_look *lk);
/* Writes set `set`'s pristine output slot (guards, poisoned output) into arena: the arm of
 * a worker whose mirror still holds the set's inputs. */
void dt_cheat_arm_output(const dt_cheat_case *cc, int set, uint8_t *arena);

/* What a checked sample showed. A worker computing in the shared arena (direct: cpu,
 * output policy not functional) is read right after the call returned (`now`, before any
 * download); then its output is poisoned again and counted after download
 * (written_at_download: a lazy output) and, on the first checked sample of each scope
 * (dt_cheat_first_checked), after waiting
 * DT_CHEAT_LATE_MS (written_late: work that went on after the call returned). A worker
 * with a device mirror is read after download (`now`) and, while that output is still
 * poisoned, re-read for up to DT_CHEAT_LATE_MS (`late`, has_late). */
typedef struct dt_cheat_obs {
    int direct;
    dt_cheat_look now;
    int64_t written_at_download, written_late; /* direct only: output elements */
    int has_late;
    dt_cheat_look late;                        /* device mirror only */
} dt_cheat_obs;

/* Classifies o: -2 all passed; -1 a failure no check names (a plain wrong output); else
 * the dt_cheat_check caught, with one line into reason. cold: the implementation's first
 * call (nothing before it to replay or skip: only wrote_input can be named). */
int dt_cheat_classify(const dt_cheat_obs *o, int cold, char *reason, size_t reason_len);

/* Output elements of arena that no longer hold the poison pattern. */
int64_t dt_cheat_output_written(const dt_case_layout *L, const uint8_t *arena);

/* The check a worker's error names ("...cheat.aliased_output: ..."), or -1. */
int dt_cheat_in_text(const char *text);

/* Marks check k of rec caught with note (the first catch of a check keeps its note). */
void dt_cheat_mark(dt_cheat_rec *rec, dt_cheat_check k, const char *note);
/* Starts rec (present, input sets) if it is not yet. */
void dt_cheat_begin(dt_cheat_rec *rec, int input_sets);

/* The run's physical limits. */
typedef struct dt_cheat_limits {
    double copy_gbps;       /* measured copy ceiling; NAN: none */
    double bw_margin;       /* DT_CHEAT_BW_MARGIN (cuda) or DT_CHEAT_BW_MARGIN_CPU */
    double cache_bytes;     /* L2 (cuda) / largest CPU cache; NAN: unknown */
    double peak_flops_f32;  /* generous FP32 peak (flop/s); NAN: unknown */
    double peak_flops_narrow; /* bf16/f16 (tensor cores / AMX); NAN: unknown */
    char why[160];          /* what is unknown, "" when everything is */
} dt_cheat_limits;

/* The limits of record r's device: copy ceiling from r->env.ceilings; cuda: l2_bytes,
 * sm_count and sm_clock_khz of the worker's device description (env.gpu_json); cpu: this
 * host's caches and cores (the cpu worker runs here). */
void dt_cheat_limits_read(const dt_record *r, const char *backend, dt_cheat_limits *lim);

/* The physics check of implementation `impl` of case c over its raw batch samples (the
 * fastest p50 per call of e2e_batch, control_batch, dispatch_batch). Returns 1 when it
 * is faster than physics (reason filled), 0 when within (reason: what was compared), -1
 * when not applicable (reason: why). */
int dt_cheat_physics(const dt_cheat_limits *lim, const dt_case *c, size_t impl, char *reason,
                     size_t reason_len);

/* Closes rec after a round: checks that ran and caught nothing become passed, those
 * that cannot apply get their note. lazy_checked: the early read was possible;
 * checked_calls: the implementation's checked calls (cold, warm), 0 when it failed before
 * any (then wrote_input is not applicable either). */
void dt_cheat_settle(dt_cheat_rec *rec, int lazy_checked, const char *backend,
                     int64_t checked_calls);

#endif
