#!/usr/bin/env bash
# End to end on the CPU (issue 17 item 7, docs/anti-cheat.md): every anti-cheat check
# catches its planted cheater with its named reason, and honest workers pass every check.
#  - planted cheats of the native worker's CPU backend (DUALTIME_PLANT_CHEAT=<kind>:add,
#    workers/native/dt_cpu_plant.h), run against the honest C SDK worker: cached ->
#    cheat.cached_result, skip -> cheat.skipped_work, async -> cheat.side_stream, lazy ->
#    cheat.aliased_output, physics -> cheat.faster_than_physics (a case over 4x the
#    largest CPU cache), and the input writer DUALTIME_FAULT=input:add ->
#    cheat.wrote_input: each fails its case (exit 1, no verdict) naming the check in
#    results.json (error and anti_cheat.checks) and results.md; the SDK baseline passes;
#    cached, skip and async again behind the fake device worker (the device-mirror path,
#    device samples checked too);
#  - the PyTorch worker's planted view result (DUALTIME_TORCH_PLANT=aliased_output) ->
#    cheat.aliased_output (skipped without torch);
#  - honest native and torch workers: every check passed or not applicable, none caught.
set -u
B="$1"; D="$B/dualtime"; W="$B/examples/sdk_cpu_worker"
[ -x "$W" ] || { echo "no $W (DT_BUILD_EXAMPLES off?): skip"; exit 77; }
T=$(mktemp -d); [ -n "${KEEP_T:-}" ] || trap 'rm -rf "$T"' EXIT; echo "tmp $T"
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
SMALL=(--backends cpu --operations add --row-shapes 17x257 --samples 4 --sample-ms 2
       --warmup-ms 5 --threads 1 --quiet --baseline-worker "$W"
       --candidate-worker "$B/dualtime-native-worker")

# results.json of DIR: the candidate (impl CAND) of every case failed with check NAME
# caught, no verdict, the baseline (BASE) caught nothing; results.md names the check.
caught() { # caught DIR NAME CAND BASE
  /usr/bin/python3 - "$1/results.json" "$2" "$3" "$4" <<'EOP' || return 1
import json, sys
r = json.load(open(sys.argv[1])); name, cand, base = sys.argv[2:5]
assert r["cases"], "no case"
for c in r["cases"]:
    assert c["valid"] is False, c["id"]
    im = c["impl"][cand]
    assert im["status"] == "failed" and name + ":" in im["error"], im["error"]
    ac = im["anti_cheat"]
    assert ac["checks"][name]["status"] == "caught", ac
    assert ac["checks"][name]["note"], ac
    others = [k for k, v in ac["checks"].items() if v["status"] == "caught" and k != name]
    assert not others, others
    vs = c["derived"]["scopes"].get("e2e_batch", {}).get("vs_baseline", {}).get(cand, {})
    assert "ratio" not in vs or vs["verdict"] == "invalid", vs
    b = c["impl"][base]
    assert b["status"] == "ok", b["error"]
    assert all(v["status"] in ("passed", "not_applicable") for v in b["anti_cheat"]["checks"].values())
EOP
  grep -q -- "$2" "$1/results.md"
}

# 1. each planted cheat of the native CPU backend, against the honest SDK worker
plant() { # plant KIND NAME [extra args]
  local kind="$1" name="$2"; shift 2
  DUALTIME_PLANT_CHEAT="$kind:add" "$D" run --output "$T/$kind" "${SMALL[@]}" "$@"; local rc=$?
  [ $rc -eq 1 ] || { no "$kind: exit $rc, wanted 1"; return; }
  caught "$T/$kind" "$name" native sdk-cpu && ok || no "$kind: $name not caught as named"
}
plant cached cheat.cached_result
plant skip cheat.skipped_work
plant async cheat.side_stream
plant lazy cheat.aliased_output
# faster than physics: a case over 4x the largest cache (all its instances); the plant computes only the
# first call of a batch, so batches calibrate to many calls
CACHE=$(/usr/bin/python3 - <<'EOP'
import glob, os
def count(lst):  # a sysfs CPU list, "0-3,8"
    n = 0
    for t in lst.strip().split(","):
        a, _, b = t.partition("-")
        n += int(b) - int(a) + 1 if b else 1
    return n
best = 0
for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
    x = open(d + "/size").read().strip()
    v = int(x[:-1]) * (1024 if x[-1] in "Kk" else 1 << 20)
    share = count(open(d + "/shared_cpu_list").read())
    v *= -(-os.cpu_count() // share)
    best = max(best, v)
print(best or 32 << 20)
EOP
)
ROWS=$(( (CACHE * 9 / 2) / (3 * 4 * 4096) + 1 ))  # add: 3 x 4 bytes per element, 4.5 x cache
# (--sample-ms 200: even a call slowed by a loaded host leaves room for R to grow)
plant physics cheat.faster_than_physics --row-shapes "${ROWS}x4096" --sample-ms 200 --samples 3

# 1b. the device-mirror path (the output is read after download, re-read while poisoned):
# the same plants behind the fake device worker (--backends cuda, cpu underneath)
H="$(cd "$(dirname "$0")" && pwd)"
MIRROR=(--backends cuda --device-timing --operations add --row-shapes 17x257 --samples 4
        --rounds 1 --sample-ms 2 --warmup-ms 5 --threads 1 --quiet
        --candidate-worker "$H/fake_device_worker.py $B/dualtime-native-worker"
        --baseline-worker "$H/fake_device_worker.py $W")
mirror() { # mirror KIND NAME
  DUALTIME_PLANT_CHEAT="$1:add" "$D" run --output "$T/m-$1" "${MIRROR[@]}"; local rc=$?
  [ $rc -eq 1 ] && caught "$T/m-$1" "$2" fake-native fake-sdk-cpu && ok ||
    no "mirror $1: exit $rc or $2 not named"
}
mirror cached cheat.cached_result
mirror skip cheat.skipped_work
mirror async cheat.side_stream
# an input written at a timed sample (the cold call passes): directly, and behind the fake
# device worker, whose honest samples are checked by digest (the output's slot copied
# back, the rest proved unchanged by the worker's dt-mix64-1 digest): a changed input must
# break the digest, and the whole arena is then read and the change named
plant scratch cheat.wrote_input
mirror scratch cheat.wrote_input
/usr/bin/python3 - "$T/m-scratch/results.json" <<'EOP' && ok || no "mirror scratch: not caught at its first timed sample"
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    b = c["impl"]["fake-sdk-cpu"]["anti_cheat"]  # the SDK worker offers no digest
    assert b.get("digest_checks", 0) == 0, b
    # the write shows at the first checked sample, whose inputs only the digest looks at
    # (a digest taken as matching lets it through to the whole-arena warm check)
    im = c["impl"]["fake-native"]
    bad = [k["when"] for k in im["checks"] if not k["ok"]]
    assert "check after timed sample" in im["error"] and bad == ["sample e2e_batch #0 (input set 0)"], (im["error"], bad)
EOP
# honest workers behind the fake device worker: every checked sample by digest (the
# PyTorch worker's int64 tensor digest must equal the orchestrator's C digest, else the
# whole arena is read and digest_checks stays below sample_checks); DUALTIME_CHEAT_DIGEST=0
# copies the whole arena every time; any other value is refused (exit 2)
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  for dg in 1 0; do
    DUALTIME_CHEAT_DIGEST=$dg "$D" run --output "$T/dg$dg" "${MIRROR[@]}" --operations add,softmax \
      --baseline-worker "$H/fake_device_worker.py /usr/bin/python3 $B/../workers/torch/dualtime_torch_worker.py"
    rc=$?
    /usr/bin/python3 - "$T/dg$dg/results.json" "$dg" <<'EOP' && [ $rc -eq 0 ] && ok || no "digest=$dg: exit $rc or digest_checks wrong"
import json, sys
r = json.load(open(sys.argv[1])); on = sys.argv[2] == "1"
assert len(r["cases"]) == 2
for c in r["cases"]:
    assert c["valid"] is True, c["id"]
    for fw, im in c["impl"].items():
        ac = im["anti_cheat"]
        assert ac["sample_checks"] >= 4, (fw, ac)
        assert ac.get("digest_checks", 0) == (ac["sample_checks"] if on else 0), (fw, ac)
EOP
  done
else echo "no torch for /usr/bin/python3: digest run of the PyTorch worker skipped"; fi
DUALTIME_CHEAT_DIGEST=yes "$D" run --output "$T/dgbad" "${MIRROR[@]}" 2>"$T/dgbad.err"; rc=$?
[ $rc -eq 2 ] && grep -q "DUALTIME_CHEAT_DIGEST=yes: expected 0 or 1" "$T/dgbad.err" && [ ! -e "$T/dgbad/results.json" ] &&
  ok || no "DUALTIME_CHEAT_DIGEST=yes: exit $rc, wanted 2 naming it, nothing written"

# 2. the input writer (the native worker's fault injection): caught at the cold call
DUALTIME_FAULT=input:add "$D" run --output "$T/input" "${SMALL[@]}"; rc=$?
[ $rc -eq 1 ] && caught "$T/input" cheat.wrote_input native sdk-cpu && ok ||
  no "input writer: exit $rc or cheat.wrote_input not named"

# 3. no planted cheat: the SDK and native workers pass every check (a physics case too)
"$D" run --output "$T/honest" "${SMALL[@]}" --row-shapes "17x257,${ROWS}x4096" --sample-ms 40 \
  --samples 3; rc=$?
[ $rc -eq 0 ] || no "honest native vs SDK: exit $rc"
/usr/bin/python3 - "$T/honest/results.json" <<'EOP' && ok || no "honest native vs SDK: checks"
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    assert c["valid"] is True, c["id"]
    for fw, im in c["impl"].items():
        ac = im["anti_cheat"]
        assert ac["input_sets"] == 2 and ac["sample_checks"] >= 4, (fw, ac)  # 4: large arenas
        st = {k: v["status"] for k, v in ac["checks"].items()}
        assert len(st) == 6 and all(s in ("passed", "not_applicable") for s in st.values()), st
        assert st["cheat.cached_result"] == st["cheat.skipped_work"] == "passed", st
        assert st["cheat.aliased_output"] == "passed", st  # computes in the shared arena
    big = c["m"] * c["n"] > 1 << 20
    for fw, im in c["impl"].items():  # the big case is within the bytes rule's reach
        ph = im["anti_cheat"]["checks"]["cheat.faster_than_physics"]
        assert ph["status"] == "passed", (c["id"], fw, ph)
        assert ("n/a" not in ph["note"].split("bytes")[1].split(",")[0]) == big, ph
EOP

# 4. PyTorch: honest (every check passes) and a planted view result (cheat.aliased_output)
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  TS=(--backends cpu --operations add,layernorm --row-shapes 17x257 --samples 4 --sample-ms 2
      --warmup-ms 5 --threads 1 --quiet --python /usr/bin/python3)
  "$D" run --output "$T/torch" "${TS[@]}"; rc=$?
  [ $rc -eq 0 ] || no "honest torch vs native: exit $rc"
  /usr/bin/python3 - "$T/torch/results.json" <<'EOP' && ok || no "honest torch vs native: checks"
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    assert c["valid"] is True, c["id"]
    for fw in ("torch", "native"):
        ac = c["impl"][fw]["anti_cheat"]
        assert ac["sample_checks"] >= 8, ac
        assert all(v["status"] in ("passed", "not_applicable") for v in ac["checks"].values()), ac
EOP
  DUALTIME_TORCH_PLANT=aliased_output "$D" run --output "$T/tview" "${TS[@]}" --operations layernorm; rc=$?
  [ $rc -eq 1 ] && caught "$T/tview" cheat.aliased_output torch native && ok ||
    no "torch view result: exit $rc or cheat.aliased_output not named"
else
  echo "torch not importable by /usr/bin/python3: PyTorch part skipped"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
