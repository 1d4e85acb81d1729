/* fuzz_shapes.c — libFuzzer harness for the command-line shape, op and implementation
 * lists: dt_shapes_parse() (row and gemm forms), dt_ops_parse(), dt_impl_specs_parse()
 * (--impls) and dt_words_split() (worker commands) on arbitrary text.
 * A success must produce shapes inside the documented limits; a failure must say why.
 * Build: fuzz/run.sh (see docs/fuzzing.md). */
#include "plan/dt_plan.h"
#include "session/dt_impl_spec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0'; /* command-line text: stops at the first NUL */

    for (int gemm = 0; gemm < 2; gemm++) {
        dt_shape_list sl;
        dt_err err = {{0}};
        if (dt_shapes_parse(text, gemm, gemm ? "--gemm-shapes" : "--row-shapes", &sl, &err) ==
            DT_OK) {
            if (sl.count < 1 || sl.count > DT_MAX_SHAPES) abort();
            for (int i = 0; i < sl.count; i++) {
                const dt_shape *s = &sl.s[i];
                if (s->m < 1 || s->m > DT_MAX_DIM || s->n < 1 || s->n > DT_MAX_DIM) abort();
                if (gemm ? (s->k < 1 || s->k > DT_MAX_DIM) : s->k != 0) abort();
                char buf[64];
                dt_shape_format(s, buf, sizeof buf);
            }
            dt_shape_list none = {0};
            dt_plan plan;
            int ops[DT_OP_COUNT];
            for (int i = 0; i < DT_OP_COUNT; i++) ops[i] = 1;
            dt_plan_build(&plan, ops, gemm ? &none : &sl, gemm ? &sl : &none, 0);
            dt_plan_free(&plan);
        } else if (!err.msg[0]) {
            abort();
        }
    }

    int ops[DT_OP_COUNT];
    dt_err err = {{0}};
    if (dt_ops_parse(text, ops, &err) == DT_OK) {
        int any = 0;
        for (int i = 0; i < DT_OP_COUNT; i++) any |= ops[i];
        if (!any) abort();
    } else if (!err.msg[0]) {
        abort();
    }

    /* --impls: names present, short and unique; an argument where the kind takes one */
    dt_impl_specs specs;
    err.msg[0] = '\0';
    if (dt_impl_specs_parse("--impls", text, &specs, &err) == DT_OK) {
        if (specs.n < 1 || specs.n > DT_IMPL_SPEC_MAX) abort();
        for (int i = 0; i < specs.n; i++) {
            const dt_impl_spec *p = &specs.v[i];
            size_t len = strnlen(p->name, DT_IMPL_NAME_LEN);
            if (len == 0 || len >= DT_IMPL_NAME_LEN) abort();
            if ((p->kind == DT_IMPL_NATIVE || p->kind == DT_IMPL_TORCH) != (p->arg == NULL)) abort();
            for (int j = 0; j < i; j++)
                if (strcmp(specs.v[j].name, p->name) == 0) abort();
        }
        dt_impl_specs_free(&specs);
    } else if (!err.msg[0]) {
        abort();
    }
    /* worker commands: a NULL-terminated list of n words */
    char **words = NULL;
    int nw = -1;
    err.msg[0] = '\0';
    if (dt_words_split("--x", text, &words, &nw, &err) == DT_OK) {
        if (nw < 0 || !words || words[nw]) abort();
        for (int i = 0; i < nw; i++)
            if (!words[i]) abort();
        dt_words_free(words);
    } else if (!err.msg[0]) {
        abort();
    }
    free(text);
    return 0;
}
