#!/usr/bin/env bash
# scripts/bench.sh prints what matters: the build output goes to a log file (one line
# says where), the run's own lines follow; a failed build shows the log's tail.
set -u
B="$1"; HERE="$(cd "$(dirname "$0")" && pwd)"; SRC="$HERE/../.."
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch not importable: skip"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
DT_BUILD_DIR="$B" DT_OUT_DIR="$T/out" bash "$SRC/scripts/bench.sh" --backends cpu --operations add \
  --row-shapes 17x257 --samples 3 --sample-ms 2 --warmup-ms 5 --threads 1 --quiet \
  --python /usr/bin/python3 >"$T/all.log" 2>&1; rc=$?
[ $rc -eq 0 ] && ok || no "bench.sh exit $rc: $(tail -5 "$T/all.log")"
grep -q "log: $T/out/build.log" "$T/all.log" && ok || no "no line naming the build log"
[ -s "$T/out/build.log" ] && ok || no "the build log is empty"
grep -qiE "Building C object|Linking|Built target|-- Configuring" "$T/all.log" && no "build output on the terminal" || ok
[ "$(wc -l < "$T/all.log")" -le 12 ] && ok || no "bench.sh printed $(wc -l < "$T/all.log") lines"
ls -d "$T"/out/run-*/results.json >/dev/null 2>&1 && ok || no "no run directory under DT_OUT_DIR"
# a build that fails shows why
: > "$T/not-a-dir"
DT_BUILD_DIR="$T/not-a-dir" DT_OUT_DIR="$T/out2" bash "$SRC/scripts/bench.sh" --backends cpu >"$T/bad.log" 2>&1; rc=$?
[ $rc -ne 0 ] && grep -q "FAILED" "$T/bad.log" && [ "$(wc -l < "$T/bad.log")" -ge 3 ] && ok ||
  no "failed build: exit $rc, $(cat "$T/bad.log" | head -5)"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
