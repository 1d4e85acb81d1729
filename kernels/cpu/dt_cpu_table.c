/* dt_cpu_table.c — this ISA copy's table of row kernels (dt_cpu_isa.h), compiled once per
 * ISA like the kernels it lists, and this copy's bf16 / f16 row conversions (the
 * public dt_cpu_widen_narrow / dt_cpu_round_narrow). */
#include "dt_cpu_isa.h"

#define DT_CPU_ROW_FN(ret, name, ...) ret DT_CPU_KFN(name)(__VA_ARGS__);
DT_CPU_ROW_FN(void, dt_cpu_add, int64_t, int64_t, const float *, int64_t, const float *,
              int64_t, float *)
DT_CPU_ROW_FN(void, dt_cpu_gelu_add, int64_t, int64_t, const float *, int64_t, const float *,
              int64_t, float *)
DT_CPU_ROW_FN(void, dt_cpu_gelu_add_libm, int64_t, int64_t, const float *, int64_t,
              const float *, int64_t, float *)
DT_CPU_ROW_FN(void, dt_cpu_sum, int64_t, int64_t, const float *, int64_t, float *)
DT_CPU_ROW_FN(void, dt_cpu_softmax, int64_t, int64_t, const float *, int64_t, float *)
DT_CPU_ROW_FN(void, dt_cpu_rmsnorm, int64_t, int64_t, const float *, int64_t, const float *,
              float *)
DT_CPU_ROW_FN(void, dt_cpu_layernorm, int64_t, int64_t, const float *, int64_t, const float *,
              const float *, float *)
DT_CPU_ROW_FN(void, dt_cpu_residual_layernorm, int64_t, int64_t, const float *, int64_t,
              const float *, int64_t, float *)
DT_CPU_ROW_FN(void, dt_cpu_cross_entropy, int64_t, int64_t, const float *, int64_t,
              const int64_t *, float *)
DT_CPU_ROW_FN(void, dt_cpu_gemm, int64_t, int64_t, int64_t, const float *, int64_t,
              const float *, int64_t, float *)
DT_CPU_ROW_FN(void, dt_cpu_add_narrow, dt_dtype, int64_t, int64_t, const uint16_t *, int64_t,
              const uint16_t *, int64_t, uint16_t *)
DT_CPU_ROW_FN(void, dt_cpu_gelu_add_narrow, dt_dtype, int64_t, int64_t, const uint16_t *,
              int64_t, const uint16_t *, int64_t, uint16_t *)
DT_CPU_ROW_FN(void, dt_cpu_gelu_add_libm_narrow, dt_dtype, int64_t, int64_t, const uint16_t *,
              int64_t, const uint16_t *, int64_t, uint16_t *)
DT_CPU_ROW_FN(void, dt_cpu_sum_narrow, dt_dtype, int64_t, int64_t, const uint16_t *, int64_t,
              uint16_t *)

static void widen_narrow(dt_dtype t, const uint16_t *src, float *dst, int64_t n) {
    if (t == DT_F16)
        dt_cpu_widen_row(1, src, dst, n);
    else
        dt_cpu_widen_row(0, src, dst, n);
}

static void round_narrow(dt_dtype t, const float *src, uint16_t *dst, int64_t n) {
    if (t == DT_F16)
        dt_cpu_round_row(1, src, dst, n);
    else
        dt_cpu_round_row(0, src, dst, n);
}

const dt_cpu_row_kernels DT_CPU_KFN(dt_cpu_rows) = {
    .isa = DT_CPU_ISA_LABEL,
    .add = DT_CPU_KFN(dt_cpu_add),
    .gelu_add = DT_CPU_KFN(dt_cpu_gelu_add),
    .gelu_add_libm = DT_CPU_KFN(dt_cpu_gelu_add_libm),
    .sum = DT_CPU_KFN(dt_cpu_sum),
    .softmax = DT_CPU_KFN(dt_cpu_softmax),
    .rmsnorm = DT_CPU_KFN(dt_cpu_rmsnorm),
    .layernorm = DT_CPU_KFN(dt_cpu_layernorm),
    .residual_layernorm = DT_CPU_KFN(dt_cpu_residual_layernorm),
    .cross_entropy = DT_CPU_KFN(dt_cpu_cross_entropy),
    .gemm = DT_CPU_KFN(dt_cpu_gemm),
    .add_narrow = DT_CPU_KFN(dt_cpu_add_narrow),
    .gelu_add_narrow = DT_CPU_KFN(dt_cpu_gelu_add_narrow),
    .gelu_add_libm_narrow = DT_CPU_KFN(dt_cpu_gelu_add_libm_narrow),
    .sum_narrow = DT_CPU_KFN(dt_cpu_sum_narrow),
    .widen = widen_narrow,
    .round = round_narrow,
};
