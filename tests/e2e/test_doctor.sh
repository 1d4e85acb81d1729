#!/usr/bin/env bash
# dualtime doctor: one line per piece ("ok" or "no" with the reason and the fix), a
# verdict per backend, exit 0 when the cpu backend is usable and 2 when it is not.
# Here (no GPU): cuda unavailable with a reason, cpu ok, torch found (via
# /usr/bin/python3 when the python3 on PATH has no torch). Skips (77) until the CLI
# dispatches "doctor".
set -u
B="$1"; D="$B/dualtime"
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }

out=$("$D" doctor 2>&1); rc=$?
if grep -q "unknown command 'doctor'" <<<"$out"; then
  echo "SKIP: this dualtime has no doctor command yet"; exit 77
fi
echo "$out"
[ $rc -eq 0 ] && ok || bad "doctor exit $rc, wanted 0"
# every check line: a name column, then ok/no, then text
n=$(grep -cE '^[a-z=> ]{13} (ok|no)  [^ ]' <<<"$out")
[ "$n" -ge 12 ] && ok || bad "only $n check lines"
for what in "gpu driver" nvrtc cupti nvml torch "shared mem" "torch worker" "cuda module" \
            "timing helper" "native worker" "=> cpu" "=> cuda"; do
  grep -qE "^$what +(ok|no)  " <<<"$out" && ok || bad "no '$what' line"
done
grep -qE '^=> cpu +ok  ' <<<"$out" && ok || bad "cpu not ok"
grep -qE '^shared mem +ok  /dev/shm writable' <<<"$out" && ok || bad "shm not ok"
grep -qE '^native worker +ok  .*cpu backend available' <<<"$out" && ok || bad "native worker not ok"
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then
  grep -qE '^gpu driver +no  libcuda.so.1 does not load .*; fix: install the NVIDIA driver' <<<"$out" \
    && ok || bad "gpu driver line does not say why and how to fix"
  grep -qE '^=> cuda +no  .*cannot run here: no CUDA driver \(.+\)' <<<"$out" \
    && ok || bad "cuda verdict without a reason"
fi
grep -qE '^torch +ok  /[^ ]+ \(Python [0-9.]+\): torch [0-9]' <<<"$out" && ok || bad "torch not found"
if [ -x /usr/bin/python3 ] && ! python3 -c 'import torch' >/dev/null 2>&1; then
  grep -qE '^torch +ok  /usr/bin/python3 ' <<<"$out" && ok || bad "torch not found via /usr/bin/python3"
  grep -qE "passed over: .*No module named 'torch'" <<<"$out" && ok || bad "the passed-over python is not named"
fi

# no usable python: cpu unusable, exit 2, and the torch line says how to fix it
out=$("$D" doctor --python /nonexistent/python3 2>&1); rc=$?
[ $rc -eq 2 ] && ok || bad "--python /nonexistent: exit $rc, wanted 2"
grep -qE '^torch +no  .*/nonexistent/python3: not found.*apt-get install --no-install-recommends python3-torch' <<<"$out" \
  && ok || bad "--python /nonexistent: no fix named"
grep -qE '^=> cpu +no  .*no python with PyTorch' <<<"$out" && ok || bad "cpu verdict not 'no'"

# bad arguments: exit 2, one line
for args in "--bogus" "--timeout" "--timeout 0" "--timeout abc" "--python="; do
  # shellcheck disable=SC2086
  out=$("$D" doctor $args 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "doctor" <<<"$out" && ok \
    || bad "doctor $args: rc=$rc out='$out'"
done
"$D" doctor --help | grep -q "usage: dualtime doctor" && ok || bad "--help"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
