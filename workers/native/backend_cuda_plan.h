/* backend_cuda_plan.h — the GPU-free half of the CUDA backend: which kernel variant a
 * case gets, its NVRTC option list (the specialization macros), its launch geometry,
 * where its source text comes from, and the NVRTC compile itself.
 *
 * Everything here works without a GPU and without libcuda (it links NVRTC only), so
 * tests/cuda/test_nvrtc_compile compiles every kernel exactly as the backend would.
 *
 * Sources: the .cu and .cuh files of kernels/cuda are embedded into the module at build time (a
 * generated C file, see workers/native/embed_cuda_kernels.cmake). With the environment
 * variable DUALTIME_KERNEL_DIR set, a file present in that directory is read from there
 * instead (kernel development, planted-fault tests); absent files fall back to the
 * embedded copy.
 *
 * gemm has two variants: v2 (gemm_v2.cu, the default) and v1 (gemm.cu), picked with the
 * environment variable DUALTIME_GEMM_VARIANT=v1|v2 (DUALTIME_GEMM_BK=8|16|32 sets v2's
 * 128x128 tile depth); other values make dt_cuda_plan_make fail with DT_EINVAL. Thin FP32
 * shapes (N == 1 or M == 1) take gemv (gemv.cu) when the variant is unset or "gemv", and
 * v2 multiplies only the valid depth of its last K-step (and stages scalar C through
 * shared memory), unless DUALTIME_GEMM_SHAPE=0
 * (backend_cuda_plan_sgemm.h).
 *
 * Element types: the case's dtype (L->dtype, dt_layout_make_typed) picks the storage
 * type of every floating-point buffer: bf16/f16 add -DDT_ELEM=1|2 (FP32 passes none, so
 * its options and code are unchanged), the kernel symbol is dt_<op>_<dtype>
 * (dt_softmax_bf16), and VEC is the elements per 16-byte vector where every walked row
 * is 16-byte aligned and N divides (4 floats, 8 halves), else 1. gemm in bf16/f16 has
 * these variants: tc1 (gemm_tc1.cu, dt_gemm_tc1_<dtype>: mma.sync tensor cores, FP32
 * accumulation), wg1 (gemm_wg1.cu, dt_gemm_wg1_<dtype>: TMA + mbarrier
 * pipeline + wgmma, warp-specialized, persistent; compiled for sm_90a / compute_90a;
 * wg2: the same with one wgmma group in flight, dt_gemm_wg2_<dtype>; wg3, the default:
 * wg1 with a stmatrix + TMA-store epilogue, dt_gemm_wg3_<dtype>, three tensor maps, wg1's
 * register stores where the output is not TMA-describable; wg4: wg3 in 2-block clusters), chosen with
 * DUALTIME_GEMM_VARIANT=tc1|wg1|wg2|wg3|wg4 (DUALTIME_GEMM_STAGES=2..8 their stages;
 * DUALTIME_GEMM_BN=64|128|256 sets wg1's tile
 * width; by default the least-cost width of dt_gemm_geom.h, which takes 64 where the
 * 128x128 tiles are fewer than the SMs, e.g. 1024^3; DUALTIME_GEMM_FILL=0 keeps the
 * rule before it: 256 where the 128x256 tiles fill the SMs, else 128;
 * DUALTIME_GEMM_SPLITK=2, opt-in: each tile's K in two halves on two blocks, the second
 * adding the first's FP32 partial from a workspace; BN then by that older rule, at most
 * 128). wg1..wg4 fall back
 * to tc1 where TMA cannot describe A or B (a row start not 16-byte aligned) or the arch
 * is not sm_90; the summary then says "variant=tc1 (fallback: <why>)". Thin bf16/f16
 * shapes take gemv (dt_gemv_<dtype>, FP32 accumulation) when the variant is unset or
 * "gemv", unless DUALTIME_GEMM_GEMV_NARROW=0 (backend_cuda_plan_sgemm.h). v1/v2 are
 * refused for narrow types and tc1/wg1/wg2/wg3 for FP32. Test only: DUALTIME_PLANT_ACC_F16=1 makes sum accumulate in
 * fp16 (-DDT_ACC_F16=1, one warp per row, "PLANTED-FAULT" in the summary).
 * Row ops: DUALTIME_CE_STREAM=1 (opt-in; 0 the default, other values DT_EINVAL) gives
 * cross_entropy the streaming online-logsumexp kernel (-DCESTREAM=1, one block a row,
 * "ce-stream" in the summary) wherever it would take the staged row (SMEMROW).
 *
 * Ownership: plans are plain values; dt_cuda_source_load and dt_cuda_nvrtc_compile
 * return malloc'd memory the caller frees. Thread-safety: reentrant. */
#ifndef BACKEND_CUDA_PLAN_H
#define BACKEND_CUDA_PLAN_H

#include <stddef.h>

#include "../../src/common/dt_common.h"
#include "../../src/data/dt_arena.h"
#include "dt_cuda_plan_struct.h"

#define DT_CUDA_COMMON_HEADER "dt_cuda_common.cuh"

/* One embedded file (generated at build time). */
typedef struct dt_cuda_embedded_source {
    const char *name; /* "add.cu" */
    const char *text; /* NUL-terminated */
} dt_cuda_embedded_source;
extern const dt_cuda_embedded_source dt_cuda_embedded_sources[];
extern const int dt_cuda_embedded_count;


/* Fills p for the case L. arch is the NVRTC target ("sm_90"; a "compute_XX" target
 * makes PTX instead of CUBIN); sm_count guides tile choice (0: assume 132). The device
 * base of the arena is assumed 256-byte aligned (cuMemAlloc guarantees it). */
dt_status dt_cuda_plan_make(const dt_case_layout *L, const char *arch, int sm_count,
                            dt_cuda_plan *p, dt_err *err);


/* Source text of `name` (from DUALTIME_KERNEL_DIR if set and the file exists there,
 * else embedded), malloc'd. *from_dir (may be NULL) is set to 1 when read from the
 * directory. */
dt_status dt_cuda_source_load(const char *name, char **text, int *from_dir, dt_err *err);

/* Compiles src (named name) with the header text hdr available as
 * DT_CUDA_COMMON_HEADER (hdr may be NULL). On success *image is malloc'd CUBIN (or PTX
 * for compute_ targets, NUL-terminated) of *image_bytes bytes. On a compile error the
 * returned message carries the head of the NVRTC log. */
dt_status dt_cuda_nvrtc_compile(const char *name, const char *src, const char *hdr,
                                const dt_cuda_plan *p, char **image, size_t *image_bytes,
                                dt_err *err);

#endif
