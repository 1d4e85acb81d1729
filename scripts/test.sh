#!/usr/bin/env bash
# scripts/test.sh — set up, build, and run the test suite with ctest. GPU tests skip
# (exit 77) where no GPU is usable. A second build under AddressSanitizer and
# UndefinedBehaviorSanitizer runs the unit tests (set DT_SKIP_SANITIZE=1 to skip it).
# Then a short fuzz run: fuzz/run.sh builds the libFuzzer harnesses with clang into
# build-fuzz and runs each for DT_FUZZ_SECONDS (default 20; 3 harnesses) on its corpus;
# a crash fails the tests. Without clang the fuzz run is skipped with a message (set
# DT_SKIP_FUZZ=1 to skip it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# Tools only the tests use: chromium (tests/e2e/test_plots_browser.sh renders the SVG
# plots), clang and its libFuzzer runtime (the fuzz run), slurm-wlm and munge
# (tests/e2e/test_slurm.sh runs a job array on a one-node Slurm it starts by hand).
# Installed when missing; if the install fails the browser test skips, the fuzz run says
# it was skipped, and the Slurm test installs again itself (under CI=true it then fails).
need=()
for pkg in chromium clang libclang-rt-14-dev libomp-14-dev slurm-wlm munge; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ((${#need[@]})); then
  echo "test: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      "${need[@]}" >/dev/null; } || echo "test: could not install ${need[*]}" >&2
fi

ctest --test-dir "${DT_BUILD_DIR:-build}" --output-on-failure -j2
if [ "${DT_SKIP_SANITIZE:-0}" != 1 ]; then
  DT_BUILD_DIR=build-asan DT_CMAKE_ARGS="-DDT_SANITIZE=ON" bash scripts/setup.sh
  ASAN_OPTIONS=detect_leaks=0 ctest --test-dir build-asan --output-on-failure -j2 -L unit
fi
if [ "${DT_SKIP_FUZZ:-0}" != 1 ]; then
  if command -v clang >/dev/null 2>&1 || command -v clang-14 >/dev/null 2>&1; then
    bash fuzz/run.sh "${DT_FUZZ_SECONDS:-20}"
  else
    echo "test: SKIPPED the fuzz run: clang is not available (apt-get install clang libclang-rt-14-dev libomp-14-dev)" >&2
  fi
fi
