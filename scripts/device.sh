#!/usr/bin/env bash
# scripts/device.sh — every measurement and check on the GPU machine, as named steps, from a
# build folder carried there (built on the CPU machine with the same CUDA;
# docs/device-workflow.md). Never changes the card's clocks or settings.
#
#   bash scripts/device.sh [--dry-run] [STEP|GROUP ...] [-- extra `dualtime run` args for bench]
#   bash scripts/device.sh --list          the steps and groups, one line each
#
# Default: the group `all`. Each step has its own time limit, so a list always returns; its
# exit status, duration and last lines go to $OUT/summary.txt as it finishes. $OUT (default
# ./device-out) gets summary.txt, machine.txt (before and after), results.md and
# results.json.gz of the last benchmark step, and logs.tgz (every log and run folder,
# refreshed after each step: the device tool brings back at most 8 files).
# Exit: 0 every step passed, 1 a step failed (or skipped), 2 bad arguments.
#
# Knobs (environment):
#   DT_BUILD_DIR      the carried build folder (default build)
#   DT_BACKENDS       backend of the benchmark steps (default cuda; cpu drops --device-timing)
#   DT_BENCH_ARGS     more arguments of the bench step (e.g. "--samples 21"); DT_BENCH_S its limit
#   DT_GPU_TEST_OPS   a,b: only these ops in gpu-tests
#   DT_RACECHECK_OPS  a,b: only these ops under racecheck (default all)
#   DT_EXTRA_RUN      the extra step's arguments: `dualtime run --backends cuda $DT_EXTRA_RUN`
#   DT_SMALL_SAMPLES  samples of the small-* steps (default 21)
#   DT_MEMCHECK_S     limit of memcheck-large (default 200)
#   DT_STEP_TIMEOUT   one limit for every step (overrides each step's own)
#   DT_TAIL           lines of each log in the summary (default: the step's own)
#   DT_SKIP           steps to leave out of the list ("racecheck small")
#   DT_DRY_RUN=1      like --dry-run: print each step's command, run nothing
# shellcheck disable=SC2317 # the step_* functions are called by name
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

# name|what it does. The one list of steps: --list prints it, arguments are checked against it.
# shellcheck disable=SC2016 # backquotes and $ in the descriptions are text
STEPS='gpu-tests|CUDA backend GPU test: every op and shape through the FP64 oracle (DT_GPU_TEST_OPS)
timing-gpu|the timing helper GPU test (fail-closed rules, persistent probe mode, restoration)
gemm-oracle|CUDA backend GPU test for gemm only (every gemm shape x views)
views|every op x default shapes with --input-views, both frameworks, 3 samples
memcheck|compute-sanitizer memcheck over the quick GPU test
racecheck|compute-sanitizer racecheck over the quick GPU test (DT_RACECHECK_OPS)
memcheck-large|compute-sanitizer memcheck over the full GPU test, 8192^2 and 4096^3 included
bench|default-matrix benchmark with device timing (DT_BACKENDS, DT_BENCH_ARGS, args after --)
extra|one more `dualtime run --backends cuda $DT_EXTRA_RUN` (skipped when unset)
small|the row ops at 1x127,17x257,128x1024, 21 samples: E2E floor table into the summary
gemm-v1|gemm 1024^3 and 4096^3 with DUALTIME_GEMM_VARIANT=v1, device control table
gemm-views|gemm 1024^3 and 4096^3 (current variant) with --input-views, device control table
gpu-tests-fill0|quick GPU test with DUALTIME_LAUNCH_FILL=0 (the v1 launch geometry)
gpu-tests-tpr128|quick GPU test of the row ops with DUALTIME_ROW_TPR=128
small-fill0|small shapes, DUALTIME_LAUNCH_FILL=0, device timing
small-fill1|small shapes, default geometry, device timing
small-prime8|small shapes, default geometry, --prime 8
small-tpr128|small shapes, DUALTIME_ROW_TPR=128, device timing
rerun|two default-matrix runs back to back (rerun-a, rerun-b), wall time each, then compare B vs A (must say no change, exit 0)
plant|DT_PLANT (default softmax:0.10) slowed native op at 8192^2 and 128x1024 (and add 17x257 unplanted), compared against rerun-a (must be a regression, exit 1)
dtypes|the row ops of the default matrix in DT_DTYPES (default bf16,fp16) with device timing
long|CUDA backend GPU test of the long-row, vocabulary and unaligned-view shapes (DUALTIME_GPU_TEST_SHAPES=long) in every dtype
shards|a two-shard plan of a small CUDA matrix, both shards one after the other on this GPU, merged, against a single run of the same flags (same case ids and input SHA-256s)
cpu-kernels|the CPU kernel test on the host CPU: both ISA copies (CPUID dispatch), the v1 GELU and streaming stores through the FP64 reference'
# name|its steps
GROUP_LIST='all|gpu-tests timing-gpu views memcheck racecheck bench
tests|gpu-tests timing-gpu views
sanitize|memcheck racecheck
batch|bench timing-gpu gemm-oracle memcheck gemm-v1 gemm-views
final|gpu-tests racecheck extra bench small
small-experiment|gpu-tests gpu-tests-fill0 gpu-tests-tpr128 small-fill0 small-fill1 small-prime8 small-tpr128
acceptance|rerun plant'

usage() { sed -n '7,8p' "$0" | sed 's/^# *//' >&2; exit 2; }
list() {
  echo "steps:"; while IFS='|' read -r n d; do printf '  %-18s %s\n' "$n" "$d"; done <<<"$STEPS"
  echo "groups (default: all):"
  while IFS='|' read -r n d; do printf '  %-18s %s\n' "$n" "$d"; done <<<"$GROUP_LIST"
}
is_step() { cut -d'|' -f1 <<<"$STEPS" | grep -qxF -- "$1"; }
group_of() { [[ $1 =~ ^[a-z0-9-]+$ ]] && sed -n "s/^$1|//p" <<<"$GROUP_LIST"; }

DRY="${DT_DRY_RUN:-}"; names=(); BENCH_EXTRA=()
while (($#)); do
  case "$1" in
    --list) list; exit 0 ;;
    --dry-run) DRY=1 ;;
    -h|--help) usage ;;
    --) shift; BENCH_EXTRA=("$@"); break ;;
    -*) echo "device.sh: unknown option '$1'" >&2; usage ;;
    *) names+=("$1") ;;
  esac
  shift
done
((${#names[@]})) || names=(all)
todo=()
for n in "${names[@]}"; do
  if is_step "$n"; then todo+=("$n")
  elif [ -n "$(group_of "$n")" ]; then read -ra g <<<"$(group_of "$n")"; todo+=("${g[@]}")
  else echo "device.sh: unknown step '$n' (bash scripts/device.sh --list)" >&2; exit 2; fi
done
uniq_todo=()   # a step named twice (through two groups) runs once, at its first place
for s in "${todo[@]}"; do [[ " ${uniq_todo[*]} " == *" $s "* ]] || uniq_todo+=("$s"); done
todo=("${uniq_todo[@]}")
for s in ${DT_SKIP:-}; do is_step "$s" || { echo "device.sh: DT_SKIP: unknown step '$s'" >&2; exit 2; }; done

B="${DT_BUILD_DIR:-build}"
OUT="${OUT:-$PWD/device-out}"
if [ -n "$DRY" ]; then S=/dev/null; W='/tmp/dt-device.XXXXXX'
else
  mkdir -p "$OUT"; S="$OUT/summary.txt"
  W="$(mktemp -d /tmp/dt-device.XXXXXX)"   # scratch: logs and run folders, archived to logs.tgz
fi
export LD_LIBRARY_PATH="$PWD/$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CUDA_TEST=("$B/tests/gpu/test_cuda_backend" "$B/libdualtime_cuda.so")
SANITIZER=(compute-sanitizer --error-exitcode 9 --tool)
BACKENDS="${DT_BACKENDS:-cuda}"
DEVT=(); [ "$BACKENDS" = cpu ] || DEVT=(--device-timing)
rc=0

if [ -z "$DRY" ] && [ ! -x "$B/dualtime" ]; then
  echo "device.sh: no $B/dualtime: carry the build folder (DT_BUILD_DIR, default build)" >&2
  exit 2
fi

# run NAME LIMIT TAIL CMD...: runs CMD (env VAR=... allowed) under a time limit into
# $W/NAME.log; appends exit status, duration and the log's last lines to the summary.
run() { local name="$1" limit="${DT_STEP_TIMEOUT:-$2}" tail="${DT_TAIL:-$3}"; shift 3
  if [ -n "$DRY" ]; then printf '%s (limit %ss):' "$name" "$limit"; printf ' %q' "$@"; echo; return 0; fi
  local t0 r; t0=$(date +%s); timeout "$limit" "$@" > "$W/$name.log" 2>&1; r=$?
  local verdict=FAIL; [ "$r" = 0 ] && verdict=pass; [ "$r" = 77 ] && verdict=SKIP
  echo "== $name: exit $r ($(( $(date +%s) - t0 )) s) $verdict" | tee -a "$S"
  tail -"$tail" "$W/$name.log" | cut -c1-300 | sed 's/^/   /' | tee -a "$S"
  [ "$r" = 0 ] || rc=1
}
# note FILE SED-RANGE [HEAD]: a section of a step's output into the summary
note() { [ -f "$1" ] && sed -n "$2" "$1" | head -"${3:-40}" | tee -a "$S"; return 0; }
fails() { [ -f "$W/$1.log" ] && grep -E "^FAIL" "$W/$1.log" | head -5 | tee -a "$S"; return 0; }
summary_of() { [ -f "$W/$1.log" ] && grep -E "$2" "$W/$1.log" | tail -2 | tee -a "$S"; return 0; }
keep_results() { # the benchmark's results.md and results.json.gz come back
  [ -f "$W/$1/results.md" ] || return 0
  cp "$W/$1/results.md" "$OUT/"; gzip -c "$W/$1/results.json" > "$OUT/results.json.gz"; }
# Ops by the registry (dualtime list --json), never by a copy here: the non-gemm ops.
row_ops() {
  if [ -n "$DRY" ] && [ ! -x "$B/dualtime" ]; then echo "<row ops of dualtime list --json>"; return; fi
  "$B/dualtime" list --json | python3 -c 'import json,sys
print(",".join(o["name"] for o in json.load(sys.stdin)["ops"] if not o["gemm"]))'
}
ops_env() { [ -n "$1" ] && ops=(DUALTIME_GPU_TEST_OPS="$1") || ops=(); }  # only when set
small_args() { echo run --backends "$BACKENDS" --operations "$(row_ops)" --row-shapes 1x127,17x257,128x1024 \
  --samples "${DT_SMALL_SAMPLES:-21}" --quiet; }
floor_table() { [ -f "$W/$1/results.md" ] || return 0   # the E2E floor table, no prose
  sed -n '/^## E2E floor/,/^## [^E]/p' "$W/$1/results.md" | grep -E "^\||floor" | tee -a "$S"; }
# shellcheck disable=SC2054 # the commas are dualtime's
gemm_args=(--backends cuda --operations gemm --gemm-shapes 1024x1024x1024,4096x4096x4096
           --device-timing --samples 5 --quiet)

step_gpu-tests() { local ops; ops_env "${DT_GPU_TEST_OPS:-}"
  run gpu-tests 240 3 env "${ops[@]}" "${CUDA_TEST[@]}"; fails gpu-tests; }
step_cpu-kernels() { run cpu-kernels 120 4 "$B/tests/native/test_cpu_kernels"; }
step_timing-gpu() { run timing-gpu 90 12 "$B/tests/gpu/test_timing_gpu" "$B/tests/gpu/test_timing_gpu_impl.so"; }
step_gemm-oracle() { run gemm-oracle 60 4 env DUALTIME_GPU_TEST_OPS=gemm "${CUDA_TEST[@]}"; }
step_views() { run views 300 3 "$B/dualtime" run --backends "$BACKENDS" --input-views --samples 3 \
  --sample-ms 5 --warmup-ms 20 --quiet --output "$W/views"; }
step_memcheck() { run memcheck 90 3 env DUALTIME_GPU_TEST_QUICK=1 DUALTIME_GPU_TEST_REPS=2 \
  DUALTIME_GPU_TEST_NO_FAULT=1 "${SANITIZER[@]}" memcheck "${CUDA_TEST[@]}"
  summary_of memcheck "ERROR SUMMARY"; }
step_racecheck() { local ops; ops_env "${DT_RACECHECK_OPS:-}"
  run racecheck 180 3 env DUALTIME_GPU_TEST_QUICK=1 DUALTIME_GPU_TEST_REPS=1 \
  DUALTIME_GPU_TEST_NO_FAULT=1 "${ops[@]}" "${SANITIZER[@]}" racecheck "${CUDA_TEST[@]}"
  summary_of racecheck "RACECHECK SUMMARY|ERROR SUMMARY"; }
step_memcheck-large() { run memcheck-large "${DT_MEMCHECK_S:-200}" 3 env DUALTIME_GPU_TEST_REPS=1 \
  DUALTIME_GPU_TEST_NO_FAULT=1 "${SANITIZER[@]}" memcheck "${CUDA_TEST[@]}"
  summary_of memcheck-large "ERROR SUMMARY"
  [ -f "$W/memcheck-large.log" ] && grep -cE "^ok " "$W/memcheck-large.log" |
    sed 's/^/   cases ok under memcheck: /' | tee -a "$S"; }
step_bench() { rm -rf "$W/run"
  # shellcheck disable=SC2086 # word splitting of DT_BENCH_ARGS is intended
  run bench "${DT_BENCH_S:-240}" 3 "$B/dualtime" run --backends "$BACKENDS" "${DEVT[@]}" \
    ${DT_BENCH_ARGS:-} "${BENCH_EXTRA[@]}" --quiet --output "$W/run"
  keep_results run; }
step_extra() { [ -n "${DT_EXTRA_RUN:-}" ] || { echo "== extra: skipped (DT_EXTRA_RUN unset)" | tee -a "$S"; return; }
  # shellcheck disable=SC2086 # word splitting of DT_EXTRA_RUN is intended
  run extra 120 3 "$B/dualtime" run --backends cuda $DT_EXTRA_RUN --quiet --output "$W/extra"
  note "$W/extra/results.md" '/^## Device control/,/^$/p'; }
step_small() { read -ra a <<<"$(small_args)"; run small 120 3 "$B/dualtime" "${a[@]}" --output "$W/small"
  floor_table small; }
step_gemm-v1() { run gemm-v1 50 3 env DUALTIME_GEMM_VARIANT=v1 "$B/dualtime" run "${gemm_args[@]}" \
  --output "$W/gemm-v1"; note "$W/gemm-v1/results.md" '/## Device control/,/^$/p' 12; }
step_gemm-views() { run gemm-views 50 3 "$B/dualtime" run "${gemm_args[@]}" --input-views \
  --output "$W/gemm-views"; note "$W/gemm-views/results.md" '/## Device control/,/^$/p' 12; }
step_gpu-tests-fill0() { run gpu-tests-fill0 120 3 env DUALTIME_LAUNCH_FILL=0 DUALTIME_GPU_TEST_QUICK=1 \
  DUALTIME_GPU_TEST_NO_FAULT=1 "${CUDA_TEST[@]}"; fails gpu-tests-fill0; }
step_gpu-tests-tpr128() { run gpu-tests-tpr128 120 3 env DUALTIME_ROW_TPR=128 DUALTIME_GPU_TEST_QUICK=1 \
  DUALTIME_GPU_TEST_NO_FAULT=1 DUALTIME_GPU_TEST_OPS="$(row_ops)" "${CUDA_TEST[@]}"; fails gpu-tests-tpr128; }
# small_step NAME ENV|- ARGS...: the small shapes under one setting (ENV: VAR=value)
small_step() { local name="$1" e=(); [ "$2" = - ] || e=("$2"); shift 2; read -ra a <<<"$(small_args)"
  run "$name" 150 3 env "${e[@]}" "$B/dualtime" "${a[@]}" "$@" --output "$W/$name"
  floor_table "$name"; }
step_small-fill0() { small_step small-fill0 DUALTIME_LAUNCH_FILL=0 "${DEVT[@]}"; }
step_small-fill1() { small_step small-fill1 - "${DEVT[@]}"; }
step_small-prime8() { small_step small-prime8 - --prime 8; }
step_small-tpr128() { small_step small-tpr128 DUALTIME_ROW_TPR=128 "${DEVT[@]}"; }

# rerun: the issue-12 acceptance pair. Each run's wall time goes to the summary; each
# results.md comes back (rerun-a.md, rerun-b.md), compare's Markdown too (compare-ab.md).
rerun_one() { local t0; t0=$(date +%s)
  run "$1" 300 3 "$B/dualtime" run --backends cuda "${BENCH_EXTRA[@]}" --quiet --output "$W/$1"
  echo "   $1 wall: $(( $(date +%s) - t0 )) s" | tee -a "$S"
  [ -f "$W/$1/results.md" ] && cp "$W/$1/results.md" "$OUT/$1.md"; return 0; }
step_rerun() { rerun_one rerun-a; rerun_one rerun-b
  run compare-ab 60 12 "$B/dualtime" compare "$W/rerun-a/results.json" "$W/rerun-b/results.json"
  cp "$W/compare-ab.log" "$OUT/compare-ab.md" 2>/dev/null; return 0; }
step_plant() { local p="${DT_PLANT:-softmax:0.10}"
  run plant 200 3 env DUALTIME_PLANT_SLOWDOWN="$p" "$B/dualtime" run --backends cuda \
    --operations "${p%%:*},add" --row-shapes 8192x8192,128x1024,17x257 \
    --quiet --output "$W/plant"
  [ -f "$W/rerun-a/results.json" ] || { echo "   plant: no rerun-a to compare with" | tee -a "$S"; return 0; }
  run compare-plant 60 12 "$B/dualtime" compare "$W/rerun-a/results.json" "$W/plant/results.json"
  cp "$W/compare-plant.log" "$OUT/compare-plant.md" 2>/dev/null; return 0; }
step_dtypes() { run dtypes 300 3 "$B/dualtime" run --backends cuda --operations "$(row_ops)" \
    --dtypes "${DT_DTYPES:-bf16,fp16}" --quiet --output "$W/dtypes"
  [ -f "$W/dtypes/results.md" ] && cp "$W/dtypes/results.md" "$OUT/dtypes.md"; return 0; }
step_long() { run long 240 60 env DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_NO_FAULT=1 "${CUDA_TEST[@]}"
  fails long; }

# shards: issue 20 on one GPU. The plan's flags are the single run's flags.
# shellcheck disable=SC2054 # the commas are dualtime's
shard_flags=(--backends cuda --operations add,softmax,rmsnorm,gemm --row-shapes 17x257,128x1024,1024x4096
             --gemm-shapes 128x128x128,513x257x129 --device-timing --samples 5)
step_shards() { rm -rf "$W/shards" "$W/shards-single"
  run shards-plan 30 3 "$B/dualtime" plan --shards 2 --output "$W/shards" "${shard_flags[@]}"
  run shards-0 300 3 "$B/dualtime" run --plan "$W/shards/plan.json" --shard 0/2 --output "$W/shards/shard-0" --quiet
  run shards-1 300 3 "$B/dualtime" run --plan "$W/shards/plan.json" --shard 1/2 --output "$W/shards/shard-1" --quiet
  run shards-merge 60 3 "$B/dualtime" merge "$W/shards/shard-0" "$W/shards/shard-1" --output "$W/shards/merged"
  run shards-single 300 3 "$B/dualtime" run "${shard_flags[@]}" --quiet --output "$W/shards-single"
  run shards-check 30 8 python3 scripts/shards_compare.py "$W/shards/plan.json" \
    "$W/shards/merged/results.json" "$W/shards-single/results.json"
  [ -f "$W/shards/merged/results.md" ] && cp "$W/shards/merged/results.md" "$OUT/shards-merged.md"; return 0; }

machine() { # machine.txt: the machine, the card's clocks and temperature, torch
  [ -n "$DRY" ] && return 0
  { echo "--- $1"; date -u; uname -a
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
    python3 -c 'import torch,sys; print(sys.executable, torch.__version__, torch.version.cuda, torch.cuda.is_available())'
  } >> "$OUT/machine.txt" 2>&1
  [ "$1" = before ] && echo "== machine: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>&1 | head -1)" | tee -a "$S"
  return 0
}
archive() { [ -n "$DRY" ] || tar czf "$OUT/logs.tgz" -C "$W" --exclude='*/results.json' . 2>/dev/null; }

[ -n "$DRY" ] || { echo "== device.sh ${todo[*]} ($(date -u +%FT%TZ))" | tee -a "$S"; : > "$OUT/machine.txt"; }
machine before
for s in "${todo[@]}"; do
  case " ${DT_SKIP:-} " in *" $s "*) echo "== $s: skipped (DT_SKIP)" | tee -a "$S"; continue ;; esac
  "step_$s"
  archive
done
machine after
exit $rc
