/* backend_cuda_plan_sgemm.h — the shape-chosen geometry of gemm (issue 18 item 4): the
 * gemv plan for thin shapes (kernels/cuda/gemv.cu, FP32 and bf16/f16 storage) and the
 * knobs that turn it on or off for A/B timing. Part of the GPU-free plan (dt_cuda_plan
 * objects: no libcuda), called by dt_cuda_plan_make for gemm of every dtype.
 *
 * Thin: N == 1 (matrix-vector, out = A b: GV_MODE 1) or M == 1 (vector-matrix,
 * out = a B: GV_MODE 2), in dualtime's MxNxK convention (A: M x K, B: K x N); and few
 * rows (GV_MODE 2 with GV_MR rows a block: 2 <= M <= 16 in FP32; bf16 / f16 M <= 8 where
 * the wgmma tiles would underfill the GPU; DT_GEMV_FEWROWS_DEFAULT below). The
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
    int64_t grid;   /* blocks along x (column groups x cl, or row groups x cl) */
    int mr;         /* mode 2: rows of A a block (GV_MR; 1 for M == 1 and mode 1) */
    int kg;         /* mode 2: consecutive k's a step, one load of each A row (GV_KG) */
    int64_t grid_y; /* mode 2: row groups, ceil(M / mr) (1 for M == 1 and mode 1) */
    int ch;         /* mode 2: steps whose loads issue at once (GV_CH; 0: the kernel's rule) */
} dt_sgemv_geom;

/* Few rows on by default up to this M: FP32 16 rows (two row groups of 8), bf16 / f16 8
 * rows (one group: B read once) and only where the wgmma tiles would fill fewer than half
 * the SMs (DUALTIME_GEMM_FEWROWS=r: every M up to r, in every dtype; 0 or 1: off, the
 * square tiles as before). A's rows are read KG elements a load where aligned
 * (DUALTIME_GEMV_KG=1|2|4|8): FP32 1, bf16 / f16 8 (16 bytes), the better of the H200
 * A/B of session 10 (docs/perf.md "Issue 18, session 10"). DUALTIME_GEMV_CTMIN=8|16|32
 * (the fewest column threads) and DUALTIME_GEMV_CH=1..8 (GV_CH) are for A/B timing. */
#define DT_GEMV_FEWROWS_DEFAULT 16
#define DT_GEMV_FEWROWS_NARROW_DEFAULT 8
#define DT_GEMV_KG_DEFAULT 1
#define DT_GEMV_KG_NARROW_DEFAULT 8

typedef struct dt_gemv_fewrows_cfg {
    int max_rows;  /* few rows up to this M (< 2: off) */
    int kg;        /* A elements a load asked for (halved to what A's alignment allows) */
    int fill_rule; /* 1: only where the wgmma tiles fill fewer than half the SMs */
    int ctmin;     /* the fewest column threads at 16-byte B loads: 8, 16 or 32 */
    int ch;        /* GV_CH, 0: the kernel's rule */
} dt_gemv_fewrows_cfg;

/* Fills g for a thin shape and returns 1; returns 0 (g untouched) when neither N nor M
 * is 1. vw: elements of a 16-byte load (4: f32, 8: bf16/f16); veca / vecb: 1 when
 * 16-byte loads of the walked operand are legal (mode 1: A's rows aligned and
 * K % vw == 0; B contiguous and aligned; mode 2: B's rows aligned and N % vw == 0), giving
 * g->veca / g->vecb = vw (else 1); g->kc is a multiple of vw. arch: the SM version number
 * (90), sm_count > 0. */
int dt_gemv_geom_make(int64_t m, int64_t n, int64_t k, int vw, int veca, int vecb, int arch,
                      int sm_count, dt_sgemv_geom *g);

/* Few rows: fills g for 2 <= m <= max_rows and n >= 2 (mode 2, g->mr rows a block,
 * g->grid_y row groups, g->kg = kg) and returns 1; else returns 0. kg: 1, 2, 4 or 8
 * elements a load of A's rows, legal for A's alignment (the caller's); vecb as above. */
int dt_gemv_fewrows_geom_make(int64_t m, int64_t n, int64_t k, int vw, int kg, int vecb,
                              int arch, int sm_count, int max_rows, dt_sgemv_geom *g);

/* bf16 / f16 few rows on the tensor cores (kernels/cuda/gemv_mma.cu, mma.sync m16n8k16 as
 * out^T = B^T A^T): a warp a strip of 64 columns and mg groups of 8 rows, warps blocks
 * of a strip splitting K in steps of 32, cl blocks of a cluster splitting it in slices
 * of kc. Opt-in until timed on a GPU (session 19 had no device): DUALTIME_GEMV_MMA=1
 * takes it for 2 <= M <= DT_GEMV_MMA_ROWS_DEFAULT (any N >= 2, any K) on sm_80 and later
 * (clusters on sm_90), =r (2..128) up to M = r (rows past 32 in row blocks of 32, B read
 * once a block); unset or 0 the plan as before (gemv.cu's few rows where the wgmma tiles
 * underfill the GPU, else wg3). DUALTIME_GEMM_VARIANT=gemv-mma forces it where M allows. */
#define DT_GEMV_MMA_ROWS_DEFAULT 32
typedef struct dt_gemv_mma_geom {
    int warps;      /* warps a block (WARPS), each its own K steps of the block's slice */
    int cl;         /* blocks of a cluster splitting K (1: no cluster) */
    int mg;         /* groups of 8 rows a block (MG, 1..4) */
    int64_t kc;     /* K a cluster block (a multiple of 32; >= K when cl == 1) */
    int64_t grid;   /* blocks along x: strips (ceil(N / 64)) x cl */
    int64_t grid_y; /* row groups of 8 mg rows */
} dt_gemv_mma_geom;

/* Fills g for 2 <= m <= max_rows, n >= 2 on arch >= 80 (clusters only on arch >= 90) and
 * returns 1; else returns 0. Rules (docs/perf.md "bf16 few rows on the tensor cores"):
 * about sm_count x 16 warps in all (two blocks of 8 an SM) and at least 2 steps of 32 k's a
 * warp where K has them; a strip's warps up to 8 a block, then blocks a cluster (up to
 * 8); every warp of a strip the same number of steps. */
int dt_gemv_mma_geom_make(int64_t m, int64_t n, int64_t k, int arch, int sm_count, int max_rows,
                          dt_gemv_mma_geom *g);

/* DUALTIME_GEMV_MMA: *rows = the rows limit: 0 (unset, empty or "0": off),
 * DT_GEMV_MMA_ROWS_DEFAULT ("1") or r (2..128); other values fail with DT_EINVAL. */
dt_status dt_gemv_mma_knob(int *rows, dt_err *err);

/* dt_gemv_fewrows_geom_make with the fewest column threads ctmin (8, 16, 32) instead of 8. */
int dt_gemv_fewrows_geom_ct(int64_t m, int64_t n, int64_t k, int vw, int kg, int vecb, int arch,
                            int sm_count, int max_rows, int ctmin, dt_sgemv_geom *g);

/* The few-rows settings of a dtype (narrow: bf16 / f16) from the defaults above and the
 * knobs DUALTIME_GEMM_FEWROWS (0..64), DUALTIME_GEMV_KG (1, 2, 4, 8), DUALTIME_GEMV_CTMIN
 * (8, 16, 32), DUALTIME_GEMV_CH (1..8); other values fail with DT_EINVAL. */
dt_status dt_gemv_fewrows_knobs(int narrow, dt_gemv_fewrows_cfg *c, dt_err *err);

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
 * f16) or "gemv", and the shape thin; bf16 / f16 few rows on gemv_mma.cu first where
 * DUALTIME_GEMV_MMA asks (or DUALTIME_GEMM_VARIANT=gemv-mma, which fails with DT_EINVAL
 * for f32 or a shape it cannot take). On return *taken = 1: p's source, kernel,
 * options (appended to the common ones already in p), launch and summary are set;
 * *taken = 0: p is unchanged. DUALTIME_GEMM_VARIANT=gemv on a non-thin shape fails with
 * DT_EINVAL. For bf16 / f16 the caller has added -DDT_ELEM. arch: the SM version number. */
dt_status dt_sgemm_plan_thin(const dt_case_layout *L, int arch, int sm_count, dt_cuda_plan *p,
                             int *taken, dt_err *err);

#endif
