#!/usr/bin/env python3
"""test_torch_hostreg.py — the PyTorch worker's pinned arena (docs/device-workflow.md,
"Pinned uploads") without a GPU: _host_register / _host_unregister and Case.close() are
driven with fake cudart objects. Checks: a successful registration returns the tensor's
pointer and says "host=pinned"; a failing one (error code), a raising one and a torch
without cudaHostRegister return no pointer and say "host=pageable (<why>)" (recorded,
never silent); DUALTIME_HOST_REGISTER=0 registers nothing; Case.close() unregisters the
registered pointer before the mapping is closed.

Run: python3 test_torch_hostreg.py [path/to/dualtime_torch_worker.py]
Exit: 0 pass, 1 fail, 77 skip (torch not importable by this interpreter)."""
import importlib.util
import mmap
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = (sys.argv[1] if len(sys.argv) > 1 else
          os.path.join(HERE, "..", "..", "workers", "torch", "dualtime_torch_worker.py"))
try:
    import torch
except Exception as exc:
    print("SKIP: torch not importable by %s: %s" % (sys.executable, exc))
    sys.exit(77)

FAILS = 0


def check(cond, what):
    global FAILS
    if not cond:
        FAILS += 1
        print("FAIL: " + what)


class FakeCudart:
    """cudaHostRegister / cudaHostUnregister answering `code` (or raising); calls logged."""

    def __init__(self, code=0, raises=None, log=None):
        self.code, self.raises = code, raises
        self.log = log if log is not None else []

    def cudaHostRegister(self, ptr, size, flags):
        self.log.append(("register", ptr, size, flags))
        if self.raises:
            raise RuntimeError(self.raises)
        return self.code

    def cudaHostUnregister(self, ptr):
        self.log.append(("unregister", ptr))
        return self.code


def load_worker():
    sys.argv = [WORKER, "--threads", "1"]
    spec = importlib.util.spec_from_file_location("dt_torch_worker", WORKER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    w = load_worker()
    os.environ.pop("DUALTIME_HOST_REGISTER", None)
    host = torch.zeros(1 << 16, dtype=torch.uint8)
    ok = FakeCudart(0)
    ptr, note = w._host_register(host, ok)
    check(ptr == host.data_ptr(), "a successful registration returns the tensor's pointer")
    check(note.startswith("host=pinned"), "success says host=pinned: %r" % note)
    check(ok.log == [("register", host.data_ptr(), host.numel(), 1)],
          "one cudaHostRegister of the whole mapping, portable: %r" % ok.log)

    ptr, note = w._host_register(host, FakeCudart(2))
    check(ptr is None, "a failed registration returns no pointer")
    check(note.startswith("host=pageable (cudaHostRegister failed: error 2"),
          "a failed registration is said: %r" % note)
    ptr, note = w._host_register(host, FakeCudart(raises="no CUDA driver"))
    check(ptr is None and "no CUDA driver" in note and note.startswith("host=pageable"),
          "a raising registration is said with its reason: %r" % note)
    ptr, note = w._host_register(host, object())
    check(ptr is None and "has no cudaHostRegister" in note,
          "a torch without cudaHostRegister is said: %r" % note)
    os.environ["DUALTIME_HOST_REGISTER"] = "0"
    off = FakeCudart(0)
    ptr, note = w._host_register(host, off)
    check(ptr is None and note == "host=pageable (DUALTIME_HOST_REGISTER=0)" and not off.log,
          "DUALTIME_HOST_REGISTER=0 registers nothing: %r %r" % (note, off.log))
    os.environ.pop("DUALTIME_HOST_REGISTER", None)

    # Case.close(): unregister (through torch.cuda.cudart()) before the mapping closes
    log = []
    mm = mmap.mmap(-1, 4096)

    class Watched:
        closed_after = None

        def close(self):
            Watched.closed_after = list(log)
            mm.close()

    saved = torch.cuda.cudart
    torch.cuda.cudart = lambda: FakeCudart(0, log=log)
    try:
        case = w.Case()
        case.mm = Watched()
        case.registered = 12345
        case.close()
    finally:
        torch.cuda.cudart = saved
    check(log == [("unregister", 12345)], "close() unregisters the pointer once: %r" % log)
    check(Watched.closed_after == [("unregister", 12345)],
          "the unregister comes before the mapping is closed: %r" % Watched.closed_after)
    check(case.registered is None, "close() forgets the registration")
    print("test_torch_hostreg: %s" % ("ok" if FAILS == 0 else "%d failure(s)" % FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
