// emu_kernel.cpp — one row kernel (KFILE, specialized by -D like the plan does) built as
// a shared object for emu_rows: each block of a cluster runs in its own copy, so its
// statics (the kernel's shared memory) are its own. Exports setup and one thread's run.
#include KFILE

DT_EMU_SO_EXPORTS
DT_EMU_EXPORT int dt_emu_so_run(unsigned t, unsigned blk, unsigned grid, const void *a_, const void *b_,
                                 const void *g_, const void *bt_, const long long *lab, void *o_) {
    /* the buffers in the storage type (DT_ELEM: f32, bf16, f16) */
    const dt_t *a = (const dt_t *)a_, *b = (const dt_t *)b_, *g = (const dt_t *)g_, *bt = (const dt_t *)bt_;
    dt_t *o = (dt_t *)o_;
    threadIdx = {t, 0, 0};
    blockIdx = {blk, 0, 0};
    gridDim = {grid, 1, 1};
    dt_emu_pending.clear();
    dt_emu_group = 0;
    (void)b; (void)g; (void)bt; (void)lab;
#if OP == 0
    DT_KNAME(dt_softmax)(a, o);
#elif OP == 1
    DT_KNAME(dt_rmsnorm)(a, g, o);
#elif OP == 2
    DT_KNAME(dt_layernorm)(a, g, bt, o);
#elif OP == 3
    DT_KNAME(dt_cross_entropy)(a, lab, o);
#elif OP == 5
    DT_KNAME(dt_sum)(a, o);
#elif OP == 6
    DT_KNAME(dt_add)(a, b, o);
#else
    DT_KNAME(dt_residual_layernorm)(a, b, o);
#endif
    /* this thread is done: later barrier phases of its block wait for one thread fewer
     * (a warp-per-row block's warps past the last row return at once) */
    dt_emu_bar->arrive_and_drop();
    return dt_emu_pending.empty() ? 0 : 1; /* a copy never waited for: 1 */
}
