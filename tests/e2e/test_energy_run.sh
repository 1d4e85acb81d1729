#!/usr/bin/env bash
# Energy next to time (issue 15) through a whole run without a GPU: both workers wrapped
# by fake_device_worker.py (they claim cuda), NVML = the fake of tests/clocks whose energy
# counter grows by FAKE_NVML_ENERGY_STEP_MJ at every read. Every third e2e batch sample (index 0, 3, 6) is one
# window (two reads), so every case x implementation must record joules = step x windows,
# j_per_call = joules / calls, avg_power_w = joules / window seconds, and results.md its
# "Energy (NVML)" table. A fake GPU without the counter and the cpu backend record null
# with their reasons.
set -u
B="$1"; D="$B/dualtime"; HERE="$(cd "$(dirname "$0")" && pwd)"
FAKE="$B/tests/clocks/libdt_fake_nvml.so"
[ -f "$FAKE" ] || { echo "no fake NVML library ($FAKE): skip"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
ARGS=(--backends cuda --operations add,sum --row-shapes 17x257 --samples 3 --rounds 2
      --sample-ms 2 --warmup-ms 5 --threads 1 --quiet
      --candidate-worker "$HERE/fake_device_worker.py $B/dualtime-native-worker"
      --baseline-worker "$HERE/fake_device_worker.py $B/dualtime-native-worker")
DT_NVML_LIBRARY="$FAKE" FAKE_NVML_ENERGY_STEP_MJ=40 "$D" run --output "$T/ok" "${ARGS[@]}"; rc=$?
[ $rc -eq 0 ] && ok || no "run with fake NVML exit $rc"
/usr/bin/python3 - "$T/ok/results.json" <<'EOP' && ok || no "energy in results.json"
import json, math, sys
r = json.load(open(sys.argv[1]))
prime = r["settings"].get("prime", 1)
for c in r["cases"]:
    for fw, im in c["impl"].items():
        e = im["energy"]
        batch = [s for s in im["samples"]["e2e_batch"] if s["index"] % 3 == 0]  # DT_RUN_ENERGY_EVERY
        calls = sum(s["reps"] + prime for s in batch)
        assert e["calls"] == calls, (c["id"], fw, e, calls)
        assert math.isclose(e["joules"], 0.040 * len(batch), rel_tol=1e-9), (e, len(batch))
        assert math.isclose(e["j_per_call"], e["joules"] / calls, rel_tol=1e-9), e
        assert math.isclose(e["avg_power_w"], e["joules"] / e["window_s"], rel_tol=1e-9), e
        assert e["window_s"] > 0 and "reason" not in e, e
EOP
grep -q "^## Energy (NVML)" "$T/ok/results.md" && grep -qE "^\| add_17x257 \| [a-z-]+ \| [0-9.e+-]+ \| [0-9.e+-]+ \| [0-9.e+-]+ \|$" "$T/ok/results.md" && ok ||
  no "no energy table in results.md: $(grep -A4 'Energy' "$T/ok/results.md")"
"$D" report "$T/ok/results.json" --output "$T/again.md" 2>/dev/null &&
  diff <(sed -n '/^## Energy/,/^## /p' "$T/ok/results.md") <(sed -n '/^## Energy/,/^## /p' "$T/again.md") >/dev/null &&
  ok || no "energy does not survive results.json -> report"
# a GPU without the counter: null with the reason
DT_NVML_LIBRARY="$FAKE" FAKE_NVML_ENERGY=fail "$D" run --output "$T/none" "${ARGS[@]}"; rc=$?
[ $rc -eq 0 ] && ok || no "run without energy counter exit $rc"
/usr/bin/python3 - "$T/none/results.json" <<'EOP' && ok || no "null energy with reason"
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    for fw, im in c["impl"].items():
        e = im["energy"]
        assert e["j_per_call"] is None and e["avg_power_w"] is None, e
        assert e["reason"].startswith("NVML has no energy counter"), e
EOP
grep -q "^Not measured: NVML has no energy counter" "$T/none/results.md" && ok || no "no reason in results.md"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
