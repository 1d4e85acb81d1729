#!/usr/bin/env bash
# run_emu_sgemm.sh — the FP32 gemm kernels of issue 18 item 4 on the CPU through
# dt_emu.hpp. kernels/cuda/gemv.cu (thin gemm, emu_gemv.cpp): the geometries the plan makes for the thin shapes of the GPU test
# (test_sgemm_plan checks the plan picks them: 1000x1x1000 and 1x1000x1000 contiguous and
# as views, 7x1x50001 and 8x1x65536 over clusters of 8 and 4, 1x4095x257, 1x1x1000,
# 300x1x257) and a few more (8 rows a block with a row tail, column tail at VEC 4, A's
# rows 16-byte loads with a strided b). The same kernel in bf16 and f16 storage (ELEM 1 / 2:
# the geometries the plan makes for them, test_sgemm_plan: 16-byte loads of 8 elements,
# views and odd K scalar, K slices over a cluster rounded to 8, row and column tails),
# checked against FP64 from the stored values within 2e-6 of sum |a*b| + 1 ulp of the
# type; the planted fault (PLANT 1, DT_EMU_PLANT_ACC_NARROW: the accumulator rounded to
# the storage type at every step) must fail in both types.
# kernels/cuda/gemm_v2.cu (emu_gemm_v2.cpp): BK=32's two prefetch phases with and without
# the exact K tail, aligned and as views, the exact tail at BK=16 and 8 and on the 64x64
# and 128x64 tiles, the staged scalar-C epilogue (EPI_STAGE) on every tile, split-K over a
# cluster of 2, 4 and 8 (KSPLIT: partial tiles summed over DSMEM, tails, a view). Checks
# every output against FP64 (2e-6 of sum |a*b|) and the output guards, and (without
# KSPLIT) the bank ways of the A tile's stores and reads: 1 with the swizzle (ASWZ, at
# VECA 4 or BK 8), and the old layout's 2- and 4-way store conflicts must show (ASWZ=0).
# Needs g++ >= 12 (C++20 <barrier>). Usage: bash tests/cuda/emu/run_emu_sgemm.sh (exit 0:
# all passed; DT_EMU_ONLY=gemv|v2 runs one half (v2: ctest test_emu_sgemm_v2), =skinny the
# few-rows cases of gemv and the split-K cases of gemm_v2: ctest test_emu_skinny; =mma
# only gemv_mma.cu's cases: ctest test_emu_gemv_mma)
set -u
cd "$(dirname "$0")/../../.." || exit 2
T="$(mktemp -d /tmp/dt-emu-gemv.XXXXXX)"; rc=0
# M N K view LDA LDB LDO MODE BLOCK TPR CL KC VECA VECB [ELEM [PLANT]] (ELEM: DT_ELEM, 0 f32;
# PLANT 1: built with DT_EMU_PLANT_ACC_NARROW, must fail)
cases=("1000 1 1000 0 1000 1 1 1 64 32 1 1000 4 4"
       "1000 1 1000 1 1004 4 1 1 128 128 1 1000 1 1"
       "1 1000 1000 0 1000 1000 1000 2 256 8 8 128 1 4"
       "1 1000 1000 1 1004 1004 1000 2 256 32 8 128 1 1"
       "7 1 50001 0 50001 1 1 1 1024 1024 8 6252 1 1"
       "8 1 65536 0 65536 1 1 1 1024 1024 4 16384 4 4"
       "1 4095 257 0 257 4095 4095 2 256 32 4 68 1 1"
       "1 1 1000 0 1000 1 1 1 64 32 1 1000 4 4"
       "300 1 257 0 257 1 1 1 64 64 1 257 1 1"
       "37 1 64 0 64 1 1 1 256 32 1 64 4 4"
       "1 1004 37 0 37 1004 1004 2 256 8 1 37 1 4"
       "100 1 1000 0 1000 4 1 1 64 32 1 1000 4 1")
for e in 1 2; do
  cases+=("1000 1 1000 0 1000 1 1 1 64 32 1 1000 8 8 $e"
          "1000 1 1000 1 1004 4 1 1 128 128 1 1000 1 1 $e"
          "1 1000 1000 0 1000 1000 1000 2 256 8 8 128 1 8 $e"
          "1 1000 1000 1 1004 1004 1000 2 256 32 8 128 1 1 $e"
          "8 1 65544 0 65544 1 1 1 1024 1024 2 32776 8 8 $e"
          "300 1 257 0 257 1 1 1 64 64 1 257 1 1 $e"
          "37 1 64 0 64 1 1 1 256 32 1 64 8 8 $e"
          "100 1 1000 0 1000 4 1 1 64 32 1 1000 8 1 $e"
          "1 1000 37 0 37 1000 1000 2 256 8 1 37 1 8 $e"
          "1 4095 257 0 257 4095 4095 2 256 32 4 72 1 1 $e"
          "1000 1 1000 0 1000 1 1 1 64 32 1 1000 8 8 $e 1"
          "1 1000 1000 0 1000 1000 1000 2 256 8 8 128 1 8 $e 1")
done
# few rows (mode 2, 2 <= M <= 16: MR rows a block, KG k's a step; fields 17 and 18): the
# geometries the plan makes (test_sgemm_plan fewrows_rules) for 8 rows at 16-byte A loads,
# odd N and K at scalar loads over a cluster of 8 (also as views), two row groups with a
# row tail (13 rows: 7 + 6), 16 rows in two groups, 2 rows over a cluster of 8; bf16 / f16
# at 8- and 16-byte A loads, 3 rows at 4-byte loads, a cluster of 4, a view; the planted
# narrow accumulator must fail
cases+=("8 1000 1000 0 1000 1000 1000 2 256 8 1 1000 1 4 0 0 8 4"
        "5 1003 257 0 257 1003 1003 2 256 32 8 36 1 1 0 0 5 1"
        "5 1003 257 1 260 1004 1003 2 256 32 8 36 1 1 0 0 5 1"
        "13 260 64 0 64 260 260 2 256 8 2 32 1 4 0 0 7 2"
        "16 512 512 0 512 512 512 2 256 8 1 512 1 4 0 0 8 4"
        "2 128 4096 0 4096 128 128 2 256 8 8 512 1 4 0 0 2 4")
for e in 1 2; do
  cases+=("8 1000 1000 0 1000 1000 1000 2 256 8 1 1000 1 8 $e 0 8 4"
          "8 1000 1000 0 1000 1000 1000 2 256 8 1 1000 1 8 $e 0 8 8"
          "3 1000 64 0 64 1000 1000 2 256 8 1 64 1 8 $e 0 3 2"
          "4 1024 2048 0 2048 1024 1024 2 256 8 4 512 1 8 $e 0 4 4"
          "5 1003 257 1 260 1004 1003 2 256 32 4 72 1 1 $e 0 5 1"
          "8 1000 1000 0 1000 1000 1000 2 256 8 1 1000 1 8 $e 1 8 4")
done
[ "${DT_EMU_ONLY:-}" = skinny ] && { mapfile -t cases < <(printf '%s\n' "${cases[@]}" | awk 'NF == 18'); }
# bf16 / f16 few rows on the tensor cores (gemv_mma.cu, session 19; emu_gemv.cpp with
# -DDT_GEMV_MMA, the MMA a collective of dt_emu.hpp in PTX's fragment layout): the
# geometries the plan makes (test_sgemm_plan mma_rules) for 8 and 13 rows over a cluster
# of 2, a view at scalar loads with odd N and K, four row groups at scalar loads, three at
# 16-byte loads, two columns (scalar B, a whole strip of zeros), a cluster of 8, two row
# blocks (grid_y 2, 40 rows); the planted narrow accumulator must fail.
# M N K view LDA LDB LDO WARPS CL KC MG VECA VECB ELEM [PLANT]
mcases=("8 1000 1000 0 1000 1000 1000 8 2 512 1 1 1 1"
        "13 1000 1000 0 1000 1000 1000 8 2 512 2 1 1 2"
        "5 1003 257 1 260 1004 1003 3 1 288 1 0 0 2"
        "32 1003 257 1 260 1004 1003 3 1 288 4 0 0 1"
        "24 2048 1024 0 1024 2048 2048 8 2 512 3 1 1 1"
        "17 2 1000 0 1000 2 2 8 2 512 3 1 0 2"
        "8 256 4096 0 4096 256 256 8 8 512 1 1 1 1"
        "40 128 96 0 96 128 128 1 3 32 4 1 1 2"
        "8 1000 1000 0 1000 1000 1000 8 2 512 1 1 1 1 1"
        "13 1000 1000 0 1000 1000 1000 8 2 512 2 1 1 2 1")
case "${DT_EMU_ONLY:-}" in
  mma) cases=() ;;
  v2|gemv|skinny) mcases=() ;;
esac
flags=(-std=c++20 -O1 -pthread)
[ "${DT_EMU_ONLY:-}" = v2 ] && cases=()
g++ "${flags[@]}" -DM=1 -c -o /dev/null -x c++ /dev/null || exit 2
# one emulated case of emu_gemv.cpp: gemv_case LABEL DIR CL PLANT CASE-TEXT -D... (the
# kernel as one shared object a cluster block, the runner; PLANT 1: must fail)
gemv_case() { local label="$1" d="$2" cl="$3" pl="$4" c="$5" j; shift 5
  local plant=(); [ "$pl" = 1 ] && plant=(-DDT_EMU_PLANT_ACC_NARROW)
  mkdir -p "$d"
  g++ "${flags[@]}" -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden -DDT_HOST_EMU \
    -Wno-unknown-pragmas -DDT_EMU_CHECK_ALIGN -include tests/cuda/emu/dt_emu.hpp -Ikernels/cuda -DDT_EMU_SO "$@" \
    "${plant[@]}" tests/cuda/emu/emu_gemv.cpp -o "$d/k0.so" &&
  g++ "${flags[@]}" "$@" -Itests/cuda/emu tests/cuda/emu/emu_gemv.cpp -o "$d/run" -ldl \
    || { echo "FAIL build $label $c"; rc=1; return; }
  for ((j = 1; j < cl; j++)); do cp "$d/k0.so" "$d/k$j.so"; done
  if [ "$pl" = 1 ]; then
    if "$d/run" "$d"; then echo "FAIL planted fault not caught: $label $c"; rc=1
    else echo "ok   planted fault caught (accumulating in the storage type): $label $c"; fi
  else "$d/run" "$d" || { echo "FAIL $label $c"; rc=1; }; fi; }
for c in "${cases[@]}"; do read -r m n k v lda ldb ldo mode blk tpr cl kc va vb el pl mr kg <<<"$c"
  el=${el:-0}; pl=${pl:-0}; mr=${mr:-1}; kg=${kg:-1}
  gemv_case gemv "$T/g_${m}_${n}_${k}_${v}_${el}_${pl}_${mr}_${kg}" "$cl" "$pl" "$c" \
    -DM="$m" -DN="$n" -DK="$k" -DVIEW="$v" -DLDA="$lda" -DLDB="$ldb" -DLDO="$ldo" -DGV_MODE="$mode" \
    -DBLOCK="$blk" -DTPR="$tpr" -DCL="$cl" -DKC="$kc" -DVECA="$va" -DVECB="$vb" -DDT_ELEM="$el" \
    -DGV_MR="$mr" -DGV_KG="$kg"
done
for c in "${mcases[@]}"; do read -r m n k v lda ldb ldo wa cl kc mg va vb el pl <<<"$c"
  pl=${pl:-0}
  gemv_case gemv_mma "$T/m_${m}_${n}_${k}_${v}_${el}_${pl}" "$cl" "$pl" "$c" \
    -DDT_GEMV_MMA -DM="$m" -DN="$n" -DK="$k" -DVIEW="$v" -DLDA="$lda" -DLDB="$ldb" -DLDO="$ldo" \
    -DWARPS="$wa" -DCL="$cl" -DKC="$kc" -DMG="$mg" -DVECA="$va" -DVECB="$vb" -DDT_ELEM="$el"
done
# M N K view LDA LDB LDO BM BN BK TM TN VECA VECB VECC KTAIL_EXACT EPI_STAGE
v2cases=("300 260 76 0 76 260 260 128 128 32 8 8 4 4 4 1 0"
         "300 260 76 0 76 260 260 128 128 32 8 8 4 4 4 0 0"
         "256 256 64 0 64 256 256 128 128 32 8 8 4 4 4 0 0"
         "300 260 75 1 78 264 260 128 128 32 8 8 1 1 4 1 0"
         "301 263 76 0 76 263 263 128 128 32 8 8 4 1 1 1 1"
         "200 196 37 0 37 196 196 128 128 16 8 8 1 4 4 1 0"
         "130 130 13 0 13 130 130 128 128 8 8 8 1 1 1 1 1"
         "130 130 13 0 13 130 130 128 128 8 8 8 1 1 1 1 0"
         "257 255 33 1 36 258 255 128 128 16 8 8 1 1 1 1 1"
         "200 100 40 0 40 100 100 128 64 16 8 4 4 4 1 1 1"
         "127 193 61 1 64 196 193 64 64 16 4 4 1 1 1 1 1"
         # split-K over a cluster (field 18, KSPLIT; session 10): 4 blocks of 8 K-steps on
         # the 64x64 tile; 2 with row, column and exact K tails at scalar B and C; 8 on the
         # 128x64 tile as a view whose last block has fewer steps
         "256 64 512 0 512 64 64 64 64 16 4 4 4 4 4 0 0 4"
         "200 70 300 0 300 70 70 64 64 16 4 4 4 1 1 1 0 2"
         "130 64 1000 1 1004 68 64 128 64 16 8 4 1 1 4 1 0 8"
         # the split-K tile (session 16): 128x64 over 8 at 16-byte loads (4096x64x4096's
         # geometry, fewer rows and K)
         "256 64 1024 0 1024 64 64 128 64 16 8 4 4 4 4 0 0 8")
case "${DT_EMU_ONLY:-}" in
  gemv|mma) v2cases=() ;;
  skinny) mapfile -t v2cases < <(printf '%s\n' "${v2cases[@]}" | awk 'NF == 18') ;;
esac
for c in "${v2cases[@]}"; do read -r m n k v lda ldb ldo bm bn bk tm tn va vb vc kt ep ks <<<"$c"
  ks=${ks:-1}
  def=(-DM="$m" -DN="$n" -DK="$k" -DVIEW="$v" -DLDA="$lda" -DLDB="$ldb" -DLDO="$ldo" -DBM="$bm"
       -DBN="$bn" -DBK="$bk" -DTM="$tm" -DTN="$tn" -DVECA="$va" -DVECB="$vb" -DVECC="$vc" -DKTAIL_EXACT="$kt"
       -DEPI_STAGE="$ep" -DKSPLIT="$ks")
  emu=(-DDT_HOST_EMU -Wno-unknown-pragmas -include tests/cuda/emu/dt_emu.hpp -Ikernels/cuda)
  if [ "$ks" -gt 1 ]; then # one shared object a block of the cluster (emu_gemm_v2.cpp)
    d="$T/v2_${m}_${n}_${k}_${ks}"; mkdir -p "$d"
    g++ "${flags[@]}" -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden "${emu[@]}" \
      -DDT_EMU_SO "${def[@]}" tests/cuda/emu/emu_gemm_v2.cpp -o "$d/k0.so" &&
    g++ "${flags[@]}" "${emu[@]}" "${def[@]}" tests/cuda/emu/emu_gemm_v2.cpp -o "$d/run" -ldl \
      || { echo "FAIL build gemm_v2 $c"; rc=1; continue; }
    for ((j = 1; j < ks; j++)); do cp "$d/k0.so" "$d/k$j.so"; done
    "$d/run" "$d" || { echo "FAIL gemm_v2 $c"; rc=1; }
    continue
  fi
  g++ "${flags[@]}" "${emu[@]}" "${def[@]}" tests/cuda/emu/emu_gemm_v2.cpp -o "$T/v2run" \
    || { echo "FAIL build gemm_v2 $c"; rc=1; continue; }
  "$T/v2run" || { echo "FAIL gemm_v2 $c"; rc=1; }
done
# the layout before the swizzle (ASWZ=0) at BK = 16 and 32: still correct, and its 2- and
# 4-way store conflicts must show in the bank count the swizzled cases pass with 1-way
[ "${DT_EMU_ONLY:-}" = gemv ] || [ "${DT_EMU_ONLY:-}" = skinny ] || [ "${DT_EMU_ONLY:-}" = mma ] ||
for c in "256 256 64 16 4" "300 260 76 32 4" "200 196 37 16 1"; do read -r m n k bk va <<<"$c"
  g++ "${flags[@]}" -DDT_HOST_EMU -Wno-unknown-pragmas -include tests/cuda/emu/dt_emu.hpp -Ikernels/cuda \
    -DM="$m" -DN="$n" -DK="$k" -DVIEW=0 -DLDA="$k" -DLDB="$n" -DLDO="$n" -DBM=128 -DBN=128 -DBK="$bk" \
    -DTM=8 -DTN=8 -DVECA="$va" -DVECB=1 -DVECC=1 -DKTAIL_EXACT=0 -DEPI_STAGE=0 -DKSPLIT=1 -DASWZ=0 \
    -DDT_EMU_EXPECT_CONFLICT tests/cuda/emu/emu_gemm_v2.cpp -o "$T/v2old" \
    || { echo "FAIL build gemm_v2 ASWZ=0 $c"; rc=1; continue; }
  "$T/v2old" || { echo "FAIL gemm_v2 ASWZ=0 $c"; rc=1; }
done
rm -rf "$T"; exit $rc
