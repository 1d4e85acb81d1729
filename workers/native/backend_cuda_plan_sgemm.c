/* backend_cuda_plan_sgemm.c — gemm's shape-chosen geometry: the gemv plan for thin shapes
 * (FP32, bf16, f16) and the DUALTIME_GEMM_SHAPE / DUALTIME_GEMM_GEMV_NARROW knobs (see
 * backend_cuda_plan_sgemm.h). No libcuda. */
#include "backend_cuda_plan_sgemm.h"

#include "dt_gemm_geom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* K a cluster block for cl blocks (a multiple of vw, the elements of a 16-byte load);
 * halves cl while the last block would get nothing. */
static void split_k(int64_t k, int vw, int *cl, int64_t *kc) {
    for (;;) {
        *kc = *cl == 1 ? k : (ceil_div(k, *cl) + vw - 1) / vw * vw;
        if (*cl == 1 || (int64_t)(*cl - 1) * *kc < k) return;
        *cl /= 2;
    }
}

static void mode2_geom(int64_t n, int64_t k, int vw, int vecb, int64_t gy, int min_steps,
                       int ctmin, int arch, int sm_count, dt_sgemv_geom *r);

/* Rules (docs/perf.md, "FP32 gemm: thin shapes"). Both modes are bandwidth- or
 * latency-bound: the goal is enough independent loads in flight on every SM
 * (target: sm_count * 1024 threads, half an sm_90 SM's thread slots) and at least 2
 * blocks an SM where the shape has the work, while every thread keeps >= 4 loads
 * (mode 1) or >= 2 k-rows (mode 2) so the reductions stay small against the loads.
 * Mode 1 (N == 1): a warp per row; threads per row double (up to 1024, one block a row)
 * while the rows x threads stay under the target and each thread keeps >= 4 loads; a
 * block of 1024 threads a row may split K over a cluster of up to 8 (sm_90) on the same
 * rule. Warp-per-row blocks hold 8 rows, halved (down to 2) while the grid has fewer
 * than 2 blocks an SM. Mode 2 (M == 1): 256 threads = column threads x k-rows; 32
 * column threads (128 columns at VEC 4, 256 at VEC 8), halved (down to 8 with 16-byte
 * loads: a warp still reads whole 128-byte lines; 32 at VEC 1) while the column blocks are fewer than the SMs;
 * then K split over a cluster of up to 8 (sm_90) while the grid has fewer than 2 blocks
 * an SM and each thread keeps >= 2 k-rows. */
int dt_sgemv_geom_make(int64_t m, int64_t n, int64_t k, int veca4, int vecb4, int arch,
                       int sm_count, dt_sgemv_geom *g) {
    return dt_gemv_geom_make(m, n, k, 4, veca4, vecb4, arch, sm_count, g);
}

/* The same rules for every storage type: "a load" is one load of the walked operand
 * (vw elements when vectorized, 16 bytes), so bf16/f16 rows of the same length keep
 * half the loads a thread and a 16-byte load covers 8 of their elements. */
int dt_gemv_geom_make(int64_t m, int64_t n, int64_t k, int vw, int veca, int vecb, int arch,
                      int sm_count, dt_sgemv_geom *g) {
    if (n != 1 && m != 1) return 0;
    DT_ASSERT(vw == 4 || vw == 8);
    const int64_t target = (int64_t)sm_count * 1024;
    dt_sgemv_geom r;
    memset(&r, 0, sizeof r);
    r.cl = 1;
    r.mr = r.kg = 1;
    r.grid_y = 1;
    if (n == 1) {
        r.mode = 1;
        r.veca = veca ? vw : 1;
        r.vecb = veca && vecb ? vw : 1;
        const int v = r.veca;
        int tpr = 32;
        while (tpr < 1024 && m * tpr < target && k >= (int64_t)tpr * 2 * v * 4) tpr *= 2;
        if (arch >= 90 && tpr == 1024)
            while (r.cl < 8 && m * tpr * r.cl < target &&
                   ceil_div(k, 2 * r.cl) >= (int64_t)tpr * v * 4)
                r.cl *= 2;
        int block = tpr;
        if (tpr == 32) {
            block = 256;
            while (block > 64 && ceil_div(m, block / 32) < 2 * (int64_t)sm_count) block /= 2;
        }
        r.tpr = tpr;
        r.block = block;
        split_k(k, vw, &r.cl, &r.kc);
        r.grid = ceil_div(m, block / tpr) * r.cl;
    } else {
        r.mode = 2;
        mode2_geom(n, k, vw, vecb, 1, 2, 8, arch, sm_count, &r);
    }
    *g = r;
    return 1;
}

/* Mode 2's columns and K split for r->mr rows a block (r->kg k's a step, r->grid_y row
 * groups): 256 threads = column threads x k-rows; 32 column threads, halved (down to
 * ctmin16 with 16-byte loads, 32 at VEC 1) while the column blocks are fewer than the SMs; then
 * K split over a cluster of up to 8 (sm_90) while the grid has fewer than 2 blocks an SM
 * and each thread keeps >= min_steps steps of kg k's. */
static void mode2_geom(int64_t n, int64_t k, int vw, int vecb, int64_t gy, int min_steps,
                       int ctmin16, int arch, int sm_count, dt_sgemv_geom *r) {
    r->veca = 1;
    r->vecb = vecb ? vw : 1;
    const int v = r->vecb, ctmin = v > 1 ? ctmin16 : 32;
    int ct = 32;
    while (ct > ctmin && ceil_div(n, (int64_t)ct * v) < sm_count) ct /= 2;
    const int64_t gx = ceil_div(n, (int64_t)ct * v);
    const int kt = 256 / ct;
    if (arch >= 90)
        while (r->cl < 8 && gx * gy * r->cl < 2 * (int64_t)sm_count &&
               k >= (int64_t)kt * r->kg * r->cl * 2 * min_steps)
            r->cl *= 2;
    r->tpr = ct;
    r->block = 256;
    split_k(k, vw, &r->cl, &r->kc);
    r->grid = gx * r->cl;
    r->grid_y = gy;
}

/* Few rows (2 <= M <= max_rows, any N): mode 2 with GV_MR rows a block, so B is read
 * ceil(M / GV_MR) times instead of the square tile's idle SMs (docs/perf.md "Issue 18,
 * session 10"). GV_MR = M up to 8 rows (8 x VECB FP32 accumulators a thread), else the
 * rows split evenly into ceil(M / 8) groups; kg consecutive k's a step (the caller's,
 * from A's alignment); each thread keeps >= 4 steps when K is split over a cluster. */
int dt_gemv_fewrows_geom_make(int64_t m, int64_t n, int64_t k, int vw, int kg, int vecb,
                              int arch, int sm_count, int max_rows, dt_sgemv_geom *g) {
    return dt_gemv_fewrows_geom_ct(m, n, k, vw, kg, vecb, arch, sm_count, max_rows, 8, g);
}

int dt_gemv_fewrows_geom_ct(int64_t m, int64_t n, int64_t k, int vw, int kg, int vecb, int arch,
                            int sm_count, int max_rows, int ctmin, dt_sgemv_geom *g) {
    if (m < 2 || m > max_rows || n < 2) return 0;
    DT_ASSERT(vw == 4 || vw == 8);
    DT_ASSERT(kg == 1 || kg == 2 || kg == 4 || kg == 8);
    dt_sgemv_geom r;
    memset(&r, 0, sizeof r);
    r.mode = 2;
    r.cl = 1;
    const int64_t groups = ceil_div(m, 8);
    r.mr = (int)ceil_div(m, groups);
    r.kg = kg;
    mode2_geom(n, k, vw, vecb, ceil_div(m, r.mr), 4, ctmin, arch, sm_count, &r);
    *g = r;
    return 1;
}

/* An on/off knob: *on = 1 when unset, empty or "1", 0 for "0"; other values fail. */
static dt_status onoff_knob(const char *name, int *on, dt_err *err) {
    const char *v = getenv(name);
    *on = 1;
    if (!v || !*v || strcmp(v, "1") == 0) return DT_OK;
    if (strcmp(v, "0") == 0) {
        *on = 0;
        return DT_OK;
    }
    return dt_fail(err, DT_EINVAL, "%s=%s: expected 0 or 1", name, v);
}

dt_status dt_sgemm_shape_knob(int *on, dt_err *err) {
    return onoff_knob("DUALTIME_GEMM_SHAPE", on, err);
}

dt_status dt_gemv_narrow_knob(int *on, dt_err *err) {
    return onoff_knob("DUALTIME_GEMM_GEMV_NARROW", on, err);
}

dt_status dt_gemv_mma_knob(int *rows, dt_err *err) {
    int v = -1;
    dt_status st = dt_cuda_plan_int_knob("DUALTIME_GEMV_MMA", 0, 128, 0, &v, err);
    *rows = v == 1 ? DT_GEMV_MMA_ROWS_DEFAULT : v < 0 ? 0 : v; /* unset: off (not measured yet) */
    return st;
}

int dt_gemv_mma_geom_make(int64_t m, int64_t n, int64_t k, int arch, int sm_count, int max_rows,
                          dt_gemv_mma_geom *g) {
    if (m < 2 || m > max_rows || n < 2 || k < 1 || arch < 80) return 0;
    if (sm_count <= 0) sm_count = 132;
    dt_gemv_mma_geom r;
    memset(&r, 0, sizeof r);
    const int64_t groups = ceil_div(m, 8);
    r.mg = groups < 4 ? (int)groups : 4;
    r.grid_y = ceil_div(groups, r.mg);
    const int64_t strips = ceil_div(n, 64), steps = ceil_div(k, 32);
    /* warps a strip: the share of sm_count x 16, at most half the steps (>= 2 a warp),
     * at most 64 (8 a block x 8 a cluster; 16 a block without clusters) */
    const int64_t cap = arch >= 90 ? 64 : 16;
    int64_t wps = ceil_div((int64_t)sm_count * 16, strips * r.grid_y);
    if (wps > steps / 2) wps = steps / 2;
    if (wps > cap) wps = cap;
    if (wps < 1) wps = 1;
    const int64_t per_warp = ceil_div(steps, wps); /* steps a warp */
    const int64_t warps = ceil_div(steps, per_warp);
    r.warps = (int)(arch >= 90 ? (warps < 8 ? warps : 8) : warps);
    r.kc = per_warp * r.warps * 32;
    r.cl = (int)ceil_div(k, r.kc);
    r.grid = strips * r.cl;
    *g = r;
    return 1;
}

dt_status dt_gemv_fewrows_knobs(int narrow, dt_gemv_fewrows_cfg *c, dt_err *err) {
    c->max_rows = narrow ? DT_GEMV_FEWROWS_NARROW_DEFAULT : DT_GEMV_FEWROWS_DEFAULT;
    c->kg = narrow ? DT_GEMV_KG_NARROW_DEFAULT : DT_GEMV_KG_DEFAULT;
    c->fill_rule = narrow;
    c->ctmin = 8;
    c->ch = 0;
    const char *mr = getenv("DUALTIME_GEMM_FEWROWS");
    if (mr && *mr) c->fill_rule = 0; /* asked for: every M up to it */
    dt_status st = dt_cuda_plan_int_knob("DUALTIME_GEMM_FEWROWS", 0, 64, 0, &c->max_rows, err);
    if (st == DT_OK) st = dt_cuda_plan_int_knob("DUALTIME_GEMV_KG", 1, 8, 0, &c->kg, err);
    if (st == DT_OK && c->kg != 1 && c->kg != 2 && c->kg != 4 && c->kg != 8)
        st = dt_fail(err, DT_EINVAL, "DUALTIME_GEMV_KG=%d: expected 1, 2, 4 or 8", c->kg);
    if (st == DT_OK) st = dt_cuda_plan_int_knob("DUALTIME_GEMV_CTMIN", 8, 32, 0, &c->ctmin, err);
    if (st == DT_OK && c->ctmin != 8 && c->ctmin != 16 && c->ctmin != 32)
        st = dt_fail(err, DT_EINVAL, "DUALTIME_GEMV_CTMIN=%d: expected 8, 16 or 32", c->ctmin);
    if (st == DT_OK) st = dt_cuda_plan_int_knob("DUALTIME_GEMV_CH", 1, 8, 0, &c->ch, err);
    return st;
}

/* 1 when every row start of b is aligned to `bytes` (device base 256-aligned). */
static int rows_aligned(const dt_buffer_layout *b, int64_t bytes) {
    return b->data_offset % bytes == 0 && (b->row_stride * b->elem_bytes) % bytes == 0;
}
static int rows16(const dt_buffer_layout *b) { return rows_aligned(b, 16); }

/* p for gemv_mma.cu at geometry g (bf16 / f16; the caller has added -DDT_ELEM) */
static dt_status plan_gemv_mma(const dt_case_layout *L, const dt_gemv_mma_geom *g, dt_cuda_plan *p,
                               dt_err *err) {
    const dt_buffer_layout *A = &L->buf[0], *B = &L->buf[1];
    const int veca = rows16(A) && L->k % 8 == 0, vecb = rows16(B) && L->n % 8 == 0;
    if (g->grid > 0x7fffffffLL || g->grid_y > 65535)
        return dt_fail(err, DT_EINVAL, "gemv-mma: grid too large");
    p->source_name = "gemv_mma.cu";
    snprintf(p->kernel_name, sizeof p->kernel_name, "dt_gemv_mma_%s", dt_dtype_name(L->dtype));
    dt_cuda_plan_add_opt(p, "-DWARPS=%d", g->warps);
    dt_cuda_plan_add_opt(p, "-DCL=%d", g->cl);
    dt_cuda_plan_add_opt(p, "-DKC=%lld", (long long)g->kc);
    dt_cuda_plan_add_opt(p, "-DMG=%d", g->mg);
    dt_cuda_plan_add_opt(p, "-DVECA=%d", veca);
    dt_cuda_plan_add_opt(p, "-DVECB=%d", vecb);
    p->grid[0] = (unsigned)g->grid;
    p->grid[1] = (unsigned)g->grid_y;
    p->grid[2] = 1;
    p->block[0] = (unsigned)(32 * g->warps);
    p->block[1] = p->block[2] = 1;
    char clbuf[64] = "";
    if (g->cl > 1)
        snprintf(clbuf, sizeof clbuf, " cluster=%d k/block=%lld dsmem-reduce", g->cl,
                 (long long)g->kc);
    snprintf(p->summary, sizeof p->summary,
             "%s variant=gemv-mma mode=few-rows grid=(%lld,%lld) block=%d warps=%d "
             "rows/block=%d cols/warp=64 k/step=32 vec(a,b)=(%d,%d)%s mma.m16n8k16 %s->f32-acc",
             p->kernel_name, (long long)g->grid, (long long)g->grid_y, 32 * g->warps, g->warps,
             8 * g->mg, veca ? 8 : 1, vecb ? 8 : 1, clbuf, dt_dtype_name(L->dtype));
    return DT_OK;
}

dt_status dt_sgemm_plan_thin(const dt_case_layout *L, int arch, int sm_count, dt_cuda_plan *p,
                             int *taken, dt_err *err) {
    *taken = 0;
    const char *var = getenv("DUALTIME_GEMM_VARIANT");
    const int forced = var && strcmp(var, "gemv") == 0;
    const int forced_mma = var && strcmp(var, "gemv-mma") == 0;
    if (var && *var && !forced && !forced_mma) return DT_OK; /* another variant (the caller's) */
    const int narrow = L->dtype != DT_F32;
    const int64_t m = L->m, n = L->n, k = L->k;
    dt_status st = DT_OK;
    if (forced_mma && !narrow)
        return dt_fail(err, DT_EINVAL, "DUALTIME_GEMM_VARIANT=gemv-mma: bf16 / f16 only (this gemm is f32)");
    if (narrow && !forced) { /* few rows on the tensor cores first */
        int rows = 0; /* the rows limit (0: off) */
        if ((st = dt_gemv_mma_knob(&rows, err)) != DT_OK) return st;
        if (forced_mma && rows < 2) rows = DT_GEMV_MMA_ROWS_DEFAULT;
        dt_gemv_mma_geom mg;
        if (rows >= 2 && dt_gemv_mma_geom_make(m, n, k, arch, sm_count, rows, &mg)) {
            st = plan_gemv_mma(L, &mg, p, err);
            *taken = st == DT_OK;
            return st;
        }
        if (forced_mma)
            return dt_fail(err, DT_EINVAL,
                           "DUALTIME_GEMM_VARIANT=gemv-mma: %lldx%lldx%lld needs 2 <= M <= %d "
                           "(DUALTIME_GEMV_MMA), N >= 2 and sm_80 or later (arch %d)",
                           (long long)m, (long long)n, (long long)k, rows, arch);
    }
    int on = 1;
    st = narrow ? dt_gemv_narrow_knob(&on, err) : dt_sgemm_shape_knob(&on, err);
    if (st != DT_OK) return st;
    if (!on && !forced) return DT_OK;
    const dt_buffer_layout *A = &L->buf[0], *B = &L->buf[1];
    const int vw = 16 / (int)A->elem_bytes; /* elements of a 16-byte load: 4 or 8 */
    int veca, vecb;
    if (n == 1) { /* A's rows along k; B's column contiguous (stride 1) and aligned */
        veca = rows16(A) && k % vw == 0;
        vecb = B->row_stride == 1 && B->data_offset % 16 == 0 && k % vw == 0;
    } else {      /* B's rows along n */
        veca = 0;
        vecb = rows16(B) && n % vw == 0;
    }
    dt_sgemv_geom g;
    const int sms = sm_count > 0 ? sm_count : 132;
    if (!dt_gemv_geom_make(m, n, k, vw, veca, vecb, arch, sms, &g)) {
        /* few rows: A's rows read kg elements a load where aligned (kg halved until they
         * are: a view at an odd element reads one at a time) */
        dt_gemv_fewrows_cfg c;
        st = dt_gemv_fewrows_knobs(narrow, &c, err);
        if (st != DT_OK) return st;
        int kg = c.kg, max_rows = c.max_rows;
        if (kg * A->elem_bytes > 16) kg = 16 / (int)A->elem_bytes;
        while (kg > 1 && !(rows_aligned(A, (int64_t)kg * A->elem_bytes) && k % kg == 0))
            kg /= 2;
        /* bf16 / f16 by default: only where the wgmma tiles would leave over half the SMs
         * idle (H200, session 10: 8x4096x4096 21.8 us against wg's 27.7, but 4x14336x4096
         * 51.3 against 47.4: its 224 tiles fill the GPU) */
        if (c.fill_rule && !forced && dt_gemm_geom_choose(m, n, sms, 1).tiles * 2 >= sms)
            max_rows = 0;
        /* gemv asked for: few rows up to the knob's M, or the default's where it is off */
        if (forced && max_rows < 2)
            max_rows = narrow ? DT_GEMV_FEWROWS_NARROW_DEFAULT : DT_GEMV_FEWROWS_DEFAULT;
        if (!dt_gemv_fewrows_geom_ct(m, n, k, vw, kg, rows16(B) && n % vw == 0, arch, sms,
                                     max_rows, c.ctmin, &g)) {
            if (forced)
                return dt_fail(err, DT_EINVAL,
                               "DUALTIME_GEMM_VARIANT=gemv: %lldx%lldx%lld is neither thin nor "
                               "few rows (needs N == 1, M == 1, or 2 <= M <= %d: "
                               "DUALTIME_GEMM_FEWROWS)",
                               (long long)m, (long long)n, (long long)k, max_rows);
            return DT_OK;
        }
        g.ch = c.ch;
    }
    if (g.grid > 0x7fffffffLL || g.grid_y > 65535)
        return dt_fail(err, DT_EINVAL, "gemv: grid too large");
    p->source_name = "gemv.cu";
    snprintf(p->kernel_name, sizeof p->kernel_name, "dt_gemv_%s", dt_dtype_name(L->dtype));
    dt_cuda_plan_add_opt(p, "-DGV_MODE=%d", g.mode);
    dt_cuda_plan_add_opt(p, "-DBLOCK=%d", g.block);
    dt_cuda_plan_add_opt(p, "-DTPR=%d", g.tpr);
    dt_cuda_plan_add_opt(p, "-DCL=%d", g.cl);
    dt_cuda_plan_add_opt(p, "-DKC=%lld", (long long)g.kc);
    dt_cuda_plan_add_opt(p, "-DVECA=%d", g.veca);
    dt_cuda_plan_add_opt(p, "-DVECB=%d", g.vecb);
    if (g.mr > 1 || g.kg > 1) {
        dt_cuda_plan_add_opt(p, "-DGV_MR=%d", g.mr);
        dt_cuda_plan_add_opt(p, "-DGV_KG=%d", g.kg);
        if (g.ch > 0) dt_cuda_plan_add_opt(p, "-DGV_CH=%d", g.ch);
    }
    p->grid[0] = (unsigned)g.grid;
    p->grid[1] = (unsigned)g.grid_y;
    p->grid[2] = 1;
    p->block[0] = (unsigned)g.block;
    p->block[1] = p->block[2] = 1;
    char clbuf[48] = "", accbuf[32] = "", rowbuf[64] = "";
    if (g.cl > 1)
        snprintf(clbuf, sizeof clbuf, " cluster=%d k/block=%lld dsmem-reduce", g.cl,
                 (long long)g.kc);
    if (narrow) snprintf(accbuf, sizeof accbuf, " %s->f32-acc", dt_dtype_name(L->dtype));
    if (m > 1 && g.mode == 2)
        snprintf(rowbuf, sizeof rowbuf, " rows/block=%d (x%lld) k/step=%d", g.mr,
                 (long long)g.grid_y, g.kg);
    char gridbuf[48];
    if (g.grid_y > 1)
        snprintf(gridbuf, sizeof gridbuf, "(%lld,%lld)", (long long)g.grid, (long long)g.grid_y);
    else
        snprintf(gridbuf, sizeof gridbuf, "%lld", (long long)g.grid);
    snprintf(p->summary, sizeof p->summary,
             "%s variant=gemv mode=%s grid=%s block=%d %s=%d vec(a,b)=(%d,%d)%s%s ffma-only%s",
             p->kernel_name,
             g.mode == 1 ? "matrix-vector(N=1)" : m == 1 ? "vector-matrix(M=1)" : "few-rows",
             gridbuf, g.block, g.mode == 1 ? "threads/row" : "column-threads", g.tpr, g.veca,
             g.vecb, rowbuf, clbuf, accbuf);
    *taken = 1;
    return DT_OK;
}
