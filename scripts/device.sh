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
export LD_LIBRARY_PATH="$PWD/$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
step() { # step NAME COMMAND...: run, log, keep the exit status
  local name="$1"; shift
  timeout "${DT_STEP_TIMEOUT:-900}" "$@" > "$OUT/$name.log" 2>&1; local r=$?
  log "$name: exit $r ($( [ $r = 0 ] && echo pass || ([ $r = 77 ] && echo SKIP || echo FAIL)))"
  tail -"${DT_TAIL:-4}" "$OUT/$name.log" | sed 's/^/   /' | tee -a "$OUT/summary.txt"
  [ $r = 0 ] || rc=1
}
if [ "$what" = tests ] || [ "$what" = all ]; then
  step test_cuda_backend "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
  step test_timing_gpu "$B/tests/gpu/test_timing_gpu" "$B/tests/gpu/test_timing_gpu_impl.so"
  # every op x default shapes x views through the oracle, for both frameworks
  step views_both_frameworks "$B/dualtime" run --backends cuda --input-views --samples 3 \
    --sample-ms 5 --warmup-ms 20 --quiet --output "$OUT/views"
fi
if [ "$what" = sanitize ] || [ "$what" = all ]; then
  for tool in memcheck racecheck; do
    DUALTIME_GPU_TEST_QUICK=1 DUALTIME_GPU_TEST_REPS=2 DUALTIME_GPU_TEST_NO_FAULT=1 \
      step "sanitizer_$tool" compute-sanitizer --tool "$tool" \
      --error-exitcode 9 "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer_$tool.log" | tail -2 | tee -a "$OUT/summary.txt"
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  rm -rf "$OUT/run"
  DT_TAIL=3 step bench "$B/dualtime" run --backends cuda --output "$OUT/run" --quiet "$@"
fi
cp "$OUT/summary.txt" "$FINAL_OUT/" 2>/dev/null
if [ -f "$OUT/run/results.md" ]; then
  cp "$OUT/run/results.md" "$FINAL_OUT/"
  gzip -c "$OUT/run/results.json" > "$FINAL_OUT/results.json.gz"
fi
tar czf "$FINAL_OUT/logs-$what.tgz" -C "$W" . 2>/dev/null
exit $rc
