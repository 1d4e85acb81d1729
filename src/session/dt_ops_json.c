/* dt_ops_json.c — the op registry as JSON (see dt_ops_json.h). */
#include "dt_ops_json.h"

#include "plan/dt_ops.h"
#include "plan/dt_plan.h"

#include <stdlib.h>
#include <string.h>

static const char *dim_name(dt_dim d) {
    switch (d) {
    case DT_DIM_ONE: return "1";
    case DT_DIM_M: return "M";
    case DT_DIM_N: return "N";
    case DT_DIM_K: return "K";
    }
    return "?";
}

static json_t *buffer_json(const dt_buffer_role *b) {
    return json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "name", b->name, "dtype",
                     b->dtype == DT_I64 ? "i64" : "f32", "rows", dim_name(b->rows), "cols",
                     dim_name(b->cols), "is_output", b->is_output, "viewable", b->viewable);
}

json_t *dt_ops_json(void) {
    json_t *ops = json_array();
    for (int i = 0; i < DT_OP_COUNT; i++) {
        const dt_op_info *o = dt_op_get((dt_op)i);
        json_t *bufs = json_array();
        for (int j = 0; j < o->nbuffers; j++)
            json_array_append_new(bufs, buffer_json(&o->buffers[j]));
        json_array_append_new(ops, json_pack("{s:s,s:s,s:b,s:o,s:f,s:f,s:s}", "name", o->name,
                                             "definition", o->definition, "gemm", o->is_gemm,
                                             "buffers", bufs, "atol", o->atol, "rtol", o->rtol,
                                             "scale", o->scale_doc));
    }
    return ops;
}

/* The default shapes of one list; logits: only the logits_only ones (else the others). */
static json_t *shapes_json(const char *backend, int quick, int gemm, int logits) {
    dt_shape_list sl;
    dt_shapes_default(backend, quick, gemm, &sl);
    json_t *arr = json_array();
    for (int i = 0; i < sl.count; i++)
        if (sl.logits_only[i] == logits) json_array_append_new(arr, gemm ? json_pack("[I,I,I]", (json_int_t)sl.s[i].m,
                                                    (json_int_t)sl.s[i].n, (json_int_t)sl.s[i].k)
                                        : json_pack("[I,I]", (json_int_t)sl.s[i].m,
                                                    (json_int_t)sl.s[i].n));
    return arr;
}

json_t *dt_ops_list_json(void) {
    json_t *shapes = json_object();
    const char *backends[] = {"cpu", "cuda"};
    for (int b = 0; b < 2; b++)
        json_object_set_new(shapes, backends[b],
                            json_pack("{s:o,s:o,s:o,s:o,s:o}", "rows", shapes_json(backends[b], 0, 0, 0),
                                      "logits_rows", shapes_json(backends[b], 0, 0, 1),
                                      "gemm", shapes_json(backends[b], 0, 1, 0), "quick_rows",
                                      shapes_json(backends[b], 1, 0, 0), "quick_gemm",
                                      shapes_json(backends[b], 1, 1, 0)));
    return json_pack("{s:s,s:i,s:o,s:s,s:o}", "format", "dualtime-ops", "version",
                     DT_OPS_JSON_VERSION, "ops", dt_ops_json(), "pass_rule",
                     "|out - ref| <= atol + rtol * scale, per output element", "shapes", shapes);
}

char *dt_ops_list_json_text(void) {
    json_t *doc = dt_ops_list_json();
    char *text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    json_decref(doc);
    if (!text) return NULL;
    size_t n = strlen(text);
    char *out = dt_xmalloc(n + 2);
    memcpy(out, text, n);
    out[n] = '\n';
    out[n + 1] = '\0';
    free(text);
    return out;
}
