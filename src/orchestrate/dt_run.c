/* dt_run.c — the run loop (see dt_run.h). Order of one case, per round:
 *
 *   pristine arena + FP64 reference
 *   per framework: prepare → upload → cold call → download → check("cold")
 *   per framework: warmup (batches) → calibrate R
 *   batch samples, ABBA-interleaved; single samples, ABBA-interleaved
 *   per framework: poison → upload → call → download → check("warm") → release
 *   write results.json + results.md
 *
 * A framework whose check fails is never timed; a worker that dies fails its case only
 * and is restarted at the next case. */
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
#include "../oracle/dt_oracle.h"
#include "../plan/dt_ops_json.h"
#include "../report/dt_derive.h"
#include "../report/dt_plot.h"
#include "../report/dt_report_md.h"
#include "../report/dt_results_io.h"

static volatile sig_atomic_t g_stop_signal;

void dt_run_request_stop(int signo) { g_stop_signal = signo; }
int dt_run_stop_requested(void) { return g_stop_signal != 0; }

#define PROTOCOL_VERSION 1

/* Per-framework state of the case being run. */
typedef struct fw_case {
    int index;          /* 0 candidate, 1 baseline */
    const char *id;     /* framework id */
    dt_worker *w;
    dt_worker *pw;      /* probe worker (a second process), device timing only */
    int probe_prepared; /* prepare on pw succeeded: release owed */
    dt_shm shm;         /* this framework's arena (the probe worker maps it too) */
    json_t *impl;       /* borrowed: cases[i].impl.<id> */
    int prepared;       /* prepare succeeded: release owed */
    int ok;             /* still eligible for timing */
    int64_t reps;       /* calibrated batch size */
} fw_case;

/* Everything the loop carries between cases. */
typedef struct run_ctx {
    const dt_run_config *cfg;
    dt_worker **workers;
    json_t *results;
    int64_t position;   /* global sample counter */
    int cases_done, cases_total;
    int64_t t_start_ns;
    const char *current;
    int floor_off;      /* the candidate worker has no floor call: asked no more */
} run_ctx;

dt_status dt_worker_start_hello(dt_worker *w, double timeout_s, json_t **hello, dt_err *err) {
    *hello = NULL;
    dt_status st = dt_worker_start(w, err);
    if (st != DT_OK) return st;
    /* the op table travels with hello: a worker that is not C learns the ops from it
     * (docs/protocol.md, "The op table"); the native worker reads the registry itself */
    json_t *req = json_pack("{s:s,s:i,s:o}", "cmd", "hello", "protocol", PROTOCOL_VERSION,
                            "ops", dt_ops_json());
    json_t *resp = NULL;
    /* starting a framework (importing torch, creating a CUDA context) can take far longer
     * than one request: the start gets at least DT_WORKER_START_S */
    st = dt_worker_call(w, req, timeout_s > DT_WORKER_START_S ? timeout_s : DT_WORKER_START_S,
                        &resp, err);
    json_decref(req);
    if (st != DT_OK) {
        json_decref(resp);
        dt_worker_kill(w, "hello failed");
        return st;
    }
    json_int_t proto = json_integer_value(json_object_get(resp, "protocol"));
    if (proto != PROTOCOL_VERSION) {
        json_decref(resp);
        dt_worker_kill(w, "protocol mismatch");
        return dt_fail(err, DT_EWORKER, "worker %s speaks protocol %lld, dualtime speaks %d",
                       w->argv[0], (long long)proto, PROTOCOL_VERSION);
    }
    *hello = resp;
    return DT_OK;
}

/* ---- progress --------------------------------------------------------------------- */

static void progress(run_ctx *c, const char *fw, const char *phase) {
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

static void fw_fail(fw_case *f, const char *stage, const char *msg) {
    if (!f->ok && json_is_string(json_object_get(f->impl, "error"))) return; /* first wins */
    f->ok = 0;
    char line[700];
    snprintf(line, sizeof line, "%s: %s", stage, msg);
    json_object_set_new(f->impl, "status", json_string("failed"));
    json_object_set_new(f->impl, "error", json_string(line));
    char tail[DT_STDERR_TAIL];
    dt_worker_stderr_tail(f->w, tail, sizeof tail);
    json_object_set_new(f->impl, "stderr_tail", json_string(tail));
}

/* Sends req (consumed) to f's worker; on failure marks f failed with stage. */
static dt_status fw_call(run_ctx *c, fw_case *f, const char *stage, json_t *req,
                         json_t **resp) {
    dt_err e;
    json_t *r = NULL;
    dt_status st;
    if (dt_run_stop_requested()) {
        st = dt_fail(&e, DT_EIO, "interrupted by signal %d", (int)g_stop_signal);
    } else if (!dt_worker_alive(f->w)) {
        st = dt_fail(&e, DT_EWORKER, "worker is not running");
    } else {
        st = dt_worker_call(f->w, req, c->cfg->timeout_s, &r, &e);
    }
    json_decref(req);
    if (st != DT_OK) {
        json_decref(r);
        fw_fail(f, stage, e.msg);
        return st;
    }
    if (resp) *resp = r;
    else json_decref(r);
    return DT_OK;
}

/* The positive integer host_ns of a run or floor answer into *ns; 0 when it has none. */
static int answer_host_ns(const json_t *resp, int64_t *ns) {
    const json_t *v = json_object_get(resp, "host_ns");
    if (!json_is_integer(v) || json_integer_value(v) <= 0) return 0;
    *ns = json_integer_value(v);
    return 1;
}

/* run(reps) with `prime` untimed calls before the timed part (0: none). */
static dt_status fw_run_primed(run_ctx *c, fw_case *f, const char *stage, int64_t reps,
                               int prime, int64_t *host_ns) {
    json_t *resp = NULL;
    json_t *req = json_pack("{s:s,s:I}", "cmd", "run", "reps", (json_int_t)reps);
    if (prime > 0) json_object_set_new(req, "prime", json_integer(prime));
    dt_status st = fw_call(c, f, stage, req, &resp);
    if (st != DT_OK) return st;
    int have = answer_host_ns(resp, host_ns);
    json_decref(resp);
    if (!have) {
        fw_fail(f, stage, "worker answered run without a positive integer host_ns");
        return DT_EWORKER;
    }
    return DT_OK;
}

static dt_status fw_run(run_ctx *c, fw_case *f, const char *stage, int64_t reps,
                        int64_t *host_ns) {
    return fw_run_primed(c, f, stage, reps, 0, host_ns);
}

static dt_status fw_copy(run_ctx *c, fw_case *f, const char *cmd, double *ms) {
    json_t *resp = NULL;
    dt_status st = fw_call(c, f, cmd, json_pack("{s:s}", "cmd", cmd), &resp);
    if (st != DT_OK) return st;
    *ms = json_number_value(json_object_get(resp, "ms"));
    json_decref(resp);
    return DT_OK;
}

/* ---- checks --------------------------------------------------------------------------- */

/* One checked call: poison, upload, call, download, check arena and oracle. Appends a
 * record to impl.checks. Returns DT_OK when everything passed. */
static dt_status fw_checked_call(run_ctx *c, fw_case *f, const char *when,
                                 const dt_case_layout *L, const uint8_t *pristine,
                                 const dt_oracle_ref *ref, json_t *setup) {
    dt_arena_poison_outputs(L, f->shm.base);
    double up_ms = 0, down_ms = 0;
    int64_t ns = 0;
    if (fw_copy(c, f, "upload", &up_ms) != DT_OK) return DT_EWORKER;
    if (fw_run(c, f, strcmp(when, "cold") == 0 ? "cold call" : "checked call", 1, &ns) != DT_OK)
        return DT_EWORKER;
    if (fw_copy(c, f, "download", &down_ms) != DT_OK) return DT_EWORKER;
    if (setup) {
        json_object_set_new(setup, "upload", json_real(up_ms));
        json_object_set_new(setup, "cold_call", json_real((double)ns / 1e6));
        json_object_set_new(setup, "download", json_real(down_ms));
    }
    dt_arena_report ar;
    dt_arena_check(L, f->shm.base, pristine, &ar);
    dt_oracle_report orp;
    dt_oracle_check(ref, L, f->shm.base, &orp);
    json_t *rec = json_pack(
        "{s:s,s:b,s:{s:I,s:I,s:I,s:I,s:s},s:{s:b,s:I,s:I,s:f,s:f}}", "when", when, "ok",
        ar.ok && orp.ok, "arena", "guard_bytes_changed", (json_int_t)ar.guard_bytes_changed,
        "input_elems_changed", (json_int_t)ar.input_elems_changed, "output_unwritten",
        (json_int_t)ar.output_unwritten, "output_nonfinite", (json_int_t)ar.output_nonfinite,
        "first_problem", ar.first_problem, "oracle", "ok", orp.ok, "elements",
        (json_int_t)orp.elements, "failures", (json_int_t)orp.failures, "max_abs_error",
        0.0, "max_budget_used", 0.0);
    DT_ASSERT(rec);
    json_t *oracle = json_object_get(rec, "oracle");
    /* JSON has no infinity: a NaN/Inf output or an inexact exact op is recorded as null */
    json_object_set_new(oracle, "max_abs_error",
                        isfinite(orp.max_abs_error) ? json_real(orp.max_abs_error) : json_null());
    json_object_set_new(oracle, "max_budget_used", isfinite(orp.max_budget_used)
                                                       ? json_real(orp.max_budget_used)
                                                       : json_null());
    if (!orp.ok) {
        json_object_set_new(oracle, "first_failure",
                            json_pack("{s:I,s:I,s:f,s:f,s:f,s:s}", "row",
                                      (json_int_t)orp.first_fail_row, "col",
                                      (json_int_t)orp.first_fail_col, "value",
                                      isfinite(orp.first_fail_value) ? orp.first_fail_value : 0.0,
                                      "ref", orp.first_fail_ref, "bound", orp.first_fail_bound,
                                      "text", orp.first_failure));
    } else {
        json_object_set_new(oracle, "first_failure", json_null());
    }
    json_array_append_new(json_object_get(f->impl, "checks"), rec);
    if (!ar.ok || !orp.ok) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s", !ar.ok ? ar.first_problem : orp.first_failure);
        fw_fail(f, strcmp(when, "cold") == 0 ? "check after cold call" : "check after timing",
                msg);
        return DT_ECHECK;
    }
    return DT_OK;
}

/* ---- timing policy -------------------------------------------------------------------- */

static dt_status fw_warmup(run_ctx *c, fw_case *f) {
    int64_t t0 = dt_now_ns(), calls = 0, batch = 1;
    double target_ns = c->cfg->warmup_ms * 1e6;
    while ((double)(dt_now_ns() - t0) < target_ns) {
        int64_t ns;
        if (fw_run(c, f, "warmup", batch, &ns) != DT_OK) return DT_EWORKER;
        calls += batch;
        if (batch < 8) batch *= 2;
    }
    json_object_set_new(f->impl, "warmup",
                        json_pack("{s:f,s:I}", "ms", (double)(dt_now_ns() - t0) / 1e6, "calls",
                                  (json_int_t)calls));
    return DT_OK;
}

/* Seed rule: from R = 1, up to 8 attempts; stop when a batch lasts >= 0.8 * sample_ms or
 * R reaches the cap; else R <- clamp(floor(R * target / elapsed), R + 1, cap). */
static dt_status fw_calibrate(run_ctx *c, fw_case *f) {
    double target_ns = c->cfg->sample_ms * 1e6;
    int64_t r = 1, cap = c->cfg->max_reps;
    json_t *attempts = json_array();
    for (int a = 0; a < 8; a++) {
        int64_t ns;
        if (fw_run(c, f, "calibration", r, &ns) != DT_OK) {
            json_decref(attempts);
            return DT_EWORKER;
        }
        json_array_append_new(attempts, json_pack("{s:I,s:f}", "reps", (json_int_t)r,
                                                  "us_per_call", (double)ns / 1e3 / (double)r));
        if ((double)ns >= 0.8 * target_ns || r >= cap) break;
        double want = floor((double)r * target_ns / (double)(ns > 0 ? ns : 1));
        int64_t next = want > (double)cap ? cap : (int64_t)want;
        if (next < r + 1) next = r + 1;
        if (next > cap) next = cap;
        r = next;
    }
    f->reps = r;
    json_object_set_new(f->impl, "calibration",
                        json_pack("{s:o,s:I}", "attempts", attempts, "reps", (json_int_t)r));
    return DT_OK;
}

/* One floor sample (docs/protocol.md, "floor": the candidate worker's empty call, primed
 * like a sample) into cases[].floor.samples, paired by (round, index) with the single
 * samples that follow it. A worker without a floor call answers ok:false: that is
 * recorded once (results.floor_unavailable) and no more are asked for in this run. */
static void take_floor_sample(run_ctx *c, json_t *cj, fw_case *f, int round, int i) {
    if (c->floor_off || !f->ok || !dt_worker_alive(f->w)) return;
    json_t *req = json_pack("{s:s,s:I,s:i}", "cmd", "floor", "reps", (json_int_t)1, "prime",
                            c->cfg->prime);
    json_t *resp = NULL;
    dt_err e;
    progress(c, f->id, "floor samples");
    dt_status st = dt_worker_call(f->w, req, c->cfg->timeout_s, &resp, &e);
    json_decref(req);
    int64_t ns = 0;
    if (st == DT_OK && !answer_host_ns(resp, &ns))
        st = dt_fail(&e, DT_EWORKER, "worker answered floor without a positive integer host_ns");
    if (st != DT_OK) {
        if (!dt_worker_alive(f->w)) {
            fw_fail(f, "floor sample", e.msg);
        } else {
            c->floor_off = 1;
            char line[DT_ERR_LEN + 64];
            snprintf(line, sizeof line, "%s worker: %s", f->id, e.msg);
            json_object_set_new(c->results, "floor_unavailable", json_string(line));
        }
        json_decref(resp);
        return;
    }
    json_t *fl = json_object_get(cj, "floor");
    if (!json_is_object(fl)) {
        fl = json_pack("{s:s,s:[]}", "worker", f->id, "samples");
        json_object_set_new(cj, "floor", fl);
    }
    json_array_append_new(json_object_get(fl, "samples"),
                          json_pack("{s:f,s:i,s:i,s:I}", "us", (double)ns / 1e3, "round",
                                    round, "index", i, "position", (json_int_t)c->position++));
    json_decref(resp);
}

/* Takes samples of one scope for both frameworks in ABBA order. flip reverses the
 * starting framework (alternate rounds). single: one call per sample, each pair of them
 * preceded by a floor sample on the candidate's worker. */
static void take_samples(run_ctx *c, json_t *cj, fw_case fw[2], int round, int flip,
                         int single) {
    const char *scope = single ? "e2e_single" : "e2e_batch";
    for (int i = 0; i < c->cfg->samples; i++) {
        if (single) take_floor_sample(c, cj, &fw[0], round, i);
        int first = ((i & 1) ^ flip) ? 1 : 0;
        for (int j = 0; j < 2; j++) {
            fw_case *f = &fw[first ^ j];
            if (!f->ok) continue;
            progress(c, f->id, single ? "single samples" : "batch samples");
            int64_t reps = single ? 1 : f->reps, ns = 0;
            /* untimed calls right before (--prime, default 1), in the same request: on a
             * GPU shared by two worker processes they take the context switch away from
             * the sample (docs/protocol.md, "Priming") */
            if (fw_run_primed(c, f, scope, reps, c->cfg->prime, &ns) != DT_OK) continue;
            json_t *arr = json_object_get(json_object_get(f->impl, "samples"), scope);
            json_array_append_new(
                arr, json_pack("{s:f,s:I,s:i,s:i,s:I}", "us", (double)ns / 1e3 / (double)reps,
                               "reps", (json_int_t)reps, "round", round, "index", i,
                               "position", (json_int_t)c->position++));
        }
    }
}


/* ---- device phase ---------------------------------------------------------------------- */

/* Every kernel record of a probe sample, compactly (a run keeps tens of thousands):
 * {"t0_ns": first start (host monotonic), "names": [...], "launch": {name: {grid, block}},
 *  "rows": [[name index, start - t0 (ns), end - t0 (ns), stream id], ...]} */
static json_t *compact_records(json_t *recs) {
    json_t *names = json_array(), *launch = json_object(), *rows = json_array();
    double t0 = 0;
    size_t i;
    json_t *k;
    json_array_foreach(recs, i, k) {
        double st = json_number_value(json_object_get(k, "start_ns"));
        if (i == 0 || st < t0) t0 = st;
    }
    json_array_foreach(recs, i, k) {
        const char *name = json_string_value(json_object_get(k, "name"));
        if (!name) name = "?";
        size_t idx = json_array_size(names), j;
        json_t *nm;
        json_array_foreach(names, j, nm) {
            if (strcmp(json_string_value(nm), name) == 0) {
                idx = j;
                break;
            }
        }
        if (idx == json_array_size(names)) {
            json_array_append_new(names, json_string(name));
            json_object_set_new(launch, name,
                                json_pack("{s:O,s:O}", "grid", json_object_get(k, "grid"),
                                          "block", json_object_get(k, "block")));
        }
        json_array_append_new(
            rows, json_pack("[I,I,I,O]", (json_int_t)idx,
                            (json_int_t)(json_number_value(json_object_get(k, "start_ns")) - t0),
                            (json_int_t)(json_number_value(json_object_get(k, "end_ns")) - t0),
                            json_object_get(k, "stream_id") ? json_object_get(k, "stream_id")
                                                            : json_null()));
    }
    return json_pack("{s:I,s:o,s:o,s:o}", "t0_ns", (json_int_t)t0, "names", names, "launch",
                     launch, "rows", rows);
}

/* Converts a worker's device result into a sample record (per-call microseconds). */
static json_t *device_sample(json_t *res, int64_t reps, int round, int index, int64_t pos,
                             int probe) {
    double r = (double)reps;
    json_t *smp = json_pack("{s:f,s:I,s:i,s:i,s:I}", "us",
                            json_number_value(json_object_get(res, "stream_ns")) / 1e3 / r,
                            "reps", (json_int_t)reps, "round", round, "index", index,
                            "position", (json_int_t)pos);
    if (!probe) return smp;
    json_object_set_new(smp, "kernel_sum_us",
                        json_real(json_number_value(json_object_get(res, "kernel_sum_ns")) / 1e3 / r));
    json_object_set_new(smp, "kernel_span_us",
                        json_real(json_number_value(json_object_get(res, "kernel_span_ns")) / 1e3 / r));
    json_object_set(smp, "kernel_count", json_object_get(res, "kernel_count"));
    json_object_set(smp, "launch_count", json_object_get(res, "launch_count"));
    json_object_set(smp, "clock_offset_ns", json_object_get(res, "clock_offset_ns"));
    json_object_set(smp, "clock_uncertainty_ns", json_object_get(res, "clock_uncertainty_ns"));
    /* per-kernel-name totals (per call) plus every raw record */
    json_t *by = json_object(), *recs = json_object_get(res, "kernels");
    size_t i;
    json_t *k;
    json_array_foreach(recs, i, k) {
        const char *name = json_string_value(json_object_get(k, "name"));
        if (!name) continue;
        double d = json_number_value(json_object_get(k, "end_ns")) -
                   json_number_value(json_object_get(k, "start_ns"));
        json_t *e = json_object_get(by, name);
        if (!e) {
            e = json_pack("{s:f,s:i}", "ns", 0.0, "count", 0);
            json_object_set_new(by, name, e);
        }
        json_object_set_new(e, "ns", json_real(json_number_value(json_object_get(e, "ns")) + d));
        json_object_set_new(e, "count", json_integer(json_integer_value(json_object_get(e, "count")) + 1));
    }
    json_t *kernels = json_array();
    const char *name;
    json_t *e;
    json_object_foreach(by, name, e) {
        json_array_append_new(kernels, json_pack("{s:s,s:f,s:I}", "name", name, "us",
                                                 json_number_value(json_object_get(e, "ns")) / 1e3 / r,
                                                 "count",
                                                 json_integer_value(json_object_get(e, "count"))));
    }
    json_decref(by);
    json_object_set_new(smp, "kernels", kernels);
    json_object_set_new(smp, "records", compact_records(recs));
    return smp;
}

/* One device region on worker w (control on the main worker, probe on the probe worker). */
static dt_status fw_device(run_ctx *c, fw_case *f, int probe, int64_t reps, json_t **res) {
    dt_worker *saved = f->w;
    if (probe) f->w = f->pw;
    json_t *resp = NULL;
    dt_status st = fw_call(c, f, probe ? "probe sample" : "control sample",
                           json_pack("{s:s,s:s,s:I,s:I,s:s,s:i}", "cmd", "device", "scope",
                                     probe ? "probe" : "control", "reps", (json_int_t)reps,
                                     "capacity", (json_int_t)(reps * 16 + 64), "probe_kind",
                                     c->cfg->probe_kind ? "serialized" : "concurrent", "prime",
                                     c->cfg->prime),
                           &resp);
    f->w = saved;
    if (st != DT_OK) return st;
    json_t *r = json_object_get(resp, "result");
    if (!json_is_object(r) || !(json_number_value(json_object_get(r, "stream_ns")) > 0)) {
        json_decref(resp);
        fw_fail(f, probe ? "probe sample" : "control sample",
                "worker answered device without a positive result.stream_ns");
        return DT_EWORKER;
    }
    *res = json_incref(r);
    json_decref(resp);
    return DT_OK;
}

/* Starts (if needed) and prepares the probe worker of f on the same arena, then warms it. */
static dt_status fw_probe_prepare(run_ctx *c, fw_case *f, json_t *prepare_req, int64_t reps) {
    dt_err e;
    if (!dt_worker_alive(f->pw)) {
        json_t *hello = NULL;
        if (dt_worker_start_hello(f->pw, c->cfg->timeout_s, &hello, &e) != DT_OK) {
            fw_fail(f, "start probe worker", e.msg);
            return DT_EWORKER;
        }
        json_decref(hello);
        /* A dedicated probe process: CUPTI stays attached between probe regions, so the
         * warmup and prime calls pay its setup (docs/device-timing.md, persistent mode). */
        dt_worker *saved_pw = f->w;
        f->w = f->pw;
        dt_status pst = fw_call(c, f, "probe worker probe_process",
                                json_pack("{s:s,s:s}", "cmd", "probe_process", "probe_kind",
                                          c->cfg->probe_kind ? "serialized" : "concurrent"),
                                NULL);
        f->w = saved_pw;
        if (pst != DT_OK) return pst;
    }
    dt_worker *saved = f->w;
    f->w = f->pw;
    dt_status st = fw_call(c, f, "probe worker prepare", json_incref(prepare_req), NULL);
    if (st == DT_OK) {
        f->probe_prepared = 1;
        double ms;
        st = fw_copy(c, f, "upload", &ms);
    }
    int64_t t0 = dt_now_ns(), ns;
    while (st == DT_OK && (double)(dt_now_ns() - t0) < c->cfg->warmup_ms * 1e6)
        st = fw_run(c, f, "probe worker warmup", reps, &ns);
    f->w = saved;
    return st;
}

/* Paired control/probe samples: per pair index i, frameworks in ABBA order, and within a
 * framework control first on even i, probe first on odd i. */
static void take_device_samples(run_ctx *c, fw_case fw[2], int round, int flip, int single) {
    for (int i = 0; i < c->cfg->samples; i++) {
        int first = ((i & 1) ^ flip) ? 1 : 0;
        for (int j = 0; j < 2; j++) {
            fw_case *f = &fw[first ^ j];
            if (!f->ok) continue;
            int64_t reps = single ? 1 : (f->reps < c->cfg->device_reps_cap ? f->reps
                                                                            : c->cfg->device_reps_cap);
            for (int q = 0; q < 2; q++) {
                int probe = (i & 1) ? (q == 0) : (q == 1);
                const char *scope = probe ? (single ? "probe_single" : "probe_batch")
                                          : (single ? "control_single" : "control_batch");
                progress(c, f->id, scope);
                json_t *res = NULL;
                if (fw_device(c, f, probe, reps, &res) != DT_OK) break;
                json_t *samples = json_object_get(f->impl, "samples");
                json_t *arr = json_object_get(samples, scope);
                if (!arr) {
                    arr = json_array();
                    json_object_set_new(samples, scope, arr);
                }
                json_array_append_new(arr, device_sample(res, reps, round, i, c->position++, probe));
                json_decref(res);
            }
        }
    }
}

/* ---- case JSON ---------------------------------------------------------------------------- */

static json_t *find_case(json_t *results, const char *id) {
    json_t *cases = json_object_get(results, "cases");
    size_t i;
    json_t *v;
    json_array_foreach(cases, i, v) {
        if (strcmp(json_string_value(json_object_get(v, "id")), id) == 0) return v;
    }
    return NULL;
}

static json_t *new_impl(void) {
    return json_pack("{s:s,s:n,s:s,s:s,s:s,s:{},s:[],s:{s:[],s:[]},s:[]}", "status", "ok",
                     "error", "stderr_tail", "", "output_policy", "", "implementation", "",
                     "setup_ms", "checks", "samples", "e2e_batch", "e2e_single", "sources");
}

static json_t *case_json(run_ctx *c, const dt_case_spec *spec, const dt_case_layout *L,
                         const uint8_t *pristine) {
    const dt_op_info *info = dt_op_get(spec->op);
    json_t *inputs = json_array();
    for (int b = 0; b < L->nbuffers; b++) {
        if (L->buf[b].is_output) continue;
        char hex[65];
        dt_buffer_sha256(L, b, pristine, hex);
        json_array_append_new(inputs, json_pack("{s:s,s:s,s:I,s:I}", "name", L->buf[b].name,
                                                "sha256", hex, "rows",
                                                (json_int_t)L->buf[b].rows, "cols",
                                                (json_int_t)L->buf[b].cols));
    }
    json_t *cj = json_pack(
        "{s:s,s:s,s:I,s:I,s:I,s:b,s:s,s:b,s:{s:f,s:f,s:s},s:o,s:{}}", "id", spec->id, "op",
        info->name, "m", (json_int_t)spec->m, "n", (json_int_t)spec->n, "k",
        (json_int_t)spec->k, "views", spec->views, "backend", c->cfg->backend, "valid", 1,
        "tolerance", "atol", info->atol, "rtol", info->rtol, "scale", info->scale_doc, "inputs",
        inputs, "impl");
    DT_ASSERT(cj);
    for (int i = 0; i < 2; i++)
        json_object_set_new(json_object_get(cj, "impl"), c->cfg->fw_ids[i], new_impl());
    return cj;
}

static json_t *buffers_json(const dt_case_layout *L) {
    json_t *a = json_array();
    for (int b = 0; b < L->nbuffers; b++) {
        const dt_buffer_layout *B = &L->buf[b];
        json_array_append_new(
            a, json_pack("{s:s,s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:I}", "name", B->name, "dtype",
                         B->dtype == DT_I64 ? "i64" : "f32", "is_output", B->is_output, "rows",
                         (json_int_t)B->rows, "cols", (json_int_t)B->cols, "row_stride",
                         (json_int_t)B->row_stride, "data_offset", (json_int_t)B->data_offset,
                         "region_offset", (json_int_t)B->region_offset, "region_bytes",
                         (json_int_t)B->region_bytes));
    }
    return a;
}

/* Stores captured sources (once) under DIR/sources and records them in provenance. */
static void keep_sources(run_ctx *c, fw_case *f, json_t *sources) {
    size_t i;
    json_t *s;
    json_t *prov = json_object_get(json_object_get(c->results, "provenance"), "sources");
    json_array_foreach(sources, i, s) {
        const char *sha = json_string_value(json_object_get(s, "sha256"));
        if (!sha) continue;
        json_array_append_new(json_object_get(f->impl, "sources"), json_string(sha));
        int known = 0;
        size_t j;
        json_t *p;
        json_array_foreach(prov, j, p) {
            if (strcmp(json_string_value(json_object_get(p, "sha256")), sha) == 0) known = 1;
        }
        if (known) continue;
        json_array_append_new(prov, json_pack("{s:s,s:O,s:O,s:s}", "sha256", sha, "name",
                                              json_object_get(s, "name"), "options",
                                              json_object_get(s, "options"), "framework", f->id));
        const char *text = json_string_value(json_object_get(s, "text"));
        if (!c->cfg->capture_sources || !text) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/sources", c->cfg->output_dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/sources/%s.cu", c->cfg->output_dir, sha);
        FILE *fp = fopen(path, "wx");
        if (fp) {
            fputs(text, fp);
            fclose(fp);
        }
    }
}

/* ---- one case ------------------------------------------------------------------------- */

static void run_case(run_ctx *c, const dt_case_spec *spec, int round, int flip) {
    const dt_run_config *cfg = c->cfg;
    c->current = spec->id;
    dt_case_layout L;
    dt_layout_make(&L, spec->op, spec->m, spec->n, spec->k, spec->views);
    uint8_t *pristine = dt_xmalloc((size_t)L.total_bytes);
    progress(c, NULL, "inputs");
    dt_arena_fill(&L, pristine, cfg->seed);

    json_t *cj = find_case(c->results, spec->id);
    if (!cj) {
        cj = case_json(c, spec, &L, pristine);
        json_array_append_new(json_object_get(c->results, "cases"), cj);
    }
    json_t *impls = json_object_get(cj, "impl");

    fw_case fw[2];
    memset(fw, 0, sizeof fw);
    json_t *prepare_req[2] = {NULL, NULL}; /* kept for the probe workers */
    json_t *clocks_before = NULL;          /* NVML snapshot before the timed part */
    for (int i = 0; i < 2; i++) {
        fw[i].index = i;
        fw[i].id = cfg->fw_ids[i];
        fw[i].w = c->workers[i];
        fw[i].pw = c->workers[2 + i];
        fw[i].impl = json_object_get(impls, fw[i].id);
        /* a framework that failed in an earlier round stays failed */
        fw[i].ok = strcmp(json_string_value(json_object_get(fw[i].impl, "status")), "ok") == 0;
    }

    progress(c, NULL, "FP64 reference");
    dt_oracle_ref ref;
    dt_err e;
    memset(&ref, 0, sizeof ref);
    if (dt_oracle_compute(&L, pristine, &ref, &e) != DT_OK) {
        for (int i = 0; i < 2; i++) fw_fail(&fw[i], "oracle", e.msg);
        goto done;
    }

    /* prepare and cold check, per framework */
    for (int i = 0; i < 2; i++) {
        fw_case *f = &fw[i];
        if (!f->ok) continue;
        if (!dt_worker_alive(f->w)) {
            json_t *hello = NULL;
            if (dt_worker_start_hello(f->w, cfg->timeout_s, &hello, &e) != DT_OK) {
                fw_fail(f, "restart worker", e.msg);
                continue;
            }
            json_decref(hello);
        }
        if (dt_shm_create(&f->shm, L.total_bytes, &e) != DT_OK) {
            fw_fail(f, "shared memory", e.msg);
            continue;
        }
        memcpy(f->shm.base, pristine, (size_t)L.total_bytes);
        progress(c, f->id, "prepare");
        json_t *req = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:s,s:I,s:o,s:b}", "cmd",
                                "prepare", "case", spec->id, "op", dt_op_get(spec->op)->name,
                                "backend", cfg->backend, "m", (json_int_t)spec->m, "n",
                                (json_int_t)spec->n, "k", (json_int_t)spec->k, "shm",
                                f->shm.name, "arena_bytes", (json_int_t)L.total_bytes,
                                "buffers", buffers_json(&L), "capture_sources",
                                cfg->capture_sources);
        json_t *resp = NULL;
        json_decref(prepare_req[i]);
        prepare_req[i] = json_incref(req);
        if (fw_call(c, f, "prepare", req, &resp) != DT_OK) continue;
        f->prepared = 1;
        json_t *setup = json_object_get(f->impl, "setup_ms");
        if (round == 0) {
            json_t *sm = json_object_get(resp, "setup_ms");
            const char *k;
            json_t *v;
            json_object_foreach(sm, k, v) { json_object_set(setup, k, v); }
            json_object_set(f->impl, "output_policy", json_object_get(resp, "output_policy"));
            json_object_set(f->impl, "implementation", json_object_get(resp, "implementation"));
            keep_sources(c, f, json_object_get(resp, "sources"));
        }
        json_decref(resp);
        progress(c, f->id, "cold call + check");
        fw_checked_call(c, f, "cold", &L, pristine, &ref, round == 0 ? setup : NULL);
    }

    /* warmup and calibration, per framework */
    for (int i = 0; i < 2; i++) {
        fw_case *f = &fw[i];
        if (!f->ok) continue;
        progress(c, f->id, "warmup");
        if (fw_warmup(c, f) != DT_OK) continue;
        progress(c, f->id, "calibration");
        fw_calibrate(c, f);
    }

    /* clocks bracket the timed part; warmup and calibration just ran the GPU, so both
     * snapshots see working clocks, not the idle clocks of the pause between cases */
    if (cfg->clocks) clocks_before = dt_clocks_read(cfg->clocks);
    take_samples(c, cj, fw, round, flip, 0);
    take_samples(c, cj, fw, round, flip, 1);

    if (cfg->device_timing) {
        for (int i = 0; i < 2; i++) {
            fw_case *f = &fw[i];
            if (!f->ok) continue;
            progress(c, f->id, "probe worker prepare");
            int64_t rdev = f->reps < cfg->device_reps_cap ? f->reps : cfg->device_reps_cap;
            fw_probe_prepare(c, f, prepare_req[i], rdev);
        }
        take_device_samples(c, fw, round, flip, 0);
        take_device_samples(c, fw, round, flip, 1);
    }

    if (cfg->clocks) {
        dt_clocks_record(cj, round, clocks_before, dt_clocks_read(cfg->clocks));
        clocks_before = NULL; /* owned by cj now */
    }

    /* checked call after timing */
    for (int i = 0; i < 2; i++) {
        fw_case *f = &fw[i];
        if (!f->ok) continue;
        progress(c, f->id, "check after timing");
        if (fw_checked_call(c, f, "warm", &L, pristine, &ref, NULL) == DT_OK) {
            char hex[65];
            dt_buffer_sha256(&L, dt_layout_output(&L), f->shm.base, hex);
            json_object_set_new(f->impl, "output_sha256", json_string(hex));
        }
    }

done:
    for (int i = 0; i < 2; i++) {
        fw_case *f = &fw[i];
        if (f->prepared && dt_worker_alive(f->w))
            fw_call(c, f, "release", json_pack("{s:s}", "cmd", "release"), NULL);
        if (f->probe_prepared && dt_worker_alive(f->pw)) {
            dt_worker *saved = f->w;
            f->w = f->pw;
            fw_call(c, f, "release", json_pack("{s:s}", "cmd", "release"), NULL);
            f->w = saved;
        }
        json_decref(prepare_req[i]);
        dt_shm_destroy(&f->shm);
    }
    dt_oracle_free(&ref);
    free(pristine);
    int valid = fw[0].ok && fw[1].ok;
    for (int i = 0; i < 2; i++)
        if (strcmp(json_string_value(json_object_get(fw[i].impl, "status")), "ok") != 0)
            valid = 0;
    json_object_set_new(cj, "valid", json_boolean(valid));
    json_t *done_rounds = json_object_get(cj, "rounds_done");
    if (!json_is_array(done_rounds)) {
        done_rounds = json_array();
        json_object_set_new(cj, "rounds_done", done_rounds);
    }
    json_array_append_new(done_rounds, json_integer(round));
}

/* Has (case id, round) been finished already (a resumed run)? */
static int round_done(json_t *results, const char *id, int round) {
    json_t *cj = find_case(results, id);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(cj, "rounds_done"), i, v) {
        if (json_integer_value(v) == round) return 1;
    }
    return 0;
}

/* The next free sample position: 1 + the largest stored (0 for a new run). */
static int64_t next_position(json_t *results) {
    int64_t best = -1;
    size_t i, j;
    json_t *cj, *arr, *smp, *impl;
    const char *k, *scope;
    json_array_foreach(json_object_get(results, "cases"), i, cj) {
        json_array_foreach(json_object_get(json_object_get(cj, "floor"), "samples"), j, smp) {
            int64_t p = json_integer_value(json_object_get(smp, "position"));
            if (p > best) best = p;
        }
        json_object_foreach(json_object_get(cj, "impl"), k, impl) {
            json_object_foreach(json_object_get(impl, "samples"), scope, arr) {
                json_array_foreach(arr, j, smp) {
                    int64_t p = json_integer_value(json_object_get(smp, "position"));
                    if (p > best) best = p;
                }
            }
        }
    }
    return best + 1;
}

/* ---- outputs ---------------------------------------------------------------------------- */

dt_status dt_run_write_outputs(json_t *results, const char *dir, dt_err *err) {
    dt_status st = dt_derive(results, err);
    if (st != DT_OK) return st;
    char path[4096];
    snprintf(path, sizeof path, "%s/results.json", dir);
    st = dt_results_write_atomic(results, path, err);
    if (st != DT_OK) return st;
    char *md = NULL;
    size_t mdlen = 0;
    st = dt_report_md_string(results, &md, &mdlen, err);
    if (st != DT_OK) return st;
    snprintf(path, sizeof path, "%s/results.md", dir);
    st = dt_results_write_text_atomic(path, md, mdlen, err);
    free(md);
    if (st == DT_OK) st = dt_plot_write_all(results, dir, NULL, err);
    return st;
}

static void set_finished(json_t *results) {
    char buf[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_object_set_new(results, "finished_at", json_string(buf));
}

dt_status dt_run_plan(const dt_run_config *cfg, dt_worker *workers[4], json_t *results,
                      int *any_invalid, dt_err *err) {
    run_ctx c = {cfg, workers, results, next_position(results), 0,
                 cfg->plan.count * cfg->rounds, dt_now_ns(), NULL,
                 /* a resumed run keeps not asking a worker that had no floor call */
                 json_object_get(results, "floor_unavailable") != NULL};
    *any_invalid = 0;
    int n = cfg->plan.count;
    for (int round = 0; round < cfg->rounds; round++) {
        for (int j = 0; j < n; j++) {
            /* rotate by the round; reverse in alternate rounds */
            int idx = (j + round) % n;
            if (round & 1) idx = n - 1 - idx;
            if (round_done(results, cfg->plan.cases[idx].id, round)) {
                c.cases_total--; /* finished before an interruption: kept as it is */
                continue;
            }
            /* an interrupted case is put back as it was, so a resume redoes it */
            const char *cid = cfg->plan.cases[idx].id;
            json_t *before = find_case(results, cid);
            before = before ? json_deep_copy(before) : NULL;
            run_case(&c, &cfg->plan.cases[idx], round, round & 1);
            if (dt_run_stop_requested()) {
                json_t *cases = json_object_get(results, "cases");
                size_t ci;
                json_t *cv;
                json_array_foreach(cases, ci, cv) {
                    if (strcmp(json_string_value(json_object_get(cv, "id")), cid) == 0) {
                        if (before) json_array_set(cases, ci, before);
                        else json_array_remove(cases, ci);
                        break;
                    }
                }
            } else {
                c.cases_done++;
            }
            json_decref(before);
            set_finished(results);
            json_object_set_new(results, "complete", json_false());
            dt_status st = dt_run_write_outputs(results, cfg->output_dir, err);
            if (st != DT_OK) return st;
            if (dt_run_stop_requested()) {
                if (cfg->progress) fputs("\n", stderr);
                json_object_set_new(results, "complete", json_false());
                json_object_set_new(results, "interrupted",
                                    json_pack("{s:i}", "signal", (int)g_stop_signal));
                dt_run_write_outputs(results, cfg->output_dir, err);
                return dt_fail(err, DT_EIO, "interrupted by signal %d after %d of %d cases; "
                               "results so far are in %s", (int)g_stop_signal, c.cases_done,
                               c.cases_total, cfg->output_dir);
            }
        }
    }
    if (cfg->progress) fputs("\r\033[K", stderr);
    json_object_set_new(results, "complete", json_true());
    set_finished(results);
    dt_status st = dt_run_write_outputs(results, cfg->output_dir, err);
    if (st != DT_OK) return st;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(results, "cases"), i, v) {
        if (!json_is_true(json_object_get(v, "valid"))) *any_invalid = 1;
    }
    return DT_OK;
}
