/* dt_record_merge.h — joins the records of a plan's shards into one run record.
 *
 * `dualtime merge` loads every shard's results.json and the plan's case list, and this
 * module checks that the shards are one plan's (same plan id and shard count), that
 * every shard is complete, that no shard index comes twice, that every shard is there,
 * and that each shard holds exactly its planned cases (none missing, none belonging to
 * another shard, none outside the plan); the first problem is DT_EINVAL naming the
 * offending shard (its name as given, e.g. its directory) and the case ids. Then the
 * cases are moved, in plan order, into the record of the lowest shard, which becomes the
 * merged run: plan.index null, every case's `shard` and `host` set, `shards` holding each
 * shard's host, times, command line and environment, started_at the earliest and
 * finished_at the latest, derived blocks cleared (the caller derives again).
 * Ownership: on success *out is the caller's and every shards[i] has been consumed
 * (set to NULL); on failure nothing was changed and the caller still owns the shards.
 * Not thread-safe for one set of records. */
#ifndef DT_RECORD_MERGE_H
#define DT_RECORD_MERGE_H

#include <stddef.h>

#include "common/dt_common.h"
#include "record/dt_record.h"

/* The plan the shards must match (from plan.json). */
typedef struct dt_merge_plan {
    const char *plan_id;
    int n_shards;
    int n_cases;
    const char *const *case_ids; /* [n_cases], plan order */
    const int *shard_of;         /* [n_cases] */
} dt_merge_plan;

dt_status dt_record_merge(const dt_merge_plan *plan, dt_record **shards,
                          const char *const *names, size_t n, dt_record **out, dt_err *err);

#endif
