// dt_emu.hpp — a CPU stand-in for the CUDA built-ins the row kernels use, so a kernel
// source of kernels/cuda can be compiled by g++ (-DDT_HOST_EMU -include dt_emu.hpp) and
// run with one std::thread per CUDA thread, one block at a time: __syncthreads is a
// std::barrier of the block, a warp shuffle an exchange through an array between two
// block barriers (the kernels shuffle only where every thread of the block does),
// __shared__ variables are statics of the kernel's shared object (one copy of it a block
// of a cluster, see below). FP32, and bf16 / f16 storage (DT_ELEM 1 / 2: the conversions
// in C++, dt_emu_narrow_*; round to nearest even like cvt.rn); no inline PTX except the
// staged-row copy and the cluster primitives (dt_emu_*). A development check of index math, bounds and barriers
// (run by tests/cuda/emu/run_emu.sh), not a timing model.
#pragma once
#include <barrier>
#include <chrono>
#include <thread>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "dt_emu_narrow.hpp"

struct dt_emu_dim { unsigned x, y, z; };
inline thread_local dt_emu_dim threadIdx, blockIdx, gridDim;
inline std::barrier<> *dt_emu_bar;
inline float dt_emu_xch[1024];
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __shared__ static
#define __align__(n) alignas(n)
#define DT_EMU_SROW_BUF alignas(16) static unsigned char dt_srow_buf[1 << 20] /* more than a GPU has: any test shape */
inline void __syncthreads() { dt_emu_bar->arrive_and_wait(); }
struct float4 { float x, y, z, w; };
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
template <class T> inline T __ldg(const T *p) { return *p; }
#ifdef DT_EMU_CHECK_ALIGN /* a 16-byte load from an address the GPU would fault on: abort */
inline void dt_emu_check16(const void *p) {
    if ((size_t)p & 15) {
        std::fprintf(stderr, "misaligned 16-byte load at %p\n", p);
        std::abort();
    }
}
inline float4 __ldg(const float4 *p) { dt_emu_check16(p); return *p; }
inline uint4 __ldg(const uint4 *p) { dt_emu_check16(p); return *p; }
inline unsigned __ldg(const unsigned *p) { /* a 4-byte load (the elementwise pairs) */
    if ((size_t)p & 3) {
        std::fprintf(stderr, "misaligned 4-byte load at %p\n", p);
        std::abort();
    }
    return *p;
}
inline uint2 __ldg(const uint2 *p) { /* an 8-byte load: the GPU faults below 8-byte alignment */
    if ((size_t)p & 7) {
        std::fprintf(stderr, "misaligned 8-byte load at %p\n", p);
        std::abort();
    }
    return *p;
}
#endif
inline float __fmul_rn(float a, float b) { return a * b; } /* g++ -O1 on x86-64: no contraction */
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) { /* (hi:lo) >> (s & 31) */
    return (unsigned)((((unsigned long long)hi << 32) | lo) >> (s & 31));
}
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __shfl_xor_sync(unsigned, float v, int o) {
    const unsigned t = threadIdx.x;
    dt_emu_xch[t] = v;
    __syncthreads();
    const float r = dt_emu_xch[t ^ (unsigned)o];
    __syncthreads();
    return r;
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) { /* PTX prmt, default mode */
    const unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; i++) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xffu) << (8 * i);
    return r;
}
// bf16 / f16 <-> float (DT_ELEM 1 / 2) for the storage-type helpers of dt_cuda_common.cuh:
// the conversions of dt_emu_narrow.hpp (widening exact, narrowing to nearest even).
inline float dt_emu_narrow_to_f32(unsigned short h) {
#if defined(DT_ELEM) && DT_ELEM == 2
    return dt_emu_f16_to_f32(h);
#else
    return dt_emu_bf16_to_f32(h);
#endif
}
inline unsigned short dt_emu_narrow_from_f32(float x) {
#if defined(DT_ELEM) && DT_ELEM == 2
    return dt_emu_f32_to_f16(x);
#else
    return dt_emu_f32_to_bf16(x);
#endif
}
// mma.sync.m16n8k16.row.col (bf16 / f16 inputs, FP32 accumulators): a collective of the
// warp like a shuffle (every thread of the block calls it, between two block barriers).
// Each lane leaves its fragments; each lane then computes its 4 outputs from its warp's
// fragments in PTX's layout (A 16 x 16 row-major: lane 4 (row % 8) + (col % 8) / 2,
// register (row / 8) + 2 (col / 8), the odd column in the high half; B 16 x 8: lane
// 4 col + (k % 8) / 2, register k / 8; D: c0, c1 row g, c2, c3 row g + 8, columns 2t, 2t+1),
// exact products summed in double with the accumulator, rounded once to FP32.
inline unsigned dt_emu_mma_a[1024][4], dt_emu_mma_b[1024][2];
inline void dt_emu_mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    const unsigned t = threadIdx.x, base = t & ~31u, lane = t & 31u;
    for (int i = 0; i < 4; i++) dt_emu_mma_a[t][i] = a[i];
    dt_emu_mma_b[t][0] = b0;
    dt_emu_mma_b[t][1] = b1;
    __syncthreads();
    auto half = [](unsigned w, int odd) { return (unsigned short)(odd ? w >> 16 : w & 0xffffu); };
    auto av = [&](int row, int col) {
        const unsigned w = dt_emu_mma_a[base + 4 * (row & 7) + ((col & 7) >> 1)][(row >> 3) + 2 * (col >> 3)];
        return (double)dt_emu_narrow_to_f32(half(w, col & 1));
    };
    auto bv = [&](int k, int col) {
        const unsigned w = dt_emu_mma_b[base + 4 * col + ((k & 7) >> 1)][k >> 3];
        return (double)dt_emu_narrow_to_f32(half(w, k & 1));
    };
    const int g = (int)(lane >> 2), tg = (int)(lane & 3);
    float r[4];
    for (int i = 0; i < 4; i++) {
        const int row = g + 8 * (i >> 1), col = 2 * tg + (i & 1);
        double s = d[i];
        for (int k = 0; k < 16; k++) s += av(row, k) * bv(k, col);
        r[i] = (float)s;
    }
    __syncthreads();
    for (int i = 0; i < 4; i++) d[i] = r[i];
}
// Clusters: every block of a cluster is its own copy of the kernel's shared object (so
// its statics, i.e. its shared memory, are its own); a cluster barrier is one barrier of
// all the cluster's threads, and block `rank`'s copy of a static sits at the same offset
// from that copy's dt_emu_anchor.
inline std::barrier<> *dt_emu_cbar;
inline void *dt_emu_anchors[8];
alignas(16) inline char dt_emu_anchor[16];
inline void dt_emu_cluster_sync() { dt_emu_cbar->arrive_and_wait(); }
// Blocks of odd cluster rank read other blocks' shared memory 25 ms late, so the even
// ones run ahead: a partial rewritten before every block of the cluster has read it
// (a reduction slot reused too early) is then read rewritten, not by luck of timing.
// (The rank is blockIdx.x % CLUSTER for the row kernels, blockIdx.x % CL for gemv.cu and
// blockIdx.z for gemm_v2.cu's split-K.)
inline const void *dt_emu_remote(const void *p, unsigned rank) {
#if defined(CLUSTER) && CLUSTER > 1
    const unsigned me = blockIdx.x % CLUSTER;
#elif defined(CL) && CL > 1 /* gemv.cu, gemv_mma.cu */
    const unsigned me = blockIdx.x % CL;
#elif defined(KSPLIT) && KSPLIT > 1
    const unsigned me = blockIdx.z;
#else
    const unsigned me = 0;
#endif
    if (me % 2 == 1 && rank != me) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    return (const char *)dt_emu_anchors[rank] + ((const char *)p - dt_emu_anchor);
}
// The kernel side of one shared object a cluster block (the runner: dt_emu_load.hpp):
// where this copy's statics sit, and its block and cluster barriers and the other
// copies' anchors.
#define DT_EMU_EXPORT extern "C" __attribute__((visibility("default")))
#define DT_EMU_SO_EXPORTS                                                                   \
    DT_EMU_EXPORT void *dt_emu_so_anchor(void) { return dt_emu_anchor; }                    \
    DT_EMU_EXPORT void dt_emu_so_setup(std::barrier<> *bar, std::barrier<> *cbar,           \
                                       void **anchors, int c) {                             \
        dt_emu_bar = bar;                                                                   \
        dt_emu_cbar = cbar;                                                                 \
        for (int i = 0; i < c; i++) dt_emu_anchors[i] = anchors[i];                         \
    }
// cp.async as asynchronous copies: an issued copy fills its destination with NaN at
// once and lands only when dt_emu_wait(n) retires its group (every group of this thread
// older than its newest n), so a pass that reads a row before its wait sees NaN, and a
// copy issued into a buffer other threads still read poisons what they read.
struct dt_emu_cp { void *dst; const void *src; int grp; };
inline thread_local std::vector<dt_emu_cp> dt_emu_pending;
inline thread_local int dt_emu_group;
inline void dt_emu_copy16(void *dst, const void *src) {
    // cp.async.cg needs 16-byte aligned source and destination
    if (((uintptr_t)dst | (uintptr_t)src) & 15u) __builtin_trap();
    std::memset(dst, 0xff, 16);
    dt_emu_pending.push_back({dst, src, dt_emu_group});
}
inline void dt_emu_commit() { dt_emu_group++; }
inline void dt_emu_wait(int n) {
    std::vector<dt_emu_cp> keep;
    for (const dt_emu_cp &c : dt_emu_pending)
        if (c.grp < dt_emu_group - n) std::memcpy(c.dst, c.src, 16);
        else keep.push_back(c);
    dt_emu_pending.swap(keep);
}
#include <math.h>
