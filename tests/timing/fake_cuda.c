/* fake_cuda.c — a fake CUDA driver (and CUPTI stubs) for test_timing_fake: just the
 * calls the timing helper makes, with a simulated GPU, so that CI runs the real
 * src/timing/dt_timing.c hold path (events, cuStreamWaitValue32 on mapped host memory,
 * the spin kernel, cuCtxSynchronize) without a driver.
 *
 * The simulated GPU: every stream is a thread that executes its queue in order, on a
 * virtual clock so that the host's scheduling lag does not leak into the numbers: an op
 * starts at max(the time it was queued, the time the stream became free). Ops: an event
 * record (its time is its start), a 32-bit wait (polls the host word until
 * (int32_t)(*addr - v) >= 0, as CU_STREAM_WAIT_VALUE_GEQ; the stream is free from when it
 * saw it), a kernel (takes fake_cuda_kernel_ns of virtual time), and the helper's spin
 * kernel "dt_timing_hold_spin" (polls its flag like the wait, with its backstop).
 * Synchronizing calls (cuStreamSynchronize, cuCtxSynchronize, the helper's waits) block
 * the host until the queues drain: a sync inside a hold blocks until something writes
 * the flag, exactly the deadlock the watchdog exists for. Device pointers of mapped host memory are the host pointers.
 * Knobs (fake_cuda.h): no context, no host mapping, refuse stream memory operations.
 * CUPTI calls all fail (CUPTI_ERROR_NOT_INITIALIZED): probes cannot begin here. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cupti.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_cuda.h"

int fake_cuda_no_context;
int fake_cuda_no_map;
int fake_cuda_refuse_wait_value;
uint64_t fake_cuda_kernel_ns = 10000;
int fake_cuda_context_id = 1;

enum { OP_EVENT, OP_WAIT, OP_KERNEL, OP_SPIN };
typedef struct op {
    int kind;
    struct CUevent_st *ev;      /* OP_EVENT */
    volatile uint32_t *addr;    /* OP_WAIT, OP_SPIN */
    uint32_t value;             /* OP_WAIT, OP_SPIN */
    uint64_t ns;                /* OP_KERNEL: duration; OP_SPIN: backstop */
    uint64_t t_enq;             /* CLOCK_MONOTONIC when queued */
} op;

#define QCAP 4096
struct CUstream_st {
    pthread_t thread;
    op q[QCAP];
    int head, tail;  /* ops [head, tail) pending; q index = i % QCAP */
    int busy;        /* an op is executing */
    int stop;
    uint64_t t_free; /* virtual time the stream finished its last op */
};
struct CUevent_st {
    int recorded;    /* a record is pending or done */
    int done;
    uint64_t t_ns;
};
struct CUctx_st {
    int id;
};
struct CUmod_st {
    int unused;
};
struct CUfunc_st {
    char name[64];
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER; /* any queue or event changed */
static struct CUstream_st *g_streams[64];
static int g_nstreams;
static struct CUstream_st *g_null_stream; /* the legacy default stream, made on demand */
static struct CUctx_st g_ctx[8];

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static void nap_us(long us) {
    struct timespec d = {0, us * 1000};
    nanosleep(&d, NULL);
}
static int satisfied(volatile uint32_t *addr, uint32_t v) {
    return (int32_t)(__atomic_load_n(addr, __ATOMIC_SEQ_CST) - v) >= 0;
}

/* Runs o on stream s; returns the virtual time the stream is free again. */
static uint64_t run_op(struct CUstream_st *s, op *o) {
    uint64_t start = o->t_enq > s->t_free ? o->t_enq : s->t_free;
    switch (o->kind) {
    case OP_EVENT:
        pthread_mutex_lock(&g_mu);
        o->ev->t_ns = start;
        o->ev->done = 1;
        pthread_mutex_unlock(&g_mu);
        return start;
    case OP_WAIT:
        while (!satisfied(o->addr, o->value)) nap_us(20);
        return mono_ns() > start ? mono_ns() : start;
    case OP_SPIN: {
        uint64_t t0 = mono_ns();
        while (!satisfied(o->addr, o->value) && mono_ns() - t0 < o->ns) nap_us(20);
        return mono_ns() > start ? mono_ns() : start;
    }
    case OP_KERNEL: return start + o->ns;
    }
    return start;
}

static void *stream_main(void *arg) {
    struct CUstream_st *s = arg;
    pthread_mutex_lock(&g_mu);
    for (;;) {
        while (!s->stop && s->head == s->tail) pthread_cond_wait(&g_cv, &g_mu);
        if (s->stop) break;
        op o = s->q[s->head % QCAP];
        s->busy = 1;
        pthread_mutex_unlock(&g_mu);
        uint64_t t_free = run_op(s, &o);
        pthread_mutex_lock(&g_mu);
        s->t_free = t_free;
        s->busy = 0;
        s->head++;
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static struct CUstream_st *new_stream(void) {
    struct CUstream_st *s = calloc(1, sizeof *s);
    pthread_create(&s->thread, NULL, stream_main, s);
    pthread_mutex_lock(&g_mu);
    if (g_nstreams < 64) g_streams[g_nstreams++] = s;
    pthread_mutex_unlock(&g_mu);
    return s;
}

static struct CUstream_st *real(CUstream s) {
    if (s) return s;
    if (!g_null_stream) g_null_stream = new_stream();
    return g_null_stream;
}

static CUresult push(CUstream hs, op o) {
    struct CUstream_st *s = real(hs);
    pthread_mutex_lock(&g_mu);
    while (s->tail - s->head >= QCAP) pthread_cond_wait(&g_cv, &g_mu); /* queue full */
    o.t_enq = mono_ns();
    s->q[s->tail % QCAP] = o;
    s->tail++;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}

static int idle(const struct CUstream_st *s) { return s->head == s->tail && !s->busy; }

/* ---- the driver API ----------------------------------------------------------------- */

CUresult cuGetErrorName(CUresult error, const char **pStr) {
    *pStr = error == CUDA_ERROR_NOT_SUPPORTED ? "CUDA_ERROR_NOT_SUPPORTED"
            : error == CUDA_ERROR_NOT_READY   ? "CUDA_ERROR_NOT_READY"
                                              : "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult error, const char **pStr) {
    *pStr = error == CUDA_ERROR_NOT_SUPPORTED ? "operation not supported (fake)" : "fake error";
    return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext *pctx) {
    int id = fake_cuda_context_id;
    *pctx = fake_cuda_no_context || id < 1 || id > 8 ? NULL : &g_ctx[id - 1];
    return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice *device) {
    *device = 0;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
    (void)dev;
    *pi = attrib == CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY ? !fake_cuda_no_map : 0;
    return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize(void) {
    pthread_mutex_lock(&g_mu);
    for (;;) {
        int all = 1;
        for (int i = 0; i < g_nstreams; i++) all = all && idle(g_streams[i]);
        if (all) break;
        pthread_cond_wait(&g_cv, &g_mu);
    }
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags) {
    (void)Flags;
    *phStream = new_stream();
    return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream hStream) {
    (void)hStream; /* kept: the test makes only a few (the helper's scratch streams) */
    return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream hStream) {
    struct CUstream_st *s = real(hStream);
    pthread_mutex_lock(&g_mu);
    while (!idle(s)) pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    return CUDA_SUCCESS;
}
CUresult cuStreamQuery(CUstream hStream) {
    struct CUstream_st *s = real(hStream);
    pthread_mutex_lock(&g_mu);
    int done = idle(s);
    pthread_mutex_unlock(&g_mu);
    return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult cuStreamWaitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                             unsigned int flags) {
    if (fake_cuda_refuse_wait_value) return CUDA_ERROR_NOT_SUPPORTED;
    if (flags != CU_STREAM_WAIT_VALUE_GEQ) return CUDA_ERROR_INVALID_VALUE;
    return push(stream, (op){.kind = OP_WAIT, .addr = (volatile uint32_t *)(uintptr_t)addr,
                             .value = value});
}
CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags) {
    (void)Flags;
    *phEvent = calloc(1, sizeof **phEvent);
    return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent hEvent) {
    /* An event may still be queued (a teardown after a failure): leak it then. */
    pthread_mutex_lock(&g_mu);
    int free_it = !hEvent->recorded || hEvent->done;
    pthread_mutex_unlock(&g_mu);
    if (free_it) free(hEvent);
    return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
    pthread_mutex_lock(&g_mu);
    hEvent->recorded = 1;
    hEvent->done = 0;
    pthread_mutex_unlock(&g_mu);
    return push(hStream, (op){.kind = OP_EVENT, .ev = hEvent});
}
CUresult cuEventQuery(CUevent hEvent) {
    pthread_mutex_lock(&g_mu);
    int done = hEvent->done;
    pthread_mutex_unlock(&g_mu);
    return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
    if (!hStart->done || !hEnd->done) return CUDA_ERROR_NOT_READY;
    *pMilliseconds = (float)((double)(hEnd->t_ns - hStart->t_ns) / 1e6);
    return CUDA_SUCCESS;
}
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) {
    (void)Flags;
    *pp = calloc(1, bytesize);
    return *pp ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int Flags) {
    (void)Flags;
    *pdptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}
CUresult cuMemFreeHost(void *p) {
    free(p);
    return CUDA_SUCCESS;
}
CUresult cuModuleLoadData(CUmodule *module, const void *image) {
    (void)image;
    *module = calloc(1, sizeof **module);
    return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
    (void)hmod;
    struct CUfunc_st *f = calloc(1, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", name);
    *hfunc = f;
    return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra) {
    (void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY;
    (void)blockDimZ, (void)sharedMemBytes, (void)extra;
    if (f && strcmp(f->name, "dt_timing_hold_spin") == 0) {
        CUdeviceptr flag = *(CUdeviceptr *)kernelParams[0];
        return push(hStream, (op){.kind = OP_SPIN,
                                  .addr = (volatile uint32_t *)(uintptr_t)flag,
                                  .value = *(uint32_t *)kernelParams[1],
                                  .ns = *(uint64_t *)kernelParams[2]});
    }
    return push(hStream, (op){.kind = OP_KERNEL, .ns = fake_cuda_kernel_ns});
}

/* ---- CUPTI: not here --------------------------------------------------------------- */

#define FAKE_CUPTI_FAIL return CUPTI_ERROR_NOT_INITIALIZED
CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) { (void)kind; FAKE_CUPTI_FAIL; }
CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) { (void)kind; FAKE_CUPTI_FAIL; }
CUptiResult cuptiActivityFlushAll(uint32_t flag) { (void)flag; FAKE_CUPTI_FAIL; }
CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record) {
    (void)buffer, (void)valid, (void)record;
    FAKE_CUPTI_FAIL;
}
CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                              size_t *dropped) {
    (void)context, (void)streamId;
    *dropped = 0;
    FAKE_CUPTI_FAIL;
}
CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc a,
                                           CUpti_BuffersCallbackCompleteFunc b) {
    (void)a, (void)b;
    FAKE_CUPTI_FAIL;
}
CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
    (void)f;
    FAKE_CUPTI_FAIL;
}
CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    (void)enable, (void)subscriber, (void)domain, (void)cbid;
    FAKE_CUPTI_FAIL;
}
CUptiResult cuptiFinalize(void) { FAKE_CUPTI_FAIL; }
CUptiResult cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t perThreadStream,
                               uint32_t *streamId) {
    (void)context, (void)stream, (void)perThreadStream, (void)streamId;
    FAKE_CUPTI_FAIL;
}
CUptiResult cuptiGetTimestamp(uint64_t *timestamp) {
    *timestamp = mono_ns();
    return CUPTI_SUCCESS;
}
CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                           void *userdata) {
    (void)subscriber, (void)callback, (void)userdata;
    FAKE_CUPTI_FAIL;
}
CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
    (void)subscriber;
    FAKE_CUPTI_FAIL;
}
CUptiResult cuptiGetResultString(CUptiResult result, const char **str) {
    (void)result;
    *str = "CUPTI_ERROR_NOT_INITIALIZED";
    return CUPTI_SUCCESS;
}
CUptiResult cuptiGetErrorMessage(CUptiResult result, const char **str) {
    (void)result;
    *str = "no CUPTI in the fake driver";
    return CUPTI_SUCCESS;
}
