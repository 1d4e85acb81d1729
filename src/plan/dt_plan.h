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
/* Shapes are limited by memory, not by a cap (the run checks the bytes of every case
 * against what is free before it starts, see orchestrate/dt_memcheck.h). These bounds only keep the
 * element counts far from int64 overflow. */
#define DT_MAX_DIM 2147483647LL
#define DT_MAX_ELEMS (1LL << 40) /* per matrix */
#define DT_MAX_DTYPES 3

typedef struct dt_shape {
    int64_t m, n, k; /* k = 0 for row shapes */
} dt_shape;

typedef struct dt_shape_list {
    int count;
    dt_shape s[DT_MAX_SHAPES];
    /* logits_only[i] = 1: s[i] is only for the ops whose rows are logits
     * (dt_op_rows_are_logits): the default vocabulary rows; parsed shapes are 0 */
    unsigned char logits_only[DT_MAX_SHAPES];
} dt_shape_list;

typedef struct dt_case_spec {
    dt_op op;
    int64_t m, n, k;
    int views;
    dt_dtype dtype; /* DT_F32 (0), DT_BF16 or DT_F16 */
    char id[96]; /* "add_17x257", "gemm_127x193x61", "softmax_8192x8192_bf16" (the dtype
                    when not fp32), "_view" suffix under views */
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

/* Default shapes for a backend ("cpu" or "cuda"); quick selects the smoke subset. The
 * cuda rows end with two vocabulary rows (4096x50257, 2048x128256) marked logits_only:
 * a vocabulary-wide row is a row of logits (softmax, cross_entropy); for the elementwise
 * ops and the norms it would only be a larger 8192^2 (each such case costs seconds of
 * host work per round). */
void dt_shapes_default(const char *backend, int quick, int gemm, dt_shape_list *out);

/* Whether an op's rows are logits (softmax, cross_entropy): the ops a logits_only shape
 * is for. */
int dt_op_rows_are_logits(dt_op op);

/* Expands the selected ops over row shapes (non-gemm ops) and gemm shapes (gemm); a
 * logits_only shape only for the ops whose rows are logits. */
void dt_plan_build(dt_plan *plan, const int ops[DT_OP_COUNT], const dt_shape_list *rows,
                   const dt_shape_list *gemms, int views);
/* The same for every dtype of dtypes[0..ndtypes): one case per op x shape x dtype (dtype
 * innermost). dt_plan_build is this with {DT_F32}. */
void dt_plan_build_typed(dt_plan *plan, const int ops[DT_OP_COUNT], const dt_shape_list *rows,
                         const dt_shape_list *gemms, int views, const dt_dtype *dtypes,
                         int ndtypes);

/* Parses --dtypes "fp32,bf16,fp16" (also f32, f16, bfloat16) into out[0..*count), in the
 * order given. Rejects unknown names, i64, duplicates and an empty list. */
dt_status dt_dtypes_parse(const char *text, dt_dtype out[DT_MAX_DTYPES], int *count,
                          dt_err *err);

void dt_plan_free(dt_plan *plan);

/* Formats a shape as "MxN" or "MxNxK". */
void dt_shape_format(const dt_shape *s, char *buf, size_t len);

#endif
