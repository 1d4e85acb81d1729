#!/usr/bin/env bash
# scripts/device-small.sh — the small-shape experiment of docs/perf.md ("Small shapes"),
# on a GPU machine from a carried build: the GPU backend test (every op and shape through
# the FP64 oracle, with the default launch geometry, with DUALTIME_LAUNCH_FILL=0 and with
# DUALTIME_ROW_TPR=128), then the row ops at 1x127, 17x257 and 128x1024 side by side with
# PyTorch under four settings, one dualtime run each (each run measures its own floors):
#   fill0    DUALTIME_LAUNCH_FILL=0 (the v1 geometry), --prime 1
#   fill1    the default geometry (small problems spread over the SMs), --prime 1
#   prime8   the default geometry, --prime 8
#   tpr128   DUALTIME_ROW_TPR=128 (a 128-thread block per row), --prime 1
# OUT=... bash scripts/device-small.sh   (never changes the card's clocks or settings)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device-common.sh dt-small
SAMPLES="${DT_SMALL_SAMPLES:-21}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv > "$W/machine.txt" 2>&1
step gpu_test 240 "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
grep -E "^FAIL" "$W/gpu_test.log" | head -5 | tee -a "$S"
ROWOPS=softmax,rmsnorm,layernorm,residual_layernorm,cross_entropy,sum
DUALTIME_LAUNCH_FILL=0 DUALTIME_GPU_TEST_QUICK=1 DUALTIME_GPU_TEST_NO_FAULT=1 \
  step gpu_test_fill0 120 "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
DUALTIME_ROW_TPR=128 DUALTIME_GPU_TEST_QUICK=1 DUALTIME_GPU_TEST_NO_FAULT=1 \
DUALTIME_GPU_TEST_OPS=$ROWOPS \
  step gpu_test_tpr128 120 "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
ARGS=(run --backends cuda --operations add,gelu_add,$ROWOPS
      --row-shapes 1x127,17x257,128x1024 --samples "$SAMPLES" --quiet)
table() { [ -f "$W/$1/results.md" ] || return 0
  sed -n '/^## E2E floor/,/^## [^E]/p' "$W/$1/results.md" | grep -E "^\||floor" >> "$S"
  tar czf "$OUT/small.tgz" -C "$W" . 2>/dev/null; }
DUALTIME_LAUNCH_FILL=0 step fill0 150 "$B/dualtime" "${ARGS[@]}" --device-timing --output "$W/fill0"
table fill0
step fill1 150 "$B/dualtime" "${ARGS[@]}" --device-timing --output "$W/fill1"
table fill1
step prime8 120 "$B/dualtime" "${ARGS[@]}" --prime 8 --output "$W/prime8"
table prime8
DUALTIME_ROW_TPR=128 step tpr128 150 "$B/dualtime" "${ARGS[@]}" --device-timing --output "$W/tpr128"
table tpr128
tar czf "$OUT/small.tgz" -C "$W" . 2>/dev/null
exit 0
