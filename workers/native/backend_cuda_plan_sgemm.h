/* backend_cuda_plan_sgemm.h — the shape-chosen geometry of gemm (issue 18 item 4): the
 * gemv plan for thin shapes (kernels/cuda/gemv.cu, FP32 and bf16/f16 storage) and the
 * knobs that turn it on or off for A/B timing. Part of the GPU-free plan (dt_cuda_plan
 * objects: no libcuda), called by dt_cuda_plan_make for gemm of every dtype.
 *
 * Thin: N == 1 (matrix-vector, out = A b: GV_MODE 1) or M == 1 (vector-matrix,
 * out = a B: GV_MODE 2), in dualtime's MxNxK convention (A: M x K, B: K x N). The
 * geometry is a pure function of (M, N, K, alignment, arch, SM count), never a table of
 * known shapes (dt_sgemv_geom_make: the rules are in its comment and docs/perf.md).
 *
 * Knob DUALTIME_GEMM_SHAPE: 1 (default) the shape geometry: thin shapes take gemv, v2
 * multiplies only the K % BK valid depths of its last K-step (-DKTAIL_EXACT=1) and stages
 * scalar C through shared memory (-DEPI_STAGE=1, N % 4 != 0); 0 the geometry before
 * (thin shapes on the 64x64 tile, full last step, scattered C stores), kept so old and new
 * can be timed in one device run. DUALTIME_GEMM_VARIANT=gemv forces gemv (a non-thin
 * shape is refused); =v1|v2 keep those kernels for thin shapes too.
 *
 * bf16 / f16 (the same kernel, DT_ELEM 1 / 2: loads widened to FP32, FP32 accumulation in
 * the FP32 kernel's order, the output rounded once): thin shapes take gemv on the same
 * rules, a load being 16 bytes (8 elements) where aligned. Knob DUALTIME_GEMM_GEMV_NARROW:
 * 1 (default) gemv; 0 the plan before (wg3, which falls back to tc1 where TMA cannot take
 * a row: N == 1), for A/B timing. DUALTIME_GEMM_VARIANT=gemv forces it there too;
 * =tc1|wg1..wg4 keep those kernels for thin shapes.
 *
 * Ownership: plain values; thread-safety: reentrant (reads the environment). Units:
 * elements unless named otherwise. */
#ifndef BACKEND_CUDA_PLAN_SGEMM_H
#define BACKEND_CUDA_PLAN_SGEMM_H

#include <stdint.h>

#include "../../src/common/dt_common.h"
#include "../../src/data/dt_arena.h"
#include "dt_cuda_plan_struct.h"

/* A gemv launch: mode 1 (N == 1) or 2 (M == 1). */
typedef struct dt_sgemv_geom {
    int mode;       /* GV_MODE */
    int block;      /* threads a block */
    int tpr;        /* mode 1: threads a row; mode 2: column threads a block */
    int cl;         /* blocks of a cluster splitting K (1: no cluster) */
    int64_t kc;     /* K a cluster block (== K when cl == 1; a multiple of 4) */
    int veca, vecb; /* 4 or 1: elements a load of A resp. B */
    int64_t grid;   /* blocks */
} dt_sgemv_geom;

/* Fills g for a thin shape and returns 1; returns 0 (g untouched) when neither N nor M
 * is 1. vw: elements of a 16-byte load (4: f32, 8: bf16/f16); veca / vecb: 1 when
 * 16-byte loads of the walked operand are legal (mode 1: A's rows aligned and
 * K % vw == 0; B contiguous and aligned; mode 2: B's rows aligned and N % vw == 0), giving
 * g->veca / g->vecb = vw (else 1); g->kc is a multiple of vw. arch: the SM version number
 * (90), sm_count > 0. */
int dt_gemv_geom_make(int64_t m, int64_t n, int64_t k, int vw, int veca, int vecb, int arch,
                      int sm_count, dt_sgemv_geom *g);

/* FP32: dt_gemv_geom_make with vw = 4 (veca4 / vecb4 as veca / vecb). */
int dt_sgemv_geom_make(int64_t m, int64_t n, int64_t k, int veca4, int vecb4, int arch,
                       int sm_count, dt_sgemv_geom *g);

/* DUALTIME_GEMM_SHAPE: *on = 1 (unset, empty or "1") or 0 ("0"); other values fail with
 * DT_EINVAL. */
dt_status dt_sgemm_shape_knob(int *on, dt_err *err);

/* DUALTIME_GEMM_GEMV_NARROW: *on = 1 (unset, empty or "1") or 0 ("0"); other values fail
 * with DT_EINVAL. */
dt_status dt_gemv_narrow_knob(int *on, dt_err *err);

/* The gemm case L (any dtype) on gemv where it applies: DUALTIME_GEMM_VARIANT unset (and
 * the dtype's knob on: DUALTIME_GEMM_SHAPE for f32, DUALTIME_GEMM_GEMV_NARROW for bf16 /
 * f16) or "gemv", and the shape thin. On return *taken = 1: p's source, kernel,
 * options (appended to the common ones already in p), launch and summary are set;
 * *taken = 0: p is unchanged. DUALTIME_GEMM_VARIANT=gemv on a non-thin shape fails with
 * DT_EINVAL. For bf16 / f16 the caller has added -DDT_ELEM. arch: the SM version number. */
dt_status dt_sgemm_plan_thin(const dt_case_layout *L, int arch, int sm_count, dt_cuda_plan *p,
                             int *taken, dt_err *err);

#endif
