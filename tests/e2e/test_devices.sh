#!/usr/bin/env bash
# `dualtime run --devices` without a GPU: NVML is the fake library of tests/clocks with
# FAKE_NVML_DEVICES=2 (two GPUs, UUIDs GPU-0000000<i>-fake, PCI bus 0x1b + i) and both
# workers are wrapped by fake_device_worker.py (they claim cuda), each wrapped once more
# by a logger that writes the GPU it was given (CUDA_VISIBLE_DEVICES, DUALTIME_NVML_DEVICE)
# and when it started and ended. Checks: the two devices' runs overlap in time (they ran
# concurrently), each saw only its own GPU, the merged results.json holds every planned
# case once in plan order with its device (index, name, UUID) and clocks, the devices table
# has both GPUs with their own ceilings and disjoint CPU shares (the workers of each ran
# inside its share), --replicate gives one p50 per device and a spread, results.md has the
# devices section; `--devices 0` runs the same cases as a plain run; bad values exit 2
# naming the flag and the value and leave nothing behind.
set -u
B="$(cd "$1" && pwd)"; D="$B/dualtime"; HERE="$(cd "$(dirname "$0")" && pwd)"
FAKE="$B/tests/clocks/libdt_fake_nvml.so"
[ -f "$FAKE" ] || { echo "no fake NVML library ($FAKE): skip"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
export DT_NVML_LIBRARY="$FAKE" FAKE_NVML_DEVICES=2 FAKE_CEILINGS=1 DEVLOG="$T/workers.log"
cat > "$T/logw.sh" <<'EOW'
#!/usr/bin/env bash
[ "${FAIL_NVML_DEVICE:-x}" = "${DUALTIME_NVML_DEVICE:-}" ] && { echo "planted start failure" >&2; exit 3; }
echo "start ${CUDA_VISIBLE_DEVICES:-none} ${DUALTIME_NVML_DEVICE:-none} ${DUALTIME_CUDA_DEVICE:-none} $(date +%s%N)" >> "$DEVLOG"
"$@"; rc=$?
echo "end ${CUDA_VISIBLE_DEVICES:-none} ${DUALTIME_NVML_DEVICE:-none} ${DUALTIME_CUDA_DEVICE:-none} $(date +%s%N)" >> "$DEVLOG"
exit $rc
EOW
chmod +x "$T/logw.sh"
W="$T/logw.sh $HERE/fake_device_worker.py $B/dualtime-native-worker"
ARGS=(--operations add,sum,softmax,gemm --row-shapes 17x257,1x127 --gemm-shapes 32x32x32
      --samples 3 --rounds 1 --sample-ms 2 --warmup-ms 5 --threads 1 --seed 7
      --candidate-worker "$W" --baseline-worker "$W")
# expect_refusal NAME WORDS... -- CMD...: exit 2, stderr holding every word, no $T/bad
expect_refusal() {
  local name="$1"; shift; local words=()
  while [ "$1" != "--" ]; do words+=("$1"); shift; done; shift
  "$@" 2>"$T/err" >/dev/null; local rc=$?
  [ $rc -eq 2 ] && ok || no "$name: exit $rc, not 2 ($(cat "$T/err"))"
  for w in "${words[@]}"; do
    grep -qF -- "$w" "$T/err" && ok || no "$name: message lacks '$w': $(cat "$T/err")"
  done
  [ ! -e "$T/bad" ] && ok || { no "$name: left $T/bad behind"; rm -rf "$T/bad"; }
}

# 1. two devices at once, add_1x127 and gemm replicated on both (a DUALTIME_CUDA_DEVICE of
#    the shell must not reach the workers: each sees its one GPU as CUDA device 0)
DUALTIME_CUDA_DEVICE=1 "$D" run --devices 0,1 --replicate add_1x127,gemm_32x32x32 --output "$T/two" "${ARGS[@]}" \
  2>"$T/two.err"; rc=$?
[ $rc -eq 0 ] && ok || no "--devices 0,1 exit $rc: $(tail -5 "$T/two.err")"
grep -qF '[gpu 1]' "$T/two.err" && ok || no "no per-device start line"
! grep -qF '[devices]' "$T/two.err" && ok || no "a progress line in a pipe"
if command -v script >/dev/null; then # on a terminal: case rounds done, elapsed, ETA
  printf '%q ' "$D" run --devices 0,1 --output "$T/tty" "${ARGS[@]}" >"$T/tty.sh"
  script -qec "bash $T/tty.sh" "$T/tty.log" >/dev/null 2>&1
  grep -qE '\[devices\] [0-9]+/7 case rounds, [0-9] GPUs? running, elapsed [0-9]+m[0-9]{2}s  ETA' "$T/tty.log" &&
    [ -f "$T/tty/results.json" ] && ok || no "no progress line on a terminal: $(tr '\r' '\n' <"$T/tty.log" | tail -3)"
fi
/usr/bin/python3 - "$T/two" "$DEVLOG" <<'EOP' && ok || no "two-device run"
import json, sys
d, log = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/results.json"))
plan = json.load(open(d + "/devices/plan.json"))
ids = [c["id"] for c in plan["cases"]]
assert len(ids) == 7 and [c["id"] for c in r["cases"]] == ids, [c["id"] for c in r["cases"]]
assert plan["shards"] == 2
devs = r["devices"]
assert [x["index"] for x in devs] == [0, 1] and [x["shard"] for x in devs] == [0, 1], devs
for x in devs:
    assert x["uuid"] == "GPU-%08x-fake" % x["index"] and x["name"] == "Fake H200", x
    assert x["pci_bus_id"] == "00000000:%02X:00.0" % (0x1b + x["index"]), x
    assert x["ceilings"]["copy_gbps"] == 3000.0, x["ceilings"]
    assert x["exit_status"] == 0 and x["dir"] == "devices/gpu-%d" % x["index"], x
    assert x["cases"] == len(ids[x["shard"]::2]) and x["valid"] == x["cases"], x
for k, c in enumerate(r["cases"]):
    dev = c["device"]
    assert c["shard"] == k % 2 and dev["index"] == c["shard"], (c["id"], c["shard"], dev)
    assert dev["uuid"] == "GPU-%08x-fake" % dev["index"] and dev["name"] == "Fake H200", dev
    assert c["valid"] is True and c["clocks"]["rounds"][0]["before"]["sm_mhz"] == 1980, c["id"]
assert r["complete"] is True and r["derived"]["counts"]["valid"] == 7
# each device's run: its own NVML device, its own GPU only, workers inside its CPU share
cpus = []
for x in devs:
    s = json.load(open("%s/%s/results.json" % (d, x["dir"])))
    n = s["environment"]["nvml"]
    assert n["device_index"] == x["index"] and n["uuid"] == x["uuid"], n
    if x["cpus"]:
        share = set()
        for part in x["cpus"].split(","):
            a, _, b = part.partition("-")
            share |= set(range(int(a), int(b or a) + 1))
        cpus.append(share)
        for f in s["frameworks"]:
            assert set(f["hello"]["fake_cpus"]) <= share, (x["index"], f["hello"]["fake_cpus"], share)
if len(cpus) == 2:
    assert not (cpus[0] & cpus[1]), cpus
# concurrency: each device's workers started before the other's ended
spans = {}
for line in open(log):
    what, vis, nvml, cuda, ns = line.split()
    assert vis == "GPU-%08x-fake" % int(nvml), line  # a child sees its own GPU only
    assert cuda == "0", line                          # as CUDA device 0
    lo, hi = spans.get(nvml, (1 << 62, 0))
    spans[nvml] = (min(lo, int(ns)), max(hi, int(ns)))
assert set(spans) == {"0", "1"}, spans
(a0, b0), (a1, b1) = spans["0"], spans["1"]
assert a0 < b1 and a1 < b0, ("not concurrent", spans)
# replicated cases: one p50 per device and a spread
reps = r["replicas"]
cases = {(q["case"], q["impl"], q["scope"]) for q in reps}
for cid in ("add_1x127", "gemm_32x32x32"):
    for impl in [f["id"] for f in r["frameworks"]]:
        assert (cid, impl, "e2e_batch") in cases and (cid, impl, "control_batch") in cases, cases
for q in reps:
    assert len(q["us"]) == 2 and all(u > 0 for u in q["us"]), q
    lo, hi = min(q["us"]), max(q["us"])
    assert abs(q["spread"] - (hi - lo) / lo) < 1e-9, q
EOP
grep -q '^## Devices (--devices)' "$T/two/results.md" && ok || no "no devices section"
grep -q '^| 1 | Fake H200 | GPU-00000001-fake' "$T/two/results.md" && ok || no "no row of device 1"
grep -q 'Replicated cases' "$T/two/results.md" && ok || no "no replicated cases table"
"$D" report "$T/two/results.json" --output "$T/again.md" 2>/dev/null && ok || no "report of a devices run"
cmp -s "$T/two/results.md" "$T/again.md" && ok || no "report of the devices run differs from its results.md"

# 2. --devices 0 is a plain run's cases on device 0
"$D" run --devices 0 --output "$T/one" "${ARGS[@]}" --quiet 2>"$T/one.err"; rc=$?
[ $rc -eq 0 ] && [ ! -s "$T/one.err" ] && ok || no "--devices 0 exit $rc: $(cat "$T/one.err")"
"$D" run --output "$T/plain" "${ARGS[@]}" --quiet; rc=$?
[ $rc -eq 0 ] && ok || no "plain run exit $rc"
/usr/bin/python3 - "$T/one/results.json" "$T/plain/results.json" <<'EOP' && ok || no "--devices 0 vs plain"
import json, sys
one, plain = (json.load(open(p)) for p in sys.argv[1:3])
def key(c): return (c["id"], [(i["name"], i["sha256"]) for i in c["inputs"]], c["valid"])
assert [key(c) for c in one["cases"]] == [key(c) for c in plain["cases"]]
assert all(c["device"]["index"] == 0 for c in one["cases"]) and len(one["devices"]) == 1
assert all("device" not in c for c in plain["cases"]) and "devices" not in plain
assert one["settings"]["samples"] == plain["settings"]["samples"] == 3
EOP

# a device whose workers cannot start: no merged results, the other device's run kept
FAIL_NVML_DEVICE=1 "$D" run --devices 0,1 --output "$T/broken" "${ARGS[@]}" 2>"$T/broken.err"; rc=$?
[ $rc -ne 0 ] && ok || no "a failed device's run: exit 0"
grep -qF '[gpu 1] left no results' "$T/broken.err" && ok || no "no message naming gpu 1: $(tail -3 "$T/broken.err")"
[ ! -e "$T/broken/results.json" ] && [ -f "$T/broken/devices/gpu-0/results.json" ] && ok ||
  no "a failed device: merged results written, or the other device's run lost"
"$D" run --resume "$T/two" --retry-failed 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -qF "is a --devices run" "$T/err" && ok || no "resume of a devices run: exit $rc: $(cat "$T/err")"

# Ctrl-C: passed on to every device's run, which keeps what it has (marked interrupted)
"$D" run --devices 0,1 --output "$T/int" "${ARGS[@]}" --samples 9 --sample-ms 20 --warmup-ms 50 \
  --rounds 3 --row-shapes 17x257,1x127,256x4096 2>"$T/int.err" & P=$!
for _ in $(seq 100); do [ -f "$T/int/devices/gpu-1/results.json" ] && [ -f "$T/int/devices/gpu-0/results.json" ] && break; sleep 0.1; done
sleep 1; kill -INT $P; wait $P; rc=$?
[ $rc -eq 1 ] && [ ! -e "$T/int/results.json" ] && ok || no "interrupted devices run: exit $rc: $(tail -3 "$T/int.err")"
/usr/bin/python3 - "$T/int" <<'EOP' && ok || no "interrupted device runs not marked"
import json, sys
for i in (0, 1):
    s = json.load(open("%s/devices/gpu-%d/results.json" % (sys.argv[1], i)))
    assert s["complete"] is False and s["interrupted"] == {"signal": 15}, (i, s.get("interrupted"))
EOP
sleep 0.5
! pgrep -f -- "$T/int/" >/dev/null && ok || no "processes of the interrupted run are left"

# 3. refusals: exit 2 naming the flag and the value, nothing written
expect_refusal "not an index" "--devices" "'0,x'" -- "$D" run --devices 0,x --output "$T/bad" "${ARGS[@]}"
expect_refusal "twice" "--devices" "device 1 is given twice" -- "$D" run --devices 1,1 --output "$T/bad" "${ARGS[@]}"
expect_refusal "absent device" "--devices" "no device 5" "2 GPUs" -- "$D" run --devices 5 --output "$T/bad" "${ARGS[@]}"
expect_refusal "empty" "--devices" "empty" -- "$D" run --devices= --output "$T/bad" "${ARGS[@]}"
expect_refusal "cpu" "--devices" "--backends cpu" -- "$D" run --devices 0 --backends cpu --output "$T/bad" "${ARGS[@]}"
expect_refusal "replicate unknown" "--replicate" "'nosuch_1x1'" -- \
  "$D" run --devices 0,1 --replicate add_1x127,nosuch_1x1 --output "$T/bad" "${ARGS[@]}"
expect_refusal "replicate alone" "--replicate" "--devices" -- "$D" run --replicate all --output "$T/bad" "${ARGS[@]}"
expect_refusal "bad run flag" "--samples" -- "$D" run --devices 0 --samples x --output "$T/bad" "${ARGS[@]}"
mkdir "$T/exists"
"$D" run --devices 0 --output "$T/exists" "${ARGS[@]}" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -qF "already exists" "$T/err" && ok || no "existing --output: exit $rc"
# NVML absent: only device 0 can be named
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1'; then
  DT_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 expect_refusal "no NVML" "--devices" "'1'" "NVML" -- \
    "$D" run --devices 1 --output "$T/bad" "${ARGS[@]}"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
