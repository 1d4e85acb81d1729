# tests/e2e/e2e_lib.sh — the opening every end-to-end test shares, sourced as
#   . "$(dirname "$0")/e2e_lib.sh" "$1"
# B the build folder (the test's argument), D its dualtime, HERE the tests' folder, T a
# scratch folder removed at exit; skips (exit 77) where /usr/bin/python3 has no torch;
# ok / no "why" count the checks (no prints FAIL and the reason), e2e_end NAME prints the
# count and exits 1 on any failure.
set -u
B="$1"; D="$B/dualtime"; HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch not importable: skip"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
e2e_end() { echo "$1: $pass passed, $fail failed"; [ "$fail" -eq 0 ] && exit 0; exit 1; }
