/* dt_clocks_fixture.h — cases[].clocks of a hand-built results.json (format 1 JSON) for
 * tests that build their fixtures as JSON: fx_clocks_record() appends one round's
 * readings exactly as the orchestrator did before it filled the typed record (the
 * summary: the first round that moved, else the latest; rounds_moved; clocks_moved).
 * The moved rule is the orchestrator's own (dt_clocks_moved on the typed snapshots).
 * Header-only; takes ownership of before and after (NULL: stored as null). */
#ifndef DT_CLOCKS_FIXTURE_H
#define DT_CLOCKS_FIXTURE_H

#include <jansson.h>
#include <string.h>

#include "orchestrate/dt_clocks.h"

/* A JSON snapshot ({"sm_mhz",...}, dt_clocks_read's old shape) as a typed one. */
static void fx_clocks_snapshot(const json_t *o, dt_clock_snapshot *s) {
    dt_clocks_snapshot_init(s);
    const json_t *v;
    if (json_is_integer(v = json_object_get(o, "sm_mhz"))) s->sm_mhz = json_integer_value(v);
    if (json_is_integer(v = json_object_get(o, "mem_mhz"))) s->mem_mhz = json_integer_value(v);
    if (json_is_integer(v = json_object_get(o, "temp_c"))) s->temp_c = json_integer_value(v);
    if (json_is_number(v = json_object_get(o, "power_w"))) s->power_w = json_number_value(v);
    if (json_is_integer(v = json_object_get(o, "pstate"))) s->pstate = json_integer_value(v);
    if (json_is_integer(v = json_object_get(o, "throttle_mask"))) {
        s->has_throttle = 1;
        s->throttle_mask = (uint64_t)json_integer_value(v);
    }
    size_t i;
    json_array_foreach(json_object_get(o, "throttle_reasons"), i, v) {
        if (json_is_string(v)) dt_strv_push(&s->throttle_reasons, json_string_value(v));
    }
}

static void fx_clocks_record(json_t *case_json, int round, json_t *before, json_t *after) {
    if (!before) before = json_null();
    if (!after) after = json_null();
    dt_clock_snapshot b, a;
    fx_clocks_snapshot(before, &b);
    fx_clocks_snapshot(after, &a);
    char why[512];
    int moved = dt_clocks_moved(json_is_object(before) ? &b : NULL,
                                json_is_object(after) ? &a : NULL, why, sizeof why);
    dt_clocks_snapshot_free(&b);
    dt_clocks_snapshot_free(&a);
    json_t *clocks = json_object_get(case_json, "clocks");
    if (!json_is_object(clocks)) {
        clocks = json_object();
        json_object_set_new(case_json, "clocks", clocks);
    }
    json_t *rounds = json_object_get(clocks, "rounds");
    if (!json_is_array(rounds)) {
        rounds = json_array();
        json_object_set_new(clocks, "rounds", rounds);
    }
    json_t *rec = json_object();
    json_object_set_new(rec, "round", json_integer(round));
    json_object_set_new(rec, "before", before);
    json_object_set_new(rec, "after", after);
    json_object_set_new(rec, "moved", json_boolean(moved));
    json_object_set_new(rec, "why", json_string(why));
    json_array_append_new(rounds, rec);
    const json_t *shown = rec;
    int nmoved = 0;
    size_t i;
    json_t *r;
    json_array_foreach(rounds, i, r) {
        if (json_is_true(json_object_get(r, "moved"))) {
            if (nmoved == 0) shown = r;
            nmoved++;
        }
    }
    json_object_set(clocks, "before", json_object_get(shown, "before"));
    json_object_set(clocks, "after", json_object_get(shown, "after"));
    json_object_set(clocks, "moved", json_object_get(shown, "moved"));
    json_object_set(clocks, "why", json_object_get(shown, "why"));
    json_object_set(clocks, "round", json_object_get(shown, "round"));
    json_object_set_new(clocks, "rounds_moved", json_integer(nmoved));
    json_object_set_new(case_json, "clocks_moved", json_boolean(nmoved > 0));
}

#endif
