#!/usr/bin/env bash
# scripts/bench.sh — set up, build, and run the default benchmark (cuda where a GPU is
# usable, else cpu) into a new directory out/run-<time>. Extra arguments go to
# `dualtime run` (e.g. --quick, --backends cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
dir="out/run-$(date -u +%Y%m%d-%H%M%S)"
exec "${DT_BUILD_DIR:-build}/dualtime" run --output "$dir" "$@"
