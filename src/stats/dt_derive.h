/* dt_derive.h — the derive step on the typed run record: raw samples in, derived structs out.
 *
 * dt_derive_run() reads a dt_record's raw data (cases[].impl[].samples[scope], floor
 * samples, validity, op and shape, environment.ceilings, settings) and fills every case's
 * `derived` (per scope: each impl's summary and noise; each candidate's paired ratio to
 * the baseline with a seeded bootstrap interval and its verdict; probe/control and probe
 * kernel medians in probe scopes — paired with the held control, or in a record from
 * before held windows with dispatch; the roofline; the E2E floor; the held floor check of
 * small cases) and the run's `derived` (assessment per scope and for the run with every
 * reason and the counted summary — probe scopes are diagnostics and do not lower the run
 * — and counts per candidate). The rules are those of
 * docs/results-format.md ("Derived statistics"); every threshold comes from
 * r->derived.policy, which the result keeps as the thresholds it used (its bootstrap
 * resamples and seed are the run's settings.bootstrap).
 *
 * Implementations: impls[0] is the baseline, every other impl a candidate with its own
 * ratio and verdict per scope (dt_scope_derived.vs[i]) and its own verdict counts
 * (dt_run_derived.vs[i]). Lists that name implementations (reasons) name the
 * candidates in record order, then the baseline — for a v1 run "candidate, baseline", as
 * before. Host scopes (e2e_batch, e2e_single) are derived for every case (results.json
 * always holds them, possibly empty: 0 samples reads as "too few samples"); device
 * scopes where some impl has samples.
 *
 * Deterministic: the result depends only on the record (each interval's seed mixes the
 * bootstrap seed with an FNV-1a hash of the case id and scope, so it does not depend on
 * case order), so deriving a decoded record again reproduces it exactly, and a v1 record
 * derives to the same numbers and reasons as src/report/dt_derive.c did.
 *
 * Ownership: r is modified in place; previous derived contents are freed and replaced,
 * raw data is never modified. Units: microseconds per call. Thread-safety: reentrant
 * (distinct records may be derived concurrently). Never includes jansson.h or cuda.h. */
#ifndef DT_STATS_DERIVE_H
#define DT_STATS_DERIVE_H

#include "common/dt_common.h"
#include "record/dt_record.h"

#include <stdint.h>

/* Fills r->derived and every r->cases[].derived (see above). Fails with DT_EINVAL when
 * the record has no baseline (n_impls == 0 or impls[0] not a baseline) or when the
 * policy asks for what dt_stats cannot do (bootstrap resamples 0, an interval level
 * other than 95% or a minimum pair count other than DT_STATS_MIN_PAIRS); then the
 * record's derived blocks are left cleared (present = 0). */
dt_status dt_derive_run(dt_record *r, dt_err *err);

/* Kernels a call of a probe scope's samples: the median of kernel records / calls over
 * the samples that have them (the probe summary's kernels_per_call_p50); NAN: none. */
double dt_derive_kernels_per_call(const dt_samples *s);

/* Kernels a call of implementation impl in case c: dt_derive_kernels_per_call of its probe
 * batch samples, else of its probe single ones; 1 without either. */
double dt_derive_case_kernels_per_call(const dt_case *c, size_t impl);

/* How far one kernel launch's held-window time moves from process to process (µs): the
 * same 64 stream launches of a 17x257 add behind a cuStreamWaitValue32 hold in fresh plain
 * processes on the H200 (driver 580, a Firecracker VM; scripts/exp/offset_latency.cu held):
 * medians 1.7535 .. 1.9185 µs a kernel in 10 processes (session 8), 1.7495 .. 1.9325 in 10
 * more, and 16 streams of one process mostly at their process's level (session 9), each
 * process within 0.4-1.0% over its windows. Graph replay has no such offset (0.44-0.97%
 * over 10 processes). A run's rounds share their processes, so no within-run interval
 * shows it: a held scope's verdict interval is widened by half of it per implementation
 * (dt_derive_process_band), and `dualtime compare` spreads a held row by all of it
 * (docs/results-format.md, "Process band of a held verdict" and "Process band"). */
#define DT_HELD_PROCESS_LAUNCH_US 0.20

/* The scopes whose windows are held stream launches: control_* and probe_*. */
int dt_derive_held_scope(dt_scope s);

/* The process band of a held ratio candidate / baseline whose medians are cand_p50 and
 * base_p50 µs a call at cand_k and base_k kernels a call: the largest factor by which the
 * two processes' launch offsets (each within +-DT_HELD_PROCESS_LAUNCH_US / 2 a kernel of
 * the typical) can move the ratio, 1 + offset/2 x (cand_k / cand_p50 + base_k / base_p50);
 * 1 where a median is not positive. */
double dt_derive_process_band(double cand_p50, double cand_k, double base_p50, double base_k);

/* The bootstrap seed of one (case, scope): run_seed mixed with an FNV-1a hash of both
 * names, through one splitmix64 step. Scope is a scope name, or "e2e_floor/<impl id>"
 * for the E2E floor intervals. */
uint64_t dt_derive_seed(uint64_t run_seed, const char *case_id, const char *scope);

#endif
