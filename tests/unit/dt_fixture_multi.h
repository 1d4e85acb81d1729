/* dt_fixture_multi.h — runs with more than one candidate for the formatter tests
 * (test_plot.c, test_compare.c). Header-only, on top of dt_results_fixture.h (include
 * that first): today's fixtures are format-1 runs with one candidate; fxm_with_candidate
 * encodes one (not derived) with the codec as format 2, which holds any number of
 * candidates, adds a candidate whose samples are the first candidate's scaled by a
 * factor, and decodes it again; the caller derives it. Ownership: the returned record
 * is the caller's (dt_record_free); NULL, with a message on stderr, when a step fails. */
#ifndef DT_FIXTURE_MULTI_H
#define DT_FIXTURE_MULTI_H

#include "record/dt_record.h"
#include "record/dt_record_json.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* Multiplies every sample's "us" in impl.samples.<scope>[] by factor. */
static inline void fxm_scale_samples(json_t *impl, double factor) {
    const char *scope;
    json_t *arr;
    json_object_foreach(json_object_get(impl, "samples"), scope, arr) {
        size_t i;
        json_t *s;
        json_array_foreach(arr, i, s) {
            double us = json_number_value(json_object_get(s, "us"));
            json_object_set_new(s, "us", json_real(us * factor));
        }
    }
}

/* The run `v1` (a fixture) with one more candidate `id` (framework `framework`, version
 * 0.2.0) whose samples are the first candidate's times factor, as a typed record. */
static inline dt_record *fxm_with_candidate(const json_t *v1, const char *id,
                                            const char *framework, double factor) {
    dt_record *r = fx_record(v1);
    char *text = NULL;
    size_t len = 0;
    dt_err err = {{0}};
    json_t *j = NULL;
    if (r && dt_record_encode(r, &text, &len, &err) == DT_OK)
        j = json_loadb(text, len, 0, NULL);
    free(text);
    dt_record *out = NULL;
    if (j) {
        json_t *fws = json_object_get(j, "frameworks");
        json_t *first = json_array_get(fws, 1); /* format 2: the baseline first */
        const char *first_id = json_string_value(json_object_get(first, "id"));
        json_t *fw = json_deep_copy(first);
        json_object_set_new(fw, "id", json_string(id));
        json_object_set_new(fw, "framework", json_string(framework));
        json_object_set_new(fw, "framework_version", json_string("0.2.0"));
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(j, "cases"), i, c) {
            json_t *impl = json_object_get(c, "impl");
            json_t *copy = json_deep_copy(json_object_get(impl, first_id));
            fxm_scale_samples(copy, factor);
            json_object_set_new(impl, id, copy);
        }
        json_array_append_new(fws, fw);
        text = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
        if (!text || dt_record_decode(text, strlen(text), "fixture+candidate", &out, &err) != DT_OK)
            fprintf(stderr, "fxm_with_candidate: %s\n", text ? err.msg : "json_dumps failed");
        free(text);
        json_decref(j);
    } else {
        fprintf(stderr, "fxm_with_candidate: cannot encode the fixture: %s\n", err.msg);
    }
    dt_record_free(r);
    return out;
}

#endif
