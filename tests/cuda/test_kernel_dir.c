/* test_kernel_dir.c — the GPU-free half of the native worker's --kernel-dir (a user's
 * CUDA kernels, workers/native/dt_kernel_dir.h; docs/cuda-backend.md, "User kernel
 * directories"), without a GPU or libcuda:
 * - a missing directory and a plain file are unavailable with the reason;
 * - examples/cuda-dir: add.cu and softmax.cu are found, gemm is not; their plans have the
 *   default geometry (add: ceil(M*N/256) blocks, softmax: M blocks, 256 threads) and the
 *   shape macros (views: LDA > N), and NVRTC compiles them to PTX with the entry points
 *   `add` and `softmax`; a bf16 case asks for add_bf16 first and compiles with DT_ELEM=1;
 * - examples/ptx-dir: the PTX files are found and their entries take exactly the
 *   documented parameters (pointer and stride a buffer, then m, n);
 * - a `dualtime-launch:` line and an <op>.launch file set the geometry (the file wins);
 *   a bad item, a block over 1024 threads and a grid.y over 65535 are refused naming the
 *   file; two files for one op are refused; a broken .cu fails with the NVRTC log.
 * Run: ./test_kernel_dir SOURCE_DIR */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dt_check.h"
#include "dt_kernel_dir.h"

static char g_tmp[256];

static void put(const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        CHECK(0, "cannot write %s", path);
        return;
    }
    fputs(text, f);
    fclose(f);
}

static void drop(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    unlink(path);
}

static int has_opt(const dt_cuda_plan *p, const char *opt) {
    for (int i = 0; i < p->nopts; i++)
        if (strcmp(p->opts[i], opt) == 0) return 1;
    return 0;
}

/* Plans (and for a .cu compiles to PTX) op of dir at m x n (k) in dtype; 0 on failure. */
static int plan_op(const char *dir, dt_op op, int64_t m, int64_t n, int64_t k, int views,
                   dt_dtype dtype, dt_cuda_plan *p, char **ptx, dt_err *err) {
    dt_kdir_file f;
    dt_case_layout L;
    dt_layout_make_typed(&L, op, m, n, k, views, dtype);
    if (ptx) *ptx = NULL;
    if (dt_kdir_find(dir, op, &f, err) != DT_OK || f.kind == DT_KDIR_NONE) return 0;
    char *text = NULL;
    size_t len = 0;
    if (dt_kdir_read(f.path, &text, &len, err) != DT_OK) return 0;
    dt_status st = dt_kdir_plan(dir, &f, f.kind == DT_KDIR_CUBIN ? NULL : text, &L, "compute_90",
                                p, err);
    if (st == DT_OK && f.kind == DT_KDIR_CU && ptx) {
        size_t bytes = 0;
        st = dt_cuda_nvrtc_compile(f.name, text, NULL, p, ptx, &bytes, err);
    } else if (st == DT_OK && ptx) {
        *ptx = text;
        text = NULL;
    }
    free(text);
    return st == DT_OK;
}

static void availability(const char *src) {
    dt_err err = {{0}};
    CHECK(dt_kdir_check("/nonexistent/dt-kdir", &err) == DT_EUNAVAIL &&
              strstr(err.msg, "no such directory"), "missing dir: %s", err.msg);
    char file[512];
    snprintf(file, sizeof file, "%s/examples/cuda-dir/add.cu", src);
    CHECK(dt_kdir_check(file, &err) == DT_EUNAVAIL && strstr(err.msg, "not a directory"),
          "a file: %s", err.msg);
    char names[2][64];
    CHECK(dt_kdir_entries(DT_OP_ADD, DT_F32, names) == 2 && strcmp(names[0], "add_f32") == 0 &&
          strcmp(names[1], "add") == 0, "f32 entries %s, %s", names[0], names[1]);
    CHECK(dt_kdir_entries(DT_OP_SOFTMAX, DT_BF16, names) == 1 &&
          strcmp(names[0], "softmax_bf16") == 0, "bf16 entry %s", names[0]);
}

static void cuda_dir(const char *src) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/examples/cuda-dir", src);
    dt_err err = {{0}};
    dt_kdir_file f;
    CHECK(dt_kdir_check(dir, &err) == DT_OK, "%s", err.msg);
    CHECK(dt_kdir_find(dir, DT_OP_ADD, &f, &err) == DT_OK && f.kind == DT_KDIR_CU &&
          strcmp(f.name, "add.cu") == 0, "add.cu found");
    CHECK(dt_kdir_find(dir, DT_OP_GEMM, &f, &err) == DT_OK && f.kind == DT_KDIR_NONE,
          "no gemm file: unsupported");
    dt_cuda_plan p;
    char *ptx = NULL;
    CHECK(plan_op(dir, DT_OP_ADD, 17, 257, 0, 1, DT_F32, &p, &ptx, &err), "add.cu: %s", err.msg);
    CHECK(p.grid[0] == 18 && p.grid[1] == 1 && p.block[0] == 256 && p.block[1] == 1,
          "add default geometry: %s", p.summary);
    CHECK(has_opt(&p, "-DM=17") && has_opt(&p, "-DN=257") && has_opt(&p, "-DLDO=257") &&
          has_opt(&p, "-DDT_ELEM=0") && has_opt(&p, "-DDT_BLOCK_X=256") &&
          strcmp(p.opts[0], "--gpu-architecture=compute_90") == 0, "add macros");
    CHECK(!has_opt(&p, "-DLDA=257") && !has_opt(&p, "-DLDB=257"), "views: LDA, LDB > N");
    CHECK(ptx && strstr(ptx, ".entry add("), "add.cu compiles with entry add");
    free(ptx);
    CHECK(plan_op(dir, DT_OP_SOFTMAX, 1000, 4096, 0, 0, DT_F32, &p, &ptx, &err), "softmax.cu: %s",
          err.msg);
    CHECK(p.grid[0] == 1000 && p.block[0] == 256 && has_opt(&p, "-DLDA=4096"),
          "softmax default: a block a row: %s", p.summary);
    CHECK(ptx && strstr(ptx, ".entry softmax("), "softmax.cu compiles with entry softmax");
    free(ptx);
    CHECK(plan_op(dir, DT_OP_ADD, 4, 64, 0, 0, DT_BF16, &p, &ptx, &err), "add.cu bf16: %s",
          err.msg);
    CHECK(strcmp(p.kernel_name, "add_bf16") == 0 && has_opt(&p, "-DDT_ELEM=1"),
          "bf16: entry add_bf16 first, DT_ELEM=1 (%s)", p.kernel_name);
    free(ptx);
}

/* The PTX's entry takes parameters 0..count-1 and no more. */
static void check_params(const char *ptx, const char *entry, int count) {
    char has[96], beyond[96];
    snprintf(has, sizeof has, "%s_param_%d", entry, count - 1);
    snprintf(beyond, sizeof beyond, "%s_param_%d", entry, count);
    CHECK(ptx && strstr(ptx, has) && !strstr(ptx, beyond), "%s takes %d parameters", entry, count);
}

static void ptx_dir(const char *src) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/examples/ptx-dir", src);
    dt_err err = {{0}};
    dt_cuda_plan p;
    char *ptx = NULL;
    CHECK(plan_op(dir, DT_OP_ADD, 1024, 4096, 0, 0, DT_F32, &p, &ptx, &err), "add.ptx: %s",
          err.msg);
    CHECK(p.nopts == 0 && strstr(p.summary, "add.ptx") && p.grid[0] == 16384,
          "PTX: no NVRTC options, elements grid: %s", p.summary);
    CHECK(ptx && strstr(ptx, ".entry add("), "add.ptx has the entry add");
    check_params(ptx, "add", 3 * 2 + 2); /* a, lda, b, ldb, out, ldo, m, n */
    free(ptx);
    CHECK(plan_op(dir, DT_OP_SOFTMAX, 17, 257, 0, 1, DT_F32, &p, &ptx, &err), "softmax.ptx: %s",
          err.msg);
    CHECK(p.grid[0] == 17, "softmax.ptx: a block a row");
    check_params(ptx, "softmax", 2 * 2 + 2); /* a, lda, out, ldo, m, n */
    free(ptx);
}

static const char k_softmax_cu[] =
    "// dualtime-launch: block=128 grid=64\n"
    "extern \"C\" __global__ void softmax(const float *a, float *out) {\n"
    "  for (long long r = blockIdx.x; r < M; r += gridDim.x)\n"
    "    for (int j = threadIdx.x; j < N; j += DT_BLOCK_X) out[r * LDO + j] = a[r * LDA + j];\n"
    "}\n";

static void directives(void) {
    dt_err err = {{0}};
    dt_cuda_plan p;
    char *ptx = NULL;
    put("softmax.cu", k_softmax_cu);
    CHECK(plan_op(g_tmp, DT_OP_SOFTMAX, 300, 500, 0, 0, DT_F32, &p, &ptx, &err), "directive: %s",
          err.msg);
    CHECK(p.grid[0] == 64 && p.block[0] == 128 && has_opt(&p, "-DDT_BLOCK_X=128"),
          "the file's directive: %s", p.summary);
    CHECK(ptx && strstr(ptx, ".entry softmax("), "directive kernel compiles");
    free(ptx);
    put("softmax.launch", "block=32x8 grid=rows smem=1024\n");
    CHECK(plan_op(g_tmp, DT_OP_SOFTMAX, 300, 500, 0, 0, DT_F32, &p, NULL, &err), "%s", err.msg);
    CHECK(p.grid[0] == 300 && p.block[0] == 32 && p.block[1] == 8 && p.shared_bytes == 1024,
          "softmax.launch wins: %s", p.summary);
    put("softmax.launch", "block=64 grid=banana\n");
    CHECK(!plan_op(g_tmp, DT_OP_SOFTMAX, 3, 5, 0, 0, DT_F32, &p, NULL, &err) &&
          strstr(err.msg, "softmax.launch") && strstr(err.msg, "grid=banana"),
          "bad item refused: %s", err.msg);
    put("softmax.launch", "block=64x32\n");
    CHECK(!plan_op(g_tmp, DT_OP_SOFTMAX, 3, 5, 0, 0, DT_F32, &p, NULL, &err) &&
          strstr(err.msg, "1024 threads"), "2048 threads refused: %s", err.msg);
    put("softmax.launch", "block=1x1 grid=tiles\n");
    CHECK(!plan_op(g_tmp, DT_OP_SOFTMAX, 70000, 5, 0, 0, DT_F32, &p, NULL, &err) &&
          strstr(err.msg, "larger than CUDA launches"), "grid.y 70000 refused: %s", err.msg);
    drop("softmax.launch");
    /* gemm's default: 16x16 threads, a thread an output */
    put("gemm.cu", "extern \"C\" __global__ void gemm(const float *a, const float *b, float *c) {}\n");
    CHECK(plan_op(g_tmp, DT_OP_GEMM, 100, 40, 7, 0, DT_F32, &p, &ptx, &err), "gemm: %s", err.msg);
    CHECK(p.grid[0] == 3 && p.grid[1] == 7 && p.block[0] == 16 && p.block[1] == 16 &&
          has_opt(&p, "-DK=7"), "gemm default tiles: %s", p.summary);
    free(ptx);
    /* two files for one op */
    put("gemm.ptx", "// not really PTX\n");
    dt_kdir_file f;
    CHECK(dt_kdir_find(g_tmp, DT_OP_GEMM, &f, &err) == DT_EINVAL && strstr(err.msg, "keep one") &&
          strstr(err.msg, "gemm.cu") && strstr(err.msg, "gemm.ptx"), "ambiguous: %s", err.msg);
    drop("gemm.ptx");
    drop("gemm.cu");
    /* a broken .cu: the NVRTC log is in the error */
    put("add.cu", "extern \"C\" __global__ void add(const float *a, const float *b, float *out) {\n"
                  "  out[0] = a[0] + undeclared_thing;\n}\n");
    CHECK(!plan_op(g_tmp, DT_OP_ADD, 4, 4, 0, 0, DT_F32, &p, &ptx, &err) &&
          strstr(err.msg, "NVRTC compile of add.cu") && strstr(err.msg, "undeclared_thing"),
          "broken .cu: %s", err.msg);
    free(ptx);
    drop("add.cu");
    drop("softmax.cu");
}

int main(int argc, char **argv) {
    const char *src = argc > 1 ? argv[1] : DT_SOURCE_DIR;
    snprintf(g_tmp, sizeof g_tmp, "/tmp/dt-kdir-XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    availability(src);
    cuda_dir(src);
    ptx_dir(src);
    directives();
    rmdir(g_tmp);
    return dt_check_summary("test_kernel_dir");
}
