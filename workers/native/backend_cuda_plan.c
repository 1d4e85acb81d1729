/* backend_cuda_plan.c — kernel variant choice, NVRTC options, sources and compile (see
 * backend_cuda_plan.h). No libcuda calls here: this file also runs on CI without a GPU. */
#include "backend_cuda_plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <nvrtc.h>

#include "../../src/common/dt_cuda_check.h"
#include "dt_gemm_geom.h"
#include "backend_cuda_plan_sgemm.h"

/* 1 when every row start of buffer b is 16-byte aligned (device base 256-aligned). */
static int rows_aligned16(const dt_buffer_layout *b) {
    return b->data_offset % 16 == 0 && (b->row_stride * b->elem_bytes) % 16 == 0;
}

static unsigned ceil_div_u(int64_t a, int64_t b) { return (unsigned)((a + b - 1) / b); }

/* A 2-byte buffer's rows for 32-bit pairs (dt_ld_pair): 0 every row start 4-byte
 * aligned, 1 every one 2 bytes past a 4-byte boundary (a view), -1 they alternate. */
static int pair_phase(const dt_buffer_layout *b) {
    if (b->elem_bytes != 2 || (b->row_stride * 2) % 4 != 0) return -1;
    return (int)(b->data_offset % 4) / 2;
}

static int64_t pow2_ceil(int64_t x) {
    int64_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

/* DUALTIME_LAUNCH_FILL=1 (default) or 0: whether small row and elementwise problems
 * shrink their blocks to occupy more SMs (docs/perf.md, "small shapes"); 0 is the v1
 * geometry, kept so both can be timed in one device run. */
static dt_status launch_fill_choice(int *fill, dt_err *err) {
    const char *v = getenv("DUALTIME_LAUNCH_FILL");
    *fill = 1;
    if (!v || !*v) return DT_OK;
    if (strcmp(v, "0") == 0)
        *fill = 0;
    else if (strcmp(v, "1") != 0)
        return dt_fail(err, DT_EINVAL, "DUALTIME_LAUNCH_FILL=%s: expected 0 or 1", v);
    return DT_OK;
}

/* sm_XX / compute_XX -> XX (0 when unknown). */
static int arch_number(const char *arch) {
    const char *u = strchr(arch, '_');
    return u ? atoi(u + 1) : 0;
}

static const char *k_source_names[DT_OP_COUNT] = {
    "add.cu", "gelu_add.cu", "sum.cu", "softmax.cu", "rmsnorm.cu", "layernorm.cu",
    "residual_layernorm.cu", "cross_entropy.cu", "gemm.cu"};

static void set_launch(dt_cuda_plan *p, unsigned gx, unsigned gy, unsigned bx) {
    p->grid[0] = gx;
    p->grid[1] = gy;
    p->grid[2] = 1;
    p->block[0] = bx;
    p->block[1] = 1;
    p->block[2] = 1;
}

/* gemm for bf16/f16, variant tc1 (gemm_tc1.cu). why: NULL, or the reason wg1 was asked
 * for and could not be used (recorded in the summary). */
static dt_status plan_gemm_tc1(const dt_case_layout *L, const dt_buffer_layout *A,
                               const dt_buffer_layout *B, dt_cuda_plan *p, const char *why,
                               dt_err *err) {
    const int veca = rows_aligned16(A) && L->k % 8 == 0;
    const int vecb = rows_aligned16(B) && L->n % 8 == 0;
    p->source_name = "gemm_tc1.cu";
    snprintf(p->kernel_name, sizeof p->kernel_name, "dt_gemm_tc1_%s", dt_dtype_name(L->dtype));
    dt_cuda_plan_add_opt(p, "-DVECA=%d", veca ? 8 : 1);
    dt_cuda_plan_add_opt(p, "-DVECB=%d", vecb ? 8 : 1);
    if ((L->m + 63) / 64 > 65535) return dt_fail(err, DT_EINVAL, "tc1: M too large for grid.y");
    set_launch(p, ceil_div_u(L->n, 64), ceil_div_u(L->m, 64), 128);
    char fb[96] = "";
    if (why) snprintf(fb, sizeof fb, " (fallback: %s)", why);
    snprintf(p->summary, sizeof p->summary,
             "%s variant=tc1%s grid=(%u,%u) block=128 tile=64x64x32 warp=32x32 "
             "vec(a,b)=(%d,%d) mma.sync.m16n8k16 %s->f32 smem-single-buffered",
             p->kernel_name, fb, p->grid[0], p->grid[1], veca ? 8 : 1, vecb ? 8 : 1,
             dt_dtype_name(L->dtype));
    return DT_OK;
}

static int getenv_set(const char *name) {
    const char *v = getenv(name);
    return v && *v;
}
static int tpr_env_set(void) { return getenv_set("DUALTIME_ROW_TPR"); }

/* The cluster split of a row (sm_90+, row ops that keep the row in registers). mode 1
 * (default): taken when one block cannot hold the row in registers (more than 32
 * elements a thread at 1024 threads, the multi-pass path otherwise) and there are so
 * few rows (M*4 <= SMs) that one block per row would leave most SMs idle (1x65536);
 * mode 2: also for many such rows, and for few rows of at least 16384 elements (at
 * 4096x50257 f32 it measured slower than the multi-pass path: one 1024-thread block an
 * SM idles at every cluster barrier, docs/perf.md); 0: never. The cluster
 * has the fewest blocks (at most 8, the portable limit) such that each of up to 1024
 * threads holds at most `elems` elements, doubled (up to 8) while M * blocks leaves
 * SMs idle and each block keeps at least 4096 columns. Mode 3 (session 18, opt-in until
 * measured): mode 1, and rows of more than 8192 elements (one block of 512+ threads a
 * row) when there are fewer than 4 rows an SM, split so each block has at most 512
 * threads: a few rounds of big blocks leave SMs idle in the last round (300x30000 f32:
 * 300 blocks of 1024 threads, one an SM, 3 rounds for 2.3 rounds of work). Returns 1 with
 * *cl blocks of *nc columns (a multiple of vec), *tpr threads and *per vectors a thread;
 * 0 to keep the one-block plan. */
static int cluster_plan(dt_op op, int64_t m, int64_t n, int vec, int elems, int sm_count,
                        int enabled /* mode 0..3 */, int arch, int extra /* DT_OFRAME: vec-1 */,
                        int64_t *cl, int64_t *nc, int *tpr, int64_t *per) {
    if (!enabled || arch < 90 || op == DT_OP_SUM || n <= 1024) return 0;
    const int too_long = n > 1024 * 32;
    const int few = m * 4 <= sm_count;
    const int tail = enabled == 3 && n > 8192 && m < 4LL * sm_count;
    if (enabled == 1 || enabled == 3 ? !((too_long && few) || tail)
                                     : !(too_long || (few && n >= 16384)))
        return 0;
    int64_t c = (n + 1024LL * elems - 1) / (1024LL * elems);
    if (tail && !(too_long && few)) c = (n + 512LL * elems - 1) / (512LL * elems);
    if (c > 8) c = 8;
    while (c < 8 && m * c < sm_count && n / (c * 2) >= 4096) c *= 2;
    if (c > 8) c = 8;
    if (c < 2) return 0;
    int64_t w = (n + c - 1) / c;
    w = (w + vec - 1) / vec * vec;
    c = (n + w - 1) / w;
    int64_t t = pow2_ceil((w + elems - 1) / elems);
    if (t < 64) t = 64;
    if (t > 1024) t = 1024;
    const int64_t pr = (w + extra + t * vec - 1) / (t * vec);
    if (pr * vec > 32 + (extra ? vec : 0) || c < 2) return 0; /* too long even for 8 blocks: multi-pass */
    *cl = c;
    *nc = w;
    *tpr = (int)t;
    *per = pr;
    return 1;
}

/* What the driver reserves of an SM's shared memory per block (1 KiB). */
#define DT_SMEM_RESERVED 1024
/* Shared memory of one SM and the most one block may opt in to, by arch (CUDA
 * programming guide, compute capabilities): 9.0 228 / 227 KiB, 8.0 and 8.7 164 / 163,
 * other 8.x 100 / 99. */
static int64_t smem_sm_bytes(int arch) {
    return (arch >= 90 ? 228 : arch == 80 || arch == 87 ? 164 : 100) * 1024LL;
}

/* DUALTIME_ROW_L2=1 (ROWL2, docs/cuda-backend.md): softmax, rmsnorm and layernorm, where
 * the staged row would be taken, as one block a row reading the row twice: from DRAM,
 * then (pass 2) from L2. The rows in flight, SMs x blocks an SM x the row's chunk bytes,
 * must fit budget_mb of L2 (DUALTIME_ROW_L2_MB, default a conservative 32: the plan knows
 * no L2 size): 2 blocks of up to 512 threads an SM where that fits, else 1 of up to 1024,
 * held there by *smem (a dynamic reservation, unused, that lets no third / second block
 * in; 1024 threads at 40-64 registers fit once an SM anyway). Threads: 4 chunks each at
 * least (4 loads in flight), 128 at the least. Returns the blocks an SM, 0 when even one
 * does not fit (the staged row then). */
static int row_l2_plan(dt_op op, int64_t n, int vw, int budget_mb, int arch, int sm_count,
                       int *threads, unsigned *smem) {
    if (op != DT_OP_SOFTMAX && op != DT_OP_RMSNORM && op != DT_OP_LAYERNORM) return 0;
    const int64_t chunks = n / vw + 2, budget = (int64_t)budget_mb << 20;
    const int bps = 2 * sm_count * chunks * 16 <= budget ? 2 : sm_count * chunks * 16 <= budget;
    if (!bps) return 0;
    for (*threads = 1024 / bps; *threads > 128 && *threads * 4 > chunks;) *threads /= 2;
    *smem = (unsigned)(smem_sm_bytes(arch) / (bps + 1) + 1024);
    return bps;
}

/* A staged row of n columns over c blocks: *w columns a block (a multiple of vw) and
 * *bytes of shared memory (one 16-byte chunk more than the columns fill: a row start
 * inside a chunk), times rows (residual_layernorm stages a and b). 0 when the last block would be empty or the part exceeds the budget
 * or a block's limit on this arch. */
static int smem_part(int64_t n, int64_t c, int vw, int arch, int rows, int64_t budget_bytes,
                     int64_t *w, int64_t *bytes) {
    int64_t cols = (n + c - 1) / c;
    cols = (cols + vw - 1) / vw * vw;
    if (c > 1 && (c - 1) * cols >= n) return 0;
    const int64_t b = ((cols + vw - 1) / vw + 1) * 16 * rows;
    /* a block's dynamic + static shared memory must fit the opt-in limit (SM - 1 KiB):
     * 512 bytes are left for the kernels' static reduction slots (<= 272 bytes: 1024
     * threads, two reductions of one kind) */
    if (b > budget_bytes || b > smem_sm_bytes(arch) - DT_SMEM_RESERVED - 512) return 0;
    *w = cols;
    *bytes = b;
    return 1;
}

/* The staged-row variant (SMEMROW, dt_cuda_common.cuh) of softmax, rmsnorm, layernorm,
 * cross_entropy and residual_layernorm (both input rows): the row (or a cluster block's part of it) is copied once into
 * dynamic shared memory with 16-byte cp.async of the 16-byte chunks that hold it, so
 * it is read from DRAM once and with 16-byte accesses whatever the row's alignment.
 * mode (DUALTIME_ROW_SMEM): 0 never (the first pass's geometry, kept for A/Bs); 1 (the
 * default since it passed the GPU oracle, memcheck and racecheck on the H200 and beat
 * the first pass there: docs/perf.md) where the other paths are slow: rows
 * longer than 1024 that are either too long for one block's registers (the multi-pass
 * path otherwise) or not 16-byte aligned (vec 1 otherwise: odd N, views), unless the
 * in-register cluster split already took them (few rows); 2 every row longer than 1024
 * (A/B against the in-register path). Geometry from the shape: the cluster has the
 * fewest blocks (1, 2, 4, 8; > 1 needs sm_90) whose part fits budget_bytes of shared
 * memory (budget_bytes: DUALTIME_ROW_SMEM_KB, default 113 KiB, two blocks an SM; with
 * budget_soft (the knob unset) rows that fit no cluster at it try the arch's block
 * limit before giving up: 8 x 227 KiB on sm_90), doubled once more
 * where the grid would still leave half the SMs idle and each block keeps at least
 * 4096 columns (few long rows spread over more SMs); blocks an SM =
 * 228 KiB / (part + 1 KiB); threads a block: the largest power of two in 128..1024 with
 * blocks an SM x threads <= 1024 (64 registers a thread; blocks an SM counts only
 * the blocks the grid gives each SM, so few rows get 1024 threads), and no more threads
 * than twice the part's chunks. pipe (DUALTIME_ROW_PIPE=1; not residual_layernorm): the
 * persistent double-buffered kernel (SMEMPIPE): a block holds two row parts (the budget
 * and limits apply to both together, so the cluster is the fewest blocks whose two parts
 * fit) and the grid is the clusters that stay resident (*clusters; otherwise M).
 * Returns 1 with *cl, *nc (columns a block, a multiple of vw), *threads,
 * *smem (bytes), *clusters; 0 to keep the other plan. */
static int smem_row_plan(dt_op op, int64_t m, int64_t n, int vw, int mode, int arch,
                         int sm_count, int64_t budget_bytes, int budget_soft, int pipe,
                         int64_t *cl, int64_t *nc, int *threads, unsigned *smem,
                         int64_t *clusters) {
    if (!mode || arch < 80 || n <= 1024) return 0;
    if (op != DT_OP_SOFTMAX && op != DT_OP_RMSNORM && op != DT_OP_LAYERNORM &&
        op != DT_OP_CROSS_ENTROPY && op != DT_OP_RESIDUAL_LAYERNORM)
        return 0;
    if (op == DT_OP_RESIDUAL_LAYERNORM) pipe = 0; /* two staged rows: not pipelined */
    /* staged rows a block: residual_layernorm's a and b, or (pipe) two buffers */
    const int rows = op == DT_OP_RESIDUAL_LAYERNORM || pipe ? 2 : 1;
    int64_t c = 0, w = 0, bytes = 0;
    for (int pass = 0; pass < 2 && !c; pass++) { /* the budget, then (default) the limit */
        const int64_t cap = pass ? smem_sm_bytes(arch) - DT_SMEM_RESERVED : budget_bytes;
        if (pass && !budget_soft) break;
        for (int64_t t = 1; t <= 8 && !c; t *= 2)
            if ((t == 1 || arch >= 90) && smem_part(n, t, vw, arch, rows, cap, &w, &bytes)) c = t;
    }
    if (!c) return 0;
    /* few long rows: one doubling more while half the SMs would idle */
    if (c < 8 && arch >= 90 && m * c * 2 <= sm_count && w / 2 >= 4096) {
        int64_t w2 = 0, b2 = 0;
        if (smem_part(n, c * 2, vw, arch, rows, budget_bytes, &w2, &b2)) {
            c *= 2;
            w = w2;
            bytes = b2;
        }
    }
    const int64_t chunks = bytes / 16 / rows;
    int64_t per_sm = smem_sm_bytes(arch) / (bytes + DT_SMEM_RESERVED);
    const int64_t busy = (m * c + sm_count - 1) / sm_count; /* few rows: fewer a SM */
    if (per_sm > busy) per_sm = busy;
    if (per_sm < 1) per_sm = 1;
    int64_t t = 1024;
    while (t > 128 && (t * per_sm > 1024 || t / 2 >= chunks)) t /= 2;
    /* pipe: the clusters that stay resident, per_sm blocks on every SM (clusters of 4
     * and 8 may not fill a GPC: the backend shrinks the grid to what the driver says
     * stays resident, cuOccupancyMaxActiveClusters) */
    *clusters = m;
    if (pipe) {
        int64_t g = per_sm * sm_count / c;
        if (g < 1) g = 1;
        if (g < m) *clusters = g;
    }
    *cl = c;
    *nc = c > 1 ? w : n;
    *threads = (int)t;
    *smem = (unsigned)bytes;
    return 1;
}

/* wg1's target: sm_90 -> sm_90a, compute_90 -> compute_90a (wgmma, setmaxnreg need the
 * arch-specific target); NULL for any other arch. */
static const char *wg1_arch(const char *arch) {
    if (strcmp(arch, "sm_90") == 0 || strcmp(arch, "sm_90a") == 0) return "sm_90a";
    if (strcmp(arch, "compute_90") == 0 || strcmp(arch, "compute_90a") == 0) return "compute_90a";
    return NULL;
}

/* wg1..wg4's shared memory for tile width bn: *stages (DUALTIME_GEMM_STAGES=2..8, default
 * dt_gemm_default_stages), *epi_boxes (wg3/wg4 where the output O is TMA-describable:
 * dt_gemm_epi_boxes; else 0, wg1's register stores) and *smem (dt_gemm_smem_bytes);
 * DT_EINVAL where the stages do not fit. */
static dt_status wg_memory(int bn, int variant, const dt_buffer_layout *O, int *stages,
                           int *epi_boxes, unsigned *smem, dt_err *err) {
    *stages = dt_gemm_default_stages(bn); /* 48, 32, 24 KiB a stage: 192 KiB */
    dt_status st = dt_cuda_plan_int_knob("DUALTIME_GEMM_STAGES", 2, 8, 0, stages, err);
    if (st != DT_OK) return st;
    const int epi_ok = (variant == 3 || variant == 4) && rows_aligned16(O);
    *epi_boxes = epi_ok ? dt_gemm_epi_boxes(bn, *stages) : 0;
    if (epi_ok && !*epi_boxes)
        return dt_fail(err, DT_EINVAL, "wg3: %d stages of 128x%d leave no room for the epilogue",
                       *stages, bn);
    *smem = dt_gemm_smem_bytes(bn, *stages, *epi_boxes);
    if (*smem > DT_GEMM_SMEM_MAX_BYTES)
        return dt_fail(err, DT_EINVAL,
                       "DUALTIME_GEMM_STAGES=%d: %u bytes of shared memory for 128x%d tiles "
                       "(at most %u)", *stages, *smem, bn, DT_GEMM_SMEM_MAX_BYTES);
    return DT_OK;
}

/* The end of wg3/wg4's summary: the epilogue and the cluster ("" for wg1/wg2). */
static void wg_epi_note(char *out, size_t cap, int variant, int bn, int epi_boxes, int cluster) {
    out[0] = 0;
    if (epi_boxes)
        snprintf(out, cap, " epi=tma boxes=%d passes=%d", epi_boxes, bn / 64 / epi_boxes);
    else if (variant >= 3)
        snprintf(out, cap, " epi=regs (C rows unaligned)");
    const size_t at = strlen(out);
    if (cluster == 2)
        snprintf(out + at, cap - at, " cluster=2 mcast=B");
    else if (variant == 4)
        snprintf(out + at, cap - at, " cluster=1 (BN 64)");
}

/* gemm for bf16/f16, variant wg1 (gemm_wg1.cu, see its header): 128 x BN x 64 tiles,
 * 3 warpgroups (TMA producer + 2 wgmma consumers), STAGES stages of dynamic shared
 * memory, grid = min(SMs, tiles); wg2 (variant 2): the same source with one wgmma
 * group kept in flight (-DWG_INFLIGHT=1, dt_gemm_wg2_<dtype>); wg3 (variant 3): wg1
 * with the TMA-store epilogue (-DWG_EPI_TMA=1, a third tensor map for the output;
 * register stores, i.e. wg1, where the output rows are not 16-byte aligned); wg4
 * (variant 4): wg3 in clusters of two blocks on neighbouring row tiles sharing B by TMA
 * multicast (-DWG_CLUSTER=2, BN 128 or 256: at BN 64 it plans wg3; no split-K).
 * DUALTIME_GEMM_STAGES=2..8 sets the stages (default dt_gemm_default_stages). Falls
 * back to tc1 where TMA cannot take A or B. */
static dt_status plan_gemm_wg1(const dt_case_layout *L, const dt_buffer_layout *A,
                               const dt_buffer_layout *B, const dt_buffer_layout *O,
                               const char *arch, int sm_count, int variant, dt_cuda_plan *p,
                               dt_err *err) {
    const char *a90 = wg1_arch(arch);
    char why[80];
    if (!a90) {
        snprintf(why, sizeof why, "arch %s has no wgmma", arch);
        return plan_gemm_tc1(L, A, B, p, why, err);
    }
    if (!rows_aligned16(A) || !rows_aligned16(B)) {
        snprintf(why, sizeof why, "%s rows not 16-byte aligned for TMA",
                 !rows_aligned16(A) ? "A" : "B");
        return plan_gemm_tc1(L, A, B, p, why, err);
    }
    /* the tile width from the shape (dt_gemm_geom.h); DUALTIME_GEMM_FILL=0 the rule
     * before 64-wide tiles, DUALTIME_GEMM_BN=64|128|256 forces one */
    int fill = 1;
    const char *fill_env = getenv("DUALTIME_GEMM_FILL");
    if (fill_env && *fill_env) {
        if (strcmp(fill_env, "0") == 0)
            fill = 0;
        else if (strcmp(fill_env, "1") != 0)
            return dt_fail(err, DT_EINVAL, "DUALTIME_GEMM_FILL=%s: expected 0 or 1", fill_env);
    }
    dt_gemm_geom geo = dt_gemm_geom_choose(L->m, L->n, sm_count, fill);
    const char *bn_env = getenv("DUALTIME_GEMM_BN");
    if (bn_env && *bn_env) {
        const int forced = strcmp(bn_env, "64") == 0    ? 64
                           : strcmp(bn_env, "128") == 0 ? 128
                           : strcmp(bn_env, "256") == 0 ? 256
                                                        : 0;
        if (!forced)
            return dt_fail(err, DT_EINVAL, "DUALTIME_GEMM_BN=%s: expected 64, 128 or 256", bn_env);
        geo = dt_gemm_geom_of(L->m, L->n, sm_count, forced);
    }
    int splitk = 1;
    dt_status kst = dt_cuda_plan_int_knob("DUALTIME_GEMM_SPLITK", 1, 2, 0, &splitk, err);
    if (kst != DT_OK) return kst;
    if (splitk == 2) {
        /* opt-in: the 128 x BN tiles of the rule before 64-wide tiles (1024^3: 64 tiles of
         * 128 x 128, so 128 units), at most 128 wide (256 spills with the fix-up) */
        if (geo.bn == 256 && bn_env && *bn_env)
            return dt_fail(err, DT_EINVAL, "DUALTIME_GEMM_SPLITK=2 takes DUALTIME_GEMM_BN 64 or 128");
        if (!(bn_env && *bn_env)) geo = dt_gemm_geom_choose(L->m, L->n, sm_count, 0);
        if (geo.bn == 256) geo = dt_gemm_geom_of(L->m, L->n, sm_count, 128);
        if ((L->k + 63) / 64 < 2)
            return dt_fail(err, DT_EINVAL, "DUALTIME_GEMM_SPLITK=2 needs K > 64 (K = %lld)",
                           (long long)L->k);
    }
    const int bn = geo.bn;
    if (variant == 4 && splitk == 2)
        return dt_fail(err, DT_EINVAL, "DUALTIME_GEMM_VARIANT=wg4 takes no DUALTIME_GEMM_SPLITK=2");
    const int cluster = variant == 4 && bn >= 128 ? 2 : 1;
    int stages = 0, epi_boxes = 0;
    unsigned smem = 0;
    kst = wg_memory(bn, variant, O, &stages, &epi_boxes, &smem, err);
    if (kst != DT_OK) return kst;
    const int inflight = variant == 2;
    const int64_t tiles = geo.tiles;
    /* work units: tiles, half tiles (split-K), or blocks of tile pairs (clusters: a pair
     * of row tiles is a cluster's unit, one tile of it a block's) */
    const int64_t units = cluster == 2 ? 2 * (((L->m + 127) / 128 + 1) / 2) * ((L->n + bn - 1) / bn)
                                       : tiles * splitk;
    /* split-K pairs run in neighbouring blocks: an even grid, every block resident */
    const int64_t grid_max = splitk == 2 || cluster == 2 ? (sm_count & ~1) : sm_count;
    if (grid_max < 1)
        return dt_fail(err, DT_EINVAL, "DUALTIME_GEMM_SPLITK=2 needs at least 2 SMs (%d)", sm_count);
    const int veco = O->data_offset % 4 == 0 && (O->row_stride * O->elem_bytes) % 4 == 0 &&
                     L->n % 2 == 0;
    DT_ASSERT(strncmp(p->opts[0], "--gpu-architecture=", 19) == 0);
    snprintf(p->opts[0], DT_CUDA_OPT_LEN, "--gpu-architecture=%s", a90);
    p->source_name = "gemm_wg1.cu";
    snprintf(p->kernel_name, sizeof p->kernel_name, "dt_gemm_wg%d_%s",
             cluster == 2 ? 4 : epi_boxes ? 3 : inflight ? 2 : 1, dt_dtype_name(L->dtype));
    dt_cuda_plan_add_opt(p, "-DBN=%d", bn);
    if (inflight) dt_cuda_plan_add_opt(p, "-DWG_INFLIGHT=1");
    if (cluster == 2) {
        dt_cuda_plan_add_opt(p, "-DWG_CLUSTER=2");
        p->persistent_cluster = 2; /* the backend keeps the grid to resident clusters */
    }
    if (epi_boxes) {
        dt_cuda_plan_add_opt(p, "-DWG_EPI_TMA=1");
        dt_cuda_plan_add_opt(p, "-DWG_EPI_BOXES=%d", epi_boxes);
    }
    dt_cuda_plan_add_opt(p, "-DSTAGES=%d", stages);
    dt_cuda_plan_add_opt(p, "-DVECO=%d", veco ? 2 : 1);
    if (splitk == 2) {
        dt_cuda_plan_add_opt(p, "-DWG_SPLITK=2");
        /* per tile 128 x bn FP32 partials, then one flag a tile */
        p->workspace_flags_offset = (unsigned long long)tiles * 128 * (unsigned)bn * 4;
        p->workspace_bytes = p->workspace_flags_offset + 4ull * (unsigned long long)tiles;
    }
    /* the stages (+ wg3's epilogue boxes) + 1 KiB to align the base + the mbarriers */
    p->shared_bytes = smem;
    set_launch(p, (unsigned)(units < grid_max ? units : grid_max), 1, 384);
    p->ntma = 2;
    p->tma[0].buf = 0; /* A: {K, M}, boxes 64 x 128 */
    p->tma[0].box[0] = 64;
    p->tma[0].box[1] = 128;
    p->tma[1].buf = 1; /* B: {N, K}, boxes 64 x 64 (BN/64 of them a stage) */
    p->tma[1].box[0] = 64;
    p->tma[1].box[1] = 64;
    if (epi_boxes) { /* wg3: the output {N, M}, boxes 64 x 64, stored by TMA */
        p->ntma = 3;
        p->tma[2].buf = dt_layout_output(L);
        p->tma[2].box[0] = 64;
        p->tma[2].box[1] = 64;
    }
    char epi[64];
    wg_epi_note(epi, sizeof epi, variant, bn, epi_boxes, cluster);
    snprintf(p->summary, sizeof p->summary,
             "%s variant=wg%d grid=%u (persistent, %lld tiles) block=384 (tma + 2 wgmma "
             "wgs) tile=128x%dx64 stages=%d smem=%u veco=%d %s wgmma.m64n%dk16 "
             "swizzle128 wait_group=%d fill=%d waves=%lld%s%s",
             p->kernel_name, cluster == 2 ? 4 : epi_boxes ? 3 : inflight ? 2 : 1, p->grid[0], (long long)tiles, bn,
             stages, p->shared_bytes, veco ? 2 : 1, a90, bn, inflight ? 1 : 0, fill,
             (long long)geo.waves, splitk == 2 ? " splitk=2" : "", epi);
    return DT_OK;
}

/* v2's split-K rule (sm_90, the 128x64 and 64x64 tiles): the blocks a tile, doubled up to
 * 8 while the grid has under 1.8 blocks an SM (v2 runs 2 an SM) and each block keeps at
 * least 8 of the ksteps K-steps. */
static int v2_split_rule(int64_t tiles, int64_t ksteps, int sm_count) {
    int ks = 1;
    while (ks < 8 && tiles * ks * 10 < (int64_t)sm_count * 18 && ksteps >= 8 * 2 * ks) ks *= 2;
    return ks;
}

/* gemm for bf16/f16: thin shapes (N == 1 or M == 1) take gemv (gemv.cu,
 * backend_cuda_plan_sgemm.c) when the variant is unset (and DUALTIME_GEMM_GEMV_NARROW is
 * not 0) or "gemv"; otherwise DUALTIME_GEMM_VARIANT unset or wg3 -> wg3 (the default since it
 * measured 0.94x cuBLAS's time at 1024^3 and 0.995x at 4096^3 in one run on the H200,
 * docs/perf.md "gemm wg3 in one run"), wg1, wg2, wg4 -> themselves, each with the tc1
 * fallback where TMA cannot take A or B or the arch has no wgmma; tc1 -> tc1; v1/v2 (FP32
 * FFMA kernels) and other names are refused. */
static dt_status plan_gemm_narrow(const dt_case_layout *L, const dt_buffer_layout *A,
                                  const dt_buffer_layout *B, const dt_buffer_layout *O,
                                  const char *arch, int sm_count, dt_cuda_plan *p, dt_err *err) {
    int thin = 0;
    dt_status tst = dt_sgemm_plan_thin(L, arch_number(arch), sm_count, p, &thin, err);
    if (tst != DT_OK || thin) return tst;
    const char *var = getenv("DUALTIME_GEMM_VARIANT");
    if (!var || !*var || strcmp(var, "wg3") == 0)
        return plan_gemm_wg1(L, A, B, O, arch, sm_count, 3, p, err);
    if (strcmp(var, "wg1") == 0) return plan_gemm_wg1(L, A, B, O, arch, sm_count, 1, p, err);
    if (strcmp(var, "wg2") == 0) return plan_gemm_wg1(L, A, B, O, arch, sm_count, 2, p, err);
    if (strcmp(var, "wg4") == 0) return plan_gemm_wg1(L, A, B, O, arch, sm_count, 4, p, err);
    if (strcmp(var, "tc1") != 0)
        return dt_fail(err, DT_EINVAL, "DUALTIME_GEMM_VARIANT=%s: %s gemm has variants tc1, wg1, wg2, wg3, wg4, gemv, gemv-mma",
                       var, dt_dtype_name(L->dtype));
    return plan_gemm_tc1(L, A, B, p, NULL, err);
}

dt_status dt_cuda_plan_make(const dt_case_layout *L, const char *arch, int sm_count,
                            dt_cuda_plan *p, dt_err *err) {
    memset(p, 0, sizeof *p);
    if (L->op < 0 || L->op >= DT_OP_COUNT) return dt_fail(err, DT_EINVAL, "bad op %d", L->op);
    const dt_op_info *info = dt_op_get(L->op);
    if (sm_count <= 0) sm_count = 132;
    const int64_t m = L->m, n = L->n, k = L->k;
    if (m <= 0 || n <= 0 || (info->is_gemm && k <= 0))
        return dt_fail(err, DT_EINVAL, "empty shape %lldx%lldx%lld", (long long)m, (long long)n,
                       (long long)k);
    if (m > (1LL << 31) - 1 || n > (1LL << 31) - 1 || k > (1LL << 31) - 1)
        return dt_fail(err, DT_EINVAL, "shape too large for 32-bit row/column indices");
    if (!dt_dtype_is_float(L->dtype))
        return dt_fail(err, DT_EINVAL, "bad case dtype %d", (int)L->dtype);
    const int narrow = L->dtype != DT_F32;
    const char *dname = dt_dtype_name(L->dtype); /* kernel suffix: f32, bf16, f16 */
    /* elements per 16-byte vector: 4 floats or 8 bf16/f16 */
    const int vw = 16 / dt_dtype_size(L->dtype);
    p->source_name = k_source_names[L->op];
    snprintf(p->kernel_name, sizeof p->kernel_name, "dt_%s_%s", info->name, dname);

    dt_cuda_plan_add_opt(p, "--gpu-architecture=%s", arch);
    dt_cuda_plan_add_opt(p, "-default-device");
    dt_cuda_plan_add_opt(p, "--std=c++17");
    dt_cuda_plan_add_opt(p, "-lineinfo");
    dt_cuda_plan_add_opt(p, "-DM=%lld", (long long)m);
    dt_cuda_plan_add_opt(p, "-DN=%lld", (long long)n);
    if (info->is_gemm) dt_cuda_plan_add_opt(p, "-DK=%lld", (long long)k);
    /* storage type (dt_cuda_common.cuh); FP32 keeps the default, so its options and
     * code are those of the FP32-only backend */
    if (narrow) dt_cuda_plan_add_opt(p, "-DDT_ELEM=%d", L->dtype == DT_BF16 ? 1 : 2);

    const int out = dt_layout_output(L);
    const dt_buffer_layout *A = &L->buf[0], *O = &L->buf[out];
    /* second matrix input (add, gelu_add, residual_layernorm, gemm) */
    const dt_buffer_layout *B = info->buffers[1].viewable ? &L->buf[1] : NULL;
    dt_cuda_plan_add_opt(p, "-DLDA=%lld", (long long)A->row_stride);
    if (B) dt_cuda_plan_add_opt(p, "-DLDB=%lld", (long long)B->row_stride);
    dt_cuda_plan_add_opt(p, "-DLDO=%lld", (long long)O->row_stride);

    if (info->is_gemm && narrow) return plan_gemm_narrow(L, A, B, O, arch, sm_count, p, err);
    if (info->is_gemm) {
        /* Variant: v2 (gemm_v2.cu: double-buffered shared memory, warp-tiled, one barrier
         * per K-step, register-capped for 2 blocks/SM) by default; v1 (gemm.cu) on request
         * with DUALTIME_GEMM_VARIANT=v1, so both can be timed in one device run. */
        const char *var = getenv("DUALTIME_GEMM_VARIANT");
        int v2 = 1;
        if (var && *var) {
            if (strcmp(var, "v1") == 0)
                v2 = 0;
            else if (strcmp(var, "v2") != 0 && strcmp(var, "gemv") != 0)
                return dt_fail(err, DT_EINVAL,
                               "DUALTIME_GEMM_VARIANT=%s: expected v1, v2 or gemv for f32 (tc1, "
                               "wg1, wg2, wg3, wg4, gemv-mma are bf16/f16 only)",
                               var);
        }
        /* thin shapes (N == 1 or M == 1): gemv.cu (backend_cuda_plan_sgemm.c) */
        int thin = 0, shape_geo = 1;
        dt_status tst = dt_sgemm_plan_thin(L, arch_number(arch), sm_count, p, &thin, err);
        if (tst == DT_OK) tst = dt_sgemm_shape_knob(&shape_geo, err);
        if (tst != DT_OK || thin) return tst;
        /* tile configurations, largest first: take the first that fills the GPU */
        static const struct { int bm, bn, bk, tm, tn; } cfg[] = {
            {128, 128, 8, 8, 8}, {128, 64, 16, 8, 4}, {64, 64, 16, 4, 4}};
        int c = 0;
        for (c = 0; c < 2; c++) {
            int64_t blocks = (int64_t)ceil_div_u(m, cfg[c].bm) * ceil_div_u(n, cfg[c].bn);
            if (blocks * 10 >= (int64_t)sm_count * 9) break;
        }
        int ksplit = 0; /* DUALTIME_GEMM_V2_SPLITK: 0 the rule (below), 1 off, 2|4|8 asked for */
        dt_status sk = dt_cuda_plan_int_knob("DUALTIME_GEMM_V2_SPLITK", 1, 8, 1, &ksplit, err);
        if (sk != DT_OK) return sk;
        const int split_ok = v2 && shape_geo && arch_number(arch) >= 90;
        /* the split-K tile (session 16): where no tile fills the GPU unsplit (c == 2), the
         * 64x64 tile would need a split of 4 or more, and the 128x64 tile's split fills
         * (tiles x k >= 1.8 blocks an SM), take 128x64: 32 FMAs a thread per 3 LDS.128
         * against 64x64's 16 per 2. H100, one held run (docs/perf.md "FP32 gemm: the
         * split-K tile"): 4096x64x4096 104.7 -> 82.9 us (64x64 over 4 -> 128x64 over 8),
         * but 4096x128x4096 135.9 -> 160.2 (64x64 over 2 -> 128x64 over 4), hence the
         * "4 or more". DUALTIME_GEMM_SPLIT_TILE=0: the 64x64 tile always, as before. */
        int split_tile = 1;
        dt_status st1 = dt_cuda_plan_int_knob("DUALTIME_GEMM_SPLIT_TILE", 0, 1, 0, &split_tile, err);
        if (st1 != DT_OK) return st1;
        if (c == 2 && split_ok && split_tile && ksplit == 0) {
            const int64_t t1 = (int64_t)ceil_div_u(m, cfg[1].bm) * ceil_div_u(n, cfg[1].bn);
            const int64_t t2 = (int64_t)ceil_div_u(m, cfg[2].bm) * ceil_div_u(n, cfg[2].bn);
            if (v2_split_rule(t2, (k + cfg[2].bk - 1) / cfg[2].bk, sm_count) >= 4 &&
                t1 * v2_split_rule(t1, (k + cfg[1].bk - 1) / cfg[1].bk, sm_count) * 10 >=
                    (int64_t)sm_count * 18)
                c = 1;
        }
        int bk = cfg[c].bk;
        /* v2, 128x128 tile: BK=16 (half the barriers, 128 registers instead of 125) by
         * default since it measured 5% faster on the H200 (4096^3: 2926 vs 3086 us,
         * docs/perf.md); DUALTIME_GEMM_BK=8|16|32 chooses for timing experiments (32:
         * docs/perf.md, "FP32 gemm: thin shapes and small K") */
        if (v2 && c == 0) bk = 16;
        const char *bk_env = getenv("DUALTIME_GEMM_BK");
        if (v2 && c == 0 && bk_env && *bk_env) {
            if (strcmp(bk_env, "8") == 0)
                bk = 8;
            else if (strcmp(bk_env, "16") == 0)
                bk = 16;
            else if (strcmp(bk_env, "32") == 0) /* two prefetch phases, dynamic smem */
                bk = 32;
            else
                return dt_fail(err, DT_EINVAL, "DUALTIME_GEMM_BK=%s: expected 8, 16 or 32",
                               bk_env);
        }
        /* v2's A tile shifted so its transposing stores are conflict-free (gemm_v2.cu
         * ASWZ) on the 128x64 and 64x64 tiles, not on 128x128: H100, one held run
         * (docs/perf.md "FP32 gemm: the A tile swizzled"): 1024^3 (128x64) 57.5 -> 56.1 us,
         * 4096x64x4096 84.1 -> 82.9, but 4096^3 2834 -> 2917 and 2048^3 364.7 -> 377.4
         * (128 registers at the cap instead of 126). DUALTIME_GEMM_ASWZ=0 / 1: off / on
         * on every tile. */
        int aswz = -1;
        dt_status az = dt_cuda_plan_int_knob("DUALTIME_GEMM_ASWZ", 0, 1, 0, &aswz, err);
        if (az != DT_OK) return az;
        aswz = v2 && (aswz < 0 ? c != 0 : aswz);
        if (v2) {
            p->source_name = "gemm_v2.cu";
            snprintf(p->kernel_name, sizeof p->kernel_name, "dt_gemm_v2_f32");
            if (!aswz) dt_cuda_plan_add_opt(p, "-DASWZ=0");
        }
        const int veca = rows_aligned16(A) && k % 4 == 0;
        const int vecb = rows_aligned16(B) && n % 4 == 0;
        const int vecc = rows_aligned16(O) && n % 4 == 0;
        /* v2 keeps both buffers of both tiles in shared memory (gemm_v2.cu DT_SMEM_BYTES:
         * with ASWZ at 16-byte A loads each A buffer has (BK / 8 - 1) x 32 / (BK / 4) floats
         * more); over the 48 KiB static limit (BK=32: 66560 bytes, 66656 shifted) the kernel
         * takes them as dynamic shared memory */
        if (v2) {
            const unsigned ash = aswz && veca && 32 / (bk / 4) >= 4 ? 32u / (unsigned)(bk / 4) : 0u;
            const unsigned abuf = (unsigned)bk * (unsigned)(cfg[c].bm + 4) + (unsigned)(bk / 8 - 1) * ash;
            const unsigned smem = (2u * abuf + 2u * (unsigned)bk * (unsigned)cfg[c].bn) * 4u;
            if (smem > 48u * 1024u) p->shared_bytes = smem;
        }
        dt_cuda_plan_add_opt(p, "-DBM=%d", cfg[c].bm);
        dt_cuda_plan_add_opt(p, "-DBN=%d", cfg[c].bn);
        dt_cuda_plan_add_opt(p, "-DBK=%d", bk);
        dt_cuda_plan_add_opt(p, "-DTM=%d", cfg[c].tm);
        dt_cuda_plan_add_opt(p, "-DTN=%d", cfg[c].tn);
        dt_cuda_plan_add_opt(p, "-DVECA=%d", veca ? 4 : 1);
        dt_cuda_plan_add_opt(p, "-DVECB=%d", vecb ? 4 : 1);
        dt_cuda_plan_add_opt(p, "-DVECC=%d", vecc ? 4 : 1);
        /* shape geometry: v2's last K-step multiplies only its K % BK valid depth */
        const int ktail = v2 && shape_geo && k % bk != 0;
        if (ktail) dt_cuda_plan_add_opt(p, "-DKTAIL_EXACT=1");
        /* split-K over a cluster where even the smaller tiles leave SMs idle (sm_90):
         * KSPLIT blocks a tile while the grid has under 1.8 blocks an SM (v2 runs 2 an SM)
         * and each block keeps >= 8 K-steps; DUALTIME_GEMM_V2_SPLITK=1 off, =2|4|8 asked
         * for (H200, session 10: 4096x64x4096 183.6 us on 64 blocks of 64x64, cuBLAS 60.7;
         * docs/perf.md "Issue 18, session 10") */
        const int64_t tiles = (int64_t)ceil_div_u(m, cfg[c].bm) * ceil_div_u(n, cfg[c].bn);
        const int64_t ksteps = (k + bk - 1) / bk;
        if (ksplit > 1 && (!v2 || c == 0 || arch_number(arch) < 90 || ksteps < 2 * ksplit))
            return dt_fail(err, DT_EINVAL,
                           "DUALTIME_GEMM_V2_SPLITK=%d: needs v2 on the 128x64 or 64x64 tile, "
                           "sm_90 and at least %d K-steps (this plan: %s, tile %dx%d, %s, %lld)",
                           ksplit, 2 * ksplit, v2 ? "v2" : "v1", cfg[c].bm, cfg[c].bn, arch,
                           (long long)ksteps);
        if (ksplit == 0) /* the rule */
            ksplit = split_ok && c > 0 ? v2_split_rule(tiles, ksteps, sm_count) : 1;
        if (ksplit > 1) dt_cuda_plan_add_opt(p, "-DKSPLIT=%d", ksplit);
        /* and scalar C (N % 4 != 0) leaves through shared memory, whole row segments (not
         * with split-K, whose sum stores whole rows already) */
        const int epi = v2 && shape_geo && !vecc && ksplit == 1;
        if (epi) dt_cuda_plan_add_opt(p, "-DEPI_STAGE=1");
        unsigned threads = (unsigned)((cfg[c].bm / cfg[c].tm) * (cfg[c].bn / cfg[c].tn));
        set_launch(p, ceil_div_u(n, cfg[c].bn), ceil_div_u(m, cfg[c].bm), threads);
        p->grid[2] = (unsigned)ksplit;
        char ksbuf[48] = "", gridbuf[48];
        snprintf(gridbuf, sizeof gridbuf, "(%u,%u)", p->grid[0], p->grid[1]);
        if (ksplit > 1) {
            snprintf(ksbuf, sizeof ksbuf, " split-k=%d (cluster, dsmem-sum)", ksplit);
            snprintf(gridbuf, sizeof gridbuf, "(%u,%u,%u)", p->grid[0], p->grid[1], p->grid[2]);
        }
        const int sw = snprintf(p->summary, sizeof p->summary,
                 "%s variant=%s grid=%s block=%u tile=%dx%dx%d thread=%dx%d "
                 "vec(a,b,c)=(%d,%d,%d) %s%s%s%s%s%s ffma-only",
                 p->kernel_name, v2 ? "v2" : "v1", gridbuf, threads, cfg[c].bm, cfg[c].bn, bk,
                 cfg[c].tm, cfg[c].tn, veca ? 4 : 1, vecb ? 4 : 1, vecc ? 4 : 1,
                 v2 ? "smem-double-buffered warp-tiled" : "smem-single-buffered",
                 aswz ? " a-swizzled" : "",
                 bk > 16 ? " prefetch-2-phases dyn-smem" : "", ktail ? " ktail-exact" : "",
                 epi ? " epilogue-staged" : "", ksbuf);
        DT_ASSERT(sw > 0 && sw < (int)sizeof p->summary); /* the longest is ~190 characters */
        return DT_OK;
    }

    /* Row and elementwise ops: VEC=4 only when every matrix buffer the kernel walks with
     * the column index has 16B-aligned rows and N % 4 == 0 (gamma/beta are contiguous at
     * a 256-aligned region start, so they follow). Outputs of M x 1 do not count. */
    int aligned = n % vw == 0 && rows_aligned16(A) && (!B || rows_aligned16(B));
    if (O->cols == n) aligned = aligned && rows_aligned16(O);
    /* elementwise over contiguous buffers (row stride N: one flat range of M*N) needs only
     * 16-byte aligned bases, whatever N: VEC-wide items over the range and the last
     * (M*N) % VEC elements scalar (dt_elementwise's DT_TAIL). H200, bf16 add 6000x6001
     * at vec 1: 58.4 us against torch's 52.1 (session 9 sweep; docs/perf.md "Issue 18,
     * session 9", rule 1). DUALTIME_ELEM_FLAT=0: the version before. */
    const int elementwise = L->op == DT_OP_ADD || L->op == DT_OP_GELU_ADD;
    int flat_on = 1; /* DUALTIME_ELEM_FLAT=0: vec 1 wherever N % VEC != 0, as before */
    dt_status fk = dt_cuda_plan_int_knob("DUALTIME_ELEM_FLAT", 0, 1, 0, &flat_on, err);
    if (fk != DT_OK) return fk;
    int waves = 16; /* fewer items while the grid has fewer than this many blocks an SM
                      (DUALTIME_ELEM_WAVES=k; 1: the version of session 8, 4: of sessions
                      9-10): blocks that are all resident at once balance only when each
                      SM has several. H200, one held run (session 9, 1 -> 4): add 1000x1000
                      f32 3.46 -> 3.11 us (torch 3.22), 2049x1025 5.33 -> 4.60 (4.84),
                      12345x77 3.61 -> 3.02 (3.15). Session 11 (ab20, 4 -> 16, 7 shapes of
                      3-50 MB): add bf16 1024x4096 5.11 -> 4.62 (torch 4.61), 3000x2000 7.34
                      -> 6.67 (6.85), gelu_add -5 to -18% everywhere; the held verdicts
                      against torch eager go from 6 slower to none of 28 (docs/perf.md
                      "Elementwise blocks an SM") */
    dt_status wk = dt_cuda_plan_int_knob("DUALTIME_ELEM_WAVES", 1, 16, 0, &waves, err);
    if (wk != DT_OK) return wk;
    const int contig = A->row_stride == n && (!B || B->row_stride == n) && O->row_stride == n;
    const int flat = flat_on && elementwise && contig && B && A->data_offset % 16 == 0 &&
                     B->data_offset % 16 == 0 && O->data_offset % 16 == 0;
    if (flat) aligned = 1;
    /* bf16/f16 elementwise over a strided window that is not 16-byte aligned (views: rows
     * 2 mod 4 bytes past a boundary): 32-bit pairs, the inputs' words funnel-shifted into
     * place, 4 bytes a lane where vec 1 moves 2. With every item's loads in one basic block
     * (below) the pairs are the faster path for both types. H200, one held run (session 17,
     * ab29, docs/perf.md "Session 17 measured"): f16 add 300x30000 view vec 1 19.66 ->
     * pairs 16.22 us, gelu_add 29.42 -> 21.10; bf16 add 4096x4096 33.70 -> 30.33. (Session
     * 16 had pairs for bf16 only: with the guarded loads f16's vec 1 was faster.)
     * DUALTIME_ELEM_PAIR=0: vec 1 for both; =1: pairs (the default). */
    int pair_on = 1;
    dt_status pk = dt_cuda_plan_int_knob("DUALTIME_ELEM_PAIR", 0, 1, 0, &pair_on, err);
    if (pk != DT_OK) return pk;
    /* elementwise over a strided window whose inputs' rows are not 16-byte aligned
     * (views) and whose output rows are aligned whole vectors: 16-byte items, each input's
     * from the two aligned vectors that hold it (DT_SHIFT_A / DT_SHIFT_B, dt_elementwise's
     * shifted form; session 18), 8 bf16/f16 elements a load pair where the pairs below
     * move 2. DUALTIME_ELEM_SHIFT=0|1 forces; unset: bf16/f16 (FP32 views keep vec 1). */
    /* every input starts at a whole element (the shifted forms below need it) */
    const int whole_elems = A->data_offset % A->elem_bytes == 0 &&
                            (!B || B->data_offset % B->elem_bytes == 0);
    int eshift = -1;
    dt_status ek = dt_cuda_plan_int_knob("DUALTIME_ELEM_SHIFT", 0, 1, 0, &eshift, err);
    if (ek != DT_OK) return ek;
    if (eshift < 0) eshift = narrow;
    eshift = eshift && elementwise && B && !aligned && !contig && n % vw == 0 &&
             rows_aligned16(O) && whole_elems;
    const int pha = pair_phase(A), phb = B ? pair_phase(B) : -1;
    const int pair = pair_on && !eshift && elementwise && narrow && !aligned && !contig &&
                     n % 2 == 0 && pha >= 0 && phb >= 0 && pair_phase(O) == 0;
    /* Row ops over rows that do not all start 16-byte aligned (views, odd N): the input
     * rows loaded shifted into the aligned path's in-register chunks (DT_SHIFT_A /
     * DT_SHIFT_B, dt_load_row_shifted: two aligned 16-byte loads a chunk, put in place by
     * selects) where the output's rows are aligned whole vectors (or the output is one
     * value a row: cross_entropy) and no parameter vector needs it (they are contiguous
     * at 256-byte aligned starts). The geometry is then the aligned rows', not the vec 1
     * warp rows (up to 1024 columns) or the staged row (longer rows that fit registers).
     * Unset: bf16/f16 rows, and FP32 rows over 1024 columns (block rows). H100, one held
     * run (session 18, ab30, against =0): every bf16 view faster (softmax 8192x1000 12.61
     * -> 8.76 us, rmsnorm 17.18 -> 9.22, layernorm 4096x4096 30.36 -> 26.97); FP32 views
     * 5% faster in sum at 4096x4096 (rmsnorm 53.59 -> 48.08, softmax 50.54 -> 51.17) but
     * 5% slower in sum as warp rows at 8192x1000 (softmax 26.63 -> 31.14), whose vec 1
     * loads already move 128 bytes a warp instruction. DUALTIME_ROW_SHIFT=0|1 forces. */
    int shift_on = -1;
    dt_status shk = dt_cuda_plan_int_knob("DUALTIME_ROW_SHIFT", 0, 1, 0, &shift_on, err);
    if (shk != DT_OK) return shk;
    if (shift_on < 0) shift_on = narrow || n > 1024;
    const int row_op = L->op == DT_OP_SOFTMAX || L->op == DT_OP_RMSNORM ||
                       L->op == DT_OP_LAYERNORM || L->op == DT_OP_RESIDUAL_LAYERNORM ||
                       L->op == DT_OP_CROSS_ENTROPY;
    const int out_rows_ok = O->cols != n || (rows_aligned16(O) && n % vw == 0);
    /* output rows that are not aligned whole vectors (odd N): the chunks in the output
     * row's frame (DT_OFRAME: whole chunks stored 16 bytes at a time, the row's first
     * and last element by element; every input and gamma / beta loaded shifted into it) */
    const int oframe_ok = !out_rows_ok && O->data_offset % O->elem_bytes == 0;
    /* (layernorm's opt-in DT_LN_ONE / DT_LN_PERSIST / DT_LN_RAW rows load raw vectors:
     * set, they keep vec 1 on these rows) */
    const int ln_raw_asked = L->op == DT_OP_LAYERNORM && (getenv_set("DUALTIME_ROW_LN_ONE") ||
                                                          getenv_set("DUALTIME_ROW_LN_PERSIST") ||
                                                          getenv_set("DUALTIME_ROW_LN_RAW"));
    int rowshift = shift_on && row_op && !aligned && (out_rows_ok || oframe_ok) && !ln_raw_asked &&
                   whole_elems;
    const int oframe = rowshift && !out_rows_ok;
    const int fr_extra = oframe ? vw - 1 : 0; /* the frame's shift: up to VEC-1 columns more */
    const int vec = aligned || rowshift || eshift ? vw : pair ? 2 : 1;
    const int vec_opt = p->nopts; /* the staged-row variant below rewrites it to vw */
    dt_cuda_plan_add_opt(p, "-DVEC=%d", vec);
    if (pair) {
        dt_cuda_plan_add_opt(p, "-DDT_PHA=%d", pha);
        dt_cuda_plan_add_opt(p, "-DDT_PHB=%d", phb);
    }
    if (eshift && !rows_aligned16(A)) dt_cuda_plan_add_opt(p, "-DDT_SHIFT_A=1");
    if (eshift && !rows_aligned16(B)) dt_cuda_plan_add_opt(p, "-DDT_SHIFT_B=1");
    /* planted fault (tests only): sum accumulating in fp16, see sum.cu */
    const char *plant = getenv("DUALTIME_PLANT_ACC_F16");
    const int acc_f16 = plant && strcmp(plant, "1") == 0;
    if (acc_f16 && L->op != DT_OP_SUM)
        return dt_fail(err, DT_EINVAL, "DUALTIME_PLANT_ACC_F16=1 is for sum only");

    int fill = 1;
    dt_status fst = launch_fill_choice(&fill, err);
    if (fst != DT_OK) return fst;

    if (elementwise) {
        const int block = 256;
        int items = 4;
        int64_t total = flat ? m * n / vec : m * (n / vec);
        /* fill: fewer items per thread while the grid would leave SMs idle, so a small
         * problem is spread over as many SMs as it has blocks' worth of work (one load
         * round trip per thread instead of four) */
        while (fill && items > 1 &&
               (total + (int64_t)block * items - 1) / ((int64_t)block * items) <
                   (int64_t)waves * sm_count)
            items /= 2;
        dt_cuda_plan_add_opt(p, "-DBLOCK=%d", block);
        dt_cuda_plan_add_opt(p, "-DITEMS=%d", items);
        int64_t blocks = (total + (int64_t)block * items - 1) / ((int64_t)block * items);
        if (blocks < 1) blocks = 1; /* fewer than VEC elements: the tail alone, in block 0 */
        if (blocks > 0x7fffffffLL) return dt_fail(err, DT_EINVAL, "grid too large");
        set_launch(p, (unsigned)blocks, 1, block);
        /* every item's loads in one basic block (dt_elementwise DT_ELEM_LDALL): the default
         * for bf16/f16 over strided windows at vec 1 and 2, where the guarded loads were
         * serialized by the widening or funnel shift inside each item's block. H200, one
         * held run (session 17, ab29): bf16 pairs add 4096x4096 view 33.70 -> 30.33 us,
         * 8192x1000 16.62 -> 14.35; gelu_add 46.62 -> 41.54. FP32 views measured 2.6-3.3%
         * slower with it on add (49.18 -> 50.44 at 4096x4096) and contiguous 16-byte items
         * were not measured: off there. DUALTIME_ELEM_LDALL=0|1 forces. */
        int ldall = -1;
        dt_status lk = dt_cuda_plan_int_knob("DUALTIME_ELEM_LDALL", 0, 1, 0, &ldall, err);
        if (lk != DT_OK) return lk;
        if (ldall < 0) ldall = narrow && !contig && vec <= 2;
        if (eshift) ldall = 0; /* the shifted items load all in one block anyway */
        if (ldall) dt_cuda_plan_add_opt(p, "-DDT_ELEM_LDALL=1");
        snprintf(p->summary, sizeof p->summary,
                 "%s elementwise grid=%u block=%d items/thread=%d vec=%d %s%s%s%s", p->kernel_name,
                 p->grid[0], block, items, vec, contig ? "contiguous" : "strided",
                 flat && n % vw != 0 ? " flat-tail" : "",
                 pair ? (pha || phb ? " pairs-shifted" : " pairs") : "",
                 eshift ? " loads-shifted" : ldall ? " loads-unbranched" : "");
        return DT_OK;
    }

    /* Row ops: a warp per row for rows up to 1024 (a 128-thread block per row when there
     * are few rows longer than 128), else a block per row sized so each thread holds at
     * most 16 floats of the row (up to 1024 threads). Rows that do not fit 32 floats per
     * thread in registers take the multi-pass path over global. */
    /* Knobs (docs/cuda-backend.md): DUALTIME_ROW_ELEMS, the elements of its row each
     * thread of a block-per-row kernel holds: 16 for f32; 32 for bf16/f16 (a thread
     * moves 64 bytes either way; H200 8192^2 bf16: softmax 71.5 -> 67.1 us, cross_entropy
     * 43.8 -> 33.8, f16 rmsnorm 83.5 -> 69.7) except layernorm and residual_layernorm,
     * which keep 16 (layernorm bf16 75.4 at 16, 88.9 at 32: three arrays a thread;
     * but 32 on its persistent rows, 70.1: below, session 8), and sum (streaming, at the copy limit with 16: 33.1 us bf16).
     * DUALTIME_ROW_CLUSTER: 0 no cluster split, 1 (default) split rows too long for one
     * block's registers when there are few rows (M*4 <= SMs), 2 split every row too
     * long for one block and few rows of >= 16384 too (measured slower at 4096x50257,
     * docs/perf.md), 3 (opt-in) mode 1 and rows over 8192 at fewer than 4 rows an SM in
     * blocks of at most 512 threads (cluster_plan). DUALTIME_ROW_FASTEXP (default 1 for bf16/f16, 0 for f32): ex2.approx
     * and the reciprocal in softmax and cross_entropy. DUALTIME_CE_STREAM (default 0):
     * 1 gives cross_entropy, wherever it would take the staged row, one block of up to
     * 512 threads a row streaming 16-byte chunks through an online logsumexp (CESTREAM,
     * "ce-stream" in the summary; no shared row, no cluster; opt-in until measured). */
    const int ln_like = L->op == DT_OP_LAYERNORM || L->op == DT_OP_RESIDUAL_LAYERNORM;
    int elems = narrow && !ln_like && L->op != DT_OP_SUM ? 32 : 16, cluster_on = 1,
        fastexp = narrow, smem_mode = 1, smem_kb = 113, /* staged rows where they pay
                                                          (measured on the H200: perf.md) */
        smem_pipe = 0; /* DUALTIME_ROW_PIPE=1: persistent double-buffered (measured slower
                          on the H200: docs/perf.md "Issue 18, third pass") */
    /* sum over rows that are not whole 16-byte vectors (odd N, views): 64 elements a
     * thread, a quarter of the threads a row (session 10; H200, one held run each:
     * 6000x6001 f32 40.9 -> 37.0 us, bf16 27.9 -> 20.5, torch 40.9 / 23.3; 4096x4096 bf16
     * view 9.02 -> 7.17, torch 7.86; 300x30000 view f32 9.56 -> 7.15, torch 8.39; bf16
     * 5.67 -> 4.86; 300x100277 f32 34.3 -> 34.9, bf16 20.3 -> 20.2. Aligned rows keep 16:
     * 1024x4096 4.42 -> 4.68 at 64, 8192^2 the same; docs/perf.md "Issue 18, session 10") */
    if (L->op == DT_OP_SUM && !aligned) elems = 64;
    dt_status kst = dt_cuda_plan_int_knob("DUALTIME_ROW_ELEMS", 4, 64, 1, &elems, err);
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_SMEM", 0, 2, 0, &smem_mode, err);
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_PIPE", 0, 1, 0, &smem_pipe, err);
    int ln_raw = 0; /* layernorm.cu DT_LN_RAW (=1: packed gamma/beta for narrow types):
                       opt-in, measured slower on the H200 (bf16 8192^2 94.7 us vs 75.4) */
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_LN_RAW", 0, 1, 0, &ln_raw, err);
    int ln_one = 0; /* layernorm.cu DT_LN_ONE (in-register rows with one block reduction of
                       (count, mean, M2) partials; 1: registers for 40 a thread, 2: for 32):
                       opt-in, measured slower on the H200 (bf16 8192^2 76.1 / 76.6 us vs
                       74.8; docs/perf.md "layernorm one reduction measured") */
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_LN_ONE", 0, 2, 0, &ln_one, err);
    int ln_regs = 0; /* DUALTIME_ROW_LN_REGS: the in-register layernorm's register target
                        (0: DUALTIME_ROW_LN_ONE's, else ptxas's; opt-in A/B of occupancy) */
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_LN_REGS", 0, 128, 0, &ln_regs, err);
    int ln_persist = 0; /* layernorm.cu DT_LN_PERSIST (block-per-row in-register rows as a
                           persistent grid prefetching each block's next row; 2: gamma and
                           beta kept in registers too): the default for bf16/f16 (below),
                           opt-in for f32 (slower there: 138 against 132 us at 8192^2) */
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_LN_PERSIST", 0, 2, 0, &ln_persist, err);
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_SMEM_KB", 16, 227, 0, &smem_kb, err);
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_CLUSTER", 0, 3, 0, &cluster_on, err);
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_FASTEXP", 0, 1, 0, &fastexp, err);
    int ce_stream = -1; /* DUALTIME_CE_STREAM: 1 cross_entropy streams the row (CESTREAM)
                           wherever it would be staged, 0 never; unset (the default, session
                           9): where a 512-thread block streams >= 8 16-byte chunks a thread
                           (N >= 4096 x VEC). H200: 4096x50257 f32 206 us against the
                           staged 293, 2048x128256 256 against 484, bf16 109 / 131 against
                           126 / 231; at 8191x8193 (4 chunks) 138 against 72 (docs/perf.md
                           "Issue 18, session 9") */
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_CE_STREAM", 0, 1, 0, &ce_stream, err);
    int row_l2 = 0, row_l2_mb = 32, l2_bps = 0; /* DUALTIME_ROW_L2=1: the L2-resident
                            two-pass row (ROWL2), opt-in, unmeasured; its L2 budget */
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_L2", 0, 1, 0, &row_l2, err);
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_L2_MB", 4, 256, 0, &row_l2_mb, err);
    int store_ahead = 4; /* DUALTIME_ROW_STORE_AHEAD: the staged rmsnorm / layernorm store
                            pass's chunks a thread with their gamma (beta) loads issued
                            together (DT_STORE_AHEAD, dt_srow_store_params); 1: one chunk at
                            a time, the version before. H200, one held run: rmsnorm
                            2048x128256 f32 948.8 -> 733.9 us (torch 785.1), bf16 459 ->
                            355.4 (407.5); never slower (session 12; docs/perf.md "store
                            pass loaded ahead measured") */
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_STORE_AHEAD", 1, 8, 0, &store_ahead, err);
    int row_hint = -1; /* DUALTIME_ROW_HINT: L2 eviction policies on the 16-byte accesses of
                          the staged, pipelined, two-read and cross_entropy-stream rows
                          (DT_HINT; docs/perf.md "L2 eviction hints"). 1: output stores and
                          last reads evict first, parameter vectors and the two-read row's
                          first read evict last; 2: only the parameter loads evict last;
                          0: none. Unset: 2 for the ops with parameter vectors (rmsnorm,
                          layernorm, residual_layernorm), 0 for the others. H100, one held
                          run each (session 13): =1 cost softmax 3-6% (4096x50257 631 ->
                          668 us); =2 against 0: layernorm 2048x128256 f32 1233 -> 1043,
                          256x151936 171 -> 149, 34 of 36 cases at or under, two slower
                          (layernorm 300x100277 bf16 +5.7%, rmsnorm 2048x128256 f32
                          +1.4%); not yet on the H200 (docs/perf.md "ab24 measured") */
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_HINT", 0, 2, 0, &row_hint, err);
    int sm_online = -1; /* DUALTIME_ROW_SM_ONLINE: softmax's staged rows make one online
                           (max, sum) pass and one cluster combination (DT_SM_ONLINE) instead
                           of a max pass, an exp pass and two (1), or not (0). Unset: 1 for
                           bf16 / f16, whose store pass recomputes exp(x - max) anyway, 0 for
                           f32, whose exp pass keeps exp in shared memory and would pay a
                           second exp an element. H100, one held run (session 14; docs/perf.md
                           "softmax online staged rows measured"): bf16 2048x128256 433.7 ->
                           422.7 us, 256x151936 73.9 -> 72.0, 300x100277 55.9 -> 53.9,
                           4096x50257 tied, 512x49152 38.5 -> 38.8; f32 2-6% slower */
    if (kst == DT_OK) kst = dt_cuda_plan_int_knob("DUALTIME_ROW_SM_ONLINE", 0, 1, 0, &sm_online, err);
    if (kst != DT_OK) return kst;
    /* bf16/f16 layernorm (session 8, the default): 32 elements a thread on the persistent
     * prefetching rows (DT_LN_PERSIST=1) wherever the plan gives those rows (aligned rows
     * of 1025..32768, an in-register block a row, no cluster split); elsewhere 16, as
     * before (32 without the persistent rows was slower: 88.9 against 75.4 us). H200,
     * 8192^2 bf16, one held run: 70.1 us against 75.0 (fp32 132: 0.531x); 4096x8192 37.4
     * against 40.5, 16384x4096 69.3 against 72.1, 1024x4096 5.12 against 5.49 (docs/perf.md
     * "layernorm persistent rows"). Any of DUALTIME_ROW_ELEMS, _LN_PERSIST (0: the version
     * before), _LN_ONE, _LN_REGS, _TPR, _SMEM=2, _CLUSTER=2 set: as they say. */
    /* layernorm rows longer than 16384 (an in-register row would hold more than 16
     * elements a thread at 1024 threads: one block an SM, its phases never overlapped)
     * take the staged row where they are at least one a SM (session 9; H200, one held
     * run: 1024x32000 f32 147.6 -> 108.8 us, torch 120.3; bf16 87.9 -> 56.6; 2048x20000 117.2 -> 99.7 / 87.6 -> 80.3;
     * 1024x24000 87.0 -> 68.9 / 50.2 -> 37.2; docs/perf.md "Issue 18, session 9", rule 4).
     * DUALTIME_ROW_LN_STAGE=0: the in-register (bf16/f16: persistent) rows, as before. */
    int ln_stage = 1;
    kst = dt_cuda_plan_int_knob("DUALTIME_ROW_LN_STAGE", 0, 1, 0, &ln_stage, err);
    if (kst != DT_OK) return kst;
    const int ln_long = ln_stage && L->op == DT_OP_LAYERNORM && n > 16384 && m >= sm_count &&
                        smem_mode == 1; /* few rows (fewer than SMs): unmeasured, as before */
    if (narrow && L->op == DT_OP_LAYERNORM && aligned && n > 1024 && !ln_long && smem_mode != 2 &&
        cluster_on != 2 &&
        !getenv_set("DUALTIME_ROW_ELEMS") && !getenv_set("DUALTIME_ROW_LN_PERSIST") &&
        !getenv_set("DUALTIME_ROW_LN_REGS") && !ln_one && !tpr_env_set()) {
        int64_t t = pow2_ceil((n + 31) / 32);
        if (t < 64) t = 64;
        if (t > 1024) t = 1024;
        if ((n + t * vw - 1) / (t * vw) * vw <= 32) elems = 32, ln_persist = 1;
    }
    if (ce_stream < 0) ce_stream = L->op == DT_OP_CROSS_ENTROPY && n >= 8 * 512 * (int64_t)vw;
    if (ce_stream && L->op == DT_OP_CROSS_ENTROPY) smem_pipe = 0; else ce_stream = 0;
    if (ln_raw && narrow && L->op == DT_OP_LAYERNORM) dt_cuda_plan_add_opt(p, "-DDT_LN_RAW=1");
    if (fastexp && (L->op == DT_OP_SOFTMAX || L->op == DT_OP_CROSS_ENTROPY))
        dt_cuda_plan_add_opt(p, "-DDT_FASTEXP=1");
    else
        fastexp = 0;

    int tpr, block;
    if (n <= 1024 && fill && n > 128 && (m + 7) / 8 < sm_count) {
        /* fill, few rows of 129..1024: a 128-thread block per row, so each row is spread
         * over 4 warps and the grid over M SMs (H200, 128x1024 softmax: 2.43 -> 1.52 us
         * per kernel against 128 one-warp blocks; docs/perf.md, "Small shapes") */
        tpr = block = 128;
    } else if (n <= 1024) {
        tpr = 32;
        int rpb = 8; /* rows (warps) per block */
        /* fill: fewer rows per block while the grid would leave SMs idle (1x127: one
         * one-warp block instead of one block of 8 warps, 7 of them idle) */
        while (fill && rpb > 1 && (m + rpb - 1) / rpb < sm_count) rpb /= 2;
        block = 32 * rpb;
    } else {
        int64_t t = pow2_ceil((n + elems - 1) / elems);
        if (t < 64) t = 64;
        if (t > 1024) t = 1024;
        tpr = block = (int)t;
    }
    const char *tpr_env = getenv("DUALTIME_ROW_TPR");
    if (tpr_env && *tpr_env) {
        char *end = NULL;
        long t = strtol(tpr_env, &end, 10);
        if (*end || t < 32 || t > 1024 || (t & (t - 1)))
            return dt_fail(err, DT_EINVAL,
                           "DUALTIME_ROW_TPR=%s: expected a power of two in 32..1024", tpr_env);
        if (t != tpr) {
            tpr = (int)t;
            block = (int)t; /* 32: a warp per row, one row per block */
        }
    }
    if (acc_f16) {
        tpr = block = 32; /* the planted kernel is one warp per row */
        dt_cuda_plan_add_opt(p, "-DDT_ACC_F16=1");
    }
    int64_t per = (n + fr_extra + (int64_t)tpr * vec - 1) / ((int64_t)tpr * vec);
    int inreg = L->op != DT_OP_SUM && per * vec <= 32 + (fr_extra ? vec : 0);
    int64_t cl = 1, nc = n;
    if (cluster_plan(L->op, m, n, vec, elems, sm_count, acc_f16 || tpr_env_set() ? 0 : cluster_on,
                     arch_number(arch), fr_extra, &cl, &nc, &tpr, &per)) {
        block = tpr;
        inreg = 1;
        dt_cuda_plan_add_opt(p, "-DCLUSTER=%lld", (long long)cl);
        dt_cuda_plan_add_opt(p, "-DNC=%lld", (long long)nc);
    }
    /* the staged-row variant: where the row would be multi-pass or scalar (mode 1), or
     * every long row (mode 2); not where the cluster split above keeps it in registers */
    int smem_rows = 0;        /* 1 staged, 2 staged persistent double-buffered */
    int64_t grid_rows = m;    /* rows (clusters) the grid covers: fewer when persistent */
    {
        const int want = smem_mode == 2 ||
                         (smem_mode == 1 && cl == 1 && (!inreg || vec == 1 || ln_long));
        int threads = 0;
        int64_t scl = 1, snc = n, sclusters = m;
        unsigned sbytes = 0;
        if (want && !acc_f16 && !tpr_env_set() &&
            smem_row_plan(L->op, m, n, vw, smem_mode, arch_number(arch), sm_count,
                          (int64_t)smem_kb * 1024, !getenv_set("DUALTIME_ROW_SMEM_KB"),
                          smem_pipe, &scl, &snc, &threads, &sbytes, &sclusters)) {
            if (cl > 1) { /* mode 2 over an in-register cluster: drop its options */
                p->nopts -= 2;
                DT_ASSERT(strncmp(p->opts[p->nopts], "-DCLUSTER=", 10) == 0);
            }
            if (ce_stream) { /* one block a row, no shared row: 512 threads (128.. for short) */
                scl = 1, snc = n, sbytes = 0;
                for (threads = 512; threads > 128 && threads / 2 >= n / vw + 2;) threads /= 2;
            }
            smem_rows = ce_stream ? 3 : 1; /* 3: the stream */
            if (row_l2 && !smem_pipe &&
                (l2_bps = row_l2_plan(L->op, n, vw, row_l2_mb, arch_number(arch), sm_count,
                                      &threads, &sbytes))) {
                scl = 1, snc = n, smem_rows = 4; /* 4: the L2 two-pass */
            }
            cl = scl;
            nc = snc;
            tpr = block = threads;
            inreg = 0;
            snprintf(p->opts[vec_opt], DT_CUDA_OPT_LEN, "-DVEC=%d", vw);
            dt_cuda_plan_add_opt(p, ce_stream ? "-DCESTREAM=1" : smem_rows == 4 ? "-DROWL2=1" : "-DSMEMROW=1");
            if (smem_rows == 1 && (L->op == DT_OP_RMSNORM || L->op == DT_OP_LAYERNORM))
                dt_cuda_plan_add_opt(p, "-DDT_STORE_AHEAD=%d", store_ahead);
            else
                store_ahead = 0; /* not a staged store pass with parameters */
            if (row_hint < 0) /* the default: the parameter loads of the ops that have them */
                row_hint = L->op == DT_OP_RMSNORM || L->op == DT_OP_LAYERNORM ||
                                   L->op == DT_OP_RESIDUAL_LAYERNORM
                               ? 2
                               : 0;
            if (row_hint) dt_cuda_plan_add_opt(p, "-DDT_HINT=%d", row_hint);
            if (sm_online < 0) sm_online = narrow; /* the default: 2-byte elements */
            if (smem_rows == 1 && L->op == DT_OP_SOFTMAX && sm_online)
                dt_cuda_plan_add_opt(p, "-DDT_SM_ONLINE=1");
            else
                sm_online = 0; /* a staged softmax row only */
            if (smem_pipe && L->op != DT_OP_RESIDUAL_LAYERNORM) {
                dt_cuda_plan_add_opt(p, "-DSMEMPIPE=1");
                smem_rows = 2;
                grid_rows = sclusters;
            }
            if (cl > 1) {
                dt_cuda_plan_add_opt(p, "-DCLUSTER=%lld", (long long)cl);
                dt_cuda_plan_add_opt(p, "-DNC=%lld", (long long)nc);
            }
            p->shared_bytes = sbytes;
        }
    }
    int ln_minb = 0; /* the in-register layernorm's blocks an SM at ln_regs registers a
                        thread (DT_LN_ONE: 40 at =1, 32 at =2), where a thread holds at
                        most 16 elements (more would spill) */
    if (!(inreg && L->op == DT_OP_LAYERNORM)) ln_one = ln_regs = 0; /* in-register only */
    if (ln_one) dt_cuda_plan_add_opt(p, "-DDT_LN_ONE=1");
    /* persistent rows: the two-reduction in-register block-per-row kernel only (not with
     * DT_LN_ONE, a cluster split or a warp a row); G blocks, the backend may shrink the
     * grid to the blocks that stay resident (persistent_blocks) */
    if (!(inreg && L->op == DT_OP_LAYERNORM && !ln_one && cl == 1 && tpr == block && tpr > 32))
        ln_persist = 0;
    if (ln_persist) {
        dt_cuda_plan_add_opt(p, "-DDT_LN_PERSIST=%d", ln_persist);
        const int64_t bps = 2048 / block > 1 ? 2048 / block : 1;
        if ((int64_t)sm_count * bps < grid_rows) grid_rows = (int64_t)sm_count * bps;
        p->persistent_blocks = 1;
    }
    /* the shifted loads (above) serve the plain in-register rows; a row that went staged
     * has VEC = vw already, one that went multi-pass over global gets vec 1 back */
    if (rowshift && (!inreg || smem_rows || ln_one || ln_persist)) {
        if (!inreg && !smem_rows) snprintf(p->opts[vec_opt], DT_CUDA_OPT_LEN, "-DVEC=1");
        rowshift = 0;
    }
    if (rowshift && !rows_aligned16(A)) dt_cuda_plan_add_opt(p, "-DDT_SHIFT_A=1");
    if (rowshift && B && !rows_aligned16(B)) dt_cuda_plan_add_opt(p, "-DDT_SHIFT_B=1");
    if (rowshift && oframe) dt_cuda_plan_add_opt(p, "-DDT_OFRAME=1");
    /* sum over rows that are not 16-byte aligned (odd N, views): VEC-wide loads from each
     * row's first 16-byte boundary and the head and tail elements scalar (sum.cu ROWHEAD).
     * H200, bf16 sum 6000x6001 at vec 1: 1.37x torch's time (session 9 sweep; docs/perf.md
     * "Issue 18, session 9", rule 3). Not f32 views: their scalar loads already fill whole sectors, and
     * the head measured slower there (4096x4096 view 21.1 against 19.6 us).
     * DUALTIME_ROW_HEAD=0: vec 1 there, as before. */
    int rowhead = 0, rowhead_on = 1;
    kst = dt_cuda_plan_int_knob("DUALTIME_ROW_HEAD", 0, 1, 0, &rowhead_on, err);
    if (kst != DT_OK) return kst;
    if (L->op == DT_OP_SUM && vec == 1 && vw > 1 && !acc_f16 && rowhead_on && tpr >= 32 &&
        A->data_offset % A->elem_bytes == 0 && (narrow || A->row_stride == n)) {
        snprintf(p->opts[vec_opt], DT_CUDA_OPT_LEN, "-DVEC=%d", vw);
        dt_cuda_plan_add_opt(p, "-DROWHEAD=1");
        rowhead = 1;
    }
    if (!ln_regs && ln_one) ln_regs = ln_one == 2 ? 32 : 40;
    if (ln_regs && per * vec <= 16) {
        ln_minb = 65536 / (block * ln_regs);
        if (ln_minb > 2048 / block) ln_minb = 2048 / block;
        if (ln_minb > 1) dt_cuda_plan_add_opt(p, "-DDT_LN_MINB=%d", ln_minb);
    }
    dt_cuda_plan_add_opt(p, "-DBLOCK=%d", block);
    dt_cuda_plan_add_opt(p, "-DTPR=%d", tpr);
    dt_cuda_plan_add_opt(p, "-DPER=%lld", (long long)(inreg ? per : 1));
    dt_cuda_plan_add_opt(p, "-DINREG=%d", inreg);
    const int rpb = block / tpr;
    if ((int64_t)ceil_div_u(grid_rows, rpb) * cl > 0x7fffffffLL) return dt_fail(err, DT_EINVAL, "grid too large");
    set_launch(p, (unsigned)((int64_t)ceil_div_u(grid_rows, rpb) * cl), 1, (unsigned)block);
    if (smem_rows == 2) p->persistent_cluster = (int)cl;
    char clbuf[64] = "";
    if (cl > 1)
        snprintf(clbuf, sizeof clbuf, " cluster=%lld cols/block=%lld dsmem-reduce", (long long)cl,
                 (long long)nc);
    char smbuf[48] = "", lnbuf[56] = "";
    if (ln_minb > 1)
        snprintf(lnbuf, sizeof lnbuf, "%s minblocks=%d", ln_one ? " one-reduction" : "", ln_minb);
    else if (ln_one)
        snprintf(lnbuf, sizeof lnbuf, " one-reduction");
    if (ln_persist) {
        const size_t at = strlen(lnbuf);
        snprintf(lnbuf + at, sizeof lnbuf - at, " persist=%d prefetch-next-row%s", ln_persist,
                 ln_persist == 2 ? " gamma-beta-in-registers" : "");
    }
    if (smem_rows == 1 || smem_rows == 2) snprintf(smbuf, sizeof smbuf, " smem=%u", p->shared_bytes);
    char sabuf[64] = "";
    if (smem_rows && store_ahead) snprintf(sabuf, sizeof sabuf, " store-ahead=%d", store_ahead);
    if (smem_rows && sm_online) snprintf(sabuf + strlen(sabuf), sizeof sabuf - strlen(sabuf), " online-lse");
    if (smem_rows && row_hint > 0) /* the DT_HINT option went with the row's options above */
        snprintf(sabuf + strlen(sabuf), sizeof sabuf - strlen(sabuf), "%s",
                 row_hint == 1 ? " l2-hints" : " l2-hints=params");
    if (smem_rows == 4) snprintf(smbuf, sizeof smbuf, " blocks/sm=%d smem-reserved=%u", l2_bps, p->shared_bytes);
    snprintf(p->summary, sizeof p->summary,
             "%s %s grid=%u block=%d vec=%d %s%s%s%s%s%s", p->kernel_name,
             tpr == 32 ? "warp-per-row" : "block-per-row", p->grid[0], block,
             smem_rows || rowhead ? vw : vec,
             acc_f16              ? "PLANTED-FAULT fp16-accumulation"
             : rowhead            ? "streaming row-head"
             : L->op == DT_OP_SUM ? "streaming"
             : smem_rows == 3     ? "ce-stream single-read online-logsumexp unroll=4"
             : smem_rows == 4     ? "row-l2-two-pass dram-read+l2-reread unroll=4"
             : smem_rows == 2     ? "row-staged-in-smem cp.async single-read persistent double-buffered"
             : smem_rows          ? "row-staged-in-smem cp.async single-read"
             : inreg            ? "row-in-registers single-pass"
                                : "multi-pass-over-global",
             smbuf, clbuf, fastexp ? " fastexp" : "", lnbuf, sabuf);
    if (rowshift) { /* after the path's words: "row-in-registers single-pass loads-shifted" */
        const size_t at = strlen(p->summary);
        snprintf(p->summary + at, sizeof p->summary - at, " loads-shifted%s",
                 oframe ? " output-frame" : "");
    }
    return DT_OK;
}

dt_status dt_cuda_source_load(const char *name, char **text, int *from_dir, dt_err *err) {
    *text = NULL;
    if (from_dir) *from_dir = 0;
    const char *dir = getenv("DUALTIME_KERNEL_DIR");
    if (dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "rb");
        if (f) {
            if (fseek(f, 0, SEEK_END) != 0) {
                fclose(f);
                return dt_fail(err, DT_EIO, "cannot seek %s", path);
            }
            long len = ftell(f);
            rewind(f);
            if (len < 0) {
                fclose(f);
                return dt_fail(err, DT_EIO, "cannot size %s", path);
            }
            char *buf = dt_xmalloc((size_t)len + 1);
            size_t got = fread(buf, 1, (size_t)len, f);
            fclose(f);
            if (got != (size_t)len) {
                free(buf);
                return dt_fail(err, DT_EIO, "short read of %s", path);
            }
            buf[len] = 0;
            *text = buf;
            if (from_dir) *from_dir = 1;
            return DT_OK;
        }
        if (errno != ENOENT) return dt_fail(err, DT_EIO, "cannot open %s: %s", path, strerror(errno));
    }
    for (int i = 0; i < dt_cuda_embedded_count; i++)
        if (strcmp(dt_cuda_embedded_sources[i].name, name) == 0) {
            *text = dt_xstrdup(dt_cuda_embedded_sources[i].text);
            return DT_OK;
        }
    return dt_fail(err, DT_EINVAL, "no kernel source named %s (embedded: %d files)", name,
                   dt_cuda_embedded_count);
}

dt_status dt_cuda_nvrtc_compile(const char *name, const char *src, const char *hdr,
                                const dt_cuda_plan *p, char **image, size_t *image_bytes,
                                dt_err *err) {
    *image = NULL;
    *image_bytes = 0;
    dt_status st = DT_OK;
    nvrtcProgram prog = NULL;
    const char *hdr_names[1] = {DT_CUDA_COMMON_HEADER};
    const char *hdr_texts[1] = {hdr};
    DT_CUDA_TRY(nvrtc,
                nvrtcCreateProgram(&prog, src, name, hdr ? 1 : 0, hdr ? hdr_texts : NULL,
                                   hdr ? hdr_names : NULL),
                err);
    const char *opts[DT_CUDA_MAX_OPTS];
    int ptx = 0;
    for (int i = 0; i < p->nopts; i++) {
        opts[i] = p->opts[i];
        if (strncmp(p->opts[i], "--gpu-architecture=compute_", 27) == 0) ptx = 1;
    }
    nvrtcResult cr = nvrtcCompileProgram(prog, p->nopts, opts);
    if (cr != NVRTC_SUCCESS) {
        size_t log_len = 0;
        char log[DT_ERR_LEN];
        log[0] = 0;
        if (nvrtcGetProgramLogSize(prog, &log_len) == NVRTC_SUCCESS && log_len > 1) {
            char *full = dt_xmalloc(log_len + 1);
            if (nvrtcGetProgramLog(prog, full) == NVRTC_SUCCESS) {
                full[log_len] = 0;
                for (char *c = full; *c; c++)
                    if (*c == '\n') *c = ' ';
                snprintf(log, sizeof log, "%s", full);
            }
            free(full);
        }
        st = dt_fail(err, DT_EDEVICE, "NVRTC compile of %s (%s) failed: %s: %.380s", name,
                     p->kernel_name, nvrtcGetErrorString(cr), log);
        goto done;
    }
    size_t n = 0;
    if (ptx) {
        DT_CUDA_GOTO(nvrtc, nvrtcGetPTXSize(prog, &n), err, st, done);
        *image = dt_xmalloc(n + 1);
        DT_CUDA_GOTO(nvrtc, nvrtcGetPTX(prog, *image), err, st, done);
        (*image)[n] = 0;
    } else {
        DT_CUDA_GOTO(nvrtc, nvrtcGetCUBINSize(prog, &n), err, st, done);
        *image = dt_xmalloc(n + 1);
        DT_CUDA_GOTO(nvrtc, nvrtcGetCUBIN(prog, *image), err, st, done);
    }
    if (n == 0) {
        st = dt_fail(err, DT_EDEVICE, "NVRTC produced an empty image for %s", name);
        goto done;
    }
    *image_bytes = n;
done:
    if (st != DT_OK) {
        free(*image);
        *image = NULL;
    }
    nvrtcDestroyProgram(&prog);
    return st;
}
