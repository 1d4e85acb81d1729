"""ops.py — a dualtime implementation written as torch code (issue 17, `NAME=py:FILE.py`).

One function per op, named like the op, taking the op's inputs in the order of
`dualtime list` and then `out`; tensors arrive on the case's device with the case's
dtype (strided views included) and the function runs on the current torch stream.
It writes `out` (the "preallocated" output policy); returning a tensor instead would be
recorded as the allocating policy. Runs on the CPU and on CUDA alike.
"""
import torch


def add(a, b, out):
    torch.add(a, b, out=out)


def softmax(a, out):
    # a numerically safe softmax over each row, written into out
    torch.sub(a, a.amax(dim=-1, keepdim=True), out=out)
    out.exp_()
    out.div_(out.sum(dim=-1, keepdim=True))
