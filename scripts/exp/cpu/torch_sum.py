# torch_sum.py — torch.sum(a, 1, out=out) on a MAP_SHARED /dev/shm buffer (as the worker's arena),
# batches of ~20 ms, p50/min per call.  usage: /usr/bin/python3 torch_sum.py M N threads samples
import mmap, os, sys, time, torch
M, N = int(sys.argv[1]), int(sys.argv[2])
th, samples = int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(th)
nbytes = M * N * 4 + 8192 + M * 4
path = "/dev/shm/s14torch-%d" % os.getpid()
fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600); os.unlink(path); os.ftruncate(fd, nbytes)
mm = mmap.mmap(fd, nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
base = torch.frombuffer(mm, dtype=torch.uint8)
f = base.view(torch.float32) if False else base[: (nbytes // 4) * 4].view(torch.float32)
a = f.as_strided((M, N), (N, 1), 64)
out = f.as_strided((M,), (1,), 64 + M * N + 64)
a.copy_(torch.rand(M, N) * 2 - 1)
for _ in range(50): torch.sum(a, 1, out=out)
res = []
for s in range(samples):
    t0 = time.monotonic_ns(); r = 0
    while True:
        torch.sum(a, 1, out=out); r += 1
        if time.monotonic_ns() - t0 >= 20_000_000: break
    res.append((time.monotonic_ns() - t0) / 1e3 / r)
res.sort()
print("torch %dx%d th=%d p50 %.1f min %.1f max %.1f us" % (M, N, th, res[len(res)//2], res[0], res[-1]))
