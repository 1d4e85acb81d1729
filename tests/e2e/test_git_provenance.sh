#!/usr/bin/env bash
# The record's tool revision (src/cli/dt_sys.c, dt_git_info; docs/results-format.md
# "tool"): the binary's own build revision (`dualtime --version`) is the truth.
#  - the binaries copied into a git checkout at another revision (as a build folder
#    carried into an older copy of the sources on the device machine, session 8, whose
#    records named the copy's stale HEAD): tool.git_revision is the build's, git_dirty
#    null, git_source "build (the checkout next to the binary is at <that HEAD>)";
#  - the same binaries outside any checkout: the build's revision, "build (no git
#    checkout next to the binary)".
. "$(dirname "$0")/e2e_lib.sh" "$1"
command -v git >/dev/null || { echo "no git: skip"; exit 77; }
rev=$("$D" --version | sed -n 's/.*(\([0-9a-f]\{40\}\)).*/\1/p')
[ -n "$rev" ] || { echo "dualtime --version names no 40-hex revision: skip"; exit 77; }
ARGS=(--backends cpu --operations add --row-shapes 1x127 --samples 3 --rounds 1 --sample-ms 1
      --warmup-ms 1 --threads 1 --python /usr/bin/python3 --quiet)
mkdir -p "$T/repo/b" "$T/none/b"
for d in "$T/repo/b" "$T/none/b"; do
  cp "$D" "$B/dualtime-native-worker" "$B/dualtime_torch_worker.py" "$d/"; done
(cd "$T/repo" && git init -q && git -c user.email=t@t -c user.name=t commit -q --allow-empty -m other)
head=$(git -C "$T/repo" rev-parse HEAD)
"$T/repo/b/dualtime" run "${ARGS[@]}" --output "$T/in-repo" >"$T/in-repo.log" 2>&1 && ok || no "run in the checkout: $(tail -3 "$T/in-repo.log")"
GIT_CEILING_DIRECTORIES="$T" "$T/none/b/dualtime" run "${ARGS[@]}" --output "$T/no-repo" >"$T/no-repo.log" 2>&1 &&
  ok || no "run outside a checkout: $(tail -3 "$T/no-repo.log")"
/usr/bin/python3 - "$T" "$rev" "$head" <<'EOP' && ok || no "tool provenance"
import json, sys
t, rev, head = sys.argv[1:]
a = json.load(open(t + "/in-repo/results.json"))["tool"]
assert head != rev, "the scratch checkout has the build's revision"
assert a["git_revision"] == rev and a["git_dirty"] is None, a
assert a["git_source"] == "build (the checkout next to the binary is at %s)" % head, a
b = json.load(open(t + "/no-repo/results.json"))["tool"]
assert b["git_revision"] == rev and b["git_source"].startswith("build (no git checkout"), b
EOP
e2e_end test_git_provenance
