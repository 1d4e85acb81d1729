/* dt_plan.h — shapes and the case matrix.
 *
 * Parses --row-shapes (MxN,...) and --gemm-shapes (MxNxK,...), knows the default and
 * --quick matrices per backend, and expands ops x shapes into an ordered case list.
 * Ownership: a dt_plan owns its case array (dt_plan_free). Reentrant. */
#ifndef DT_PLAN_H
#define DT_PLAN_H

#include <stdint.h>

#include "../common/dt_common.h"
#include "dt_ops.h"

#define DT_MAX_SHAPES 64
#define DT_MAX_DIM 65536
#define DT_MAX_ELEMS (1LL << 28) /* per matrix: 1 GiB of FP32 */

typedef struct dt_shape {
    int64_t m, n, k; /* k = 0 for row shapes */
} dt_shape;

typedef struct dt_shape_list {
    int count;
    dt_shape s[DT_MAX_SHAPES];
} dt_shape_list;

typedef struct dt_case_spec {
    dt_op op;
    int64_t m, n, k;
    int views;
    char id[96]; /* "add_17x257", "gemm_127x193x61", "_view" suffix under views */
} dt_case_spec;

typedef struct dt_plan {
    int count;
    dt_case_spec *cases;
} dt_plan;

/* Parses "MxN,MxN" (gemm = 0) or "MxNxK,..." (gemm = 1). flag names the option for
 * the error message ("--row-shapes"). Rejects malformed text, zero/negative/huge
 * dimensions and duplicates. */
dt_status dt_shapes_parse(const char *text, int gemm, const char *flag, dt_shape_list *out,
                          dt_err *err);

/* Parses "add,sum" into a set of ops (ops[i] = 1 when selected). A word with * ? or [ is
 * an fnmatch(3) glob over the op names ("soft*,*norm"); a glob that matches nothing and
 * an unknown name fail, naming the word and the known ops. */
dt_status dt_ops_parse(const char *text, int ops[DT_OP_COUNT], dt_err *err);

/* Default shapes for a backend ("cpu" or "cuda"); quick selects the smoke subset. */
void dt_shapes_default(const char *backend, int quick, int gemm, dt_shape_list *out);

/* Expands the selected ops over row shapes (non-gemm ops) and gemm shapes (gemm). */
void dt_plan_build(dt_plan *plan, const int ops[DT_OP_COUNT], const dt_shape_list *rows,
                   const dt_shape_list *gemms, int views);
void dt_plan_free(dt_plan *plan);

/* Formats a shape as "MxN" or "MxNxK". */
void dt_shape_format(const dt_shape *s, char *buf, size_t len);

#endif
