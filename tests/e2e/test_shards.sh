#!/usr/bin/env bash
# Sharded runs without a scheduler: `dualtime plan --shards 2`, both shards run one after
# the other with `dualtime run --plan`, `dualtime merge`; the merged cases equal a single
# run's (same ids in order, same input SHA-256s), every case carries its shard and host.
# A wrong shard set (missing, duplicated, from another plan, incomplete, a case short) is
# refused with exit 2 naming it; run --plan refuses flags that conflict with the plan, a
# shard outside the plan and an edited plan. Relative paths of a plan resolve from its
# folder.
set -u
B="$(cd "$1" && pwd)"; D="$B/dualtime"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch not importable by /usr/bin/python3: skip"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
FLAGS=(--backends cpu --operations add,sum,softmax,gemm --row-shapes 17x257,1x127
       --gemm-shapes 32x32x32 --samples 3 --sample-ms 2 --warmup-ms 5 --threads 1 --seed 5)
PY=(--python /usr/bin/python3)
# expect_refusal NAME WORDS... -- CMD...: exit 2 and stderr holding every word
expect_refusal() {
  local name="$1"; shift; local words=()
  while [ "$1" != "--" ]; do words+=("$1"); shift; done; shift
  "$@" 2>"$T/err" >/dev/null; local rc=$?
  [ $rc -eq 2 ] && ok || no "$name: exit $rc, not 2 ($(cat "$T/err"))"
  for w in "${words[@]}"; do
    grep -qF -- "$w" "$T/err" && ok || no "$name: message lacks '$w': $(cat "$T/err")"
  done
}

# 1. plan, two shards one after the other, merge; and a single run of the same flags
"$D" plan --shards 2 --output "$T/p" "${FLAGS[@]}" "${PY[@]}" 2>/dev/null; rc=$?
[ $rc -eq 0 ] && [ -f "$T/p/plan.json" ] && ok || no "plan exit $rc"
for i in 0 1; do
  "$D" run --plan "$T/p/plan.json" --shard $i/2 --output "$T/p/shard-$i" --quiet; rc=$?
  [ $rc -eq 0 ] && ok || no "shard $i exit $rc"
done
"$D" merge "$T"/p/shard-* --output "$T/p/merged" 2>/dev/null; rc=$?
[ $rc -eq 0 ] && [ -f "$T/p/merged/results.md" ] && ok || no "merge exit $rc"
"$D" run --output "$T/single" "${FLAGS[@]}" "${PY[@]}" --quiet; rc=$?
[ $rc -eq 0 ] && ok || no "single run exit $rc"
/usr/bin/python3 - "$T/p/plan.json" "$T/p" "$T/single/results.json" <<'EOP' && ok || no "merged vs single"
import json, sys, socket
plan = json.load(open(sys.argv[1])); d = sys.argv[2]
single = json.load(open(sys.argv[3]))
m = json.load(open(d + "/merged/results.json"))
ids = [c["id"] for c in plan["cases"]]
assert len(ids) == 7, ids
assert [c["id"] for c in m["cases"]] == ids, [c["id"] for c in m["cases"]]
assert [c["id"] for c in single["cases"]] == ids
def inputs(c): return [(i["name"], i["sha256"]) for i in c["inputs"]]
for a, b in zip(m["cases"], single["cases"]):
    assert inputs(a) and inputs(a) == inputs(b), a["id"]
    assert a["valid"] is True, a["id"]
for k, c in enumerate(m["cases"]):
    assert c["shard"] == plan["cases"][k]["shard"] == k % 2, (c["id"], c.get("shard"))
    assert c["host"] == socket.gethostname(), c.get("host")
assert m["plan"] == {"id": plan["plan_id"], "shards": 2, "shard": None}, m["plan"]
assert [s["shard"] for s in m["shards"]] == [0, 1]
assert all(s["environment"]["host"]["hostname"] for s in m["shards"])
assert m["complete"] is True and m["derived"]["counts"]["cases"] == 7
assert m["derived"]["counts"]["valid"] == 7
for i in (0, 1):
    s = json.load(open("%s/shard-%d/results.json" % (d, i)))
    assert s["plan"] == {"id": plan["plan_id"], "shards": 2, "shard": i}, s["plan"]
    assert [c["id"] for c in s["cases"]] == ids[i::2]
EOP
grep -qF 'add_17x257' "$T/p/merged/results.md" && ok || no "merged results.md lacks a case"
"$D" report "$T/p/merged/results.json" --output "$T/again.md" 2>/dev/null && ok || no "report of the merged run"

# 2. wrong shard sets: exit 2 naming the shard
expect_refusal "missing shard" "shard 1 of 2 is missing" "add_1x127" -- \
  "$D" merge "$T/p/shard-0" --output "$T/m1"
[ ! -e "$T/m1" ] && ok || no "a refused merge left its output"
cp -r "$T/p/shard-0" "$T/p/shard-0b"
expect_refusal "duplicated shard" "shard-0b" "shard 0 again" -- \
  "$D" merge "$T/p/shard-0" "$T/p/shard-0b" "$T/p/shard-1" --output "$T/m2"
rm -rf "$T/p/shard-0b"
# another plan (another seed), its folder with a relative --python: run from elsewhere
mkdir -p "$T/q" && ln -s /usr/bin/python3 "$T/q/py"
(cd "$T/q" && "$D" plan --shards 2 --output . "${FLAGS[@]}" --seed 6 --python ./py 2>/dev/null) \
  && ok || no "plan q"
(cd / && "$D" run --plan "$T/q/plan.json" --shard 1/2 --output "$T/q/shard-1" --quiet) \
  && ok || no "plan q shard 1 (relative --python from the plan's folder)"
grep -q "\"$T/q/./py\"" "$T/q/shard-1/results.json" && ok || no "relative --python not resolved"
cp -r "$T/q/shard-1" "$T/p/shard-1q"
expect_refusal "other plan" "shard-1q" "another plan" -- \
  "$D" merge "$T/p/shard-0" "$T/p/shard-1q" --output "$T/m3"
# incomplete shard
cp -r "$T/p/shard-1" "$T/p/shard-1i"
/usr/bin/python3 - "$T/p/shard-1i/results.json" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1])); r["complete"] = False
json.dump(r, open(sys.argv[1], "w"))
EOP
expect_refusal "incomplete shard" "shard-1i" "incomplete" -- \
  "$D" merge "$T/p/shard-0" "$T/p/shard-1i" --output "$T/m4"
# a shard short of one case
cp -r "$T/p/shard-1" "$T/p/shard-1s"
/usr/bin/python3 - "$T/p/shard-1s/results.json" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1])); r["cases"] = r["cases"][:-1]; r.pop("derived", None)
json.dump(r, open(sys.argv[1], "w"))
EOP
expect_refusal "short shard" "shard-1s" "missing 1 planned case" -- \
  "$D" merge "$T/p/shard-0" "$T/p/shard-1s" --output "$T/m5"
rm -rf "$T"/p/shard-1?

# 3. run --plan refusals
expect_refusal "conflicting flag" "--seed" "conflicts with the plan" -- \
  "$D" run --plan "$T/p/plan.json" --shard 0/2 --output "$T/r1" --seed 3
expect_refusal "shard out of range" "--shard" "2/2" -- \
  "$D" run --plan "$T/p/plan.json" --shard 2/2 --output "$T/r2"
expect_refusal "shard count" "--shard" "2 shards" -- \
  "$D" run --plan "$T/p/plan.json" --shard 0/3 --output "$T/r3"
sed 's/"seed": 5/"seed": 9/' "$T/p/plan.json" > "$T/edited.json"
expect_refusal "edited plan" "plan_id does not match" -- \
  "$D" run --plan "$T/edited.json" --shard 0/2 --output "$T/r4"
[ ! -e "$T/r1" ] && [ ! -e "$T/r4" ] && ok || no "a refused run left its output"

echo "$((pass+fail)) checks, $pass passed, $fail failed"
[ $fail -eq 0 ]
