/* backend_cuda_check.h — the one check-macro family of the CUDA backend, for CUDA
 * driver API (CUresult) and NVRTC (nvrtcResult) calls.
 *
 * A failing call becomes a dt_status DT_EDEVICE with one line in the caller's dt_err:
 *   "<file>:<line>: <call text> failed: <ERROR_NAME> (<code>): <error string>"
 * (NULL names or strings from the driver become "unknown"). Two forms per API:
 *   DT_CU_TRY(call, err)                  returns the status from the enclosing function
 *   DT_CU_GOTO(call, err, st, label)      sets st and jumps to a cleanup label
 * and DT_NVRTC_TRY / DT_NVRTC_GOTO likewise. Includes only cuda.h / nvrtc.h besides
 * dt_common.h; lives here, outside dt_core, which never sees CUDA. Code that uses only
 * the NVRTC macros does not link libcuda (the helpers are static inline). */
#ifndef BACKEND_CUDA_CHECK_H
#define BACKEND_CUDA_CHECK_H

#include <cuda.h>
#include <nvrtc.h>

#include "../../src/common/dt_common.h"

static inline dt_status dt_cu_fail(dt_err *err, CUresult r, const char *call, const char *file,
                                   int line) {
    const char *name = NULL, *str = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
    if (cuGetErrorString(r, &str) != CUDA_SUCCESS) str = NULL;
    return dt_fail(err, DT_EDEVICE, "%s:%d: %s failed: %s (%d): %s", file, line, call,
                   name ? name : "unknown", (int)r, str ? str : "unknown");
}

static inline dt_status dt_nvrtc_fail(dt_err *err, nvrtcResult r, const char *call,
                                      const char *file, int line) {
    const char *str = nvrtcGetErrorString(r);
    return dt_fail(err, DT_EDEVICE, "%s:%d: %s failed: %s (%d)", file, line, call,
                   str ? str : "unknown", (int)r);
}

#define DT_CU_TRY(call, err)                                                           \
    do {                                                                               \
        CUresult dt_r_ = (call);                                                       \
        if (dt_r_ != CUDA_SUCCESS) return dt_cu_fail((err), dt_r_, #call, __FILE__, __LINE__); \
    } while (0)

#define DT_CU_GOTO(call, err, st, label)                                               \
    do {                                                                               \
        CUresult dt_r_ = (call);                                                       \
        if (dt_r_ != CUDA_SUCCESS) {                                                   \
            (st) = dt_cu_fail((err), dt_r_, #call, __FILE__, __LINE__);                \
            goto label;                                                                \
        }                                                                              \
    } while (0)

#define DT_NVRTC_TRY(call, err)                                                        \
    do {                                                                               \
        nvrtcResult dt_r_ = (call);                                                    \
        if (dt_r_ != NVRTC_SUCCESS)                                                    \
            return dt_nvrtc_fail((err), dt_r_, #call, __FILE__, __LINE__);             \
    } while (0)

#define DT_NVRTC_GOTO(call, err, st, label)                                            \
    do {                                                                               \
        nvrtcResult dt_r_ = (call);                                                    \
        if (dt_r_ != NVRTC_SUCCESS) {                                                  \
            (st) = dt_nvrtc_fail((err), dt_r_, #call, __FILE__, __LINE__);             \
            goto label;                                                                \
        }                                                                              \
    } while (0)

#endif
