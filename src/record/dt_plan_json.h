/* dt_plan_json.h — the codec of plan.json: dt_plan_doc (plan/dt_shard.h) <-> JSON text.
 *
 * plan.json (docs/sharding.md) holds format "dualtime-plan" version 1, the tool that
 * planned, the run flags as given, the settings they mean, every case in plan order
 * (index, id, op, dtype, m, n, k, views, shard), the shard count and assignment rule,
 * and plan_id: the SHA-256 (lowercase hex) of the canonical text of the document without
 * plan_id (jansson compact, keys sorted, reals with 17 digits). Encoding fills
 * doc->plan_id; decoding recomputes it and refuses a file whose plan_id does not match
 * (an edited plan), or whose cases, shards or settings are malformed, with one line
 * naming the key. Ownership: *text is the caller's (free); a decoded doc is the
 * caller's (dt_plan_doc_free). Reentrant; never prints. */
#ifndef DT_PLAN_JSON_H
#define DT_PLAN_JSON_H

#include <stddef.h>

#include "common/dt_common.h"
#include "plan/dt_shard.h"

/* plan.json text of doc (2-space indentation, final newline); sets doc->plan_id. */
dt_status dt_plan_encode(dt_plan_doc *doc, char **text, size_t *len, dt_err *err);

/* Reads and checks path into *doc (zeroed first; freed again on failure). */
dt_status dt_plan_load(const char *path, dt_plan_doc *doc, dt_err *err);

#endif
