#!/usr/bin/env bash
# scripts/device-pack.sh — the build folder the GPU machine gets: the runtime files of
# build/ (DT_BUILD_DIR; binaries, libdualtime_*.so, the PyTorch worker, the GPU tests),
# without what only this machine uses (objects, static libraries, CMake files, the
# fuzzers), copied into .device-build/ (git-ignored; ~30 MB of the device tool's 64 MiB),
# with go.sh: `bash .device-build/go.sh STEPS` runs scripts/device.sh on it.
# Then carry `.device-build` in the device tool's run (docs/device-workflow.md).
set -euo pipefail
cd "$(dirname "$0")/.."
src="${DT_BUILD_DIR:-build}"
[ -x "$src/dualtime" ] || { echo "device-pack: no $src/dualtime: run scripts/setup.sh first" >&2; exit 2; }
dst=.device-build
rm -rf "$dst.new"; mkdir -p "$dst.new"
(cd "$src" && tar cf - --exclude=CMakeFiles --exclude='*.o' --exclude='*.a' --exclude=Makefile \
   --exclude='*.cmake' --exclude=fuzz .) | (cd "$dst.new" && tar xf -)
cat > "$dst.new/go.sh" <<'GO'
#!/usr/bin/env bash
# .device-build/go.sh STEPS... — scripts/device.sh on this carried build (scripts/device-pack.sh)
exec env DT_BUILD_DIR=.device-build bash scripts/device.sh "$@"
GO
# carried inputs of resumable steps (*.tgz, *.json.gz put here by hand) stay
[ -d "$dst" ] && find "$dst" -maxdepth 1 \( -name '*.tgz' -o -name '*.json.gz' \) -exec cp {} "$dst.new/" \;
rm -rf "$dst"; mv "$dst.new" "$dst"
echo "device-pack: $dst ($(du -sh "$dst" | cut -f1)) from $src at $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo '+changes')"
