/* dt_sdk_cuda.h — the worker SDK's run-time link to the CUDA driver and to the
 * device-timing helper (include/dualtime/dt_timing.h), both opened with dlopen so that
 * libdualtime_worker_sdk.a links without libcuda and a CPU worker never loads either.
 *
 * The driver: libcuda.so.1, device 0, its primary context (the one the CUDA runtime
 * uses, so a user's <<<>>> launches and cudaStream_t share it), made current on the
 * calling thread. Per case: one device allocation mirroring the whole arena and one
 * non-blocking stream. The floor's empty kernel is a PTX text JIT-compiled by the driver
 * (no NVRTC). The helper: $DUALTIME_TIMING_LIB, else the build folder's
 * libdualtime_timing.so (DT_SDK_TIMING_DEFAULT, set by CMake), else the loader's search
 * path; its ABI version must be DT_TIMING_ABI_VERSION.
 *
 * Every fallible call returns dt_status with a one-line dt_err. Process-wide state,
 * loaded once; not thread-safe (the SDK's loop thread only). */
#ifndef DT_SDK_CUDA_H
#define DT_SDK_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "../../include/dualtime/dt_timing.h"
#include "../common/dt_common.h"

/* Loads the driver and makes device 0's primary context current (once). 1 when usable;
 * else 0 and the reason. */
int dt_sdk_cuda_load(char *reason, size_t reason_len);
/* Device facts as a JSON object text ("{}" when not loaded). */
void dt_sdk_cuda_describe(char *buf, size_t len);
/* A device buffer of bytes (*dptr) and a new non-blocking stream (*stream). */
dt_status dt_sdk_cuda_case_open(int64_t bytes, uint64_t *dptr, void **stream, dt_err *err);
void dt_sdk_cuda_case_close(uint64_t dptr, void *stream);
/* Copies bytes between host and the device buffer (to_device: host -> device), then
 * synchronizes the context. */
dt_status dt_sdk_cuda_copy(int to_device, uint64_t dptr, void *host, int64_t bytes, dt_err *err);
/* cuCtxSynchronize: the whole device, with the error named. A failure here is a kernel
 * fault or a lost context: dt_sdk_cuda_lost() is 1 from then on. */
dt_status dt_sdk_cuda_sync(dt_err *err);
/* 1 once a synchronization failed: the context can serve nothing more in this process. */
int dt_sdk_cuda_lost(void);
/* Launches the empty kernel <<<1,1>>> on stream. */
dt_status dt_sdk_cuda_empty(void *stream, dt_err *err);

/* The timing helper's functions (dt_timing.h). */
typedef struct dt_sdk_timing_api {
    uint32_t (*abi_version)(void);
    int (*begin_control)(void *stream);
    int (*begin_probe)(void *stream, uint32_t capacity, uint32_t probe_kind);
    int (*end)(dt_timing_result *result);
    int (*kernel_record)(uint64_t i, dt_timing_kernel *out);
    const char *(*last_error)(void);
    int (*set_persistent)(int on);
    int (*hold)(void *stream);
} dt_sdk_timing_api;

/* Loads the helper (once); NULL with the reason when it is not there or its ABI differs. */
const dt_sdk_timing_api *dt_sdk_timing_load(char *reason, size_t reason_len);

#endif
