#!/usr/bin/env python3
"""test_torch_compile_cache.py — the PyTorch worker's compile cache (`--compile MODE`;
docs/torch-worker.md, "The compile cache"; workers/torch/dualtime_compile_cache.py).

Part 1, the module itself with a counting compiler: the same key twice compiles once;
two shapes compile twice; another mode compiles again; data offsets count only by their
alignment, strides fully; every key gets its own code object; a full cache is evicted
as a whole with one reset (entries cap; arena-bytes cap for the CUDA-graph modes only);
max 0 resets and compiles every time; a dropped key compiles again.

Part 2, the worker over its protocol with the fake compiler of tests/torch/fake_compile.py
(DUALTIME_TORCH_FAKE_COMPILE; torch 1.13 has no torch.compile) on CPU, every case checked
against the FP64 reference of test_torch_worker.py: the same case twice (a new arena, as
the next round) -> one compile, the second prepare says "compile_cache": "hit" with
setup_ms.compile 0 and no reset; another shape, input views (other strides) and another
op -> one compile each; every compile dynamic=False, fullgraph=True, in the worker's mode;
another mode (a second worker) compiles again; DUALTIME_RUN_BACKEND=X probes only X at
hello; DUALTIME_COMPILE_CACHE_MAX=1 evicts (reset)
and compiles A again; =0 is the old reset-per-case; an unknown mode is refused at hello
without compiling; a planted guard on an input value makes a hit recompile, and the
worker reports it ("recompiled", compile time > 0), not hides it.

Part 3, only where torch.compile is real and CUDA usable (the H200, scripts/device.sh
compile-cache): real inductor through the worker: softmax compiled, a second prepare of
the same case is a hit that takes no compile time and is still correct; a probe_process
worker (CUPTI attached, persistent mode) prepares the same case with CUPTI detached for
the compile (its stderr says so) and its probe region still works. Timings are printed.

Run: python3 test_torch_compile_cache.py path/to/dualtime_torch_worker.py path/to/dualtime
Exit: 0 pass, 1 fail, 77 skip (torch not importable by this interpreter).
"""
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_torch_worker as T  # noqa: E402  (skips with 77 itself when torch is missing)
import test_torch_usermod as U  # noqa: E402

check = T.check
FAKE = os.path.join(HERE, "fake_compile.py")


def load_cache_module():
    path = os.path.join(os.path.dirname(os.path.abspath(T.WORKER)), "dualtime_compile_cache.py")
    spec = importlib.util.spec_from_file_location("dualtime_compile_cache", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# --- part 1: the module -------------------------------------------------------------------

class Counting:
    def __init__(self):
        self.compiled, self.resets, self.calls = [], 0, 0

    def compile_fn(self, fn, mode=None, dynamic=None, fullgraph=None):
        self.compiled.append((fn, mode, dynamic, fullgraph))
        return fn

    def reset(self):
        self.resets += 1


def module_cache():
    CC = load_cache_module()

    def op(a):
        return a + 1
    lay = [("a", 4, 8, 8, 256), ("out", 4, 8, 8, 1024)]
    k1 = CC.case_key("softmax", "default", "cpu", "cpu", "torch.float32", lay)
    k1b = CC.case_key("softmax", "default", "cpu", "cpu", "torch.float32",
                      [("a", 4, 8, 8, 256 + 4096), ("out", 4, 8, 8, 1024 + 128)])
    k1v = CC.case_key("softmax", "default", "cpu", "cpu", "torch.float32",
                      [("a", 4, 8, 11, 256), ("out", 4, 8, 8, 1024)])
    k1u = CC.case_key("softmax", "default", "cpu", "cpu", "torch.float32",
                      [("a", 4, 8, 8, 260), ("out", 4, 8, 8, 1024)])
    k2 = CC.case_key("softmax", "default", "cpu", "cpu", "torch.float32",
                     [("a", 5, 8, 8, 256), ("out", 5, 8, 8, 1024)])
    k3 = CC.case_key("softmax", "max-autotune", "cpu", "cpu", "torch.float32", lay)
    check(k1 == k1b, "offsets with the same alignment are the same key")
    check(k1 != k1v and k1 != k1u, "another stride or alignment is another key")
    c = Counting()
    cache = CC.CompileCache(CC.Compiler(c.compile_fn, c.reset, None, "counting"), 8, 0)
    for key, mode in ((k1, "default"), (k1b, "default"), (k2, "default"), (k3, "max-autotune"),
                      (k1, "default"), (k2, "default")):
        if cache.lookup(key) is None:
            cache.compile(key, op, mode)
    check(len(c.compiled) == 3, "k1 twice, k2, k3 (another mode): 3 compiles, got %d"
          % len(c.compiled))
    check(cache.hits == 3 and c.resets == 0, "3 hits, no reset: %r" % cache.stats())
    check(all(d is False and fg is True for _, _, d, fg in c.compiled),
          "dynamic=False, fullgraph=True: %r" % [x[1:] for x in c.compiled])
    codes = [fn.__code__ for fn, _, _, _ in c.compiled]
    check(len(set(id(x) for x in codes)) == 3 and op.__code__ not in codes,
          "every key has its own code object")
    check(c.compiled[0][0](41) == 42, "the fresh copy computes what the function does")
    # entries cap: evicted as a whole, one reset
    c = Counting()
    cache = CC.CompileCache(CC.Compiler(c.compile_fn, c.reset, None, "counting"), 2, 0)
    for key in (k1, k2, k3, k1):
        if cache.lookup(key) is None:
            cache.compile(key, op, "default")
    check(len(c.compiled) == 4 and c.resets == 1 and cache.evictions == 1,
          "cap 2, keys 1 2 3 1: 4 compiles, 1 reset: %d, %d" % (len(c.compiled), c.resets))
    check(len(cache.entries) == 2, "after the eviction: k3 and k1 cached")
    # no cache (max 0): the old behaviour, a reset and a compile per case
    c = Counting()
    cache = CC.CompileCache(CC.Compiler(c.compile_fn, c.reset, None, "counting"), 0, 0)
    for key in (k1, k1):
        if cache.lookup(key) is None:
            cache.compile(key, op, "default")
    check(len(c.compiled) == 2 and c.resets == 2, "max 0: 2 compiles, 2 resets")
    # arena bytes cap: only the CUDA-graph modes
    for mode, want in (("reduce-overhead", 1), ("default", 0)):
        c = Counting()
        cache = CC.CompileCache(CC.Compiler(c.compile_fn, c.reset, None, "counting"), 8, 100)
        for key in (k1, k2):
            cache.compile(key, op, mode, 60)
        check(c.resets == want, "bytes cap with %s: %d resets, want %d" % (mode, c.resets, want))
    # a dropped key (its compile failed) compiles again
    c = Counting()
    cache = CC.CompileCache(CC.Compiler(c.compile_fn, c.reset, None, "counting"), 8, 0)
    cache.compile(k1, op, "default")
    cache.drop(k1)
    check(cache.lookup(k1) is None, "a dropped key is gone")
    # environment sizing and its warnings
    cache, warns = CC.CompileCache.from_env(None, {CC.MAX_ENV: "3"})
    check(cache.max_entries == 3 and not warns, "DUALTIME_COMPILE_CACHE_MAX=3")
    cache, warns = CC.CompileCache.from_env(None, {CC.MAX_ENV: "-1"})
    check(cache.max_entries == CC.DEFAULT_MAX_ENTRIES and warns, "a bad value warns")
    print("ok   compile cache module: keys, one compile per key, eviction, reset", flush=True)


def module_torch_wiring():
    """load_compiler on a stand-in torch 2.x: torch.compile, torch._dynamo.reset and dynamo's
    counters["stats"]["unique_graphs"] as the compile counter; a torch without compile refused."""
    import collections
    import types
    CC = load_cache_module()
    counters = collections.defaultdict(collections.Counter)
    resets = []

    def fake_compile(fn, mode=None, dynamic=None, fullgraph=None):
        counters["stats"]["unique_graphs"] += 1
        return fn
    utils = types.ModuleType("torch._dynamo.utils")
    utils.counters = counters
    dyn = types.ModuleType("torch._dynamo")
    dyn.reset = lambda: resets.append(1)
    fake_torch = types.SimpleNamespace(__version__="2.99.0", compile=fake_compile, _dynamo=dyn)
    names = ("torch._dynamo", "torch._dynamo.utils")
    saved = {k: sys.modules.get(k) for k in names}
    sys.modules.update({"torch._dynamo": dyn, "torch._dynamo.utils": utils})
    try:
        comp, why = CC.load_compiler(fake_torch, {})
        if check(comp is not None and comp.note == "torch.compile", "torch 2.x: %r" % why):
            n0 = comp.count()
            comp.compile(lambda x: x, "default")
            check(n0 == 0 and comp.count() == 1, "the counter is dynamo's unique_graphs")
            comp.reset()
            check(resets == [1], "reset is torch._dynamo.reset")
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    comp, why = CC.load_compiler(types.SimpleNamespace(__version__="1.13.0"), {})
    check(comp is None and "1.13.0 has no torch.compile" in why, "no torch.compile: %r" % why)
    comp, why = CC.load_compiler(None, {CC.FAKE_ENV: "/nonexistent/fake.py"})
    check(comp is None and "cannot load it" in str(why), "a missing fake compiler: %r" % why)
    print("ok   compile cache module: torch.compile wiring (counter, reset, refusal)", flush=True)


# --- part 2: the worker with the fake compiler --------------------------------------------

class CWorker(T.Worker):
    def __init__(self, args, env_extra, stderr=None):  # noqa: super().__init__ is replaced
        env = dict(os.environ)
        env.update(env_extra)
        self.p = subprocess.Popen([sys.executable, T.WORKER] + list(args) + ["--threads", "1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                  stderr=stderr)


def events(log, kind=None, name_prefix="dualtime_compiled_"):
    if not os.path.exists(log):
        return []
    rows = [json.loads(line) for line in open(log)]
    return [r for r in rows if (kind is None or r["event"] == kind)
            and (name_prefix is None or str(r.get("name") or "").startswith(name_prefix))]


def fake_worker(tmp, tag, mode="default", extra=None):
    log = os.path.join(tmp, "%s.log" % tag)
    env = {"DUALTIME_TORCH_FAKE_COMPILE": FAKE, "DUALTIME_FAKE_COMPILE_LOG": log}
    env.update(extra or {})
    w = CWorker(["--compile", mode], env)
    h = w.ask(T.HELLO)
    check(h["ok"] and "unavailable" not in h, "%s: fake compile hello: %r" % (tag, h))
    impl = h.get("impl", {})
    check("fake compiler" in str(impl.get("compiler")), "%s: hello names the fake compiler: %r"
          % (tag, impl))
    return w, log


def case(w, op, m, n, views, seed):
    """One case through prepare and two checked calls (U.run_checked): the answer."""
    return U.run_checked(w, "cpu", op, m, n, 0, views, seed, "functional") or {}


def fake_worker_cache(tmp):
    w, log = fake_worker(tmp, "main")
    import torch
    want = ["dualtime_compile_probe_" + b for b in
            (("cpu", "cuda") if torch.cuda.is_available() else ("cpu",))]
    probes = events(log, "compile", "dualtime_compile_probe_")
    check([p["name"] for p in probes] == want and all(p["mode"] is None for p in probes),
          "hello probes each backend once in the default mode: %r" % probes)
    a1 = case(w, "softmax", 17, 257, False, 1)
    a2 = case(w, "softmax", 17, 257, False, 2)     # the next round: a new arena, same layout
    n = len(events(log, "compile"))
    check(n == 1, "the same case twice: 1 compile, got %d" % n)
    check(a1.get("compile_cache") == "miss" and a1.get("setup_ms", {}).get("compile", 0) > 0,
          "first prepare: a miss with its compile time: %r" % a1.get("setup_ms"))
    check(a1.get("compile_graphs") == 1 and a2.get("compile_graphs") == 0,
          "the fake's counter: 1 graph on the miss, 0 on the hit: %r, %r"
          % (a1.get("compile_graphs"), a2.get("compile_graphs")))
    check(a2.get("compile_cache") == "hit" and a2.get("setup_ms", {}).get("compile") == 0
          and a2["setup_ms"].get("warm", -1) >= 0,
          "second prepare: a hit, compile 0, warm-up timed: %r / %r"
          % (a2.get("compile_cache"), a2.get("setup_ms")))
    check(a1.get("implementation") == a2.get("implementation"), "same implementation line")
    case(w, "softmax", 33, 129, False, 3)          # another shape
    check(len(events(log, "compile")) == 2, "two shapes: 2 compiles")
    case(w, "softmax", 17, 257, True, 4)           # input views: other strides
    check(len(events(log, "compile")) == 3, "views: another key, 3 compiles")
    case(w, "layernorm", 17, 257, False, 5)
    case(w, "softmax", 33, 129, False, 6)          # hit
    case(w, "layernorm", 17, 257, False, 7)        # hit
    comp = events(log, "compile")
    check(len(comp) == 4, "4 keys, 4 compiles (then hits): %d" % len(comp))
    check(all(e["dynamic"] is False and e["fullgraph"] is True and e["mode"] == "default"
              for e in comp), "every compile dynamic=False, fullgraph=True, mode default: %r"
          % comp)
    check(not events(log, "recompile") and not events(log, "reset", None),
          "no recompile and no reset: %r" % (events(log, "recompile") + events(log, "reset", None)))
    w.finish()
    # another mode: its own worker, its own compile
    w, log = fake_worker(tmp, "ma", "max-autotune")
    case(w, "softmax", 17, 257, False, 8)
    comp = events(log, "compile")
    check(len(comp) == 1 and comp[0]["mode"] == "max-autotune", "max-autotune compiles: %r"
          % comp)
    w.finish()
    print("ok   worker compile cache: one compile per key, hits take no compile time",
          flush=True)


def fake_worker_limits(tmp):
    w, log = fake_worker(tmp, "cap1", extra={"DUALTIME_COMPILE_CACHE_MAX": "1"})
    for seed, (m, n) in enumerate(((17, 257), (33, 129), (17, 257))):
        case(w, "softmax", m, n, False, 20 + seed)
    check(len(events(log, "compile")) == 3 and len(events(log, "reset", None)) == 2,
          "cap 1, A B A: 3 compiles, 2 resets (evictions): %d, %d"
          % (len(events(log, "compile")), len(events(log, "reset", None))))
    w.finish()
    w, log = fake_worker(tmp, "cap0", extra={"DUALTIME_COMPILE_CACHE_MAX": "0"})
    a = [case(w, "softmax", 17, 257, False, 30 + i) for i in range(2)]
    check(len(events(log, "compile")) == 2 and len(events(log, "reset", None)) == 2,
          "cap 0: a reset and a compile per case")
    check([x.get("compile_cache") for x in a] == ["miss", "miss"], "cap 0: two misses")
    w.finish()
    # a planted guard on an input value: the hit recompiles, and the worker says so
    w, log = fake_worker(tmp, "value", extra={"DUALTIME_FAKE_COMPILE_GUARD_VALUE": "1"})
    case(w, "softmax", 17, 257, False, 40)
    a = case(w, "softmax", 17, 257, False, 41)
    check(a.get("compile_cache") == "recompiled" and a.get("setup_ms", {}).get("compile", 0) > 0,
          "a hit that recompiles is reported with its compile time: %r / %r"
          % (a.get("compile_cache"), a.get("setup_ms")))
    check(len(events(log, "recompile")) >= 1, "the plant recompiled")
    w.finish()
    # an unknown mode: refused at hello, nothing compiled
    log = os.path.join(tmp, "bogus.log")
    w = CWorker(["--compile", "bogus"], {"DUALTIME_TORCH_FAKE_COMPILE": FAKE,
                                         "DUALTIME_FAKE_COMPILE_LOG": log})
    h = w.ask(T.HELLO)
    check(h["ok"] and "refuses mode=bogus" in str(h.get("unavailable")),
          "unknown mode unavailable with the reason: %r" % h.get("unavailable"))
    check(not events(log, "compile", None), "nothing compiled for an unknown mode")
    U.refused(w, "cpu", "softmax", "unknown mode", "refuses mode=bogus", False)
    w.finish()
    # the run's backend (DUALTIME_RUN_BACKEND, set by dualtime run --backends X): only it
    # is probed; the other backend is unavailable with the reason, nothing compiled for it
    import torch
    other = "cuda" if torch.cuda.is_available() else None
    for only, probed in (("cpu", ["cpu"]), ("cuda", [other] if other else [])):
        log = os.path.join(tmp, "only-%s.log" % only)
        w = CWorker(["--compile", "default"], {"DUALTIME_TORCH_FAKE_COMPILE": FAKE,
                                               "DUALTIME_FAKE_COMPILE_LOG": log,
                                               "DUALTIME_RUN_BACKEND": only})
        h = w.ask(T.HELLO)
        got = [e["name"][len("dualtime_compile_probe_"):]
               for e in events(log, "compile", "dualtime_compile_probe_")]
        check(got == probed, "DUALTIME_RUN_BACKEND=%s probes %r, got %r" % (only, probed, got))
        skipped = "cuda" if only == "cpu" else "cpu"
        b = h.get("backends", {}).get(skipped, {})
        check(b.get("available") is False and (skipped == "cuda" and not other
                                               or "not probed" in str(b.get("reason"))),
              "DUALTIME_RUN_BACKEND=%s: %s unavailable with the reason: %r" % (only, skipped, b))
        if only == "cpu":
            check(h["backends"]["cpu"]["available"] is True, "cpu probed and available")
        w.finish()
    print("ok   worker compile cache: eviction, no cache, a reported recompile, a bad mode, "
          "the run's backend only", flush=True)


# --- part 3: real torch.compile on CUDA ---------------------------------------------------

def real_cuda(tmp):
    import torch
    if not hasattr(torch, "compile") or not torch.cuda.is_available():
        print("note: part 3 (real torch.compile on CUDA) skipped: torch %s, cuda %s"
              % (torch.__version__, torch.cuda.is_available()), flush=True)
        return
    w = CWorker(["--compile", "default"], {})
    h = w.ask(T.HELLO)
    print("note: hello probe ms %r" % h.get("impl", {}).get("probe_ms"), flush=True)
    if not check(h["ok"] and h["backends"]["cuda"]["available"], "real compile hello: %r" % h):
        return
    m, n = 1024, 4096
    t0 = time.monotonic()
    a1 = U.run_checked(w, "cuda", "softmax", m, n, 0, False, 50, "functional") or {}
    t1 = time.monotonic()
    a2 = U.run_checked(w, "cuda", "softmax", m, n, 0, False, 51, "functional") or {}
    t2 = time.monotonic()
    check(a1.get("compile_cache") == "miss" and a2.get("compile_cache") == "hit",
          "real: miss then hit: %r %r" % (a1.get("compile_cache"), a2.get("compile_cache")))
    check(a2.get("setup_ms", {}).get("compile") == 0, "real: the hit compiled nothing")
    check(isinstance(a1.get("compile_graphs"), int) and a1["compile_graphs"] >= 1
          and a2.get("compile_graphs") == 0,
          "real: dynamo's graph counter is live (miss >= 1, hit 0): %r, %r"
          % (a1.get("compile_graphs"), a2.get("compile_graphs")))
    print("note: real compile: miss %.1f s (compile %.0f ms), hit %.1f s (warm %.0f ms)"
          % (t1 - t0, a1.get("setup_ms", {}).get("compile", -1), t2 - t1,
             a2.get("setup_ms", {}).get("warm", -1)), flush=True)
    w.finish()
    # a probe process: compile with CUPTI detached, then a probe region
    err = open(os.path.join(tmp, "probe.err"), "w+")
    w = CWorker(["--compile", "default"], {}, stderr=err)
    h = w.ask(T.HELLO)
    dt = h.get("device_timing", {})
    if not dt.get("available"):
        print("note: probe process part skipped: device timing %r" % dt, flush=True)
        w.finish()
        return
    r = w.ask({"cmd": "probe_process", "probe_kind": "concurrent"})
    check(r["ok"], "probe_process: %r" % r)
    t0 = time.monotonic()
    r, shm, (tag, bufs, pristine, ref, sc) = U.prepare(w, "cuda", "softmax", m, n, 0, False, 52)
    t1 = time.monotonic()
    try:
        check(r["ok"], "probe process prepare: %r" % r)
        for req in ({"cmd": "upload"}, {"cmd": "run", "reps": 3},
                    {"cmd": "device", "scope": "probe", "reps": 4, "capacity": 64}):
            a = w.ask(req)
            check(a["ok"], "probe process %s: %r" % (req["cmd"], a))
        res = a.get("result", {})
        check(res.get("kernel_count", 0) >= 4, "the probe saw the compiled kernels: %r" % res)
        check(w.ask({"cmd": "release"})["ok"], "probe process release")
    finally:
        shm.close()
    w.finish()
    err.seek(0)
    text = err.read()
    check("CUPTI detached" in text, "the probe process compiled with CUPTI detached")
    print("note: probe process prepare %.1f s (setup_ms %r); %s" % (
        t1 - t0, r.get("setup_ms"), [l for l in text.splitlines() if "CUPTI" in l][:1]),
        flush=True)


def main():
    random.seed(1)
    module_cache()
    module_torch_wiring()
    with tempfile.TemporaryDirectory(prefix="dt-ccache-") as tmp:
        fake_worker_cache(tmp)
        fake_worker_limits(tmp)
        real_cuda(tmp)
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
