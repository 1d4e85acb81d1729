/* test_gemm_geom.c — the tile width of the bf16/f16 wgmma gemm chosen from the shape
 * (workers/native/dt_gemm_geom.h) and its plan (dt_cuda_plan_make: tile, grid, stages,
 * shared memory, DUALTIME_GEMM_FILL / DUALTIME_GEMM_BN / DUALTIME_GEMM_SPLITK and the
 * split-K workspace; wg3's TMA-store epilogue boxes and output tensor map,
 * DUALTIME_GEMM_STAGES; wg4's clusters of two), without compiling anything.
 * Expected values are worked out by hand from the model in dt_gemm_geom.h (k-block
 * clocks = max(4*BN, 256 + 2*BN): 1024 for BN 256, 512 for 128, 384 for 64). Needs no
 * GPU and no NVRTC call. Run: ./test_gemm_geom */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dt_check.h"
#include "backend_cuda_plan.h"
#include "dt_gemm_geom.h"

static void choose_cases(void) {
    static const struct { int64_t m, n; int sms, fill, bn; int64_t tiles, waves, cost; } c[] = {
        /* 1024^3: 32 / 64 / 128 tiles, one wave each: 1024 / 512 / 384 clk -> 64 */
        {1024, 1024, 132, 1, 64, 128, 1, 384},
        {1024, 1024, 132, 0, 128, 64, 1, 512},   /* the rule before: 32 < 132 -> 128 */
        /* 4096^3: 512 tiles 4 waves (4096) vs 1024 tiles 8 waves (4096): tie -> 256 */
        {4096, 4096, 132, 1, 256, 512, 4, 4096},
        {4096, 4096, 132, 0, 256, 512, 4, 4096},
        /* 8192^3: 2048 tiles 16 waves (16384) vs 4096 tiles 32 waves (16384) -> 256 */
        {8192, 8192, 132, 1, 256, 2048, 16, 16384},
        /* 1000x1048: 40 / 72 / 136 tiles; 136 needs 2 waves (768) -> 128 (512) */
        {1000, 1048, 132, 1, 128, 72, 1, 512},
        /* 128x128 (one row tile): 1 / 1 / 2 tiles, one wave -> 64 (384) */
        {128, 128, 132, 1, 64, 2, 1, 384},
        /* sm_count <= 0 means 132 */
        {1024, 1024, 0, 1, 64, 128, 1, 384},
        /* a smaller GPU (16 SMs), 1024^2: 32 tiles of 256 (2 waves, 2048), 64 of 128
         * (4 waves, 2048), 128 of 64 (8 waves, 3072) -> 256 */
        {1024, 1024, 16, 1, 256, 32, 2, 2048},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const dt_gemm_geom g = dt_gemm_geom_choose(c[i].m, c[i].n, c[i].sms, c[i].fill);
        CHECK(g.bn == c[i].bn && g.tiles == c[i].tiles && g.waves == c[i].waves &&
                  g.cost_clk == c[i].cost,
              "%lldx%lld sms %d fill %d: bn %d tiles %lld waves %lld cost %lld (want %d %lld "
              "%lld %lld)", (long long)c[i].m, (long long)c[i].n, c[i].sms, c[i].fill, g.bn,
              (long long)g.tiles, (long long)g.waves, (long long)g.cost_clk, c[i].bn,
              (long long)c[i].tiles, (long long)c[i].waves, (long long)c[i].cost);
    }
    const dt_gemm_geom g = dt_gemm_geom_of(4097, 4095, 132, 64); /* 33 x 64 = 2112 = 16 x 132 tiles */
    CHECK(g.tiles == 33 * 64 && g.waves == 16 && g.kblk_clk == 384, "of 4097x4095 bn 64: %lld %lld %lld",
          (long long)g.tiles, (long long)g.waves, (long long)g.kblk_clk);
}

/* plan of a contiguous bf16 gemm m x n x k on sm_90 with 132 SMs; 0 on a refusal */
static int plan(int64_t m, int64_t n, int64_t k, dt_cuda_plan *p, dt_err *err) {
    dt_case_layout L;
    dt_layout_make_typed(&L, DT_OP_GEMM, m, n, k, 0, DT_BF16);
    return dt_cuda_plan_make(&L, "sm_90", 132, p, err) == DT_OK;
}

static int has_opt(const dt_cuda_plan *p, const char *opt) {
    for (int i = 0; i < p->nopts; i++)
        if (strcmp(p->opts[i], opt) == 0) return 1;
    return 0;
}

static void plan_cases(void) {
    dt_cuda_plan p;
    dt_err err = {{0}};
    unsetenv("DUALTIME_GEMM_VARIANT");
    unsetenv("DUALTIME_GEMM_BN");
    unsetenv("DUALTIME_GEMM_FILL");
    /* the default variant is wg3 (the TMA-store epilogue; its boxes are checked in
     * wg3_cases); the tile geometry below is wg1's, which wg3 shares */
    REQUIRE(plan(1024, 1024, 1024, &p, &err), "plan 1024^3 default variant: %s", err.msg);
    CHECK(strcmp(p.kernel_name, "dt_gemm_wg3_bf16") == 0 && has_opt(&p, "-DWG_EPI_TMA=1") &&
              has_opt(&p, "-DBN=64") && strstr(p.summary, "variant=wg3"),
          "default variant 1024^3: %s %s", p.kernel_name, p.summary);
    setenv("DUALTIME_GEMM_VARIANT", "wg1", 1);
    /* wg1 1024^3: BN 64, 8 stages of 24 KiB (+1 KiB alignment + 8 mbarrier pairs) */
    REQUIRE(plan(1024, 1024, 1024, &p, &err), "plan 1024^3: %s", err.msg);
    CHECK(has_opt(&p, "-DBN=64") && has_opt(&p, "-DSTAGES=8") && p.grid[0] == 128 &&
              p.shared_bytes == 8u * 24576 + 1024 + 16 * 8 && strstr(p.summary, "fill=1 waves=1"),
          "1024^3 default: grid %u smem %u summary %s", p.grid[0], p.shared_bytes, p.summary);
    setenv("DUALTIME_GEMM_FILL", "0", 1);
    REQUIRE(plan(1024, 1024, 1024, &p, &err), "plan 1024^3 fill 0: %s", err.msg);
    CHECK(has_opt(&p, "-DBN=128") && has_opt(&p, "-DSTAGES=6") && p.grid[0] == 64 &&
              strstr(p.summary, "fill=0"),
          "1024^3 fill 0: grid %u summary %s", p.grid[0], p.summary);
    unsetenv("DUALTIME_GEMM_FILL");
    REQUIRE(plan(4096, 4096, 4096, &p, &err), "plan 4096^3: %s", err.msg);
    CHECK(has_opt(&p, "-DBN=256") && has_opt(&p, "-DSTAGES=4") && p.grid[0] == 132,
          "4096^3 default: grid %u summary %s", p.grid[0], p.summary);
    setenv("DUALTIME_GEMM_BN", "64", 1);
    REQUIRE(plan(4096, 4096, 4096, &p, &err), "plan 4096^3 bn 64: %s", err.msg);
    CHECK(has_opt(&p, "-DBN=64") && strstr(p.summary, "2048 tiles"), "4096^3 BN=64: %s", p.summary);
    setenv("DUALTIME_GEMM_BN", "48", 1);
    CHECK(!plan(1024, 1024, 1024, &p, &err) && strstr(err.msg, "DUALTIME_GEMM_BN"),
          "BN=48 not refused: %s", err.msg);
    unsetenv("DUALTIME_GEMM_BN");
    setenv("DUALTIME_GEMM_FILL", "yes", 1);
    CHECK(!plan(1024, 1024, 1024, &p, &err) && strstr(err.msg, "DUALTIME_GEMM_FILL"),
          "FILL=yes not refused: %s", err.msg);
    unsetenv("DUALTIME_GEMM_FILL");
    /* split-K 2 (opt-in): 1024^3 takes 64 tiles of 128 x 128, 128 units on an even grid,
     * a workspace of 64 x 64 KiB of partials + 64 flags */
    setenv("DUALTIME_GEMM_SPLITK", "2", 1);
    REQUIRE(plan(1024, 1024, 1024, &p, &err), "plan 1024^3 splitk: %s", err.msg);
    CHECK(has_opt(&p, "-DBN=128") && has_opt(&p, "-DWG_SPLITK=2") && p.grid[0] == 128 &&
              p.workspace_flags_offset == 64ull * 128 * 128 * 4 &&
              p.workspace_bytes == 64ull * 128 * 128 * 4 + 64 * 4 && strstr(p.summary, "splitk=2"),
          "1024^3 splitk: grid %u ws %llu/%llu summary %s", p.grid[0], p.workspace_bytes,
          p.workspace_flags_offset, p.summary);
    /* 4096^3: BN 256 of the old rule capped at 128 (1024 tiles, 2048 units), grid 132 */
    REQUIRE(plan(4096, 4096, 4096, &p, &err), "plan 4096^3 splitk: %s", err.msg);
    CHECK(has_opt(&p, "-DBN=128") && p.grid[0] == 132 && strstr(p.summary, "1024 tiles"),
          "4096^3 splitk: grid %u %s", p.grid[0], p.summary);
    /* an odd SM count gives an even grid */
    {
        dt_case_layout L;
        dt_layout_make_typed(&L, DT_OP_GEMM, 4096, 4096, 4096, 0, DT_F16);
        REQUIRE(dt_cuda_plan_make(&L, "sm_90", 131, &p, &err) == DT_OK, "131 SMs: %s", err.msg);
        CHECK(p.grid[0] == 130, "131 SMs splitk grid %u (want 130)", p.grid[0]);
    }
    /* the pairing the kernel relies on (no deadlock): an even grid of at most the SMs,
     * so units 2t and 2t+1 run in blocks b, b+1 at the same iteration and even blocks
     * only ever take first halves, which never wait */
    {
        static const int64_t shapes[][3] = {{1000, 1048, 264}, {4097, 4096, 4096}, {128, 64, 128},
                                            {8192, 8192, 8192}};
        static const int sms[] = {132, 131, 7, 2};
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (size_t j = 0; j < sizeof sms / sizeof sms[0]; j++) {
                dt_case_layout L;
                dt_layout_make_typed(&L, DT_OP_GEMM, shapes[i][0], shapes[i][1], shapes[i][2], 0,
                                     DT_BF16);
                REQUIRE(dt_cuda_plan_make(&L, "sm_90", sms[j], &p, &err) == DT_OK, "plan: %s",
                        err.msg);
                const unsigned g = p.grid[0];
                int paired = g % 2 == 0 && (int)g <= sms[j];
                /* every odd unit's partner: same iteration, the block before (even) */
                const int64_t units = (int64_t)(p.workspace_flags_offset / (128ull * 128 * 4)) * 2;
                for (int64_t u = 1; paired && u < units; u += 2)
                    paired = (u - 1) / g == u / g && ((u - 1) % g) % 2 == 0;
                CHECK(paired && units > 0, "%lldx%lld on %d SMs: grid %u units %lld not paired",
                      (long long)shapes[i][0], (long long)shapes[i][1], sms[j], g,
                      (long long)units);
            }
    }
    {
        dt_case_layout L;
        dt_layout_make_typed(&L, DT_OP_GEMM, 1024, 1024, 1024, 0, DT_BF16);
        CHECK(dt_cuda_plan_make(&L, "sm_90", 1, &p, &err) == DT_EINVAL && strstr(err.msg, "2 SMs"),
              "splitk on 1 SM not refused: %s", err.msg);
    }
    setenv("DUALTIME_GEMM_BN", "64", 1);
    REQUIRE(plan(1024, 1024, 1024, &p, &err), "plan 1024^3 splitk bn 64: %s", err.msg);
    CHECK(has_opt(&p, "-DBN=64") && p.grid[0] == 132 && p.workspace_bytes == 128ull * 128 * 64 * 4 + 128 * 4,
          "1024^3 splitk BN=64: grid %u ws %llu", p.grid[0], p.workspace_bytes);
    setenv("DUALTIME_GEMM_BN", "256", 1);
    CHECK(!plan(1024, 1024, 1024, &p, &err) && strstr(err.msg, "DUALTIME_GEMM_SPLITK"),
          "splitk with BN=256 not refused: %s", err.msg);
    unsetenv("DUALTIME_GEMM_BN");
    CHECK(!plan(1024, 1024, 64, &p, &err) && strstr(err.msg, "K > 64"),
          "splitk with one k-block not refused: %s", err.msg);
    setenv("DUALTIME_GEMM_SPLITK", "3", 1);
    CHECK(!plan(1024, 1024, 1024, &p, &err) && strstr(err.msg, "DUALTIME_GEMM_SPLITK"),
          "SPLITK=3 not refused: %s", err.msg);
    unsetenv("DUALTIME_GEMM_SPLITK");
    REQUIRE(plan(1024, 1024, 1024, &p, &err), "plan 1024^3: %s", err.msg);
    CHECK(p.workspace_bytes == 0 && !has_opt(&p, "-DWG_SPLITK=2"), "default has a workspace");
done:
    unsetenv("DUALTIME_GEMM_VARIANT");
    unsetenv("DUALTIME_GEMM_FILL");
    unsetenv("DUALTIME_GEMM_BN");
    unsetenv("DUALTIME_GEMM_SPLITK");
}

/* wg3 (DUALTIME_GEMM_VARIANT=wg3): the epilogue's boxes from the shared memory left by
 * the stages (227 KiB = 232448 B), the output's tensor map, DUALTIME_GEMM_STAGES. */
static void epi_cases(void) {
    /* by hand: 4 x 48 KiB + 1024 + 64 = 197696; + 2 boxes x 2 wgs x 8 KiB = 230464 fits,
     * 4 boxes (+65536 = 263232) do not; 3 stages: 147456 + 65536 + 1024 + 48 = 214064 */
    CHECK(dt_gemm_smem_bytes(256, 4, 0) == 197696u && dt_gemm_smem_bytes(256, 4, 2) == 230464u &&
              dt_gemm_smem_bytes(256, 3, 4) == 214064u,
          "smem bytes %u %u %u", dt_gemm_smem_bytes(256, 4, 0), dt_gemm_smem_bytes(256, 4, 2),
          dt_gemm_smem_bytes(256, 3, 4));
    static const struct { int bn, stages, boxes; } c[] = {
        {256, 4, 2}, {256, 3, 4}, {256, 2, 4}, {128, 6, 2}, {128, 7, 0}, {64, 8, 1}, {64, 9, 0},
    };
    /* 128 x 7: 7 x 32 KiB + 1024 + 112 = 230512, + 16384 > 232448 -> 0;
     * 64 x 9: 9 x 24 KiB + 1024 + 144 = 222352, + 16384 > 232448 -> 0 */
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        CHECK(dt_gemm_epi_boxes(c[i].bn, c[i].stages) == c[i].boxes, "epi boxes bn %d stages %d: %d (want %d)",
              c[i].bn, c[i].stages, dt_gemm_epi_boxes(c[i].bn, c[i].stages), c[i].boxes);
    CHECK(dt_gemm_default_stages(256) == 4 && dt_gemm_default_stages(128) == 6 &&
              dt_gemm_default_stages(64) == 8, "default stages");

    dt_cuda_plan p;
    dt_err err = {{0}};
    dt_case_layout L0;
    dt_layout_make_typed(&L0, DT_OP_GEMM, 4096, 4096, 4096, 0, DT_BF16);
    const int out = dt_layout_output(&L0);
    setenv("DUALTIME_GEMM_VARIANT", "wg3", 1);
    REQUIRE(plan(4096, 4096, 4096, &p, &err), "plan wg3 4096^3: %s", err.msg);
    CHECK(strcmp(p.kernel_name, "dt_gemm_wg3_bf16") == 0 && has_opt(&p, "-DWG_EPI_TMA=1") &&
              has_opt(&p, "-DWG_EPI_BOXES=2") && has_opt(&p, "-DSTAGES=4") &&
              !has_opt(&p, "-DWG_INFLIGHT=1") && p.shared_bytes == 230464u && p.ntma == 3 &&
              p.tma[2].buf == out && p.tma[2].box[0] == 64 && p.tma[2].box[1] == 64 &&
              strstr(p.summary, "variant=wg3") && strstr(p.summary, "epi=tma boxes=2 passes=2"),
          "wg3 4096^3: %s ntma %d smem %u summary %s", p.kernel_name, p.ntma, p.shared_bytes,
          p.summary);
    REQUIRE(plan(1024, 1024, 1024, &p, &err), "plan wg3 1024^3: %s", err.msg);
    CHECK(has_opt(&p, "-DBN=64") && has_opt(&p, "-DWG_EPI_BOXES=1") &&
              p.shared_bytes == 8u * 24576 + 16384 + 1024 + 16 * 8 &&
              strstr(p.summary, "passes=1"),
          "wg3 1024^3: smem %u summary %s", p.shared_bytes, p.summary);
    setenv("DUALTIME_GEMM_STAGES", "3", 1); /* one pass: all four boxes a warpgroup */
    REQUIRE(plan(4096, 4096, 4096, &p, &err), "plan wg3 stages 3: %s", err.msg);
    CHECK(has_opt(&p, "-DSTAGES=3") && has_opt(&p, "-DWG_EPI_BOXES=4") &&
              p.shared_bytes == 214064u && strstr(p.summary, "passes=1"),
          "wg3 stages 3: smem %u %s", p.shared_bytes, p.summary);
    /* the output not TMA-describable (an odd start): wg1's register stores */
    {
        dt_case_layout L;
        dt_layout_make_typed(&L, DT_OP_GEMM, 4096, 4096, 4096, 0, DT_BF16);
        L.buf[dt_layout_output(&L)].data_offset += 2;
        REQUIRE(dt_cuda_plan_make(&L, "sm_90", 132, &p, &err) == DT_OK, "wg3 odd C: %s", err.msg);
        CHECK(strcmp(p.kernel_name, "dt_gemm_wg1_bf16") == 0 && p.ntma == 2 &&
                  !has_opt(&p, "-DWG_EPI_TMA=1") && strstr(p.summary, "epi=regs"),
              "wg3 odd C: %s ntma %d %s", p.kernel_name, p.ntma, p.summary);
    }
    /* STAGES on wg1: 2..8 and what fits; 5 x 48 KiB does not */
    setenv("DUALTIME_GEMM_VARIANT", "wg1", 1);
    REQUIRE(plan(4096, 4096, 4096, &p, &err), "plan wg1 stages 3: %s", err.msg);
    CHECK(has_opt(&p, "-DSTAGES=3") && p.ntma == 2 && p.shared_bytes == 3u * 49152 + 1024 + 48,
          "wg1 stages 3: smem %u", p.shared_bytes);
    setenv("DUALTIME_GEMM_STAGES", "5", 1);
    CHECK(!plan(4096, 4096, 4096, &p, &err) && strstr(err.msg, "DUALTIME_GEMM_STAGES=5"),
          "5 stages of 128x256 not refused: %s", err.msg);
    REQUIRE(plan(1024, 1024, 1024, &p, &err), "plan 1024^3 stages 5: %s", err.msg);
    CHECK(has_opt(&p, "-DSTAGES=5") && has_opt(&p, "-DBN=64"), "1024^3 stages 5");
    setenv("DUALTIME_GEMM_STAGES", "1", 1);
    CHECK(!plan(1024, 1024, 1024, &p, &err) && strstr(err.msg, "DUALTIME_GEMM_STAGES"),
          "STAGES=1 not refused: %s", err.msg);
    setenv("DUALTIME_GEMM_STAGES", "7", 1); /* wg3 at 128 x 128: no room left */
    setenv("DUALTIME_GEMM_VARIANT", "wg3", 1);
    setenv("DUALTIME_GEMM_BN", "128", 1);
    CHECK(!plan(4096, 4096, 4096, &p, &err) && strstr(err.msg, "no room"),
          "wg3 7 stages of 128x128 not refused: %s", err.msg);
done:
    unsetenv("DUALTIME_GEMM_VARIANT");
    unsetenv("DUALTIME_GEMM_STAGES");
    unsetenv("DUALTIME_GEMM_BN");
}

/* wg4 (DUALTIME_GEMM_VARIANT=wg4): wg3 in clusters of two blocks sharing B by multicast;
 * blocks = 2 x pairs of row tiles x column tiles, an even grid of at most the SMs. */
static void cluster_cases(void) {
    dt_cuda_plan p;
    dt_err err = {{0}};
    setenv("DUALTIME_GEMM_VARIANT", "wg4", 1);
    REQUIRE(plan(4096, 4096, 4096, &p, &err), "plan wg4 4096^3: %s", err.msg);
    CHECK(strcmp(p.kernel_name, "dt_gemm_wg4_bf16") == 0 && has_opt(&p, "-DWG_CLUSTER=2") &&
              has_opt(&p, "-DWG_EPI_TMA=1") && has_opt(&p, "-DBN=256") && p.ntma == 3 &&
              p.persistent_cluster == 2 && p.grid[0] == 132 && p.shared_bytes == 230464u &&
              strstr(p.summary, "variant=wg4") && strstr(p.summary, "cluster=2 mcast=B"),
          "wg4 4096^3: %s grid %u cluster %d %s", p.kernel_name, p.grid[0], p.persistent_cluster,
          p.summary);
    /* 1152 x 1024: 9 row tiles (an odd one: 5 pairs) x 8 column tiles of 128 -> 80 blocks */
    REQUIRE(plan(1152, 1024, 512, &p, &err), "plan wg4 1152x1024: %s", err.msg);
    CHECK(has_opt(&p, "-DBN=128") && p.grid[0] == 80 && strstr(p.summary, "72 tiles"),
          "wg4 1152x1024: grid %u %s", p.grid[0], p.summary);
    {
        dt_case_layout L;
        dt_layout_make_typed(&L, DT_OP_GEMM, 4096, 4096, 4096, 0, DT_F16);
        REQUIRE(dt_cuda_plan_make(&L, "sm_90", 131, &p, &err) == DT_OK, "wg4 131 SMs: %s", err.msg);
        CHECK(p.grid[0] == 130 && strcmp(p.kernel_name, "dt_gemm_wg4_f16") == 0,
              "wg4 131 SMs: grid %u (want 130) %s", p.grid[0], p.kernel_name);
    }
    /* 1024^3 takes BN 64 (one B box a stage: nothing to split): wg3, saying so */
    REQUIRE(plan(1024, 1024, 1024, &p, &err), "plan wg4 1024^3: %s", err.msg);
    CHECK(strcmp(p.kernel_name, "dt_gemm_wg3_bf16") == 0 && !has_opt(&p, "-DWG_CLUSTER=2") &&
              p.persistent_cluster == 0 && strstr(p.summary, "cluster=1 (BN 64)"),
          "wg4 1024^3: %s cluster %d %s", p.kernel_name, p.persistent_cluster, p.summary);
    setenv("DUALTIME_GEMM_SPLITK", "2", 1);
    CHECK(!plan(1024, 1024, 1024, &p, &err) && strstr(err.msg, "wg4"),
          "wg4 with split-K not refused: %s", err.msg);
done:
    unsetenv("DUALTIME_GEMM_VARIANT");
    unsetenv("DUALTIME_GEMM_SPLITK");
}

int main(void) {
    choose_cases();
    plan_cases();
    epi_cases();
    cluster_cases();
    return dt_check_summary("test_gemm_geom");
}
