/* sdk_fake_cuda_worker.c — a worker SDK worker in CUDA mode for the fake driver
 * (fake_libcuda.c): its "kernels" are C loops over the device pointers the SDK hands out
 * (host memory under the fake), so the SDK's device mirror, offsets, upload and download
 * are checked by dualtime's oracle and arena checks without a GPU. A stream must be set. */
#include <stdlib.h>

#include "dualtime/dt_worker_sdk.h"

static int add(dt_sdk_case *c, void *ctx) {
    if (!c->stream) return dt_sdk_error(c, "no stream in CUDA mode");
    dt_sdk_buffer *a = dt_sdk_buf(c, "a"), *b = dt_sdk_buf(c, "b"), *o = dt_sdk_buf(c, "out");
    if (o->base != o->device || o->device == o->host) return dt_sdk_error(c, "base is not the mirror");
    for (int64_t i = 0; i < o->rows; i++)
        for (int64_t j = 0; j < o->cols; j++)
            *(float *)dt_sdk_at(o, i, j) = *(float *)dt_sdk_at(a, i, j) + *(float *)dt_sdk_at(b, i, j);
    return 0;
}

static int init(dt_sdk *sdk, void *user) { return dt_sdk_register(sdk, "add", add, NULL); }

int main(int argc, char **argv) {
    dt_sdk_spec spec = DT_SDK_SPEC_INIT;
    spec.worker = "sdk-fake-cuda";
    spec.backend = DT_SDK_CUDA;
    spec.init = init;
    return dt_sdk_main(argc, argv, &spec);
}
