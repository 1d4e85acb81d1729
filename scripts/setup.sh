#!/usr/bin/env bash
# scripts/setup.sh — installs what dualtime needs on Debian 12 (only what is missing) and
# builds it into build/. Used by scripts/bench.sh and scripts/test.sh; safe to re-run.
#   DT_BUILD_DIR   build directory (default: build)
#   DT_CMAKE_ARGS  extra CMake arguments (e.g. -DDT_SANITIZE=ON)
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in build-essential cmake pkg-config libjansson-dev libssl-dev python3-torch git; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ((${#need[@]})); then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

build="${DT_BUILD_DIR:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${DT_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"
