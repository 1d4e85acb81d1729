"""check_gpu.py — a numeric check of the Python, CUDA C and PTX examples on a GPU against
torch in FP64, strided inputs and a vocabulary-length row (Triton's looped kernel)
included, calling them directly (no dualtime; `scripts/device.sh examples` runs them
through dualtime). Run from the
repository root: python3 examples/check_gpu.py (needs torch with CUDA, triton, cupy)."""
import importlib.util, sys, torch, cupy
def load(p):
    s = importlib.util.spec_from_file_location(p.replace('/', '_'), p); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
dev = 'cuda'
FAILED = []
for (M, N) in [(17, 257), (1024, 4096), (3, 40), (5, 50257)]:
    big = torch.rand(M + 2, N + 4, device=dev) * 2 - 1
    a = big[1:M+1, 1:N+1]; b = big[0:M, 2:N+2]
    ref_sm = torch.softmax(a.double(), -1); ref_add = a.double() + b.double()
    def rep(name, out, ref):
        err = (out.double() - ref).abs().max().item()
        bad = not err <= 1e-5  # NaN (an unwritten output) fails too
        print(f"{name:34s} {M}x{N} max|err| {err:.3e}{'  FAIL' if bad else ''}")
        FAILED.extend([name] if bad else [])
    for path in ['examples/torch-module/ops.py', 'examples/cupy-kernel/softmax_cupy.py']:
        m = load(path); out = torch.empty(M, N, device=dev)
        m.softmax(a, out); torch.cuda.synchronize(); rep(path + ' softmax', out, ref_sm)
        m.add(a, b, out); torch.cuda.synchronize(); rep(path + ' add', out, ref_add)
    m = load('examples/triton-softmax/softmax_triton.py'); out = torch.empty(M, N, device=dev)
    m.softmax(a, out); torch.cuda.synchronize(); rep('triton softmax', out, ref_sm)
    ld = N + 4
    for op in ['add', 'softmax']:
        opts = ('-DM=%d' % M, '-DN=%d' % N, '-DLDA=%d' % ld, '-DLDB=%d' % ld, '-DLDO=%d' % N)
        mod = cupy.RawModule(code=open(f'examples/cuda-dir/{op}.cu').read(), options=opts)
        f = mod.get_function(op); out = torch.empty(M, N, device=dev)
        args = (cupy.asarray(a), cupy.asarray(b), cupy.asarray(out)) if op == 'add' else (cupy.asarray(a), cupy.asarray(out))
        f((min(M, 120),), (128,), args); cupy.cuda.Device().synchronize()
        rep(f'cuda-dir {op}.cu', out, ref_add if op == 'add' else ref_sm)
        pm = cupy.RawModule(path=f'examples/ptx-dir/{op}.ptx'); g = pm.get_function(op); out = torch.empty(M, N, device=dev)
        i64 = cupy.int64
        # every buffer's pointer, then its row stride (out: contiguous, N); then m, n
        args = (cupy.asarray(a), i64(ld), cupy.asarray(b), i64(ld), cupy.asarray(out), i64(N), i64(M), i64(N)) if op == 'add' else (cupy.asarray(a), i64(ld), cupy.asarray(out), i64(N), i64(M), i64(N))
        g((min(M, 120),), (256,), args); cupy.cuda.Device().synchronize()
        rep(f'ptx-dir {op}.ptx', out, ref_add if op == 'add' else ref_sm)
print('all examples agree with torch' if not FAILED else f'FAILED: {sorted(set(FAILED))}')
sys.exit(1 if FAILED else 0)
