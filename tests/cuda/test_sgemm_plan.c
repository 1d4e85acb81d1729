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
 *    a non-thin shape and bad knob values are refused; bf16 gemm never takes gemv;
 *    DUALTIME_GEMM_BK=32 gives v2's 128x128 tile two prefetch phases and dynamic smem.
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
                    for (int vec = 0; vec < 2; vec++) {
                        const int64_t m = mode == 1 ? dims[a] : 1, n = mode == 1 ? 1 : dims[a];
                        const int64_t k = dims[b];
                        if (mode == 2 && n == 1) continue; /* 1x1xK is mode 1 */
                        dt_sgemv_geom g;
                        const int thin = dt_sgemv_geom_make(m, n, k, vec, vec, arch, 132, &g);
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
                                  (g.cl == 1 ? g.kc == k : g.kc % 4 == 0),
                              "%lldx%lldx%lld sm_%d: cl %d kc %lld", (long long)m, (long long)n,
                              (long long)k, arch, g.cl, (long long)g.kc);
                        CHECK(g.block <= 1024 && g.block % g.tpr == 0 && g.block % 32 == 0 &&
                                  (mode == 2 || g.tpr % 32 == 0) &&
                                  (mode == 1 || g.cl == 1 || g.block == 256) &&
                                  (mode == 2 || g.cl == 1 || g.tpr == g.block),
                              "%lldx%lldx%lld: block %d tpr %d cl %d", (long long)m, (long long)n,
                              (long long)k, g.block, g.tpr, g.cl);
                        CHECK(g.vecb == (vec ? 4 : 1) && g.veca == (mode == 1 && vec ? 4 : 1),
                              "vec %d,%d", g.veca, g.vecb);
                    }
    CHECK(cases > 500, "%d thin cases", cases);
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
    /* DUALTIME_GEMM_BK=32: v2's 128x128 tile in two prefetch phases, dynamic smem; the
     * 128x64 tile (1024^3) keeps its depth; the default needs no dynamic smem */
    CHECK(plan(4096, 4096, 4096, 0, DT_F32, &p) == DT_OK && p.shared_bytes == 0, "%u", p.shared_bytes);
    setenv("DUALTIME_GEMM_BK", "32", 1);
    CHECK(plan(4096, 4096, 4096, 0, DT_F32, &p) == DT_OK && has_opt(&p, "-DBK=32") &&
              p.shared_bytes == 2 * 32 * (132 + 128) * 4 && strstr(p.summary, "prefetch-2-phases"),
          "BK=32: %u bytes, %s", p.shared_bytes, p.summary);
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
    /* narrow gemm never takes gemv */
    CHECK(plan(1000, 1, 1000, 0, DT_BF16, &p) == DT_OK && !strstr(p.summary, "gemv"), "bf16: %s",
          p.summary);
}

int main(void) {
    geom_rules();
    geom_invariants();
    plan_choice();
    return dt_check_summary("test_sgemm_plan");
}
