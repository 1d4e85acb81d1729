// emu_gemm_v2.cpp — kernels/cuda/gemm_v2.cu (FP32 SIMT SGEMM) on the CPU through
// dt_emu.hpp (run_emu_sgemm.sh): every block of the grid as 256 std::threads, one block at
// a time, over a guarded arena like src/data/dt_arena (256-byte aligned regions and
// guards; views at element (1,1) with row strides LDA / LDB); every output checked
// against an FP64 reference and the output's guards against the sentinel. Checks the
// index math, tails, the exact K tail (KTAIL_EXACT) and the two prefetch phases of
// BK = 32 and the staged epilogue (EPI_STAGE), not timing. Macros: those of gemm_v2.cu,
// VIEW.
// KSPLIT > 1 (split-K over a cluster): built twice like emu_gemv.cpp. With -DDT_EMU_SO the
// kernel as a shared object, one copy a block of a cluster (each block's __shared__
// statics its own, so DSMEM reads reach the other copies through dt_emu_remote); without,
// the runner, every cluster of the grid as KSPLIT x 256 std::threads.
#ifndef KSPLIT
#define KSPLIT 1
#endif
#undef __launch_bounds__
#define __launch_bounds__(...)
#undef __align__ /* "__shared__ __align__(16) float": GNU form, legal between specifiers */
#define __align__(n) __attribute__((aligned(n)))
#if KSPLIT == 1 || defined(DT_EMU_SO)
inline void __syncwarp() { __syncthreads(); } /* every thread of the block calls it */
#include "gemm_v2.cu"
#endif
#ifdef DT_EMU_SO
DT_EMU_SO_EXPORTS
DT_EMU_EXPORT void dt_emu_so_run(unsigned t, unsigned bx, unsigned by, unsigned bz, const float *a,
                                 const float *b, float *o) {
    threadIdx = {t, 0, 0};
    blockIdx = {bx, by, bz};
    dt_gemm_v2_f32(a, b, o);
}
#else
#include "dt_emu_load.hpp"
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>
#ifndef KTAIL_EXACT
#define KTAIL_EXACT 0
#endif
#ifndef EPI_STAGE
#define EPI_STAGE 0
#endif

static const float SENT = -719.5f;
static const size_t GUARD = 256;

static float *region(long long rows, long long ld, int view, size_t *bytes) {
    const long long elems = (view ? rows + 2 : rows) * ld;
    size_t b = ((size_t)elems * 4 + 2 * GUARD + 255) / 256 * 256;
    float *p = (float *)std::aligned_alloc(256, b);
    for (size_t i = 0; i < b / 4; i++) p[i] = SENT;
    *bytes = b;
    return p;
}

#if KSPLIT == 1 /* the runner of a cluster does not include the kernel */
/* ASWZ: the most distinct addresses one warp's access of the A tile asks of one bank (1:
 * conflict-free), from the kernel's own index macros: each transposing store (4 bytes a
 * lane) and each LDS.128 read of the multiply (16 bytes a lane, 16-byte aligned; a bank
 * holding several distinct quads counts each). Every index must stay in its buffer. */
static int bank_ways(const std::vector<int> &start, int floats) {
    std::vector<int> seen[32];
    int worst = 0;
    for (int a : start)
        for (int f = a; f < a + floats; f++) {
            std::vector<int> &b = seen[f % 32];
            bool dup = false;
            for (int x : b) dup = dup || x == a;
            if (!dup) b.push_back(a);
            worst = b.size() > (size_t)worst ? (int)b.size() : worst;
        }
    return worst;
}
static void a_tile_ways(int *store_ways, int *read_ways) {
    *store_ways = *read_ways = 0;
    for (int w = 0; w < DT_THREADS / 32; w++) {
        for (int l = 0; l < DT_NA; l++)
            for (int e = 0; e < VECA; e++) {
                std::vector<int> st;
                for (int lane = 0; lane < 32; lane++) {
                    const int tid = w * 32 + lane, k = (tid % DT_AV) * VECA + e;
                    const int at = DT_AOFF(k) + tid / DT_AV + l * DT_RSA;
                    if (at < 0 || at >= DT_ABUF) { printf("A tile index %d outside its buffer\n", at); std::exit(1); }
                    st.push_back(at);
                }
                const int wy = bank_ways(st, 1);
                *store_ways = wy > *store_ways ? wy : *store_ways;
            }
        const int wm = w / DT_WARPS_N;
        for (int kk = 0; kk < BK; kk++)
            for (int q = 0; q < TM / 4; q++) {
                std::vector<int> rd;
                for (int lane = 0; lane < 32; lane++) {
                    const int at = DT_AOFF(kk) + wm * DT_WTM + lane / DT_LX * 4 + q * DT_QSM;
                    if (at % 4 != 0 || at + 4 > DT_ABUF) { printf("A quad at %d: misaligned or outside\n", at); std::exit(1); }
                    rd.push_back(at);
                }
                const int wy = bank_ways(rd, 4);
                *read_ways = wy > *read_ways ? wy : *read_ways;
            }
    }
}
#endif

int main(int argc, char **argv) {
#if KSPLIT == 1
    int sw, rw;
    a_tile_ways(&sw, &rw);
#ifdef DT_EMU_EXPECT_CONFLICT /* ASWZ=0 at BK >= 16: the conflicts the swizzle removes must show */
    printf("gemm_v2 A tile, ASWZ=%d: stores %d-way, reads %d-way (conflicts expected)\n", ASWZ, sw, rw);
    if (sw < 2) return 1;
#else
    /* conflict-free wherever the shift applies (VECA = 4) and at BK = 8; the scalar A loads
     * of views at BK >= 16 keep their store conflicts (gemm_v2.cu ASWZ), reported only */
    const int stores_free = ASWZ && (DT_ASH > 0 || BK == 8);
    if (!stores_free)
        printf("gemm_v2 A tile, ASWZ=%d BK=%d VECA=%d: stores %d-way (not required), reads %d-way\n",
               ASWZ, BK, VECA, sw, rw);
    if ((stores_free && sw != 1) || rw != 1) {
        printf("gemm_v2 A tile, ASWZ=%d BK=%d VECA=%d: stores %d-way, reads %d-way bank conflicts\n",
               ASWZ, BK, VECA, sw, rw);
        return 1;
    }
#endif
#endif
#if KSPLIT > 1
    typedef void (*run_fn)(unsigned, unsigned, unsigned, unsigned, const float *, const float *, float *);
    if (argc < 2) return 2;
    dt_emu_setup_fn setup[KSPLIT];
    run_fn run[KSPLIT];
    void *anchors[KSPLIT];
    if (dt_emu_load_blocks(argv[1], KSPLIT, anchors, setup, run)) return 2;
#else
    (void)argc;
    (void)argv;
#endif
    size_t ab, bb, ob;
    float *Ar = region(M, LDA, VIEW, &ab), *Br = region(K, LDB, VIEW, &bb), *Or = region(M, LDO, 0, &ob);
    float *a = Ar + GUARD / 4 + (VIEW ? LDA + 1 : 0), *b = Br + GUARD / 4 + (VIEW ? LDB + 1 : 0);
    float *o = Or + GUARD / 4;
    unsigned s = 777;
    auto rnd = [&]() { s = s * 1103515245u + 12345u; return (float)((int)((s >> 8) % 2049) - 1024) / 1024.0f; };
    for (long long r = 0; r < M; r++)
        for (long long c = 0; c < K; c++) a[r * LDA + c] = rnd();
    for (long long r = 0; r < K; r++)
        for (long long c = 0; c < N; c++) b[r * LDB + c] = rnd();
#if KSPLIT > 1
    for (unsigned by = 0; by < (unsigned)((M + BM - 1) / BM); by++)
        for (unsigned bx = 0; bx < (unsigned)((N + BN - 1) / BN); bx++) { /* a cluster */
            std::barrier<> cbar(KSPLIT * 256);
            std::vector<std::unique_ptr<std::barrier<>>> bars;
            for (int j = 0; j < KSPLIT; j++) bars.emplace_back(new std::barrier<>(256));
            for (int j = 0; j < KSPLIT; j++) setup[j](bars[j].get(), &cbar, anchors, KSPLIT);
            std::vector<std::thread> th;
            for (int j = 0; j < KSPLIT; j++)
                for (unsigned t = 0; t < 256; t++)
                    th.emplace_back([&, t, j, bx, by] { run[j](t, bx, by, (unsigned)j, a, b, o); });
            for (auto &x : th) x.join();
        }
#else
    std::barrier<> bar(DT_THREADS);
    dt_emu_bar = &bar;
    for (unsigned by = 0; by < (unsigned)((M + BM - 1) / BM); by++)
        for (unsigned bx = 0; bx < (unsigned)((N + BN - 1) / BN); bx++) {
            std::vector<std::thread> th;
            for (unsigned t = 0; t < DT_THREADS; t++)
                th.emplace_back([=] {
                    threadIdx = {t, 0, 0};
                    blockIdx = {bx, by, 0};
                    dt_gemm_v2_f32(a, b, o);
                });
            for (auto &x : th) x.join();
        }
#endif
    long long bad = 0;
    double maxrel = 0;
    for (long long r = 0; r < M; r++)
        for (long long c = 0; c < N; c++) {
            double ref = 0, mag = 0;
            for (long long k = 0; k < K; k++) {
                ref += (double)a[r * LDA + k] * b[k * LDB + c];
                mag += std::fabs((double)a[r * LDA + k] * b[k * LDB + c]);
            }
            const double got = o[r * LDO + c], err = std::fabs(got - ref);
            if (!(err <= 2e-6 * mag + 1e-30)) {
                if (bad < 5) printf("out[%lld,%lld]: got %.9g want %.9g\n", r, c, got, ref);
                bad++;
            }
            if (mag > 0) maxrel = std::fmax(maxrel, err / mag);
        }
    long long gbad = 0;
    for (size_t i = 0; i < ob / 4; i++) {
        const long long e = (long long)i - (long long)(GUARD / 4);
        if (e >= 0 && e < (long long)M * LDO && (e % LDO) < N) continue;
        if (Or[i] != SENT) gbad++;
    }
    printf("gemm_v2 M=%d N=%d K=%d view=%d tile=%dx%dx%d vec=%d,%d,%d ktail=%d epi=%d ksplit=%d: %lld "
           "bad, max err/sum|ab| %.3g, %lld guard floats changed\n",
           M, N, K, VIEW, BM, BN, BK, VECA, VECB, VECC, KTAIL_EXACT, EPI_STAGE, KSPLIT, bad, maxrel,
           gbad);
    return bad || gbad ? 1 : 0;
}
#endif
