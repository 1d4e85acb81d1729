#!/usr/bin/env bash
# Per-subcommand help (issue 15): `run`, `report`, `compare`, `list`, `doctor` each answer
# --help and -h with their own usage on stdout, exit 0, nothing on stderr.
set -u
B="$1"; D="$B/dualtime"
pass=0; fail=0
check() { # check CMD "first line must contain" "text the usage must contain"
  local cmd="$1" head="$2" body="$3" h out err rc
  for h in --help -h; do
    out=$("$D" $cmd $h 2>/tmp/help_err.$$); rc=$?; err=$(cat /tmp/help_err.$$)
    if [ $rc -eq 0 ] && [ -z "$err" ] && head -1 <<<"$out" | grep -qF -- "$head" &&
       grep -qF -- "$body" <<<"$out"; then
      pass=$((pass+1))
    else
      fail=$((fail+1)); echo "FAIL: dualtime $cmd $h -> rc=$rc err='$err' out='$(head -2 <<<"$out")'"
    fi
  done
}
check run "usage: dualtime run" "--sample-ms MS"
check report "usage: dualtime report" "--format"
check compare "usage: dualtime compare" "--format F"
check list "usage: dualtime list" "--json"
check doctor "usage: dualtime doctor" "--python"
# --help anywhere among run's flags, also after a flag with a value
out=$("$D" run --backends cpu --help 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -qF "usage: dualtime run" <<<"$out"; then pass=$((pass+1)); else
  fail=$((fail+1)); echo "FAIL: run --backends cpu --help -> rc=$rc"; fi
# each subcommand's usage is its own, not the general one
if [ "$("$D" report --help)" != "$("$D" compare --help)" ] &&
   ! "$D" list --help | grep -qF "dualtime compare"; then pass=$((pass+1)); else
  fail=$((fail+1)); echo "FAIL: subcommand usages are not their own"; fi
rm -f /tmp/help_err.$$
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
