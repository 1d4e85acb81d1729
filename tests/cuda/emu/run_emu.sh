#!/usr/bin/env bash
# run_emu.sh — the staged-row variant (SMEMROW) of softmax, rmsnorm, layernorm,
# cross_entropy and residual_layernorm (DT_EMU_OPS="0 1 2 3 4" picks), FP32, one block a row, on the CPU through dt_emu.hpp: contiguous rows
# with N % 4 != 0 (every row start at another offset in its 16-byte chunk), unaligned
# views (row stride N+3/N+4, window at (1,1)), tails smaller than a chunk, rows shorter
# than the block. Checks values against FP64 and the output guards. Needs g++ >= 12
# (C++20 <barrier>). Usage: bash tests/cuda/emu/run_emu.sh   (exit 0: all passed)
set -u
cd "$(dirname "$0")/../../.." || exit 2
T="$(mktemp -d /tmp/dt-emu.XXXXXX)"; rc=0
ops=(softmax rmsnorm layernorm cross_entropy residual_layernorm)
# M N LDA view BLOCK
cases=("5 8193 8196 1 128" "6 8193 8193 0 128" "3 1027 1030 1 128" "4 1025 1025 0 256"
       "3 50257 50257 0 512" "2 1029 1029 0 1024" "3 4096 4100 1 128" "4 4096 4096 0 128")
for o in ${DT_EMU_OPS:-0 1 2 3 4}; do
  for c in "${cases[@]}"; do read -r m n lda v blk <<<"$c"
    ldo=$n; exe="$T/e_${o}_${m}_${n}_${v}_${blk}"
    g++ -std=c++20 -O1 -pthread -DDT_HOST_EMU -include tests/cuda/emu/dt_emu.hpp \
      -Ikernels/cuda -DKFILE="\"${ops[$o]}.cu\"" -DKNAME="\"${ops[$o]}\"" -DOP=$o \
      -DM="$m" -DN="$n" -DLDA="$lda" -DLDB="$lda" -DLDO="$ldo" -DVIEW="$v" -DVEC=4 -DSMEMROW=1 \
      -DBLOCK="$blk" -DTPR="$blk" -DPER=1 -DINREG=0 tests/cuda/emu/emu_rows.cpp -o "$exe" \
      || { echo "FAIL build ${ops[$o]} $c"; rc=1; continue; }
    "$exe" || { echo "FAIL ${ops[$o]} $c"; rc=1; }
  done
done
rm -rf "$T"; exit $rc
