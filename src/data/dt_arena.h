/* dt_arena.h — the guarded memory layout of one case, deterministic inputs, and the
 * arena checks (guards, padding, inputs unchanged, outputs written and finite).
 *
 * An arena is one contiguous byte range (a POSIX shared-memory segment shared with a
 * worker, or a device mirror of it with identical offsets). Each buffer of the op
 * lives in its own slot:
 *
 *   [front guard][padded region][back guard]     (slot offsets aligned to 256 bytes)
 *
 * Element types: a case has one floating-point dtype (DT_F32, DT_BF16 or DT_F16, see
 * dt_layout_make_typed); every floating-point buffer of the op (inputs and the output,
 * also the M x 1 outputs of sum and cross_entropy) is stored in it; labels stay I64.
 *
 * The padded region of a contiguous buffer is exactly rows*cols elements. Under
 * --input-views a viewable input's region is (rows+2) x stride elements, where the row
 * stride is the even one of cols+3 and cols+4, and the data window starts at element
 * (1,1): the first element (and every row start) sits an odd number of elements past
 * the 256-aligned region start, deliberately unaligned (F32: 4 mod 8 bytes; BF16/F16:
 * 2 mod 4 bytes, so no row start is 16-byte aligned). Guards and padding hold a
 * sentinel; outputs are poisoned with a NaN pattern before each checked call.
 *
 * Inputs are a pure function of (seed, op, buffer index, logical element index), one
 * counter-based draw per element (the same draw for every dtype):
 *   F32 and F16: multiples of 2^-10 in [-1, 1] (2049 grid points; exact in f16, whose
 *                11 significant bits hold any q/1024 with |q| <= 1024), so add is exact
 *                in F32;
 *   BF16:        multiples of 2^-7 in [-1, 1] (257 grid points, q = draw % 257 - 128;
 *                exact in bf16's 8 significant bits);
 *   I64 labels:  in [0, N).
 * Both frameworks get byte-identical arenas.
 *
 * Fixed patterns (per element type; guards and padding of every buffer of a case use
 * the case dtype's sentinel in every element-sized unit, labels' guards included):
 *   sentinel (non-NaN): F32 0xC433E000 (-719.5); BF16 0xC433 (-716.0);
 *                       F16 0xE19F (-719.5)
 *   poison (quiet NaN): F32 0x7FC0DEAD; BF16 0x7FDE; F16 0x7EAD
 *
 * Ownership: layouts are plain values. Functions taking `base` read or write the
 * caller's memory only. Thread-safety: reentrant. */
#ifndef DT_ARENA_H
#define DT_ARENA_H

#include <stdint.h>

#include "../common/dt_common.h"
#include "../plan/dt_ops.h"

#define DT_GUARD_BYTES 256
#define DT_ARENA_ALIGN 256
/* Sentinel of guards and padding: the float -719.5 (0xC433E000) in every 4-byte word. */
#define DT_SENTINEL_U32 0xC433E000u
/* Output poison: a quiet NaN with a recognisable payload. */
#define DT_POISON_U32 0x7FC0DEADu
/* The same for the 16-bit types (in every 2-byte unit; see the table above). */
#define DT_SENTINEL_BF16 0xC433u
#define DT_SENTINEL_F16 0xE19Fu
#define DT_POISON_BF16 0x7FDEu
#define DT_POISON_F16 0x7EADu

typedef struct dt_buffer_layout {
    const char *name;      /* role name from the op registry ("a", "out", ...) */
    dt_dtype dtype;
    int is_output;
    int is_view;           /* 1 if this input is a strided window */
    int64_t rows, cols;    /* logical shape */
    int64_t row_stride;    /* elements from one row to the next (>= cols) */
    int64_t elem_bytes;    /* 4 (f32), 8 (i64) or 2 (bf16, f16) */
    int64_t slot_offset;   /* bytes: start of the front guard */
    int64_t region_offset; /* bytes: start of the padded region */
    int64_t region_bytes;  /* bytes of the padded region */
    int64_t data_offset;   /* bytes: element (0,0) of the logical window */
} dt_buffer_layout;

/* Input distributions (--inputs; issue 16). Every value is exact in the case dtype; each
 * applies to the buffers named below, every other buffer keeps the uniform grid (the
 * parameters per dtype are in dt_inputs_describe and docs/inputs.md):
 *   UNIFORM      the default grid above
 *   NORMAL       every floating-point input: Irwin-Hall(4) ~ N(0, 1) in [-3.47, 3.47] on a
 *                grid of 2^-12 (f32), 2^-9 (f16), 2^-6 (bf16)
 *   WIDE_LOGITS  softmax and cross_entropy 'a': each row has an offset +-(128 .. 896) (a
 *                multiple of 64, the sign alternating by row) plus a spread in [-32, 32]
 *                (grid 2^-6 f32, 0.5 f16, 4 bf16): exp(x) overflows FP32 (and 0/0 for the
 *                negative rows) without max-subtraction
 *   OFFSET       the norms' matrix inputs (rmsnorm, layernorm 'a'; residual_layernorm
 *                'a', 'b'): mean + q*step, f32 4096 + [-1, 1] step 2^-10, f16 1024 +
 *                [-16, 16] step 1, bf16 256 + [-16, 16] step 2: a one-pass variance
 *                E[x^2] - E[x]^2 cancels
 *   CANCEL       sum 'a': the first half of a row holds B_j > 0, the second -B_j + s_j
 *                (f32 B <= 256 step 2^-3, |s| <= 1 step 2^-10; f16 B <= 31 step 2^-2, s
 *                step 2^-6; bf16 B <= 15 step 1, s step 2^-3): sum|terms| >> |sum| and
 *                the partial sums climb to sum B_j before they cancel, so a low-precision
 *                accumulator stagnates (or overflows fp16) far outside the bound */
typedef enum dt_inputs {
    DT_INPUTS_UNIFORM = 0,
    DT_INPUTS_NORMAL,
    DT_INPUTS_WIDE_LOGITS,
    DT_INPUTS_OFFSET,
    DT_INPUTS_CANCEL,
    DT_INPUTS_COUNT
} dt_inputs;
/* "uniform", "normal", "wide-logits", "offset", "cancel". */
const char *dt_inputs_name(dt_inputs d);
/* By name; -1 if unknown. */
int dt_inputs_find(const char *name);
/* One line: what the distribution is and which buffers it applies to. */
const char *dt_inputs_describe(dt_inputs d);
/* 1 when distribution d changes buffer `buffer` of op (else that buffer is uniform). */
int dt_inputs_applies(dt_inputs d, dt_op op, int buffer);

typedef struct dt_case_layout {
    dt_op op;
    dt_dtype dtype; /* the case's floating-point type: DT_F32, DT_BF16 or DT_F16 */
    dt_inputs inputs; /* distribution dt_arena_fill draws (dt_layout_make*: UNIFORM) */
    int64_t m, n, k;
    int views;
    int nbuffers;
    dt_buffer_layout buf[DT_MAX_BUFFERS];
    int64_t total_bytes; /* bytes of the whole arena */
} dt_case_layout;

/* Fills L for op at shape (m, n, k) (k ignored unless gemm); views != 0 makes every
 * viewable input a strided window. */
void dt_layout_make(dt_case_layout *L, dt_op op, int64_t m, int64_t n, int64_t k, int views);

/* The same with every floating-point buffer of the op (the registry's DT_F32 roles) in
 * dtype (DT_F32, DT_BF16 or DT_F16; DT_ASSERTs it is one of them); labels stay I64.
 * Offsets and alignment rules as above. dt_layout_make is this with DT_F32. */
void dt_layout_make_typed(dt_case_layout *L, dt_op op, int64_t m, int64_t n, int64_t k,
                          int views, dt_dtype dtype);

/* Sentinel and poison bit patterns of a floating-point dtype (zero-extended). */
uint32_t dt_sentinel_bits(dt_dtype dtype);
uint32_t dt_poison_bits(dt_dtype dtype);

/* Index of the single output buffer in L->buf. */
int dt_layout_output(const dt_case_layout *L);

/* Byte offset (from the arena start) of logical element (i, j) of buffer b. */
static inline int64_t dt_elem_offset(const dt_buffer_layout *b, int64_t i, int64_t j) {
    return b->data_offset + (i * b->row_stride + j) * b->elem_bytes;
}

/* The deterministic input value of element idx (row-major logical index) of buffer
 * `buffer` of op. For F32 the value is exact in float; labels are in [0, n). */
float dt_input_f32(uint64_t seed, dt_op op, int buffer, int64_t idx);
/* The same for a case of floating-point dtype: exact in dtype (the grids above);
 * dt_input_value(.., DT_F32) == dt_input_f32. */
float dt_input_value(uint64_t seed, dt_op op, int buffer, int64_t idx, dt_dtype dtype);
int64_t dt_input_label(uint64_t seed, dt_op op, int buffer, int64_t idx, int64_t n);
/* The value of element idx of a buffer with `cols` columns under distribution dist:
 * exact in dtype; DT_INPUTS_UNIFORM (or a buffer the distribution does not apply to) is
 * dt_input_value. */
float dt_input_dist_value(uint64_t seed, dt_op op, int buffer, int64_t idx, int64_t cols,
                          dt_dtype dtype, dt_inputs dist);

/* Writes the complete pristine arena: sentinel in guards and padding, inputs in
 * their windows (distribution L->inputs), poison in outputs. base must hold
 * L->total_bytes. */
void dt_arena_fill(const dt_case_layout *L, uint8_t *base, uint64_t seed);

/* Re-poisons every output element (and only those). */
void dt_arena_poison_outputs(const dt_case_layout *L, uint8_t *base);

/* What an arena check found. Counts are element counts; first_* name the first bad
 * place found (buffer name and byte offset within the arena). */
typedef struct dt_arena_report {
    int ok;
    int64_t guard_bytes_changed;   /* guard or padding bytes that differ from pristine */
    int64_t input_elems_changed;   /* input window elements that differ from pristine */
    int64_t output_unwritten;      /* output elements still holding the poison pattern */
    int64_t output_nonfinite;      /* output elements that are NaN/Inf but not poison */
    char first_problem[256];       /* human-readable first finding, "" if ok */
} dt_arena_report;

/* Compares base with the pristine arena (as written by dt_arena_fill with the same
 * layout and seed): guards and padding bytes intact, inputs unchanged, every output
 * element written and finite. Never reads outside [0, L->total_bytes). */
void dt_arena_check(const dt_case_layout *L, const uint8_t *base, const uint8_t *pristine,
                    dt_arena_report *rep);

/* dt_arena_check limited to the bytes in [lo, hi) (slot bounds: a buffer's slot_offset,
 * the next one's, L->total_bytes): guards and padding in the span, the buffers whose
 * region lies in it. dt_arena_check is the span [0, L->total_bytes). */
void dt_arena_check_span(const dt_case_layout *L, const uint8_t *base, const uint8_t *pristine,
                         int64_t lo, int64_t hi, dt_arena_report *rep);

/* The output buffer's slot [*off, *off + *len): its front guard, region and back guard up
 * to the next buffer's slot or the arena's end (DT_ARENA_ALIGN-aligned bounds). */
void dt_layout_output_slot(const dt_case_layout *L, int64_t *off, int64_t *len);

/* The arena digest "dt-mix64-1" of [off, off + len) (both multiples of 8; docs/protocol.md,
 * `download`): the sum mod 2^64 over the range's little-endian 64-bit words w at word
 * index g = byte offset / 8 of mix64(w ^ g * DT_DIGEST_INDEX_MUL), mix64 the splitmix64
 * finaliser (x += 0x9E3779B97F4A7C15; x = (x ^ x >> 30) * 0xBF58476D1CE4E5B9;
 * x = (x ^ x >> 27) * 0x94D049BB133111EB; x ^ x >> 31). Additive over adjacent ranges,
 * and the same in every worker (the native worker's CUDA kernel, the PyTorch worker's
 * int64 tensor ops), so a worker can prove its device mirror's inputs unchanged without
 * copying them back. */
#define DT_DIGEST_NAME "dt-mix64-1"
#define DT_DIGEST_INDEX_MUL 0xD1B54A32D192ED03ull
uint64_t dt_arena_digest(const uint8_t *base, int64_t off, int64_t len);

/* SHA-256 (lowercase hex, 65 bytes with NUL) of the logical contents of buffer b,
 * row by row, independent of the view layout. */
void dt_buffer_sha256(const dt_case_layout *L, int b, const uint8_t *base, char out_hex[65]);

/* Copies the logical window of buffer b into a dense row-major array of doubles
 * (labels become their integer value; bf16/f16 elements are widened exactly, NaN
 * patterns become NaN). dst holds rows*cols doubles. */
void dt_buffer_to_f64(const dt_case_layout *L, int b, const uint8_t *base, double *dst);

#endif
