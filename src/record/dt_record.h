/* dt_record.h — the typed run record: everything one dualtime run measured and derived.
 *
 * A dt_record is the in-memory form of results.json (docs/results-format.md). The
 * orchestrator fills it (dt_record_impl_add, dt_record_case_add, dt_samples_push...), the
 * derive step (src/stats) fills each dt_case's `derived` and the run's `derived` from the
 * raw samples, and formatters (Markdown, SVG, compare) only read a `const dt_record *`.
 * Only src/record/dt_record_json.c knows results.json's keys; this header never mentions
 * jansson. Subtrees the tool does not interpret (a worker's hello, the GPU description,
 * resumption notes) are kept as canonical JSON text (`char *..._json`), re-embedded
 * verbatim by the encoder.
 *
 * Implementations: a run has any number of implementations (r->impls, at least 1).
 * impls[0] is ALWAYS the baseline (role DT_ROLE_BASELINE, exactly one); impls[1..] are
 * candidates, in command-line order. Every per-implementation array below
 * (dt_case.impl, dt_scope_derived.impl / .vs, dt_case_derived roofline/e2e_floor impl,
 * dt_run_derived.vs) has r->n_impls entries and is indexed like r->impls. Entries of
 * `vs` (candidate vs baseline) at index 0 are unused (present = 0). All implementations
 * are added before the first case (dt_record_case_add sizes the case's arrays).
 *
 * Null conventions (documented once, used everywhere):
 *  - double: NAN means null / absent ("not measured", "no value").
 *  - nullable int64: DT_NULL_I64 (INT64_MIN) means null / absent.
 *  - char *: NULL means null / absent; "" is an empty string.
 *  - tri-state int flags: -1 means null (e.g. tool.git_dirty).
 *  - sub-objects that may be absent carry an `int present` (or `has_...`) flag.
 * Units are in field names: _us (microseconds), _ns, _ms, _mhz, _c (°C), _w (W),
 * _gbps (10^9 bytes/s), _bytes. Sample `us` is always microseconds PER CALL.
 *
 * Ownership: a dt_record owns every string and array it points to (all heap, freed by
 * dt_record_free). Setters take copies of strings (dt_xstrdup); dt_samples_push takes the
 * pushed sample's arrays (probe kernels/records) by value — do not free them after.
 * Pointers into growing arrays (a dt_case *, a dt_sample *) are invalidated by the next
 * add/push on the same array.
 * Thread-safety: none per record; distinct records are independent. Never includes cuda.h
 * or jansson.h. */
#ifndef DT_RECORD_H
#define DT_RECORD_H

#include "common/dt_common.h"
#include "plan/dt_ops.h"
#include "record/dt_decomp_raw.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define DT_RECORD_FORMAT "dualtime-results"
#define DT_RECORD_FORMAT_VERSION 2      /* what dt_record_encode writes */
#define DT_RECORD_MAX_BYTES (1ull << 30) /* dt_record_load refuses larger files */

#define DT_NULL_I64 INT64_MIN /* a null / absent nullable integer */

typedef struct dt_record dt_record;

/* ---- small shared vocabularies ------------------------------------------------------- */

/* Measurement scopes, in report order. Indexes dt_case_impl.samples and
 * dt_case_derived.scopes. Control and probe windows are HELD (the stream waits on a host
 * flag while begin event, calls and end event are queued) in runs with
 * settings.held_windows; dispatch is the unheld window. Files written before held windows
 * (format 1, or held_windows absent/false) decode with their control_* samples as
 * dispatch_* and their probe scopes marked unheld (dt_record.probe_unheld). GRAPH_BATCH
 * (`--graph`): R_dev calls captured in a CUDA graph, replayed in a held window, per call. */
typedef enum dt_scope {
    DT_SCOPE_E2E_BATCH = 0,   /* "e2e_batch": host interval / reps */
    DT_SCOPE_E2E_SINGLE,      /* "e2e_single": one call's host interval */
    DT_SCOPE_CONTROL_BATCH,   /* "control_batch": stream events / reps, no probe */
    DT_SCOPE_CONTROL_SINGLE,  /* "control_single" */
    DT_SCOPE_PROBE_BATCH,     /* "probe_batch": stream events with CUPTI kernel records */
    DT_SCOPE_PROBE_SINGLE,    /* "probe_single" */
    DT_SCOPE_DISPATCH_BATCH,  /* "dispatch_batch": unheld stream events / reps, as a caller
                                 feeds the GPU (launch gaps included) */
    DT_SCOPE_DISPATCH_SINGLE, /* "dispatch_single" */
    DT_SCOPE_GRAPH_BATCH,     /* "graph_batch": held replay of a graph of R_dev calls / reps */
    DT_SCOPE_COUNT
} dt_scope;

/* "e2e_batch" ... for a valid scope (DT_ASSERTs s is in range). */
const char *dt_scope_name(dt_scope s);
/* The scope named `name`, or -1 when unknown. */
int dt_scope_find(const char *name);
/* 1 for host scopes (e2e_*), 0 for device scopes. */
int dt_scope_is_host(dt_scope s);
/* 1 for the probe scopes (samples may carry probe fields). */
int dt_scope_is_probe(dt_scope s);
/* 1 for *_single scopes (reps is 1). */
int dt_scope_is_single(dt_scope s);

/* Element type of a case's floating-point buffers (issue 13). v1 files load as F32. */
typedef enum dt_elem_type {
    DT_ELEM_F32 = 0, /* "f32" (default) */
    DT_ELEM_BF16,    /* "bf16" (reserved) */
    DT_ELEM_F16,     /* "f16" (reserved) */
    DT_ELEM_COUNT
} dt_elem_type;
const char *dt_elem_type_name(dt_elem_type t);
int dt_elem_type_find(const char *name); /* -1 when unknown */

typedef enum dt_role {
    DT_ROLE_BASELINE = 0, /* "baseline": exactly one, always impls[0] */
    DT_ROLE_CANDIDATE,    /* "candidate" */
} dt_role;
const char *dt_role_name(dt_role r);

typedef enum dt_impl_status {
    DT_IMPL_OK = 0, /* "ok" */
    DT_IMPL_FAILED, /* "failed": error says why */
} dt_impl_status;
const char *dt_impl_status_name(dt_impl_status s);

/* Numeric values equal stats/dt_stats.h's dt_verdict (a cast converts; the record does
 * not include stats so that stats can include the record). */
typedef enum dt_rec_verdict {
    DT_REC_VERDICT_INVALID = 0,       /* "invalid": a side invalid, or no pairs */
    DT_REC_VERDICT_INSUFFICIENT,      /* "insufficient": too few pairs for an interval */
    DT_REC_VERDICT_INDISTINGUISHABLE, /* "indistinguishable" */
    DT_REC_VERDICT_FASTER,            /* "faster": the candidate is faster */
    DT_REC_VERDICT_SLOWER,            /* "slower" */
    DT_REC_VERDICT_COUNT
} dt_rec_verdict;
const char *dt_rec_verdict_name(dt_rec_verdict v);
int dt_rec_verdict_find(const char *name); /* -1 when unknown */

typedef enum dt_level {
    DT_LEVEL_SMOKE = 0,    /* "smoke" */
    DT_LEVEL_METHOD_AUDIT, /* "method audit" */
    DT_LEVEL_COMPARATIVE,  /* "comparative" */
} dt_level;
const char *dt_level_name(dt_level l);
int dt_level_find(const char *name); /* -1 when unknown */

/* A growing array of owned strings. */
typedef struct dt_strv {
    char **v;
    size_t n, cap;
} dt_strv;
void dt_strv_push(dt_strv *sv, const char *s); /* appends a copy of s (non-NULL) */
void dt_strv_free(dt_strv *sv);                 /* frees the strings and zeroes sv */

/* ---- policy: every constant that decides a verdict, an assessment or a floor rule ---- */

/* Report prose prints these from the record (r->derived.policy), never from its own
 * copy. dt_policy_default() gives today's values; a decoded v2 file carries the ones
 * its derive used (derived.policy). */
typedef struct dt_policy {
    double equiv_low, equiv_high;  /* 0.98, 1.02: interval inside => indistinguishable */
    size_t min_pairs_interval;     /* 3: fewer pairs => no interval, "insufficient" */
    double ci_level;               /* 0.95: bootstrap percentiles (1-l)/2, (1+l)/2 */
    unsigned bootstrap_resamples;  /* 2000 (settings.bootstrap.resamples when set) */
    uint64_t bootstrap_seed;       /* 20261130 (settings.bootstrap.seed when set) */
    double max_noise;              /* 0.10: IQR/p50 above => method audit */
    double probe_low, probe_high;  /* 0.90, 1.10: probe/control outside => the probe
                                      scope is a method audit */
    size_t min_samples;            /* 5: fewer samples in a scope => smoke */
    int min_rounds;                /* 2: fewer rounds => smoke */
    int64_t small_case_max_elems;  /* 131072: M*N at most this => e2e_floor derived */
    size_t max_reasons;            /* 20: longer reason lists end in "... and N more" */
    double clocks_sm_tolerance;    /* 0.02: relative SM clock change => clocks moved */
    double clocks_max_temp_rise_c; /* 10: temperature rise above => clocks moved */
    double compare_threshold;      /* 0.05: `dualtime compare` default threshold */
    size_t compare_min_samples;    /* 3: fewer samples on a side => compare insufficient */
} dt_policy;

dt_policy dt_policy_default(void);

/* ---- run level ----------------------------------------------------------------------- */

typedef struct dt_tool {
    char *name;         /* "dualtime" */
    char *version;      /* DT_VERSION */
    char *git_revision; /* sha or "unknown" */
    int git_dirty;      /* 1, 0, or -1 = null (not a git checkout) */
    char *git_source;   /* "git" | "build" | ... (NULL: absent) */
} dt_tool;

/* Numbers DT_NULL_I64 / NAN and strings NULL when absent (older files, a new record). */
typedef struct dt_settings {
    char *backend;            /* "cpu" | "cuda" */
    char *backend_choice;     /* how the backend was chosen, one line */
    dt_op *operations;        /* --operations, in registry order */
    size_t n_operations;
    int64_t samples;          /* --samples per scope and round */
    double sample_ms;         /* target duration of one batch sample */
    double warmup_ms;
    int64_t prime;            /* untimed calls before each timed sample */
    int64_t rounds;           /* --rounds; 0 = unknown (old file without it) */
    int64_t seed;             /* input data seed */
    int input_views;          /* --input-views */
    int64_t threads;
    double timeout_s;
    int quick;
    int device_timing;
    char *probe_kind;         /* "concurrent" | "serialized" | "auto" (NULL: absent) */
    int held_windows;         /* 1: control/probe windows are held (new runs; dt_record_new
                                 sets 1); 0: an older file (absent/false): unheld */
    int pin;                  /* --pin: 1 on, 0 off (--no-pin), -1 absent (older files) */
    char *pin_reason;         /* pin 0: why not ("--no-pin", too few CPUs; NULL: absent) */
    int capture_sources;
    int64_t max_reps;         /* cap of batch reps */
    int64_t device_reps_cap;  /* cap of R_dev */
    char *inputs;             /* --inputs distribution ("uniform", "wide-logits", ...; issue
                                 16); NULL: absent (older files: uniform) */
    char *dtypes;             /* --dtypes as run, "f32,bf16,f16"; NULL: absent (f32) */
    int graph;                /* --graph: 1 the graph replay scope was asked for, 0 not, -1
                                 absent (older files: not asked) */
    char *cache;              /* --cache: "warm" | "cold" (device scopes; host scopes are
                                 always warm); NULL: absent (older files: warm) */
    unsigned bootstrap_resamples; /* settings.bootstrap; defaults when absent */
    uint64_t bootstrap_seed;
} dt_settings;

/* One implementation of the run (results.json "frameworks"). */
typedef struct dt_impl {
    char *id;                /* unique, e.g. "torch", "native" */
    dt_role role;            /* impls[0] baseline, the rest candidates */
    char *framework;         /* "pytorch", "dualtime-native" (NULL: absent) */
    char *framework_version; /* (NULL: absent) */
    dt_strv command;         /* the worker's argv */
    char *hello_json;        /* the worker's hello, canonical JSON text (NULL: absent) */
    char *cpus;              /* the worker's CPU affinity, a CPU list "2-3" (NULL: absent,
                                not pinned or not recorded) */
} dt_impl;

typedef struct dt_host {
    char *cpu, *os, *kernel, *machine, *hostname; /* NULL: absent */
    int64_t cores;                                /* DT_NULL_I64: absent */
} dt_host;

/* environment.nvml: present on cuda runs. */
typedef struct dt_nvml {
    int present;
    int available;          /* NVML opened and the device matched */
    char *reason;           /* why not (NULL when available) */
    int has_description;    /* dt_clocks_describe's fields below were recorded */
    char *library, *name, *uuid, *driver_version, *nvml_version, *pci_bus_id; /* NULL: null */
    int64_t device_index, pci_bus;                                           /* DT_NULL_I64 */
} dt_nvml;

/* environment.ceilings.flops: the FLOP ceilings of the run's device by dtype, the best
 * answer of the run's workers to the `flop_ceilings` request (docs/protocol.md), in
 * TFLOP/s = 1e12 FLOP/s; 0: not measured (older files, a CPU run, no worker offered). */
typedef struct dt_flop_ceilings_rec {
    double fp32_tflops; /* FP32 FFMA chains (the native worker, kernels/cuda/ceil_ffma.cu) */
    double bf16_tflops; /* tensor cores through a known-good matmul (the PyTorch worker's
                           torch.matmul = cuBLAS at large square shapes) */
    double fp16_tflops; /* likewise in fp16 */
    char *method;       /* "<impl id>: <its method>; ..."; with no value: why none
                           answered; NULL: not asked (older files) */
} dt_flop_ceilings_rec;

/* environment.ceilings: measured once per run by a worker's `ceilings` request. */
typedef struct dt_ceilings_rec {
    int present;
    char *error;                       /* non-NULL: the measurement failed; the rest unset */
    double copy_gbps;                  /* (read+written bytes) / time, 10^9 B/s */
    int64_t copy_bytes;                /* bytes copied per measurement */
    double launch_sync_floor_us;       /* t0; empty call; sync; t1 */
    double launch_queue_floor_us;      /* back-to-back calls, per call */
    double launch_sync_touch_floor_us; /* NAN: absent (older files, other workers) */
    /* Held device floors (stream events in a held window; NAN: absent): an empty kernel
     * and the touch kernel, per call of a batch and as one call. */
    double held_floor_batch_us, held_floor_single_us;
    double held_touch_floor_batch_us, held_touch_floor_single_us;
    char *method;                      /* how it was measured (NULL: absent) */
    char *backend;                     /* NULL: absent */
    double copy_gbps_iqr;              /* IQR of the per-copy GB/s of the copy ceiling's
                                          measurement; NAN: absent (older files, workers) */
    dt_flop_ceilings_rec flops;        /* kept also when the copy ceilings failed (error) */
} dt_ceilings_rec;

typedef struct dt_environment {
    dt_host host;
    char *gpu_json;  /* the candidate's device description (with "name"), canonical JSON
                        text; NULL = null (CPU runs). Authoritative for encoding. */
    char *gpu_name;  /* its "name" (copied out for formatters and compare); NULL: none */
    char *python;    /* interpreter used for the PyTorch worker ("" none; NULL absent) */
    char *orchestrator_cpus; /* the orchestrator's CPU affinity, a CPU list (NULL: absent) */
    dt_ceilings_rec ceilings;
    dt_nvml nvml;
} dt_environment;

typedef struct dt_prov_file {
    char *what, *path, *sha256;
} dt_prov_file;

typedef struct dt_prov_source {
    char *sha256;    /* of the source text */
    char *name;      /* e.g. "add.cu" (NULL: null) */
    dt_strv options; /* compile options */
    char *framework; /* impl id that compiled it (NULL: absent) */
} dt_prov_source;

typedef struct dt_provenance {
    dt_prov_file *files;
    size_t n_files, cap_files;
    dt_prov_source *sources;
    size_t n_sources, cap_sources;
} dt_provenance;

/* ---- samples ------------------------------------------------------------------------- */

/* One kernel name's share of a probe region. */
typedef struct dt_probe_kernel {
    char *name;
    int64_t count; /* records of that name in the whole region (not per call) */
    double us;     /* their summed duration / reps (per call) */
} dt_probe_kernel;

/* Launch configuration of one kernel name (records.launch). */
typedef struct dt_probe_launch {
    int64_t grid[3], block[3];
} dt_probe_launch;

/* One kernel record, times relative to dt_probe_records.t0_ns. */
typedef struct dt_probe_row {
    int64_t name_index; /* into dt_probe_records.names */
    int64_t start_ns, end_ns;
    int64_t stream_id;  /* CUPTI stream id; DT_NULL_I64: null */
} dt_probe_row;

/* Every kernel record of a probe region, compactly. */
typedef struct dt_probe_records {
    int present;
    int64_t t0_ns;            /* first start, host monotonic ns */
    dt_strv names;            /* distinct kernel names, first-seen order */
    dt_probe_launch *launch;  /* [names.n]: launch of each name */
    dt_probe_row *rows;
    size_t n_rows, cap_rows;
} dt_probe_records;

/* Probe fields of a probe_* sample. */
typedef struct dt_probe {
    double kernel_sum_us;         /* per call: summed kernel time / reps (NAN: absent) */
    double kernel_span_us;        /* per call: first start to last end / reps (NAN) */
    int64_t kernel_count;         /* kernel records in the region (DT_NULL_I64: absent) */
    int64_t launch_count;         /* launches in the region (DT_NULL_I64: absent) */
    double clock_offset_ns;       /* CUPTI clock vs host monotonic (NAN: absent) */
    double clock_uncertainty_ns;  /* (NAN: absent) */
    dt_probe_kernel *kernels;     /* per kernel name; NULL/0 with has_kernels = 0 */
    size_t n_kernels, cap_kernels;
    int has_kernels;              /* "kernels" was recorded (possibly empty) */
    dt_probe_records records;
} dt_probe;

/* One timed sample. */
typedef struct dt_sample {
    double us;        /* microseconds per call (>= 0) */
    int64_t reps;     /* calls in the sample (>= 1); 0 = not recorded (floor samples) */
    int32_t round;    /* round number (>= 0) */
    int32_t index;    /* index within (case, scope, round); pairs match (round, index) */
    int64_t position; /* place in the run's global sample order (>= 0) */
    int has_probe;    /* probe fields below are set (probe scopes) */
    dt_probe probe;
} dt_sample;

typedef struct dt_samples {
    dt_sample *v;
    size_t n, cap;
} dt_samples;

/* Appends *s (struct copy; its probe arrays now belong to `samples`); returns the stored
 * element (valid until the next push). */
dt_sample *dt_samples_push(dt_samples *samples, const dt_sample *s);
/* A sample with every optional field null: probe fields NAN/DT_NULL_I64, has_probe 0. */
dt_sample dt_sample_empty(void);
/* Appends a kernel entry to p (copies name). */
void dt_probe_kernel_add(dt_probe *p, const char *name, int64_t count, double us);
/* Appends a row to records (present set to 1). */
void dt_probe_row_add(dt_probe_records *rec, const dt_probe_row *row);
/* Index of `name` in rec->names, appending it (with launch) when new. */
size_t dt_probe_records_name(dt_probe_records *rec, const char *name,
                             const dt_probe_launch *launch);
void dt_samples_free(dt_samples *samples);

/* ---- one implementation of one case --------------------------------------------------- */

typedef struct dt_setup_ms {
    double compile, alloc, upload, cold_call, download; /* ms; NAN: not recorded */
} dt_setup_ms;

typedef struct dt_calib_attempt {
    int64_t reps;
    double us_per_call;
} dt_calib_attempt;

typedef struct dt_check_arena {
    int64_t guard_bytes_changed, input_elems_changed, output_unwritten, output_nonfinite;
    char *first_problem; /* "" when fine */
} dt_check_arena;

typedef struct dt_check_oracle {
    int ok;
    int64_t elements, failures;
    double max_abs_error;   /* NAN: null (non-finite; report prints as such) */
    double max_budget_used; /* max |err| / bound; NAN: null */
    int has_first_failure;  /* first_* below set */
    int64_t first_row, first_col;
    double first_value, first_ref, first_bound; /* NAN: null */
    char *first_text;
} dt_check_oracle;

/* One checked call. */
typedef struct dt_check {
    char *when; /* "cold" | "warm" */
    int ok;
    dt_check_arena arena;
    dt_check_oracle oracle;
} dt_check;

/* Anti-cheat checks (issue 17 item 7; docs/anti-cheat.md), one per attack, in report
 * order; their stable names are "cheat.cached_result" ... (dt_cheat_check_name). The
 * logic is orchestrate/dt_cheat.h; the record only keeps what each found. */
typedef enum dt_cheat_check {
    DT_CHEAT_CACHED_RESULT = 0, /* "cheat.cached_result": replays an earlier result */
    DT_CHEAT_SKIPPED_WORK,      /* "cheat.skipped_work": skips work when called repeatedly */
    DT_CHEAT_SIDE_STREAM,       /* "cheat.side_stream": works on after the call returned */
    DT_CHEAT_WROTE_INPUT,       /* "cheat.wrote_input": modifies an input */
    DT_CHEAT_ALIASED_OUTPUT,    /* "cheat.aliased_output": lazy or aliased output */
    DT_CHEAT_FASTER_THAN_PHYSICS, /* "cheat.faster_than_physics" */
    DT_CHEAT_COUNT
} dt_cheat_check;
const char *dt_cheat_check_name(dt_cheat_check c);
int dt_cheat_check_find(const char *name); /* -1 when unknown */

typedef enum dt_cheat_status {
    DT_CHEAT_UNSET = 0,      /* not recorded (older files, a case that never ran) */
    DT_CHEAT_PASSED,         /* "passed" */
    DT_CHEAT_CAUGHT,         /* "caught": the implementation failed its case for it */
    DT_CHEAT_NOT_APPLICABLE, /* "not_applicable": note says why */
    DT_CHEAT_STATUS_COUNT
} dt_cheat_status;
const char *dt_cheat_status_name(dt_cheat_status s);
int dt_cheat_status_find(const char *name); /* -1 when unknown */

typedef struct dt_cheat_result {
    dt_cheat_status status;
    char *note; /* caught: the reason; not_applicable: why; NULL: none */
} dt_cheat_result;

/* What the anti-cheat checks found for one implementation of one case (every round). */
typedef struct dt_cheat_rec {
    int present;           /* 0: absent (older files) */
    int64_t sample_checks; /* timed samples whose output was checked against the oracle */
    int64_t input_sets;    /* distinct input sets the timed samples rotated over */
    int64_t digest_checks; /* of sample_checks: inputs proven unchanged on the device by the
                              worker's digest instead of a download (0 in older files) */
    dt_cheat_result check[DT_CHEAT_COUNT];
} dt_cheat_rec;

typedef struct dt_case_impl {
    int present;            /* 0: this impl did not record the case (invalid v1 cases) */
    dt_impl_status status;
    char *error;            /* one line when failed; NULL: null */
    char *stderr_tail;      /* "" when none */
    char *output_policy;    /* "preallocated", "out=", ... */
    char *implementation;   /* what ran, one line */
    int emulated;           /* 1: the worker could not compute the case's dtype and
                               computed in FP32 from the same inputs, then rounded (its
                               times get no speed verdict); 0 when absent */
    dt_setup_ms setup_ms;
    int has_warmup;
    double warmup_ms;       /* warm-up duration */
    int64_t warmup_calls;
    int has_calibration;
    dt_calib_attempt *calib_attempts;
    size_t n_calib_attempts, cap_calib_attempts;
    int64_t calib_reps;     /* batch reps chosen */
    dt_check *checks;
    size_t n_checks, cap_checks;
    char *output_sha256;    /* of the output (NULL: absent) */
    dt_samples samples[DT_SCOPE_COUNT];
    dt_strv sources;        /* sha256 of captured sources (provenance.sources) */
    /* Probe kind (issue 12): the kind the probe samples used ("concurrent" | "serialized";
     * NULL: absent) and, with kind auto, the pilot's probe/control ratio of each kind
     * (NAN: not measured). */
    char *probe_kind;
    double pilot_poc_concurrent, pilot_poc_serialized;
    /* Energy (issue 15): NVML's total-energy counter read around each of this impl's
     * e2e batch samples (priming calls included), accumulated over every round: joules,
     * window seconds and calls (NAN / 0 until read). energy_j_per_call and avg_power_w
     * follow from them (NAN: null, energy_reason says why, e.g. "cpu backend", "NVML has
     * no energy counter"); has_energy 0: absent (older files). The counter is the whole
     * GPU's, so a window also holds whatever else the GPU did. */
    int has_energy;
    double energy_j, energy_window_s, energy_j_per_call, avg_power_w;
    int64_t energy_calls;
    char *energy_reason;
    /* E2E decomposition (issue 13): the raw timestamps of the unheld single-call probe
     * samples (three per round; stats/dt_decomp.h), or why none was taken; empty: absent. */
    dt_decomp_set decomp;
    /* Graph replay (issue 13): why this impl has no graph_batch samples although the run
     * asked for them (a capture that failed, "cpu: no graphs", ...; not a failure of the
     * case). NULL: available or not asked. */
    char *graph_unavailable;
    /* Cold cache (issue 13, --cache cold): what the worker confirmed for this impl's
     * device windows (orchestrate/dt_cache.h). present 0: a warm run (or older file). */
    struct {
        int present;
        int64_t copies;       /* arena copies the batch windows rotated over (largest seen) */
        int64_t copy_bytes;   /* bytes of one copy (the arena) */
        int64_t l2_bytes;     /* the L2 the flush and rotation were sized for */
        int64_t flush_bytes;  /* bytes the flush before each window wrote */
        char *warm_reason;    /* non-NULL: some device window could not be confirmed cold
                                 (the first reason: the worker's echo failed
                                 dt_cache_window_cold, or it sent none): this impl's device
                                 numbers of the case are then not known to be cold */
    } cache;
    dt_cheat_rec cheat;     /* anti-cheat findings (issue 17 item 7) */
} dt_case_impl;

/* Appends a zeroed check (strings NULL, doubles 0; set fields after) and returns it. */
dt_check *dt_case_impl_check_add(dt_case_impl *ci);
void dt_case_impl_calib_add(dt_case_impl *ci, int64_t reps, double us_per_call);

/* ---- GPU clocks ---------------------------------------------------------------------- */

/* One NVML snapshot; integer fields DT_NULL_I64 and power NAN when the query failed. */
typedef struct dt_clock_snapshot {
    int64_t sm_mhz, mem_mhz, temp_c;
    double power_w;
    int has_throttle;          /* throttle_mask/reasons recorded (else null) */
    uint64_t throttle_mask;    /* NVML clock-event reasons */
    dt_strv throttle_reasons;  /* their names */
    int64_t pstate;            /* 0..15 */
} dt_clock_snapshot;

typedef struct dt_clock_round {
    int32_t round;
    int has_before, has_after; /* 0: snapshot null */
    dt_clock_snapshot before, after;
    int moved;                 /* dt_clocks_moved's rule */
    char *why;                 /* findings joined by "; ", "" when steady */
} dt_clock_round;

/* ---- derived (filled by the derive step; dt_case_derived_clear resets) ---------------- */

/* Order statistics of one scope of one impl (microseconds per call). */
typedef struct dt_rec_summary {
    size_t n;                      /* 0: no samples (other fields NAN) */
    double p50, p90, min, max, iqr;
} dt_rec_summary;

/* Median of paired ratios with a bootstrap interval. */
typedef struct dt_rec_ratio {
    double median;          /* NAN: no pairs */
    double ci_low, ci_high; /* NAN: too few pairs for an interval */
    size_t pairs;
    size_t skipped_pairs;   /* pairs with a non-positive value (0: none) */
} dt_rec_ratio;

typedef struct dt_probe_kernel_median {
    char *name;
    double per_call_p50; /* median count / reps */
    double us_p50;       /* median us per call */
} dt_probe_kernel_median;

/* Medians over the probe samples of one impl. */
typedef struct dt_probe_summary {
    int present;
    double kernel_sum_us_p50, kernel_span_us_p50, kernels_per_call_p50;
    dt_probe_kernel_median *kernels; /* sorted by us_p50, largest first */
    size_t n_kernels, cap_kernels;
} dt_probe_summary;

/* One impl in one scope. */
typedef struct dt_scope_impl {
    dt_rec_summary summary;
    double noise;               /* iqr / p50; NAN: null */
    int has_probe_over_control; /* probe scopes only */
    double probe_over_control;  /* median of probe/control over (round, index) pairs */
    size_t probe_over_control_pairs;
    dt_probe_summary probe;     /* probe scopes only */
} dt_scope_impl;

/* One candidate vs the baseline in one scope. */
typedef struct dt_scope_vs {
    int present;         /* 0 for impls[0] (the baseline) */
    int has_ratio;       /* 0 for invalid cases / no pairs */
    dt_rec_ratio ratio;  /* candidate / baseline (> 1: the candidate is slower) */
    dt_rec_verdict verdict;
    double process_band; /* held scopes of a held run: the verdict's interval is ratio's
                            interval / and x this (dt_derive_process_band, >= 1); 0: none */
} dt_scope_vs;

typedef struct dt_scope_derived {
    int present;         /* the scope has samples in some impl */
    dt_scope_impl *impl; /* [n_impls] */
    dt_scope_vs *vs;     /* [n_impls]; vs[0] unused */
} dt_scope_derived;

typedef enum dt_bound { DT_BOUND_MEMORY = 0, DT_BOUND_COMPUTE } dt_bound;
const char *dt_bound_name(dt_bound b); /* "memory" | "compute" */

typedef struct dt_roofline_impl {
    int present;
    dt_scope scope;  /* control_batch when it has a p50, else e2e_batch */
    double us;       /* its p50 per call */
    double gbps;     /* min_bytes / (us * 1e3) */
    double copy_pct; /* 100 * gbps / copy_gbps; NAN: absent (compute-bound ops) */
    double tflops;   /* flops / (us * 1e6) */
    double flop_pct; /* 100 * tflops / the roofline's flop_tflops; NAN: absent */
} dt_roofline_impl;

typedef struct dt_roofline {
    int present;            /* valid case and a positive copy ceiling */
    double min_bytes;       /* dt_op_min_bytes */
    double flops;           /* dt_op_flops */
    dt_bound bound;
    double copy_gbps;       /* the ceiling used */
    double flop_tflops;     /* gemm: the FLOP ceiling of the case's dtype
                               (environment.ceilings.flops); NAN: none measured */
    dt_roofline_impl *impl; /* [n_impls] */
} dt_roofline;

typedef enum dt_floor_source {
    DT_FLOOR_PAIRED = 0, /* "paired": the case's own floor samples */
    DT_FLOOR_CEILINGS,   /* "ceilings": the run-level launch_sync_floor_us only */
} dt_floor_source;
const char *dt_floor_source_name(dt_floor_source s);

typedef struct dt_e2e_floor_impl {
    int present;
    double single_us;               /* e2e_single p50 */
    double over_floor;              /* paired: median of single/floor; else single/floor */
    int has_over_floor_ratio;       /* paired only */
    dt_rec_ratio over_floor_ratio;
    double over_touch_floor;        /* single / touch floor; NAN: absent */
} dt_e2e_floor_impl;

typedef struct dt_e2e_floor {
    int present;             /* valid small case (policy.small_case_max_elems) with a floor */
    dt_floor_source source;
    double floor_us;         /* environment.ceilings.launch_sync_floor_us; NAN: null */
    double case_floor_us;    /* paired: median of the case's floor samples; NAN: absent */
    double touch_floor_us;   /* NAN: absent (no touch floor) */
    dt_e2e_floor_impl *impl; /* [n_impls] */
} dt_e2e_floor;

/* The held floor check of one impl (issue 12's target): held control batch per call over
 * (kernels per call x the held touch floor batch). */
typedef struct dt_held_floor_impl {
    int present;
    double control_batch_us;  /* control_batch p50 */
    double kernels_per_call;  /* probe batch kernels/call p50 when present (> 0), else 1 */
    int kernels_from_probe;   /* 1: kernels_per_call came from the probe */
    double over_touch_floor;  /* control_batch_us / (kernels_per_call * touch_floor_us) */
} dt_held_floor_impl;

typedef struct dt_held_floor {
    int present;                   /* valid small case, held touch floor batch measured */
    double touch_floor_us;         /* environment.ceilings.held_touch_floor_batch_us */
    dt_held_floor_impl *impl;      /* [n_impls] */
} dt_held_floor;

typedef struct dt_case_derived {
    int present;                              /* derive has run on this case */
    dt_scope_derived scopes[DT_SCOPE_COUNT];
    dt_roofline roofline;
    dt_e2e_floor e2e_floor;
    dt_held_floor held_floor;
} dt_case_derived;

/* ---- a case -------------------------------------------------------------------------- */

typedef struct dt_input {
    char *name;   /* "a", "b", "gamma", ... */
    char *sha256; /* of the logical contents */
    int64_t rows, cols; /* DT_NULL_I64: absent (older files) */
} dt_input;

typedef struct dt_case {
    char *id;              /* unique in the run, e.g. "add_17x257" */
    dt_op op;
    dt_elem_type dtype;    /* DT_ELEM_F32 for v1 files */
    int64_t m, n, k;       /* in [0, 2^31]; >= 1 where the op uses the dimension */
    int views;             /* strided input views */
    char *backend;         /* "cpu" | "cuda" */
    int valid;             /* 0: a check failed or an impl failed */
    double atol, rtol;     /* pass rule |out-ref| <= atol + rtol*scale */
    char *tol_scale;       /* what scale is, e.g. "|a| + |b|" */
    dt_input *inputs;
    size_t n_inputs, cap_inputs;
    int32_t *rounds_done;  /* rounds finished (a resume skips them) */
    size_t n_rounds_done, cap_rounds_done;
    dt_case_impl *impl;    /* [r->n_impls], parallel to r->impls */
    dt_clock_round *clock_rounds; /* one per round with NVML readings; 0: no "clocks" */
    size_t n_clock_rounds, cap_clock_rounds;
    int clocks_moved;      /* any clock_rounds[].moved (kept by dt_case_clock_round_add) */
    int floor_impl;        /* impl index whose worker measured the floor; -1: no floor */
    dt_samples floor;      /* floor samples (reps 0), one before each e2e_single pair */
    dt_case_derived derived;
    int64_t shard;         /* merged runs: the shard that ran the case; DT_NULL_I64: absent */
    char *host;            /* merged runs: that shard's hostname (NULL: absent) */
    int64_t device;        /* --devices runs: index of the GPU that ran the case (one of
                              r->devices); DT_NULL_I64: absent */
    char *device_name, *device_uuid; /* --devices runs: its NVML name and UUID (NULL: null) */
    uint64_t gen;          /* content generation for record/dt_record_cache.h: 0 (a new or
                              decoded case) never reuses a cached text; whoever changes a
                              case calls dt_record_cache_touch (not encoded) */
} dt_case;

dt_input *dt_case_input_add(dt_case *c, const char *name, const char *sha256, int64_t rows,
                            int64_t cols);
void dt_case_round_done_add(dt_case *c, int32_t round);
/* 1 when round is in c->rounds_done (a resumed run skips it). */
int dt_case_round_is_done(const dt_case *c, int32_t round);
/* Appends a round (struct copy; takes its strings/arrays) and updates clocks_moved. */
dt_clock_round *dt_case_clock_round_add(dt_case *c, const dt_clock_round *cr);
/* The round shown in the case summary: the first that moved, else the latest (NULL
 * when there are none). */
const dt_clock_round *dt_case_clock_shown(const dt_case *c);
/* Frees the case's derived contents and zeroes them, keeping the [n_impls] arrays. */
void dt_case_derived_clear(const dt_record *r, dt_case *c);

/* ---- run-level derived --------------------------------------------------------------- */

typedef struct dt_verdict_counts {
    size_t n[DT_REC_VERDICT_COUNT]; /* cases per e2e_batch verdict, indexed by verdict */
} dt_verdict_counts;

/* The assessment of one scope over every case (SPEC §7). */
typedef struct dt_scope_assessment {
    int present;     /* some case derived the scope, or a finding names it */
    dt_level level;  /* the lowest level its findings (and the run-wide ones) give */
    dt_strv reasons; /* its own findings (capped at policy.max_reasons + 1); a comparative
                        scope gets none */
} dt_scope_assessment;

typedef struct dt_run_derived {
    int present;              /* derive has run */
    dt_level level;           /* the run's assessment: run-wide findings and the lowest
                                 level of the scopes that carry verdicts (e2e, control,
                                 dispatch, graph; probe scopes are diagnostics) */
    dt_strv reasons;          /* every finding (capped at policy.max_reasons + 1) */
    dt_scope_assessment scopes[DT_SCOPE_COUNT];
    dt_strv summary;          /* the findings counted, one line per kind, most severe
                                 first ("noise > 10% in 12 small single-call scopes") */
    size_t n_cases, n_valid;  /* counts */
    dt_verdict_counts *vs;    /* [n_impls]; vs[0] (the baseline) unused */
    dt_policy policy;         /* the thresholds this derivation used */
} dt_run_derived;

/* ---- the run ------------------------------------------------------------------------- */

/* results.json "plan": the shard plan a run belongs to (dualtime run --plan, merge;
 * docs/sharding.md). */
typedef struct dt_shard_ref {
    int present;     /* 0: not a sharded run */
    char *plan_id;   /* SHA-256 hex of the plan's canonical text */
    int64_t index;   /* the shard this run is; DT_NULL_I64 in a merged record */
    int64_t count;   /* shards of the plan */
} dt_shard_ref;

/* results.json "devices": one entry per GPU of a `dualtime run --devices` run
 * (docs/devices.md): what ran there, and the ceilings measured on it. */
typedef struct dt_device_rec {
    int64_t index;             /* the --devices index (NVML's, as nvidia-smi numbers them) */
    char *name, *uuid, *pci_bus_id; /* NVML's description (NULL: unknown) */
    int64_t shard;             /* the shard of the run's plan it ran (DT_NULL_I64: none) */
    char *cpus;                /* CPU list its run was confined to (NULL: not confined) */
    char *dir;                 /* its own run's folder, relative to the run's */
    char *started_at, *finished_at; /* its run's times (NULL: absent) */
    int64_t exit_status;       /* its run's exit status */
    int64_t cases, valid;      /* cases of the merged run it ran, and how many are valid */
    dt_ceilings_rec ceilings;  /* measured on this device (present 0: none) */
} dt_device_rec;

/* results.json "replicas": one case measured on every device (--replicate), per
 * implementation and scope: the p50 on each device and the spread between them. */
typedef struct dt_replica_rec {
    char *case_id, *impl_id;
    dt_scope scope;            /* e2e_batch, or control_batch when device-timed */
    double *us;                /* [n_us] p50 per call, in r->devices order; NAN: none */
    size_t n_us;
    double spread;             /* (max - min) / min over the values present; NAN: < 2 */
} dt_replica_rec;

struct dt_record {
    int format_version;       /* version decoded from (1 or 2); a new record: 2 */
    int complete;             /* 0 while running or after an interruption */
    dt_tool tool;
    dt_strv command_line;
    char *started_at, *finished_at; /* "2026-11-30T09:00:00Z" */
    dt_settings settings;
    dt_impl *impls;           /* impls[0] = the baseline */
    size_t n_impls, cap_impls;
    dt_environment env;
    dt_provenance prov;
    dt_case *cases;           /* plan order */
    size_t n_cases, cap_cases;
    char *floor_unavailable;  /* the floor request was refused (NULL: absent) */
    int interrupted_signal;   /* 0: not interrupted; else the signal that stopped it */
    char *resumes_json;       /* resumption notes, canonical JSON array text (NULL: none) */
    dt_strv notes;            /* what the run noticed about its own settings, one line
                                 each ("--threads 16 exceeds the 2 cores ..."); n 0: none */
    int probe_unheld;         /* the probe scopes' windows were not held: decoded from a
                                 file written before held windows that has probe samples */
    dt_run_derived derived;
    dt_shard_ref plan;        /* the shard plan (plan.present 0: not sharded) */
    char *shards_json;        /* merged runs: one entry per shard (index, host, times,
                                 environment), canonical JSON array text (NULL: none) */
    dt_device_rec *devices;   /* --devices runs: the GPUs, in --devices order (n 0: none) */
    size_t n_devices;
    dt_replica_rec *replicas; /* --replicate: cases measured on every device (n 0: none) */
    size_t n_replicas;
};

/* An empty record: format_version 2, settings defaults (bootstrap from the policy),
 * env.ceilings/nvml absent, derived.policy = dt_policy_default(). */
dt_record *dt_record_new(void);
/* Frees r and everything it owns. NULL is fine. */
void dt_record_free(dt_record *r);

/* Adds an implementation (copies id). The first added must be the baseline, later ones
 * candidates; all before the first case (DT_ASSERTs both). */
dt_impl *dt_record_impl_add(dt_record *r, const char *id, dt_role role);
/* Index of the impl with this id, or -1. */
int dt_record_impl_find(const dt_record *r, const char *id);

/* Adds a case (copies id) with impl[] and derived arrays sized r->n_impls, every impl
 * present with status ok and empty strings, floor_impl -1, setup_ms NAN, dtype f32. The
 * pointer is valid until the next dt_record_case_add. */
dt_case *dt_record_case_add(dt_record *r, const char *id);
/* Index of the case with this id, or -1. */
int dt_record_case_find(const dt_record *r, const char *id);
/* Removes case i (everything it owns freed; later cases move down by one), e.g. a failed
 * case that `run --resume --retry-failed` runs again from scratch. */
void dt_record_case_remove(dt_record *r, size_t i);
/* The next free sample position: 1 + the largest stored (any impl, scope or floor
 * sample); 0 for a record without samples. */
int64_t dt_record_next_position(const dt_record *r);

void dt_record_prov_file_add(dt_record *r, const char *what, const char *path,
                             const char *sha256);
/* Appends a source (copies strings; name/framework may be NULL); returns it so the
 * caller can push options. */
dt_prov_source *dt_record_prov_source_add(dt_record *r, const char *sha256, const char *name,
                                          const char *framework);

/* Frees every derived block (run and cases), keeping the arrays; policy reset to
 * dt_policy_default() with the settings' bootstrap. */
void dt_record_derived_clear(dt_record *r);

/* Appends an empty device entry (index, shard, exit status and counts DT_NULL_I64,
 * ceilings absent with NAN numbers) / an empty replica entry with n_us values NAN. */
dt_device_rec *dt_record_device_add(dt_record *r);
dt_replica_rec *dt_record_replica_add(dt_record *r, size_t n_us);
/* Deep copy of a ceilings record (strings duplicated) into *dst (overwritten). */
void dt_ceilings_copy(dt_ceilings_rec *dst, const dt_ceilings_rec *src);

/* Replaces *dst with a copy of s (NULL allowed); frees the old value. */
void dt_record_set_str(char **dst, const char *s);

#endif
