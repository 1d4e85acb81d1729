#!/usr/bin/env bash
# The device phase of the orchestrator without a GPU: both workers are wrapped by
# fake_device_worker.py, which claims cuda and answers device requests from timed runs.
# Checks: control/probe pairs in alternating order on separate probe processes, every
# device scope stored with its position, probe diagnostics and device tables in
# results.md; a failing probe fails only its case.
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
    d = c["derived"]["scopes"]
    assert "control_batch" in d and d["control_batch"]["verdict"] != "invalid"
    assert set(d["probe_batch"]["probe_over_control"]) == {"fake-native", "fake-torch"}
EOP
grep -q "## Device control" "$T/ok/results.md" && grep -q "Per-kernel breakdown" "$T/ok/results.md" && ok || no "device tables missing in results.md"
FAKE_DEVICE_FAULT=probe "$D" run --output "$T/bad" "${ARGS[@]}" --operations add; rc=$?
[ $rc -eq 1 ] && ok || no "probe failure exit $rc"
grep -q "planted probe failure" "$T/bad/results.json" && ok || no "probe failure not recorded"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
