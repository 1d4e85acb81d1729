// emu_rows.cpp — runs one row kernel (emu_kernel.cpp built as CLUSTER copies of a shared
// object, argv[1]/k<j>.so) on the CPU through dt_emu.hpp over a guarded arena laid out like src/data/dt_arena (256-byte
// aligned regions, 256-byte guards, views at element (1,1) with row stride LDA) and
// checks every output element against an FP64 reference, the guards and the padding.
// Exit 0 when all match. Built and run by run_emu.sh.
#include <atomic>
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

#ifndef CLUSTER
#define CLUSTER 1
#endif
typedef void *(*anchor_fn)(void);
typedef void (*setup_fn)(std::barrier<> *, std::barrier<> *, void **, int);
typedef int (*run_fn)(unsigned, unsigned, unsigned, const float *, const float *, const float *,
                       const float *, const long long *, float *);

#ifndef VIEW
#define VIEW 0
#endif
#ifndef SMEMPIPE
#define SMEMPIPE 0
#endif
#ifndef CESTREAM
#define CESTREAM 0 /* 1: cross_entropy's streaming online logsumexp (one block a row) */
#endif
#ifndef ROWL2
#define ROWL2 0 /* 1: the L2-resident two-pass row (softmax, rmsnorm, layernorm) */
#endif
#ifndef OFFSET
#define OFFSET 0 /* added to every input (layernorm's --inputs offset analogue) */
#endif
#ifndef PIPE_G
#define PIPE_G 1 /* SMEMPIPE: the persistent grid's clusters (each takes rows g, g + G, ...) */
#endif
static const float SENT = -719.5f;

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    setup_fn setup[CLUSTER];
    run_fn run[CLUSTER];
    void *anchors[CLUSTER];
    for (int j = 0; j < CLUSTER; j++) {
        const std::string so = std::string(argv[1]) + "/k" + std::to_string(j) + ".so";
        void *h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) { printf("dlopen %s: %s\n", so.c_str(), dlerror()); return 2; }
        anchors[j] = ((anchor_fn)dlsym(h, "dt_emu_so_anchor"))();
        setup[j] = (setup_fn)dlsym(h, "dt_emu_so_setup");
        run[j] = (run_fn)dlsym(h, "dt_emu_so_run");
    }
    const long long m = M, n = N, lda = LDA, ldo = LDO;
    const long long aoff = VIEW ? lda + 1 : 0; /* window at (1,1) */
    const long long arows = VIEW ? m + 2 : m;
    const size_t gbytes = 256;
    auto region = [&](long long elems) {
        size_t b = (size_t)elems * 4 + 2 * gbytes + 256;
        b = (b + 255) / 256 * 256;
        float *p = (float *)std::aligned_alloc(256, b);
        for (size_t i = 0; i < b / 4; i++) p[i] = SENT;
        return p;
    };
    float *A = region(arows * lda), *O = region(m * ldo), *G = region(n), *Bt = region(n);
    float *Bm = region(arows * lda); /* residual_layernorm's b: laid out like a */
    float *a = A + gbytes / 4 + aoff, *o = O + gbytes / 4, *g = G + gbytes / 4, *bt = Bt + gbytes / 4;
    float *bm = Bm + gbytes / 4 + aoff;
    long long *lab = (long long *)std::aligned_alloc(256, (size_t)m * 8 + 256);
    unsigned s = 12345;
    auto rnd = [&]() { s = s * 1103515245u + 12345u; return (float)((int)((s >> 8) % 2049) - 1024) / 1024.0f; };
    for (long long r = 0; r < m; r++)
        for (long long c = 0; c < n; c++) a[r * lda + c] = rnd() * (OP == 0 || OP == 3 ? 8.0f : 1.0f) + (float)OFFSET;
    for (long long c = 0; c < n; c++) { g[c] = rnd(); bt[c] = rnd(); }
    for (long long r = 0; r < m; r++)
        for (long long c = 0; c < n; c++) bm[r * lda + c] = rnd();
    for (long long r = 0; r < m; r++) lab[r] = (long long)(r * 7919 % n);
#ifdef NEGINF /* cross_entropy: the first 3/4 of each row -inf but its label (whole
                 chunks, whole threads' parts -inf: the running max starts at -inf) */
    for (long long r = 0; r < m; r++)
        for (long long c = 0; c < n * 3 / 4; c++)
            if (c != lab[r]) a[r * lda + c] = -INFINITY;
#endif
    float POISON;
    { const unsigned pb = 0x7fc0deadu; std::memcpy(&POISON, &pb, 4); }
    for (long long r = 0; r < m; r++)
        for (long long c = 0; c < (OP == 3 ? 1 : n); c++) o[r * (OP == 3 ? 1 : ldo) + c] = POISON;
    /* one cluster (CLUSTER blocks, TPR == BLOCK) a row, or (SMEMPIPE) PIPE_G persistent
     * clusters; block j of a cluster in copy j; one cluster at a time */
    const long long clusters = SMEMPIPE ? PIPE_G : m;
    std::atomic<int> unwaited{0};
    for (long long r = 0; r < clusters; r++) {
        std::barrier<> cbar(CLUSTER * BLOCK);
        std::vector<std::unique_ptr<std::barrier<>>> bars;
        for (int j = 0; j < CLUSTER; j++) bars.emplace_back(new std::barrier<>(BLOCK));
        for (int j = 0; j < CLUSTER; j++) setup[j](bars[j].get(), &cbar, anchors, CLUSTER);
        std::vector<std::thread> th;
        for (int j = 0; j < CLUSTER; j++)
            for (int t = 0; t < BLOCK; t++)
                th.emplace_back([&, t, j, r] {
                    unwaited += run[j]((unsigned)t, (unsigned)(r * CLUSTER + j),
                                       (unsigned)(clusters * CLUSTER), a, bm, g, bt, lab, o);
                });
        for (auto &x : th) x.join();
    }
    long long bad = 0;
    double maxrel = 0;
    for (long long r = 0; r < m; r++) {
        std::vector<float> xs(n);
        for (long long c = 0; c < n; c++) xs[c] = OP == 4 ? a[r * lda + c] + bm[r * lda + c] : a[r * lda + c];
        const float *x = xs.data();
        std::vector<double> ref(OP == 3 ? 1 : n);
        if (OP == 0 || OP == 3) {
            double mx = -INFINITY, sum = 0;
            for (long long c = 0; c < n; c++) mx = x[c] > mx ? x[c] : mx;
            for (long long c = 0; c < n; c++) sum += std::exp((double)x[c] - mx);
            if (OP == 0)
                for (long long c = 0; c < n; c++) ref[c] = std::exp((double)x[c] - mx) / sum;
            else
                ref[0] = mx + std::log(sum) - x[lab[r]];
        } else if (OP == 1) {
            double ss = 0;
            for (long long c = 0; c < n; c++) ss += (double)x[c] * x[c];
            const double rs = 1.0 / std::sqrt(ss / n + 1e-5);
            for (long long c = 0; c < n; c++) ref[c] = x[c] * rs * g[c];
        } else { /* layernorm; residual_layernorm: no affine */
            double mean = 0, v = 0;
            for (long long c = 0; c < n; c++) mean += x[c];
            mean /= n;
            for (long long c = 0; c < n; c++) v += (x[c] - mean) * (x[c] - mean);
            const double rs = 1.0 / std::sqrt(v / n + 1e-5);
            for (long long c = 0; c < n; c++)
                ref[c] = OP == 4 ? (x[c] - mean) * rs : (x[c] - mean) * rs * g[c] + bt[c];
        }
        for (size_t c = 0; c < ref.size(); c++) {
            const double got = OP == 3 ? o[r] : o[r * ldo + c];
            const double err = std::fabs(got - ref[c]);
            const double tol = 1e-5 * std::fabs(ref[c]) + (OP == 0 ? 1e-9 : 1e-5);
            if (!(err <= tol)) {
                if (bad < 5) printf("row %lld col %zu: got %.9g want %.9g\n", r, c, got, ref[c]);
                bad++;
            }
            if (ref[c] != 0) maxrel = std::fmax(maxrel, err / std::fabs(ref[c]));
        }
    }
    /* guards and padding unchanged: every float of O outside the window, of A outside its */
    long long gbad = 0;
    const long long oelems = OP == 3 ? m : m * ldo;
    size_t ob = ((size_t)oelems * 4 + 2 * gbytes + 256 + 255) / 256 * 256;
    for (size_t i = 0; i < ob / 4; i++) {
        const long long e = (long long)i - (long long)(gbytes / 4);
        if (e >= 0 && e < oelems) continue;
        if (O[i] != SENT) gbad++;
    }
    printf("%s M=%lld N=%lld LDA=%lld view=%d BLOCK=%d CLUSTER=%d pipe=%d G=%d stream=%d l2=%d offset=%d%s: %lld bad, "
           "max rel %.3g, %lld guard bytes changed, %d threads left copies unwaited\n",
           KNAME, m, n, lda, VIEW, BLOCK, CLUSTER, SMEMPIPE, SMEMPIPE ? PIPE_G : 0, CESTREAM, ROWL2, OFFSET,
#ifdef NEGINF
           " neginf",
#else
           "",
#endif
           bad,
           maxrel, gbad, unwaited.load());
    return bad || gbad || unwaited ? 1 : 0;
}
