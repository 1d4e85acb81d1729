// gelu_add.cu — out = GELU(a + b), exact erf GELU: 0.5*x*(1 + erf(x/sqrt(2))),
// DT_ELEM storage, FP32 arithmetic,
// one fused pass. Specialization: see dt_cuda_common.cuh (M N LDA LDB LDO VEC BLOCK ITEMS).
#include "dt_cuda_common.cuh"

struct dt_gelu_add_op {
    __device__ __forceinline__ float operator()(float x, float y) const {
        const float s = x + y;
        return 0.5f * s * (1.0f + erff(s * 0.70710678118654752440f));
    }
};

extern "C" __global__ void __launch_bounds__(BLOCK)
DT_KNAME(dt_gelu_add)(const dt_t *__restrict__ a, const dt_t *__restrict__ b,
                      dt_t *__restrict__ out) {
    dt_elementwise(a, b, out, dt_gelu_add_op());
}
