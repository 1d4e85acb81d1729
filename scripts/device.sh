#!/usr/bin/env bash
# scripts/device.sh — run on a GPU machine from a build carried there (built on the CPU
# machine with the same CUDA): records the machine, runs the GPU tests, the sanitizers,
# and a benchmark, and leaves everything under $OUT (default: ./device-out).
#
#   bash scripts/device.sh [tests|bench|sanitize|all] [-- extra dualtime run args]
#
# Every engineer measures the same way with this script (docs/device-workflow.md).
# It never changes the card's clocks or settings.
set -uo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"; shift || true
[ "${1:-}" = "--" ] && shift
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
# Work in a scratch folder; at the end $OUT gets summary.txt, results.md, results.json and
# everything else as one logs.tgz (the device tool brings back at most 8 files).
W="$(mktemp -d /tmp/dt-device.XXXXXX)"
FINAL_OUT="$OUT"; OUT="$W"
B="${DT_BUILD_DIR:-build}"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

{
  date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  python3 -c 'import torch,sys; print(sys.executable, torch.__version__, torch.version.cuda, torch.cuda.is_available())'
} > "$OUT/machine.txt" 2>&1
log "machine: $(head -3 "$OUT/machine.txt" | tail -1)"

rc=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in "$B"/tests/gpu/test_* "$B"/test_*gpu*; do
    [ -x "$t" ] && [ -f "$t" ] || continue
    name=$(basename "$t")
    timeout 300 "$t" "$B" > "$OUT/$name.log" 2>&1; r=$?
    log "gpu test $name: exit $r ($( [ $r = 0 ] && echo pass || ([ $r = 77 ] && echo SKIP || echo FAIL)))"
    [ $r = 0 ] || rc=1
    tail -5 "$OUT/$name.log" | sed 's/^/   /' | tee -a "$OUT/summary.txt"
  done
fi
if [ "$what" = sanitize ] || [ "$what" = all ]; then
  t="$B/tests/gpu/test_cuda_backend"
  if [ -x "$t" ]; then
    for tool in memcheck racecheck; do
      timeout 600 compute-sanitizer --tool "$tool" --error-exitcode 9 "$t" "$B" --sanitize \
        > "$OUT/sanitizer-$tool.log" 2>&1; r=$?
      log "compute-sanitizer $tool: exit $r; $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer-$tool.log" | tail -1)"
      [ $r = 0 ] || rc=1
    done
  fi
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  rm -rf "$OUT/run"
  "$B/dualtime" run --backends cuda --output "$OUT/run" --quiet "$@" > "$OUT/run.log" 2>&1; r=$?
  log "dualtime run: exit $r"
  [ $r -le 1 ] || rc=1
  tail -3 "$OUT/run.log" | tee -a "$OUT/summary.txt"
fi
cp "$OUT/summary.txt" "$FINAL_OUT/" 2>/dev/null
[ -f "$OUT/run/results.md" ] && cp "$OUT/run/results.md" "$OUT/run/results.json" "$FINAL_OUT/"
tar czf "$FINAL_OUT/logs.tgz" -C "$W" . 2>/dev/null
exit $rc
