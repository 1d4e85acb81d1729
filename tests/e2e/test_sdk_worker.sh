#!/usr/bin/env bash
# End to end with a worker built on the C worker SDK (examples/sdk-cpu, built in the tree
# as build/examples/sdk_cpu_worker): a run of add and softmax is valid (strided views
# included) and its hello carries protocol and SDK versions; a planted wrong softmax
# fails its case with the oracle's reason; an op the worker did not register fails its
# case with the SDK's reason; a worker claiming another SDK version is refused (exit 2).
# The baseline is the native worker, so the test needs no PyTorch.
set -u
B="$1"; D="$B/dualtime"; W="$B/examples/sdk_cpu_worker"
[ -x "$W" ] || { echo "no $W (DT_BUILD_EXAMPLES off?): skip"; exit 77; }
T=$(mktemp -d); [ -n "${KEEP_T:-}" ] || trap 'rm -rf "$T"' EXIT; echo "tmp $T"
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
SMALL=(--backends cpu --row-shapes 17x257,3x40 --samples 3 --sample-ms 2 --warmup-ms 5
       --threads 1 --quiet --baseline-worker "$B/dualtime-native-worker" --candidate-worker "$W")

# 1. a clean run: every case valid; the hello carries protocol 1 and SDK version 1
"$D" run --output "$T/clean" --operations add,softmax --input-views "${SMALL[@]}"; rc=$?
[ $rc -eq 0 ] && ok || no "clean run exit $rc"
/usr/bin/python3 - "$T/clean/results.json" <<'EOP' && ok || no "clean results.json content"
import json, sys
r = json.load(open(sys.argv[1]))
ids = [c["id"] for c in r["cases"]]
assert ids == ["add_17x257_view", "add_3x40_view", "softmax_17x257_view", "softmax_3x40_view"], ids
for c in r["cases"]:
    assert c["valid"] is True, c["id"]
    im = c["impl"]["sdk-cpu"]
    assert im["status"] == "ok", (c["id"], im["error"])
    assert [k["when"] for k in im["checks"]] == ["cold", "warm"] and all(k["ok"] for k in im["checks"])
    assert len(im["samples"]["e2e_batch"]) == 3 and all(s["us"] > 0 for s in im["samples"]["e2e_batch"])
fw = {f["id"]: f for f in r["frameworks"]}
h = fw["sdk-cpu"]["hello"]
assert fw["sdk-cpu"]["role"] == "candidate" and fw["sdk-cpu"]["framework"] == "example-c"
assert h["protocol"] == 1 and h["sdk_version"] == 1, h
assert h["sdk"] == {"name": "dualtime-worker-sdk", "library_version": 1}, h["sdk"]
assert h["ops"]["registered"] == ["add", "softmax"], h["ops"]
EOP

# 2. a planted wrong softmax fails only the softmax cases, with the oracle's reason
SDK_CPU_EXAMPLE_WRONG=softmax "$D" run --output "$T/wrong" --operations add,softmax "${SMALL[@]}"; rc=$?
[ $rc -eq 1 ] && ok || no "planted wrong softmax: exit $rc, wanted 1"
/usr/bin/python3 - "$T/wrong/results.json" <<'EOP' && ok || no "planted wrong softmax: results"
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    err = c["impl"]["sdk-cpu"]["error"]
    if c["id"].startswith("softmax"):
        assert c["valid"] is False, c["id"]
        assert "check after cold call" in err and "ref" in err and "> bound" in err, err
    else:
        assert c["valid"] is True, (c["id"], err)
EOP

# 3. an op the worker did not register: that case fails with the SDK's reason
"$D" run --output "$T/unreg" --operations add,sum "${SMALL[@]}"; rc=$?
[ $rc -eq 1 ] && ok || no "unregistered op: exit $rc, wanted 1"
/usr/bin/python3 - "$T/unreg/results.json" <<'EOP' && ok || no "unregistered op: results"
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    err = c["impl"]["sdk-cpu"]["error"]
    if c["id"].startswith("sum"):
        assert c["valid"] is False and "op 'sum' is not registered by this worker" in err, err
    else:
        assert c["valid"] is True, (c["id"], err)
EOP

# 4. a worker claiming another SDK version: a clear error before any case, exit 2
SDK_CPU_EXAMPLE_SDK_VERSION=99 "$D" run --output "$T/ver" --operations add "${SMALL[@]}" 2>"$T/ver.err"; rc=$?
[ $rc -eq 2 ] && ok || no "SDK version mismatch: exit $rc, wanted 2"
grep -q "built with worker SDK version 99, this dualtime's SDK is version 1: rebuild it" "$T/ver.err" \
  && ok || no "SDK version mismatch message: $(cat "$T/ver.err")"
[ ! -e "$T/ver/results.json" ] && ok || no "SDK version mismatch wrote results"

# 5. the worker alone: answers every request with one line, bad ones with ok:false
printf '%s\n' '{"cmd":"hello","protocol":1}' 'not json' '{"cmd":"run","reps":1}' \
  '{"cmd":"prepare","op":"add","m":1,"n":1,"shm":"/x","arena_bytes":1,"buffers":[]}' \
  '{"cmd":"device","scope":"control","reps":1}' '{"cmd":"ceilings","backend":"cpu"}' \
  '{"cmd":"quit"}' | "$W" 2>/dev/null >"$T/raw.out"; rc=$?
[ $rc -eq 0 ] && ok || no "worker alone: exit $rc"
/usr/bin/python3 - "$T/raw.out" <<'EOP' && ok || no "worker alone: answers $(cat "$T/raw.out")"
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
assert len(a) == 7, a
assert a[0]["ok"] and a[0]["protocol"] == 1 and a[0]["sdk_version"] == 1
assert [x["ok"] for x in a[1:6]] == [False] * 5 and all("\n" not in x["error"] for x in a[1:6])
assert "malformed JSON" in a[1]["error"] and a[2]["error"] == "run before prepare"
assert a[3]["error"].startswith("prepare: bad shared memory name"), a[3]
assert a[6] == {"ok": True}
EOP

# 6. CUDA mode without a GPU: a fake libcuda.so.1 (device memory = host memory, filled
# with garbage until upload) and a fake timing helper (tests/sdk/); the SDK's device
# mirror, offsets, copies and device requests go through dualtime's checks
FW="$B/tests/sdk/sdk_fake_cuda_worker"
if [ -x "$FW" ]; then
  export_fake=(env LD_LIBRARY_PATH="$B/tests/sdk/fakecuda" DUALTIME_TIMING_LIB="$B/tests/sdk/libfake_dualtime_timing.so")
  CU=(--backends cuda --operations add --row-shapes 17x257,3x40 --samples 3 --sample-ms 2
      --warmup-ms 5 --quiet --baseline-worker "$FW")
  # a proxy in front of the candidate logs every device request's hold and the answer, and
  # after each held one sends a malformed hold (the worker must refuse it and go on)
  cat >"$T/proxy.py" <<'EOP'
import json, subprocess, sys
w = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
log = open(sys.argv[1], "a")
for line in sys.stdin:
    req = json.loads(line)
    w.stdin.write(line); w.stdin.flush()
    ans = w.stdout.readline()
    if req.get("cmd") == "device":
        log.write(json.dumps({"scope": req["scope"], "hold": req.get("hold", False), "ans": json.loads(ans)}) + "\n")
        if req.get("hold") is True:
            w.stdin.write(json.dumps(dict(req, hold="yes")) + "\n"); w.stdin.flush()
            log.write(json.dumps({"bad": json.loads(w.stdout.readline())}) + "\n")
        log.flush()
    sys.stdout.write(ans); sys.stdout.flush()
EOP
  "${export_fake[@]}" "$D" run --output "$T/cuda" "${CU[@]}" --input-views \
    --candidate-worker "/usr/bin/python3 $T/proxy.py $T/proxy.log $FW"; rc=$?
  [ $rc -eq 0 ] && ok || no "fake cuda run: exit $rc"
  /usr/bin/python3 - "$T/cuda/results.json" "$T/proxy.log" <<'EOP' && ok || no "fake cuda run: results"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["cases"]) == 2
for c in r["cases"]:
    assert c["valid"] is True, c["id"]
    im = c["impl"]["candidate"]
    assert im["status"] == "ok" and all(k["ok"] for k in im["checks"]), (c["id"], im["error"])
    for s in ("control_batch", "control_single", "probe_batch", "probe_single"):
        assert len(im["samples"][s]) >= 3 and all(x["us"] > 0 for x in im["samples"][s]), s
    assert im["samples"]["probe_batch"][0]["kernel_count"] == 1
h = r["frameworks"][0]["hello"]
assert h["backends"]["cuda"]["available"] and h["backends"]["cuda"]["info"]["gpu"].startswith("Fake GPU")
assert h["device_timing"] == {"available": True}, h["device_timing"]
log = [json.loads(l) for l in open(sys.argv[2])]
dev = [x for x in log if "ans" in x]; bad = [x["bad"] for x in log if "bad" in x]
held = [x["ans"] for x in dev if x["hold"] is True]; unheld = [x["ans"] for x in dev if x["hold"] is False]
assert len(held) >= 12 and len(bad) == len(held) and unheld, (len(held), len(bad), len(unheld))
assert all(a["ok"] and a["result"]["held"] is True and a["result"]["hold_method"] == "wait_value" for a in held)
assert all(a["ok"] and a["result"]["held"] is False and "hold_method" not in a["result"] for a in unheld)
assert all(a["ok"] is False and a["error"] == "device: 'hold' must be true or false" for a in bad)
EOP
  # out of device memory: prepare fails with the driver's reason, the run goes on
  FAKE_CUDA_FAIL_ALLOC=1 "${export_fake[@]}" "$D" run --output "$T/oom" "${CU[@]}" --no-device-timing --candidate-worker "$FW"; rc=$?
  [ $rc -eq 1 ] && ok || no "fake cuda out of memory: exit $rc, wanted 1"
  grep -q "cuMemAlloc (the arena's device mirror) failed: CUDA error 2 (out of memory)" "$T/oom/results.json" \
    && ok || no "fake cuda out of memory: no reason in results.json"
  # no timing helper: device requests answer "device timing not offered"
  env LD_LIBRARY_PATH="$B/tests/sdk/fakecuda" DUALTIME_TIMING_LIB=/nonexistent/libdualtime_timing.so \
    "$D" run --output "$T/notiming" "${CU[@]}" --no-device-timing --candidate-worker "$FW" --baseline-worker "$FW"; rc=$?
  [ $rc -eq 0 ] && ok || no "fake cuda without the helper: exit $rc"
  grep -q '"reason": *"device timing not offered: no timing helper' "$T/notiming/results.json" \
    && ok || no "fake cuda without the helper: hello reason"
else
  echo "no $FW: CUDA-mode checks skipped"
fi

ls /dev/shm 2>/dev/null | grep -q "^dualtime-$$-" && no "shared memory left" || ok
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
