"""dualtime_compile_cache.py — the PyTorch worker's cache of torch.compile'd callables
(`--compile MODE`; docs/torch-worker.md, "The compile cache").

Contract. One CompileCache per worker process. It maps a case key (op, mode, backend,
device, dtype, and every buffer's rows, cols, row stride and data-offset alignment:
exactly what dynamo's tensor guards and inductor's alignment assumption see) to one
compiled callable. A key is compiled once: a later case of the same key (the next round,
the same shape in another run folder's case) gets the same callable back, so it never
recompiles and dynamo is never reset for it. Each key gets its own copy of the op's
function with a fresh code object, so dynamo keeps one cache entry per code object: it
cannot hit its per-code recompile limit and never sees two shapes of one function (the
automatic switch to dynamic shapes needs that; `dynamic=False` forbids it too). Dynamo
is reset only when the cache is evicted, and then the cache is emptied as a whole (a
reset invalidates every compiled callable): when a new key would exceed `max_entries`,
or, for the CUDA-graph modes (reduce-overhead, max-autotune), when the cached cases'
arena bytes would exceed `max_bytes`. `max_entries` 0 is the old behaviour (a reset and a
compile per case). Not thread-safe (the worker is single-threaded). No torch import here:
the compiler, the reset and the compile counter are handed in (load_compiler), which is
what lets tests on a torch without torch.compile inject a fake compiler that counts.

Test hook (tests only): DUALTIME_TORCH_FAKE_COMPILE=/path/fake.py makes load_compiler
use that file's `compile(fn, mode=, dynamic=, fullgraph=)` instead of torch.compile, its
optional `reset()` instead of torch._dynamo.reset and its optional `compiles()` (an int)
as the compile counter (tests/torch/fake_compile.py).
"""
import hashlib
import os
import sys
import types

DEFAULT_MAX_ENTRIES = 64
DEFAULT_MAX_BYTES = 8 << 30        # CUDA-graph modes: arena bytes of the cached cases
ALIGN_BYTES = 128                  # data offsets are keyed modulo this (inductor: 16)
CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")
FAKE_ENV = "DUALTIME_TORCH_FAKE_COMPILE"
MAX_ENV = "DUALTIME_COMPILE_CACHE_MAX"
BYTES_ENV = "DUALTIME_COMPILE_CACHE_BYTES"


def case_key(op, mode, backend, device, dtype, layout):
    """The cache key of a case. layout: (name, rows, cols, row_stride, data_offset) per
    buffer in table order; data offsets count only modulo ALIGN_BYTES (alignment)."""
    bufs = tuple((str(name), int(rows), int(cols), int(stride), int(off) % ALIGN_BYTES)
                 for name, rows, cols, stride, off in layout)
    return (str(op), str(mode), str(backend), str(device), str(dtype), bufs)


def fresh_function(fn, name):
    """A copy of fn with its own code object (renamed `name`): dynamo keys its compiled
    entries and its recompile limit on the code object, so copies never share them."""
    code = fn.__code__
    fields = {"co_name": name}
    if hasattr(code, "co_qualname"):  # Python 3.11+
        fields["co_qualname"] = name
    new = types.FunctionType(code.replace(**fields), fn.__globals__, name,
                             fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = getattr(fn, "__kwdefaults__", None)
    return new


def uses_cudagraphs(mode):
    return str(mode) in CUDAGRAPH_MODES


def _env_int(env, name, default):
    raw = env.get(name)
    if raw is None or raw == "":
        return default, None
    try:
        v = int(raw)
    except ValueError:
        v = -1
    if v < 0:
        return default, "%s=%r is not a non-negative integer; using %d" % (name, raw, default)
    return v, None


class Compiler:
    """What compiles: compile(fn, mode) -> callable, reset(), count() -> int or None (the
    number of graphs compiled so far in this process, to catch a silent recompile)."""

    def __init__(self, compile_fn, reset_fn, count_fn, note):
        self.compile_fn = compile_fn
        self.reset_fn = reset_fn
        self.count_fn = count_fn
        self.note = note  # "torch.compile" or "fake compiler /path (tests only)"

    def compile(self, fn, mode):
        return self.compile_fn(fn, mode=mode, dynamic=False, fullgraph=True)

    def reset(self):
        if self.reset_fn is not None:
            self.reset_fn()

    def count(self):
        try:
            return None if self.count_fn is None else int(self.count_fn())
        except Exception:
            return None


def _torch_counter(torch):
    """dynamo's graphs-compiled counter (torch._dynamo.utils.counters["stats"]
    ["unique_graphs"]: one per FX graph dynamo hands to the backend, whatever the fullgraph
    path; none on a cache hit), or None where it is missing."""
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return None
    return lambda: counters["stats"]["unique_graphs"]


def load_compiler(torch, env=None):
    """(Compiler or None, why not). torch.compile with torch._dynamo.reset, or the fake
    compiler of DUALTIME_TORCH_FAKE_COMPILE (tests only: a note goes to stderr)."""
    env = os.environ if env is None else env
    path = env.get(FAKE_ENV)
    if path:
        import importlib.util
        sys.stderr.write("dualtime torch worker: TEST HOOK %s=%s replaces torch.compile "
                         "(tests only)\n" % (FAKE_ENV, path))
        spec = importlib.util.spec_from_file_location("dualtime_fake_compile", path)
        if spec is None or spec.loader is None:
            return None, "%s=%s: not a Python source file" % (FAKE_ENV, path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception as exc:
            return None, "%s=%s: cannot load it: %s: %s" % (FAKE_ENV, path,
                                                             type(exc).__name__, exc)
        return Compiler(mod.compile, getattr(mod, "reset", None),
                        getattr(mod, "compiles", None),
                        "fake compiler %s (tests only)" % path), None
    if torch is None or not hasattr(torch, "compile"):
        return None, ("torch %s has no torch.compile (it needs PyTorch 2.0 or newer)"
                      % (getattr(torch, "__version__", "?"),))
    dyn = getattr(torch, "_dynamo", None)
    reset = dyn.reset if dyn is not None and hasattr(dyn, "reset") else None
    return Compiler(torch.compile, reset, _torch_counter(torch), "torch.compile"), None


class CompileCache:
    """Compiled callables by case key (module docstring). Counters: compiles, hits,
    evictions (each eviction is one reset)."""

    def __init__(self, compiler, max_entries=DEFAULT_MAX_ENTRIES, max_bytes=DEFAULT_MAX_BYTES):
        self.compiler = compiler
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.entries = {}   # key -> (compiled callable, arena bytes)
        self.bytes = 0
        self.compiles = 0
        self.hits = 0
        self.evictions = 0

    @classmethod
    def from_env(cls, compiler, env=None):
        """A cache sized by DUALTIME_COMPILE_CACHE_MAX / _BYTES; (cache, warnings)."""
        env = os.environ if env is None else env
        n, w1 = _env_int(env, MAX_ENV, DEFAULT_MAX_ENTRIES)
        b, w2 = _env_int(env, BYTES_ENV, DEFAULT_MAX_BYTES)
        return cls(compiler, n, b), [w for w in (w1, w2) if w]

    def lookup(self, key):
        """The cached callable of key, or None (counts a hit)."""
        got = self.entries.get(key)
        if got is None:
            return None
        self.hits += 1
        return got[0]

    def _evict_all(self):
        self.entries.clear()
        self.bytes = 0
        self.evictions += 1
        self.compiler.reset()

    def compile(self, key, fn, mode, arena_bytes=0):
        """Compiles a fresh copy of fn for key (a miss) and caches it, evicting (reset)
        first when it would not fit. The callable is not called here: its first call
        compiles (torch.compile is lazy)."""
        limit_bytes = uses_cudagraphs(mode) and self.max_bytes > 0
        if self.max_entries == 0:
            self._evict_all()  # no cache: one reset per case, as before the cache
        elif (len(self.entries) >= self.max_entries
              or (limit_bytes and self.entries and self.bytes + arena_bytes > self.max_bytes)):
            self._evict_all()
        # the name is the key's digest: the same in every process (the main and the probe
        # workers trace the same graph; nothing process-local gets into inductor's caches)
        digest = hashlib.sha1(repr(key).encode()).hexdigest()[:12]
        name = "dualtime_compiled_%s_%s" % (key[0], digest)
        compiled = self.compiler.compile(fresh_function(fn, name), mode)
        self.compiles += 1
        if self.max_entries > 0:
            self.entries[key] = (compiled, arena_bytes)
            self.bytes += arena_bytes
        return compiled

    def drop(self, key):
        """Forgets key (its compile failed): the next case of it compiles again."""
        got = self.entries.pop(key, None)
        if got is not None:
            self.bytes -= got[1]

    def stats(self):
        return {"entries": len(self.entries), "compiles": self.compiles, "hits": self.hits,
                "evictions": self.evictions, "max_entries": self.max_entries}
