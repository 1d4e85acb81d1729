#!/usr/bin/env bash
# The device phase of the orchestrator without a GPU: both workers are wrapped by
# fake_device_worker.py, which claims cuda and answers device requests from timed runs.
# Checks: control/probe pairs in alternating order on separate probe processes, every
# device scope stored with its position, probe diagnostics and device tables in
# results.md; a failing probe fails only its case. Floor samples: one per pair of single
# samples on the candidate's worker, before the pair, paired in the E2E floor table; a
# candidate without the floor request is recorded once and the run goes on.
set -u
B="$1"; D="$B/dualtime"; HERE="$(cd "$(dirname "$0")" && pwd)"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch not importable: skip"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
ARGS=(--backends cuda --device-timing --operations add,sum --row-shapes 17x257 --samples 4
      --sample-ms 2 --warmup-ms 5 --threads 1 --quiet
      --candidate-worker "$HERE/fake_device_worker.py $B/dualtime-native-worker"
      --baseline-worker "$HERE/fake_device_worker.py /usr/bin/python3 $B/dualtime_torch_worker.py")
"$D" run --output "$T/ok" "${ARGS[@]}"; rc=$?
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
grep -q "## Device control" "$T/ok/results.md" && grep -q "Per-kernel breakdown" "$T/ok/results.md" && ok || no "device tables missing in results.md"
FAKE_DEVICE_FAULT=probe "$D" run --output "$T/bad" "${ARGS[@]}" --operations add; rc=$?
[ $rc -eq 1 ] && ok || no "probe failure exit $rc"
grep -q "planted probe failure" "$T/bad/results.json" && ok || no "probe failure not recorded"
FAKE_DEVICE_FAULT=nofloor "$D" run --output "$T/nofloor" "${ARGS[@]}" --operations add; rc=$?
[ $rc -eq 0 ] && ok || no "no-floor run exit $rc"
/usr/bin/python3 - "$T/nofloor/results.json" <<'EOP' && ok || no "no-floor run content"
import json, sys
r = json.load(open(sys.argv[1]))
assert "fake-native worker" in r["floor_unavailable"] and "floor" in r["floor_unavailable"]
for c in r["cases"]:
    assert c["valid"] and "floor" not in c, c["id"]
    assert "e2e_floor" not in c["derived"]  # no ceilings in a fake run either
EOP
grep -q "no per-case floor samples: fake-native worker: .*floor" "$T/nofloor/results.md" && ok || no "no-floor reason missing in results.md"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
