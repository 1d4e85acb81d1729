#!/usr/bin/env bash
# fuzz/run.sh — builds the libFuzzer harnesses (clang, -DDT_FUZZ=ON) into build-fuzz and
# runs each for N seconds on its seed corpus (fuzz/corpus/<name>/). Exit status: 0 no
# crash, 1 a harness crashed (the input is saved as build-fuzz/<harness>-crash-*,
# -leak-*, -timeout-* or -oom-*), 2 no clang or the build failed.
#   fuzz/run.sh [SECONDS] [HARNESS...]     default 20 s each, all harnesses
#   DT_FUZZ_BUILD_DIR  build directory (default: build-fuzz)
#   DT_FUZZ_JOBS       build parallelism (default: 2)
# New inputs that the fuzzer finds go to build-fuzz/corpus/<name>/ (the checked-in seed
# corpus is never written).
set -uo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
shift || true
names=("$@")
((${#names[@]})) || names=(fuzz_results_load fuzz_protocol fuzz_shapes fuzz_answers)
build="${DT_FUZZ_BUILD_DIR:-build-fuzz}"

CC="${DT_FUZZ_CC:-}"
if [ -z "$CC" ]; then
  for c in clang clang-14; do command -v "$c" >/dev/null 2>&1 && { CC=$c; break; }; done
fi
if [ -z "$CC" ]; then
  echo "fuzz: clang not found (apt-get install clang libclang-rt-14-dev libomp-14-dev)" >&2
  exit 2
fi
mkdir -p "$build"
if ! cmake -S . -B "$build" -DCMAKE_C_COMPILER="$CC" -DDT_FUZZ=ON \
     -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/fuzz-cmake.log" 2>&1; then
  tail -20 "$build/fuzz-cmake.log" >&2; echo "fuzz: configure failed" >&2; exit 2
fi
if ! cmake --build "$build" -j"${DT_FUZZ_JOBS:-2}" --target "${names[@]}" >"$build/fuzz-build.log" 2>&1; then
  grep -m20 -E "error|Error" "$build/fuzz-build.log" >&2; echo "fuzz: build failed" >&2; exit 2
fi

status=0
for n in "${names[@]}"; do
  seed="fuzz/corpus/$n"
  work="$build/corpus/$n"
  mkdir -p "$work"
  log="$build/$n.log"
  # -rss_limit_mb: a hostile input must not make a reader allocate without bound.
  ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  "$build/$n" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$build/$n-" "$work" "$seed" >"$log" 2>&1
  rc=$?
  execs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
  if [ $rc -ne 0 ]; then
    status=1
    echo "fuzz: $n: FAILED (rc=$rc) after ${execs:-?} executions; log $log:" >&2
    grep -m5 -E "ERROR|SUMMARY|runtime error|Test unit written" "$log" >&2
  else
    echo "fuzz: $n: ok, ${execs:-?} executions in ${secs} s"
  fi
done
exit $status
