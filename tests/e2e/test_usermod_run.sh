#!/usr/bin/env bash
# End to end with the user implementations of issue 17, worker side, on the CPU:
# 1. `dualtime run` with the PyTorch worker serving examples/torch-module/ops.py
#    (--module) as the candidate and the native worker as the baseline: exit 0, every case
#    valid (views included), the module's policy "preallocated", its SHA-256 in the record;
# 2. the native worker with --kernel-dir: examples/cuda-dir lists add and softmax (files
#    and hashes), cpu unavailable, gemm answered "unsupported"; a missing directory makes
#    hello "unavailable" with the reason; a run on cpu with it is refused before any case
#    (exit 2).
# Needs torch for /usr/bin/python3 (DT_TORCH_PYTHON) for part 1; skips it otherwise.
set -u
B="$1"; D="$B/dualtime"; S="$(cd "$(dirname "$0")/../.." && pwd)"
PY="${DT_TORCH_PYTHON:-/usr/bin/python3}"
T=$(mktemp -d); [ -n "${KEEP_T:-}" ] || trap 'rm -rf "$T"' EXIT; echo "tmp $T"
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }

# 1. a torch-code module through the orchestrator
if "$PY" -c 'import torch' 2>/dev/null; then
    "$D" run --output "$T/mod" --backends cpu --operations add,softmax --row-shapes 17x257,3x40 \
        --input-views --samples 3 --sample-ms 2 --warmup-ms 5 --threads 1 --quiet \
        --candidate-worker "$PY $B/dualtime_torch_worker.py --module $S/examples/torch-module/ops.py" \
        --baseline-worker "$B/dualtime-native-worker"; rc=$?
    [ $rc -eq 0 ] && ok || no "module run exit $rc"
    "$PY" - "$T/mod/results.json" "$S/examples/torch-module/ops.py" <<'EOP' && ok || no "module results.json"
import hashlib, json, sys
r = json.load(open(sys.argv[1]))
sha = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert len(r["cases"]) == 4, [c["id"] for c in r["cases"]]
for c in r["cases"]:
    assert c["valid"] is True, c["id"]
    im = c["impl"]["py-module"]
    assert im["status"] == "ok", (c["id"], im.get("error"))
    assert im["output_policy"] == "preallocated", im["output_policy"]
    assert all(k["ok"] for k in im["checks"]), im["checks"]
assert sha in json.dumps(r), "the module's SHA-256 is not in results.json"
print("module run: 4 valid cases, sha256 recorded")
EOP
else
    echo "note: no torch for $PY: module run not tested"
fi

# 2. the native worker's --kernel-dir, over the protocol
ask() { printf '%s\n' "$@" | "$B/dualtime-native-worker" "${KD[@]}" 2>/dev/null; }
KD=(--kernel-dir "$S/examples/cuda-dir")
ask '{"cmd":"hello"}' '{"cmd":"prepare","op":"gemm","backend":"cuda"}' \
    '{"cmd":"prepare","op":"add","backend":"cpu"}' > "$T/kd.txt"
"$PY" - "$T/kd.txt" "$S/examples/cuda-dir" <<'EOP' && ok || no "kernel-dir hello/prepare"
import hashlib, json, os, sys
h, gemm, cpu = [json.loads(l) for l in open(sys.argv[1])]
d = sys.argv[2]
assert h["ok"] and h["worker"] == "cuda-dir" and "unavailable" not in h, h
im = h["impl"]
assert im["kind"] == "cuda-dir" and im["path"] == d and im["ops"] == ["add", "softmax"], im
for f in im["files"]:
    assert f["sha256"] == hashlib.sha256(open(os.path.join(d, f["name"]), "rb").read()).hexdigest(), f
assert "gemm" in im["unsupported"] and im["sha256"] in h["framework_version"], h
assert h["backends"]["cpu"]["available"] is False, h["backends"]
assert not gemm["ok"] and gemm.get("unsupported") is True and "gemm.cu" in gemm["error"], gemm
assert not cpu["ok"] and "cuda backend only" in cpu["error"], cpu
print("kernel-dir: hello and refusals as documented")
EOP
KD=(--kernel-dir "$T/no-such-dir")
ask '{"cmd":"hello"}' > "$T/kd2.txt"
"$PY" - "$T/kd2.txt" <<'EOP' && ok || no "kernel-dir missing: unavailable"
import json, sys
h = json.loads(open(sys.argv[1]).read())
assert h["ok"] and "no such directory" in h.get("unavailable", ""), h
assert h["backends"]["cuda"]["available"] is False and "no such directory" in h["backends"]["cuda"]["reason"], h
EOP
"$D" run --output "$T/kdrun" --backends cpu --operations add --row-shapes 3x40 --quiet \
    --candidate-worker "$B/dualtime-native-worker --kernel-dir $T/no-such-dir" \
    --baseline-worker "$B/dualtime-native-worker" 2> "$T/kdrun.err"; rc=$?
# refused before the run: the hello's unavailable (missing dir), or no cpu backend
[ $rc -eq 2 ] && grep -Eq -- '--candidate-worker: .*no such directory|cuda backend only' "$T/kdrun.err" && ok \
    || no "a cpu run with --kernel-dir must be refused (exit $rc): $(cat "$T/kdrun.err")"

echo "test_usermod_run: $pass passed, $fail failed"
[ $fail -eq 0 ]
