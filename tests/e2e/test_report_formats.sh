#!/usr/bin/env bash
# Exports and planning tools (issue 15), on a tiny CPU run and a dry run:
#   report --format csv|json: one row per case x implementation x scope whose numbers are
#     results.json's derived summaries and ratios; RFC 4180 quoting; json = the same rows;
#     --output FILE, never the input; --format md is today's report
#   --operations globs (fnmatch), a glob matching nothing is an error naming it
#   run --dry-run: the plan, an estimate with how it is computed, nothing written, exit 0
set -u
B="$1"; D="$B/dualtime"; SRC="$(cd "$(dirname "$0")/../.." && pwd)"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
PY=/usr/bin/python3
"$D" run --output "$T/r" --backends cpu --operations add,softmax --row-shapes 17x257 --samples 3 \
  --sample-ms 1 --warmup-ms 2 --python "$PY" --quiet 2>"$T/err" || no "run: $(cat "$T/err")"
cp "$T/r/results.json" "$T/run.json"
# a case id with a comma and a quote must come out RFC 4180-quoted
sed 's/"softmax_17x257"/"softmax_17x257,\\"q\\""/' "$T/run.json" > "$T/odd.json"
"$D" report "$T/run.json" --format csv >"$T/t.csv" 2>"$T/err" && ok || no "csv: $(cat "$T/err")"
"$D" report --format=json "$T/run.json" >"$T/t.json" 2>"$T/err" && ok || no "json: $(cat "$T/err")"
"$D" report "$T/odd.json" --format csv --output "$T/odd.csv" 2>"$T/err" && [ -s "$T/odd.csv" ] && ok ||
  no "csv --output: $(cat "$T/err")"
"$PY" - "$T/run.json" "$T/t.csv" "$T/t.json" "$T/odd.csv" <<'EOS' && ok || no "csv/json rows differ from results.json"
import csv, json, math, sys
doc = json.load(open(sys.argv[1]))
raw = open(sys.argv[2], newline="").read()
assert raw.endswith("\r\n") and "\r\n" in raw.split("\n")[0] + "\n", "CRLF line ends"
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
table = json.load(open(sys.argv[3]))
assert len(rows) == len(table) > 0
want = 0
for c in doc["cases"]:
    for scope, sd in c["derived"]["scopes"].items():
        for impl in (f["id"] for f in doc["frameworks"]):
            s = sd.get(impl)
            if not s or not s.get("n"):
                continue
            want += 1
            r = [x for x in rows if x["case"] == c["id"] and x["scope"] == scope and x["implementation"] == impl]
            j = [x for x in table if x["case"] == c["id"] and x["scope"] == scope and x["implementation"] == impl]
            assert len(r) == 1 and len(j) == 1, (c["id"], scope, impl)
            r, j = r[0], j[0]
            for k in ("p50", "p90", "min", "iqr"):
                assert math.isclose(float(r[k + "_us"]), s[k], rel_tol=1e-8), (k, r, s)
                assert math.isclose(j[k + "_us"], s[k], rel_tol=1e-12), (k, j, s)
            assert int(r["samples"]) == s["n"] == j["samples"]
            assert r["dtype"] == c.get("dtype", "f32") == j["dtype"]
            assert r["shape"] == "%dx%d" % (c["m"], c["n"]), r["shape"]
            vs = sd.get("vs_baseline", {}).get(impl)
            if vs and vs.get("ratio") and vs["ratio"].get("median") is not None:
                assert math.isclose(float(r["ratio"]), vs["ratio"]["median"], rel_tol=1e-8)
                assert r["verdict"] == vs["verdict"] == j["verdict"]
            else:
                assert r["ratio"] == "" and j["ratio"] is None and j["verdict"] is None
assert want == len(rows), (want, len(rows))
odd = list(csv.DictReader(open(sys.argv[4], newline="")))
assert any(x["case"] == 'softmax_17x257,"q"' for x in odd), [x["case"] for x in odd][:3]
assert '"softmax_17x257,""q"""' in open(sys.argv[4]).read()
EOS
"$D" report "$T/run.json" --format csv --output "$T/run.json" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "refusing to overwrite" "$T/err" && ok || no "csv over the input rc=$rc"
"$D" report "$T/run.json" --format xml 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "'xml' is not md, csv or json" "$T/err" && ok || no "--format xml rc=$rc"
"$D" report "$T/run.json" --format md 2>"$T/err" && [ -s "$T/results.md" ] && ok || no "--format md: $(cat "$T/err")"
# --operations globs
"$D" run --dry-run --backends cpu --quick --operations 'soft*,*norm' --python "$PY" \
  --candidate-worker "$B/dualtime-native-worker" --baseline-worker "$B/dualtime-native-worker" \
  >"$T/plan.txt" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && ok || no "dry run rc=$rc: $(cat "$T/err")"
ops=$(grep -oE '^ +[0-9]+  \S+ +\S+' "$T/plan.txt" | awk '{print $3}' | sort -u | tr '\n' ' ')
[ "$ops" = "layernorm residual_layernorm rmsnorm softmax " ] && ok || no "glob selected '$ops'"
out=$("$D" run --output "$T/o" --backends cpu --operations 'soft*,zz*' 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF "'zz*' matches no operation" <<<"$out" && [ ! -e "$T/o" ] && ok ||
  no "glob matching nothing: rc=$rc '$out'"
# --dry-run: nothing written (no --output needed; with one, it is not created)
"$D" run --dry-run --output "$T/never" --backends cpu --operations add --row-shapes 4x4,8x8 \
  --samples 7 --sample-ms 3 --warmup-ms 11 --rounds 2 --candidate-worker "$B/dualtime-native-worker" \
  --baseline-worker "$B/dualtime-native-worker" >"$T/plan2.txt" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && [ ! -e "$T/never" ] && ok || no "dry run with --output rc=$rc, exists: $(ls "$T")"
"$PY" - "$T/plan2.txt" <<'EOS' && ok || no "dry-run estimate is not the documented formula: $(cat "$T/plan2.txt")"
import re, sys
t = open(sys.argv[1]).read()
assert "add_4x4" in t and "add_8x8" in t and "4x4" in t
assert re.search(r"samples: 7 per scope and round, 2 round\(s\), sample 3 ms, warmup 11 ms", t), t
start = float(re.search(r"workers' start ([\d.]+) s", t).group(1))
est = float(re.search(r"estimate: about (\d+) s", t).group(1))
# 2 impls x (warmup 11 + calibration 4 x 3 + 1 x 7 x 3 + 1 x 7 x 1) + 1000 ms setup, per case and round
case_s = (2 * (11 + 4 * 3 + 7 * 3 + 7 * 1) + 1000) / 1e3
want = start + 2 + case_s * 2 * 2
assert abs(est - want) <= 0.51, (est, want)
EOS
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
