"""fake_compile.py — a stand-in for torch.compile that counts compiles (tests only).

Loaded by the PyTorch worker when DUALTIME_TORCH_FAKE_COMPILE names this file
(workers/torch/dualtime_compile_cache.py, load_compiler). Like dynamo, `compile(fn, ...)`
is lazy: the returned wrapper "compiles" at its first call and again whenever it is
called with inputs whose signature (shape, strides, dtype, device) its guards have not
seen (a recompile); it then runs fn eagerly, so results stay correct on torch 1.13.
Every event is one JSON line appended to DUALTIME_FAKE_COMPILE_LOG:
{"event": "compile"|"recompile"|"reset"|"construct", "name", "mode", "dynamic",
"fullgraph"}. An unknown mode is refused at construction, as torch.compile does.
DUALTIME_FAKE_COMPILE_GUARD_VALUE=1 adds the first input's first element to the guards
(a plant, like a guard specialised on something of the case: a case with other input
values then recompiles on a cache hit, which the worker must report as "recompiled").
"""
import json
import os

MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_COUNT = [0]


def _log(event, fn, mode=None, dynamic=None, fullgraph=None):
    path = os.environ.get("DUALTIME_FAKE_COMPILE_LOG")
    if not path:
        return
    with open(path, "a") as f:
        f.write(json.dumps({"event": event, "name": getattr(fn, "__name__", None),
                            "mode": mode, "dynamic": dynamic, "fullgraph": fullgraph}) + "\n")


def compile(fn, mode=None, dynamic=None, fullgraph=False):  # noqa: A001 (torch's name)
    if mode not in MODES:
        raise RuntimeError("Unrecognized mode=%s, should be one of: %s"
                           % (mode, ", ".join(str(m) for m in MODES[1:])))
    _log("construct", fn, mode, dynamic, fullgraph)
    guards = []
    by_value = os.environ.get("DUALTIME_FAKE_COMPILE_GUARD_VALUE") == "1"

    def wrapper(*args):
        sig = tuple((tuple(a.shape), tuple(a.stride()), str(a.dtype), str(a.device))
                    for a in args)
        if by_value:
            sig += (float(args[0].reshape(-1)[0]),)
        if sig not in guards:
            _COUNT[0] += 1
            _log("recompile" if guards else "compile", fn, mode, dynamic, fullgraph)
            guards.append(sig)
        return fn(*args)
    return wrapper


def reset():
    _log("reset", None)


def compiles():
    return _COUNT[0]
