#!/usr/bin/env bash
# scripts/device-final.sh — a short closing batch for one lease, from a carried build:
#   gpu_test   the CUDA backend GPU test (every op and shape through the FP64 oracle;
#              DT_GPU_TEST_OPS=a,b restricts the ops)
#   racecheck  over the row kernels that reduce through shared memory (DT_SKIP_RACECHECK=1
#              skips it)
#   extra      optional: `dualtime run --backends cuda $DT_EXTRA_RUN` (a focused check)
#   bench      the default-matrix benchmark with device timing (the issue-5 evidence:
#              results.md, results.json.gz); DT_BENCH_ARGS adds arguments (--samples 21)
#   small      the small shapes again with 21 samples (E2E floor table into summary.txt;
#              DT_SKIP_SMALL=1 skips it)
#   memcheck   optional (DT_MEMCHECK_LARGE=1): compute-sanitizer memcheck over the full GPU
#              test, 8192^2 and 4096^3 included, one call per case
# OUT=... bash scripts/device-final.sh   (never changes the card's clocks or settings)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device-common.sh dt-final
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv,noheader >> "$S" 2>&1
DUALTIME_GPU_TEST_OPS="${DT_GPU_TEST_OPS:-}" \
  step gpu_test 150 "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
grep -E "^FAIL" "$W/gpu_test.log" | head -5 | tee -a "$S"
if [ -z "${DT_SKIP_RACECHECK:-}" ]; then
  DUALTIME_GPU_TEST_QUICK=1 DUALTIME_GPU_TEST_REPS=1 DUALTIME_GPU_TEST_NO_FAULT=1 \
  DUALTIME_GPU_TEST_OPS=sum,softmax,rmsnorm,layernorm,residual_layernorm,cross_entropy \
    step racecheck 120 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
  grep -E "RACECHECK SUMMARY|ERROR SUMMARY" "$W/racecheck.log" | tail -2 | tee -a "$S"
fi
if [ -n "${DT_EXTRA_RUN:-}" ]; then
  # shellcheck disable=SC2086 # word splitting of the extra arguments is intended
  step extra 120 "$B/dualtime" run --backends cuda $DT_EXTRA_RUN --quiet --output "$W/extra"
  [ -f "$W/extra/results.md" ] && sed -n '/^## Device control/,/^$/p' "$W/extra/results.md" >> "$S"
fi
# shellcheck disable=SC2086 # word splitting of the extra arguments is intended
step bench "${DT_BENCH_S:-240}" "$B/dualtime" run --backends cuda --device-timing ${DT_BENCH_ARGS:-} \
  --quiet --output "$W/run"
if [ -f "$W/run/results.md" ]; then
  cp "$W/run/results.md" "$OUT/"; gzip -c "$W/run/results.json" > "$OUT/results.json.gz"
fi
if [ -z "${DT_SKIP_SMALL:-}" ]; then
  step small 120 "$B/dualtime" run --backends cuda --operations \
    add,gelu_add,sum,softmax,rmsnorm,layernorm,residual_layernorm,cross_entropy \
    --row-shapes 1x127,17x257,128x1024 --samples 21 --quiet --output "$W/small"
  [ -f "$W/small/results.md" ] && sed -n '/^## E2E floor/,/^## [^E]/p' "$W/small/results.md" >> "$S"
fi
tar czf "$OUT/logs.tgz" -C "$W" --exclude='run/results.json' . 2>/dev/null
if [ -n "${DT_MEMCHECK_LARGE:-}" ]; then
  DUALTIME_GPU_TEST_REPS=1 DUALTIME_GPU_TEST_NO_FAULT=1 \
    step memcheck "${DT_MEMCHECK_S:-200}" compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
  grep -E "ERROR SUMMARY" "$W/memcheck.log" | tail -1 | tee -a "$S"
  grep -cE "^ok " "$W/memcheck.log" | sed 's/^/   cases ok under memcheck: /' | tee -a "$S"
  tar czf "$OUT/logs.tgz" -C "$W" --exclude='run/results.json' . 2>/dev/null
fi
exit 0
