#!/usr/bin/env python3
"""test_torch_usermod.py — the PyTorch worker's user implementations (issue 17):
`--module FILE.py` and `--compile MODE` (docs/torch-worker.md, "User implementations").

Drives workers/torch/dualtime_torch_worker.py over its protocol with the arenas, inputs
and FP64 reference of test_torch_worker.py (imported; same arguments) and checks:
- examples/torch-module/ops.py on CPU: add and softmax, contiguous and views, against
  the reference, policy "preallocated", SHA-256 of the file in hello;
- a module that returns its result: policy "functional", still correct (sum, layernorm);
- setup(case) is called before the first call with the case's facts;
- an op the module lacks: prepare refused, "unsupported": true, the reason names it;
- a module that raises at import, a syntax error, a missing file: hello ok with
  "unavailable" (the reason), cpu backend unavailable, every prepare refused with it;
- a function that raises, one that returns a wrong dtype: that case's prepare fails
  with the reason;
- --compile: on a torch without torch.compile (1.13) hello says "unavailable" with the
  reason and prepares are refused; where torch.compile works, softmax and layernorm
  compiled are correct, compile time is a set-up phase;
- --module with --compile: a start-up error; so is an unknown argument (--compil).
CUDA cases run too where the worker reports CUDA available.

Run: python3 test_torch_usermod.py path/to/dualtime_torch_worker.py path/to/dualtime
Exit: 0 pass, 1 fail, 77 skip (torch not importable by this interpreter).
"""
import hashlib
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_torch_worker as T  # noqa: E402  (skips with 77 itself when torch is missing)

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "torch-module", "ops.py")
TRITON_EXAMPLE = os.path.join(ROOT, "examples", "triton-softmax", "softmax_triton.py")
check = T.check


class UWorker(T.Worker):
    def __init__(self, args):  # noqa: super().__init__ is replaced, not extended
        self.p = subprocess.Popen([sys.executable, T.WORKER] + list(args) + ["--threads", "1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def prepare(w, backend, op, m, n, k, views, seed):
    """(prepare answer, Shm, bufs, pristine, ref, sc); the caller closes the Shm."""
    tag = "%s %s %dx%dx%d%s" % (backend, op, m, n, k, " views" if views else "")
    bufs, total = T.layout(op, m, n, k, views)
    pristine, vals = T.fill(bufs, total, n, random.Random(seed),
                            grid=(1 << 20) if op == "gemm" else 1024)
    ref, sc = T.reference(op, vals, m, n, k)
    shm = T.Shm(total)
    shm.mm[:] = pristine
    r = w.ask({"cmd": "prepare", "case": tag, "op": op, "backend": backend, "m": m, "n": n,
               "k": k, "shm": shm.name, "arena_bytes": total, "buffers": bufs,
               "capture_sources": False})
    return r, shm, (tag, bufs, pristine, ref, sc)


def run_checked(w, backend, op, m, n, k, views, seed, want_policy):
    """One case through prepare, two checked calls (cold, warm after 10 more), release."""
    r, shm, (tag, bufs, pristine, ref, sc) = prepare(w, backend, op, m, n, k, views, seed)
    try:
        if not check(r["ok"], "%s: prepare: %s" % (tag, r.get("error"))):
            return None
        check(r.get("output_policy") == want_policy,
              "%s: policy %r, expected %r" % (tag, r.get("output_policy"), want_policy))
        worst = 0.0
        for phase in ("cold", "warm"):
            shm.mm[:] = pristine  # re-poison the output, as the orchestrator does
            for req in ({"cmd": "upload"}, {"cmd": "run", "reps": 1}, {"cmd": "download"}):
                a = w.ask(req)
                if not check(a["ok"], "%s: %s %s: %s" % (tag, phase, req["cmd"], a.get("error"))):
                    return None
            worst = max(worst, T.check_arena(tag + " " + phase, op, bufs, bytes(shm.mm),
                                             pristine, ref, sc))
            if phase == "cold":
                a = w.ask({"cmd": "run", "reps": 10})
                check(a["ok"] and a.get("host_ns", 0) > 0, tag + ": run reps=10: %r" % a)
        check(w.ask({"cmd": "release"})["ok"], tag + ": release")
        print("ok   %-34s %-12s budget used %.3f  %s" % (tag, r["output_policy"], worst,
                                                      r.get("implementation")), flush=True)
        return r
    finally:
        shm.close()


def refused(w, backend, op, what, needle, unsupported=None):
    r, shm, (tag, _, _, _, _) = prepare(w, backend, op, 4, 8, 8 if op == "gemm" else 0, False, 1)
    shm.close()
    check(not r["ok"] and needle in r.get("error", ""),
          "%s: prepare %s must fail naming %r: %r" % (what, tag, needle, r))
    if unsupported is not None:
        check(bool(r.get("unsupported")) == unsupported,
              "%s: unsupported flag %s expected: %r" % (what, unsupported, r))


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def backends_of(hello):
    return ["cpu"] + (["cuda"] if hello["backends"]["cuda"]["available"] else [])


def example_module():
    w = UWorker(["--module", EXAMPLE])
    h = w.ask(T.HELLO)
    if not check(h["ok"], "example hello: %r" % h):
        return
    sha = hashlib.sha256(open(EXAMPLE, "rb").read()).hexdigest()
    impl = h.get("impl", {})
    check(h.get("worker") == "py-module" and "unavailable" not in h, "module identity: %r" % h)
    check(impl.get("kind") == "module" and impl.get("sha256") == sha
          and impl.get("path") == os.path.abspath(EXAMPLE), "impl provenance: %r" % impl)
    check(sha in h.get("framework_version", ""), "sha256 in framework_version: %r"
          % h.get("framework_version"))
    check(impl.get("ops") == ["add", "softmax"], "module ops: %r" % impl.get("ops"))
    check("gemm" in impl.get("unsupported", []) and "add" not in impl.get("unsupported", []),
          "unsupported ops: %r" % impl.get("unsupported"))
    check(h["backends"]["cpu"]["available"] is True, "cpu available: %r" % h["backends"])
    seed = 500
    for backend in backends_of(h):
        for op in ("add", "softmax"):
            for (m, n) in ((1, 127), (17, 257), (4, 64)):
                for views in (False, True):
                    seed += 1
                    r = run_checked(w, backend, op, m, n, 0, views, seed, "preallocated")
                    if r:
                        check("first_call" in r.get("setup_ms", {}), "first_call in setup_ms")
                        check(sha[:16] in r.get("implementation", ""), "sha in implementation")
        refused(w, backend, "gemm", "example module", "defines no function gemm()", True)
        refused(w, backend, "layernorm", "example module", "it defines: add, softmax", True)
    w.finish()


RETURNING = '''
import torch
import torch.nn.functional as F
STATE = {"alpha": 0.0, "calls": []}

def setup(case):
    STATE["calls"].append(case.op)
    # add is only right once setup saw the case: b's weight comes from here
    assert case.tensors["out"] is not None and case.tensors["a"].shape == (case.m, case.n)
    STATE["alpha"] = 1.0 if case.op == "add" and case.backend in ("cpu", "cuda") else 0.0

def add(a, b, out):
    torch.add(a, b, alpha=STATE["alpha"], out=out)

def sum(a, out):
    assert out.dim() == 1 and out.shape[0] == a.shape[0]
    return a.sum(dim=1)

def layernorm(a, gamma, beta, out):
    assert gamma.dim() == 1 and beta.dim() == 1
    return F.layer_norm(a, (a.shape[1],), gamma, beta, 1e-5)

def softmax(a, out):
    return torch.softmax(a.double(), 1)       # wrong dtype: refused

def rmsnorm(a, gamma, out):
    raise ValueError("planted failure in rmsnorm")

def gemm(a, b, out):
    return out                                # writes nothing: the oracle must fail it
'''


def returning_module(tmp):
    path = write(tmp, "returning.py", RETURNING)
    w = UWorker(["--module", path])
    h = w.ask(T.HELLO)
    if not check(h["ok"] and h.get("impl", {}).get("setup") is True, "returning hello: %r" % h):
        return
    seed = 700
    for backend in backends_of(h):
        for op, policy in (("sum", "functional"), ("layernorm", "functional"),
                           ("add", "preallocated")):
            for views in (False, True):
                seed += 1
                run_checked(w, backend, op, 17, 33, 0, views, seed, policy)
        refused(w, backend, "softmax", "wrong dtype", "float64")
        refused(w, backend, "rmsnorm", "raising function", "planted failure in rmsnorm")
        # gemm returns out itself: preallocated, and the unwritten output must fail
        r, shm, (tag, bufs, pristine, ref, sc) = prepare(w, backend, "gemm", 4, 8, 8, False, 9)
        try:
            check(r["ok"] and r.get("output_policy") == "preallocated", "gemm returning out: %r" % r)
            shm.mm[:] = pristine
            for req in ({"cmd": "upload"}, {"cmd": "run", "reps": 1}, {"cmd": "download"}):
                w.ask(req)
            seen, real_check = [], T.check
            T.check = lambda cond, what: cond or seen.append(what)  # expected failures
            try:
                T.check_arena("planted", "gemm", bufs, bytes(shm.mm), pristine, ref, sc)
            finally:
                T.check = real_check
            check(any("never written" in s for s in seen),
                  "an output the module never wrote must fail the oracle: %r" % seen[:2])
            w.ask({"cmd": "release"})
        finally:
            shm.close()
    w.finish()


def broken_modules(tmp):
    cases = [("syntax", write(tmp, "broken_syntax.py", "def add(a, b, out)\n    pass\n"),
              "SyntaxError"),
             ("import", write(tmp, "broken_import.py", "import no_such_module_dt17\n"),
              "no_such_module_dt17"),
             ("missing", os.path.join(tmp, "not_there.py"), "no such file")]
    try:
        import triton  # noqa: F401
    except Exception:
        cases.append(("triton example without triton", TRITON_EXAMPLE, "triton"))
    for what, path, needle in cases:
        w = UWorker(["--module", path])
        h = w.ask(T.HELLO)
        un = h.get("unavailable", "")
        check(h["ok"] and needle in un and path.split("/")[-1] in un,
              "%s module: hello unavailable naming %r: %r" % (what, needle, h))
        check(h.get("backends", {}).get("cpu", {}).get("available") is False,
              "%s module: cpu backend unavailable" % what)
        refused(w, "cpu", "add", "%s module" % what, needle, False)
        w.finish()
        print("ok   broken module (%s): %s" % (what, un), flush=True)


def compile_mode():
    import torch
    w = UWorker(["--compile", "default"])
    h = w.ask(T.HELLO)
    if not check(h["ok"] and h.get("impl", {}).get("kind") == "compile", "compile hello: %r" % h):
        return
    check(h.get("worker") == "torch-compile" and "torch.compile mode=default"
          in h.get("framework_version", ""), "compile identity: %r" % h)
    if not hasattr(torch, "compile"):
        un = h.get("unavailable", "")
        check("has no torch.compile" in un and torch.__version__ in un,
              "torch %s: hello unavailable with the reason: %r" % (torch.__version__, h))
        check(h["backends"]["cpu"]["available"] is False, "compile: cpu unavailable")
        refused(w, "cpu", "softmax", "compile on torch 1.13", "has no torch.compile", False)
        print("ok   --compile unavailable: %s" % un, flush=True)
    else:
        print("note: torch %s: --compile hello %r" % (torch.__version__, h.get("unavailable")))
        seed = 900
        for backend in backends_of(h):
            for op in ("softmax", "layernorm"):
                seed += 1
                r = run_checked(w, backend, op, 17, 257, 0, True, seed, "functional")
                if r:
                    check(r["setup_ms"].get("compile", 0) > 0, "compile time is a set-up phase")
    w.finish()
    w = UWorker(["--compile", "default", "--module", EXAMPLE])
    h = w.ask(T.HELLO)
    check(not h["ok"] and "together" in h.get("error", ""), "--module with --compile: %r" % h)
    w.finish()
    # a misspelled flag is a start-up error, never an eager worker under another name
    w = UWorker(["--compil", "default"])
    h = w.ask(T.HELLO)
    check(not h["ok"] and "unknown argument '--compil'" in h.get("error", ""),
          "unknown argument refused: %r" % h)
    w.finish()


def main():
    example_module()
    with tempfile.TemporaryDirectory(prefix="dt-usermod-") as tmp:
        returning_module(tmp)
        broken_modules(tmp)
    compile_mode()
    leftover = [f for f in os.listdir("/dev/shm") if f.startswith("dualtime-%d-" % os.getpid())]
    check(not leftover, "shm segments left: %r" % leftover)
    print("%d failures" % len(T.FAILS))
    return 1 if T.FAILS else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:  # a hung or dead worker: fail, never hang
        import traceback
        traceback.print_exc()
        print("FAIL: %s" % exc)
        sys.exit(1)
