#!/usr/bin/env python3
"""test_torch_worker.py — end-to-end test of workers/torch/dualtime_torch_worker.py.

Creates its own /dev/shm arenas with the layout rules of src/data/dt_arena.c (256-byte
guards, 256-aligned slots, view windows at (1,1) of a (rows+2) x (cols+3|4) region,
sentinel 0xC433E000, output poison 0x7FC0DEAD), drives the worker over its protocol
(docs/protocol.md) and checks, for every op, contiguous and with input views: outputs
against a float64 reference with the op's tolerance (src/plan/dt_ops.c), guards and
padding intact, inputs unchanged; plus the error paths. CUDA is tested too when the
worker reports it available. The op table (buffer roles, dtypes, tolerances) comes from
`dualtime list --json` and reaches the worker in hello's "ops", as the orchestrator
sends it (docs/protocol.md, "The op table"); nothing of it is copied here. With device
timing the held windows (docs/device-timing.md):
held vs unheld control of 64 tiny calls (held much shorter per call), a functional op
held without deadlock, a torch.cuda.synchronize planted inside a hold
(DUALTIME_TORCH_FAULT=holdsync) failing in time with the watchdog's reason, and held
probe stream interval ~ held control for a large add (a probe_process worker). Each
prints its numbers ("held:" lines).

Run: python3 test_torch_worker.py [path/to/dualtime_torch_worker.py [path/to/dualtime]]
Exit: 0 pass, 1 fail, 77 skip (torch not importable by this interpreter).
"""
import json
import math
import mmap
import os
import random
import select
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = (sys.argv[1] if len(sys.argv) > 1 else
          os.path.join(HERE, "..", "..", "workers", "torch", "dualtime_torch_worker.py"))
DUALTIME = (sys.argv[2] if len(sys.argv) > 2 else
            os.path.join(HERE, "..", "..", "build", "dualtime"))
TIMEOUT_S = 120
GUARD, ALIGN = 256, 256
SENTINEL, POISON = 0xC433E000, 0x7FC0DEAD

try:
    import torch  # noqa: F401  (only to decide skip; the reference is pure Python)
except Exception as exc:
    print("SKIP: torch not importable by %s: %s" % (sys.executable, exc))
    sys.exit(77)


def load_table():
    """`dualtime list --json` -> (its "ops" array as sent in hello, {name: (roles, atol,
    rtol, gemm)}) with roles (name, dtype, rows dim, cols dim, is_output, viewable)."""
    try:
        text = subprocess.run([DUALTIME, "list", "--json"], stdout=subprocess.PIPE,
                              check=True, timeout=TIMEOUT_S).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        print("FAIL: cannot run %s list --json: %s" % (DUALTIME, exc))
        sys.exit(1)
    doc = json.loads(text)
    ops = {}
    for o in doc["ops"]:
        roles = [(b["name"], b["dtype"], b["rows"], b["cols"], b["is_output"], b["viewable"])
                 for b in o["buffers"]]
        ops[o["name"]] = (roles, o["atol"], o["rtol"], o["gemm"])
    return doc["ops"], ops


OPS_JSON, OPS = load_table()
HELLO = {"cmd": "hello", "protocol": 1, "ops": OPS_JSON}

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what, flush=True)
    return cond


# --- arena ------------------------------------------------------------------------------

def layout(op, m, n, k, views):
    dims = {"M": m, "N": n, "K": k, "1": 1}
    off, bufs = 0, []
    for name, dtype, rd, cd, is_out, viewable in OPS[op][0]:
        rows, cols = dims[rd], dims[cd]
        eb = 8 if dtype == "i64" else 4
        is_view = bool(views and viewable)
        prow = rows + 2 if is_view else rows
        pcol = (cols + 3 if cols % 2 else cols + 4) if is_view else cols
        region = off + GUARD
        rbytes = prow * pcol * eb
        data = region + ((pcol + 1) * eb if is_view else 0)
        bufs.append({"name": name, "dtype": dtype, "is_output": is_out, "rows": rows,
                     "cols": cols, "row_stride": pcol, "data_offset": data,
                     "region_offset": region, "region_bytes": rbytes})
        off = (region + rbytes + GUARD + ALIGN - 1) // ALIGN * ALIGN
    return bufs, off


def elem_off(b, i, j):
    return b["data_offset"] + (i * b["row_stride"] + j) * (8 if b["dtype"] == "i64" else 4)


def fill(bufs, total, n, rnd, grid=1024):
    """Pristine arena bytes and the logical inputs (lists of rows). F32 inputs are
    multiples of 1/grid in [-1, 1]; gemm uses a fine grid (2^-20) so that TF32 (10
    mantissa bits) would visibly round its products."""
    mem = bytearray(struct.pack("<I", SENTINEL) * (total // 4))
    vals = {}
    for b in bufs:
        rows = []
        for i in range(b["rows"]):
            row = []
            for j in range(b["cols"]):
                if b["is_output"]:
                    struct.pack_into("<I", mem, elem_off(b, i, j), POISON)
                elif b["dtype"] == "i64":
                    v = rnd.randrange(n)
                    struct.pack_into("<q", mem, elem_off(b, i, j), v)
                    row.append(v)
                else:
                    v = rnd.randint(-grid, grid) / float(grid)
                    struct.pack_into("<f", mem, elem_off(b, i, j), v)
                    row.append(v)
            rows.append(row)
        vals[b["name"]] = rows
    return mem, vals


# --- float64 reference: (ref, scale) per output element ----------------------------------

def reference(op, v, m, n, k):
    a = v["a"]
    if op == "gemm":
        b = v["b"]
        ref = [[sum(a[i][p] * b[p][j] for p in range(k)) for j in range(n)] for i in range(m)]
        sc = [[sum(abs(a[i][p] * b[p][j]) for p in range(k)) for j in range(n)] for i in range(m)]
        return ref, sc
    ref, sc = [], []
    for i in range(m):
        x = a[i]
        if op in ("add", "gelu_add", "residual_layernorm"):
            y = [x[j] + v["b"][i][j] for j in range(n)]
            s_ab = [abs(x[j]) + abs(v["b"][i][j]) for j in range(n)]
        if op == "add":
            ref.append(y), sc.append(s_ab)
        elif op == "gelu_add":
            ref.append([0.5 * t * (1.0 + math.erf(t / math.sqrt(2.0))) for t in y])
            sc.append(s_ab)
        elif op == "sum":
            ref.append([math.fsum(x)]), sc.append([math.fsum(abs(t) for t in x)])
        elif op == "softmax":
            mx = max(x)
            e = [math.exp(t - mx) for t in x]
            s = math.fsum(e)
            r = [t / s for t in e]
            ref.append(r), sc.append([abs(r[j]) + abs(x[j] - mx) * abs(r[j]) for j in range(n)])
        elif op == "rmsnorm":
            g = v["gamma"][0]
            rs = 1.0 / math.sqrt(math.fsum(t * t for t in x) / n + 1e-5)
            ref.append([x[j] * rs * g[j] for j in range(n)])
            sc.append([abs(x[j]) * rs * abs(g[j]) for j in range(n)])
        elif op in ("layernorm", "residual_layernorm"):
            z = x if op == "layernorm" else y
            g = v["gamma"][0] if op == "layernorm" else [1.0] * n
            be = v["beta"][0] if op == "layernorm" else [0.0] * n
            mean = math.fsum(z) / n
            var = math.fsum((t - mean) ** 2 for t in z) / n
            rs = 1.0 / math.sqrt(var + 1e-5)
            ref.append([(z[j] - mean) * rs * g[j] + be[j] for j in range(n)])
            sc.append([(abs(z[j]) + abs(mean)) * rs * abs(g[j]) + abs(be[j]) for j in range(n)])
        elif op == "cross_entropy":
            lab = v["labels"][i][0]
            mx = max(x)
            lse = math.log(math.fsum(math.exp(t - mx) for t in x))
            ref.append([mx + lse - x[lab]]), sc.append([abs(mx) + abs(lse) + abs(x[lab])])
    return ref, sc


# --- worker -------------------------------------------------------------------------------

class Worker:
    def __init__(self, extra_python_args=()):
        self.p = subprocess.Popen([sys.executable] + list(extra_python_args)
                                  + [WORKER, "--threads", "1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(self, obj_or_line):
        line = obj_or_line if isinstance(obj_or_line, str) else json.dumps(obj_or_line)
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()
        r, _, _ = select.select([self.p.stdout], [], [], TIMEOUT_S)
        if not r:
            raise RuntimeError("worker did not answer %s within %ds" % (line[:80], TIMEOUT_S))
        out = self.p.stdout.readline()
        if not out:
            raise RuntimeError("worker closed stdout after %s (rc %s)" % (line[:80], self.p.poll()))
        resp = json.loads(out)
        if not isinstance(resp, dict) or not isinstance(resp.get("ok"), bool):
            raise RuntimeError("bad response %r" % out)
        if not resp["ok"]:
            check(isinstance(resp.get("error"), str) and resp["error"]
                  and "\n" not in resp["error"], "error field one line: %r" % resp)
        return resp

    def finish(self):
        r = self.ask({"cmd": "quit"})
        check(r["ok"], "quit ok")
        try:
            rc = self.p.wait(TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = "timeout"
        check(rc == 0, "worker exits 0 after quit (rc %s)" % rc)


SERIAL = [0]
IMPLS = {}  # backend -> op -> "policy: implementation", printed at the end


class Shm:
    def __init__(self, nbytes):
        SERIAL[0] += 1
        self.name = "/dualtime-%d-%d-%s" % (os.getpid(), SERIAL[0], os.urandom(8).hex())
        self.path = "/dev/shm" + self.name
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, nbytes)
            self.mm = mmap.mmap(fd, nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)

    def close(self):
        self.mm.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def check_arena(tag, op, bufs, mem, pristine, ref, sc):
    atol, rtol = OPS[op][1], OPS[op][2]
    out = [b for b in bufs if b["is_output"]][0]
    # everything outside the output window: guards, padding and inputs untouched
    outside = bytearray(mem)
    pr = bytearray(pristine)
    for i in range(out["rows"]):
        o = elem_off(out, i, 0)
        outside[o:o + out["cols"] * 4] = b"\0" * (out["cols"] * 4)
        pr[o:o + out["cols"] * 4] = b"\0" * (out["cols"] * 4)
    if outside != pr:
        first = next(i for i in range(len(pr)) if outside[i] != pr[i])
        which = "guard/padding"
        for b in bufs:
            eb = 8 if b["dtype"] == "i64" else 4
            for i in range(b["rows"]):
                if elem_off(b, i, 0) <= first < elem_off(b, i, 0) + b["cols"] * eb:
                    which = "input '%s'" % b["name"]
        check(False, "%s: %s changed at arena byte %d" % (tag, which, first))
    worst, bad = 0.0, 0
    for i in range(out["rows"]):
        for j in range(out["cols"]):
            w = struct.unpack_from("<I", mem, elem_off(out, i, j))[0]
            f = struct.unpack_from("<f", mem, elem_off(out, i, j))[0]
            if w == POISON:
                bad += 1
                check(bad > 3, "%s: out (%d,%d) never written" % (tag, i, j))
                continue
            if not math.isfinite(f):
                bad += 1
                check(bad > 3, "%s: out (%d,%d) not finite" % (tag, i, j))
                continue
            err = abs(f - ref[i][j])
            bound = atol + rtol * sc[i][j]
            if bound > 0:
                worst = max(worst, err / bound)
            if err > bound:
                bad += 1
                check(bad > 3, "%s: out (%d,%d) = %r, ref %r, |err| %.3g > bound %.3g"
                      % (tag, i, j, f, ref[i][j], err, bound))
    check(bad == 0, "%s: %d bad output elements" % (tag, bad))
    return worst


def run_case(w, backend, op, m, n, k, views, seed):
    tag = "%s %s %dx%dx%d%s" % (backend, op, m, n, k, " views" if views else "")
    bufs, total = layout(op, m, n, k, views)
    pristine, vals = fill(bufs, total, n, random.Random(seed),
                          grid=(1 << 20) if op == "gemm" else 1024)
    ref, sc = reference(op, vals, m, n, k)
    shm = Shm(total)
    try:
        shm.mm[:] = pristine
        r = w.ask({"cmd": "prepare", "case": tag, "op": op, "backend": backend, "m": m, "n": n,
                   "k": k, "shm": shm.name, "arena_bytes": total, "buffers": bufs,
                   "capture_sources": False})
        if not check(r["ok"], "%s: prepare: %s" % (tag, r.get("error"))):
            return
        policy = r.get("output_policy")
        if op not in IMPLS.setdefault(backend, {}):
            IMPLS[backend][op] = "%s: %s" % (policy, r.get("implementation"))
        check(policy in ("out=", "functional"), "%s: policy %r" % (tag, r))
        check(isinstance(r.get("implementation"), str) and r["implementation"], tag + ": impl")
        check(r.get("setup_ms", {}).get("compile") == 0 and r["setup_ms"].get("alloc", -1) >= 0,
              tag + ": setup_ms")
        check(r.get("sources") == [], tag + ": sources")
        check(bytes(shm.mm) == bytes(pristine), tag + ": prepare touched the arena")
        worst = 0.0
        for phase in ("cold", "warm"):
            shm.mm[:] = pristine  # re-poison the output (and everything else)
            for cmd in ("upload", "run", "download"):
                req = {"cmd": cmd, "reps": 1} if cmd == "run" else {"cmd": cmd}
                r = w.ask(req)
                if not check(r["ok"], "%s: %s %s: %s" % (tag, phase, cmd, r.get("error"))):
                    return
                if cmd == "run":
                    check(isinstance(r.get("host_ns"), int) and r["host_ns"] > 0,
                          tag + ": host_ns %r" % r)
                else:
                    check(isinstance(r.get("ms"), (int, float)) and r["ms"] >= 0, tag + ": ms")
            worst = max(worst, check_arena(tag + " " + phase, op, bufs, bytes(shm.mm), pristine,
                                           ref, sc))
            if phase == "cold":
                r = w.ask({"cmd": "run", "reps": 10})
                check(r["ok"] and isinstance(r.get("host_ns"), int) and r["host_ns"] > 0,
                      tag + ": run reps=10: %r" % r)
        r = w.ask({"cmd": "release"})
        check(r["ok"], tag + ": release")
        print("ok   %-40s %-16s budget used %.3f" % (tag, policy, worst), flush=True)
    finally:
        shm.close()


def error_paths(w, backends):
    bad = lambda r, what: check(not r["ok"], what + " must fail: %r" % r)  # noqa: E731
    bad(w.ask("{not json"), "malformed JSON")
    bad(w.ask("[1, 2]"), "non-object request")
    bad(w.ask(""), "empty line")
    bad(w.ask({"cmd": "frobnicate"}), "unknown cmd")
    bad(w.ask({"nocmd": 1}), "missing cmd")
    # flop_ceilings (docs/protocol.md): cuda only; where torch has no CUDA it says so, and
    # where it has, the answer holds positive bf16/fp16 TFLOP/s and a method
    r = w.ask({"cmd": "flop_ceilings", "backend": "cpu"})
    check(not r["ok"] and "cuda backend only" in r["error"], "flop_ceilings cpu refused: %r" % r)
    r = w.ask({"cmd": "flop_ceilings", "backend": "cuda"})
    if "cuda" in backends:
        f = r.get("flop_ceilings", {})
        check(r["ok"] and f.get("bf16_tflops", 0) > 0 and f.get("fp16_tflops", 0) > 0
              and "torch.matmul" in f.get("method", ""), "flop_ceilings cuda: %r" % r)
    else:
        check(not r["ok"] and "CUDA is not available" in r["error"], "flop_ceilings no CUDA: %r" % r)
    for cmd in ("run", "upload", "download", "release", "device"):
        req = {"cmd": cmd, "reps": 1, "scope": "control", "capacity": 16}
        bad(w.ask(req), cmd + " before prepare")
    op, m, n = "add", 4, 8
    bufs, total = layout(op, m, n, 0, True)
    pristine, _ = fill(bufs, total, n, random.Random(1))
    shm = Shm(total)
    try:
        shm.mm[:] = pristine
        base = {"cmd": "prepare", "case": "err", "op": op, "backend": "cpu", "m": m, "n": n,
                "k": 0, "shm": shm.name, "arena_bytes": total, "buffers": bufs}

        def variant(**kw):
            d = json.loads(json.dumps(base))
            for key, val in kw.items():
                if key.startswith("buf_"):
                    d["buffers"][0][key[4:]] = val
                else:
                    d[key] = val
            return d
        bad(w.ask(variant(buf_data_offset=total - 16)), "buffer outside the arena")
        bad(w.ask(variant(arena_bytes=bufs[-1]["data_offset"] + 8)), "arena ends inside out")
        bad(w.ask(variant(buf_data_offset=bufs[0]["data_offset"] + 2)), "misaligned offset")
        bad(w.ask(variant(buf_row_stride=3)), "row_stride < cols")
        bad(w.ask(variant(op="nope")), "unknown op")
        bad(w.ask(variant(m=0)), "m = 0")
        bad(w.ask(variant(n=-3)), "negative n")
        bad(w.ask(variant(n=9)), "shape mismatch")
        bad(w.ask(variant(buf_dtype="i64")), "wrong dtype")
        bad(w.ask(variant(shm="/etc/passwd")), "foreign shm name")
        bad(w.ask(variant(shm="/dualtime-does-not-exist-%d" % os.getpid())), "missing shm")
        bad(w.ask(variant(backend="metal")), "unknown backend")
        d = variant()
        d["buffers"] = d["buffers"][:2]
        bad(w.ask(d), "missing output buffer")
        d = variant()
        d["buffers"][2]["data_offset"] = d["buffers"][1]["data_offset"]
        d["buffers"][2]["region_offset"] = d["buffers"][1]["region_offset"]
        bad(w.ask(d), "output overlapping an input")
        if "cuda" not in backends:
            bad(w.ask(variant(backend="cuda")), "cuda prepare without CUDA")
        # a good prepare after all that, then wrong-order and bad-argument requests
        r = w.ask(variant())
        check(r["ok"], "prepare after errors: %r" % r)
        bad(w.ask(variant()), "second prepare without release")
        bad(w.ask({"cmd": "run", "reps": 0}), "run reps=0")
        bad(w.ask({"cmd": "run", "reps": "3"}), "run reps as a string")
        bad(w.ask({"cmd": "run"}), "run without reps")
        r = w.ask({"cmd": "device", "scope": "control", "reps": 1, "capacity": 16})
        # a cpu case: refused whether or not this machine has device timing
        check(not r["ok"] and ("device timing not available" in r.get("error", "")
                               or "needs the cuda backend" in r.get("error", "")),
              "device refused without device timing: %r" % r)
        r = w.ask({"cmd": "device", "scope": "control", "reps": 1, "hold": "yes"})
        check(not r["ok"] and "'hold' must be true or false" in r.get("error", ""),
              "device with a non-boolean hold refused: %r" % r)
        r = w.ask({"cmd": "device", "scope": "control", "reps": 1, "hold": True})
        # a cpu case: refused whether or not this machine has device timing
        check(not r["ok"] and ("device timing not available" in r.get("error", "")
                               or "needs the cuda backend" in r.get("error", "")),
              "held device refused without device timing: %r" % r)
        r = w.ask({"cmd": "device", "scope": "probe", "reps": 1, "decomp": 1})
        check(not r["ok"] and "'decomp' must be true or false" in r.get("error", ""),
              "device with a non-boolean decomp refused: %r" % r)
        for bad_req in ({"scope": "probe", "reps": 2}, {"scope": "control", "reps": 1},
                        {"scope": "probe", "reps": 1, "hold": True}):
            r = w.ask(dict(bad_req, cmd="device", decomp=True))
            check(not r["ok"] and "'decomp' needs an unheld probe of one call"
                  in r.get("error", ""), "decomp %r refused: %r" % (bad_req, r))
        r = w.ask({"cmd": "run", "reps": 3})
        check(r["ok"] and r["host_ns"] > 0, "run still works after errors")
        check(w.ask({"cmd": "release"})["ok"], "release")
        bad(w.ask({"cmd": "release"}), "second release")
    finally:
        shm.close()


def hello_paths():
    """The op table's own paths: no table -> prepare refused; a malformed table or another
    protocol -> hello refused; an op the worker has no torch call for -> named in hello."""
    w = Worker()
    r = w.ask({"cmd": "hello"})
    check(r["ok"] and r.get("ops", {}).get("received") == 0, "hello without ops: %r" % r)
    r = w.ask({"cmd": "prepare", "op": "add", "backend": "cpu", "m": 1, "n": 1})
    check(not r["ok"] and "no op table" in r.get("error", ""), "prepare without table: %r" % r)
    bad = lambda req, what: check(not w.ask(req)["ok"], what + " must fail")  # noqa: E731
    bad({"cmd": "hello", "ops": []}, "hello with an empty table")
    bad({"cmd": "hello", "ops": "add"}, "hello with a string table")
    bad({"cmd": "hello", "protocol": 2, "ops": OPS_JSON}, "hello in protocol 2")
    broken = json.loads(json.dumps(OPS_JSON))
    broken[0]["buffers"][0]["dtype"] = "f16"
    bad({"cmd": "hello", "ops": broken}, "hello with dtype f16")
    broken = json.loads(json.dumps(OPS_JSON))
    broken[0]["buffers"].reverse()
    bad({"cmd": "hello", "ops": broken}, "hello with the output first")
    extra = json.loads(json.dumps(OPS_JSON)) + [dict(OPS_JSON[0], name="frob")]
    r = w.ask({"cmd": "hello", "ops": extra})
    check(r["ok"] and r["ops"]["without_torch_call"] == ["frob"], "op without a call: %r" % r)
    w.finish()
    print("ok   op table paths", flush=True)


def _arena_bytes(bufs, total, op):
    """A quick arena for timing only (no oracle): sentinels, inputs a repeating pattern
    of nonzero multiples of 1/1024, outputs poisoned."""
    mem = bytearray(struct.pack("<I", SENTINEL) * (total // 4))
    pat = struct.pack("<1024f", *[((i * 37) % 2047 - 1023) / 1024.0 or 0.5 for i in range(1024)])
    for b in bufs:
        for i in range(b["rows"]):
            o, nb = elem_off(b, i, 0), b["cols"] * 4
            if b["is_output"]:
                mem[o:o + nb] = struct.pack("<I", POISON) * b["cols"]
            elif b["dtype"] == "f32":
                mem[o:o + nb] = (pat * (nb // len(pat) + 1))[:nb]
            else:
                mem[o:o + nb * 2] = struct.pack("<q", 0) * b["cols"]
    return mem


def _device_case(w, op, m, n, shm, bufs, total):
    r = w.ask({"cmd": "prepare", "case": "held %s" % op, "op": op, "backend": "cuda", "m": m,
               "n": n, "k": 0, "shm": shm.name, "arena_bytes": total, "buffers": bufs,
               "capture_sources": False})
    ok = check(r["ok"], "held %s: prepare: %s" % (op, r.get("error")))
    for cmd in ("upload", "run"):
        r = w.ask({"cmd": cmd, "reps": 2} if cmd == "run" else {"cmd": cmd})
        ok = check(r["ok"], "held %s: %s: %s" % (op, cmd, r.get("error"))) and ok
    return ok


def _median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])


def _per_call_us(w, scope, reps, hold, samples, what):
    """Median stream interval per call (us) of `samples` regions; None on a failure."""
    got = []
    for _ in range(samples):
        r = w.ask({"cmd": "device", "scope": scope, "reps": reps, "capacity": 16 * reps + 64,
                   "hold": hold, "prime": 1})
        if not check(r["ok"], "%s: %s" % (what, r.get("error"))):
            return None
        res = r["result"]
        check(res.get("held") is hold, "%s: held %r, asked %r" % (what, res.get("held"), hold))
        if hold:
            check(res.get("hold_method") in ("wait_value", "spin_kernel")
                  and res.get("hold_queue_ns", 0) > 0, "%s: hold fields %r" % (what, res))
        got.append(res["stream_ns"] / reps / 1e3)
    return _median(got)


def held_windows():
    """GPU only: held windows through the timing helper, in the PyTorch worker."""
    m, n = 17, 257
    bufs, total = layout("add", m, n, 0, False)
    shm = Shm(total)
    w = Worker()
    try:
        w.ask(HELLO)
        shm.mm[:] = _arena_bytes(bufs, total, "add")
        if not _device_case(w, "add", m, n, shm, bufs, total):
            return
        unheld = _per_call_us(w, "control", 64, False, 15, "unheld control add 17x257")
        held = _per_call_us(w, "control", 64, True, 15, "held control add 17x257")
        single_u = _per_call_us(w, "control", 1, False, 15, "unheld single add 17x257")
        single_h = _per_call_us(w, "control", 1, True, 15, "held single add 17x257")
        print("held: torch add 17x257 control us/call: batch unheld %s held %s; single "
              "unheld %s held %s" % (unheld, held, single_u, single_h), flush=True)
        if unheld and held:
            check(held < 0.8 * unheld, "held batch %.3f us/call not much shorter than "
                  "unheld %.3f" % (held, unheld))
        check(w.ask({"cmd": "release"})["ok"], "held: release add")
        # a functional op (allocates its result inside the window): held, no deadlock
        bufs2, total2 = layout("layernorm", m, n, 0, False)
        shm2 = Shm(total2)
        try:
            shm2.mm[:] = _arena_bytes(bufs2, total2, "layernorm")
            if _device_case(w, "layernorm", m, n, shm2, bufs2, total2):
                ln = _per_call_us(w, "control", 64, True, 5, "held control layernorm 17x257")
                print("held: torch layernorm 17x257 (functional) held batch %s us/call" % ln,
                      flush=True)
                check(w.ask({"cmd": "release"})["ok"], "held: release layernorm")
        finally:
            shm2.close()
    finally:
        w.finish()
        shm.close()
    # a synchronization planted inside the hold fails the sample in time, with the reason
    env_w = Worker.__new__(Worker)
    env = dict(os.environ, DUALTIME_TORCH_FAULT="holdsync")
    env_w.p = subprocess.Popen([sys.executable, WORKER, "--threads", "1"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, env=env)
    shm = Shm(total)
    try:
        env_w.ask(HELLO)
        shm.mm[:] = _arena_bytes(bufs, total, "add")
        if _device_case(env_w, "add", m, n, shm, bufs, total):
            t0 = time.monotonic()
            r = env_w.ask({"cmd": "device", "scope": "control", "reps": 8, "capacity": 192,
                           "hold": True})
            dt = time.monotonic() - t0
            print("held: planted torch.cuda.synchronize inside a hold: ok=%s after %.3f s: %s"
                  % (r["ok"], dt, r.get("error", "")[:160]), flush=True)
            check(not r["ok"] and "hold timed out after" in r.get("error", "")
                  and "synchronized on the host inside the hold" in r["error"],
                  "planted sync must fail with the timeout reason: %r" % r)
            check(dt < 5.0, "planted sync failed after %.2f s (watchdog 1 s)" % dt)
            r = env_w.ask({"cmd": "device", "scope": "control", "reps": 8, "capacity": 192})
            check(r["ok"] and r["result"].get("held") is False,
                  "unheld sample after a timed-out hold: %r" % r.get("error"))
            check(env_w.ask({"cmd": "release"})["ok"], "held: release after planted sync")
    finally:
        env_w.finish()
        shm.close()
    held_probe_large()
    decomp_probe()


def decomp_probe():
    """GPU only: the E2E decomposition's sample (an unheld single-call probe with
    "decomp") on a probe_process worker: the host bracket and the launch API timestamps,
    in order on one clock with the kernel records."""
    m, n = 17, 257
    bufs, total = layout("add", m, n, 0, False)
    shm = Shm(total)
    w = Worker()
    try:
        w.ask(HELLO)
        check(w.ask({"cmd": "probe_process"})["ok"], "decomp: probe_process")
        shm.mm[:] = _arena_bytes(bufs, total, "add")
        if not _device_case(w, "add", m, n, shm, bufs, total):
            return
        r = w.ask({"cmd": "device", "scope": "probe", "reps": 1, "capacity": 64, "prime": 1,
                   "decomp": True})
        check(r["ok"], "decomp sample: %r" % r.get("error"))
        if r["ok"]:
            res = r["result"]
            d = res.get("decomp", {})
            ls, ks = d.get("launches", []), res.get("kernels", [])
            check(len(ls) >= 1 and len(ks) >= 1, "decomp: launches %r kernels %r" % (ls, ks))
            if ls and ks:
                u = res["clock_uncertainty_ns"]
                t0, t1 = d["call_start_ns"], d["sync_return_ns"]
                en, ex = ls[0]["enter_ns"], max(l["exit_ns"] for l in ls)
                k0, k1 = min(k["start_ns"] for k in ks), max(k["end_ns"] for k in ks)
                print("decomp: torch add 17x257 ns: dispatch %d launch %d queue %d kernel %d "
                      "completion %d (total %d, u %.0f, %d launch(es), api %s)"
                      % (en - t0, ex - en, k0 - ex, k1 - k0, t1 - k1, t1 - t0, u, len(ls),
                         ls[0]["api"]), flush=True)
                check(t0 - u <= en <= ex and en - u <= k0 < k1 <= t1 + u,
                      "decomp timestamps out of order: %r" % d)
        check(w.ask({"cmd": "release"})["ok"], "decomp: release")
    finally:
        w.finish()
        shm.close()


def held_probe_large():
    """Held probe stream interval ~ held control for a large kernel (add 4096x4096,
    8 calls per region): the probe window holds only the work."""
    m, n = 4096, 4096
    bufs, total = layout("add", m, n, 0, False)
    shm = Shm(total)
    wc, wp = Worker(), Worker()
    try:
        shm.mm[:] = _arena_bytes(bufs, total, "add")
        wc.ask(HELLO)
        wp.ask(HELLO)
        r = wp.ask({"cmd": "probe_process", "probe_kind": "concurrent"})
        check(r["ok"], "probe_process: %r" % r)
        if not (_device_case(wc, "add", m, n, shm, bufs, total)
                and _device_case(wp, "add", m, n, shm, bufs, total)):
            return
        ctl = _per_call_us(wc, "control", 8, True, 9, "held control add 4096x4096")
        prb = _per_call_us(wp, "probe", 8, True, 9, "held probe add 4096x4096")
        ctl1 = _per_call_us(wc, "control", 1, True, 9, "held control single add 4096x4096")
        prb1 = _per_call_us(wp, "probe", 1, True, 9, "held probe single add 4096x4096")
        print("held: torch add 4096x4096 us/call: control %s probe %s (batch of 8); single "
              "control %s probe %s" % (ctl, prb, ctl1, prb1), flush=True)
        if ctl and prb:
            check(0.9 <= prb / ctl <= 1.1, "held probe/control batch %.3f outside [0.9, 1.1]"
                  % (prb / ctl))
        if ctl1 and prb1:
            check(0.9 <= prb1 / ctl1 <= 1.15, "held probe/control single %.3f outside "
                  "[0.9, 1.15]" % (prb1 / ctl1))
        wc.ask({"cmd": "release"})
        wp.ask({"cmd": "release"})
    finally:
        wc.finish()
        wp.finish()
        shm.close()


def missing_torch():
    """Under -S (no site-packages) torch is usually not importable: hello must say why."""
    probe = subprocess.run([sys.executable, "-S", "-c", "import torch"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if probe.returncode == 0:
        print("note: torch importable even with -S; missing-torch path not tested")
        return
    w = Worker(["-S"])
    r = w.ask(HELLO)
    check(not r["ok"] and "PyTorch is not importable by" in r.get("error", "")
          and "python3-torch" in r["error"], "hello without torch: %r" % r)
    r = w.ask({"cmd": "prepare"})
    check(not r["ok"], "prepare without torch fails")
    w.finish()
    print("ok   hello without torch: %s" % r.get("error", "")[:70], flush=True)


def narrow_cases(w):
    """Issue 16: bf16/f16 buffers on the CPU. prepare does not touch the arena; a dtype
    torch cannot compute here is answered "emulated" (exactly when torch itself raises for
    it); the output, read in the narrow type, matches the FP64 reference to the type's
    precision."""
    tnames = {"bf16": torch.bfloat16, "f16": torch.float16}
    for dt, tdt in tnames.items():
        for op in ("add", "softmax", "sum"):
            m, n = 3, 40
            bufs, total = layout(op, m, n, 0, False)
            off = 0
            for b in bufs:  # the same layout rule with 2-byte elements
                b["dtype"] = dt
                b["region_offset"] = off + GUARD
                b["data_offset"] = b["region_offset"]
                b["region_bytes"] = b["rows"] * b["cols"] * 2
                off = (b["region_offset"] + b["region_bytes"] + GUARD + ALIGN - 1) // ALIGN * ALIGN
            total = off
            rnd = random.Random(7)
            pristine = bytearray(total)
            vals = {}
            for b in bufs:
                cnt = b["rows"] * b["cols"]
                x = [rnd.randint(-128, 128) / 128.0 for _ in range(cnt)]
                if b["is_output"]:
                    x = [float("nan")] * cnt
                vals[b["name"]] = x
                raw = torch.tensor(x, dtype=torch.float32).to(tdt).view(torch.int16).numpy().tobytes()
                pristine[b["data_offset"]:b["data_offset"] + len(raw)] = raw
            shm = Shm(total)
            tag = "narrow %s %s" % (dt, op)
            try:
                shm.mm[:] = pristine
                r = w.ask({"cmd": "prepare", "case": tag, "op": op, "backend": "cpu", "m": m,
                           "n": n, "k": 0, "shm": shm.name, "arena_bytes": total,
                           "buffers": bufs, "capture_sources": False})
                if not check(r["ok"], "%s: prepare: %s" % (tag, r.get("error"))):
                    continue
                check(bytes(shm.mm) == bytes(pristine), tag + ": prepare touched the arena")
                try:
                    probe = torch.ones(2, 3, dtype=tdt)
                    {"add": lambda: probe + probe, "softmax": lambda: torch.softmax(probe, 1),
                     "sum": lambda: probe.sum(1)}[op]()
                    can = True
                except RuntimeError:
                    can = False
                check(bool(r.get("emulated")) == (not can),
                      "%s: emulated %r, torch computes it: %s" % (tag, r.get("emulated"), can))
                for cmd in ("upload", "run", "download"):
                    q = {"cmd": cmd, "reps": 1} if cmd == "run" else {"cmd": cmd}
                    check(w.ask(q)["ok"], "%s: %s" % (tag, cmd))
                ob = bufs[-1]
                got = torch.frombuffer(bytearray(shm.mm[ob["data_offset"]:ob["data_offset"] +
                                                         ob["region_bytes"]]), dtype=torch.int16)
                got = got.view(tdt).double()
                a = torch.tensor(vals["a"], dtype=torch.float64).view(m, n)
                want = {"add": lambda: a + torch.tensor(vals["b"], dtype=torch.float64).view(m, n),
                        "softmax": lambda: torch.softmax(a, 1), "sum": lambda: a.sum(1)}[op]()
                err = (got.view(-1) - want.reshape(-1)).abs().max().item()
                tol = (2.0 ** -7 if dt == "bf16" else 2.0 ** -10) * max(1.0, want.abs().max().item())
                check(err <= tol, "%s: max error %g > %g" % (tag, err, tol))
                check(w.ask({"cmd": "release"})["ok"], tag + ": release")
            finally:
                shm.close()
    print("ok   narrow dtypes (bf16, f16) on the CPU", flush=True)


def main():
    w = Worker()
    hello_paths()
    hello = w.ask(HELLO)
    if not check(hello["ok"], "hello: %r" % hello):
        return 1
    check(hello.get("ops") == {"received": len(OPS), "without_torch_call": []},
          "hello: every op of the table has a torch call: %r" % hello.get("ops"))
    check(hello.get("protocol") == 1 and hello.get("worker") == "torch"
          and hello.get("framework") == "pytorch", "hello identity")
    check(hello["backends"]["cpu"]["available"] is True, "cpu available")
    cuda = hello["backends"]["cuda"]
    check(cuda["available"] or cuda.get("reason"), "cuda reason when unavailable")
    dtm = hello["device_timing"]
    if cuda["available"]:
        check(dtm.get("available") or dtm.get("reason"), "device_timing reason: %r" % dtm)
    else:
        check(dtm.get("available") is False and "no usable CUDA device" in dtm.get("reason", ""),
              "device_timing unavailable on cpu: %r" % dtm)
    env = hello["env"]
    check(env.get("threads") == 1, "env.threads == 1: %r" % env.get("threads"))
    print("hello: torch %s, cuda %s, %s" % (hello["framework_version"], cuda,
                                            json.dumps(env.get("precision"))), flush=True)
    backends = ["cpu"] + (["cuda"] if cuda["available"] else [])
    error_paths(w, backends)
    print("ok   error paths", flush=True)
    narrow_cases(w)
    seed = 100
    for backend in backends:
        for op in OPS:
            shapes = ([(17, 33, 61), (1, 127, 5), (16, 16, 1), (64, 64, 64)] if OPS[op][3]
                      else [(1, 127, 0), (17, 257, 0), (4, 64, 0)])
            for (m, n, k) in shapes:
                for views in (False, True):
                    seed += 1
                    run_case(w, backend, op, m, n, k, views, seed)
    for backend in IMPLS:
        for op, impl in IMPLS[backend].items():
            print("impl %s %-18s %s" % (backend, op, impl))
    w.finish()
    if cuda["available"] and dtm.get("available"):
        held_windows()
    else:
        print("note: no CUDA device timing here: held-window checks not run")
    # end of input also ends the worker cleanly
    w2 = Worker()
    w2.p.stdin.close()
    try:
        rc = w2.p.wait(TIMEOUT_S)
    except subprocess.TimeoutExpired:
        w2.p.kill()
        rc = "timeout"
    check(rc == 0 and w2.p.stdout.read() == b"", "EOF: exit 0, nothing on stdout (rc %s)" % rc)
    missing_torch()
    leftover = [f for f in os.listdir("/dev/shm") if f.startswith("dualtime-%d-" % os.getpid())]
    check(not leftover, "shm segments left: %r" % leftover)
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:  # a hung or dead worker: fail, never hang
        import traceback
        traceback.print_exc()
        print("FAIL: %s" % exc)
        sys.exit(1)
