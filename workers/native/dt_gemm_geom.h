/* dt_gemm_geom.h — the tile width (BN) of the bf16/f16 wgmma gemm (gemm_wg1.cu: 128 x BN
 * x 64 tiles, one persistent block an SM) chosen from the shape, so that the grid fills
 * the SMs when 128 x 128 tiles are fewer than the SMs (1024^3: 64 tiles of 128 x 128
 * leave 68 of 132 SMs idle; 128 x 64 tiles give 128).
 *
 * The model (docs/perf.md, "gemm wg1 fill"): a block's time is its number of tiles
 * (waves = ceil(tiles / SMs)) times a tile's k-block time, which is the larger of the
 * tensor-core time, 2*128*BN*64 FLOP at 4096 FLOP/clk/SM = 4*BN clk, and the load time,
 * (16 KiB of A + 128*BN B of B) at an assumed 64 B/clk/SM from L2 = 256 + 2*BN clk. The
 * BN of least cost wins; a tie goes to the wider tile (fewer epilogues). fill 0 is the
 * rule before this module (BN 256 where the 128 x 256 tiles are at least the SMs, else
 * 128), kept so one run can A/B both (DUALTIME_GEMM_FILL=0).
 *
 * Pure functions of their arguments: no allocation, no environment, thread-safe. */
#ifndef DT_GEMM_GEOM_H
#define DT_GEMM_GEOM_H

#include <stdint.h>

typedef struct dt_gemm_geom {
    int bn;           /* 64, 128 or 256 */
    int64_t tiles;    /* 128 x bn tiles of the M x N output */
    int64_t waves;    /* ceil(tiles / SMs): tiles the busiest block runs */
    int64_t kblk_clk; /* predicted clocks of one 64-deep k-block of one tile */
    int64_t cost_clk; /* waves * kblk_clk: the model's relative time (per k-block) */
} dt_gemm_geom;

/* The geometry of tile width bn (64, 128, 256) for an m x n output on sm_count SMs
 * (sm_count <= 0: 132). */
dt_gemm_geom dt_gemm_geom_of(int64_t m, int64_t n, int sm_count, int bn);

/* The chosen geometry: fill 1 the least cost of 64, 128 and 256; fill 0 the rule
 * before (256 where its tiles >= SMs, else 128). */
dt_gemm_geom dt_gemm_geom_choose(int64_t m, int64_t n, int sm_count, int fill);

/* Shared memory of the wgmma gemm (gemm_wg1.cu). The block's dynamic shared memory is
 * `stages` stages of A (128 x 64) and B (64 x bn) in 2-byte elements, then (wg3, the
 * TMA-store epilogue) epi_boxes boxes of 64 x 64 elements (8 KiB) for each of the two
 * consumer warpgroups, then 16 bytes of mbarriers a stage, plus 1 KiB of slack to align
 * the base for the 128-byte swizzle. It must be at most DT_GEMM_SMEM_MAX_BYTES (sm_90's
 * opt-in limit for one block, 227 KiB). */
#define DT_GEMM_SMEM_MAX_BYTES 232448u

/* The stages wg1 takes by default: 4, 6, 8 for bn 256, 128, 64 (192 KiB of stages). */
int dt_gemm_default_stages(int bn);

/* The dynamic shared memory bytes of tile width bn, stages and epi_boxes (0: wg1/wg2). */
unsigned dt_gemm_smem_bytes(int bn, int stages, int epi_boxes);

/* wg3's boxes a consumer warpgroup: the largest of 4, 2, 1 that is at most bn / 64 and
 * fits under DT_GEMM_SMEM_MAX_BYTES with these stages; 0 when not even one fits. A tile's
 * epilogue then takes bn / 64 / boxes passes (bn 256 at 4 stages: 2 boxes, 2 passes). */
int dt_gemm_epi_boxes(int bn, int stages);

#endif
