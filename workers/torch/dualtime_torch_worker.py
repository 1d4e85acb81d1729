#!/usr/bin/env python3
"""dualtime_torch_worker.py — the PyTorch worker of dualtime (eager ops, CPU and CUDA).

Speaks docs/protocol.md (version 1): one JSON request per line on stdin, exactly one
JSON response per line on stdout, free text on stderr. Tensors live in the case's
shared-memory arena (/dev/shm/<name>); every buffer is a strided view of that arena
(CPU) or of one device mirror with identical offsets (CUDA). The op table (names,
buffer roles, dtypes) is not copied here: it arrives in hello's "ops" (built from
src/plan/dt_ops.c; `dualtime list --json` prints the same array). What each op calls
and its output policy: docs/torch-worker.md.

Run: python3 dualtime_torch_worker.py --threads N    (--threads N are the last args)
Needs only the standard library and torch (1.13 or 2.x). The thread pools are set
through the environment before torch is imported. If torch cannot be imported the
worker still answers: hello and every other request get ok:false with an install hint.
"""
import json
import mmap
import ctypes
import contextlib
import functools
import os
import sys
import time
import traceback

PROTOCOL = 1
WORKER = "torch"
EPS = 1e-5
SHM_PREFIX = "/dualtime-"
MAX_REPS = 1 << 40


def _one_line(text, limit=2000):
    """A message fit for the protocol's one-line "error" field."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _log(msg):
    sys.stderr.write("torch-worker: %s\n" % msg)
    sys.stderr.flush()


# --- arguments and thread pools (before torch is imported) ---------------------------

def _parse_args(argv):
    """Returns (threads or None, startup error or None, {"module": path} or {"compile":
    mode} or {}). --module FILE.py and --compile MODE (docs/torch-worker.md, "User
    implementations") exclude each other; any other argument is a startup error (the
    hello answers it), so a misspelled flag never runs eager torch instead."""
    threads, err, mode, i = None, None, {}, 0
    while i < len(argv):
        a = argv[i]
        key = a.split("=", 1)[0]
        if key in ("--threads", "--module", "--compile"):
            if "=" in a:
                val, i = a.split("=", 1)[1], i + 1
            elif i + 1 >= len(argv):
                return None, "%s needs a value" % key, mode
            else:
                val, i = argv[i + 1], i + 2
            if key == "--threads":
                try:
                    threads = int(val)
                except ValueError:
                    threads = 0
                if threads < 1:
                    return None, "--threads: '%s' is not a positive integer" % val, mode
            else:
                if mode:
                    return None, "--module and --compile are given together (one per worker)", mode
                if not val:
                    return None, "%s: empty value" % key, mode
                mode = {key[2:]: val}
        else:  # a misspelled flag must not quietly run eager torch (docs/torch-worker.md)
            return None, ("unknown argument %r (expected --threads N, --module FILE.py, "
                          "--compile MODE)" % a), mode
    return threads, err, mode


THREADS, STARTUP_ERROR, USER_MODE = _parse_args(sys.argv[1:])
if THREADS is not None:
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[_var] = str(THREADS)
if "compile" in USER_MODE:  # the run's workers share inductor's on-disk caches (the
    # default dir, per user): a probe worker or the next process loads what the main
    # worker compiled (docs/torch-worker.md, "The compile cache"); a user's 0 is kept
    os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")

# The protocol owns the real stdout. Python's sys.stdout and the C-level fd 1 both go to
# stderr from here on, so a stray print (ours, torch's or a native library's) can never
# corrupt the response stream.
_PROTO_OUT = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)
sys.stdout = sys.stderr

try:
    import torch
    import torch.nn.functional as F
    TORCH_ERROR = None
except Exception as _exc:  # ImportError, OSError from a broken shared library, ...
    torch = None
    F = None
    TORCH_ERROR = _one_line(
        "PyTorch is not importable by %s: %s; on Debian: apt-get install "
        "--no-install-recommends python3-torch" % (sys.executable, _exc))

INTEROP_NOTE = None
if torch is not None:
    try:  # inter-op pool: settable once, before any inter-op parallel work
        torch.set_num_interop_threads(1)
    except Exception as _exc:
        INTEROP_NOTE = _one_line("set_num_interop_threads(1) failed: %s" % _exc)
        _log(INTEROP_NOTE)
    if THREADS is not None:
        torch.set_num_threads(THREADS)


def _torch_version_tuple():
    parts = []
    for p in torch.__version__.split("+")[0].split(".")[:2]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _has(obj, name):
    """hasattr that also survives torch's modules raising AssertionError for unknowns."""
    try:
        return obj is not None and hasattr(obj, name)
    except Exception:
        return False


def _configure_precision():
    """TF32 off everywhere; FP32 matmuls in full precision. On torch >= 2.9 the new
    fp32_precision API is used alone (mixing it with allow_tf32 is an error there).
    Returns the resulting flags for hello's env."""
    flags = {}
    m = torch.backends.cuda.matmul
    if _has(m, "fp32_precision"):
        for name, obj in (("backends", torch.backends), ("matmul", m),
                          ("cudnn", torch.backends.cudnn),
                          ("cudnn.conv", getattr(torch.backends.cudnn, "conv", None)),
                          ("cudnn.rnn", getattr(torch.backends.cudnn, "rnn", None))):
            if not _has(obj, "fp32_precision"):
                continue
            try:
                obj.fp32_precision = "ieee"
            except Exception as exc:
                _log("could not set %s.fp32_precision: %s" % (name, exc))
            try:
                flags[name + ".fp32_precision"] = str(obj.fp32_precision)
            except Exception as exc:
                flags[name + ".fp32_precision"] = "unknown: %s" % _one_line(exc, 200)
    else:
        m.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        if _has(torch, "set_float32_matmul_precision"):
            torch.set_float32_matmul_precision("highest")
        flags["matmul.allow_tf32"] = bool(m.allow_tf32)
        flags["cudnn.allow_tf32"] = bool(torch.backends.cudnn.allow_tf32)
    # bf16/f16 gemm accumulates in FP32 (SPEC §2): no reduced-precision split-K reductions
    for name in ("allow_bf16_reduced_precision_reduction",
                 "allow_fp16_reduced_precision_reduction"):
        if _has(m, name):
            try:
                setattr(m, name, False)
                flags["matmul." + name] = bool(getattr(m, name))
            except Exception as exc:
                _log("could not set matmul.%s: %s" % (name, exc))
    if _has(torch, "get_float32_matmul_precision"):
        try:
            flags["float32_matmul_precision"] = torch.get_float32_matmul_precision()
        except Exception as exc:
            flags["float32_matmul_precision"] = "unknown: %s" % _one_line(exc, 200)
    return flags


PRECISION_FLAGS, PRECISION_ERROR = {}, None
if torch is not None:
    try:
        PRECISION_FLAGS = _configure_precision()
    except Exception as _exc:  # never die at startup; CUDA prepares are refused instead
        PRECISION_ERROR = _one_line("could not turn TF32 off: %s: %s"
                                    % (type(_exc).__name__, _exc))
        PRECISION_FLAGS = {"error": PRECISION_ERROR}
        _log(PRECISION_ERROR)


def _inference_mode():
    if hasattr(torch, "inference_mode"):
        return torch.inference_mode()
    return torch.no_grad()


# --- capabilities of this torch version (probed once, on tiny CPU tensors) -----------

_CAPS = {}


def _cap(name, probe):
    if name not in _CAPS:
        try:
            with _inference_mode():
                probe()
            _CAPS[name] = True
        except Exception:
            _CAPS[name] = False
    return _CAPS[name]


def _has_gelu_out():
    def probe():
        x = torch.zeros(2)
        o = torch.empty(2)
        torch._C._nn.gelu(x, out=o)
    return hasattr(torch._C, "_nn") and hasattr(torch._C._nn, "gelu") and _cap("gelu_out", probe)


def _softmax_out_fn():
    """(callable taking (a, out), description) for the best softmax with out=, or None."""
    def p1():
        torch._softmax(torch.zeros(1, 2), 1, False, out=torch.empty(1, 2))

    def p2():
        torch.ops.aten._softmax.out(torch.zeros(1, 2), 1, False, out=torch.empty(1, 2))
    if hasattr(torch, "_softmax") and _cap("softmax_out", p1):
        fn = torch._softmax
        return (lambda a, out: fn(a, 1, False, out=out)), \
            "torch._softmax(a, 1, False, out=out)"
    if _cap("aten_softmax_out", p2):
        fn = torch.ops.aten._softmax.out
        return (lambda a, out: fn(a, 1, False, out=out)), \
            "torch.ops.aten._softmax.out(a, 1, False, out=out)"
    return None


# --- ops ------------------------------------------------------------------------------
# The op table (names, buffer roles in order, dtypes, dims) is not kept here: the
# orchestrator sends it in hello's "ops" (docs/protocol.md, "The op table"; the same array
# `dualtime list --json` prints under "ops"). What stays here is per-op torch code:
# _BUILDERS maps an op name to the function that binds its torch call.

DIMS = ("M", "N", "K", "1")
DTYPES = ("f32", "i64")
# A case's buffers: the table's "f32" roles arrive in the case dtype (docs/protocol.md).
FLOAT_DTYPES = ("f32", "bf16", "f16")
ESIZE = {"f32": 4, "bf16": 2, "f16": 2, "i64": 8}


def _parse_table(ops):
    """The hello's "ops" array -> {name: {"gemm": bool, "roles": [(name, dtype, rows dim,
    cols dim, is_output)]}}; raises WorkerError on anything malformed."""
    if not isinstance(ops, list) or not ops:
        raise WorkerError("hello: 'ops' must be a non-empty list of op objects")
    table = {}
    for o in ops:
        if not isinstance(o, dict) or not isinstance(o.get("name"), str) or not o["name"]:
            raise WorkerError("hello: every op must be an object with a name")
        name, bufs = o["name"], o.get("buffers")
        if name in table:
            raise WorkerError("hello: op '%s' given twice" % name)
        if not isinstance(bufs, list) or len(bufs) < 2:
            raise WorkerError("hello: op '%s': 'buffers' must list its inputs and output" % name)
        roles = []
        for b in bufs:
            ok = (isinstance(b, dict) and isinstance(b.get("name"), str) and b["name"]
                  and b.get("dtype") in DTYPES and b.get("rows") in DIMS
                  and b.get("cols") in DIMS and isinstance(b.get("is_output"), bool))
            if not ok:
                raise WorkerError("hello: op '%s': bad buffer %s" % (name, _one_line(b, 200)))
            roles.append((b["name"], b["dtype"], b["rows"], b["cols"], b["is_output"]))
        names = [r[0] for r in roles]
        if len(set(names)) != len(names):
            raise WorkerError("hello: op '%s': a buffer name is given twice" % name)
        if [r[4] for r in roles] != [False] * (len(roles) - 1) + [True]:
            raise WorkerError("hello: op '%s': inputs first, then the single output" % name)
        if "a" not in names or names[-1] != "out":
            raise WorkerError("hello: op '%s': needs an input 'a' and the output 'out'" % name)
        table[name] = {"gemm": bool(o.get("gemm")), "roles": roles}
    return table


FUNCTIONAL = "functional"


def _storage_of(t):
    """(data_ptr, nbytes) of t's whole storage (torch 1.13 and 2.x)."""
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    nbytes = s.nbytes() if hasattr(s, "nbytes") else s.size() * t.element_size()
    return s.data_ptr(), nbytes


def check_plain_result(res, target):
    """cheat.aliased_output (docs/anti-cheat.md) unless a returned result is plain memory
    of the case: `target` (the arena's output) itself, or a torch.Tensor of exactly that
    class (no subclass or lazy tensor), on target's device, dense, owning its whole
    storage (not a view into something larger) and not inside the case's arena (an
    input)."""
    if res is target:
        return
    name = "cheat.aliased_output: the returned result"
    if type(res) is not torch.Tensor:
        raise WorkerError("%s is a %s, not a plain torch.Tensor (lazy or wrapped)"
                          % (name, type(res).__name__))
    if res.device != target.device or res.numel() != target.numel():
        raise WorkerError("%s is on %s with %d elements, the output is on %s with %d"
                          % (name, res.device, res.numel(), target.device, target.numel()))
    if not res.is_contiguous():
        raise WorkerError("%s is not dense (strides %s)" % (name, tuple(res.stride())))
    ptr, nbytes = _storage_of(res)
    if res.storage_offset() != 0 or nbytes != res.numel() * res.element_size():
        raise WorkerError("%s is a view of other memory (offset %d, storage of %d bytes for "
                          "%d)" % (name, res.storage_offset(), nbytes,
                                   res.numel() * res.element_size()))
    arena, arena_bytes = _storage_of(target)
    if arena <= ptr < arena + arena_bytes:
        raise WorkerError("%s lives in the case's arena (an input's memory)" % name)


def _functional(fn, target, desc):
    """A functional op: the timed call only computes (torch allocates the result, as a
    caller's code would); publish() checks that the last result is plain memory
    (check_plain_result) and copies it into the arena output, outside any timing, before
    the output is downloaded and checked."""
    last = [None]
    if os.environ.get("DUALTIME_TORCH_PLANT") == "aliased_output":  # tests only
        inner = fn
        sys.stderr.write("dualtime torch worker: PLANTED CHEAT aliased_output (tests only)\n")

        def fn():  # the right values, returned as a view into a larger tensor
            r = inner()
            return torch.cat([r, r])[: r.shape[0]]

    def call():
        last[0] = fn()

    def publish():
        if last[0] is not None:
            check_plain_result(last[0], target)
            target.copy_(last[0].reshape(target.shape))
    return call, FUNCTIONAL, desc + " [result allocated by torch; copied to the output only for checks]", publish


# Each builder: (t: 2-D views by name, v1: 1-D views of vectors and M x 1 buffers, m, n,
# dev: the device of extra preallocated tensors) -> (callable, output policy, description
# [, publish]).

def _build_add(t, v1, m, n, dev):
    return (functools.partial(torch.add, t["a"], t["b"], out=t["out"]), "out=",
            "torch.add(a, b, out=out)")


def _build_gelu_add(t, v1, m, n, dev):
    a, b, out = t["a"], t["b"], t["out"]
    tmp = torch.empty((m, n), dtype=a.dtype, device=dev)
    add = torch.add
    if _has_gelu_out():
        gelu = torch._C._nn.gelu

        def call():
            add(a, b, out=tmp)
            gelu(tmp, out=out)
        return (call, "out=",
                "torch.add(a, b, out=tmp); torch._C._nn.gelu(tmp, out=out) "
                "[exact erf GELU, tmp preallocated]")
    gelu_f = F.gelu

    def fn():
        add(a, b, out=tmp)
        return gelu_f(tmp)
    return _functional(fn, out, "torch.add(a, b, out=tmp); F.gelu(tmp) [exact erf GELU]")


def _build_sum(t, v1, m, n, dev):
    return (functools.partial(torch.sum, t["a"], 1, out=v1["out"]), "out=",
            "torch.sum(a, dim=1, out=out)")


def _build_softmax(t, v1, m, n, dev):
    a, out = t["a"], t["out"]
    best = _softmax_out_fn()
    if best is not None:
        fn, desc = best
        return functools.partial(fn, a, out), "out=", desc
    sm = torch.softmax
    return _functional(lambda: sm(a, 1), out, "torch.softmax(a, dim=1)")


def _build_rmsnorm(t, v1, m, n, dev):
    a, out, g = t["a"], t["out"], v1["gamma"]
    if hasattr(F, "rms_norm"):
        rms = F.rms_norm
        shape = (n,)

        return _functional(lambda: rms(a, shape, g, EPS), out,
                           "F.rms_norm(a, (N,), gamma, eps=1e-5)")
    rsqrt = torch.rsqrt

    return _functional(lambda: a * rsqrt(a.pow(2).mean(-1, keepdim=True) + EPS) * g, out,
                       "a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + 1e-5) * gamma "
                       "[composed: no F.rms_norm before torch 2.4]")


def _build_layernorm(t, v1, m, n, dev):
    a, out, g, be = t["a"], t["out"], v1["gamma"], v1["beta"]
    ln = F.layer_norm
    shape = (n,)

    return _functional(lambda: ln(a, shape, g, be, EPS), out,
                       "F.layer_norm(a, (N,), gamma, beta, 1e-5)")


def _build_residual_layernorm(t, v1, m, n, dev):
    a, b, out = t["a"], t["b"], t["out"]
    ln = F.layer_norm
    shape = (n,)

    return _functional(lambda: ln(a + b, shape, None, None, EPS), out,
                       "F.layer_norm(a + b, (N,), None, None, 1e-5)")


def _build_cross_entropy(t, v1, m, n, dev):
    a, lab, o1 = t["a"], v1["labels"], v1["out"]
    ce = F.cross_entropy

    return _functional(lambda: ce(a, lab, reduction="none"), o1,
                       "F.cross_entropy(a, labels, reduction='none')")


def _build_gemm(t, v1, m, n, dev):
    return (functools.partial(torch.mm, t["a"], t["b"], out=t["out"]), "out=",
            "torch.mm(a, b, out=out) [TF32 off]")


_BUILDERS = {"add": _build_add, "gelu_add": _build_gelu_add, "sum": _build_sum,
             "softmax": _build_softmax, "rmsnorm": _build_rmsnorm,
             "layernorm": _build_layernorm, "residual_layernorm": _build_residual_layernorm,
             "cross_entropy": _build_cross_entropy, "gemm": _build_gemm}


# --- user implementations: --module FILE.py and --compile MODE -------------------------
# docs/torch-worker.md, "User implementations". One mode per process: USER_MODE is {} (eager
# torch, the default), {"module": path} or {"compile": mode}. Whatever makes the mode
# unusable here is USER.unavailable (hello's "unavailable"; every prepare is refused with it).

def _sha256_file(path):
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _arg_views(roles, views, views1d):
    """The op's tensors in table order (inputs, then out): 1-D for a role whose table dims
    have a "1" (gamma, beta: N; labels and the out of sum/cross_entropy: M), else 2-D."""
    return [views1d[r[0]] if "1" in (r[2], r[3]) else views[r[0]] for r in roles]


def _compile_exprs():
    """op -> functional torch code that torch.compile compiles (inputs in table order, the
    same arithmetic as the eager builders; the result is returned, never written to out)."""
    def rmsnorm(a, g):
        if hasattr(F, "rms_norm"):
            return F.rms_norm(a, (a.shape[-1],), g, EPS)
        return a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + EPS) * g
    return {
        "add": lambda a, b: a + b,
        "gelu_add": lambda a, b: F.gelu(a + b),
        "sum": lambda a: torch.sum(a, 1),
        "softmax": lambda a: torch.softmax(a, 1),
        "rmsnorm": rmsnorm,
        "layernorm": lambda a, g, be: F.layer_norm(a, (a.shape[-1],), g, be, EPS),
        "residual_layernorm": lambda a, b: F.layer_norm(a + b, (a.shape[-1],), None, None, EPS),
        "cross_entropy": lambda a, lab: F.cross_entropy(a, lab, reduction="none"),
        "gemm": lambda a, b: torch.mm(a, b),
    }


class UserImpl:
    """The process's implementation mode. kind: "eager", "module" or "compile"."""

    def __init__(self, mode):
        self.kind = "eager"
        self.unavailable = None      # why this implementation cannot run here (str)
        self.backend_reason = {}     # backend -> why it cannot (compile: per-backend probe)
        self.module = None
        self.path = None
        self.sha256 = None
        self.mode = None
        self.probed = False
        self.cache = None            # compile: the CompileCache (dualtime_compile_cache.py)
        self.compiler_note = None    # compile: "torch.compile" or the tests' fake compiler
        self.probe_ms = {}           # compile: backend -> the hello probe's milliseconds
        if "module" in mode:
            self.kind = "module"
            self._load(mode["module"])
        elif "compile" in mode:
            self.kind = "compile"
            self.mode = mode["compile"]

    # --module -----------------------------------------------------------------------
    def _load(self, path):
        import importlib.util
        self.path = os.path.abspath(path)
        if not os.path.isfile(self.path):
            self.unavailable = "--module %s: no such file" % path
            return
        try:
            self.sha256 = _sha256_file(self.path)
        except OSError as exc:
            self.unavailable = "--module %s: cannot read it: %s" % (path, exc.strerror)
            return
        if torch is None:
            return  # hello reports TORCH_ERROR
        stem = os.path.splitext(os.path.basename(self.path))[0]
        name = "dualtime_user_" + "".join(c if c.isalnum() else "_" for c in stem)
        sys.path.insert(0, os.path.dirname(self.path))  # the module may import its siblings
        try:
            spec = importlib.util.spec_from_file_location(name, self.path)
            if spec is None or spec.loader is None:
                raise ImportError("not a Python source file")
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SyntaxError, ImportError (no triton here), SystemExit
            _log("cannot load --module %s:" % path)
            traceback.print_exc(file=sys.stderr)
            self.unavailable = _one_line("--module %s: cannot load it: %s: %s"
                                         % (path, type(exc).__name__, exc), 600)
            return
        self.module = mod

    def module_ops(self, table):
        """Op names of the table the module defines a function for, table order."""
        if self.module is None:
            return []
        return [op for op in table if callable(getattr(self.module, op, None))]

    # --compile ----------------------------------------------------------------------
    def probe(self, cuda_ok):
        """--compile: decides availability per backend with one tiny real compile (never
        by version number), as cheaply as that gets: the mode is checked by torch.compile
        itself without compiling, and the probe compiles in the default mode (no
        autotuning, no CUDA graphs), so inductor's on-disk caches make it nearly free in
        every worker after the first on the machine. Fills backend_reason, probe_ms and,
        when no backend compiles, unavailable. Also makes the compile cache."""
        if self.kind != "compile" or self.probed:
            return
        self.probed = True
        try:
            import dualtime_compile_cache as CC
        except ImportError as exc:  # the module travels next to this file (CMake copies it)
            self.unavailable = "--compile: cannot import dualtime_compile_cache: %s" % exc
            return
        comp, why = CC.load_compiler(torch)
        if comp is None:
            self.unavailable = why
            return
        try:  # an unknown mode is refused here, before anything compiles
            comp.compile(lambda x: x, self.mode)
        except Exception as exc:
            self.unavailable = _one_line("torch.compile refuses mode=%s: %s: %s"
                                         % (self.mode, type(exc).__name__, exc), 600)
            return
        self.cache, warns = CC.CompileCache.from_env(comp)
        for w in warns:
            _log(w)
        self.compiler_note = comp.note
        only = os.environ.get("DUALTIME_RUN_BACKEND")  # dualtime run --backends X sets it
        for backend in ("cpu", "cuda"):
            if backend == "cuda" and not cuda_ok:
                self.backend_reason["cuda"] = "no usable CUDA device"
                continue
            if only in ("cpu", "cuda") and backend != only:
                self.backend_reason[backend] = ("torch.compile not probed on %s: this run "
                                                "uses --backends %s" % (backend, only))
                continue
            t0 = time.perf_counter()
            try:
                fn = comp.compile(CC.fresh_function(_compile_probe, "dualtime_compile_probe_"
                                                    + backend), None)
                x = torch.arange(8, dtype=torch.float32, device=backend)
                with _inference_mode():
                    y = fn(x)
                if backend == "cuda":
                    torch.cuda.synchronize()
                if not torch.equal(y.cpu(), torch.arange(8, dtype=torch.float32) * 2 + 1):
                    raise RuntimeError("the compiled probe computed a wrong result")
            except Exception as exc:
                _log("torch.compile probe on %s failed:" % backend)
                traceback.print_exc(file=sys.stderr)
                self.backend_reason[backend] = _one_line(
                    "torch.compile does not work on %s here: %s: %s"
                    % (backend, type(exc).__name__, exc), 600)
            self.probe_ms[backend] = (time.perf_counter() - t0) * 1e3
        if "cpu" in self.backend_reason and "cuda" in self.backend_reason:
            if cuda_ok:
                self.unavailable = "%s; %s" % (self.backend_reason["cpu"],
                                               self.backend_reason["cuda"])
            else:
                self.unavailable = self.backend_reason["cpu"]

    # hello --------------------------------------------------------------------------
    def hello_fields(self, table):
        """(worker, framework_version suffix, "impl" object) for hello."""
        if self.kind == "module":
            impl = {"kind": "module", "path": self.path, "sha256": self.sha256,
                    "ops": self.module_ops(table or {}),
                    "setup": bool(self.module is not None
                                  and callable(getattr(self.module, "setup", None)))}
            return "py-module", " module=%s sha256=%s" % (self.path, self.sha256), impl
        if self.kind == "compile":
            impl = {"kind": "compile", "mode": self.mode, "probe_ms": self.probe_ms}
            if self.cache is not None:
                impl["cache"] = {"max_entries": self.cache.max_entries,
                                 "max_bytes": self.cache.max_bytes}
                impl["compiler"] = self.compiler_note
                impl["fx_graph_cache"] = _inductor_setting("fx_graph_cache")
                impl["cache_dir"] = _inductor_cache_dir()
            return ("torch-compile", " torch.compile mode=%s" % self.mode, impl)
        return "torch", "", {"kind": "eager"}

    def unsupported_ops(self, table):
        """Op names of the table this process has no code for, table order."""
        if self.kind == "module":
            have = self.module_ops(table)
            return [op for op in table if op not in have]
        code = _COMPILE_EXPRS if self.kind == "compile" else _BUILDERS
        return [op for op in table if op not in code]

    def refuse(self, op, backend, table):
        """Raises why this process cannot prepare op on backend: WorkerError, or
        Unsupported (prepare answers "unsupported": true) for an op it has no code for."""
        if self.unavailable:
            raise WorkerError(self.unavailable)
        if self.kind == "compile" and backend in self.backend_reason:
            raise WorkerError(self.backend_reason[backend])
        if op not in self.unsupported_ops(table):
            return
        if self.kind == "module":
            raise Unsupported("unsupported: --module %s defines no function %s() (it defines: "
                              "%s)" % (os.path.basename(self.path), op,
                                       ", ".join(self.module_ops(table)) or "none of the ops"))
        raise Unsupported("unsupported: this worker has no %s code for op %s"
                          % ("torch.compile" if self.kind == "compile" else "torch", op))

    # prepare ------------------------------------------------------------------------
    def build(self, case, op, roles, m, n, k, setup_ms, quiet=None):
        """(call, policy, description, publish or None) for the prepared case. Runs the
        set-up phase: module: setup(case) then one call (Triton/CuPy JIT, the policy);
        compile: the compile and warm-up calls (none compile on a cache hit). Outputs
        written here are poisoned again by the orchestrator before every checked call.
        quiet: a context manager the JIT work runs in (a probe process detaches CUPTI
        there, Worker._outside_cupti); None: nothing."""
        args = _arg_views(roles, case.views, case.views1d)
        out = args[-1]
        if case.dev is not None:  # the first calls see the real inputs, not stale memory
            case.dev.copy_(case.host)
        quiet = quiet or _no_context
        if self.kind == "compile":
            return self._build_compile(case, op, args, setup_ms, quiet)
        with quiet():
            return self._build_module(case, op, args, out, m, n, k, setup_ms)

    def _build_compile(self, case, op, args, setup_ms, quiet):
        """The compiled op from the cache (docs/torch-worker.md, "The compile cache"): a
        miss compiles a fresh copy of the op's code for this key (outside CUPTI in a probe
        process) and times it as setup_ms.compile; a hit only warms (setup_ms.warm, compile
        0). Three calls either way (compile, then CUDA-graph warm-up and recording for the
        CUDA-graph modes); a graph compiled during a hit's calls is a recompile, logged and
        reported ("compile_cache": "recompiled"), never hidden."""
        import dualtime_compile_cache as CC
        ins = tuple(args[:-1])
        out = args[-1]
        key = CC.case_key(op, self.mode, case.backend, out.device, out.dtype, case.layout)
        fn = self.cache.lookup(key)
        hit = fn is not None
        count0 = self.cache.compiler.count()
        t0 = time.perf_counter()
        try:
            with (_no_context() if hit else quiet()):
                if not hit:
                    fn = self.cache.compile(key, _COMPILE_EXPRS[op], self.mode,
                                            case.arena_bytes)
                with _inference_mode():
                    for _ in range(3):
                        res = fn(*ins)
                case.sync()
        except Exception as exc:
            self.cache.drop(key)
            _log("torch.compile of %s failed:" % op)
            traceback.print_exc(file=sys.stderr)
            raise WorkerError(_one_line("torch.compile(mode=%s) of %s failed: %s: %s"
                                        % (self.mode, op, type(exc).__name__, exc)))
        ms = (time.perf_counter() - t0) * 1e3
        count1 = self.cache.compiler.count()
        graphs = None if count0 is None or count1 is None else count1 - count0
        case.compile_cache = "hit" if hit else "miss"
        case.compile_graphs = graphs
        if hit and graphs:
            case.compile_cache = "recompiled"
            _log("torch.compile: %s hit the cache but %d graph(s) compiled again (a guard "
                 "failed): counted as compile time" % (case.name, graphs))
        elif not hit and graphs is not None and graphs > 1:
            _log("torch.compile: %s compiled %d graphs (expected 1)" % (case.name, graphs))
        setup_ms["compile"] = 0.0 if case.compile_cache == "hit" else ms
        if hit:
            setup_ms["warm"] = ms
        _check_result(res, out, "the compiled %s" % op)
        call, policy, desc, publish = _functional(functools.partial(fn, *ins), out,
                                                  "torch.compile(mode=%s, dynamic=False, "
                                                  "fullgraph=True) of %s" % (self.mode, op))
        return call, policy, desc, publish

    def _build_module(self, case, op, args, out, m, n, k, setup_ms):
        import types
        fn = getattr(self.module, op)
        base = os.path.basename(self.path)
        setup = getattr(self.module, "setup", None)
        if callable(setup):
            info = types.SimpleNamespace(
                name=case.name, op=op, backend=case.backend, m=m, n=n, k=k,
                dtype=out.dtype, device=out.device,
                tensors={r: t for r, t in zip(case.roles, args)})
            t0 = time.perf_counter()
            try:
                setup(info)
                case.sync()
            except Exception as exc:
                raise WorkerError(_user_error("%s setup(case)" % base, exc))
            setup_ms["setup"] = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        try:
            with _inference_mode():
                res = fn(*args)
            case.sync()
        except Exception as exc:
            raise WorkerError(_user_error("%s %s()" % (base, op), exc))
        setup_ms["first_call"] = (time.perf_counter() - t0) * 1e3
        sig = "%s(%s)" % (op, ", ".join(case.roles))
        where = "%s sha256=%s" % (base, (self.sha256 or "")[:16])
        if res is None or (isinstance(res, torch.Tensor) and res.shape == out.shape
                           and res.data_ptr() == out.data_ptr() and res.stride() == out.stride()):
            return (functools.partial(fn, *args), "preallocated",
                    "module %s: %s writes out" % (where, sig), None)
        _check_result(res, out, "%s %s()" % (base, op))
        call, policy, desc, publish = _functional(functools.partial(fn, *args), out,
                                                  "module %s: %s returns its result"
                                                  % (where, sig))
        return call, policy, desc, publish


def _user_error(what, exc):
    _log("%s raised:" % what)
    traceback.print_exc(file=sys.stderr)
    return _one_line("%s raised %s: %s" % (what, type(exc).__name__, exc))


def _check_result(res, out, what):
    """A returned result must be a tensor the output can take: same element count,
    dtype and device (a silent cast or transfer would hide work from the timing)."""
    if not isinstance(res, torch.Tensor):
        raise WorkerError("%s returned %s: return None (it wrote out) or a tensor"
                          % (what, type(res).__name__))
    if res.numel() != out.numel() or res.dtype != out.dtype or res.device != out.device:
        raise WorkerError("%s returned a %s %s tensor on %s; the output is %s %s on %s"
                          % (what, "x".join(map(str, res.shape)) or "scalar",
                             str(res.dtype).replace("torch.", ""), res.device,
                             "x".join(map(str, out.shape)),
                             str(out.dtype).replace("torch.", ""), out.device))


def _inductor_setting(name):
    """torch._inductor.config.<name> where inductor is loaded (after the probe), else None."""
    cfg = sys.modules.get("torch._inductor.config")
    v = getattr(cfg, name, None) if cfg is not None else None
    return v if isinstance(v, (bool, int, str)) else None


def _inductor_cache_dir():
    """inductor's on-disk cache folder (TORCHINDUCTOR_CACHE_DIR or its default), or None
    (also where inductor is not loaded: a fake compiler in tests)."""
    if "torch._inductor" not in sys.modules:
        return os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir
        return cache_dir()
    except Exception:
        return os.environ.get("TORCHINDUCTOR_CACHE_DIR")


def _compile_probe(x):
    """The hello's availability probe for --compile (UserImpl.probe)."""
    return x * 2.0 + 1.0


@contextlib.contextmanager
def _no_context():
    yield


_COMPILE_EXPRS = _compile_exprs() if torch is not None else {}
USER = UserImpl(USER_MODE)


# --- device timing (placeholder) -------------------------------------------------------

class _Kernel(ctypes.Structure):
    """dt_timing_kernel (include/dualtime/dt_timing.h)."""
    _fields_ = [("name", ctypes.c_char * 256), ("start_ns", ctypes.c_uint64),
                ("end_ns", ctypes.c_uint64), ("grid", ctypes.c_uint32 * 3),
                ("block", ctypes.c_uint32 * 3), ("correlation_id", ctypes.c_uint64),
                ("stream_id", ctypes.c_uint32), ("pad_", ctypes.c_uint32)]


class _Launch(ctypes.Structure):
    """dt_timing_launch (include/dualtime/dt_timing.h; ABI 2 addition, 96 bytes)."""
    _fields_ = [("enter_ns", ctypes.c_uint64), ("exit_ns", ctypes.c_uint64),
                ("correlation_id", ctypes.c_uint32), ("alt_correlation_id", ctypes.c_uint32),
                ("status", ctypes.c_int32), ("runtime", ctypes.c_uint32),
                ("api", ctypes.c_char * 64)]


class _Result(ctypes.Structure):
    """dt_timing_result (include/dualtime/dt_timing.h)."""
    _fields_ = [("abi_version", ctypes.c_uint32), ("scope", ctypes.c_uint32),
                ("probe_kind", ctypes.c_uint32), ("clock_source", ctypes.c_uint32),
                ("stream_ns", ctypes.c_double), ("kernel_sum_ns", ctypes.c_double),
                ("kernel_span_ns", ctypes.c_double), ("kernel_count", ctypes.c_uint64),
                ("launch_count", ctypes.c_uint64), ("dropped_records", ctypes.c_uint64),
                ("clock_offset_ns", ctypes.c_double), ("clock_uncertainty_ns", ctypes.c_double),
                ("host_begin_ns", ctypes.c_uint64), ("host_end_ns", ctypes.c_uint64),
                ("records_stored", ctypes.c_uint64), ("other_stream_kernels", ctypes.c_uint64),
                ("region_stream_id", ctypes.c_uint32), ("held", ctypes.c_uint32),
                ("hold_method", ctypes.c_uint32), ("hold_timeout_ms", ctypes.c_uint32),
                ("pad_", ctypes.c_uint32), ("hold_queue_ns", ctypes.c_uint64)]


TIMING_ABI_VERSION = 2
HOLD_METHODS = {1: "wait_value", 2: "spin_kernel"}  # dt_timing_hold_method
MAX_RECORDS_OUT = 4096


class DeviceTiming:
    """Device timing through libdualtime_timing.so (include/dualtime/dt_timing.h), loaded
    with ctypes from the folder of this script. Available only with a usable CUDA device;
    the ABI version is checked before any use."""

    def __init__(self):
        self.lib = None
        self.reason = "not loaded"

    def load(self, cuda_ok):
        if not cuda_ok:
            self.reason = "cpu only: no usable CUDA device"
            return
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libdualtime_timing.so")
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            self.reason = "cannot load %s: %s" % (path, _one_line(exc, 200))
            return
        lib.dt_timing_abi_version.restype = ctypes.c_uint32
        lib.dt_timing_begin_control.argtypes = [ctypes.c_void_p]
        lib.dt_timing_begin_probe.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]
        lib.dt_timing_end.argtypes = [ctypes.POINTER(_Result)]
        lib.dt_timing_kernel_record.argtypes = [ctypes.c_uint64, ctypes.POINTER(_Kernel)]
        lib.dt_timing_last_error.restype = ctypes.c_char_p
        if hasattr(lib, "dt_timing_hold"):  # ABI 2 (the version check below refuses older)
            lib.dt_timing_hold.argtypes = [ctypes.c_void_p]
            lib.dt_timing_hold.restype = ctypes.c_int
        if hasattr(lib, "dt_timing_launch_record"):  # the E2E decomposition's launches
            lib.dt_timing_launch_record.argtypes = [ctypes.c_uint64, ctypes.POINTER(_Launch)]
            lib.dt_timing_launch_record.restype = ctypes.c_int
        if hasattr(lib, "dt_timing_set_persistent"):
            lib.dt_timing_set_persistent.argtypes = [ctypes.c_int]
            lib.dt_timing_set_persistent.restype = ctypes.c_int
        abi = lib.dt_timing_abi_version()
        if abi != TIMING_ABI_VERSION:
            self.reason = "%s has ABI %d, this worker needs %d" % (path, abi, TIMING_ABI_VERSION)
            return
        self.lib = lib
        self.reason = None

    def hello(self):
        if self.lib is None:
            return {"available": False, "reason": self.reason}
        return {"available": True, "abi_version": TIMING_ABI_VERSION}

    def _error(self, what):
        msg = self.lib.dt_timing_last_error()
        return WorkerError("%s: %s" % (what, msg.decode("utf-8", "replace") if msg else "unknown"))

    def set_persistent(self, probe_kind):
        """Persistent probe mode (dt_timing_set_persistent): CUPTI attached now, with the
        given kind, and kept attached between probe regions; control regions refused
        from then on. For a worker process that serves only probe samples."""
        if self.lib is None:
            raise WorkerError("device timing not available: %s" % self.reason)
        if not hasattr(self.lib, "dt_timing_set_persistent"):
            raise WorkerError("the timing helper has no dt_timing_set_persistent")
        on = 2 if probe_kind == "serialized" else 1
        if not self.lib.dt_timing_set_persistent(on):
            raise self._error("dt_timing_set_persistent")

    def persistent_off(self):
        """Persistent mode off: CUPTI detached (dt_timing_set_persistent(0)), until
        set_persistent attaches it again (Worker._outside_cupti)."""
        if not self.lib.dt_timing_set_persistent(0):
            raise self._error("dt_timing_set_persistent(0)")

    def measure(self, case, scope, reps, capacity, probe_kind, hold=False, calls=None,
                flush=None, graph=None, decomp=False):
        """One region of reps calls on torch's current stream. hold: a held window
        (docs/device-timing.md): the op is called once more and synchronized first (its
        kernels loaded, torch's allocator holding the blocks a functional op reuses), the
        stream then waits on the helper's flag while the calls queue; a call that
        synchronizes inside the hold fails the sample with the watchdog's reason.
        calls: the cold cache's rotation (call i is calls[i % len]); flush: run and
        synchronized before the window (cold cache); graph: a captured CUDA graph of the
        reps calls, replayed once in a control window (scope "graph").
        decomp (an unheld probe of one call): the host clock is read right before the
        call and right after case.sync() returns, inside the region, and the answer
        carries them with every launch's API enter/exit ("decomp", docs/protocol.md)."""
        if self.lib is None:
            raise WorkerError("device timing not available: %s" % self.reason)
        if decomp and not hasattr(self.lib, "dt_timing_launch_record"):
            raise WorkerError("decomp unavailable: the timing helper has no "
                              "dt_timing_launch_record")
        if case.backend != "cuda":
            raise WorkerError("device timing needs the cuda backend")
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        call = graph.replay if graph is not None else case.call
        rot = calls if calls and graph is None else [call]
        # tests only: a host synchronization planted inside the hold
        plant_sync = hold and os.environ.get("DUALTIME_TORCH_FAULT") == "holdsync"
        with _inference_mode():
            if hold:
                call()
            case.sync()
            if flush is not None:  # cold cache: outside the window
                flush()
                case.sync()
            if hold and not self.lib.dt_timing_hold(stream):
                raise self._error("timing hold")
            if scope == "probe":
                kind = 1 if probe_kind == "serialized" else 0
                ok = self.lib.dt_timing_begin_probe(stream, max(1, min(capacity or 1, 65536)), kind)
            else:
                ok = self.lib.dt_timing_begin_control(stream)
            if not ok:
                raise self._error("timing begin")
            try:
                t_call = time.monotonic_ns()
                if graph is not None:
                    graph.replay()
                else:
                    nrot = len(rot)
                    for i in range(reps):
                        rot[i % nrot]()
                if plant_sync:
                    torch.cuda.synchronize()
                if decomp:  # the caller sees the call complete
                    case.sync()
                    t_return = time.monotonic_ns()
            except Exception:
                junk = _Result()
                self.lib.dt_timing_end(ctypes.byref(junk))  # also releases a hold
                raise
            res = _Result()
            if not self.lib.dt_timing_end(ctypes.byref(res)):
                raise self._error("timing end")
            if hold and not res.held:
                raise WorkerError("timing end: the region was not held")
        out = {"abi_version": res.abi_version, "scope": scope,
               "stream_ns": res.stream_ns, "kernel_sum_ns": res.kernel_sum_ns,
               "kernel_span_ns": res.kernel_span_ns, "kernel_count": res.kernel_count,
               "launch_count": res.launch_count, "dropped_records": res.dropped_records,
               "clock_offset_ns": res.clock_offset_ns,
               "clock_uncertainty_ns": res.clock_uncertainty_ns,
               "host_begin_ns": res.host_begin_ns, "host_end_ns": res.host_end_ns,
               "records_stored": res.records_stored,
               "other_stream_kernels": res.other_stream_kernels,
               "held": bool(res.held)}
        if res.hold_method:
            out["hold_method"] = HOLD_METHODS.get(res.hold_method, "none")
            out["hold_timeout_ms"] = res.hold_timeout_ms
            out["hold_queue_ns"] = res.hold_queue_ns
        if scope == "probe":
            out["probe_kind"] = "serialized" if res.probe_kind == 1 else "concurrent"
            kernels = []
            k = _Kernel()
            for i in range(min(res.records_stored, MAX_RECORDS_OUT)):
                if not self.lib.dt_timing_kernel_record(i, ctypes.byref(k)):
                    break
                kernels.append({"name": k.name.decode("utf-8", "replace"),
                                "start_ns": k.start_ns, "end_ns": k.end_ns,
                                "grid": list(k.grid), "block": list(k.block),
                                "correlation_id": k.correlation_id, "stream_id": k.stream_id})
            out["kernels"] = kernels
            out["kernels_truncated"] = len(kernels) < res.records_stored
        if decomp:
            launches = []
            l = _Launch()
            for i in range(res.launch_count):
                if not self.lib.dt_timing_launch_record(i, ctypes.byref(l)):
                    break
                launches.append({"enter_ns": l.enter_ns, "exit_ns": l.exit_ns,
                                 "api": l.api.decode("utf-8", "replace"),
                                 "correlation_id": l.correlation_id,
                                 "runtime": bool(l.runtime)})
            out["decomp"] = {"call_start_ns": t_call, "sync_return_ns": t_return,
                             "host_call_ns": t_return - t_call,
                             "clock_source": res.clock_source, "launches": launches}
        return out


# --- graph replay and cold cache (issue 13; docs/device-timing.md) ---------------------

MAX_COPIES = 1024  # "copies" of a cold device request, at most


class GraphUnavailable(Exception):
    """The op cannot be captured in a CUDA graph: the graph scope is unavailable for this
    case (recorded with the reason), which is not a failure of the case."""


def _req_cache(req):
    """(cold, copies, flush_bytes) of a device request's optional "cache"."""
    c = req.get("cache")
    if c is None or c == "warm":
        return False, 0, 0
    if c != "cold":
        raise WorkerError("'cache' must be \"warm\" or \"cold\"")
    copies = _req_int(req, "copies", 1)
    if copies > MAX_COPIES:
        raise WorkerError("copies=%d out of [1, %d]" % (copies, MAX_COPIES))
    flush_bytes = _req_int(req, "flush_bytes", 4)
    if flush_bytes > 1 << 40:
        raise WorkerError("flush_bytes=%d out of [4, 2^40]" % flush_bytes)
    return True, copies, flush_bytes


class Replay:
    """A case's cold cache (arena copies with their calls, the flush buffer) and its
    captured graph. Copies are made from the case's device arena when first needed, so
    they hold the same inputs; every copy gets its own call (case.bind on the copy)."""

    def __init__(self):
        self.copies = []       # [(device arena copy, call)], copy 0 is the case's own
        self.flush_buf = None  # int32 device tensor of flush_bytes / 4 elements
        self.flush_value = 0
        self.graph_obj = None
        self.graph_key = None  # (reps, number of copies) the graph holds

    def cold(self, case, copies, flush_bytes):
        """(calls, flush) of a cold window rotating over `copies` arena copies."""
        if case.dev is None:
            raise WorkerError("cold cache: needs the cuda backend")
        if copies > 1 and (case.emulated or case.bind is None):
            raise WorkerError("cold cache: arena copies are not offered for an emulated case "
                              "or a user implementation (--module, --compile)")
        if not self.copies:
            self.copies = [(case.dev, case.call)]
        while len(self.copies) < copies:
            dev = case.dev.clone()
            self.copies.append((dev, case.bind(dev)[2][0]))
            self.graph_obj = None
        if self.flush_buf is None or self.flush_buf.numel() * 4 < flush_bytes:
            self.flush_buf = None
            self.flush_buf = torch.empty(flush_bytes // 4, dtype=torch.int32, device="cuda")
        calls = [c for _, c in self.copies[:copies]]
        return calls, self._flush

    def _flush(self):
        self.flush_value = (self.flush_value * 1664525 + 1013904223) % (1 << 31)
        self.flush_buf.fill_(self.flush_value)

    def graph(self, case, reps, calls):
        """The CUDA graph of reps calls (rotated over calls when given), captured on a side
        stream as torch requires (torch.cuda.graph), replayed once untimed; kept for the
        next requests of the same reps and copies. GraphUnavailable when torch refuses."""
        if case.dev is None:
            raise GraphUnavailable("cpu: no graphs")
        if not hasattr(torch.cuda, "CUDAGraph") or not hasattr(torch.cuda, "graph"):
            raise GraphUnavailable("torch %s has no torch.cuda.graph" % torch.__version__)
        rot = calls or [case.call]
        key = (reps, len(rot))
        if self.graph_obj is not None and self.graph_key == key:
            return self.graph_obj
        self.graph_obj = None
        try:
            with _inference_mode():
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):  # warm-up on a side stream before capture
                    for c in rot[:3]:
                        c()
                torch.cuda.current_stream().wait_stream(side)
                torch.cuda.synchronize()
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    for i in range(reps):
                        rot[i % len(rot)]()
                g.replay()
                torch.cuda.synchronize()
        except Exception as exc:  # not capturable: the scope is unavailable for the case
            try:
                torch.cuda.synchronize()
            except Exception:
                pass
            raise GraphUnavailable("torch.cuda.graph capture failed: %s: %s"
                                   % (type(exc).__name__, _one_line(exc, 300)))
        self.graph_obj, self.graph_key = g, key
        return g


# --- the case -------------------------------------------------------------------------

# flop_ceilings (Worker.flop_ceilings): square sizes, calls per timed window, windows,
# warm-up calls. About 0.25 s on an H200 for both dtypes.
FLOP_CEIL_SIZES = (4096, 8192)
FLOP_CEIL_CALLS = 10
FLOP_CEIL_REPS = 5
FLOP_CEIL_WARMUP = 2


class WorkerError(Exception):
    """A request the worker refuses; its text becomes the response's error."""


class Unsupported(WorkerError):
    """A prepare of an op this implementation has no code for: the answer carries
    "unsupported": true next to the error (docs/protocol.md)."""


MAX_PRIME = 16


def _req_prime(req):
    """Optional "prime": untimed calls right before the timed part (docs/protocol.md)."""
    v = _req_int(req, "prime", 0, required=False)
    if v is None:
        return 0
    if v > MAX_PRIME:
        raise WorkerError("'prime' is too large (%d > %d)" % (v, MAX_PRIME))
    return v


def _req_int(req, key, minimum=None, required=True):
    v = req.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, int) or isinstance(v, bool):
        raise WorkerError("'%s' must be an integer" % key)
    if minimum is not None and v < minimum:
        raise WorkerError("'%s' must be >= %d (got %d)" % (key, minimum, v))
    return v


def _computes(op, roles, dtype, dev):
    """Whether torch computes op in dtype on dev: tried once on tiny tensors of that dtype
    (torch 1.13 on CPU has no fp16 gelu, softmax, layer_norm, rsqrt, addmm, log_softmax),
    not looked up in a version table; the arena is not touched."""
    dims = {"M": 2, "N": 3, "K": 4, "1": 1}
    t, v1 = {}, {}
    for name, rdtype, rdim, cdim, _is_out in roles:
        shape = (dims[rdim], dims[cdim])
        if rdtype == "i64":
            x = torch.zeros(shape, dtype=torch.int64, device=dev)
        else:
            x = torch.full(shape, 0.5, dtype=dtype, device=dev)
        t[name] = x
        if shape[0] == 1:
            v1[name] = x.view(shape[1])
        elif shape[1] == 1:
            v1[name] = x.view(shape[0])
    try:
        built = _BUILDERS[op](t, v1, dims["M"], dims["N"], dev)
        with _inference_mode():
            built[0]()
            if len(built) > 3:
                built[3]()
        return True
    except RuntimeError:
        return False


def _emulate(op, case, roles, m, n, dev):
    """FP32 from the same narrow inputs, rounded to the output's dtype (round to nearest
    even): the case is reported emulated and gets no speed verdict. The call widens the
    inputs into FP32 tensors, runs the FP32 torch call and rounds into the output."""
    t32, v32, pairs = {}, {}, []
    for name, _dtype, _r, _c, is_out in roles:
        src = case.views[name]
        if src.dtype == torch.int64:
            t32[name] = src
            if name in case.views1d:
                v32[name] = case.views1d[name]
            continue
        x = torch.empty(src.shape, dtype=torch.float32, device=dev)
        t32[name] = x
        if src.shape[0] == 1:
            v32[name] = x.view(src.shape[1])
        elif src.shape[1] == 1:
            v32[name] = x.view(src.shape[0])
        pairs.append((x, src, is_out))
    built = _BUILDERS[op](t32, v32, m, n, dev)
    call32, policy, impl = built[:3]
    publish32 = built[3] if len(built) > 3 else None
    ins = [(x, src) for x, src, is_out in pairs if not is_out]
    out32, out = [(x, src) for x, src, is_out in pairs if is_out][0]
    narrow = str(out.dtype).replace("torch.", "")

    def call():
        for x, src in ins:
            x.copy_(src)
        call32()
        if publish32 is None:
            out.copy_(out32)

    def publish():
        if publish32 is not None:
            publish32()
            out.copy_(out32)
    case.extra = (t32, v32)
    desc = ("emulated: %s has no %s %s on this backend; inputs widened to FP32, %s, output "
            "rounded to %s" % (torch.__version__, narrow, op, impl, narrow))
    return call, policy, desc, publish


class Case:
    """Everything of one prepared case. Attributes are set in order by prepare();
    close() undoes whatever exists."""

    def __init__(self):
        self.mm = None        # mmap of the shared arena
        self.registered = None  # pointer page-locked by _host_register (cuda), or None
        self.host = None      # uint8 tensor over mm (arena_bytes)
        self.dev = None       # uint8 device mirror (cuda) or None
        self.views = {}       # name -> 2-D view on the compute arena
        self.views1d = {}     # name -> 1-D view (vectors, M x 1 buffers)
        self.extra = None     # anything else the callable keeps alive
        self.roles = []       # buffer names in table order (user implementations)
        self.call = None      # the op, no arguments
        self.publish = None   # functional ops: copies the last result into the output
        self.sync = None      # device synchronize or no-op
        self.backend = None
        self.name = None
        self.bind = None      # bind(base) -> (views, views1d, built): the op on another arena
        self.emulated = False
        self.replay = Replay()  # graph replay and cold cache
        self.layout = []      # (name, rows, cols, row_stride, data_offset) per buffer
        self.arena_bytes = 0
        self.compile_cache = None  # --compile: "miss", "hit" or "recompiled"
        self.compile_graphs = None  # --compile: graphs dynamo compiled in prepare (or None)

    def close(self):
        self.replay = Replay()
        self.bind = None
        self.call = None
        self.views = {}
        self.views1d = {}
        self.extra = None
        self.dev = None
        _host_unregister(self.registered)
        self.registered = None
        self.host = None
        if self.mm is not None:
            try:
                self.mm.close()
            except BufferError:  # a tensor still exports the buffer: collect and retry
                import gc
                gc.collect()
                try:
                    self.mm.close()
                except BufferError as exc:
                    _log("arena mapping not closed yet (%s); it goes with the process" % exc)
            self.mm = None


def _host_register(host, cudart=None):
    """Page-locks the arena mapping `host` (uint8 CPU tensor) for the CUDA copies
    (docs/device-workflow.md, "Pinned uploads"): (registered pointer or None, note). The
    note goes into the prepare answer's implementation line ("host=pinned ...", or
    "host=pageable (why)"); a failed registration is said there, never hidden, and the
    copies still work from pageable memory. DUALTIME_HOST_REGISTER=0 skips it (A/B)."""
    if os.environ.get("DUALTIME_HOST_REGISTER", "") == "0":
        return None, "host=pageable (DUALTIME_HOST_REGISTER=0)"
    try:
        cudart = cudart if cudart is not None else torch.cuda.cudart()
        reg = getattr(cudart, "cudaHostRegister", None)
    except Exception as exc:  # torch without the cudart binding
        return None, "host=pageable (torch.cuda.cudart(): %s)" % _one_line(str(exc), 200)
    if reg is None:
        return None, "host=pageable (torch %s has no cudaHostRegister)" % torch.__version__
    ptr, nbytes = host.data_ptr(), host.numel()
    t0 = time.perf_counter()
    try:
        rc = reg(ptr, nbytes, 1)  # cudaHostRegisterPortable
        code = int(getattr(rc, "value", rc))
    except Exception as exc:
        return None, "host=pageable (cudaHostRegister raised: %s)" % _one_line(str(exc), 200)
    ms = (time.perf_counter() - t0) * 1e3
    if code != 0:
        return None, "host=pageable (cudaHostRegister failed: error %d %s)" % (
            code, _one_line(str(rc), 120))
    return ptr, "host=pinned (cudaHostRegister of %d bytes in %.1f ms)" % (nbytes, ms)


def _host_unregister(ptr, cudart=None):
    """Undoes _host_register before the mapping goes (a failure is logged: the process
    keeps working, the pages stay locked until it exits)."""
    if ptr is None:
        return
    try:
        cudart = cudart if cudart is not None else torch.cuda.cudart()
        rc = cudart.cudaHostUnregister(ptr)
        code = int(getattr(rc, "value", rc))
    except Exception as exc:
        _log("cudaHostUnregister raised: %s" % exc)
        return
    if code != 0:
        _log("cudaHostUnregister failed: error %d" % code)


# The arena digest "dt-mix64-1" (src/data/dt_arena.h dt_arena_digest, docs/protocol.md
# `download`): the sum mod 2^64 over a range's little-endian 64-bit words w, at word index
# g = byte offset / 8, of splitmix64's finaliser of w ^ g * 0xD1B54A32D192ED03, in int64
# tensor arithmetic (wrapping multiplies and sums; >> is arithmetic, so shifts are masked).
DIGEST_NAME = "dt-mix64-1"
MAX_COPY_RANGES = 16
_M64 = (1 << 64) - 1


def _s64(u):
    return u - (1 << 64) if u >= (1 << 63) else u


_DG_IDX, _DG_GOLD = _s64(0xD1B54A32D192ED03), _s64(0x9E3779B97F4A7C15)
_DG_C1, _DG_C2 = _s64(0xBF58476D1CE4E5B9), _s64(0x94D049BB133111EB)


def _lsr(x, k):
    return (x >> k) & ((1 << (64 - k)) - 1)


def arena_digest(buf, off, length, chunk_words=1 << 24):
    """dt-mix64-1 of buf[off:off + length] (a uint8 tensor on any device; off and length
    multiples of 8), as an unsigned int."""
    total, w0, nw = 0, off // 8, length // 8
    for c0 in range(0, nw, chunk_words):
        c1 = min(nw, c0 + chunk_words)
        x = buf[off + 8 * c0:off + 8 * c1].view(torch.int64)
        x = x ^ (torch.arange(w0 + c0, w0 + c1, dtype=torch.int64, device=buf.device) * _DG_IDX)
        x = x + _DG_GOLD
        x = (x ^ _lsr(x, 30)) * _DG_C1
        x = (x ^ _lsr(x, 27)) * _DG_C2
        x = x ^ _lsr(x, 31)
        total = (total + int(x.sum().item())) & _M64
    return total


def _req_ranges(req, key, nbytes, align8):
    """The [offset, length] pairs of req[key] inside an arena of nbytes, or None (absent)."""
    a = req.get(key)
    if a is None:
        return None
    if not isinstance(a, list) or len(a) > MAX_COPY_RANGES:
        raise WorkerError("'%s' must be a list of at most %d [offset, length] pairs"
                          % (key, MAX_COPY_RANGES))
    out = []
    for i, p in enumerate(a):
        if (not isinstance(p, list) or len(p) != 2 or
                not all(isinstance(v, int) and not isinstance(v, bool) for v in p)):
            raise WorkerError("'%s'[%d] must be an [offset, length] pair of integers" % (key, i))
        off, ln = p
        if off < 0 or ln < 0 or off + ln > nbytes or (align8 and (off % 8 or ln % 8)):
            raise WorkerError("'%s'[%d] = [%d, %d] is not a range of the %d-byte arena%s"
                              % (key, i, off, ln, nbytes, " in multiples of 8" if align8 else ""))
        out.append((off, ln))
    return out


def _map_arena(name, nbytes):
    """(mmap or None, uint8 host tensor) over /dev/shm<name>, nbytes long."""
    path = "/dev/shm" + name
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError as exc:
        raise WorkerError("cannot open shared memory %s: %s" % (path, exc.strerror))
    try:
        size = os.fstat(fd).st_size
        if size < nbytes:
            raise WorkerError("shared memory %s has %d bytes, arena_bytes is %d"
                              % (path, size, nbytes))
        mm = mmap.mmap(fd, nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)
    if hasattr(torch, "frombuffer"):
        return mm, torch.frombuffer(mm, dtype=torch.uint8)
    # torch < 1.10: map the same file again through torch's own MAP_SHARED mapping.
    mm.close()
    storage = torch.ByteStorage.from_file(path, True, nbytes)
    return None, torch.ByteTensor(storage)


def _typed(u8, dtype, esize):
    whole = u8.numel() // esize * esize
    return u8[:whole].view(dtype)


# --- the worker -----------------------------------------------------------------------

class Worker:
    def __init__(self):
        self.case = None
        self.timing = DeviceTiming()
        self.cuda_ready = False  # CUDA context created (first cuda prepare)
        self.table = None        # the op table from hello's "ops" (_parse_table)
        self.persistent = None   # probe_kind once probe_process made this a probe process

    @contextlib.contextmanager
    def _outside_cupti(self):
        """A probe process's JIT work (a --compile miss, a --module's setup and first call)
        runs with CUPTI detached: compiling under CUPTI is many times slower (every module
        load and autotuning launch instrumented). CUPTI is attached again after, so the
        orchestrator's warm-up pays the kernels' first launches under the probe, as
        persistent mode wants (docs/device-timing.md). No-op in other processes, and with
        DUALTIME_TORCH_JIT_UNDER_CUPTI=1 (the behaviour before, for an A/B)."""
        kind = self.persistent
        if kind is None or os.environ.get("DUALTIME_TORCH_JIT_UNDER_CUPTI") == "1":
            yield
            return
        t0 = time.perf_counter()
        self.timing.persistent_off()
        try:
            yield
        finally:
            t1 = time.perf_counter()
            self.timing.set_persistent(kind)
            _log("probe process: set-up ran with CUPTI detached (%.0f ms, attaching it again "
                 "%.0f ms)" % ((t1 - t0) * 1e3, (time.perf_counter() - t1) * 1e3))

    # hello ---------------------------------------------------------------------------
    def hello(self, req):
        if STARTUP_ERROR:
            raise WorkerError(STARTUP_ERROR)
        if TORCH_ERROR:
            raise WorkerError(TORCH_ERROR)
        proto = req.get("protocol", PROTOCOL)
        if proto != PROTOCOL:
            raise WorkerError("the orchestrator speaks protocol %r, this worker %d"
                              % (proto, PROTOCOL))
        if "ops" in req:
            self.table = _parse_table(req["ops"])
        cuda_ok = bool(torch.cuda.is_available())
        cuda = {"available": cuda_ok}
        if not cuda_ok:
            if torch.version.cuda is None:
                cuda["reason"] = "this PyTorch build (%s) has no CUDA support" % torch.__version__
            else:
                cuda["reason"] = ("torch.cuda.is_available() is false (PyTorch built for CUDA %s;"
                                  " no usable driver or device)" % torch.version.cuda)
        env = {
            "python": sys.version.split()[0],
            "python_full": _one_line(sys.version),
            "executable": sys.executable,
            "torch_version": torch.__version__,
            "threads": torch.get_num_threads(),
            "interop_threads": torch.get_num_interop_threads(),
            "cuda_version": torch.version.cuda,
            "cudnn": None,
            "precision": PRECISION_FLAGS,
            "mkl": bool(torch.backends.mkl.is_available()),
            "openmp": bool(torch.backends.openmp.is_available()),
        }
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[var] = os.environ.get(var)
        if INTEROP_NOTE:
            env["interop_note"] = INTEROP_NOTE
        try:
            if torch.backends.cudnn.is_available():
                env["cudnn"] = torch.backends.cudnn.version()
        except Exception:
            pass
        if cuda_ok:
            try:
                idx = torch.cuda.current_device()
                env["device"] = torch.cuda.get_device_name(idx)
                cap = torch.cuda.get_device_capability(idx)
                env["device_capability"] = "%d.%d" % cap
                env["device_count"] = torch.cuda.device_count()
            except Exception as exc:
                env["device"] = "unknown: %s" % _one_line(exc, 200)
        ops = {"received": len(self.table or {}),
               "without_torch_call": [op for op in (self.table or {}) if op not in _BUILDERS]}
        USER.probe(cuda_ok)
        worker, version_note, impl = USER.hello_fields(self.table)
        impl["unsupported"] = USER.unsupported_ops(self.table or {})
        cpu = {"available": True}
        for name, b in (("cpu", cpu), ("cuda", cuda)):
            why = USER.unavailable or USER.backend_reason.get(name)
            if why and b["available"]:
                b["available"], b["reason"] = False, why
        ans = {"protocol": PROTOCOL, "worker": worker, "framework": "pytorch",
               "framework_version": torch.__version__ + version_note, "ops": ops,
               "impl": impl, "backends": {"cpu": cpu, "cuda": cuda},
               "device_timing": (self.timing.load(cuda_ok), self.timing.hello())[1],
               "env": env, "copy": {"ranges": True, "digest": DIGEST_NAME}}
        if USER.unavailable:
            ans["unavailable"] = USER.unavailable
        return ans

    # prepare -------------------------------------------------------------------------
    def _validate(self, req):
        op = req.get("op")
        if self.table is None:
            raise WorkerError("no op table: the hello request carries it as 'ops' "
                              "(docs/protocol.md)")
        if not isinstance(op, str) or op not in self.table:
            raise WorkerError("unknown op %r (known: %s)" % (op, ", ".join(self.table)))
        if USER.kind == "eager" and op not in _BUILDERS:
            raise Unsupported("op %s: this worker has no torch call for it" % op)
        backend = req.get("backend")
        if backend not in ("cpu", "cuda"):
            raise WorkerError("unknown backend %r (cpu or cuda)" % (backend,))
        m = _req_int(req, "m", 1)
        n = _req_int(req, "n", 1)
        k = _req_int(req, "k", 1) if self.table[op]["gemm"] else 0
        dims = {"M": m, "N": n, "K": k, "1": 1}
        shm = req.get("shm")
        if (not isinstance(shm, str) or not shm.startswith(SHM_PREFIX) or "/" in shm[1:]
                or len(shm) > 250 or shm == SHM_PREFIX
                or not shm.isascii() or not shm.isprintable()):  # NUL, surrogates: os.open raises
            raise WorkerError("bad shm name %r (must be /dualtime-<...>, printable ASCII, "
                              "no further '/')" % (shm,))
        arena = _req_int(req, "arena_bytes", 1)
        bufs = req.get("buffers")
        if not isinstance(bufs, list):
            raise WorkerError("'buffers' must be a list")
        roles = self.table[op]["roles"]
        byname = {}
        for b in bufs:
            if not isinstance(b, dict) or not isinstance(b.get("name"), str):
                raise WorkerError("every buffer must be an object with a name")
            if b["name"] in byname:
                raise WorkerError("buffer '%s' given twice" % b["name"])
            byname[b["name"]] = b
        want = [r[0] for r in roles]
        if sorted(byname) != sorted(want):
            raise WorkerError("op %s needs buffers %s, got %s"
                              % (op, ", ".join(want), ", ".join(sorted(byname)) or "none"))
        spans = []
        case_dtype = None
        for name, dtype, rdim, cdim, is_out in roles:
            b = byname[name]
            got = b.get("dtype")
            if dtype == "f32":  # every float buffer in the one case dtype
                if case_dtype is None and got in FLOAT_DTYPES:
                    case_dtype = got
                dtype = case_dtype or "f32"
            if got != dtype:
                raise WorkerError("buffer '%s': dtype %r, expected %s" % (name, got, dtype))
            if b.get("is_output") not in (True, False, 0, 1) or bool(b["is_output"]) != is_out:
                raise WorkerError("buffer '%s': is_output must be %s" % (name, str(is_out).lower()))
            rows, cols = _req_int(b, "rows", 1), _req_int(b, "cols", 1)
            if rows != dims[rdim] or cols != dims[cdim]:
                raise WorkerError("buffer '%s' is %dx%d, op %s at m=%d n=%d k=%d needs %dx%d"
                                  % (name, rows, cols, op, m, n, k, dims[rdim], dims[cdim]))
            stride = _req_int(b, "row_stride", cols)
            esize = ESIZE[dtype]
            if stride * esize > arena:  # unused by a 1-row buffer, but as_strided takes it
                raise WorkerError("buffer '%s': row_stride %d is larger than the arena"
                                  % (name, stride))
            off = _req_int(b, "data_offset", 0)
            if off % esize:
                raise WorkerError("buffer '%s': data_offset %d is not a multiple of %d"
                                  % (name, off, esize))
            end = off + ((rows - 1) * stride + cols) * esize
            if end > arena:
                raise WorkerError("buffer '%s' [%d, %d) lies outside the arena (%d bytes)"
                                  % (name, off, end, arena))
            roff = _req_int(b, "region_offset", 0, required=False)
            rbytes = _req_int(b, "region_bytes", 0, required=False)
            if roff is not None and rbytes is not None:
                if roff + rbytes > arena or off < roff or end > roff + rbytes:
                    raise WorkerError("buffer '%s': window [%d, %d) not inside its region "
                                      "[%d, %d) inside the arena (%d bytes)"
                                      % (name, off, end, roff, roff + rbytes, arena))
            spans.append((name, off, end, is_out))
        for name, off, end, is_out in spans:
            if not is_out:
                continue
            for other, o2, e2, out2 in spans:
                if other != name and off < e2 and o2 < end:
                    raise WorkerError("output '%s' overlaps buffer '%s'" % (name, other))
        return op, backend, m, n, k, shm, arena, roles, byname

    def prepare(self, req):
        if self.case is not None:
            raise WorkerError("a case is already prepared (%s); release it first" % self.case.name)
        op, backend, m, n, k, shm, arena, roles, byname = self._validate(req)
        USER.refuse(op, backend, self.table)
        if backend == "cuda" and not torch.cuda.is_available():
            raise WorkerError("backend cuda is not available in this PyTorch (%s, CUDA %s)"
                              % (torch.__version__, torch.version.cuda))
        if backend == "cuda" and PRECISION_ERROR:
            raise WorkerError(PRECISION_ERROR)
        case = Case()
        case.name = str(req.get("case", op))
        case.backend = backend
        setup_ms = {"compile": 0.0}
        if backend == "cuda" and not self.cuda_ready:
            # CUDA context creation happens once per process; keep it out of "alloc".
            t0 = time.perf_counter()
            torch.empty(1, device="cuda")
            torch.cuda.synchronize()
            setup_ms["cuda_init"] = (time.perf_counter() - t0) * 1e3
            self.cuda_ready = True
        try:
            t0 = time.perf_counter()
            case.mm, case.host = _map_arena(shm, arena)
            host_note = None
            if backend == "cuda":
                case.registered, host_note = _host_register(case.host)
                case.dev = torch.empty(arena, dtype=torch.uint8, device="cuda")
                base = case.dev
                case.sync = torch.cuda.synchronize
            else:
                base = case.host
                case.sync = _no_sync
            def bind(base):
                """The op's views and call on arena `base` (the case's, or a copy of it)."""
                typed = {"f32": _typed(base, torch.float32, 4), "i64": _typed(base, torch.int64, 8),
                         "bf16": _typed(base, torch.bfloat16, 2),
                         "f16": _typed(base, torch.float16, 2)}
                views, views1d = {}, {}
                for name, dtype, rdim, cdim, is_out in roles:
                    b = byname[name]
                    dtype = b["dtype"]  # the case dtype for float roles (checked in _validate)
                    esize = ESIZE[dtype]
                    st = typed[dtype]
                    rows, cols, stride = b["rows"], b["cols"], b["row_stride"]
                    eoff = b["data_offset"] // esize
                    views[name] = st.as_strided((rows, cols), (stride, 1), eoff)
                    if rows == 1:
                        views1d[name] = st.as_strided((cols,), (1,), eoff)
                    elif cols == 1:
                        views1d[name] = st.as_strided((rows,), (stride,), eoff)
                return views, views1d, _BUILDERS[op](views, views1d, m, n, base.device)
            case.views, case.views1d, built = bind(base)
            case.bind = bind
            dev = base.device
            case.roles = [r[0] for r in roles]
            case.layout = [(r[0], byname[r[0]]["rows"], byname[r[0]]["cols"],
                            byname[r[0]]["row_stride"], byname[r[0]]["data_offset"])
                           for r in roles]
            case.arena_bytes = arena
            emulated = False
            if USER.kind != "eager":  # set-up calls (compile, first call) are not "alloc"
                case.sync()
                setup_ms["alloc"] = (time.perf_counter() - t0) * 1e3
                built = USER.build(case, op, roles, m, n, k, setup_ms, self._outside_cupti)
                t0 = time.perf_counter()
                case.bind = None  # a user's function on arena copies: not offered (cold cache)
            case.call, policy, impl = built[:3]
            case.publish = built[3] if len(built) > 3 else None
            narrow = case.views["out"].dtype
            if (USER.kind == "eager" and narrow != torch.float32
                    and not _computes(op, roles, narrow, dev)):
                built = _emulate(op, case, roles, m, n, dev)
                case.call, policy, impl = built[:3]
                case.publish = built[3]
                emulated = True
                case.emulated = True
            case.sync()
            setup_ms["alloc"] = setup_ms.get("alloc", 0.0) + (time.perf_counter() - t0) * 1e3
        except BaseException:
            case.close()
            raise
        self.case = case
        if host_note:
            impl = "%s; %s" % (impl, host_note)
        ans = {"output_policy": policy, "implementation": impl,
               "setup_ms": setup_ms, "sources": []}
        if emulated:
            ans["emulated"] = True
        if case.compile_cache:
            ans["compile_cache"] = case.compile_cache
            ans["compile_graphs"] = case.compile_graphs
        return ans

    # the rest --------------------------------------------------------------------------
    def _need_case(self, what):
        if self.case is None:
            raise WorkerError("%s before prepare: no case is prepared" % what)
        return self.case

    def upload(self, req):
        case = self._need_case("upload")
        only = _req_ranges(req, "only", case.host.numel(), False)
        if case.dev is None:
            return {"ms": 0.0}
        t0 = time.perf_counter()
        if only is None:
            case.dev.copy_(case.host)
        for off, ln in only or ():
            case.dev[off:off + ln].copy_(case.host[off:off + ln])
        torch.cuda.synchronize()
        return {"ms": (time.perf_counter() - t0) * 1e3}

    def download(self, req):
        """The mirror (or the ranges "only" of it) back into the arena; with "digest", the
        digests of those ranges of the mirror (CPU: of the arena) as 16 hex digits."""
        case = self._need_case("download")
        nbytes = case.host.numel()
        only = _req_ranges(req, "only", nbytes, False)
        digest = _req_ranges(req, "digest", nbytes, True)
        if case.publish is not None:
            with _inference_mode():
                case.publish()
            case.sync()
        def copy_back(ranges):  # the mirror (None: all of it) into the arena
            torch.cuda.synchronize()
            if ranges is None:
                case.host.copy_(case.dev)
            for off, ln in ranges or ():
                case.host[off:off + ln].copy_(case.dev[off:off + ln])
            torch.cuda.synchronize()

        def digests(src):
            return ["%016x" % arena_digest(src, off, ln) for off, ln in digest]

        ans = {"ms": 0.0}
        if case.dev is not None:
            t0 = time.perf_counter()
            copy_back(only)
            ans["ms"] = (time.perf_counter() - t0) * 1e3
        if digest is not None and case.dev is None:
            ans["digest"] = digests(case.host)
        elif digest is not None:
            try:
                ans["digest"] = digests(case.dev)
            except (RuntimeError, TypeError) as exc:  # an economy, never a failed case:
                if not getattr(self, "_digest_warned", False):  # the whole mirror back,
                    self._digest_warned = True                  # host digests
                    sys.stderr.write("dualtime torch worker: device digest failed (%s): such "
                                     "downloads copy the whole arena and digest it on the host\n"
                                     % _one_line(str(exc), 200))
                copy_back(None)
                ans["digest"] = digests(case.host)
        return ans

    def run(self, req):
        case = self._need_case("run")
        reps = _req_int(req, "reps", 1)
        if reps > MAX_REPS:
            raise WorkerError("'reps' is too large (%d)" % reps)
        prime = _req_prime(req)
        call, sync, clock = case.call, case.sync, time.monotonic_ns
        with _inference_mode():
            for _ in range(prime):
                call()
            sync()
            t0 = clock()
            for _ in range(reps):
                call()
            sync()
            t1 = clock()
        return {"host_ns": t1 - t0}

    def device(self, req):
        case = self._need_case("device")
        scope = req.get("scope")
        if scope not in ("control", "probe", "graph"):
            raise WorkerError("'scope' must be control, probe or graph")
        reps = _req_int(req, "reps", 1)
        capacity = _req_int(req, "capacity", 0, required=False) or 0
        kind = req.get("probe_kind", "concurrent")
        hold = req.get("hold", False)
        if not isinstance(hold, bool):
            raise WorkerError("'hold' must be true or false")
        prime = _req_prime(req)
        if prime:
            with _inference_mode():
                for _ in range(prime):
                    case.call()
                case.sync()
        if kind not in ("concurrent", "serialized"):
            raise WorkerError("'probe_kind' must be concurrent or serialized")
        cold, copies, flush_bytes = _req_cache(req)
        rp = case.replay
        calls, flush = rp.cold(case, copies, flush_bytes) if cold else (None, None)
        graph = None
        if scope == "graph":
            try:
                graph = rp.graph(case, reps, calls)
            except GraphUnavailable as exc:
                return {"unavailable": _one_line(exc)}
        decomp = req.get("decomp", False)
        if not isinstance(decomp, bool):
            raise WorkerError("'decomp' must be true or false")
        if decomp and (scope != "probe" or hold or reps != 1 or graph is not None or cold):
            raise WorkerError("'decomp' needs an unheld probe of one call (scope probe, "
                              "reps 1, no hold, warm)")
        res = self.timing.measure(case, "control" if graph is not None else scope, reps,
                                  capacity, kind, hold, calls, flush, graph, decomp)
        if graph is not None:
            res["graph"] = True
        if cold:  # what was done: the orchestrator checks it (src/orchestrate/dt_cache.h)
            res["cache"] = {"state": "cold", "copies": len(calls), "flush_bytes": flush_bytes}
        return {"result": res}

    def flop_ceilings(self, req):
        """{"cmd":"flop_ceilings","backend":"cuda"}: the tensor-core ceilings of this GPU
        from a known-good kernel (docs/protocol.md): torch.matmul (cuBLAS) of square
        normal-random bf16 / fp16 matrices at each of FLOP_CEIL_SIZES, 2 n^3 FLOP a
        call; per size FLOP_CEIL_CALLS calls between two CUDA events, the median of
        FLOP_CEIL_REPS such windows after FLOP_CEIL_WARMUP calls; the best size wins."""
        if req.get("backend") != "cuda":
            raise WorkerError("flop_ceilings: offered for the cuda backend only")
        if not torch.cuda.is_available():
            raise WorkerError("flop_ceilings: CUDA is not available to torch")
        out, sizes = {}, {}
        gen = torch.Generator(device="cuda")
        gen.manual_seed(0x5EED)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for key, dtype in (("bf16_tflops", torch.bfloat16), ("fp16_tflops", torch.float16)):
            for n in FLOP_CEIL_SIZES:
                a = torch.randn(n, n, device="cuda", dtype=dtype, generator=gen)
                b = torch.randn(n, n, device="cuda", dtype=dtype, generator=gen)
                c = torch.empty(n, n, device="cuda", dtype=dtype)
                for _ in range(FLOP_CEIL_WARMUP):
                    torch.matmul(a, b, out=c)
                per_call_ms = []
                for _ in range(FLOP_CEIL_REPS):
                    e0.record()
                    for _ in range(FLOP_CEIL_CALLS):
                        torch.matmul(a, b, out=c)
                    e1.record()
                    e1.synchronize()
                    per_call_ms.append(e0.elapsed_time(e1) / FLOP_CEIL_CALLS)
                ms = sorted(per_call_ms)[len(per_call_ms) // 2]
                tflops = 2.0 * n ** 3 / (ms * 1e9)
                if ms > 0 and tflops > out.get(key, 0.0):
                    out[key], sizes[key] = tflops, n
                del a, b, c
        torch.cuda.empty_cache()
        if not out:
            raise WorkerError("flop_ceilings: matmul time not measurable")
        out["method"] = _one_line(
            "bf16/fp16: torch.matmul (cuBLAS, torch %s, %s) of square normal-random matrices "
            "at n = %s, 2n^3 FLOP a call, %d calls between CUDA events, median of %d after "
            "%d warm-up calls, the best n (bf16 %s, fp16 %s)"
            % (torch.__version__, torch.cuda.get_device_name(),
               ", ".join(str(n) for n in FLOP_CEIL_SIZES), FLOP_CEIL_CALLS, FLOP_CEIL_REPS,
               FLOP_CEIL_WARMUP, sizes.get("bf16_tflops"), sizes.get("fp16_tflops")), 400)
        return {"flop_ceilings": out}

    def probe_process(self, req):
        """{"cmd":"probe_process"}: this process serves only probe samples from now on
        (docs/protocol.md); the timing helper keeps CUPTI attached between them."""
        kind = req.get("probe_kind", "concurrent")
        if kind not in ("concurrent", "serialized"):
            raise WorkerError("probe_process: 'probe_kind' must be concurrent or serialized")
        try:
            self.timing.set_persistent(kind)
        except WorkerError as exc:
            raise WorkerError("probe_process: %s" % exc)
        self.persistent = kind
        return {"persistent": True, "probe_kind": kind}

    def release(self, req):
        case = self._need_case("release")
        self.case = None
        if case.backend == "cuda":
            case.sync()
        case.close()
        if case.backend == "cuda":
            torch.cuda.empty_cache()
        return {}


def _no_sync():
    pass


def _send(obj):
    line = json.dumps(obj, separators=(",", ":"), allow_nan=False)
    _PROTO_OUT.write(line.encode("utf-8") + b"\n")
    _PROTO_OUT.flush()


def _answer(worker, line):
    """Handles one request line; returns (response, quit?)."""
    try:
        req = json.loads(line)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
        return {"ok": False, "error": _one_line("malformed JSON request: %s" % exc)}, False
    if not isinstance(req, dict):
        return {"ok": False, "error": "a request must be a JSON object"}, False
    cmd = req.get("cmd")
    if cmd == "quit":
        return {"ok": True}, True
    if cmd == "ceilings":  # device ceilings are measured by the native worker only
        return {"ok": False, "error": "ceilings: not offered by the PyTorch worker"}, False
    handlers = {"hello": worker.hello, "prepare": worker.prepare, "upload": worker.upload,
                "run": worker.run, "download": worker.download, "device": worker.device,
                "probe_process": worker.probe_process, "release": worker.release,
                "flop_ceilings": worker.flop_ceilings}
    handler = handlers.get(cmd) if isinstance(cmd, str) else None
    if handler is None:
        return {"ok": False, "error": _one_line("unknown cmd %r" % (cmd,))}, False
    if cmd != "hello" and (STARTUP_ERROR or TORCH_ERROR):
        return {"ok": False, "error": STARTUP_ERROR or TORCH_ERROR}, False
    try:
        body = handler(req)
    except Unsupported as exc:
        return {"ok": False, "error": _one_line(exc), "unsupported": True}, False
    except WorkerError as exc:
        return {"ok": False, "error": _one_line(exc)}, False
    except Exception as exc:
        _log("%s failed:" % cmd)
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()
        return {"ok": False, "error": _one_line("%s failed: %s: %s"
                                                % (cmd, type(exc).__name__, exc))}, False
    resp = {"ok": True}
    resp.update(body)
    return resp, False


def main():
    worker = Worker()
    stdin = sys.stdin.buffer
    while True:
        raw = stdin.readline()
        if not raw:
            break
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            _send({"ok": False, "error": "request is not UTF-8"})
            continue
        resp, done = _answer(worker, text)
        _send(resp)
        if done:
            break
    if worker.case is not None:
        worker.case.close()
        worker.case = None
    return 0


if __name__ == "__main__":
    sys.exit(main())
