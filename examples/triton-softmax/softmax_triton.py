"""softmax_triton.py — a Triton row softmax as a dualtime implementation (issue 17,
`NAME=py:FILE.py`): `softmax(a, out)` launches one program per row on the current torch
stream (Triton's default), reading `a` through its row stride (views) and writing the
contiguous `out`. f32, bf16 and f16 (arithmetic in f32). CUDA only.
"""
import torch
import triton
import triton.language as tl


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


def softmax(a, out):
    m, n = a.shape
    assert a.stride(1) == 1 and out.stride(1) == 1, "rows must be contiguous"
    block = triton.next_power_of_2(n)
    # one row per program; rows longer than this need a looped kernel
    assert block <= 65536, "row too long for the one-pass kernel"
    warps = 4 if block <= 2048 else (8 if block <= 8192 else 16)
    _softmax_row[(m,)](a, out, n, a.stride(0), out.stride(0), BLOCK=block, num_warps=warps)
