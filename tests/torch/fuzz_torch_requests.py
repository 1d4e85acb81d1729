#!/usr/bin/env python3
"""fuzz_torch_requests.py — a deterministic fuzz loop over the PyTorch worker's requests.

Starts workers/torch/dualtime_torch_worker.py (--threads 1), sends the valid hello (op
table from `dualtime list --json`, as the orchestrator does), then a seeded stream of
requests mutated from valid ones (every command; fields deleted, retyped, out of range;
wrong arenas, sizes, offsets, overlaps; unknown ops, dtypes, commands; raw lines that are
not JSON, truncated, deeply nested, very long, not UTF-8, empty, with duplicate keys or
NaN/Infinity), interleaved with valid prepare/upload/run/download/release sequences on
real /dev/shm arenas (laid out by tests/torch/test_torch_worker.py's helpers) and with
requests in the wrong order. After every request it checks: exactly one answer line
within the timeout; a JSON object with a boolean "ok"; a refusal has a one-line string
"error"; no traceback on the worker's stderr; the worker is alive (except after quit);
the worker's state is still right (a valid request after a refusal works or is refused
for the right reason); the arena is unchanged by a refused request, its guard bands by
any request. See docs/fuzzing.md.

Run: python3 fuzz_torch_requests.py WORKER.py DUALTIME [--seed S] [--count N]
                                    [--time-limit SEC] [--verbose]
Exit: 0 pass, 1 a property failed (the seed and the request are printed), 77 skip
(torch not importable by this interpreter).
"""
import argparse
import json
import os
import random
import select
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

ap = argparse.ArgumentParser(description="fuzz the PyTorch worker's request parser")
ap.add_argument("worker", nargs="?",
                default=os.path.join(HERE, "..", "..", "workers", "torch",
                                     "dualtime_torch_worker.py"))
ap.add_argument("dualtime", nargs="?", default=os.path.join(HERE, "..", "..", "build", "dualtime"))
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--count", type=int, default=600)
ap.add_argument("--time-limit", type=float, default=60.0,
                help="stop sending new fuzz requests after this many seconds")
ap.add_argument("--timeout", type=float, default=20.0, help="seconds per answer")
ap.add_argument("--verbose", action="store_true")
ARGS = ap.parse_args()

# test_torch_worker reads its worker and dualtime paths from argv when imported (and skips
# with 77 when torch is missing); hand it ours, then take its arena helpers.
_saved_argv = sys.argv
sys.argv = [_saved_argv[0], ARGS.worker, ARGS.dualtime]
sys.path.insert(0, HERE)
import test_torch_worker as twt  # noqa: E402
sys.argv = _saved_argv

OPS_JSON, OPS, HELLO = twt.OPS_JSON, twt.OPS, twt.HELLO
GUARD_WORD = struct.pack("<I", twt.SENTINEL)

# Requests that once broke the worker (each fixed in workers/torch/dualtime_torch_worker.py);
# replayed first, on every run. Raw lines (str), objects, or {"PREPARE": {fields}}: the
# valid prepare of the fuzz arena with those fields replaced.
REGRESSIONS = [
    # json.loads raised RecursionError (not a ValueError): the worker died with a traceback
    '{"cmd":"run","reps":' + "[" * 1000 + "]" * 1000 + "}",
    '{"a":' * 100000 + "1" + "}" * 100000,
    # an shm name with NUL or a lone surrogate passed validation; os.open raised
    # ValueError / UnicodeEncodeError (a traceback instead of a refusal)
    {"PREPARE": {"shm": "/dualtime-\u0000x"}},
    {"PREPARE": {"shm": "/dualtime-\ud800"}},
    # a 1-row buffer's row_stride is not in its extent: 2^63 passed validation and
    # as_strided raised TypeError (a traceback instead of a refusal); the fuzz arena of an
    # odd seed is 1 x 8, so these are its real buffers
    {"PREPARE": {"m": 1, "buffers": "ROW1", "row_stride": 2 ** 63}},
    {"PREPARE": {"m": 1, "buffers": "ROW1", "row_stride": 2 ** 64}},
]


class Failure(Exception):
    pass


class Client:
    """The worker process; answers read from the raw pipe so that a second line is seen."""

    def __init__(self):
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen([sys.executable, ARGS.worker, "--threads", "1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err)
        self.buf = b""
        self.err_seen = 0

    def ask_raw(self, line):
        """Sends one line (bytes, no newline); returns the parsed answer or raises Failure."""
        if self.buf:
            self.buf = b""
            raise Failure("extra output before the request: %r" % self.buf[:200])
        try:
            self.p.stdin.write(line + b"\n")
            self.p.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise Failure("cannot write to the worker (rc %s): %s" % (self.p.poll(), exc))
        deadline = time.monotonic() + ARGS.timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            r, _, _ = select.select([fd], [], [], max(0.0, left))
            if not r:
                raise Failure("no answer within %.0f s" % ARGS.timeout)
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise Failure("worker closed stdout (rc %s)" % self.p.wait(5))
            self.buf += chunk
        out, self.buf = self.buf.split(b"\n", 1)
        r, _, _ = select.select([fd], [], [], 0.02)  # a second line written right after
        if r:
            more = os.read(fd, 1 << 20)
            self.buf += more
        if self.buf:
            raise Failure("more than one answer line: %r then %r" % (out[:200], self.buf[:200]))
        try:
            resp = json.loads(out.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise Failure("answer is not JSON (%s): %r" % (exc, out[:300]))
        if not isinstance(resp, dict) or not isinstance(resp.get("ok"), bool):
            raise Failure("answer is not an object with a boolean ok: %r" % out[:300])
        if not resp["ok"]:
            e = resp.get("error")
            if not isinstance(e, str) or not e or "\n" in e or "\r" in e:
                raise Failure("refusal without a one-line error: %r" % out[:300])
        self.err.seek(self.err_seen)
        new = self.err.read()
        self.err_seen += len(new)
        if b"Traceback" in new:
            raise Failure("traceback on stderr: %s" % new.decode("utf-8", "replace")[-1500:])
        return resp

    def alive(self):
        return self.p.poll() is None

    def close(self):
        if self.alive():
            try:
                self.p.stdin.close()
            except OSError:
                pass
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.err.close()


def enc(obj):
    return json.dumps(obj).encode("utf-8")


# --- the arena: one real case (add, input views) the valid sequences use -------------------

class Arena:
    def __init__(self, op, m, n, k, seed):
        self.op, self.m, self.n, self.k = op, m, n, k
        self.bufs, self.total = twt.layout(op, m, n, k, True)
        self.pristine, vals = twt.fill(self.bufs, self.total, n, random.Random(seed))
        self.ref, self.sc = twt.reference(op, vals, m, n, k)
        self.shm = twt.Shm(self.total)
        self.reset()
        # guard bands: every byte outside all regions
        inside = bytearray(self.total)
        for b in self.bufs:
            inside[b["region_offset"]:b["region_offset"] + b["region_bytes"]] = \
                b"\1" * b["region_bytes"]
        self.guard = [i for i in range(self.total) if not inside[i]]

    def reset(self):
        self.shm.mm[:] = self.pristine

    def snapshot(self):
        return bytes(self.shm.mm)

    def guards_ok(self):
        mem = self.shm.mm
        return all(mem[i] == self.pristine[i] for i in self.guard)

    def prepare(self):
        return {"cmd": "prepare", "case": "fuzz", "op": self.op, "backend": "cpu",
                "m": self.m, "n": self.n, "k": self.k, "shm": self.shm.name,
                "arena_bytes": self.total, "buffers": json.loads(json.dumps(self.bufs)),
                "capture_sources": False}


# --- mutations -------------------------------------------------------------------------------

HUGE = [2 ** 63, 2 ** 64 + 1, -(2 ** 63), 10 ** 30]
RAW_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "-0", "1e-400", "9" * 5000,
               "0x10", "1.5", "00", "+1"]


def retype(rnd):
    return rnd.choice(["x", "", 3, -1, 0, 2.5, True, False, None, [], [1, "a"], {},
                       {"cmd": "run"}, "\u0000", "\ud800", "é" * 3, float("nan")])


def out_of_range(rnd):
    return rnd.choice([-1, 0, -7, 3] + HUGE + [float("inf"), float("-inf"), float("nan"), 1e308])


def bad_shm(rnd, arena):
    return rnd.choice(["/etc/passwd", "/dualtime-", "/dualtime-nope-%d" % os.getpid(),
                       "/dualtime-../x", "dualtime-x", "/dualtime-a/b", "/dualtime-" + "x" * 300,
                       "/dualtime-\u0000x", "/dualtime-\ud800", "/DUALTIME-x", "",
                       arena.shm.name + "\n", arena.shm.name + "x", arena.shm.name[:-1],
                       "/dualtime-é"])


def mutate_buffers(rnd, req, arena):
    bufs = req["buffers"]
    i = rnd.randrange(len(bufs))
    b = bufs[i]
    how = rnd.randrange(12)
    key = rnd.choice(list(b))
    if how == 0:
        del b[key]
    elif how == 1:
        b[key] = retype(rnd)
    elif how == 2:
        b[key] = out_of_range(rnd)
    elif how == 3:  # outside the segment
        b["data_offset"] = arena.total - rnd.choice([0, 4, 8, 16]) + rnd.choice([0, 4, 4096])
    elif how == 4:  # overlap: the output onto an input, or an input onto the output
        j = rnd.randrange(len(bufs))
        if j != i:
            for f in ("data_offset", "region_offset", "region_bytes", "row_stride"):
                b[f] = bufs[j].get(f)
    elif how == 5:
        b["dtype"] = rnd.choice(["f16", "f64", "i32", "F32", "", None, "i64", "f32"])
    elif how == 6:
        b["name"] = rnd.choice(["", "c", "OUT", "a", "out", "b", None, 1])
    elif how == 7:
        bufs.append(json.loads(json.dumps(b)))  # given twice
    elif how == 8:
        del bufs[i]
    elif how == 9:  # window outside its region, region outside the arena
        b[rnd.choice(["region_offset", "region_bytes"])] = rnd.choice(
            [0, 1, 4, arena.total, arena.total * 2, b.get("region_bytes", 0) // 2])
    elif how == 10:
        b["row_stride"] = rnd.choice([0, 1, b.get("cols", 1) - 1, 2 ** 40, 2 ** 62, 2 ** 63])
    else:
        b["data_offset"] = b.get("data_offset", 0) + rnd.choice([1, 2, 3, -4, -256, 256])


def mutate_prepare(rnd, req, arena):
    how = rnd.randrange(10)
    key = rnd.choice(list(req))
    if how == 0:
        del req[key]
    elif how == 1:
        req[key] = retype(rnd)
    elif how == 2:
        req[rnd.choice(["m", "n", "k", "arena_bytes"])] = out_of_range(rnd)
    elif how == 3:
        req["shm"] = bad_shm(rnd, arena)
    elif how == 4:
        req["arena_bytes"] = rnd.choice([arena.total - 4, arena.total + 4, arena.total * 1000,
                                         1, arena.total // 2])
    elif how == 5:
        req["op"] = rnd.choice(["nope", "", "ADD", "add ", "floor", "gemm", "sum", None, 7]
                               + [o["name"] for o in OPS_JSON])
    elif how == 6:
        req["backend"] = rnd.choice(["cuda", "metal", "CPU", "", None, ["cpu"]])
    elif how == 7:
        req["buffers"] = rnd.choice([[], {}, "a", None, [1, 2, 3], [{}] * 3,
                                     [{"name": "a"}, {"name": "b"}, {"name": "out"}]])
    else:
        for _ in range(rnd.randint(1, 3)):
            mutate_buffers(rnd, req, arena)
    return req


def mutate_simple(rnd, req):
    """run / device / upload / download / release / probe_process / ceilings / quit."""
    fields = {"reps": 1, "prime": 0, "scope": "control", "capacity": 16,
              "probe_kind": "concurrent"}
    for _ in range(rnd.randint(1, 3)):
        key = rnd.choice(list(fields) + ["reps", "reps", "prime", "cmd", "extra"])
        how = rnd.randrange(5)
        if how == 0:
            req.pop(key, None)
        elif how == 1:
            req[key] = retype(rnd)
        elif how == 2:
            req[key] = out_of_range(rnd)
        elif how == 3:
            req[key] = rnd.choice([0, -1, 17, 2 ** 40 + 1])  # just outside the limits
        else:
            req[key] = rnd.choice(["probe", "control", "serialized", "other", 2, 16, 17])
    return req


def mutate_hello(rnd):
    req = json.loads(json.dumps(HELLO))
    how = rnd.randrange(8)
    ops = req["ops"]
    o = rnd.choice(ops)
    if how == 0:
        req["protocol"] = rnd.choice([0, 2, "1", 1.0, None, -1, 2 ** 63, True])
    elif how == 1:
        req["ops"] = retype(rnd)
    elif how == 2:
        del o[rnd.choice(list(o))]
    elif how == 3:
        o[rnd.choice(list(o))] = retype(rnd)
    elif how == 4:
        b = rnd.choice(o["buffers"])
        b[rnd.choice(list(b))] = retype(rnd)
    elif how == 5:
        ops.append(json.loads(json.dumps(o)))  # an op given twice
    elif how == 6:
        o["buffers"] = rnd.choice([[], o["buffers"][:1], o["buffers"][::-1],
                                   o["buffers"] + o["buffers"][-1:]])
    else:
        del req["ops"]
    return req


def raw_line(rnd, arena):
    """A line that is not a well-formed request object."""
    valid = enc(rnd.choice([arena.prepare(), {"cmd": "run", "reps": 1}, HELLO]))
    how = rnd.randrange(14)
    if how == 0:
        return valid[:rnd.randrange(1, len(valid))]  # truncated
    if how == 1:
        d = rnd.choice([1000, 5000, 100000])
        return b'{"cmd":"run","reps":' + b"[" * d + b"]" * d + b"}"
    if how == 2:
        d = rnd.choice([500, 990, 3000, 100000])
        return b"[" * d + b"]" * d if rnd.random() < 0.5 else b'{"a":' * d + b"1" + b"}" * d
    if how == 3:
        return b'{"cmd":"' + b"x" * rnd.choice([10000, 1000000]) + b'"}'
    if how == 4:
        return rnd.choice([b"\xff\xfe", b'{"cmd":"run\xc3","reps":1}', b"\xc0\x80", b"\x80" * 50,
                           b'{"cmd":"prepare","shm":"/dualtime-\xed\xa0\x80"}'])
    if how == 5:
        return rnd.choice([b"", b" ", b"\t", b"\r", b"\x00", b"{}\x00"])
    if how == 6:
        return b'{"cmd":"run","cmd":"release","reps":1,"reps":-1}'  # duplicate keys
    if how == 7:
        return (b'{"cmd":"run","reps":' + rnd.choice(RAW_NUMBERS).encode() + b"}")
    if how == 8:
        return rnd.choice([b"[1,2]", b'"run"', b"null", b"42", b"true", b"{", b"}", b"{}{}",
                           b'{"cmd":"run"} {"cmd":"run"}', b"{'cmd':'run'}", b"{cmd:run}"])
    if how == 9:  # a valid request followed by junk
        return valid + rnd.choice([b"x", b",", b" }", b"\x00"])
    if how == 10:
        return b'{"cmd":' + rnd.choice([b'"\\ud800"', b'"\\u0000"', b"NaN", b"[]", b"{}",
                                       b'"quit\\u0000"', b'"QUIT"', b'"' + b"\\" * 3 + b'"']) + b"}"
    if how == 11:
        d = rnd.choice([900, 960, 990, 995, 999])
        return b'{"cmd":' + b"[" * d + b"]" * d + b"}"
    if how == 12:
        d = rnd.choice([900, 960, 990, 995])
        req = json.dumps(arena.prepare())
        return (req.replace('"backend": "cpu"', '"backend": ' + "[" * d + "]" * d)
                .replace('"op": "add"', '"op": ' + "[" * d + "]" * d)).encode()
    bulk = valid.replace(b"}", b"," + b'"pad":"' + b"y" * 200000 + b'"}', 1)
    return bulk


# --- the loop --------------------------------------------------------------------------------

class Fuzz:
    def __init__(self, seed):
        self.seed = seed
        self.rnd = random.Random(seed)
        self.arena = Arena("add", 1 if seed % 2 else 4, 8, 0, seed)  # odd seeds: 1-row buffers
        self.sent = self.refused = self.accepted = 0
        self.passed = self.failed = 0
        self.restarts = 0
        self.prepared = False  # a case is prepared on the worker (our valid layout or not)
        self.tainted = False   # the prepared case is an accepted mutant: its layout is not ours
        self.client = None
        self.start()

    def start(self):
        if self.client is not None:
            self.client.close()
        self.client = Client()
        self.prepared = self.tainted = False
        self.arena.reset()
        r = self.client.ask_raw(enc(HELLO))
        if not r["ok"]:
            raise Failure("valid hello refused: %r" % r)

    def fail(self, line, what, counted=True):
        if counted:
            self.failed += 1
        shown = line
        if len(line) > 600:
            shown = line[:300] + b"...<%d bytes>..." % len(line) + line[-100:]
        print("FAIL (seed %d, request %d): %s\n  request: %r" % (self.seed, self.sent, what, shown),
              flush=True)

    def send(self, line, label, expect=None):
        """One fuzz request and its properties; returns the answer or None."""
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogatepass")
        elif not isinstance(line, bytes):
            line = enc(line)
        line = line.replace(b"\n", b"\\n")  # one line: a newline inside is a JSON escape
        before = self.arena.snapshot()
        self.sent += 1
        try:
            r = self.client.ask_raw(line)
        except Failure as exc:
            self.fail(line, "%s: %s" % (label, exc))
            self.client.p.kill()
            self.start()
            self.restarts += 1
            return None
        ok = True
        if r["ok"]:
            self.accepted += 1
        else:
            self.refused += 1
            if self.arena.snapshot() != before:
                ok = False
                self.fail(line, "%s: a refused request changed the arena" % label, False)
        if not self.tainted and not self.arena.guards_ok():
            ok = False
            self.fail(line, "%s: a guard band of the arena was written" % label, False)
        if not ok:
            self.arena.reset()  # report each write once, not on every later request
        if expect is not None and r["ok"] != expect:
            ok = False
            self.fail(line, "%s: expected ok=%s, got %r" % (label, expect, r), False)
        if not self.client.alive() and not self.quit_line(line, r):
            ok = False
            self.fail(line, "%s: the worker died (rc %s)" % (label, self.client.p.poll()), False)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        if ARGS.verbose:
            print("%4d %-14s %s %s" % (self.sent, label, "ok " if r["ok"] else "ERR",
                                       (r.get("error") or "")[:100]), flush=True)
        self.track(line, r)
        return r

    @staticmethod
    def quit_line(line, r):
        try:
            req = json.loads(line)
        except Exception:
            return False
        return isinstance(req, dict) and req.get("cmd") == "quit" and r["ok"]

    def track(self, line, r):
        """Follows the worker's state from an answer to a fuzz request."""
        if self.quit_line(line, r):
            self.client.p.wait(10)
            self.start()
            self.restarts += 1
            return
        try:
            req = json.loads(line)
        except Exception:
            return
        if not isinstance(req, dict) or not r["ok"]:
            return
        cmd = req.get("cmd")
        if cmd == "prepare":
            self.prepared, self.tainted = True, True
        elif cmd == "release":
            self.prepared = self.tainted = False
            self.arena.reset()
        elif cmd == "hello" and req != HELLO:  # an accepted mutant table: put the real one back
            self.send(HELLO, "hello-restore", expect=True)

    def state_check(self):
        """After a refusal: the worker's state is what it should be."""
        if self.prepared:
            r = self.send({"cmd": "run", "reps": 1}, "check-run", expect=True)
        else:
            r = self.send({"cmd": "run", "reps": 1}, "check-idle", expect=False)
            if r is not None and "before prepare" not in r.get("error", ""):
                self.fail(b'{"cmd":"run","reps":1}',
                          "idle worker refused run for another reason: %r" % r)

    def valid_sequence(self):
        """prepare / upload / run / download on our arena, output checked, release."""
        if self.prepared:
            self.send({"cmd": "release"}, "release", expect=True)
        self.arena.reset()
        r = self.send(self.arena.prepare(), "prepare", expect=True)
        if r is None or not r["ok"]:
            return
        self.tainted = False
        for req in ({"cmd": "upload"}, {"cmd": "run", "reps": 2, "prime": 1}, {"cmd": "download"}):
            self.send(req, req["cmd"], expect=True)
        nfails = len(twt.FAILS)
        twt.check_arena("fuzz seed %d" % self.seed, self.arena.op, self.arena.bufs,
                        self.arena.snapshot(), self.arena.pristine, self.arena.ref, self.arena.sc)
        if len(twt.FAILS) != nfails:
            self.fail(enc(self.arena.prepare()), "valid case computed a wrong output")
        if self.rnd.random() < 0.3:  # else the next requests meet a prepared case
            self.send({"cmd": "release"}, "release", expect=True)

    def one(self):
        rnd, a = self.rnd, self.arena
        kind = rnd.randrange(100)
        if kind < 10:
            self.valid_sequence()
            return
        if kind < 14:  # wrong order
            cmd = rnd.choice(["run", "upload", "download", "release", "device", "prepare"])
            req = a.prepare() if cmd == "prepare" else {"cmd": cmd, "reps": 1, "scope": "control",
                                                        "capacity": 16}
            expect = None
            if cmd == "prepare":
                expect = not self.prepared
            elif cmd == "device":
                expect = False  # no device timing on a CPU case
            else:
                expect = self.prepared
            r = self.send(req, "order-" + cmd, expect=expect)
            if r is not None and r["ok"] and cmd == "prepare":
                self.tainted = False
            return
        if kind < 44:
            r = self.send(mutate_prepare(rnd, a.prepare(), a), "prepare-mut")
        elif kind < 64:
            cmd = rnd.choice(["run", "run", "device", "upload", "download", "release",
                              "probe_process", "ceilings", "floor", "quit"])
            if cmd == "quit" and rnd.random() < 0.7:
                cmd = "run"
            req = {"cmd": cmd}
            if cmd in ("run", "device", "floor"):
                req.update({"reps": 1, "prime": 0})
            if cmd == "device":
                req.update({"scope": "probe", "capacity": 16, "probe_kind": "concurrent"})
            r = self.send(mutate_simple(rnd, req), cmd + "-mut")
        elif kind < 70:
            r = self.send(mutate_hello(rnd), "hello-mut")
        elif kind < 74:
            r = self.send({"cmd": rnd.choice(["frobnicate", "", "RUN", "hello ", "prepare\u0000",
                                              "list", "exit", "\u00e9"])}, "unknown-cmd",
                          expect=False)
        else:
            r = self.send(raw_line(rnd, a), "raw")
        if r is not None and not r["ok"]:
            self.state_check()

    def regressions(self):
        for item in REGRESSIONS:
            line = item
            if isinstance(item, dict) and "PREPARE" in item:  # our valid prepare, fields replaced
                fields = dict(item["PREPARE"])
                line = self.arena.prepare()
                if fields.pop("buffers", None) == "ROW1":  # a 1-row layout of the same op
                    bufs, _ = twt.layout(self.arena.op, 1, self.arena.n, self.arena.k, True)
                    bufs[0]["row_stride"] = fields.pop("row_stride")
                    line["buffers"] = bufs
                line.update(fields)
            r = self.send(line, "regression")
            if r is not None and not r["ok"]:
                self.state_check()

    def run(self):
        t0 = time.monotonic()
        self.regressions()
        fuzzed = 0
        while fuzzed < ARGS.count and time.monotonic() - t0 < ARGS.time_limit:
            self.one()
            fuzzed += 1
        self.valid_sequence()  # the state still serves a whole case at the end
        r = self.client.ask_raw(enc({"cmd": "quit"}))
        rc = self.client.p.wait(10)
        if not r["ok"] or rc != 0:
            self.fail(b'{"cmd":"quit"}', "quit: %r, rc %s" % (r, rc))
        self.client.close()
        self.arena.shm.close()
        return fuzzed, time.monotonic() - t0


def main():
    fz = Fuzz(ARGS.seed)
    try:
        fuzzed, secs = fz.run()
    finally:
        if fz.client is not None and fz.client.alive():
            fz.client.p.kill()
        try:
            fz.arena.shm.close()
        except (ValueError, OSError):
            pass
    print("seed %d: %d fuzz steps (count %d) in %.1f s, %d worker restarts%s"
          % (ARGS.seed, fuzzed, ARGS.count, secs, fz.restarts,
             " (stopped by --time-limit)" if fuzzed < ARGS.count else ""))
    print("%d requests, %d refused, %d accepted" % (fz.sent, fz.refused, fz.accepted))
    print("%d passed, %d failed" % (fz.passed, fz.failed))
    return 1 if fz.failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as exc:
        print("FAIL (seed %d): %s" % (ARGS.seed, exc))
        sys.exit(1)
