/* test_arena.c — guarded arena layouts, deterministic inputs, SHA-256 of buffers and
 * the arena check (src/data/dt_arena.h).
 *
 * Checks: slots do not overlap and are 256-aligned; views have row pitch > cols and a
 * nonzero, unaligned data offset with the window inside its region; inputs are a pure
 * function of the seed, on the 2^-10 grid in [-1, 1]; labels in [0, N); the SHA-256 of
 * a buffer does not depend on views and equals `sha256sum` of its logical bytes;
 * sentinel and poison are where they belong; dt_arena_check sees each kind of damage
 * and checks an 8192x8192 view quickly. All of it for each case dtype (f32, bf16, f16:
 * dt_layout_make_typed): bf16 inputs on the 2^-7 grid, f16 on the 2^-10 grid, both
 * exact (the stored bits widen back to the generator's value), the 16-bit sentinel and
 * poison patterns, views unaligned with 2-byte elements. Also the float <-> bf16/f16
 * conversions (every 16-bit pattern round-trips; round-to-nearest-even at ties;
 * overflow, subnormals, NaN) and dt_dtype_ulp. Run: ctest -R test_arena. Exits 1 on
 * failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/dt_arena.h"
#include "plan/dt_ops.h"
#include "../dt_check.h"

static const int64_t k_shapes[][3] = {{1, 127, 0}, {17, 257, 0}, {4, 1024, 0},
                                      {3, 60, 0},  {2, 1, 0},    {127, 193, 61}};

static uint32_t word_at(const uint8_t *base, int64_t off) {
    uint32_t w;
    memcpy(&w, base + off, 4);
    return w;
}

/* The element-sized bit pattern (2 or 4 bytes) at off. */
static uint32_t elem_bits_at(const uint8_t *base, int64_t off, int64_t elem_bytes) {
    if (elem_bytes != 2) return word_at(base, off);
    uint16_t h;
    memcpy(&h, base + off, 2);
    return h;
}

/* Writes the float 1.0 in the buffer's type at off. */
static void put_one(uint8_t *base, int64_t off, dt_dtype d) {
    if (d == DT_F32) {
        float one = 1.0f;
        memcpy(base + off, &one, 4);
    } else {
        uint16_t h = dt_f32_to_narrow(d, 1.0f);
        memcpy(base + off, &h, 2);
    }
}

static void test_layout(dt_op op, int64_t m, int64_t n, int64_t k, int views, dt_dtype dt) {
    dt_case_layout L;
    dt_layout_make_typed(&L, op, m, n, k, views, dt);
    const dt_op_info *info = dt_op_get(op);
    char tag[96];
    snprintf(tag, sizeof tag, "%s %lldx%lldx%lld views=%d %s", info->name, (long long)m,
             (long long)n, (long long)k, views, dt_dtype_name(dt));
    CHECK(L.dtype == dt, "%s: case dtype", tag);
    CHECK(L.nbuffers == info->nbuffers && L.buf[dt_layout_output(&L)].is_output, "%s", tag);
    CHECK(dt_layout_output(&L) == L.nbuffers - 1, "%s: output is last", tag);
    CHECK(L.total_bytes % DT_ARENA_ALIGN == 0, "%s: total %lld", tag, (long long)L.total_bytes);
    int64_t prev_end = 0;
    for (int b = 0; b < L.nbuffers; b++) {
        const dt_buffer_layout *B = &L.buf[b];
        const dt_buffer_role *R = &info->buffers[b];
        int64_t want_rows = dt_dim_extent(R->rows, m, n, info->is_gemm ? k : 0);
        int64_t want_cols = dt_dim_extent(R->cols, m, n, info->is_gemm ? k : 0);
        CHECK(B->rows == want_rows && B->cols == want_cols, "%s: buffer %s shape", tag, B->name);
        CHECK(B->elem_bytes == (B->dtype == DT_I64 ? 8 : dt == DT_F32 ? 4 : 2), "%s: elem bytes",
              tag);
        CHECK(B->dtype == (R->dtype == DT_I64 ? DT_I64 : dt), "%s: %s dtype %s", tag, B->name,
              dt_dtype_name(B->dtype));
        CHECK(B->slot_offset % DT_ARENA_ALIGN == 0 && B->slot_offset >= prev_end,
              "%s: slot %s at %lld, previous end %lld", tag, B->name,
              (long long)B->slot_offset, (long long)prev_end);
        CHECK(B->region_offset == B->slot_offset + DT_GUARD_BYTES, "%s: front guard", tag);
        int64_t end = B->region_offset + B->region_bytes + DT_GUARD_BYTES;
        CHECK(end <= L.total_bytes, "%s: back guard inside the arena", tag);
        prev_end = end;
        CHECK(B->is_view == (views && R->viewable), "%s: %s is_view %d", tag, B->name, B->is_view);
        /* window inside its region */
        int64_t last = dt_elem_offset(B, B->rows - 1, B->cols - 1) + B->elem_bytes;
        CHECK(B->data_offset >= B->region_offset &&
                  last <= B->region_offset + B->region_bytes,
              "%s: window of %s inside its region", tag, B->name);
        if (B->is_view) {
            CHECK(B->row_stride > B->cols, "%s: %s stride %lld cols %lld", tag, B->name,
                  (long long)B->row_stride, (long long)B->cols);
            CHECK(B->data_offset > B->region_offset, "%s: view offset nonzero", tag);
            /* unaligned: element (0,0) and every row start only 4-byte aligned */
            int aligned_rows = 0;
            for (int64_t i = 0; i < B->rows; i++) aligned_rows += dt_elem_offset(B, i, 0) % 8 == 0;
            CHECK(B->data_offset % 16 != 0 && aligned_rows == 0,
                  "%s: view %s data_offset %lld (mod 16 = %lld), %d aligned rows", tag, B->name,
                  (long long)B->data_offset, (long long)(B->data_offset % 16), aligned_rows);
            /* padding on every side: a row above, a column left, columns right, a row below */
            CHECK(B->data_offset - B->region_offset >= (B->row_stride + 1) * B->elem_bytes &&
                      B->region_offset + B->region_bytes - last >= B->row_stride * B->elem_bytes,
                  "%s: padding around view %s", tag, B->name);
        } else {
            CHECK(B->row_stride == B->cols && B->data_offset == B->region_offset &&
                      B->region_bytes == B->rows * B->cols * B->elem_bytes,
                  "%s: contiguous %s", tag, B->name);
            CHECK(B->data_offset % DT_ARENA_ALIGN == 0, "%s: contiguous aligned", tag);
        }
    }
}

/* Writes the logical bytes of buffer b to a file and asks sha256sum. */
static int sha256sum_of(const dt_case_layout *L, int b, const uint8_t *base, char hex[65]) {
    char path[] = "/tmp/dt_test_arena_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "wb");
    const dt_buffer_layout *B = &L->buf[b];
    for (int64_t i = 0; i < B->rows; i++)
        fwrite(base + dt_elem_offset(B, i, 0), 1, (size_t)(B->cols * B->elem_bytes), f);
    fclose(f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "sha256sum %s", path);
    FILE *p = popen(cmd, "r");
    int rc = -1;
    if (p) {
        if (fscanf(p, "%64s", hex) == 1 && strlen(hex) == 64) rc = 0;
        pclose(p);
    }
    unlink(path);
    return rc;
}

static void test_contents(dt_op op, int64_t m, int64_t n, int64_t k, dt_dtype dt) {
    dt_case_layout L0, L1;
    dt_layout_make_typed(&L0, op, m, n, k, 0, dt);
    dt_layout_make_typed(&L1, op, m, n, k, 1, dt);
    char name[64];
    snprintf(name, sizeof name, "%s %s", dt_op_get(op)->name, dt_dtype_name(dt));
    /* the grid of this dtype: f32 and f16 2^-10, bf16 2^-7 */
    const double grid = dt == DT_BF16 ? 128.0 : 1024.0;
    const uint32_t poison = dt_poison_bits(dt), sentinel = dt_sentinel_bits(dt);
    uint8_t *a = malloc((size_t)L0.total_bytes), *a2 = malloc((size_t)L0.total_bytes);
    uint8_t *c = malloc((size_t)L0.total_bytes), *v = malloc((size_t)L1.total_bytes);
    dt_arena_fill(&L0, a, 42);
    dt_arena_fill(&L0, a2, 42);
    dt_arena_fill(&L0, c, 43);
    dt_arena_fill(&L1, v, 42);
    CHECK(memcmp(a, a2, (size_t)L0.total_bytes) == 0, "%s: same seed, same bytes", name);

    for (int b = 0; b < L0.nbuffers; b++) {
        const dt_buffer_layout *B = &L0.buf[b], *BV = &L1.buf[b];
        int64_t bad_grid = 0, bad_label = 0, neg = 0, pos = 0, differ = 0, view_differ = 0;
        int64_t poison_bad = 0;
        for (int64_t i = 0; i < B->rows; i++)
            for (int64_t j = 0; j < B->cols; j++) {
                int64_t o = dt_elem_offset(B, i, j), ov = dt_elem_offset(BV, i, j);
                differ += memcmp(a + o, c + o, (size_t)B->elem_bytes) != 0;
                view_differ += memcmp(a + o, v + ov, (size_t)B->elem_bytes) != 0;
                if (B->is_output) {
                    poison_bad += elem_bits_at(a, o, B->elem_bytes) != poison ||
                                  elem_bits_at(v, ov, B->elem_bytes) != poison;
                } else if (B->dtype == DT_I64) {
                    int64_t lab;
                    memcpy(&lab, a + o, 8);
                    bad_label += lab < 0 || lab >= n;
                    bad_label += lab != dt_input_label(42, op, b, i * B->cols + j, n);
                } else {
                    float f;
                    if (B->elem_bytes == 2)
                        f = dt_narrow_to_f32(dt, (uint16_t)elem_bits_at(a, o, 2));
                    else
                        memcpy(&f, a + o, 4);
                    double q = (double)f * grid;
                    bad_grid += !(fabs(f) <= 1.0f) || q != floor(q);
                    /* exact: the stored bits widen back to the generator's value */
                    bad_grid += f != dt_input_value(42, op, b, i * B->cols + j, dt);
                    if (dt == DT_F32) bad_grid += f != dt_input_f32(42, op, b, i * B->cols + j);
                    neg += f < 0;
                    pos += f > 0;
                }
            }
        int64_t count = B->rows * B->cols;
        if (B->is_output) {
            CHECK(poison_bad == 0, "%s: output poisoned (%lld bad)", name, (long long)poison_bad);
        } else {
            CHECK(view_differ == 0, "%s: %s same logical contents with views", name, B->name);
            if (B->dtype == DT_I64) {
                CHECK(bad_label == 0, "%s: labels in [0,%lld)", name, (long long)n);
            } else {
                CHECK(bad_grid == 0, "%s: %s values on the 1/%g grid in [-1,1] (%lld bad)", name,
                      B->name, grid, (long long)bad_grid);
                if (count >= 64)
                    CHECK(neg > count / 4 && pos > count / 4, "%s: both signs (%lld/%lld)", name,
                          (long long)neg, (long long)pos);
            }
            if (count >= 16 && !(B->dtype == DT_I64 && n < 4))
                CHECK(differ > count / 2, "%s: %s another seed differs (%lld of %lld)", name,
                      B->name, (long long)differ, (long long)count);
        }
        /* SHA-256: independent of views, equal to sha256sum */
        char h0[65], h1[65], hs[65] = "";
        dt_buffer_sha256(&L0, b, a, h0);
        dt_buffer_sha256(&L1, b, v, h1);
        CHECK(strcmp(h0, h1) == 0, "%s: %s sha256 views %s vs %s", name, B->name, h0, h1);
        CHECK(sha256sum_of(&L1, b, v, hs) == 0 && strcmp(h0, hs) == 0,
              "%s: %s sha256 %s, sha256sum %s", name, B->name, h0, hs);
        if (!B->is_output) {
            char hc[65];
            dt_buffer_sha256(&L0, b, c, hc);
            if (count >= 16) CHECK(strcmp(h0, hc) != 0, "%s: other seed, other hash", name);
        }
        /* dt_buffer_to_f64 reads the same logical values through either layout */
        double *d0 = malloc((size_t)count * sizeof(double));
        double *d1 = malloc((size_t)count * sizeof(double));
        dt_buffer_to_f64(&L0, b, a, d0);
        dt_buffer_to_f64(&L1, b, v, d1);
        CHECK(memcmp(d0, d1, (size_t)count * sizeof(double)) == 0 || B->is_output,
              "%s: to_f64 view independent", name);
        if (!B->is_output && B->dtype != DT_I64) {
            int64_t off_grid = 0;
            for (int64_t e = 0; e < count; e++)
                off_grid += d0[e] != (double)dt_input_value(42, op, b, e, dt);
            CHECK(off_grid == 0, "%s: %s to_f64 gives the generator's values (%lld differ)",
                  name, B->name, (long long)off_grid);
        }
        if (B->is_output) { /* poison reads back as NaN */
            int64_t not_nan = 0;
            for (int64_t e = 0; e < count; e++) not_nan += !isnan(d0[e]);
            CHECK(not_nan == 0, "%s: poisoned output reads as NaN (%lld not)", name,
                  (long long)not_nan);
        }
        free(d0);
        free(d1);
    }

    /* sentinel everywhere outside the windows (guards, alignment, padding) */
    for (int views = 0; views <= 1; views++) {
        const dt_case_layout *L = views ? &L1 : &L0;
        const uint8_t *base = views ? v : a;
        uint8_t *inwin = calloc((size_t)L->total_bytes, 1);
        for (int b = 0; b < L->nbuffers; b++)
            for (int64_t i = 0; i < L->buf[b].rows; i++)
                memset(inwin + dt_elem_offset(&L->buf[b], i, 0), 1,
                       (size_t)(L->buf[b].cols * L->buf[b].elem_bytes));
        int64_t bad = 0;
        const int64_t unit = dt == DT_F32 ? 4 : 2;
        for (int64_t o = 0; o < L->total_bytes; o += unit)
            if (!inwin[o]) bad += elem_bits_at(base, o, unit) != sentinel;
        CHECK(bad == 0, "%s views=%d: %lld non-sentinel words outside windows", name, views,
              (long long)bad);
        free(inwin);
    }

    /* arena check: pristine vs itself = every output unwritten; written = ok; re-poison */
    dt_arena_report r;
    const dt_buffer_layout *O = &L1.buf[dt_layout_output(&L1)];
    uint8_t *w = malloc((size_t)L1.total_bytes);
    memcpy(w, v, (size_t)L1.total_bytes);
    dt_arena_check(&L1, w, v, &r);
    CHECK(!r.ok && r.output_unwritten == O->rows * O->cols && r.guard_bytes_changed == 0 &&
              r.input_elems_changed == 0 && r.output_nonfinite == 0,
          "%s: pristine has all outputs unwritten: %lld", name, (long long)r.output_unwritten);
    for (int64_t i = 0; i < O->rows; i++)
        for (int64_t j = 0; j < O->cols; j++) put_one(w, dt_elem_offset(O, i, j), dt);
    dt_arena_check(&L1, w, v, &r);
    CHECK(r.ok && r.first_problem[0] == 0, "%s: written output passes: %s", name, r.first_problem);
    uint8_t *written = malloc((size_t)L1.total_bytes);
    memcpy(written, w, (size_t)L1.total_bytes);
    dt_arena_poison_outputs(&L1, w);
    CHECK(memcmp(w, v, (size_t)L1.total_bytes) == 0, "%s: re-poison restores pristine", name);
    memcpy(w, written, (size_t)L1.total_bytes);

    /* padding of a view and the last guard byte of the arena */
    const dt_buffer_layout *A = &L1.buf[0];
    w[dt_elem_offset(A, 0, A->cols) + 1] ^= 0x40; /* right padding of row 0 */
    dt_arena_check(&L1, w, v, &r);
    CHECK(!r.ok && r.guard_bytes_changed == 1 && strstr(r.first_problem, "padding of view 'a'"),
          "%s: padding byte: %lld %s", name, (long long)r.guard_bytes_changed, r.first_problem);
    memcpy(w, written, (size_t)L1.total_bytes);
    w[L1.total_bytes - 1] ^= 1;
    w[L1.total_bytes - 5] ^= 1;
    dt_arena_check(&L1, w, v, &r);
    CHECK(!r.ok && r.guard_bytes_changed == 2 && strstr(r.first_problem, "guard after"),
          "%s: last guard bytes: %lld %s", name, (long long)r.guard_bytes_changed,
          r.first_problem);
    memcpy(w, written, (size_t)L1.total_bytes);
    w[0] ^= 1; /* first byte of the first front guard */
    dt_arena_check(&L1, w, v, &r);
    CHECK(!r.ok && r.guard_bytes_changed == 1 && strstr(r.first_problem, "arena byte 0 "),
          "%s: first guard byte: %s", name, r.first_problem);
    /* one output element left poisoned, one an infinity, one input element changed */
    memcpy(w, written, (size_t)L1.total_bytes);
    {
        const int64_t last = dt_elem_offset(O, O->rows - 1, O->cols - 1);
        const int64_t mid = dt_elem_offset(O, O->rows / 2, 0);
        const uint32_t inf = dt == DT_F32 ? 0x7F800000u : dt == DT_BF16 ? 0x7F80u : 0x7C00u;
        memcpy(w + last, &poison, (size_t)O->elem_bytes); /* little-endian low bytes */
        dt_arena_check(&L1, w, v, &r);
        CHECK(!r.ok && r.output_unwritten == 1 && r.output_nonfinite == 0 &&
                  strstr(r.first_problem, "never written"),
              "%s: one unwritten output: %lld %s", name, (long long)r.output_unwritten,
              r.first_problem);
        if (mid != last) {
            memcpy(w + mid, &inf, (size_t)O->elem_bytes);
            dt_arena_check(&L1, w, v, &r);
            CHECK(!r.ok && r.output_unwritten == 1 && r.output_nonfinite == 1,
                  "%s: an infinite output: %lld %s", name, (long long)r.output_nonfinite,
                  r.first_problem);
        }
        memcpy(w, written, (size_t)L1.total_bytes);
        w[dt_elem_offset(A, A->rows - 1, A->cols - 1) + 1] ^= 0x01; /* the high byte */
        dt_arena_check(&L1, w, v, &r);
        CHECK(!r.ok && r.input_elems_changed == 1 && strstr(r.first_problem, "input 'a'"),
              "%s: changed input: %lld %s", name, (long long)r.input_elems_changed,
              r.first_problem);
    }
    free(w);
    free(written);
    free(a);
    free(a2);
    free(c);
    free(v);
}

/* dt_arena_check on an 8192x8192 view must take well under a second (it once divided
 * per padding byte). */
static void test_check_speed(void) {
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_SUM, 8192, 8192, 0, 1);
    uint8_t *p = malloc((size_t)L.total_bytes), *w = malloc((size_t)L.total_bytes);
    if (!p || !w) {
        printf("skipping the 8192x8192 speed check: no memory\n");
        free(p);
        free(w);
        return;
    }
    dt_arena_fill(&L, p, 5);
    memcpy(w, p, (size_t)L.total_bytes);
    const dt_buffer_layout *O = &L.buf[1];
    float zero = 0;
    for (int64_t i = 0; i < O->rows; i++) memcpy(w + dt_elem_offset(O, i, 0), &zero, 4);
    dt_arena_report r;
    int64_t t0 = dt_now_ns();
    dt_arena_check(&L, w, p, &r);
    double s = (double)(dt_now_ns() - t0) * 1e-9;
    printf("dt_arena_check 8192x8192 view: %.3f s\n", s);
    CHECK(r.ok, "big view check: %s", r.first_problem);
    CHECK(s < 5.0, "8192x8192 view check took %.2f s", s);
    free(p);
    free(w);
}

/* float <-> bf16/f16: every pattern round-trips, ties go to even, edges. */
static void test_conversions(void) {
    for (int d = DT_BF16; d <= DT_F16; d++) {
        const dt_dtype dt = (dt_dtype)d;
        int64_t bad = 0, nans = 0;
        for (uint32_t h = 0; h < 65536; h++) {
            float f = dt_narrow_to_f32(dt, (uint16_t)h);
            if (isnan(f)) {
                nans++;
                bad += !isnan(dt_narrow_to_f32(dt, dt_f32_to_narrow(dt, f)));
                continue;
            }
            bad += dt_f32_to_narrow(dt, f) != h;
        }
        CHECK(bad == 0, "%s: %lld patterns do not round-trip", dt_dtype_name(dt), (long long)bad);
        CHECK(nans == (dt == DT_BF16 ? 2 * 127 : 2 * 1023), "%s: %lld NaN patterns",
              dt_dtype_name(dt), (long long)nans);
        /* ties to even just above 1: 1 + ulp/2 -> 1; 1 + 3ulp/2 -> 1 + 2ulp */
        const double u = dt_dtype_ulp(dt, 1.0);
        CHECK(u == (dt == DT_BF16 ? 0x1p-7 : 0x1p-10), "%s: ulp(1) %g", dt_dtype_name(dt), u);
        CHECK(dt_round_to(dt, 1.0 + u / 2) == 1.0 &&
                  dt_round_to(dt, 1.0 + 1.5 * u) == 1.0 + 2 * u &&
                  dt_round_to(dt, 1.0 + 0.51 * u) == 1.0 + u,
              "%s: round to nearest even", dt_dtype_name(dt));
        CHECK(isnan(dt_narrow_to_f32(dt, (uint16_t)dt_poison_bits(dt))) &&
                  !isnan(dt_narrow_to_f32(dt, (uint16_t)dt_sentinel_bits(dt))),
              "%s: poison is NaN, sentinel is not", dt_dtype_name(dt));
    }
    CHECK(dt_narrow_to_f32(DT_F16, dt_f32_to_narrow(DT_F16, 65504.0f)) == 65504.0f &&
              isinf(dt_narrow_to_f32(DT_F16, dt_f32_to_narrow(DT_F16, 65520.0f))) &&
              dt_narrow_to_f32(DT_F16, dt_f32_to_narrow(DT_F16, 65519.0f)) == 65504.0f,
          "f16 overflow edge");
    CHECK(dt_narrow_to_f32(DT_F16, dt_f32_to_narrow(DT_F16, 0x1p-24f)) == 0x1p-24f &&
              dt_narrow_to_f32(DT_F16, dt_f32_to_narrow(DT_F16, 0x1p-25f)) == 0.0f &&
              dt_narrow_to_f32(DT_F16, dt_f32_to_narrow(DT_F16, 0x1.8p-25f)) == 0x1p-24f &&
              dt_narrow_to_f32(DT_F16, dt_f32_to_narrow(DT_F16, 0x1.8p-24f)) == 0x1p-23f,
          "f16 subnormals round to nearest even");
    CHECK(dt_f32_to_narrow(DT_BF16, -719.5f) == 0xC434u &&
              dt_f32_to_narrow(DT_F16, -719.5f) == 0xE19Fu,
          "known patterns");
    CHECK(dt_dtype_ulp(DT_F16, 0.0) == 0x1p-24 && dt_dtype_ulp(DT_F16, 1e-6) == 0x1p-24 &&
              dt_dtype_ulp(DT_BF16, -3.0) == 0x1p-6 && dt_dtype_ulp(DT_F32, 1.0) == 0x1p-23,
          "dt_dtype_ulp");
    CHECK(dt_dtype_size(DT_BF16) == 2 && dt_dtype_size(DT_F16) == 2 && dt_dtype_size(DT_F32) == 4 &&
              dt_dtype_find("bf16") == DT_BF16 && dt_dtype_find("fp16") == DT_F16 &&
              dt_dtype_find("f16") == DT_F16 && dt_dtype_find("fp8") == -1 &&
              strcmp(dt_dtype_name(DT_BF16), "bf16") == 0,
          "dtype names and sizes");
}

/* The digest "dt-mix64-1" as its definition reads, one word at a time (no threads). */
static uint64_t digest_ref(const uint8_t *base, int64_t off, int64_t len) {
    uint64_t sum = 0;
    for (int64_t j = 0; j < len / 8; j++) {
        uint64_t w = 0;
        for (int b = 7; b >= 0; b--) w = w << 8 | base[off + 8 * j + b]; /* little-endian */
        uint64_t x = w ^ ((uint64_t)(off / 8 + j) * 0xD1B54A32D192ED03ull);
        x += 0x9E3779B97F4A7C15ull;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        sum += x ^ (x >> 31);
    }
    return sum;
}

/* dt_arena_digest (checks by digest, docs/anti-cheat.md): the definition, over threads
 * too (a range past the parallel threshold); additive over adjacent ranges; any one bit
 * flipped anywhere, two words swapped, and an all-zero range at another offset all change
 * it; and the output slot with the rest covers the arena. */
static void test_digest(void) {
    const int64_t n = (int64_t)1 << 22; /* 4 MiB: 2^19 words, over the threads' threshold */
    uint8_t *a = malloc((size_t)n);
    REQUIRE(a);
    for (int64_t i = 0; i < n; i++) a[i] = (uint8_t)(i * 2654435761u >> 13);
    const uint64_t whole = dt_arena_digest(a, 0, n);
    CHECK(whole == digest_ref(a, 0, n), "digest: threaded sum = the definition");
    CHECK(dt_arena_digest(a, 0, 0) == 0, "digest: empty range is 0");
    CHECK(dt_arena_digest(a, 0, 4096) + dt_arena_digest(a, 4096, n - 4096) == whole,
          "digest: additive over adjacent ranges");
    int flips = 0;
    for (int64_t pos = 0; pos < n; pos += 65537 * 3) /* bytes all over, each bit in turn */
        for (int bit = 0; bit < 8; bit += 7) {
            a[pos] ^= (uint8_t)(1u << bit);
            flips += dt_arena_digest(a, 0, n) != whole;
            a[pos] ^= (uint8_t)(1u << bit);
            flips--;
        }
    CHECK(flips == 0, "digest: every single-bit flip changes the digest (%d did not)", -flips);
    uint64_t w0, w1;
    memcpy(&w0, a + 8, 8);
    memcpy(&w1, a + 800, 8);
    memcpy(a + 8, &w1, 8);
    memcpy(a + 800, &w0, 8);
    CHECK(w0 == w1 || dt_arena_digest(a, 0, n) != whole, "digest: two words swapped");
    memcpy(a + 8, &w0, 8);
    memcpy(a + 800, &w1, 8);
    memset(a, 0, 64);
    memset(a + 4096, 0, 64);
    CHECK(dt_arena_digest(a, 0, 64) != dt_arena_digest(a, 4096, 64),
          "digest: the same bytes at another offset differ");
    dt_case_layout L;
    dt_layout_make_typed(&L, DT_OP_ADD, 17, 257, 0, 1, DT_BF16);
    int64_t so, sl;
    dt_layout_output_slot(&L, &so, &sl);
    const dt_buffer_layout *O = &L.buf[dt_layout_output(&L)];
    CHECK(so == O->slot_offset && so + sl == L.total_bytes && so % 8 == 0 && sl % 8 == 0 &&
              O->region_offset + O->region_bytes + DT_GUARD_BYTES <= so + sl,
          "output slot: [%lld, +%lld) holds the output and its guards", (long long)so,
          (long long)sl);
done:
    free(a);
}

int main(void) {
    static const dt_dtype k_dtypes[] = {DT_F32, DT_BF16, DT_F16};
    test_digest();
    test_conversions();
    for (size_t t = 0; t < 3; t++) {
        const dt_dtype dt = k_dtypes[t];
        for (int op = 0; op < DT_OP_COUNT; op++)
            for (size_t s = 0; s < sizeof k_shapes / sizeof k_shapes[0]; s++) {
                int gemm = dt_op_get(op)->is_gemm;
                if (gemm != (k_shapes[s][2] != 0)) continue;
                for (int views = 0; views <= 1; views++)
                    test_layout(op, k_shapes[s][0], k_shapes[s][1], k_shapes[s][2], views, dt);
            }
        test_layout(DT_OP_GEMM, 64, 1020, 60, 1, dt); /* (cols+4)*4 is a multiple of 256 */
        for (int op = 0; op < DT_OP_COUNT; op++) {
            if (dt_op_get(op)->is_gemm)
                test_contents(op, 127, 193, 61, dt);
            else {
                test_contents(op, 17, 257, 0, dt);
                test_contents(op, 4, 60, 0, dt);
            }
        }
    }
    test_check_speed();
    return dt_check_summary("test_arena");
}
