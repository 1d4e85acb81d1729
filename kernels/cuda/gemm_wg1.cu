// gemm_wg1.cu — out = A * B for bf16 / f16 storage (DT_ELEM 1 / 2) on Hopper's own
// instructions (sm_90a): TMA bulk tensor copies into shared memory, an mbarrier
// pipeline, wgmma.mma_async from consumer warpgroups, a persistent tile scheduler.
// FP32 accumulation; the output is rounded once to the storage type. Variant "wg1".
//
// Operands: A M x K row-major (K contiguous: wgmma "K-major", trans-a 0), B K x N
// row-major (N contiguous: "N-major", trans-b 1), both read only through the tensor
// maps tmA / tmB the host encodes (cuTensorMapEncodeTiled, 128-byte swizzle, zero fill
// out of bounds: the M, N and K tails load zeros). tmA: dims {K, M}, box {64, 128};
// tmB: dims {N, K}, box {64, 64} (a 128-byte-swizzled box is at most 128 bytes wide, so
// a B stage is BN/64 boxes side by side, each 64 k-rows x 128 bytes = 8 KiB).
// Out: M x N, row stride LDO, written from registers with bounds checks (VECO 2: two
// elements per 32-bit store where N is even and rows are 4-byte aligned, else 1).
//
// Block: 384 threads = 3 warpgroups. Warpgroup 0 is the producer (setmaxnreg.dec to 40;
// one thread issues the TMA copies), warpgroups 1 and 2 are consumers (setmaxnreg.inc
// to 232), each owning 64 rows of the 128 x BN block tile: BN/2 FP32 accumulators per
// thread (m64nBNk16, four k16 steps per 64-deep stage). STAGES shared-memory stages,
// each A (128 x 64) + B (64 x BN); full[s] (producer's arrive.expect_tx + the TMA
// transaction bytes) and empty[s] (one arrive per consumer warp) mbarriers, waited with
// try_wait.parity. Persistent: grid = min(SMs, tiles); block b takes tiles b, b+grid,
// ... in a grouped order (WG_GROUP row-tiles share a column sweep, for L2 reuse); the
// producer runs ahead into the next tile while the consumers store; it prefetches both
// tensor maps (prefetch.tensormap) before its first copy.
// Variant wg2 (WG_INFLIGHT=1, kernel dt_gemm_wg2_<dtype>): the same kernel with one
// wgmma group kept in flight: after committing k-block kb a consumer waits only for
// kb-1's group (wgmma.wait_group 1) and releases kb-1's stage, so its next issue
// overlaps its own tensor-core work; wg1 waits for each group (wait_group 0).
// BN 64 (m64n64k16, one B box a stage, 32 accumulators a thread) is the wave-filling
// geometry for shapes whose 128x128 tiles are fewer than the SMs (1024^3: 128 tiles of
// 128x64 instead of 64 of 128x128; the plan's choice, docs/perf.md "gemm wg1 fill").
// Split-K 2 (WG_SPLITK=2, opt-in: DUALTIME_GEMM_SPLITK=2): the work units are tile t's
// two halves of K (unit 2t: k-blocks [0, KB/2), unit 2t+1: [KB/2, KB)); the first stores
// its FP32 accumulators to the workspace ws (tile-major: 128 x BN floats a tile, as
// float4 rows of the 256 consumer threads) and sets flags[t] (release, gpu scope); the second waits for the flag
// (acquire), resets it to 0 for the next launch, adds ws + its own accumulators in that
// fixed order (deterministic) and stores the tile. The grid is even and at most the SMs,
// so both halves run at the same time in neighbouring blocks and even blocks never wait.
// Kernel parameters then: (tmA, tmB, C, ws, flags); ws and flags zeroed at prepare.
// Variant wg3 (WG_EPI_TMA=1, kernel dt_gemm_wg3_<dtype>; issue 19, session 5): wg1 with
// the epilogue through shared memory and TMA stores instead of 32-bit register stores.
// Each consumer warpgroup rounds its 64 x BN accumulators to bf16/f16 pairs (cvt.rn
// .bf16x2/.f16x2, the same rounding as dt_from_f32), writes them with stmatrix
// .m8n8.x4 into its own WG_EPI_BOXES boxes of 64 x 64 elements (8 KiB each, 128-byte
// swizzled: 16-byte chunk c of row r at chunk c ^ (r % 8), as the tensor map's
// CU_TENSOR_MAP_SWIZZLE_128B expects), fences the writes to the async proxy, syncs its
// 128 threads (named barrier 2 + cw) and one thread issues one TMA store a box
// (cp.async.bulk.tensor.2d.global.shared::cta, tmC: dims {N, M}, box {64, 64}; rows and
// columns past M, N are clipped by the TMA unit) and commits the bulk group. The stores
// run while the warpgroup starts its next tile; before a box buffer is written again
// the issuing thread waits for the reads of its earlier groups (wait_group.read 0). With
// BN / 64 > WG_EPI_BOXES a tile takes BN / 64 / WG_EPI_BOXES such passes. Kernel
// parameters then: (tmA, tmB, tmC, C[, ws, flags]) (C unused).
// Variant wg4 (WG_CLUSTER=2, kernel dt_gemm_wg4_<dtype>; issue 19, session 5): wg3 (or wg1's
// stores where C is not TMA-describable) in clusters of two blocks (__cluster_dims__(2))
// on row tiles 2p and 2p+1 of the same column tile: each block loads its own A and half
// of the B stage (BN / 128 of the BN / 64 boxes) and multicasts that half into both
// blocks (.multicast::cluster, mask 0b11), so a k-block moves 16 KiB of A + BN * 64 B of
// B through L2 per block instead of 16 KiB + 2 * BN * 64 B. Each block's full[s] still
// expects the whole stage (its A + both B halves); empty[s] counts 16 arrivals: every
// consumer warp of both blocks releases stage s in both (mapa + mbarrier.arrive.release
// .cluster), so neither producer overwrites a stage the other block still reads. The
// units are tile pairs (the grouped order over pair rows, 4 pairs = 8 row tiles a
// group); cluster c takes pairs c, c + clusters, ...; an odd last row tile's partner is
// past M (its A loads zeros, its stores are clipped). A cluster barrier after the
// mbarrier init and another before exit (no block leaves while its peer may still
// arrive on its barriers). BN 128 or 256, no split-K.
// Specialization macros: M N K LDO DT_ELEM BN (64 | 128 | 256) STAGES VECO [WG_INFLIGHT]
// [WG_SPLITK] [WG_EPI_TMA WG_EPI_BOXES] [WG_CLUSTER].
// A barrier wait that lasts over WG_TIMEOUT_NS (4 s: a pipeline bug) traps, so a hang
// becomes a launch failure the backend reports, not a stuck device.
#include "dt_cuda_common.cuh"

#if DT_ELEM != 1 && DT_ELEM != 2
#error "gemm_wg1 is for bf16 (DT_ELEM=1) and f16 (DT_ELEM=2)"
#endif
#ifndef WG_INFLIGHT
#define WG_INFLIGHT 0
#endif
#ifndef WG_SPLITK
#define WG_SPLITK 1
#endif
#if WG_SPLITK != 1 && WG_SPLITK != 2
#error "gemm_wg1: WG_SPLITK must be 1 or 2"
#endif
#if BN != 64 && BN != 128 && BN != 256
#error "gemm_wg1: BN must be 64, 128 or 256"
#endif
#ifndef WG_EPI_TMA
#define WG_EPI_TMA 0
#endif
#ifndef WG_CLUSTER
#define WG_CLUSTER 1
#endif
#if WG_CLUSTER != 1 && WG_CLUSTER != 2
#error "gemm_wg1: WG_CLUSTER must be 1 or 2"
#endif
#if WG_CLUSTER == 2 && (BN < 128 || WG_SPLITK != 1)
#error "gemm_wg1: WG_CLUSTER 2 needs BN 128 or 256 and no split-K"
#endif
#if WG_EPI_TMA
#if !defined(WG_EPI_BOXES) || (WG_EPI_BOXES != 1 && WG_EPI_BOXES != 2 && WG_EPI_BOXES != 4) || \
    WG_EPI_BOXES > BN / 64
#error "gemm_wg1: WG_EPI_TMA needs WG_EPI_BOXES 1, 2 or 4, at most BN / 64"
#endif
#define WG_EPI_BOX_BYTES 8192 /* 64 rows x 64 columns x 2 bytes */
#define WG_EPI_WG_BYTES (WG_EPI_BOXES * WG_EPI_BOX_BYTES) /* one consumer warpgroup's */
#define WG_EPI_PASSES (BN / 64 / WG_EPI_BOXES)
#else
#define WG_EPI_WG_BYTES 0
#endif
#if DT_ELEM == 1
#define WG_AB_TYPE "bf16"
#else
#define WG_AB_TYPE "f16"
#endif

#define WG_BM 128
#define WG_BK 64
#define WG_THREADS 384
#define WG_A_BYTES (WG_BM * WG_BK * 2)          /* 16 KiB */
#define WG_B_BOX_BYTES (WG_BK * 64 * 2)         /* 8 KiB: 64 k-rows x 128 bytes */
#define WG_B_BYTES (WG_BK * BN * 2)
#define WG_STAGE_BYTES (WG_A_BYTES + WG_B_BYTES)
#define WG_TILES_M ((M + WG_BM - 1) / WG_BM)
#define WG_TILES_N ((N + BN - 1) / BN)
#define WG_TILES (WG_TILES_M * WG_TILES_N)
#define WG_KB ((K + WG_BK - 1) / WG_BK)
/* the rows of the grouped order: row tiles, or (clusters of two) pairs of row tiles */
#define WG_ROWS_M ((WG_TILES_M + WG_CLUSTER - 1) / WG_CLUSTER)
/* work units: a tile, a tile's half of K, or (clusters) a pair of row tiles */
#define WG_UNITS (WG_ROWS_M * WG_TILES_N * WG_SPLITK)
#if WG_SPLITK == 2 && WG_KB < 2
#error "gemm_wg1: split-K 2 needs at least two k-blocks"
#endif
#define WG_GROUP 8
#define WG_TIMEOUT_NS 4000000000ull

/* The driver's CUtensorMap (cuda.h: 16 x 64-bit, 64-byte aligned); NVRTC has no cuda.h. */
struct __align__(64) dt_tmap {
    unsigned long long opaque[16];
};

/* shared-state-space address of a generic pointer to shared memory */
__device__ __forceinline__ unsigned wg_smem(const void *p) {
    unsigned long long a;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(a) : "l"(p));
    return (unsigned)a;
}

__device__ __forceinline__ void wg_bar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void wg_bar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void wg_bar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ unsigned wg_bar_try(unsigned bar, unsigned parity) {
    unsigned ok;
    asm volatile("{\n.reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return ok;
}

__device__ __forceinline__ unsigned long long wg_now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Waits until the phase of parity `parity` of bar completed. A wait over WG_TIMEOUT_NS
 * (a pipeline bug: a copy that never lands, a stage never released) traps, so a hang
 * becomes a launch failure (CUDA_ERROR_ILLEGAL_INSTRUCTION / LAUNCH_FAILED at the next
 * synchronization) instead of a stuck device. No printf here: any call in the kernel
 * makes ptxas serialize every wgmma (C7510). */
__device__ __forceinline__ void wg_bar_wait(unsigned bar, unsigned parity) {
    if (wg_bar_try(bar, parity)) return;
    const unsigned long long t0 = wg_now_ns();
    while (!wg_bar_try(bar, parity))
        if (wg_now_ns() - t0 > WG_TIMEOUT_NS) __trap();
}

/* TMA: the box at element coordinates (c0 inner, c1 outer) of map into dst, completing
 * its bytes on bar. */
__device__ __forceinline__ void wg_tma_2d(unsigned dst, const dt_tmap *map, int c0, int c1,
                                          unsigned bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

/* wgmma shared-memory matrix descriptor: start address, leading / stride byte offsets
 * (all >> 4), 128-byte swizzle (mode 1, bits 62-63); base offset 0 (atoms 1 KiB aligned). */
__device__ __forceinline__ unsigned long long wg_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) |
           ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wg_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wg_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wg_wait0() {
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}
__device__ __forceinline__ void wg_wait1() {
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
}

/* m64nBNk16, FP32 accumulate (scale-d 1), A and B from shared memory, trans-b 1. */
#if BN == 64
#define WG_NREG 32
#define WG_MMA_OP "wgmma.mma_async.sync.aligned.m64n64k16.f32." WG_AB_TYPE "." WG_AB_TYPE
__device__ __forceinline__ void wg_mma(float (&d)[32], unsigned long long da, unsigned long long db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 WG_MMA_OP " {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
                 "}, %32, %33, p, 1, 1, 0, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(da), "l"(db), "r"(1));
}
#endif
#if BN == 128
#define WG_NREG 64
#define WG_MMA_OP "wgmma.mma_async.sync.aligned.m64n128k16.f32." WG_AB_TYPE "." WG_AB_TYPE
__device__ __forceinline__ void wg_mma(float (&d)[64], unsigned long long da, unsigned long long db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 WG_MMA_OP " {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
                 "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "r"(1));
}
#endif
#if BN == 256
#define WG_NREG 128
#define WG_MMA_OP "wgmma.mma_async.sync.aligned.m64n256k16.f32." WG_AB_TYPE "." WG_AB_TYPE
__device__ __forceinline__ void wg_mma(float (&d)[128], unsigned long long da, unsigned long long db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 WG_MMA_OP " {"
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
                 "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
                 "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
                 "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
                 "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
                 "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
                   "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
                   "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
                   "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
                   "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
                   "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
                   "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
                   "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
                   "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "l"(da), "l"(db), "r"(1));
}
#endif

#define WG_GROUP_ROWS (WG_GROUP / WG_CLUSTER) /* 8 row tiles a group either way */

/* Tile t of the grouped order -> (row tm, column tile tn); rows are pairs with clusters. */
__device__ __forceinline__ void wg_tile(int t, int &tm, int &tn) {
    const int per_group = WG_GROUP_ROWS * WG_TILES_N;
    const int first = (t / per_group) * WG_GROUP_ROWS;
    const int rows = WG_ROWS_M - first < WG_GROUP_ROWS ? WG_ROWS_M - first : WG_GROUP_ROWS;
    const int r = t % per_group;
    tm = first + r % rows;
    tn = r / rows;
}

#if WG_CLUSTER == 2
__device__ __forceinline__ unsigned wg_cluster_rank() {
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
/* this block's first unit and the stride: its cluster's index and the cluster count */
__device__ __forceinline__ int wg_unit0() {
    unsigned c;
    asm("mov.u32 %0, %%clusterid.x;" : "=r"(c));
    return (int)c;
}
__device__ __forceinline__ int wg_unit_step() {
    unsigned c;
    asm("mov.u32 %0, %%nclusterid.x;" : "=r"(c));
    return (int)c;
}
#else
__device__ __forceinline__ int wg_unit0() { return (int)blockIdx.x; }
__device__ __forceinline__ int wg_unit_step() { return (int)gridDim.x; }
#endif

/* Work unit u -> its tile (tm, tn) and its k-blocks [kb0, kb1); with clusters of two,
 * unit u is the pair of row tiles 2p, 2p + 1 and this block takes 2p + its rank. */
__device__ __forceinline__ void wg_unit(int u, int &t, int &tm, int &tn, int &kb0, int &kb1) {
    t = u / WG_SPLITK;
    const int half = u % WG_SPLITK;
    wg_tile(t, tm, tn);
#if WG_CLUSTER == 2
    tm = 2 * tm + (int)wg_cluster_rank();
#endif
    kb0 = half * WG_KB / WG_SPLITK;
    kb1 = (half + 1) * WG_KB / WG_SPLITK;
}

#if WG_CLUSTER == 2
/* TMA multicast: the box at (c0, c1) of map into dst of both blocks of the cluster,
 * completing its bytes on bar (the same offset) in each. */
__device__ __forceinline__ void wg_tma_2d_mc(unsigned dst, const dt_tmap *map, int c0, int c1,
                                             unsigned bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                 ::"r"(dst), "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(bar),
                 "h"((unsigned short)3)
                 : "memory");
}
#endif

/* A consumer warp's release of stage barrier bar (lane 0): this block's, and with
 * clusters of two the peer's too (its producer multicasts into this block's stage). */
__device__ __forceinline__ void wg_release(unsigned bar) {
#if WG_CLUSTER == 2
#pragma unroll
    for (unsigned r = 0; r < 2; r++) {
        unsigned rb;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rb) : "r"(bar), "r"(r));
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(rb)
                     : "memory");
    }
#else
    wg_bar_arrive(bar);
#endif
}

/* The producer thread: every k-block of every unit of this block, STAGES ahead. */
__device__ __forceinline__ void wg_produce(const dt_tmap *tmA, const dt_tmap *tmB, unsigned sA,
                                           unsigned sB, unsigned full, unsigned empty) {
    /* the descriptors into the TMA unit's cache before the first copy needs them */
    asm volatile("prefetch.tensormap [%0];" ::"l"((unsigned long long)tmA) : "memory");
    asm volatile("prefetch.tensormap [%0];" ::"l"((unsigned long long)tmB) : "memory");
    unsigned it = 0;
#if WG_CLUSTER == 2
    const int j0 = (int)wg_cluster_rank() * (BN / 128); /* this block's half of B's boxes */
#endif
    for (int u = wg_unit0(); u < WG_UNITS; u += wg_unit_step()) {
        int t, tm, tn, kb0, kb1;
        wg_unit(u, t, tm, tn, kb0, kb1);
        for (int kb = kb0; kb < kb1; kb++, it++) {
            const unsigned s = it % STAGES, ph = (it / STAGES) & 1;
            wg_bar_wait(empty + 8 * s, ph ^ 1);
            wg_bar_expect_tx(full + 8 * s, WG_STAGE_BYTES);
            wg_tma_2d(sA + s * WG_A_BYTES, tmA, kb * WG_BK, tm * WG_BM, full + 8 * s);
#if WG_CLUSTER == 2
#pragma unroll
            for (int j = j0; j < j0 + BN / 128; j++)
                wg_tma_2d_mc(sB + s * WG_B_BYTES + j * WG_B_BOX_BYTES, tmB, tn * BN + j * 64,
                             kb * WG_BK, full + 8 * s);
#else
#pragma unroll
            for (int j = 0; j < BN / 64; j++)
                wg_tma_2d(sB + s * WG_B_BYTES + j * WG_B_BOX_BYTES, tmB, tn * BN + j * 64,
                          kb * WG_BK, full + 8 * s);
#endif
        }
    }
}

/* Rounds the accumulators of one consumer thread and stores them (bounds-checked).
 * Fragment of m64nNk16 D: warp w of the warpgroup holds rows 16w..16w+15; for column
 * group j (8 columns), d[4j], d[4j+1] are row lane/4, columns 2(lane%4) + 0, 1, and
 * d[4j+2], d[4j+3] the same columns 8 rows below. */
__device__ __forceinline__ void wg_store(const float (&d)[WG_NREG], dt_t *__restrict__ C,
                                         int row0, int col0) {
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        const int c = col0 + j * 8;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = row0 + 8 * h;
            if (r >= M) continue;
            dt_t *o = C + (long long)r * LDO + c;
#if VECO == 2
            if (c < N) {
                const unsigned lo = dt_from_f32(d[4 * j + 2 * h]);
                const unsigned hi = dt_from_f32(d[4 * j + 2 * h + 1]);
                *reinterpret_cast<unsigned *>(o) = lo | (hi << 16);
            }
#else
            if (c < N) o[0] = dt_from_f32(d[4 * j + 2 * h]);
            if (c + 1 < N) o[1] = dt_from_f32(d[4 * j + 2 * h + 1]);
#endif
        }
    }
}

#if WG_EPI_TMA

/* Four 8 x 8 b16 matrices from the mma fragment layout (thread t: row t / 4, elements
 * 2 (t % 4), +1) into shared memory; threads 8i..8i+7 give the row addresses of matrix i. */
__device__ __forceinline__ void wg_stmatrix4(unsigned addr, unsigned r0, unsigned r1,
                                             unsigned r2, unsigned r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
                 "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

/* The 128 threads of consumer warpgroup cw (named barriers 2 and 3). */
__device__ __forceinline__ void wg_group_sync(int cw) {
    asm volatile("bar.sync %0, 128;" ::"r"(2 + cw) : "memory");
}

/* TMA store of the box at smem src to element coordinates (c0 inner, c1 outer) of map. */
__device__ __forceinline__ void wg_tma_store_2d(const dt_tmap *map, unsigned src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}

/* The epilogue of wg3 (see the header): consumer warpgroup cw's 64 x BN accumulators
 * through its box buffer buf (WG_EPI_WG_BYTES, 1 KiB aligned) and TMA stores to rows
 * row0.., columns col0.. of the output. For column group j (8 columns) of warp w the
 * x4 stmatrix takes j and j + 1, rows 16w..16w+7 and 16w+8..16w+15: matrices
 * (rows +0, j), (+8, j), (+0, j+1), (+8, j+1) = d[4j..4j+1], d[4j+2..], d[4j+4..],
 * d[4j+6..]. */
__device__ __forceinline__ void wg_store_tma(const float (&d)[WG_NREG], const dt_tmap *tmC,
                                             unsigned buf, int row0, int col0, int cw) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    const int leader = (threadIdx.x & 127) == 0;
    const int mat = lane >> 3, r = lane & 7;
    /* this thread's row of the box (the same in every box) and its 128-byte row start;
     * the row's swizzle phase (row % 8) is r */
    const unsigned row_addr = buf + (unsigned)(16 * w + 8 * (mat & 1) + r) * 128u;
#pragma unroll
    for (int pass = 0; pass < WG_EPI_PASSES; pass++) {
        /* the buffer is free once the TMA unit has read the earlier stores out of it */
        if (leader) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        wg_group_sync(cw);
#pragma unroll
        for (int jj = 0; jj < WG_EPI_BOXES * 8; jj += 2) {
            const int j = pass * WG_EPI_BOXES * 8 + jj; /* column group in the tile */
            const int cg = jj + (mat >> 1);             /* this thread's, in the buffer */
            const unsigned addr = row_addr + (unsigned)(cg >> 3) * WG_EPI_BOX_BYTES +
                                  ((unsigned)((cg & 7) ^ r) << 4);
            wg_stmatrix4(addr, dt_pack2(d[4 * j], d[4 * j + 1]), dt_pack2(d[4 * j + 2], d[4 * j + 3]),
                         dt_pack2(d[4 * j + 4], d[4 * j + 5]), dt_pack2(d[4 * j + 6], d[4 * j + 7]));
        }
        /* the generic-proxy writes visible to the TMA unit, then every thread's are in */
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        wg_group_sync(cw);
        if (leader) {
#pragma unroll
            for (int b = 0; b < WG_EPI_BOXES; b++)
                wg_tma_store_2d(tmC, buf + b * WG_EPI_BOX_BYTES,
                                col0 + (pass * WG_EPI_BOXES + b) * 64, row0);
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
}
#define WG_TMC_PARAM const dt_tmap *tmC, unsigned sE,
#define WG_TMC_ARG &tmC, sE,
#else
#define WG_TMC_PARAM
#define WG_TMC_ARG
#endif

#if WG_SPLITK == 2
/* The 256 consumer threads of the block (named barrier 1; the producer is not in it). */
__device__ __forceinline__ void wg_consumers_sync() {
    asm volatile("bar.sync 1, 256;" ::: "memory");
}

/* Split-K 2 fix-up of unit u of tile t (see the header): 1 when this thread stores d. */
__device__ __forceinline__ int wg_splitk(float (&d)[WG_NREG], float *__restrict__ ws,
                                         unsigned *__restrict__ flags, int u, int t) {
    const int ct = threadIdx.x - 128; /* 0..255 */
    /* tile t's partial: WG_NREG / 4 rows of 256 float4, row i/4 holding d[i..i+3] of each
     * consumer thread (a warp's store is 512 contiguous bytes) */
    float4 *part = reinterpret_cast<float4 *>(ws) + (long long)t * (WG_NREG / 4) * 256 + ct;
    if (u % 2 == 0) { /* the first half: publish the partial */
#pragma unroll
        for (int i = 0; i < WG_NREG; i += 4)
            __stcg(part + (i / 4) * 256, make_float4(d[i], d[i + 1], d[i + 2], d[i + 3]));
        wg_consumers_sync();
        if (ct == 0) {
            __threadfence();
            asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flags + t), "r"(1u) : "memory");
        }
        return 0;
    }
    if (ct == 0) { /* the second half: wait for the first's partial */
        unsigned f = 0;
        const unsigned long long t0 = wg_now_ns();
        for (;;) {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(f) : "l"(flags + t) : "memory");
            if (f) break;
            if (wg_now_ns() - t0 > WG_TIMEOUT_NS) __trap();
        }
        flags[t] = 0; /* for the next launch (ordered by the kernel boundary) */
    }
    wg_consumers_sync();
#pragma unroll
    for (int i = 0; i < WG_NREG; i += 4) {
        const float4 p = __ldcg(part + (i / 4) * 256);
        d[i] = p.x + d[i];
        d[i + 1] = p.y + d[i + 1];
        d[i + 2] = p.z + d[i + 2];
        d[i + 3] = p.w + d[i + 3];
    }
    return 1;
}
#define WG_EXTRA_PARAMS , float *__restrict__ ws, unsigned *__restrict__ flags
#define WG_EXTRA_ARGS , ws, flags
#else
#define WG_EXTRA_PARAMS
#define WG_EXTRA_ARGS
#endif

/* A consumer warpgroup (cw 0 or 1: rows 64cw.. of each block tile). */
__device__ __forceinline__ void wg_consume(WG_TMC_PARAM dt_t *__restrict__ C, unsigned sA, unsigned sB,
                                           unsigned full, unsigned empty, int cw WG_EXTRA_PARAMS) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    (void)w; /* wg3 (the TMA-store epilogue) works out its rows itself */
    float d[WG_NREG];
    unsigned it = 0;
#if WG_INFLIGHT
    unsigned prev = 0; /* the stage of the group still in flight */
#endif
    for (int u = wg_unit0(); u < WG_UNITS; u += wg_unit_step()) {
        int t, tm, tn, kb0, kb1;
        wg_unit(u, t, tm, tn, kb0, kb1);
#pragma unroll
        for (int i = 0; i < WG_NREG; i++) d[i] = 0.0f;
        for (int kb = kb0; kb < kb1; kb++, it++) {
            const unsigned s = it % STAGES, ph = (it / STAGES) & 1;
            wg_bar_wait(full + 8 * s, ph);
            const unsigned a = sA + s * WG_A_BYTES + cw * (64 * 128);
            const unsigned b = sB + s * WG_B_BYTES;
            wg_fence();
#pragma unroll
            for (int kk = 0; kk < WG_BK / 16; kk++) {
                /* A, K-major: one k16 step is 32 bytes along the swizzled 128-byte row;
                 * 8-row core groups 1024 bytes apart (SBO); LBO unused (16). B, N-major:
                 * k16 = 16 rows of 128 bytes = 2048 bytes; 8-row groups 1024 apart (SBO),
                 * 64-column boxes 8 KiB apart (LBO). */
                wg_mma(d, wg_desc(a + kk * 32, 16, 1024),
                       wg_desc(b + kk * 2048, WG_B_BOX_BYTES, 1024));
            }
            wg_commit();
#if WG_INFLIGHT
            /* wg2: keep this k-block's group in flight; the previous one is done now */
            wg_wait1();
            if (kb > kb0 && lane == 0) wg_release(empty + 8 * prev);
            prev = s;
#else
            wg_wait0();
            if (lane == 0) wg_release(empty + 8 * s);
#endif
        }
#if WG_INFLIGHT
        wg_wait0();
        if (lane == 0) wg_release(empty + 8 * prev);
#endif
#if WG_SPLITK == 2
        if (!wg_splitk(d, ws, flags, u, t)) continue;
#endif
#if WG_EPI_TMA
        wg_store_tma(d, tmC, sE + cw * WG_EPI_WG_BYTES, tm * WG_BM + cw * 64, tn * BN, cw);
#else
        wg_store(d, C, tm * WG_BM + cw * 64 + w * 16 + (lane >> 2), tn * BN + (lane & 3) * 2);
#endif
    }
#if WG_EPI_TMA
    /* the last stores out of shared memory before the block's shared memory goes */
    if ((threadIdx.x & 127) == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

#if WG_CLUSTER == 2
#define WG_KERNEL DT_KNAME(dt_gemm_wg4)
#define WG_CLUSTER_ATTR __cluster_dims__(2, 1, 1)
#elif WG_EPI_TMA
#define WG_KERNEL DT_KNAME(dt_gemm_wg3)
#elif WG_INFLIGHT
#define WG_KERNEL DT_KNAME(dt_gemm_wg2)
#else
#define WG_KERNEL DT_KNAME(dt_gemm_wg1)
#endif
#if WG_EPI_TMA
#define WG_TMC_KPARAM const __grid_constant__ dt_tmap tmC,
#else
#define WG_TMC_KPARAM
#endif
#ifndef WG_CLUSTER_ATTR
#define WG_CLUSTER_ATTR
#endif

extern "C" __global__ void __launch_bounds__(WG_THREADS, 1) WG_CLUSTER_ATTR
WG_KERNEL(const __grid_constant__ dt_tmap tmA, const __grid_constant__ dt_tmap tmB,
          WG_TMC_KPARAM dt_t *__restrict__ C WG_EXTRA_PARAMS) {
    extern __shared__ __align__(1024) unsigned char wg_dyn[];
    /* 128-byte swizzle atoms need 1 KiB alignment: the plan asks 1 KiB extra */
    const unsigned base = (wg_smem(wg_dyn) + 1023u) & ~1023u;
    const unsigned sA = base, sB = base + STAGES * WG_A_BYTES;
    /* wg3: the consumers' epilogue boxes (2 x WG_EPI_WG_BYTES, 1 KiB aligned) */
    const unsigned sE = sB + STAGES * WG_B_BYTES;
    const unsigned full = sE + 2 * WG_EPI_WG_BYTES, empty = full + 8 * STAGES;
    (void)sE;
    const int wg = threadIdx.x >> 7;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            wg_bar_init(full + 8 * s, 1);
            /* one arrive per consumer warp (of both blocks with clusters of two) */
            wg_bar_init(empty + 8 * s, 8 * WG_CLUSTER);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
#if WG_CLUSTER == 2
    /* both blocks' barriers initialized before either multicasts or arrives remotely */
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
    __syncthreads();
#endif
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (threadIdx.x == 0) wg_produce(&tmA, &tmB, sA, sB, full, empty);
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        wg_consume(WG_TMC_ARG C, sA, sB, full, empty, wg - 1 WG_EXTRA_ARGS);
    }
#if WG_CLUSTER == 2
    /* no block leaves while its peer may still arrive on its empty barriers (every
     * thread of both blocks comes here; not .aligned: the roles arrive apart) */
    asm volatile("barrier.cluster.arrive.release;\n\t"
                 "barrier.cluster.wait.acquire;" ::: "memory");
#endif
}
