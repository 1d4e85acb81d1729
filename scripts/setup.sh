#!/usr/bin/env bash
# scripts/setup.sh — installs what dualtime needs on Debian 12 (only what is missing) and
# builds it into build/. Used by scripts/bench.sh and scripts/test.sh; safe to re-run.
#   DT_BUILD_DIR   build directory (default: build)
#   DT_CMAKE_ARGS  extra CMake arguments (e.g. -DDT_SANITIZE=ON)
#   DT_SETUP_LOG   when set, the package install and build output go to this file and
#                  only a one-line result is printed (the log's tail on a failure)
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in build-essential cmake pkg-config libjansson-dev libssl-dev python3-torch git; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
log="${DT_SETUP_LOG:-}"
if [ -n "$log" ]; then
  mkdir -p "$(dirname "$log")"
  : > "$log"
  # everything below goes to the log; on a failure its tail is shown
  exec 3>&2 4>&1 >>"$log" 2>&1
  trap 'rc=$?; if [ $rc -ne 0 ]; then echo "setup: FAILED (exit $rc); the end of $log:" >&3; tail -n 40 "$log" >&3; fi' EXIT
fi
if ((${#need[@]})); then
  echo "setup: installing ${need[*]}" >&2
  [ -n "$log" ] && echo "setup: installing ${need[*]} (log: $log)" >&3
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

build="${DT_BUILD_DIR:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${DT_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"
[ -n "$log" ] && echo "setup: built $build (log: $log)" >&3
exit 0
