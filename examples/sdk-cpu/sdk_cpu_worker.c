/* sdk_cpu_worker.c — a dualtime worker in plain C: add and softmax on the CPU through
 * the worker SDK (include/dualtime/dt_worker_sdk.h, docs/worker-sdk.md).
 * Tests only: SDK_CPU_EXAMPLE_WRONG=softmax plants a wrong softmax (the oracle must fail
 * it); SDK_CPU_EXAMPLE_SDK_VERSION=N claims SDK version N (dualtime must refuse it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dualtime/dt_worker_sdk.h"

/* out = a + b, element by element (a and b may be strided windows). */
static int add(dt_sdk_case *c, void *ctx) {
    dt_sdk_buffer *a = dt_sdk_buf(c, "a"), *b = dt_sdk_buf(c, "b"), *out = dt_sdk_buf(c, "out");
    for (int64_t i = 0; i < out->rows; i++) {
        const float *x = dt_sdk_at(a, i, 0), *y = dt_sdk_at(b, i, 0);
        float *o = dt_sdk_at(out, i, 0);
        for (int64_t j = 0; j < out->cols; j++) o[j] = x[j] + y[j];
    }
    return 0;
}

/* out = softmax of each row of a; ctx != NULL plants a wrong denominator. */
static int softmax(dt_sdk_case *c, void *ctx) {
    dt_sdk_buffer *a = dt_sdk_buf(c, "a"), *out = dt_sdk_buf(c, "out");
    for (int64_t i = 0; i < out->rows; i++) {
        const float *x = dt_sdk_at(a, i, 0);
        float *o = dt_sdk_at(out, i, 0), mx = -INFINITY;
        for (int64_t j = 0; j < out->cols; j++) mx = x[j] > mx ? x[j] : mx;
        double sum = ctx ? 1.0 : 0.0;
        for (int64_t j = 0; j < out->cols; j++) sum += (o[j] = expf(x[j] - mx));
        for (int64_t j = 0; j < out->cols; j++) o[j] = (float)(o[j] / sum);
    }
    return 0;
}

/* Every case of this worker must be f32 (bf16/f16 would need their own loops). */
static int f32_only(dt_sdk_case *c, void *ctx) {
    return c->buf[0].dtype == DT_SDK_F32 ? 0 : dt_sdk_error(c, "this example has f32 only");
}

static int init(dt_sdk *sdk, void *user) {
    const char *wrong = getenv("SDK_CPU_EXAMPLE_WRONG");
    dt_sdk_op sm = {softmax, f32_only, NULL, "plain C row softmax", NULL};
    if (wrong && strcmp(wrong, "softmax") == 0) sm.ctx = &sm; /* any non-NULL: planted */
    return dt_sdk_register(sdk, "add", add, NULL) || dt_sdk_register_op(sdk, "softmax", &sm);
}

int main(int argc, char **argv) {
    dt_sdk_spec spec = DT_SDK_SPEC_INIT;
    spec.worker = "sdk-cpu";
    spec.framework = "example-c";
    spec.framework_version = "1.0";
    spec.backend = DT_SDK_CPU;
    spec.init = init;
    const char *claim = getenv("SDK_CPU_EXAMPLE_SDK_VERSION");
    if (claim) spec.sdk_version = atoi(claim);
    return dt_sdk_main(argc, argv, &spec);
}
