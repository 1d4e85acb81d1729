# scripts/device-common.sh — sourced by the device batch scripts (device-batch.sh,
# device-final.sh, device-small.sh) after `cd` to the repository root; $1 names the
# scratch folder. Sets B (the carried build, DT_BUILD_DIR, default build), OUT (what comes
# back, default ./device-out), W (scratch), S (summary.txt under OUT), the library path,
# and step NAME LIMIT CMD...: runs CMD under a time limit, logs to $W/NAME.log, appends
# its exit status, duration and last TAIL (default 3) lines to the summary.
B="${DT_BUILD_DIR:-build}"; OUT="${OUT:-$PWD/device-out}"; mkdir -p "$OUT"
W="$(mktemp -d "/tmp/$1.XXXXXX")"; S="$OUT/summary.txt"
export LD_LIBRARY_PATH="$PWD/$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
step() { local name="$1" limit="$2"; shift 2
  local t0; t0=$(date +%s); timeout "$limit" "$@" > "$W/$name.log" 2>&1; local r=$?
  echo "== $name: exit $r ($(( $(date +%s) - t0 )) s)" | tee -a "$S"
  tail -"${TAIL:-3}" "$W/$name.log" | cut -c1-300 | sed 's/^/   /' | tee -a "$S"; }
