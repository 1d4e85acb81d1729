/* dt_sdk_cuda.c — the worker SDK's CUDA driver and timing-helper loading (contract in
 * dt_sdk_cuda.h). The driver's types are declared here as the ABI defines them, so
 * neither cuda.h nor libcuda is needed to build. */
#define _GNU_SOURCE
#include "dt_sdk_cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult; /* CUDA_SUCCESS = 0 */
typedef unsigned long long CUdeviceptr;
#define CU_STREAM_NON_BLOCKING 0x1

/* The driver entry points the SDK uses (the _v2 names are the ABI's current ones). */
static struct {
    int tried, ok;
    char reason[DT_ERR_LEN];
    void *ctx, *module, *empty_fn;
    int device;
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(int *, int);
    CUresult (*DeviceGetName)(char *, int, int);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*PrimaryCtxRetain)(void **, int);
    CUresult (*CtxSetCurrent)(void *);
    CUresult (*CtxSynchronize)(void);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*StreamCreate)(void **, unsigned);
    CUresult (*StreamDestroy)(void *);
    CUresult (*ModuleLoadData)(void **, const void *);
    CUresult (*ModuleGetFunction)(void **, void *, const char *);
    CUresult (*LaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, void *, void **, void **);
    CUresult (*GetErrorString)(CUresult, const char **);
} cu;

/* The floor's empty kernel, JIT-compiled by the driver for the device at hand. */
static const char k_empty_ptx[] = ".version 7.0\n.target sm_52\n.address_size 64\n"
                                  ".visible .entry dt_sdk_empty()\n{\n\tret;\n}\n";

static dt_status cu_fail(dt_err *err, CUresult r, const char *what) {
    const char *s = NULL;
    if (cu.GetErrorString) cu.GetErrorString(r, &s);
    return dt_fail(err, DT_EDEVICE, "%s failed: CUDA error %d (%s)", what, r, s ? s : "?");
}

#define CU_TRY(call, what)                                     \
    do {                                                       \
        CUresult r_ = (call);                                  \
        if (r_ != 0) return cu_fail(err, r_, what);            \
    } while (0)

static int load_syms(void *h) {
    static const struct { const char *name; size_t off; } syms[] = {
#define S(field, name) {name, offsetof(__typeof__(cu), field)}
        S(Init, "cuInit"), S(DeviceGet, "cuDeviceGet"), S(DeviceGetName, "cuDeviceGetName"),
        S(DriverGetVersion, "cuDriverGetVersion"), S(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
        S(CtxSetCurrent, "cuCtxSetCurrent"), S(CtxSynchronize, "cuCtxSynchronize"),
        S(MemAlloc, "cuMemAlloc_v2"), S(MemFree, "cuMemFree_v2"),
        S(MemcpyHtoD, "cuMemcpyHtoD_v2"), S(MemcpyDtoH, "cuMemcpyDtoH_v2"),
        S(StreamCreate, "cuStreamCreate"), S(StreamDestroy, "cuStreamDestroy_v2"),
        S(ModuleLoadData, "cuModuleLoadData"), S(ModuleGetFunction, "cuModuleGetFunction"),
        S(LaunchKernel, "cuLaunchKernel"), S(GetErrorString, "cuGetErrorString")
#undef S
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p) {
            snprintf(cu.reason, sizeof cu.reason, "libcuda.so.1 has no %s", syms[i].name);
            return 0;
        }
        memcpy((char *)&cu + syms[i].off, &p, sizeof p);
    }
    return 1;
}

/* cuInit, device 0, primary context current, the empty kernel's module. */
static int start_driver(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(cu.reason, sizeof cu.reason, "no CUDA driver: %s", e ? e : "dlopen failed");
        return 0;
    }
    if (!load_syms(h)) return 0;
    dt_err e = {{0}}, *err = &e;
    dt_status st = DT_OK;
    CUresult r;
    if ((r = cu.Init(0)) != 0) st = cu_fail(err, r, "cuInit");
    else if ((r = cu.DeviceGet(&cu.device, 0)) != 0) st = cu_fail(err, r, "cuDeviceGet");
    else if ((r = cu.PrimaryCtxRetain(&cu.ctx, cu.device)) != 0)
        st = cu_fail(err, r, "cuDevicePrimaryCtxRetain");
    else if ((r = cu.CtxSetCurrent(cu.ctx)) != 0) st = cu_fail(err, r, "cuCtxSetCurrent");
    else if ((r = cu.ModuleLoadData(&cu.module, k_empty_ptx)) != 0)
        st = cu_fail(err, r, "cuModuleLoadData (empty kernel)");
    else if ((r = cu.ModuleGetFunction(&cu.empty_fn, cu.module, "dt_sdk_empty")) != 0)
        st = cu_fail(err, r, "cuModuleGetFunction (empty kernel)");
    if (st != DT_OK) {
        snprintf(cu.reason, sizeof cu.reason, "%s", e.msg);
        return 0;
    }
    return 1;
}

int dt_sdk_cuda_load(char *reason, size_t reason_len) {
    if (!cu.tried) {
        cu.tried = 1;
        cu.ok = start_driver();
    }
    if (!cu.ok && reason) snprintf(reason, reason_len, "%s", cu.reason);
    return cu.ok;
}

void dt_sdk_cuda_describe(char *buf, size_t len) {
    char name[256] = "";
    int drv = 0;
    if (!cu.ok || cu.DeviceGetName(name, (int)sizeof name, cu.device) != 0) {
        snprintf(buf, len, "{}");
        return;
    }
    cu.DriverGetVersion(&drv);
    for (char *p = name; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) *p = ' ';
    snprintf(buf, len, "{\"gpu\":\"%s\",\"driver\":%d,\"device\":%d}", name, drv, cu.device);
}

dt_status dt_sdk_cuda_case_open(int64_t bytes, uint64_t *dptr, void **stream, dt_err *err) {
    *dptr = 0;
    *stream = NULL;
    CU_TRY(cu.CtxSetCurrent(cu.ctx), "cuCtxSetCurrent");
    CUdeviceptr d = 0;
    CU_TRY(cu.MemAlloc(&d, (size_t)bytes), "cuMemAlloc (the arena's device mirror)");
    CUresult r = cu.StreamCreate(stream, CU_STREAM_NON_BLOCKING);
    if (r != 0) {
        cu.MemFree(d);
        *stream = NULL;
        return cu_fail(err, r, "cuStreamCreate");
    }
    *dptr = d;
    return DT_OK;
}

void dt_sdk_cuda_case_close(uint64_t dptr, void *stream) {
    if (!cu.ok) return;
    cu.CtxSynchronize();
    if (stream) cu.StreamDestroy(stream);
    if (dptr) cu.MemFree((CUdeviceptr)dptr);
}

dt_status dt_sdk_cuda_copy(int to_device, uint64_t dptr, void *host, int64_t bytes, dt_err *err) {
    if (to_device)
        CU_TRY(cu.MemcpyHtoD((CUdeviceptr)dptr, host, (size_t)bytes), "cuMemcpyHtoD (upload)");
    else
        CU_TRY(cu.MemcpyDtoH(host, (CUdeviceptr)dptr, (size_t)bytes), "cuMemcpyDtoH (download)");
    return dt_sdk_cuda_sync(err);
}

static int g_lost;

dt_status dt_sdk_cuda_sync(dt_err *err) {
    CUresult r = cu.CtxSynchronize();
    if (r == 0) return DT_OK;
    g_lost = 1;
    return cu_fail(err, r, "cuCtxSynchronize (a kernel fault? the context is lost)");
}

int dt_sdk_cuda_lost(void) { return g_lost; }

dt_status dt_sdk_cuda_empty(void *stream, dt_err *err) {
    CU_TRY(cu.LaunchKernel(cu.empty_fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL),
           "cuLaunchKernel (empty kernel)");
    return DT_OK;
}

/* ---- the timing helper ------------------------------------------------------------ */

#ifndef DT_SDK_TIMING_DEFAULT
#define DT_SDK_TIMING_DEFAULT ""
#endif

static dt_sdk_timing_api g_timing;
static int g_timing_tried, g_timing_ok;
static char g_timing_reason[512];

static void *open_helper(void) {
    const char *env = getenv("DUALTIME_TIMING_LIB");
    const char *cands[] = {env && *env ? env : NULL, DT_SDK_TIMING_DEFAULT[0] ? DT_SDK_TIMING_DEFAULT : NULL,
                           "libdualtime_timing.so"};
    char tried[400] = "";
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        if (!cands[i]) continue;
        void *h = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
        size_t n = strlen(tried);
        snprintf(tried + n, sizeof tried - n, "%s%s", n ? ", " : "", cands[i]);
    }
    snprintf(g_timing_reason, sizeof g_timing_reason,
             "device timing not offered: no timing helper (tried %s; set DUALTIME_TIMING_LIB)",
             tried);
    return NULL;
}

const dt_sdk_timing_api *dt_sdk_timing_load(char *reason, size_t reason_len) {
    if (!g_timing_tried) {
        g_timing_tried = 1;
        void *h = open_helper();
        static const struct { const char *name; size_t off; } syms[] = {
#define S(field, name) {name, offsetof(dt_sdk_timing_api, field)}
            S(abi_version, "dt_timing_abi_version"), S(begin_control, "dt_timing_begin_control"),
            S(begin_probe, "dt_timing_begin_probe"), S(end, "dt_timing_end"),
            S(kernel_record, "dt_timing_kernel_record"), S(last_error, "dt_timing_last_error"),
            S(set_persistent, "dt_timing_set_persistent"), S(hold, "dt_timing_hold")
#undef S
        };
        g_timing_ok = h != NULL;
        for (size_t i = 0; g_timing_ok && i < sizeof syms / sizeof syms[0]; i++) {
            void *p = dlsym(h, syms[i].name);
            if (!p) {
                snprintf(g_timing_reason, sizeof g_timing_reason,
                         "device timing not offered: the timing helper has no %s", syms[i].name);
                g_timing_ok = 0;
            } else {
                memcpy((char *)&g_timing + syms[i].off, &p, sizeof p);
            }
        }
        if (g_timing_ok && g_timing.abi_version() != DT_TIMING_ABI_VERSION) {
            snprintf(g_timing_reason, sizeof g_timing_reason,
                     "device timing not offered: timing helper ABI %u, the SDK needs %u",
                     g_timing.abi_version(), DT_TIMING_ABI_VERSION);
            g_timing_ok = 0;
        }
    }
    if (!g_timing_ok) {
        if (reason) snprintf(reason, reason_len, "%s", g_timing_reason);
        return NULL;
    }
    return &g_timing;
}
