#!/usr/bin/env bash
# scripts/bench.sh — set up, build, and run the default benchmark (cuda where a GPU is
# usable, else cpu) into a new directory out/run-<time>. Extra arguments go to
# `dualtime run` (e.g. --quick, --backends cpu). The install and build output go to
# out/build.log (one line says so; its tail is shown on a failure).
#   DT_BUILD_DIR  build directory (default: build)
#   DT_OUT_DIR    where the run directory and build.log go (default: out)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${DT_OUT_DIR:-out}"
mkdir -p "$out"
DT_SETUP_LOG="$out/build.log" bash scripts/setup.sh
dir="$out/run-$(date -u +%Y%m%d-%H%M%S)"
exec "${DT_BUILD_DIR:-build}/dualtime" run --output "$dir" "$@"
