/* backend_cpu.c — the native worker's CPU backend: runs the kernels of kernels/cpu directly
 * in the shared arena (no copies), OpenMP across rows with the worker's thread count.
 * upload/download are no-ops (ms = 0); run times reps back-to-back calls on the host
 * monotonic clock. No device timing. ceilings: parallel memcpy bandwidth of a 256 MiB
 * buffer with the worker's threads, and the cost of an empty call through a function
 * pointer. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dt_backend.h"
#include "../../src/stats/dt_stats.h"
#include "dt_cpu_kernels.h"
#include "dt_cpu_pool.h"
#include "dt_cpu_plant.h"

/* A bf16/f16 buffer of the arena and its FP32 copy (narrow cases only; NULL for the row
 * buffers of a row op, which narrow_chunk converts a step at a time). */
typedef struct cpu_narrow_buf {
    uint8_t *arena;      /* element (0,0) in the arena */
    int64_t rows, cols, stride; /* stride: the arena's row stride, elements */
    float *f32;          /* dense rows x cols FP32 copy, or NULL */
    int per_row;         /* one row per case row (a, b, the output); 0: gamma, beta */
} cpu_narrow_buf;

/* Per-case state: typed pointers into the arena, resolved once at prepare. For bf16/f16
 * cases the FP32 kernels run on FP32 scratch: every call widens the narrow inputs into
 * it (exactly), runs the kernel (FP32 arithmetic) and rounds the output into the arena
 * (nearest even): convert on load and store, all inside the timed call. */
typedef struct cpu_state {
    dt_op op;
    int64_t m, n, k;
    const float *a, *b;       /* matrix inputs (b: NULL unless the op has one) */
    int64_t lda, ldb;         /* their row strides, elements */
    const float *gamma, *beta;
    const int64_t *labels;
    float *out;               /* contiguous output */
    dt_dtype dtype;           /* the case dtype */
    int nnarrow;              /* narrow float buffers: inputs first, the output last */
    cpu_narrow_buf nb[DT_MAX_BUFFERS];
    const cpu_narrow_buf *na, *nbb; /* a and b among nb (nbb NULL without b) */
    int onepass;              /* narrow add, gelu_add, sum: dt_cpu_*_narrow on the arena */
    dt_cpu_plant *plant;      /* tests only: DUALTIME_PLANT_CHEAT (dt_cpu_plant.h); NULL */
} cpu_state;

/* f16 -> f32 of every bit pattern (built once). */
static float g_f16_table[65536];
static void f16_table_init(void) {
    static int done;
    if (done) return;
    for (uint32_t h = 0; h < 65536; h++) g_f16_table[h] = dt_narrow_to_f32(DT_F16, (uint16_t)h);
    done = 1;
}

/* Rows [i0, i1) of b widened (exactly) into dense FP32 rows from f (row i0 at f). */
static void widen_rows(dt_dtype d, const cpu_narrow_buf *b, int64_t i0, int64_t i1, float *f) {
    for (int64_t i = i0; i < i1; i++) {
        const uint16_t *src = (const uint16_t *)(b->arena) + i * b->stride;
        float *dst = f + (i - i0) * b->cols;
        if (d == DT_BF16) {
            _Pragma("omp simd")
            for (int64_t j = 0; j < b->cols; j++) {
                uint32_t u = (uint32_t)src[j] << 16;
                __builtin_memcpy(&dst[j], &u, 4);
            }
        } else {
            for (int64_t j = 0; j < b->cols; j++) dst[j] = g_f16_table[src[j]];
        }
    }
}

/* Dense FP32 rows from f (row i0 at f) rounded into rows [i0, i1) of b in the arena
 * (dt_f32_to_narrow's rule; bf16 in line, so GCC vectorizes the loop). */
static void narrow_rows(dt_dtype d, const cpu_narrow_buf *b, int64_t i0, int64_t i1, const float *f) {
    for (int64_t i = i0; i < i1; i++) {
        uint16_t *dst = (uint16_t *)(b->arena) + i * b->stride;
        const float *src = f + (i - i0) * b->cols;
        if (d == DT_BF16) {
            _Pragma("omp simd")
            for (int64_t j = 0; j < b->cols; j++) {
                uint32_t u;
                __builtin_memcpy(&u, &src[j], 4);
                dst[j] = dt_f32_bits_to_bf16(u);
            }
        } else {
            for (int64_t j = 0; j < b->cols; j++) dst[j] = dt_f32_to_narrow(d, src[j]);
        }
    }
}

static void cpu_state_free(cpu_state *s) {
    if (!s) return;
    dt_cpu_plant_free(s->plant); /* first: joins a planted thread still using the state */
    for (int i = 0; i < s->nnarrow; i++) free(s->nb[i].f32);
    free(s);
}

/* Narrow case: points the kernel pointers of s at FP32 scratch for every float buffer. */
static dt_status narrow_setup(cpu_state *s, const dt_case_layout *L, uint8_t *host_base,
                              dt_err *err) {
    f16_table_init();
    for (int pass = 0; pass < 2; pass++) /* inputs first, the output last */
        for (int i = 0; i < L->nbuffers; i++) {
            const dt_buffer_layout *B = &L->buf[i];
            if (B->dtype == DT_I64 || B->is_output != pass) continue;
            cpu_narrow_buf *nb = &s->nb[s->nnarrow++];
            nb->arena = host_base + B->data_offset;
            nb->rows = B->rows;
            nb->cols = B->cols;
            nb->stride = B->row_stride;
            nb->per_row = strcmp(B->name, "gamma") != 0 && strcmp(B->name, "beta") != 0;
            if (strcmp(B->name, "a") == 0) s->na = nb;
            else if (strcmp(B->name, "b") == 0) s->nbb = nb;
            /* whole FP32 copies for gemm and the parameter vectors; a row op's row
             * buffers are converted step by step in per-thread scratch (narrow_chunk) */
            if (L->op == DT_OP_GEMM || !nb->per_row) {
                nb->f32 = malloc((size_t)(B->rows * B->cols) * sizeof(float));
                if (!nb->f32)
                    return dt_fail(err, DT_EUNAVAIL, "cpu backend: cannot allocate %lld bytes of FP32 scratch for '%s'",
                                   (long long)(B->rows * B->cols * 4), B->name);
            }
            const float *f = nb->f32;
            if (strcmp(B->name, "a") == 0) s->a = f, s->lda = B->cols;
            else if (strcmp(B->name, "b") == 0) s->b = f, s->ldb = B->cols;
            else if (strcmp(B->name, "gamma") == 0) s->gamma = f;
            else if (strcmp(B->name, "beta") == 0) s->beta = f;
            else if (B->is_output) s->out = nb->f32;
        }
    return DT_OK;
}

static int cpu_available(char *reason, size_t reason_len) {
    if (reason && reason_len) reason[0] = '\0';
    return 1;
}

static void cpu_describe(char *buf, size_t len) {
    char model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) != 0) continue;
            const char *p = strchr(line, ':');
            if (!p) break;
            p++;
            while (*p == ' ' || *p == '\t') p++;
            size_t n = strcspn(p, "\n");
            if (n >= sizeof model) n = sizeof model - 1;
            /* keep the JSON valid: drop quotes and backslashes */
            size_t o = 0;
            for (size_t i = 0; i < n; i++)
                if (p[i] != '"' && p[i] != '\\' && (unsigned char)p[i] >= 0x20) model[o++] = p[i];
            model[o] = '\0';
            break;
        }
        fclose(f);
    }
    snprintf(buf, len,
             "{\"cpu_model\":\"%s\",\"omp_max_threads\":%d,\"gemm\":\"%s\",\"rows\":\"%s\"}",
             model, omp_get_max_threads(), dt_cpu_gemm_describe(), dt_cpu_rows_describe());
}

/* Index of the buffer named `name` in L, or -1. */
static int find_buf(const dt_case_layout *L, const char *name) {
    for (int i = 0; i < L->nbuffers; i++)
        if (strcmp(L->buf[i].name, name) == 0) return i;
    return -1;
}

static const char *kernel_name(dt_op op) {
    switch (op) {
    case DT_OP_ADD: return "dt_cpu_add";
    case DT_OP_GELU_ADD:
        return strcmp(dt_cpu_gelu_variant(), "libm") == 0 ? "dt_cpu_gelu_add (libm erff, v1)"
                                                            : "dt_cpu_gelu_add (polynomial erf)";
    case DT_OP_SUM: return "dt_cpu_sum (32 f32 lanes, f64 across blocks)";
    case DT_OP_SOFTMAX: return "dt_cpu_softmax (vector expf, f32 lanes, f64 sum)";
    case DT_OP_RMSNORM: return "dt_cpu_rmsnorm (f32 lanes, f64 sum of squares)";
    case DT_OP_LAYERNORM: return "dt_cpu_layernorm (f32 lanes, f64 two-pass stats)";
    case DT_OP_RESIDUAL_LAYERNORM:
        return "dt_cpu_residual_layernorm (f32 lanes, f64 two-pass stats)";
    case DT_OP_CROSS_ENTROPY:
        return "dt_cpu_cross_entropy (vector expf, f32 lanes, f64 logsumexp)";
    case DT_OP_GEMM: return "dt_cpu_gemm";
    default: return "?";
    }
}

static void cpu_call(const cpu_state *s);
static void plant_call(const void *ctx) { cpu_call(ctx); }

/* 1 when DUALTIME_CPU_NARROW=widen: bf16/f16 add, gelu_add and sum take the widen path
 * (narrow_chunk, session 14) as every other row op does; else (unset, the default) they run
 * the one-pass kernels (dt_cpu_add_narrow ..., session 15). Read once per process. */
static int narrow_widen_forced(void) {
    static int forced = -1;
    if (forced < 0) {
        const char *e = getenv("DUALTIME_CPU_NARROW");
        forced = e && strcmp(e, "widen") == 0;
    }
    return forced;
}

/* What the one-pass kernel of op does, for the implementation string. */
static const char *onepass_name(dt_op op) {
    switch (op) {
    case DT_OP_ADD:
        return "dt_cpu_add_narrow: each element widened, added and rounded in registers";
    case DT_OP_GELU_ADD:
        return "dt_cpu_gelu_add_narrow: 512-element blocks of a row widened into L1, the FP32 row "
               "function, rounded on store";
    case DT_OP_SUM:
        return "dt_cpu_sum_narrow: the FP32 sum's order, its blocks widened in registers "
               "(v3; elsewhere into L1), the last n % 32 into L1";
    default: return NULL;
    }
}

static dt_status cpu_prepare(void **state, const dt_case_layout *L, uint8_t *host_base,
                             int capture_sources, dt_prepare_info *info, dt_err *err) {
    *state = NULL;
    if (L->op < 0 || L->op >= DT_OP_COUNT)
        return dt_fail(err, DT_EINVAL, "cpu backend: unknown op %d", (int)L->op);
    cpu_state *s = dt_xcalloc(1, sizeof *s);
    s->op = L->op;
    s->m = L->m;
    s->n = L->n;
    s->k = L->k;
    int ia = find_buf(L, "a"), ib = find_buf(L, "b"), ig = find_buf(L, "gamma"),
        ibeta = find_buf(L, "beta"), il = find_buf(L, "labels"), io = dt_layout_output(L);
    if (ia < 0) {
        free(s);
        return dt_fail(err, DT_EINVAL, "cpu backend: layout has no input 'a'");
    }
    s->a = (const float *)(host_base + L->buf[ia].data_offset);
    s->lda = L->buf[ia].row_stride;
    if (ib >= 0) {
        s->b = (const float *)(host_base + L->buf[ib].data_offset);
        s->ldb = L->buf[ib].row_stride;
    }
    if (ig >= 0) s->gamma = (const float *)(host_base + L->buf[ig].data_offset);
    if (ibeta >= 0) s->beta = (const float *)(host_base + L->buf[ibeta].data_offset);
    if (il >= 0) s->labels = (const int64_t *)(host_base + L->buf[il].data_offset);
    s->out = (float *)(host_base + L->buf[io].data_offset);
    s->dtype = L->dtype;
    if (L->dtype != DT_F32) {
        dt_status st = narrow_setup(s, L, host_base, err);
        if (st != DT_OK) {
            cpu_state_free(s);
            return st;
        }
    }

    memset(info, 0, sizeof *info);
    snprintf(info->output_policy, sizeof info->output_policy, "preallocated");
    if (L->op == DT_OP_GEMM)
        snprintf(info->implementation, sizeof info->implementation,
                 "%s [%s] OpenMP threads=%d", kernel_name(L->op), dt_cpu_gemm_describe(),
                 omp_get_max_threads());
    else
        snprintf(info->implementation, sizeof info->implementation,
                 "%s [%s], row-parallel, OpenMP threads=%d%s", kernel_name(L->op),
                 dt_cpu_rows_describe(), omp_get_max_threads(),
                 L->m * L->n < DT_CPU_PAR_MIN_ELEMS ? " (small: may run single-threaded)"
                                                    : "");
    s->onepass = L->dtype != DT_F32 && onepass_name(L->op) && !narrow_widen_forced();
    if (s->onepass) {
        size_t len = strlen(info->implementation);
        snprintf(info->implementation + len, sizeof info->implementation - len,
                 "; %s storage, one pass (%s), FP32 arithmetic, rounded to %s (nearest even) on "
                 "store", dt_dtype_name(L->dtype), onepass_name(L->op), dt_dtype_name(L->dtype));
    } else if (L->dtype != DT_F32) {
        size_t len = strlen(info->implementation);
        snprintf(info->implementation + len, sizeof info->implementation - len,
                 "; %s storage: widened to FP32 scratch each call%s, FP32 arithmetic, rounded "
                 "to %s on store%s", dt_dtype_name(L->dtype),
                 L->op == DT_OP_GEMM ? "" : " in row chunks on the kernels' pool (fused)",
                 dt_dtype_name(L->dtype),
                 onepass_name(L->op) ? " (DUALTIME_CPU_NARROW=widen)" : "");
    }
    info->compile_ms = 0.0;
    info->alloc_ms = 0.0;
    info->nsources = 0; /* compiled ahead of time: nothing to capture */
    const dt_buffer_layout *O = &L->buf[io], *A = &L->buf[ia];
    s->plant = dt_cpu_plant_new(L->op, host_base + O->data_offset, O->rows * O->cols * O->elem_bytes,
                                host_base + A->data_offset, A->cols * A->elem_bytes, plant_call, s);
    if (s->plant) {
        size_t len = strlen(info->implementation);
        snprintf(info->implementation + len, sizeof info->implementation - len,
                 " PLANTED CHEAT %s (tests only)", dt_cpu_plant_kind(s->plant));
    }
    *state = s;
    return DT_OK;
}

static dt_status cpu_upload(void *state, double *ms, dt_err *err) {
    *ms = 0.0;
    return DT_OK;
}

static dt_status cpu_download(void *state, double *ms, dt_err *err) {
    *ms = 0.0;
    const cpu_state *s = state;
    if (s->plant) dt_cpu_plant_download(s->plant);
    return DT_OK;
}

/* The FP32 kernel of s's op on m rows at a, b (row strides lda, ldb), labels, out. */
static void cpu_kernel(const cpu_state *s, int64_t m, const float *a, int64_t lda, const float *b,
                       int64_t ldb, const int64_t *labels, float *out) {
    switch (s->op) {
    case DT_OP_ADD: dt_cpu_add(m, s->n, a, lda, b, ldb, out); break;
    case DT_OP_GELU_ADD: dt_cpu_gelu_add(m, s->n, a, lda, b, ldb, out); break;
    case DT_OP_SUM: dt_cpu_sum(m, s->n, a, lda, out); break;
    case DT_OP_SOFTMAX: dt_cpu_softmax(m, s->n, a, lda, out); break;
    case DT_OP_RMSNORM: dt_cpu_rmsnorm(m, s->n, a, lda, s->gamma, out); break;
    case DT_OP_LAYERNORM: dt_cpu_layernorm(m, s->n, a, lda, s->gamma, s->beta, out); break;
    case DT_OP_RESIDUAL_LAYERNORM: dt_cpu_residual_layernorm(m, s->n, a, lda, b, ldb, out); break;
    case DT_OP_CROSS_ENTROPY: dt_cpu_cross_entropy(m, s->n, a, lda, labels, out); break;
    case DT_OP_GEMM: dt_cpu_gemm(m, s->n, s->k, a, lda, b, ldb, out); break;
    default: DT_ASSERT(0);
    }
}
static void cpu_call_f32(const cpu_state *s) {
    cpu_kernel(s, s->m, s->a, s->lda, s->b, s->ldb, s->labels, s->out);
}

/* A narrow row op's rows [i0, i1) (a pool chunk, or all rows): in steps of at most
 * CPU_NARROW_STEP_ELEMS elements (at least one row), the step's rows of a (and b) widened
 * into this thread's scratch, the FP32 kernel on them (on this thread: a kernel called
 * from a pool item runs there), its output rows rounded into the arena. The scratch is a
 * few hundred KB at most, so it stays in the core's cache: the conversions cost no DRAM
 * traffic of their own. */
#define CPU_NARROW_STEP_ELEMS 8192
static _Thread_local float *t_scratch;
static _Thread_local size_t t_scratch_floats;
static void narrow_chunk(const void *args, int64_t i0, int64_t i1) {
    const cpu_state *s = args;
    const cpu_narrow_buf *na = s->na, *nbb = s->nbb, *no = &s->nb[s->nnarrow - 1];
    const int64_t n = s->n, ocols = no->cols; /* 1: sum, cross_entropy */
    const int64_t step = CPU_NARROW_STEP_ELEMS / n > 0 ? CPU_NARROW_STEP_ELEMS / n : 1;
    const size_t need = (size_t)(step * (2 * n + ocols));
    if (t_scratch_floats < need) {
        free(t_scratch);
        t_scratch = dt_xmalloc(need * sizeof(float));
        t_scratch_floats = need;
    }
    float *fa = t_scratch, *fb = t_scratch + step * n, *fo = t_scratch + 2 * step * n;
    for (int64_t r0 = i0; r0 < i1; r0 += step) {
        const int64_t r1 = r0 + step < i1 ? r0 + step : i1;
        widen_rows(s->dtype, na, r0, r1, fa);
        if (nbb) widen_rows(s->dtype, nbb, r0, r1, fb);
        cpu_kernel(s, r1 - r0, fa, n, nbb ? fb : NULL, n, s->labels ? s->labels + r0 : NULL, fo);
        narrow_rows(s->dtype, no, r0, r1, fo);
    }
}

/* One call of the op (narrow cases: widen, FP32 kernel, round; add, gelu_add and sum: the
 * one-pass kernels, the same bits, unless DUALTIME_CPU_NARROW=widen). The row ops (all but
 * gemm) widen their parameter vectors, then run widen, kernel and rounding step by step
 * in each pool chunk (rows stolen in chunks, dt_cpu_pool_rows). Before session 14 each
 * of the three was its own pass over whole FP32 copies of the buffers, the conversions in
 * OpenMP regions next to the pool's spinning workers, the rounding an out-of-line call
 * an element (CPU bf16 add 128x1024 took 651 us against torch's 38). gemm widens A and B
 * whole into their scratch, then runs its own threads. */
static void cpu_call(const cpu_state *s) {
    if (s->nnarrow == 0) {
        cpu_call_f32(s);
        return;
    }
    const cpu_narrow_buf *o = &s->nb[s->nnarrow - 1];
    if (s->onepass) {
        const cpu_narrow_buf *a = s->na, *b = s->nbb;
        uint16_t *out = (uint16_t *)o->arena;
        const uint16_t *ah = (const uint16_t *)a->arena;
        const uint16_t *bh = b ? (const uint16_t *)b->arena : NULL;
        switch (s->op) {
        case DT_OP_ADD:
            dt_cpu_add_narrow(s->dtype, s->m, s->n, ah, a->stride, bh, b->stride, out);
            break;
        case DT_OP_GELU_ADD:
            dt_cpu_gelu_add_narrow(s->dtype, s->m, s->n, ah, a->stride, bh, b->stride, out);
            break;
        case DT_OP_SUM: dt_cpu_sum_narrow(s->dtype, s->m, s->n, ah, a->stride, out); break;
        default: DT_ASSERT(0);
        }
        return;
    }
    if (s->op == DT_OP_GEMM) {
        for (int i = 0; i < s->nnarrow - 1; i++)
            widen_rows(s->dtype, &s->nb[i], 0, s->nb[i].rows, s->nb[i].f32);
        cpu_call_f32(s);
        narrow_rows(s->dtype, o, 0, o->rows, o->f32);
        return;
    }
    for (int i = 0; i < s->nnarrow - 1; i++)
        if (!s->nb[i].per_row) widen_rows(s->dtype, &s->nb[i], 0, s->nb[i].rows, s->nb[i].f32);
    /* one thread (the caller, no pool) below DT_CPU_PAR_MIN_ELEMS, as the FP32 kernels */
    dt_cpu_pool_rows(s->m * s->n >= DT_CPU_PAR_MIN_ELEMS ? omp_get_max_threads() : 1, s->m, s->n,
                     narrow_chunk, s);
}

static dt_status cpu_run(void *state, int64_t reps, int64_t *host_ns, dt_err *err) {
    const cpu_state *s = state;
    if (reps < 1) return dt_fail(err, DT_EINVAL, "reps must be >= 1, got %lld", (long long)reps);
    if (s->plant) {
        *host_ns = dt_cpu_plant_run(s->plant, reps);
        return DT_OK;
    }
    int64_t t0 = dt_now_ns();
    for (int64_t r = 0; r < reps; r++) cpu_call(s);
    int64_t t1 = dt_now_ns();
    *host_ns = t1 - t0;
    return DT_OK;
}

static void cpu_empty_call(void) {}

/* The floor in a case's setting: t0; reps empty calls through a pointer; t1. */
static dt_status cpu_floor(void *state, int64_t reps, int64_t *host_ns, dt_err *err) {
    (void)state;
    if (reps < 1) return dt_fail(err, DT_EINVAL, "reps must be >= 1, got %lld", (long long)reps);
    void (*volatile fp)(void) = cpu_empty_call;
    int64_t t0 = dt_now_ns();
    for (int64_t r = 0; r < reps; r++) fp();
    *host_ns = dt_now_ns() - t0;
    return DT_OK;
}

static void cpu_release(void *state) { cpu_state_free(state); }

/* ---- ceilings ---------------------------------------------------------------------- */

#define CPU_COPY_BYTES ((size_t)256 << 20) /* source size; the destination is as large */
#define CPU_COPY_REPS 5                    /* timed copies (median), after one warm-up */
#define CPU_QUEUE_CALLS 1000000            /* empty calls per queued sample */
#define CPU_QUEUE_REPS 5
#define CPU_SYNC_WARMUP 20
#define CPU_SYNC_REPS 200

/* Thread t's page-aligned chunk [*lo, *hi) of n bytes split over nt threads. */
static void chunk_of(size_t n, int t, int nt, size_t *lo, size_t *hi) {
    size_t c = ((n + (size_t)nt - 1) / (size_t)nt + 4095) & ~(size_t)4095;
    *lo = (size_t)t * c < n ? (size_t)t * c : n;
    *hi = *lo + c < n ? *lo + c : n;
}

/* dst <- src (or dst <- byte `fill` when src is NULL), one chunk per OpenMP thread: the
 * same chunking for the first touch and the copies keeps pages near their thread. */
static void par_copy(uint8_t *dst, const uint8_t *src, size_t n, int fill) {
#pragma omp parallel
    {
        size_t lo, hi;
        chunk_of(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        if (hi > lo) {
            if (src)
                memcpy(dst + lo, src + lo, hi - lo);
            else
                memset(dst + lo, fill, hi - lo);
        }
    }
}

#define CPU_TOUCH_BYTES 512         /* the touch floor's copy: 512 B read, 512 B written */
#define CPU_TOUCH_BUF_BYTES 4096    /* each of its two buffers */

/* The CPU analogue of the CUDA touch kernel: the least call that reads and writes memory. */
static void cpu_touch_call(uint8_t *dst, const uint8_t *src) { memcpy(dst, src, CPU_TOUCH_BYTES); }

static dt_status cpu_ceilings(dt_ceilings *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    size_t bytes = CPU_COPY_BYTES;
    /* 2 MiB aligned and huge pages where the kernel offers them: far fewer page faults
     * at the first touch (the slow part of this measurement) */
    const size_t huge = (size_t)2 << 20;
    uint8_t *src = aligned_alloc(huge, bytes), *dst = aligned_alloc(huge, bytes);
    if (!src || !dst) {
        free(src);
        free(dst);
        return dt_fail(err, DT_EUNAVAIL, "cpu ceilings: cannot allocate 2 x %zu bytes", bytes);
    }
#ifdef MADV_HUGEPAGE
    madvise(src, bytes, MADV_HUGEPAGE); /* advice only: failure is harmless */
    madvise(dst, bytes, MADV_HUGEPAGE);
#endif
    par_copy(src, NULL, bytes, 1); /* first touch of the source */
    par_copy(dst, src, bytes, 0);  /* warm-up, first touch of the destination */
    double t[CPU_SYNC_REPS];
    for (int r = 0; r < CPU_COPY_REPS; r++) {
        int64_t t0 = dt_now_ns();
        par_copy(dst, src, bytes, 0);
        t[r] = (double)(dt_now_ns() - t0);
    }
    double copy_ns = dt_stats_median(t, CPU_COPY_REPS);
    double g[CPU_COPY_REPS]; /* per-copy GB/s, for the ceiling's own spread */
    for (int r = 0; r < CPU_COPY_REPS; r++) g[r] = t[r] > 0 ? 2.0 * (double)bytes / t[r] : 0;
    out->copy_gbps_iqr = dt_stats_summarize(g, CPU_COPY_REPS).iqr;
    free(src);
    free(dst);
    if (!(copy_ns > 0))
        return dt_fail(err, DT_EUNAVAIL, "cpu ceilings: copy time not measurable");
    out->copy_bytes = (int64_t)bytes;
    out->copy_gbps = 2.0 * (double)bytes / copy_ns; /* bytes per ns = GB/s */

    /* launch floors: an empty function through a volatile function pointer (not inlined) */
    void (*volatile fp)(void) = cpu_empty_call;
    for (int r = 0; r < CPU_QUEUE_REPS; r++) {
        int64_t t0 = dt_now_ns();
        for (int i = 0; i < CPU_QUEUE_CALLS; i++) fp();
        t[r] = (double)(dt_now_ns() - t0) / CPU_QUEUE_CALLS;
    }
    double queue_ns = dt_stats_median(t, CPU_QUEUE_REPS);
    if (!(queue_ns > 0)) queue_ns = 1e-3; /* below the clock: report 1 ps, never 0 */
    for (int r = 0; r < CPU_SYNC_WARMUP + CPU_SYNC_REPS; r++) {
        int64_t t0 = dt_now_ns();
        fp();
        double d = (double)(dt_now_ns() - t0);
        if (r >= CPU_SYNC_WARMUP) t[r - CPU_SYNC_WARMUP] = d;
    }
    double sync_ns = dt_stats_median(t, CPU_SYNC_REPS);
    if (sync_ns < queue_ns) sync_ns = queue_ns; /* a coarse clock can read 0 */

    /* touch floor: a call that copies 512 bytes between two small buffers, timed like
     * the sync floor */
    _Alignas(64) uint8_t tsrc[CPU_TOUCH_BUF_BYTES], tdst[CPU_TOUCH_BUF_BYTES];
    memset(tsrc, 0x3c, sizeof tsrc);
    memset(tdst, 0, sizeof tdst);
    void (*volatile tp)(uint8_t *, const uint8_t *) = cpu_touch_call;
    for (int r = 0; r < CPU_SYNC_WARMUP + CPU_SYNC_REPS; r++) {
        int64_t t0 = dt_now_ns();
        tp(tdst, tsrc);
        double d = (double)(dt_now_ns() - t0);
        if (r >= CPU_SYNC_WARMUP) t[r - CPU_SYNC_WARMUP] = d;
    }
    double touch_ns = dt_stats_median(t, CPU_SYNC_REPS);
    if (touch_ns < queue_ns) touch_ns = queue_ns; /* a coarse clock can read 0 */
    out->launch_queue_floor_us = queue_ns / 1e3;
    out->launch_sync_floor_us = sync_ns / 1e3;
    out->launch_sync_touch_floor_us = touch_ns / 1e3;
    snprintf(out->method, sizeof out->method,
             "cpu: parallel memcpy (%d OpenMP threads, one chunk each) of %zu MiB, median of "
             "%d after 1 warm-up, bytes read + written; floors: an empty function through a "
             "function pointer, t0;call;t1 median of %d (includes the clock read), and %d "
             "calls back to back per call, median of %d; touch floor: t0;call;t1 of a "
             "function that copies %d B between two %d B buffers, median of %d",
             omp_get_max_threads(), bytes >> 20, CPU_COPY_REPS, CPU_SYNC_REPS, CPU_QUEUE_CALLS,
             CPU_QUEUE_REPS, CPU_TOUCH_BYTES, CPU_TOUCH_BUF_BYTES, CPU_SYNC_REPS);
    return DT_OK;
}

const dt_backend dt_backend_cpu = {
    .name = "cpu",
    .available = cpu_available,
    .describe = cpu_describe,
    .prepare = cpu_prepare,
    .upload = cpu_upload,
    .run = cpu_run,
    .download = cpu_download,
    .device = NULL,
    .release = cpu_release,
    .ceilings = cpu_ceilings,
    .floor = cpu_floor,
};
