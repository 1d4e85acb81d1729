/* dt_shard.h — a run's plan split into shards (dualtime plan / run --plan / merge).
 *
 * A dt_plan_doc is the whole of one run decided before any machine runs it: the run
 * flags as given (they rebuild the run on any machine), the settings they mean, the case
 * matrix in order, and which shard runs each case. Assignment is round-robin in plan
 * order (case i -> shard i mod N): neighbouring cases (one op's shapes, small to large)
 * spread over the shards, so shards of a matrix take about the same time without a cost
 * model. The plan id is the SHA-256 of the plan's canonical JSON text (record/dt_plan_json.h
 * computes and checks it). docs/sharding.md is the user's view.
 * Ownership: a dt_plan_doc owns every string and array it points to (dt_plan_doc_free).
 * Reentrant; never prints. */
#ifndef DT_SHARD_H
#define DT_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "../common/dt_common.h"
#include "dt_plan.h"

#define DT_PLAN_FORMAT "dualtime-plan"
#define DT_PLAN_FORMAT_VERSION 1
#define DT_SHARDS_MAX 4096

/* The settings a plan's run flags mean (descriptive: the flags rebuild the run). */
typedef struct dt_plan_settings {
    char *backend;      /* "cpu" | "cuda" (a plan fixes the backend) */
    char *operations;   /* --operations as given (NULL: all) */
    int64_t samples, rounds, seed, threads, prime;
    double sample_ms, warmup_ms, timeout_s;
    int quick, input_views, device_timing, capture_sources;
    char *probe_kind;   /* "concurrent" | "serialized" */
    char *candidate_cmd, *baseline_cmd, *python; /* as given (NULL: this machine's default) */
} dt_plan_settings;

typedef struct dt_plan_doc {
    char plan_id[65];        /* lowercase hex; "" until encoded or decoded */
    char *tool_version;      /* DT_VERSION of the tool that planned */
    char *git_revision;      /* its git revision ("unknown" outside a checkout) */
    char *created_at;        /* UTC ISO 8601 */
    char **run_args;         /* the run flags as given, without --output and --shards */
    size_t n_run_args;
    dt_plan_settings settings;
    dt_plan cases;           /* every case, plan order */
    int *shard_of;           /* [cases.count]: the shard of each case */
    int n_shards;            /* >= 1 */
} dt_plan_doc;

/* Round-robin assignment of doc->cases over n_shards (doc->shard_of allocated here).
 * DT_EINVAL when n_shards is outside 1..DT_SHARDS_MAX or larger than the case count (a
 * shard would be empty). */
dt_status dt_shard_assign(dt_plan_doc *doc, int n_shards, dt_err *err);

/* The cases of `shard` (plan order) into *out (owned by the caller, dt_plan_free).
 * DT_EINVAL when shard is outside 0..n_shards-1. */
dt_status dt_shard_select(const dt_plan_doc *doc, int shard, dt_plan *out, dt_err *err);

/* DT_OK when `built` (this machine's expansion of the plan's flags) has exactly the
 * plan's cases in the same order; else DT_EINVAL naming the first difference. */
dt_status dt_shard_check_cases(const dt_plan_doc *doc, const dt_plan *built, dt_err *err);

/* Parses "I/N" (0 <= I < N). DT_EINVAL naming the text when it is not one. */
dt_status dt_shard_parse(const char *text, int *index, int *count, dt_err *err);

void dt_plan_doc_free(dt_plan_doc *doc);

#endif
