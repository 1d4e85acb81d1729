// add.cu — out = a + b over an M x N window (DT_ELEM storage, FP32 arithmetic).
// Specialization: see
// dt_cuda_common.cuh (M N LDA LDB LDO VEC BLOCK ITEMS). Grid: ceil(M*N/VEC / (BLOCK*ITEMS)).
#include "dt_cuda_common.cuh"

struct dt_add_op {
    __device__ __forceinline__ float operator()(float x, float y) const { return x + y; }
};

extern "C" __global__ void __launch_bounds__(BLOCK)
DT_KNAME(dt_add)(const dt_t *__restrict__ a, const dt_t *__restrict__ b,
                 dt_t *__restrict__ out) {
    dt_elementwise(a, b, out, dt_add_op());
}
