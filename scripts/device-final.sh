#!/usr/bin/env bash
# scripts/device-final.sh — a short closing batch: the helper's GPU test, racecheck over the
# kernels that use shared memory, the default-matrix benchmark with device timing, and
# gemm with DUALTIME_GEMM_BK=16. OUT=... bash scripts/device-final.sh
set -uo pipefail
cd "$(dirname "$0")/.."
B="${DT_BUILD_DIR:-build}"; OUT="${OUT:-$PWD/device-out}"; mkdir -p "$OUT"
W="$(mktemp -d /tmp/dt-final.XXXXXX)"; S="$OUT/summary.txt"
export LD_LIBRARY_PATH="$PWD/$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
step() { local name="$1" limit="$2"; shift 2
  local t0=$(date +%s); timeout "$limit" "$@" > "$W/$name.log" 2>&1; local r=$?
  echo "== $name: exit $r ($(( $(date +%s) - t0 )) s)" | tee -a "$S"
  tail -"${TAIL:-3}" "$W/$name.log" | cut -c1-300 | sed 's/^/   /' | tee -a "$S"; }
TAIL=6 step timing_gpu 60 "$B/tests/gpu/test_timing_gpu" "$B/tests/gpu/test_timing_gpu_impl.so"
DUALTIME_GPU_TEST_QUICK=1 DUALTIME_GPU_TEST_REPS=1 DUALTIME_GPU_TEST_NO_FAULT=1 \
DUALTIME_GPU_TEST_OPS=sum,softmax,layernorm,cross_entropy,gemm \
  step racecheck 90 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY" "$W/racecheck.log" | tail -2 | tee -a "$S"
step bench 200 "$B/dualtime" run --backends cuda --device-timing --quiet --output "$W/run"
[ -f "$W/run/results.md" ] && cp "$W/run/results.md" "$OUT/" && gzip -c "$W/run/results.json" > "$OUT/results.json.gz"
DUALTIME_GEMM_BK=16 step gemm_bk16 40 "$B/dualtime" run --backends cuda --operations gemm \
  --gemm-shapes 4096x4096x4096 --device-timing --samples 5 --quiet --output "$W/bk16"
[ -f "$W/bk16/results.md" ] && sed -n '/## Device control/,/^$/p' "$W/bk16/results.md" | head -8 >> "$S"
tar czf "$OUT/logs.tgz" -C "$W" --exclude='run/results.json' . 2>/dev/null
exit 0
