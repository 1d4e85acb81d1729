"""softmax_triton.py — a Triton row softmax as a dualtime implementation (issue 17,
`NAME=py:FILE.py`, run by the PyTorch worker's `--module`): `softmax(a, out)` launches
one program per row on the current torch stream (Triton's default), reading `a` through
its row stride (views) and writing `out`. f32, bf16 and f16 (arithmetic in f32). Rows up
to 16384 columns are held in registers (one pass); longer rows (vocabulary rows such as
4096x50257 or 2048x128256) take a looped kernel: an online max/sum pass in chunks, then
a pass that writes. CUDA only.
"""
import torch
import triton
import triton.language as tl

ONE_PASS_MAX = 16384  # columns a program holds in registers
CHUNK = 4096          # columns per step of the looped kernel


@triton.jit
def _softmax_row(a_ptr, out_ptr, n_cols, a_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(a_ptr + row * a_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_row_looped(a_ptr, out_ptr, n_cols, a_stride, out_stride, BLOCK: tl.constexpr):
    # n_cols > BLOCK here, so every lane sees a real element in the first chunk and its
    # running max is finite from then on (no -inf - -inf).
    row = tl.program_id(0)
    a_row = a_ptr + row * a_stride
    out_row = out_ptr + row * out_stride
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(a_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    mx = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - mx), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(a_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - mx) / total
        tl.store(out_row + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax(a, out):
    m, n = a.shape
    assert a.stride(1) == 1 and out.stride(1) == 1, "rows must be contiguous"
    if n <= ONE_PASS_MAX:
        block = triton.next_power_of_2(n)
        warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
        _softmax_row[(m,)](a, out, n, a.stride(0), out.stride(0), BLOCK=block, num_warps=warps)
    else:
        _softmax_row_looped[(m,)](a, out, n, a.stride(0), out.stride(0), BLOCK=CHUNK,
                                  num_warps=8)
