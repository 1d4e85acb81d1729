/* dt_decomp_raw.c — the decomposition's raw samples and sets (dt_decomp_raw.h). */
#include "record/dt_decomp_raw.h"

#include <stdlib.h>
#include <string.h>

#include "common/dt_common.h"

void dt_decomp_raw_free(dt_decomp_raw *raw) {
    if (!raw) return;
    free(raw->launches);
    free(raw->kernels);
    memset(raw, 0, sizeof *raw);
}

static dt_decomp_interval *dup_iv(const dt_decomp_interval *v, size_t n) {
    if (n == 0) return NULL;
    dt_decomp_interval *d = dt_xcalloc(n, sizeof *d);
    memcpy(d, v, n * sizeof *d);
    return d;
}

void dt_decomp_raw_copy(dt_decomp_raw *dst, const dt_decomp_raw *src) {
    *dst = *src;
    dst->launches = dup_iv(src->launches, src->n_launches);
    dst->kernels = dup_iv(src->kernels, src->n_kernels);
}

void dt_decomp_set_push(dt_decomp_set *set, const dt_decomp_raw *raw) {
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 4;
        dt_decomp_raw *v = dt_xcalloc(cap, sizeof *v);
        if (set->n) memcpy(v, set->v, set->n * sizeof *v);
        free(set->v);
        set->v = v;
        set->cap = cap;
    }
    set->v[set->n++] = *raw;
}

void dt_decomp_set_unavailable(dt_decomp_set *set, const char *reason) {
    if (set->unavailable || !reason) return;
    set->unavailable = dt_xstrdup(reason);
}

void dt_decomp_set_free(dt_decomp_set *set) {
    if (!set) return;
    for (size_t i = 0; i < set->n; i++) dt_decomp_raw_free(&set->v[i]);
    free(set->v);
    free(set->unavailable);
    memset(set, 0, sizeof *set);
}

