#!/usr/bin/env bash
# The device phase of the orchestrator without a GPU: both workers are wrapped by
# fake_device_worker.py, which claims cuda and answers device requests from timed runs.
# Checks: control/probe pairs in alternating order on separate probe processes, every
# device scope stored with its position, probe diagnostics and device tables in
# results.md; a failing probe fails only its case. Floor samples: one per pair of single
# samples on the candidate's worker, before the pair, paired in the E2E floor table; a
# candidate without the floor request is recorded once and the run goes on.
# Held windows (issue 12): control and probe requests carry hold:true, dispatch samples
# are the unheld control-worker regions, the three kinds of one index follow the rotated
# order of dt_run_device_order (docs/device-workflow.md), probe kind auto pilots both kinds
# and keeps the less perturbing one (the fake makes serialized perturb less), defaults on
# cuda (device timing on, 2 rounds, 9 samples), --no-device-timing, pinning recorded.
. "$(dirname "$0")/e2e_lib.sh" "$1"
ARGS=(--backends cuda --device-timing --operations add,sum --row-shapes 17x257 --samples 4 --rounds 1
      --sample-ms 2 --warmup-ms 5 --threads 1 --quiet
      --candidate-worker "$HERE/fake_device_worker.py $B/dualtime-native-worker"
      --baseline-worker "$HERE/fake_device_worker.py /usr/bin/python3 $B/dualtime_torch_worker.py")
FAKE_DEVICE_NS=5000 FAKE_DEVICE_LOG="$T/ok.log" "$D" run --output "$T/ok" "${ARGS[@]}"; rc=$?
[ $rc -eq 0 ] && ok || no "device run exit $rc"
/usr/bin/python3 - "$T/ok/results.json" <<'EOP' && ok || no "device samples"
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    assert c["valid"], c["id"]
    for fw in ("fake-native", "fake-torch"):
        s = c["impl"][fw]["samples"]
        for scope in ("control_batch", "probe_batch", "control_single", "probe_single"):
            assert len(s[scope]) == 4, (scope, len(s[scope]))
            assert all(x["us"] > 0 for x in s[scope])
        # batch device samples use R_dev = min(R, 64); singles one call
        rdev = min(c["impl"][fw]["calibration"]["reps"], 64)
        assert all(x["reps"] == rdev for x in s["control_batch"] + s["probe_batch"])
        assert all(x["reps"] == 1 for x in s["control_single"] + s["probe_single"])
        # even pairs: control first; odd pairs: probe first
        for i in range(4):
            ctl, prb = s["control_batch"][i]["position"], s["probe_batch"][i]["position"]
            assert (ctl < prb) == (i % 2 == 0), (i, ctl, prb)
        p = s["probe_batch"][0]
        assert p["kernel_count"] == p["reps"] and p["kernels"][0]["count"] == p["reps"]
        rec = p["records"]
        assert len(rec["rows"]) == p["reps"] and rec["names"] == [p["kernels"][0]["name"]]
        assert all(r[2] > r[1] >= 0 for r in rec["rows"])
    fl = c["floor"]
    assert fl["worker"] == "fake-native" and [x["index"] for x in fl["samples"]] == [0, 1, 2, 3]
    for x in fl["samples"]:
        assert x["us"] > 0
        for fw in ("fake-native", "fake-torch"):
            single = [y for y in c["impl"][fw]["samples"]["e2e_single"] if y["index"] == x["index"]]
            assert len(single) == 1 and x["position"] < single[0]["position"], (x, single)
    ef = c["derived"]["e2e_floor"]
    assert ef["floor_source"] == "paired" and ef["case_floor_us"] > 0, ef
    for fw in ("fake-native", "fake-torch"):
        q = ef["impl"][fw]["over_floor_ratio"]  # format 2: per implementation under impl
        assert q["pairs"] == 4 and q["ci_low"] <= q["median"] <= q["ci_high"], q
        pairs = sorted(y["us"] / x["us"] for x in fl["samples"]
                       for y in c["impl"][fw]["samples"]["e2e_single"] if y["index"] == x["index"])
        assert abs(q["median"] - (pairs[1] + pairs[2]) / 2) < 1e-9 * q["median"], (q, pairs)
    d = c["derived"]["scopes"]
    assert "control_batch" in d and d["control_batch"]["vs_baseline"]["fake-native"]["verdict"] != "invalid"
    assert set(d["probe_batch"]["probe_over_control"]) == {"fake-native", "fake-torch"}
EOP
/usr/bin/python3 - "$T/ok/results.json" "$T/ok.log" <<'EOP' && ok || no "held windows, dispatch, order, probe kind auto"
import json, sys
r = json.load(open(sys.argv[1]))
log = [json.loads(l) for l in open(sys.argv[2])]
assert r["settings"]["held_windows"] is True and r["settings"]["probe_kind"] == "auto", r["settings"]
# dt_run_device_order: (control, probe, dispatch) per index, period 6
ORDER = [(0, 1, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0), (0, 2, 1), (1, 0, 2)]
n_ctl = n_dis = n_prb = 0
for c in r["cases"]:
    for fw in ("fake-native", "fake-torch"):
        ci = c["impl"][fw]; s = ci["samples"]
        for kind in ("batch", "single"):
            trio = [s["control_" + kind], s["probe_" + kind], s["dispatch_" + kind]]
            assert all(len(x) == 4 for x in trio), [len(x) for x in trio]
            assert [x["reps"] for x in trio[2]] == [x["reps"] for x in trio[0]]
            assert all(x["us"] > 0 for x in trio[2])
            for i in range(4):
                pos = [x[i]["position"] for x in trio]
                assert all(x[i]["index"] == i for x in trio)
                got = tuple(sorted(range(3), key=lambda k: pos[k]))
                assert got == ORDER[i], (c["id"], fw, kind, i, got)
                # consecutive: no other sample of this implementation in between
                assert max(pos) - min(pos) == 2, pos
            # the first three indexes: each kind once in each position
            for k in range(3):
                assert sorted(ORDER[i].index(k) for i in range(3)) == [0, 1, 2]
        n_ctl += 8; n_dis += 8; n_prb += 8
        # probe kind auto: both pilot ratios, the less perturbing kind kept
        pil = ci["pilot_probe_over_control"]
        assert abs(pil["serialized"] - 1.05) < 1e-6 and abs(pil["concurrent"] - 2.0) < 1e-6, pil
        assert ci["probe_kind"] == "serialized", ci.get("probe_kind")
PILOT = 3 * len(r["cases"]) * 2
ctl_held = [q for q in log if q["scope"] == "control" and q["hold"] is True]
ctl_unheld = [q for q in log if q["scope"] == "control" and q["hold"] is False]
prb = [q for q in log if q["scope"] == "probe" and not q["decomp"]]  # the samples' requests
assert all(q["hold"] is True for q in prb), "a probe request without hold:true"
# the E2E decomposition: three unheld single-call probes per implementation (one round), on
# the probe worker of the kept kind, stored raw, tabled in results.md
dec = [q for q in log if q["decomp"]]
assert len(dec) == 3 * 2 * len(r["cases"]), len(dec)
assert all(q["scope"] == "probe" and q["hold"] is False and q["reps"] == 1 and
           q["probe_kind"] == "serialized" for q in dec), dec
assert {q["pid"] for q in dec} <= {q["pid"] for q in prb if q["probe_kind"] == "serialized"}
for c in r["cases"]:
    for fw in ("fake-native", "fake-torch"):
        d = c["impl"][fw]["decomposition"]["samples"]
        assert len(d) == 3 and all(len(x["launches"]) == 1 and len(x["kernels"]) == 1 for x in d), d
        assert d[0]["call_start_ns"] < d[0]["launches"][0][0] < d[0]["sync_return_ns"], d
        assert d[0]["clock_uncertainty_ns"] == 50.0, d
assert len(ctl_unheld) == n_dis, (len(ctl_unheld), n_dis)   # dispatch = unheld
assert len(ctl_held) == n_ctl + PILOT, (len(ctl_held), n_ctl, PILOT)
ser = [q for q in prb if q["probe_kind"] == "serialized"]
con = [q for q in prb if q["probe_kind"] == "concurrent"]
assert len(ser) == n_prb + PILOT and len(con) == PILOT, (len(ser), len(con))
# control/dispatch come from the main workers, probes from other processes (one per kind)
main_pids = {q["pid"] for q in log if q["scope"] == "control"}
assert len(main_pids) == 2 and not main_pids & {q["pid"] for q in prb}
assert len({q["pid"] for q in ser}) == 2 and len({q["pid"] for q in con}) == 2
assert not {q["pid"] for q in ser} & {q["pid"] for q in con}
EOP
grep -q "## Device control" "$T/ok/results.md" && grep -q "Per-kernel breakdown" "$T/ok/results.md" && ok || no "device tables missing in results.md"
grep -Eq "^\| add_17x257 \| fake-native \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| ±0\.0500 \| [0-9.]+ \| 1 / 1 \| adds up \|$" "$T/ok/results.md" \
  && ok || no "E2E decomposition table missing or not adding up in results.md"
FAKE_DEVICE_FAULT=probe "$D" run --output "$T/bad" "${ARGS[@]}" --operations add; rc=$?
[ $rc -eq 1 ] && ok || no "probe failure exit $rc"
grep -q "planted probe failure" "$T/bad/results.json" && ok || no "probe failure not recorded"
FAKE_DEVICE_FAULT=nofloor "$D" run --output "$T/nofloor" "${ARGS[@]}" --operations add --probe-kind concurrent; rc=$?
[ $rc -eq 0 ] && ok || no "no-floor run exit $rc"
/usr/bin/python3 - "$T/nofloor/results.json" <<'EOP' && ok || no "no-floor run content"
import json, sys
r = json.load(open(sys.argv[1]))
assert "fake-native worker" in r["floor_unavailable"] and "floor" in r["floor_unavailable"]
for c in r["cases"]:
    assert c["valid"] and "floor" not in c, c["id"]
    assert "e2e_floor" not in c["derived"]  # no ceilings in a fake run either
    for fw in ("fake-native", "fake-torch"):  # a forced kind: no pilot
        assert c["impl"][fw]["probe_kind"] == "concurrent" and "pilot_probe_over_control" not in c["impl"][fw]
EOP
grep -q "no per-case floor samples: fake-native worker: .*floor" "$T/nofloor/results.md" && ok || no "no-floor reason missing in results.md"
# defaults on cuda: device timing on, 2 rounds, 9 samples; the held floors are kept;
# pinning recorded (pinned only with >= 4 usable CPUs)
DEF=(--backends cuda --operations add --row-shapes 1x127 --sample-ms 1 --warmup-ms 2 --threads 1 --quiet
     --candidate-worker "$HERE/fake_device_worker.py $B/dualtime-native-worker"
     --baseline-worker "$HERE/fake_device_worker.py /usr/bin/python3 $B/dualtime_torch_worker.py")
FAKE_DEVICE_NS=5000 FAKE_CEILINGS=1 "$D" run --output "$T/def" "${DEF[@]}"; rc=$?
[ $rc -eq 0 ] && ok || no "default cuda run exit $rc"
/usr/bin/python3 - "$T/def/results.json" "$(nproc)" <<'EOP' && ok || no "cuda defaults, held floors, pinning"
import json, sys
r = json.load(open(sys.argv[1])); ncpu = int(sys.argv[2]); st = r["settings"]
assert st["device_timing"] is True and st["rounds"] == 2 and st["samples"] == 9, st
ce = r["environment"]["ceilings"]
assert ce["held_touch_floor_batch_us"] == 1.9 and ce["held_floor_single_us"] == 3.2, ce
fl = ce["flops"]  # FLOP ceilings: the best answer per dtype, who said what
assert fl["fp32_tflops"] == 50.0 and fl["bf16_tflops"] == 700.0 and fl["fp16_tflops"] == 650.0, fl
assert fl["method"] == "fake-torch: fake matmul; fake-native: fake ffma", fl  # session order
for c in r["cases"]:
    for fw in ("fake-native", "fake-torch"):
        s = c["impl"][fw]["samples"]
        for scope in ("control_batch", "probe_batch", "dispatch_batch", "control_single", "probe_single", "dispatch_single"):
            assert len(s[scope]) == 18 and {x["round"] for x in s[scope]} == {0, 1}, (scope, len(s[scope]))
        assert c["impl"][fw]["probe_kind"] == "serialized"
    assert c["derived"]["held_floor"]["touch_floor_us"] == 1.9
def cpus(text):
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out |= set(range(int(a), int(b or a) + 1))
    return out
assert "orchestrator_cpus" in r["environment"]
if ncpu >= 4:
    assert st["pin"] is True and "pin_reason" not in st, st
    assert len(cpus(r["environment"]["orchestrator_cpus"])) == 1
    seen = set()
    for fw in r["frameworks"]:
        mine = cpus(fw["cpus"])
        assert set(fw["hello"]["fake_cpus"]) == mine, (fw["id"], fw["cpus"], fw["hello"]["fake_cpus"])
        assert not mine & seen and not mine & cpus(r["environment"]["orchestrator_cpus"])
        seen |= mine
else:
    assert st["pin"] is False and "usable CPU" in st["pin_reason"], st
    assert all("cpus" not in fw for fw in r["frameworks"])
EOP
"$D" run --output "$T/nodev" "${DEF[@]}" --no-device-timing --no-pin --rounds 1 --samples 3; rc=$?
[ $rc -eq 0 ] && ok || no "--no-device-timing run exit $rc"
/usr/bin/python3 - "$T/nodev/results.json" <<'EOP' && ok || no "--no-device-timing / --no-pin"
import json, sys
r = json.load(open(sys.argv[1])); st = r["settings"]
assert st["device_timing"] is False and st["pin"] is False and st["pin_reason"] == "not pinned: --no-pin", st
for c in r["cases"]:
    for fw in ("fake-native", "fake-torch"):
        s = c["impl"][fw]["samples"]
        assert len(s["e2e_batch"]) == 3
        assert not any(k.startswith(("control", "probe", "dispatch")) and v for k, v in s.items()), s.keys()
        d = c["impl"][fw]["decomposition"]
        assert d["samples"] == [] and "--no-device-timing" in d["unavailable"], d
EOP
grep -q "^Unavailable: device timing is off (--no-device-timing)\.$" "$T/nodev/results.md" && ok \
  || no "--no-device-timing: the decomposition is not said to be unavailable"
# a worker that refuses the decomposition request: recorded, said, the run goes on (exit 0)
FAKE_DEVICE_FAULT=decomp "$D" run --output "$T/nodec" "${ARGS[@]}" --operations add --probe-kind concurrent; rc=$?
[ $rc -eq 0 ] && ok || no "decomp refusal run exit $rc"
grep -q "^Unavailable: device: decomp unavailable: planted\.$" "$T/nodec/results.md" && ok \
  || no "decomp refusal not said in results.md"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
