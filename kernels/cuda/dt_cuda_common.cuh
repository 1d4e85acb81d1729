// dt_cuda_common.cuh — helpers shared by the row kernels of kernels/cuda/*.cu.
//
// Compiled at run time by NVRTC (no CUDA headers, no libraries); the backend passes it
// as an in-memory header. Every kernel is specialized through macros passed as -D
// options (see docs/cuda-backend.md), so shapes, strides and launch geometry are
// compile-time constants here:
//   M, N          logical rows and columns of the op
//   LDA, LDB      row strides (elements) of inputs a and b; LDO of the output
//   DT_ELEM       storage type of every floating-point buffer (inputs and output):
//                 0 f32 (default), 1 bf16, 2 f16. Loads widen to FP32, all arithmetic and
//                 accumulation is FP32, stores round to nearest even (cvt.rn). Kernel
//                 symbols carry the suffix: DT_KNAME(dt_add) is dt_add_f32 / _bf16 / _f16
//   VEC           elements per 16-byte vector when every row start is 16-byte aligned
//                 and N % VEC == 0: 4 (f32, float4 loads) or 8 (bf16/f16, uint4 loads);
//                 1: the scalar path (strided, unaligned views, odd N); 2 (bf16/f16
//                 elementwise over a strided window whose rows all start 4-byte aligned
//                 or all 2 mod 4, and N even; DT_PHA / DT_PHB 1: that input's rows are
//                 2 mod 4, loaded as funnel-shifted aligned words): 32-bit pairs
//   BLOCK         threads per block
//   TPR           threads per row: 32 (one warp per row, BLOCK/32 rows per block) or
//                 BLOCK (one block per row)
//   PER           INREG only: vectors of VEC floats each thread holds of its row
//   INREG         1: the row is kept in registers (PER*VEC floats per thread);
//                 0: multi-pass over global memory (very long rows)
//   CLUSTER, NC   (optional, INREG block-per-row only) the row is split over a thread-block
//                 cluster of CLUSTER blocks (sm_90, compile-time __cluster_dims__, so a
//                 plain cuLaunchKernel launches it; grid = M * CLUSTER): block r of a
//                 cluster holds columns [r*NC, min((r+1)*NC, N)) in registers, and each
//                 row reduction combines the blocks' partials through distributed shared
//                 memory (mapa + ld.shared::cluster). The row is read from DRAM once even
//                 when it is far longer than one block's registers (vocabulary rows).
//                 CLUSTER 1 (default): one block or warp holds the whole row.
//   SMEMROW       1: the row (or, with CLUSTER > 1, this block's part of it) is staged in
//                 dynamic shared memory with 16-byte cp.async copies of the 16-byte chunks
//                 that hold it, whatever the row start's alignment (VEC is then always the
//                 16-byte element count, 4 or 8); the passes read shared memory, the output
//                 is written in 16-byte stores aligned to the output row, scalar only in
//                 its first and last chunk. The row is read from DRAM once (vocabulary
//                 rows, unaligned views). Needs TPR == BLOCK, INREG 0, sm_80+.
//   SMEMPIPE      (SMEMROW only) 1: persistent blocks, double-buffered: the grid is what
//                 stays resident (gridDim.x / CLUSTER clusters, each taking every G-th
//                 row), and the next row's copies are issued into a second buffer before
//                 this row's passes (dt_srow_rows); dynamic shared memory is two row
//                 parts. 0 (default): one row (part) a block, one buffer.
//   ROWL2         1 (softmax, rmsnorm, layernorm; DUALTIME_ROW_L2=1): one block a row, no
//                 shared row, no cluster; pass 1 streams the row's 16-byte chunks from
//                 DRAM into the op's reduction, pass 2 reads them again (from L2: the plan
//                 keeps the rows in flight within its L2 budget) and writes. VEC is the
//                 16-byte element count (4 or 8). Needs TPR == BLOCK, INREG 0, SMEMROW 0.
//   DT_FASTEXP    1 (default for bf16/f16): exp(x - max) as ex2.approx(x*log2e - max*log2e)
//                 (one FFMA + MUFU, rel. error ~2^-22, far below a bf16/f16 ulp) and the
//                 softmax normalization as one reciprocal per row and a multiply; 0: expf
//                 and an IEEE division per element (FP32's default)
#pragma once

#define DT_INF __int_as_float(0x7f800000)
#define DT_NAN __int_as_float(0x7fffffff)

// ---- storage type ---------------------------------------------------------------
// dt_t: the stored element; dt_ld (a read-only load widened to float), dt_from_f32
// (round to the storage type), dt_to_f32; for the 16-byte path dt_unpack2/dt_pack2
// (two 16-bit elements in one 32-bit word, the lower address in the low half).
// Conversions are PTX cvt instructions (no cuda_fp16.h / cuda_bf16.h needed).
#ifndef DT_ELEM
#define DT_ELEM 0
#endif
#define DT_CAT_(a, b) a##b
#define DT_CAT(a, b) DT_CAT_(a, b)
#if DT_ELEM == 0
#define DT_SUFFIX _f32
typedef float dt_t;
__device__ __forceinline__ float dt_to_f32(float x) { return x; }
__device__ __forceinline__ float dt_from_f32(float x) { return x; }
#elif DT_ELEM == 1 || DT_ELEM == 2
#if DT_ELEM == 1
#define DT_SUFFIX _bf16
#else
#define DT_SUFFIX _f16
#endif
typedef unsigned short dt_t;
#ifdef DT_HOST_EMU /* tests/cuda/emu: the conversions in C++ (dt_emu.hpp over dt_emu_narrow.hpp), not PTX */
__device__ __forceinline__ float dt_to_f32(unsigned short h) { return dt_emu_narrow_to_f32(h); }
__device__ __forceinline__ unsigned short dt_from_f32(float x) { return dt_emu_narrow_from_f32(x); }
__device__ __forceinline__ unsigned dt_pack2(float lo, float hi) {
    return (unsigned)dt_from_f32(lo) | ((unsigned)dt_from_f32(hi) << 16);
}
#else
__device__ __forceinline__ float dt_to_f32(unsigned short h) {
#if DT_ELEM == 1
    return __uint_as_float((unsigned)h << 16);
#else
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#endif
}
__device__ __forceinline__ unsigned short dt_from_f32(float x) {
    unsigned short h;
#if DT_ELEM == 1
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
#else
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
#endif
    return h;
}
#endif /* DT_HOST_EMU */
__device__ __forceinline__ void dt_unpack2(unsigned w, float &lo, float &hi) {
#if DT_ELEM == 1
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xffff0000u);
#else
    lo = dt_to_f32((unsigned short)(w & 0xffffu));
    hi = dt_to_f32((unsigned short)(w >> 16));
#endif
}
#ifndef DT_HOST_EMU
__device__ __forceinline__ unsigned dt_pack2(float lo, float hi) {
    unsigned r; /* cvt.rn.{bf16,f16}x2.f32 d, a, b: a -> upper half, b -> lower half */
#if DT_ELEM == 1
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}
#endif
// 8 consecutive elements (one 16-byte vector) to / from floats.
__device__ __forceinline__ void dt_unpack8(const uint4 t, float *f) {
    dt_unpack2(t.x, f[0], f[1]);
    dt_unpack2(t.y, f[2], f[3]);
    dt_unpack2(t.z, f[4], f[5]);
    dt_unpack2(t.w, f[6], f[7]);
}
__device__ __forceinline__ uint4 dt_pack8(const float *f) {
    return make_uint4(dt_pack2(f[0], f[1]), dt_pack2(f[2], f[3]), dt_pack2(f[4], f[5]),
                      dt_pack2(f[6], f[7]));
}
#if defined(VEC) && VEC != 1 && VEC != 2 && VEC != 8
#error "bf16/f16: VEC must be 1, 2 (elementwise pairs) or 8"
#endif
#else
#error "DT_ELEM must be 0 (f32), 1 (bf16) or 2 (f16)"
#endif
#define DT_KNAME(base) DT_CAT(base, DT_SUFFIX)
__device__ __forceinline__ float dt_ld(const dt_t *__restrict__ p) { return dt_to_f32(__ldg(p)); }

// ---- shifted 16-byte chunks (session 18) ------------------------------------------
// A row at p that need not start 16-byte aligned lies s = (p's byte offset in its
// 16-byte vector) / element size elements past the aligned base p - s, so columns c ..
// c+VEC-1 (VEC = the elements of 16 bytes, c a multiple of VEC) are elements s .. s+VEC-1
// of the two aligned vectors at base + c and base + c + VEC. (A chunk in another frame,
// the output row's of shift t, starts at vector c/VEC - 1 with shift s - t + VEC where
// s < t.) dt_shift_vecs picks the two vectors so that every vector read holds an
// element of the row's first nl columns. So no read leaves the 16-byte granules the row's
// own bytes touch (an allocation, 256-byte aligned, holds them; the arena has guards
// besides). dt_shift_chunk puts the VEC elements in place as floats: selects on the bits
// of the shift and, for 2-byte types, one funnel shift.
#ifndef DT_SHIFT_A /* input a's rows loaded shifted (the row ops' in-register rows, the
                      elementwise items); b: residual_layernorm's and the elementwise b */
#define DT_SHIFT_A 0
#endif
#ifndef DT_SHIFT_B
#define DT_SHIFT_B 0
#endif
#if (DT_SHIFT_A || DT_SHIFT_B) && (!defined(VEC) || VEC != (DT_ELEM == 0 ? 4 : 8))
#error "DT_SHIFT_A / DT_SHIFT_B need VEC = the elements of 16 bytes"
#endif
__device__ __forceinline__ unsigned dt_shift_of(const dt_t *p) {
    return ((unsigned)(size_t)p & 15u) / (unsigned)sizeof(dt_t);
}
// Vector j of a row part's aligned base holds one of its first nl columns (s: the part
// start's shift).
__device__ __forceinline__ bool dt_vec_in_row(int j, int nl, unsigned s, int vec) {
    return j >= 0 && j * vec - (int)s < nl;
}
// The two aligned vectors, j0 and j1, that a chunk starting at vector j with shift sh
// (0..vec-1) is put together from (its elements sh .. of j, then of j + 1): each is
// read only where it holds an element of the row's first nl columns, else vector j0
// (or the row's first, 0) again, whose elements are then outside the row and not used.
__device__ __forceinline__ void dt_shift_vecs(int j, int nl, unsigned s, unsigned sh, int vec,
                                              int &j0, int &j1) {
    j0 = dt_vec_in_row(j, nl, s, vec) ? j : 0;
#if defined(DT_EMU_PLANT_SHIFT_HI) /* tests/cuda/emu's planted faults: the second vector */
    j1 = j0;                                                        /* never read, */
#elif defined(DT_EMU_PLANT_SHIFT_LAST)
    j1 = sh && j >= -1 && (j + 1) * vec < nl ? j + 1 : j0;          /* nor for the last chunk */
#else
    j1 = sh && dt_vec_in_row(j + 1, nl, s, vec) ? j + 1 : j0;
#endif
}
__device__ __forceinline__ void dt_shift_chunk(const uint4 lo, const uint4 hi, unsigned s,
                                               float *f) {
    const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#if DT_ELEM == 0
    unsigned t[5]; /* by 2 words, then by 1 */
#pragma unroll
    for (int k = 0; k < 5; k++) t[k] = (s & 2u) ? w[k + 2] : w[k];
#pragma unroll
    for (int k = 0; k < 4; k++) f[k] = __uint_as_float((s & 1u) ? t[k + 1] : t[k]);
#else
    unsigned t[6], u[5]; /* by 4 elements (2 words), by 2 (1 word), then by 1 (half a word) */
#pragma unroll
    for (int k = 0; k < 6; k++) t[k] = (s & 4u) ? w[k + 2] : w[k];
#pragma unroll
    for (int k = 0; k < 5; k++) u[k] = (s & 2u) ? t[k + 1] : t[k];
#pragma unroll
    for (int k = 0; k < 4; k++) dt_unpack2(__funnelshift_r(u[k], u[k + 1], (s & 1u) * 16u), f[2 * k], f[2 * k + 1]);
#endif
}

#ifndef DT_FASTEXP
#define DT_FASTEXP 0
#endif
#define DT_LOG2E 1.4426950408889634f
// 2^x, MUFU.EX2 (flush-to-zero: results below 2^-126 become 0; exp(-inf) = 0).
__device__ __forceinline__ float dt_ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
// exp(x - mx) given mls = mx * log2e: the fast path above, or expf.
__device__ __forceinline__ float dt_exp_shifted(float x, float mx, float mls) {
#if DT_FASTEXP
    (void)mx;
    return dt_ex2(fmaf(x, DT_LOG2E, -mls));
#else
    (void)mls;
    return expf(x - mx);
#endif
}

// ---- L2 eviction hints (DT_HINT, DUALTIME_ROW_HINT=1; session 13) -----------------
// The staged and streamed rows move every byte of a long row through L2 once or twice
// while the op's parameter vectors (gamma, beta) and, in the two-read stream (ROWL2),
// the row itself are read again soon after. With DT_HINT 1 the 16-byte accesses of those
// paths carry an L2 eviction policy (createpolicy + .L2::cache_hint, sm_80+): the output
// stores and the last read of an input evict first, the parameter loads and ROWL2's first
// read evict last, so the streamed bytes do not push out what is read again. DT_HINT 0
// (and the CPU emulation): plain loads and stores, the code before. DT_HINT 2: only the
// parameter loads evict last (H100, session 13: the streamed rows' hints cost softmax
// 3-6%, the parameters' gained rmsnorm / layernorm at 128256+ columns up to 17%).
// Policies:
#define DT_POL_NORMAL 0 /* no hint */
#define DT_POL_FIRST 1  /* read or written once: evict first (DT_HINT 1) */
#define DT_POL_LAST 2   /* read again soon: evict last (DT_HINT 1) */
#define DT_POL_PARAM 3  /* a parameter vector every row reads: evict last (DT_HINT 1, 2) */
#ifndef DT_HINT
#define DT_HINT 0
#endif
#if DT_HINT < 0 || DT_HINT > 2
#error "DT_HINT must be 0, 1 or 2"
#endif
#if DT_HINT && !defined(DT_HOST_EMU)
#define DT_HINTS_ON 1
#define DT_HINT_STREAM (DT_HINT == 1) /* the row's own reads and the output's stores */
// Whether policy P is applied under this DT_HINT.
template <int P>
__device__ __forceinline__ constexpr bool dt_hinted() {
    return P == DT_POL_PARAM || (P != DT_POL_NORMAL && DT_HINT_STREAM);
}
template <int P>
__device__ __forceinline__ unsigned long long dt_policy() {
    unsigned long long pol;
    if (P == DT_POL_LAST || P == DT_POL_PARAM)
        asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    else
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    return pol;
}
#else
#define DT_HINTS_ON 0
#define DT_HINT_STREAM 0
#endif
// A read-only 16-byte load (ld.global.nc, as __ldg) and a 16-byte store under policy P;
// the float4 forms go through the uint4 ones (the same 16 bytes).
template <int P>
__device__ __forceinline__ uint4 dt_ldg16(const uint4 *p) {
#if DT_HINTS_ON
    if (dt_hinted<P>()) {
        uint4 v;
        asm("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
            : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
            : "l"(p), "l"(dt_policy<P>()));
        return v;
    }
#endif
    return __ldg(p);
}
template <int P>
__device__ __forceinline__ void dt_stg16(uint4 *p, const uint4 v) {
#if DT_HINTS_ON
    if (dt_hinted<P>()) {
        asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p),
                     "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(dt_policy<P>())
                     : "memory");
        return;
    }
#endif
    *p = v;
}
template <int P>
__device__ __forceinline__ float4 dt_ldg16(const float4 *p) {
#if DT_HINTS_ON
    if (dt_hinted<P>()) {
        const uint4 u = dt_ldg16<P>(reinterpret_cast<const uint4 *>(p));
        return make_float4(__uint_as_float(u.x), __uint_as_float(u.y), __uint_as_float(u.z),
                           __uint_as_float(u.w));
    }
#endif
    return __ldg(p);
}
template <int P>
__device__ __forceinline__ void dt_stg16(float4 *p, const float4 v) {
#if DT_HINTS_ON
    if (dt_hinted<P>()) {
        dt_stg16<P>(reinterpret_cast<uint4 *>(p),
                    make_uint4(__float_as_uint(v.x), __float_as_uint(v.y), __float_as_uint(v.z),
                               __float_as_uint(v.w)));
        return;
    }
#endif
    *p = v;
}

// ---- mma.sync.m16n8k16 (bf16 / f16 inputs, FP32 accumulators) --------------------
// d += a * b in the PTX ISA's fragment layouts (a: 16 x 16 row-major, 4 registers; b:
// 16 x 8 column-major, 2 registers; d: 16 x 8, 4 FP32), used by gemm_tc1.cu and
// gemv_mma.cu. Under DT_HOST_EMU the collective stand-in of dt_emu.hpp.
#if DT_ELEM == 1 || DT_ELEM == 2
__device__ __forceinline__ void dt_mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                            unsigned b1) {
#ifdef DT_HOST_EMU
    dt_emu_mma16816(d, a, b0, b1);
#else
#if DT_ELEM == 1
#define DT_MMA16816 "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#else
#define DT_MMA16816 "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#endif
    asm volatile(DT_MMA16816 " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#undef DT_MMA16816
#endif
}
#endif

// ---- sm_90 clusters (every kernel that splits work over a cluster) ----------------
// dt_cl_sync: a barrier of every thread of the cluster, arrive with release and wait
// with acquire (every block's shared-memory writes before it are visible to every block
// after it). dt_cl_ld: *p in the shared memory of block `rank` of this cluster (DSMEM:
// mapa + ld.shared::cluster). Under DT_HOST_EMU (tests/cuda/emu) the CPU stand-ins of
// dt_emu.hpp: one std::barrier of the cluster's threads, and the same static at the same
// offset in another block's copy of the kernel.
#ifdef DT_HOST_EMU
__device__ __forceinline__ void dt_cl_sync() { dt_emu_cluster_sync(); }
__device__ __forceinline__ float dt_cl_ld(const float *p, unsigned rank) {
    return *(const float *)dt_emu_remote(p, rank);
}
#else
__device__ __forceinline__ void dt_cl_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ float dt_cl_ld(const float *p, unsigned rank) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    unsigned ra;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(a), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(ra) : "memory");
    return v;
}
#endif

#if defined(TPR) && !defined(GV_MODE) /* gemv.cu: TPR is its own (column threads) */
#define DT_RPB (BLOCK / TPR) /* rows per block */
#if TPR != 32 && TPR != BLOCK
#error "TPR must be 32 or BLOCK"
#endif
#ifndef CLUSTER
#define CLUSTER 1
#endif
#ifndef SMEMROW
#define SMEMROW 0
#endif
#if SMEMROW && (TPR != BLOCK || INREG)
#error "SMEMROW needs block-per-row, INREG=0"
#endif
#if defined(SMEMPIPE) && SMEMPIPE && !SMEMROW
#error "SMEMPIPE needs SMEMROW"
#endif
#ifndef ROWL2
#define ROWL2 0
#endif
#ifndef DT_SM_ONLINE /* softmax.cu's staged rows with one online (max, sum) pass (DUALTIME_ROW_SM_ONLINE) */
#define DT_SM_ONLINE 0
#endif
#if DT_SM_ONLINE && !SMEMROW
#error "DT_SM_ONLINE needs SMEMROW"
#endif
#ifndef DT_LN_ONE /* layernorm.cu's one-reduction in-register variant (DUALTIME_ROW_LN_ONE) */
#define DT_LN_ONE 0
#endif
#if DT_LN_ONE && !INREG
#error "DT_LN_ONE needs INREG"
#endif
#ifndef DT_LN_PERSIST /* layernorm.cu's persistent prefetching in-register rows (DUALTIME_ROW_LN_PERSIST) */
#define DT_LN_PERSIST 0
#endif
#if DT_LN_PERSIST && (!INREG || TPR != BLOCK || TPR == 32 || CLUSTER != 1 || DT_LN_ONE)
#error "DT_LN_PERSIST needs INREG, block-per-row (TPR == BLOCK > 32), CLUSTER=1, DT_LN_ONE=0"
#endif
#ifndef CESTREAM /* cross_entropy.cu's streaming online logsumexp */
#define CESTREAM 0
#endif
#if ROWL2 && (TPR != BLOCK || INREG || SMEMROW || CLUSTER != 1 || VEC != (DT_ELEM == 0 ? 4 : 8))
#error "ROWL2 needs block-per-row, INREG=0, SMEMROW=0, CLUSTER=1, 16-byte VEC"
#endif
#if CESTREAM && (TPR != BLOCK || INREG || SMEMROW || CLUSTER != 1 || VEC != (DT_ELEM == 0 ? 4 : 8))
#error "CESTREAM needs block-per-row, INREG=0, SMEMROW=0, CLUSTER=1, 16-byte VEC"
#endif
#if CLUSTER > 1
#if TPR != BLOCK || !(INREG || SMEMROW)
#error "CLUSTER > 1 needs block-per-row INREG or SMEMROW"
#endif
#if NC % VEC != 0 || (CLUSTER - 1) * NC >= N
#error "bad NC for CLUSTER"
#endif
#define DT_CLUSTER_ATTR __cluster_dims__(CLUSTER, 1, 1)
#define DT_NSPAN NC /* columns one block holds at most */
#else
#define DT_CLUSTER_ATTR
#define DT_NSPAN N
#endif
#if INREG && PER * VEC * TPR < DT_NSPAN
#error "PER too small for N"
#endif

// The row this thread works on (may be >= M for the last block of warp-per-row).
__device__ __forceinline__ int dt_row() {
#if CLUSTER > 1
    return (int)blockIdx.x / CLUSTER;
#else
    return (int)blockIdx.x * DT_RPB + (int)threadIdx.x / TPR;
#endif
}
__device__ __forceinline__ int dt_lane() { return (int)threadIdx.x % TPR; }
#if CLUSTER > 1
// First column of this block's part of the row, and how many columns it holds.
__device__ __forceinline__ int dt_cbase() { return ((int)blockIdx.x % CLUSTER) * NC; }
__device__ __forceinline__ int dt_nloc() {
    const int r = N - dt_cbase();
    return r < NC ? r : NC;
}
#define DT_NL dt_nloc()
// Every block must call it last: no block's shared memory may go while another reads it.
#define DT_CLUSTER_END() dt_cl_sync()
#else
__device__ __forceinline__ int dt_cbase() { return 0; }
#define DT_NL N
#define DT_CLUSTER_END() ((void)0)
#endif

__device__ __forceinline__ float dt_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float dt_warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Sum / max over the TPR threads of one row; every thread of the row gets the result.
// For TPR == BLOCK all threads of the block must call it (it synchronizes). With
// CLUSTER > 1 the result covers the whole row (every block of the cluster must call it):
// each block publishes its partial in shared memory, one cluster barrier, then every
// thread reads the CLUSTER partials over DSMEM. S names the partial's slot: a kernel
// making two reductions of one kind uses S = 0 and 1, so a slot is never rewritten while
// another block may still read it (DT_CLUSTER_END keeps the last ones alive). par (0 or
// 1) picks one of two cluster slots: a persistent block (SMEMPIPE) alternates it by row,
// so a row's partial never overwrites the previous row's while a slower block of the
// cluster still reads it (each row makes at least one cluster barrier in between).
#if defined(DT_HOST_EMU) && defined(DT_EMU_PLANT_ONE_SLOT) /* tests/cuda/emu's planted fault */
#define DT_SLOT(par) 0
#else
#define DT_SLOT(par) (par)
#endif
template <int S = 0>
__device__ __forceinline__ float dt_row_sum(float v, int par = 0) {
    v = dt_warp_sum(v);
#if TPR > 32
    __shared__ float red[TPR / 32];
    __syncthreads(); /* red may still be read by a previous reduction */
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    v = 0.0f;
#pragma unroll
    for (int w = 0; w < TPR / 32; w++) v += red[w];
#endif
#if CLUSTER > 1
    __shared__ float cpart[2];
    if (threadIdx.x == 0) cpart[DT_SLOT(par)] = v;
    dt_cl_sync();
    v = 0.0f;
#pragma unroll
    for (int r = 0; r < CLUSTER; r++) v += dt_cl_ld(&cpart[DT_SLOT(par)], (unsigned)r);
#else
    (void)par;
#endif
    return v;
}
template <int S = 0>
__device__ __forceinline__ float dt_row_max(float v, int par = 0) {
    v = dt_warp_max(v);
#if TPR > 32
    __shared__ float redm[TPR / 32];
    __syncthreads();
    if ((threadIdx.x & 31) == 0) redm[threadIdx.x >> 5] = v;
    __syncthreads();
    v = -DT_INF;
#pragma unroll
    for (int w = 0; w < TPR / 32; w++) v = fmaxf(v, redm[w]);
#endif
#if CLUSTER > 1
    __shared__ float cpartm[2];
    if (threadIdx.x == 0) cpartm[DT_SLOT(par)] = v;
    dt_cl_sync();
    v = -DT_INF;
#pragma unroll
    for (int r = 0; r < CLUSTER; r++) v = fmaxf(v, dt_cl_ld(&cpartm[DT_SLOT(par)], (unsigned)r));
#else
    (void)par;
#endif
    return v;
}

#if ROWL2 || DT_LN_ONE
// ---- (n, mean, M2) partials and their merge (Chan et al.) -------------------------
// A part of a row summarized by its count n, its mean and M2 (the sum of squared
// deviations from its own mean); an empty part is {0, 0, 0}. layernorm's ROWL2 pass 1
// and its one-reduction in-register variant (DT_LN_ONE) combine parts this way, never
// as a one-pass sum and sum of squares (which cancels under a large common offset).
struct dt_welford {
    float n, mean, m2;
};
// w += the b.n values summarized by b (ROWL2's chunk merges; IEEE division).
__device__ __forceinline__ void dt_welford_merge(dt_welford &w, const dt_welford &b) {
    if (b.n == 0.0f) return;
    if (w.n == 0.0f) {
        w = b;
        return;
    }
    const float n = w.n + b.n, d = b.mean - w.mean, f = b.n / n;
    w.mean = fmaf(d, f, w.mean);
#ifndef DT_EMU_PLANT_NO_MERGE_TERM /* tests/cuda/emu's planted fault: between-part term dropped */
    w.m2 = w.m2 + b.m2 + d * d * w.n * f;
#else
    w.m2 = w.m2 + b.m2;
#endif
    w.n = n;
}
#if DT_LN_ONE
// 1 / x for x >= 1 (counts): one MUFU op, rcp.approx (~1 ulp; FTZ is safe here).
__device__ __forceinline__ float dt_rcp_count(float x) {
#ifdef DT_HOST_EMU
    return 1.0f / x;
#else
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#endif
}
// The merge of two parts for DT_LN_ONE's butterflies: Chan's update with every operation
// commutative in a and b (the mean as the weighted sum of both means, M2 as M2a + M2b +
// d^2 na nb / n), so both lanes of a shuffle pair get the same bits without ordering
// them, and branch-free: an empty part ({0, 0, 0}) adds nothing, two give {0, 0, 0}
// (1 / max(n, 1)). About 13 FP operations and no division: the merges sit on the
// block's critical path between the row's load and its store.
__device__ __forceinline__ dt_welford dt_welford_pair(const dt_welford &a, const dt_welford &b) {
    const float n = a.n + b.n, r = dt_rcp_count(fmaxf(n, 1.0f)), d = b.mean - a.mean;
    dt_welford w;
    w.n = n;
    /* __fmul_rn: no FMA contraction of the sum of products, which would not commute */
    w.mean = (__fmul_rn(a.n, a.mean) + __fmul_rn(b.n, b.mean)) * r;
#ifndef DT_EMU_PLANT_NO_MERGE_TERM /* tests/cuda/emu's planted fault: between-part term dropped */
    w.m2 = (a.m2 + b.m2) + d * d * (a.n * b.n * r);
#else
    w.m2 = a.m2 + b.m2;
#endif
    return w;
}
#endif /* DT_LN_ONE */
#endif /* ROWL2 || DT_LN_ONE */

// Column of element e (0..VEC-1) of this thread's p-th vector.
__device__ __forceinline__ int dt_col(int p, int e, int lane) { return (p * TPR + lane) * VEC + e; }

#if INREG
#if (DT_SHIFT_A || DT_SHIFT_B || DT_OFRAME) && (DT_LN_ONE || DT_LN_PERSIST || SMEMROW)
#error "DT_SHIFT_A / DT_SHIFT_B / DT_OFRAME: the plain in-register rows only (not DT_LN_ONE, DT_LN_PERSIST)"
#endif
#ifndef DT_OFRAME /* 1: the output rows need not start 16-byte aligned (odd N) */
#define DT_OFRAME 0
#endif
#if DT_OFRAME && (VEC != (DT_ELEM == 0 ? 4 : 8) || DT_LN_RAW || PER * VEC * TPR < DT_NSPAN + VEC - 1)
#error "DT_OFRAME needs VEC = the elements of 16 bytes, no DT_LN_RAW, and PER for N + VEC - 1"
#endif
// The output row frame (DT_OFRAME, session 18): where the output rows are not aligned
// whole vectors (odd N), this thread's chunks are those of the output row's aligned
// base: chunk k holds columns k*VEC - t .. k*VEC - t + VEC-1, t the output row start's
// shift (dt_oframe), so the stores of whole chunks are 16-byte stores and only a row's
// first and last chunk store element by element. Every input (and gamma / beta) is then
// loaded shifted into that frame. Without DT_OFRAME, t = 0.
__device__ __forceinline__ int dt_oframe(const dt_t *q) {
#if DT_OFRAME
    return (int)dt_shift_of(q);
#else
    (void)q;
    return 0;
#endif
}
// Column of element e (0..VEC-1) of this thread's i-th chunk in the frame of shift t.
__device__ __forceinline__ int dt_fcol(int i, int e, int lane, int t) { return dt_col(i, e, lane) - t; }
// Whether column c of the row part (nl columns) is one of its columns (without a frame
// no column is negative).
__device__ __forceinline__ bool dt_in_part(int c, int nl) {
#if DT_OFRAME
    return c >= 0 && c < nl;
#else
    return c < nl;
#endif
}
// Shifted rows (DT_SHIFT_A / DT_SHIFT_B; views and rows of odd N, whose starts are not
// 16-byte aligned, kept in registers like aligned rows; session 18): this thread's
// chunks (in the frame of shift t: columns k*VEC - t ..) each put together from the two
// aligned 16-byte vectors that hold it (dt_shift_vecs, dt_shift_chunk above; s from the
// row's address, so it may differ row to row). All loads are issued before any is used
// (one basic block). Columns outside the row get `fill`.
__device__ __forceinline__ void dt_load_row_shifted(const dt_t *__restrict__ p,
                                                    float (&v)[PER * VEC], int lane, float fill,
                                                    int t) {
    const unsigned s = dt_shift_of(p);
    const int d = (int)s - t, kd = d < 0 ? -1 : 0; /* the chunk's first vector: k + kd */
    const unsigned sh = (unsigned)(d - kd * VEC);
    const dt_t *__restrict__ base = p - s;
    const int nl = DT_NL;
    uint4 lo[PER], hi[PER];
#pragma unroll
    for (int i = 0; i < PER; i++) {
        int j0, j1;
        dt_shift_vecs(i * TPR + lane + kd, nl, s, sh, VEC, j0, j1);
        lo[i] = __ldg(reinterpret_cast<const uint4 *>(base + j0 * VEC));
        hi[i] = __ldg(reinterpret_cast<const uint4 *>(base + j1 * VEC));
    }
#pragma unroll
    for (int i = 0; i < PER; i++) {
        float f[VEC];
        dt_shift_chunk(lo[i], hi[i], sh, f);
#pragma unroll
        for (int e = 0; e < VEC; e++) {
#if !DT_OFRAME && N % VEC == 0 /* whole chunks from column 0 (a cluster's NC % VEC == 0) */
            v[i * VEC + e] = dt_in_part(dt_col(i, 0, lane), nl) ? f[e] : fill;
#else
            v[i * VEC + e] = dt_in_part(dt_fcol(i, e, lane, t), nl) ? f[e] : fill;
#endif
        }
    }
}
// Loads this thread's part of a row into v[PER*VEC]; columns outside the row get
// `fill`. SH 1 (or DT_OFRAME): the row need not start 16-byte aligned
// (dt_load_row_shifted; t the frame's shift).
template <int SH = 0>
__device__ __forceinline__ void dt_load_row(const dt_t *__restrict__ p, float (&v)[PER * VEC],
                                            int lane, float fill, int t = 0) {
    if constexpr (SH != 0 || DT_OFRAME != 0) {
        dt_load_row_shifted(p, v, lane, fill, t);
        return;
    }
    (void)t;
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int c = (i * TPR + lane) * VEC;
#if VEC == 8
        if (c < DT_NL) {
            dt_unpack8(__ldg(reinterpret_cast<const uint4 *>(p + c)), &v[8 * i]);
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++) v[8 * i + e] = fill;
        }
#elif VEC == 4
        if (c < DT_NL) {
            const float4 t = __ldg(reinterpret_cast<const float4 *>(p + c));
            v[4 * i + 0] = t.x; v[4 * i + 1] = t.y; v[4 * i + 2] = t.z; v[4 * i + 3] = t.w;
        } else {
            v[4 * i + 0] = fill; v[4 * i + 1] = fill; v[4 * i + 2] = fill; v[4 * i + 3] = fill;
        }
#else
        v[i] = c < DT_NL ? dt_ld(p + c) : fill;
#endif
    }
}
// Stores v[PER*VEC] (the row's columns) to a row (t: the frame's shift, DT_OFRAME).
__device__ __forceinline__ void dt_store_row(dt_t *__restrict__ p, const float (&v)[PER * VEC],
                                             int lane, int t = 0) {
#if DT_OFRAME
    dt_t *__restrict__ base = p - t;
    const int nl = DT_NL;
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int c = dt_fcol(i, 0, lane, t);
        if (c >= 0 && c + VEC <= nl) { /* a whole chunk: at base + c + t, 16-byte aligned */
#if VEC == 8
            *reinterpret_cast<uint4 *>(base + dt_col(i, 0, lane)) = dt_pack8(&v[8 * i]);
#else
            *reinterpret_cast<float4 *>(base + dt_col(i, 0, lane)) =
                make_float4(v[4 * i + 0], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
#endif
        } else {
#pragma unroll
            for (int e = 0; e < VEC; e++)
                if (c + e >= 0 && c + e < nl) p[c + e] = dt_from_f32(v[i * VEC + e]);
        }
    }
#else
    (void)t;
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int c = (i * TPR + lane) * VEC;
#if VEC == 8
        if (c < DT_NL) *reinterpret_cast<uint4 *>(p + c) = dt_pack8(&v[8 * i]);
#elif VEC == 4
        if (c < DT_NL)
            *reinterpret_cast<float4 *>(p + c) =
                make_float4(v[4 * i + 0], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
#else
        if (c < DT_NL) p[c] = dt_from_f32(v[i]);
#endif
    }
#endif
}
// Loads a contiguous parameter vector (gamma, beta: always 16B-aligned, stride 1), in the
// frame of shift t (DT_OFRAME).
__device__ __forceinline__ void dt_load_vec(const dt_t *__restrict__ p, float (&v)[PER * VEC],
                                            int lane, int t = 0) {
    dt_load_row(p, v, lane, 0.0f, t);
}
// Mean and biased variance of the row held in v (padding 0), variance as the mean of
// (x - mean)^2: v becomes x - mean (padding stays 0) and the result is
// 1 / sqrt(var + eps), for every thread of the row (layernorm, residual_layernorm; t the
// frame's shift, DT_OFRAME).
__device__ __forceinline__ float dt_row_center_rstd(float (&v)[PER * VEC], int lane, float eps,
                                                    int t = 0) {
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < PER * VEC; i++) s += v[i];
    const float mean = dt_row_sum<0>(s) / (float)N;
    float d2 = 0.0f;
#pragma unroll
    for (int i = 0; i < PER; i++)
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const float d = dt_in_part(dt_fcol(i, e, lane, t), DT_NL) ? v[i * VEC + e] - mean : 0.0f;
            v[i * VEC + e] = d;
            d2 = fmaf(d, d, d2);
        }
    return 1.0f / sqrtf(dt_row_sum<1>(d2) / (float)N + eps);
}
#if DT_LN_ONE
// w merged with the partial of the lane o away (xor); dt_welford_pair is symmetric, so
// both lanes of a pair, and in the end every lane, hold the same bits.
__device__ __forceinline__ dt_welford dt_welford_xor(const dt_welford &w, int o) {
    dt_welford b;
    b.n = __shfl_xor_sync(0xffffffffu, w.n, o);
    b.mean = __shfl_xor_sync(0xffffffffu, w.mean, o);
    b.m2 = __shfl_xor_sync(0xffffffffu, w.m2, o);
    return dt_welford_pair(w, b);
}
// The row's (N, mean, M2) from every thread's partial w, in ONE reduction round: the
// warp's butterfly, then (TPR > 32) one barrier after which lane l of every warp takes
// warp l % (TPR/32)'s partial and the lanes merge them in a butterfly (the same order in
// every warp); then (CLUSTER > 1) one cluster barrier and the blocks' partials in rank
// order over DSMEM. Every thread of the row gets the same result. The shared slots are
// written once a block (one reduction a kernel: no barrier before them).
__device__ __forceinline__ dt_welford dt_welford_row(dt_welford w) {
    const int l = (int)(threadIdx.x & 31);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) w = dt_welford_xor(w, o);
#if TPR > 32
    constexpr int W = TPR / 32;
    __shared__ float wn[W], wmean[W], wm2[W];
    if (l == 0) {
        wn[threadIdx.x >> 5] = w.n;
        wmean[threadIdx.x >> 5] = w.mean;
        wm2[threadIdx.x >> 5] = w.m2;
    }
    __syncthreads();
    w.n = wn[l % W];
    w.mean = wmean[l % W];
    w.m2 = wm2[l % W];
#pragma unroll
    for (int o = 1; o < W; o <<= 1) w = dt_welford_xor(w, o);
#endif
#if CLUSTER > 1
    __shared__ float cw[3];
    if (threadIdx.x == 0) {
        cw[0] = w.n;
        cw[1] = w.mean;
        cw[2] = w.m2;
    }
    dt_cl_sync();
    w = {0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < CLUSTER; r++) {
        dt_welford b;
        b.n = dt_cl_ld(&cw[0], (unsigned)r);
        b.mean = dt_cl_ld(&cw[1], (unsigned)r);
        b.m2 = dt_cl_ld(&cw[2], (unsigned)r);
        w = dt_welford_pair(w, b);
    }
#endif
    return w;
}
#endif /* DT_LN_ONE */
#if DT_LN_ONE || DT_LN_PERSIST
// The row as this thread's PER raw 16-byte (VEC 8: 8 narrow elements packed in a uint4;
// VEC 4: a float4) or scalar (VEC 1) vectors, widened only where used (DT_LN_ONE: a
// narrow row held packed takes half the registers of its floats; DT_LN_PERSIST: the
// prefetched next row and, at =2, gamma and beta held across rows).
#if VEC == 8
typedef uint4 dt_raw_t;
#elif VEC == 4
typedef float4 dt_raw_t;
#else
typedef dt_t dt_raw_t;
#endif
__device__ __forceinline__ void dt_raw_unpack(const dt_raw_t &t, float (&f)[VEC]) {
#if VEC == 8 && !defined(DT_HOST_EMU)
    /* through an opaque copy, so each pass widens the packed words again instead of the
     * compiler keeping the widened floats live between passes (twice the registers) */
    uint4 u;
    asm volatile("mov.b32 %0, %4;\n\tmov.b32 %1, %5;\n\tmov.b32 %2, %6;\n\tmov.b32 %3, %7;"
                 : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
                 : "r"(t.x), "r"(t.y), "r"(t.z), "r"(t.w));
    dt_unpack8(u, f);
#elif VEC == 8
    dt_unpack8(t, f);
#elif VEC == 4
    f[0] = t.x; f[1] = t.y; f[2] = t.z; f[3] = t.w;
#else
    f[0] = dt_to_f32(t);
#endif
}
// One raw vector at p (a vector start: 16-byte aligned where VEC > 1).
__device__ __forceinline__ dt_raw_t dt_raw_ld(const dt_t *__restrict__ p) {
#if VEC == 1
    return __ldg(p);
#else
    return __ldg(reinterpret_cast<const dt_raw_t *>(p));
#endif
}
// This thread's vectors of a row (or of gamma / beta) at p; those past DT_NL are zero.
__device__ __forceinline__ void dt_raw_row(const dt_t *__restrict__ p, dt_raw_t (&x)[PER], int lane) {
#pragma unroll
    for (int i = 0; i < PER; i++) {
        const int c = (i * TPR + lane) * VEC;
        if (c < DT_NL) {
            x[i] = dt_raw_ld(p + c);
        } else {
            x[i] = dt_raw_t{}; /* zero */
        }
    }
}
// VEC values f stored at column c of row q (c < DT_NL).
__device__ __forceinline__ void dt_raw_store(dt_t *__restrict__ q, int c, const float (&f)[VEC]) {
#if VEC == 8
    *reinterpret_cast<uint4 *>(q + c) = dt_pack8(f);
#elif VEC == 4
    *reinterpret_cast<float4 *>(q + c) = make_float4(f[0], f[1], f[2], f[3]);
#else
    q[c] = dt_from_f32(f[0]);
#endif
}
#endif /* DT_LN_ONE || DT_LN_PERSIST */
#if DT_LN_ONE
// The row's (N, mean, M2) of x - K with one reduction (DT_LN_ONE, DUALTIME_ROW_LN_ONE):
// each thread takes the mean and M2 of its own elements exactly (two passes over its
// registers, x - K: K the row's first element, so x - K is exact near a large common
// offset), and the row combines the (count, mean, M2) partials once (dt_welford_row).
__device__ __forceinline__ dt_welford dt_row_welford_one(const dt_raw_t (&x)[PER], int lane, float K) {
    float s = 0.0f, cnt = 0.0f;
#pragma unroll
    for (int i = 0; i < PER; i++) {
        if ((i * TPR + lane) * VEC >= DT_NL) continue; /* N % VEC == 0 where VEC > 1 */
        float f[VEC];
        dt_raw_unpack(x[i], f);
#pragma unroll
        for (int e = 0; e < VEC; e++) s += f[e] - K;
        cnt += (float)VEC;
    }
    dt_welford w;
    w.n = cnt;
    w.mean = s * dt_rcp_count(fmaxf(cnt, 1.0f)); /* 0 for no element */
    w.m2 = 0.0f;
#pragma unroll
    for (int i = 0; i < PER; i++) {
        if ((i * TPR + lane) * VEC >= DT_NL) continue;
        float f[VEC];
        dt_raw_unpack(x[i], f);
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const float d = (f[e] - K) - w.mean;
            w.m2 = fmaf(d, d, w.m2);
        }
    }
    return dt_welford_row(w);
}
#endif /* DT_LN_ONE */
#else
// One pass over a row in global memory (rows too long for registers): each thread keeps
// a running max and a sum of exp(x - max) rescaled when the max grows, then the row
// combines them. *mx gets the row max; the result is the row's sum of exp(x - *mx)
// (softmax, cross_entropy).
__device__ __forceinline__ float dt_row_online_sumexp(const dt_t *__restrict__ p, int lane,
                                                      float *mx) {
    float m = -DT_INF, s = 0.0f;
    for (int c = lane; c < N; c += TPR) {
        const float x = dt_ld(p + c);
        if (x > m) {
            s = s * expf(m - x) + 1.0f;
            m = x;
        } else {
            s += expf(x - m);
        }
    }
    *mx = dt_row_max<0>(m);
    s = m == -DT_INF ? 0.0f : s * expf(m - *mx);
    return dt_row_sum<0>(s);
}
#endif /* INREG */

#if SMEMROW || ROWL2 || CESTREAM
// ---- the row staged in shared memory (SMEMROW) ------------------------------------
// The row part of nl columns at p (any alignment of p) occupies nch 16-byte chunks
// from p's chunk on; chunk k holds columns k*VEC - h .. k*VEC - h + VEC-1, where h is
// p's element offset inside its chunk. The elements of the first and last chunk
// outside [0, nl) are neighbours' data or guard bytes: read (the arena has 256-byte
// guards around every region and a view's padding between rows), never used or
// written. The buffer holds ceil(NSPAN / VEC) + 1 chunks (the plan's shared_bytes).
// ROWL2 uses the same chunk view of the row in global memory (buf = the row start's
// 16-byte chunk in the input: dt_l2_row below); the chunk helpers read it through a
// generic pointer.
#if SMEMROW
#ifdef DT_HOST_EMU /* tests/cuda/emu: the CPU emulation harness supplies the buffer */
DT_EMU_SROW_BUF;
#else
extern __shared__ __align__(16) unsigned char dt_srow_buf[];
#endif
#endif /* SMEMROW */
struct dt_srow {
    unsigned char *buf; /* its shared memory: dt_srow_buf, or + DT_SROW_BYTES (a 2nd row) */
    int h;              /* elements of chunk 0 before column 0 (0..VEC-1) */
    int nch;            /* chunks holding columns [0, nl) */
};
#if SMEMROW
// Bytes of one staged row part: ceil(DT_NSPAN / VEC) + 1 chunks (the plan's shared_bytes,
// twice that for residual_layernorm's two rows).
#define DT_SROW_BYTES (((DT_NSPAN) + VEC - 1) / VEC * 16 + 16)
// cp.async groups: close the copies this thread issued into one group; wait until at
// most N_ of this thread's groups are still in flight (the emulation lands a copy only
// here, and fills its destination with NaN when it is issued).
__device__ __forceinline__ void dt_cp_commit() {
#ifdef DT_HOST_EMU
    dt_emu_commit();
#else
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N_>
__device__ __forceinline__ void dt_cp_wait() {
#ifdef DT_HOST_EMU
    dt_emu_wait(N_);
#else
    asm volatile("cp.async.wait_group %0;" ::"n"(N_) : "memory");
#endif
}
// Issues the copies of the row part of nl columns at p into buf (every thread of the
// block, coalesced; not yet committed or waited for).
__device__ __forceinline__ dt_srow dt_srow_issue(const dt_t *p, int nl, unsigned char *buf) {
    const unsigned long long a = (unsigned long long)p;
    dt_srow r;
    r.buf = buf;
    r.h = (int)((a & 15ull) / sizeof(dt_t));
    r.nch = (r.h + nl + VEC - 1) / VEC;
    const char *g = (const char *)(a & ~15ull);
#ifdef DT_HOST_EMU
    for (int k = (int)threadIdx.x; k < r.nch; k += BLOCK) dt_emu_copy16(buf + 16 * k, g + 16ll * k);
#else
    const unsigned s = (unsigned)__cvta_generic_to_shared(buf);
#if DT_HINT_STREAM /* the row is read once: evict first */
    const unsigned long long pol = dt_policy<DT_POL_FIRST>();
    for (int k = (int)threadIdx.x; k < r.nch; k += BLOCK)
        asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;"
                     ::"r"(s + 16u * (unsigned)k), "l"(g + 16ll * k), "l"(pol)
                     : "memory");
#else
    for (int k = (int)threadIdx.x; k < r.nch; k += BLOCK)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s + 16u * (unsigned)k),
                     "l"(g + 16ll * k)
                     : "memory");
#endif
#endif
    return r;
}
// Issues the copies into buf, waits for them, and synchronizes the block: on return the
// row part is in buf for every thread.
__device__ __forceinline__ dt_srow dt_srow_load(const dt_t *p, int nl, unsigned char *buf) {
    const dt_srow r = dt_srow_issue(p, nl, buf);
    dt_cp_commit();
    dt_cp_wait<0>();
    __syncthreads();
    return r;
}
#ifndef SMEMPIPE
#define SMEMPIPE 0
#endif
#if SMEMPIPE && !defined(DT_EMU_PLANT_PIPE_WAIT)
#define DT_PIPE_WAIT 1
#elif SMEMPIPE /* tests/cuda/emu's planted fault: waits for no copy at all */
#define DT_PIPE_WAIT 2
#endif
// The rows of this block (cluster) of matrix a (row stride lda), each staged, then
// body(r, row, par) (r: the staged row part; par: the cluster reduction slot). SMEMPIPE 0:
// one row, dt_row(). SMEMPIPE 1 (persistent, double-buffered): cluster g of G =
// gridDim.x / CLUSTER takes rows g, g + G, ...; the copies of the next row go into the
// second buffer (dt_srow_buf + DT_SROW_BYTES) before the passes of this one, so DRAM
// reads continue while the block computes and stores; the barrier after body frees the
// buffer that the next iteration's copies overwrite. Every block of a cluster runs the
// same rows, so the cluster barriers of body stay matched.
template <class F>
__device__ __forceinline__ void dt_srow_rows(const dt_t *a, long long lda, F body) {
    const int nl = DT_NL;
#if SMEMPIPE
    const int step = (int)gridDim.x / CLUSTER;
    int row = (int)blockIdx.x / CLUSTER;
    if (row >= M) return;
    dt_srow cur = dt_srow_issue(a + (long long)row * lda + dt_cbase(), nl, dt_srow_buf);
    dt_cp_commit();
    for (int par = 0; row < M; row += step, par ^= 1) {
        dt_srow next = cur;
        if (row + step < M) {
            next = dt_srow_issue(a + (long long)(row + step) * lda + dt_cbase(), nl,
                                 dt_srow_buf + (par ^ 1) * DT_SROW_BYTES);
            dt_cp_commit();
            dt_cp_wait<DT_PIPE_WAIT>(); /* this row's copies landed, the next row's fly */
        } else {
            dt_cp_wait<0>();
        }
        __syncthreads();
        body(cur, row, par);
#ifndef DT_EMU_PLANT_PIPE_BARRIER /* tests/cuda/emu's planted fault: no barrier here */
        __syncthreads(); /* cur.buf is free: the next iteration's copies go there */
#endif
        cur = next;
    }
#else
    const int row = dt_row();
    body(dt_srow_load(a + (long long)row * lda + dt_cbase(), nl, dt_srow_buf), row, 0);
#endif
}
#endif /* SMEMROW (the staging) */
// A 16-byte chunk (dt_chunk_t: float4 of 4 f32, uint4 of 8 bf16/f16) to / from its VEC
// floats: every 16-byte access of the staged and streamed rows (row, parameters, output).
#if VEC == 8
typedef uint4 dt_chunk_t;
__device__ __forceinline__ void dt_chunk_floats(const uint4 &t, float (&f)[VEC]) { dt_unpack8(t, f); }
__device__ __forceinline__ uint4 dt_floats_chunk(const float (&f)[VEC]) { return dt_pack8(f); }
#elif VEC == 4 && DT_ELEM == 0
typedef float4 dt_chunk_t;
__device__ __forceinline__ void dt_chunk_floats(const float4 &t, float (&f)[VEC]) {
    f[0] = t.x; f[1] = t.y; f[2] = t.z; f[3] = t.w;
}
__device__ __forceinline__ float4 dt_floats_chunk(const float (&f)[VEC]) {
    return make_float4(f[0], f[1], f[2], f[3]);
}
#else
#error "the staged and streamed rows need VEC = the elements of 16 bytes"
#endif
// Chunk k as VEC floats (no masking).
__device__ __forceinline__ void dt_srow_chunk(const dt_srow &r, int k, float (&f)[VEC]) {
    dt_chunk_floats(reinterpret_cast<const dt_chunk_t *>(r.buf)[k], f);
}
// Chunk k, its elements outside columns [0, nl) replaced by fill.
__device__ __forceinline__ void dt_srow_chunk_fill(const dt_srow &r, int nl, int k,
                                                   float (&f)[VEC], float fill) {
    dt_srow_chunk(r, k, f);
    if (k == 0 || k == r.nch - 1) {
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const int c = k * VEC + e - r.h;
            if (c < 0 || c >= nl) f[e] = fill;
        }
    }
}
// Column c (0 <= c < nl) of the staged row.
__device__ __forceinline__ float dt_srow_at(const dt_srow &r, int c) {
    return dt_to_f32(reinterpret_cast<const dt_t *>(r.buf)[r.h + c]);
}
// Overwrites chunk k of the staged row with f (FP32 only: softmax keeps exp(x - max)).
__device__ __forceinline__ void dt_srow_put(const dt_srow &r, int k, const float (&f)[VEC]) {
#if VEC == 4 && DT_ELEM == 0
    reinterpret_cast<float4 *>(r.buf)[k] = make_float4(f[0], f[1], f[2], f[3]);
#endif
}
// The maximum of the staged row over columns [0, nl) (-inf outside them) across the
// block and, with par, its cluster (dt_row_max): the first pass of softmax and of
// cross_entropy's logsumexp.
__device__ __forceinline__ float dt_srow_max(const dt_srow &r, int nl, int par) {
    float mx = -DT_INF;
    for (int k = (int)threadIdx.x; k < r.nch; k += BLOCK) {
        float f[VEC];
        dt_srow_chunk_fill(r, nl, k, f, -DT_INF);
#pragma unroll
        for (int e = 0; e < VEC; e++) mx = fmaxf(mx, f[e]);
    }
    return dt_row_max(mx, par);
}
// Columns c0 .. c0+VEC-1 of the staged row r added to x (columns outside [0, nl) add
// nothing): one vector read where the chunk is full and starts a chunk of r.
__device__ __forceinline__ void dt_srow_add(const dt_srow &r, int c0, bool full, int nl,
                                            float (&x)[VEC]) {
    const int i0 = c0 + r.h; /* element index of column c0 in r.buf */
    if (full && i0 % VEC == 0) {
        float g[VEC];
        dt_srow_chunk(r, i0 / VEC, g);
#pragma unroll
        for (int e = 0; e < VEC; e++) x[e] += g[e];
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const int c = c0 + e;
            if (c >= 0 && c < nl) x[e] += dt_srow_at(r, c);
        }
    }
}
// VEC elements of a contiguous parameter vector (gamma, beta; 16-byte aligned base)
// from column c0 on: one 16-byte load when the chunk is full and c0 % VEC == 0, else
// per element (columns outside [0, nl) get 0).
__device__ __forceinline__ void dt_param_chunk(const dt_t *__restrict__ g, int c0, bool full, int nl,
                                               float (&v)[VEC]) {
    if (full && c0 % VEC == 0) { /* parameters are read again by every row: evict last */
        dt_chunk_floats(dt_ldg16<DT_POL_PARAM>(reinterpret_cast<const dt_chunk_t *>(g + c0)), v);
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const int c = c0 + e;
            v[e] = c >= 0 && c < nl ? dt_ld(g + c) : 0.0f;
        }
    }
}
// Output chunk k of q (g: q's 16-byte chunk) from the values x of columns c0 ..
// c0+VEC-1: one 16-byte store when all are in [0, nl) (full), else element by element.
__device__ __forceinline__ void dt_out_chunk(dt_t *__restrict__ q, dt_t *g, int k, int c0, bool full,
                                             int nl, const float (&x)[VEC]) {
    if (full) { /* written once: evict first */
        dt_stg16<DT_POL_FIRST>(reinterpret_cast<dt_chunk_t *>(g + (long long)k * VEC), dt_floats_chunk(x));
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const int c = c0 + e;
            if (c >= 0 && c < nl) q[c] = dt_from_f32(x[e]);
        }
    }
}
// Writes columns [0, nl) of the output row part q: f(x, c0, full) turns the VEC staged
// values x of columns c0 .. c0+VEC-1 into outputs in place (full: all VEC columns are in
// [0, nl)). The chunks follow q's own alignment: full chunks are one 16-byte store,
// the first and last element by element. When q's chunk offset equals the staged
// row's (same alignment) the staged chunk is read as one vector, else element by
// element (columns outside [0, nl) are then never read).
// k0: this thread's first output chunk (threadIdx.x; dt_srow_store_params passes the
// chunk its loaded-ahead loop stopped at).
template <class F>
__device__ __forceinline__ void dt_srow_store(const dt_srow &r, dt_t *__restrict__ q, int nl, F f,
                                              int k0) {
    const unsigned long long a = (unsigned long long)q;
    const int hq = (int)((a & 15ull) / sizeof(dt_t));
    const int nq = (hq + nl + VEC - 1) / VEC;
    dt_t *g = (dt_t *)(a & ~15ull);
    for (int k = k0; k < nq; k += BLOCK) {
        const int c0 = k * VEC - hq;
        const bool full = c0 >= 0 && c0 + VEC <= nl;
        float x[VEC];
        if (hq == r.h) {
            dt_srow_chunk(r, k, x);
        } else {
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const int c = c0 + e;
                x[e] = c >= 0 && c < nl ? dt_srow_at(r, c) : 0.0f;
            }
        }
        f(x, c0, full);
        dt_out_chunk(q, g, k, c0, full, nl, x);
    }
}
template <class F>
__device__ __forceinline__ void dt_srow_store(const dt_srow &r, dt_t *__restrict__ q, int nl, F f) {
    dt_srow_store(r, q, nl, f, (int)threadIdx.x);
}
// The store pass of an op with NP (1, 2) parameter vectors pa, pb (gamma, beta; 16-byte
// aligned at column 0 of the part): f(x, g, b) turns the VEC staged values x into
// outputs in place, g and b the parameters of the same columns (b unset when NP is 1).
// Where the output row part and the staged row both start a 16-byte chunk (r.h == 0,
// q aligned: contiguous rows of N % VEC == 0, most views of aligned strides), chunks
// 0 .. nl/VEC - 1 are whole and chunk k of q, of the row and of each parameter vector
// hold the same columns: DT_STORE_AHEAD chunks a thread go as one group, first every
// 16-byte load (the parameters from L2, the row from shared memory), then the math and
// the stores, so a thread has DT_STORE_AHEAD x NP parameter loads in flight where
// the per-chunk loop (dt_srow_store) waits for each (docs/perf.md "store pass loaded
// ahead"). The rest (the last partial chunk, misaligned rows and views, and every
// chunk with DT_STORE_AHEAD 1) goes through dt_srow_store, parameters by dt_param_chunk.
#ifndef DT_STORE_AHEAD
#define DT_STORE_AHEAD 4
#endif
#if DT_STORE_AHEAD < 1 || DT_STORE_AHEAD > 8
#error "DT_STORE_AHEAD must be 1..8"
#endif
template <int NP, class F>
__device__ __forceinline__ void dt_srow_store_params(const dt_srow &r, dt_t *__restrict__ q, int nl,
                                                     const dt_t *__restrict__ pa,
                                                     const dt_t *__restrict__ pb, F f) {
    static_assert(NP == 1 || NP == 2, "one or two parameter vectors");
    int k = (int)threadIdx.x;
#if DT_STORE_AHEAD > 1
    if (r.h == 0 && ((unsigned long long)q & 15ull) == 0) {
        const dt_chunk_t *xs = reinterpret_cast<const dt_chunk_t *>(r.buf);
        const dt_chunk_t *ga = reinterpret_cast<const dt_chunk_t *>(pa);
        const dt_chunk_t *gb = reinterpret_cast<const dt_chunk_t *>(pb);
        dt_chunk_t *qo = reinterpret_cast<dt_chunk_t *>(q);
        const int nfull = nl / VEC;
        for (; k + (DT_STORE_AHEAD - 1) * BLOCK < nfull; k += DT_STORE_AHEAD * BLOCK) {
            dt_chunk_t tx[DT_STORE_AHEAD], tg[DT_STORE_AHEAD], tb[DT_STORE_AHEAD];
#pragma unroll
            for (int u = 0; u < DT_STORE_AHEAD; u++) {
#if defined(DT_HOST_EMU) && defined(DT_EMU_PLANT_AHEAD_INDEX) /* tests/cuda/emu's plant */
                const int kp = k; /* every chunk of the group given the first one's parameters */
#else
                const int kp = k + u * BLOCK;
#endif
                tg[u] = dt_ldg16<DT_POL_PARAM>(ga + kp);
                if constexpr (NP > 1) tb[u] = dt_ldg16<DT_POL_PARAM>(gb + kp);
            }
#pragma unroll
            for (int u = 0; u < DT_STORE_AHEAD; u++) tx[u] = xs[k + u * BLOCK];
#pragma unroll
            for (int u = 0; u < DT_STORE_AHEAD; u++) {
                float x[VEC], g[VEC], b[VEC];
                dt_chunk_floats(tx[u], x);
                dt_chunk_floats(tg[u], g);
                if constexpr (NP > 1) dt_chunk_floats(tb[u], b);
                f(x, g, b);
                dt_stg16<DT_POL_FIRST>(qo + k + u * BLOCK, dt_floats_chunk(x));
            }
        }
    }
#endif
    dt_srow_store(r, q, nl, [&](float (&x)[VEC], int c0, bool full) {
        float g[VEC], b[VEC];
        dt_param_chunk(pa, c0, full, nl, g);
        if constexpr (NP > 1) dt_param_chunk(pb, c0, full, nl, b);
        f(x, g, b);
    }, k);
}
#if ROWL2 || CESTREAM
// ---- a row streamed from global memory in 16-byte chunks (ROWL2, CESTREAM) --------
// One block a row (TPR == BLOCK, no shared row, no cluster), VEC = the elements of a
// 16-byte chunk, chunk k as in dt_srow (counted from the row start's chunk, neighbours'
// bytes masked), DT_L2_UNROLL 16-byte loads in flight a thread. cross_entropy's stream
// (CESTREAM) makes one pass (dt_l2_pass); the two-pass row below makes two.
#ifndef DT_L2_UNROLL
#define DT_L2_UNROLL 4 /* 16-byte loads in flight a thread */
#endif
// The row of N columns at p (any alignment) as a chunk view of global memory.
__device__ __forceinline__ dt_srow dt_l2_row(const dt_t *p) {
    const unsigned long long a = (unsigned long long)p;
    dt_srow r;
    r.buf = (unsigned char *)(a & ~15ull);
    r.h = (int)((a & 15ull) / sizeof(dt_t));
    r.nch = (r.h + N + VEC - 1) / VEC;
    return r;
}
// Chunk k's values, those outside columns [0, N) replaced by fill.
__device__ __forceinline__ void dt_l2_mask(const dt_srow &r, int k, float (&f)[VEC], float fill) {
    if (k == 0 || k == r.nch - 1) {
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            const int c = k * VEC + e - r.h;
            if (c < 0 || c >= N) f[e] = fill;
        }
    }
}
// f(x, k) for every chunk k of r this thread takes (k = t, t + BLOCK, ...), x its VEC
// values unpacked: DT_L2_UNROLL chunks loaded before the first of them is used.
// P: the loads' L2 policy (DT_HINT).
template <int P, class F>
__device__ __forceinline__ void dt_l2_chunks(const dt_srow &r, F f) {
    const dt_chunk_t *__restrict__ g = reinterpret_cast<const dt_chunk_t *>(r.buf);
    int k = (int)threadIdx.x;
    for (; k + (DT_L2_UNROLL - 1) * BLOCK < r.nch; k += DT_L2_UNROLL * BLOCK) {
        dt_chunk_t t[DT_L2_UNROLL];
#pragma unroll
        for (int u = 0; u < DT_L2_UNROLL; u++) t[u] = dt_ldg16<P>(g + k + u * BLOCK);
#pragma unroll
        for (int u = 0; u < DT_L2_UNROLL; u++) {
            float x[VEC];
            dt_chunk_floats(t[u], x);
            f(x, k + u * BLOCK);
        }
    }
    for (; k < r.nch; k += BLOCK) {
        float x[VEC];
        dt_chunk_floats(dt_ldg16<P>(g + k), x);
        f(x, k);
    }
}
// Pass 1: f(x, k) for every chunk k of this thread, x its VEC values (fill outside the row).
// Under DT_HINT the two-read row's first read evicts last (pass 2 reads it again), the
// one-read stream's evicts first.
template <class F>
__device__ __forceinline__ void dt_l2_pass(const dt_srow &r, float fill, F f) {
    dt_l2_chunks<ROWL2 ? DT_POL_LAST : DT_POL_FIRST>(r, [&](float (&x)[VEC], int k) {
        dt_l2_mask(r, k, x, fill);
        f(x, k);
    });
}
#endif /* ROWL2 || CESTREAM */
#if ROWL2
// ---- the L2-resident two-pass row (ROWL2=1, DUALTIME_ROW_L2=1) --------------------
// Pass 1 (dt_l2_pass) streams the row from DRAM and hands each chunk to the op's
// reduction; pass 2 (dt_l2_store) reads the row again and writes the output. The plan
// keeps one block an SM (a dynamic shared reservation over half the SM, unused), so the
// rows in flight (SMs x row bytes, at most 32 MB) stay in L2 between the two passes:
// DRAM sees one read and one write, the second read costs L2 bandwidth only
// (docs/perf.md).
// Pass 2: writes the output row q, f(x, c0, full) turning the input values of columns
// c0 .. c0+VEC-1 into outputs in place (as dt_srow_store). Where q sits at the input
// row's offset in its chunk, input chunk k is output chunk k: DT_L2_UNROLL 16-byte
// loads in flight, then their stores; else dt_srow_store reads the input (now in L2)
// element by element.
template <class F>
__device__ __forceinline__ void dt_l2_store(const dt_srow &r, dt_t *__restrict__ q, F f) {
    const unsigned long long a = (unsigned long long)q;
    const int hq = (int)((a & 15ull) / sizeof(dt_t));
    if (hq != r.h) {
        dt_srow_store(r, q, N, f);
        return;
    }
    dt_t *g = (dt_t *)(a & ~15ull);
    dt_l2_chunks<DT_POL_FIRST>(r, [&](float (&x)[VEC], int k) { /* the last read */
        const int c0 = k * VEC - hq;
        const bool full = c0 >= 0 && c0 + VEC <= N;
        f(x, c0, full);
        dt_out_chunk(q, g, k, c0, full, N, x);
    });
}
// Mean and M2 (sum of squared deviations) of a row, of x - K (K: the row's first
// element, so a large common offset of the row costs no precision: x - K is exact for
// values near K), by chunk-wise (n, mean, M2) merges (Chan et al.; layernorm's ROWL2
// pass 1; not a one-pass sum and sum of squares). dt_welford and dt_welford_merge: above.
// w += chunk k of row r shifted by K (x: its values; those outside columns [0, N) unused).
__device__ __forceinline__ void dt_welford_chunk(dt_welford &w, const dt_srow &r, int k,
                                                 float (&x)[VEC], float K) {
    const int c0 = k * VEC - r.h;
    const int lo = c0 > 0 ? c0 : 0, hi = c0 + VEC < N ? c0 + VEC : N;
    float sm = 0.0f;
#pragma unroll
    for (int e = 0; e < VEC; e++) {
        x[e] = c0 + e >= 0 && c0 + e < N ? x[e] - K : 0.0f;
        sm += x[e];
    }
    dt_welford b;
    b.n = (float)(hi - lo);
    b.mean = hi - lo == VEC ? sm * (1.0f / VEC) : sm / b.n;
    b.m2 = 0.0f;
#pragma unroll
    for (int e = 0; e < VEC; e++) {
        const float d = c0 + e >= 0 && c0 + e < N ? x[e] - b.mean : 0.0f;
        b.m2 = fmaf(d, d, b.m2);
    }
    dt_welford_merge(w, b);
}
// The block's merge of every thread's w (all threads must call it: it synchronizes);
// every thread gets the row's (N, mean, M2).
__device__ __forceinline__ dt_welford dt_welford_block(dt_welford w) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        dt_welford b;
        b.n = __shfl_xor_sync(0xffffffffu, w.n, o);
        b.mean = __shfl_xor_sync(0xffffffffu, w.mean, o);
        b.m2 = __shfl_xor_sync(0xffffffffu, w.m2, o);
        dt_welford_merge(w, b);
    }
#if BLOCK > 32
    __shared__ float wn[BLOCK / 32], wmean[BLOCK / 32], wm2[BLOCK / 32];
    if ((threadIdx.x & 31) == 0) {
        wn[threadIdx.x >> 5] = w.n;
        wmean[threadIdx.x >> 5] = w.mean;
        wm2[threadIdx.x >> 5] = w.m2;
    }
    __syncthreads();
    w.n = wn[0];
    w.mean = wmean[0];
    w.m2 = wm2[0];
    for (int i = 1; i < BLOCK / 32; i++) {
        dt_welford b;
        b.n = wn[i];
        b.mean = wmean[i];
        b.m2 = wm2[i];
        dt_welford_merge(w, b);
    }
#endif
    return w;
}
#endif /* ROWL2 */
#endif /* SMEMROW || ROWL2 || CESTREAM */
#if ROWL2 || CESTREAM || DT_SM_ONLINE
// ---- the online logsumexp over 16-byte chunks (softmax ROWL2 and DT_SM_ONLINE,
// cross_entropy CESTREAM)
// (m, s) += the VEC values f (-inf outside the row): m grows to their max, the old s
// is rescaled by exp(m_old - m_new); an all -inf part keeps s = 0.
__device__ __forceinline__ void dt_lse_add(float &m, float &s, const float (&f)[VEC]) {
    float cm = f[0];
#pragma unroll
    for (int e = 1; e < VEC; e++) cm = fmaxf(cm, f[e]);
    if (cm > m) {
#ifndef DT_EMU_PLANT_NO_RESCALE /* tests/cuda/emu's planted fault: s kept unscaled */
        s *= dt_exp_shifted(m, cm, cm * DT_LOG2E); /* m = -inf: s is 0, exp gives 0 */
#endif
        m = cm;
    }
    if (m == -DT_INF && cm == -DT_INF) return; /* all -inf so far: s stays 0 (NaN: adds) */
    const float mls = m * DT_LOG2E;
#pragma unroll
    for (int e = 0; e < VEC; e++) s += dt_exp_shifted(f[e], m, mls);
}
// (m, s) <- the combination of two partial logsumexps (m = -inf: s = 0).
__device__ __forceinline__ void dt_lse_combine(float &m, float &s, float m2, float s2) {
    const float mn = fmaxf(m, m2);
    if (mn == -DT_INF) return;
    const float mls = mn * DT_LOG2E;
    s = s * dt_exp_shifted(m, mn, mls) + s2 * dt_exp_shifted(m2, mn, mls);
    m = mn;
}
// The warp's combination of its threads' (m, s): every lane gets it.
__device__ __forceinline__ void dt_lse_warp(float &m, float &s) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        dt_lse_combine(m, s, m2, s2);
    }
}
// The block's combination of every thread's (m, s) (all threads must call it: it
// synchronizes): *mx gets the row max, the result is the row's sum of exp(x - *mx).
__device__ __forceinline__ float dt_lse_block(float m, float s, float *mx) {
    dt_lse_warp(m, s);
#if BLOCK > 32
    __shared__ float wm[BLOCK / 32], ws[BLOCK / 32];
    if ((threadIdx.x & 31) == 0) {
        wm[threadIdx.x >> 5] = m;
        ws[threadIdx.x >> 5] = s;
    }
    __syncthreads();
    m = wm[0];
    s = ws[0];
#pragma unroll
    for (int w = 1; w < BLOCK / 32; w++) dt_lse_combine(m, s, wm[w], ws[w]);
#endif
    *mx = m;
    return s;
}
#if DT_SM_ONLINE
// The row's (max, sum of exp(x - max)) from every thread's (m, s) over the block and, with
// CLUSTER > 1, its cluster (every block must call it): one block combine and ONE cluster
// barrier for both values, where softmax's two-pass rows make two (dt_row_max, then
// dt_row_sum). The block part is dt_lse_block (TPR == BLOCK in the staged rows), after a
// barrier: a previous row of a persistent block may still read its slots. The cluster
// slots as dt_row_sum's (par: the persistent rows alternate them by row). Every block
// combines the ranks in the same order, so every part divides by the same sum.
__device__ __forceinline__ float dt_row_lse(float m, float s, int par, float *mx) {
    __syncthreads();
    s = dt_lse_block(m, s, &m);
#if CLUSTER > 1
    __shared__ float clm[2], cls[2];
    if (threadIdx.x == 0) {
        clm[DT_SLOT(par)] = m;
        cls[DT_SLOT(par)] = s;
    }
    dt_cl_sync();
    m = dt_cl_ld(&clm[DT_SLOT(par)], 0u);
    s = dt_cl_ld(&cls[DT_SLOT(par)], 0u);
#pragma unroll
    for (int r = 1; r < CLUSTER; r++)
        dt_lse_combine(m, s, dt_cl_ld(&clm[DT_SLOT(par)], (unsigned)r),
                       dt_cl_ld(&cls[DT_SLOT(par)], (unsigned)r));
#else
    (void)par;
#endif
    *mx = m;
    return s;
}
#endif /* DT_SM_ONLINE */
#endif /* ROWL2 || CESTREAM || DT_SM_ONLINE */
#endif /* TPR */

#ifdef ITEMS
// Elementwise out = f(a, b) over an M x N window. Each block covers BLOCK*ITEMS items
// (an item is VEC consecutive elements of one row); all loads are issued before the first
// use. CONTIG: all three buffers have row stride N, so the window is one flat range of
// M*N elements: VEC-wide items over it (16-byte aligned bases, any N), and the last
// (M*N) % VEC elements one a thread of block 0 (DT_TAIL).
#define DT_CONTIG (LDA == N && LDB == N && LDO == N)
#if DT_CONTIG
#define DT_ITEMS_TOTAL ((long long)M * N / VEC) /* whole items in the flat range */
#define DT_TAIL ((long long)M * N - DT_ITEMS_TOTAL * VEC)
#else
#define DT_NV (N / VEC)                       /* items per row */
#define DT_ITEMS_TOTAL ((long long)M * DT_NV) /* items in the window */
#if VEC > 1 && N % VEC != 0
#error "VEC=4/8 needs N % VEC == 0 in a strided window"
#endif
#endif

#if VEC == 2
#if DT_ELEM == 0 || DT_CONTIG
#error "VEC=2 (pairs) is for bf16/f16 strided windows"
#endif
#ifndef DT_PHA
#define DT_PHA 0
#endif
#ifndef DT_PHB
#define DT_PHB 0
#endif
// Two elements of a row at p, p[0] at an even element of the output row, as one 32-bit
// word (p[0] in the low half). PH 0: p is 4-byte aligned, one load. PH 1: p sits 2 bytes
// past a 4-byte boundary (a view's row, docs/protocol.md): the two aligned words around it
// (p[-1], p[0]) and (p[1], p[2]), funnel-shifted by 16 bits. Both words lie in the
// allocation: an aligned word that holds one of its bytes never leaves its page.
template <int PH>
__device__ __forceinline__ unsigned dt_ld_pair(const dt_t *__restrict__ p) {
    if (PH == 0) return __ldg(reinterpret_cast<const unsigned *>(p));
    const unsigned *w = reinterpret_cast<const unsigned *>(p - 1);
#ifdef DT_EMU_PLANT_PAIR_SHIFT /* tests/cuda/emu: the planted fault, the words unshifted */
    return __ldg(w);
#else
    return __funnelshift_r(__ldg(w), __ldg(w + 1), 16);
#endif
}
#endif

#ifndef DT_ELEM_LDALL
#define DT_ELEM_LDALL 0
#endif
#if DT_SHIFT_A || DT_SHIFT_B
#if DT_CONTIG
#error "DT_SHIFT_A / DT_SHIFT_B: elementwise over strided windows only"
#endif
// One input's item (columns c .. c+VEC-1 of the row at row): SH 1 the two aligned vectors
// that hold it (dt_shift_vecs; s its shift), SH 0 one aligned vector (s = 0).
template <int SH>
__device__ __forceinline__ void dt_ew_load(const dt_t *__restrict__ row, int c, uint4 &lo,
                                           uint4 &hi, unsigned &s) {
    if (SH) {
        s = dt_shift_of(row);
        int j0, j1;
        dt_shift_vecs(c / VEC, N, s, s, VEC, j0, j1);
        lo = __ldg(reinterpret_cast<const uint4 *>(row - s + j0 * VEC));
        hi = __ldg(reinterpret_cast<const uint4 *>(row - s + j1 * VEC));
    } else {
        s = 0;
        lo = hi = __ldg(reinterpret_cast<const uint4 *>(row + c));
    }
}
template <int SH>
__device__ __forceinline__ void dt_ew_floats(const uint4 lo, const uint4 hi, unsigned s, float *f) {
    if (SH) {
        dt_shift_chunk(lo, hi, s, f);
    } else {
#if DT_ELEM == 0
        f[0] = __uint_as_float(lo.x), f[1] = __uint_as_float(lo.y);
        f[2] = __uint_as_float(lo.z), f[3] = __uint_as_float(lo.w);
#else
        dt_unpack8(lo, f);
#endif
    }
}
// Elementwise over a strided window whose input rows need not start 16-byte aligned
// (views; the output's rows are aligned whole vectors): VEC-wide items as the aligned
// path's, each input's item from the two aligned vectors that hold it (DT_SHIFT_A / _B;
// an input without the flag one vector), every item's loads in one basic block (past the
// end the last item again), the stores guarded (session 18).
template <class F>
__device__ __forceinline__ void dt_elementwise(const dt_t *__restrict__ a,
                                               const dt_t *__restrict__ b,
                                               dt_t *__restrict__ out, F f) {
    const long long first = (long long)blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
    uint4 al[ITEMS], ah[ITEMS], bl[ITEMS], bh[ITEMS];
    unsigned sa[ITEMS], sb[ITEMS];
    long long oo[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const long long it = first + (long long)i * BLOCK;
        const long long il = it >= DT_ITEMS_TOTAL ? DT_ITEMS_TOTAL - 1 : it;
        const long long r = il / DT_NV;
        const int c = (int)(il % DT_NV) * VEC;
        oo[i] = r * LDO + c;
        dt_ew_load<DT_SHIFT_A>(a + r * LDA, c, al[i], ah[i], sa[i]);
        dt_ew_load<DT_SHIFT_B>(b + r * LDB, c, bl[i], bh[i], sb[i]);
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const long long it = first + (long long)i * BLOCK;
        if (it < DT_ITEMS_TOTAL) {
            float x[VEC], y[VEC];
            dt_ew_floats<DT_SHIFT_A>(al[i], ah[i], sa[i], x);
            dt_ew_floats<DT_SHIFT_B>(bl[i], bh[i], sb[i], y);
#pragma unroll
            for (int e = 0; e < VEC; e++) x[e] = f(x[e], y[e]);
#if DT_ELEM == 0
            *reinterpret_cast<float4 *>(out + oo[i]) = make_float4(x[0], x[1], x[2], x[3]);
#else
            *reinterpret_cast<uint4 *>(out + oo[i]) = dt_pack8(x);
#endif
        }
    }
}
#else
template <class F>
__device__ __forceinline__ void dt_elementwise(const dt_t *__restrict__ a,
                                               const dt_t *__restrict__ b,
                                               dt_t *__restrict__ out, F f) {
    const long long first = (long long)blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
#if VEC == 8
    uint4 va[ITEMS], vb[ITEMS];
#elif VEC == 4
    float4 va[ITEMS], vb[ITEMS];
#elif VEC == 2
    unsigned va[ITEMS], vb[ITEMS];
#else
    dt_t va[ITEMS], vb[ITEMS];
#endif
    long long oa[ITEMS], ob[ITEMS], oo[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const long long it = first + (long long)i * BLOCK;
        /* DT_ELEM_LDALL (session 16; the plan's default for bf16/f16 strided windows at vec
         * 1 and 2 since session 17, DUALTIME_ELEM_LDALL=0|1 forces): every item loads, one
         * past the end the last item again, so the ITEMS loads form one basic block. The
         * guarded form puts each item's loads in its own block, and where an op on the
         * loaded value sits in that block (bf16's widening shift at VEC 1, the pairs'
         * funnel shift) the warp waits for the load before the next item's loads issue
         * (PTX of add bf16 / f16 at VEC 1 and 2; docs/perf.md "Session 16 measured"). The
         * stores stay guarded. (No items, only a tail: the guarded form.) */
        const bool ldall = DT_ELEM_LDALL && DT_ITEMS_TOTAL > 0;
        const long long il = ldall && it >= DT_ITEMS_TOTAL ? DT_ITEMS_TOTAL - 1 : it;
#if DT_CONTIG
        oa[i] = ob[i] = oo[i] = il * VEC;
#else
        const long long r = il / DT_NV, c = (il % DT_NV) * VEC;
        oa[i] = r * LDA + c;
        ob[i] = r * LDB + c;
        oo[i] = r * LDO + c;
#endif
        if (ldall || it < DT_ITEMS_TOTAL) {
#if VEC == 8
            va[i] = __ldg(reinterpret_cast<const uint4 *>(a + oa[i]));
            vb[i] = __ldg(reinterpret_cast<const uint4 *>(b + ob[i]));
#elif VEC == 4
            va[i] = __ldg(reinterpret_cast<const float4 *>(a + oa[i]));
            vb[i] = __ldg(reinterpret_cast<const float4 *>(b + ob[i]));
#elif VEC == 2
            va[i] = dt_ld_pair<DT_PHA>(a + oa[i]);
            vb[i] = dt_ld_pair<DT_PHB>(b + ob[i]);
#else
            va[i] = __ldg(a + oa[i]);
            vb[i] = __ldg(b + ob[i]);
#endif
        }
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const long long it = first + (long long)i * BLOCK;
        if (it < DT_ITEMS_TOTAL) {
#if VEC == 8
            float x[8], y[8];
            dt_unpack8(va[i], x);
            dt_unpack8(vb[i], y);
#pragma unroll
            for (int e = 0; e < 8; e++) x[e] = f(x[e], y[e]);
            *reinterpret_cast<uint4 *>(out + oo[i]) = dt_pack8(x);
#elif VEC == 4
            *reinterpret_cast<float4 *>(out + oo[i]) =
                make_float4(f(va[i].x, vb[i].x), f(va[i].y, vb[i].y), f(va[i].z, vb[i].z),
                            f(va[i].w, vb[i].w));
#elif VEC == 2
            float x0, x1, y0, y1;
            dt_unpack2(va[i], x0, x1);
            dt_unpack2(vb[i], y0, y1);
            *reinterpret_cast<unsigned *>(out + oo[i]) = dt_pack2(f(x0, y0), f(x1, y1));
#else
            out[oo[i]] = dt_from_f32(f(dt_to_f32(va[i]), dt_to_f32(vb[i])));
#endif
        }
    }
#if DT_CONTIG && VEC > 1 && !defined(DT_EMU_PLANT_NO_TAIL) /* the plant: tests/cuda/emu */
    if (DT_TAIL > 0 && blockIdx.x == 0 && threadIdx.x < DT_TAIL) {
        const long long e = DT_ITEMS_TOTAL * VEC + threadIdx.x;
        out[e] = dt_from_f32(f(dt_to_f32(__ldg(a + e)), dt_to_f32(__ldg(b + e))));
    }
#endif
}
#endif /* DT_SHIFT_A || DT_SHIFT_B */
#endif /* ITEMS */
