/* dt_arena.c — layout, deterministic inputs and arena checks (see dt_arena.h). */
#include "dt_arena.h"

#include <math.h>
#include <stdarg.h>
#include <openssl/evp.h>
#include <string.h>

/* the workers and the SDK build this file without OpenMP: the loops then run serially */
#ifndef _OPENMP
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#endif

static int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

void dt_layout_make(dt_case_layout *L, dt_op op, int64_t m, int64_t n, int64_t k, int views) {
    dt_layout_make_typed(L, op, m, n, k, views, DT_F32);
}

void dt_layout_make_typed(dt_case_layout *L, dt_op op, int64_t m, int64_t n, int64_t k,
                          int views, dt_dtype dtype) {
    const dt_op_info *info = dt_op_get(op);
    DT_ASSERT(dt_dtype_is_float(dtype));
    memset(L, 0, sizeof *L);
    L->op = op;
    L->dtype = dtype;
    L->m = m;
    L->n = n;
    L->k = info->is_gemm ? k : 0;
    L->views = views;
    L->nbuffers = info->nbuffers;
    int64_t off = 0;
    for (int i = 0; i < info->nbuffers; i++) {
        const dt_buffer_role *r = &info->buffers[i];
        dt_buffer_layout *b = &L->buf[i];
        b->name = r->name;
        b->dtype = r->dtype == DT_F32 ? dtype : r->dtype;
        b->is_output = r->is_output;
        b->rows = dt_dim_extent(r->rows, m, n, L->k);
        b->cols = dt_dim_extent(r->cols, m, n, L->k);
        b->elem_bytes = dt_dtype_size(b->dtype);
        b->is_view = views && r->viewable;
        /* Views: one padding row above and below; the row stride is the even one of
         * cols+3, cols+4, so the window start (1,1) lies an odd number of elements past
         * the 256-aligned region start and no row start is 16-byte aligned (f32: 4 mod
         * 8 bytes; 2-byte types: 2 mod 4; with a fixed cols+3, cols % 4 == 0 made
         * element (0,0) 16-byte aligned). */
        int64_t prow = b->is_view ? b->rows + 2 : b->rows;
        int64_t pcol = b->is_view ? (b->cols % 2 ? b->cols + 3 : b->cols + 4) : b->cols;
        b->row_stride = pcol;
        b->slot_offset = off;
        b->region_offset = off + DT_GUARD_BYTES;
        b->region_bytes = prow * pcol * b->elem_bytes;
        b->data_offset = b->region_offset + (b->is_view ? (pcol + 1) * b->elem_bytes : 0);
        off = align_up(b->region_offset + b->region_bytes + DT_GUARD_BYTES, DT_ARENA_ALIGN);
    }
    L->total_bytes = off;
}

int dt_layout_output(const dt_case_layout *L) {
    for (int i = 0; i < L->nbuffers; i++)
        if (L->buf[i].is_output) return i;
    DT_ASSERT(0);
    return -1;
}

void dt_layout_output_slot(const dt_case_layout *L, int64_t *off, int64_t *len) {
    const int o = dt_layout_output(L);
    const int64_t end = o + 1 < L->nbuffers ? L->buf[o + 1].slot_offset : L->total_bytes;
    *off = L->buf[o].slot_offset;
    *len = end - *off;
}

/* splitmix64 finaliser: a counter-based generator, one 64-bit draw per (stream, index). */
static uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t draw(uint64_t seed, dt_op op, int buffer, int64_t idx) {
    uint64_t stream = mix64(seed ^ mix64(((uint64_t)op << 8) | (uint64_t)buffer));
    return mix64(stream + (uint64_t)idx * 0xD1B54A32D192ED03ull);
}

uint64_t dt_arena_digest(const uint8_t *base, int64_t off, int64_t len) {
    DT_ASSERT(off % 8 == 0 && len % 8 == 0 && len >= 0);
    const int64_t w0 = off / 8, nw = len / 8;
    uint64_t sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum) if (nw > (1 << 18))
    for (int64_t j = 0; j < nw; j++) {
        uint64_t w;
        memcpy(&w, base + off + 8 * j, 8);
        sum += mix64(w ^ ((uint64_t)(w0 + j) * DT_DIGEST_INDEX_MUL));
    }
    return sum;
}

float dt_input_f32(uint64_t seed, dt_op op, int buffer, int64_t idx) {
    /* 2049 grid points: -1024/1024 .. 1024/1024 */
    int64_t q = (int64_t)(draw(seed, op, buffer, idx) % 2049u) - 1024;
    return (float)q / 1024.0f;
}

float dt_input_value(uint64_t seed, dt_op op, int buffer, int64_t idx, dt_dtype dtype) {
    if (dtype != DT_BF16) return dt_input_f32(seed, op, buffer, idx); /* f16: same grid */
    /* 257 grid points: -128/128 .. 128/128 (8 significant bits) */
    int64_t q = (int64_t)(draw(seed, op, buffer, idx) % 257u) - 128;
    return (float)q / 128.0f;
}

/* ---- input distributions (see dt_arena.h) ------------------------------------------ */

static const struct {
    const char *name, *doc;
} k_inputs[DT_INPUTS_COUNT] = {
    [DT_INPUTS_UNIFORM] = {"uniform", "every input on the uniform grid (f32/f16 multiples of "
                                      "2^-10, bf16 of 2^-7, in [-1, 1])"},
    [DT_INPUTS_NORMAL] = {"normal", "every float input ~N(0,1) (Irwin-Hall of 4) in [-3.47, "
                                    "3.47], grid 2^-12 f32, 2^-9 f16, 2^-6 bf16"},
    [DT_INPUTS_WIDE_LOGITS] = {"wide-logits",
                               "softmax/cross_entropy a: row offset +-(128..896) plus "
                               "[-32, 32] (grid 2^-6 f32, 0.5 f16, 4 bf16); other ops uniform"},
    [DT_INPUTS_OFFSET] = {"offset", "norms' matrix inputs: mean + small spread (f32 4096 + "
                                    "[-1,1]; f16 1024 + [-16,16] step 1; bf16 256 + [-16,16] "
                                    "step 2); other ops uniform"},
    [DT_INPUTS_CANCEL] = {"cancel", "sum a: first half of a row B_j > 0, second half -B_j + "
                                    "s_j; f32 B<=256 step 2^-3, |s|<=1 step 2^-10; f16 B<=31, s "
                                    "step 2^-6; bf16 B<=15, s step 2^-3; other ops uniform"},
};

const char *dt_inputs_name(dt_inputs d) {
    DT_ASSERT(d >= 0 && d < DT_INPUTS_COUNT);
    return k_inputs[d].name;
}

const char *dt_inputs_describe(dt_inputs d) {
    DT_ASSERT(d >= 0 && d < DT_INPUTS_COUNT);
    return k_inputs[d].doc;
}

int dt_inputs_find(const char *name) {
    for (int i = 0; i < DT_INPUTS_COUNT; i++)
        if (strcmp(k_inputs[i].name, name) == 0) return i;
    return -1;
}

int dt_inputs_applies(dt_inputs d, dt_op op, int buffer) {
    switch (d) {
    case DT_INPUTS_NORMAL: return dt_dtype_is_float(dt_op_get(op)->buffers[buffer].dtype);
    case DT_INPUTS_WIDE_LOGITS:
        return (op == DT_OP_SOFTMAX || op == DT_OP_CROSS_ENTROPY) && buffer == 0;
    case DT_INPUTS_OFFSET:
        return ((op == DT_OP_RMSNORM || op == DT_OP_LAYERNORM) && buffer == 0) ||
               (op == DT_OP_RESIDUAL_LAYERNORM && buffer <= 1);
    case DT_INPUTS_CANCEL: return op == DT_OP_SUM && buffer == 0;
    default: return 0;
    }
}

/* A uniform integer in [-q, q] from 64 bits. */
static int64_t sym_int(uint64_t bits, int64_t q) {
    return (int64_t)(bits % (uint64_t)(2 * q + 1)) - q;
}

static float dist_normal(uint64_t d, dt_dtype dtype) {
    double z = 0;
    for (int i = 0; i < 4; i++) z += (double)((d >> (16 * i)) & 0xFFFFu) / 65536.0;
    z = (z - 2.0) * 1.7320508075688772; /* mean 0, variance 1 */
    const double step = dtype == DT_BF16 ? 0x1p-6 : dtype == DT_F16 ? 0x1p-9 : 0x1p-12;
    return (float)(floor(z / step + 0.5) * step);
}

static float dist_wide_logits(uint64_t seed, dt_op op, int buffer, int64_t row, uint64_t d,
                              dt_dtype dtype) {
    uint64_t rd = mix64(mix64(seed ^ 0x57494445ull) + (uint64_t)row * 0x9E37ull + (uint64_t)op +
                        ((uint64_t)buffer << 40));
    double off = (double)(128 + 64 * (int64_t)(rd % 13u)) * (row % 2 ? -1.0 : 1.0);
    double step = dtype == DT_BF16 ? 4.0 : dtype == DT_F16 ? 0.5 : 0x1p-6;
    return (float)(off + (double)sym_int(d, (int64_t)(32.0 / step)) * step);
}

static float dist_offset(uint64_t d, dt_dtype dtype) {
    if (dtype == DT_BF16) return (float)(256.0 + 2.0 * (double)sym_int(d, 8));
    if (dtype == DT_F16) return (float)(1024.0 + (double)sym_int(d, 16));
    return (float)(4096.0 + (double)sym_int(d, 1024) * 0x1p-10);
}

/* Row halves: column j < h = cols/2 holds B_j > 0, column h + j holds -B_j + s_j (an odd
 * last column: s). The total is sum s_j; the partial sums rise to sum B_j on the way. */
static float dist_cancel(uint64_t seed, dt_op op, int buffer, int64_t idx, int64_t cols,
                         dt_dtype dtype) {
    const int64_t col = idx % cols, h = cols / 2;
    const double bstep = dtype == DT_BF16 ? 1.0 : dtype == DT_F16 ? 0x1p-2 : 0x1p-3;
    const uint64_t bq = dtype == DT_BF16 ? 15 : dtype == DT_F16 ? 124 : 2048;
    const double sstep = dtype == DT_BF16 ? 0x1p-3 : dtype == DT_F16 ? 0x1p-6 : 0x1p-10;
    const int64_t sq = dtype == DT_BF16 ? 8 : dtype == DT_F16 ? 64 : 1024;
    const int64_t partner = col < h ? idx : idx - h;
    const double big = (double)(draw(seed, op, buffer, partner) % bq + 1) * bstep;
    if (col < h) return (float)big;
    const double small = (double)sym_int(draw(seed ^ 0x43414E43ull, op, buffer, idx), sq) * sstep;
    return (float)(col < 2 * h ? small - big : small);
}

float dt_input_dist_value(uint64_t seed, dt_op op, int buffer, int64_t idx, int64_t cols,
                          dt_dtype dtype, dt_inputs dist) {
    if (dist == DT_INPUTS_UNIFORM || !dt_inputs_applies(dist, op, buffer))
        return dt_input_value(seed, op, buffer, idx, dtype);
    const uint64_t d = draw(seed, op, buffer, idx);
    switch (dist) {
    case DT_INPUTS_NORMAL: return dist_normal(d, dtype);
    case DT_INPUTS_WIDE_LOGITS: return dist_wide_logits(seed, op, buffer, idx / cols, d, dtype);
    case DT_INPUTS_OFFSET: return dist_offset(d, dtype);
    case DT_INPUTS_CANCEL: return dist_cancel(seed, op, buffer, idx, cols, dtype);
    default: DT_ASSERT(0);
    }
    return 0;
}

uint32_t dt_sentinel_bits(dt_dtype dtype) {
    switch (dtype) {
    case DT_BF16: return DT_SENTINEL_BF16;
    case DT_F16: return DT_SENTINEL_F16;
    default: return DT_SENTINEL_U32;
    }
}

uint32_t dt_poison_bits(dt_dtype dtype) {
    switch (dtype) {
    case DT_BF16: return DT_POISON_BF16;
    case DT_F16: return DT_POISON_F16;
    default: return DT_POISON_U32;
    }
}

/* The 32-bit word that fills a range with dtype's pattern bits in every element unit. */
static uint32_t pattern_word(dt_dtype dtype, uint32_t bits) {
    return dt_dtype_size(dtype) == 2 ? bits | (bits << 16) : bits;
}

int64_t dt_input_label(uint64_t seed, dt_op op, int buffer, int64_t idx, int64_t n) {
    return (int64_t)(draw(seed, op, buffer, idx) % (uint64_t)n);
}

/* Fills [p, p+bytes) with word; a trailing 2-byte unit gets its low half (2-byte rows
 * of odd length). */
static void fill_u32(uint8_t *p, int64_t bytes, uint32_t word) {
    int64_t i = 0;
    for (; i + 4 <= bytes; i += 4) memcpy(p + i, &word, 4);
    if (i + 2 <= bytes) {
        uint16_t h = (uint16_t)word;
        memcpy(p + i, &h, 2);
    }
}

/* fill_u32 over threads in 4-byte-aligned chunks of 1 MiB (arenas reach gigabytes). */
#define FILL_CHUNK (1 << 20)
static void fill_u32_parallel(uint8_t *p, int64_t bytes, uint32_t word) {
    int64_t chunks = (bytes + FILL_CHUNK - 1) / FILL_CHUNK;
#pragma omp parallel for schedule(static) if (chunks > 4)
    for (int64_t c = 0; c < chunks; c++) {
        int64_t off = c * FILL_CHUNK;
        fill_u32(p + off, bytes - off < FILL_CHUNK ? bytes - off : FILL_CHUNK, word);
    }
}

void dt_arena_poison_outputs(const dt_case_layout *L, uint8_t *base) {
    for (int b = 0; b < L->nbuffers; b++) {
        const dt_buffer_layout *B = &L->buf[b];
        if (!B->is_output) continue;
#pragma omp parallel for schedule(static) if (B->rows * B->cols > (1 << 20))
        for (int64_t i = 0; i < B->rows; i++)
            fill_u32(base + dt_elem_offset(B, i, 0), B->cols * B->elem_bytes,
                     pattern_word(B->dtype, dt_poison_bits(B->dtype)));
    }
}

void dt_arena_fill(const dt_case_layout *L, uint8_t *base, uint64_t seed) {
    fill_u32_parallel(base, L->total_bytes, pattern_word(L->dtype, dt_sentinel_bits(L->dtype)));
    for (int b = 0; b < L->nbuffers; b++) {
        const dt_buffer_layout *B = &L->buf[b];
        if (B->is_output) continue;
        /* every value is a function of its index (draw), so threads change nothing */
#pragma omp parallel for schedule(static) if (B->rows * B->cols > (1 << 16))
        for (int64_t i = 0; i < B->rows; i++) {
            for (int64_t j = 0; j < B->cols; j++) {
                int64_t idx = i * B->cols + j;
                uint8_t *p = base + dt_elem_offset(B, i, j);
                if (B->dtype == DT_I64) {
                    int64_t v = dt_input_label(seed, L->op, b, idx, L->n);
                    memcpy(p, &v, 8);
                } else if (B->elem_bytes == 2) {
                    uint16_t h = dt_f32_to_narrow(
                        B->dtype, dt_input_dist_value(seed, L->op, b, idx, B->cols, B->dtype,
                                                      L->inputs));
                    memcpy(p, &h, 2);
                } else {
                    float v = L->inputs == DT_INPUTS_UNIFORM
                                  ? dt_input_f32(seed, L->op, b, idx)
                                  : dt_input_dist_value(seed, L->op, b, idx, B->cols, DT_F32,
                                                        L->inputs);
                    memcpy(p, &v, 4);
                }
            }
        }
    }
    dt_arena_poison_outputs(L, base);
}

static void note(dt_arena_report *rep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(dt_arena_report *rep, const char *fmt, ...) {
    rep->ok = 0;
    if (rep->first_problem[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->first_problem, sizeof rep->first_problem, fmt, ap);
    va_end(ap);
}

/* Counts the bytes of [off, off+n) that differ between base and pristine; *first gets
 * the arena offset of the first one (unchanged when none). memcmp first: the common,
 * clean case costs one pass at memory speed. */
static int64_t diff_bytes(const uint8_t *base, const uint8_t *pristine, int64_t off, int64_t n,
                          int64_t *first) {
    if (n <= 0 || memcmp(base + off, pristine + off, (size_t)n) == 0) return 0;
    int64_t count = 0;
    for (int64_t o = off; o < off + n; o++)
        if (base[o] != pristine[o]) {
            if (count == 0) *first = o;
            count++;
        }
    return count;
}

/* The bits of element j of a row of 2- or 4-byte elements. */
static inline uint32_t elem_bits(const uint8_t *row, int64_t eb, int64_t j) {
    if (eb == 2) {
        uint16_t h;
        memcpy(&h, row + j * 2, 2);
        return h;
    }
    uint32_t w;
    memcpy(&w, row + j * 4, 4);
    return w;
}

/* All-ones exponent of a float type's bits: NaN or Inf. */
static uint32_t nonfinite_exponent(dt_dtype dtype) {
    return dtype == DT_BF16 ? 0x7F80u : dtype == DT_F16 ? 0x7C00u : 0x7F800000u;
}

/* 1 when every row of B is as it should be: an input equal to pristine, an output finite
 * everywhere (the per-element walk of dt_arena_check would note nothing). */
static int buffer_clean(const dt_buffer_layout *B, const uint8_t *base, const uint8_t *pristine) {
    const int64_t eb = B->elem_bytes, row_bytes = B->cols * eb;
    const uint32_t expo = nonfinite_exponent(B->dtype);
    int dirty = 0;
#pragma omp parallel for schedule(static) reduction(| : dirty) if (B->rows * B->cols > (1 << 16))
    for (int64_t i = 0; i < B->rows; i++) {
        const int64_t row_off = dt_elem_offset(B, i, 0);
        if (!B->is_output) {
            dirty |= memcmp(base + row_off, pristine + row_off, (size_t)row_bytes) != 0;
            continue;
        }
        for (int64_t j = 0; j < B->cols; j++) dirty |= (elem_bits(base + row_off, eb, j) & expo) == expo;
    }
    return !dirty;
}

/* diff_bytes over [off, off+n) clipped to [lo, hi). */
static int64_t diff_clipped(const uint8_t *base, const uint8_t *pristine, int64_t off, int64_t n,
                            int64_t lo, int64_t hi, int64_t *first) {
    int64_t a = off > lo ? off : lo, e = off + n < hi ? off + n : hi;
    return diff_bytes(base, pristine, a, e - a, first);
}

void dt_arena_check(const dt_case_layout *L, const uint8_t *base, const uint8_t *pristine,
                    dt_arena_report *rep) {
    dt_arena_check_span(L, base, pristine, 0, L->total_bytes, rep);
}

void dt_arena_check_span(const dt_case_layout *L, const uint8_t *base, const uint8_t *pristine,
                         int64_t lo, int64_t hi, dt_arena_report *rep) {
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    int64_t prev_end = 0, first = -1, c;
    for (int b = 0; b < L->nbuffers; b++) {
        const dt_buffer_layout *B = &L->buf[b];
        const int64_t eb = B->elem_bytes, row_bytes = B->cols * eb;
        const int64_t region_end = B->region_offset + B->region_bytes;
        /* everything between the previous region's end and this region: guards + align */
        if ((c = diff_clipped(base, pristine, prev_end, B->region_offset - prev_end, lo, hi,
                              &first))) {
            rep->guard_bytes_changed += c;
            note(rep, "guard before '%s' changed at arena byte %lld (%lld bytes)", B->name,
                 (long long)first, (long long)c);
        }
        /* a region outside [lo, hi) is not looked at (slots never straddle a bound) */
        if (B->region_offset < lo || region_end > hi) {
            prev_end = region_end;
            continue;
        }
        /* padding inside the region (views only): before the window, between rows, after */
        if (B->is_view) {
            int64_t pad = 0, pad_first = -1, f = -1;
            int64_t d = diff_bytes(base, pristine, B->region_offset,
                                   B->data_offset - B->region_offset, &f);
            if (d) pad_first = f;
            pad += d;
            for (int64_t i = 0; i < B->rows; i++) {
                int64_t gap0 = dt_elem_offset(B, i, 0) + row_bytes;
                int64_t gap1 = i + 1 < B->rows ? dt_elem_offset(B, i + 1, 0) : region_end;
                d = diff_bytes(base, pristine, gap0, gap1 - gap0, &f);
                if (d && pad_first < 0) pad_first = f;
                pad += d;
            }
            if (pad) {
                rep->guard_bytes_changed += pad;
                note(rep, "padding of view '%s' changed at arena byte %lld (%lld bytes)",
                     B->name, (long long)pad_first, (long long)pad);
            }
        }
        /* the clean case, over threads: only a buffer with a finding is walked below */
        if (buffer_clean(B, base, pristine)) {
            prev_end = region_end;
            continue;
        }
        for (int64_t i = 0; i < B->rows; i++) {
            int64_t row_off = dt_elem_offset(B, i, 0);
            if (!B->is_output) {
                if (memcmp(base + row_off, pristine + row_off, (size_t)row_bytes) == 0) continue;
                for (int64_t j = 0; j < B->cols; j++) {
                    int64_t o = row_off + j * eb;
                    if (memcmp(base + o, pristine + o, (size_t)eb) != 0) {
                        rep->input_elems_changed++;
                        note(rep, "input '%s' changed at element (%lld, %lld)", B->name,
                             (long long)i, (long long)j);
                    }
                }
                continue;
            }
            /* all-ones exponent of the output type: NaN or Inf */
            const uint32_t expo = nonfinite_exponent(B->dtype);
            const uint32_t poison = dt_poison_bits(B->dtype);
            for (int64_t j = 0; j < B->cols; j++) {
                const uint32_t w = elem_bits(base + row_off, eb, j);
                if ((w & expo) != expo) continue; /* finite: the fast path */
                if (w == poison) {
                    rep->output_unwritten++;
                    note(rep, "output '%s' element (%lld, %lld) was never written", B->name,
                         (long long)i, (long long)j);
                } else {
                    rep->output_nonfinite++;
                    note(rep, "output '%s' element (%lld, %lld) is not finite (0x%0*x)",
                         B->name, (long long)i, (long long)j, (int)(2 * eb), (unsigned)w);
                }
            }
        }
        prev_end = region_end;
    }
    if ((c = diff_clipped(base, pristine, prev_end, L->total_bytes - prev_end, lo, hi, &first))) {
        rep->guard_bytes_changed += c;
        note(rep, "guard after '%s' changed at arena byte %lld (%lld bytes)",
             L->buf[L->nbuffers - 1].name, (long long)first, (long long)c);
    }
}

void dt_buffer_sha256(const dt_case_layout *L, int b, const uint8_t *base, char out_hex[65]) {
    const dt_buffer_layout *B = &L->buf[b];
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    DT_ASSERT(ctx);
    DT_ASSERT(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1);
    for (int64_t i = 0; i < B->rows; i++)
        DT_ASSERT(EVP_DigestUpdate(ctx, base + dt_elem_offset(B, i, 0),
                                   (size_t)(B->cols * B->elem_bytes)) == 1);
    DT_ASSERT(EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32);
    EVP_MD_CTX_free(ctx);
    for (int i = 0; i < 32; i++) snprintf(out_hex + 2 * i, 3, "%02x", md[i]);
}

void dt_buffer_to_f64(const dt_case_layout *L, int b, const uint8_t *base, double *dst) {
    const dt_buffer_layout *B = &L->buf[b];
    for (int64_t i = 0; i < B->rows; i++)
        for (int64_t j = 0; j < B->cols; j++) {
            const uint8_t *p = base + dt_elem_offset(B, i, j);
            if (B->dtype == DT_I64) {
                int64_t v;
                memcpy(&v, p, 8);
                dst[i * B->cols + j] = (double)v;
            } else if (B->elem_bytes == 2) {
                uint16_t h;
                memcpy(&h, p, 2);
                dst[i * B->cols + j] = dt_narrow_to_f32(B->dtype, h);
            } else {
                float v;
                memcpy(&v, p, 4);
                dst[i * B->cols + j] = v;
            }
        }
}
