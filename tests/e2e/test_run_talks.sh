#!/usr/bin/env bash
# What a run tells its user (issue 15) on a tiny CPU run: the end-of-run summary on stderr
# (not a terminal here) with the absolute results path and the verdict counts that
# results.json's derived block holds; --quiet leaves it out.
set -u
B="$1"; D="$B/dualtime"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
PY=/usr/bin/python3
FAST=(--backends cpu --operations add,softmax --row-shapes 17x257,64x64 --samples 3
      --sample-ms 1 --warmup-ms 2 --python "$PY")
cd "$T"
"$D" run --output rel "${FAST[@]}" >out.txt 2>err.txt; rc=$?
[ $rc -eq 0 ] && ok || no "run rc=$rc: $(tail -3 err.txt)"
grep -qxF "results:    $T/rel  (results.md, results.json)" err.txt && ok ||
  no "no absolute results path in: $(cat err.txt)"
[ ! -s out.txt ] && ok || no "run wrote to stdout"
"$PY" - rel/results.json err.txt <<'EOS' && ok || no "summary counts differ from results.json"
import json, re, sys
doc = json.load(open(sys.argv[1])); err = open(sys.argv[2]).read()
d = doc["derived"]
line = [l for l in err.splitlines() if "(e2e_batch verdicts):" in l]
assert len(line) == 1, err
counts = dict((v, int(n)) for n, v in re.findall(r"(\d+) (\w+)", line[0].split(":", 1)[1]))
assert counts == d["counts"]["vs_baseline"]["native"], (counts, d["counts"])
m = re.search(r"^assessment: (\w[\w ]*?)( —|$)", err, re.M)
assert m and m.group(1) == d["assessment"]["level"], (m and m.group(1), d["assessment"])
assert re.search(r"^slowest: +\S+ \w+ \S+ \[", err, re.M), err
assert re.search(r"^fastest: +\S+ \w+ \S+ \[", err, re.M), err
EOS
"$D" run --output q "${FAST[@]}" --quiet >out.txt 2>err.txt; rc=$?
[ $rc -eq 0 ] && ! grep -q "^results:" err.txt && ok || no "--quiet rc=$rc printed: $(cat err.txt)"
# --threads above the cores: a warning on stderr and a note in results.json and results.md;
# the recorded command line is shell-quoted in results.md (a path with a space, a glob)
cores=$(nproc)
mkdir -p "py dir" && ln -s "$PY" "py dir/python3"
"$D" run --output th --backends cpu --operations add --row-shapes 64x64 --samples 3 \
  --sample-ms 1 --warmup-ms 2 --python "$T/py dir/python3" --threads $((cores + 1)) \
  >out.txt 2>err.txt; rc=$?
[ $rc -eq 0 ] && ok || no "threads run rc=$rc: $(tail -3 err.txt)"
grep -q "^dualtime: warning: --threads $((cores + 1)) exceeds the $cores cores" err.txt && ok ||
  no "no --threads warning: $(head -3 err.txt)"
"$PY" -c 'import json,sys; n=json.load(open(sys.argv[1])).get("notes",[]); assert any("exceeds the" in x for x in n), n' \
  th/results.json && ok || no "no note in results.json"
"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); e=[i["energy"] for c in r["cases"] for i in c["impl"].values()]; assert e and all(x["j_per_call"] is None and x["reason"] == "cpu backend" for x in e), e' \
  th/results.json && ok || no "cpu run: energy not null with reason 'cpu backend'"
grep -q "^Notes: --threads $((cores + 1)) exceeds" th/results.md && ok || no "no note in results.md"
grep -qF -- "--python '$T/py dir/python3' --threads" th/results.md && ok ||
  no "command line not shell-quoted: $(grep 'Command line' th/results.md)"
! grep -q '\\_' th/results.md && ok || no "results.md escapes underscores: $(grep -m2 '\\_' th/results.md)"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
