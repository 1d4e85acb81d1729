/* dt_gemm_geom.c — wg1's tile width from the shape (dt_gemm_geom.h). */
#include "dt_gemm_geom.h"

dt_gemm_geom dt_gemm_geom_of(int64_t m, int64_t n, int sm_count, int bn) {
    if (sm_count <= 0) sm_count = 132;
    dt_gemm_geom g;
    g.bn = bn;
    g.tiles = ((m + 127) / 128) * ((n + bn - 1) / bn);
    g.waves = (g.tiles + sm_count - 1) / sm_count;
    const int64_t mma_clk = 4 * (int64_t)bn, load_clk = 256 + 2 * (int64_t)bn;
    g.kblk_clk = mma_clk > load_clk ? mma_clk : load_clk;
    g.cost_clk = g.waves * g.kblk_clk;
    return g;
}

dt_gemm_geom dt_gemm_geom_choose(int64_t m, int64_t n, int sm_count, int fill) {
    if (sm_count <= 0) sm_count = 132;
    const dt_gemm_geom g256 = dt_gemm_geom_of(m, n, sm_count, 256);
    if (!fill) return g256.tiles >= sm_count ? g256 : dt_gemm_geom_of(m, n, sm_count, 128);
    dt_gemm_geom best = g256;
    static const int narrower[] = {128, 64};
    for (int i = 0; i < 2; i++) {
        const dt_gemm_geom g = dt_gemm_geom_of(m, n, sm_count, narrower[i]);
        if (g.cost_clk < best.cost_clk) best = g; /* a tie keeps the wider tile */
    }
    return best;
}

int dt_gemm_default_stages(int bn) { return bn == 256 ? 4 : bn == 128 ? 6 : 8; }

unsigned dt_gemm_smem_bytes(int bn, int stages, int epi_boxes) {
    const unsigned stage_bytes = 128u * 64u * 2u + 64u * (unsigned)bn * 2u;
    return (unsigned)stages * stage_bytes + 2u * (unsigned)epi_boxes * 8192u + 1024u +
           16u * (unsigned)stages;
}

int dt_gemm_epi_boxes(int bn, int stages) {
    for (int boxes = 4; boxes >= 1; boxes /= 2)
        if (boxes <= bn / 64 && dt_gemm_smem_bytes(bn, stages, boxes) <= DT_GEMM_SMEM_MAX_BYTES)
            return boxes;
    return 0;
}
