// emu_gemv.cpp — kernels/cuda/gemv.cu on the CPU through dt_emu.hpp (run_emu_gemv.sh).
// Built twice: with -DDT_EMU_SO it is the kernel as a shared object (one copy a block of a
// cluster, so each block's __shared__ statics are its own) exporting setup and one
// thread's run; without, the runner: a guarded arena like src/data/dt_arena (256-byte
// aligned regions and guards; views at element (1,1) of a region with row stride LDA /
// LDB), every cluster of the grid run as CL x BLOCK std::threads, every output checked
// against an FP64 reference and the output's guards against the sentinel.
// Macros: those of gemv.cu (M N K LDA LDB LDO GV_MODE BLOCK TPR CL KC VECA VECB), VIEW.
#ifdef DT_EMU_SO
#include "gemv.cu"
#define DT_EMU_EXPORT extern "C" __attribute__((visibility("default")))
DT_EMU_EXPORT void *dt_emu_so_anchor(void) { return dt_emu_anchor; }
DT_EMU_EXPORT void dt_emu_so_setup(std::barrier<> *bar, std::barrier<> *cbar, void **anchors,
                                   int c) {
    dt_emu_bar = bar;
    dt_emu_cbar = cbar;
    for (int i = 0; i < c; i++) dt_emu_anchors[i] = anchors[i];
}
DT_EMU_EXPORT void dt_emu_so_run(unsigned t, unsigned blk, const float *a, const float *b, float *o) {
    threadIdx = {t, 0, 0};
    blockIdx = {blk, 0, 0};
    dt_gemv_f32(a, b, o);
}
#else
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

typedef void *(*anchor_fn)(void);
typedef void (*setup_fn)(std::barrier<> *, std::barrier<> *, void **, int);
typedef void (*run_fn)(unsigned, unsigned, const float *, const float *, float *);
static const float SENT = -719.5f;
static const size_t GUARD = 256;

/* a region of rows x ld floats (+2 rows and the (1,1) offset for a view), sentinel-filled */
static float *region(long long rows, long long ld, int view, size_t *bytes) {
    const long long elems = (view ? rows + 2 : rows) * ld;
    size_t b = ((size_t)elems * 4 + 2 * GUARD + 255) / 256 * 256;
    float *p = (float *)std::aligned_alloc(256, b);
    for (size_t i = 0; i < b / 4; i++) p[i] = SENT;
    *bytes = b;
    return p;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    setup_fn setup[CL];
    run_fn run[CL];
    void *anchors[CL];
    for (int j = 0; j < CL; j++) {
        const std::string so = std::string(argv[1]) + "/k" + std::to_string(j) + ".so";
        void *h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) { printf("dlopen %s: %s\n", so.c_str(), dlerror()); return 2; }
        anchors[j] = ((anchor_fn)dlsym(h, "dt_emu_so_anchor"))();
        setup[j] = (setup_fn)dlsym(h, "dt_emu_so_setup");
        run[j] = (run_fn)dlsym(h, "dt_emu_so_run");
    }
    size_t ab, bb, ob;
    float *A = region(M, LDA, VIEW, &ab), *B = region(K, LDB, VIEW, &bb), *O = region(M, LDO, 0, &ob);
    float *a = A + GUARD / 4 + (VIEW ? LDA + 1 : 0), *b = B + GUARD / 4 + (VIEW ? LDB + 1 : 0);
    float *o = O + GUARD / 4;
    unsigned s = 12345;
    auto rnd = [&]() { s = s * 1103515245u + 12345u; return (float)((int)((s >> 8) % 2049) - 1024) / 1024.0f; };
    for (long long r = 0; r < M; r++)
        for (long long c = 0; c < K; c++) a[r * LDA + c] = rnd();
    for (long long r = 0; r < K; r++)
        for (long long c = 0; c < N; c++) b[r * LDB + c] = rnd();
    float poison;
    { const unsigned pb = 0x7fc0deadu; std::memcpy(&poison, &pb, 4); }
    for (long long r = 0; r < M; r++)
        for (long long c = 0; c < N; c++) o[r * LDO + c] = poison;
    const long long groups = GV_MODE == 1 ? (M + BLOCK / TPR - 1) / (BLOCK / TPR)
                                          : (N + TPR * VECB - 1) / (TPR * VECB);
    for (long long g = 0; g < groups; g++) { /* one cluster at a time */
        std::barrier<> cbar(CL * BLOCK);
        std::vector<std::unique_ptr<std::barrier<>>> bars;
        for (int j = 0; j < CL; j++) bars.emplace_back(new std::barrier<>(BLOCK));
        for (int j = 0; j < CL; j++) setup[j](bars[j].get(), &cbar, anchors, CL);
        std::vector<std::thread> th;
        for (int j = 0; j < CL; j++)
            for (int t = 0; t < BLOCK; t++)
                th.emplace_back([&, t, j, g] { run[j]((unsigned)t, (unsigned)(g * CL + j), a, b, o); });
        for (auto &x : th) x.join();
    }
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
        if (O[i] != SENT) gbad++;
    }
    printf("gemv M=%d N=%d K=%d view=%d mode=%d block=%d tpr=%d cl=%d kc=%d vec=%d,%d: %lld bad, "
           "max err/sum|ab| %.3g, %lld guard floats changed\n",
           M, N, K, VIEW, GV_MODE, BLOCK, TPR, CL, KC, VECA, VECB, bad, maxrel, gbad);
    return bad || gbad ? 1 : 0;
}
#endif
