/* dt_record_merge.c — checks a plan's shard records and joins them (dt_record_merge.h). */
#include "record/dt_record_merge.h"

#include <stdlib.h>
#include <string.h>

#include "record/dt_record_json.h"

#define LIST_MAX 10 /* case ids named in one message */

/* Appends ids[0..n) (at most LIST_MAX, then "and N more") to buf. */
static void list_ids(char *buf, size_t len, const char *const *ids, int n) {
    size_t used = strlen(buf);
    for (int i = 0; i < n && i < LIST_MAX && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", ids[i]);
    if (n > LIST_MAX && used < len)
        snprintf(buf + used, len - used, " and %d more", n - LIST_MAX);
}

/* Plan id, count, completeness, implementations and backend of one shard. */
static dt_status check_header(const dt_merge_plan *p, const dt_record *r, const dt_record *first,
                              const char *name, dt_err *err) {
    if (!r->plan.present || r->plan.index == DT_NULL_I64)
        return dt_fail(err, DT_EINVAL, "%s: not a shard of a plan (its results.json names no "
                       "plan shard; run it with dualtime run --plan)", name);
    if (strcmp(r->plan.plan_id, p->plan_id) != 0)
        return dt_fail(err, DT_EINVAL, "%s: shard of another plan (%.12s..., the plan is "
                       "%.12s...)", name, r->plan.plan_id, p->plan_id);
    if (r->plan.count != p->n_shards || r->plan.index >= p->n_shards)
        return dt_fail(err, DT_EINVAL, "%s: shard %lld/%lld does not fit the plan's %d shards",
                       name, (long long)r->plan.index, (long long)r->plan.count, p->n_shards);
    if (!r->complete)
        return dt_fail(err, DT_EINVAL, "%s: shard %lld is incomplete (interrupted or still "
                       "running)", name, (long long)r->plan.index);
    int same = r->n_impls == first->n_impls && r->settings.backend && first->settings.backend &&
               strcmp(r->settings.backend, first->settings.backend) == 0;
    for (size_t i = 0; same && i < r->n_impls; i++)
        same = strcmp(r->impls[i].id, first->impls[i].id) == 0;
    if (!same)
        return dt_fail(err, DT_EINVAL, "%s: its implementations or backend differ from the "
                       "other shards'", name);
    return DT_OK;
}

/* Every case of shard record r belongs to shard `index`, and all of them are there. */
static dt_status check_cases(const dt_merge_plan *p, const dt_record *r, const char *name,
                             dt_err *err) {
    int index = (int)r->plan.index;
    for (size_t i = 0; i < r->n_cases; i++) {
        int at = -1;
        for (int k = 0; k < p->n_cases && at < 0; k++)
            if (strcmp(p->case_ids[k], r->cases[i].id) == 0) at = k;
        if (at < 0)
            return dt_fail(err, DT_EINVAL, "%s: case %s is not in the plan", name,
                           r->cases[i].id);
        if (p->shard_of[at] != index)
            return dt_fail(err, DT_EINVAL, "%s: case %s is shard %d's, not shard %d's "
                           "(overlapping shards)", name, r->cases[i].id, p->shard_of[at], index);
    }
    const char **missing = dt_xcalloc((size_t)p->n_cases + 1, sizeof *missing);
    int n_missing = 0;
    for (int k = 0; k < p->n_cases; k++)
        if (p->shard_of[k] == index && dt_record_case_find(r, p->case_ids[k]) < 0)
            missing[n_missing++] = p->case_ids[k];
    dt_status st = DT_OK;
    if (n_missing) {
        char ids[1024] = "";
        list_ids(ids, sizeof ids, missing, n_missing);
        st = dt_fail(err, DT_EINVAL, "%s: shard %d is missing %d planned case(s): %s", name,
                     index, n_missing, ids);
    }
    free(missing);
    return st;
}

/* The shards by index: bys[i] = position in shards of shard i. */
static dt_status check_shards(const dt_merge_plan *p, dt_record *const *shards,
                              const char *const *names, size_t n, int *bys, dt_err *err) {
    if (n == 0) return dt_fail(err, DT_EINVAL, "merge: no shards given");
    for (int i = 0; i < p->n_shards; i++) bys[i] = -1;
    for (size_t s = 0; s < n; s++) {
        dt_status st = check_header(p, shards[s], shards[0], names[s], err);
        if (st != DT_OK) return st;
        int idx = (int)shards[s]->plan.index;
        if (bys[idx] >= 0)
            return dt_fail(err, DT_EINVAL, "%s: shard %d again (also %s): duplicated cases",
                           names[s], idx, names[bys[idx]]);
        bys[idx] = (int)s;
        if ((st = check_cases(p, shards[s], names[s], err)) != DT_OK) return st;
    }
    for (int i = 0; i < p->n_shards; i++) {
        if (bys[i] >= 0) continue;
        const char **ids = dt_xcalloc((size_t)p->n_cases + 1, sizeof *ids);
        int k = 0;
        for (int c = 0; c < p->n_cases; c++)
            if (p->shard_of[c] == i) ids[k++] = p->case_ids[c];
        char list[1024] = "";
        list_ids(list, sizeof list, ids, k);
        free(ids);
        return dt_fail(err, DT_EINVAL, "shard %d of %d is missing (its cases: %s)", i,
                       p->n_shards, list);
    }
    return DT_OK;
}

/* Moves the cases into base in plan order and marks them with their shard and host. */
static void move_cases(const dt_merge_plan *p, dt_record **shards, const int *bys,
                       dt_record *base) {
    dt_case *cases = dt_xcalloc((size_t)p->n_cases, sizeof *cases);
    for (int k = 0; k < p->n_cases; k++) {
        dt_record *r = shards[bys[p->shard_of[k]]];
        int at = dt_record_case_find(r, p->case_ids[k]);
        DT_ASSERT(at >= 0);
        cases[k] = r->cases[at];
        cases[k].shard = r->plan.index;
        dt_record_set_str(&cases[k].host, r->env.host.hostname);
    }
    for (int i = 0; i < p->n_shards; i++) {
        dt_record *r = shards[bys[i]];
        free(r->cases); /* the cases were moved out (the base's array too) */
        r->cases = NULL;
        r->n_cases = r->cap_cases = 0;
    }
    base->cases = cases;
    base->n_cases = base->cap_cases = (size_t)p->n_cases;
}

dt_status dt_record_merge(const dt_merge_plan *p, dt_record **shards,
                          const char *const *names, size_t n, dt_record **out, dt_err *err) {
    *out = NULL;
    int *bys = dt_xcalloc((size_t)p->n_shards, sizeof *bys);
    dt_status st = check_shards(p, shards, names, n, bys, err);
    const dt_record **ordered = dt_xcalloc((size_t)p->n_shards, sizeof *ordered);
    char *shards_json = NULL;
    for (int i = 0; st == DT_OK && i < p->n_shards; i++) ordered[i] = shards[bys[i]];
    if (st == DT_OK)
        st = dt_record_shards_json((const dt_record *const *)ordered, (size_t)p->n_shards,
                                   &shards_json, err);
    if (st == DT_OK) {
        dt_record *base = shards[bys[0]];
        for (int i = 1; i < p->n_shards; i++) {
            const dt_record *r = ordered[i];
            if (r->started_at && (!base->started_at || strcmp(r->started_at, base->started_at) < 0))
                dt_record_set_str(&base->started_at, r->started_at);
            if (r->finished_at &&
                (!base->finished_at || strcmp(r->finished_at, base->finished_at) > 0))
                dt_record_set_str(&base->finished_at, r->finished_at);
        }
        move_cases(p, shards, bys, base);
        base->plan.index = DT_NULL_I64;
        free(base->shards_json);
        base->shards_json = shards_json;
        base->complete = 1;
        dt_record_derived_clear(base);
        for (size_t s = 0; s < n; s++) {
            if (shards[s] != base) dt_record_free(shards[s]);
            shards[s] = NULL;
        }
        *out = base;
    }
    free(ordered);
    free(bys);
    return st;
}
