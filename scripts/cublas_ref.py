#!/usr/bin/env python3
"""scripts/cublas_ref.py — PyTorch's (cuBLAS) time for the narrow gemm shapes, to print
next to test_cuda_backend's gemm-tc table in the same device call.

    python3 scripts/cublas_ref.py [MxNxK ...] [--dtypes bf16,f16] [--reps 20]

Default shapes 1024^3, 4096^3, 8192^3. Inputs are uniform in [-1, 1) (like dualtime's
arena), out = torch.mm(a, b) into a preallocated tensor; 3 warm-ups, then each of --reps
calls between two CUDA events; prints the median per call and its TFLOP/s (2*M*N*K)."""
import argparse
import statistics
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shapes", nargs="*", default=["1024x1024x1024", "4096x4096x4096", "8192x8192x8192"])
    ap.add_argument("--dtypes", default="bf16,f16")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"cublas_ref: no torch in {sys.executable}: {e}")
        return 1
    if not torch.cuda.is_available():
        print("cublas_ref: torch sees no CUDA device")
        return 1
    types = {"bf16": torch.bfloat16, "f16": torch.float16}
    print(f"cublas | torch {torch.__version__} on {torch.cuda.get_device_name()}")
    for shape in args.shapes:
        m, n, k = (int(x) for x in shape.split("x"))
        for name in args.dtypes.split(","):
            dt = types[name]
            a = torch.rand(m, k, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dt)
            b = torch.rand(k, n, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dt)
            out = torch.empty(m, n, device="cuda", dtype=dt)
            for _ in range(3):
                torch.mm(a, b, out=out)
            times = []
            for _ in range(args.reps):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                torch.mm(a, b, out=out)
                e1.record()
                e1.synchronize()
                times.append(e0.elapsed_time(e1) * 1e3)  # us
            us = statistics.median(times)
            print(f"cublas | {shape:<20} | {name:<4} | torch.mm   | {us:10.2f} us | "
                  f"{2.0 * m * n * k / (us * 1e6):7.1f} TFLOP/s | median of {args.reps}")
            del a, b, out
    return 0


if __name__ == "__main__":
    sys.exit(main())
