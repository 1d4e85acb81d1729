#!/usr/bin/env bash
# The main workers' warm-ups (src/orchestrate/dt_run.c, warmups; SPEC §4 step 2): on cuda
# every implementation warms at once (one warm-up a case-round, not one per
# implementation), on cpu one after the other (the workers would share the cores);
# DUALTIME_WARMUP=serial|together overrides, anything else is refused before the run.
#  - cuda (fake device workers, the default): the phase trace has one "warmup" line per
#    case-round for all implementations ("-"), none per implementation; both implementations
#    record the same warm-up window (>= --warmup-ms) and calls; the run is valid;
#  - cuda with DUALTIME_WARMUP=serial: one "warmup" line per implementation and case-round;
#  - cpu, the default: one after the other, each implementation its own window;
#  - cpu with DUALTIME_WARMUP=together: at once, and the same cases, input SHA-256s, output
#    SHA-256s and oracle numbers as the serial run (a warm-up changes nothing measured);
#  - a worker crashing in its first warm-up batch at once (DUALTIME_FAULT=segvwarm) fails
#    only that implementation of that case, stage warmup; the other warms on;
#  - DUALTIME_WARMUP=bogus: exit 2 naming it, no output directory;
#  - R is calibrated once a case (round 0's trace has the calibrations, round 1's none) and
#    every batch sample of both rounds has the recorded R;
#  - the cold call is checked once a case (round 0: "cold call + check"; round 1: "cold call
#    (unchecked)"), so each implementation records the checks cold, warm, warm;
#  - the trace opens with the start-up steps (round -1, before the loop: negative ns).
. "$(dirname "$0")/e2e_lib.sh" "$1"
CUDA=(--backends cuda --device-timing --operations add,sum --row-shapes 17x257 --samples 3
      --rounds 2 --sample-ms 2 --warmup-ms 30 --threads 1 --quiet
      --candidate-worker "$HERE/fake_device_worker.py $B/dualtime-native-worker"
      --baseline-worker "$HERE/fake_device_worker.py /usr/bin/python3 $B/dualtime_torch_worker.py")
CPU=(--backends cpu --operations add,softmax,gemm --row-shapes 17x257,64x1024 --gemm-shapes 96x80x130
     --rounds 2 --samples 3 --sample-ms 3 --warmup-ms 30 --threads 1 --quiet
     --python /usr/bin/python3 --seed 7)
# run NAME EXPECT-RC [ENV...] -- ARGS...
run() { local name="$1" want="$2"; shift 2; local envs=()
  while (($#)) && [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" DUALTIME_PHASE_TRACE="$T/$name.trace" "$D" run --output "$T/$name" "$@" \
    >"$T/$name.log" 2>&1; local rc=$?
  [ $rc -eq "$want" ] && ok || no "$name: exit $rc, expected $want: $(tail -3 "$T/$name.log")"; }
run cuda 0 -- "${CUDA[@]}"
run cuda-serial 0 DUALTIME_WARMUP=serial -- "${CUDA[@]}"
run cpu 0 -- "${CPU[@]}"
run cpu-together 0 DUALTIME_WARMUP=together -- "${CPU[@]}"

# check NAME MODE (together|serial): the trace's warm-up lines and the recorded windows
check() { /usr/bin/python3 - "$T/$1" "$2" 30 <<'EOP'
import collections, json, sys
d, mode, wms = sys.argv[1], sys.argv[2], float(sys.argv[3])
r = json.load(open(d + "/results.json"))
impls = sorted(r["cases"][0]["impl"])
assert len(impls) == 2, impls
lines, cal = collections.Counter(), collections.Counter()
for l in open(d + ".trace"):
    t, case, rnd, fw, phase = l.rstrip("\n").split("\t")
    if phase == "warmup":
        lines[(case, rnd, fw)] += 1
    if phase == "calibration":
        cal[(case, rnd, fw)] += 1
# R is calibrated once, in round 0; round 1 reuses it: every batch sample of both rounds
# has the recorded R
assert cal and all(k[1] == "0" for k in cal), sorted(cal)
for c in r["cases"]:
    for i in impls:
        im = c["impl"][i]
        R, bs = im["calibration"]["reps"], im["samples"]["e2e_batch"]
        assert {s["reps"] for s in bs} == {R} and {s["round"] for s in bs} == {0, 1}, \
            (c["id"], i, R, sorted({(s["round"], s["reps"]) for s in bs}))
# the start-up steps come first, round -1, before the loop's start (negative ns), in order
st = [l.rstrip("\n").split("\t") for l in open(d + ".trace")]
head = [x for x in st if x[2] == "-1"]
assert [x[4] for x in head] == ["start: main workers", "start: probe workers", "start: ceilings",
                                "start: clocks, run directory"], head
assert st[:len(head)] == head and all(int(x[0]) < 0 for x in head), st[:6]
assert [int(x[0]) for x in head] == sorted(int(x[0]) for x in head), head
# the cold call checked in round 0 only; the check after timing in every round
cold = collections.Counter()
for l in open(d + ".trace"):
    t, case, rnd, fw, phase = l.rstrip("\n").split("\t")
    if phase.startswith("cold call"):
        cold[(rnd, phase)] += 1
assert set(cold) == {("0", "cold call + check"), ("1", "cold call (unchecked)")}, sorted(cold)
# a timed sample's own request is its own trace interval: each host sample's "batch
# samples" / "single samples" line is followed by "sample checks" (the anti-cheat
# download and check after it) for the same implementation, so the phase counts only the
# request; there are as many such intervals as recorded host samples
trace = [l.rstrip("\n").split("\t") for l in open(d + ".trace")]
per_fw = collections.defaultdict(list)
for t, case, rnd, fw, phase in trace:
    per_fw[fw].append(phase)
for scope, name in (("e2e_batch", "batch samples"), ("e2e_single", "single samples")):
    n_rec = sum(len(c["impl"][i]["samples"][scope]) for c in r["cases"] for i in impls)
    n_iv = sum(1 for fw in impls for a, b in zip(per_fw[fw], per_fw[fw][1:])
               if a == name and b == "sample checks")
    assert n_iv == n_rec, (scope, n_iv, n_rec)
for c in r["cases"]:
    for i in impls:
        assert [k["when"] for k in c["impl"][i]["checks"]] == ["cold", "warm", "warm"], \
            (c["id"], i, [k["when"] for k in c["impl"][i]["checks"]])
rounds = collections.Counter((c, k) for c, k, _ in lines)
assert len(rounds) == 2 * len(r["cases"]), (len(rounds), len(r["cases"]))
for (case, rnd, fw), n in lines.items():
    assert n == 1, (case, rnd, fw, n)
    if mode == "together":
        assert fw == "-", ("a warm-up of its own", case, rnd, fw)
    else:
        assert fw in impls, ("a shared warm-up", case, rnd, fw)
assert all(n == (1 if mode == "together" else 2) for n in rounds.values()), rounds
for c in r["cases"]:
    assert c["valid"], c["id"]
    w = [c["impl"][i]["warmup"] for i in impls]
    assert all(x["ms"] >= wms and x["calls"] >= 1 for x in w), (c["id"], w)
    if mode == "together":
        assert w[0]["ms"] == w[1]["ms"], (c["id"], w)
    else:
        assert w[0]["ms"] != w[1]["ms"], (c["id"], "one window for both", w)
print("ok", d, mode, len(r["cases"]), "cases")
EOP
}
check cuda together && ok || no "cuda default: not at once"
check cuda-serial serial && ok || no "cuda DUALTIME_WARMUP=serial: not one after the other"
check cpu serial && ok || no "cpu default: not one after the other"
check cpu-together together && ok || no "cpu DUALTIME_WARMUP=together: not at once"

facts() { /usr/bin/python3 "$HERE/run_facts.py" "$1"; }
facts "$T/cpu/results.json" >"$T/cpu.facts"; facts "$T/cpu-together/results.json" >"$T/tog.facts"
grep -q "^check" "$T/cpu.facts" && ok || no "no facts read"
cmp -s "$T/cpu.facts" "$T/tog.facts" && ok || no "warm-ups at once changed what was measured: $(diff "$T/cpu.facts" "$T/tog.facts" | head -4)"

# a worker that crashes in its first warm-up batch (DUALTIME_FAULT=segvwarm) while the
# other warms at once: only that implementation of that case fails, with stage warmup;
# the other finishes its warm-up; the next cases are valid (the worker restarted)
run crash 1 DUALTIME_WARMUP=together DUALTIME_FAULT=segvwarm:softmax -- "${CPU[@]}"
/usr/bin/python3 - "$T/crash/results.json" <<'EOP' && ok || no "a crash in a warm-up at once: $(tail -3 "$T/crash.log")"
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    n, t = c["impl"]["native"], c["impl"]["torch"]
    if c["op"] == "softmax":
        assert not c["valid"] and n["status"] == "failed", c["id"]
        assert n["error"].startswith("warmup: ") and "signal 11" in n["error"], n["error"]
        assert t["status"] == "ok" and t["warmup"]["calls"] >= 1, t
    else:
        assert c["valid"], (c["id"], n.get("error"), t.get("error"))
print("ok crash", len(r["cases"]))
EOP

run bogus 2 DUALTIME_WARMUP=bogus -- "${CPU[@]}"
grep -q "DUALTIME_WARMUP=bogus" "$T/bogus.log" && ok || no "the refusal does not name DUALTIME_WARMUP=bogus: $(cat "$T/bogus.log")"
[ ! -e "$T/bogus" ] && ok || no "a refused run left $T/bogus"

e2e_end test_warmup_run
