#!/usr/bin/env bash
# Progress: on a terminal a run draws a progress line (case, phase, done/total, ETA) on
# stderr; in a pipe or file there is none, and --quiet silences it on a terminal too.
# Also: `dualtime list` and `--help` answer and exit 0.
set -u
B="$1"; D="$B/dualtime"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch not importable: skip"; exit 77; }
command -v script >/dev/null || { echo "no script(1) to make a terminal: skip"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
ARGS="--backends cpu --operations add --row-shapes 17x257 --samples 3 --sample-ms 2 --warmup-ms 5 --threads 1 --python /usr/bin/python3"
# on a terminal (script(1) gives the command a pty)
script -qec "$D run --output $T/tty $ARGS" "$T/tty.log" >/dev/null 2>&1
grep -q "ETA" "$T/tty.log" && grep -q "\[1/1\] add_17x257" "$T/tty.log" && ok || no "no progress line on a terminal"
script -qec "$D run --output $T/quiet $ARGS --quiet" "$T/quiet.log" >/dev/null 2>&1
grep -q "ETA" "$T/quiet.log" && no "--quiet still drew progress" || ok
# in a pipe / file
"$D" run --output "$T/pipe" $ARGS 2>"$T/pipe.err" | cat >/dev/null
grep -q "ETA" "$T/pipe.err" && no "progress written to a file" || ok
grep -q $'\r' "$T/pipe.err" && no "carriage returns in a file" || ok
"$D" list > "$T/list.txt"; rc=$?
names=$("$D" list --json | /usr/bin/python3 -c 'import json,sys; print("|".join(o["name"] for o in json.load(sys.stdin)["ops"]))')
[ $rc -eq 0 ] && [ "$(grep -cE "^($names) " "$T/list.txt")" -eq 9 ] && ok || no "dualtime list"
"$D" --help | grep -q "dualtime run --output DIR" && ok || no "--help"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
