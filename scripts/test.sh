#!/usr/bin/env bash
# scripts/test.sh — set up, build, and run the test suite with ctest. GPU tests skip
# (exit 77) where no GPU is usable. A second build under AddressSanitizer and
# UndefinedBehaviorSanitizer runs the unit tests (set DT_SKIP_SANITIZE=1 to skip it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir "${DT_BUILD_DIR:-build}" --output-on-failure -j2
if [ "${DT_SKIP_SANITIZE:-0}" != 1 ]; then
  DT_BUILD_DIR=build-asan DT_CMAKE_ARGS="-DDT_SANITIZE=ON" bash scripts/setup.sh
  ASAN_OPTIONS=detect_leaks=0 ctest --test-dir build-asan --output-on-failure -j2 -L unit
fi
