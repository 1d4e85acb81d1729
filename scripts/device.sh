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
#   DT_GEMM_AB_ROUNDS rounds of the gemm-ab and gemm-ab-s3 runs (default 2)
#   DT_TAIL           lines of each log in the summary (default: the step's own)
#   DT_LN_PERSIST_QUICK set: ln-persist runs only its held run (its FP64 oracle checks every
#                     timed case), not the GPU-test oracle sweeps
#   DT_LN_ONE_QUICK   set: ln-one runs only its held run and its --inputs offset run (their own
#                     FP64 oracle checks every timed case), not the GPU-test oracle sweeps
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
rerun-a|the first default-matrix run of the pair alone, traced (results back as rerun-a.json.gz: carry it to the next call for rerun-b)
rerun-b|the second default-matrix run, traced, then compare it against DT_RERUN_A (a results.json or .json.gz; default the rerun-a of this call)
ab27|issue 18 session 15, bf16/f16 elementwise pairs on views (vec 2, funnel-shifted words; DUALTIME_ELEM_PAIR): ONE held run of add, gelu_add torch vs native vs old (DUALTIME_ELEM_PAIR=0: vec 1, as before) with --input-views at 4096x4096, 300x30000, 8192x1000, 1023x4097 (odd N: no pairs) in bf16,fp16, every output through the FP64 oracle; sweep_check tables for native and old and the p50s into the summary (~90 s)
digest-ab|issue 12 session 15, checks by digest: the default-matrix run with DUALTIME_CHEAT_DIGEST=0 (every checked sample copies the whole arena, as before), then the default (the output slot copied, the rest proved by each worker digest), each traced: wall, phase tables, and the sample and digest checks per implementation of each run into the summary (~7 min; each run cut at DT_RERUN_S, 300 s)
digest-off|issue 12 session 16: the default-matrix run with DUALTIME_CHEAT_DIGEST=0 alone (every checked sample copies the whole arena), traced like a rerun: against a rerun-a/b of the default (checks by digest) on the same machine (~3 min)
ab29|issue 18 session 16, elementwise loads in one basic block (DT_ELEM_LDALL, DUALTIME_ELEM_LDALL=1; with pairs the bf16/f16 views default since session 17, so native is ldpair there): ONE held run of add, gelu_add torch vs native vs ldall (DUALTIME_ELEM_LDALL=1) vs ldpair (DUALTIME_ELEM_LDALL=1 DUALTIME_ELEM_PAIR=1) with --input-views at 4096x4096, 300x30000, 8192x1000 in fp32,bf16,fp16, every output through the FP64 oracle; the p50s and the sweep_check target lines for native, ldall and ldpair into the summary (~2 min)
ab30|issue 18 session 18, row ops over views kept in registers (DT_SHIFT_A/B: two aligned 16-byte loads a chunk put in place by selects; DUALTIME_ROW_SHIFT): ONE held run of softmax, rmsnorm, layernorm, cross_entropy, residual_layernorm torch vs native vs old (DUALTIME_ROW_SHIFT=0: vec 1 warp rows and staged rows, as before) with --input-views at 4096x4096, 8192x1000, 300x16000, 1023x4097 (odd N: cross_entropy only shifted) in fp32,bf16, every output through the FP64 oracle; the p50s and the sweep_check target lines for native and old into the summary (~3 min)
ab31|issue 18 session 18, elementwise over views in 16-byte items (DT_SHIFT_A/B in dt_elementwise; DUALTIME_ELEM_SHIFT, unset: bf16/f16): ONE held run of add, gelu_add torch vs native vs old (DUALTIME_ELEM_SHIFT=0: the pairs with one-block loads, session 17) vs on (DUALTIME_ELEM_SHIFT=1: fp32 shifted too) with --input-views at 4096x4096, 300x30000, 8192x1000 in fp32,bf16,fp16, every output through the FP64 oracle; the p50s and the sweep_check target lines for native, old and on into the summary (~2 min)
ab32|issue 18 session 18, few rounds of big row blocks (DUALTIME_ROW_CLUSTER=3, opt-in: rows over 8192 at fewer than 4 rows an SM split over a cluster into blocks of at most 512 threads): ONE held run of softmax, rmsnorm, layernorm, cross_entropy torch vs native vs cl3 at 300x30000, 300x16000, 500x12288, 200x65536 in fp32,bf16, every output through the FP64 oracle; the p50s and the sweep_check target lines for native and cl3 into the summary (~2 min)
ab34|issue 18 session 19, bf16 / f16 few rows on the tensor cores (gemv_mma.cu, mma.sync m16n8k16 as out^T = B^T A^T, opt-in DUALTIME_GEMV_MMA=1 for 2 <= M <= 32 until this step has timed it): GPU-test FP64 oracle and x100 timing of gemv-mma vs gemv (FFMA) at the few-rows table (DUALTIME_GPU_TEST_SHAPES=gemv-narrow), then ONE held run of torch vs native (the default: gemv.cu few rows where the tiles underfill, else wg3) vs mma (DUALTIME_GEMV_MMA=1) vs r64 (DUALTIME_GEMV_MMA=64: up to 64 rows) at 8x4096x4096, 16x4096x4096, 2x4096x4096, 32x4096x4096, 4x14336x4096, 24x14336x4096, 13x1000x1000, 8x1024x8192, 5x1003x257, 48x4096x4096, 64x4096x4096, 64x14336x4096 in bf16,fp16, then bf16 views; the p50s into the summary (~3 min)
ab33|issue 18 session 18, odd rows in registers (the shifted loads and, for row outputs, the output row frame, DT_OFRAME): ONE held run of softmax, rmsnorm, layernorm, cross_entropy, residual_layernorm torch vs native vs old (DUALTIME_ROW_SHIFT=0: vec 1 warp rows and staged rows, as before) at 6000x6001, 2049x1025, 777x3333, 12345x77 in fp32,bf16, every output through the FP64 oracle; the p50s and the sweep_check target lines for native and old into the summary (~2 min)
memcheck-views|compute-sanitizer memcheck of the GPU test long shapes that are views in registers or clusters (17x1000, 300x16000, 5x40000, 1x65536; the shifted loads read whole 16-byte granules of the row) in f32, bf16, f16
ab28|issue 18 session 16, FP32 gemm v2 with its A tile shifted (gemm_v2.cu ASWZ, DUALTIME_GEMM_ASWZ) and the split-K tile (DUALTIME_GEMM_SPLIT_TILE): ONE held run of torch vs native vs old (DUALTIME_GEMM_ASWZ=0, the layout before) vs bk32 (DUALTIME_GEMM_BK=32) vs st0 (DUALTIME_GEMM_SPLIT_TILE=0: 64x64 split tiles) at 4096^3, 2048^3, 1024^3, 4097x4095x257, 1537x1539x131, 4096x64x4096, 4096x128x4096, every output through the FP64 oracle; the p50s into the summary (~3 min)
plant|DT_PLANT (default softmax:0.10) slowed native op at 8192^2 and 128x1024 (and add 17x257 unplanted), compared against rerun-a or DT_RERUN_A (must be a regression, exit 1)
dtypes|the row ops of the default matrix in DT_DTYPES (default bf16,fp16) with device timing
long|CUDA backend GPU test of the long-row, vocabulary and unaligned-view shapes (DUALTIME_GPU_TEST_SHAPES=long) in every dtype
rows-sweep|issue 18 rows: FP32 oracle at the long/vocabulary/unaligned shapes (default and DUALTIME_ROW_SMEM=2 / _SMEM_KB=227 variants), then native vs torch at 4096x50257, 2048x128256, 1x65536, 8192^2 (+ 8191x8193, 8192^2 views) in fp32,bf16, two geometry A/Bs (< 4 min)
ce-stream|issue 18 session 6: cross_entropy streaming online logsumexp (DUALTIME_CE_STREAM=1): GPU-test FP64 oracle + x100 timing at 4096x50257, 2048x128256, 8191x8193 view in f32,bf16,f16, then ONE held device run of torch vs native vs stream (worker:env DUALTIME_CE_STREAM=1) at 4096x50257, 2048x128256, 8192^2, 8191x8193 in fp32,bf16; Device control table into the summary (< 3 min)
rows-l2|issue 18 session 6: L2-resident two-pass rows of softmax, rmsnorm, layernorm (DUALTIME_ROW_L2=1): GPU-test FP64 oracle + x100 timing at 4096x50257 and the 8191x8193 view in f32,bf16, then ONE held device run of torch vs native vs l2 (worker:env DUALTIME_ROW_L2=1) at 4096x50257, 2048x128256, 8192^2, 8191x8193 (DT_ROWS_L2_SHAPES) in fp32,bf16; Device control table into the summary (4-7 min)
rows-pipe|issue 18 third pass: persistent double-buffered staged rows (DUALTIME_ROW_PIPE=1) vs staged (=0) vs first pass (DUALTIME_ROW_SMEM=0): GPU-test FP64 oracle + x100 timing at 4096x50257, 2048x128256, 8191x8193 view (f32), layernorm 8192^2 bf16 packed gamma/beta (DUALTIME_ROW_LN_RAW=1 vs 0), then native (pipe) vs torch held at the vocabulary rows in fp32,bf16 (< 4 min)
ln-one|issue 16 item 1: layernorm in-register rows with one block reduction (DUALTIME_ROW_LN_ONE=1, =2 for 4 blocks an SM): GPU-test FP64 oracle + x100 timing of layernorm in f32,bf16,f16 (default shapes, views, 5x40000 and 1x65536 register clusters), then ONE held device run of torch vs native vs one vs one2 vs two32 (worker:env DUALTIME_ROW_LN_ONE=1, =2, DUALTIME_ROW_LN_REGS=32) at 8192x8192, 4096x8192, 1024x4096 in fp32,bf16 (Device control table into the summary), then native, one and one2 under --inputs offset in every dtype (about 3 min)
ln-persist|issue 16 item 1: layernorm persistent in-register rows prefetching each block next row (DUALTIME_ROW_LN_PERSIST=1, =2 with gamma/beta kept in registers): GPU-test FP64 oracle + x100 timing of layernorm at both values in f32,bf16,f16 (default shapes), then ONE held device run of torch vs native vs p1 vs p2 (worker:env DUALTIME_ROW_LN_PERSIST=1, =2) at 8192x8192, 4096x8192, 16384x4096, 1024x4096 in fp32,bf16 (Device control table into the summary) (< 3 min)
anti-cheat|issue 17 item 7: honest torch and native on cuda (a case over 4x L2 included) pass every named anti-cheat check (docs/anti-cheat.md)
shards|a two-shard plan of a small CUDA matrix, both shards one after the other on this GPU, merged, against a single run of the same flags (same case ids and input SHA-256s)
results-verify|issue 12: incremental results.json checked against the full encoder after every case (DUALTIME_RESULTS_VERIFY=1; a difference fails the run) on a device-timed 2-round CUDA matrix (probe records, clocks, energy, decomposition, large and small cases), then dualtime report on it; the write-outputs phase into the summary (< 4 min)
decomp|E2E decomposition: add and layernorm at 17x257 and 8192x8192 (cuda, device timing, 3 rounds), its table into the summary, results.md as decomp.md; then the decomp GPU checks of both workers
devices|the small CUDA matrix of `shards` with --devices 0 and as a plain run: same cases and inputs; every case names GPU 0, its UUID, clocks and ceilings (docs/devices.md)
devices-all|multi-GPU kinds: the default matrix with --devices ${DT_DEVICES:-all} and on one GPU, both wall times and the Devices table into the summary (target: 2 GPUs <= 0.6x one)
examples|issue 17 examples on the GPU, each as a candidate against torch eager: Triton softmax, torch.compile (default, reduce-overhead), CuPy, torch-code module, cuda-dir, ptx-dir; then examples/check_gpu.py (DT_PYTHON)
impls-triton|the issue-17 "done" command: softmax at 17x257,1024x4096,4096x50257,8192x8192, 2 rounds (one probe kind), --impls torch,native,torch-compile,triton=py:... in one report, phases traced, then checked (estimate about 180 s, 150-250; skipped while dualtime has no --impls)
compile-cache|the --compile cache on the GPU (tests/torch/test_torch_compile_cache.py): fake-compiler counts, then real inductor: a miss then a hit that compiles nothing, and a probe_process worker compiling with CUPTI detached
impls|--impls with three implementations on cuda (torch,native,native2=native; every case valid, three in results.json), then torch,torch-compile,native (exit 0, or 2 naming --impls torch-compile when this torch has no torch.compile)
graph-cold|issue 13: add,softmax,layernorm at 17x257,512x4096,1024x4096,8192x8192 with --graph, warm then --cache cold; graph vs held vs dispatch, cold/warm (add 512x4096 >= 1.3x) into the summary
cpu-kernels|the CPU kernel test on the host CPU: both ISA copies (CPUID dispatch), the v1 GELU and streaming stores through the FP64 reference
pipe|the default CUDA matrix once, traced: wall time (target < 240 s) and phase table into the summary; every CUDA worker pinned its arena (scripts/host_pin_check.py)
pipe-ab|pinned vs pageable (DUALTIME_HOST_REGISTER=0) on add,softmax,layernorm 8192^2 + gemm 4096^3, 2 rounds, traced: both wall times and phase tables
gemm-tc|issue 19 + 18.6: bf16/fp16 gemm torch vs native with device timing at 1024^3,4096^3,127x193x61,4097x4095x257, views, the 1024^3 A/B (fill0 = DUALTIME_GEMM_FILL=0, splitk2 = DUALTIME_GEMM_SPLITK=2 as more impls), 8192^3 last; BN=64 and split-K oracle tables; FLOP ceilings and % of peak (scripts/gemm_tc_check.py) into the summary (< 4 min)
gemm-ab|issue 19: ONE run of torch vs native (wg3, the default) vs wg1 (DUALTIME_GEMM_VARIANT=wg1) at 4096^3 and 8192^3 in bf16,fp16, device timing, samples 5, rounds DT_GEMM_AB_ROUNDS, oracle on; Device control table and scripts/gemm_tc_check.py into the summary (< 200 s)
gemm-ab-s3|issue 19 session 5: ONE run of torch vs native (wg3) vs wg3s3 (wg3 + DUALTIME_GEMM_STAGES=3: one epilogue pass, one stage fewer) at 4096^3 bf16,fp16, same flags (< 60 s)
gemm-ab-oracle|issue 19 session 5: GPU-test FP64 oracle tables of wg3 and wg4, then wg3 at DUALTIME_GEMM_STAGES=3, on every gemm-tc shape (1024^3, 4096^3, 8192^3, tails, 1000x1048x264, views), x100 back-to-back timing (< 120 s)
probe-warmup-ab|the probe worker warm-ups at once (default) vs DUALTIME_PROBE_WARMUP=serial: add, softmax, layernorm at 17x257, 128x1024, 8192^2, 2 rounds, traced; wall times, phase tables and probe/control side by side (scripts/probe_ratio_ab.py) into the summary
warmup-ab|the main workers warm-ups at once (the cuda default since session 6) vs DUALTIME_WARMUP=serial: add, softmax, layernorm at 17x257, 128x1024, 8192^2, 2 rounds, traced; wall times and phase tables into the summary, then dualtime compare serial vs at once (expected: no change, exit 0)
proc-offsets|issue 12 rerun medians: the same small plan (add, softmax, layernorm at 1x127, 17x257, 128x1024, 1 round) run DT_PROC_RUNS times (default 5), each with fresh worker processes, then the same with --no-pin; scripts/proc_offsets.py: each process held-median offset against run 1 and the spread per implementation x scope (< 4 min)
inputs-all|issue 16 done: every --inputs distribution but uniform (normal, wide-logits, offset, cancel) for every op in fp32,bf16,fp16 on DT_BACKENDS (default cuda): rows 17x257, 1024x4096, 8x128256, gemm 127x193x61, 1024x1024x1024, 4096x1x4096, 1 round, 3 samples, no device timing; per distribution the cases and the valid ones into the summary, every invalid case named (< 3 min)
dtypes-full|issue 16 done: the default CUDA matrix with --dtypes fp32,bf16,fp16 (both implementations), cut at DT_DTYPES_S (default 500 s) and resumable: DT_DTYPES_RESUME=a carried dtypes-full.tgz continues it with --resume; the run folder (results.json, no scratch) comes back as dtypes-full.tgz, results.md as dtypes-full.md when complete
compile-full|issue 18 done: the default CUDA matrix with --dtypes fp32,bf16 --impls torch,native,torch-compile, cut at DT_COMPILE_S (default 500 s) and resumable as dtypes-full (DT_COMPILE_RESUME=a carried compile-full.tgz); compile-full.tgz back; when complete compile-full.md, and the misses of scripts/compile_check.py (target 3) and sweep_check.py (targets 1-2) in the summary
ln-default|issue 16 item 1, session 8: the new bf16/f16 layernorm default (32 elements a thread on the persistent rows) in ONE held run of layernorm at the default CUDA row shapes in fp32,bf16,fp16: torch vs native vs old (worker:env DUALTIME_ROW_LN_PERSIST=0), 5 samples, 1 round; Device control table into the summary, ln-default.md back (< 3 min)
ncu-ln|issue 16 item 1: ncu --set full (clocks as they are) of native layernorm bf16, rmsnorm bf16 and layernorm f32 at 8192^2, one kernel each after 20 launches; SOL, memory, occupancy, warp-state and launch sections of each into the summary (< 2 min)
ncu-8192|issue 12: the native held control against ncu gpu__time_duration at 8192^2 for every row and elementwise op (fp32): one device-timed run (native vs a second native), (or the rerun-a of this call, or DT_NCU_REF), then each op under ncu (--clock-control none: the clocks as they are; --cache-control none: steady state like the batch; 10 launches after 20), scripts/ncu_check.py (target within 3%) (< 4 min)
offset-latency|issue 12 experiment: scripts/exp/offset_latency.cu (carried as $B/offset_latency, else built with nvcc) twice, two processes: a 17x257 add as a 64-launch CUDA graph at 48 placements in one allocation, us per kernel per placement and the spread
proc-states|issue 12 experiment, session 7: offset_latency (as offset-latency) in DT_PROC_STATES (default 10) fresh processes one after the other, each followed by offset_latency held (64 stream launches in a held window, as the control scope; session 8); each process median over its 48 placements and the spread across processes into the summary (two levels there, none within a process, would make the per-process offset a property of the process, not of the buffers) (< 60 s)
proc-streams|issue 12 experiment, session 9: offset_latency held S in DT_PROC_STREAMS_P (default 4) fresh processes, S = 16 streams of one process, window r on stream r % 16, under CUDA_DEVICE_MAX_CONNECTIONS unset, 32 and 1; each stream median, the spread over streams and over processes into the summary (a spread over streams like the one over processes: the offset is the hardware queue, and rotating streams averages it) (< 60 s)
sweep18|issue 18 done-sweep, session 9: shapes outside the default matrix, torch eager vs native, fp32,bf16, held device control (samples 5, 1 round): 5 vocabulary widths and 5 odd sizes (every row and elementwise op), 5 unaligned views (--input-views), 6 skinny or small-K gemms; scripts/sweep_check.py tables (target 1: never slower than eager; target 2: >= 90% of copy above L2) into the summary, each run back as sweep-*.json.gz (DT_SWEEP_PARTS, default "rows views gemm"; rows-vocab and rows-odd split rows in two) (~7 min; rows alone is cut at 400 s)
ab18|issue 18 session 9: ONE held run of torch vs native vs old (worker:env DUALTIME_ELEM_FLAT=0 DUALTIME_ROW_HEAD=0: vec 1 at odd N and views, as before) for add, gelu_add, sum at the sweep odd shapes in fp32,bf16, then the same with --input-views; sweep_check tables for native and old into the summary (~2 min)
ab18b|issue 18 session 9, second A/B: the cross_entropy stream default (GPU-test FP64 oracle of cross_entropy at the long shapes), then ONE held run each: cross_entropy at 6 long or odd shapes torch vs native vs old (DUALTIME_CE_STREAM=0); layernorm 1024x32000-like rows torch vs native vs smem2 (DUALTIME_ROW_SMEM=2); add at L2-resident shapes torch vs native vs w4 (DUALTIME_ELEM_WAVES=4); fp32,bf16, sweep_check tables into the summary (~3 min)
ncu-rows|issue 18 target-2 misses, session 9: ncu --set full (clocks as they are, --cache-control none) of one native kernel each at DT_NCU_SPECS (op:dtype:shape, gemm:dtype:MxNxK too; default softmax:fp32:512x49152 rmsnorm:fp32:256x151936 softmax:fp32:1024x32000 sum:bf16:6000x6001), after 20 launches; SOL, memory, occupancy, warp-state sections into the summary (~2 min)
ncu-views|issue 18 target-2 misses on views, session 17: ncu-rows with --input-views at each DT_NCU_VIEW_SPECS entry (op:dtype:shape; default softmax:fp32:4096x4096 rmsnorm:bf16:4096x4096 softmax:fp32:8192x1000 gelu_add:bf16:4096x4096: the staged row, the warp row at vec 1, the bf16 pairs) (~2 min)
ab18c|issue 18 session 9, third A/B: sum torch vs native vs e32 / e64 (DUALTIME_ROW_ELEMS=32 / 64: fewer threads a row) at short odd rows, views and 8192^2; softmax and rmsnorm torch vs native vs smem2 (DUALTIME_ROW_SMEM=2) at 1024x32000, 2048x20000; fp32,bf16, one held run each, sweep_check rows into the summary (~90 s)
oracle-gemm|the FP64 oracle gemm on the host CPU: test_gemm_f64 on every ISA path it can run (bit-identical to the triple loop), then bench_gemm_f64 at 4096^3 on every CPU (GFLOP/s per path)
nvml-cost|what one NVML query costs here (energy counter, SM clock, temperature), ms per call (scripts/nvml_cost.py)
gemm-f32|issue 18 item 4: FP32 gemm oracle (thin, small-K, views), then native vs torch at 4096^3, 1000x1x1000, 1x1000x1000, 4097x4095x257, 127x193x61 (+ views), the old geometry (DUALTIME_GEMM_SHAPE=0) and BK=32 A/Bs, Device control tables (~3 min)
ab19|issue 18 session 10: few-rows gemm (gemv.cu GV_MODE 2 with GV_MR rows a block, 2 <= M <= 16) in ONE held run of torch vs native vs old (worker:env DUALTIME_GEMM_FEWROWS=0: the square tiles) vs kg1 (DUALTIME_GEMV_KG=1) vs kg8 (DUALTIME_GEMV_KG=8) at 8x4096x4096, 16x4096x4096, 2x4096x4096, 4x14336x4096, 13x1000x1000, 1x8192x1024, 4096x64x4096 in fp32,bf16, then torch vs native vs old at 8x4096x4096, 5x1003x257 with --input-views; Device control table into the summary (~2 min)
ab19b|issue 18 session 10, second few-rows A/B: ONE held run of torch vs native (FP32 1 k a step, bf16 8) vs ct32 (DUALTIME_GEMV_CTMIN=32: 32 column threads, 512 contiguous bytes of a B row a warp) vs ch2 / ch8 (DUALTIME_GEMV_CH=2 / 8 steps of loads at once) vs rows16 (DUALTIME_GEMM_FEWROWS=16: every M <= 16, no fill rule) at 8x4096x4096, 16x4096x4096, 2x4096x4096, 4x14336x4096, 8x1024x8192 in fp32,bf16; the p50s of each case into the summary (~90 s)
ab19c|issue 18 session 10, split-K: ONE held run of FP32 torch vs native (v2 split-K over a cluster where the tiles leave SMs idle) vs nosplit (DUALTIME_GEMM_V2_SPLITK=1) at 4096x64x4096, 1024x1024x1024, 4096x128x4096, 2048x64x8192, 1024x64x2048, 200x70x3000; then bf16 torch vs native vs wgsk2 (DUALTIME_GEMM_SPLITK=2, wg1 split-K pairs) at 4096x64x4096, 4096x128x4096, 2048x64x8192; the p50s of each case into the summary (~2 min)
ab19d|issue 18 session 10, sum rows that are not whole 16-byte vectors at 64 elements a thread: ONE held run of torch vs native vs e16 (DUALTIME_ROW_ELEMS=16, the version before) at 6000x6001, 300x100277, 1024x4096, then with --input-views at 4096x4096, 300x30000, fp32,bf16; the p50s of each case into the summary (~40 s)
ab20|issue 18 session 11, elementwise at L2-resident mid sizes: ONE held run of add, gelu_add torch vs native (4 blocks an SM before items shrink) vs w8 / w16 (DUALTIME_ELEM_WAVES=8 / 16) at 7 shapes of 3-50 MB, fp32 and bf16
ab21|issue 18, prepared in session 11: the staged rows that lose (rmsnorm 2048x128256 slower than eager, softmax vocabulary rows at 70-74% of copy): ONE held run of rmsnorm, layernorm, softmax at 2048x128256, 256x151936, 4096x50257 (fp32, bf16): torch vs native vs kb56 vs stream (the two-read stream) vs s0 (first pass), then ncu of rmsnorm f32 2048x128256
ab22|issue 18 session 12, the staged rmsnorm / layernorm store pass with gamma (beta) loaded 4 chunks ahead: GPU-test FP64 oracle of rmsnorm, layernorm at the long shapes (f32, bf16, f16), then ONE held run of torch vs native (store-ahead 4) vs a1 (DUALTIME_ROW_STORE_AHEAD=1, the version before) vs a8 at 2048x128256, 256x151936, 4096x50257, 1024x32000 (fp32, bf16), the p50s of each case into the summary
ab23|issue 18 session 13, L2 eviction hints (DUALTIME_ROW_HINT=1) on the staged and two-read rows: GPU-test FP64 oracle of rmsnorm, layernorm in f16 at 4096x50257, 2048x128256 (the store-ahead path), then ONE held run of torch vs native vs hint vs stream (DUALTIME_ROW_L2=1 DUALTIME_ROW_L2_MB=256, the two-read row wherever a row would be staged) vs streamhint at softmax, rmsnorm, layernorm 2048x128256, 4096x50257, 256x151936 (fp32, bf16), the p50s of each case into the summary; then ncu of native layernorm f32 2048x128256
ab24|issue 18 session 13, the default L2 hint on the parameter loads (DUALTIME_ROW_HINT unset = 2 for rmsnorm, layernorm, residual_layernorm): GPU-test FP64 oracle of rmsnorm, layernorm in f16 at 2048x128256 and the 8191x8193 view, then ONE held run of torch vs native (=2) vs h0 (DUALTIME_ROW_HINT=0, the version before) vs h1 (=1, every access hinted) at rmsnorm, layernorm, residual_layernorm 2048x128256, 4096x50257, 256x151936, 1024x32000 (fp32, bf16), the p50s of each case into the summary
ab24b|issue 18 session 13, the parameter hint default at odd long rows: ONE held run of torch vs native (=2) vs h0 (DUALTIME_ROW_HINT=0) at rmsnorm, layernorm 300x100277, 128x256000, 512x49152 (fp32, bf16), the p50s of each case into the summary (limit DT_AB24B_S, 130 s)
ncu-hint|issue 18 session 13, what the parameter hint changes: ncu --set full (clocks as they are, --cache-control none) of native layernorm fp32 2048x128256 with DUALTIME_ROW_HINT unset (=2) and =0, speed of light, memory, L2 hit rate and warp-state lines into the summary (~50 s)
ab26|issue 18 session 14, FP32 gemm 4096^3 (target 4, 1.087x cuBLAS): ONE held run of torch vs native vs bk32 (DUALTIME_GEMM_BK=32, never measured at 4096^3) at 4096^3 and 4097x4095x257 (fp32), the p50s into the summary; then ncu --set full of the native kernel at 4096^3 (stall reasons, issue, occupancy) (~2 min)
ab25|issue 18 session 13, the online staged softmax rows (the bf16/f16 default since session 14): GPU-test FP64 oracle of softmax in f16 with DUALTIME_ROW_SM_ONLINE=1 at 4096x50257, 2048x128256 and the 8191x8193 view, then ONE held run of torch vs native vs online (DUALTIME_ROW_SM_ONLINE=1) vs twopass (=0) at softmax 2048x128256, 4096x50257, 256x151936, 512x49152, 300x100277 (fp32, bf16), the p50s of each case into the summary (~4 min)
gemv-narrow|session 7: bf16/f16 thin gemm on gemv (FP32 accumulation): GPU-test FP64 oracle of every output at 4096x1x4096, 1x4096x4096, 1000x1x1000, 1x1000x1000, 4097x1x4095, 1x4095x4097, 8x1x65544 (+ views; tc1 host-clock rows at the 4096 shapes), then ONE held device run of torch vs native (gemv) vs before (worker:env DUALTIME_GEMM_GEMV_NARROW=0: tc1 at N=1, wg3 at M=1) at 4096x1x4096, 1x4096x4096, 1000x1x1000 in bf16,fp16; Device control table into the summary (< 60 s)'
# name|its steps
GROUP_LIST='all|gpu-tests timing-gpu views memcheck racecheck bench
tests|gpu-tests timing-gpu views
sanitize|memcheck racecheck
batch|bench timing-gpu gemm-oracle memcheck gemm-v1 gemm-views
final|gpu-tests racecheck extra bench small
small-experiment|gpu-tests gpu-tests-fill0 gpu-tests-tpr128 small-fill0 small-fill1 small-prime8 small-tpr128
acceptance|rerun plant
s8-a|inputs-all rerun-a plant
s8-b|proc-states ncu-8192 proc-offsets
s8-c|long ce-stream rows-l2
s8-d|warmup-ab gemm-tc
s14-a|ab24 ncu-hint
s14-b|ab25 ab24b
s14-c|ab26 sweep18
s15-b|ab27 digest-ab
s16-a|rerun plant
s16-b|ab27 ab28 digest-off
s17-a|ab29 rerun-b
s18-a|ab29 ncu-8192 ncu-views
s18-b|ab30 ab31 memcheck-views
s18-c|ab32 ncu-8192
s18-d|ab33 ab32 sweep18
s19-a|ab34 ab33 ab30'

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
# docs/device-workflow.md "Host passes per case-round" and "Pinned uploads"
step_pipe() { rerun_one pipe
  [ -f "$W/pipe/results.json" ] && run pipe-pinned 30 8 python3 scripts/host_pin_check.py "$W/pipe/results.json"
  return 0; }
pipe_ab_one() { local t0; t0=$(date +%s)
  run "$1" 150 3 env DUALTIME_PHASE_TRACE="$W/$1.trace" "${@:2}" "$B/dualtime" run --backends cuda \
    --operations add,softmax,layernorm,gemm --row-shapes 8192x8192 --gemm-shapes 4096x4096x4096 \
    --quiet --output "$W/$1"
  echo "   $1 wall: $(( $(date +%s) - t0 )) s" | tee -a "$S"
  python3 scripts/phase_times.py "$W/$1.trace" >"$W/$1-phases.txt" 2>&1 && head -16 "$W/$1-phases.txt" | sed 's/^/   /' >>"$S"
  return 0; }
step_pipe-ab() { pipe_ab_one pipe-pinned-run env; pipe_ab_one pipe-pageable-run env DUALTIME_HOST_REGISTER=0
  [ -f "$W/pipe-pinned-run/results.json" ] && run pipe-ab-pinned 30 8 python3 scripts/host_pin_check.py "$W/pipe-pinned-run/results.json"
  [ -f "$W/pipe-pageable-run/results.json" ] && run pipe-ab-pageable 30 8 python3 scripts/host_pin_check.py "$W/pipe-pageable-run/results.json" --expect pageable
  return 0; }
step_timing-gpu() { run timing-gpu 90 12 "$B/tests/gpu/test_timing_gpu" "$B/tests/gpu/test_timing_gpu_impl.so"; }
step_gemm-oracle() { run gemm-oracle 150 4 env DUALTIME_GPU_TEST_OPS=gemm "${CUDA_TEST[@]}"; }
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
  run "$1" "${DT_RERUN_S:-300}" 3 env DUALTIME_PHASE_TRACE="$W/$1.trace" "$B/dualtime" run \
    --backends cuda "${BENCH_EXTRA[@]}" --quiet --output "$W/$1"
  [ -n "$DRY" ] && return 0   # --dry-run: the command only
  echo "   $1 wall: $(( $(date +%s) - t0 )) s" | tee -a "$S"
  # where the wall time went (scripts/phase_times.py), the top lines into the summary
  python3 scripts/phase_times.py "$W/$1.trace" >"$W/$1-phases.txt" 2>&1 && head -14 "$W/$1-phases.txt" | sed 's/^/   /' >>"$S"
  [ -f "$W/$1/results.json" ] && python3 scripts/issue12_check.py "$W/$1/results.json" 2>&1 |
    grep -v "^  MISS" | sed 's/^/   /' >>"$S"   # issue 12's one-run criteria, counts
  [ -f "$W/$1/results.json" ] && gzip -c "$W/$1/results.json" >"$OUT/$1.json.gz"
  [ -f "$W/$1/results.md" ] && cp "$W/$1/results.md" "$OUT/$1.md"
  digest_counts "$1"; return 0; }
step_rerun() { rerun_one rerun-a; rerun_one rerun-b
  run compare-ab 60 12 "$B/dualtime" compare "$W/rerun-a/results.json" "$W/rerun-b/results.json"
  cp "$W/compare-ab.log" "$OUT/compare-ab.md" 2>/dev/null; return 0; }
# rerun_a: run A's results.json: DT_RERUN_A (a carried rerun-a.json.gz is unpacked into
# $W) or this call's rerun-a
rerun_a() { local f="${DT_RERUN_A:-$W/rerun-a/results.json}"
  case "$f" in *.gz) mkdir -p "$W/rerun-a-carried"; gzip -dc "$f" >"$W/rerun-a-carried/results.json"
                     f="$W/rerun-a-carried/results.json" ;; esac
  echo "$f"; }
step_rerun-a() { rerun_one rerun-a; }
# digest-ab: one default run without the checks by digest, one with (docs/anti-cheat.md)
digest_counts() { [ -f "$W/$1/results.json" ] && python3 - "$W/$1/results.json" <<'EOP' | tee -a "$S"; return 0; }
import json, sys
r = json.load(open(sys.argv[1])); t = {}
for c in r["cases"]:
    for fw, im in c["impl"].items():
        ac = im.get("anti_cheat") or {}
        s = t.setdefault(fw, [0, 0, 0])
        s[0] += ac.get("sample_checks", 0); s[1] += ac.get("digest_checks", 0)
        s[2] += im.get("status") != "ok"
for fw, (n, d, bad) in sorted(t.items()):
    print("   %s: %d sample checks, %d by digest, %d failed cases" % (fw, n, d, bad))
EOP
step_digest-off() { DUALTIME_CHEAT_DIGEST=0; export DUALTIME_CHEAT_DIGEST; rerun_one digest-off
  unset DUALTIME_CHEAT_DIGEST; }
step_digest-ab() { step_digest-off; rerun_one digest-on; }
step_rerun-b() { rerun_one rerun-b; local ra; ra=$(rerun_a)
  [ -f "$ra" ] || { echo "   rerun-b: no run A ($ra) to compare with" | tee -a "$S"; return 0; }
  run compare-ab 60 12 "$B/dualtime" compare "$ra" "$W/rerun-b/results.json"
  cp "$W/compare-ab.log" "$OUT/compare-ab.md" 2>/dev/null; return 0; }
step_plant() { local p="${DT_PLANT:-softmax:0.10}"
  run plant 200 3 env DUALTIME_PLANT_SLOWDOWN="$p" "$B/dualtime" run --backends cuda \
    --operations "${p%%:*},add" --row-shapes 8192x8192,128x1024,17x257 \
    "${BENCH_EXTRA[@]}" --quiet --output "$W/plant"
  local ra; ra=$(rerun_a)
  [ -f "$ra" ] || { echo "   plant: no rerun-a to compare with" | tee -a "$S"; return 0; }
  run compare-plant 60 12 "$B/dualtime" compare "$ra" "$W/plant/results.json"
  [ -f "$W/plant/results.json" ] && gzip -c "$W/plant/results.json" >"$OUT/plant.json.gz"
  cp "$W/compare-plant.log" "$OUT/compare-plant.md" 2>/dev/null; return 0; }
pwab_one() { local name="$1"; shift; local t0; t0=$(date +%s); rm -rf "${W:?}/$name"
  run "$name" 200 3 env DUALTIME_PHASE_TRACE="$W/$name.trace" "$@" "$B/dualtime" run --backends cuda \
    --operations add,softmax,layernorm --row-shapes 17x257,128x1024,8192x8192 --quiet --output "$W/$name"
  [ -n "$DRY" ] && return 0
  echo "   $name wall: $(( $(date +%s) - t0 )) s" | tee -a "$S"
  python3 scripts/phase_times.py "$W/$name.trace" 2>&1 | head -8 | sed 's/^/   /' >>"$S"; }
step_probe-warmup-ab() { pwab_one pwab-at-once; pwab_one pwab-serial DUALTIME_PROBE_WARMUP=serial
  [ -f "$W/pwab-at-once/results.json" ] && [ -f "$W/pwab-serial/results.json" ] &&
    run pwab-ratios 30 40 python3 scripts/probe_ratio_ab.py "$W/pwab-at-once/results.json" \
      "$W/pwab-serial/results.json"; return 0; }
step_warmup-ab() { pwab_one wab-at-once; pwab_one wab-serial DUALTIME_WARMUP=serial
  [ -f "$W/wab-at-once/results.json" ] && [ -f "$W/wab-serial/results.json" ] &&
    run wab-compare 60 12 "$B/dualtime" compare "$W/wab-serial/results.json" "$W/wab-at-once/results.json"
  return 0; }
proc_runs() { local tag="$1" k; shift; local rs=()
  for ((k = 1; k <= ${DT_PROC_RUNS:-5}; k++)); do rm -rf "${W:?}/$tag-$k"
    run "$tag-$k" 60 1 "$B/dualtime" run --backends cuda --operations add,softmax,layernorm \
      --row-shapes 1x127,17x257,128x1024 --rounds 1 --quiet "$@" --output "$W/$tag-$k"
    [ -f "$W/$tag-$k/results.json" ] && rs+=("$W/$tag-$k/results.json"); done
  ((${#rs[@]} > 1)) && run "$tag-table" 30 30 python3 scripts/proc_offsets.py "${rs[@]}"; return 0; }
step_proc-offsets() { proc_runs proc; proc_runs proc-nopin --no-pin; }
# dtypes-full, compile-full: the run is stopped by SIGTERM at its limit (dualtime then
# writes the results so far, marked interrupted, exit 1) and continued in the next call
# from the carried folder; the refcache files are left out (a missing one is computed again)
# resumable NAME LIMIT RESUME-TGZ [dualtime run args]: NAME.tgz (and NAME.md when complete)
resumable() { local name="$1" lim="$2" from="$3" d="$W/$1"; shift 3; rm -rf "$d"
  if [ -n "$from" ]; then
    if ! { mkdir -p "$W/$name-in" && tar xzf "$from" -C "$W/$name-in" &&
           mv "$W/$name-in/$name" "$d"; }; then
      echo "== $name: cannot unpack $from" | tee -a "$S"; return 0; fi
    run "$name" "$lim" 3 env DUALTIME_PHASE_TRACE="$W/$name.trace" "$B/dualtime" run --resume "$d" --quiet
  else
    run "$name" "$lim" 3 env DUALTIME_PHASE_TRACE="$W/$name.trace" "$B/dualtime" run "$@" \
      --quiet --output "$d"
  fi
  [ -f "$d/results.json" ] || return 0
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["cases"]
print("   %s: %d cases in the record, %d valid, complete %s" % (sys.argv[2], len(c), sum(x["valid"] for x in c), r["complete"]))' \
    "$d/results.json" "$name" | tee -a "$S"
  tar czf "$OUT/$name.tgz" -C "$W" --exclude .scratch "$name"
  [ -f "$d/results.md" ] && cp "$d/results.md" "$OUT/$name.md"; return 0; }
step_dtypes-full() { resumable dtypes-full "${DT_DTYPES_S:-500}" "${DT_DTYPES_RESUME:-}" \
  --backends cuda --dtypes fp32,bf16,fp16; }
step_compile-full() { resumable compile-full "${DT_COMPILE_S:-500}" "${DT_COMPILE_RESUME:-}" \
  --backends cuda --dtypes fp32,bf16 --impls torch,native,torch-compile
  local r="$W/compile-full/results.json"  # complete: target 3 and targets 1-2 into the summary
  if [ -f "$r" ] && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["complete"] else 1)' "$r"; then
    python3 scripts/compile_check.py "$r" 2>&1 | tail -1 | tee -a "$S"
    python3 scripts/sweep_check.py "$r" 2>&1 | tail -2 | tee -a "$S"
  fi; return 0; }
# ncu-8192: ncu profiles the native workers of a small run (all processes, only the op's
# kernel); its clock control off, so the kernels run at the clocks dualtime measured at.
# --cache-control none: the held control batch is back to back, so each kernel there also
# writes back the dirty L2 lines of the one before; ncu's default flush before the profiled
# launch leaves it a clean L2 and its own dirty lines are written back after its end
# (session 8, flushed: rmsnorm 127.1 us against 131.5 held, 1.035). The reference run: the
# default-matrix rerun-a of this call when there is one (its native 8192^2 cases), else
# DT_NCU_REF, else its own small run.
step_ncu-8192() { local ops o ref csvs=(); ops=$(row_ops); ref="${DT_NCU_REF:-}"
  [ -z "$ref" ] && [ -f "$W/rerun-a/results.json" ] && ref="$W/rerun-a/results.json"
  if [ -z "$ref" ]; then rm -rf "${W:?}/ncu-ref"; ref="$W/ncu-ref/results.json"
    run ncu-ref 150 3 "$B/dualtime" run --backends cuda --impls "native,n2=native" --operations "$ops" \
      --row-shapes 8192x8192 --quiet --output "$W/ncu-ref"; fi
  for o in ${ops//,/ }; do rm -rf "${W:?}/ncu-$o"
    run "ncu-$o" 90 2 ncu --clock-control none --cache-control none --target-processes all --kernel-name "regex:^dt_${o}_f32\$" \
      --launch-skip 20 --launch-count 10 --metrics gpu__time_duration.sum --csv --page raw \
      "$B/dualtime" run --backends cuda --impls "native,n2=native" --operations "$o" --row-shapes 8192x8192 \
      --samples 3 --rounds 1 --no-device-timing --quiet --output "$W/ncu-$o"
    [ -s "$W/ncu-$o.log" ] && csvs+=("$W/ncu-$o.log"); done
  [ -f "$ref" ] && ((${#csvs[@]})) && run ncu-check 30 20 python3 scripts/ncu_check.py --shape 8192x8192 "$ref" "${csvs[@]}"; return 0; }
# ncu-ln: why layernorm bf16 reads 0.567x of FP32 at 8192^2 while rmsnorm bf16 reads 0.52x
# ncu_one NAME OP DTYPE SHAPE [NCU ARGS]: ncu --set full of the native kernel of one case
# after 20 launches, its main sections into the summary
ncu_one() { local name="$1" o="$2" d="$3" shape="$4" k kn sf=--row-shapes; shift 4; k=$d; [ "$d" = fp32 ] && k=f32
  kn="dt_${o}_${k}"; [ "$o" = gemm ] && { kn="dt_gem[a-z0-9_]*_${k}"; sf=--gemm-shapes; }  # gemm: its plan's kernel
  rm -rf "${W:?}/$name"
  run "$name" 110 1 ncu --clock-control none "$@" --target-processes all --kernel-name "regex:^${kn}\$" \
    --launch-skip 20 --launch-count 1 --set full --page details \
    "$B/dualtime" run --backends cuda --impls native,n2=native --operations "$o" --dtypes "$d" "$sf" "$shape" \
    ${NCU_VIEWS:+--input-views} --samples 3 --rounds 1 --no-device-timing --quiet --output "$W/$name"
  [ -f "$W/$name.log" ] && grep -E "^  [A-Z]|Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Waves Per|Stall|Issued Ipc|Eligible|Active Warps|Warp Cycles Per Issued|No Eligible|L2 Cache Throughput|Mem Busy|Max Bandwidth|Dynamic Shared|Grid Size|Block Size" \
    "$W/$name.log" | head -70 | sed "s/^/   [$o $d $shape] /" | tee -a "$S"; return 0; }
step_ncu-ln() { local spec o d
  for spec in layernorm:bf16 rmsnorm:bf16 layernorm:fp32; do o=${spec%%:*} d=${spec#*:}
    ncu_one "ncu-ln-$o-$d" "$o" "$d" 8192x8192; done; return 0; }
step_ncu-hint() { ncu_one ncu-hint-2 layernorm fp32 2048x128256 --cache-control none
  DUALTIME_ROW_HINT=0 ncu_one ncu-hint-0 layernorm fp32 2048x128256 --cache-control none; return 0; }
step_ncu-rows() { local spec o d r
  for spec in ${DT_NCU_SPECS:-softmax:fp32:512x49152 rmsnorm:fp32:256x151936 softmax:fp32:1024x32000 sum:bf16:6000x6001}; do
    o=${spec%%:*} r=${spec#*:} d=${r%%:*}
    ncu_one "ncu-rows-$o-$d-${r#*:}" "$o" "$d" "${r#*:}" --cache-control none; done; return 0; }
# ncu-views (session 17): the views that miss target 2 (docs/perf.md "Session 17 measured")
step_ncu-views() { local spec o d r
  for spec in ${DT_NCU_VIEW_SPECS:-softmax:fp32:4096x4096 rmsnorm:bf16:4096x4096 softmax:fp32:8192x1000 gelu_add:bf16:4096x4096}; do
    o=${spec%%:*} r=${spec#*:} d=${r%%:*}
    NCU_VIEWS=1 ncu_one "ncu-views-$o-$d-${r#*:}" "$o" "$d" "${r#*:}" --cache-control none; done; return 0; }
step_proc-states() { local x="$B/offset_latency" i m n="${DT_PROC_STATES:-10}"
  [ -n "$DRY" ] && { echo "proc-states: $n x $x and $x held (or built with nvcc)"; return 0; }
  [ -x "$x" ] || { x="$W/offset_latency"; nvcc -O2 -arch=sm_90 -o "$x" scripts/exp/offset_latency.cu -lcuda >"$W/offset-build.log" 2>&1 ||
    { echo "== proc-states: no $B/offset_latency and nvcc failed" | tee -a "$S"; return 0; }; }
  : > "$W/proc-states.log"; : > "$W/proc-states-held.log"
  for ((i = 1; i <= n; i++)); do timeout 60 "$x" 2>&1 | grep "over placements" >> "$W/proc-states.log"
    timeout 60 "$x" held 2>&1 | grep "over placements" >> "$W/proc-states-held.log"; done
  for m in proc-states proc-states-held; do python3 - "$W/$m.log" "$m" <<'PY' | tee -a "$S"
import re, sys
med = [float(m.group(1)) for m in map(re.compile(r"median ([0-9.]+)").search, open(sys.argv[1])) if m]
if not med:
    print("== %s: no process gave a median" % sys.argv[2]); sys.exit(0)
print("== %s: %d processes, medians (us a kernel): %s" % (sys.argv[2], len(med), " ".join("%.4f" % v for v in med)))
print("   across processes: min %.4f max %.4f (max/min - 1 = %.2f%%)" % (min(med), max(med), 100 * (max(med) / min(med) - 1)))
PY
  done; return 0; }
# dt_run_kept NAME LIMIT ARGS...: `dualtime run ARGS` into a fresh $W/NAME, its
# results.json back as NAME.json.gz; status 1 when the run wrote none
dt_run_kept() { local name="$1" limit="$2"; shift 2; rm -rf "${W:?}/$name"
  run "$name" "$limit" 3 "$B/dualtime" run "$@" --output "$W/$name"
  [ -f "$W/$name/results.json" ] || return 1
  gzip -c "$W/$name/results.json" >"$OUT/$name.json.gz"; }
# ab18: the session-9 elementwise flat tail and sum row head against the version before
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab18() { local NW="$PWD/$B/dualtime-native-worker" part; local -a extra
  for part in rows views; do
    if [ "$part" = rows ]; then extra=(--row-shapes 300x100277,777x3333,2049x1025,6000x6001,1000x1000,12345x77,512x49152)
    else extra=(--input-views --row-shapes 4096x4096,8192x1000,300x30000); fi
    dt_run_kept "ab18-$part" 240 "${sweep_flags[@]}" --operations add,gelu_add,sum "${extra[@]}" \
      --impls "torch,native,old=worker:env DUALTIME_ELEM_FLAT=0 DUALTIME_ROW_HEAD=0 $NW" || continue
    python3 scripts/sweep_check.py "$W/ab18-$part/results.json" > "$W/ab18-$part-native.txt"
    python3 scripts/sweep_check.py --cand old "$W/ab18-$part/results.json" > "$W/ab18-$part-old.txt"
    tail -2 "$W/ab18-$part-native.txt" | cut -c1-400 | sed 's/^/   native: /' | tee -a "$S"
    tail -2 "$W/ab18-$part-old.txt" | cut -c1-400 | sed 's/^/   old: /' | tee -a "$S"
  done; return 0; }
# ab18b: three A/Bs of session 9 (cross_entropy stream default, layernorm staged, add waves)
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab18b() { local NW="$PWD/$B/dualtime-native-worker" k op shapes envs
  run ab18b-oracle 150 3 env DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_NO_FAULT=1 \
    DUALTIME_GPU_TEST_OPS=cross_entropy "${CUDA_TEST[@]}"; fails ab18b-oracle
  oracle_ok ab18b-oracle cross_entropy ' single-read online-logsumexp unroll=4'
  for k in ce ln add; do
    case "$k" in
      ce) op=cross_entropy; shapes=4096x50257,2048x128256,1024x32000,128x256000,300x100277,8191x8193; envs="old=worker:env DUALTIME_CE_STREAM=0" ;;
      ln) op=layernorm; shapes=1024x32000,2048x20000,1024x24000; envs="smem2=worker:env DUALTIME_ROW_SMEM=2" ;;
      add) op=add; shapes=1000x1000,2049x1025,12345x77,777x3333,128x1024,64x4096,1024x4096; envs="w4=worker:env DUALTIME_ELEM_WAVES=4" ;;
    esac
    dt_run_kept "ab18b-$k" 200 "${sweep_flags[@]}" --operations "$op" --row-shapes "$shapes" \
      --impls "torch,native,$envs $NW" || continue
    python3 scripts/sweep_check.py "$W/ab18b-$k/results.json" > "$W/ab18b-$k-native.txt"
    python3 scripts/sweep_check.py --cand "${envs%%=*}" "$W/ab18b-$k/results.json" > "$W/ab18b-$k-other.txt"
    grep -E '^\| ' "$W/ab18b-$k-native.txt" | cut -c1-150 | sed 's/^/   native /' | tee -a "$S"
    grep -E '^\| [a-z]' "$W/ab18b-$k-other.txt" | cut -c1-150 | sed "s/^/   ${envs%%=*} /" | tee -a "$S"
  done; return 0; }
# ab18c: sum's threads a row, and the staged row for softmax / rmsnorm at 16385..32768
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab18c() { local NW="$PWD/$B/dualtime-native-worker" k; local -a a
  for k in sum sum-views rows; do
    case "$k" in
      sum) a=(--operations sum --row-shapes 6000x6001,8192x8192,1024x4096,300x100277 --impls "torch,native,e32=worker:env DUALTIME_ROW_ELEMS=32 $NW,e64=worker:env DUALTIME_ROW_ELEMS=64 $NW") ;;
      sum-views) a=(--operations sum --input-views --row-shapes 4096x4096,300x30000 --impls "torch,native,e32=worker:env DUALTIME_ROW_ELEMS=32 $NW,e64=worker:env DUALTIME_ROW_ELEMS=64 $NW") ;;
      rows) a=(--operations softmax,rmsnorm --row-shapes 1024x32000,2048x20000 --impls "torch,native,smem2=worker:env DUALTIME_ROW_SMEM=2 $NW") ;;
    esac
    dt_run_kept "ab18c-$k" 100 "${sweep_flags[@]}" "${a[@]}" || continue
    cases_p50 "$W/ab18c-$k/results.json"
  done; return 0; }
# ab19: the few-rows gemm against the square tiles and its k a step (session 10)
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab19() { local NW="$PWD/$B/dualtime-native-worker" k; local -a a
  for k in rows views; do
    case "$k" in
      rows) a=(--gemm-shapes 8x4096x4096,16x4096x4096,2x4096x4096,4x14336x4096,13x1000x1000,1x8192x1024,4096x64x4096
               --impls "torch,native,old=worker:env DUALTIME_GEMM_FEWROWS=0 $NW,kg1=worker:env DUALTIME_GEMV_KG=1 $NW,kg8=worker:env DUALTIME_GEMV_KG=8 $NW") ;;
      views) a=(--input-views --gemm-shapes 8x4096x4096,5x1003x257 --impls "torch,native,old=worker:env DUALTIME_GEMM_FEWROWS=0 $NW") ;;
    esac
    dt_run_kept "ab19-$k" 240 "${sweep_flags[@]}" --operations gemm "${a[@]}" || continue
    cases_p50 "$W/ab19-$k/results.json"
  done; return 0; }
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab19b() { local NW="$PWD/$B/dualtime-native-worker" e i=""
  for e in ct32=DUALTIME_GEMV_CTMIN=32 ch2=DUALTIME_GEMV_CH=2 ch8=DUALTIME_GEMV_CH=8 rows16=DUALTIME_GEMM_FEWROWS=16; do
    i="$i,${e%%=*}=worker:env ${e#*=} $NW"; done
  dt_run_kept ab19b 240 "${sweep_flags[@]}" --operations gemm \
    --gemm-shapes 8x4096x4096,16x4096x4096,2x4096x4096,4x14336x4096,8x1024x8192 --impls "torch,native$i" || return 0
  cases_p50 "$W/ab19b/results.json"; }
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab19c() { local NW="$PWD/$B/dualtime-native-worker"
  dt_run_kept ab19c-f32 200 "${sweep_flags[@]}" --dtypes fp32 --operations gemm \
    --gemm-shapes 4096x64x4096,1024x1024x1024,4096x128x4096,2048x64x8192,1024x64x2048,200x70x3000 \
    --impls "torch,native,nosplit=worker:env DUALTIME_GEMM_V2_SPLITK=1 $NW" && cases_p50 "$W/ab19c-f32/results.json"
  dt_run_kept ab19c-bf16 120 "${sweep_flags[@]}" --dtypes bf16 --operations gemm \
    --gemm-shapes 4096x64x4096,4096x128x4096,2048x64x8192 \
    --impls "torch,native,wgsk2=worker:env DUALTIME_GEMM_SPLITK=2 $NW" && cases_p50 "$W/ab19c-bf16/results.json"
  return 0; }
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab19d() { local NW="$PWD/$B/dualtime-native-worker" k; local -a a
  for k in rows views; do
    if [ "$k" = rows ]; then a=(--row-shapes 6000x6001,300x100277,1024x4096)
    else a=(--input-views --row-shapes 4096x4096,300x30000); fi
    dt_run_kept "ab19d-$k" 100 "${sweep_flags[@]}" --operations sum "${a[@]}" \
      --impls "torch,native,e16=worker:env DUALTIME_ROW_ELEMS=16 $NW" && cases_p50 "$W/ab19d-$k/results.json"
  done; return 0; }
# ab20: elementwise ops on L2-resident mid sizes (session 11: add 1024x4096 bf16 1.096x
# torch eager in the compile-full run) at more blocks an SM: ONE held run of torch vs
# native (DUALTIME_ELEM_WAVES 4) vs w8 / w16 (fewer items a thread until the grid has 8 /
# 16 blocks an SM), shapes from 3 to 50 MB, fp32 and bf16
step_ab20() { local NW="$PWD/$B/dualtime-native-worker"
  dt_run_kept ab20 150 "${sweep_flags[@]}" --operations add,gelu_add \
    --row-shapes 1024x4096,2048x2048,512x8192,1536x4096,777x3333,3000x2000,256x4096 \
    --impls "torch,native,w8=worker:env DUALTIME_ELEM_WAVES=8 $NW,w16=worker:env DUALTIME_ELEM_WAVES=16 $NW" &&
    cases_p50 "$W/ab20/results.json"; return 0; }
# ab21 (prepared in session 11, not run): the rows where the staged row loses to torch
# eager or to the copy floor (rmsnorm 2048x128256 f32 948 vs 788 us, softmax vocabulary
# rows at 70-74%): ONE held run of torch vs native (staged) vs kb56 (DUALTIME_ROW_SMEM_KB=56:
# bf16 a cluster of 8 x 128 threads at 32 KB, f32 the two-read path) vs stream
# (DUALTIME_ROW_L2=1 DUALTIME_ROW_L2_MB=256: the vectorized two-read stream wherever the row
# would be staged) vs s0 (DUALTIME_ROW_SMEM=0: the first pass), then ncu of native rmsnorm
# f32 at 2048x128256
step_ab21() { local NW="$PWD/$B/dualtime-native-worker"
  dt_run_kept ab21 300 "${sweep_flags[@]}" --operations rmsnorm,layernorm,softmax \
    --row-shapes 2048x128256,256x151936,4096x50257 \
    --impls "torch,native,kb56=worker:env DUALTIME_ROW_SMEM_KB=56 $NW,stream=worker:env DUALTIME_ROW_L2=1 DUALTIME_ROW_L2_MB=256 $NW,s0=worker:env DUALTIME_ROW_SMEM=0 $NW" &&
    cases_p50 "$W/ab21/results.json"
  ncu_one ncu-rows-rmsnorm-fp32-2048x128256 rmsnorm fp32 2048x128256 --cache-control none; return 0; }
# ab22 (session 12): the staged store pass with its parameter loads issued ahead; the
# long-shape GPU oracle first (the new path in every dtype), then the A/B
step_ab22() { local NW="$PWD/$B/dualtime-native-worker"
  run ab22-oracle 300 3 env DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_OPS=rmsnorm,layernorm \
    "${CUDA_TEST[@]}"; fails ab22-oracle
  dt_run_kept ab22 300 "${sweep_flags[@]}" --operations rmsnorm,layernorm \
    --row-shapes 2048x128256,256x151936,4096x50257,1024x32000 \
    --impls "torch,native,a1=worker:env DUALTIME_ROW_STORE_AHEAD=1 $NW,a8=worker:env DUALTIME_ROW_STORE_AHEAD=8 $NW" &&
    cases_p50 "$W/ab22/results.json"; return 0; }
# ab23 (session 13): L2 eviction hints on the staged and two-read rows, and the two-read
# row against the staged one for layernorm f32 (its target-1 tie at 2048x128256)
step_ab23() { local NW="$PWD/$B/dualtime-native-worker"
  run ab23-oracle 100 3 env DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_OPS=rmsnorm,layernorm \
    DUALTIME_GPU_TEST_DTYPES=f16 DUALTIME_GPU_TEST_ROWS=4096x50257,2048x128256 "${CUDA_TEST[@]}"
  fails ab23-oracle
  dt_run_kept ab23 "${DT_AB23_S:-380}" "${sweep_flags[@]}" --operations softmax,rmsnorm,layernorm \
    --row-shapes 2048x128256,4096x50257,256x151936 \
    --impls "torch,native,hint=worker:env DUALTIME_ROW_HINT=1 $NW,stream=worker:env DUALTIME_ROW_L2=1 DUALTIME_ROW_L2_MB=256 $NW,streamhint=worker:env DUALTIME_ROW_HINT=1 DUALTIME_ROW_L2=1 DUALTIME_ROW_L2_MB=256 $NW"
  [ -f "$W/ab23/results.json" ] && cases_p50 "$W/ab23/results.json"
  ncu_one ncu-ln-f32-128256 layernorm fp32 2048x128256 --cache-control none; return 0; }
# ab24 (session 13): the parameter loads' L2 hint as the default, against none and all
step_ab24() { local NW="$PWD/$B/dualtime-native-worker"
  run ab24-oracle 90 3 env DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_OPS=rmsnorm,layernorm \
    DUALTIME_GPU_TEST_DTYPES=f16 DUALTIME_GPU_TEST_ROWS=2048x128256,8191x8193 "${CUDA_TEST[@]}"
  fails ab24-oracle
  dt_run_kept ab24 "${DT_AB24_S:-360}" "${sweep_flags[@]}" --operations rmsnorm,layernorm,residual_layernorm \
    --row-shapes 2048x128256,256x151936,1024x32000,4096x50257 \
    --impls "torch,native,h0=worker:env DUALTIME_ROW_HINT=0 $NW,h1=worker:env DUALTIME_ROW_HINT=1 $NW"
  [ -f "$W/ab24/results.json" ] && cases_p50 "$W/ab24/results.json"; return 0; }
step_ab24b() { local NW="$PWD/$B/dualtime-native-worker"
  dt_run_kept ab24b "${DT_AB24B_S:-130}" "${sweep_flags[@]}" --operations rmsnorm,layernorm \
    --row-shapes 300x100277,128x256000,512x49152 --impls "torch,native,h0=worker:env DUALTIME_ROW_HINT=0 $NW"
  [ -f "$W/ab24b/results.json" ] && cases_p50 "$W/ab24b/results.json"; return 0; }
# ab25 (session 13; measured session 14): softmax's staged rows with one online (max, sum) pass
step_ab25() { local NW="$PWD/$B/dualtime-native-worker"
  [ "${DT_AB25_ORACLE:-1}" = 0 ] || run ab25-oracle 90 3 env DUALTIME_ROW_SM_ONLINE=1 DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_OPS=softmax \
    DUALTIME_GPU_TEST_DTYPES=f16 DUALTIME_GPU_TEST_ROWS=4096x50257,2048x128256,8191x8193 "${CUDA_TEST[@]}"
  fails ab25-oracle
  dt_run_kept ab25 "${DT_AB25_S:-240}" "${sweep_flags[@]}" --operations softmax \
    --row-shapes "${DT_AB25_SHAPES:-2048x128256,4096x50257,256x151936,512x49152,300x100277}" \
    --impls "torch,native,online=worker:env DUALTIME_ROW_SM_ONLINE=1 $NW,twopass=worker:env DUALTIME_ROW_SM_ONLINE=0 $NW"
  [ -f "$W/ab25/results.json" ] && cases_p50 "$W/ab25/results.json"; return 0; }
step_ab27() { local NW="$PWD/$B/dualtime-native-worker"
  dt_run_kept ab27 "${DT_AB27_S:-150}" "${sweep_flags[@]}" --dtypes bf16,fp16 --operations add,gelu_add \
    --input-views --row-shapes 4096x4096,300x30000,8192x1000,1023x4097 \
    --impls "torch,native,old=worker:env DUALTIME_ELEM_PAIR=0 $NW" || return 0
  cases_p50 "$W/ab27/results.json"
  python3 scripts/sweep_check.py "$W/ab27/results.json" > "$W/ab27-native.txt"
  python3 scripts/sweep_check.py --cand old "$W/ab27/results.json" > "$W/ab27-old.txt"
  tail -2 "$W/ab27-native.txt" | cut -c1-400 | sed 's/^/   native: /' | tee -a "$S"
  tail -2 "$W/ab27-old.txt" | cut -c1-400 | sed 's/^/   old: /' | tee -a "$S"; return 0; }
step_ab26() { local NW="$PWD/$B/dualtime-native-worker"
  dt_run_kept ab26 "${DT_AB26_S:-120}" "${sweep_flags[@]}" --dtypes fp32 --operations gemm \
    --gemm-shapes 4096x4096x4096,4097x4095x257 --impls "torch,native,bk32=worker:env DUALTIME_GEMM_BK=32 $NW"
  [ -f "$W/ab26/results.json" ] && cases_p50 "$W/ab26/results.json"
  ncu_one ncu-gemm-f32 gemm fp32 4096x4096x4096 --cache-control none
  [ -f "$W/ncu-gemm-f32.log" ] && grep -E "stall|Stall|smsp__pcsamp|Issue Slots|Executed Ipc|SM Frequency|Compute \(SM\) Throughput" "$W/ncu-gemm-f32.log" | head -30 | sed 's/^/   [gemm f32 stalls] /' | tee -a "$S"
  return 0; }
# ab29: every elementwise item's loads in one basic block (docs/perf.md "Session 16 measured")
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab29() { local NW="$PWD/$B/dualtime-native-worker" c
  dt_run_kept ab29 "${DT_AB29_S:-200}" "${sweep_flags[@]}" --dtypes fp32,bf16,fp16 --operations add,gelu_add \
    --input-views --row-shapes 4096x4096,300x30000,8192x1000 \
    --impls "torch,native,ldall=worker:env DUALTIME_ELEM_LDALL=1 $NW,ldpair=worker:env DUALTIME_ELEM_LDALL=1 DUALTIME_ELEM_PAIR=1 $NW"
  ab_targets ab29 1 native ldall ldpair; }
# ab_targets NAME LINES CANDS...: an A/B run's p50s, then each candidate's sweep_check
# tables (NAME-CAND.txt) and their last LINES lines (the target lines) into the summary
ab_targets() { local name="$1" k="$2" c; shift 2
  [ -f "$W/$name/results.json" ] || return 0
  cases_p50 "$W/$name/results.json"
  for c in "$@"; do
    python3 scripts/sweep_check.py --cand "$c" "$W/$name/results.json" > "$W/$name-$c.txt"
    tail -"$k" "$W/$name-$c.txt" | cut -c1-400 | sed "s/^/   $c: /" | tee -a "$S"
  done; return 0; }
# ab30: row ops over views in registers, shifted loads (docs/perf.md "Session 18")
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab30() { local NW="$PWD/$B/dualtime-native-worker" c
  dt_run_kept ab30 "${DT_AB30_S:-240}" "${sweep_flags[@]}" --dtypes fp32,bf16 \
    --operations softmax,rmsnorm,layernorm,cross_entropy,residual_layernorm \
    --input-views --row-shapes "${DT_AB30_SHAPES:-4096x4096,8192x1000,300x16000,1023x4097}" \
    --impls "torch,native,old=worker:env DUALTIME_ROW_SHIFT=0 $NW"
  ab_targets ab30 2 native old; }
# ab31: elementwise over views in 16-byte shifted items (docs/perf.md "Session 18")
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab31() { local NW="$PWD/$B/dualtime-native-worker" c
  dt_run_kept ab31 "${DT_AB31_S:-200}" "${sweep_flags[@]}" --dtypes fp32,bf16,fp16 --operations add,gelu_add \
    --input-views --row-shapes "${DT_AB31_SHAPES:-4096x4096,300x30000,8192x1000}" \
    --impls "torch,native,old=worker:env DUALTIME_ELEM_SHIFT=0 $NW,on=worker:env DUALTIME_ELEM_SHIFT=1 $NW"
  ab_targets ab31 2 native old on; }
# ab32: rows over 8192 split over a cluster where few rounds of big blocks leave SMs idle
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab32() { local NW="$PWD/$B/dualtime-native-worker"
  dt_run_kept ab32 "${DT_AB32_S:-200}" "${sweep_flags[@]}" --operations softmax,rmsnorm,layernorm,cross_entropy \
    --row-shapes "${DT_AB32_SHAPES:-300x30000,300x16000,500x12288,200x65536}" \
    --impls "torch,native,cl3=worker:env DUALTIME_ROW_CLUSTER=3 $NW"
  ab_targets ab32 2 native cl3; }
# ab33: odd rows (contiguous, N % VEC != 0) in registers: shifted loads, output frame
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab33() { local NW="$PWD/$B/dualtime-native-worker"
  dt_run_kept ab33 "${DT_AB33_S:-200}" "${sweep_flags[@]}" \
    --operations softmax,rmsnorm,layernorm,cross_entropy,residual_layernorm \
    --row-shapes "${DT_AB33_SHAPES:-6000x6001,2049x1025,777x3333,12345x77}" \
    --impls "torch,native,old=worker:env DUALTIME_ROW_SHIFT=0 $NW"
  ab_targets ab33 2 native old; }
# ab34: bf16 / f16 few rows on the tensor cores (gemv_mma.cu) against the plan before
# shellcheck disable=SC2054 # the commas are dualtime's
step_ab34() { local NW="$PWD/$B/dualtime-native-worker" k; local -a a
  run ab34-oracle "${DT_AB34_ORACLE_S:-150}" 1 env DUALTIME_GPU_TEST_SHAPES=gemv-narrow "${CUDA_TEST[@]}"
  grep -E 'gemv-mma|gemv ' "$W/ab34-oracle.log" 2>/dev/null | grep -E ' (4|8|16|32)x' | cut -c1-160 | sed 's/^/   /' | tee -a "$S"
  for k in rows views; do
    case "$k" in
      rows) a=(--dtypes bf16,fp16 --gemm-shapes "${DT_AB34_SHAPES:-8x4096x4096,16x4096x4096,2x4096x4096,32x4096x4096,4x14336x4096,24x14336x4096,13x1000x1000,8x1024x8192,5x1003x257,48x4096x4096,64x4096x4096,64x14336x4096}") ;;
      views) a=(--dtypes bf16 --input-views --gemm-shapes 8x4096x4096,5x1003x257) ;;
    esac
    dt_run_kept "ab34-$k" "${DT_AB34_S:-200}" "${sweep_flags[@]}" --operations gemm "${a[@]}" \
      --impls "torch,native,mma=worker:env DUALTIME_GEMV_MMA=1 $NW,r64=worker:env DUALTIME_GEMV_MMA=64 $NW" || continue
    cases_p50 "$W/ab34-$k/results.json"
  done; return 0; }
step_memcheck-views() { run memcheck-views "${DT_MEMCHECK_S:-200}" 3 env DUALTIME_GPU_TEST_SHAPES=long \
  DUALTIME_GPU_TEST_ROWS=17x1000,300x16000,5x40000,1x65536 DUALTIME_GPU_TEST_REPS=1 \
  DUALTIME_GPU_TEST_NO_FAULT=1 "${SANITIZER[@]}" memcheck "${CUDA_TEST[@]}"
  summary_of memcheck-views "ERROR SUMMARY"
  [ -f "$W/memcheck-views.log" ] && grep -cE "^ok " "$W/memcheck-views.log" |
    sed 's/^/   cases ok under memcheck: /' | tee -a "$S"; }
# ab28: v2's swizzled A tile against the layout before (docs/perf.md "FP32 gemm: the A tile swizzled")
step_ab28() { local NW="$PWD/$B/dualtime-native-worker"
  dt_run_kept ab28 "${DT_AB28_S:-240}" "${sweep_flags[@]}" --dtypes fp32 --operations gemm \
    --gemm-shapes 4096x4096x4096,2048x2048x2048,1024x1024x1024,4097x4095x257,1537x1539x131,4096x64x4096,4096x128x4096 \
    --impls "torch,native,old=worker:env DUALTIME_GEMM_ASWZ=0 $NW,bk32=worker:env DUALTIME_GEMM_BK=32 $NW,st0=worker:env DUALTIME_GEMM_SPLIT_TILE=0 $NW"
  [ -f "$W/ab28/results.json" ] && cases_p50 "$W/ab28/results.json"; return 0; }
# cases_p50 RESULTS: each case's held control p50 (us) of every implementation, one line a case
cases_p50() { python3 - "$1" <<'PY' | tee -a "$S"
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    sc = (c.get("derived") or {}).get("scopes", {}).get("control_batch", {})
    ids = list(c["impl"])
    print("   %-32s %s" % (c["id"], "  ".join("%s %.4g" % (i, (sc.get(i) or {}).get("p50", float("nan"))) for i in ids)), "" if c.get("valid") else "INVALID")
PY
}
# sweep18: issue 18's 20+ shapes outside the default matrix (session 9); DT_SWEEP_PARTS picks parts
# shellcheck disable=SC2054 # the commas are dualtime's
sweep_flags=(--backends cuda --device-timing --dtypes fp32,bf16 --samples 5 --rounds 1 --sample-ms 10
             --warmup-ms 50 --quiet)
# shellcheck disable=SC2054 # the commas are dualtime's
step_sweep18() { local part; local -a extra
  for part in ${DT_SWEEP_PARTS:-rows views gemm}; do
    case "$part" in
      rows) extra=(--operations "$(row_ops)" --row-shapes 1024x32000,512x49152,256x151936,128x256000,300x100277,1000x1000,777x3333,12345x77,2049x1025,6000x6001) ;;
      rows-vocab) extra=(--operations "$(row_ops)" --row-shapes 1024x32000,512x49152,256x151936,128x256000,300x100277) ;;
      rows-odd) extra=(--operations "$(row_ops)" --row-shapes 1000x1000,777x3333,12345x77,2049x1025,6000x6001) ;;
      views) extra=(--operations "$(row_ops)" --input-views --row-shapes 4096x4096,1023x4097,8192x1000,300x30000,1x65536) ;;
      gemm) extra=(--operations gemm --gemm-shapes 8x4096x4096,4096x4096x16,2048x2048x32,1x8192x1024,333x4097x31,4096x64x4096) ;;
      *) echo "== sweep18: unknown part '$part'" | tee -a "$S"; continue ;;
    esac
    dt_run_kept "sweep-$part" 400 "${sweep_flags[@]}" "${extra[@]}" || continue
    cp "$W/sweep-$part/results.md" "$OUT/sweep-$part.md"
    python3 scripts/sweep_check.py "$W/sweep-$part/results.json" > "$W/sweep-$part-check.txt"
    cp "$W/sweep-$part-check.txt" "$OUT/"; tail -3 "$W/sweep-$part-check.txt" | cut -c1-600 | tee -a "$S"
  done; return 0; }
step_proc-streams() { local x="$B/offset_latency" i c n="${DT_PROC_STREAMS_P:-4}"
  [ -n "$DRY" ] && { echo "proc-streams: $n x $x held 16 under CUDA_DEVICE_MAX_CONNECTIONS unset, 32, 1"; return 0; }
  [ -x "$x" ] || { echo "== proc-streams: no $B/offset_latency" | tee -a "$S"; return 0; }
  for c in unset 32 1; do : > "$W/proc-streams-$c.log"
    for ((i = 1; i <= n; i++)); do
      if [ "$c" = unset ]; then timeout 60 "$x" held 16 >> "$W/proc-streams-$c.log" 2>&1
      else CUDA_DEVICE_MAX_CONNECTIONS=$c timeout 60 "$x" held 16 >> "$W/proc-streams-$c.log" 2>&1; fi
    done
    python3 - "$W/proc-streams-$c.log" "$c" <<'PY' | tee -a "$S"
import re, sys
procs, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("# held"): cur = []; procs.append(cur)
    m = re.match(r"stream +(\d+) median ([0-9.]+)", line)
    if m and cur is not None: cur.append(float(m.group(2)))
print("== proc-streams, CUDA_DEVICE_MAX_CONNECTIONS=%s: %d processes x 16 streams (us a kernel)" % (sys.argv[2], len(procs)))
for k, p in enumerate(procs):
    if p:
        s = sorted(p)
        print("   process %d: streams %s | min %.4f median %.4f max %.4f (%.2f%%)" % (k + 1, " ".join("%.3f" % v for v in p), s[0], s[len(s) // 2], s[-1], 100 * (s[-1] / s[0] - 1)))
meds = [sorted(p)[len(p) // 2] for p in procs if p]
if meds:
    print("   process medians %s: spread %.2f%%" % (" ".join("%.4f" % v for v in meds), 100 * (max(meds) / min(meds) - 1)))
PY
  done; return 0; }
step_offset-latency() { local x="$B/offset_latency"
  [ -x "$x" ] || { x="$W/offset_latency"; nvcc -O2 -arch=sm_90 -o "$x" scripts/exp/offset_latency.cu -lcuda >"$W/offset-build.log" 2>&1 ||
    { echo "== offset-latency: no $B/offset_latency and nvcc failed: $(tail -2 "$W/offset-build.log")" | tee -a "$S"; return 0; }; }
  run offset-latency-1 60 3 "$x"; run offset-latency-2 60 3 "$x"; }
step_oracle-gemm() { run oracle-gemm 120 4 "$B/tests/oracle/test_gemm_f64"
  run oracle-gemm-bench 300 6 "$B/tests/oracle/bench_gemm_f64" 4096 4096 4096 1; }
step_nvml-cost() { run nvml-cost 30 6 python3 scripts/nvml_cost.py; }
step_dtypes() { run dtypes 300 3 "$B/dualtime" run --backends cuda --operations "$(row_ops)" \
    --dtypes "${DT_DTYPES:-bf16,fp16}" --quiet --output "$W/dtypes"
  [ -f "$W/dtypes/results.md" ] && cp "$W/dtypes/results.md" "$OUT/dtypes.md"; return 0; }
# inputs-all: one short run per distribution; uniform is the default matrix (dtypes-full)
step_inputs-all() { local d
  for d in normal wide-logits offset cancel; do rm -rf "$W/inputs-$d"
    run "inputs-$d" 120 2 "$B/dualtime" run --backends "$BACKENDS" \
      --dtypes fp32,bf16,fp16 --inputs "$d" --row-shapes 17x257,1024x4096,8x128256 \
      --gemm-shapes 127x193x61,1024x1024x1024,4096x1x4096 --rounds 1 --samples 3 \
      --sample-ms 5 --warmup-ms 20 --no-device-timing --quiet --output "$W/inputs-$d"
    [ -f "$W/inputs-$d/results.json" ] && python3 - "$W/inputs-$d/results.json" "$d" <<'PY' | tee -a "$S"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["cases"]
bad = [x["id"] + ":" + ",".join(n for n, i in x["impl"].items() if i["status"] != "ok")
       for x in c if not x["valid"]]
print("   inputs %s: %d cases, %d valid, complete %s%s" % (sys.argv[2], len(c),
      sum(x["valid"] for x in c), r["complete"], ("; invalid: " + " ".join(bad)) if bad else ""))
PY
  done; return 0; }
step_long() { run long 240 60 env DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_NO_FAULT=1 "${CUDA_TEST[@]}"
  fails long; }

# anti-cheat: the honest workers on the GPU pass every check; add 8192^2 (768 MiB) is over
# 4x the H200's L2, so the bytes rule of cheat.faster_than_physics applies to it.
step_anti-cheat() { rm -rf "$W/anti-cheat"
  run anti-cheat 300 3 "$B/dualtime" run --backends cuda --operations add,softmax,gemm \
    --row-shapes 17x257,8192x8192 --gemm-shapes 1024x1024x1024 "${DEVT[@]}" --samples 5 \
    --quiet --output "$W/anti-cheat"
  run anti-cheat-check 30 12 python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); bad = 0
for c in r["cases"]:
    for fw, im in c["impl"].items():
        ck = im.get("anti_cheat", {}).get("checks", {})
        st = {k: v["status"] for k, v in ck.items()}
        ok = len(st) == 6 and all(s in ("passed", "not_applicable") for s in st.values())
        ph = ck.get("cheat.faster_than_physics", {})
        print(c["id"], fw, "ok" if ok else "FAIL", im["anti_cheat"]["sample_checks"], ph.get("status"), ph.get("note"))
        bad += not ok
sys.exit(1 if bad else 0)' "$W/anti-cheat/results.json"
  [ -f "$W/anti-cheat/results.md" ] && cp "$W/anti-cheat/results.md" "$OUT/anti-cheat.md"; return 0; }
# rows-sweep: issue 18's row ops (softmax, layernorm, rmsnorm, cross_entropy) where the
# staged-row variant (DUALTIME_ROW_SMEM=1, the default since this step passed on the H200;
# docs/cuda-backend.md) runs. The FP32 GPU oracle
# test of the long shapes (the narrow types are checked by the runs' own oracle), the same
# at 8192^2 with every long row staged (=2), residual_layernorm's quick shapes (staged
# views, 3x70000) in f32 and bf16;
# then one held device run of native vs torch, contiguous and views, fp32 and bf16, and
# two geometry A/Bs. results.md (contiguous), rows-views.md, rows-ab-kb227.md and
# rows-ab-smem2.md to $OUT.
rows_ops=softmax,layernorm,rmsnorm,cross_entropy
# shellcheck disable=SC2054 # the commas are dualtime's
rows_run=(--backends cuda --device-timing --operations "$rows_ops" --dtypes fp32,bf16 --samples 5
          --rounds 1 --sample-ms 10 --warmup-ms 50 --quiet)  # later --operations/--dtypes win
step_rows-sweep() { rm -rf "$W/rows" "$W/rows-views" "$W/rows-ab" "$W/rows-ab2"
  run rows-oracle 80 4 env DUALTIME_ROW_SMEM=1 DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_DTYPES=f32 \
    DUALTIME_GPU_TEST_NO_FAULT=1 "${CUDA_TEST[@]}"; fails rows-oracle
  run rows-oracle-smem2 25 3 env DUALTIME_ROW_SMEM=2 DUALTIME_GPU_TEST_SHAPES=8192 \
    DUALTIME_GPU_TEST_DTYPES=f32 DUALTIME_GPU_TEST_NO_FAULT=1 "${CUDA_TEST[@]}"; fails rows-oracle-smem2
  run rows-oracle-residual 25 3 env DUALTIME_ROW_SMEM=1 DUALTIME_GPU_TEST_OPS=residual_layernorm DUALTIME_GPU_TEST_QUICK=1 \
    DUALTIME_GPU_TEST_DTYPES=f32,bf16 DUALTIME_GPU_TEST_NO_FAULT=1 "${CUDA_TEST[@]}"; fails rows-oracle-residual
  [ -f "$W/rows-oracle.log" ] && grep -E "^ok +(softmax|layernorm|rmsnorm|cross_entropy) " "$W/rows-oracle.log" |
    sed -E 's/ +\| compile.*\| / | /' | cut -c1-230 | head -40 | tee -a "$S"
  run rows-run 110 3 env DUALTIME_ROW_SMEM=1 "$B/dualtime" run "${rows_run[@]}" \
    --row-shapes 4096x50257,2048x128256,1x65536,8192x8192 --output "$W/rows"
  keep_results rows; note "$W/rows/results.md" '/^## Device control/,/^$/p' 50
  run rows-views 45 3 env DUALTIME_ROW_SMEM=1 "$B/dualtime" run "${rows_run[@]}" --input-views \
    --operations "$rows_ops,residual_layernorm" --row-shapes 8191x8193,8192x8192 --output "$W/rows-views"
  [ -f "$W/rows-views/results.md" ] && cp "$W/rows-views/results.md" "$OUT/rows-views.md"
  note "$W/rows-views/results.md" '/^## Device control/,/^$/p' 30
  # A/B of the geometry: 4096x50257 f32 in one 1024-thread block an SM (no cluster), and
  # 8192^2 and 1x65536 staged (=2) against the in-register paths of the run above
  run rows-ab-kb227 20 3 env DUALTIME_ROW_SMEM=1 DUALTIME_ROW_SMEM_KB=227 "$B/dualtime" run "${rows_run[@]}" \
    --dtypes fp32 --operations softmax,rmsnorm --row-shapes 4096x50257 --output "$W/rows-ab"
  [ -f "$W/rows-ab/results.md" ] && cp "$W/rows-ab/results.md" "$OUT/rows-ab-kb227.md"
  note "$W/rows-ab/results.md" '/^## Device control/,/^$/p' 12
  run rows-ab-smem2 20 3 env DUALTIME_ROW_SMEM=2 "$B/dualtime" run "${rows_run[@]}" \
    --operations layernorm,softmax --row-shapes 8192x8192,1x65536 --output "$W/rows-ab2"
  [ -f "$W/rows-ab2/results.md" ] && cp "$W/rows-ab2/results.md" "$OUT/rows-ab-smem2.md"
  note "$W/rows-ab2/results.md" '/^## Device control/,/^$/p' 14; return 0; }

# gemm-f32: issue 18 item 4 (docs/perf.md, "FP32 gemm: thin shapes and small K"). The
# oracle over every FP32 gemm shape of the GPU test (thin and small-K ones included, both
# layouts), then the timed shapes with the shape geometry (default), the same under
# --input-views, and the old geometry (DUALTIME_GEMM_SHAPE=0: thin shapes on v2's 64x64
# tile, v2's full last K-step) on the shapes it changes, and v2 at DUALTIME_GEMM_BK=32 (4096^3,
# 4097x4095x257); torch side by side in every run, the oracle on for every timed case.
# shellcheck disable=SC2054 # the commas are dualtime's
gemm_f32_run=(--backends cuda --operations gemm --dtypes fp32 --device-timing --samples 5 --quiet)
step_gemm-f32() { rm -rf "$W/gemm-f32" "$W/gemm-f32-views" "$W/gemm-f32-old"
  run gemm-f32-oracle 90 4 env DUALTIME_GPU_TEST_OPS=gemm DUALTIME_GPU_TEST_DTYPES=f32 \
    DUALTIME_GPU_TEST_NO_FAULT=1 "${CUDA_TEST[@]}"; fails gemm-f32-oracle
  [ -f "$W/gemm-f32-oracle.log" ] && grep -E "^ok +gemm " "$W/gemm-f32-oracle.log" | cut -c1-230 |
    head -30 | tee -a "$S"
  run gemm-f32-new 50 3 "$B/dualtime" run "${gemm_f32_run[@]}" \
    --gemm-shapes 4096x4096x4096,1000x1x1000,1x1000x1000,4097x4095x257,127x193x61 --output "$W/gemm-f32"
  keep_results gemm-f32; note "$W/gemm-f32/results.md" '/^## Device control/,/^$/p' 14
  run gemm-f32-views 30 3 "$B/dualtime" run "${gemm_f32_run[@]}" --input-views \
    --gemm-shapes 1000x1x1000,1x1000x1000,4097x4095x257,127x193x61 --output "$W/gemm-f32-views"
  [ -f "$W/gemm-f32-views/results.md" ] && cp "$W/gemm-f32-views/results.md" "$OUT/gemm-f32-views.md"
  note "$W/gemm-f32-views/results.md" '/^## Device control/,/^$/p' 12
  run gemm-f32-old 30 3 env DUALTIME_GEMM_SHAPE=0 "$B/dualtime" run "${gemm_f32_run[@]}" \
    --gemm-shapes 1000x1x1000,1x1000x1000,4097x4095x257,127x193x61 --output "$W/gemm-f32-old"
  [ -f "$W/gemm-f32-old/results.md" ] && cp "$W/gemm-f32-old/results.md" "$OUT/gemm-f32-old.md"
  note "$W/gemm-f32-old/results.md" '/^## Device control/,/^$/p' 12
  # the 4096^3 experiment: v2's 128x128 tile at BK=32 (two prefetch phases a step)
  run gemm-f32-bk32 40 3 env DUALTIME_GEMM_BK=32 "$B/dualtime" run "${gemm_f32_run[@]}" \
    --gemm-shapes 4096x4096x4096,4097x4095x257 --output "$W/gemm-f32-bk32"
  [ -f "$W/gemm-f32-bk32/results.md" ] && cp "$W/gemm-f32-bk32/results.md" "$OUT/gemm-f32-bk32.md"
  note "$W/gemm-f32-bk32/results.md" '/^## Device control/,/^$/p' 10; return 0; }
# gemv-narrow: session 7 (docs/perf.md "bf16/f16 gemv"). The GPU test's thin narrow table
# (DUALTIME_GPU_TEST_SHAPES=gemv-narrow: gemv forced, every output against FP64 with the
# gemm bf16/f16 tolerance, the arena after 200 calls equal to the checked one; tc1 at
# the 4096 shapes for the host clock), one line a case into the summary; then ONE held
# device run with the plan before as a third implementation (the native worker with
# DUALTIME_GEMM_GEMV_NARROW=0: tc1 where B's column has no 16-byte rows, N == 1; wg3 at
# M == 1), so native, before and torch share the run's clocks; gemv-narrow.md to $OUT.
# shellcheck disable=SC2054 # the commas are dualtime's
gemv_narrow_run=(--backends cuda --device-timing --operations gemm --dtypes bf16,fp16
                 --gemm-shapes 4096x1x4096,1x4096x4096,1000x1x1000 --samples 5 --rounds 1
                 --sample-ms 10 --warmup-ms 50 --quiet)
step_gemv-narrow() { rm -rf "$W/gemv-narrow"
  run gemv-narrow-oracle 25 3 env DUALTIME_GPU_TEST_SHAPES=gemv-narrow DUALTIME_GPU_TEST_DTYPES=bf16,f16 \
    "${CUDA_TEST[@]}"; fails gemv-narrow-oracle
  [ -f "$W/gemv-narrow-oracle.log" ] && grep -E "^gemm-tc \| [0-9]" "$W/gemv-narrow-oracle.log" |
    sed -E 's/ +\| +/ | /g' | cut -c1-200 | head -30 | tee -a "$S"
  run gemv-narrow-run 55 3 "$B/dualtime" run "${gemv_narrow_run[@]}" \
    --impls "torch,native,before=worker:env DUALTIME_GEMM_GEMV_NARROW=0 $PWD/$B/dualtime-native-worker" \
    --output "$W/gemv-narrow"
  [ -f "$W/gemv-narrow/results.md" ] && cp "$W/gemv-narrow/results.md" "$OUT/gemv-narrow.md"
  note "$W/gemv-narrow/results.md" '/^## Device control/,/^$/p' 24; return 0; }
# rows-pipe: issue 18 third pass (docs/perf.md "Issue 18, third pass"). The GPU test's
# FP64 oracle and x100 timing (one "ok" line a case, into the summary with its label) of
# the persistent double-buffered staged rows (DUALTIME_ROW_PIPE=1: every row op, f32) and,
# as the A/B, the staged rows of one row a block (=0, the default) and the first pass
# (DUALTIME_ROW_SMEM=0) for softmax and layernorm, at 4096x50257, 2048x128256 and the
# 8191x8193 view; the pipelined softmax 4096x50257 at DUALTIME_ROW_SMEM_KB=227 (cluster 2
# x 1024 threads, one block an SM: the other geometry); layernorm 8192^2 bf16 and f32 with packed gamma/beta
# (DUALTIME_ROW_LN_RAW=1, opt-in) and bf16 without (=0, the default) and staged + pipelined
# (DUALTIME_ROW_SMEM=2 DUALTIME_ROW_PIPE=1); then one held device run
# of native with PIPE=1 vs torch at the vocabulary rows, fp32 and bf16 (its own oracle
# checks bf16). rows-pipe.md to $OUT.
rows_pipe_shapes=4096x50257,2048x128256,8191x8193
rows_pipe_ok() { [ -f "$W/$1.log" ] && grep -E "^ok +(softmax|layernorm|rmsnorm|cross_entropy) " "$W/$1.log" |
  sed -E "s/ +\| compile.*\| / | /; s/^ok  /$1:/" | cut -c1-200 | head -16 | tee -a "$S"; return 0; }
step_rows-pipe() { rm -rf "$W/rows-pipe"
  local t=(DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_ROWS="$rows_pipe_shapes" DUALTIME_GPU_TEST_NO_FAULT=1)
  run rows-pipe-oracle 90 3 env DUALTIME_ROW_PIPE=1 "${t[@]}" DUALTIME_GPU_TEST_DTYPES=f32 "${CUDA_TEST[@]}"
  fails rows-pipe-oracle; rows_pipe_ok rows-pipe-oracle
  run rows-pipe-staged 40 2 env DUALTIME_ROW_PIPE=0 "${t[@]}" DUALTIME_GPU_TEST_DTYPES=f32 \
    DUALTIME_GPU_TEST_OPS=softmax,layernorm "${CUDA_TEST[@]}"; rows_pipe_ok rows-pipe-staged
  run rows-pipe-first 40 2 env DUALTIME_ROW_SMEM=0 "${t[@]}" DUALTIME_GPU_TEST_DTYPES=f32 \
    DUALTIME_GPU_TEST_OPS=softmax,layernorm "${CUDA_TEST[@]}"; rows_pipe_ok rows-pipe-first
  run rows-pipe-kb227 25 2 env DUALTIME_ROW_PIPE=1 DUALTIME_ROW_SMEM_KB=227 DUALTIME_GPU_TEST_SHAPES=long \
    DUALTIME_GPU_TEST_ROWS=4096x50257 DUALTIME_GPU_TEST_NO_FAULT=1 DUALTIME_GPU_TEST_DTYPES=f32 \
    DUALTIME_GPU_TEST_OPS=softmax "${CUDA_TEST[@]}"; rows_pipe_ok rows-pipe-kb227
  run rows-pipe-ln 30 2 env DUALTIME_ROW_LN_RAW=1 DUALTIME_GPU_TEST_SHAPES=8192 DUALTIME_GPU_TEST_NO_FAULT=1 \
    DUALTIME_GPU_TEST_OPS=layernorm DUALTIME_GPU_TEST_DTYPES=f32,bf16 "${CUDA_TEST[@]}"; rows_pipe_ok rows-pipe-ln
  run rows-pipe-ln0 25 2 env DUALTIME_ROW_LN_RAW=0 DUALTIME_GPU_TEST_SHAPES=8192 DUALTIME_GPU_TEST_NO_FAULT=1 \
    DUALTIME_GPU_TEST_OPS=layernorm DUALTIME_GPU_TEST_DTYPES=bf16 "${CUDA_TEST[@]}"; rows_pipe_ok rows-pipe-ln0
  run rows-pipe-ln-smem2 25 2 env DUALTIME_ROW_SMEM=2 DUALTIME_ROW_PIPE=1 DUALTIME_GPU_TEST_SHAPES=8192 \
    DUALTIME_GPU_TEST_NO_FAULT=1 DUALTIME_GPU_TEST_OPS=layernorm DUALTIME_GPU_TEST_DTYPES=bf16 "${CUDA_TEST[@]}"
  rows_pipe_ok rows-pipe-ln-smem2
  run rows-pipe-run 90 3 env DUALTIME_ROW_PIPE=1 "$B/dualtime" run "${rows_run[@]}" \
    --row-shapes 4096x50257,2048x128256 --output "$W/rows-pipe"
  [ -f "$W/rows-pipe/results.md" ] && cp "$W/rows-pipe/results.md" "$OUT/rows-pipe.md"
  note "$W/rows-pipe/results.md" '/^## Device control/,/^$/p' 40; return 0; }

# The ok lines of the GPU-test log $W/$1.log for the ops $2 (an ERE alternation) into the
# summary, shortened to shape, error, us, GB/s, geometry, registers and local bytes: the
# compile column, the kernel name, the plan summary's words $3 (an ERE) and the cache
# note dropped (ce-stream, rows-l2).
oracle_ok() { [ -f "$W/$1.log" ] && grep -E "^ok +($2) " "$W/$1.log" |
  sed -E "s/ +\| compile[^|]*\| / | /; s/dt_[a-z_]+_[a-z0-9]+ block-per-row //; s/$3//;
          s/; cache=.*//; s/^ok  /$1:/" | cut -c1-280 | head -16 | tee -a "$S"; return 0; }

# ce-stream: issue 18 session 6 (docs/perf.md "cross_entropy stream"). The GPU test's FP64
# oracle and x100 timing of cross_entropy with DUALTIME_CE_STREAM=1 at the long shapes
# where the stream replaces the staged row (4096x50257, 2048x128256, the 8191x8193 view:
# rows_pipe_shapes) in every dtype, one line a case into the summary (its plan summary
# says ce-stream; registers and local bytes as the backend read them); then ONE held
# device run with the stream as a third implementation (the native worker with
# DUALTIME_CE_STREAM=1), so the A/B against native (staged rows) and torch shares the
# run's clocks; ce-stream.md to $OUT.
# shellcheck disable=SC2054 # the commas are dualtime's
ce_stream_run=(--backends cuda --device-timing --operations cross_entropy --dtypes fp32,bf16
               --row-shapes 4096x50257,2048x128256,8192x8192,8191x8193 --samples 5 --rounds 1
               --sample-ms 10 --warmup-ms 50 --quiet)
step_ce-stream() { rm -rf "$W/ce-stream"
  run ce-stream-oracle 150 3 env DUALTIME_CE_STREAM=1 DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_NO_FAULT=1 \
    DUALTIME_GPU_TEST_ROWS="$rows_pipe_shapes" DUALTIME_GPU_TEST_OPS=cross_entropy "${CUDA_TEST[@]}"
  fails ce-stream-oracle; oracle_ok ce-stream-oracle cross_entropy ' single-read online-logsumexp unroll=4'
  run ce-stream-run 180 3 "$B/dualtime" run "${ce_stream_run[@]}" \
    --impls "torch,native,stream=worker:env DUALTIME_CE_STREAM=1 $PWD/$B/dualtime-native-worker" \
    --output "$W/ce-stream"
  [ -f "$W/ce-stream/results.md" ] && cp "$W/ce-stream/results.md" "$OUT/ce-stream.md"
  note "$W/ce-stream/results.md" '/^## Device control/,/^$/p' 40; return 0; }

# rows-l2: issue 18 session 6 (docs/perf.md "rows L2 two-pass"). The GPU test's FP64
# oracle and x100 timing of softmax, rmsnorm and layernorm with DUALTIME_ROW_L2=1 where
# the two-pass row replaces the staged row at the default 32 MB budget (4096x50257, the
# 8191x8193 view; 2048x128256 does not fit it and stays staged) in f32 and bf16, one line
# a case into the summary (its plan summary says row-l2-two-pass); then ONE held device
# run with the two-pass row as a third implementation (the native worker with
# DUALTIME_ROW_L2=1), so the A/B against native (staged rows) and torch shares the run's
# clocks (2048x128256 and 8192^2: controls, the variant does not apply); rows-l2.md to
# $OUT. DT_ROWS_L2_SHAPES overrides the held run's shapes (fewer: shorter).
# shellcheck disable=SC2054 # the commas are dualtime's
rows_l2_run=(--backends cuda --device-timing --operations softmax,rmsnorm,layernorm --dtypes fp32,bf16
             --row-shapes "${DT_ROWS_L2_SHAPES:-4096x50257,2048x128256,8192x8192,8191x8193}" --samples 5
             --rounds 1 --sample-ms 10 --warmup-ms 50 --quiet)
step_rows-l2() { rm -rf "$W/rows-l2"
  run rows-l2-oracle 240 3 env DUALTIME_ROW_L2=1 DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_NO_FAULT=1 \
    DUALTIME_GPU_TEST_ROWS=4096x50257,8191x8193 DUALTIME_GPU_TEST_DTYPES=f32,bf16 \
    DUALTIME_GPU_TEST_OPS=softmax,rmsnorm,layernorm "${CUDA_TEST[@]}"
  fails rows-l2-oracle; oracle_ok rows-l2-oracle 'softmax|rmsnorm|layernorm' ' dram-read\+l2-reread unroll=4'
  run rows-l2-run 420 3 "$B/dualtime" run "${rows_l2_run[@]}" \
    --impls "torch,native,l2=worker:env DUALTIME_ROW_L2=1 $PWD/$B/dualtime-native-worker${DT_ROWS_L2_MB:+,l2mb=worker:env DUALTIME_ROW_L2=1 DUALTIME_ROW_L2_MB=$DT_ROWS_L2_MB $PWD/$B/dualtime-native-worker}" \
    --output "$W/rows-l2"
  [ -f "$W/rows-l2/results.md" ] && cp "$W/rows-l2/results.md" "$OUT/rows-l2.md"
  note "$W/rows-l2/results.md" '/^## Device control/,/^$/p' 90; return 0; }

# ln-one: issue 16 item 1 (docs/perf.md "layernorm one reduction"). The GPU test's FP64
# oracle and x100 timing of layernorm with DUALTIME_ROW_LN_ONE=1 in every dtype: the
# default shapes (warp- and block-per-row, views, 8192^2) and the register clusters
# (5x40000, 1x65536), one line a case into the summary (its plan summary says
# one-reduction where the variant applies); then ONE held device run with the variant
# as third and fourth implementations (the native worker with DUALTIME_ROW_LN_ONE=1:
# 40 registers, 3 blocks of 512 an SM; =2: 32 registers, 4), so the A/B against native
# (two reductions) and torch shares the run's clocks, and two32 (today's two-reduction
# kernel pinned at 32 registers, DUALTIME_ROW_LN_REGS=32) tells occupancy from the
# reduction (every output of the run is checked against the FP64 oracle too); ln-one.md
# to $OUT;
# then native and the variant under --inputs offset (a one-pass variance cancels there)
# in fp32, bf16 and fp16: every case must be valid.
ln_one_w='worker:env DUALTIME_ROW_LN_ONE='  # + 1 or 2 (registers for 3 or 4 blocks of 512 an SM)
# shellcheck disable=SC2054 # the commas are dualtime's
ln_one_run=(--backends cuda --device-timing --operations layernorm --dtypes fp32,bf16
            --row-shapes 8192x8192,4096x8192,1024x4096 --samples 5 --rounds 1
            --sample-ms 10 --warmup-ms 50 --quiet)
step_ln-one() { rm -rf "$W/ln-one" "$W/ln-one-offset"; local NW="$PWD/$B/dualtime-native-worker"
  if [ -z "${DT_LN_ONE_QUICK:-}" ]; then
  run ln-one-oracle 150 3 env DUALTIME_ROW_LN_ONE=1 DUALTIME_GPU_TEST_OPS=layernorm DUALTIME_GPU_TEST_NO_FAULT=1 \
    "${CUDA_TEST[@]}"
  fails ln-one-oracle; oracle_ok ln-one-oracle layernorm ' row-in-registers single-pass'
  run ln-one-long 60 3 env DUALTIME_ROW_LN_ONE=1 DUALTIME_GPU_TEST_SHAPES=long DUALTIME_GPU_TEST_NO_FAULT=1 \
    DUALTIME_GPU_TEST_ROWS=1x65536,5x40000 DUALTIME_GPU_TEST_OPS=layernorm "${CUDA_TEST[@]}"
  fails ln-one-long; oracle_ok ln-one-long layernorm ' row-in-registers single-pass'
  fi
  run ln-one-run 150 3 "$B/dualtime" run "${ln_one_run[@]}" \
    --impls "torch,native,one=${ln_one_w}1 $NW,one2=${ln_one_w}2 $NW,two32=worker:env DUALTIME_ROW_LN_REGS=32 $NW" \
    --output "$W/ln-one"
  [ -f "$W/ln-one/results.md" ] && cp "$W/ln-one/results.md" "$OUT/ln-one.md"
  note "$W/ln-one/results.md" '/^## Device control/,/^$/p' 30
  run ln-one-offset 90 3 "$B/dualtime" run --backends cuda --operations layernorm --dtypes fp32,bf16,fp16 \
    --row-shapes 8192x8192,17x257,5x40000 --inputs offset --samples 3 --sample-ms 5 --warmup-ms 20 \
    --impls "native,one=${ln_one_w}1 $NW,one2=${ln_one_w}2 $NW" --quiet \
    --output "$W/ln-one-offset"
  return 0; }

# ln-persist: issue 16 item 1 (docs/perf.md "layernorm persistent rows"). The GPU test's
# FP64 oracle and x100 timing of layernorm with DUALTIME_ROW_LN_PERSIST=1 and =2 in every
# dtype at the default shapes, one line a case into the summary (its plan summary says
# persist=N grid=G where the variant applies, resident-grid= where the backend shrank G
# to the blocks that stay resident); then ONE held device run with both values as third
# and fourth implementations, so the A/B against native (one block a row) and torch
# shares the run's clocks (every output checked against the FP64 oracle too); ln-persist.md
# to $OUT.
ln_persist_w='worker:env DUALTIME_ROW_LN_PERSIST='  # + 1 or 2
# shellcheck disable=SC2054 # the commas are dualtime's
ln_persist_run=(--backends cuda --device-timing --operations layernorm --dtypes fp32,bf16
                --row-shapes 8192x8192,4096x8192,16384x4096,1024x4096 --samples 5 --rounds 1
                --sample-ms 10 --warmup-ms 50 --quiet)
step_ln-persist() { rm -rf "$W/ln-persist"; local NW="$PWD/$B/dualtime-native-worker" v
  for v in 1 2; do [ -n "${DT_LN_PERSIST_QUICK:-}" ] && break
    run "ln-persist-oracle$v" 120 3 env DUALTIME_ROW_LN_PERSIST="$v" DUALTIME_GPU_TEST_OPS=layernorm \
      DUALTIME_GPU_TEST_NO_FAULT=1 "${CUDA_TEST[@]}"
    fails "ln-persist-oracle$v"; oracle_ok "ln-persist-oracle$v" layernorm ' row-in-registers single-pass'
  done
  run ln-persist-run 150 3 "$B/dualtime" run "${ln_persist_run[@]}" \
    --impls "torch,native,p1=${ln_persist_w}1 $NW,p2=${ln_persist_w}2 $NW,p1e32=worker:env DUALTIME_ROW_ELEMS=32 ${ln_persist_w#worker:env }1 $NW" \
    --output "$W/ln-persist"
  [ -f "$W/ln-persist/results.md" ] && cp "$W/ln-persist/results.md" "$OUT/ln-persist.md"
  note "$W/ln-persist/results.md" '/^## Device control/,/^$/p' 30; return 0; }

step_ln-default() { rm -rf "$W/ln-default"; local NW="$PWD/$B/dualtime-native-worker"
  run ln-default-run 200 3 "$B/dualtime" run --backends cuda --device-timing --operations layernorm \
    --dtypes fp32,bf16,fp16 --samples 5 --rounds 1 --sample-ms 10 --warmup-ms 50 --quiet \
    --impls "torch,native,old=${ln_persist_w}0 $NW" --output "$W/ln-default"
  [ -f "$W/ln-default/results.md" ] && cp "$W/ln-default/results.md" "$OUT/ln-default.md"
  [ -f "$W/ln-default/results.json" ] && gzip -c "$W/ln-default/results.json" >"$OUT/ln-default.json.gz"
  note "$W/ln-default/results.md" '/^## Device control/,/^$/p' 40; return 0; }

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

# decomp: issue 13 item 3. The run's "E2E decomposition" table goes to the summary and its
# results.md comes back as decomp.md; the native and torch workers' GPU tests print one
# decomposed add 17x257 each ("decomp:" lines) and check the timestamps' order.
step_decomp() { rm -rf "$W/decomp"
  run decomp 420 3 "$B/dualtime" run --backends cuda --operations add,layernorm \
    --row-shapes 17x257,8192x8192 --device-timing --samples 5 --rounds 3 --quiet --output "$W/decomp"
  [ -f "$W/decomp/results.md" ] && cp "$W/decomp/results.md" "$OUT/decomp.md"
  note "$W/decomp/results.md" '/^## E2E decomposition/,/^## [^E]/p' 30
  run decomp-native 180 4 "$B/tests/native/test_native_worker" "$B/dualtime-native-worker" --gpu-hold
  summary_of decomp-native "decomp:"
  run decomp-torch 240 4 python3 tests/torch/test_torch_worker.py workers/torch/dualtime_torch_worker.py \
    "$B/dualtime"
  summary_of decomp-torch "decomp:"; }
# results-verify: every incremental write compared byte for byte with dt_record_encode.
step_results-verify() { rm -rf "$W/results-verify"
  run results-verify 300 3 env DUALTIME_RESULTS_VERIFY=1 DUALTIME_PHASE_TRACE="$W/results-verify.trace" \
    "$B/dualtime" run --backends cuda --operations add,softmax,layernorm,gemm \
    --row-shapes 17x257,128x1024,8192x8192 --gemm-shapes 1024x1024x1024 --device-timing --rounds 2 \
    --quiet --output "$W/results-verify"
  run results-verify-report 60 2 "$B/dualtime" report "$W/results-verify/results.json"
  [ -n "$DRY" ] && return 0
  python3 scripts/phase_times.py "$W/results-verify.trace" 2>&1 | grep -E "write outputs|total" | sed 's/^/   /' | tee -a "$S"
  return 0; }
# devices: issue 20 item 1 on one GPU. --devices 0 against a plain run of the same flags.
step_devices() { rm -rf "$W/devices" "$W/devices-plain"
  run devices 300 3 "$B/dualtime" run --devices 0 "${shard_flags[@]}" --output "$W/devices"
  run devices-plain 300 3 "$B/dualtime" run "${shard_flags[@]}" --quiet --output "$W/devices-plain"
  run devices-same 30 8 python3 scripts/shards_compare.py "$W/devices/devices/plan.json" \
    "$W/devices/results.json" "$W/devices-plain/results.json"
  run devices-check 30 8 python3 scripts/devices_check.py "$W/devices/results.json" 1
  note "$W/devices/results.md" '/^## Devices/,/^## Host/p' 12
  [ -f "$W/devices/results.md" ] && cp "$W/devices/results.md" "$OUT/devices.md"; return 0; }
# devices-all: on a kind with several GPUs; on one GPU it is the same as `devices`.
step_devices-all() { local t0 t1 t2; rm -rf "$W/devices-all" "$W/devices-one"; t0=$(date +%s)
  run devices-all 580 4 "$B/dualtime" run --devices "${DT_DEVICES:-all}" --backends cuda \
    "${BENCH_EXTRA[@]}" --output "$W/devices-all"; t1=$(date +%s)
  run devices-one 580 3 "$B/dualtime" run --backends cuda "${BENCH_EXTRA[@]}" --quiet \
    --output "$W/devices-one"; t2=$(date +%s)
  echo "   wall: --devices ${DT_DEVICES:-all} $((t1 - t0)) s, one GPU $((t2 - t1)) s" | tee -a "$S"
  run devices-all-check 30 12 python3 scripts/devices_check.py "$W/devices-all/results.json"
  note "$W/devices-all/results.md" '/^## Devices/,/^## Host/p' 20
  [ -f "$W/devices-all/results.md" ] && cp "$W/devices-all/results.md" "$OUT/devices-all.md"; return 0; }
# examples (issue 17): each user implementation through the worker flags the --impls
# spellings start (docs/torch-worker.md, docs/cuda-backend.md), as --candidate-worker
# against the PyTorch worker's eager baseline; every case must be valid (exit 0).
# shellcheck disable=SC2054 # the commas are dualtime's
ex_flags=(--backends cuda --row-shapes 17x257,1024x4096,4096x50257 --samples 3 --device-timing --quiet)
ex_run() { local name="$1" ops="$2" cand="$3"; rm -rf "${W:?}/$name"
  run "$name" 300 4 "$B/dualtime" run "${ex_flags[@]}" --operations "$ops" --candidate-worker "$cand" \
    --output "$W/$name"
  [ -f "$W/$name/results.md" ] && cp "$W/$name/results.md" "$OUT/$name.md"; return 0; }
step_examples() { local py="${DT_PYTHON:-python3}" tw="$B/dualtime_torch_worker.py"
  ex_run ex-triton softmax "$py $tw --module examples/triton-softmax/softmax_triton.py"
  ex_run ex-compile softmax,layernorm "$py $tw --compile default"
  ex_run ex-compile-ro softmax "$py $tw --compile reduce-overhead"
  ex_run ex-cupy add,softmax "$py $tw --module examples/cupy-kernel/softmax_cupy.py"
  ex_run ex-torch-module add,softmax "$py $tw --module examples/torch-module/ops.py"
  ex_run ex-cuda-dir add,softmax "$B/dualtime-native-worker --kernel-dir examples/cuda-dir"
  ex_run ex-ptx-dir add,softmax "$B/dualtime-native-worker --kernel-dir examples/ptx-dir"
  # the C SDK worker on CUDA (examples/sdk-cuda; built on the CPU machine with nvcc and
  # carried: DT_SDK_CUDA, default its make output), its timing helper from the build
  local sdk="${DT_SDK_CUDA:-examples/sdk-cuda/build/sdk_cuda_worker}"
  if [ -x "$sdk" ] || [ -n "$DRY" ]; then
    DUALTIME_TIMING_LIB="$PWD/$B/libdualtime_timing.so" ex_run ex-sdk-cuda add,softmax "$sdk"
  else echo "== ex-sdk-cuda: skipped ($sdk not built: make -C examples/sdk-cuda)" | tee -a "$S"; fi
  run ex-check 120 8 "$py" examples/check_gpu.py; }
step_impls-triton() {
  if [ -z "$DRY" ] && ! "$B/dualtime" run --help 2>&1 | grep -q -- '--impls'; then
    echo "== impls: skipped (this dualtime has no --impls)" | tee -a "$S"; return 0; fi
  rm -rf "$W/impls-triton"
  # torch-compile compiles each shape once per process (round 2 and the probe worker's
  # round 2 hit the worker's cache), its probe worker compiles with CUPTI detached and
  # loads inductor's on-disk cache warmed by the main worker (docs/torch-worker.md, "The
  # compile cache"); estimate about 180 s (150-250), mostly worker start-ups and host work
  # on the 1.6 GB arena of 4096x50257 (docs/device-workflow.md); the trace says where it went
  run impls-triton "${DT_IMPLS_TRITON_S:-300}" 6 env DUALTIME_PHASE_TRACE="$W/impls-triton.trace" \
    "$B/dualtime" run --backends cuda --operations softmax --device-timing --quiet \
    --row-shapes 17x257,1024x4096,4096x50257,8192x8192 --probe-kind concurrent --samples 5 \
    --rounds 2 --impls torch,native,torch-compile,triton=py:examples/triton-softmax/softmax_triton.py \
    --output "$W/impls-triton"
  [ -f "$W/impls-triton.trace" ] && python3 scripts/phase_times.py "$W/impls-triton.trace" \
    >"$W/impls-triton-phases.txt" 2>&1 && head -14 "$W/impls-triton-phases.txt" | sed 's/^/   /' >>"$S"
  [ -f "$W/impls-triton/results.json" ] && run impls-triton-check 30 6 python3 -c 'import json,sys
r = json.load(open(sys.argv[1])); ids = [f["id"] for f in r["frameworks"]]
assert ids == ["torch", "native", "torch-compile", "triton"], ids
bad = [c["id"] for c in r["cases"] if not c["valid"] or sorted(c["impl"]) != sorted(ids)]
assert not bad, bad
tc = {c["id"]: c["impl"]["torch-compile"].get("setup_ms", {}).get("compile") for c in r["cases"]}
print("impls-triton: %d cases valid with %s; torch-compile compile ms %s" % (len(r["cases"]),
      ",".join(ids), tc))' "$W/impls-triton/results.json"
  [ -f "$W/impls-triton/results.md" ] && cp "$W/impls-triton/results.md" "$OUT/impls-triton.md"; return 0; }
step_compile-cache() {
  run compile-cache 240 12 python3 tests/torch/test_torch_compile_cache.py \
    "$B/dualtime_torch_worker.py" "$B/dualtime"; }
# impls: issue 17 items 1-2 on the GPU. Three implementations with device timing; the
# Latin-square order and the per-implementation tables come back in impls.md.
# shellcheck disable=SC2054 # the commas are dualtime's
impls_flags=(--backends cuda --operations add,softmax,gemm --row-shapes 17x257,1024x4096
             --gemm-shapes 513x257x129 --device-timing --samples 5 --quiet)
step_impls() { rm -rf "$W/impls" "$W/impls-compile"
  run impls 300 3 "$B/dualtime" run "${impls_flags[@]}" --impls torch,native,native2=native --output "$W/impls"
  run impls-check 30 6 python3 -c 'import json,sys
r = json.load(open(sys.argv[1])); ids = [f["id"] for f in r["frameworks"]]
assert ids == ["torch", "native", "native2"], ids
bad = [c["id"] for c in r["cases"] if not c["valid"] or sorted(c["impl"]) != sorted(ids)]
assert not bad, bad
print("impls: %d cases, every one valid with %s" % (len(r["cases"]), ",".join(ids)))' "$W/impls/results.json"
  [ -f "$W/impls/results.md" ] && cp "$W/impls/results.md" "$OUT/impls.md"
  run impls-compile 300 4 "$B/dualtime" run "${impls_flags[@]}" --impls torch,torch-compile,native --output "$W/impls-compile"
  return 0; }
# graph-cold (issue 13): the same small matrix with the graph replay scope, warm then cold;
# both results.md come back (graph-warm.md, graph-cold.md), the check's tables go to the
# summary (scripts/graph_cold_check.py: exit 1 when cold does not read >= 1.3x warm at
# add 512x4096, a window is not confirmed cold, or native has no graph samples).
# shellcheck disable=SC2054 # the commas are dualtime's
graph_flags=(--backends cuda --graph --operations add,softmax,layernorm
             --row-shapes 17x257,512x4096,1024x4096,8192x8192 --samples 9 --rounds 1
             --probe-kind concurrent --warmup-ms 50 --quiet)
step_graph-cold() { rm -rf "$W/graph-warm" "$W/graph-cold"
  run graph-warm 80 3 "$B/dualtime" run "${graph_flags[@]}" --output "$W/graph-warm"
  run graph-cold 80 3 "$B/dualtime" run "${graph_flags[@]}" --cache cold --output "$W/graph-cold"
  for k in warm cold; do [ -f "$W/graph-$k/results.md" ] && cp "$W/graph-$k/results.md" "$OUT/graph-$k.md"; done
  run graph-cold-check 10 80 python3 scripts/graph_cold_check.py "$W/graph-warm/results.json" \
    "$W/graph-cold/results.json"; return 0; }

# gemm-tc (issues 19, 18 item 6): the bf16/fp16 wgmma gemm against torch (cuBLAS) in one
# run per group, device timing, every case through the FP64 oracle. Oracle tables of the
# 128x64 tile (DUALTIME_GEMM_BN=64) and of split-K 2 (DUALTIME_GEMM_SPLITK=2) on every
# gemm-tc shape first; then the main shapes, views (the tc1 fallback), the A/B of the
# 1024^3 geometry (fill0 = the native worker with DUALTIME_GEMM_FILL=0, the 128x128 grid
# of 64 tiles; splitk2 = DUALTIME_GEMM_SPLITK=2, 128 half-K units of 128x128: more
# implementations of the same run) and 8192^3 last (its FP64 reference is the slow part). Device control tables, the
# rooflines' FLOP ceilings and % of peak, and scripts/gemm_tc_check.py's table (native /
# torch throughput against the targets) go to the summary; the results.md files come back
# as gemm-tc*.md.
# shellcheck disable=SC2054 # the commas are dualtime's
gemm_tc=(--backends cuda --operations gemm --dtypes bf16,fp16 --device-timing --samples 5
         --rounds 1 --sample-ms 10 --warmup-ms 50 --quiet)
gemm_tc_note() { [ -f "$W/$1/results.md" ] || return 0; cp "$W/$1/results.md" "$OUT/$1.md"
  note "$W/$1/results.md" '/^## Device control/,/^$/p' 20
  grep -E "FLOP ceilings|of peak\)" "$W/$1/results.md" | cut -c1-400 | head -12 | tee -a "$S"; return 0; }
step_gemm-tc() { rm -rf "$W"/gemm-tc "$W"/gemm-tc-views "$W"/gemm-tc-ab "$W"/gemm-tc-8192
  local k; for k in bn64:DUALTIME_GEMM_BN=64 splitk:DUALTIME_GEMM_SPLITK=2; do
    run "gemm-tc-${k%%:*}" 50 3 env "${k#*:}" DUALTIME_GPU_TEST_SHAPES=gemm-tc \
      DUALTIME_GPU_TEST_GEMM_VARIANTS=wg1,wg3 "${CUDA_TEST[@]}"; fails "gemm-tc-${k%%:*}"
    [ -f "$W/gemm-tc-${k%%:*}.log" ] && grep -E "^gemm-tc \|" "$W/gemm-tc-${k%%:*}.log" | cut -c1-220 | head -18 | tee -a "$S"
  done
  run gemm-tc 80 3 "$B/dualtime" run "${gemm_tc[@]}" \
    --gemm-shapes 1024x1024x1024,4096x4096x4096,127x193x61,4097x4095x257 --output "$W/gemm-tc"
  gemm_tc_note gemm-tc
  run gemm-tc-views 40 3 "$B/dualtime" run "${gemm_tc[@]}" --input-views \
    --gemm-shapes 1024x1024x1024,4097x4095x257 --output "$W/gemm-tc-views"
  gemm_tc_note gemm-tc-views
  run gemm-tc-ab 50 3 "$B/dualtime" run "${gemm_tc[@]}" --gemm-shapes 1024x1024x1024 \
    --impls "torch,native,fill0=worker:env DUALTIME_GEMM_FILL=0 $PWD/$B/dualtime-native-worker,splitk2=worker:env DUALTIME_GEMM_SPLITK=2 $PWD/$B/dualtime-native-worker" \
    --output "$W/gemm-tc-ab"
  gemm_tc_note gemm-tc-ab
  run gemm-tc-8192 75 3 "$B/dualtime" run "${gemm_tc[@]}" --gemm-shapes 8192x8192x8192 \
    --output "$W/gemm-tc-8192"
  gemm_tc_note gemm-tc-8192
  local rs=(); for d in gemm-tc gemm-tc-views gemm-tc-ab gemm-tc-8192; do
    [ -f "$W/$d/results.json" ] && rs+=("$W/$d/results.json"); done
  ((${#rs[@]})) && run gemm-tc-check 20 60 python3 scripts/gemm_tc_check.py "${rs[@]}"; return 0; }

# gemm-ab (issue 19): native (wg3 since session 6: stmatrix + TMA-store epilogue, 4
# stages, two passes of two 8 KiB boxes a warpgroup at BN 256) against wg1
# (DUALTIME_GEMM_VARIANT=wg1) and torch in ONE run, so the A/B shares the run's clocks,
# power state and sample rotation (docs/perf.md "gemm wg3 in one run"). 4096^3 first
# (8192^3's FP64 reference is the slow part, kept between the rounds by the refcache).
# gemm-ab-s3: wg3s3 = wg3 with DUALTIME_GEMM_STAGES=3 (one pass of four boxes, one stage
# fewer) at 4096^3. gemm-ab-oracle: the GPU test's gemm-tc table (FP64 oracle on every
# shape, tails and views included) for wg3 and wg4, then wg3 at 3 stages.
gemm_ab_impls() { echo "torch,native,$1"; }
# shellcheck disable=SC2054 # the commas are dualtime's
gemm_ab=(--backends cuda --operations gemm --dtypes bf16,fp16 --device-timing --samples 5
         --rounds "${DT_GEMM_AB_ROUNDS:-2}" --sample-ms 10 --warmup-ms 50 --quiet)
step_gemm-ab() { rm -rf "$W/gemm-ab"
  run gemm-ab 200 3 "$B/dualtime" run "${gemm_ab[@]}" --gemm-shapes 4096x4096x4096,8192x8192x8192 \
    --impls "$(gemm_ab_impls "wg1=worker:env DUALTIME_GEMM_VARIANT=wg1 $PWD/$B/dualtime-native-worker")" \
    --output "$W/gemm-ab"
  gemm_tc_note gemm-ab
  [ -f "$W/gemm-ab/results.json" ] && run gemm-ab-check 20 40 python3 scripts/gemm_tc_check.py \
    "$W/gemm-ab/results.json"; return 0; }
step_gemm-ab-s3() { rm -rf "$W/gemm-ab-s3"
  run gemm-ab-s3 60 3 "$B/dualtime" run "${gemm_ab[@]}" --gemm-shapes 4096x4096x4096 \
    --impls "$(gemm_ab_impls "wg3s3=worker:env DUALTIME_GEMM_VARIANT=wg3 DUALTIME_GEMM_STAGES=3 $PWD/$B/dualtime-native-worker")" \
    --output "$W/gemm-ab-s3"
  gemm_tc_note gemm-ab-s3
  [ -f "$W/gemm-ab-s3/results.json" ] && run gemm-ab-s3-check 20 40 python3 scripts/gemm_tc_check.py \
    "$W/gemm-ab-s3/results.json"; return 0; }
step_gemm-ab-oracle() { local k
  for k in wg34:70:wg3,wg4:DUALTIME_GEMM_STAGES= wg3s3:50:wg3:DUALTIME_GEMM_STAGES=3; do
    local name="gemm-ab-oracle-${k%%:*}" rest="${k#*:}"; local lim="${rest%%:*}"; rest="${rest#*:}"
    run "$name" "$lim" 3 env "${rest#*:}" DUALTIME_GPU_TEST_SHAPES=gemm-tc \
      DUALTIME_GPU_TEST_GEMM_VARIANTS="${rest%%:*}" "${CUDA_TEST[@]}"; fails "$name"
    [ -f "$W/$name.log" ] && grep -E "^gemm-tc \|" "$W/$name.log" | cut -c1-220 | head -34 | tee -a "$S"
  done; return 0; }

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
