#!/usr/bin/env bash
# scripts/device-batch.sh — the batch of checks and measurements one lease allows, in the
# order that matters most (each step has its own time limit so the batch always returns):
#   1. benchmark: default matrix on cuda with device timing (results.md, results.json.gz)
#   2. the helper's GPU test (fail-closed rules, persistent probe mode, restoration)
#   3. the CUDA backend GPU test for gemm (every gemm shape x views through the oracle)
#   4. compute-sanitizer memcheck over the quick GPU test
#   5. gemm v1 against v2, and gemm with --input-views, side by side with PyTorch
# Usage (from a carried build): OUT=... bash scripts/device-batch.sh
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device-common.sh dt-batch
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >> "$S" 2>&1
step bench "${DT_BENCH_S:-240}" "$B/dualtime" run --backends cuda --device-timing --quiet --output "$W/run"
[ -f "$W/run/results.md" ] && cp "$W/run/results.md" "$OUT/" && gzip -c "$W/run/results.json" > "$OUT/results.json.gz"
TAIL=12 step timing_gpu 90 "$B/tests/gpu/test_timing_gpu" "$B/tests/gpu/test_timing_gpu_impl.so"
TAIL=4 DUALTIME_GPU_TEST_OPS=gemm step gemm_oracle 60 "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
DUALTIME_GPU_TEST_QUICK=1 DUALTIME_GPU_TEST_REPS=2 DUALTIME_GPU_TEST_NO_FAULT=1 \
  step memcheck 90 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
grep -E "ERROR SUMMARY" "$W/memcheck.log" | tail -1 | tee -a "$S"
GEMM=(--backends cuda --operations gemm --gemm-shapes 1024x1024x1024,4096x4096x4096 --device-timing --samples 5 --quiet)
DUALTIME_GEMM_VARIANT=v1 step gemm_v1 50 "$B/dualtime" run "${GEMM[@]}" --output "$W/gemm-v1"
step gemm_v2_views 50 "$B/dualtime" run "${GEMM[@]}" --input-views --output "$W/gemm-v2-views"
for d in gemm-v1 gemm-v2-views; do
  [ -f "$W/$d/results.md" ] && { echo "--- $d"; sed -n '/## Device control/,/^$/p' "$W/$d/results.md" | head -12; } >> "$S"
done
tar czf "$OUT/logs.tgz" -C "$W" --exclude='run/results.json' . 2>/dev/null
exit 0
