/* test_sgemm_plan.c — the FP32 gemm geometry choice (backend_cuda_plan_sgemm.c, issue 18
 * item 4), without compiling anything (test_nvrtc_compile compiles the kernels):
 *  - dt_sgemv_geom_make: the rules of its comment on hand-worked shapes (1000x1x1000,
 *    1x1000x1000, 4096x1x4096, 16x1x1048576, 1x8192x8192, views, sm_80), and invariants
 *    over a sweep of thin shapes (the grid covers every output, the K slices cover K
 *    exactly, block sizes legal, clusters only on sm_90, at most 8);
 *  - dt_cuda_plan_make: thin FP32 shapes take gemv by default and with
 *    DUALTIME_GEMM_VARIANT=gemv; DUALTIME_GEMM_SHAPE=0 and =v1/v2 keep the tiled kernels;
 *    v2's exact K tail is on where K % BK != 0 and its staged epilogue where C is scalar
 *    (N % 4 != 0), both off with DUALTIME_GEMM_SHAPE=0; gemv on
 *    a non-thin shape and bad knob values are refused;
 *    DUALTIME_GEMM_BK=32 gives v2's 128x128 tile two prefetch phases and dynamic smem;
 *  - bf16 / f16 (narrow_rules, narrow_choice): dt_gemv_geom_make with 16-byte loads of
 *    8 elements on hand-worked shapes (4096x1x4096, 1x4096x4096, 1000x1x1000,
 *    1x1000x1000, 4097x1x4095, 8x1x65544 whose K slices round to 8, views) and the sweep's
 *    invariants at vw 8; thin narrow shapes take gemv (dt_gemv_bf16 / _f16, GV_MODE,
 *    vectors, views and odd K scalar) by default and with DUALTIME_GEMM_VARIANT=gemv;
 *    DUALTIME_GEMM_GEMV_NARROW=0 gives the plan before (tc1 fallback at N == 1, wg3 at
 *    M == 1) and never gemv; tc1 / wg3 asked for keep their kernels; non-thin shapes
 *    never take gemv; gemv forced on them and bad knob values are refused.
 *  - few rows (fewrows_rules, fewrows_choice; session 10): dt_gemv_fewrows_geom_make on
 *    hand-worked shapes and invariants over a sweep; the plan's dtype defaults (FP32 every
 *    M <= 16 at 1 k a step, bf16 / f16 M <= 8 at 8 where the wgmma tiles underfill), the
 *    alignment fallbacks and every knob (DUALTIME_GEMV_MMA unset); v2's split-K over a
 *    cluster (plan_choice).
 *  - bf16 / f16 few rows on the tensor cores (mma_rules, mma_choice; session 19):
 *    dt_gemv_mma_geom_make on hand-worked shapes and invariants over a sweep (sm_80 and
 *    sm_90); opt-in: unset, the plan before; DUALTIME_GEMV_MMA=1 takes gemv_mma.cu for
 *    2 <= M <= 32 (=64: up to 64), vectors only where rows are whole 16-byte chunks; =0
 *    and DUALTIME_GEMM_VARIANT=gemv keep gemv.cu; gemv-mma asked for on f32, M == 1 or 33
 *    rows is refused.
 * Needs no GPU (links the plan objects and NVRTC's library only). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"
#include "backend_cuda_plan_sgemm.h"
#include "backend_cuda_plan.h"

static int has_opt(const dt_cuda_plan *p, const char *opt) {
    for (int i = 0; i < p->nopts; i++)
        if (strcmp(p->opts[i], opt) == 0) return 1;
    return 0;
}

/* plan of an FP32 (or dtype) gemm; returns the status, p filled */
static dt_status plan(int64_t m, int64_t n, int64_t k, int views, dt_dtype dt, dt_cuda_plan *p) {
    dt_case_layout L;
    dt_layout_make_typed(&L, DT_OP_GEMM, m, n, k, views, dt);
    dt_err err = {{0}};
    return dt_cuda_plan_make(&L, "sm_90", 132, p, &err);
}

/* name=value on m x n x k of dtype dt must fail the plan with DT_EINVAL (unset after) */
static void knob_refused(const char *name, const char *value, int64_t m, int64_t n, int64_t k,
                         dt_dtype dt) {
    dt_cuda_plan p;
    setenv(name, value, 1);
    CHECK(plan(m, n, k, 0, dt, &p) == DT_EINVAL, "%s=%s refused (%s %lldx%lldx%lld)", name, value,
          dt_dtype_name(dt), (long long)m, (long long)n, (long long)k);
    unsetenv(name);
}

static void geom_rules(void) {
    dt_sgemv_geom g;
    /* 1000x1x1000: a warp a row (doubling would leave < 4 loads a thread: 1000 < 64*2*16),
     * 8 rows a block halved to 2 while < 264 blocks (125, 250 -> 500) */
    CHECK(dt_sgemv_geom_make(1000, 1, 1000, 1, 1, 90, 132, &g));
    CHECK(g.mode == 1 && g.tpr == 32 && g.block == 64 && g.cl == 1 && g.kc == 1000 &&
              g.grid == 500 && g.veca == 4 && g.vecb == 4,
          "1000x1x1000: mode %d tpr %d block %d cl %d kc %lld grid %lld vec %d,%d", g.mode, g.tpr,
          g.block, g.cl, (long long)g.kc, (long long)g.grid, g.veca, g.vecb);
    /* 1x1000x1000: 32 column threads -> 8 while < 132 column blocks (8, 16, 32), then the
     * cluster doubles while < 264 blocks and each thread keeps >= 2 k-rows: 8 */
    CHECK(dt_sgemv_geom_make(1, 1000, 1000, 0, 1, 90, 132, &g));
    CHECK(g.mode == 2 && g.tpr == 8 && g.block == 256 && g.cl == 8 && g.kc == 128 &&
              g.grid == 256 && g.vecb == 4,
          "1x1000x1000: mode %d ct %d block %d cl %d kc %lld grid %lld", g.mode, g.tpr, g.block,
          g.cl, (long long)g.kc, (long long)g.grid);
    /* 4096x1x4096: 4096 rows x 32 < 135168 threads: 64 threads a row, a block a row */
    CHECK(dt_sgemv_geom_make(4096, 1, 4096, 1, 1, 90, 132, &g));
    CHECK(g.tpr == 64 && g.block == 64 && g.grid == 4096 && g.cl == 1, "4096x1x4096: tpr %d grid %lld",
          g.tpr, (long long)g.grid);
    /* few rows, huge K: 1024 threads a row, K over a cluster of 8 */
    CHECK(dt_sgemv_geom_make(16, 1, 1048576, 1, 1, 90, 132, &g));
    CHECK(g.tpr == 1024 && g.block == 1024 && g.cl == 8 && g.kc == 131072 && g.grid == 128,
          "16x1x1048576: tpr %d cl %d kc %lld grid %lld", g.tpr, g.cl, (long long)g.kc,
          (long long)g.grid);
    /* the same on sm_80: no cluster */
    CHECK(dt_sgemv_geom_make(16, 1, 1048576, 1, 1, 80, 132, &g));
    CHECK(g.cl == 1 && g.kc == 1048576 && g.grid == 16, "sm_80: cl %d", g.cl);
    /* 1x8192x8192: 256 column blocks of 32 columns, one doubling of the cluster */
    CHECK(dt_sgemv_geom_make(1, 8192, 8192, 0, 1, 90, 132, &g));
    CHECK(g.tpr == 8 && g.cl == 2 && g.kc == 4096 && g.grid == 512, "1x8192x8192: ct %d cl %d grid %lld",
          g.tpr, g.cl, (long long)g.grid);
    /* unaligned (views): scalar loads; mode 2 keeps 32 column threads (128-byte lines) */
    CHECK(dt_sgemv_geom_make(1, 1000, 1000, 0, 0, 90, 132, &g));
    CHECK(g.vecb == 1 && g.tpr == 32, "1x1000x1000 view: vecb %d ct %d", g.vecb, g.tpr);
    CHECK(dt_sgemv_geom_make(1000, 1, 1000, 0, 1, 90, 132, &g));
    CHECK(g.veca == 1 && g.vecb == 1, "1000x1x1000 view: vec %d,%d", g.veca, g.vecb);
    /* not thin */
    CHECK(!dt_sgemv_geom_make(2, 2, 1000, 1, 1, 90, 132, &g));
    CHECK(!dt_sgemv_geom_make(4097, 4095, 257, 1, 1, 90, 132, &g));
}

/* invariants over a sweep of thin shapes, both alignments, both arches */
static void geom_invariants(void) {
    static const int64_t dims[] = {1, 2, 3, 7, 31, 64, 127, 1000, 1023, 4096, 8191, 65536, 1000003};
    const int nd = (int)(sizeof dims / sizeof dims[0]);
    int cases = 0;
    for (int arch = 80; arch <= 90; arch += 10)
        for (int a = 0; a < nd; a++)
            for (int b = 0; b < nd; b++)
                for (int mode = 1; mode <= 2; mode++)
                    for (int vec = 0; vec < 4; vec++) {
                        const int vw = vec < 2 ? 4 : 8; /* elements a 16-byte load */
                        const int64_t m = mode == 1 ? dims[a] : 1, n = mode == 1 ? 1 : dims[a];
                        const int64_t k = dims[b];
                        if (mode == 2 && n == 1) continue; /* 1x1xK is mode 1 */
                        dt_sgemv_geom g;
                        const int thin =
                            vw == 4 ? dt_sgemv_geom_make(m, n, k, vec, vec, arch, 132, &g)
                                    : dt_gemv_geom_make(m, n, k, 8, vec & 1, vec & 1, arch, 132, &g);
                        CHECK(thin, "%lldx%lldx%lld thin", (long long)m, (long long)n, (long long)k);
                        if (!thin) continue;
                        cases++;
                        const int64_t groups = g.grid / g.cl;
                        const int64_t covered =
                            mode == 1 ? groups * (g.block / g.tpr) : groups * g.tpr * g.vecb;
                        CHECK(g.mode == mode && g.grid % g.cl == 0 && covered >= (mode == 1 ? m : n) &&
                                  covered - (mode == 1 ? g.block / g.tpr : g.tpr * g.vecb) <
                                      (mode == 1 ? m : n),
                              "%lldx%lldx%lld: grid %lld covers %lld", (long long)m, (long long)n,
                              (long long)k, (long long)g.grid, (long long)covered);
                        CHECK(g.cl >= 1 && g.cl <= 8 && (arch >= 90 || g.cl == 1) &&
                                  (int64_t)(g.cl - 1) * g.kc < k && (int64_t)g.cl * g.kc >= k &&
                                  (g.cl == 1 ? g.kc == k : g.kc % vw == 0),
                              "%lldx%lldx%lld sm_%d: cl %d kc %lld", (long long)m, (long long)n,
                              (long long)k, arch, g.cl, (long long)g.kc);
                        CHECK(g.block <= 1024 && g.block % g.tpr == 0 && g.block % 32 == 0 &&
                                  (mode == 2 || g.tpr % 32 == 0) &&
                                  (mode == 1 || g.cl == 1 || g.block == 256) &&
                                  (mode == 2 || g.cl == 1 || g.tpr == g.block),
                              "%lldx%lldx%lld: block %d tpr %d cl %d", (long long)m, (long long)n,
                              (long long)k, g.block, g.tpr, g.cl);
                        CHECK(g.vecb == (vec & 1 ? vw : 1) && g.veca == (mode == 1 && vec & 1 ? vw : 1),
                              "vw %d: vec %d,%d", vw, g.veca, g.vecb);
                    }
    CHECK(cases > 1000, "%d thin cases", cases);
}

static void plan_choice(void) {
    dt_cuda_plan p;
    unsetenv("DUALTIME_GEMM_VARIANT");
    unsetenv("DUALTIME_GEMM_SHAPE");
    unsetenv("DUALTIME_GEMM_BK");
    for (int views = 0; views < 2; views++) {
        CHECK(plan(1000, 1, 1000, views, DT_F32, &p) == DT_OK && strstr(p.summary, "variant=gemv") &&
                  strcmp(p.source_name, "gemv.cu") == 0 && has_opt(&p, "-DGV_MODE=1"),
              "1000x1x1000 views=%d: %s", views, p.summary);
        CHECK(strstr(p.summary, views ? "vec(a,b)=(1,1)" : "vec(a,b)=(4,4)"), "%s", p.summary);
        CHECK(plan(1, 1000, 1000, views, DT_F32, &p) == DT_OK && has_opt(&p, "-DGV_MODE=2") &&
                  has_opt(&p, "-DCL=8") && p.grid[0] % 8 == 0,
              "1x1000x1000 views=%d: %s", views, p.summary);
        CHECK(plan(1, 1, 1000, views, DT_F32, &p) == DT_OK && has_opt(&p, "-DGV_MODE=1"), "%s",
              p.summary);
        /* small K: v2 with the exact K tail (257 % 16 != 0); none where K % 16 == 0 */
        CHECK(plan(4097, 4095, 257, views, DT_F32, &p) == DT_OK && strstr(p.summary, "variant=v2") &&
                  strstr(p.summary, "ktail-exact") && has_opt(&p, "-DKTAIL_EXACT=1"),
              "4097x4095x257: %s", p.summary);
        CHECK(plan(4096, 4096, 4096, views, DT_F32, &p) == DT_OK && !strstr(p.summary, "ktail") &&
                  !has_opt(&p, "-DKTAIL_EXACT=1"),
              "4096^3: %s", p.summary);
        /* scalar C (N % 4 != 0) takes the staged epilogue; float4 C (4096^3) does not */
        CHECK(!has_opt(&p, "-DEPI_STAGE=1"), "4096^3 views=%d: %s", views, p.summary);
        CHECK(plan(4097, 4095, 257, views, DT_F32, &p) == DT_OK && has_opt(&p, "-DEPI_STAGE=1") &&
                  strstr(p.summary, "epilogue-staged"),
              "4097x4095x257: %s", p.summary);
    }
    /* split-K over a cluster where the tiles leave SMs idle: 4096x64x4096 on the 128x64
     * tile (the split-K tile, session 16: 64x64 would need 4, its 32 tiles over 8 fill 1.8
     * blocks an SM, 256 K-steps); 4096x128x4096 stays on 64x64 over 2 (measured faster
     * than 128x64 over 4); 2048x64x8192 stays on 64x64 (16 tiles of 128x64 over 8 do not
     * fill, 32 of 64x64 over 8 do); 1024^3 (128 tiles of 128x64) over 2; never on
     * the 128x128 tile (4096^3) nor with < 16 K-steps a block after doubling (513x257x129:
     * 9 steps); grid z and the summary say so */
    for (int views = 0; views < 2; views++) {
        CHECK(plan(4096, 64, 4096, views, DT_F32, &p) == DT_OK && has_opt(&p, "-DKSPLIT=8") &&
                  p.grid[2] == 8 && has_opt(&p, "-DBM=128") && has_opt(&p, "-DBN=64") &&
                  strstr(p.summary, "split-k=8") && !has_opt(&p, "-DEPI_STAGE=1"),
              "4096x64x4096 views=%d: %s", views, p.summary);
        CHECK(plan(4096, 128, 4096, views, DT_F32, &p) == DT_OK && has_opt(&p, "-DKSPLIT=2") &&
                  has_opt(&p, "-DBM=64") && has_opt(&p, "-DBN=64"),
              "4096x128x4096 views=%d: %s", views, p.summary);
        CHECK(plan(2048, 64, 8192, views, DT_F32, &p) == DT_OK && has_opt(&p, "-DKSPLIT=8") &&
                  has_opt(&p, "-DBM=64"), "2048x64x8192 views=%d: %s", views, p.summary);
        setenv("DUALTIME_GEMM_SPLIT_TILE", "0", 1); /* the rule before: 64x64 over 4 */
        CHECK(plan(4096, 64, 4096, views, DT_F32, &p) == DT_OK && has_opt(&p, "-DKSPLIT=4") &&
                  p.grid[2] == 4 && has_opt(&p, "-DBM=64") && strstr(p.summary, "split-k=4"),
              "SPLIT_TILE=0 4096x64x4096 views=%d: %s", views, p.summary);
        unsetenv("DUALTIME_GEMM_SPLIT_TILE");
        CHECK(plan(1024, 1024, 1024, views, DT_F32, &p) == DT_OK && has_opt(&p, "-DKSPLIT=2") &&
                  p.grid[2] == 2 && has_opt(&p, "-DBN=64"), "1024^3: %s", p.summary);
        CHECK(plan(4096, 4096, 4096, views, DT_F32, &p) == DT_OK && p.grid[2] == 1 &&
                  !strstr(p.summary, "split-k"), "4096^3: %s", p.summary);
        CHECK(plan(513, 257, 129, views, DT_F32, &p) == DT_OK && p.grid[2] == 1, "%s", p.summary);
        /* N % 4 != 0: split-K's sum stores rows already, no staged epilogue */
        CHECK(plan(200, 70, 3000, views, DT_F32, &p) == DT_OK && has_opt(&p, "-DKSPLIT=8") &&
                  !has_opt(&p, "-DEPI_STAGE=1"), "200x70x3000: %s", p.summary);
    }
    setenv("DUALTIME_GEMM_V2_SPLITK", "1", 1); /* off: the plan before */
    CHECK(plan(4096, 64, 4096, 0, DT_F32, &p) == DT_OK && p.grid[2] == 1 &&
              !has_opt(&p, "-DKSPLIT=4"), "V2_SPLITK=1: %s", p.summary);
    setenv("DUALTIME_GEMM_V2_SPLITK", "8", 1); /* asked for */
    CHECK(plan(4096, 64, 4096, 0, DT_F32, &p) == DT_OK && has_opt(&p, "-DKSPLIT=8") &&
              p.grid[2] == 8, "V2_SPLITK=8: %s", p.summary);
    unsetenv("DUALTIME_GEMM_V2_SPLITK");
    knob_refused("DUALTIME_GEMM_V2_SPLITK", "8", 4096, 4096, 4096, DT_F32); /* the 128x128 tile */
    knob_refused("DUALTIME_GEMM_SPLIT_TILE", "2", 4096, 64, 4096, DT_F32);
    knob_refused("DUALTIME_GEMM_V2_SPLITK", "3", 4096, 64, 4096, DT_F32);
    setenv("DUALTIME_GEMM_SHAPE", "0", 1); /* the geometry before: no split */
    CHECK(plan(4096, 64, 4096, 0, DT_F32, &p) == DT_OK && p.grid[2] == 1, "SHAPE=0: %s", p.summary);
    unsetenv("DUALTIME_GEMM_SHAPE");
    /* DUALTIME_GEMM_BK=32: v2's 128x128 tile in two prefetch phases, dynamic smem (the
     * 128x128 tile keeps the plain A layout unless DUALTIME_GEMM_ASWZ=1: then 3 groups of
     * 8 depths 4 floats further, each buffer); the 128x64 tile (1024^3) keeps its depth
     * and is shifted by default; the default needs no dynamic smem */
    CHECK(plan(4096, 4096, 4096, 0, DT_F32, &p) == DT_OK && p.shared_bytes == 0, "%u", p.shared_bytes);
    setenv("DUALTIME_GEMM_BK", "32", 1);
    CHECK(plan(4096, 4096, 4096, 0, DT_F32, &p) == DT_OK && has_opt(&p, "-DBK=32") &&
              p.shared_bytes == 2 * 32 * (132 + 128) * 4 && has_opt(&p, "-DASWZ=0") &&
              !strstr(p.summary, "a-swizzled") && strstr(p.summary, "prefetch-2-phases"),
          "BK=32: %u bytes, %s", p.shared_bytes, p.summary);
    setenv("DUALTIME_GEMM_ASWZ", "1", 1); /* shifted on 128x128 too: 66656 bytes */
    CHECK(plan(4096, 4096, 4096, 0, DT_F32, &p) == DT_OK && !has_opt(&p, "-DASWZ=0") &&
              p.shared_bytes == (2 * (32 * 132 + 3 * 4) + 2 * 32 * 128) * 4 &&
              strstr(p.summary, "a-swizzled"),
          "BK=32 ASWZ=1: %u bytes, %s", p.shared_bytes, p.summary);
    unsetenv("DUALTIME_GEMM_ASWZ");
    /* the rule: shifted on 128x64 (1024^3) and 64x64 (513x257x129), not on 128x128 */
    CHECK(plan(1024, 1024, 1024, 0, DT_F32, &p) == DT_OK && !has_opt(&p, "-DASWZ=0") &&
              strstr(p.summary, "a-swizzled"), "1024^3: %s", p.summary);
    CHECK(plan(513, 257, 129, 0, DT_F32, &p) == DT_OK && !has_opt(&p, "-DASWZ=0") &&
              strstr(p.summary, "a-swizzled"), "513x257x129: %s", p.summary);
    setenv("DUALTIME_GEMM_ASWZ", "0", 1);
    CHECK(plan(1024, 1024, 1024, 0, DT_F32, &p) == DT_OK && has_opt(&p, "-DASWZ=0") &&
              !strstr(p.summary, "a-swizzled"), "1024^3 ASWZ=0: %s", p.summary);
    unsetenv("DUALTIME_GEMM_ASWZ");
    knob_refused("DUALTIME_GEMM_ASWZ", "on", 4096, 4096, 4096, DT_F32);
    CHECK(plan(1024, 1024, 1024, 0, DT_F32, &p) == DT_OK && has_opt(&p, "-DBK=16") &&
              p.shared_bytes == 0,
          "BK=32 on 1024^3: %s", p.summary);
    setenv("DUALTIME_GEMM_BK", "64", 1);
    CHECK(plan(4096, 4096, 4096, 0, DT_F32, &p) == DT_EINVAL, "DUALTIME_GEMM_BK=64 refused");
    unsetenv("DUALTIME_GEMM_BK");
    /* the geometry before: DUALTIME_GEMM_SHAPE=0 */
    setenv("DUALTIME_GEMM_SHAPE", "0", 1);
    CHECK(plan(1000, 1, 1000, 0, DT_F32, &p) == DT_OK && strstr(p.summary, "variant=v2") &&
              strcmp(p.source_name, "gemm_v2.cu") == 0,
          "SHAPE=0 1000x1x1000: %s", p.summary);
    CHECK(plan(4097, 4095, 257, 0, DT_F32, &p) == DT_OK && !strstr(p.summary, "ktail") &&
              !has_opt(&p, "-DKTAIL_EXACT=1") && !has_opt(&p, "-DEPI_STAGE=1"),
          "SHAPE=0 4097x4095x257: %s", p.summary);
    setenv("DUALTIME_GEMM_VARIANT", "gemv", 1); /* asked for: wins over SHAPE=0 */
    CHECK(plan(1000, 1, 1000, 0, DT_F32, &p) == DT_OK && strstr(p.summary, "variant=gemv"), "%s",
          p.summary);
    unsetenv("DUALTIME_GEMM_SHAPE");
    CHECK(plan(64, 64, 64, 0, DT_F32, &p) == DT_EINVAL, "gemv on 64^3 must be refused");
    /* v1 / v2 asked for: thin shapes stay on them */
    setenv("DUALTIME_GEMM_VARIANT", "v2", 1);
    CHECK(plan(1000, 1, 1000, 0, DT_F32, &p) == DT_OK && strstr(p.summary, "variant=v2"), "%s",
          p.summary);
    setenv("DUALTIME_GEMM_VARIANT", "v1", 1);
    CHECK(plan(1, 1000, 1000, 0, DT_F32, &p) == DT_OK && strstr(p.summary, "variant=v1") &&
              !has_opt(&p, "-DKTAIL_EXACT=1"),
          "%s", p.summary);
    unsetenv("DUALTIME_GEMM_VARIANT");
    /* bad values */
    setenv("DUALTIME_GEMM_SHAPE", "2", 1);
    CHECK(plan(1000, 1, 1000, 0, DT_F32, &p) == DT_EINVAL, "DUALTIME_GEMM_SHAPE=2 refused");
    CHECK(plan(512, 512, 512, 0, DT_F32, &p) == DT_EINVAL, "DUALTIME_GEMM_SHAPE=2 refused (tiled)");
    unsetenv("DUALTIME_GEMM_SHAPE");
}

/* bf16 / f16 geometry: the FP32 rules with a load of 8 elements */
static void narrow_rules(void) {
    dt_sgemv_geom g;
    /* 4096x1x4096: 32 -> 64 threads a row (4096 x 32 < 135168 and 4096 >= 32*2*8*4), a
     * block a row, 8 loads of 8 a thread */
    CHECK(dt_gemv_geom_make(4096, 1, 4096, 8, 1, 1, 90, 132, &g));
    CHECK(g.mode == 1 && g.tpr == 64 && g.block == 64 && g.cl == 1 && g.kc == 4096 &&
              g.grid == 4096 && g.veca == 8 && g.vecb == 8,
          "bf16 4096x1x4096: tpr %d block %d cl %d grid %lld vec %d,%d", g.tpr, g.block, g.cl,
          (long long)g.grid, g.veca, g.vecb);
    /* 1000x1x1000 (1000 % 8 == 0): a warp a row (1000 < 32*2*8*4), 2 rows a block */
    CHECK(dt_gemv_geom_make(1000, 1, 1000, 8, 1, 1, 90, 132, &g));
    CHECK(g.tpr == 32 && g.block == 64 && g.grid == 500 && g.veca == 8 && g.vecb == 8,
          "bf16 1000x1x1000: tpr %d block %d grid %lld", g.tpr, g.block, (long long)g.grid);
    /* 4097x1x4095: odd K, scalar: 64 threads a row (4095 >= 64*... at v 1) */
    CHECK(dt_gemv_geom_make(4097, 1, 4095, 8, 0, 0, 90, 132, &g));
    CHECK(g.tpr == 64 && g.block == 64 && g.grid == 4097 && g.veca == 1 && g.vecb == 1,
          "bf16 4097x1x4095: tpr %d grid %lld vec %d", g.tpr, (long long)g.grid, g.veca);
    /* 1x4096x4096: 32 column threads (256 columns) -> 8 while < 132 column blocks (16,
     * 32 -> 64), then the cluster to 8 (64 x 4 < 264): K slices of 512 */
    CHECK(dt_gemv_geom_make(1, 4096, 4096, 8, 0, 1, 90, 132, &g));
    CHECK(g.mode == 2 && g.tpr == 8 && g.block == 256 && g.cl == 8 && g.kc == 512 &&
              g.grid == 512 && g.veca == 1 && g.vecb == 8,
          "bf16 1x4096x4096: ct %d cl %d kc %lld grid %lld vecb %d", g.tpr, g.cl, (long long)g.kc,
          (long long)g.grid, g.vecb);
    /* 1x1000x1000: 16 column blocks of 64 columns, cluster 8, slices of 128 */
    CHECK(dt_gemv_geom_make(1, 1000, 1000, 8, 0, 1, 90, 132, &g));
    CHECK(g.tpr == 8 && g.cl == 8 && g.kc == 128 && g.grid == 128 && g.vecb == 8,
          "bf16 1x1000x1000: ct %d cl %d kc %lld grid %lld", g.tpr, g.cl, (long long)g.kc,
          (long long)g.grid);
    /* views: scalar, mode 2 keeps 32 column threads */
    CHECK(dt_gemv_geom_make(1, 1000, 1000, 8, 0, 0, 90, 132, &g));
    CHECK(g.vecb == 1 && g.tpr == 32, "bf16 1x1000x1000 view: vecb %d ct %d", g.vecb, g.tpr);
    /* 8x1x65544: 1024 threads a row, cluster 2 (32772 >= 1024*8*4, 16386 not): the K
     * slice rounds up to a multiple of 8 (32776), the FP32 rule's to 4 (32772) */
    CHECK(dt_gemv_geom_make(8, 1, 65544, 8, 1, 1, 90, 132, &g));
    CHECK(g.tpr == 1024 && g.cl == 2 && g.kc == 32776 && g.grid == 16,
          "bf16 8x1x65544: tpr %d cl %d kc %lld grid %lld", g.tpr, g.cl, (long long)g.kc,
          (long long)g.grid);
    CHECK(dt_gemv_geom_make(8, 1, 65544, 4, 1, 1, 90, 132, &g));
    CHECK(g.cl == 4 && g.kc == 16388, "f32 8x1x65544: cl %d kc %lld", g.cl, (long long)g.kc);
    CHECK(!dt_gemv_geom_make(2, 2, 1000, 8, 1, 1, 90, 132, &g));
}

static void narrow_choice(void) {
    dt_cuda_plan p;
    unsetenv("DUALTIME_GEMM_VARIANT");
    unsetenv("DUALTIME_GEMM_SHAPE");
    unsetenv("DUALTIME_GEMM_GEMV_NARROW");
    static const dt_dtype dts[] = {DT_BF16, DT_F16};
    for (int t = 0; t < 2; t++) {
        const dt_dtype dt = dts[t];
        const char *kn = dt == DT_BF16 ? "dt_gemv_bf16" : "dt_gemv_f16";
        for (int views = 0; views < 2; views++) {
            CHECK(plan(4096, 1, 4096, views, dt, &p) == DT_OK && strcmp(p.source_name, "gemv.cu") == 0 &&
                      strcmp(p.kernel_name, kn) == 0 && has_opt(&p, "-DGV_MODE=1") &&
                      has_opt(&p, "-DDT_ELEM=1") == (dt == DT_BF16) &&
                      has_opt(&p, views ? "-DVECA=1" : "-DVECA=8") &&
                      has_opt(&p, views ? "-DVECB=1" : "-DVECB=8") && strstr(p.summary, "variant=gemv"),
                  "%s 4096x1x4096 views=%d: %s", kn, views, p.summary);
            CHECK(plan(1, 4096, 4096, views, dt, &p) == DT_OK && has_opt(&p, "-DGV_MODE=2") &&
                      has_opt(&p, "-DVECA=1") && has_opt(&p, views ? "-DVECB=1" : "-DVECB=8") &&
                      strstr(p.summary, "->f32-acc"),
                  "%s 1x4096x4096 views=%d: %s", kn, views, p.summary);
            CHECK(plan(1000, 1, 1000, views, dt, &p) == DT_OK &&
                      strstr(p.summary, views ? "vec(a,b)=(1,1)" : "vec(a,b)=(8,8)"),
                  "%s 1000x1x1000 views=%d: %s", kn, views, p.summary);
            CHECK(plan(1, 1000, 1000, views, dt, &p) == DT_OK && has_opt(&p, "-DCL=8") &&
                      has_opt(&p, "-DKC=128") && p.grid[0] == (views ? 32u * 8u : 16u * 8u),
                  "%s 1x1000x1000 views=%d: grid %u %s", kn, views, p.grid[0], p.summary);
            /* odd K (A's rows not whole vectors): scalar loads of A */
            CHECK(plan(4097, 1, 4095, views, dt, &p) == DT_OK && has_opt(&p, "-DVECA=1") &&
                      has_opt(&p, "-DVECB=1") && has_opt(&p, "-DGV_MODE=1"),
                  "%s 4097x1x4095 views=%d: %s", kn, views, p.summary);
            /* K % 4 == 0 but K % 8 != 0: scalar for 2-byte types (FP32 would vectorize) */
            CHECK(plan(100, 1, 1004, views, dt, &p) == DT_OK && has_opt(&p, "-DVECA=1"), "%s", p.summary);
            CHECK(plan(1, 1, 1000, views, dt, &p) == DT_OK && has_opt(&p, "-DGV_MODE=1"), "%s", p.summary);
            /* not thin: never gemv */
            CHECK(plan(4096, 4096, 4096, views, dt, &p) == DT_OK && !strstr(p.summary, "gemv"),
                  "%s 4096^3: %s", kn, p.summary);
            CHECK(plan(17, 2, 1000, views, dt, &p) == DT_OK && !strstr(p.summary, "gemv"), "%s", p.summary);
        }
        /* the plan before: DUALTIME_GEMM_GEMV_NARROW=0 (N == 1: B's column has no 16-byte
         * rows, so tc1; M == 1: wg3), never gemv */
        setenv("DUALTIME_GEMM_GEMV_NARROW", "0", 1);
        CHECK(plan(1000, 1, 1000, 0, dt, &p) == DT_OK && !strstr(p.summary, "gemv") &&
                  strstr(p.summary, "variant=tc1 (fallback: B rows"),
              "GEMV_NARROW=0 %s 1000x1x1000: %s", kn, p.summary);
        CHECK(plan(4096, 1, 4096, 0, dt, &p) == DT_OK && strstr(p.summary, "variant=tc1"), "%s",
              p.summary);
        CHECK(plan(1, 4096, 4096, 0, dt, &p) == DT_OK && strstr(p.summary, "variant=wg3"), "%s",
              p.summary);
        setenv("DUALTIME_GEMM_VARIANT", "gemv", 1); /* asked for: wins over the knob */
        CHECK(plan(4096, 1, 4096, 0, dt, &p) == DT_OK && strstr(p.summary, "variant=gemv"), "%s",
              p.summary);
        unsetenv("DUALTIME_GEMM_GEMV_NARROW");
        CHECK(plan(64, 64, 64, 0, dt, &p) == DT_EINVAL, "gemv on narrow 64^3 must be refused");
        setenv("DUALTIME_GEMM_VARIANT", "tc1", 1);
        CHECK(plan(4096, 1, 4096, 0, dt, &p) == DT_OK && strstr(p.summary, "variant=tc1") &&
                  !strstr(p.summary, "fallback"),
              "%s", p.summary);
        setenv("DUALTIME_GEMM_VARIANT", "wg3", 1);
        CHECK(plan(1, 4096, 4096, 0, dt, &p) == DT_OK && strstr(p.summary, "variant=wg3"), "%s",
              p.summary);
        setenv("DUALTIME_GEMM_VARIANT", "v2", 1);
        CHECK(plan(4096, 1, 4096, 0, dt, &p) == DT_EINVAL, "v2 refused for narrow thin");
        unsetenv("DUALTIME_GEMM_VARIANT");
        setenv("DUALTIME_GEMM_GEMV_NARROW", "2", 1);
        CHECK(plan(4096, 1, 4096, 0, dt, &p) == DT_EINVAL, "DUALTIME_GEMM_GEMV_NARROW=2 refused");
        unsetenv("DUALTIME_GEMM_GEMV_NARROW");
    }
    /* the narrow knob does not touch FP32, nor DUALTIME_GEMM_SHAPE narrow */
    setenv("DUALTIME_GEMM_GEMV_NARROW", "0", 1);
    CHECK(plan(1000, 1, 1000, 0, DT_F32, &p) == DT_OK && strstr(p.summary, "variant=gemv") &&
              strcmp(p.kernel_name, "dt_gemv_f32") == 0 && !strstr(p.summary, "f32-acc"),
          "f32 with GEMV_NARROW=0: %s", p.summary);
    unsetenv("DUALTIME_GEMM_GEMV_NARROW");
    setenv("DUALTIME_GEMM_SHAPE", "0", 1);
    CHECK(plan(1000, 1, 1000, 0, DT_BF16, &p) == DT_OK && strstr(p.summary, "variant=gemv"), "%s",
          p.summary);
    unsetenv("DUALTIME_GEMM_SHAPE");
}

/* few rows (2 <= M <= 16): the rules of dt_gemv_fewrows_geom_make on hand-worked shapes,
 * invariants over a sweep, and the plan's choice, knobs and alignment fallbacks */
static void fewrows_rules(void) {
    dt_sgemv_geom g;
    memset(&g, 0, sizeof g);
    /* 8x4096x4096 f32: 16-byte B loads, column threads 32 -> 8 while < 132 column blocks
     * (32, 64, 128); K over a cluster while 128 * cl < 264 and K / (2 cl) >= 32 k-rows x
     * 4 k a step x 4 steps: cl 2 (256 < 264), then 4 -> 512 blocks, KC 1024 */
    CHECK(dt_gemv_fewrows_geom_make(8, 4096, 4096, 4, 4, 1, 90, 132, 16, &g) && g.mode == 2 &&
              g.mr == 8 && g.grid_y == 1 && g.kg == 4 && g.tpr == 8 && g.cl == 4 &&
              g.kc == 1024 && g.grid == 512 && g.vecb == 4 && g.veca == 1,
          "8x4096x4096: mr %d gy %lld tpr %d cl %d kc %lld grid %lld", g.mr, (long long)g.grid_y,
          g.tpr, g.cl, (long long)g.kc, (long long)g.grid);
    /* 16 rows: two groups of 8, so the row groups count in the cluster rule (2 x 128 x 2 >= 264) */
    CHECK(dt_gemv_fewrows_geom_make(16, 4096, 4096, 4, 4, 1, 90, 132, 16, &g) && g.mr == 8 &&
              g.grid_y == 2 && g.cl == 2 && g.grid == 256,
          "16x4096x4096: mr %d gy %lld cl %d", g.mr, (long long)g.grid_y, g.cl);
    /* 13 rows split evenly: 7 + 6; 12: 6 + 6 */
    CHECK(dt_gemv_fewrows_geom_make(13, 260, 64, 4, 2, 1, 90, 132, 16, &g) && g.mr == 7 &&
              g.grid_y == 2, "13 rows: mr %d", g.mr);
    CHECK(dt_gemv_fewrows_geom_make(12, 300, 100, 4, 4, 1, 90, 132, 16, &g) && g.mr == 6 &&
              g.grid_y == 2 && g.cl == 1, "12 rows: mr %d cl %d", g.mr, g.cl);
    /* bf16 8x4096x4096: 8 columns a load, 64 column blocks, clusters up to K / (2 cl) >= 512 */
    CHECK(dt_gemv_fewrows_geom_make(8, 4096, 4096, 8, 4, 1, 90, 132, 16, &g) && g.tpr == 8 &&
              g.vecb == 8 && g.cl == 8 && g.kc == 512 && g.grid == 512,
          "bf16 8x4096x4096: cl %d kc %lld grid %lld", g.cl, (long long)g.kc, (long long)g.grid);
    /* scalar B (odd N) keeps 32 column threads */
    CHECK(dt_gemv_fewrows_geom_make(5, 1003, 257, 4, 1, 0, 90, 132, 16, &g) && g.tpr == 32 &&
              g.vecb == 1 && g.mr == 5 && g.cl == 8 && g.kc == 36, "5x1003x257: tpr %d cl %d kc %lld",
          g.tpr, g.cl, (long long)g.kc);
    /* sm_80: no clusters */
    CHECK(dt_gemv_fewrows_geom_make(8, 4096, 4096, 4, 4, 1, 80, 132, 16, &g) && g.cl == 1 &&
              g.kc == 4096, "sm_80: cl %d", g.cl);
    /* not few rows: M = 1 (thin), M above the limit, N = 1 */
    CHECK(!dt_gemv_fewrows_geom_make(1, 4096, 4096, 4, 4, 1, 90, 132, 16, &g), "M = 1");
    CHECK(!dt_gemv_fewrows_geom_make(17, 4096, 4096, 4, 4, 1, 90, 132, 16, &g), "M = 17");
    CHECK(!dt_gemv_fewrows_geom_make(8, 1, 4096, 4, 4, 1, 90, 132, 16, &g), "N = 1");
    CHECK(!dt_gemv_fewrows_geom_make(8, 4096, 4096, 4, 4, 1, 90, 132, 0, &g), "off");
    /* invariants: rows and columns covered, K slices cover K, KC a multiple of the vector */
    static const int64_t dims[] = {2, 3, 7, 8, 9, 16, 31, 64, 127, 1000, 4096, 65537};
    const int nd = (int)(sizeof dims / sizeof dims[0]);
    int cases = 0;
    for (int arch = 80; arch <= 90; arch += 10)
        for (int a = 0; a < 6; a++)
            for (int b = 0; b < nd; b++)
                for (int c = 0; c < nd; c++)
                    for (int vw = 4; vw <= 8; vw += 4)
                        for (int kg = 1; kg <= 4; kg *= 2) {
                            const int64_t m = dims[a], n = dims[b], k = dims[c];
                            CHECK(dt_gemv_fewrows_geom_make(m, n, k, vw, kg, 1, arch, 132, 16, &g),
                                  "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
                            cases++;
                            const int64_t cols = g.grid / g.cl * g.tpr * g.vecb;
                            CHECK(g.mr * g.grid_y >= m && (g.grid_y - 1) * g.mr < m && g.mr <= 8 &&
                                      g.mr <= m && cols >= n && cols - g.tpr * g.vecb < n &&
                                      g.grid % g.cl == 0 && g.kg == kg,
                                  "%lldx%lldx%lld: mr %d gy %lld cols %lld", (long long)m,
                                  (long long)n, (long long)k, g.mr, (long long)g.grid_y,
                                  (long long)cols);
                            CHECK(g.cl >= 1 && g.cl <= 8 && (arch >= 90 || g.cl == 1) &&
                                      (int64_t)(g.cl - 1) * g.kc < k && (int64_t)g.cl * g.kc >= k &&
                                      (g.cl == 1 ? g.kc == k : g.kc % vw == 0),
                                  "%lldx%lldx%lld sm_%d: cl %d kc %lld", (long long)m,
                                  (long long)n, (long long)k, arch, g.cl, (long long)g.kc);
                        }
    CHECK(cases > 1000, "%d few-rows cases", cases);
}

/* bf16 / f16 few rows on the tensor cores (gemv_mma.cu, session 19): the rules of
 * dt_gemv_mma_geom_make on hand-worked shapes, then invariants over a sweep (what the
 * kernel's #error lines and its loops need) */
static void mma_rules(void) {
    dt_gemv_mma_geom g;
    /* 8x4096x4096 on 132 SMs: 64 strips, 128 steps; 2112 warps / 64 = 33 a strip -> 4
     * steps a warp, 32 warps: 8 a block x a cluster of 4, K 1024 a block */
    CHECK(dt_gemv_mma_geom_make(8, 4096, 4096, 90, 132, 32, &g) && g.warps == 8 && g.cl == 4 &&
              g.kc == 1024 && g.mg == 1 && g.grid == 256 && g.grid_y == 1,
          "8x4096x4096: warps %d cl %d kc %lld mg %d grid %lld", g.warps, g.cl, (long long)g.kc,
          g.mg, (long long)g.grid);
    /* 13x1000x1000: 2 row groups in one block; 16 strips, 32 steps: at most 16 warps a
     * strip (2 steps each): 8 a block x 2 */
    CHECK(dt_gemv_mma_geom_make(13, 1000, 1000, 90, 132, 32, &g) && g.mg == 2 && g.grid_y == 1 &&
              g.warps == 8 && g.cl == 2 && g.kc == 512 && g.grid == 32,
          "13x1000x1000: warps %d cl %d kc %lld mg %d", g.warps, g.cl, (long long)g.kc, g.mg);
    CHECK(dt_gemv_mma_geom_make(32, 4096, 4096, 90, 132, 32, &g) && g.mg == 4 && g.grid_y == 1,
          "32 rows: mg %d", g.mg);
    CHECK(dt_gemv_mma_geom_make(40, 4096, 4096, 90, 132, 64, &g) && g.mg == 4 && g.grid_y == 2,
          "40 rows: mg %d grid_y %lld", g.mg, (long long)g.grid_y);
    CHECK(!dt_gemv_mma_geom_make(1, 4096, 4096, 90, 132, 32, &g), "M == 1 is gemv's");
    CHECK(!dt_gemv_mma_geom_make(8, 1, 4096, 90, 132, 32, &g), "N == 1 is gemv's");
    CHECK(!dt_gemv_mma_geom_make(33, 4096, 4096, 90, 132, 32, &g), "33 rows over the limit");
    CHECK(!dt_gemv_mma_geom_make(8, 4096, 4096, 75, 132, 32, &g), "no bf16 mma before sm_80");
    /* sm_80: no clusters, up to 16 warps a block */
    CHECK(dt_gemv_mma_geom_make(8, 4096, 4096, 80, 108, 32, &g) && g.cl == 1 && g.warps == 16 &&
              g.kc >= 4096,
          "sm_80: warps %d cl %d kc %lld", g.warps, g.cl, (long long)g.kc);
    static const int64_t ns[] = {2, 7, 63, 64, 65, 1000, 4096, 14336};
    static const int64_t ks[] = {1, 8, 31, 32, 33, 257, 1000, 4096, 65536};
    int cases = 0;
    for (int arch = 80; arch <= 90; arch += 10)
        for (int64_t m = 2; m <= 40; m++)
            for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
                for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++) {
                    const int64_t n = ns[a], k = ks[b];
                    if (!dt_gemv_mma_geom_make(m, n, k, arch, 132, 40, &g)) {
                        CHECK(0, "%lldx%lldx%lld sm_%d not taken", (long long)m, (long long)n,
                              (long long)k, arch);
                        continue;
                    }
                    cases++;
                    const int64_t steps_block = g.kc / 32;
                    CHECK(g.mg >= 1 && g.mg <= 4 && (g.grid_y == 1 || g.mg == 4) &&
                              8 * g.mg * g.grid_y >= m && 8 * g.mg * (g.grid_y - 1) < m &&
                              g.warps >= 1 && g.warps <= (arch >= 90 ? 8 : 16) && g.cl >= 1 &&
                              g.cl <= 8 && (arch >= 90 || g.cl == 1) && g.kc % 32 == 0 &&
                              g.kc >= 32 && (int64_t)(g.cl - 1) * g.kc < k &&
                              (int64_t)g.cl * g.kc >= k && steps_block % g.warps == 0 &&
                              g.grid == (n + 63) / 64 * g.cl,
                          "%lldx%lldx%lld sm_%d: warps %d cl %d kc %lld mg %d grid %lld x %lld",
                          (long long)m, (long long)n, (long long)k, arch, g.warps, g.cl,
                          (long long)g.kc, g.mg, (long long)g.grid, (long long)g.grid_y);
                }
    CHECK(cases > 1000, "%d mma cases", cases);
}

static void mma_choice(void) {
    dt_cuda_plan p;
    unsetenv("DUALTIME_GEMM_VARIANT");
    /* opt-in (not yet timed on a GPU): unset, the plan before */
    unsetenv("DUALTIME_GEMV_MMA");
    CHECK(plan(8, 4096, 4096, 0, DT_BF16, &p) == DT_OK && strcmp(p.source_name, "gemv.cu") == 0,
          "GEMV_MMA unset: %s", p.summary);
    CHECK(plan(17, 2, 1000, 0, DT_BF16, &p) == DT_OK && !strstr(p.summary, "gemv"),
          "GEMV_MMA unset: %s", p.summary);
    setenv("DUALTIME_GEMV_MMA", "1", 1);
    static const dt_dtype dts[] = {DT_BF16, DT_F16};
    for (int t = 0; t < 2; t++) {
        const dt_dtype dt = dts[t];
        const char *elem = dt == DT_BF16 ? "-DDT_ELEM=1" : "-DDT_ELEM=2";
        for (int views = 0; views < 2; views++) {
            CHECK(plan(8, 4096, 4096, views, dt, &p) == DT_OK &&
                      strcmp(p.source_name, "gemv_mma.cu") == 0 && has_opt(&p, elem) &&
                      strstr(p.kernel_name, "dt_gemv_mma_") && has_opt(&p, "-DWARPS=8") &&
                      has_opt(&p, "-DCL=4") && has_opt(&p, "-DKC=1024") && has_opt(&p, "-DMG=1") &&
                      has_opt(&p, views ? "-DVECA=0" : "-DVECA=1") &&
                      has_opt(&p, views ? "-DVECB=0" : "-DVECB=1") && p.grid[0] == 256 &&
                      p.grid[1] == 1 && p.block[0] == 256 && strstr(p.summary, "variant=gemv-mma"),
                  "%s 8x4096x4096 views=%d: %s", dt_dtype_name(dt), views, p.summary);
            /* every M from 2 to 32, odd N and K: scalar loads where a row is not whole
             * 16-byte chunks */
            CHECK(plan(4, 1024, 1026, views, dt, &p) == DT_OK && has_opt(&p, "-DVECA=0") &&
                      has_opt(&p, views ? "-DVECB=0" : "-DVECB=1"),
                  "%s 4x1024x1026: %s", dt_dtype_name(dt), p.summary);
            CHECK(plan(32, 1003, 257, views, dt, &p) == DT_OK && has_opt(&p, "-DMG=4") &&
                      has_opt(&p, "-DVECB=0"),
                  "%s 32x1003x257: %s", dt_dtype_name(dt), p.summary);
            CHECK(plan(2, 14336, 4096, views, dt, &p) == DT_OK &&
                      strcmp(p.source_name, "gemv_mma.cu") == 0,
                  "%s 2x14336x4096: %s", dt_dtype_name(dt), p.summary);
            CHECK(plan(33, 4096, 4096, views, dt, &p) == DT_OK && !strstr(p.summary, "gemv"),
                  "%s 33 rows: the tiles: %s", dt_dtype_name(dt), p.summary);
            CHECK(plan(1, 4096, 4096, views, dt, &p) == DT_OK && strcmp(p.source_name, "gemv.cu") == 0,
                  "%s M == 1: gemv: %s", dt_dtype_name(dt), p.summary);
            CHECK(plan(8, 1, 4096, views, dt, &p) == DT_OK && strcmp(p.source_name, "gemv.cu") == 0,
                  "%s N == 1: gemv: %s", dt_dtype_name(dt), p.summary);
        }
        /* =0: the plan before (gemv.cu's few rows where the tiles underfill) */
        setenv("DUALTIME_GEMV_MMA", "0", 1);
        CHECK(plan(8, 4096, 4096, 0, dt, &p) == DT_OK && strcmp(p.source_name, "gemv.cu") == 0 &&
                  strstr(p.summary, "few-rows"),
              "GEMV_MMA=0: %s", p.summary);
        CHECK(plan(16, 4096, 4096, 0, dt, &p) == DT_OK && !strstr(p.summary, "gemv"),
              "GEMV_MMA=0 16 rows: %s", p.summary);
        /* a rows limit: 64 rows in two row blocks of 32 */
        setenv("DUALTIME_GEMV_MMA", "64", 1);
        CHECK(plan(64, 4096, 4096, 0, dt, &p) == DT_OK && has_opt(&p, "-DMG=4") && p.grid[1] == 2,
              "GEMV_MMA=64: %s", p.summary);
        CHECK(plan(65, 4096, 4096, 0, dt, &p) == DT_OK && !strstr(p.summary, "gemv"),
              "GEMV_MMA=64, 65 rows: %s", p.summary);
        setenv("DUALTIME_GEMV_MMA", "1", 1);
        knob_refused("DUALTIME_GEMV_MMA", "129", 8, 4096, 4096, dt);
        knob_refused("DUALTIME_GEMV_MMA", "x", 8, 4096, 4096, dt);
        setenv("DUALTIME_GEMV_MMA", "1", 1);
        /* asked for: taken where M allows (the knob off does not matter), refused elsewhere */
        setenv("DUALTIME_GEMM_VARIANT", "gemv-mma", 1);
        setenv("DUALTIME_GEMV_MMA", "0", 1);
        CHECK(plan(16, 4096, 4096, 0, dt, &p) == DT_OK && strstr(p.summary, "variant=gemv-mma"),
              "gemv-mma asked for: %s", p.summary);
        setenv("DUALTIME_GEMV_MMA", "1", 1);
        CHECK(plan(33, 4096, 4096, 0, dt, &p) == DT_EINVAL, "gemv-mma on 33 rows refused");
        CHECK(plan(1, 4096, 4096, 0, dt, &p) == DT_EINVAL, "gemv-mma on M == 1 refused");
        /* gemv asked for: the FFMA few rows */
        setenv("DUALTIME_GEMM_VARIANT", "gemv", 1);
        CHECK(plan(8, 4096, 4096, 0, dt, &p) == DT_OK && strcmp(p.source_name, "gemv.cu") == 0,
              "gemv asked for: %s", p.summary);
        unsetenv("DUALTIME_GEMM_VARIANT");
        /* sm_80: no cluster */
        dt_case_layout L;
        dt_layout_make_typed(&L, DT_OP_GEMM, 8, 4096, 4096, 0, dt);
        dt_err err = {{0}};
        CHECK(dt_cuda_plan_make(&L, "sm_80", 108, &p, &err) == DT_OK && has_opt(&p, "-DCL=1") &&
                  strcmp(p.source_name, "gemv_mma.cu") == 0,
              "sm_80: %s", p.summary);
    }
    unsetenv("DUALTIME_GEMV_MMA");
    /* the GPU test's few-rows table (test_cuda_backend gemv_narrow_table) plans as it asks:
     * gemv-mma on every shape, gemv up to 8 rows */
    static const int64_t fr[][4] = {{8, 4096, 4096, 0}, {16, 4096, 4096, 0}, {2, 4096, 4096, 0},
                                    {13, 1000, 1000, 0}, {8, 4096, 4096, 1}, {5, 1003, 257, 1},
                                    {32, 4096, 4096, 0}, {4, 14336, 4096, 0}};
    for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++)
        for (int t = 0; t < 2; t++) {
            setenv("DUALTIME_GEMM_VARIANT", "gemv-mma", 1);
            CHECK(plan(fr[i][0], fr[i][1], fr[i][2], (int)fr[i][3], dts[t], &p) == DT_OK &&
                      strcmp(p.source_name, "gemv_mma.cu") == 0,
                  "table gemv-mma %lld rows: %s", (long long)fr[i][0], p.summary);
            setenv("DUALTIME_GEMM_VARIANT", "gemv", 1);
            if (fr[i][0] <= 8)
                CHECK(plan(fr[i][0], fr[i][1], fr[i][2], (int)fr[i][3], dts[t], &p) == DT_OK &&
                          strcmp(p.source_name, "gemv.cu") == 0,
                      "table gemv %lld rows: %s", (long long)fr[i][0], p.summary);
        }
    setenv("DUALTIME_GEMM_VARIANT", "gemv-mma", 1);
    CHECK(plan(8, 4096, 4096, 0, DT_F32, &p) == DT_EINVAL, "gemv-mma on f32 refused");
    unsetenv("DUALTIME_GEMM_VARIANT");
    CHECK(plan(8, 4096, 4096, 0, DT_F32, &p) == DT_OK && strcmp(p.source_name, "gemv.cu") == 0,
          "f32 few rows stay FFMA: %s", p.summary);
}

static void fewrows_choice(void) {
    dt_cuda_plan p;
    /* the FFMA few rows of bf16 / f16 (the default while DUALTIME_GEMV_MMA is opt-in) */
    unsetenv("DUALTIME_GEMV_MMA");
    unsetenv("DUALTIME_GEMM_VARIANT");
    unsetenv("DUALTIME_GEMM_SHAPE");
    unsetenv("DUALTIME_GEMM_GEMV_NARROW");
    unsetenv("DUALTIME_GEMM_FEWROWS");
    unsetenv("DUALTIME_GEMV_KG");
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    for (int t = 0; t < 3; t++) {
        const dt_dtype dt = dts[t];
        for (int views = 0; views < 2; views++) {
            const int f32 = dt == DT_F32;
            /* aligned: FP32 1 k a step, bf16 / f16 8 (16 bytes); a view: 1 */
            CHECK(plan(8, 4096, 4096, views, dt, &p) == DT_OK && strcmp(p.source_name, "gemv.cu") == 0 &&
                      has_opt(&p, "-DGV_MODE=2") && has_opt(&p, "-DGV_MR=8") &&
                      has_opt(&p, views || f32 ? "-DGV_KG=1" : "-DGV_KG=8") && p.grid[1] == 1 &&
                      strstr(p.summary, "few-rows") && strstr(p.summary, "rows/block=8") &&
                      !has_opt(&p, "-DGV_CH=1"),
                  "%s 8x4096x4096 views=%d: %s", dt_dtype_name(dt), views, p.summary);
            /* 16 rows: FP32 two row groups; bf16 / f16 only up to 8 rows, the tiles */
            CHECK(plan(16, 1000, 1000, views, dt, &p) == DT_OK &&
                      (f32 ? has_opt(&p, "-DGV_MR=8") && p.grid[1] == 2 : !strstr(p.summary, "gemv")),
                  "%s 16x1000x1000: %s", dt_dtype_name(dt), p.summary);
            /* K % 8 != 0 but even (bf16 / f16): 2 k a step where aligned */
            CHECK(plan(4, 1024, 1026, views, dt, &p) == DT_OK &&
                      has_opt(&p, views || f32 ? "-DGV_KG=1" : "-DGV_KG=2"),
                  "%s 4x1024x1026 views=%d: %s", dt_dtype_name(dt), views, p.summary);
            CHECK(plan(17, 4096, 4096, views, dt, &p) == DT_OK && !strstr(p.summary, "gemv"),
                  "%s 17 rows: %s", dt_dtype_name(dt), p.summary);
            /* bf16 / f16: not where the wgmma tiles fill the GPU (4x14336: 224 tiles of
             * 128x64 >= 66); FP32 there too */
            CHECK(plan(4, 14336, 4096, views, dt, &p) == DT_OK &&
                      (f32 ? strstr(p.summary, "few-rows") != NULL : !strstr(p.summary, "gemv")),
                  "%s 4x14336x4096: %s", dt_dtype_name(dt), p.summary);
            CHECK(plan(2, 4096, 4096, views, dt, &p) == DT_OK && strstr(p.summary, "few-rows"),
                  "%s 2x4096x4096: %s", dt_dtype_name(dt), p.summary);
        }
        /* asked for: every M up to the knob in every dtype, the fill rule off */
        setenv("DUALTIME_GEMM_FEWROWS", "16", 1);
        CHECK(plan(16, 1000, 1000, 0, dt, &p) == DT_OK && has_opt(&p, "-DGV_MR=8") && p.grid[1] == 2,
              "FEWROWS=16 %s 16x1000x1000: %s", dt_dtype_name(dt), p.summary);
        CHECK(plan(4, 14336, 4096, 0, dt, &p) == DT_OK && strstr(p.summary, "few-rows"),
              "FEWROWS=16 %s 4x14336x4096: %s", dt_dtype_name(dt), p.summary);
        unsetenv("DUALTIME_GEMM_FEWROWS");
        /* the A/B knobs: fewest column threads, steps at once */
        setenv("DUALTIME_GEMV_CTMIN", "32", 1);
        setenv("DUALTIME_GEMV_CH", "4", 1);
        CHECK(plan(8, 4096, 4096, 0, dt, &p) == DT_OK && has_opt(&p, "-DTPR=32") &&
                  has_opt(&p, "-DGV_CH=4"),
              "CTMIN=32 CH=4 %s: %s", dt_dtype_name(dt), p.summary);
        unsetenv("DUALTIME_GEMV_CTMIN");
        unsetenv("DUALTIME_GEMV_CH");
        knob_refused("DUALTIME_GEMV_CTMIN", "12", 8, 4096, 4096, dt);
        knob_refused("DUALTIME_GEMV_CH", "9", 8, 4096, 4096, dt);
        /* knobs: the rows limit, the k a step, off */
        setenv("DUALTIME_GEMM_FEWROWS", "32", 1);
        CHECK(plan(24, 4096, 4096, 0, dt, &p) == DT_OK && has_opt(&p, "-DGV_MR=8") && p.grid[1] == 3,
              "FEWROWS=32, 24 rows: %s", p.summary);
        setenv("DUALTIME_GEMM_FEWROWS", "0", 1);
        CHECK(plan(8, 4096, 4096, 0, dt, &p) == DT_OK && !strstr(p.summary, "gemv"), "FEWROWS=0: %s",
              p.summary);
        CHECK(plan(1, 4096, 4096, 0, dt, &p) == DT_OK && strstr(p.summary, "variant=gemv"),
              "FEWROWS=0 keeps M == 1: %s", p.summary);
        setenv("DUALTIME_GEMM_VARIANT", "gemv", 1); /* asked for: the default limit */
        CHECK(plan(8, 4096, 4096, 0, dt, &p) == DT_OK && strstr(p.summary, "few-rows"), "%s", p.summary);
        CHECK(plan(17, 4096, 4096, 0, dt, &p) == DT_EINVAL, "gemv forced on 17 rows refused");
        unsetenv("DUALTIME_GEMM_VARIANT");
        unsetenv("DUALTIME_GEMM_FEWROWS");
        setenv("DUALTIME_GEMV_KG", "1", 1);
        CHECK(plan(8, 4096, 4096, 0, dt, &p) == DT_OK && has_opt(&p, "-DGV_KG=1"), "KG=1: %s", p.summary);
        setenv("DUALTIME_GEMV_KG", "4", 1);
        CHECK(plan(8, 4096, 4096, 0, dt, &p) == DT_OK && has_opt(&p, "-DGV_KG=4"), "KG=4: %s", p.summary);
        setenv("DUALTIME_GEMV_KG", "8", 1); /* 32 bytes of f32 is more than a load: 4 */
        CHECK(plan(8, 4096, 4096, 0, dt, &p) == DT_OK &&
                  has_opt(&p, dt == DT_F32 ? "-DGV_KG=4" : "-DGV_KG=8"),
              "KG=8: %s", p.summary);
        unsetenv("DUALTIME_GEMV_KG");
        knob_refused("DUALTIME_GEMV_KG", "3", 8, 4096, 4096, dt);
        knob_refused("DUALTIME_GEMM_FEWROWS", "65", 8, 4096, 4096, dt);
    }
    /* DUALTIME_GEMM_SHAPE=0 (f32) and GEMV_NARROW=0 (bf16) keep the tiles */
    setenv("DUALTIME_GEMM_SHAPE", "0", 1);
    CHECK(plan(8, 4096, 4096, 0, DT_F32, &p) == DT_OK && strstr(p.summary, "variant=v2"), "%s", p.summary);
    unsetenv("DUALTIME_GEMM_SHAPE");
    setenv("DUALTIME_GEMM_GEMV_NARROW", "0", 1);
    CHECK(plan(8, 4096, 4096, 0, DT_BF16, &p) == DT_OK && !strstr(p.summary, "gemv"), "%s", p.summary);
    unsetenv("DUALTIME_GEMM_GEMV_NARROW");
    unsetenv("DUALTIME_GEMV_MMA");
}

int main(void) {
    mma_rules();
    mma_choice();
    fewrows_rules();
    fewrows_choice();
    geom_rules();
    geom_invariants();
    plan_choice();
    narrow_rules();
    narrow_choice();
    return dt_check_summary("test_sgemm_plan");
}
