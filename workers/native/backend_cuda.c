/* backend_cuda.c — the CUDA backend of the native worker, built as the module
 * libdualtime_cuda.so and dlopen()ed at hello (see dt_backend.h).
 *
 * A case: plan the kernel variant (backend_cuda_plan.c), compile its source with NVRTC
 * for the device's sm_XY (an in-process cache keyed by SHA-256 of source, header and
 * options avoids recompiling a case seen before), load the module, allocate ONE device
 * buffer that mirrors the whole arena at the same offsets, and launch on a per-case
 * non-blocking stream with precomputed parameters (the data pointers of the buffers, in
 * registry order). Every driver or NVRTC failure, including a kernel fault found at
 * synchronization, comes back as DT_EDEVICE with file:line, the call and the error name.
 * A kernel fault leaves the CUDA context unusable: later calls fail until the process
 * restarts (the message says so).
 *
 * Ceilings (cuda_ceilings): device-to-device copy bandwidth of a large cuMemcpyDtoDAsync
 * timed with events, and the launch floors of an empty NVRTC-compiled kernel.
 *
 * Process state: one context object, g_cuda (device, primary context, module cache).
 * Not thread-safe: one case at a time, from one thread. */
#include <cuda.h>
#include <nvrtc.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/dt_cuda_check.h"
#include "dualtime/dt_timing.h"
#include "backend_cuda_plan.h"
#include "backend_cuda_flops.h"
#include "dt_kernel_dir.h"
#include "dt_kcache.h"
#include "backend_cuda_replay.h"
#include <stdio.h>
#include "dt_backend.h"
#include "../../src/stats/dt_stats.h"

#define DT_CUDA_CACHE_SLOTS 256

typedef struct cuda_cache_entry {
    char key[65];   /* SHA-256 of source + header + options, hex */
    CUmodule module;
} cuda_cache_entry;

/* The one process context of the module. */
static struct {
    int ready;                 /* device and context set up */
    CUdevice dev;
    CUcontext ctx;             /* the device's primary context (retained) */
    int sm_count, cc_major, cc_minor;
    char arch[16];             /* "sm_90" */
    int ncache;
    cuda_cache_entry cache[DT_CUDA_CACHE_SLOTS];
    int context_lost;          /* a sticky error (kernel fault) was seen */
    CUmodule empty_mod;        /* the floor's empty kernel (cuda_floor), loaded on demand */
    CUfunction empty_fn;
    CUmodule digest_mod;       /* the arena digest kernel (cuda_digest), loaded on demand */
    CUfunction digest_fn;
    CUdeviceptr digest_out;    /* its DT_DIGEST_MAX_RANGES sums */
    char lost_reason[200];
    uint32_t hold_method;      /* dt_timing_hold_method of the last held ceilings region */
} g_cuda;

/* Per-case state (prepare .. release). */
typedef struct cuda_state {
    const dt_case_layout *L;
    uint8_t *host;             /* mapped arena, L->total_bytes */
    CUdeviceptr dbase;         /* device mirror, same offsets */
    CUstream stream;
    CUmodule module;
    int module_owned;          /* 1: not in the cache, unload at release */
    CUfunction fn;
    dt_cuda_plan plan;
    CUdeviceptr args[DT_MAX_BUFFERS];
    void *params[2 * DT_MAX_BUFFERS + 3]; /* user .ptx/.cubin: pointer and stride a buffer, sizes */
    long long kvals[DT_MAX_BUFFERS + 3];  /* those strides and sizes (--kernel-dir) */
    dt_kdir_file kfile;                   /* --kernel-dir: the file serving the case */
    size_t ktext_len;                     /* its bytes (texts[0]; a cubin is binary) */
    CUtensorMap *tmaps;        /* gemm wg1: plan.ntma maps (64-byte aligned), or NULL */
    CUdeviceptr work;          /* gemm wg1 split-K: plan.workspace_bytes, zeroed (0: none) */
    CUdeviceptr work_args[2];  /* its kernel parameters: partials, flags */
    char *texts[2];            /* op source and common header, for the source records */
    int warm;                  /* the case's kernel has run in this process (a held window
                                  must not pay its first launch: lazy loading can sync) */
    double plant_fraction;     /* DUALTIME_PLANT_SLOWDOWN for this op (tests), 0: none */
    int plant_set;             /* the planted spin has been calibrated for this case */
    int64_t decomp_call_ns;    /* DT_DEVICE_DECOMP: host clock before the call (0: none) */
    int64_t decomp_return_ns;  /* host clock after its cuStreamSynchronize returned */
    dt_cuda_replay replay;     /* graph replay and cold cache (backend_cuda_replay.h) */
    int host_registered;       /* host is page-locked by cuMemHostRegister (host_register) */
    char host_note[200];       /* "host=pinned (...)" or "host=pageable (why)" */
} cuda_state;

/* Errors after which the context is gone (kernel faults): remember them. */
static void note_sticky(CUresult r, const char *what) {
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT: {
        const char *name = NULL, *str = NULL;
        dt_cuda_describe_cu(r, &name, &str);
        g_cuda.context_lost = 1;
        snprintf(g_cuda.lost_reason, sizeof g_cuda.lost_reason, "%s in %s",
                 name ? name : "unknown", what);
        break;
    }
    default: break;
    }
}

/* Like DT_CUDA_GOTO(cu, ...), but also records sticky errors and appends a hint. */
#define CU_RUN(call, err, st, label, what)                                            \
    do {                                                                              \
        CUresult r__ = (call);                                                        \
        char t__[DT_CUDA_CHECK_TEXT_LEN];                                             \
        if (!dt_cu_check(r__, #call, __FILE__, __LINE__, t__, sizeof t__)) {          \
            note_sticky(r__, (what));                                                 \
            (st) = dt_fail((err), DT_EDEVICE, "%s", t__);                             \
            if (g_cuda.context_lost) {                                                \
                size_t l__ = strlen((err)->msg);                                      \
                snprintf((err)->msg + l__, sizeof (err)->msg - l__,                   \
                         " [kernel %s; CUDA context is now unusable]", (what));       \
            }                                                                         \
            goto label;                                                               \
        }                                                                             \
    } while (0)

static dt_status cuda_init(dt_err *err) {
    if (g_cuda.context_lost)
        return dt_fail(err, DT_EDEVICE,
                       "CUDA context unusable after %s; restart the worker", g_cuda.lost_reason);
    if (g_cuda.ready) {
        DT_CUDA_TRY(cu, cuCtxSetCurrent(g_cuda.ctx), err);
        return DT_OK;
    }
    int ordinal = 0;
    const char *env = getenv("DUALTIME_CUDA_DEVICE");
    if (env && *env) ordinal = atoi(env);
    DT_CUDA_TRY(cu, cuInit(0), err);
    DT_CUDA_TRY(cu, cuDeviceGet(&g_cuda.dev, ordinal), err);
    DT_CUDA_TRY(cu, cuDevicePrimaryCtxRetain(&g_cuda.ctx, g_cuda.dev), err);
    DT_CUDA_TRY(cu, cuCtxSetCurrent(g_cuda.ctx), err);
    DT_CUDA_TRY(cu, cuDeviceGetAttribute(&g_cuda.sm_count,
                                         CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g_cuda.dev),
                err);
    DT_CUDA_TRY(cu, cuDeviceGetAttribute(&g_cuda.cc_major,
                                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g_cuda.dev),
                err);
    DT_CUDA_TRY(cu, cuDeviceGetAttribute(&g_cuda.cc_minor,
                                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g_cuda.dev),
                err);
    const char *arch = getenv("DUALTIME_CUDA_ARCH"); /* e.g. compute_90 for PTX */
    if (arch && *arch)
        snprintf(g_cuda.arch, sizeof g_cuda.arch, "%s", arch);
    else
        snprintf(g_cuda.arch, sizeof g_cuda.arch, "sm_%d%d", g_cuda.cc_major, g_cuda.cc_minor);
    g_cuda.ready = 1;
    return DT_OK;
}

static int cuda_available(char *reason, size_t reason_len) {
    if (!DT_CUDA_CHECK(cu, cuInit(0), reason, reason_len)) return 0;
    int count = 0;
    if (!DT_CUDA_CHECK(cu, cuDeviceGetCount(&count), reason, reason_len)) return 0;
    if (count < 1) {
        snprintf(reason, reason_len, "no CUDA device");
        return 0;
    }
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
        snprintf(reason, reason_len, "NVRTC not usable");
        return 0;
    }
    if (reason_len) reason[0] = 0;
    return 1;
}

static void json_escape(char *dst, size_t len, const char *s) {
    size_t o = 0;
    for (; *s && o + 7 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            dst[o++] = '\\';
            dst[o++] = (char)c;
        } else if (c < 0x20) {
            o += (size_t)snprintf(dst + o, len - o, "\\u%04x", c);
        } else {
            dst[o++] = (char)c;
        }
    }
    dst[o] = 0;
}

static void cuda_describe(char *buf, size_t len) {
    dt_err err;
    if (cuda_init(&err) != DT_OK) {
        char esc[DT_ERR_LEN * 2];
        json_escape(esc, sizeof esc, err.msg);
        snprintf(buf, len, "{\"error\":\"%s\"}", esc);
        return;
    }
    char name[256] = "unknown", esc[512];
    cuDeviceGetName(name, sizeof name, g_cuda.dev);
    json_escape(esc, sizeof esc, name);
    int drv = 0, nv_major = 0, nv_minor = 0;
    cuDriverGetVersion(&drv);
    nvrtcVersion(&nv_major, &nv_minor);
    size_t mem = 0;
    cuDeviceTotalMem(&mem, g_cuda.dev);
    int l2 = 0, clk = 0, mclk = 0, bus = 0, smem_optin = 0, ecc = 0, pci_bus = 0;
    cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, g_cuda.dev);
    cuDeviceGetAttribute(&clk, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, g_cuda.dev);
    cuDeviceGetAttribute(&mclk, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, g_cuda.dev);
    cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, g_cuda.dev);
    cuDeviceGetAttribute(&smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                         g_cuda.dev);
    cuDeviceGetAttribute(&ecc, CU_DEVICE_ATTRIBUTE_ECC_ENABLED, g_cuda.dev);
    cuDeviceGetAttribute(&pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, g_cuda.dev);
    /* free device memory now, for the orchestrator's up-front memory check (issue 16) */
    size_t free_b = 0, total_b = 0;
    char freebuf[32] = "null"; /* null: not known, the check is skipped */
    if (cuMemGetInfo(&free_b, &total_b) == CUDA_SUCCESS)
        snprintf(freebuf, sizeof freebuf, "%zu", free_b);
    snprintf(buf, len,
             "{\"gpu\":\"%s\",\"compute_capability\":\"%d.%d\",\"arch\":\"%s\","
             "\"sm_count\":%d,\"driver_version\":%d,\"cuda_headers_version\":%d,"
             "\"nvrtc_version\":\"%d.%d\",\"memory_bytes\":%zu,\"l2_bytes\":%d,"
             "\"sm_clock_khz\":%d,\"memory_clock_khz\":%d,\"memory_bus_bits\":%d,"
             "\"max_shared_per_block_optin_bytes\":%d,\"ecc\":%d,\"pci_bus\":%d,"
             "\"memory_free_bytes\":%s}",
             esc, g_cuda.cc_major, g_cuda.cc_minor, g_cuda.arch, g_cuda.sm_count, drv,
             CUDA_VERSION, nv_major, nv_minor, mem, l2, clk, mclk, bus, smem_optin, ecc,
             pci_bus, freebuf);
}

static void sha256_hex(const void *const *parts, const size_t *lens, int nparts, char out[65]) {
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    DT_ASSERT(ctx);
    DT_ASSERT(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1);
    for (int i = 0; i < nparts; i++) DT_ASSERT(EVP_DigestUpdate(ctx, parts[i], lens[i]) == 1);
    DT_ASSERT(EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32);
    EVP_MD_CTX_free(ctx);
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void sha256_text(const char *text, char out[65]) {
    const void *parts[1] = {text};
    size_t lens[1] = {strlen(text)};
    sha256_hex(parts, lens, 1, out);
}

/* Cache key: source, NUL, header, NUL, each option and NUL. */
static void cache_key(const char *src, const char *hdr, const dt_cuda_plan *p, char out[65]) {
    const void *parts[2 + DT_CUDA_MAX_OPTS];
    size_t lens[2 + DT_CUDA_MAX_OPTS];
    int n = 0;
    parts[n] = src; lens[n++] = strlen(src) + 1;
    parts[n] = hdr; lens[n++] = strlen(hdr) + 1;
    for (int i = 0; i < p->nopts; i++) {
        parts[n] = p->opts[i];
        lens[n++] = strlen(p->opts[i]) + 1;
    }
    sha256_hex(parts, lens, n, out);
}

/* The disk cache's key: key (sources + options) with the NVRTC version and the device's
 * architecture, so a toolkit or GPU change never loads another compiler's image. */
static void disk_key(const char key[65], char out[65]) {
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    char ver[64];
    snprintf(ver, sizeof ver, "nvrtc %d.%d %s", major, minor, g_cuda.arch);
    const void *parts[2] = {key, ver};
    size_t lens[2] = {64, strlen(ver)};
    sha256_hex(parts, lens, 2, out);
}

/* s->module for source src (+ header hdr, NULL: none) compiled with s->plan's options:
 * from the process's module cache (*hit 1), else from the disk cache (*hit 2), else
 * compiled by NVRTC (source name name),
 * loaded and kept in the cache, or owned by s when the cache is full. what names the
 * module in a driver error. */
static dt_status cached_module(cuda_state *s, const char *name, const char *src, const char *hdr,
                               const char *what, int *hit, dt_err *err) {
    char key[65];
    cache_key(src, hdr ? hdr : "", &s->plan, key);
    *hit = 0;
    for (int i = 0; i < g_cuda.ncache; i++)
        if (strcmp(g_cuda.cache[i].key, key) == 0) {
            s->module = g_cuda.cache[i].module;
            *hit = 1;
            return DT_OK;
        }
    char *image = NULL;
    size_t image_bytes = 0;
    dt_status st = DT_OK;
    /* the disk cache (dt_kcache.h): another process of this run, or an earlier run,
     * compiled it; its key adds the NVRTC version to the sources and options */
    char dkey[65];
    disk_key(key, dkey);
    if (dt_kcache_get(dkey, &image, &image_bytes)) {
        if (cuModuleLoadData(&s->module, image) == CUDA_SUCCESS) {
            *hit = 2;
            goto loaded;
        }
        free(image); /* intact but not loadable here: compile it */
        image = NULL;
    }
    st = dt_cuda_nvrtc_compile(name, src, hdr, &s->plan, &image, &image_bytes, err);
    if (st != DT_OK) return st;
    CU_RUN(cuModuleLoadData(&s->module, image), err, st, out, what);
    (void)dt_kcache_put(dkey, image, image_bytes);
loaded:
    if (g_cuda.ncache < DT_CUDA_CACHE_SLOTS) {
        cuda_cache_entry *e = &g_cuda.cache[g_cuda.ncache++];
        memcpy(e->key, key, sizeof e->key);
        e->module = s->module;
    } else {
        s->module_owned = 1;
    }
out:
    free(image);
    return st;
}

/* ---- planted slowdown (tests only: docs/cuda-backend.md) ------------------------------
 * DUALTIME_PLANT_SLOWDOWN=<op>:<fraction> makes that op's kernel take about (1 +
 * fraction) x its own time: the kernel source gets a prologue in which the block that
 * starts last spins on %globaltimer for dt_plant_ns, set once per case to fraction x the
 * kernel's held per-call time (measured with the plant off). */
static const char k_plant_prelude[] =
    "__device__ unsigned int dt_plant_ticket;\n"
    "__device__ unsigned long long dt_plant_ns;\n"
    "__device__ __forceinline__ void dt_plant_prologue() {\n"
    "  if (threadIdx.x | threadIdx.y | threadIdx.z) return;\n"
    "  unsigned total = gridDim.x * gridDim.y * gridDim.z;\n"
    "  if (atomicAdd(&dt_plant_ticket, 1u) != total - 1u) return;\n"
    "  dt_plant_ticket = 0u;\n"
    "  unsigned long long t0, t;\n"
    "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "  do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < dt_plant_ns);\n"
    "}\n";

/* The fraction planted for op (0: none or not this op). */
static double plant_fraction(dt_op op) {
    const char *v = getenv("DUALTIME_PLANT_SLOWDOWN"), *colon = v ? strchr(v, ':') : NULL;
    const char *name = dt_op_get(op)->name;
    if (!colon || (size_t)(colon - v) != strlen(name) || strncmp(v, name, strlen(name)) != 0)
        return 0;
    double f = atof(colon + 1);
    return f > 0 && f < 100 ? f : 0;
}

/* *text with the prelude first and dt_plant_prologue(); opening every extern "C" kernel. */
static void plant_source(char **text) {
    size_t n = strlen(*text), extra = sizeof k_plant_prelude + 64;
    for (const char *p = *text; (p = strstr(p, "extern \"C\" __global__")); p++) extra += 32;
    char *out = dt_xmalloc(n + extra), *o = out;
    o += sprintf(o, "%s", k_plant_prelude);
    const char *p = *text;
    for (const char *k; (k = strstr(p, "extern \"C\" __global__")) && strchr(k, '{');) {
        const char *brace = strchr(k, '{') + 1;
        memcpy(o, p, (size_t)(brace - p));
        o += brace - p;
        o += sprintf(o, " dt_plant_prologue();");
        p = brace;
    }
    strcpy(o, p);
    free(*text);
    *text = out;
}

/* Sets the module's dt_plant_ns. */
static dt_status plant_set_ns(cuda_state *s, unsigned long long ns, dt_err *err) {
    CUdeviceptr at;
    size_t bytes;
    dt_status st = DT_OK;
    CU_RUN(cuModuleGetGlobal(&at, &bytes, s->module, "dt_plant_ns"), err, st, out, "plant");
    CU_RUN(cuMemcpyHtoD(at, &ns, sizeof ns), err, st, out, "plant");
out:
    return st;
}

/* Once per case (its first run): the kernel's per-call time of 16 launches in a held
 * control window with the plant off (plain events where controls are refused: a probe
 * process), then the spin = fraction x that. */
static dt_status plant_calibrate(cuda_state *s, dt_err *err) {
    const dt_cuda_plan *p = &s->plan;
    dt_status st = plant_set_ns(s, 0, err);
    s->plant_set = 1;
    if (st != DT_OK) return st;
    CU_RUN(cuLaunchKernel(s->fn, p->grid[0], p->grid[1], p->grid[2], p->block[0], p->block[1],
                          p->block[2], p->shared_bytes, s->stream, s->params, NULL),
           err, st, out, "plant");
    CU_RUN(cuStreamSynchronize(s->stream), err, st, out, "plant");
    dt_timing_result res;
    int held = dt_timing_hold(s->stream) && dt_timing_begin_control(s->stream);
    CUevent e0 = NULL, e1 = NULL;
    if (!held) {
        CU_RUN(cuEventCreate(&e0, 0), err, st, out, "plant");
        CU_RUN(cuEventCreate(&e1, 0), err, st, out, "plant");
        CU_RUN(cuEventRecord(e0, s->stream), err, st, out, "plant");
    }
    for (int i = 0; i < 16; i++)
        CU_RUN(cuLaunchKernel(s->fn, p->grid[0], p->grid[1], p->grid[2], p->block[0],
                              p->block[1], p->block[2], p->shared_bytes, s->stream, s->params,
                              NULL), err, st, out, "plant");
    double ns = 0;
    if (held) {
        if (!dt_timing_end(&res))
            return dt_fail(err, DT_EDEVICE, "plant: timing end: %s", dt_timing_last_error());
        ns = res.stream_ns;
    } else {
        float ms = 0;
        CU_RUN(cuEventRecord(e1, s->stream), err, st, out, "plant");
        CU_RUN(cuEventSynchronize(e1), err, st, out, "plant");
        CU_RUN(cuEventElapsedTime(&ms, e0, e1), err, st, out, "plant");
        ns = ms * 1e6;
    }
    st = plant_set_ns(s, (unsigned long long)(s->plant_fraction * ns / 16), err);
out:
    if (e0) cuEventDestroy(e0);
    if (e1) cuEventDestroy(e1);
    return st;
}

static void cuda_release(void *state) {
    cuda_state *s = state;
    if (!s) return;
    /* After a fault these fail; nothing more to do about it. */
    dt_cuda_replay_free(&s->replay);
    /* before the worker unmaps the arena (release_case: release, then dt_shm_destroy) */
    if (s->host_registered) cuMemHostUnregister(s->host);
    if (s->stream) cuStreamDestroy(s->stream);
    if (s->dbase) cuMemFree(s->dbase);
    if (s->module_owned && s->module) cuModuleUnload(s->module);
    free(s->tmaps);
    if (s->work) cuMemFree(s->work);
    free(s->texts[0]);
    free(s->texts[1]);
    free(s);
}

/* Pinned uploads (docs/device-workflow.md, "Pinned uploads"): page-locks the mapped
 * arena once per mapping (cuMemHostRegister, portable), so upload and download run at
 * the bus's speed instead of through the driver's pageable staging; unregistered in
 * cuda_release, before the worker unmaps it. A failure is not fatal (the copies work
 * from pageable memory) and never silent: host_note says why, and the prepare answer's
 * implementation line carries it. DUALTIME_HOST_REGISTER=0 skips it (A/B runs). */
static void host_register(cuda_state *s) {
    const char *env = getenv("DUALTIME_HOST_REGISTER");
    if (env && strcmp(env, "0") == 0) {
        snprintf(s->host_note, sizeof s->host_note, "host=pageable (DUALTIME_HOST_REGISTER=0)");
        return;
    }
    int64_t t0 = dt_now_ns();
    CUresult r = cuMemHostRegister(s->host, (size_t)s->L->total_bytes,
                                   CU_MEMHOSTREGISTER_PORTABLE);
    if (r == CUDA_SUCCESS) {
        s->host_registered = 1;
        snprintf(s->host_note, sizeof s->host_note,
                 "host=pinned (cuMemHostRegister of %lld bytes in %.1f ms)",
                 (long long)s->L->total_bytes, (double)(dt_now_ns() - t0) / 1e6);
        return;
    }
    const char *name = NULL, *str = NULL;
    dt_cuda_describe_cu(r, &name, &str);
    snprintf(s->host_note, sizeof s->host_note, "host=pageable (cuMemHostRegister failed: %s: %s)",
             name ? name : "?", str ? str : "?");
}

/* "; <host_note>" at the end of the implementation line. */
static void host_note_append(const cuda_state *s, dt_prepare_info *info) {
    size_t at = strlen(info->implementation);
    if (s->host_note[0])
        snprintf(info->implementation + at, sizeof info->implementation - at, "; %s", s->host_note);
}

/* gemm wg1: the plan's tensor maps from the device buffers (cuTensorMapEncodeTiled:
 * 2-D {cols, rows} with the row pitch, the plan's box, 128-byte swizzle, out-of-bounds
 * elements read as zero), then the kernel's parameters: the maps by value, then the
 * output pointer, then (split-K) the zeroed workspace's partials and flags. */
static dt_status encode_tensor_maps(cuda_state *s, dt_err *err) {
    const dt_case_layout *L = s->L;
    const dt_cuda_plan *p = &s->plan;
    dt_status st = DT_OK;
    s->tmaps = aligned_alloc(64, sizeof(CUtensorMap) * 3);
    DT_ASSERT(s->tmaps && p->ntma <= 3);
    const CUtensorMapDataType dt = L->dtype == DT_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                       : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    for (int i = 0; i < p->ntma; i++) {
        const dt_buffer_layout *b = &L->buf[p->tma[i].buf];
        cuuint64_t dims[2] = {(cuuint64_t)b->cols, (cuuint64_t)b->rows};
        cuuint64_t pitch[1] = {(cuuint64_t)(b->row_stride * b->elem_bytes)};
        cuuint32_t box[2] = {p->tma[i].box[0], p->tma[i].box[1]};
        cuuint32_t estride[2] = {1, 1};
        CUresult r = cuTensorMapEncodeTiled(
            &s->tmaps[i], dt, 2, (void *)s->args[p->tma[i].buf], dims, pitch, box, estride,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        char t[DT_CUDA_CHECK_TEXT_LEN];
        if (!dt_cu_check(r, "cuTensorMapEncodeTiled", __FILE__, __LINE__, t, sizeof t))
            return dt_fail(err, DT_EDEVICE,
                           "%s (kernel %s, map of buffer %d: dims %llux%llu pitch %llu B box "
                           "%ux%u base 0x%llx)",
                           t, p->kernel_name, p->tma[i].buf, (unsigned long long)dims[0],
                           (unsigned long long)dims[1], (unsigned long long)pitch[0], box[0],
                           box[1], (unsigned long long)s->args[p->tma[i].buf]);
        s->params[i] = &s->tmaps[i];
    }
    const int out = dt_layout_output(L);
    s->params[p->ntma] = &s->args[out];
    if (p->workspace_bytes) { /* split-K: partials and flags, after the output */
        CU_RUN(cuMemAlloc(&s->work, (size_t)p->workspace_bytes), err, st, done, "workspace");
        /* on the case stream: ordered before its first launch (a non-blocking stream does
         * not wait for the legacy stream a plain cuMemsetD8 runs on) */
        CU_RUN(cuMemsetD8Async(s->work, 0, (size_t)p->workspace_bytes, s->stream), err, st, done,
               "workspace");
        s->work_args[0] = s->work;
        s->work_args[1] = s->work + (CUdeviceptr)p->workspace_flags_offset;
        s->params[p->ntma + 1] = &s->work_args[0];
        s->params[p->ntma + 2] = &s->work_args[1];
    }
done:
    return st;
}

/* ---- --kernel-dir: a user's kernels (dt_kernel_dir.h, docs/cuda-backend.md) ---------- */

static char g_kernel_dir[4096]; /* "" unless the worker was started with --kernel-dir */

/* Called by the worker (dlsym) before any case: every case then runs the user's file
 * for its op from dir instead of the built-in kernel. */
__attribute__((visibility("default"))) void dt_cuda_set_kernel_dir(const char *dir) {
    snprintf(g_kernel_dir, sizeof g_kernel_dir, "%s", dir ? dir : "");
}

/* Loads a .ptx (driver JIT, with its error log) or .cubin image into *mod. */
static dt_status user_load_image(cuda_state *s, CUmodule *mod, dt_err *err) {
    char log[2048] = "";
    CUjit_option opt[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[2] = {log, (void *)(uintptr_t)sizeof log};
    CUresult r = cuModuleLoadDataEx(mod, s->texts[0], 2, opt, val);
    if (r == CUDA_SUCCESS) return DT_OK;
    const char *name = NULL, *str = NULL;
    dt_cuda_describe_cu(r, &name, &str);
    for (char *c = log; *c; c++)
        if (*c == '\n') *c = ' ';
    return dt_fail(err, DT_EDEVICE, "loading %s failed: %s (%d): %s%s%.400s", s->kfile.path,
                   name ? name : "unknown", (int)r, str ? str : "", log[0] ? ": " : "", log);
}

/* The user's module and entry point for the case: plan, compile (.cu, cached like the
 * built-ins) or load (.ptx, .cubin), then the first entry name that exists. */
static dt_status user_module(cuda_state *s, const dt_case_layout *L, int *hit, dt_err *err) {
    dt_status st = dt_kdir_find(g_kernel_dir, L->op, &s->kfile, err);
    if (st != DT_OK) return st;
    if (s->kfile.kind == DT_KDIR_NONE)
        return dt_fail(err, DT_EUNAVAIL, "unsupported: --kernel-dir %s has no %s.cu, %s.ptx or "
                       "%s.cubin", g_kernel_dir, dt_op_get(L->op)->name,
                       dt_op_get(L->op)->name, dt_op_get(L->op)->name);
    if ((st = dt_kdir_read(s->kfile.path, &s->texts[0], &s->ktext_len, err)) != DT_OK) return st;
    const int is_cu = s->kfile.kind == DT_KDIR_CU;
    st = dt_kdir_plan(g_kernel_dir, &s->kfile, s->kfile.kind == DT_KDIR_CUBIN ? NULL : s->texts[0],
                      L, g_cuda.arch, &s->plan, err);
    if (st != DT_OK) return st;
    if (is_cu) {
        st = cached_module(s, s->kfile.name, s->texts[0], NULL, s->kfile.name, hit, err);
        if (st != DT_OK) return st;
    } else {
        if ((st = user_load_image(s, &s->module, err)) != DT_OK) return st;
        s->module_owned = 1;
    }
    char names[2][64];
    int nnames = dt_kdir_entries(L->op, L->dtype, names);
    for (int i = 0; i < nnames && !s->fn; i++)
        if (cuModuleGetFunction(&s->fn, s->module, names[i]) == CUDA_SUCCESS)
            snprintf(s->plan.kernel_name, sizeof s->plan.kernel_name, "%.63s", names[i]);
        else
            s->fn = NULL;
    if (!s->fn)
        st = dt_fail(err, DT_EUNAVAIL, "unsupported: %s has no entry point %s%s%s (a %s case)",
                     s->kfile.path, names[0], nnames > 1 ? " or " : "", nnames > 1 ? names[1] : "",
                     dt_dtype_name(L->dtype));
    return st;
}

/* .ptx / .cubin parameters: each buffer's pointer and row stride, then m, n[, k]. */
static void user_params(cuda_state *s, const dt_case_layout *L) {
    int np = 0, nv = 0;
    for (int b = 0; b < L->nbuffers; b++) {
        s->params[np++] = &s->args[b];
        s->kvals[nv] = (long long)L->buf[b].row_stride;
        s->params[np++] = &s->kvals[nv++];
    }
    s->kvals[nv] = (long long)L->m;
    s->params[np++] = &s->kvals[nv++];
    s->kvals[nv] = (long long)L->n;
    s->params[np++] = &s->kvals[nv++];
    if (dt_op_get(L->op)->is_gemm) {
        s->kvals[nv] = (long long)L->k;
        s->params[np++] = &s->kvals[nv++];
    }
}

/* A persistent grid (plan.persistent_cluster > 1: the staged rows' SMEMPIPE kernel in
 * clusters): no more clusters than the driver says stay resident at once
 * (cuOccupancyMaxActiveClusters; a cluster beyond them would run after the others, a
 * second wave of whole row strides). The plan's estimate stays where the query fails;
 * the kernel takes any grid that is a multiple of the cluster. */
static void persistent_grid_fit(cuda_state *s) {
    const unsigned c = (unsigned)s->plan.persistent_cluster;
    if (c < 2) return; /* one block a cluster: the plan's blocks an SM are exact */
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = s->plan.grid[0];
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = s->plan.block[0];
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = s->plan.shared_bytes;
    int n = 0;
    if (cuOccupancyMaxActiveClusters(&n, s->fn, &cfg) != CUDA_SUCCESS || n <= 0) return;
    if ((unsigned)n * c >= s->plan.grid[0]) return;
    s->plan.grid[0] = (unsigned)n * c;
    size_t at = strlen(s->plan.summary);
    snprintf(s->plan.summary + at, sizeof s->plan.summary - at, " resident-grid=%u",
             s->plan.grid[0]);
}

/* A persistent grid of single blocks (plan.persistent_blocks: layernorm's DT_LN_PERSIST):
 * no more blocks than stay resident at once (cuOccupancyMaxActiveBlocksPerMultiprocessor
 * times the SMs; the plan assumed 2048 threads an SM, registers may allow fewer). The
 * plan's grid stays where the query fails; the kernel takes any grid. */
static void persistent_blocks_fit(cuda_state *s) {
    int n = 0;
    if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, s->fn, (int)s->plan.block[0],
                                                    s->plan.shared_bytes) != CUDA_SUCCESS ||
        n <= 0)
        return;
    const unsigned resident = (unsigned)n * (unsigned)g_cuda.sm_count;
    if (resident >= s->plan.grid[0]) return;
    s->plan.grid[0] = resident;
    size_t at = strlen(s->plan.summary);
    snprintf(s->plan.summary + at, sizeof s->plan.summary - at, " resident-grid=%u (%d an SM)",
             resident, n);
}

/* The implementation line and the one source record of a user kernel. */
static void user_info(cuda_state *s, int hit, int regs, int local_bytes, int static_smem,
                      int capture_sources, dt_prepare_info *info) {
    const char *how = s->kfile.kind == DT_KDIR_CU    ? "NVRTC"
                      : s->kfile.kind == DT_KDIR_PTX ? "driver JIT of PTX"
                                                     : "cubin as is";
    snprintf(info->implementation, sizeof info->implementation,
             "%.200s entry=%s; %s, %s regs=%d local=%dB smem=%dB; cache=%s; src=--kernel-dir %.100s",
             s->plan.summary, s->plan.kernel_name, how, g_cuda.arch, regs, local_bytes,
             static_smem, s->kfile.kind == DT_KDIR_CU ? (hit == 2 ? "disk" : hit ? "hit" : "miss") : "none",
             g_kernel_dir);
    info->nsources = 1;
    dt_source_record *r = &info->sources[0];
    snprintf(r->name, sizeof r->name, "%s", s->kfile.name);
    dt_kdir_sha256(s->texts[0], s->ktext_len, r->sha256);
    size_t o = 0;
    r->options[0] = 0;
    for (int j = 0; j < s->plan.nopts && o + 1 < sizeof r->options; j++)
        o += (size_t)snprintf(r->options + o, sizeof r->options - o, "%s%s", j ? " " : "",
                              s->plan.opts[j]);
    r->text = capture_sources && s->kfile.kind != DT_KDIR_CUBIN ? s->texts[0] : NULL;
}

static dt_status cuda_prepare(void **state, const dt_case_layout *L, uint8_t *host_base,
                              int capture_sources, dt_prepare_info *info, dt_err *err) {
    *state = NULL;
    memset(info, 0, sizeof *info);
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    cuda_state *s = dt_xcalloc(1, sizeof *s);
    s->L = L;
    s->host = host_base;
    int from_dir[2] = {0, 0};
    int hit = 0;
    int64_t t0 = dt_now_ns();
    if (g_kernel_dir[0]) {
        if ((st = user_module(s, L, &hit, err)) != DT_OK) goto fail;
        goto loaded;
    }

    st = dt_cuda_plan_make(L, g_cuda.arch, g_cuda.sm_count, &s->plan, err);
    if (st != DT_OK) goto fail;
    st = dt_cuda_source_load(s->plan.source_name, &s->texts[0], &from_dir[0], err);
    if (st != DT_OK) goto fail;
    st = dt_cuda_source_load(DT_CUDA_COMMON_HEADER, &s->texts[1], &from_dir[1], err);
    if (st != DT_OK) goto fail;
    if ((s->plant_fraction = plant_fraction(L->op)) > 0) plant_source(&s->texts[0]);

    /* compile (or find in the cache) and load */
    t0 = dt_now_ns();
    st = cached_module(s, s->plan.source_name, s->texts[0], s->texts[1], s->plan.kernel_name,
                       &hit, err);
    if (st != DT_OK) goto fail;
    CU_RUN(cuModuleGetFunction(&s->fn, s->module, s->plan.kernel_name), err, st, fail,
           s->plan.kernel_name);
loaded:
    info->compile_ms = (double)(dt_now_ns() - t0) / 1e6;
    /* register use and spills (local memory), for the implementation line */
    int regs = -1, local_bytes = -1, static_smem = -1;
    cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, s->fn);
    cuFuncGetAttribute(&local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, s->fn);
    cuFuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, s->fn);
    if (s->plan.shared_bytes > 48 * 1024) /* gemm wg1: opt in to the large dynamic size */
        CU_RUN(cuFuncSetAttribute(s->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  (int)s->plan.shared_bytes),
               err, st, fail, s->plan.kernel_name);
    if (s->plan.persistent_cluster > 1) persistent_grid_fit(s);
    if (s->plan.persistent_blocks) persistent_blocks_fit(s);

    /* allocate the device mirror and the stream */
    t0 = dt_now_ns();
    CU_RUN(cuMemAlloc(&s->dbase, (size_t)L->total_bytes), err, st, fail, "alloc");
    if (s->dbase % 256 != 0) {
        st = dt_fail(err, DT_EDEVICE, "cuMemAlloc returned a base not 256-byte aligned");
        goto fail;
    }
    CU_RUN(cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING), err, st, fail, "alloc");
    info->alloc_ms = (double)(dt_now_ns() - t0) / 1e6;
    host_register(s); /* not in alloc_ms: its time is in host_note */

    for (int b = 0; b < L->nbuffers; b++) {
        s->args[b] = s->dbase + (CUdeviceptr)L->buf[b].data_offset;
        s->params[b] = &s->args[b];
    }
    if (s->plan.ntma > 0) {
        st = encode_tensor_maps(s, err);
        if (st != DT_OK) goto fail;
    }

    snprintf(info->output_policy, sizeof info->output_policy, "preallocated");
    if (g_kernel_dir[0]) {
        if (s->kfile.kind != DT_KDIR_CU) user_params(s, L);
        user_info(s, hit, regs, local_bytes, static_smem, capture_sources, info);
        host_note_append(s, info);
        *state = s;
        return DT_OK;
    }
    snprintf(info->implementation, sizeof info->implementation,
             "%s; %s regs=%d local=%dB smem=%dB; cache=%s; src=%s", s->plan.summary,
             g_cuda.arch, regs, local_bytes, static_smem, hit == 2 ? "disk" : hit ? "hit" : "miss",
             from_dir[0] || from_dir[1] ? "DUALTIME_KERNEL_DIR" : "embedded");
    if (s->plant_fraction > 0) {
        size_t at = strlen(info->implementation);
        snprintf(info->implementation + at, sizeof info->implementation - at,
                 "; PLANTED SLOWDOWN x%.3g (DUALTIME_PLANT_SLOWDOWN, tests only)",
                 1 + s->plant_fraction);
    }
    info->nsources = 2;
    for (int i = 0; i < 2; i++) {
        dt_source_record *r = &info->sources[i];
        snprintf(r->name, sizeof r->name, "%s", i == 0 ? s->plan.source_name : DT_CUDA_COMMON_HEADER);
        sha256_text(s->texts[i], r->sha256);
        size_t o = 0;
        r->options[0] = 0;
        for (int j = 0; j < s->plan.nopts && o + 1 < sizeof r->options; j++)
            o += (size_t)snprintf(r->options + o, sizeof r->options - o, "%s%s", j ? " " : "",
                                  s->plan.opts[j]);
        r->text = capture_sources ? s->texts[i] : NULL;
    }
    host_note_append(s, info);
    *state = s;
    return DT_OK;
fail:
    cuda_release(s);
    return st;
}

static dt_status cuda_upload(void *state, double *ms, dt_err *err) {
    cuda_state *s = state;
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    int64_t t0 = dt_now_ns();
    CU_RUN(cuMemcpyHtoDAsync(s->dbase, s->host, (size_t)s->L->total_bytes, s->stream), err, st,
           out, "upload");
    CU_RUN(cuStreamSynchronize(s->stream), err, st, out, "upload");
    *ms = (double)(dt_now_ns() - t0) / 1e6;
out:
    return st;
}

/* The empty kernel: the launch+sync floors (ceilings, cuda_floor). */
static const char k_empty_kernel[] = "extern \"C\" __global__ void dt_empty() {}\n";

/* Compiles the one-kernel source src (no specialization) with NVRTC for this device and
 * loads it: *mod (the caller unloads it) and its function `name`. */
static dt_status load_tiny_kernel(const char *name, const char *src, CUmodule *mod,
                                  CUfunction *fn, dt_err *err) {
    dt_cuda_plan plan;
    memset(&plan, 0, sizeof plan);
    snprintf(plan.kernel_name, sizeof plan.kernel_name, "%s", name);
    snprintf(plan.opts[0], sizeof plan.opts[0], "--gpu-architecture=%s", g_cuda.arch);
    plan.nopts = 1;
    char file[80], *image = NULL;
    snprintf(file, sizeof file, "%s.cu", name);
    size_t image_bytes = 0;
    dt_status st = dt_cuda_nvrtc_compile(file, src, NULL, &plan, &image, &image_bytes, err);
    if (st != DT_OK) return st;
    CU_RUN(cuModuleLoadData(mod, image), err, st, out, name);
    CU_RUN(cuModuleGetFunction(fn, *mod, name), err, st, out, name);
out:
    free(image);
    return st;
}

/* sync; t0; reps launches of fn on the case's stream; sync; t1 -> *host_ns. Both syncs
 * are device-wide (cuCtxSynchronize, docs/anti-cheat.md "cheat.side_stream"): no work of
 * any stream of the context is left outside the window, and a fault of the last launch
 * shows at the closing sync. */
static dt_status launch_timed(cuda_state *s, CUfunction fn, const unsigned grid[3],
                              const unsigned block[3], unsigned shared_bytes, void **params,
                              const char *name, int64_t reps, int64_t *host_ns, dt_err *err) {
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    CU_RUN(cuCtxSynchronize(), err, st, out, name);
    int64_t t0 = dt_now_ns();
    for (int64_t i = 0; i < reps; i++)
        CU_RUN(cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                              shared_bytes, s->stream, params, NULL),
               err, st, out, name);
    CU_RUN(cuCtxSynchronize(), err, st, out, name);
    *host_ns = dt_now_ns() - t0;
out:
    return st;
}

static dt_status cuda_run(void *state, int64_t reps, int64_t *host_ns, dt_err *err) {
    cuda_state *s = state;
    const dt_cuda_plan *p = &s->plan;
    dt_status st = s->plant_fraction > 0 && !s->plant_set ? plant_calibrate(s, err) : DT_OK;
    if (st != DT_OK) return st;
    st = launch_timed(s, s->fn, p->grid, p->block, p->shared_bytes, s->params,
                                p->kernel_name, reps, host_ns, err);
    if (st == DT_OK) s->warm = 1;
    return st;
}

/* The empty kernel on the case's stream (loaded once per process, with the context). */
static dt_status cuda_floor(void *state, int64_t reps, int64_t *host_ns, dt_err *err) {
    static const unsigned one[3] = {1, 1, 1};
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    if (!g_cuda.empty_fn) {
        st = load_tiny_kernel("dt_empty", k_empty_kernel, &g_cuda.empty_mod, &g_cuda.empty_fn,
                              err);
        if (st != DT_OK) return st;
    }
    return launch_timed(state, g_cuda.empty_fn, one, one, 0, NULL, "dt_empty", reps, host_ns,
                        err);
}

/* upload / download of byte ranges only (the anti-cheat's checks by digest: the output's
 * slot), on the case's stream. */
static dt_status cuda_copy_ranges(void *state, int to_device, const int64_t (*r)[2], int n,
                                  double *ms, dt_err *err) {
    cuda_state *s = state;
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    const char *what = to_device ? "upload" : "download";
    int64_t t0 = dt_now_ns();
    for (int i = 0; i < n; i++) {
        if (r[i][1] == 0) continue;
        if (to_device)
            CU_RUN(cuMemcpyHtoDAsync(s->dbase + (CUdeviceptr)r[i][0], s->host + r[i][0],
                                     (size_t)r[i][1], s->stream),
                   err, st, out, what);
        else
            CU_RUN(cuMemcpyDtoHAsync(s->host + r[i][0], s->dbase + (CUdeviceptr)r[i][0],
                                     (size_t)r[i][1], s->stream),
                   err, st, out, what);
    }
    CU_RUN(cuStreamSynchronize(s->stream), err, st, out, what);
    *ms = (double)(dt_now_ns() - t0) / 1e6;
out:
    return st;
}

/* dt_arena_digest (src/data/dt_arena.h, "dt-mix64-1") on the device: a grid-stride sum of
 * the mixed words, each warp's sum added atomically (mod 2^64: the order is free). */
static const char k_digest_kernel[] =
    "extern \"C\" __global__ void dt_digest(const unsigned long long *p, long long nw,\n"
    "                                       long long w0, unsigned long long *out) {\n"
    "    unsigned long long s = 0;\n"
    "    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < nw;\n"
    "         j += (long long)gridDim.x * blockDim.x) {\n"
    "        unsigned long long x = p[j] ^ ((unsigned long long)(w0 + j) * 0xD1B54A32D192ED03ull);\n"
    "        x += 0x9E3779B97F4A7C15ull;\n"
    "        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;\n"
    "        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;\n"
    "        s += x ^ (x >> 31);\n"
    "    }\n"
    "    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);\n"
    "    if ((threadIdx.x & 31) == 0) atomicAdd(out, s);\n"
    "}\n";
#define DT_DIGEST_MAX_RANGES 16

static dt_status cuda_digest(void *state, const int64_t (*r)[2], int n, uint64_t *outv,
                             dt_err *err) {
    cuda_state *s = state;
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    if (n > DT_DIGEST_MAX_RANGES)
        return dt_fail(err, DT_EINVAL, "digest: at most %d ranges, got %d", DT_DIGEST_MAX_RANGES, n);
    if (!g_cuda.digest_fn) {
        st = load_tiny_kernel("dt_digest", k_digest_kernel, &g_cuda.digest_mod, &g_cuda.digest_fn,
                              err);
        if (st != DT_OK) return st;
        CU_RUN(cuMemAlloc(&g_cuda.digest_out, DT_DIGEST_MAX_RANGES * sizeof(uint64_t)), err, st,
               out, "digest");
    }
    CU_RUN(cuMemsetD8Async(g_cuda.digest_out, 0, (size_t)n * sizeof(uint64_t), s->stream), err,
           st, out, "digest");
    for (int i = 0; i < n; i++) {
        long long nw = (long long)(r[i][1] / 8), w0 = (long long)(r[i][0] / 8);
        if (nw == 0) continue;
        CUdeviceptr p = s->dbase + (CUdeviceptr)r[i][0];
        CUdeviceptr o = g_cuda.digest_out + (CUdeviceptr)(i * sizeof(uint64_t));
        void *params[] = {&p, &nw, &w0, &o};
        long long blocks = (nw + 255) / 256;
        if (blocks > 4096) blocks = 4096; /* a few waves; the grid strides over the rest */
        CU_RUN(cuLaunchKernel(g_cuda.digest_fn, (unsigned)blocks, 1, 1, 256, 1, 1, 0, s->stream,
                              params, NULL),
               err, st, out, "digest");
    }
    CU_RUN(cuMemcpyDtoHAsync(outv, g_cuda.digest_out, (size_t)n * sizeof(uint64_t), s->stream),
           err, st, out, "digest");
    CU_RUN(cuStreamSynchronize(s->stream), err, st, out, "digest");
out:
    return st;
}

static dt_status cuda_download(void *state, double *ms, dt_err *err) {
    cuda_state *s = state;
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    int64_t t0 = dt_now_ns();
    CU_RUN(cuMemcpyDtoHAsync(s->host, s->dbase, (size_t)s->L->total_bytes, s->stream), err, st,
           out, "download");
    CU_RUN(cuStreamSynchronize(s->stream), err, st, out, "download");
    *ms = (double)(dt_now_ns() - t0) / 1e6;
out:
    return st;
}

/* The case's launch for the replay module: rotatable unless the parameters hold tensor
 * maps (gemm wg1). */
static dt_cuda_launch case_launch(cuda_state *s) {
    const dt_cuda_plan *p = &s->plan;
    dt_cuda_launch ln = {s->fn, {p->grid[0], p->grid[1], p->grid[2]},
                         {p->block[0], p->block[1], p->block[2]}, p->shared_bytes, s->stream,
                         s->params, p->ntma == 0};
    return ln;
}

static dt_status cuda_cache(void *state, int64_t copies, int64_t flush_bytes, int64_t *used,
                            dt_err *err) {
    cuda_state *s = state;
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    dt_cuda_launch ln = case_launch(s);
    st = dt_cuda_replay_cache(&s->replay, s->L, s->dbase, &ln, copies, flush_bytes, err);
    *used = st == DT_OK ? s->replay.use_copies : 0;
    return st;
}

/* One device-timing region (include/dualtime/dt_timing.h) around reps launches on the
 * case's stream: probe 0 = control (events), 1 = CUPTI probe (concurrent kernel records),
 * 2 = CUPTI probe (serialized kernel records). flags & DT_DEVICE_HOLD: a held window; the
 * case's kernel is launched once first if it never ran in this process (its module is
 * loaded at prepare; the worker also asks the driver for eager module loading), so no
 * first-launch work can synchronize inside the hold. A hold that times out fails the
 * sample with the helper's reason. */
static dt_status cuda_device(void *state, int probe, int64_t reps, int64_t capacity, int flags,
                             struct dt_timing_result *res, dt_err *err) {
    cuda_state *s = state;
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    const dt_cuda_plan *p = &s->plan;
    if ((flags & DT_DEVICE_HOLD) && !s->warm) {
        int64_t ns = 0;
        st = cuda_run(s, 1, &ns, err);
        if (st != DT_OK) return st;
    }
    dt_cuda_launch ln = case_launch(s);
    CUgraphExec graph = NULL; /* graph replay: made (and replayed once) before the window */
    if ((flags & DT_DEVICE_GRAPH) && probe)
        return dt_fail(err, DT_EINVAL, "a graph replay is a control window, not a probe");
    if ((flags & DT_DEVICE_GRAPH) &&
        (st = dt_cuda_replay_graph(&s->replay, &ln, reps, &graph, err)) != DT_OK)
        return st;
    CU_RUN(cuStreamSynchronize(s->stream), err, st, out, p->kernel_name);
    /* cold cache: the flush, outside the window (nothing when warm) */
    if ((st = dt_cuda_replay_flush(&s->replay, &ln, err)) != DT_OK) return st;
    if (dt_timing_abi_version() != DT_TIMING_ABI_VERSION)
        return dt_fail(err, DT_EDEVICE, "timing helper ABI %u, expected %u",
                       dt_timing_abi_version(), DT_TIMING_ABI_VERSION);
    if ((flags & DT_DEVICE_HOLD) && !dt_timing_hold(s->stream))
        return dt_fail(err, DT_EDEVICE, "timing hold: %s", dt_timing_last_error());
    int began = probe ? dt_timing_begin_probe(s->stream, (uint32_t)(capacity > 0 ? capacity : 1),
                                              probe == 2 ? DT_TIMING_PROBE_SERIALIZED
                                                         : DT_TIMING_PROBE_CONCURRENT)
                      : dt_timing_begin_control(s->stream);
    if (!began)
        return dt_fail(err, DT_EDEVICE, "timing begin: %s", dt_timing_last_error());
    s->decomp_call_ns = s->decomp_return_ns = 0;
    int64_t call_ns = dt_now_ns(); /* DT_DEVICE_DECOMP: the call starts */
    for (int64_t i = 0; i < (graph ? 1 : reps); i++) {
        CUresult r = graph ? cuGraphLaunch(graph, s->stream)
                           : cuLaunchKernel(s->fn, p->grid[0], p->grid[1], p->grid[2],
                                            p->block[0], p->block[1], p->block[2],
                                            p->shared_bytes, s->stream,
                                            dt_cuda_replay_params(&s->replay, &ln, i), NULL);
        char t[DT_CUDA_CHECK_TEXT_LEN];
        if (!dt_cu_check(r, "cuLaunchKernel", __FILE__, __LINE__, t, sizeof t)) {
            dt_timing_result junk;
            dt_timing_end(&junk); /* closes the region; its error is secondary */
            return dt_fail(err, DT_EDEVICE, "%s (kernel %s, in a timing region)", t,
                           p->kernel_name);
        }
    }
    if (flags & DT_DEVICE_PLANT_SYNC) /* the planted host synchronization (tests) */
        CU_RUN(cuCtxSynchronize(), err, st, planted, p->kernel_name);
    if (flags & DT_DEVICE_DECOMP) { /* the caller sees the call complete */
        CU_RUN(cuStreamSynchronize(s->stream), err, st, planted, p->kernel_name);
        s->decomp_return_ns = dt_now_ns();
        s->decomp_call_ns = call_ns;
    }
planted:
    if (!dt_timing_end(res)) {
        if (st != DT_OK) return st;
        return dt_fail(err, DT_EDEVICE, "timing end: %s", dt_timing_last_error());
    }
    if (st != DT_OK) return st;
    if ((flags & DT_DEVICE_HOLD) && !res->held)
        return dt_fail(err, DT_EDEVICE, "timing end: the region was not held");
    CU_RUN(cuCtxSynchronize(), err, st, out, p->kernel_name);
out:
    return st;
}

/* The host bracket of the last DT_DEVICE_DECOMP region: 1 with both readings, else 0. */
static int cuda_decomp_bracket(void *state, int64_t *call_start_ns, int64_t *sync_return_ns) {
    const cuda_state *s = state;
    if (!s || !s->decomp_call_ns) return 0;
    *call_start_ns = s->decomp_call_ns;
    *sync_return_ns = s->decomp_return_ns;
    return 1;
}

/* ---- ceilings ------------------------------------------------------------------- */

#define CEIL_COPY_MAX_BYTES ((size_t)1 << 30) /* per buffer; min(1 GiB, free/4) */
#define CEIL_COPY_WARMUP 2
#define CEIL_COPY_REPS 10
#define CEIL_SYNC_WARMUP 20
#define CEIL_SYNC_REPS 200
#define CEIL_QUEUE_LAUNCHES 1000
#define CEIL_QUEUE_REPS 5

/* the touch floor: the smallest kernel that reads and writes memory, <<<1,32>>> moves
 * 32 float4 = 512 bytes each way */
#define CEIL_TOUCH_THREADS 32
#define CEIL_TOUCH_BUF_BYTES ((size_t)4096)
static const char k_touch_kernel[] =
    "extern \"C\" __global__ void dt_touch(const float4 *src, float4 *dst) "
    "{ dst[threadIdx.x] = src[threadIdx.x]; }\n";

/* Host time of one synchronized launch of fn <<<1, threads>>>: sync; t0; launch;
 * cuStreamSynchronize; t1, median of CEIL_SYNC_REPS after CEIL_SYNC_WARMUP, in ns. */
static dt_status ceil_single_launches(CUfunction fn, unsigned threads, CUstream stream,
                                      void **args, const char *what, double *median_ns,
                                      dt_err *err) {
    double t[CEIL_SYNC_REPS];
    dt_status st = DT_OK;
    for (int r = 0; r < CEIL_SYNC_WARMUP + CEIL_SYNC_REPS; r++) {
        CU_RUN(cuStreamSynchronize(stream), err, st, out, what);
        int64_t t0 = dt_now_ns();
        CU_RUN(cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, stream, args, NULL), err, st, out,
               what);
        CU_RUN(cuStreamSynchronize(stream), err, st, out, what);
        double d = (double)(dt_now_ns() - t0);
        if (r >= CEIL_SYNC_WARMUP) t[r - CEIL_SYNC_WARMUP] = d;
    }
    *median_ns = dt_stats_median(t, CEIL_SYNC_REPS);
out:
    return st;
}

/* The held floors: held control regions (dt_timing_hold + begin_control, see
 * include/dualtime/dt_timing.h) around 1 launch and around CEIL_HELD_BATCH launches. */
#define CEIL_HELD_WARMUP 5
#define CEIL_HELD_REPS 50
#define CEIL_HELD_BATCH 64

/* Event interval of held control regions around `launches` launches of fn
 * <<<1, threads>>> on stream, per launch: median of CEIL_HELD_REPS after
 * CEIL_HELD_WARMUP, in ns. A region that is not held (a hold timeout) fails. */
static dt_status ceil_held_launches(CUfunction fn, unsigned threads, CUstream stream,
                                    void **args, int launches, const char *what,
                                    double *median_ns, dt_err *err) {
    double t[CEIL_HELD_REPS];
    dt_status st = DT_OK;
    for (int r = 0; r < CEIL_HELD_WARMUP + CEIL_HELD_REPS; r++) {
        CU_RUN(cuStreamSynchronize(stream), err, st, out, what);
        if (!dt_timing_hold(stream) || !dt_timing_begin_control(stream))
            return dt_fail(err, DT_EDEVICE, "held %s: %s", what, dt_timing_last_error());
        CUresult lr = CUDA_SUCCESS;
        for (int i = 0; i < launches && lr == CUDA_SUCCESS; i++)
            lr = cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, stream, args, NULL);
        dt_timing_result res;
        int ended = dt_timing_end(&res); /* also when a launch failed: closes the region */
        char t_err[DT_CUDA_CHECK_TEXT_LEN];
        if (!dt_cu_check(lr, "cuLaunchKernel", __FILE__, __LINE__, t_err, sizeof t_err)) {
            note_sticky(lr, what);
            return dt_fail(err, DT_EDEVICE, "%s (held %s)", t_err, what);
        }
        if (!ended || !res.held)
            return dt_fail(err, DT_EDEVICE, "held %s: %s", what,
                           ended ? "the region was not held" : dt_timing_last_error());
        g_cuda.hold_method = res.hold_method;
        if (r >= CEIL_HELD_WARMUP) t[r - CEIL_HELD_WARMUP] = res.stream_ns / launches;
    }
    *median_ns = dt_stats_median(t, CEIL_HELD_REPS);
out:
    return st;
}

/* The four held floors into out (all or none: on failure they stay 0). */
static dt_status ceil_held_floors(CUfunction empty, CUfunction touch, CUstream stream,
                                  void **touch_args, dt_ceilings *out, dt_err *err) {
    double ns[4] = {0, 0, 0, 0};
    dt_status st = ceil_held_launches(empty, 1, stream, NULL, 1, "dt_empty", &ns[0], err);
    if (st == DT_OK)
        st = ceil_held_launches(empty, 1, stream, NULL, CEIL_HELD_BATCH, "dt_empty", &ns[1], err);
    if (st == DT_OK)
        st = ceil_held_launches(touch, CEIL_TOUCH_THREADS, stream, touch_args, 1, "dt_touch",
                                &ns[2], err);
    if (st == DT_OK)
        st = ceil_held_launches(touch, CEIL_TOUCH_THREADS, stream, touch_args, CEIL_HELD_BATCH,
                                "dt_touch", &ns[3], err);
    for (int i = 0; st == DT_OK && i < 4; i++)
        if (!(ns[i] > 0)) st = dt_fail(err, DT_EDEVICE, "held floor %d not measurable", i);
    if (st != DT_OK) return st;
    out->held_launch_floor_us = ns[0] / 1e3;
    out->held_launch_batch_floor_us = ns[1] / 1e3;
    out->held_touch_floor_us = ns[2] / 1e3;
    out->held_touch_batch_floor_us = ns[3] / 1e3;
    return DT_OK;
}

/* Copy bandwidth: cuMemcpyDtoDAsync of min(1 GiB, free/4) bytes between two device
 * buffers, each copy between two events on a non-blocking stream, median of 10 after 2
 * warm-ups, counting bytes read + bytes written (2 x size). Launch floors of the empty
 * kernel <<<1,1>>>: single = sync; t0; launch; cuStreamSynchronize; t1 (host clock),
 * median of 200 after 20 warm-ups; queue = 1000 launches back to back then one sync,
 * per launch, median of 5. Touch floor: the same single measurement of dt_touch
 * <<<1,32>>> (512 bytes read, 512 written between two 4 KiB buffers). Held floors
 * (optional: a failure leaves them out and says why in method): the event interval of
 * a held window around one launch and per launch of 64, of each of the two kernels,
 * median of 50 after 5 (ceil_held_launches). Everything allocated here is freed before
 * returning. */
/* The copy ceiling: device-to-device copies of up to CEIL_COPY_MAX_BYTES (a quarter of
 * the free memory at most) between events on stream, median of CEIL_COPY_REPS after
 * CEIL_COPY_WARMUP; fills out's copy fields and *bytes_out (the buffers are freed). */
static dt_status ceil_copy(CUstream stream, CUevent ev0, CUevent ev1, dt_ceilings *out,
                           size_t *bytes_out, dt_err *err) {
    dt_status st = DT_OK;
    CUdeviceptr src = 0, dst = 0;
    double t[CEIL_SYNC_REPS];
    size_t free_b = 0, total_b = 0;
    CU_RUN(cuMemGetInfo(&free_b, &total_b), err, st, done, "ceilings");
    size_t bytes = free_b / 4 < CEIL_COPY_MAX_BYTES ? free_b / 4 : CEIL_COPY_MAX_BYTES;
    bytes &= ~(size_t)((1 << 20) - 1); /* whole MiB */
    if (bytes < ((size_t)1 << 20)) {
        st = dt_fail(err, DT_EDEVICE, "ceilings: only %zu bytes of device memory free", free_b);
        goto done;
    }
    CU_RUN(cuMemAlloc(&src, bytes), err, st, done, "ceilings copy");
    CU_RUN(cuMemAlloc(&dst, bytes), err, st, done, "ceilings copy");
    CU_RUN(cuMemsetD8Async(src, 0x3c, bytes, stream), err, st, done, "ceilings copy");
    CU_RUN(cuMemsetD8Async(dst, 0, bytes, stream), err, st, done, "ceilings copy");
    for (int r = 0; r < CEIL_COPY_WARMUP + CEIL_COPY_REPS; r++) {
        CU_RUN(cuEventRecord(ev0, stream), err, st, done, "ceilings copy");
        CU_RUN(cuMemcpyDtoDAsync(dst, src, bytes, stream), err, st, done, "ceilings copy");
        CU_RUN(cuEventRecord(ev1, stream), err, st, done, "ceilings copy");
        CU_RUN(cuEventSynchronize(ev1), err, st, done, "ceilings copy");
        float ms = 0;
        CU_RUN(cuEventElapsedTime(&ms, ev0, ev1), err, st, done, "ceilings copy");
        if (r >= CEIL_COPY_WARMUP) t[r - CEIL_COPY_WARMUP] = (double)ms;
    }
    double copy_ms = dt_stats_median(t, CEIL_COPY_REPS);
    double g[CEIL_COPY_REPS]; /* per-copy GB/s, for the ceiling's own spread */
    for (int r = 0; r < CEIL_COPY_REPS; r++) g[r] = t[r] > 0 ? 2.0 * (double)bytes / (t[r] * 1e6) : 0;
    out->copy_gbps_iqr = dt_stats_summarize(g, CEIL_COPY_REPS).iqr;
    if (!(copy_ms > 0)) {
        st = dt_fail(err, DT_EDEVICE, "ceilings: copy time not measurable (%g ms)", copy_ms);
        goto done;
    }
    out->copy_bytes = (int64_t)bytes;
    out->copy_gbps = 2.0 * (double)bytes / (copy_ms * 1e6); /* bytes per ns = GB/s */
    *bytes_out = bytes;

done:
    if (src) cuMemFree(src);
    if (dst) cuMemFree(dst);
    return st;
}

static dt_status cuda_ceilings(dt_ceilings *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    CUstream stream = NULL;
    CUevent ev0 = NULL, ev1 = NULL;
    CUmodule mod = NULL, tmod = NULL;
    CUfunction fn = NULL, tfn = NULL;
    CUdeviceptr tsrc = 0, tdst = 0;
    double t[CEIL_SYNC_REPS];

    CU_RUN(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), err, st, done, "ceilings");
    CU_RUN(cuEventCreate(&ev0, CU_EVENT_DEFAULT), err, st, done, "ceilings");
    CU_RUN(cuEventCreate(&ev1, CU_EVENT_DEFAULT), err, st, done, "ceilings");
    size_t bytes = 0;
    st = ceil_copy(stream, ev0, ev1, out, &bytes, err);
    if (st != DT_OK) goto done;

    /* the empty kernel */
    st = load_tiny_kernel("dt_empty", k_empty_kernel, &mod, &fn, err);
    if (st != DT_OK) goto done;
    double sync_ns = 0;
    st = ceil_single_launches(fn, 1, stream, NULL, "dt_empty", &sync_ns, err);
    if (st != DT_OK) goto done;
    for (int r = 0; r < 1 + CEIL_QUEUE_REPS; r++) { /* the first is a warm-up */
        CU_RUN(cuStreamSynchronize(stream), err, st, done, "dt_empty");
        int64_t t0 = dt_now_ns();
        for (int i = 0; i < CEIL_QUEUE_LAUNCHES; i++)
            CU_RUN(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL), err, st, done,
                   "dt_empty");
        CU_RUN(cuStreamSynchronize(stream), err, st, done, "dt_empty");
        if (r >= 1) t[r - 1] = (double)(dt_now_ns() - t0) / CEIL_QUEUE_LAUNCHES;
    }
    double queue_ns = dt_stats_median(t, CEIL_QUEUE_REPS);
    if (!(sync_ns > 0) || !(queue_ns > 0)) {
        st = dt_fail(err, DT_EDEVICE, "ceilings: launch floor not measurable");
        goto done;
    }

    /* the touch kernel: one block reads 512 B and writes 512 B */
    st = load_tiny_kernel("dt_touch", k_touch_kernel, &tmod, &tfn, err);
    if (st != DT_OK) goto done;
    CU_RUN(cuMemAlloc(&tsrc, CEIL_TOUCH_BUF_BYTES), err, st, done, "dt_touch");
    CU_RUN(cuMemAlloc(&tdst, CEIL_TOUCH_BUF_BYTES), err, st, done, "dt_touch");
    CU_RUN(cuMemsetD8Async(tsrc, 0x3c, CEIL_TOUCH_BUF_BYTES, stream), err, st, done, "dt_touch");
    CU_RUN(cuMemsetD8Async(tdst, 0, CEIL_TOUCH_BUF_BYTES, stream), err, st, done, "dt_touch");
    void *targs[] = {&tsrc, &tdst};
    double touch_ns = 0;
    st = ceil_single_launches(tfn, CEIL_TOUCH_THREADS, stream, targs, "dt_touch", &touch_ns, err);
    if (st != DT_OK) goto done;
    if (!(touch_ns > 0)) {
        st = dt_fail(err, DT_EDEVICE, "ceilings: touch floor not measurable");
        goto done;
    }
    out->launch_sync_floor_us = sync_ns / 1e3;
    out->launch_queue_floor_us = queue_ns / 1e3;
    out->launch_sync_touch_floor_us = touch_ns / 1e3;
    char held_note[400];
    dt_err herr = {{0}};
    if (ceil_held_floors(fn, tfn, stream, targs, out, &herr) == DT_OK)
        snprintf(held_note, sizeof held_note,
                 "; held floors: event interval of a held window (dt_timing_hold, %s) "
                 "around 1 launch and per launch of %d, of dt_empty and dt_touch, median of "
                 "%d after %d",
                 dt_timing_hold_method_name(g_cuda.hold_method), CEIL_HELD_BATCH,
                 CEIL_HELD_REPS, CEIL_HELD_WARMUP);
    else
        snprintf(held_note, sizeof held_note, "; held floors unavailable: %.300s", herr.msg);
    snprintf(out->method, sizeof out->method,
             "cuda %s: cuMemcpyDtoDAsync of %zu MiB between events, median of %d after %d "
             "warm-ups, bytes read + written; floors: empty NVRTC kernel <<<1,1>>>, "
             "sync;t0;launch;cuStreamSynchronize;t1 median of %d, and %d launches then one "
             "sync per launch, median of %d; touch floor: the same single measurement of "
             "dt_touch <<<1,%d>>> (float4 dst[i] = src[i], %d B read + %d B written)%s",
             g_cuda.arch, bytes >> 20, CEIL_COPY_REPS, CEIL_COPY_WARMUP, CEIL_SYNC_REPS,
             CEIL_QUEUE_LAUNCHES, CEIL_QUEUE_REPS, CEIL_TOUCH_THREADS, CEIL_TOUCH_THREADS * 16,
             CEIL_TOUCH_THREADS * 16, held_note);
done:
    if (mod) cuModuleUnload(mod);
    if (tmod) cuModuleUnload(tmod);
    if (tsrc) cuMemFree(tsrc);
    if (tdst) cuMemFree(tdst);
    if (ev0) cuEventDestroy(ev0);
    if (ev1) cuEventDestroy(ev1);
    if (stream) cuStreamDestroy(stream);
    return st;
}

/* The FLOP ceilings: FP32 FFMA chains (backend_cuda_flops.c); tensor-core ceilings come
 * from the PyTorch worker (cuBLAS), not from here. A fault of the kernel is noted. */
static dt_status cuda_flop_ceilings(dt_flop_ceilings *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    dt_status st = cuda_init(err);
    if (st != DT_OK) return st;
    st = dt_cuda_ffma_ceiling(g_cuda.arch, g_cuda.sm_count, out, err);
    if (st != DT_OK) note_sticky(cuCtxSynchronize(), "dt_ceil_ffma");
    return st;
}

static int cuda_broken(void) { return g_cuda.context_lost; }

static const dt_backend k_cuda_backend = {
    .name = "cuda",
    .available = cuda_available,
    .describe = cuda_describe,
    .prepare = cuda_prepare,
    .upload = cuda_upload,
    .run = cuda_run,
    .download = cuda_download,
    .copy_ranges = cuda_copy_ranges,
    .digest = cuda_digest,
    .device = cuda_device,
    .decomp_bracket = cuda_decomp_bracket,
    .cache = cuda_cache,
    .release = cuda_release,
    .ceilings = cuda_ceilings,
    .flop_ceilings = cuda_flop_ceilings,
    .floor = cuda_floor,
    .broken = cuda_broken,
};

__attribute__((visibility("default"))) const dt_backend *dt_cuda_backend(void) {
    return &k_cuda_backend;
}
