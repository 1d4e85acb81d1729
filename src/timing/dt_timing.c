/* dt_timing.c — libdualtime_timing.so: device-timing regions for CUDA (SPEC §5).
 *
 * Implements include/dualtime/dt_timing.h. A control region is two CUDA events on the
 * caller's stream. A probe region adds CUPTI: kernel activity records (CONCURRENT_KERNEL
 * or KERNEL), launch callbacks of the driver and runtime APIs, a CLOCK_MONOTONIC
 * timestamp callback, one un-counted warm-up launch and a clock calibration; at end
 * everything CUPTI is torn down (disable, unsubscribe, cuptiFinalize) whatever the
 * outcome, and the collected data is validated by the CUDA-free logic in
 * dt_timing_logic.c. In persistent mode (dt_timing_set_persistent, for dedicated probe
 * processes) CUPTI stays attached and its activity kind enabled between regions;
 * records of launches outside a region are discarded (collecting off, or correlation id
 * below the region's floor). docs/device-timing.md says what each scope measures;
 * tests/gpu/test_timing_gpu.c proves it on a device.
 *
 * Self-contained: links libcuda and libcupti only (no jansson, no dt_core). All mutable
 * state lives in one process context, g_tm, guarded by g_tm.mu where CUPTI threads touch
 * it. Library code: never prints, never exits. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cupti.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/dt_cuda_check.h"
#include "dualtime/dt_timing.h"
#include "timing/dt_timing_hold.h"
#include "timing/dt_timing_logic.h"

#define TM_EXPORT __attribute__((visibility("default")))
#define TM_ERR_LEN 1024
#define TM_MAX_CAPACITY 65536u
#define TM_DEFAULT_BUFFER_BYTES (4u << 20)
#define TM_DEFAULT_TIMEOUT_MS 10000u
/* The calibration accepts the CUPTI clock as the host clock within this tolerance. */
#define TM_CLOCK_TOL_NS 10000.0
/* Host/CUPTI/host brackets per calibration; the tightest is kept. */
#define TM_CALIB_BRACKETS 16
/* Slack on the region's host window for kernel records (CUPTI interpolates GPU times). */
#define TM_WINDOW_SLACK_NS 1000000ull
/* The hold's watchdog timeout unless dt_timing_configure_hold says otherwise. */
#define TM_DEFAULT_HOLD_TIMEOUT_MS 1000u
/* Activity buffers kept for reuse (pre-faulted), so that a request inside a region costs
 * a list pop instead of an allocation and page faults. */
#define TM_BUFFER_POOL 8

/* The one process context of the helper. */
static struct {
    pthread_mutex_t mu;         /* guards the fields the CUPTI callbacks touch (marked *) */
    int active;                 /* a region is open (between a successful begin and end) */
    int poisoned;               /* a nested begin happened inside the open region */
    uint32_t scope;             /* dt_timing_scope of the open region */
    uint32_t probe_kind;        /* dt_timing_probe_kind of the open region */
    CUpti_ActivityKind kind;    /* CUPTI kind enabled (valid while activity_enabled) */
    CUstream stream;            /* the region's stream */
    CUcontext ctx;              /* context current at begin */
    CUevent ev_begin, ev_end;   /* the region's events (0 when not created) */
    int ev_begin_recorded;      /* the begin event was recorded */
    uint64_t host_begin_ns;     /* host clock at begin */
    dt_tl_calib cal_begin;      /* calibration at begin (probe) */
    int ts_callback;            /* the CLOCK_MONOTONIC timestamp callback was accepted
                                   (by the last attach; kept after a detach so that end
                                   can still report how its records were timed) */
    CUcontext warm_ctx;         /* context warm_fn was loaded in (NULL: none yet) */
    CUmodule warm_mod;          /* the warm-up module (an empty kernel, from PTX) */
    CUfunction warm_fn;         /* the empty kernel launched once per probe begin */
    uint32_t region_stream_id;  /* CUPTI id of the region stream, UINT32_MAX unknown */
    /* CUPTI attachment, so teardown undoes exactly what begin did. */
    int cupti_touched;          /* any CUPTI call was made: finalize at teardown */
    int activity_enabled;       /* cuptiActivityEnable succeeded */
    int subscribed;             /* cuptiSubscribe succeeded */
    CUpti_SubscriberHandle sub; /* the subscriber */
    /* Persistent mode (dt_timing_set_persistent). */
    int persistent;             /* CUPTI stays attached between probe regions */
    uint32_t persist_kind;      /* dt_timing_probe_kind to (re)attach with */
    uint64_t corr_max;          /* * largest launch correlation id seen (any time) */
    uint64_t corr_floor;        /* * records below it predate the open region */
    uint64_t discarded_before;  /* * records discarded during collection: below floor */
    /* Collection (probe). */
    int collecting;             /* * callbacks store into the arrays below */
    uint32_t capacity;          /* * slots in launches[] and records[] */
    dt_tl_launch *launches;     /* * launches stored */
    uint64_t launch_total;      /* * launches seen */
    dt_timing_kernel *records;  /* * kernel records stored (raw CUPTI timestamps) */
    uint64_t record_total;      /* * kernel records seen */
    uint64_t dropped;           /* * dropped records reported in buffer callbacks */
    uint32_t buffers_given;     /* * activity buffers handed to CUPTI this region */
    /* Results of the last successful probe. */
    uint64_t records_stored;    /* records retrievable with dt_timing_kernel_record */
    uint64_t launches_stored;   /* launches retrievable with dt_timing_launch_record */
    /* Settings (dt_timing_configure). */
    uint64_t buffer_bytes;      /* * activity buffer size */
    uint32_t max_buffers;       /* * 0 = unlimited */
    uint32_t timeout_ms;        /* end's wait for the end event */
    /* Activity buffer pool (guarded by mu). */
    uint8_t *pool[TM_BUFFER_POOL]; /* * free buffers of pool_bytes each, pages touched */
    int npool;                  /* * buffers in pool */
    uint64_t pool_bytes;        /* * their size (a configure with another size empties it) */
    /* Held windows (dt_timing_hold.c has the state machine and the watchdog). */
    dt_hold hold;               /* the process's one hold */
    int hold_ready;             /* hold initialized and its watchdog started */
    int region_held;            /* the open region engaged the hold */
    uint32_t hold_timeout_ms;   /* dt_timing_configure_hold (default 1000) */
    uint32_t hold_method_req;   /* dt_timing_hold_method asked for (0 = automatic) */
    CUcontext flag_ctx;         /* context the flag and the method were set up in */
    uint32_t *flag_host;        /* the flag: mapped pinned host memory, host pointer */
    CUdeviceptr flag_dev;       /* its device pointer */
    uint32_t hold_method;       /* method chosen in flag_ctx (dt_timing_hold_method) */
    uint32_t flag_method_req;   /* hold_method_req the choice was made under */
    CUmodule spin_mod;          /* the spin kernel's module (flag_ctx), when needed */
    CUfunction spin_fn;
    char err[TM_ERR_LEN];       /* first error since the last begin */
} g_tm = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .region_stream_id = UINT32_MAX,
    .buffer_bytes = TM_DEFAULT_BUFFER_BYTES,
    .timeout_ms = TM_DEFAULT_TIMEOUT_MS,
    .hold_timeout_ms = TM_DEFAULT_HOLD_TIMEOUT_MS,
};

_Static_assert(sizeof(dt_timing_result) == 144, "dt_timing_result is 144 bytes (ABI 2)");
_Static_assert(sizeof(dt_timing_launch) == 96, "dt_timing_launch is 96 bytes");

static void tm_hold_drop(void); /* held windows, below */

/* Per launching thread: the runtime launch in progress, so that the nested driver
 * launch callback it may trigger is folded into it instead of counted twice. */
static _Thread_local struct {
    int rt_depth;      /* runtime launch callbacks entered and not yet exited */
    uint64_t rt_index; /* index (into launch_total order) of that runtime launch */
    int drv_depth;     /* driver launch callbacks entered and not yet exited */
    uint64_t drv_index;/* index of an outermost driver launch */
} tm_tls;

static uint64_t tm_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The CUPTI timestamp callback: host CLOCK_MONOTONIC in ns. */
static uint64_t CUPTIAPI tm_timestamp_cb(void) { return tm_now_ns(); }

static void tm_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Keeps the first error since the last begin. */
static void tm_set_error(const char *fmt, ...) {
    if (g_tm.err[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_tm.err, sizeof g_tm.err, fmt, ap);
    va_end(ap);
}

/* Driver and CUPTI calls go through the one check-macro family (src/common/
 * dt_cuda_check.h): a failure keeps "file:line: call failed: NAME (code): string" as the
 * first error. 1 = ok, 0 = failed. */
static void tm_error_sink(const char *line) { tm_set_error("%s", line); }
#define TM_CU(call) DT_CUDA_OK(cu, call, tm_error_sink)
#define TM_CUPTI(call) DT_CUDA_OK(cupti, call, tm_error_sink)

/* ---- CUPTI activity buffers ------------------------------------------------------ */

/* Buffers come from a pool of pre-faulted ones (refilled by tm_buffer_completed): CUPTI
 * asks for a buffer on the launching thread when it needs one, which can be inside a
 * region; a fresh 4 MiB allocation there costs page faults in the window. */
static void CUPTIAPI tm_buffer_requested(uint8_t **buffer, size_t *size,
                                         size_t *max_num_records) {
    pthread_mutex_lock(&g_tm.mu);
    size_t bytes = (size_t)g_tm.buffer_bytes;
    int refuse = g_tm.max_buffers && g_tm.buffers_given >= g_tm.max_buffers;
    if (!refuse) g_tm.buffers_given++;
    uint8_t *b = NULL;
    if (!refuse && g_tm.npool > 0 && g_tm.pool_bytes == bytes) b = g_tm.pool[--g_tm.npool];
    pthread_mutex_unlock(&g_tm.mu);
    *max_num_records = 0;
    /* A refused buffer makes CUPTI drop records: counted and reported, never hidden. */
    if (!refuse && !b) {
        b = aligned_alloc(8, (bytes + 7) & ~(size_t)7);
        if (b) memset(b, 0, bytes); /* fault the pages in now */
    }
    *buffer = refuse ? NULL : b;
    *size = *buffer ? bytes : 0;
}

/* Returns a delivered buffer of size bytes to the pool (or frees it). */
static void tm_buffer_recycle(uint8_t *buffer, size_t size) {
    pthread_mutex_lock(&g_tm.mu);
    if (g_tm.pool_bytes != g_tm.buffer_bytes) { /* the size changed: empty the pool */
        while (g_tm.npool > 0) free(g_tm.pool[--g_tm.npool]);
        g_tm.pool_bytes = g_tm.buffer_bytes;
    }
    if (size == g_tm.pool_bytes && g_tm.npool < TM_BUFFER_POOL) {
        g_tm.pool[g_tm.npool++] = buffer;
        buffer = NULL;
    }
    pthread_mutex_unlock(&g_tm.mu);
    free(buffer);
}

static void tm_copy_kernel(dt_timing_kernel *k, const CUpti_ActivityKernel10 *a) {
    memset(k, 0, sizeof *k);
    snprintf(k->name, sizeof k->name, "%s", a->name ? a->name : "?");
    k->start_ns = a->start;
    k->end_ns = a->end;
    k->grid[0] = (uint32_t)a->gridX;
    k->grid[1] = (uint32_t)a->gridY;
    k->grid[2] = (uint32_t)a->gridZ;
    k->block[0] = (uint32_t)a->blockX;
    k->block[1] = (uint32_t)a->blockY;
    k->block[2] = (uint32_t)a->blockZ;
    k->correlation_id = a->correlationId;
    k->stream_id = a->streamId;
}

static void CUPTIAPI tm_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                         size_t size, size_t valid_size) {
    pthread_mutex_lock(&g_tm.mu);
    CUpti_Activity *rec = NULL;
    while (valid_size > 0 &&
           cuptiActivityGetNextRecord(buffer, valid_size, &rec) == CUPTI_SUCCESS) {
        if (rec->kind != CUPTI_ACTIVITY_KIND_KERNEL &&
            rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            continue;
        /* Records of work outside the region (persistent mode: untimed calls between
         * regions, delivered late) are dropped here, never stored. */
        uint64_t corr = ((const CUpti_ActivityKernel10 *)rec)->correlationId;
        if (!dt_tl_record_in_region(g_tm.collecting, g_tm.corr_floor, corr)) {
            if (g_tm.collecting) g_tm.discarded_before++;
            continue;
        }
        if (g_tm.record_total < g_tm.capacity)
            tm_copy_kernel(&g_tm.records[g_tm.record_total],
                           (const CUpti_ActivityKernel10 *)rec);
        g_tm.record_total++;
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS &&
        g_tm.collecting)
        g_tm.dropped += dropped;
    pthread_mutex_unlock(&g_tm.mu);
    tm_buffer_recycle(buffer, size);
}

/* ---- launch callbacks ------------------------------------------------------------- */

static const CUpti_CallbackId tm_driver_launch_cbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};
static const CUpti_CallbackId tm_runtime_launch_cbids[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};

/* Called with g_tm.mu held: appends a launch entered at enter_ns (CUPTI clock), returns
 * its index. */
static uint64_t tm_add_launch(uint32_t corr_id, const char *api, int runtime,
                              uint64_t enter_ns) {
    uint64_t i = g_tm.launch_total++;
    if (i < g_tm.capacity)
        g_tm.launches[i] = (dt_tl_launch){.corr_id = corr_id, .api = api,
                                          .runtime = (uint32_t)runtime, .enter_ns = enter_ns};
    return i;
}

/* Called with g_tm.mu held: the exit of stored launch i (status, exit_ns). */
static void tm_exit_launch(uint64_t i, int32_t status, uint64_t exit_ns) {
    if (!g_tm.collecting || i >= g_tm.capacity || i >= g_tm.launch_total) return;
    g_tm.launches[i].status = status;
    g_tm.launches[i].exit_ns = exit_ns;
}

static void CUPTIAPI tm_api_callback(void *userdata, CUpti_CallbackDomain domain,
                                     CUpti_CallbackId cbid, const void *cbdata) {
    (void)userdata;
    (void)cbid;
    const CUpti_CallbackData *cb = cbdata;
    int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)
        return;
    /* The launch API's entry or exit on CUPTI's clock (the records' clock), read first
     * thing, outside the lock (the E2E decomposition, docs/device-timing.md). */
    uint64_t ts = 0;
    if (cuptiGetTimestamp(&ts) != CUPTI_SUCCESS) ts = 0;
    pthread_mutex_lock(&g_tm.mu);
    if (cb->callbackSite == CUPTI_API_ENTER) {
        /* Every launch, inside a region or not: the next region's correlation floor. */
        dt_tl_note_corr(&g_tm.corr_max, cb->correlationId);
        if (runtime) {
            if (tm_tls.rt_depth++ == 0 && g_tm.collecting)
                tm_tls.rt_index = tm_add_launch(cb->correlationId, cb->functionName, 1, ts);
        } else if (tm_tls.rt_depth > 0) {
            /* The driver launch a runtime launch makes: same launch, second id. */
            if (g_tm.collecting && tm_tls.rt_index < g_tm.capacity &&
                tm_tls.rt_index < g_tm.launch_total &&
                g_tm.launches[tm_tls.rt_index].alt_id == 0)
                g_tm.launches[tm_tls.rt_index].alt_id = cb->correlationId;
            tm_tls.drv_depth++;
        } else {
            if (tm_tls.drv_depth++ == 0 && g_tm.collecting)
                tm_tls.drv_index = tm_add_launch(cb->correlationId, cb->functionName, 0, ts);
        }
    } else if (cb->callbackSite == CUPTI_API_EXIT) {
        int32_t status = cb->functionReturnValue ? *(const int32_t *)cb->functionReturnValue
                                                 : 0;
        if (runtime) {
            if (tm_tls.rt_depth > 0 && --tm_tls.rt_depth == 0)
                tm_exit_launch(tm_tls.rt_index, status, ts);
        } else if (tm_tls.drv_depth > 0) {
            if (--tm_tls.drv_depth == 0 && tm_tls.rt_depth == 0)
                tm_exit_launch(tm_tls.drv_index, status, ts);
        }
    }
    pthread_mutex_unlock(&g_tm.mu);
}

/* ---- region plumbing -------------------------------------------------------------- */

/* Waits for ev: 1 when complete; 0 with *timed_out=1 after timeout_ms, or on error. */
static int tm_wait_event(CUevent ev, uint32_t timeout_ms, int *timed_out) {
    *timed_out = 0;
    uint64_t t0 = tm_now_ns();
    for (;;) {
        CUresult rc = cuEventQuery(ev);
        if (rc == CUDA_SUCCESS) return 1;
        if (rc != CUDA_ERROR_NOT_READY)
            return dt_cu_ok(rc, "cuEventQuery(ev)", __FILE__, __LINE__, tm_error_sink);
        uint64_t waited = tm_now_ns() - t0;
        if (waited > (uint64_t)timeout_ms * 1000000ull) {
            *timed_out = 1;
            return 0;
        }
        if (waited < 1000000ull) {
            sched_yield();
        } else {
            struct timespec d = {0, 20000};
            nanosleep(&d, NULL);
        }
    }
}

/* One calibration: TM_CALIB_BRACKETS brackets (host read, CUPTI read, host read) in a
 * row, the tightest kept (a preemption or a cache miss widens one bracket, not all). */
static int tm_calibrate(dt_tl_calib *out) {
    dt_tl_calib br[TM_CALIB_BRACKETS];
    for (int i = 0; i < TM_CALIB_BRACKETS; i++) {
        uint64_t cupti = 0;
        uint64_t h0 = tm_now_ns();
        CUptiResult rc = cuptiGetTimestamp(&cupti);
        uint64_t h1 = tm_now_ns();
        if (!dt_cupti_ok(rc, "cuptiGetTimestamp(&cupti)", __FILE__, __LINE__, tm_error_sink))
            return 0;
        char e[256];
        if (!dt_tl_calib_bracket(h0, cupti, h1, &br[i], e, sizeof e)) {
            tm_set_error("%s", e);
            return 0;
        }
    }
    *out = dt_tl_calib_tightest(br, TM_CALIB_BRACKETS);
    return 1;
}

static void tm_free_storage(void) {
    pthread_mutex_lock(&g_tm.mu);
    free(g_tm.launches);
    free(g_tm.records);
    g_tm.launches = NULL;
    g_tm.records = NULL;
    g_tm.capacity = 0;
    g_tm.launch_total = g_tm.record_total = g_tm.dropped = 0;
    g_tm.discarded_before = 0;
    g_tm.buffers_given = 0;
    g_tm.collecting = 0;
    pthread_mutex_unlock(&g_tm.mu);
    g_tm.records_stored = 0;
    g_tm.launches_stored = 0;
}

/* Maps the ABI's probe kind to CUPTI's activity kind. */
static CUpti_ActivityKind tm_cupti_kind(uint32_t probe_kind) {
    return probe_kind == DT_TIMING_PROBE_SERIALIZED ? CUPTI_ACTIVITY_KIND_KERNEL
                                                    : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

/* Makes probe_kind's activity kind the one enabled (disabling another one first). */
static int tm_enable_kind(uint32_t probe_kind) {
    CUpti_ActivityKind k = tm_cupti_kind(probe_kind);
    if (g_tm.activity_enabled && g_tm.kind == k) return 1;
    if (g_tm.activity_enabled) {
        if (!TM_CUPTI(cuptiActivityDisable(g_tm.kind))) return 0;
        g_tm.activity_enabled = 0;
    }
    g_tm.kind = k;
    if (!TM_CUPTI(cuptiActivityEnable(k))) return 0;
    g_tm.activity_enabled = 1;
    return 1;
}

/* Attaches CUPTI: activity buffer callbacks, the CLOCK_MONOTONIC timestamp callback, the
 * launch-callback subscription and probe_kind's activity kind. Needs no context. On
 * failure the caller undoes it with tm_detach. 1/0. */
static int tm_attach(uint32_t probe_kind) {
    /* A new CUPTI session may number correlation ids afresh (not known whether ids
     * restart after cuptiFinalize): the floor counts only ids of this session. */
    pthread_mutex_lock(&g_tm.mu);
    g_tm.corr_max = 0;
    pthread_mutex_unlock(&g_tm.mu);
    g_tm.cupti_touched = 1;
    int ok = TM_CUPTI(cuptiActivityRegisterCallbacks(tm_buffer_requested, tm_buffer_completed));
    /* Before enabling any kind, as CUPTI requires; a refusal is not fatal: records are
     * then converted with the measured offset (clock_source says which). */
    g_tm.ts_callback =
        ok && cuptiActivityRegisterTimestampCallback(tm_timestamp_cb) == CUPTI_SUCCESS;
    ok = ok && TM_CUPTI(cuptiSubscribe(&g_tm.sub, tm_api_callback, NULL));
    g_tm.subscribed = ok;
    for (size_t i = 0; ok && i < sizeof tm_driver_launch_cbids / sizeof *tm_driver_launch_cbids;
         i++)
        ok = TM_CUPTI(cuptiEnableCallback(1, g_tm.sub, CUPTI_CB_DOMAIN_DRIVER_API,
                                          tm_driver_launch_cbids[i]));
    for (size_t i = 0;
         ok && i < sizeof tm_runtime_launch_cbids / sizeof *tm_runtime_launch_cbids; i++)
        ok = TM_CUPTI(cuptiEnableCallback(1, g_tm.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                                          tm_runtime_launch_cbids[i]));
    return ok && tm_enable_kind(probe_kind);
}

/* Undoes tm_attach, in order, whatever failed before: disable, unsubscribe, wait for the
 * current context's work (as cuptiFinalize requires), flush, finalize. Errors are
 * recorded (first error wins) but the teardown continues. */
static void tm_detach(void) {
    pthread_mutex_lock(&g_tm.mu);
    g_tm.collecting = 0;
    pthread_mutex_unlock(&g_tm.mu);
    if (g_tm.activity_enabled) {
        TM_CUPTI(cuptiActivityDisable(g_tm.kind));
        g_tm.activity_enabled = 0;
    }
    if (g_tm.subscribed) {
        TM_CUPTI(cuptiUnsubscribe(g_tm.sub));
        g_tm.subscribed = 0;
    }
    if (g_tm.cupti_touched) {
        /* Work may still run (a timed-out end, an unjoined stream): finish it first.
         * (set_persistent(0) may come with no context current: nothing to wait for.) */
        CUcontext cur = NULL;
        if (cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur) TM_CU(cuCtxSynchronize());
        TM_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
        TM_CUPTI(cuptiFinalize());
        g_tm.cupti_touched = 0;
    }
}

/* Closes the open region's bookkeeping: collection off, events destroyed. CUPTI is left
 * as it is (persistent mode keeps it attached). */
static void tm_close_region(void) {
    pthread_mutex_lock(&g_tm.mu);
    g_tm.collecting = 0;
    pthread_mutex_unlock(&g_tm.mu);
    if (g_tm.ev_begin) {
        TM_CU(cuEventDestroy(g_tm.ev_begin));
        g_tm.ev_begin = NULL;
    }
    if (g_tm.ev_end) {
        TM_CU(cuEventDestroy(g_tm.ev_end));
        g_tm.ev_end = NULL;
    }
    g_tm.ev_begin_recorded = 0;
    g_tm.active = 0;
    g_tm.poisoned = 0;
}

/* Undoes everything begin did, CUPTI included, whatever failed before. Persistent mode
 * then attaches CUPTI again at once (a failed region leaves no half state behind, and
 * the untimed work before the next region runs under the probe again); an error there
 * is hidden behind the first one and shows at the next begin. */
static void tm_teardown(void) {
    tm_hold_drop();
    tm_detach();
    tm_close_region();
    if (g_tm.persistent && !tm_attach(g_tm.persist_kind)) tm_detach();
}

/* Shared start of both begins. 0 on failure (state untouched beyond the error). */
static int tm_begin_common(void *stream, uint32_t scope) {
    if (g_tm.active) {
        /* Nested begin: refuse it and make the open region fail closed too. */
        g_tm.poisoned = 1;
        tm_set_error("nested begin: a %s region is already open (begin called twice "
                     "without end); the open region will fail too",
                     g_tm.scope == DT_TIMING_PROBE ? "probe" : "control");
        return 0;
    }
    g_tm.err[0] = '\0';
    tm_free_storage();
    g_tm.scope = scope;
    g_tm.probe_kind = 0;
    g_tm.stream = (CUstream)stream;
    g_tm.ctx = NULL;
    g_tm.region_stream_id = UINT32_MAX;
    memset(&g_tm.cal_begin, 0, sizeof g_tm.cal_begin);
    g_tm.region_held = 0;
    if (!TM_CU(cuCtxGetCurrent(&g_tm.ctx)) || !g_tm.ctx) {
        if (!g_tm.err[0]) tm_set_error("no CUDA context is current on the calling thread");
        tm_hold_drop();
        return 0;
    }
    return 1;
}

/* Creates both events and records the begin one. */
static int tm_begin_events(void) {
    if (!TM_CU(cuEventCreate(&g_tm.ev_begin, CU_EVENT_DEFAULT)) ||
        !TM_CU(cuEventCreate(&g_tm.ev_end, CU_EVENT_DEFAULT)))
        return 0;
    g_tm.host_begin_ns = tm_now_ns();
    if (!TM_CU(cuEventRecord(g_tm.ev_begin, g_tm.stream))) return 0;
    g_tm.ev_begin_recorded = 1;
    return 1;
}

/* An empty kernel, as PTX so that the driver JIT-compiles it for any device. */
static const char tm_warm_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry dt_timing_warmup()\n{\n\tret;\n}\n";

/* Pays CUPTI's per-session setup outside the region. Measured on the H200: the first
 * kernel launch after CUPTI attaches blocks the launching thread ~2.6 ms, whatever the
 * kernel; inside the region that would inflate the probe's stream interval. So begin
 * launches one empty kernel (not collected: collecting is still 0) and waits for it.
 * The force-flush comes BEFORE that launch, never after it: a forced flush hands CUPTI's
 * current activity buffer back, and when it ended the warm-up (as it did) the region's
 * first launch had to set up a new buffer inside the window (the 345-620 us that every
 * probe single call read on the H200, issue 12). Flushing first still delivers the
 * records of untimed work before the region (persistent mode: many, which would
 * otherwise be processed under g_tm.mu while the region launches), and the warm-up then
 * pays the new buffer; its own record stays there and is discarded at end's flush (its
 * correlation id lies below the region's floor). The module stays loaded in the
 * context (no CUPTI state). */
static int tm_warm_up(void) {
    if (g_tm.warm_ctx != g_tm.ctx) {
        g_tm.warm_fn = NULL;
        g_tm.warm_mod = NULL;
        if (!TM_CU(cuModuleLoadData(&g_tm.warm_mod, tm_warm_ptx)) ||
            !TM_CU(cuModuleGetFunction(&g_tm.warm_fn, g_tm.warm_mod, "dt_timing_warmup")))
            return 0;
        g_tm.warm_ctx = g_tm.ctx;
    }
    /* DUALTIME_TIMING_FLUSH_AFTER_WARMUP=1 (diagnosis only: the GPU test measures both
     * orders side by side) restores the old order, flush after the warm-up. */
    const char *old = getenv("DUALTIME_TIMING_FLUSH_AFTER_WARMUP");
    int flush_after = old && strcmp(old, "1") == 0;
    return (flush_after || TM_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED))) &&
           TM_CU(cuLaunchKernel(g_tm.warm_fn, 1, 1, 1, 1, 1, 1, 0, g_tm.stream, NULL, NULL)) &&
           TM_CU(cuStreamSynchronize(g_tm.stream)) &&
           (!flush_after || TM_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)));
}

/* ---- held windows ------------------------------------------------------------------ */

/* The spin kernel (fallback hold): one thread polls the mapped flag until the cyclic
 * test (int32_t)(flag - value) >= 0 holds, as cuStreamWaitValue32 GEQ does, or until
 * timeout_ns of %globaltimer have passed (a backstop: the host watchdog releases first). */
static const char tm_spin_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry dt_timing_hold_spin(.param .u64 p_flag, .param .u32 p_value,\n"
    "    .param .u64 p_timeout)\n{\n"
    "\t.reg .pred %p<3>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<6>;\n"
    "\tld.param.u64 %rd1, [p_flag];\n\tld.param.u32 %r1, [p_value];\n"
    "\tld.param.u64 %rd2, [p_timeout];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
    "\tmov.u64 %rd3, %globaltimer;\n"
    "SPIN:\n\tld.volatile.global.u32 %r2, [%rd1];\n\tsub.s32 %r3, %r2, %r1;\n"
    "\tsetp.ge.s32 %p1, %r3, 0;\n\t@%p1 bra DONE;\n"
    "\tmov.u64 %rd4, %globaltimer;\n\tsub.u64 %rd5, %rd4, %rd3;\n"
    "\tsetp.lt.u64 %p2, %rd5, %rd2;\n\t@%p2 bra SPIN;\n"
    "DONE:\n\tret;\n}\n";

static uint64_t tm_hold_clock(void *ctx) {
    (void)ctx;
    return tm_now_ns();
}
/* The flag store (host memory the device reads): sequentially consistent. */
static void tm_hold_write(void *ctx, uint32_t value) {
    (void)ctx;
    if (g_tm.flag_host) __atomic_store_n(g_tm.flag_host, value, __ATOMIC_SEQ_CST);
}

/* Chooses the wait method in the current context: the one asked for, or (automatic)
 * a trial cuStreamWaitValue32 on an already-satisfied value on a scratch stream; the
 * spin kernel where the driver refuses it. (CUDA 12+ has no device attribute for
 * 32-bit waits: they are always on where the driver supports them; the trial is the
 * test. CAN_MAP_HOST_MEMORY, which both methods need, is checked before.) */
static int tm_hold_choose_method(void) {
    g_tm.hold_method = DT_TIMING_HOLD_NONE;
    if (g_tm.hold_method_req != DT_TIMING_HOLD_SPIN_KERNEL) {
        CUstream scratch = NULL;
        if (!TM_CU(cuStreamCreate(&scratch, CU_STREAM_NON_BLOCKING))) return 0;
        uint32_t now = __atomic_load_n(g_tm.flag_host, __ATOMIC_SEQ_CST);
        CUresult r = cuStreamWaitValue32(scratch, g_tm.flag_dev, now, CU_STREAM_WAIT_VALUE_GEQ);
        int ok = r == CUDA_SUCCESS && TM_CU(cuStreamSynchronize(scratch));
        TM_CU(cuStreamDestroy(scratch));
        if (ok) {
            g_tm.hold_method = DT_TIMING_HOLD_WAIT_VALUE;
            return 1;
        }
        if (r == CUDA_SUCCESS) return 0; /* the synchronize failed: error kept */
        if (g_tm.hold_method_req == DT_TIMING_HOLD_WAIT_VALUE)
            return dt_cu_ok(r, "cuStreamWaitValue32(trial)", __FILE__, __LINE__,
                            tm_error_sink);
    }
    if (!g_tm.spin_fn) {
        if (!TM_CU(cuModuleLoadData(&g_tm.spin_mod, tm_spin_ptx)) ||
            !TM_CU(cuModuleGetFunction(&g_tm.spin_fn, g_tm.spin_mod, "dt_timing_hold_spin"))) {
            g_tm.spin_mod = NULL;
            g_tm.spin_fn = NULL;
            return 0;
        }
    }
    g_tm.hold_method = DT_TIMING_HOLD_SPIN_KERNEL;
    return 1;
}

/* Makes the hold usable in ctx: the watchdog started, the flag allocated in mapped
 * pinned memory (its value the last released sequence), the method chosen. Once per
 * context (and again after configure_hold changed the method). */
static int tm_hold_prepare(CUcontext ctx) {
    char e[512];
    if (!g_tm.hold_ready) {
        if (!dt_hold_init(&g_tm.hold, tm_hold_clock, tm_hold_write, NULL)) {
            tm_set_error("cannot initialise the hold (pthread)");
            return 0;
        }
        g_tm.hold_ready = 1;
    }
    if (!dt_hold_start_watchdog(&g_tm.hold, e, sizeof e)) {
        tm_set_error("%s", e);
        return 0;
    }
    if (g_tm.flag_ctx == ctx && g_tm.flag_host && g_tm.flag_method_req == g_tm.hold_method_req)
        return 1;
    if (g_tm.flag_ctx != ctx || !g_tm.flag_host) {
        CUdevice dev;
        int can_map = 0;
        if (!TM_CU(cuCtxGetDevice(&dev)) ||
            !TM_CU(cuDeviceGetAttribute(&can_map, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, dev)))
            return 0;
        if (!can_map) {
            tm_set_error("hold refused: the device cannot map host memory "
                         "(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 0), so no flag can hold "
                         "its stream");
            return 0;
        }
        /* The old context's flag stays allocated: freeing it needs that context. */
        void *p = NULL;
        g_tm.flag_host = NULL;
        g_tm.flag_ctx = NULL;
        g_tm.spin_mod = NULL;
        g_tm.spin_fn = NULL;
        if (!TM_CU(cuMemHostAlloc(&p, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE)))
            return 0;
        if (!TM_CU(cuMemHostGetDevicePointer(&g_tm.flag_dev, p, 0))) {
            cuMemFreeHost(p);
            return 0;
        }
        g_tm.flag_host = p;
        __atomic_store_n(g_tm.flag_host, g_tm.hold.seq, __ATOMIC_SEQ_CST);
        g_tm.flag_ctx = ctx;
    }
    g_tm.flag_method_req = g_tm.hold_method_req;
    if (!tm_hold_choose_method()) {
        g_tm.flag_method_req = UINT32_MAX; /* choose again next time */
        return 0;
    }
    return 1;
}

/* Drops the hold of a region that will not run (a failed begin, end without begin, a
 * teardown): writes the flag if it was engaged, so no stream stays blocked. */
static void tm_hold_drop(void) {
    if (g_tm.hold_ready) dt_hold_cancel(&g_tm.hold);
    g_tm.region_held = 0;
}

/* Right before the begin event: an armed hold makes the stream wait for the flag (the
 * wait, or the spin kernel, goes first on the stream). 1 when not armed. */
static int tm_hold_engage(void) {
    if (!g_tm.hold_ready || !dt_hold_armed(&g_tm.hold)) return 1;
    char e[512];
    uint32_t v = 0;
    if (g_tm.flag_ctx != g_tm.ctx) {
        tm_set_error("the hold was asked for in another CUDA context than the region's");
        tm_hold_drop();
        return 0;
    }
    if (!dt_hold_engage(&g_tm.hold, g_tm.stream, &v, e, sizeof e)) {
        tm_set_error("%s", e);
        tm_hold_drop();
        return 0;
    }
    g_tm.region_held = 1;
    int ok;
    if (g_tm.hold_method == DT_TIMING_HOLD_WAIT_VALUE) {
        ok = TM_CU(cuStreamWaitValue32(g_tm.stream, g_tm.flag_dev, v, CU_STREAM_WAIT_VALUE_GEQ));
    } else {
        uint64_t backstop_ns = (2ull * g_tm.hold.timeout_ms + 1000ull) * 1000000ull;
        void *args[] = {&g_tm.flag_dev, &v, &backstop_ns};
        ok = TM_CU(cuLaunchKernel(g_tm.spin_fn, 1, 1, 1, 1, 1, 1, 0, g_tm.stream, args, NULL));
    }
    if (!ok) tm_hold_drop();
    return ok;
}

/* In end, right after the end event was queued: releases the flag. 0 (error set) when
 * the watchdog had released it (the timeout reason). 1 when not held. */
static int tm_hold_release_at_end(void) {
    if (!g_tm.region_held) return 1;
    char e[512];
    if (!dt_hold_release(&g_tm.hold, 0, e, sizeof e)) {
        tm_set_error("%s", e);
        return 0;
    }
    return 1;
}

/* In end, after the end event completed: closes the hold, fills the result's hold
 * fields (held only when released in time after the end event). 0 with the reason. */
static int tm_hold_finish(dt_timing_result *r) {
    if (!g_tm.region_held) return 1;
    g_tm.region_held = 0;
    dt_hold_outcome o;
    char e[512];
    int ok = dt_hold_finish(&g_tm.hold, &o, e, sizeof e);
    if (!ok) tm_set_error("%s", e);
    if (r) {
        r->held = (uint32_t)o.held;
        r->hold_method = g_tm.hold_method;
        r->hold_timeout_ms = o.timeout_ms;
        r->hold_queue_ns = o.queued_ns;
    }
    return ok;
}

TM_EXPORT uint32_t dt_timing_abi_version(void) { return DT_TIMING_ABI_VERSION; }

TM_EXPORT const char *dt_timing_last_error(void) { return g_tm.err; }

TM_EXPORT int dt_timing_configure(uint64_t activity_buffer_bytes, uint32_t max_activity_buffers,
                                  uint32_t sync_timeout_ms) {
    if (g_tm.active) {
        tm_set_error("dt_timing_configure called inside an open region");
        return 0;
    }
    if (activity_buffer_bytes && activity_buffer_bytes < 1024) {
        snprintf(g_tm.err, sizeof g_tm.err,
                 "activity buffer of %" PRIu64 " bytes is below the minimum 1024",
                 activity_buffer_bytes);
        return 0;
    }
    pthread_mutex_lock(&g_tm.mu);
    g_tm.buffer_bytes = activity_buffer_bytes ? activity_buffer_bytes : TM_DEFAULT_BUFFER_BYTES;
    g_tm.max_buffers = max_activity_buffers;
    pthread_mutex_unlock(&g_tm.mu);
    g_tm.timeout_ms = sync_timeout_ms ? sync_timeout_ms : TM_DEFAULT_TIMEOUT_MS;
    return 1;
}

TM_EXPORT int dt_timing_set_persistent(int on) {
    if (g_tm.active) {
        tm_set_error("dt_timing_set_persistent called inside an open region");
        return 0;
    }
    if (on < DT_TIMING_PERSISTENT_OFF || on > DT_TIMING_PERSISTENT_SERIALIZED) {
        snprintf(g_tm.err, sizeof g_tm.err,
                 "dt_timing_set_persistent(%d): want 0 = off, 1 = on (concurrent kind), "
                 "2 = on (serialized kind)",
                 on);
        return 0;
    }
    g_tm.err[0] = '\0';
    if (on == DT_TIMING_PERSISTENT_OFF) {
        g_tm.persistent = 0;
        tm_detach();
        return !g_tm.err[0];
    }
    uint32_t kind = on == DT_TIMING_PERSISTENT_SERIALIZED ? DT_TIMING_PROBE_SERIALIZED
                                                           : DT_TIMING_PROBE_CONCURRENT;
    g_tm.persistent = 1;
    g_tm.persist_kind = kind;
    int ok = g_tm.cupti_touched ? g_tm.subscribed && tm_enable_kind(kind) : tm_attach(kind);
    if (!ok) {
        if (!g_tm.err[0]) tm_set_error("CUPTI is attached but not subscribed");
        tm_detach(); /* the next probe begin attaches again */
    }
    return ok;
}

TM_EXPORT int dt_timing_begin_control(void *stream) {
    if (!g_tm.active && g_tm.persistent) {
        g_tm.err[0] = '\0';
        tm_set_error("control region refused: persistent probe mode is on in this process "
                     "(dt_timing_set_persistent), CUPTI stays attached and would perturb "
                     "the control; run controls in a process without probes");
        tm_hold_drop();
        return 0;
    }
    if (!tm_begin_common(stream, DT_TIMING_CONTROL)) return 0;
    g_tm.active = 1;
    if (!tm_hold_engage() || !tm_begin_events()) {
        tm_teardown();
        return 0;
    }
    return 1;
}

TM_EXPORT int dt_timing_begin_probe(void *stream, uint32_t capacity, uint32_t probe_kind) {
    if (!tm_begin_common(stream, DT_TIMING_PROBE)) return 0;
    if (capacity == 0 || capacity > TM_MAX_CAPACITY) {
        tm_set_error("probe capacity %" PRIu32 " outside 1..%u", capacity, TM_MAX_CAPACITY);
        tm_hold_drop();
        return 0;
    }
    if (probe_kind != DT_TIMING_PROBE_CONCURRENT && probe_kind != DT_TIMING_PROBE_SERIALIZED) {
        tm_set_error("unknown probe kind %" PRIu32 " (0 = concurrent, 1 = serialized)",
                     probe_kind);
        tm_hold_drop();
        return 0;
    }
    g_tm.probe_kind = probe_kind;
    dt_tl_launch *launches = calloc(capacity, sizeof *launches);
    dt_timing_kernel *records = calloc(capacity, sizeof *records);
    if (!launches || !records) {
        free(launches);
        free(records);
        tm_set_error("cannot allocate storage for %" PRIu32 " launches/records", capacity);
        tm_hold_drop();
        return 0;
    }
    pthread_mutex_lock(&g_tm.mu);
    g_tm.launches = launches;
    g_tm.records = records;
    g_tm.capacity = capacity;
    pthread_mutex_unlock(&g_tm.mu);
    g_tm.active = 1;

    /* Persistent mode: CUPTI is normally attached already (set_persistent or the previous
     * region); only a different kind is switched. Otherwise attach now. */
    int ok;
    if (g_tm.persistent) g_tm.persist_kind = probe_kind;
    if (g_tm.cupti_touched)
        ok = g_tm.subscribed && tm_enable_kind(probe_kind);
    else
        ok = tm_attach(probe_kind);
    if (ok && !g_tm.subscribed) {
        tm_set_error("CUPTI is attached but its launch callbacks are not subscribed");
        ok = 0;
    }
    if (ok && cuptiGetStreamIdEx(g_tm.ctx, g_tm.stream, 0, &g_tm.region_stream_id) !=
                  CUPTI_SUCCESS)
        g_tm.region_stream_id = UINT32_MAX;
    ok = ok && tm_warm_up();
    if (ok) {
        /* Drops before the region (persistent mode: untimed work between regions) are
         * not the region's: reading the global count resets it. */
        size_t d = 0;
        (void)cuptiActivityGetNumDroppedRecords(NULL, 0, &d);
    }
    ok = ok && tm_calibrate(&g_tm.cal_begin);
    /* The hold goes on the stream before the floor: a spin kernel's record then lies
     * below it and is discarded. Everything of the probe's own (attach, warm-up,
     * calibration) is done by now, outside the events. */
    ok = ok && tm_hold_engage();
    if (ok) {
        /* From here every launch is the region's, and every record of a launch before
         * (the warm-up included) has a smaller correlation id. */
        pthread_mutex_lock(&g_tm.mu);
        g_tm.corr_floor = dt_tl_corr_floor(g_tm.corr_max);
        g_tm.collecting = 1;
        pthread_mutex_unlock(&g_tm.mu);
    }
    ok = ok && tm_begin_events();
    if (!ok) {
        tm_teardown();
        tm_free_storage();
        return 0;
    }
    return 1;
}

/* Waits for the end event, then reads the event interval. 0 on failure. */
static int tm_end_events(double *stream_ns, uint64_t *host_end_ns) {
    int timed_out = 0;
    int recorded = TM_CU(cuEventRecord(g_tm.ev_end, g_tm.stream));
    /* A held stream is released only now, with the end event queued behind the calls
     * (and in any case: never wait on a stream that still waits for us). */
    int released = tm_hold_release_at_end();
    if (!recorded) return 0;
    int ok = tm_wait_event(g_tm.ev_end, g_tm.timeout_ms, &timed_out);
    *host_end_ns = tm_now_ns();
    if (!released) return 0;
    if (timed_out) {
        tm_set_error("incomplete work: the region's stream had not reached the end event "
                     "%" PRIu32 " ms after end was called (end then waited for it before "
                     "tearing down)",
                     g_tm.timeout_ms);
        return 0;
    }
    if (!ok) return 0;
    float ms = 0.0f;
    if (!TM_CU(cuEventElapsedTime(&ms, g_tm.ev_begin, g_tm.ev_end))) return 0;
    *stream_ns = (double)ms * 1e6;
    return 1;
}

static void tm_copy_hold_fields(dt_timing_result *dst, const dt_timing_result *src) {
    dst->held = src->held;
    dst->hold_method = src->hold_method;
    dst->hold_timeout_ms = src->hold_timeout_ms;
    dst->hold_queue_ns = src->hold_queue_ns;
}

TM_EXPORT int dt_timing_end(dt_timing_result *result) {
    if (result) {
        memset(result, 0, sizeof *result);
        result->abi_version = DT_TIMING_ABI_VERSION;
    }
    if (!g_tm.active) {
        snprintf(g_tm.err, sizeof g_tm.err, "end without begin: no region is open");
        tm_hold_drop(); /* a hold asked for without a begin */
        return 0;
    }
    uint32_t scope = g_tm.scope;
    if (result) result->scope = scope;
    if (!result) tm_set_error("dt_timing_end: result is NULL");
    if (g_tm.poisoned) tm_set_error("nested begin happened inside this region");

    double stream_ns = 0;
    uint64_t host_end_ns = 0;
    int ok = !g_tm.err[0];
    ok = tm_end_events(&stream_ns, &host_end_ns) && ok;
    dt_timing_result hold_fields;
    memset(&hold_fields, 0, sizeof hold_fields);
    ok = tm_hold_finish(&hold_fields) && ok;

    if (scope == DT_TIMING_CONTROL) {
        tm_teardown();
        if (ok && !(stream_ns > 0)) {
            tm_set_error("empty region: the control's events show %.1f ns (nothing ran "
                         "between begin and end, or it was too short to resolve)",
                         stream_ns);
            ok = 0;
        }
        if (!ok) return 0;
        result->stream_ns = stream_ns;
        result->host_begin_ns = g_tm.host_begin_ns;
        result->host_end_ns = host_end_ns;
        tm_copy_hold_fields(result, &hold_fields);
        return 1;
    }

    /* Probe: collect what CUPTI has, calibrate, stop, tear down, then validate. */
    dt_tl_calib cal_end = {0};
    uint64_t global_dropped = 0;
    if (g_tm.activity_enabled) {
        size_t d = 0;
        ok = TM_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) && ok;
        if (cuptiActivityGetNumDroppedRecords(NULL, 0, &d) == CUPTI_SUCCESS)
            global_dropped = d;
        ok = tm_calibrate(&cal_end) && ok;
    }
    pthread_mutex_lock(&g_tm.mu);
    g_tm.collecting = 0;
    pthread_mutex_unlock(&g_tm.mu);
    /* Persistent mode keeps CUPTI attached after a clean region; any failure so far
     * tears it down (and persistent mode attaches it again). Validation failures below
     * keep it attached: nothing of CUPTI went wrong. */
    if (ok && g_tm.persistent) {
        tm_close_region();
        ok = !g_tm.err[0];
    } else {
        tm_teardown();
    }
    if (!ok) {
        tm_free_storage();
        return 0;
    }

    dt_tl_calib cal = dt_tl_calib_combine(g_tm.cal_begin, cal_end);
    int on_host_clock = g_tm.ts_callback && dt_tl_clock_is_host(cal, TM_CLOCK_TOL_NS);
    uint64_t stored = g_tm.record_total < g_tm.capacity ? g_tm.record_total : g_tm.capacity;
    for (uint64_t i = 0; i < stored && !on_host_clock; i++) {
        g_tm.records[i].start_ns = dt_tl_to_host_ns(g_tm.records[i].start_ns, cal.offset_ns);
        g_tm.records[i].end_ns = dt_tl_to_host_ns(g_tm.records[i].end_ns, cal.offset_ns);
    }
    uint64_t nl = g_tm.launch_total < g_tm.capacity ? g_tm.launch_total : g_tm.capacity;
    for (uint64_t i = 0; i < nl && !on_host_clock; i++) {
        g_tm.launches[i].enter_ns = dt_tl_to_host_ns(g_tm.launches[i].enter_ns, cal.offset_ns);
        g_tm.launches[i].exit_ns = dt_tl_to_host_ns(g_tm.launches[i].exit_ns, cal.offset_ns);
    }
    dt_tl_region region = {
        .launches = g_tm.launches,
        .launch_total = g_tm.launch_total,
        .records = g_tm.records,
        .record_total = g_tm.record_total,
        .capacity = g_tm.capacity,
        .dropped = g_tm.dropped + global_dropped,
        .window_begin_ns = g_tm.host_begin_ns,
        .window_end_ns = host_end_ns,
        .window_slack_ns = TM_WINDOW_SLACK_NS + 2 * (uint64_t)cal.uncertainty_ns,
        .region_stream_id = g_tm.region_stream_id,
    };
    dt_tl_summary sum;
    char e[TM_ERR_LEN];
    if (!dt_tl_validate(&region, &sum, e, sizeof e)) {
        tm_set_error("%s", e);
        tm_free_storage();
        return 0;
    }
    g_tm.records_stored = stored;
    g_tm.launches_stored = nl;
    result->probe_kind = g_tm.probe_kind;
    result->clock_source = on_host_clock ? DT_TIMING_CLOCK_CALLBACK : DT_TIMING_CLOCK_OFFSET;
    result->stream_ns = stream_ns;
    result->kernel_sum_ns = sum.kernel_sum_ns;
    result->kernel_span_ns = sum.kernel_span_ns;
    result->kernel_count = sum.kernel_count;
    result->launch_count = sum.launch_count;
    result->dropped_records = 0;
    result->clock_offset_ns = (double)cal.offset_ns;
    result->clock_uncertainty_ns = cal.uncertainty_ns;
    result->host_begin_ns = g_tm.host_begin_ns;
    result->host_end_ns = host_end_ns;
    result->records_stored = stored;
    result->other_stream_kernels = sum.other_stream_kernels;
    result->region_stream_id = g_tm.region_stream_id;
    tm_copy_hold_fields(result, &hold_fields);
    return 1;
}

TM_EXPORT int dt_timing_hold(void *stream) {
    if (g_tm.active) {
        /* Like a nested begin: refused, and the open region fails too. */
        tm_set_error("hold inside an open region: hold comes before begin; the open region "
                     "fails");
        return 0;
    }
    g_tm.err[0] = '\0';
    CUcontext ctx = NULL;
    if (!TM_CU(cuCtxGetCurrent(&ctx))) return 0;
    if (!ctx) {
        tm_set_error("hold: no CUDA context is current on the calling thread");
        return 0;
    }
    if (!tm_hold_prepare(ctx)) return 0;
    char e[512];
    if (!dt_hold_arm(&g_tm.hold, stream, g_tm.hold_timeout_ms, e, sizeof e)) {
        tm_set_error("%s", e);
        return 0;
    }
    return 1;
}

TM_EXPORT int dt_timing_release(void) {
    char e[512];
    if (!g_tm.active || !g_tm.region_held) {
        tm_set_error("release without hold: no held region is open");
        return 0;
    }
    if (!dt_hold_release(&g_tm.hold, 1, e, sizeof e)) {
        tm_set_error("%s", e);
        return 0;
    }
    return 1;
}

TM_EXPORT int dt_timing_configure_hold(uint32_t timeout_ms, uint32_t method) {
    if (g_tm.active) {
        tm_set_error("dt_timing_configure_hold called inside an open region");
        return 0;
    }
    if (timeout_ms > DT_HOLD_MAX_TIMEOUT_MS || method > DT_TIMING_HOLD_SPIN_KERNEL) {
        snprintf(g_tm.err, sizeof g_tm.err,
                 "dt_timing_configure_hold(%" PRIu32 ", %" PRIu32 "): timeout at most %u ms, "
                 "method 0 = automatic, 1 = wait value, 2 = spin kernel",
                 timeout_ms, method, DT_HOLD_MAX_TIMEOUT_MS);
        return 0;
    }
    g_tm.hold_timeout_ms = timeout_ms ? timeout_ms : TM_DEFAULT_HOLD_TIMEOUT_MS;
    g_tm.hold_method_req = method;
    return 1;
}

TM_EXPORT int dt_timing_kernel_record(uint64_t i, dt_timing_kernel *out) {
    if (!out || g_tm.active || i >= g_tm.records_stored || !g_tm.records) return 0;
    *out = g_tm.records[i];
    return 1;
}

TM_EXPORT int dt_timing_launch_record(uint64_t i, dt_timing_launch *out) {
    if (!out || g_tm.active || i >= g_tm.launches_stored || !g_tm.launches) return 0;
    const dt_tl_launch *l = &g_tm.launches[i];
    memset(out, 0, sizeof *out);
    out->enter_ns = l->enter_ns;
    out->exit_ns = l->exit_ns;
    out->correlation_id = l->corr_id;
    out->alt_correlation_id = l->alt_id;
    out->status = l->status;
    out->runtime = l->runtime;
    if (l->api) snprintf(out->api, sizeof out->api, "%s", l->api);
    return 1;
}
