#!/usr/bin/env bash
# Nothing lost, nothing clobbered (issue "what trying to break it found"): each check is
# what a new user tried, and each fails on a tool that lacks its fix.
#  1. writers never replace their own inputs or what is not a regular file / a new path
#  2. a run killed or interrupted at a random moment (many seeds, the first second
#     included) leaves either nothing or a directory that --resume finishes
#  3. one writer per run directory: a second gets exit 2 naming the holder's pid
#     and a disk too full for the first write leaves a clear error and nothing behind
#  4. workers die with the run, grandchildren included; a start-up that hangs honours
#     --start-timeout; a case that cannot get its memory fails alone (exit 1, not abort)
#  5. compare refuses empty, incomplete and disjoint runs (exit 2)
#  7. results.json with out-of-range shapes is refused on load
#  8. --resume --retry-failed reruns the failed cases of a finished run
set -u
B="$1"; D="$B/dualtime"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch not importable: skip"; exit 77; }
T=$(mktemp -d); trap 'pkill -f "dt-robust-$$" 2>/dev/null; umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
ARGS=(--backends cpu --operations add,sum,softmax --row-shapes 17x257,64x512 --samples 3
      --sample-ms 2 --warmup-ms 5 --threads 1 --quiet --python /usr/bin/python3 --seed 5)
py() { /usr/bin/python3 "$@"; }

# ---- a finished run to read -------------------------------------------------------
"$D" run --output "$T/base" "${ARGS[@]}" >/dev/null 2>&1 || no "base run failed"
R="$T/base/results.json"
sha() { sha256sum "$1" | cut -d' ' -f1; }
h0=$(sha "$R")
cp "$R" "$T/pristine.json"
restore() { cp "$T/pristine.json" "$R"; }   # a failed check must not spoil the next

# ---- 1. output paths ----------------------------------------------------------------
"$D" report "$R" --output "$R" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(sha "$R")" = "$h0" ] && ok || no "report --output onto its input: exit $rc"
restore
ln -s "$R" "$T/link.md"
"$D" report "$R" --output "$T/link.md" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(sha "$R")" = "$h0" ] && [ -L "$T/link.md" ] && ok || no "report --output symlink to input: exit $rc"
restore
ln "$R" "$T/hard.md"
"$D" report "$R" --output "$T/hard.md" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(sha "$R")" = "$h0" ] && ok || no "report --output hard link to input: exit $rc"
restore
"$D" report "$R" --output "$T/base/./results.json" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(sha "$R")" = "$h0" ] && ok || no "report --output other spelling of input: exit $rc"
restore
# a character device of our own (the same as /dev/full), so a regression clobbers only $T
if [ "$(id -u)" -eq 0 ] && mknod -m 666 "$T/devfull" c 1 7 2>/dev/null; then
  "$D" report "$R" --output "$T/devfull" >/dev/null 2>&1; rc=$?
  [ $rc -eq 2 ] && [ -c "$T/devfull" ] && ok || no "report --output a character device: exit $rc"
  restore
fi
mkfifo "$T/fifo"
timeout 20 "$D" report "$R" --output "$T/fifo" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && [ -p "$T/fifo" ] && ok || no "report --output FIFO: exit $rc"
"$D" report "$R" --output "$T/fresh.md" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && [ -s "$T/fresh.md" ] && ok || no "report --output a new path: exit $rc"
# the charts' folder next to the output: a symlink to elsewhere is refused, nothing written
mkdir "$T/other" "$T/elsewhere"; ln -s "$T/elsewhere" "$T/other/plots"
"$D" report "$R" --output "$T/other/out.md" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && [ ! -e "$T/other/out.md" ] && [ -z "$(ls -A "$T/elsewhere")" ] && ok ||
  no "report with plots/ a symlink: exit $rc"
# a resume writes results.md and plots/ of its directory: a symlinked results.md is refused
cp -r "$T/base" "$T/linked"; rm -f "$T/linked/results.md"; ln -s "$R" "$T/linked/results.md"
"$D" run --resume "$T/linked" --quiet >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(sha "$R")" = "$h0" ] && ok || no "resume with results.md a symlink: exit $rc"
restore

# ---- 2. kills at random moments -----------------------------------------------------
# One uninterrupted run measures how long a run lasts; each seed then kills a run at a
# moment drawn over [0, 1.2 x that] (a third of them inside the first second) with one of
# KILL, INT, TERM, HUP. Afterwards the directory either does not exist, or --resume
# finishes it with every case valid and the same inputs as the uninterrupted run.
t0=$(date +%s%N)
"$D" run --output "$T/timed" "${ARGS[@]}" >/dev/null 2>&1
dur_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
SEEDS=${DT_ROBUST_SEEDS:-16}
sigs=(KILL INT TERM HUP)
for s in $(seq 1 "$SEEDS"); do
  RANDOM=$((s * 7919))
  if [ $((s % 3)) -eq 0 ]; then delay_ms=$((RANDOM % 1000)); else delay_ms=$((RANDOM % (dur_ms * 12 / 10 + 1))); fi
  sig=${sigs[$((s % 4))]}
  dir="$T/kill-$s"
  "$D" run --output "$dir" "${ARGS[@]}" >/dev/null 2>&1 & pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -"$sig" $pid 2>/dev/null; wait $pid 2>/dev/null
  if [ ! -e "$dir" ]; then ok; continue; fi
  "$D" run --resume "$dir" --quiet >/dev/null 2>"$T/resume-$s.err"; rc=$?
  if [ $rc -ne 0 ] && ! grep -q "nothing to resume" "$T/resume-$s.err"; then
    no "seed $s ($sig after ${delay_ms} ms): resume exit $rc: $(head -c 300 "$T/resume-$s.err")"; continue
  fi
  py - "$T/timed/results.json" "$dir/results.json" <<'EOP' && ok || no "seed $s ($sig after ${delay_ms} ms): resumed results"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert b["complete"] is True
ids = sorted(c["id"] for c in b["cases"])
assert ids == sorted(c["id"] for c in a["cases"]), ids
assert all(c["valid"] for c in b["cases"])
h = lambda r: {c["id"]: [i["sha256"] for i in c["inputs"]] for c in r["cases"]}
assert h(a) == h(b)
EOP
done
ls /dev/shm | grep -q "^dualtime-" && ls /dev/shm | grep "^dualtime-" | while read -r f; do
  p=${f#dualtime-}; p=${p%%-*}; kill -0 "$p" 2>/dev/null || echo "$f"; done | grep -q . &&
  no "shared memory of killed runs left behind after resumes" || ok

# a disk too full for the first write: a clear error, exit 2, and nothing left behind
mkdir "$T/full"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=8k tmpfs "$T/full" 2>/dev/null; then
  "$D" run --output "$T/full/run" "${ARGS[@]}" >/dev/null 2>"$T/full.err"; rc=$?
  [ $rc -eq 2 ] && grep -q "No space left" "$T/full.err" && [ -z "$(ls -A "$T/full")" ] && ok ||
    no "full disk: exit $rc, left: $(ls -A "$T/full"), $(head -c 300 "$T/full.err")"
  umount "$T/full"
else
  echo "note: no tmpfs mount here (not root?): the full-disk check is skipped"
fi

# ---- 3. one writer per run directory -------------------------------------------------
"$D" run --output "$T/locked" "${ARGS[@]}" --samples 9 --sample-ms 20 >/dev/null 2>&1 & pid=$!
for i in $(seq 1 300); do [ -s "$T/locked/results.json" ] && break; sleep 0.05; done
"$D" run --resume "$T/locked" --quiet >/dev/null 2>"$T/lock.err"; rc=$?
[ $rc -eq 2 ] && grep -q "pid $pid" "$T/lock.err" && ok || no "second writer: exit $rc: $(cat "$T/lock.err")"
wait $pid; rc=$?
[ $rc -eq 0 ] && ok || no "the first writer of a locked dir exit $rc"

# ---- 4. workers die with the run; start-up timeout -----------------------------------
cat > "$T/hang-worker.sh" <<EOF
#!/bin/sh
# a worker whose start hangs (it never answers hello), with a grandchild
sh -c 'sleep 300; : dt-robust-$$-grandchild' &
exec sh -c 'sleep 300; : dt-robust-$$-worker'
EOF
chmod +x "$T/hang-worker.sh"
t0=$(date +%s)
timeout 60 "$D" run --output "$T/hang" "${ARGS[@]}" --start-timeout 2 --baseline-worker "$T/hang-worker.sh" >/dev/null 2>"$T/hang.err"; rc=$?
t1=$(date +%s)
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $((t1 - t0)) -lt 30 ] && ok || no "hung start-up: exit $rc after $((t1 - t0)) s"
grep -qiE "start-up|starting" "$T/hang.err" && ! grep -qiE "unrecognized|unknown option" "$T/hang.err" && ok ||
  no "hung start-up: no message about the start: $(head -c 300 "$T/hang.err")"
sleep 1
pgrep -f "dt-robust-$$-" >/dev/null && no "worker or grandchild left behind: $(pgrep -af "dt-robust-$$-")" || ok
# on a terminal the progress line says which worker is starting (named from its command)
if command -v script >/dev/null; then
  TTYARGS=(); for a in "${ARGS[@]}"; do [ "$a" != --quiet ] && TTYARGS+=("$a"); done
  script -qec "$(printf '%q ' "$D" run --output "$T/tty" "${TTYARGS[@]}" --start-timeout 2 \
      --baseline-worker "$T/hang-worker.sh")" /dev/null >"$T/tty.out" 2>&1
  grep -q "starting the hang-worker.sh worker" "$T/tty.out" && ok ||
    no "no 'starting the hang-worker.sh worker' on a terminal: $(head -c 300 "$T/tty.out")"
  script -qec "$(printf '%q ' "$D" run --output "$T/tty2" "${TTYARGS[@]}" --operations add \
      --row-shapes 17x257)" /dev/null >"$T/tty2.out" 2>&1
  grep -q "starting the native worker" "$T/tty2.out" && grep -q "starting the PyTorch worker" "$T/tty2.out" &&
    ok || no "no 'starting the ... worker' for the default workers: $(head -c 300 "$T/tty2.out")"
  pkill -f "dt-robust-$$-" 2>/dev/null
fi
# kill -9 of the orchestrator: the direct worker dies with it (parent-death signal)
"$D" run --output "$T/orphan" "${ARGS[@]}" --start-timeout 60 --baseline-worker "$T/hang-worker.sh" >/dev/null 2>&1 & pid=$!
started=0
for i in $(seq 1 100); do pgrep -f "dt-robust-$$-worker" >/dev/null && started=1 && break; sleep 0.1; done
[ $started = 1 ] && ok || no "the hanging worker never started"
kill -KILL $pid; wait $pid 2>/dev/null
sleep 1
pgrep -f "dt-robust-$$-worker" >/dev/null && no "worker outlived a killed orchestrator" || ok
pkill -f "dt-robust-$$-" 2>/dev/null
# out of memory: the case's allocation fails with its bytes named, the run goes on and
# exits 1 (not an abort's 134), and no worker of it is left (found by an environment tag
# the workers inherit)
tag="DT_ROBUST_TAG=dt-robust-$$-oom"
( ulimit -v 3000000; env "$tag" "$D" run --output "$T/oom" "${ARGS[@]}" --operations residual_layernorm \
    --row-shapes 16384x16384 >/dev/null 2>"$T/oom.err" ); rc=$?
[ $rc -eq 1 ] && ok || no "out of memory: exit $rc (want 1): $(head -c 300 "$T/oom.err")"
py - "$T/oom/results.json" <<'EOP' && ok || no "out of memory: the case's error does not name the bytes"
import json, re, sys
r = json.load(open(sys.argv[1]))
errs = [i.get("error") or "" for c in r["cases"] for i in c["impl"].values()]
assert any(re.search(r"could not allocate \d+ bytes", e) for e in errs), errs
EOP
sleep 1
left=$(grep -l "$tag" /proc/[0-9]*/environ 2>/dev/null | head -3)
[ -z "$left" ] && ok || no "out of memory: workers left behind: $left"

# ---- 5. compare refuses what cannot be compared --------------------------------------
py - "$R" "$T" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1])); t = sys.argv[2]
e = dict(r); e["cases"] = []; json.dump(e, open(t + "/empty.json", "w"))
i = dict(r); i["complete"] = False; json.dump(i, open(t + "/incomplete.json", "w"))
d = json.loads(json.dumps(r))
for c in d["cases"]: c["id"] = "other_" + c["id"]
json.dump(d, open(t + "/disjoint.json", "w"))
EOP
for what in empty incomplete disjoint; do
  "$D" compare "$R" "$T/$what.json" >/dev/null 2>"$T/cmp-$what.err"; rc=$?
  [ $rc -eq 2 ] && ok || no "compare against a $what run: exit $rc"
  [ "$(grep -c "compare: " "$T/cmp-$what.err")" -eq 1 ] && ! grep -q "compare: compare:" "$T/cmp-$what.err" &&
    ok || no "compare against a $what run: the refusal not printed once: $(cat "$T/cmp-$what.err")"
  "$D" compare "$R" "$T/$what.json" --format json 2>/dev/null >"$T/cmp-$what.json"; rc=$?
  py - "$T/cmp-$what.json" <<'EOP' && [ $rc -eq 2 ] && ok || no "compare --format json against a $what run: exit $rc"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["comparable"] is False and j["exit_status"] == 2 and j["reason"], j
EOP
  "$D" compare "$T/$what.json" "$R" >/dev/null 2>&1; rc=$?
  [ $rc -eq 2 ] && ok || no "compare of a $what run as A: exit $rc"
done
"$D" compare "$R" "$T/timed/results.json" >/dev/null 2>&1; rc=$?
[ $rc -ne 2 ] && ok || no "two comparable runs refused"
"$D" compare "$R" "$T/timed/results.json" --format json >"$T/cmp.json" 2>/dev/null; rc=$?
py - "$T/cmp.json" "$rc" <<'EOP' && ok || no "compare --format json of two comparable runs"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["comparable"] is True and j["exit_status"] == int(sys.argv[2]), j
EOP
for t in 1 -0.1 abc; do
  "$D" compare "$R" "$T/timed/results.json" --threshold "$t" >/dev/null 2>&1; rc=$?
  [ $rc -eq 2 ] && ok || no "compare --threshold $t: exit $rc"
done

# ---- 7. ranges on load ---------------------------------------------------------------
for m in 4611686018427387904 -1; do
  py - "$R" "$T/m.json" "$m" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1])); r["cases"][0]["m"] = int(sys.argv[3]); json.dump(r, open(sys.argv[2], "w"))
EOP
  "$D" report "$T/m.json" --output "$T/m.md" >/dev/null 2>"$T/m.err"; rc=$?
  [ $rc -eq 2 ] && grep -q "m" "$T/m.err" && ok || no "m = $m on load: exit $rc: $(cat "$T/m.err")"
done

# ---- 8. --retry-failed ---------------------------------------------------------------
DUALTIME_FAULT=wrong:sum "$D" run --output "$T/failed" "${ARGS[@]}" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] && ok || no "a run with a wrong sum kernel must exit 1, got $rc"
"$D" run --resume "$T/failed" --quiet >/dev/null 2>"$T/nore.err"
grep -q "nothing to resume" "$T/nore.err" && ok || no "plain resume of a finished run"
"$D" run --resume "$T/failed" --retry-failed --quiet >/dev/null 2>"$T/retry.err"; rc=$?
[ $rc -eq 0 ] && ok || no "--retry-failed exit $rc: $(head -c 300 "$T/retry.err")"
py - "$T/failed/results.json" <<'EOP' && ok || no "--retry-failed results"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["complete"] is True
assert all(c["valid"] for c in r["cases"]), [c["id"] for c in r["cases"] if not c["valid"]]
assert sum(1 for c in r["cases"] if c["op"] == "sum") == 2
EOP

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
