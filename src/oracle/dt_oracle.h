/* dt_oracle.h — the FP64 oracle: a double-precision reference of a case's output,
 * computed in C from the exact bytes the workers got, and the element-wise check of an
 * implementation's output against it (SPEC §3).
 *
 * Pass rule, for every output element: out is finite and |out - ref| <= atol + rtol*scale
 * (+ ulps * ulp of the output type at |ref| for bf16/f16 cases; dt_op_tolerance), where
 * atol/rtol come from the tolerance table (dt_ops.c), inputs and outputs are read in the
 * case dtype (widened exactly) and scale is the magnitude of
 * the terms that make the element (per op, see scale_doc in dt_ops.c; for sum and gemm
 * it is the sum of |terms|), so an all-zero or cancelled output cannot pass on random
 * data. "Budget used" of an element is |out - ref| / bound: < 1 passes.
 *
 * Ownership: dt_oracle_compute allocates ref->ref and ref->scale; dt_oracle_free
 * releases them. Arenas are only read. Thread-safety: reentrant; dt_oracle_compute uses
 * OpenMP internally (parallel over rows; GEMM over tiles of C, dt_gemm_f64.h). */
#ifndef DT_ORACLE_H
#define DT_ORACLE_H

#include <stdint.h>

#include "../common/dt_common.h"
#include "../data/dt_arena.h"
#include "../plan/dt_ops.h"

/* FP64 reference of the single output of a case, plus the per-element scale.
 * ref and scale are rows x cols dense row-major doubles. */
typedef struct dt_oracle_ref {
    dt_op op;
    int64_t rows, cols; /* the output's logical shape */
    double *ref;        /* reference value of each output element */
    double *scale;      /* magnitude of the terms of each element (>= 0) */
    double atol, rtol;  /* from the tolerance table (tol.atol, tol.rtol) */
    dt_dtype dtype;     /* the case dtype (the output's type) */
    dt_tolerance tol;   /* dt_op_tolerance(op, dtype): for bf16/f16 the bound adds
                           tol.ulps ulps of the output type at |ref| */
} dt_oracle_ref;

/* Makes ref the reference of case L from ref_values and scale (malloc'd, one double per
 * output element, the output's rows x cols; ref takes them over, dt_oracle_free frees
 * them), with the fields dt_oracle_compute sets: op, shape, dtype and tolerances. For a
 * reference computed here or read back (the refcache, orchestrate/dt_refcache.h). */
void dt_oracle_ref_adopt(const dt_case_layout *L, double *ref_values, double *scale,
                         dt_oracle_ref *ref);

/* Computes the reference from the inputs in `pristine` (an arena written by
 * dt_arena_fill with layout L), reading inputs through the layout's strides, so views
 * work. On success ref owns two new arrays (free with dt_oracle_free). Fails with
 * DT_EINVAL (and ref zeroed) if an input is malformed (a label outside [0, N)). */
dt_status dt_oracle_compute(const dt_case_layout *L, const uint8_t *pristine, dt_oracle_ref *ref,
                            dt_err *err);

/* Releases the arrays of ref and zeroes it. Safe on a zeroed ref. */
void dt_oracle_free(dt_oracle_ref *ref);

/* What dt_oracle_check found. Errors of non-finite outputs count as +infinity in
 * max_abs_error and max_budget_used (report writers must print them as such).
 * first_fail_* describe the first failing element in row-major order (-1 / 0 when ok). */
typedef struct dt_oracle_report {
    int ok;
    int64_t elements, failures;
    double max_abs_error;   /* max |out - ref| over all elements */
    double max_budget_used; /* max |out - ref| / (atol + rtol*scale); 0/0 counts as 0 */
    int64_t first_fail_row, first_fail_col;
    double first_fail_value, first_fail_ref, first_fail_bound;
    char first_failure[256]; /* human-readable, "" when ok */
} dt_oracle_report;

/* Bound of element idx (row-major): atol + rtol*scale[idx] (fp32), plus
 * tol.ulps * ulp_dtype(|ref|) for bf16/f16 (dt_tolerance_bound). */
double dt_oracle_bound(const dt_oracle_ref *ref, int64_t idx);

/* Compares every output element of arena `base` (layout L, same case as ref) with ref:
 * pass iff for every element |out-ref| <= atol + rtol*scale and out is finite.
 * NaN/Inf (including the unwritten-output poison) fail. */
void dt_oracle_check(const dt_oracle_ref *ref, const dt_case_layout *L, const uint8_t *base,
                     dt_oracle_report *rep);

/* Starts the OpenMP threads of the oracle (and of the arena fill and checks) now, with the
 * CPUs the calling thread may use now. Call it before the orchestrator pins its own thread
 * to one CPU (dt_affinity_pin_self affects the calling thread only): threads created later
 * inherit the pinned mask, and every FP64 reference would then run on that one CPU (a 4096^3
 * gemm reference took minutes that way). Returns the number of threads started. */
int dt_oracle_threads_start(void);

#endif
