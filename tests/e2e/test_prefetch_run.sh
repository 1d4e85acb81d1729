#!/usr/bin/env bash
# The preparer (src/orchestrate/dt_casehost.h): the next case-round's host side (inputs,
# FP64 reference, input sets, shared arenas) made on spare CPUs while the current one is
# measured, and the finished one freed there. End to end on the CPU, the same plan three
# ways:
#  - DUALTIME_PREFETCH=0 (in line, as every run was before) and DUALTIME_PREFETCH=<this
#    process's CPUs> (forced on: this machine pins nothing): both valid, and the same
#    cases, input SHA-256s, output SHA-256s and oracle numbers of every check (max error,
#    budget used) — making a case ahead changes nothing of what is measured or checked;
#  - the forced run says so in its notes; its phase trace has the wait for the case made
#    ahead and the in-line parts ("inputs", "FP64 reference", "arena copy") in its first
#    case and at most half of the others (one the preparer had not begun is made in line),
#    while the in-line run has them for every case-round;
#  - no shared arena of either run is left in /dev/shm (the frees on the preparer are done
#    before the run exits);
#  - DUALTIME_PREFETCH=<first CPU> DUALTIME_PREFETCH_WIDE=<all>: the preparer on one CPU,
#    its team spread over all while the run waits for it: the same facts again, and the
#    notes say where it spreads;
#  - DUALTIME_PREFETCH=junk: the run still works, in line, and its notes say why.
. "$(dirname "$0")/e2e_lib.sh" "$1"
ARGS=(--backends cpu --operations add,softmax,cross_entropy,gemm --gemm-shapes 96x80x130
      --row-shapes 17x257,64x1024 --inputs wide-logits --rounds 2 --samples 3 --sample-ms 3
      --warmup-ms 10 --threads 1 --quiet --python /usr/bin/python3 --seed 5)
CPUS=$(/usr/bin/python3 -c 'import os; c=sorted(os.sched_getaffinity(0)); print(",".join(map(str,c)))')
# run NAME [ENV...] [-- extra args]: the run in the background (its pid names its shared
# arenas, /dev/shm/dualtime-PID-*: none may be left once it exits)
run() { local name="$1"; shift; local envs=()
  while (($#)) && [ "$1" != -- ]; do envs+=("$1"); shift; done; [ "${1:-}" = -- ] && shift
  env "${envs[@]}" "$D" run --output "$T/$name" "${ARGS[@]}" "$@" >"$T/$name.log" 2>&1 & local pid=$!
  wait "$pid"; local rc=$?
  [ $rc -eq 0 ] && ok || no "$name run exit $rc: $(tail -3 "$T/$name.log")"
  local left; left=$(ls /dev/shm 2>/dev/null | grep -c "^dualtime-$pid-")
  [ "$left" -eq 0 ] && ok || no "$name: $left shared arenas left in /dev/shm"; }
run off DUALTIME_PREFETCH=0 DUALTIME_PHASE_TRACE="$T/off.trace"
run on DUALTIME_PREFETCH="$CPUS" DUALTIME_PHASE_TRACE="$T/on.trace"
run junk DUALTIME_PREFETCH=junk -- --operations add
FIRST=${CPUS%%,*}; FIRST="$FIRST-$FIRST"  # "0" alone means off: CPU 0 is "0-0"
run wide DUALTIME_PREFETCH="$FIRST" DUALTIME_PREFETCH_WIDE="$CPUS"

facts() { /usr/bin/python3 "$HERE/run_facts.py" "$1"; }
facts "$T/off/results.json" >"$T/off.facts"; facts "$T/on/results.json" >"$T/on.facts"
[ -s "$T/off.facts" ] && grep -q "^check" "$T/off.facts" && ok || no "no facts read"
facts "$T/wide/results.json" >"$T/wide.facts"
if cmp -s "$T/off.facts" "$T/on.facts"; then ok; else no "facts differ:"; diff "$T/off.facts" "$T/on.facts" | head; fi
if cmp -s "$T/off.facts" "$T/wide.facts"; then ok; else no "facts differ (wide):"; diff "$T/off.facts" "$T/wide.facts" | head; fi
grep -c "^valid .* False" "$T/on.facts" | grep -qx 0 && ok || no "an invalid case with the preparer"

notes() { /usr/bin/python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1])).get("notes") or []))' "$1"; }
notes "$T/on/results.json" | grep -q "host preparation ahead.*: on: .*CPUs $CPUS" && ok || no "on: notes: $(notes "$T/on/results.json")"
notes "$T/off/results.json" | grep -q "host preparation ahead.*off (DUALTIME_PREFETCH=0)" && ok || no "off: notes: $(notes "$T/off/results.json")"
[[ $CPUS != *,* ]] || { notes "$T/wide/results.json" | grep -q "on: .*CPUs $FIRST (1), on $CPUS .* while the run waits for it" && ok || no "wide: notes: $(notes "$T/wide/results.json")"; }
notes "$T/junk/results.json" | grep -q "DUALTIME_PREFETCH=junk is not 0 or a CPU list" && ok || no "junk: notes: $(notes "$T/junk/results.json")"

# the trace: column 5 is the phase, column 2 the case, 3 the round
inline_parts() { awk -F'\t' '$5=="inputs" || $5=="FP64 reference" || $5=="arena copy" {print $2"/"$3}' "$1" | sort -u | wc -l; }
rounds_run=$(awk -F'\t' '$2!="" && $2!="-" {print $2"/"$3}' "$T/off.trace" | sort -u | wc -l)
n_off=$(inline_parts "$T/off.trace"); n_on=$(inline_parts "$T/on.trace")
[ "$rounds_run" -ge 10 ] && [ "$n_off" -eq "$rounds_run" ] && ok || no "in line: parts in $n_off of $rounds_run case-rounds"
# the first is made in line; a later one only where the preparer had not begun it yet
# (dt_casehost_pool_take: a loaded machine), so at most half of them
[ "$n_on" -ge 1 ] && [ $((2 * n_on)) -le "$rounds_run" ] && ok ||
  no "preparer: in-line parts in $n_on of $rounds_run case-rounds (want the first, at most half)"
grep -q "host side (made ahead: wait)" "$T/on.trace" && ok || no "no wait phase in the trace"

echo "test_prefetch_run: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
