#!/usr/bin/env bash
# GPU clocks through the whole run without a GPU: both workers are wrapped by
# fake_device_worker.py (they claim cuda) and NVML is the fake library of tests/clocks
# (DT_NVML_LIBRARY). Checks: environment.nvml is described and available, every case
# has one clock round per round with both readings, the summary and clocks_moved follow,
# results.md has the GPU clocks section; with NVML absent the run records why.
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
DT_NVML_LIBRARY="$FAKE" FAKE_NVML_TEMP=52 "$D" run --output "$T/ok" "${ARGS[@]}"; rc=$?
[ $rc -eq 0 ] && ok || no "run with fake NVML exit $rc"
/usr/bin/python3 - "$T/ok/results.json" <<'EOP' && ok || no "clocks in results.json"
import json, sys
r = json.load(open(sys.argv[1]))
n = r["environment"]["nvml"]
assert n["available"] is True and n["reason"] is None, n
assert n["name"] == "Fake H200" and n["pci_bus"] == 0x1b and "fake_nvml" in n["library"], n
assert len(r["cases"]) == 2
for c in r["cases"]:
    cl = c["clocks"]
    assert [x["round"] for x in cl["rounds"]] == [0, 1], cl["rounds"]
    for x in cl["rounds"]:
        assert x["before"]["sm_mhz"] == 1980 and x["after"]["temp_c"] == 52, x
        assert x["moved"] is False and x["why"] == "", x
    assert cl["round"] == 1 and cl["rounds_moved"] == 0 and c["clocks_moved"] is False, cl
EOP
grep -q "^## GPU clocks (NVML)" "$T/ok/results.md" && ok || no "no GPU clocks section"
# NVML absent (only where no real one would be found after the named library)
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1'; then
  DT_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$D" run --output "$T/none" "${ARGS[@]}" \
    --operations add 2>/dev/null; rc=$?
  [ $rc -eq 0 ] && ok || no "run without NVML exit $rc"
  /usr/bin/python3 - "$T/none/results.json" <<'EOP' && ok || no "absent NVML not recorded"
import json, sys
r = json.load(open(sys.argv[1]))
n = r["environment"]["nvml"]
assert n["available"] is False and "NVML" in n["reason"], n
assert all("clocks" not in c for c in r["cases"])
EOP
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
