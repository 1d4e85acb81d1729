#!/usr/bin/env bash
# Interrupt a run (kill -9 of the orchestrator, then SIGTERM) and finish it with
# `dualtime run --resume DIR`: finished cases are kept as they were, unfinished ones are
# run again with the same inputs, positions stay unique, stale shared memory is swept.
. "$(dirname "$0")/e2e_lib.sh" "$1"
ARGS=(--backends cpu --operations add,sum,softmax,rmsnorm,gemm --row-shapes 17x257,64x512
      --gemm-shapes 32x32x32 --samples 3 --sample-ms 5 --warmup-ms 40 --threads 1 --quiet
      --python /usr/bin/python3 --seed 11)
cases_in() { /usr/bin/python3 -c 'import json,sys
try: print(len(json.load(open(sys.argv[1]))["cases"]))
except Exception: print(0)' "$1"; }

for how in KILL TERM; do
  dir="$T/run-$how"
  "$D" run --output "$dir" "${ARGS[@]}" & pid=$!
  # wait until at least 2 cases are on disk
  for i in $(seq 1 600); do
    [ "$(cases_in "$dir/results.json" 2>/dev/null)" -ge 2 ] && break
    sleep 0.1
  done
  kill -$how $pid; wait $pid; rc=$?
  [ $rc -ne 0 ] && ok || no "$how: interrupted run exited 0"
  n_before=$(cases_in "$dir/results.json")
  [ "$n_before" -ge 2 ] && [ "$n_before" -lt 9 ] && ok || no "$how: $n_before cases before resume"
  cp "$dir/results.json" "$T/before.json"
  # between full writes results.json holds the raw record (no derived sections):
  # report derives it
  "$D" report "$dir/results.json" --output "$T/report-$how.md" >/dev/null 2>&1 &&
    [ "$(grep -c '^| ' "$T/report-$how.md")" -ge 2 ] && ok || no "$how: report of the interrupted results.json"
  "$D" run --resume "$dir" --quiet; rc=$?
  [ $rc -eq 0 ] && ok || no "$how: resume exit $rc"
  /usr/bin/python3 - "$T/before.json" "$dir/results.json" "$how" <<'EOP' && ok || no "$how: resumed results"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert b["complete"] is True and len(b["resumes"]) == 1
assert "derived" in b and all("derived" in c for c in b["cases"]), "the final write derives"

assert [c["id"] for c in b["cases"]][:0] == []
ids = sorted(c["id"] for c in b["cases"])
assert len(ids) == 9 and len(set(ids)) == 9, ids
done_before = {c["id"]: c for c in a["cases"] if 0 in c.get("rounds_done", [])}
for c in b["cases"]:
    assert c["valid"], c["id"]
    if c["id"] in done_before:   # kept exactly as it was
        assert c["impl"] == done_before[c["id"]]["impl"], c["id"]
pos = [s["position"] for c in b["cases"] for im in c["impl"].values()
       for arr in im["samples"].values() for s in arr]
assert len(pos) == len(set(pos)), "positions repeat after resume"
assert b["settings"]["seed"] == 11
EOP
  # same inputs as an uninterrupted run
  if [ $how = KILL ]; then
    "$D" run --output "$T/clean" "${ARGS[@]}" >/dev/null 2>&1
    /usr/bin/python3 - "$T/clean/results.json" "$dir/results.json" <<'EOP' && ok || no "inputs differ from a clean run"
import json, sys
h = lambda r: {c["id"]: [i["sha256"] for i in c["inputs"]] for c in r["cases"]}
assert h(json.load(open(sys.argv[1]))) == h(json.load(open(sys.argv[2])))
EOP
  fi
  ls /dev/shm | grep -q "^dualtime-$pid-" && no "$how: shared memory of the killed run left behind" || ok
done
# a resume keeps the recorded values of the defaults its command line left to the backend
# (a run made by an older build, whose defaults differ, is finished as it was started):
# the interrupted run's settings are patched to 3 samples, 5 ms and 33 ms of warm-up,
# which no flag of its command line names; the resumed cases must follow them
dir="$T/run-defaults"
"$D" run --output "$dir" --backends cpu --operations add,sum --row-shapes 17x257,64x512,96x96 \
  --gemm-shapes 32x32x32 --threads 1 --quiet --python /usr/bin/python3 --seed 5 & pid=$!
for i in $(seq 1 600); do
  [ "$(cases_in "$dir/results.json" 2>/dev/null)" -ge 1 ] && break
  sleep 0.1
done
kill -KILL $pid; wait $pid
/usr/bin/python3 - "$dir/results.json" <<'EOP' && ok || no "defaults: patch the interrupted run's settings"
import json, sys
r = json.load(open(sys.argv[1]))
assert not any(a.startswith(("--samples", "--sample-ms", "--warmup-ms")) for a in r["command_line"])
r["settings"].update(samples=3, sample_ms=5, warmup_ms=33)
r["cases"] = r["cases"][:1]
json.dump(r, open(sys.argv[1], "w"))
EOP
"$D" run --resume "$dir" --quiet; rc=$?
[ $rc -eq 0 ] && ok || no "defaults: resume exit $rc"
/usr/bin/python3 - "$dir/results.json" <<'EOP' && ok || no "defaults: the resumed cases must keep the recorded samples and warm-up"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["complete"] is True and len(r["cases"]) == 6, len(r["cases"])
s = r["settings"]
assert (s["samples"], s["sample_ms"], s["warmup_ms"]) == (3, 5, 33), s
new = r["cases"][1:]
for c in new:
    for im in c["impl"].values():
        for scope, arr in im["samples"].items():
            assert len(arr) == 3, (c["id"], scope, len(arr))
        w = im.get("warmup")
        assert w is None or w["ms"] < 100, (c["id"], w)  # 150 ms is the cpu default
EOP
"$D" run --resume "$T/run-KILL" 2>&1 | grep -q "nothing to resume" && ok || no "resume of a complete run"
"$D" run --resume "$T/nonexistent" >/dev/null 2>&1; [ $? -eq 2 ] && ok || no "resume of a missing dir must exit 2"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
