// emu_gemv.cpp — kernels/cuda/gemv.cu on the CPU through dt_emu.hpp (run_emu_gemv.sh).
// Built twice: with -DDT_EMU_SO it is the kernel as a shared object (one copy a block of a
// cluster, so each block's __shared__ statics are its own) exporting setup and one
// thread's run; without, the runner: a guarded arena like src/data/dt_arena (256-byte
// aligned regions and guards; views at element (1,1) of a region with row stride LDA /
// LDB), every cluster of the grid run as CL x BLOCK std::threads, every output checked
// against an FP64 reference and the output's guards against the sentinel.
// Storage: DT_ELEM 0 f32 (default), 1 bf16, 2 f16 (elements of every buffer; inputs drawn
// as f32 and rounded to the type, the reference from the stored values). Tolerance: FP32
// 2e-6 * sum |a*b|; bf16 / f16 that plus 1 ulp of the type at |ref| (the one rounding of
// the output): tighter than the gemm registry's, and far below what accumulating in the
// storage type gives (the planted DT_EMU_PLANT_ACC_NARROW, which must fail).
// Macros: those of gemv.cu (M N K LDA LDB LDO GV_MODE BLOCK TPR CL KC VECA VECB GV_MR GV_KG
// DT_ELEM), VIEW; or, with DT_GEMV_MMA defined, those of gemv_mma.cu (M N K LDA LDB LDO
// WARPS CL KC MG VECA VECB DT_ELEM: 1 or 2), the same runner and checks.
#ifdef DT_GEMV_MMA
#define DT_EMU_BLOCK (32 * WARPS)
#define DT_EMU_GROUPS ((N + 63) / 64)
#define DT_EMU_GY ((M + 8 * MG - 1) / (8 * MG))
#else
#define DT_EMU_BLOCK BLOCK
#define DT_EMU_GROUPS (GV_MODE == 1 ? (M + BLOCK / TPR - 1) / (BLOCK / TPR) : (N + TPR * VECB - 1) / (TPR * VECB))
#define DT_EMU_GY (GV_MODE == 2 ? (M + GV_MR - 1) / GV_MR : 1) /* row groups */
#endif
#ifdef DT_EMU_SO
#ifdef DT_GEMV_MMA
#include "gemv_mma.cu"
#define DT_EMU_KERNEL DT_KNAME(dt_gemv_mma)
#else
#include "gemv.cu"
#define DT_EMU_KERNEL DT_KNAME(dt_gemv)
#endif
DT_EMU_SO_EXPORTS
DT_EMU_EXPORT void dt_emu_so_run(unsigned t, unsigned blk, unsigned by, const void *a,
                                 const void *b, void *o) {
    threadIdx = {t, 0, 0};
    blockIdx = {blk, by, 0};
    DT_EMU_KERNEL((const dt_t *)a, (const dt_t *)b, (dt_t *)o);
}
#else
#include "dt_emu.hpp" /* dt_emu_narrow_* (the kernel's own conversions) */
#include "dt_emu_load.hpp"
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <string>
#include <thread>
#include <vector>

typedef void (*run_fn)(unsigned, unsigned, unsigned, const void *, const void *, void *);
#ifndef GV_MR
#define GV_MR 1
#endif
#ifndef GV_KG
#define GV_KG 1
#endif
#ifndef DT_ELEM
#define DT_ELEM 0
#endif
#if DT_ELEM == 0
typedef float T;
static float widen(T v) { return v; }
static T narrow(float f) { return f; }
static const char *TNAME = "f32";
#else
typedef unsigned short T;
static float widen(T v) { return dt_emu_narrow_to_f32(v); }
static T narrow(float f) { return dt_emu_narrow_from_f32(f); }
static const char *TNAME = DT_ELEM == 1 ? "bf16" : "f16";
#endif
static const size_t GUARD = 256;
static const unsigned char SENT = 0xa7; /* every guard byte */

/* the spacing of the storage type at |x| (0 for f32: its tolerance has no ulp term) */
static double ulp_of(double x) {
    if (DT_ELEM == 0 || x == 0) return 0;
    const int mant = DT_ELEM == 1 ? 7 : 10, emin = DT_ELEM == 1 ? -126 : -14;
    int e;
    std::frexp(std::fabs(x), &e); /* |x| in [2^(e-1), 2^e) */
    return std::ldexp(1.0, (e - 1 < emin ? emin : e - 1) - mant);
}

/* a region of rows x ld elements (+2 rows and the (1,1) offset for a view), sentinel-filled */
static T *region(long long rows, long long ld, int view, size_t *bytes) {
    const long long elems = (view ? rows + 2 : rows) * ld;
    size_t b = ((size_t)elems * sizeof(T) + 2 * GUARD + 255) / 256 * 256;
    T *p = (T *)std::aligned_alloc(256, b);
    std::memset(p, SENT, b);
    *bytes = b;
    return p;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    dt_emu_setup_fn setup[CL];
    run_fn run[CL];
    void *anchors[CL];
    if (dt_emu_load_blocks(argv[1], CL, anchors, setup, run)) return 2;
    size_t ab, bb, ob;
    T *A = region(M, LDA, VIEW, &ab), *B = region(K, LDB, VIEW, &bb), *O = region(M, LDO, 0, &ob);
    const size_t G = GUARD / sizeof(T);
    T *a = A + G + (VIEW ? LDA + 1 : 0), *b = B + G + (VIEW ? LDB + 1 : 0);
    T *o = O + G;
    unsigned s = 12345;
    auto rnd = [&]() { s = s * 1103515245u + 12345u; return narrow((float)((int)((s >> 8) % 2049) - 1024) / 1024.0f); };
    for (long long r = 0; r < M; r++)
        for (long long c = 0; c < K; c++) a[r * LDA + c] = rnd();
    for (long long r = 0; r < K; r++)
        for (long long c = 0; c < N; c++) b[r * LDB + c] = rnd();
    T poison; /* a NaN of the type */
    if (DT_ELEM == 0) { const unsigned pb = 0x7fc0deadu; std::memcpy(&poison, &pb, sizeof poison); }
    else { const unsigned short pb = DT_ELEM == 1 ? 0x7fc1 : 0x7e01; std::memcpy(&poison, &pb, sizeof poison); }
    for (long long r = 0; r < M; r++)
        for (long long c = 0; c < N; c++) o[r * LDO + c] = poison;
    const long long groups = DT_EMU_GROUPS, gy = DT_EMU_GY;
    for (long long g = 0; g < groups * gy; g++) { /* one cluster at a time */
        const unsigned gx = (unsigned)(g % groups), by = (unsigned)(g / groups);
        std::barrier<> cbar(CL * DT_EMU_BLOCK);
        std::vector<std::unique_ptr<std::barrier<>>> bars;
        for (int j = 0; j < CL; j++) bars.emplace_back(new std::barrier<>(DT_EMU_BLOCK));
        for (int j = 0; j < CL; j++) setup[j](bars[j].get(), &cbar, anchors, CL);
        std::vector<std::thread> th;
        for (int j = 0; j < CL; j++)
            for (int t = 0; t < DT_EMU_BLOCK; t++)
                th.emplace_back([&, t, j, gx, by] { run[j]((unsigned)t, gx * CL + (unsigned)j, by, a, b, o); });
        for (auto &x : th) x.join();
    }
    long long bad = 0, bad_reg = 0;
    double maxrel = 0;
    for (long long r = 0; r < M; r++)
        for (long long c = 0; c < N; c++) {
            double ref = 0, mag = 0;
            for (long long k = 0; k < K; k++) {
                const double t = (double)widen(a[r * LDA + k]) * widen(b[k * LDB + c]);
                ref += t;
                mag += std::fabs(t);
            }
            const double got = widen(o[r * LDO + c]), err = std::fabs(got - ref);
            if (!(err <= 1e-4 + 1e-4 * mag + ulp_of(ref))) bad_reg++; /* the registry's gemm bound */
            if (!(err <= 2e-6 * mag + ulp_of(ref) + 1e-30)) {
                if (bad < 5) printf("out[%lld,%lld]: got %.9g want %.9g\n", r, c, got, ref);
                bad++;
            }
            if (mag > 0) maxrel = std::fmax(maxrel, err / mag);
        }
    long long gbad = 0;
    for (size_t i = 0; i < ob / sizeof(T); i++) {
        const long long e = (long long)i - (long long)G;
        if (e >= 0 && e < (long long)M * LDO && (e % LDO) < N) continue;
        T sent;
        std::memset(&sent, SENT, sizeof sent);
        if (std::memcmp(&O[i], &sent, sizeof sent) != 0) gbad++;
    }
#ifdef DT_GEMV_MMA
    printf("gemv_mma %s M=%d N=%d K=%d view=%d warps=%d cl=%d kc=%d mg=%d vec=%d,%d: %lld bad, "
           "max err/sum|ab| %.3g, %lld guard elements changed (%lld outside the registry's looser "
           "gemm bound)\n",
           TNAME, M, N, K, VIEW, WARPS, CL, KC, MG, VECA, VECB, bad, maxrel, gbad, bad_reg);
#else
    printf("gemv %s M=%d N=%d K=%d view=%d mode=%d block=%d tpr=%d cl=%d kc=%d vec=%d,%d mr=%d kg=%d: %lld bad, "
           "max err/sum|ab| %.3g, %lld guard elements changed (%lld outside the registry's looser "
           "gemm bound)\n",
           TNAME, M, N, K, VIEW, GV_MODE, BLOCK, TPR, CL, KC, VECA, VECB, GV_MR, GV_KG, bad, maxrel, gbad,
           bad_reg);
#endif
    return bad || gbad ? 1 : 0;
}
#endif
