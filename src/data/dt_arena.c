/* dt_arena.c — layout, deterministic inputs and arena checks (see dt_arena.h). */
#include "dt_arena.h"

#include <math.h>
#include <openssl/evp.h>
#include <string.h>

static int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

void dt_layout_make(dt_case_layout *L, dt_op op, int64_t m, int64_t n, int64_t k, int views) {
    const dt_op_info *info = dt_op_get(op);
    memset(L, 0, sizeof *L);
    L->op = op;
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
        b->dtype = r->dtype;
        b->is_output = r->is_output;
        b->rows = dt_dim_extent(r->rows, m, n, L->k);
        b->cols = dt_dim_extent(r->cols, m, n, L->k);
        b->elem_bytes = r->dtype == DT_I64 ? 8 : 4;
        b->is_view = views && r->viewable;
        int64_t prow = b->is_view ? b->rows + 2 : b->rows;
        int64_t pcol = b->is_view ? b->cols + 3 : b->cols;
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

float dt_input_f32(uint64_t seed, dt_op op, int buffer, int64_t idx) {
    /* 2049 grid points: -1024/1024 .. 1024/1024 */
    int64_t q = (int64_t)(draw(seed, op, buffer, idx) % 2049u) - 1024;
    return (float)q / 1024.0f;
}

int64_t dt_input_label(uint64_t seed, dt_op op, int buffer, int64_t idx, int64_t n) {
    return (int64_t)(draw(seed, op, buffer, idx) % (uint64_t)n);
}

static void fill_u32(uint8_t *p, int64_t bytes, uint32_t word) {
    for (int64_t i = 0; i + 4 <= bytes; i += 4) memcpy(p + i, &word, 4);
}

void dt_arena_poison_outputs(const dt_case_layout *L, uint8_t *base) {
    for (int b = 0; b < L->nbuffers; b++) {
        const dt_buffer_layout *B = &L->buf[b];
        if (!B->is_output) continue;
        for (int64_t i = 0; i < B->rows; i++)
            fill_u32(base + dt_elem_offset(B, i, 0), B->cols * B->elem_bytes, DT_POISON_U32);
    }
}

void dt_arena_fill(const dt_case_layout *L, uint8_t *base, uint64_t seed) {
    fill_u32(base, L->total_bytes, DT_SENTINEL_U32);
    for (int b = 0; b < L->nbuffers; b++) {
        const dt_buffer_layout *B = &L->buf[b];
        if (B->is_output) continue;
        for (int64_t i = 0; i < B->rows; i++) {
            for (int64_t j = 0; j < B->cols; j++) {
                int64_t idx = i * B->cols + j;
                uint8_t *p = base + dt_elem_offset(B, i, j);
                if (B->dtype == DT_I64) {
                    int64_t v = dt_input_label(seed, L->op, b, idx, L->n);
                    memcpy(p, &v, 8);
                } else {
                    float v = dt_input_f32(seed, L->op, b, idx);
                    memcpy(p, &v, 4);
                }
            }
        }
    }
    dt_arena_poison_outputs(L, base);
}

static void note(dt_arena_report *rep, const char *fmt, const char *name, int64_t a,
                 int64_t b) {
    rep->ok = 0;
    if (!rep->first_problem[0])
        snprintf(rep->first_problem, sizeof rep->first_problem, fmt, name, (long long)a,
                 (long long)b);
}

/* Is byte offset `off` (relative to the region start) inside the logical window? */
static int in_window(const dt_buffer_layout *B, int64_t off_in_region) {
    int64_t first = B->data_offset - B->region_offset;
    int64_t rel = off_in_region - first;
    if (rel < 0) return 0;
    int64_t row = rel / (B->row_stride * B->elem_bytes);
    int64_t col_byte = rel % (B->row_stride * B->elem_bytes);
    return row < B->rows && col_byte < B->cols * B->elem_bytes;
}

void dt_arena_check(const dt_case_layout *L, const uint8_t *base, const uint8_t *pristine,
                    dt_arena_report *rep) {
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    int64_t prev_end = 0;
    for (int b = 0; b < L->nbuffers; b++) {
        const dt_buffer_layout *B = &L->buf[b];
        /* everything between the previous region's end and this region: guards + align */
        for (int64_t o = prev_end; o < B->region_offset; o++)
            if (base[o] != pristine[o]) {
                rep->guard_bytes_changed++;
                note(rep, "guard before '%s' changed at arena byte %lld (%lld)", B->name, o, 0);
            }
        /* padding inside the region (views only) */
        if (B->is_view) {
            for (int64_t o = 0; o < B->region_bytes; o++) {
                int64_t a = B->region_offset + o;
                if (!in_window(B, o) && base[a] != pristine[a]) {
                    rep->guard_bytes_changed++;
                    note(rep, "padding of view '%s' changed at arena byte %lld (%lld)", B->name,
                         a, 0);
                }
            }
        }
        for (int64_t i = 0; i < B->rows; i++) {
            for (int64_t j = 0; j < B->cols; j++) {
                int64_t o = dt_elem_offset(B, i, j);
                if (!B->is_output) {
                    if (memcmp(base + o, pristine + o, (size_t)B->elem_bytes) != 0) {
                        rep->input_elems_changed++;
                        note(rep, "input '%s' changed at element (%lld, %lld)", B->name, i, j);
                    }
                    continue;
                }
                uint32_t w;
                memcpy(&w, base + o, 4);
                float f;
                memcpy(&f, &w, 4);
                if (w == DT_POISON_U32) {
                    rep->output_unwritten++;
                    note(rep, "output '%s' element (%lld, %lld) was never written", B->name, i,
                         j);
                } else if (!isfinite(f)) {
                    rep->output_nonfinite++;
                    note(rep, "output '%s' element (%lld, %lld) is not finite", B->name, i, j);
                }
            }
        }
        prev_end = B->region_offset + B->region_bytes;
    }
    for (int64_t o = prev_end; o < L->total_bytes; o++)
        if (base[o] != pristine[o]) {
            rep->guard_bytes_changed++;
            note(rep, "guard after '%s' changed at arena byte %lld (%lld)",
                 L->buf[L->nbuffers - 1].name, o, 0);
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
            } else {
                float v;
                memcpy(&v, p, 4);
                dst[i * B->cols + j] = v;
            }
        }
}
