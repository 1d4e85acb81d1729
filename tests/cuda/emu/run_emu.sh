#!/usr/bin/env bash
# run_emu.sh — the staged-row variant (SMEMROW) of softmax, rmsnorm, layernorm,
# cross_entropy and residual_layernorm (DT_EMU_OPS="0 1 2 3 4" picks), FP32, on the CPU
# through dt_emu.hpp: one block a row and clusters of 2..8 blocks a row (each block its
# own copy of the kernel's shared object), contiguous rows with N % 4 != 0 (every row
# start at another offset in its 16-byte chunk), unaligned views (row stride N+3/N+4,
# window at (1,1)), tails smaller than a chunk, rows shorter than the block. Checks
# values against FP64 and the output guards. The persistent double-buffered variant
# (SMEMPIPE=1; softmax, rmsnorm, layernorm, cross_entropy) runs G clusters over M rows
# (odd widths, views, clusters with a short last part, M not a multiple of G, rows enough
# that both buffers wrap around several times); the emulated cp.async lands a copy only
# at its wait (NaN until then), so a wait too shallow or a buffer reused too early shows.
# Planted faults must fail: the pipeline waiting for no copy (PLANT 1,
# DT_EMU_PLANT_PIPE_WAIT), no barrier before a buffer is reused (2, a view, whose store
# pass reads its neighbours' chunks: DT_EMU_PLANT_PIPE_BARRIER; not cross_entropy,
# which has no store pass), and one cluster
# reduction slot for every row (3, rmsnorm only: its one reduction a row has no other
# cluster barrier between rows; the emulation delays odd cluster ranks' DSMEM reads).
# cross_entropy's streaming online logsumexp (CESTREAM=1, DUALTIME_CE_STREAM=1; op 3
# only): one block a row of 128..1024 threads reading 16-byte chunks from the row start's
# chunk, at odd widths (every row start at another offset in its chunk), views (stride
# N+3 / N+4, window at (1,1)), rows shorter than the block, tails smaller than a chunk and
# the vocabulary widths 50257 / 128256 with few rows, rows mostly -inf; the planted fault (PLANT 4,
# DT_EMU_PLANT_NO_RESCALE: s not rescaled when a chunk raises the running max) must fail.
# The L2-resident two-pass row (ROWL2=1, DUALTIME_ROW_L2=1; ops 0-2): one block a row of
# 128..1024 threads, pass 1 streaming 16-byte chunks from the row start's chunk (softmax
# an online max/sum, rmsnorm the sum of squares, layernorm chunk-wise (n, mean, M2)
# merges), pass 2 reading the row again and storing (16-byte stores where input and
# output sit alike in their chunks, else element by element), at odd widths, views
# (stride N+3 / N+4, window at (1,1)), rows shorter than the block, tails smaller than
# a chunk, chunk counts at and past the unroll, the vocabulary widths with M 2-5, and
# layernorm inputs offset by 4096 (OFFSET, as --inputs offset: 4096 + [-1, 1]; checked at
# the same tolerance). Planted faults must fail: softmax keeping s unscaled when the max
# grows (PLANT 4, as cross_entropy's), layernorm's merge without its between-part term
# (PLANT 5, DT_EMU_PLANT_NO_MERGE_TERM) and layernorm without its shift by the row's
# first element at offset 4096 (PLANT 6, DT_EMU_PLANT_NO_SHIFT: the unshifted chunk
# means round at 4096).
# layernorm's one-reduction in-register rows (DT_LN_ONE=1, DUALTIME_ROW_LN_ONE=1; op 2, run
# with DT_EMU_ONLY=one or after the others): INREG=1 as the plan specializes it (PER
# vectors a thread, VEC 4 / 8 / 1) in f32, bf16 and f16 (DT_ELEM 0 / 1 / 2: every buffer
# in that type, the FP64 reference from the exact narrow inputs, one output ulp of
# tolerance): block-per-row 8192 / 4096 columns, warp-per-row (TPR 32, several rows a
# block, M not a multiple of them: warps past the last row return), rows shorter than
# the block (threads and whole warps with no element), odd N and views (VEC 1), the
# register cluster (CLUSTER 2-3, a short last part, DSMEM merge), and the offset inputs of
# each dtype. Planted faults must fail: the merge without its between-part term (PLANT 5,
# DT_EMU_PLANT_NO_MERGE_TERM, f32 / bf16, block and warp rows) and no shift by the row's
# first element at f32 offset 4096 (PLANT 6, DT_EMU_PLANT_NO_SHIFT).
# layernorm's persistent prefetching in-register rows (DT_LN_PERSIST=1 / 2,
# DUALTIME_ROW_LN_PERSIST; op 2, run with DT_EMU_ONLY=persist or after the others): G
# blocks over M rows (M not a multiple of G, M < G, M = 1), block-per-row geometries as the
# plan gives them (8192 / 4096 columns VEC 4 / 8, odd N with VEC 1 contiguous and in a
# view, rows padded to stride N + 8) in f32, bf16 and f16 and the offset inputs of each
# dtype; each output must match FP64 and be bit-identical (cmp of the output rows) to the
# default INREG=1 kernel's, which runs the same shape first (f32 at offset 4096: the
# default kernel's unshifted mean rounds to ~5e-4 off, beyond this 1e-5 bound, so there
# the values are reported and bit-identity is the check, DT_EMU_BITS_ONLY=1). Planted faults must fail:
# the prefetched next row taken as this row's before its store (PLANT 7,
# DT_EMU_PLANT_PERSIST_CLOBBER) and M / G rows a block, the M % G tail skipped (PLANT 8,
# DT_EMU_PLANT_PERSIST_TAIL).
# The store pass of rmsnorm and layernorm with gamma / beta loaded DT_STORE_AHEAD chunks
# ahead (dt_srow_store_params; aligned rows take it: N 4096, 128256, the cluster parts)
# runs in the cases above; its planted fault (PLANT 9, DT_EMU_PLANT_AHEAD_INDEX: every
# chunk of a group given the first one's parameters; ops 1-2) must fail.
# DT_EMU_DEFS adds -D options to every staged and pipelined case (the
# loop over DT_EMU_OPS). With DT_EMU_DEFS=-DDT_SM_ONLINE=1 (softmax's online staged rows,
# session 13; run it with DT_EMU_OPS=0) two planted faults join softmax's cases and must
# fail: the online sum without its rescale (PLANT 4, DT_EMU_PLANT_NO_RESCALE) over a
# cluster of 2 and in one block of a view, and one cluster slot for every row's (max,
# sum) in the pipelined rows (PLANT 3, DT_EMU_PLANT_ONE_SLOT: softmax now makes one
# cluster reduction a row, as rmsnorm does).
# Needs g++ >= 12 (C++20 <barrier>, _Float16).
# Usage: bash tests/cuda/emu/run_emu.sh   (exit 0: all passed)
#   DT_EMU_OPS="0 2" picks ops; DT_EMU_ONLY=pipe runs only the SMEMPIPE cases and the plants,
#   DT_EMU_ONLY=stream only the CESTREAM cases (with DT_EMU_OPS=3), DT_EMU_ONLY=l2 only
#   the ROWL2 cases (with DT_EMU_OPS="0 1 2"), DT_EMU_ONLY=one only the DT_LN_ONE cases,
#   DT_EMU_ONLY=persist only the DT_LN_PERSIST cases, DT_EMU_ONLY=sumadd only sum's row
#   head and add's flat tail (session 9), DT_EMU_ONLY=shift only the shifted in-register
#   rows (session 18)
set -u
cd "$(dirname "$0")/../../.." || exit 2
read -r -a extra_defs <<<"${DT_EMU_DEFS:-}"
online=0; [[ " ${DT_EMU_DEFS:-} " == *"-DDT_SM_ONLINE=1"* ]] && online=1
T="$(mktemp -d /tmp/dt-emu.XXXXXX)"; rc=0
ops=(softmax rmsnorm layernorm cross_entropy residual_layernorm)
# M N LDA view BLOCK CLUSTER NC [PIPE G [PLANT]] (NC: columns a cluster block, a multiple
# of 4, as the plan; PIPE 1: SMEMPIPE with G persistent clusters; PLANT 1: must fail)
cases=("5 8193 8196 1 128 1 0" "6 8193 8193 0 128 1 0" "3 1027 1030 1 128 1 0" "4 1025 1025 0 256 1 0"
       "3 50257 50257 0 512 1 0" "2 1029 1029 0 1024 1 0" "3 4096 4100 1 128 1 0" "4 4096 4096 0 128 1 0"
       "5 50257 50257 0 512 2 25132" "3 50257 50257 0 256 4 12568" "2 128256 128256 0 256 8 16032"
       "3 20000 20004 1 1024 2 10000" "4 8193 8196 1 128 3 2732" "2 1029 1029 0 128 2 516"
       "4 4096 4096 0 128 1 0 0 1 9")
pipe_cases=("9 8193 8193 0 128 1 0 1 2" "7 8193 8196 1 256 1 0 1 3" "11 1027 1030 1 128 1 0 1 4"
            "6 4096 4096 0 128 1 0 1 1" "5 1029 1029 0 1024 1 0 1 5" "5 50257 50257 0 512 4 12568 1 2"
            "7 8193 8196 1 128 3 2732 1 2" "3 128256 128256 0 256 8 16032 1 1"
            "6 20000 20004 1 512 2 10000 1 4" "9 1029 1029 0 128 2 516 1 3"
            "7 8193 8193 0 128 1 0 1 2 1" "7 8193 8196 1 256 1 0 1 3 2" "9 1029 1029 0 128 2 516 1 3 3")
# M N LDA view BLOCK 1 0 0 1 PLANT 1 [NEGINF]: the CESTREAM cases (cross_entropy only;
# NEGINF 1: the first 3/4 of every row -inf but the label, so whole threads' parts are)
stream_cases=("5 8193 8193 0 512 1 0 0 1 0 1" "4 1025 1025 0 512 1 0 0 1 0 1"
              "3 1029 1029 0 512 1 0 0 1 0 1" "2 1029 1029 0 1024 1 0 0 1 0 1"
              "5 8193 8196 1 512 1 0 0 1 0 1" "4 8193 8197 1 512 1 0 0 1 0 1"
              "3 1027 1030 1 128 1 0 0 1 0 1" "4 4096 4100 1 256 1 0 0 1 0 1"
              "4 4096 4096 0 512 1 0 0 1 0 1" "3 20001 20005 1 512 1 0 0 1 0 1"
              "5 50257 50257 0 512 1 0 0 1 0 1" "2 50257 50260 1 512 1 0 0 1 0 1"
              "2 128256 128256 0 512 1 0 0 1 0 1" "3 128256 128259 1 512 1 0 0 1 0 1"
              "5 8193 8193 0 512 1 0 0 1 0 1 1" "3 50257 50260 1 512 1 0 0 1 0 1 1"
              "3 50257 50257 0 512 1 0 0 1 4 1" "3 8193 8196 1 512 1 0 0 1 4 1")
# M N LDA view BLOCK 1 0 0 1 PLANT 2 0 [OFFSET]: the ROWL2 cases (ops 0-2; STREAM 2;
# OFFSET: layernorm only)
l2_cases=("5 8193 8193 0 1024 1 0 0 1 0 2 0" "4 1025 1025 0 1024 1 0 0 1 0 2 0"
          "3 1029 1029 0 256 1 0 0 1 0 2 0" "2 1029 1029 0 1024 1 0 0 1 0 2 0"
          "5 8193 8196 1 1024 1 0 0 1 0 2 0" "4 8193 8197 1 512 1 0 0 1 0 2 0"
          "3 1027 1030 1 128 1 0 0 1 0 2 0" "4 4096 4100 1 256 1 0 0 1 0 2 0"
          "3 4096 4096 0 256 1 0 0 1 0 2 0" "3 4097 4097 0 256 1 0 0 1 0 2 0"
          "3 7 7 0 128 1 0 0 1 0 2 0" "3 6 9 1 128 1 0 0 1 0 2 0"
          "3 20001 20005 1 1024 1 0 0 1 0 2 0" "5 50257 50257 0 1024 1 0 0 1 0 2 0"
          "2 50257 50260 1 1024 1 0 0 1 0 2 0" "2 128256 128256 0 1024 1 0 0 1 0 2 0"
          "3 128256 128259 1 1024 1 0 0 1 0 2 0"
          "3 8193 8196 1 1024 1 0 0 1 0 2 0 4096" "2 50257 50257 0 512 1 0 0 1 0 2 0 4096"
          "3 8193 8196 1 1024 1 0 0 1 4 2 0" "3 50257 50257 0 1024 1 0 0 1 4 2 0"
          "3 8193 8193 0 1024 1 0 0 1 5 2 0" "3 8193 8196 1 512 1 0 0 1 5 2 0"
          "3 8193 8196 1 1024 1 0 0 1 6 2 0 4096")
# M N LDA view BLOCK TPR VEC PER CLUSTER NC ELEM [PLANT [OFFSET]]: the DT_LN_ONE cases
# (layernorm, INREG=1; NC: columns a cluster block, 0 without a cluster)
one_cases=("4 8192 8192 0 512 512 4 4 1 0 0" "4 8192 8192 0 512 512 8 2 1 0 1" "3 8192 8192 0 512 512 8 2 1 0 2"
           "3 4096 4096 0 256 256 4 4 1 0 0" "3 4096 4096 0 256 256 8 2 1 0 1"
           "11 1024 1024 0 256 32 4 8 1 0 0" "9 1024 1024 0 128 32 8 4 1 0 2"
           "5 1024 1024 0 128 128 8 1 1 0 1" "3 200 200 0 128 128 4 1 1 0 0" "3 200 200 0 128 128 8 1 1 0 1"
           "1 127 127 0 32 32 1 4 1 0 0" "17 257 260 1 128 32 1 9 1 0 1" "5 257 257 0 64 32 1 9 1 0 2"
           "3 2051 2054 1 256 256 1 9 1 0 0" "2 2051 2051 0 256 256 1 9 1 0 2"
           "2 2900 2900 0 64 64 4 4 3 1000 0" "2 5800 5800 0 128 128 8 2 3 2000 1" "2 2901 2904 1 128 128 1 8 3 1000 2"
           "2 4096 4096 0 256 256 4 4 2 2048 0"
           "4 8192 8192 0 512 512 4 4 1 0 0 0 4096" "3 8192 8192 0 512 512 8 2 1 0 1 0 1"
           "3 8192 8192 0 512 512 8 2 1 0 2 0 1" "9 1024 1024 0 256 32 4 8 1 0 0 0 4096"
           "17 257 260 1 128 32 1 9 1 0 2 0 1" "2 5800 5800 0 128 128 8 2 3 2000 1 0 1"
           "3 8192 8192 0 512 512 4 4 1 0 0 5" "3 8192 8192 0 512 512 8 2 1 0 1 5" "9 1024 1024 0 256 32 4 8 1 0 0 5"
           "2 2900 2900 0 64 64 4 4 3 1000 0 5" "3 8192 8192 0 512 512 4 4 1 0 0 6 4096")
# M N LDA view BLOCK VEC PER ELEM G [PLANT [OFFSET]]: the DT_LN_PERSIST cases (layernorm,
# INREG=1, TPR = BLOCK; G persistent blocks; PLANT 7 / 8 build persist=1 only, must fail;
# the last five: the bf16/f16 default since session 8, 32 elements a thread: PER 4 of VEC 8)
persist_cases=("7 8192 8192 0 512 8 2 1 3" "5 8192 8192 0 512 4 4 0 2" "6 4096 4096 0 256 8 2 2 4"
               "2 4096 4096 0 256 4 4 0 5" "1 8192 8192 0 512 8 2 2 1" "17 257 260 1 128 1 3 1 5"
               "5 1023 1023 0 128 1 8 0 3" "5 8192 8200 0 512 8 2 1 3" "4 4096 4104 0 256 4 4 0 3"
               "5 8192 8192 0 512 4 4 0 2 0 4096" "7 8192 8192 0 512 8 2 1 3 0 1"
               "6 4096 4096 0 256 8 2 2 4 0 1"
               "7 8192 8192 0 512 8 2 1 3 7" "5 4096 4096 0 256 4 4 0 2 8"
               "7 8192 8192 0 256 8 4 1 3" "5 8192 8200 0 256 8 4 2 2" "9 4096 4096 0 128 8 4 1 4"
               "3 32768 32768 0 1024 8 4 2 2" "6 2048 2048 0 64 8 4 1 4 0 1")
# M N LDA view BLOCK TPR VEC ROWHEAD ELEM [PLANT]: sum (session 9), one block (TPR = BLOCK)
# or BLOCK / TPR warps a row; ROWHEAD 1: VEC-wide loads from each row's first 16-byte
# boundary (odd N, views), 16-byte loads checked for alignment (DT_EMU_CHECK_ALIGN: a
# misaligned one aborts); PLANT 9: no head (DT_EMU_PLANT_NO_HEAD) must fail
sum_cases=("5 6001 6001 0 512 512 8 1 1" "4 6001 6001 0 512 512 4 1 0" "3 30000 30003 1 512 512 8 1 1"
           "3 30000 30003 1 512 512 8 1 2" "17 257 257 0 64 32 4 1 0" "17 257 257 0 64 32 8 1 2"
           "3 5 5 0 32 32 8 1 1" "2 7 7 0 32 32 4 1 0" "3 1027 1030 1 128 128 8 1 1"
           "4 4096 4096 0 256 256 8 0 1" "4 4096 4096 0 256 256 4 0 0"
           "5 6001 6001 0 512 512 8 1 1 9" "3 30000 30003 1 512 512 4 1 0 9"
           # session 10: rows that are not whole vectors at 64 elements a thread (6001: 128
           # threads, a 4096-wide view: 64)
           "5 6001 6001 0 128 128 8 1 1" "4 6001 6001 0 128 128 4 1 0" "3 4096 4099 1 64 64 8 1 1"
           "3 4096 4099 1 64 64 4 1 0")
# M N LDA view VEC ITEMS ELEM [PLANT [LDALL]]: add (session 9), 256 threads, the plan's grid;
# LDA = N contiguous (a flat range of M*N: VEC-wide items and a scalar tail, DT_TAIL),
# else strided; PLANT 10: no tail (DT_EMU_PLANT_NO_TAIL) must fail. VEC 2 (session 15,
# bf16/f16 pairs, 4-byte loads checked for alignment): views (every row 2 bytes past a
# 4-byte boundary: DT_PHA = DT_PHB = 1, funnel-shifted words) and aligned strided rows
# (phase 0); PLANT 11: the words not shifted (DT_EMU_PLANT_PAIR_SHIFT) must fail.
# LDALL (field 9, session 16; DT_ELEM_LDALL=1, the plan's default for bf16/f16 strided windows at
# vec 1 and 2 since session 17): every item loads (past the end the
# last item again), the stores guarded: contiguous with a tail, strided vec 1 with a
# partial last block, bf16 / f16 pairs on views, 16-byte items
add_cases=("17 257 257 0 4 1 0" "17 257 257 0 8 1 1" "1 7 7 0 8 1 2" "31 1001 1001 0 4 4 0"
           "9 1023 1023 0 8 2 1" "5 257 260 1 1 4 0" "4 1024 1028 0 4 4 0" "3 333 333 0 8 1 2"
           "17 257 257 0 8 1 1 10" "31 1001 1001 0 4 4 0 10"
           "5 256 260 1 2 4 1" "7 1000 1004 1 2 2 2" "3 4096 4100 1 2 4 1" "17 258 262 1 2 1 2"
           "4 1026 1030 0 2 4 1" "2 2 6 1 2 1 1" "5 256 260 1 2 4 1 11" "4 1026 1030 0 2 4 2"
           "17 257 257 0 8 4 1 0 1" "5 257 260 1 1 4 1 0 1" "7 1000 1004 1 2 2 2 0 1"
           "5 256 260 1 2 4 1 0 1" "9 1023 1023 0 8 2 1 0 1" "31 1001 1001 0 4 4 0 0 1")
# M N LDA view BLOCK TPR VEC PER CLUSTER NC ELEM [PLANT]: the shifted in-register rows
# (DT_SHIFT_A / DT_SHIFT_B, session 18; every op 0-4, INREG=1 as the plan specializes them:
# two aligned 16-byte loads a chunk, checked for alignment, put in place by selects):
# views with stride N+4 (f32: every row 1 element past its boundary; bf16 / f16: 1 and 5
# alternating) and odd strides (every shift 0..VEC-1 in turn), block and warp rows (M not
# a multiple of the rows a block), the register cluster (CLUSTER 3-4, its parts shifted
# alike), rows shorter than a chunk; odd N contiguous and in views (the row outputs in
# the output row's frame, DT_OFRAME: whole chunks stored 16 bytes at a time, PER for N +
# VEC - 1 columns; cross_entropy's one value a row needs none), in f32, bf16 and f16. Planted
# faults must fail: PLANT 12, the second vector never read (DT_EMU_PLANT_SHIFT_HI; not
# cross_entropy: the row's values are then only permuted, which its one sum cannot
# see), and PLANT 13, the last chunk's second vector not read (DT_EMU_PLANT_SHIFT_LAST:
# the row's last elements lost; short rows, so each one counts).
shift_cases=("3 4096 4100 1 256 256 4 4 1 0 0" "3 4096 4100 1 128 128 8 4 1 0 1"
             "17 1000 1004 1 256 32 4 8 1 0 0" "17 1000 1003 1 128 32 8 4 1 0 2"
             "5 1024 1027 1 128 128 4 2 1 0 0" "5 1024 1025 1 128 128 8 1 1 0 1"
             "2 40000 40004 1 1024 1024 4 4 3 13336 0" "2 40000 40003 1 512 512 8 3 4 10000 2"
             "9 8 9 1 32 32 8 1 1 0 1" "6 6001 6001 0 512 512 4 3 1 0 0"
             "7 257 257 0 64 32 8 2 1 0 2" "4 3 3 0 32 32 4 1 1 0 0"
             "3 4097 4100 1 512 512 4 3 1 0 0" "5 1025 1029 1 128 128 8 2 1 0 1"
             "2 40001 40005 1 1024 1024 4 4 3 13336 0" "9 77 77 0 256 32 8 1 1 0 2"
             "3 1023 1023 0 32 32 8 5 1 0 1"
             "3 4096 4100 1 256 256 4 4 1 0 0 12" "17 1000 1004 1 128 32 8 4 1 0 1 12"
             "5 16 17 1 32 32 4 1 1 0 0 13" "6 64 67 1 32 32 8 1 1 0 1 13")
# M N LDA view VEC ITEMS ELEM [PLANT]: add's shifted items (DT_SHIFT_A / DT_SHIFT_B, session
# 18; the bf16/f16 views' default): 16-byte items, each input's from the two aligned vectors
# that hold it, checked for alignment; stride N+4 and odd strides (every shift), N = VEC,
# items past the end (the last item loaded again, the store guarded); PLANT 12 / 13 as above.
eshift_cases=("5 256 260 1 8 4 1" "7 1000 1004 1 8 2 2" "3 4096 4100 1 4 4 0" "17 1000 1003 1 4 1 0"
              "9 64 67 1 8 4 1" "4 8 9 1 8 1 2" "3 12 15 1 4 4 0"
              "7 1000 1003 1 8 2 1 12" "9 64 67 1 4 4 0 13" "6 16 19 1 8 2 2 13")
if [ -n "${DT_EMU_ONLY:-}" ] && [ "${DT_EMU_ONLY:-}" != shift ]; then shift_cases=(); eshift_cases=(); fi
[ "${DT_EMU_ONLY:-}" = shift ] && cases=() && pipe_cases=() && stream_cases=() && l2_cases=() && one_cases=() && persist_cases=()
if [ -n "${DT_EMU_ONLY:-}" ] && [ "${DT_EMU_ONLY:-}" != sumadd ]; then sum_cases=(); add_cases=(); fi
[ "${DT_EMU_ONLY:-}" = sumadd ] && cases=() && pipe_cases=() && stream_cases=() && l2_cases=() && one_cases=()
[ -n "${DT_EMU_ONLY:-}" ] && [ "${DT_EMU_ONLY:-}" != persist ] && persist_cases=()
[ "${DT_EMU_ONLY:-}" = persist ] && cases=() && pipe_cases=() && stream_cases=() && l2_cases=() && one_cases=()
[ "${DT_EMU_ONLY:-}" = pipe ] && cases=() && stream_cases=() && l2_cases=()
[ "${DT_EMU_ONLY:-}" = stream ] && cases=() && pipe_cases=() && l2_cases=()
[ "${DT_EMU_ONLY:-}" = l2 ] && cases=() && pipe_cases=() && stream_cases=()
[ -n "${DT_EMU_ONLY:-}" ] && [ "${DT_EMU_ONLY:-}" != one ] && one_cases=()
[ "${DT_EMU_ONLY:-}" = one ] && cases=() && pipe_cases=() && stream_cases=() && l2_cases=()
flags=(-std=c++20 -O1 -pthread)
g++ "${flags[@]}" -DM=1 -c -o /dev/null -x c++ /dev/null || exit 2
# build_run DIR KERNEL LABEL CLUSTER PLANT DEFINES...: the kernel file KERNEL.cu as one
# shared object a cluster block, the row driver, then the case (a planted fault must fail)
build_run() { local d="$1" k="$2" label="$3" cl="$4" plant="$5" j; shift 5
  if ! { g++ "${flags[@]}" -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden \
           -DDT_HOST_EMU -include tests/cuda/emu/dt_emu.hpp -Ikernels/cuda -DKFILE="\"$k.cu\"" \
           "$@" tests/cuda/emu/emu_kernel.cpp -o "$d/k0.so" &&
         g++ "${flags[@]}" -DKNAME="\"$k\"" "$@" tests/cuda/emu/emu_rows.cpp -o "$d/run" -ldl; }; then
    echo "FAIL build $label"; rc=1; return
  fi
  for ((j = 1; j < cl; j++)); do cp "$d/k0.so" "$d/k$j.so"; done
  if [ "$plant" != 0 ]; then
    "$d/run" "$d" && { echo "FAIL planted fault not caught: $label"; rc=1; }
    echo "(planted fault above: caught as expected)"
  else "$d/run" "$d" || { echo "FAIL $label"; rc=1; }; fi
}
for o in ${DT_EMU_OPS:-0 1 2 3 4}; do
  all=("${cases[@]}"); [ "$o" != 4 ] && all+=("${pipe_cases[@]}") # residual_layernorm: no pipe
  [ "$o" = 3 ] && all+=("${stream_cases[@]}")
  [ "$o" -le 2 ] && all+=("${l2_cases[@]}")
  [ "$o" = 0 ] && [ "$online" = 1 ] && all+=("5 50257 50257 0 512 2 25132 0 1 4" "4 8193 8196 1 128 1 0 0 1 4")
  for c in "${all[@]}"; do read -r m n lda v blk cl nc pipe g plant stream ninf off <<<"$c"
    pipe=${pipe:-0}; g=${g:-1}; plant=${plant:-0}; stream=${stream:-0}; ninf=${ninf:-0}; off=${off:-0}
    [ "$plant" = 4 ] && [ "$stream" = 2 ] && [ "$o" != 0 ] && continue # no logsumexp in rmsnorm / layernorm
    [ "$plant" -ge 5 ] && [ "$o" != 2 ] && continue # the merge and the shift are layernorm's
    [ "$off" != 0 ] && [ "$o" != 2 ] && continue  # the offset matters to layernorm's mean
    # one slot is a fault for rmsnorm only (and softmax's online rows)
    [ "$plant" = 3 ] && [ "$o" != 1 ] && ! { [ "$o" = 0 ] && [ "$online" = 1 ]; } && continue
    [ "$plant" = 9 ] && [ "$o" != 1 ] && [ "$o" != 2 ] && continue # gamma / beta loaded ahead
    [ "$plant" = 2 ] && [ "$o" = 3 ] && continue  # cross_entropy reads no buffer after its last barrier
    d="$T/e_${o}_${m}_${n}_${v}_${blk}_${cl}_${pipe}_${g}_${plant}_${stream}_${ninf}_${off}"; mkdir -p "$d"
    def=(-DOP=$o -DM="$m" -DN="$n" -DLDA="$lda" -DLDB="$lda" -DLDO="$n" -DVIEW="$v" -DVEC=4
         -DBLOCK="$blk" -DTPR="$blk" -DPER=1 -DINREG=0 -DCLUSTER="$cl"
         -DSMEMPIPE="$pipe" -DPIPE_G="$g")
    if [ "$stream" = 1 ]; then def+=(-DSMEMROW=0 -DCESTREAM=1)
    elif [ "$stream" = 2 ]; then def+=(-DSMEMROW=0 -DROWL2=1 -DOFFSET="$off")
    else def+=(-DSMEMROW=1); fi
    [ "$cl" -gt 1 ] && def+=(-DNC="$nc")
    [ "$plant" = 1 ] && def+=(-DDT_EMU_PLANT_PIPE_WAIT=1)
    [ "$plant" = 2 ] && def+=(-DDT_EMU_PLANT_PIPE_BARRIER=1)
    [ "$plant" = 9 ] && def+=(-DDT_EMU_PLANT_AHEAD_INDEX=1)
    [ "$plant" = 3 ] && def+=(-DDT_EMU_PLANT_ONE_SLOT=1)
    [ "$plant" = 4 ] && def+=(-DDT_EMU_PLANT_NO_RESCALE=1)
    [ "$plant" = 5 ] && def+=(-DDT_EMU_PLANT_NO_MERGE_TERM=1)
    [ "$plant" = 6 ] && def+=(-DDT_EMU_PLANT_NO_SHIFT=1)
    [ "$ninf" = 1 ] && def+=(-DNEGINF=1)
    [ "$stream" = 0 ] && def+=("${extra_defs[@]}") # DT_EMU_DEFS: the staged and pipelined rows
    build_run "$d" "${ops[$o]}" "${ops[$o]} $c" "$cl" "$plant" "${def[@]}"
  done
done
for c in "${one_cases[@]}"; do read -r m n lda v blk tpr vec per cl nc el plant off <<<"$c"
  plant=${plant:-0}; off=${off:-0}
  [[ " ${DT_EMU_OPS:-2} " == *" 2 "* ]] || continue # layernorm only
  d="$T/one_${m}_${n}_${v}_${blk}_${tpr}_${cl}_${el}_${plant}_${off}"; mkdir -p "$d"
  def=(-DOP=2 -DM="$m" -DN="$n" -DLDA="$lda" -DLDB="$lda" -DLDO="$n" -DVIEW="$v" -DVEC="$vec"
       -DBLOCK="$blk" -DTPR="$tpr" -DPER="$per" -DINREG=1 -DCLUSTER="$cl" -DDT_ELEM="$el"
       -DDT_LN_ONE=1 -DDT_LN_MINB=3 -DOFFSET="$off")
  [ "$cl" -gt 1 ] && def+=(-DNC="$nc")
  [ "$plant" = 5 ] && def+=(-DDT_EMU_PLANT_NO_MERGE_TERM=1)
  [ "$plant" = 6 ] && def+=(-DDT_EMU_PLANT_NO_SHIFT=1)
  build_run "$d" layernorm "layernorm one $c" "$cl" "$plant" "${def[@]}"
done
for c in "${sum_cases[@]}"; do read -r m n lda v blk tpr vec head el plant <<<"$c"
  plant=${plant:-0}
  d="$T/sum_${m}_${n}_${lda}_${v}_${blk}_${tpr}_${vec}_${head}_${el}_${plant}"; mkdir -p "$d"
  def=(-DOP=5 -DM="$m" -DN="$n" -DLDA="$lda" -DLDB="$lda" -DLDO=1 -DVIEW="$v" -DVEC="$vec"
       -DBLOCK="$blk" -DTPR="$tpr" -DPER=1 -DINREG=0 -DCLUSTER=1 -DDT_ELEM="$el" -DROWHEAD="$head"
       -DDT_EMU_CHECK_ALIGN=1)
  [ "$plant" = 9 ] && def+=(-DDT_EMU_PLANT_NO_HEAD=1)
  build_run "$d" sum "sum $c" 1 "$plant" "${def[@]}"
done
for c in "${add_cases[@]}"; do read -r m n lda v vec items el plant ldall <<<"$c"
  plant=${plant:-0}; ldall=${ldall:-0}
  if [ "$lda" = "$n" ] && [ "$v" = 0 ]; then total=$(( m * n / vec )); else total=$(( m * (n / vec) )); fi
  grid=$(( (total + 256 * items - 1) / (256 * items) )); [ "$grid" -lt 1 ] && grid=1
  d="$T/add_${m}_${n}_${lda}_${v}_${vec}_${items}_${el}_${plant}_${ldall}"; mkdir -p "$d"
  ldo=$n; [ "$lda" != "$n" ] && [ "$v" = 0 ] && ldo=$lda # strided, aligned rows: out like a
  def=(-DOP=6 -DM="$m" -DN="$n" -DLDA="$lda" -DLDB="$lda" -DLDO="$ldo" -DVIEW="$v" -DVEC="$vec"
       -DBLOCK=256 -DTPR=256 -DITEMS="$items" -DGRID="$grid" -DCLUSTER=1 -DDT_ELEM="$el"
       -DDT_EMU_CHECK_ALIGN=1)
  [ "$plant" = 10 ] && def+=(-DDT_EMU_PLANT_NO_TAIL=1)
  [ "$vec" = 2 ] && def+=(-DDT_PHA="$v" -DDT_PHB="$v")
  [ "$plant" = 11 ] && def+=(-DDT_EMU_PLANT_PAIR_SHIFT=1)
  [ "$ldall" = 1 ] && def+=(-DDT_ELEM_LDALL=1)
  build_run "$d" add "add $c" 1 "$plant" "${def[@]}"
done
for c in "${shift_cases[@]}"; do read -r m n lda v blk tpr vec per cl nc el plant <<<"$c"
  plant=${plant:-0}
  for o in ${DT_EMU_OPS:-0 1 2 3 4}; do
    [ "$plant" = 12 ] && [ "$o" = 3 ] && continue # a permutation of the row: one sum cannot see it
    d="$T/shift_${o}_${m}_${n}_${lda}_${v}_${blk}_${tpr}_${cl}_${el}_${plant}"; mkdir -p "$d"
    def=(-DOP="$o" -DM="$m" -DN="$n" -DLDA="$lda" -DLDB="$lda" -DLDO="$n" -DVIEW="$v" -DVEC="$vec"
         -DBLOCK="$blk" -DTPR="$tpr" -DPER="$per" -DINREG=1 -DCLUSTER="$cl" -DDT_ELEM="$el"
         -DDT_SHIFT_A=1 -DDT_EMU_CHECK_ALIGN=1)
    [ "$o" = 4 ] && def+=(-DDT_SHIFT_B=1)
    # output rows not whole vectors: the output row's frame (cross_entropy: one value a row)
    [ $(( n % vec )) != 0 ] && [ "$o" != 3 ] && def+=(-DDT_OFRAME=1)
    [ "$cl" -gt 1 ] && def+=(-DNC="$nc")
    [ "$plant" = 12 ] && def+=(-DDT_EMU_PLANT_SHIFT_HI=1)
    [ "$plant" = 13 ] && def+=(-DDT_EMU_PLANT_SHIFT_LAST=1)
    build_run "$d" "${ops[$o]}" "${ops[$o]} shift $c" "$cl" "$plant" "${def[@]}"
  done
done
for c in "${eshift_cases[@]}"; do read -r m n lda v vec items el plant <<<"$c"
  plant=${plant:-0}
  grid=$(( (m * (n / vec) + 256 * items - 1) / (256 * items) ))
  d="$T/eshift_${m}_${n}_${lda}_${vec}_${items}_${el}_${plant}"; mkdir -p "$d"
  def=(-DOP=6 -DM="$m" -DN="$n" -DLDA="$lda" -DLDB="$lda" -DLDO="$n" -DVIEW="$v" -DVEC="$vec"
       -DBLOCK=256 -DTPR=256 -DITEMS="$items" -DGRID="$grid" -DCLUSTER=1 -DDT_ELEM="$el"
       -DDT_SHIFT_A=1 -DDT_SHIFT_B=1 -DDT_EMU_CHECK_ALIGN=1)
  [ "$plant" = 12 ] && def+=(-DDT_EMU_PLANT_SHIFT_HI=1)
  [ "$plant" = 13 ] && def+=(-DDT_EMU_PLANT_SHIFT_LAST=1)
  build_run "$d" add "add shift $c" 1 "$plant" "${def[@]}"
done
for c in "${persist_cases[@]}"; do read -r m n lda v blk vec per el g plant off <<<"$c"
  plant=${plant:-0}; off=${off:-0}
  [[ " ${DT_EMU_OPS:-2} " == *" 2 "* ]] || continue # layernorm only
  d="$T/persist_${m}_${n}_${lda}_${v}_${blk}_${el}_${g}_${plant}_${off}"; mkdir -p "$d/ref" "$d/p1" "$d/p2"
  def=(-DOP=2 -DM="$m" -DN="$n" -DLDA="$lda" -DLDB="$lda" -DLDO="$n" -DVIEW="$v" -DVEC="$vec"
       -DBLOCK="$blk" -DTPR="$blk" -DPER="$per" -DINREG=1 -DCLUSTER=1 -DDT_ELEM="$el" -DOFFSET="$off")
  if [ "$plant" != 0 ]; then
    pl=(-DDT_EMU_PLANT_PERSIST_CLOBBER=1); [ "$plant" = 8 ] && pl=(-DDT_EMU_PLANT_PERSIST_TAIL=1)
    build_run "$d/p1" layernorm "layernorm persist=1 $c" 1 "$plant" "${def[@]}" -DDT_LN_PERSIST=1 -DPIPE_G="$g" "${pl[@]}"
    continue
  fi
  bits=0; [ "$off" != 0 ] && [ "$el" = 0 ] && bits=1
  DT_EMU_BITS_ONLY=$bits DT_EMU_DUMP="$d/ref.bin" build_run "$d/ref" layernorm "layernorm default $c" 1 0 "${def[@]}"
  for p in 1 2; do
    DT_EMU_BITS_ONLY=$bits DT_EMU_DUMP="$d/p$p.bin" build_run "$d/p$p" layernorm "layernorm persist=$p $c" 1 0 "${def[@]}" -DDT_LN_PERSIST="$p" -DPIPE_G="$g"
    if cmp -s "$d/ref.bin" "$d/p$p.bin"; then echo "bit-identical to the default kernel: persist=$p $c"
    else echo "FAIL persist=$p output differs from the default kernel's: $c"; rc=1; fi
  done
done
rm -rf "$T"; exit $rc
