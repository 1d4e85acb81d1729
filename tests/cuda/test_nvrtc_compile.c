/* test_nvrtc_compile.c — compiles every CUDA kernel source with NVRTC for sm_90 through
 * the backend's own planning code (dt_cuda_plan_make), for a set of specializations:
 * tails, large rows, very long rows (multi-pass path), gemm tile configurations, and
 * strided unaligned views. Checks each compile succeeds, the CUBIN is non-empty and
 * contains the expected kernel symbol, and that one compute_90 target gives PTX with
 * the entry. Also checks that a broken source fails with the NVRTC log in the error.
 * gemm is compiled in both variants (DUALTIME_GEMM_VARIANT=v1 gemm.cu, v2 gemm_v2.cu,
 * the default when unset) and with DUALTIME_GEMM_BK=16; a bad variant name must fail.
 * The launch geometry of small row/elementwise problems (fill, DUALTIME_LAUNCH_FILL,
 * DUALTIME_ROW_TPR) is checked through the plan summary; bad values must be refused.
 * Narrow types: every op x {bf16, f16} x {contiguous, views} x tails, large and long
 * rows (and gemm variant tc1 over tails and sizes) compiles, with the kernel symbol
 * dt_<op>_bf16 / _f16; contiguous aligned rows take the 16-byte path (vec=8), and so do
 * views (session 18, loads-shifted: the row ops' in-register rows, add and gelu_add's
 * items; DUALTIME_ROW_SHIFT=0 / DUALTIME_ELEM_SHIFT=0 the plans before: the row ops vec 1,
 * the elementwise shifted 32-bit pairs, vec=2, vec 1 at odd N and with
 * DUALTIME_ELEM_PAIR=0, both with every item's loads in one block, loads-unbranched;
 * FP32 views without, DUALTIME_ELEM_LDALL=0|1 forcing; DUALTIME_ELEM_SHIFT=1 shifts FP32
 * views' items too); gemm's tc1 takes VECA/VECB=8 when
 * aligned; FP32 variant names
 * are refused for narrow gemm and tc1 for FP32; the planted fp16-accumulation sum
 * (DUALTIME_PLANT_ACC_F16=1) compiles, is named in the summary, and is refused for
 * other ops. Issue 18 (long_row_cases): every row op x dtype at 1x65536, 4096x50257,
 * 2048x128256, 8191x8193 views and 5x40000 (both layouts) compiles, with the cluster
 * split, multi-pass or in-register geometry named in the summary, fastexp for narrow
 * softmax / cross_entropy, DUALTIME_ROW_CLUSTER / _ELEMS / _FASTEXP honoured and bad
 * values refused; every row op x dtype at those shapes with DUALTIME_ROW_SMEM=0 (the
 * geometry before the staged-row variant), and smem_row_cases: on by default (=0 turns it
 * off), the staged-row variant's geometry with DUALTIME_ROW_SMEM=1 and =2 and DUALTIME_ROW_SMEM_KB, on sm_80, the
 * refusals; smem_pipe_cases: its persistent double-buffered geometry (DUALTIME_ROW_PIPE=1)
 * and layernorm's packed narrow gamma/beta (DUALTIME_ROW_LN_RAW); ce_stream_cases:
 * cross_entropy's streaming online logsumexp (DUALTIME_CE_STREAM=1) where it applies, in
 * every dtype, its geometry, and the refusals; row_l2_cases: the L2-resident two-pass row
 * of softmax / rmsnorm / layernorm (DUALTIME_ROW_L2=1, DUALTIME_ROW_L2_MB) where it
 * applies, in every dtype, its geometry, and the refusals; ln_one_cases: layernorm's
 * one-reduction in-register rows (DUALTIME_ROW_LN_ONE=1) in every dtype where they apply;
 * ln_persist_cases: its persistent prefetching rows (DUALTIME_ROW_LN_PERSIST=1, 2) where
 * they apply, their grid, the refusals, and the registers a thread of each (read from
 * the cubin's .nv.info, cubin_regs) printed beside the default kernel's.
 * gemm wg1 (DUALTIME_GEMM_VARIANT=wg1, sm_90a) for bf16/f16 at 1024^3, 4096^3,
 * 8192^3, 1000x1048x264 takes wg1 (plan: 2 tensor maps, 384 threads, dynamic shared
 * memory, persistent grid), 127x193x61, 4097x4095x257 and views fall back to tc1 and
 * say why, another arch falls back, DUALTIME_GEMM_BN (64, 128, 256) is honoured or
 * refused, 1024^3 takes the 128x64 tile (DUALTIME_GEMM_FILL=0: 128x128, as before),
 * split-K 2 (DUALTIME_GEMM_SPLITK=2) compiles with its workspace; the
 * 4096^3 cubin's SASS must show HGMMA and UTMALDG where cuobjdump runs
 * (DUALTIME_CUOBJDUMP=path; DUALTIME_REQUIRE_SASS=1 makes its absence a failure;
 * DUALTIME_KEEP_CUBIN=path keeps the cubin). The FP32 kernels are unchanged by the narrow work: their PTX (code, not
 * line info) was compared before and after (see docs/cuda-backend.md).
 * FP32 gemm shape geometry (thin_gemm_cases): thin shapes compile on gemv.cu (matrix-vector
 * and vector-matrix, clusters, odd sizes, views), v2's exact K tail, DUALTIME_GEMM_SHAPE=0.
 * bf16 / f16 thin gemm (narrow_thin_cases): gemv.cu as dt_gemv_bf16 / _f16 in both modes,
 * 16-byte loads of 8 elements and scalar (views, odd K, K % 8 != 0), clusters, with the
 * geometry asserted through the summary and options; DUALTIME_GEMM_GEMV_NARROW=0 compiles
 * the plan before (tc1 / wg3).
 * Needs NVRTC only (no GPU, no libcuda). Run: ./test_nvrtc_compile [-v] */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp, popen */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dt_check.h"
#include "../../src/common/dt_cuda_check.h"
#include "backend_cuda_plan.h"
#include "backend_cuda_flops.h"

static int g_verbose;
static const char *g_expect; /* substring the plan summary must contain (NULL: none) */
static int g_expect_absent;   /* 1: g_expect must NOT be in the summary */
static const char *g_dump;   /* write the next image here (NULL: no) */
static dt_cuda_plan g_last;  /* the plan of the last compile_typed */
static int g_regs = -1, g_frame = -1; /* the last cubin's registers a thread, stack frame bytes */

static int contains(const char *hay, size_t n, const char *needle) {
    size_t k = strlen(needle);
    if (k > n) return 0;
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0) return 1;
    return 0;
}

/* Little-endian field of w bytes at off of an ELF image (0 past its end). */
static unsigned long long elf_field(const unsigned char *b, size_t bytes, size_t off, int w) {
    unsigned long long v = 0;
    if (off + (size_t)w > bytes) return 0;
    for (int i = w - 1; i >= 0; i--) v = v << 8 | b[off + (size_t)i];
    return v;
}

/* ptxas's registers a thread of kernel in a cubin and its stack frame (local memory:
 * spills) into *regs / *frame; -1 each where the image is no ELF64 or lacks them. The
 * kernel's symbol is the sh_info of its .text.<kernel> section; the .nv.info section holds
 * (format 4, attribute, 8 bytes: symbol, value) records, EIATTR_REGCOUNT 0x2f and
 * EIATTR_FRAME_SIZE 0x11 among them (what cuobjdump -res-usage prints). */
static void cubin_regs(const char *image, size_t bytes, const char *kernel, int *regs, int *frame) {
    const unsigned char *b = (const unsigned char *)image;
    *regs = *frame = -1;
    if (bytes < 64 || memcmp(b, "\x7f" "ELF", 4) != 0 || b[4] != 2) return;
    const size_t shoff = (size_t)elf_field(b, bytes, 0x28, 8);
    const size_t shent = (size_t)elf_field(b, bytes, 0x3a, 2), shnum = (size_t)elf_field(b, bytes, 0x3c, 2);
    const size_t stroff = (size_t)elf_field(b, bytes, shoff + shent * elf_field(b, bytes, 0x3e, 2) + 0x18, 8);
    char text[160];
    snprintf(text, sizeof text, ".text.%s", kernel);
    long long sym = -1;
    size_t info_off = 0, info_size = 0;
    for (size_t i = 0; i < shnum && shent >= 64; i++) {
        const size_t sh = shoff + i * shent, name = stroff + (size_t)elf_field(b, bytes, sh, 4);
        if (name >= bytes) continue;
        const char *nm = (const char *)b + name;
        const size_t len = strnlen(nm, bytes - name);
        if (len == strlen(text) && strcmp(nm, text) == 0) sym = (long long)elf_field(b, bytes, sh + 0x2c, 4);
        if (len == 8 && strcmp(nm, ".nv.info") == 0) {
            info_off = (size_t)elf_field(b, bytes, sh + 0x18, 8);
            info_size = (size_t)elf_field(b, bytes, sh + 0x20, 8);
        }
    }
    for (size_t j = info_off; sym >= 0 && j + 4 <= info_off + info_size && j + 4 <= bytes;) {
        const int fmt = b[j], attr = b[j + 1];
        const size_t sz = fmt == 4 ? (size_t)elf_field(b, bytes, j + 2, 2) : 0;
        if (fmt == 4 && sz == 8 && (long long)elf_field(b, bytes, j + 4, 4) == sym) {
            if (attr == 0x2f) *regs = (int)elf_field(b, bytes, j + 8, 4);
            if (attr == 0x11) *frame = (int)elf_field(b, bytes, j + 8, 4);
        }
        j += 4 + sz;
    }
}

static void compile_typed(dt_op op, int64_t m, int64_t n, int64_t k, int views, const char *arch,
                          const char *hdr, dt_dtype dtype) {
    dt_case_layout L;
    dt_layout_make_typed(&L, op, m, n, k, views, dtype);
    dt_cuda_plan p;
    dt_err err = {{0}};
    char label[128];
    snprintf(label, sizeof label, "%s %lldx%lldx%lld views=%d %s %s", dt_op_get(op)->name,
             (long long)m, (long long)n, (long long)k, views, arch, dt_dtype_name(dtype));
    char *src = NULL, *image = NULL;
    size_t bytes = 0;
    REQUIRE(dt_cuda_plan_make(&L, arch, 132, &p, &err) == DT_OK, "plan %s: %s", label, err.msg);
    REQUIRE(!g_expect || (strstr(p.summary, g_expect) == NULL) == g_expect_absent,
            "plan %s: summary %s \"%s\": %s", label, g_expect_absent ? "has" : "lacks", g_expect,
            p.summary);
    REQUIRE(dt_cuda_source_load(p.source_name, &src, NULL, &err) == DT_OK, "source %s: %s",
            label, err.msg);
    int64_t t0 = dt_now_ns();
    dt_status st = dt_cuda_nvrtc_compile(p.source_name, src, hdr, &p, &image, &bytes, &err);
    double ms = (double)(dt_now_ns() - t0) / 1e6;
    REQUIRE(st == DT_OK, "compile %s: %s", label, err.msg);
    REQUIRE(bytes > 0 && contains(image, bytes, p.kernel_name), "image %s: %zu bytes, symbol %s %s",
            label, bytes, p.kernel_name, bytes ? "missing" : "-");
    {
        char want[64];
        snprintf(want, sizeof want, "_%s", dt_dtype_name(dtype));
        const size_t kl = strlen(p.kernel_name), wl = strlen(want);
        REQUIRE(kl > wl && strcmp(p.kernel_name + kl - wl, want) == 0,
                "%s: kernel %s lacks the dtype suffix %s", label, p.kernel_name, want);
    }
    g_last = p;
    cubin_regs(image, bytes, p.kernel_name, &g_regs, &g_frame);
    if (g_dump) {
        FILE *f = fopen(g_dump, "wb");
        REQUIRE(f && fwrite(image, 1, bytes, f) == bytes, "%s: cannot write %s", label, g_dump);
        fclose(f);
    }
    if (g_verbose) {
        printf("ok   %-44s %7zu bytes %7.1f ms  %s\n     opts:", label, bytes, ms, p.summary);
        for (int i = 0; i < p.nopts; i++) printf(" %s", p.opts[i]);
        printf("\n");
    } else {
        printf("ok   %-44s %7zu bytes %7.1f ms  %s\n", label, bytes, ms, p.summary);
    }
done:
    free(src);
    free(image);
}

static void compile_case(dt_op op, int64_t m, int64_t n, int64_t k, int views, const char *arch,
                         const char *hdr) {
    compile_typed(op, m, n, k, views, arch, hdr, DT_F32);
}

/* 1 when the last compiled plan has NVRTC option opt. */
static int last_has_opt(const char *opt) {
    for (int i = 0; i < g_last.nopts; i++)
        if (strcmp(g_last.opts[i], opt) == 0) return 1;
    return 0;
}

/* Issue 18 item 4, FP32 gemm shape geometry: thin shapes (N == 1: matrix-vector, M == 1:
 * vector-matrix) and few rows (2 <= M <= 16) take gemv.cu by default, in every geometry the plan makes (a warp or a
 * block a row, K over a cluster, column threads 8..32, odd sizes on scalar loads); v2's
 * exact K tail and staged scalar-C epilogue (4097x4095x257 at BK=16, 8 and 32); DUALTIME_GEMM_BK=32 (two prefetch phases,
 * 66560 bytes of dynamic shared memory) at 4096^3 and 1537x1539x131; DUALTIME_GEMM_SHAPE=0
 * keeps v2 for the thin shapes. */
static void thin_gemm_cases(int views, const char *hdr) {
    static const int64_t thin[][3] = {{1000, 1, 1000}, {1, 1000, 1000}, {1, 1, 1000},
                                      {4096, 1, 4096}, {1, 8192, 8192}, {16, 1, 1048576},
                                      {4097, 1, 257},  {1, 4095, 257},  {1, 3, 5},
                                      /* few rows (GV_MODE 2 with GV_MR rows a block) */
                                      {8, 4096, 4096}, {16, 1000, 1000}, {5, 1003, 257},
                                      {13, 260, 64},   {2, 2, 1000}};
    unsetenv("DUALTIME_GEMM_VARIANT");
    unsetenv("DUALTIME_GEMM_SHAPE");
    g_expect = "variant=gemv";
    for (size_t i = 0; i < sizeof thin / sizeof thin[0]; i++)
        compile_case(DT_OP_GEMM, thin[i][0], thin[i][1], thin[i][2], views, "sm_90", hdr);
    g_expect = "cluster=8";
    compile_case(DT_OP_GEMM, 16, 1, 1048576, views, "sm_90", hdr);
    g_expect = "ktail-exact epilogue-staged";
    compile_case(DT_OP_GEMM, 4097, 4095, 257, views, "sm_90", hdr);
    setenv("DUALTIME_GEMM_BK", "8", 1);
    compile_case(DT_OP_GEMM, 4097, 4095, 257, views, "sm_90", hdr);
    /* BK=32: two prefetch phases a step, both buffers in dynamic shared memory */
    setenv("DUALTIME_GEMM_BK", "32", 1);
    compile_case(DT_OP_GEMM, 4097, 4095, 257, views, "sm_90", hdr);
    CHECK(g_last.shared_bytes == 66560, "BK=32: %u bytes of dynamic smem", g_last.shared_bytes);
    g_expect = "tile=128x128x32";
    compile_case(DT_OP_GEMM, 4096, 4096, 4096, views, "sm_90", hdr);
    /* the 128x128 tile keeps the plain A layout by default: 66560 bytes, views or not */
    CHECK(g_last.shared_bytes == 66560u, "BK=32 4096^3 views=%d: %u bytes of dynamic smem", views,
          g_last.shared_bytes);
    compile_case(DT_OP_GEMM, 1537, 1539, 131, views, "sm_90", hdr);
    unsetenv("DUALTIME_GEMM_BK");
    /* v2's A tile shifted (gemm_v2.cu ASWZ): not on the 128x128 tile by default (measured
     * slower there), on with DUALTIME_GEMM_ASWZ=1. Neither spills. */
    g_expect = "warp-tiled ffma-only";
    compile_case(DT_OP_GEMM, 4096, 4096, 4096, views, "sm_90", hdr);
    CHECK(last_has_opt("-DASWZ=0"), "4096^3: no -DASWZ=0 by default");
    const int plain_regs = g_regs, plain_frame = g_frame;
    setenv("DUALTIME_GEMM_ASWZ", "1", 1);
    g_expect = "warp-tiled a-swizzled ffma-only";
    compile_case(DT_OP_GEMM, 4096, 4096, 4096, views, "sm_90", hdr);
    CHECK(!last_has_opt("-DASWZ=0"), "DUALTIME_GEMM_ASWZ=1: -DASWZ=0 still given");
    unsetenv("DUALTIME_GEMM_ASWZ");
    CHECK(g_frame == 0 && plain_frame == 0, "gemm v2 4096^3 stack frame: shifted %d, plain %d bytes",
          g_frame, plain_frame);
    if (g_frame == 0 && plain_frame == 0)
        printf("ok   gemm v2 4096^3 views=%d: %d registers shifted, %d plain, no stack frame\n",
               views, g_regs, plain_regs);
    /* v2 split-K over a cluster: the 64x64 and 128x64 tiles, with tails */
    g_expect = "tile=128x64x16 thread=8x4"; /* the split-K tile (session 16) */
    compile_case(DT_OP_GEMM, 4096, 64, 4096, views, "sm_90", hdr);
    CHECK(g_frame == 0, "4096x64x4096 on 128x64 split 8: stack frame %d bytes", g_frame);
    g_expect = "split-k=8 (cluster, dsmem-sum)";
    compile_case(DT_OP_GEMM, 4096, 64, 4096, views, "sm_90", hdr);
    setenv("DUALTIME_GEMM_SPLIT_TILE", "0", 1);
    g_expect = "tile=64x64x16 thread=4x4";
    compile_case(DT_OP_GEMM, 4096, 64, 4096, views, "sm_90", hdr);
    unsetenv("DUALTIME_GEMM_SPLIT_TILE");
    g_expect = "tile=64x64x16 thread=4x4 vec"; /* 64x64 over 2 (measured faster than 128x64 over 4) */
    compile_case(DT_OP_GEMM, 4096, 128, 4096, views, "sm_90", hdr);
    g_expect = "split-k=2";
    compile_case(DT_OP_GEMM, 1024, 1024, 1024, views, "sm_90", hdr);
    g_expect = "split-k=8";
    compile_case(DT_OP_GEMM, 200, 70, 3000, views, "sm_90", hdr);
    setenv("DUALTIME_GEMM_SHAPE", "0", 1);
    g_expect = "variant=v2";
    compile_case(DT_OP_GEMM, 1000, 1, 1000, views, "sm_90", hdr);
    compile_case(DT_OP_GEMM, 1, 1000, 1000, views, "sm_90", hdr);
    unsetenv("DUALTIME_GEMM_SHAPE");
    g_expect = NULL;
}

/* bf16 / f16 thin gemm on gemv.cu: each case's summary (geometry) and options. */
static void narrow_thin_cases(const char *hdr) {
    static const struct {
        int64_t m, n, k;
        int views;
        const char *expect; /* in the summary */
        const char *opt1, *opt2; /* among the options */
    } cs[] = {
        {4096, 1, 4096, 0, "matrix-vector(N=1) grid=4096 block=64 threads/row=64 vec(a,b)=(8,8)",
         "-DKC=4096", "-DCL=1"},
        {1, 4096, 4096, 0,
         "vector-matrix(M=1) grid=512 block=256 column-threads=8 vec(a,b)=(1,8) cluster=8 k/block=512",
         "-DVECB=8", "-DGV_MODE=2"},
        {1000, 1, 1000, 0, "grid=500 block=64 threads/row=32 vec(a,b)=(8,8)", "-DVECA=8", "-DGV_MODE=1"},
        {1000, 1, 1000, 1, "vec(a,b)=(1,1)", "-DVECA=1", "-DLDB=4"},
        {1, 1000, 1000, 0, "grid=128 block=256 column-threads=8 vec(a,b)=(1,8) cluster=8 k/block=128",
         "-DKC=128", "-DCL=8"},
        {1, 1000, 1000, 1, "column-threads=32 vec(a,b)=(1,1) cluster=8", "-DVECB=1", "-DCL=8"},
        {4097, 1, 4095, 0, "grid=4097 block=64 threads/row=64 vec(a,b)=(1,1)", "-DVECA=1", "-DK=4095"},
        {4097, 1, 4095, 1, "vec(a,b)=(1,1)", "-DVECB=1", "-DGV_MODE=1"},
        {1, 4095, 4097, 0, "vec(a,b)=(1,1)", "-DVECB=1", "-DGV_MODE=2"},
        {8, 1, 65544, 0, "threads/row=1024 vec(a,b)=(8,8) cluster=2 k/block=32776", "-DKC=32776",
         "-DBLOCK=1024"},
        {16, 1, 1048576, 0, "cluster=8 k/block=131072", "-DVECA=8", "-DCL=8"},
        {100, 1, 1004, 0, "vec(a,b)=(1,1)", "-DVECA=1", "-DGV_MODE=1"},
        {1, 1, 1000, 0, "matrix-vector(N=1)", "-DGV_MODE=1", "-DN=1"},
        {1, 3, 5, 0, "vector-matrix(M=1)", "-DGV_MODE=2", "-DVECB=1"},
        {1, 8192, 8192, 1, "vector-matrix(M=1)", "-DVECB=1", "-DGV_MODE=2"},
        /* few rows: 16-byte A loads (8 k a step), 2 rows, a view at scalar loads */
        {8, 4096, 4096, 0, "few-rows grid=256 block=256 column-threads=8 vec(a,b)=(1,8) rows/block=8 (x1) k/step=8 cluster=4",
         "-DGV_MR=8", "-DGV_KG=8"},
        {2, 4096, 4096, 0, "rows/block=2 (x1) k/step=8", "-DGV_MR=2", "-DGV_MODE=2"},
        {5, 1003, 257, 1, "few-rows", "-DGV_KG=1", "-DGV_MR=5"},
    };
    static const dt_dtype dts[] = {DT_BF16, DT_F16};
    unsetenv("DUALTIME_GEMM_VARIANT");
    unsetenv("DUALTIME_GEMM_GEMV_NARROW");
    unsetenv("DUALTIME_GEMV_MMA"); /* the few rows below: gemv.cu's FFMA (the default) */
    for (size_t t = 0; t < 2; t++) {
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            g_expect = cs[i].expect;
            g_last.nopts = 0;
            compile_typed(DT_OP_GEMM, cs[i].m, cs[i].n, cs[i].k, cs[i].views, "sm_90", hdr, dts[t]);
            CHECK(strcmp(g_last.source_name ? g_last.source_name : "", "gemv.cu") == 0 &&
                      strstr(g_last.summary, "variant=gemv") && strstr(g_last.summary, "->f32-acc") &&
                      last_has_opt(cs[i].opt1) && last_has_opt(cs[i].opt2) &&
                      last_has_opt(dts[t] == DT_BF16 ? "-DDT_ELEM=1" : "-DDT_ELEM=2"),
                  "%s %lldx%lldx%lld views=%d: %s / %s in %s", dt_dtype_name(dts[t]),
                  (long long)cs[i].m, (long long)cs[i].n, (long long)cs[i].k, cs[i].views,
                  cs[i].opt1, cs[i].opt2, g_last.summary);
        }
        /* the plan before, for A/B timing */
        setenv("DUALTIME_GEMM_GEMV_NARROW", "0", 1);
        g_expect = "variant=tc1 (fallback: B rows";
        compile_typed(DT_OP_GEMM, 4096, 1, 4096, 0, "sm_90", hdr, dts[t]);
        g_expect = "variant=wg3";
        compile_typed(DT_OP_GEMM, 1, 4096, 4096, 0, "sm_90", hdr, dts[t]);
        unsetenv("DUALTIME_GEMM_GEMV_NARROW");
    }
    g_expect = "variant=gemv";
    compile_typed(DT_OP_GEMM, 1000, 1, 1000, 0, "compute_90", hdr, DT_BF16);
    /* few rows on the tensor cores (gemv_mma.cu, DUALTIME_GEMV_MMA=1: 2 <= M <= 32): 16-byte
     * loads over a cluster, scalar loads (a view, odd N and K), two and four row groups,
     * a narrow N, a wide N, sm_80 without a cluster */
    static const struct {
        int64_t m, n, k;
        int views;
        const char *arch, *expect, *opt;
    } ms[] = {
        {8, 4096, 4096, 0, "sm_90", "warps=8 rows/block=8 cols/warp=64 k/step=32 vec(a,b)=(8,8) cluster=4", "-DKC=1024"},
        {8, 4096, 4096, 1, "sm_90", "vec(a,b)=(1,1) cluster=4", "-DVECB=0"},
        {13, 1000, 1000, 0, "sm_90", "rows/block=16", "-DMG=2"},
        {32, 1003, 257, 1, "sm_90", "rows/block=32", "-DMG=4"},
        {17, 2, 1000, 0, "sm_90", "vec(a,b)=(8,1)", "-DVECB=0"},
        {2, 14336, 4096, 0, "sm_90", "variant=gemv-mma", "-DMG=1"},
        {8, 4096, 4096, 0, "sm_80", "variant=gemv-mma", "-DCL=1"},
    };
    setenv("DUALTIME_GEMV_MMA", "1", 1);
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
            g_expect = ms[i].expect;
            g_last.nopts = 0;
            compile_typed(DT_OP_GEMM, ms[i].m, ms[i].n, ms[i].k, ms[i].views, ms[i].arch, hdr, dts[t]);
            CHECK(strcmp(g_last.source_name ? g_last.source_name : "", "gemv_mma.cu") == 0 &&
                      strstr(g_last.summary, "mma.m16n8k16") && last_has_opt(ms[i].opt) &&
                      last_has_opt(dts[t] == DT_BF16 ? "-DDT_ELEM=1" : "-DDT_ELEM=2"),
                  "%s %lldx%lldx%lld views=%d %s: %s in %s", dt_dtype_name(dts[t]),
                  (long long)ms[i].m, (long long)ms[i].n, (long long)ms[i].k, ms[i].views,
                  ms[i].arch, ms[i].opt, g_last.summary);
        }
    unsetenv("DUALTIME_GEMV_MMA");
    g_expect = NULL;
}

/* Whether the plan passes the option o. */
static int has_opt(const dt_cuda_plan *p, const char *o) {
    for (int i = 0; i < p->nopts; i++)
        if (strcmp(p->opts[i], o) == 0) return 1;
    return 0;
}
/* bf16 and f16: every op, both layouts, tails to long rows; gemm tc1; the refusals. */
static void narrow_cases(const char *hdr) {
    static const int64_t rows[][2] = {{1, 127}, {17, 257}, {128, 1024}, {1024, 4096},
                                      {4, 16384}, {3, 20000}, {4, 40000}};
    static const int64_t gemms[][3] = {{127, 193, 61}, {513, 257, 129}, {1024, 1024, 1024},
                                       {64, 64, 64}, {1, 8, 16}};
    static const dt_dtype dts[] = {DT_BF16, DT_F16};
    for (size_t t = 0; t < 2; t++)
        for (int op = 0; op < DT_OP_COUNT; op++)
            for (int views = 0; views < 2; views++) {
                if (dt_op_get((dt_op)op)->is_gemm) {
                    /* the default: wg3 where TMA can take A and B, else tc1 saying why */
                    unsetenv("DUALTIME_GEMM_VARIANT");
                    g_expect = views ? "variant=tc1 (fallback: " : "variant=wg3";
                    compile_typed((dt_op)op, 1024, 1024, 1024, views, "sm_90", hdr, dts[t]);
                    g_expect = "variant=tc1 (fallback: A rows not 16-byte aligned for TMA)";
                    compile_typed((dt_op)op, 127, 193, 61, views, "sm_90", hdr, dts[t]);
                    g_expect = "variant=tc1 (fallback: arch sm_80 has no wgmma)";
                    compile_typed((dt_op)op, 1024, 1024, 1024, views, "sm_80", hdr, dts[t]);
                    setenv("DUALTIME_GEMM_VARIANT", "tc1", 1);
                    g_expect = "variant=tc1";
                    for (size_t i = 0; i < sizeof gemms / sizeof gemms[0]; i++)
                        compile_typed((dt_op)op, gemms[i][0], gemms[i][1], gemms[i][2], views,
                                      "sm_90", hdr, dts[t]);
                    g_expect = views ? "vec(a,b)=(1,1)" : "vec(a,b)=(8,8)";
                    compile_typed((dt_op)op, 1024, 1024, 1024, views, "sm_90", hdr, dts[t]);
                    unsetenv("DUALTIME_GEMM_VARIANT");
                } else {
                    g_expect = NULL;
                    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
                        compile_typed((dt_op)op, rows[i][0], rows[i][1], 0, views, "sm_90", hdr,
                                      dts[t]);
                    /* 16-byte path (8 halves) when contiguous and N % 8 == 0, else scalar;
                     * bf16/f16 elementwise on views (rows 2 mod 4 bytes): shifted 32-bit
                     * pairs with every item's loads in one block (session 17), vec 1 with
                     * DUALTIME_ELEM_PAIR=0 and at odd N (loads still in one block); FP32
                     * views vec 1 with the guarded loads; DUALTIME_ELEM_LDALL=0|1 forces */
                    const int ew = op == DT_OP_ADD || op == DT_OP_GELU_ADD;
                    g_expect = op == DT_OP_SUM && views ? "vec=8 streaming row-head"
                               : views && ew ? "vec=8 strided loads-shifted" /* session 18 */
                               : views       ? "vec=8 row-in-registers single-pass" /* shifted */
                                             : "vec=8 ";
                    compile_typed((dt_op)op, 128, 1024, 0, views, "sm_90", hdr, dts[t]);
                    /* row ops over views: the shifted loads (session 18); =0 vec 1 */
                    g_expect = "loads-shifted";
                    g_expect_absent = !views || op == DT_OP_SUM;
                    compile_typed((dt_op)op, 128, 1024, 0, views, "sm_90", hdr, dts[t]);
                    g_expect_absent = 0;
                    if (ew && views) {
                        g_expect = "vec=1 strided loads-unbranched";
                        compile_typed((dt_op)op, 127, 1023, 0, 1, "sm_90", hdr, dts[t]);
                        /* the pairs and the one-block loads, as before the shifted items
                         * (DUALTIME_ELEM_SHIFT=0; session 17's default) */
                        setenv("DUALTIME_ELEM_SHIFT", "0", 1);
                        g_expect = "vec=2 strided pairs-shifted loads-unbranched";
                        compile_typed((dt_op)op, 128, 1024, 0, 1, "sm_90", hdr, dts[t]);
                        g_expect = "vec=1 strided loads-unbranched";
                        setenv("DUALTIME_ELEM_PAIR", "0", 1);
                        compile_typed((dt_op)op, 128, 1024, 0, 1, "sm_90", hdr, dts[t]);
                        unsetenv("DUALTIME_ELEM_PAIR");
                        /* the knob forces both ways */
                        setenv("DUALTIME_ELEM_LDALL", "0", 1);
                        g_expect = "loads-unbranched";
                        g_expect_absent = 1;
                        compile_typed((dt_op)op, 128, 1024, 0, 1, "sm_90", hdr, dts[t]);
                        g_expect_absent = 0;
                        setenv("DUALTIME_ELEM_LDALL", "1", 1);
                        compile_typed((dt_op)op, 128, 1024, 0, 1, "sm_90", hdr, dts[t]);
                        compile_typed((dt_op)op, 17, 260, 0, 0, "sm_90", hdr, dts[t]);
                        compile_typed((dt_op)op, 1, 7, 0, 0, "sm_90", hdr, dts[t]); /* tail only */
                        unsetenv("DUALTIME_ELEM_LDALL");
                        unsetenv("DUALTIME_ELEM_SHIFT");
                        /* the shifted items: views of N % 8 == 0, both inputs shifted */
                        g_expect = "vec=8 strided loads-shifted";
                        compile_typed((dt_op)op, 300, 30000, 0, 1, "sm_90", hdr, dts[t]);
                        CHECK(has_opt(&g_last, "-DDT_SHIFT_A=1") && has_opt(&g_last, "-DDT_SHIFT_B=1") &&
                                  !has_opt(&g_last, "-DDT_ELEM_LDALL=1") && !has_opt(&g_last, "-DDT_PHA=1"),
                              "%s %s 300x30000 view: shifted options", dt_op_get((dt_op)op)->name,
                              dt_dtype_name(dts[t]));
                    }
                    /* N % 8 != 0: row ops scalar; elementwise over contiguous buffers
                     * 16-byte items over the flat range, the last (M*N) % 8 scalar */
                    if (views && !ew && op != DT_OP_SUM) {
                        setenv("DUALTIME_ROW_SHIFT", "0", 1);
                        g_expect = "vec=1 ";
                        compile_typed((dt_op)op, 128, 1024, 0, views, "sm_90", hdr, dts[t]);
                        unsetenv("DUALTIME_ROW_SHIFT");
                    }
                    /* odd rows in registers: cross_entropy (one output a row) shifted
                     * loads, the others in the output row's frame too (session 18) */
                    g_expect = ew ? "vec=8 contiguous flat-tail"
                               : op == DT_OP_SUM ? "vec=8 streaming row-head"
                               : op == DT_OP_CROSS_ENTROPY ? "vec=8 row-in-registers single-pass fastexp loads-shifted"
                                                 : "vec=8 row-in-registers single-pass";
                    compile_typed((dt_op)op, 17, 260, 0, 0, "sm_90", hdr, dts[t]); /* N%8 */
                    if (!ew && op != DT_OP_SUM)
                        CHECK(has_opt(&g_last, "-DDT_OFRAME=1") == (op != DT_OP_CROSS_ENTROPY) &&
                                  strstr(g_last.summary, "loads-shifted") != NULL,
                              "%s 17x260 %s: %s", dt_op_get((dt_op)op)->name, dt_dtype_name(dts[t]),
                              g_last.summary);
                    if (op == DT_OP_SUM) { /* odd N, views, and the version before */
                        g_expect = "vec=8 streaming row-head";
                        compile_typed((dt_op)op, 6000, 6001, 0, 0, "sm_90", hdr, dts[t]);
                        /* rows not whole vectors: 64 elements a thread (6001: 128 threads);
                         * whole vectors keep 16 (1024x4096: 256); the knob wins */
                        CHECK(g_last.block[0] == 128, "sum 6000x6001: block %u", g_last.block[0]);
                        g_expect = "vec=8 streaming";
                        compile_typed((dt_op)op, 1024, 4096, 0, 0, "sm_90", hdr, dts[t]);
                        CHECK(g_last.block[0] == 256, "sum 1024x4096: block %u", g_last.block[0]);
                        g_expect = "vec=8 streaming row-head";
                        setenv("DUALTIME_ROW_ELEMS", "16", 1);
                        compile_typed((dt_op)op, 6000, 6001, 0, 0, "sm_90", hdr, dts[t]);
                        CHECK(g_last.block[0] == 512, "ELEMS=16 6000x6001: block %u", g_last.block[0]);
                        unsetenv("DUALTIME_ROW_ELEMS");
                        compile_typed((dt_op)op, 3, 5, 0, 0, "sm_90", hdr, dts[t]); /* N < 8 */
                        compile_typed((dt_op)op, 300, 30000, 0, 1, "sm_90", hdr, dts[t]);
                        setenv("DUALTIME_ROW_HEAD", "0", 1);
                        g_expect = "vec=1 streaming";
                        compile_typed((dt_op)op, 6000, 6001, 0, 0, "sm_90", hdr, dts[t]);
                        unsetenv("DUALTIME_ROW_HEAD");
                        g_expect = "PLANTED-FAULT";
                        setenv("DUALTIME_PLANT_ACC_F16", "1", 1);
                        compile_typed((dt_op)op, 17, 260, 0, 0, "sm_90", hdr, dts[t]);
                        unsetenv("DUALTIME_PLANT_ACC_F16");
                    }
                    if (ew) {
                        g_expect = "vec=8 contiguous flat-tail";
                        compile_typed((dt_op)op, 6000, 6001, 0, 0, "sm_90", hdr, dts[t]);
                        compile_typed((dt_op)op, 1, 7, 0, 0, "sm_90", hdr, dts[t]); /* tail only */
                        g_expect = "vec=2 strided pairs-shifted"; /* a view, N even */
                        compile_typed((dt_op)op, 17, 260, 0, 1, "sm_90", hdr, dts[t]);
                        setenv("DUALTIME_ELEM_FLAT", "0", 1);
                        g_expect = "vec=1 contiguous";
                        compile_typed((dt_op)op, 17, 260, 0, 0, "sm_90", hdr, dts[t]);
                        unsetenv("DUALTIME_ELEM_FLAT");
                    }
                }
                g_expect = NULL;
            }
    /* FP32 views: vec 1 with the guarded loads (every item's loads in one block measured
     * slower there, session 17); the knob forces them */
    for (int op = DT_OP_ADD; op <= DT_OP_GELU_ADD; op++) { /* add, gelu_add */
        g_expect = "loads-unbranched";
        g_expect_absent = 1;
        compile_typed((dt_op)op, 128, 1024, 0, 1, "sm_90", hdr, DT_F32);
        compile_typed((dt_op)op, 127, 1023, 0, 1, "sm_90", hdr, DT_F32);
        g_expect_absent = 0;
        setenv("DUALTIME_ELEM_LDALL", "1", 1);
        compile_typed((dt_op)op, 127, 1023, 0, 1, "sm_90", hdr, DT_F32);
        unsetenv("DUALTIME_ELEM_LDALL");
        /* no shifted items by default; DUALTIME_ELEM_SHIFT=1 gives them (float4 items) */
        g_expect = "vec=1 strided";
        compile_typed((dt_op)op, 4096, 4096, 0, 1, "sm_90", hdr, DT_F32);
        setenv("DUALTIME_ELEM_SHIFT", "1", 1);
        g_expect = "vec=4 strided loads-shifted";
        compile_typed((dt_op)op, 4096, 4096, 0, 1, "sm_90", hdr, DT_F32);
        g_expect = "vec=4 contiguous"; /* aligned: never shifted */
        compile_typed((dt_op)op, 4096, 4096, 0, 0, "sm_90", hdr, DT_F32);
        CHECK(!has_opt(&g_last, "-DDT_SHIFT_A=1"), "f32 contiguous with DUALTIME_ELEM_SHIFT=1: %s", g_last.summary);
        unsetenv("DUALTIME_ELEM_SHIFT");
    }
    g_expect = NULL;
    compile_typed(DT_OP_SOFTMAX, 17, 257, 0, 1, "compute_90", hdr, DT_BF16);
    compile_typed(DT_OP_GEMM, 127, 193, 61, 0, "compute_90", hdr, DT_F16);
    /* the planted fp16-accumulation sum compiles and says what it is */
    setenv("DUALTIME_PLANT_ACC_F16", "1", 1);
    g_expect = "PLANTED-FAULT fp16-accumulation";
    compile_typed(DT_OP_SUM, 4, 16384, 0, 0, "sm_90", hdr, DT_F16);
    compile_typed(DT_OP_SUM, 4, 16384, 0, 1, "sm_90", hdr, DT_F16);
    g_expect = NULL;
    unsetenv("DUALTIME_PLANT_ACC_F16");
    /* refusals: FP32 gemm variants for bf16, tc1 for FP32, the plant for softmax */
    static const struct { const char *var, *val; dt_op op; dt_dtype dt; } bad[] = {
        {"DUALTIME_GEMM_VARIANT", "v2", DT_OP_GEMM, DT_BF16},
        {"DUALTIME_GEMM_VARIANT", "v1", DT_OP_GEMM, DT_F16},
        {"DUALTIME_GEMM_VARIANT", "tc1", DT_OP_GEMM, DT_F32},
        {"DUALTIME_GEMM_ASWZ", "2", DT_OP_GEMM, DT_F32},
        {"DUALTIME_ELEM_LDALL", "2", DT_OP_ADD, DT_BF16},
        {"DUALTIME_ROW_SHIFT", "2", DT_OP_SOFTMAX, DT_F32},
        {"DUALTIME_ELEM_SHIFT", "x", DT_OP_ADD, DT_BF16},
        {"DUALTIME_PLANT_ACC_F16", "1", DT_OP_SOFTMAX, DT_F16},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dt_case_layout L;
        dt_layout_make_typed(&L, bad[i].op, 128, 256, 64, 0, bad[i].dt);
        dt_cuda_plan p;
        dt_err err = {{0}};
        setenv(bad[i].var, bad[i].val, 1);
        dt_status st = dt_cuda_plan_make(&L, "sm_90", 132, &p, &err);
        unsetenv(bad[i].var);
        const int refused = st == DT_EINVAL && strstr(err.msg, bad[i].var);
        CHECK(refused, "%s=%s %s: status %d, message: %s", bad[i].var, bad[i].val,
              dt_dtype_name(bad[i].dt), (int)st, st == DT_OK ? "-" : err.msg);
        if (refused) printf("ok   %s=%s for %s refused: %s\n", bad[i].var, bad[i].val,
                            dt_dtype_name(bad[i].dt), err.msg);
    }
}

/* 1 when option o is in p's NVRTC options. */
/* The persistent double-buffered staged rows (DUALTIME_ROW_PIPE=1, SMEMPIPE): off by
 * default; with it every op but residual_layernorm takes two row parts a block (the
 * fewest cluster blocks whose two parts fit the budget, else the block limit), the grid
 * is the resident blocks (blocks an SM x 132, whole clusters; M where fewer), and the
 * plan names the cluster for the backend's residency fit; bad values refused. Also
 * layernorm's packed gamma/beta for narrow types (DT_LN_RAW, DUALTIME_ROW_LN_RAW). */
static void smem_pipe_cases(const char *hdr) {
    static const dt_op ops[] = {DT_OP_SOFTMAX, DT_OP_LAYERNORM, DT_OP_RMSNORM,
                                DT_OP_CROSS_ENTROPY};
    unsetenv("DUALTIME_ROW_PIPE");
    g_expect = "persistent";
    g_expect_absent = 1;
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    g_expect_absent = 0;
    CHECK(g_last.persistent_cluster == 0 && !has_opt(&g_last, "-DSMEMPIPE=1"), "default: %s",
          g_last.summary);
    setenv("DUALTIME_ROW_PIPE", "1", 1);
    static const struct { int64_t m, n; int views; dt_dtype dt; int cl; const char *expect; } sh[] = {
        {4096, 50257, 0, DT_F32, 4, "grid=264 block=512 vec=4 row-staged-in-smem cp.async single-read persistent double-buffered smem=100576 cluster=4 cols/block=12568 "},
        {4096, 50257, 0, DT_BF16, 2, "grid=264 block=512 vec=8 row-staged-in-smem cp.async single-read persistent double-buffered smem=100576 cluster=2 cols/block=25136 "},
        {2048, 128256, 0, DT_F32, 8, "grid=128 block=1024 vec=4 row-staged-in-smem cp.async single-read persistent double-buffered smem=128288 cluster=8 cols/block=16032 "},
        {2048, 128256, 0, DT_BF16, 8, "grid=392 block=256 vec=8 row-staged-in-smem cp.async single-read persistent double-buffered smem=64160 cluster=8 cols/block=16032 "},
        {2048, 128256, 1, DT_F16, 8, "grid=392 block=256 vec=8 row-staged-in-smem cp.async single-read persistent double-buffered smem=64160 cluster=8 "},
        {8191, 8193, 1, DT_F32, 1, "grid=396 block=256 vec=4 row-staged-in-smem cp.async single-read persistent double-buffered smem=65600"},
        {8191, 8193, 1, DT_BF16, 1, "grid=792 block=128 vec=8 row-staged-in-smem cp.async single-read persistent double-buffered smem=32832"},
        {8192, 8193, 0, DT_F32, 1, "vec=4 row-staged-in-smem cp.async single-read persistent double-buffered"},
        /* few rows: the grid is the rows (one cluster doubling, 1024 threads) */
        {3, 20000, 1, DT_BF16, 2, "grid=6 block=1024 vec=8 row-staged-in-smem cp.async single-read persistent double-buffered smem=40032 cluster=2 "},
        {8192, 8192, 0, DT_F32, 0, "vec=4 row-in-registers"}, /* aligned: unchanged */
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            g_expect = sh[i].expect;
            compile_typed(ops[o], sh[i].m, sh[i].n, 0, sh[i].views, "sm_90", hdr, sh[i].dt);
            const dt_cuda_plan *p = &g_last;
            const int piped = sh[i].cl > 0;
            CHECK(p->persistent_cluster == sh[i].cl && has_opt(p, "-DSMEMPIPE=1") == piped &&
                      (!piped || (p->grid[0] % (unsigned)sh[i].cl == 0 &&
                                  p->shared_bytes <= 227 * 1024)),
                  "%s %lldx%lld pipe: cluster %d (want %d), grid %u, smem %u", dt_op_get(ops[o])->name,
                  (long long)sh[i].m, (long long)sh[i].n, p->persistent_cluster, sh[i].cl,
                  p->grid[0], p->shared_bytes);
        }
    /* the budget covers both buffers: at 227 KiB 4096x50257 f32 is a cluster of 2, one
     * 1024-thread block an SM (the device.sh rows-pipe-kb227 A/B) */
    setenv("DUALTIME_ROW_SMEM_KB", "227", 1);
    g_expect = "grid=132 block=1024 vec=4 row-staged-in-smem cp.async single-read persistent double-buffered smem=201088 cluster=2 ";
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_SMEM_KB");
    /* with DUALTIME_ROW_SMEM=2, 8192^2 bf16 layernorm staged and pipelined (rows-pipe-ln-smem2) */
    setenv("DUALTIME_ROW_SMEM", "2", 1);
    g_expect = "grid=792 block=128 vec=8 row-staged-in-smem cp.async single-read persistent double-buffered smem=32800";
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    unsetenv("DUALTIME_ROW_SMEM");
    /* residual_layernorm keeps one row a block (its a and b fill both buffers) */
    g_expect = "persistent";
    g_expect_absent = 1;
    compile_typed(DT_OP_RESIDUAL_LAYERNORM, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    compile_typed(DT_OP_RESIDUAL_LAYERNORM, 8191, 8193, 0, 1, "sm_90", hdr, DT_BF16);
    g_expect_absent = 0;
    /* =0 is the staged geometry of one row a block, as unset */
    setenv("DUALTIME_ROW_PIPE", "0", 1);
    g_expect = "grid=4096 block=512 vec=8 row-staged-in-smem cp.async single-read smem=100544";
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_BF16);
    unsetenv("DUALTIME_ROW_PIPE");
    /* layernorm bf16/f16: packed gamma/beta only with DUALTIME_ROW_LN_RAW=1 (opt-in: it
     * measured slower on the H200); f32 never */
    g_expect = "row-in-registers";
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    CHECK(!has_opt(&g_last, "-DDT_LN_RAW=1"), "layernorm bf16 by default: -DDT_LN_RAW=1");
    setenv("DUALTIME_ROW_LN_RAW", "1", 1);
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    CHECK(has_opt(&g_last, "-DDT_LN_RAW=1"), "DUALTIME_ROW_LN_RAW=1 bf16: no -DDT_LN_RAW=1");
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F16);
    CHECK(has_opt(&g_last, "-DDT_LN_RAW=1"), "DUALTIME_ROW_LN_RAW=1 f16: no -DDT_LN_RAW=1");
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(!has_opt(&g_last, "-DDT_LN_RAW=1"), "layernorm f32: -DDT_LN_RAW=1");
    unsetenv("DUALTIME_ROW_LN_RAW");
    g_expect = NULL;
    static const struct { const char *var, *val; } bad[] = {
        {"DUALTIME_ROW_PIPE", "2"}, {"DUALTIME_ROW_PIPE", "x"}, {"DUALTIME_ROW_LN_RAW", "3"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dt_case_layout L;
        dt_layout_make_typed(&L, DT_OP_LAYERNORM, 4096, 50257, 0, 0, DT_BF16);
        dt_cuda_plan p;
        dt_err err = {{0}};
        setenv(bad[i].var, bad[i].val, 1);
        const dt_status st = dt_cuda_plan_make(&L, "sm_90", 132, &p, &err);
        unsetenv(bad[i].var);
        CHECK(st == DT_EINVAL && strstr(err.msg, bad[i].var), "%s=%s: status %d", bad[i].var,
              bad[i].val, (int)st);
    }
}

/* The plan of op at m x n (f32, contiguous) with var=val must fail with DT_EINVAL
 * naming var. */
static void check_refused(dt_op op, int64_t m, int64_t n, const char *var, const char *val) {
    dt_case_layout L;
    dt_layout_make(&L, op, m, n, 0, 0);
    dt_cuda_plan p;
    dt_err err = {{0}};
    setenv(var, val, 1);
    dt_status st = dt_cuda_plan_make(&L, "sm_90", 132, &p, &err);
    unsetenv(var);
    const int refused = st == DT_EINVAL && strstr(err.msg, var);
    CHECK(refused, "%s=%s: status %d, message: %s", var, val, (int)st, st == DT_OK ? "-" : err.msg);
    if (refused) printf("ok   %s=%s refused: %s\n", var, val, err.msg);
}

/* check_refused for each of the NULL-terminated values vals of var. */
static void check_refused_each(dt_op op, int64_t m, int64_t n, const char *var,
                               const char *const *vals) {
    for (; *vals; vals++) check_refused(op, m, n, var, *vals);
}

/* layernorm's one-reduction in-register rows (DUALTIME_ROW_LN_ONE=1 or 2, DT_LN_ONE): off
 * by default; with it every in-register layernorm (warp- and block-per-row, the register
 * cluster, views, odd N) compiles in f32, bf16 and f16 with -DDT_LN_ONE=1 and
 * "one-reduction" in its summary, and nothing else gets it (staged and multi-pass rows,
 * the other row ops); the blocks an SM its registers must allow (DT_LN_MINB): 8192^2
 * (512 threads) 3 at =1 (40 registers), 4 at =2 (32), 4096 columns (256 threads) 6 / 8,
 * none where a thread holds more than 16 elements; DUALTIME_ROW_LN_REGS sets that target
 * for either kernel (the two-reduction one included); bad values are refused. */
static void ln_one_cases(const char *hdr) {
    static const struct { int64_t m, n; int views; int inreg; /* -1: as the plan says */ } sh[] = {
        {8192, 8192, 0, 1}, {4096, 8192, 0, 1}, {1024, 4096, 0, 1}, {1024, 4096, 1, -1},
        {1, 127, 0, 1},     {17, 257, 1, 1},    {128, 1024, 0, 1},  {4, 16384, 0, 1},
        {1, 65536, 0, 1},   {5, 40000, 0, -1},  {4096, 50257, 0, 0}, {8191, 8193, 1, 0}};
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    g_expect = "one-reduction";
    g_expect_absent = 1;
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16); /* default: off */
    CHECK(!has_opt(&g_last, "-DDT_LN_ONE=1"), "layernorm by default: -DDT_LN_ONE=1");
    g_expect = NULL;
    g_expect_absent = 0;
    setenv("DUALTIME_ROW_LN_ONE", "1", 1);
    for (size_t t = 0; t < 3; t++)
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            compile_typed(DT_OP_LAYERNORM, sh[i].m, sh[i].n, 0, sh[i].views, "sm_90", hdr, dts[t]);
            const int inreg = strstr(g_last.summary, "row-in-registers") != NULL;
            const int one = has_opt(&g_last, "-DDT_LN_ONE=1");
            CHECK(one == inreg && (sh[i].inreg < 0 || inreg == sh[i].inreg) &&
                      (strstr(g_last.summary, " one-reduction") != NULL) == one,
                  "layernorm %lldx%lld views=%d %s ln-one: opt %d, in registers %d (want %d): %s",
                  (long long)sh[i].m, (long long)sh[i].n, sh[i].views, dt_dtype_name(dts[t]), one,
                  inreg, sh[i].inreg, g_last.summary);
        }
    /* the other ops are unchanged by the knob */
    compile_typed(DT_OP_RESIDUAL_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    CHECK(!has_opt(&g_last, "-DDT_LN_ONE=1"), "residual_layernorm: -DDT_LN_ONE=1");
    compile_typed(DT_OP_RMSNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(!has_opt(&g_last, "-DDT_LN_ONE=1"), "rmsnorm: -DDT_LN_ONE=1");
    static const struct { const char *val; int64_t m, n; dt_dtype dt; const char *expect; } mb[] = {
        {"1", 8192, 8192, DT_BF16, "block=512 vec=8 row-in-registers single-pass one-reduction minblocks=3"},
        {"1", 8192, 8192, DT_F32, "block=512 vec=4 row-in-registers single-pass one-reduction minblocks=3"},
        {"2", 8192, 8192, DT_F16, "block=512 vec=8 row-in-registers single-pass one-reduction minblocks=4"},
        {"1", 1024, 4096, DT_F32, "block=256 vec=4 row-in-registers single-pass one-reduction minblocks=6"},
        {"2", 1024, 4096, DT_BF16, "block=256 vec=8 row-in-registers single-pass one-reduction minblocks=8"},
        {"2", 8192, 1024, DT_F32, "warp-per-row grid=1024 block=256 vec=4 row-in-registers single-pass one-reduction"}, /* 32 a thread */
    };
    for (size_t i = 0; i < sizeof mb / sizeof mb[0]; i++) {
        setenv("DUALTIME_ROW_LN_ONE", mb[i].val, 1);
        g_expect = mb[i].expect;
        compile_typed(DT_OP_LAYERNORM, mb[i].m, mb[i].n, 0, 0, "sm_90", hdr, mb[i].dt);
        g_expect = NULL;
        const int want = strstr(mb[i].expect, "minblocks=") != NULL;
        CHECK(want == (strstr(g_last.summary, "minblocks=") != NULL), "ln-one %lldx%lld: %s",
              (long long)mb[i].m, (long long)mb[i].n, g_last.summary);
    }
    unsetenv("DUALTIME_ROW_LN_ONE");
    /* DUALTIME_ROW_LN_REGS: the two-reduction kernel at 32 registers (4 blocks of 512), the
     * variant at 32 through =1, nothing for the staged rows */
    setenv("DUALTIME_ROW_LN_REGS", "32", 1);
    g_expect = "block=512 vec=8 row-in-registers single-pass minblocks=4";
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    CHECK(!has_opt(&g_last, "-DDT_LN_ONE=1") && has_opt(&g_last, "-DDT_LN_MINB=4"),
          "DUALTIME_ROW_LN_REGS=32 bf16: %s", g_last.summary);
    g_expect = "block=512 vec=4 row-in-registers single-pass minblocks=4";
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    setenv("DUALTIME_ROW_LN_ONE", "1", 1);
    g_expect = "one-reduction minblocks=4";
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F16);
    unsetenv("DUALTIME_ROW_LN_ONE");
    g_expect = "minblocks=";
    g_expect_absent = 1;
    compile_typed(DT_OP_LAYERNORM, 4096, 50257, 0, 0, "sm_90", hdr, DT_BF16); /* staged */
    compile_typed(DT_OP_RMSNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    g_expect_absent = 0;
    g_expect = NULL;
    unsetenv("DUALTIME_ROW_LN_REGS");
    check_refused_each(DT_OP_LAYERNORM, 8192, 8192, "DUALTIME_ROW_LN_REGS",
                       (const char *const[]){"129", "x", NULL});
    check_refused_each(DT_OP_LAYERNORM, 8192, 8192, "DUALTIME_ROW_LN_ONE",
                       (const char *const[]){"3", "yes", NULL});
}

/* layernorm's persistent prefetching in-register rows (DUALTIME_ROW_LN_PERSIST=1 or 2,
 * DT_LN_PERSIST): by default on for bf16/f16 (32 elements a thread), off for f32; with it the in-register block-per-row layernorm (no
 * cluster split, not DT_LN_ONE) compiles in f32, bf16 and f16 with -DDT_LN_PERSIST=<val>,
 * "persist=<val>" in its summary and a grid of min(M, 132 * max(1, 2048 / BLOCK)) blocks
 * (persistent_blocks set), and nothing else gets it (warp-per-row, register clusters,
 * staged rows, DUALTIME_ROW_LN_ONE, the other ops); registers a thread (the cubin's) are
 * printed beside the default kernel's; bad values are refused. */
static void ln_persist_cases(const char *hdr) {
    static const struct { int64_t m, n; int views; int64_t grid; /* 0: not persistent */ } sh[] = {
        {8192, 8192, 0, 528}, {4096, 8192, 0, 528}, {16384, 4096, 0, 1056}, {1024, 4096, 0, 1024},
        {17, 257, 1, 17},     {1, 4096, 0, 1},      {8192, 1024, 0, 0},      {1, 65536, 0, 0},
        {5, 40000, 0, 0},     {4096, 50257, 0, 0},  {8191, 8193, 1, 0}};
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    static const char *const vals[] = {"1", "2"};
    /* DUALTIME_ROW_LN_PERSIST=0: off in every dtype (the version before); the registers
     * to compare with */
    setenv("DUALTIME_ROW_LN_PERSIST", "0", 1);
    g_expect = " persist=";
    g_expect_absent = 1;
    for (size_t t = 0; t < 3; t++) {
        compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, dts[t]);
        CHECK(!has_opt(&g_last, "-DDT_LN_PERSIST=1") && !g_last.persistent_blocks && g_last.grid[0] == 8192 &&
                  g_last.block[0] == 512,
              "layernorm DUALTIME_ROW_LN_PERSIST=0: persistent: %s", g_last.summary);
        CHECK(g_regs > 0, "layernorm 8192x8192 %s: no register count in the cubin", dt_dtype_name(dts[t]));
        printf("ok   ln-persist=0 layernorm 8192x8192 %s: %d registers, %d frame bytes\n",
               dt_dtype_name(dts[t]), g_regs, g_frame);
    }
    unsetenv("DUALTIME_ROW_LN_PERSIST");
    /* the default (session 8): f32 off; bf16/f16 persistent with 32 elements a thread
     * (256 threads at 8192 and 4096 wide: grid min(M, 132 * 8)) where the rows are aligned
     * in-register blocks of 1025..32768, else as before (16, not persistent) */
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    g_expect_absent = 0;
    g_expect = NULL;
    static const struct { int64_t m, n; int views; int64_t grid, block; } nd[] = {
        {8192, 8192, 0, 1056, 256}, {16384, 4096, 0, 2112, 128}, {1024, 4096, 0, 1024, 128},
        {8, 32768, 0, 8, 1024},     {8192, 1024, 0, 0, 0},       {17, 257, 0, 0, 0},
        {4096, 50257, 0, 0, 0},     {8191, 8193, 1, 0, 0},       {8, 40000, 0, 0, 0}};
    for (size_t t = 1; t < 3; t++)
        for (size_t i = 0; i < sizeof nd / sizeof nd[0]; i++) {
            compile_typed(DT_OP_LAYERNORM, nd[i].m, nd[i].n, 0, nd[i].views, "sm_90", hdr, dts[t]);
            const int on = has_opt(&g_last, "-DDT_LN_PERSIST=1");
            CHECK(on == (nd[i].grid > 0) && (strstr(g_last.summary, " persist=1") != NULL) == on &&
                      (!on || (g_last.grid[0] == nd[i].grid && g_last.block[0] == nd[i].block)),
                  "layernorm %lldx%lld %s by default: persistent %d (want %d), grid %u block %u: %s",
                  (long long)nd[i].m, (long long)nd[i].n, dt_dtype_name(dts[t]), on, nd[i].grid > 0,
                  g_last.grid[0], g_last.block[0], g_last.summary);
        }
    g_expect = NULL;
    for (size_t v = 0; v < 2; v++) {
        setenv("DUALTIME_ROW_LN_PERSIST", vals[v], 1);
        char opt[32], sum[32];
        snprintf(opt, sizeof opt, "-DDT_LN_PERSIST=%s", vals[v]);
        snprintf(sum, sizeof sum, " persist=%s", vals[v]);
        for (size_t t = 0; t < 3; t++)
            for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
                compile_typed(DT_OP_LAYERNORM, sh[i].m, sh[i].n, 0, sh[i].views, "sm_90", hdr, dts[t]);
                const int on = has_opt(&g_last, opt);
                CHECK(on == (sh[i].grid > 0) && (strstr(g_last.summary, sum) != NULL) == on &&
                          g_last.persistent_blocks == on && (!on || g_last.grid[0] == sh[i].grid),
                      "layernorm %lldx%lld views=%d %s ln-persist=%s: opt %d (want %d), grid %u "
                      "(want %lld): %s", (long long)sh[i].m, (long long)sh[i].n, sh[i].views,
                      dt_dtype_name(dts[t]), vals[v], on, sh[i].grid > 0, g_last.grid[0],
                      (long long)sh[i].grid, g_last.summary);
                if (on)
                    printf("ok   ln-persist=%s layernorm %lldx%lld %s: %d registers, %d frame bytes\n",
                           vals[v], (long long)sh[i].m, (long long)sh[i].n, dt_dtype_name(dts[t]),
                           g_regs, g_frame);
            }
        /* not with the one-reduction kernel, not for the other ops */
        setenv("DUALTIME_ROW_LN_ONE", "1", 1);
        compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
        CHECK(!has_opt(&g_last, opt) && has_opt(&g_last, "-DDT_LN_ONE=1"), "ln-persist with ln-one: %s",
              g_last.summary);
        unsetenv("DUALTIME_ROW_LN_ONE");
        compile_typed(DT_OP_RESIDUAL_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
        CHECK(!has_opt(&g_last, opt), "residual_layernorm: %s", opt);
        compile_typed(DT_OP_RMSNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
        CHECK(!has_opt(&g_last, opt), "rmsnorm: %s", opt);
    }
    unsetenv("DUALTIME_ROW_LN_PERSIST");
    check_refused_each(DT_OP_LAYERNORM, 8192, 8192, "DUALTIME_ROW_LN_PERSIST",
                       (const char *const[]){"3", "-1", "on", NULL});
}

/* cross_entropy's streaming online logsumexp (CESTREAM): by default where the staged row
 * would be and a block streams >= 8 chunks a thread; DUALTIME_CE_STREAM=0 never, =1
 * wherever the staged row would be: there cross_entropy takes one block a row (512 threads, fewer for short
 * rows), 16-byte chunks (vec 4 f32, 8 bf16/f16) whatever the alignment, no dynamic shared
 * memory, no cluster, wherever the staged row would be (vocabulary rows, unaligned
 * views, DUALTIME_ROW_PIPE ignored; with DUALTIME_ROW_SMEM=2 every row > 1024); rows the
 * staged row never takes (few long rows in the register cluster, N <= 1024, aligned
 * in-register rows, DUALTIME_ROW_SMEM=0) and the other ops are unchanged; =2 and words
 * are refused. */
static void ce_stream_cases(const char *hdr) {
    /* unset (the default, session 9): streamed where a 512-thread block streams >= 8
     * 16-byte chunks a thread (N >= 4096 x VEC: 16384 f32, 32768 bf16/f16) */
    unsetenv("DUALTIME_CE_STREAM");
    static const struct { int64_t m, n; int views; dt_dtype dt; int stream; } def[] = {
        {4096, 50257, 0, DT_F32, 1},  {4096, 50257, 0, DT_BF16, 1}, {2048, 128256, 1, DT_F16, 1},
        {3, 20000, 1, DT_F32, 1},     {3, 20000, 1, DT_BF16, 0},    {8191, 8193, 1, DT_F32, 0},
        {8192, 8193, 0, DT_BF16, 0},  {300, 16384, 0, DT_F32, 0}, /* aligned: registers */
        {300, 16385, 0, DT_F32, 1},   {300, 16383, 0, DT_F32, 0}};
    for (size_t i = 0; i < sizeof def / sizeof def[0]; i++) {
        g_expect = "ce-stream";
        g_expect_absent = !def[i].stream;
        compile_typed(DT_OP_CROSS_ENTROPY, def[i].m, def[i].n, 0, def[i].views, "sm_90", hdr,
                      def[i].dt);
    }
    g_expect = "ce-stream";
    g_expect_absent = 1;
    setenv("DUALTIME_CE_STREAM", "0", 1);
    compile_typed(DT_OP_CROSS_ENTROPY, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    compile_typed(DT_OP_CROSS_ENTROPY, 4096, 50257, 0, 0, "sm_90", hdr, DT_BF16);
    CHECK(has_opt(&g_last, "-DSMEMROW=1") && !has_opt(&g_last, "-DCESTREAM=1"),
          "DUALTIME_CE_STREAM=0: %s", g_last.summary);
    setenv("DUALTIME_CE_STREAM", "1", 1);
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32); /* other ops */
    g_expect_absent = 0;
    static const struct { int64_t m, n; int views; int stream; const char *expect; } sh[] = {
        {4096, 50257, 0, 1, "grid=4096 block=512 vec=%d ce-stream single-read online-logsumexp"},
        {2048, 128256, 0, 1, "grid=2048 block=512 vec=%d ce-stream single-read online-logsumexp"},
        {2048, 128256, 1, 1, "grid=2048 block=512 vec=%d ce-stream"},
        {8191, 8193, 1, 1, "grid=8191 block=512 vec=%d ce-stream"},
        {8192, 8193, 0, 1, "grid=8192 block=512 vec=%d ce-stream"},
        {5, 1025, 1, 1, "grid=5 block=%s vec=%d ce-stream"}, /* short: bf16 256 threads */
        {3, 20000, 1, 1, "grid=3 block=512 vec=%d ce-stream"},
        {1, 65536, 0, 0, "row-in-registers single-pass cluster=8 "}, /* few: registers */
        {8192, 8192, 0, 0, "row-in-registers"},                    /* aligned: registers */
        {17, 257, 0, 0, "row-in-registers"},                       /* N <= 1024 */
        {17, 257, 1, 0, "row-in-registers"},
    };
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    for (int pipe = 0; pipe < 2; pipe++) {
        if (pipe) setenv("DUALTIME_ROW_PIPE", "1", 1); /* the stream keeps one row a block */
        for (size_t t = 0; t < 3; t++)
            for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
                if (pipe && !sh[i].stream) continue;
                char want[160];
                if (strstr(sh[i].expect, "block=%s")) /* 1025: 258 f32 chunks, 130 bf16 */
                    snprintf(want, sizeof want, sh[i].expect, dts[t] == DT_F32 ? "512" : "256",
                             dts[t] == DT_F32 ? 4 : 8);
                else
                    snprintf(want, sizeof want, sh[i].expect, dts[t] == DT_F32 ? 4 : 8);
                g_expect = want;
                compile_typed(DT_OP_CROSS_ENTROPY, sh[i].m, sh[i].n, 0, sh[i].views, "sm_90", hdr,
                              dts[t]);
                const dt_cuda_plan *p = &g_last;
                const int streamed = has_opt(p, "-DCESTREAM=1");
                CHECK(streamed == sh[i].stream &&
                          (!streamed ||
                           (p->shared_bytes == 0 && p->persistent_cluster == 0 &&
                            !has_opt(p, "-DSMEMROW=1") && !has_opt(p, "-DSMEMPIPE=1") &&
                            !strstr(p->summary, "cluster=") && !strstr(p->summary, "smem=") &&
                            p->grid[0] == (unsigned)sh[i].m && has_opt(p, "-DINREG=0"))),
                      "ce-stream %lldx%lld views=%d %s pipe=%d: stream %d (want %d), smem %u: %s",
                      (long long)sh[i].m, (long long)sh[i].n, sh[i].views,
                      dt_dtype_name(dts[t]), pipe, streamed, sh[i].stream, p->shared_bytes,
                      p->summary);
            }
        unsetenv("DUALTIME_ROW_PIPE");
    }
    /* DUALTIME_ROW_SMEM=2 stages every row > 1024: the stream takes them, also where the
     * in-register cluster split had been planned (its options dropped) */
    setenv("DUALTIME_ROW_SMEM", "2", 1);
    g_expect = "grid=1 block=512 vec=4 ce-stream";
    compile_typed(DT_OP_CROSS_ENTROPY, 1, 65536, 0, 0, "sm_90", hdr, DT_F32);
    for (int i = 0; i < g_last.nopts; i++)
        CHECK(strncmp(g_last.opts[i], "-DCLUSTER=", 10) && strncmp(g_last.opts[i], "-DNC=", 5),
              "ce-stream 1x65536 SMEM=2: option %s", g_last.opts[i]);
    g_expect = "grid=8192 block=512 vec=8 ce-stream";
    compile_typed(DT_OP_CROSS_ENTROPY, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    /* DUALTIME_ROW_SMEM=0 (no staged row): no stream either */
    setenv("DUALTIME_ROW_SMEM", "0", 1);
    g_expect = "multi-pass";
    compile_typed(DT_OP_CROSS_ENTROPY, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_SMEM");
    unsetenv("DUALTIME_CE_STREAM");
    g_expect = NULL;
    check_refused_each(DT_OP_CROSS_ENTROPY, 4096, 50257, "DUALTIME_CE_STREAM",
                       (const char *const[]){"2", "-1", "yes", "1x", NULL});
}

/* The staged rmsnorm / layernorm store pass with its parameter loads issued ahead
 * (DUALTIME_ROW_STORE_AHEAD, DT_STORE_AHEAD, session 12): the default 4 wherever those ops
 * take the staged row (vocabulary rows in f32, bf16 and f16, a view, an odd width, the
 * pipelined variant), said in the summary and the options; =1 (the version before)
 * and =8 compile; no other op or path gets it (softmax staged, the in-register 8192^2,
 * the two-pass ROWL2); 0, 9 and junk are refused naming the knob. */
static void store_ahead_cases(const char *hdr) {
    static const struct { dt_op op; int64_t m, n; int views; } sh[] = {
        {DT_OP_RMSNORM, 2048, 128256, 0}, {DT_OP_LAYERNORM, 2048, 128256, 0},
        {DT_OP_RMSNORM, 4096, 50257, 0},  {DT_OP_LAYERNORM, 8191, 8193, 1},
        {DT_OP_RMSNORM, 256, 151936, 0},
    };
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    static const char *vals[] = {NULL, "1", "8"};
    for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
        char want[32], opt[32];
        snprintf(want, sizeof want, " store-ahead=%s", vals[v] ? vals[v] : "4");
        snprintf(opt, sizeof opt, "-DDT_STORE_AHEAD=%s", vals[v] ? vals[v] : "4");
        if (vals[v])
            setenv("DUALTIME_ROW_STORE_AHEAD", vals[v], 1);
        else
            unsetenv("DUALTIME_ROW_STORE_AHEAD");
        g_expect = want;
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
            for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
                compile_typed(sh[i].op, sh[i].m, sh[i].n, 0, sh[i].views, "sm_90", hdr, dts[t]);
                CHECK(has_opt(&g_last, opt) && has_opt(&g_last, "-DSMEMROW=1"),
                      "store-ahead %s: %s", opt, g_last.summary);
            }
    }
    unsetenv("DUALTIME_ROW_STORE_AHEAD");
    setenv("DUALTIME_ROW_PIPE", "1", 1);
    g_expect = " store-ahead=4";
    compile_typed(DT_OP_LAYERNORM, 2048, 128256, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(has_opt(&g_last, "-DSMEMPIPE=1"), "pipelined: %s", g_last.summary);
    unsetenv("DUALTIME_ROW_PIPE");
    g_expect = "store-ahead";
    g_expect_absent = 1;
    compile_typed(DT_OP_SOFTMAX, 2048, 128256, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(has_opt(&g_last, "-DSMEMROW=1"), "softmax staged: %s", g_last.summary);
    compile_typed(DT_OP_RMSNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    setenv("DUALTIME_ROW_L2", "1", 1);
    compile_typed(DT_OP_RMSNORM, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(has_opt(&g_last, "-DROWL2=1"), "ROWL2: %s", g_last.summary);
    unsetenv("DUALTIME_ROW_L2");
    g_expect = NULL;
    g_expect_absent = 0;
    static const char *const badv[] = {"0", "9", "4x", NULL};
    check_refused_each(DT_OP_RMSNORM, 2048, 128256, "DUALTIME_ROW_STORE_AHEAD", badv);
}

/* L2 eviction hints (DUALTIME_ROW_HINT, DT_HINT, session 13). Unset: the staged rows of
 * the ops with parameter vectors (rmsnorm, layernorm, residual_layernorm; vocabulary rows,
 * a view, an odd width; f32, bf16, f16) compile with -DDT_HINT=2 and " l2-hints=params",
 * softmax's and cross_entropy's with none. =1: every staged row, the pipelined rows, the
 * two-read rows (ROWL2) and cross_entropy's stream with -DDT_HINT=1 and " l2-hints" (so
 * createpolicy, ld.global.nc / st.global with .L2::cache_hint and cp.async with
 * .L2::cache_hint assemble for sm_90); =2 every staged row (a no-op without parameters);
 * =0 none. The in-register rows and the elementwise ops never get it; 3, -1 and junk are
 * refused naming the knob. */
static void row_hint_cases(const char *hdr) {
    static const struct { dt_op op; int64_t m, n; int views; const char *path; int params; } sh[] = {
        {DT_OP_SOFTMAX, 2048, 128256, 0, "-DSMEMROW=1", 0},
        {DT_OP_RMSNORM, 4096, 50257, 0, "-DSMEMROW=1", 1},
        {DT_OP_LAYERNORM, 8191, 8193, 1, "-DSMEMROW=1", 1},
        {DT_OP_LAYERNORM, 256, 151936, 0, "-DSMEMROW=1", 1},
        {DT_OP_RESIDUAL_LAYERNORM, 4096, 50257, 0, "-DSMEMROW=1", 1},
        {DT_OP_CROSS_ENTROPY, 2048, 128256, 0, "-DCESTREAM=1", 0},
    };
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    static const char *vals[] = {NULL, "1", "2", "0"};
    for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
        if (vals[v])
            setenv("DUALTIME_ROW_HINT", vals[v], 1);
        else
            unsetenv("DUALTIME_ROW_HINT");
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
            for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
                /* the level this case must get: 0 none */
                const int want = !vals[v] ? (sh[i].params ? 2 : 0)
                                 : sh[i].path[3] == 'C' && vals[v][0] == '2' ? 2 /* the stream: as asked */
                                                                            : atoi(vals[v]);
                char opt[24];
                snprintf(opt, sizeof opt, "-DDT_HINT=%d", want);
                g_expect = want == 1 ? " l2-hints" : want == 2 ? " l2-hints=params" : "l2-hints";
                g_expect_absent = want == 0;
                compile_typed(sh[i].op, sh[i].m, sh[i].n, 0, sh[i].views, "sm_90", hdr, dts[t]);
                CHECK(has_opt(&g_last, sh[i].path) &&
                          (want ? has_opt(&g_last, opt)
                                : !has_opt(&g_last, "-DDT_HINT=1") && !has_opt(&g_last, "-DDT_HINT=2")),
                      "DUALTIME_ROW_HINT=%s: want %s: %s", vals[v] ? vals[v] : "(unset)",
                      want ? opt : "none", g_last.summary);
            }
    }
    g_expect_absent = 0;
    setenv("DUALTIME_ROW_HINT", "1", 1);
    g_expect = " l2-hints";
    setenv("DUALTIME_ROW_PIPE", "1", 1);
    compile_typed(DT_OP_LAYERNORM, 2048, 128256, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(has_opt(&g_last, "-DSMEMPIPE=1") && has_opt(&g_last, "-DDT_HINT=1"), "pipelined: %s",
          g_last.summary);
    unsetenv("DUALTIME_ROW_PIPE");
    setenv("DUALTIME_ROW_L2", "1", 1);
    setenv("DUALTIME_ROW_L2_MB", "256", 1);
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (int o = 0; o < 3; o++) {
            static const dt_op l2ops[] = {DT_OP_SOFTMAX, DT_OP_RMSNORM, DT_OP_LAYERNORM};
            compile_typed(l2ops[o], 2048, 128256, 0, 0, "sm_90", hdr, dts[t]);
            CHECK(has_opt(&g_last, "-DROWL2=1") && has_opt(&g_last, "-DDT_HINT=1"), "ROWL2: %s",
                  g_last.summary);
        }
    unsetenv("DUALTIME_ROW_L2");
    unsetenv("DUALTIME_ROW_L2_MB");
    /* never the in-register rows or the elementwise ops, whatever the knob */
    g_expect = "l2-hints";
    g_expect_absent = 1;
    compile_typed(DT_OP_RMSNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(!has_opt(&g_last, "-DDT_HINT=1"), "rmsnorm 8192^2 in registers: -DDT_HINT=1");
    compile_typed(DT_OP_ADD, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    CHECK(!has_opt(&g_last, "-DDT_HINT=1"), "add: -DDT_HINT=1");
    unsetenv("DUALTIME_ROW_HINT");
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(!has_opt(&g_last, "-DDT_HINT=2"), "layernorm 8192^2 in registers: -DDT_HINT=2");
    g_expect = NULL;
    g_expect_absent = 0;
    static const char *const badv[] = {"3", "-1", "yes", NULL};
    check_refused_each(DT_OP_SOFTMAX, 2048, 128256, "DUALTIME_ROW_HINT", badv);
}

/* softmax's online staged rows (DUALTIME_ROW_SM_ONLINE, DT_SM_ONLINE, session 13; the
 * default for bf16 / f16 since session 14): off for f32 by default and for all at 0; with
 * =1 every staged softmax row (vocabulary rows over a cluster, one block, a view, an odd width; f32, bf16, f16) and the pipelined one compile with
 * -DDT_SM_ONLINE=1 and " online-lse" in the summary; the in-register softmax, the other
 * staged ops and cross_entropy's stream never get it; 2 and junk are refused. */
/* every staged softmax shape in dtypes dts[t0..]: compiled online (-DDT_SM_ONLINE=1) */
static void sm_online_all(const char *hdr, size_t t0, const char *what) {
    static const struct { int64_t m, n; int views; } sh[] = {
        {2048, 128256, 0}, {4096, 50257, 0}, {8191, 8193, 1}, {256, 151936, 0}};
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    g_expect = " online-lse";
    g_expect_absent = 0;
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++)
        for (size_t t = t0; t < sizeof dts / sizeof dts[0]; t++) {
            compile_typed(DT_OP_SOFTMAX, sh[i].m, sh[i].n, 0, sh[i].views, "sm_90", hdr, dts[t]);
            CHECK(has_opt(&g_last, "-DDT_SM_ONLINE=1") && has_opt(&g_last, "-DSMEMROW=1"),
                  "%s: %s", what, g_last.summary);
        }
}
static void sm_online_cases(const char *hdr) {
    unsetenv("DUALTIME_ROW_SM_ONLINE");
    g_expect = "online-lse";
    g_expect_absent = 1;
    compile_typed(DT_OP_SOFTMAX, 2048, 128256, 0, 0, "sm_90", hdr, DT_F32); /* default: f32 off */
    CHECK(!has_opt(&g_last, "-DDT_SM_ONLINE=1"), "softmax f32 by default: %s", g_last.summary);
    setenv("DUALTIME_ROW_SM_ONLINE", "0", 1); /* =0: bf16 / f16 off too */
    compile_typed(DT_OP_SOFTMAX, 2048, 128256, 0, 0, "sm_90", hdr, DT_BF16);
    CHECK(!has_opt(&g_last, "-DDT_SM_ONLINE=1"), "softmax bf16 at 0: %s", g_last.summary);
    compile_typed(DT_OP_SOFTMAX, 8191, 8193, 0, 1, "sm_90", hdr, DT_F16);
    CHECK(!has_opt(&g_last, "-DDT_SM_ONLINE=1"), "softmax f16 view at 0: %s", g_last.summary);
    unsetenv("DUALTIME_ROW_SM_ONLINE");
    sm_online_all(hdr, 1, "bf16 / f16 online by default");
    g_expect = "online-lse";
    g_expect_absent = 1;
    compile_typed(DT_OP_SOFTMAX, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16); /* in registers */
    CHECK(!has_opt(&g_last, "-DDT_SM_ONLINE=1"), "softmax bf16 8192^2 by default: %s", g_last.summary);
    setenv("DUALTIME_ROW_SM_ONLINE", "1", 1);
    compile_typed(DT_OP_SOFTMAX, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32); /* in registers */
    CHECK(!has_opt(&g_last, "-DDT_SM_ONLINE=1"), "softmax 8192^2: %s", g_last.summary);
    compile_typed(DT_OP_RMSNORM, 2048, 128256, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(!has_opt(&g_last, "-DDT_SM_ONLINE=1"), "rmsnorm: %s", g_last.summary);
    compile_typed(DT_OP_CROSS_ENTROPY, 2048, 128256, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(!has_opt(&g_last, "-DDT_SM_ONLINE=1"), "cross_entropy: %s", g_last.summary);
    sm_online_all(hdr, 0, "online at 1");
    setenv("DUALTIME_ROW_PIPE", "1", 1);
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(has_opt(&g_last, "-DSMEMPIPE=1") && has_opt(&g_last, "-DDT_SM_ONLINE=1"), "pipelined: %s",
          g_last.summary);
    unsetenv("DUALTIME_ROW_PIPE");
    unsetenv("DUALTIME_ROW_SM_ONLINE");
    g_expect = NULL;
    static const char *const badv[] = {"2", "on", NULL};
    check_refused_each(DT_OP_SOFTMAX, 2048, 128256, "DUALTIME_ROW_SM_ONLINE", badv);
}

/* The L2-resident two-pass row (DUALTIME_ROW_L2=1, ROWL2) of softmax, rmsnorm and
 * layernorm: off by default (the staged row); with it, wherever the staged row would be
 * taken and SMs x blocks an SM x the row's chunk bytes fit the L2 budget (32 MB, or
 * DUALTIME_ROW_L2_MB), one block a row (128..1024 threads, 4 chunks each), 16-byte
 * chunks, no cluster, a dynamic shared reservation that holds 1 block (1024 threads) or
 * 2 (512) an SM. 4096x50257: f32 26.5 MB a wave (1 block an SM), bf16/f16 13.3 MB (2 of
 * 512 threads); 2048x128256
 * (f32 67.7 MB, bf16 33.9 MB) stays staged, bf16 takes it at 48 MB; 8191x8193 views take
 * it (2 an SM, 512 / 256 threads); 1x65536 (register cluster), 8192^2 (registers) and
 * 17x257 do not, nor cross_entropy or DUALTIME_ROW_PIPE=1; bad values are refused. */
static void row_l2_cases(const char *hdr) {
    static const dt_op ops[] = {DT_OP_SOFTMAX, DT_OP_RMSNORM, DT_OP_LAYERNORM};
    static const char *op_names[] = {"softmax", "rmsnorm", "layernorm"};
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    static const struct {
        int64_t m, n;
        int views, bps_f32, bps_narrow, thr_f32, thr_narrow;
    } sh[] = {
        {4096, 50257, 0, 1, 2, 1024, 512},  {4096, 50257, 1, 1, 2, 1024, 512},
        {2048, 128256, 0, 0, 0, 0, 0},      {8191, 8193, 1, 2, 2, 512, 256},
        {1, 65536, 0, 0, 0, 0, 0},          {8192, 8192, 0, 0, 0, 0, 0},
        {17, 257, 0, 0, 0, 0, 0},           {17, 257, 1, 0, 0, 0, 0},
    };
    unsetenv("DUALTIME_ROW_L2");
    g_expect = "row-l2-two-pass";
    g_expect_absent = 1;
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(has_opt(&g_last, "-DSMEMROW=1"), "ROW_L2 unset: staged: %s", g_last.summary);
    setenv("DUALTIME_ROW_L2", "0", 1);
    compile_typed(DT_OP_LAYERNORM, 4096, 50257, 0, 0, "sm_90", hdr, DT_BF16);
    CHECK(has_opt(&g_last, "-DSMEMROW=1") && !has_opt(&g_last, "-DROWL2=1"),
          "DUALTIME_ROW_L2=0: %s", g_last.summary);
    setenv("DUALTIME_ROW_L2", "1", 1);
    compile_typed(DT_OP_CROSS_ENTROPY, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32); /* other ops */
    compile_typed(DT_OP_RESIDUAL_LAYERNORM, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    setenv("DUALTIME_ROW_PIPE", "1", 1); /* the persistent staged row keeps its path */
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_PIPE");
    g_expect_absent = 0;
    g_expect = NULL;
    for (size_t o = 0; o < 3; o++)
        for (size_t t = 0; t < 3; t++)
            for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
                const int narrow = dts[t] != DT_F32;
                const int bps = narrow ? sh[i].bps_narrow : sh[i].bps_f32;
                const int thr = narrow ? sh[i].thr_narrow : sh[i].thr_f32;
                compile_typed(ops[o], sh[i].m, sh[i].n, 0, sh[i].views, "sm_90", hdr, dts[t]);
                const dt_cuda_plan *p = &g_last;
                const int l2 = has_opt(p, "-DROWL2=1");
                char want[96];
                snprintf(want, sizeof want, "grid=%lld block=%d vec=%d row-l2-two-pass",
                         (long long)sh[i].m, thr, narrow ? 8 : 4);
                char blk[32];
                snprintf(blk, sizeof blk, "blocks/sm=%d ", bps);
                const unsigned res = bps ? (unsigned)(228 * 1024 / (bps + 1) + 1024) : 0;
                CHECK(l2 == (bps > 0) &&
                          (!l2 || (strstr(p->summary, want) && strstr(p->summary, blk) &&
                                   p->shared_bytes == res && p->persistent_cluster == 0 &&
                                   !has_opt(p, "-DSMEMROW=1") && !strstr(p->summary, "cluster=") &&
                                   has_opt(p, "-DINREG=0") && p->block[0] == (unsigned)thr)),
                      "row-l2 %s %lldx%lld views=%d %s: l2 %d (want %d blocks/sm, %d threads), "
                      "smem %u: %s",
                      op_names[o], (long long)sh[i].m, (long long)sh[i].n, sh[i].views,
                      dt_dtype_name(dts[t]), l2, bps, thr, p->shared_bytes, p->summary);
            }
    /* the budget knob: 48 MB lets 2048x128256 bf16 in (1 an SM), f32 (67.7 MB) not */
    setenv("DUALTIME_ROW_L2_MB", "48", 1);
    g_expect = "grid=2048 block=1024 vec=8 row-l2-two-pass dram-read+l2-reread unroll=4 blocks/sm=1";
    compile_typed(DT_OP_RMSNORM, 2048, 128256, 0, 0, "sm_90", hdr, DT_BF16);
    g_expect = "row-l2-two-pass";
    g_expect_absent = 1;
    compile_typed(DT_OP_RMSNORM, 2048, 128256, 0, 0, "sm_90", hdr, DT_F32);
    g_expect_absent = 0;
    unsetenv("DUALTIME_ROW_L2_MB");
    /* DUALTIME_ROW_SMEM=2 stages 8192^2 too: the two-pass takes it (2 an SM) */
    setenv("DUALTIME_ROW_SMEM", "2", 1);
    g_expect = "grid=8192 block=512 vec=4 row-l2-two-pass dram-read+l2-reread unroll=4 blocks/sm=2";
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_SMEM");
    unsetenv("DUALTIME_ROW_L2");
    g_expect = NULL;
    check_refused_each(DT_OP_SOFTMAX, 4096, 50257, "DUALTIME_ROW_L2",
                       (const char *const[]){"2", "-1", "yes", "1x", NULL});
    check_refused_each(DT_OP_LAYERNORM, 4096, 50257, "DUALTIME_ROW_L2_MB",
                       (const char *const[]){"0", "3", "257", "32MB", NULL});
}

/* The staged-row variant (SMEMROW, DUALTIME_ROW_SMEM / _SMEM_KB): the default (=1); =0 turns it off; with =1 every
 * vocabulary row and unaligned long row of softmax, layernorm, rmsnorm, cross_entropy
 * and residual_layernorm (two rows) stages in shared memory with the geometry of the
 * shape (cluster blocks by the shared memory budget, blocks an SM by their shared
 * memory, 16-byte chunks whatever the alignment); sum and few too-long rows keep their
 * paths; mode 2 stages
 * every row longer than 1024; the budget knob moves the cluster size; sm_80 has no
 * clusters; bad values are refused. */
static void smem_row_cases(const char *hdr) {
    static const dt_op ops[] = {DT_OP_SOFTMAX, DT_OP_LAYERNORM, DT_OP_RMSNORM,
                                DT_OP_CROSS_ENTROPY};
    /* the default (unset) stages a vocabulary row; =0 restores the old geometry */
    unsetenv("DUALTIME_ROW_SMEM");
    g_expect = "row-staged-in-smem";
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    setenv("DUALTIME_ROW_SMEM", "0", 1);
    g_expect_absent = 1;
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    g_expect_absent = 0;
    setenv("DUALTIME_ROW_SMEM", "1", 1);
    static const struct { int64_t m, n; int views; dt_dtype dt; const char *expect; } sh[] = {
        {4096, 50257, 0, DT_F32, "block=512 vec=4 row-staged-in-smem cp.async single-read smem=100544 cluster=2 cols/block=25132 "},
        {4096, 50257, 0, DT_BF16, "block=512 vec=8 row-staged-in-smem cp.async single-read smem=100544"},
        {4096, 50257, 0, DT_F16, "block=512 vec=8 row-staged-in-smem cp.async single-read smem=100544"},
        {2048, 128256, 0, DT_F32, "block=256 vec=4 row-staged-in-smem cp.async single-read smem=64144 cluster=8 cols/block=16032 "},
        {2048, 128256, 0, DT_BF16, "block=256 vec=8 row-staged-in-smem cp.async single-read smem=64144 cluster=4 cols/block=32064 "},
        {2048, 128256, 1, DT_F16, "vec=8 row-staged-in-smem cp.async single-read smem=64144 cluster=4 "},
        {8191, 8193, 1, DT_F32, "grid=8191 block=128 vec=4 row-staged-in-smem cp.async single-read smem=32800"},
        {8191, 8193, 1, DT_BF16, "grid=8191 block=128 vec=8 row-staged-in-smem cp.async single-read smem=16416"},
        {8191, 8193, 0, DT_F16, "vec=8 row-staged-in-smem"}, /* N % 8 != 0 */
        {8192, 8193, 0, DT_F32, "vec=4 row-staged-in-smem"},  /* odd rows, contiguous */
        /* few rows: one more cluster doubling, 1024 threads */
        {3, 20000, 1, DT_BF16, "grid=6 block=1024 vec=8 row-staged-in-smem cp.async single-read smem=20016 cluster=2 "},
        {1024, 4097, 0, DT_F32, "row-staged-in-smem"},
        {1, 65536, 0, DT_F32, "row-in-registers single-pass cluster=8 "}, /* few: registers */
        {5, 40000, 1, DT_BF16, "row-in-registers single-pass cluster="},
        {8192, 8192, 0, DT_F32, "block=512 vec=4 row-in-registers"}, /* aligned: unchanged */
        {8192, 8192, 0, DT_BF16, "vec=8 row-in-registers"},
        {1024, 1024, 1, DT_F32, "vec=1 row-in-registers"}, /* N <= 1024: unchanged */
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
            g_expect = sh[i].expect;
            compile_typed(ops[o], sh[i].m, sh[i].n, 0, sh[i].views, "sm_90", hdr, sh[i].dt);
            if (!strstr(g_last.summary, "row-staged-in-smem")) continue;
            const dt_cuda_plan *p = &g_last;
            CHECK(p->shared_bytes >= 16 && p->shared_bytes <= 227 * 1024 &&
                      p->block[0] >= 128 && p->block[0] <= 1024,
                  "%s %lldx%lld: smem %u block %u", dt_op_get(ops[o])->name, (long long)sh[i].m,
                  (long long)sh[i].n, p->shared_bytes, p->block[0]);
        }
    /* residual_layernorm stages both input rows (twice the shared memory: a cluster of
     * 4 at 4096x50257 f32), also as views; sum never stages */
    g_expect = "block=512 vec=4 row-staged-in-smem cp.async single-read smem=100576 cluster=4 ";
    compile_typed(DT_OP_RESIDUAL_LAYERNORM, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    g_expect = "vec=8 row-staged-in-smem cp.async single-read smem=100576 cluster=2 ";
    compile_typed(DT_OP_RESIDUAL_LAYERNORM, 4096, 50257, 0, 1, "sm_90", hdr, DT_BF16);
    g_expect = "block=256 vec=4 row-staged-in-smem cp.async single-read smem=65600";
    compile_typed(DT_OP_RESIDUAL_LAYERNORM, 8191, 8193, 0, 1, "sm_90", hdr, DT_F32);
    g_expect = "row-staged-in-smem";
    compile_typed(DT_OP_RESIDUAL_LAYERNORM, 2048, 128256, 0, 0, "sm_90", hdr, DT_F16);
    g_expect = "streaming";
    compile_typed(DT_OP_SUM, 4096, 50257, 0, 0, "sm_90", hdr, DT_BF16);
    /* mode 2: every row longer than 1024, the aligned in-register ones and the few long
     * ones of the register cluster included */
    setenv("DUALTIME_ROW_SMEM", "2", 1);
    g_expect = "block=128 vec=4 row-staged-in-smem cp.async single-read smem=32784";
    compile_typed(DT_OP_SOFTMAX, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    g_expect = "block=1024 vec=4 row-staged-in-smem cp.async single-read smem=32784 cluster=8 ";
    compile_typed(DT_OP_SOFTMAX, 1, 65536, 0, 0, "sm_90", hdr, DT_F32);
    g_expect = "warp-per-row";
    compile_typed(DT_OP_SOFTMAX, 8192, 1024, 0, 0, "sm_90", hdr, DT_F32);
    /* the budget: 227 KiB keeps 4096x50257 f32 in one 1024-thread block an SM */
    setenv("DUALTIME_ROW_SMEM", "1", 1);
    setenv("DUALTIME_ROW_SMEM_KB", "227", 1);
    g_expect = "block=1024 vec=4 row-staged-in-smem cp.async single-read smem=201056";
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    CHECK(!strstr(g_last.summary, "cluster="), "SMEM_KB=227: %s", g_last.summary);
    setenv("DUALTIME_ROW_SMEM_KB", "32", 1);
    g_expect = "smem=25152 cluster=4 ";
    compile_typed(DT_OP_RMSNORM, 4096, 50257, 0, 0, "sm_90", hdr, DT_BF16);
    setenv("DUALTIME_ROW_SMEM_KB", "16", 1); /* 8 blocks of 128256 f32 do not fit 16 KiB */
    g_expect = "multi-pass";
    compile_typed(DT_OP_SOFTMAX, 2048, 128256, 0, 0, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_SMEM_KB");
    /* rows longer than 8 x 113 KiB: the budget gives way to the block limit (f32 300000
     * columns: 8 x 150 KB), unless set; beyond 8 x 227 KiB multi-pass */
    g_expect = "row-staged-in-smem cp.async single-read smem=150016 cluster=8 ";
    compile_typed(DT_OP_SOFTMAX, 64, 300000, 0, 0, "sm_90", hdr, DT_F32);
    g_expect = "multi-pass";
    compile_typed(DT_OP_SOFTMAX, 64, 600000, 0, 0, "sm_90", hdr, DT_F32);
    setenv("DUALTIME_ROW_SMEM_KB", "113", 1);
    compile_typed(DT_OP_SOFTMAX, 64, 300000, 0, 0, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_SMEM_KB");
    /* sm_80: cp.async but no clusters: only rows that fit one block stage */
    g_expect = "multi-pass";
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_80", hdr, DT_F32);
    g_expect = "row-staged-in-smem";
    compile_typed(DT_OP_SOFTMAX, 8191, 8193, 0, 1, "sm_80", hdr, DT_F32);
    compile_typed(DT_OP_LAYERNORM, 4096, 50257, 0, 0, "sm_80", hdr, DT_BF16);
    /* a budget over the arch's limit: sm_80 blocks have at most 163 KiB, sm_86 99 KiB */
    setenv("DUALTIME_ROW_SMEM_KB", "227", 1);
    g_expect = "multi-pass";
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_80", hdr, DT_F32);
    g_expect = "smem=100544";
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_86", hdr, DT_BF16);
    g_expect = "multi-pass";
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_86", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_SMEM_KB");
    /* the DUALTIME_ROW_TPR override keeps the old geometry */
    setenv("DUALTIME_ROW_TPR", "1024", 1);
    g_expect = "vec=1 multi-pass";
    compile_typed(DT_OP_SOFTMAX, 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_TPR");
    unsetenv("DUALTIME_ROW_SMEM");
    g_expect = NULL;
    static const char *bad[][2] = {{"DUALTIME_ROW_SMEM", "3"}, {"DUALTIME_ROW_SMEM", "on"},
                                   {"DUALTIME_ROW_SMEM_KB", "228"}, {"DUALTIME_ROW_SMEM_KB", "8"},
                                   {"DUALTIME_ROW_SMEM_KB", "64k"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        check_refused(DT_OP_SOFTMAX, 4096, 50257, bad[i][0], bad[i][1]);
}

/* Issue 18's shapes: every row op that keeps a row on chip x f32/bf16/f16 at one long
 * row, vocabulary rows, odd unaligned views, few long rows; the geometry each gets by
 * default (cluster split for few too-long rows, the multi-pass path for many, ex2 for
 * narrow softmax / cross_entropy) and under DUALTIME_ROW_CLUSTER=0|2, ELEMS. */
/* The shifted in-register rows (session 18, DT_SHIFT_A / DT_SHIFT_B): row ops over
 * views, and cross_entropy over odd rows, take the aligned rows' geometry (vec 4 / 8 in
 * registers, the register cluster for few long rows) with "loads-shifted" in the summary
 * and -DDT_SHIFT_A (residual_layernorm's b: -DDT_SHIFT_B); rows too long for registers
 * keep the staged or streamed path without it; outputs of odd N (not whole vectors) keep
 * vec 1; layernorm's DUALTIME_ROW_LN_ONE / _LN_PERSIST keep vec 1 on views; sum keeps its
 * row head; DUALTIME_ROW_SHIFT=0 gives the plan before (bad values are refused in
 * narrow_cases, which also checks the elementwise shifted items). */
static void row_shift_cases(const char *hdr) {
    static const dt_op ops[] = {DT_OP_SOFTMAX, DT_OP_LAYERNORM, DT_OP_RMSNORM,
                                DT_OP_CROSS_ENTROPY, DT_OP_RESIDUAL_LAYERNORM};
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    /* bf16/f16 views shifted everywhere; FP32 views over 1024 columns (block rows) only:
     * its warp rows keep vec 1 (measured, session 18) */
    static const struct { int64_t m, n; const char *f32, *narrow; } sh[] = {
        {4096, 4096, "block=256 vec=4 row-in-registers single-pass", "vec=8 row-in-registers single-pass"},
        {300, 16000, "block=1024 vec=4 row-in-registers single-pass", "vec=8 row-in-registers single-pass"},
        {8192, 1000, "warp-per-row grid=1024 block=256 vec=1 row-in-registers", "warp-per-row grid=1024 block=256 vec=8 row-in-registers"},
        {128, 1024, "block-per-row grid=128 block=128 vec=1", "block-per-row grid=128 block=128 vec=8"},
        {2, 40000, "vec=4 row-in-registers single-pass cluster=", "vec=8 row-in-registers single-pass cluster="},
    };
    for (size_t t = 0; t < 3; t++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
                g_expect = t == 0 ? sh[i].f32 : sh[i].narrow;
                compile_typed(ops[o], sh[i].m, sh[i].n, 0, 1, "sm_90", hdr, dts[t]);
                if (t == 0 && sh[i].n <= 1024) { /* FP32 warp rows: vec 1, unshifted */
                    CHECK(!strstr(g_last.summary, "loads-shifted") && !has_opt(&g_last, "-DDT_SHIFT_A=1"),
                          "%s %lldx%lld view f32: %s", dt_op_get(ops[o])->name, (long long)sh[i].m,
                          (long long)sh[i].n, g_last.summary);
                    continue;
                }
                CHECK(strstr(g_last.summary, " loads-shifted") && has_opt(&g_last, "-DDT_SHIFT_A=1") &&
                          has_opt(&g_last, "-DDT_SHIFT_B=1") == (ops[o] == DT_OP_RESIDUAL_LAYERNORM),
                      "%s %lldx%lld view %s: %s", dt_op_get(ops[o])->name, (long long)sh[i].m,
                      (long long)sh[i].n, dt_dtype_name(dts[t]), g_last.summary);
                /* the same geometry as the aligned rows' */
                const dt_cuda_plan view = g_last;
                g_expect = NULL;
                compile_typed(ops[o], sh[i].m, sh[i].n, 0, 0, "sm_90", hdr, dts[t]);
                const int same = view.grid[0] == g_last.grid[0] && view.block[0] == g_last.block[0] &&
                                 !has_opt(&g_last, "-DDT_SHIFT_A=1");
                /* (bf16/f16 layernorm's aligned rows over 1024 are its persistent ones) */
                const int persist = strstr(g_last.summary, "persist=") != NULL;
                CHECK(same || persist, "%s %lldx%lld %s: view grid %u block %u, aligned %s",
                      dt_op_get(ops[o])->name, (long long)sh[i].m, (long long)sh[i].n,
                      dt_dtype_name(dts[t]), view.grid[0], view.block[0], g_last.summary);
            }
    /* cross_entropy over odd rows, contiguous (one output a row) */
    g_expect = "vec=4 row-in-registers single-pass loads-shifted";
    compile_typed(DT_OP_CROSS_ENTROPY, 8192, 8193, 0, 0, "sm_90", hdr, DT_F32);
    g_expect = "vec=8 row-in-registers single-pass fastexp loads-shifted";
    compile_typed(DT_OP_CROSS_ENTROPY, 6000, 6001, 0, 1, "sm_90", hdr, DT_BF16);
    /* odd N with a row output: shifted loads in the output row's frame (DT_OFRAME), with
     * one chunk a thread more room (PER for N + VEC - 1): 1023 bf16 warp rows hold 40 */
    g_expect = "loads-shifted output-frame";
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        if (ops[o] == DT_OP_CROSS_ENTROPY) continue;
        compile_typed(ops[o], 6000, 6001, 0, 1, "sm_90", hdr, DT_F32);
        CHECK(has_opt(&g_last, "-DDT_OFRAME=1") && has_opt(&g_last, "-DPER=3"), "%s 6000x6001 f32: %s",
              dt_op_get(ops[o])->name, g_last.summary);
        compile_typed(ops[o], 8191, 8193, 0, 0, "sm_90", hdr, DT_BF16);
        compile_typed(ops[o], 2049, 1023, 0, 0, "sm_90", hdr, DT_BF16);
        CHECK(has_opt(&g_last, "-DPER=5") && strstr(g_last.summary, "warp-per-row"), "%s 2049x1023 bf16: %s",
              dt_op_get(ops[o])->name, g_last.summary);
    }
    /* FP32 warp rows of odd N keep vec 1 */
    g_expect = "loads-shifted";
    g_expect_absent = 1;
    compile_typed(DT_OP_SOFTMAX, 12345, 77, 0, 0, "sm_90", hdr, DT_F32);
    /* rows too long for registers: staged (vocabulary rows over views) or streamed */
    compile_typed(DT_OP_SOFTMAX, 4096, 50256, 0, 1, "sm_90", hdr, DT_F32);
    CHECK(strstr(g_last.summary, "row-staged-in-smem") != NULL, "softmax 4096x50256 view: %s",
          g_last.summary);
    compile_typed(DT_OP_CROSS_ENTROPY, 2048, 128256, 0, 1, "sm_90", hdr, DT_BF16);
    CHECK(strstr(g_last.summary, "ce-stream") != NULL, "cross_entropy 2048x128256 view: %s",
          g_last.summary);
    /* sum keeps its row head; FP32 add / gelu_add views their vec 1 items (the bf16 /
     * f16 shifted items are narrow_cases') */
    compile_typed(DT_OP_SUM, 4096, 4096, 0, 1, "sm_90", hdr, DT_BF16);
    compile_typed(DT_OP_ADD, 4096, 4096, 0, 1, "sm_90", hdr, DT_F32);
    compile_typed(DT_OP_GELU_ADD, 4096, 4096, 0, 1, "sm_90", hdr, DT_F32);
    /* layernorm's opt-in raw rows keep vec 1 on views */
    setenv("DUALTIME_ROW_LN_ONE", "1", 1);
    compile_typed(DT_OP_LAYERNORM, 4096, 4096, 0, 1, "sm_90", hdr, DT_BF16);
    unsetenv("DUALTIME_ROW_LN_ONE");
    setenv("DUALTIME_ROW_LN_PERSIST", "1", 1);
    compile_typed(DT_OP_LAYERNORM, 4096, 4096, 0, 1, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_LN_PERSIST");
    /* the knob: 0 the plan before (vec 1 warp rows, staged rows) */
    setenv("DUALTIME_ROW_SHIFT", "0", 1);
    compile_typed(DT_OP_SOFTMAX, 4096, 4096, 0, 1, "sm_90", hdr, DT_F32);
    g_expect_absent = 0;
    CHECK(strstr(g_last.summary, "row-staged-in-smem") != NULL, "ROW_SHIFT=0 softmax 4096^2 view: %s",
          g_last.summary);
    g_expect = "warp-per-row grid=1024 block=256 vec=1 row-in-registers";
    compile_typed(DT_OP_RMSNORM, 8192, 1000, 0, 1, "sm_90", hdr, DT_BF16);
    setenv("DUALTIME_ROW_SHIFT", "1", 1);
    g_expect = "loads-shifted";
    compile_typed(DT_OP_RMSNORM, 8192, 1000, 0, 1, "sm_90", hdr, DT_BF16);
    compile_typed(DT_OP_RMSNORM, 8192, 1000, 0, 1, "sm_90", hdr, DT_F32); /* forced for FP32 */
    g_expect = NULL; /* =2 is refused with the refusals of narrow_cases */
    /* DUALTIME_ROW_CLUSTER=3 (opt-in): rows over 8192 at fewer than 4 rows an SM split
     * into blocks of at most 512 threads, aligned and views alike; more rows keep one
     * block a row; few rows too long for one block as mode 1 */
    setenv("DUALTIME_ROW_CLUSTER", "3", 1);
    g_expect = "block=512 vec=4 row-in-registers single-pass cluster=4 cols/block=7500 ";
    compile_typed(DT_OP_SOFTMAX, 300, 30000, 0, 1, "sm_90", hdr, DT_F32);
    g_expect = "block=512 vec=8 row-in-registers single-pass cluster=2 cols/block=15000 ";
    compile_typed(DT_OP_SOFTMAX, 300, 30000, 0, 0, "sm_90", hdr, DT_BF16);
    g_expect = "block=512 vec=4 row-in-registers single-pass cluster=2 cols/block=8000 ";
    compile_typed(DT_OP_RMSNORM, 300, 16000, 0, 1, "sm_90", hdr, DT_F32);
    g_expect = "cluster=";
    g_expect_absent = 1;
    compile_typed(DT_OP_RMSNORM, 600, 16000, 0, 1, "sm_90", hdr, DT_F32);
    compile_typed(DT_OP_SOFTMAX, 300, 8192, 0, 0, "sm_90", hdr, DT_F32);
    g_expect_absent = 0;
    compile_typed(DT_OP_SOFTMAX, 1, 65536, 0, 0, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_CLUSTER");
    g_expect = NULL;
    unsetenv("DUALTIME_ROW_SHIFT");
}

static void long_row_cases(const char *hdr) {
    static const dt_op ops[] = {DT_OP_SOFTMAX, DT_OP_LAYERNORM, DT_OP_RMSNORM,
                                DT_OP_CROSS_ENTROPY, DT_OP_RESIDUAL_LAYERNORM};
    static const struct { int64_t m, n; int views; const char *expect; } sh[] = {
        {1, 65536, 0, "cluster=8 "},          {1, 65536, 1, "cluster=8 "},
        {4096, 50257, 0, "multi-pass"},       {2048, 128256, 0, "multi-pass"},
        {8191, 8193, 1, "row-in-registers"},  {5, 40000, 0, "cluster="},
        {5, 40000, 1, "cluster="}};
    static const dt_dtype dts[] = {DT_F32, DT_BF16, DT_F16};
    unsetenv("DUALTIME_ROW_CLUSTER");
    unsetenv("DUALTIME_ROW_ELEMS");
    unsetenv("DUALTIME_ROW_FASTEXP");
    unsetenv("DUALTIME_ROW_SMEM_KB");
    /* the geometry before the staged-row variant (DUALTIME_ROW_SMEM=0) */
    setenv("DUALTIME_ROW_SMEM", "0", 1);
    for (size_t t = 0; t < 3; t++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
                g_expect = sh[i].expect;
                compile_typed(ops[o], sh[i].m, sh[i].n, 0, sh[i].views, "sm_90", hdr, dts[t]);
            }
    unsetenv("DUALTIME_ROW_SMEM");
    /* the staged row's geometry, cross_entropy's included: its default stream (where it
     * streams >= 8 chunks a thread) is ce_stream_cases'. The groups below check views and
     * odd rows on the staged and streamed paths as they were before the shifted
     * in-register loads (session 18, DUALTIME_ROW_SHIFT=0); row_shift_cases the default */
    setenv("DUALTIME_ROW_SHIFT", "0", 1);
    setenv("DUALTIME_CE_STREAM", "0", 1);
    smem_row_cases(hdr);
    smem_pipe_cases(hdr);
    unsetenv("DUALTIME_CE_STREAM");
    ce_stream_cases(hdr);
    row_l2_cases(hdr);
    store_ahead_cases(hdr);
    row_hint_cases(hdr);
    sm_online_cases(hdr);
    ln_one_cases(hdr);
    ln_persist_cases(hdr);
    unsetenv("DUALTIME_ROW_SHIFT");
    row_shift_cases(hdr);
    /* narrow softmax / cross_entropy: ex2.approx; f32 keeps expf */
    g_expect = "fastexp";
    compile_typed(DT_OP_SOFTMAX, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    compile_typed(DT_OP_CROSS_ENTROPY, 8192, 8192, 0, 0, "sm_90", hdr, DT_F16);
    setenv("DUALTIME_ROW_FASTEXP", "1", 1);
    compile_typed(DT_OP_SOFTMAX, 8192, 8192, 0, 1, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_FASTEXP");
    /* geometry: narrow 8192 rows hold 32 elements a thread (256 threads), layernorm too on
     * its persistent rows (16 without them) */
    g_expect = "block=256 vec=8";
    compile_typed(DT_OP_SOFTMAX, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    g_expect = "block=256 vec=8 row-in-registers single-pass persist=1"; /* session 8 */
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    g_expect = "block=512 vec=8";
    setenv("DUALTIME_ROW_LN_PERSIST", "0", 1);
    compile_typed(DT_OP_LAYERNORM, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    unsetenv("DUALTIME_ROW_LN_PERSIST");
    setenv("DUALTIME_ROW_ELEMS", "16", 1);
    compile_typed(DT_OP_SOFTMAX, 8192, 8192, 0, 0, "sm_90", hdr, DT_BF16);
    unsetenv("DUALTIME_ROW_ELEMS");
    g_expect = "block=512 vec=4";
    compile_typed(DT_OP_SOFTMAX, 8192, 8192, 0, 0, "sm_90", hdr, DT_F32);
    /* DUALTIME_ROW_CLUSTER=2: many long rows split too; 0: never */
    setenv("DUALTIME_ROW_CLUSTER", "2", 1);
    g_expect = "cluster=4 ";
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        compile_typed(ops[o], 4096, 50257, 0, 0, "sm_90", hdr, DT_F32);
    g_expect = "cluster=4 ";
    compile_typed(DT_OP_CROSS_ENTROPY, 2048, 128256, 0, 1, "sm_90", hdr, DT_BF16);
    g_expect = "cluster=4 ";
    compile_typed(DT_OP_SOFTMAX, 4, 16384, 0, 0, "sm_90", hdr, DT_F16);
    setenv("DUALTIME_ROW_CLUSTER", "0", 1);
    setenv("DUALTIME_ROW_SMEM", "0", 1); /* else the staged row takes it (smem_row_cases) */
    g_expect = "multi-pass";
    compile_typed(DT_OP_SOFTMAX, 1, 65536, 0, 0, "sm_90", hdr, DT_F32);
    unsetenv("DUALTIME_ROW_SMEM");
    unsetenv("DUALTIME_ROW_CLUSTER");
    /* no clusters before sm_90 */
    compile_typed(DT_OP_SOFTMAX, 1, 65536, 0, 0, "sm_80", hdr, DT_F32);
    g_expect = NULL;
}

/* Counts lines of `cuobjdump -sass cubin` holding each of the n needles into counts.
 * Returns 0 when no cuobjdump runs (DUALTIME_CUOBJDUMP, /usr/local/cuda/bin, PATH). */
static int sass_count(const char *cubin, const char *const *needles, int n, int *counts) {
    const char *tool = getenv("DUALTIME_CUOBJDUMP");
    char cmd[600];
    if (!tool || !*tool)
        tool = access("/usr/local/cuda/bin/cuobjdump", X_OK) == 0 ? "/usr/local/cuda/bin/cuobjdump"
                                                                  : "cuobjdump";
    snprintf(cmd, sizeof cmd, "%s -sass %s 2>/dev/null", tool, cubin);
    FILE *f = popen(cmd, "r");
    if (!f) return 0;
    char line[1024];
    int lines = 0;
    for (int i = 0; i < n; i++) counts[i] = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        for (int i = 0; i < n; i++)
            if (strstr(line, needles[i])) counts[i]++;
    }
    return pclose(f) == 0 && lines > 0;
}

/* The SASS of a wg1/wg2 cubin: HGMMA and UTMALDG lines must be there (see wg1_cases). */
static void wg_sass(const char *cubin, const char *var, dt_dtype dt) {
    static const char *const needles[] = {"HGMMA", "UTMALDG", "SYNCS", "LDL", "STL"};
    int counts[5];
    if (!sass_count(cubin, needles, 5, counts)) {
        printf("note %s SASS not checked: no cuobjdump here (DUALTIME_CUOBJDUMP=path names "
               "one)\n", var);
        CHECK(!getenv("DUALTIME_REQUIRE_SASS"), "DUALTIME_REQUIRE_SASS set and no cuobjdump ran");
        return;
    }
    CHECK(counts[0] > 0 && counts[1] > 0, "%s %s 4096^3 SASS: %d HGMMA, %d UTMALDG lines (want "
          "both > 0)", var, dt_dtype_name(dt), counts[0], counts[1]);
    printf("ok   %s %s 4096^3 SASS: %d HGMMA, %d UTMALDG, %d SYNCS, %d LDL, %d STL lines\n", var,
           dt_dtype_name(dt), counts[0], counts[1], counts[2], counts[3], counts[4]);
}

/* gemm wg3 (DUALTIME_GEMM_VARIANT=wg3: wg1 with the TMA-store epilogue, three tensor
 * maps) in both dtypes: 4096^3 (two passes of two boxes a warpgroup), 1024^3 (BN 64, one
 * box), the tails, DUALTIME_GEMM_STAGES=3 (four boxes, one pass), split-K 2; views fall
 * back to tc1. Its 4096^3 SASS must hold UTMASTG (TMA stores) and STSM (stmatrix) where
 * cuobjdump runs. */
static void wg3_cases(const char *hdr, const char *cubin) {
    static const dt_dtype dts[] = {DT_BF16, DT_F16};
    static const char *const needles[] = {"HGMMA", "UTMALDG", "UTMASTG", "STSM", "LDL", "STL"};
    setenv("DUALTIME_GEMM_VARIANT", "wg3", 1);
    for (size_t t = 0; t < 2; t++) {
        g_expect = "variant=wg3 grid=132 (persistent, 512 tiles)";
        g_dump = cubin;
        compile_typed(DT_OP_GEMM, 4096, 4096, 4096, 0, "sm_90", hdr, dts[t]);
        g_dump = NULL;
        CHECK(strstr(g_last.kernel_name, "dt_gemm_wg3_") && g_last.ntma == 3 &&
                  g_last.shared_bytes <= 227 * 1024 && strstr(g_last.summary, "epi=tma boxes=2 passes=2"),
              "wg3 4096^3 plan: %s ntma %d smem %u %s", g_last.kernel_name, g_last.ntma,
              g_last.shared_bytes, g_last.summary);
        int counts[6];
        if (sass_count(cubin, needles, 6, counts)) {
            CHECK(counts[0] > 0 && counts[1] > 0 && counts[2] > 0 && counts[3] > 0 &&
                      counts[4] == 0 && counts[5] == 0,
                  "wg3 %s SASS: %d HGMMA %d UTMALDG %d UTMASTG %d STSM %d LDL %d STL",
                  dt_dtype_name(dts[t]), counts[0], counts[1], counts[2], counts[3], counts[4],
                  counts[5]);
            printf("ok   wg3 %s 4096^3 SASS: %d HGMMA, %d UTMALDG, %d UTMASTG, %d STSM, %d LDL, "
                   "%d STL lines\n", dt_dtype_name(dts[t]), counts[0], counts[1], counts[2],
                   counts[3], counts[4], counts[5]);
        } else {
            printf("note wg3 SASS not checked: no cuobjdump here\n");
            CHECK(!getenv("DUALTIME_REQUIRE_SASS"), "DUALTIME_REQUIRE_SASS set and no cuobjdump ran");
        }
        g_expect = "epi=tma boxes=1 passes=1";
        compile_typed(DT_OP_GEMM, 1024, 1024, 1024, 0, "sm_90", hdr, dts[t]);
        g_expect = "variant=wg3";
        compile_typed(DT_OP_GEMM, 1000, 1048, 264, 0, "sm_90", hdr, dts[t]);
        g_expect = "variant=tc1 (fallback: ";
        compile_typed(DT_OP_GEMM, 4096, 4096, 4096, 1, "sm_90", hdr, dts[t]);
    }
    setenv("DUALTIME_GEMM_STAGES", "3", 1);
    g_expect = "stages=3 smem=214064";
    compile_typed(DT_OP_GEMM, 4096, 4096, 4096, 0, "sm_90", hdr, DT_BF16);
    CHECK(strstr(g_last.summary, "epi=tma boxes=4 passes=1"), "wg3 stages 3: %s", g_last.summary);
    unsetenv("DUALTIME_GEMM_STAGES");
    setenv("DUALTIME_GEMM_SPLITK", "2", 1);
    g_expect = "splitk=2 epi=tma";
    compile_typed(DT_OP_GEMM, 1024, 1024, 1024, 0, "sm_90", hdr, DT_F16);
    unsetenv("DUALTIME_GEMM_SPLITK");
    /* wg4: wg3 in clusters of two with B multicast (__cluster_dims__(2)): 4096^3 (BN 256,
     * SASS as wg3's; MULTICAST lines are counted, not required: the mnemonic is not
     * documented), 1000x1048x264 (BN 128, tails), 1152x1024x512 (an odd row tile),
     * 1024^3 (BN 64: wg3) */
    static const char *const needles4[] = {"HGMMA", "UTMALDG", "UTMASTG", "MULTICAST", "LDL", "STL"};
    setenv("DUALTIME_GEMM_VARIANT", "wg4", 1);
    for (size_t t = 0; t < 2; t++) {
        g_expect = "variant=wg4 grid=132 (persistent, 512 tiles)";
        g_dump = cubin;
        compile_typed(DT_OP_GEMM, 4096, 4096, 4096, 0, "sm_90", hdr, dts[t]);
        g_dump = NULL;
        CHECK(strstr(g_last.kernel_name, "dt_gemm_wg4_") && g_last.persistent_cluster == 2 &&
                  strstr(g_last.summary, "cluster=2 mcast=B"),
              "wg4 4096^3 plan: %s cluster %d %s", g_last.kernel_name, g_last.persistent_cluster,
              g_last.summary);
        int counts[6];
        if (sass_count(cubin, needles4, 6, counts)) {
            CHECK(counts[0] > 0 && counts[1] > 0 && counts[2] > 0 && counts[4] == 0 && counts[5] == 0,
                  "wg4 %s SASS: %d HGMMA %d UTMALDG %d UTMASTG %d LDL %d STL",
                  dt_dtype_name(dts[t]), counts[0], counts[1], counts[2], counts[4], counts[5]);
            printf("ok   wg4 %s 4096^3 SASS: %d HGMMA, %d UTMALDG, %d UTMASTG, %d MULTICAST, %d LDL, "
                   "%d STL lines\n", dt_dtype_name(dts[t]), counts[0], counts[1], counts[2],
                   counts[3], counts[4], counts[5]);
        } else {
            printf("note wg4 SASS not checked: no cuobjdump here\n");
            CHECK(!getenv("DUALTIME_REQUIRE_SASS"), "DUALTIME_REQUIRE_SASS set and no cuobjdump ran");
        }
        g_expect = "tile=128x128x64 stages=6";
        compile_typed(DT_OP_GEMM, 1000, 1048, 264, 0, "sm_90", hdr, dts[t]);
        CHECK(strstr(g_last.summary, "cluster=2"), "wg4 1000x1048x264: %s", g_last.summary);
        g_expect = "variant=wg4 grid=80";
        compile_typed(DT_OP_GEMM, 1152, 1024, 512, 0, "sm_90", hdr, dts[t]);
        g_expect = "cluster=1 (BN 64)";
        compile_typed(DT_OP_GEMM, 1024, 1024, 1024, 0, "sm_90", hdr, dts[t]);
    }
    g_expect = NULL;
}

/* gemm wg1 (DUALTIME_GEMM_VARIANT=wg1) for bf16 and f16: TMA-describable shapes take wg1
 * (sm_90a, 384 threads, dynamic shared memory within the 227 KiB opt-in, two tensor
 * maps, a persistent grid), the rest fall back to tc1 and say why; BN follows the tile
 * count (DUALTIME_GEMM_BN overrides, bad values refused); the sm_90a cubin's SASS must
 * hold HGMMA (wgmma) and UTMALDG (TMA loads) where cuobjdump runs. */
static void wg1_cases(const char *hdr) {
    static const struct { int64_t m, n, k; int views; const char *expect; } c[] = {
        /* 1024^3: 128 x 64 tiles fill the SMs (dt_gemm_geom.h); the 128 x 128 grid of
         * 64 tiles is DUALTIME_GEMM_FILL=0 (checked below) */
        {1024, 1024, 1024, 0, "variant=wg1 grid=128 (persistent, 128 tiles) block=384"},
        {4096, 4096, 4096, 0, "tile=128x256x64 stages=4"},
        {8192, 8192, 8192, 0, "variant=wg1 grid=132 (persistent, 2048 tiles)"},
        {1000, 1048, 264, 0, "variant=wg1"}, /* M, N (in the tile) and K tails */
        {127, 193, 61, 0, "variant=tc1 (fallback: A rows not 16-byte aligned for TMA)"},
        {4097, 4095, 257, 0, "variant=tc1 (fallback: A rows not 16-byte aligned for TMA)"},
        {4096, 4096, 4096, 1, "variant=tc1 (fallback: "},
        {1024, 1024, 1024, 1, "variant=tc1 (fallback: "},
        {127, 193, 61, 1, "variant=tc1 (fallback: "},
    };
    static const dt_dtype dts[] = {DT_BF16, DT_F16};
    /* DUALTIME_KEEP_CUBIN=path keeps the last 4096^3 cubin written (wg2 f16) there */
    const char *keep = getenv("DUALTIME_KEEP_CUBIN");
    char cubin[512] = "/tmp/dt_wg1_XXXXXX";
    if (keep && *keep) {
        snprintf(cubin, sizeof cubin, "%s", keep);
    } else {
        int fd = mkstemp(cubin);
        CHECK(fd >= 0, "mkstemp %s", cubin);
        if (fd < 0) return;
        close(fd);
    }
    setenv("DUALTIME_GEMM_VARIANT", "wg1", 1);
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            g_expect = c[i].expect;
            g_dump = i == 1 ? cubin : NULL;
            const int before = g_fail;
            compile_typed(DT_OP_GEMM, c[i].m, c[i].n, c[i].k, c[i].views, "sm_90", hdr, dts[t]);
            g_dump = NULL;
            if (g_fail != before || !strstr(g_last.summary, "variant=wg1")) continue;
            const dt_cuda_plan *p = &g_last;
            CHECK(p->ntma == 2 && p->block[0] == 384 && p->grid[0] >= 1 && p->grid[0] <= 132 &&
                      p->shared_bytes > 48 * 1024 && p->shared_bytes <= 227 * 1024 &&
                      strcmp(p->opts[0], "--gpu-architecture=sm_90a") == 0,
                  "wg1 plan %lldx%lldx%lld: ntma %d block %u grid %u smem %u arch %s",
                  (long long)c[i].m, (long long)c[i].n, (long long)c[i].k, p->ntma, p->block[0],
                  p->grid[0], p->shared_bytes, p->opts[0]);
            if (i == 1) wg_sass(cubin, "wg1", dts[t]);
        }
    /* wg2 (one wgmma group in flight): the same plan, its own symbol and summary */
    setenv("DUALTIME_GEMM_VARIANT", "wg2", 1);
    for (size_t t = 0; t < 2; t++) {
        g_expect = "variant=wg2 grid=132 (persistent, 512 tiles)";
        g_dump = cubin;
        compile_typed(DT_OP_GEMM, 4096, 4096, 4096, 0, "sm_90", hdr, dts[t]);
        g_dump = NULL;
        wg_sass(cubin, "wg2", dts[t]);
        CHECK(strstr(g_last.kernel_name, "dt_gemm_wg2_") && strstr(g_last.summary, "wait_group=1"),
              "wg2 plan: kernel %s summary %s", g_last.kernel_name, g_last.summary);
        g_expect = "variant=wg2";
        compile_typed(DT_OP_GEMM, 1000, 1048, 264, 0, "sm_90", hdr, dts[t]);
        g_expect = "variant=tc1 (fallback: ";
        compile_typed(DT_OP_GEMM, 1024, 1024, 1024, 1, "sm_90", hdr, dts[t]);
    }
    wg3_cases(hdr, cubin);
    setenv("DUALTIME_GEMM_VARIANT", "wg1", 1);
    /* BN: forced 128 at 4096^3; a bad value refused; another arch falls back */
    setenv("DUALTIME_GEMM_BN", "128", 1);
    g_expect = "tile=128x128x64 stages=6";
    compile_typed(DT_OP_GEMM, 4096, 4096, 4096, 0, "sm_90", hdr, DT_BF16);
    unsetenv("DUALTIME_GEMM_BN");
    /* the 64-wide tile compiles (m64n64k16) in both dtypes and as wg2; FILL=0 is the
     * geometry before it (1024^3: 64 tiles of 128 x 128) */
    for (size_t t = 0; t < 2; t++) {
        g_expect = "tile=128x64x64 stages=8";
        compile_typed(DT_OP_GEMM, 1024, 1024, 1024, 0, "sm_90", hdr, dts[t]);
        CHECK(g_last.shared_bytes <= 227 * 1024 && g_last.grid[0] == 128,
              "wg1 BN=64 1024^3: smem %u grid %u", g_last.shared_bytes, g_last.grid[0]);
        setenv("DUALTIME_GEMM_FILL", "0", 1);
        g_expect = "variant=wg1 grid=64 (persistent, 64 tiles) block=384";
        compile_typed(DT_OP_GEMM, 1024, 1024, 1024, 0, "sm_90", hdr, dts[t]);
        unsetenv("DUALTIME_GEMM_FILL");
    }
    /* split-K 2 (opt-in, DUALTIME_GEMM_SPLITK=2): the fix-up compiles in both dtypes, at
     * an uneven K split with tails (1000x1048x264: 5 k-blocks) and as wg2 */
    setenv("DUALTIME_GEMM_SPLITK", "2", 1);
    for (size_t t = 0; t < 2; t++) {
        g_expect = "tile=128x128x64 stages=6";
        compile_typed(DT_OP_GEMM, 1024, 1024, 1024, 0, "sm_90", hdr, dts[t]);
        CHECK(strstr(g_last.summary, "splitk=2") && g_last.workspace_bytes > 0 &&
                  g_last.grid[0] == 128,
              "splitk 1024^3: %s ws %llu", g_last.summary, g_last.workspace_bytes);
        g_expect = "splitk=2";
        compile_typed(DT_OP_GEMM, 1000, 1048, 264, 0, "sm_90", hdr, dts[t]);
    }
    setenv("DUALTIME_GEMM_VARIANT", "wg2", 1);
    compile_typed(DT_OP_GEMM, 1024, 1024, 1024, 0, "sm_90", hdr, DT_BF16);
    unsetenv("DUALTIME_GEMM_SPLITK");
    setenv("DUALTIME_GEMM_BN", "64", 1);
    g_expect = "tile=128x64x64 stages=8";
    compile_typed(DT_OP_GEMM, 1000, 1048, 264, 0, "sm_90", hdr, DT_F16); /* tails, BN 64 */
    unsetenv("DUALTIME_GEMM_BN");
    setenv("DUALTIME_GEMM_VARIANT", "wg1", 1);
    g_expect = "variant=tc1 (fallback: arch sm_80 has no wgmma)";
    compile_typed(DT_OP_GEMM, 1024, 1024, 1024, 0, "sm_80", hdr, DT_F16);
    g_expect = "variant=wg1";
    compile_typed(DT_OP_GEMM, 1024, 1024, 1024, 0, "compute_90", hdr, DT_BF16); /* PTX */
    g_expect = NULL;
    static const struct { const char *var, *val; dt_dtype dt; } bad[] = {
        {"DUALTIME_GEMM_BN", "96", DT_BF16},
        {"DUALTIME_GEMM_BN", "32", DT_BF16},
        {"DUALTIME_GEMM_FILL", "2", DT_F16},
        {"DUALTIME_GEMM_SPLITK", "4", DT_BF16},
        {"DUALTIME_GEMM_VARIANT", "wg1", DT_F32},
        {"DUALTIME_GEMM_VARIANT", "wg9", DT_F16},
        {"DUALTIME_GEMM_VARIANT", "wg2", DT_F32},
        {"DUALTIME_GEMM_VARIANT", "wg3", DT_F32},
        {"DUALTIME_GEMM_VARIANT", "wg4", DT_F32},
        {"DUALTIME_GEMM_STAGES", "9", DT_BF16},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dt_case_layout L;
        dt_layout_make_typed(&L, DT_OP_GEMM, 1024, 1024, 1024, 0, bad[i].dt);
        dt_cuda_plan p;
        dt_err err = {{0}};
        setenv(bad[i].var, bad[i].val, 1);
        dt_status st = dt_cuda_plan_make(&L, "sm_90", 132, &p, &err);
        unsetenv(bad[i].var);
        setenv("DUALTIME_GEMM_VARIANT", "wg1", 1);
        const int refused = st == DT_EINVAL && strstr(err.msg, bad[i].var);
        CHECK(refused, "%s=%s %s: status %d, message: %s", bad[i].var, bad[i].val,
              dt_dtype_name(bad[i].dt), (int)st, st == DT_OK ? "-" : err.msg);
        if (refused) printf("ok   %s=%s for %s refused: %s\n", bad[i].var, bad[i].val,
                            dt_dtype_name(bad[i].dt), err.msg);
    }
    unsetenv("DUALTIME_GEMM_VARIANT");
    if (!keep || !*keep) unlink(cubin);
}

/* The FP32 FFMA ceiling kernel (kernels/cuda/ceil_ffma.cu, compiled by
 * backend_cuda_flops.c with these options): the cubin has the symbol, and the PTX loop
 * body holds exactly CHAINS x UNROLL fma.rn.f32 (the FLOP count the ceiling divides by:
 * dt_cuda_ffma_flops); without the -D options the source refuses to compile. */
static void ffma_ceiling_case(void) {
    char *src = NULL, *image = NULL;
    size_t bytes = 0;
    dt_err err = {{0}};
    REQUIRE(dt_cuda_source_load("ceil_ffma.cu", &src, NULL, &err) == DT_OK, "ceil_ffma.cu: %s",
            err.msg);
    for (int ptx = 0; ptx < 2; ptx++) {
        dt_cuda_plan p;
        memset(&p, 0, sizeof p);
        snprintf(p.kernel_name, sizeof p.kernel_name, "dt_ceil_ffma");
        snprintf(p.opts[0], sizeof p.opts[0], "--gpu-architecture=%s", ptx ? "compute_90" : "sm_90");
        snprintf(p.opts[1], sizeof p.opts[1], "-DCEIL_CHAINS=%d", DT_FFMA_CHAINS);
        snprintf(p.opts[2], sizeof p.opts[2], "-DCEIL_UNROLL=%d", DT_FFMA_UNROLL);
        p.nopts = 3;
        free(image);
        image = NULL;
        REQUIRE(dt_cuda_nvrtc_compile("ceil_ffma.cu", src, NULL, &p, &image, &bytes, &err) == DT_OK,
                "ceil_ffma.cu %s: %s", p.opts[0], err.msg);
        CHECK(contains(image, bytes, "dt_ceil_ffma"), "ceil_ffma %s: no symbol", p.opts[0]);
        if (ptx) {
            int fmas = 0;
            for (const char *q = image; (q = strstr(q, "fma.rn.f32")) != NULL; q++) fmas++;
            CHECK(fmas == DT_FFMA_CHAINS * DT_FFMA_UNROLL, "ceil_ffma PTX: %d fma.rn.f32 (want %d)",
                  fmas, DT_FFMA_CHAINS * DT_FFMA_UNROLL);
            printf("ok   ceil_ffma: %zu-byte PTX, %d fma.rn.f32 a round; %.3g FLOP a launch on 132 SMs\n",
                   bytes, fmas, dt_cuda_ffma_flops(132));
        }
        /* the same without the -D options: refused */
        p.nopts = 1;
        char *bad = NULL;
        size_t bad_bytes = 0;
        dt_status st = dt_cuda_nvrtc_compile("ceil_ffma.cu", src, NULL, &p, &bad, &bad_bytes, &err);
        CHECK(st != DT_OK && strstr(err.msg, "CEIL_CHAINS"), "ceil_ffma without -D: status %d %s",
              (int)st, err.msg);
        free(bad);
    }
done:
    free(src);
    free(image);
}

int main(int argc, char **argv) {
    g_verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    int maj = 0, min = 0;
    nvrtcVersion(&maj, &min);
    printf("NVRTC %d.%d, %d embedded kernel files\n", maj, min, dt_cuda_embedded_count);
    char *hdr = NULL;
    dt_err err;
    const int have_hdr = dt_cuda_source_load(DT_CUDA_COMMON_HEADER, &hdr, NULL, &err) == DT_OK;
    CHECK(have_hdr, "%s: %s", DT_CUDA_COMMON_HEADER, err.msg);
    if (!have_hdr) return dt_check_summary("test_nvrtc_compile");
    /* DUALTIME_NVRTC_TEST_ONLY=row-hint, sm-online or sgemm: only that group (a quick check
     * while iterating; sgemm: the FP32 gemm shape geometry, contiguous and as views) */
    const char *only = getenv("DUALTIME_NVRTC_TEST_ONLY");
    if (only && (strcmp(only, "row-hint") == 0 || strcmp(only, "sm-online") == 0 ||
                 strcmp(only, "sgemm") == 0)) {
        if (strcmp(only, "row-hint") == 0)
            row_hint_cases(hdr);
        else if (strcmp(only, "sm-online") == 0)
            sm_online_cases(hdr);
        else
            for (int v = 0; v < 2; v++) thin_gemm_cases(v, hdr);
        free(hdr);
        return dt_check_summary("test_nvrtc_compile");
    }
    /* every row/elementwise op: tails, warp- and block-per-row, large, multi-pass rows */
    static const int64_t rows[][2] = {{1, 127}, {17, 257}, {128, 1024}, {1024, 4096},
                                      {8192, 8192}, {3, 20000}, {4, 40000}};
    static const int64_t gemms[][3] = {{127, 193, 61}, {513, 257, 129}, {1024, 1024, 1024},
                                       {4096, 4096, 4096}, {64, 64, 64},
                                       {1537, 1539, 131}}; /* 128x128 tile with tails */
    /* gemm variants: unset (default, must be v2), v1, v2 */
    static const char *variants[][2] = {{NULL, "variant=v2"}, {"v1", "variant=v1"},
                                        {"v2", "variant=v2"}};
    unsetenv("DUALTIME_GEMM_BK");
    for (int op = 0; op < DT_OP_COUNT; op++) {
        for (int views = 0; views < 2; views++) {
            if (dt_op_get((dt_op)op)->is_gemm) {
                for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
                    if (variants[v][0])
                        setenv("DUALTIME_GEMM_VARIANT", variants[v][0], 1);
                    else
                        unsetenv("DUALTIME_GEMM_VARIANT");
                    g_expect = variants[v][1];
                    for (size_t i = 0; i < sizeof gemms / sizeof gemms[0]; i++)
                        compile_case((dt_op)op, gemms[i][0], gemms[i][1], gemms[i][2], views,
                                     "sm_90", hdr);
                }
                /* v2's 128x128 tile: 16-deep K-step by default, 8 on request */
                setenv("DUALTIME_GEMM_VARIANT", "v2", 1);
                g_expect = "tile=128x128x16";
                compile_case((dt_op)op, 4096, 4096, 4096, views, "sm_90", hdr);
                compile_case((dt_op)op, 1537, 1539, 131, views, "sm_90", hdr);
                setenv("DUALTIME_GEMM_BK", "8", 1);
                g_expect = "tile=128x128x8";
                compile_case((dt_op)op, 4096, 4096, 4096, views, "sm_90", hdr);
                compile_case((dt_op)op, 1537, 1539, 131, views, "sm_90", hdr);
                g_expect = NULL;
                unsetenv("DUALTIME_GEMM_BK");
                unsetenv("DUALTIME_GEMM_VARIANT");
                thin_gemm_cases(views, hdr);
            } else {
                for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
                    compile_case((dt_op)op, rows[i][0], rows[i][1], 0, views, "sm_90", hdr);
            }
        }
    }
    /* small problems fill the SMs (few rows longer than 128: a 128-thread block per row,
     * else fewer warps per block; elementwise: one item per thread);
     * DUALTIME_LAUNCH_FILL=0 gives the v1 geometry; DUALTIME_ROW_TPR forces threads per row */
    unsetenv("DUALTIME_LAUNCH_FILL");
    unsetenv("DUALTIME_ROW_TPR");
    static const struct { dt_op op; int64_t m, n; const char *fill, *tpr, *expect; } geo[] = {
        {DT_OP_RMSNORM, 128, 1024, NULL, NULL, "block-per-row grid=128 block=128 "},
        {DT_OP_SOFTMAX, 17, 257, NULL, NULL, "block-per-row grid=17 block=128 "},
        {DT_OP_SOFTMAX, 1, 127, NULL, NULL, "warp-per-row grid=1 block=32 "},
        {DT_OP_SUM, 100, 128, NULL, NULL, "warp-per-row grid=100 block=32 "},
        {DT_OP_LAYERNORM, 8192, 1024, NULL, NULL, "warp-per-row grid=1024 block=256 "},
        {DT_OP_LAYERNORM, 1024, 1024, NULL, NULL, "block-per-row grid=1024 block=128 "},
        {DT_OP_LAYERNORM, 1056, 1024, NULL, NULL, "warp-per-row grid=132 block=256 "},
        {DT_OP_LAYERNORM, 1048, 1024, NULL, NULL, "block-per-row grid=1048 block=128 "},
        {DT_OP_RMSNORM, 128, 1024, "1", "32", "warp-per-row grid=128 block=32 "},
        {DT_OP_ADD, 128, 1024, NULL, NULL, "grid=128 block=256 items/thread=1 "},
        /* 2^20 float4s: 4 a thread (1024 blocks) and 2 (2048) leave fewer than 16 blocks
         * an SM, so 1 (4096 blocks); 8192^2 keeps 4 a thread */
        {DT_OP_GELU_ADD, 1024, 4096, NULL, NULL, "grid=4096 block=256 items/thread=1 "},
        {DT_OP_ADD, 8192, 8192, NULL, NULL, "grid=16384 block=256 items/thread=4 "},
        /* contiguous, N % 4 != 0: float4 items over the flat range (1000*1001/4 = 250250
         * items; 16 blocks an SM at least: 1 a thread, 978 blocks), the last 2 elements
         * scalar; DUALTIME_ELEM_WAVES=1 (below): 4 a thread, 245 blocks */
        {DT_OP_ADD, 1000, 1001, NULL, NULL, "grid=978 block=256 items/thread=1 vec=4 contiguous flat-tail"},
        {DT_OP_RMSNORM, 128, 1024, "0", NULL, "warp-per-row grid=16 block=256 "},
        {DT_OP_ADD, 128, 1024, "0", NULL, "grid=32 block=256 items/thread=4 "},
        {DT_OP_SOFTMAX, 128, 1024, NULL, "128", "block-per-row grid=128 block=128 "},
        {DT_OP_CROSS_ENTROPY, 64, 4096, NULL, "32", "warp-per-row grid=64 block=32 "},
        {DT_OP_SUM, 128, 1024, "1", "256", "block-per-row grid=128 block=256 "},
    };
    /* layernorm rows over 16384 with a row an SM: the default plan is the staged row,
     * option for option the plan DUALTIME_ROW_SMEM=2 gives (the one measured on the H200,
     * docs/perf.md "Issue 18, session 9", rule 4); few rows and rows <= 16384 keep theirs,
     * DUALTIME_ROW_LN_STAGE=0 the in-register rows */
    {
        static const struct { int64_t m, n; int same; } ln[] = {
            {1024, 32000, 1}, {2048, 20000, 1}, {1024, 24000, 1}, {132, 16392, 1},
            {131, 20000, 0}, {8192, 16384, 0}};
        static const dt_dtype dts[] = {DT_F32, DT_BF16};
        for (size_t i = 0; i < sizeof ln / sizeof ln[0]; i++)
            for (size_t t = 0; t < 2; t++) {
                dt_case_layout L;
                dt_layout_make_typed(&L, DT_OP_LAYERNORM, ln[i].m, ln[i].n, 0, 0, dts[t]);
                dt_cuda_plan a, b, c;
                const int ok_a = dt_cuda_plan_make(&L, "sm_90", 132, &a, &err) == DT_OK;
                setenv("DUALTIME_ROW_SMEM", "2", 1);
                const int ok_b = dt_cuda_plan_make(&L, "sm_90", 132, &b, &err) == DT_OK;
                unsetenv("DUALTIME_ROW_SMEM");
                setenv("DUALTIME_ROW_LN_STAGE", "0", 1);
                const int ok_c = dt_cuda_plan_make(&L, "sm_90", 132, &c, &err) == DT_OK;
                unsetenv("DUALTIME_ROW_LN_STAGE");
                int same = ok_a && ok_b && a.nopts == b.nopts && strcmp(a.summary, b.summary) == 0 &&
                           a.grid[0] == b.grid[0] && a.block[0] == b.block[0] &&
                           a.shared_bytes == b.shared_bytes;
                for (int q = 0; same && q < a.nopts; q++) same = strcmp(a.opts[q], b.opts[q]) == 0;
                CHECK(ok_a && ok_b && ok_c && same == ln[i].same &&
                          (strstr(a.summary, "row-staged-in-smem") != NULL) == ln[i].same &&
                          !strstr(c.summary, "row-staged-in-smem"),
                      "layernorm %lldx%lld %s: default %s | SMEM=2 %s | LN_STAGE=0 %s",
                      (long long)ln[i].m, (long long)ln[i].n, dt_dtype_name(dts[t]), a.summary,
                      b.summary, c.summary);
            }
    }
    /* sum's row head: f32 contiguous odd N yes, f32 views no (scalar) */
    g_expect = "vec=4 streaming row-head";
    compile_case(DT_OP_SUM, 6000, 6001, 0, 0, "sm_90", hdr);
    g_expect = "vec=1 streaming";
    compile_case(DT_OP_SUM, 300, 30000, 0, 1, "sm_90", hdr);
    setenv("DUALTIME_ELEM_WAVES", "1", 1);
    g_expect = "grid=245 block=256 items/thread=4 vec=4 contiguous flat-tail";
    compile_case(DT_OP_ADD, 1000, 1001, 0, 0, "sm_90", hdr);
    unsetenv("DUALTIME_ELEM_WAVES");
    for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++) {
        if (geo[i].fill) setenv("DUALTIME_LAUNCH_FILL", geo[i].fill, 1);
        if (geo[i].tpr) setenv("DUALTIME_ROW_TPR", geo[i].tpr, 1);
        g_expect = geo[i].expect;
        /* row geometry does not depend on alignment; elementwise items count float4s
         * only when contiguous (views are scalar), so those are checked contiguous */
        const int elementwise = geo[i].op == DT_OP_ADD || geo[i].op == DT_OP_GELU_ADD;
        for (int views = 0; views < (elementwise ? 1 : 2); views++)
            compile_case(geo[i].op, geo[i].m, geo[i].n, 0, views, "sm_90", hdr);
        g_expect = NULL;
        unsetenv("DUALTIME_LAUNCH_FILL");
        unsetenv("DUALTIME_ROW_TPR");
    }

    narrow_cases(hdr);
    narrow_thin_cases(hdr);
    long_row_cases(hdr);
    wg1_cases(hdr);
    ffma_ceiling_case();

    /* PTX path */
    compile_case(DT_OP_SOFTMAX, 17, 257, 0, 1, "compute_90", hdr);
    compile_case(DT_OP_GEMM, 127, 193, 61, 0, "compute_90", hdr);
    setenv("DUALTIME_GEMM_VARIANT", "v1", 1);
    compile_case(DT_OP_GEMM, 127, 193, 61, 0, "compute_90", hdr);
    unsetenv("DUALTIME_GEMM_VARIANT");

    /* a bad variant name (or K-step) must be refused by the plan */
    {
        static const char *bad[][2] = {{"DUALTIME_GEMM_VARIANT", "v3"}, {"DUALTIME_GEMM_BK", "12"},
                                       {"DUALTIME_LAUNCH_FILL", "yes"},
                                       {"DUALTIME_ROW_TPR", "48"}, {"DUALTIME_ROW_TPR", "2048"},
                                       {"DUALTIME_ROW_TPR", "64x"},
                                       {"DUALTIME_ROW_CLUSTER", "4"},
                                       {"DUALTIME_ROW_ELEMS", "24"},
                                       {"DUALTIME_ROW_FASTEXP", "yes"},
                                       {"DUALTIME_ELEM_FLAT", "2"},
                                       {"DUALTIME_ROW_HEAD", "x"},
                                       {"DUALTIME_ELEM_WAVES", "0"},
                                       {"DUALTIME_ROW_LN_STAGE", "2"}};
        for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
            dt_case_layout L;
            if (i < 2)
                dt_layout_make(&L, DT_OP_GEMM, 4096, 4096, 4096, 0);
            else
                dt_layout_make(&L, DT_OP_SOFTMAX, 128, 1024, 0, 0);
            dt_cuda_plan p;
            setenv(bad[i][0], bad[i][1], 1);
            dt_status st = dt_cuda_plan_make(&L, "sm_90", 132, &p, &err);
            unsetenv(bad[i][0]);
            const int refused = st == DT_EINVAL && strstr(err.msg, bad[i][0]);
            CHECK(refused, "%s=%s: status %d, message: %s", bad[i][0], bad[i][1], (int)st,
                  st == DT_OK ? "-" : err.msg);
            if (refused) printf("ok   %s=%s refused: %s\n", bad[i][0], bad[i][1], err.msg);
        }
    }

    /* a broken source must fail with the compiler's log in the message */
    {
        dt_case_layout L;
        dt_layout_make(&L, DT_OP_ADD, 4, 4, 0, 0);
        dt_cuda_plan p;
        char *image = NULL;
        size_t bytes = 0;
        DT_ASSERT(dt_cuda_plan_make(&L, "sm_90", 132, &p, &err) == DT_OK);
        dt_status st = dt_cuda_nvrtc_compile(
            "broken.cu", "extern \"C\" __global__ void dt_add_f32() { undeclared_thing = 1; }",
            hdr, &p, &image, &bytes, &err);
        const int reported = st != DT_OK && strstr(err.msg, "undeclared_thing");
        CHECK(reported, "broken source: status %d, message: %s", (int)st, err.msg);
        if (reported) printf("ok   broken source reports: %.160s\n", err.msg);
        free(image);
    }

    /* the one check family's NVRTC part (src/common/dt_cuda_check.h), without a driver:
     * a refused call gives file:line, the call, the name, the code and a description */
    {
        char line[DT_CUDA_CHECK_TEXT_LEN];
        int ok = DT_CUDA_CHECK(nvrtc, nvrtcCreateProgram(NULL, "x", "x.cu", 0, NULL, NULL),
                               line, sizeof line);
        if (ok || !strstr(line, "test_nvrtc_compile.c:") ||
            !strstr(line, "nvrtcCreateProgram(NULL, \"x\", \"x.cu\", 0, NULL, NULL) failed: "
                          "NVRTC_ERROR_INVALID_PROGRAM (4): invalid program")) {
            printf("FAIL nvrtc check line: ok=%d: %s\n", ok, line);
            g_fail++;
        } else {
            printf("ok   nvrtc check line: %s\n", line);
            g_pass++;
        }
    }
    free(hdr);
    return dt_check_summary("test_nvrtc_compile");
}
