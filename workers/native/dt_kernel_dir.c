/* dt_kernel_dir.c — a user's directory of CUDA kernels (--kernel-dir; contract in
 * dt_kernel_dir.h and docs/cuda-backend.md, "User kernel directories"). */
#define _GNU_SOURCE
#include "dt_kernel_dir.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DT_KDIR_MAX_GRID_X 2147483647LL
#define DT_KDIR_MAX_GRID_YZ 65535LL

static const char *const k_ext[] = {NULL, ".cu", ".ptx", ".cubin"};

dt_status dt_kdir_check(const char *dir, dt_err *err) {
    struct stat sb;
    if (!dir || !*dir) return dt_fail(err, DT_EUNAVAIL, "--kernel-dir: empty directory name");
    if (stat(dir, &sb) != 0)
        return dt_fail(err, DT_EUNAVAIL, "--kernel-dir %s: %s", dir,
                       errno == ENOENT ? "no such directory" : strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return dt_fail(err, DT_EUNAVAIL, "--kernel-dir %s: not a directory", dir);
    return DT_OK;
}

dt_status dt_kdir_find(const char *dir, dt_op op, dt_kdir_file *f, dt_err *err) {
    memset(f, 0, sizeof *f);
    const char *name = dt_op_get(op)->name;
    char found[3][64];
    int nfound = 0;
    for (int k = DT_KDIR_CU; k <= DT_KDIR_CUBIN; k++) {
        char file[64], path[sizeof f->path];
        snprintf(file, sizeof file, "%s%s", name, k_ext[k]);
        int n = snprintf(path, sizeof path, "%s/%s", dir, file);
        struct stat sb;
        if (n < 0 || (size_t)n >= sizeof path || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        snprintf(found[nfound++], sizeof found[0], "%s", file);
        f->kind = (dt_kdir_kind)k;
        snprintf(f->name, sizeof f->name, "%s", file);
        snprintf(f->path, sizeof f->path, "%s", path);
    }
    if (nfound > 1) {
        f->kind = DT_KDIR_NONE;
        return dt_fail(err, DT_EINVAL, "--kernel-dir %s: op %s has %s and %s%s%s: keep one", dir,
                       name, found[0], found[1], nfound > 2 ? " and " : "",
                       nfound > 2 ? found[2] : "");
    }
    return DT_OK;
}

dt_status dt_kdir_read(const char *path, char **data, size_t *len, dt_err *err) {
    *data = NULL;
    *len = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return dt_fail(err, DT_EIO, "cannot open %s: %s", path, strerror(errno));
    long n = -1;
    if (fseek(fp, 0, SEEK_END) == 0) n = ftell(fp);
    if (n < 0 || fseek(fp, 0, SEEK_SET) != 0) {
        fclose(fp);
        return dt_fail(err, DT_EIO, "cannot size %s", path);
    }
    char *buf = dt_xmalloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, fp);
    fclose(fp);
    if (got != (size_t)n) {
        free(buf);
        return dt_fail(err, DT_EIO, "short read of %s", path);
    }
    buf[n] = 0;
    *data = buf;
    *len = (size_t)n;
    return DT_OK;
}

void dt_kdir_sha256(const void *data, size_t len, char out[65]) {
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    DT_ASSERT(ctx);
    DT_ASSERT(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1);
    DT_ASSERT(EVP_DigestUpdate(ctx, data, len) == 1);
    DT_ASSERT(EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == 32);
    EVP_MD_CTX_free(ctx);
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

int dt_kdir_entries(dt_op op, dt_dtype dtype, char names[2][64]) {
    const char *name = dt_op_get(op)->name;
    snprintf(names[0], 64, "%s_%s", name, dt_dtype_name(dtype));
    if (dtype != DT_F32) return 1;
    snprintf(names[1], 64, "%s", name);
    return 2;
}

/* ---- launch geometry ----------------------------------------------------------------- */

typedef enum grid_rule { GRID_ROWS, GRID_ELEMENTS, GRID_TILES, GRID_FIXED } grid_rule;

typedef struct launch_spec {
    long long block[2];
    grid_rule rule;
    long long grid[2]; /* GRID_FIXED */
    long long smem;
} launch_spec;

/* "X" or "XxY" of positive integers. */
static int parse_dims(const char *v, long long out[2]) {
    char *end = NULL;
    errno = 0;
    out[0] = strtoll(v, &end, 10);
    out[1] = 1;
    if (errno || end == v || out[0] < 1) return 0;
    if (*end == 'x') {
        const char *y = end + 1;
        out[1] = strtoll(y, &end, 10);
        if (errno || end == y || out[1] < 1) return 0;
    }
    return *end == '\0';
}

/* Applies the directive after "dualtime-launch:" (up to the end of its line) to ls. */
static dt_status parse_directive(const char *where, const char *line, launch_spec *ls,
                                 dt_err *err) {
    char buf[256];
    size_t n = strcspn(line, "\r\n");
    if (n >= sizeof buf) return dt_fail(err, DT_EINVAL, "%s: dualtime-launch line too long", where);
    memcpy(buf, line, n);
    buf[n] = 0;
    for (char *save = NULL, *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(t, '=');
        if (!eq) goto bad;
        *eq = 0;
        const char *key = t, *val = eq + 1;
        if (strcmp(key, "block") == 0) {
            if (!parse_dims(val, ls->block)) goto bad;
        } else if (strcmp(key, "grid") == 0) {
            if (strcmp(val, "rows") == 0) ls->rule = GRID_ROWS;
            else if (strcmp(val, "elements") == 0) ls->rule = GRID_ELEMENTS;
            else if (strcmp(val, "tiles") == 0) ls->rule = GRID_TILES;
            else if (parse_dims(val, ls->grid)) ls->rule = GRID_FIXED;
            else goto bad;
        } else if (strcmp(key, "smem") == 0) {
            char *end = NULL;
            ls->smem = strtoll(val, &end, 10);
            if (end == val || *end || ls->smem < 0 || ls->smem > 232448) goto bad;
        } else {
            goto bad;
        }
        continue;
    bad:
        return dt_fail(err, DT_EINVAL,
                       "%s: bad dualtime-launch item '%s%s%s' (expected block=X[xY], "
                       "grid=rows|elements|tiles|X[xY], smem=BYTES)",
                       where, t, eq ? "=" : "", eq ? eq + 1 : "");
    }
    return DT_OK;
}

/* The directive in text (the first line with the marker), if any. */
static dt_status directive_of(const char *where, const char *text, launch_spec *ls,
                              dt_err *err) {
    static const char marker[] = "dualtime-launch:";
    const char *at = text ? strstr(text, marker) : NULL;
    if (!at) return DT_OK;
    return parse_directive(where, at + sizeof marker - 1, ls, err);
}

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

/* The grid of ls for an m x n case (rows M, elements M*N, tiles N x M). */
static dt_status grid_of(const char *where, const launch_spec *ls, long long m, long long n,
                         unsigned grid[3], int *capped, dt_err *err) {
    long long gx = 1, gy = 1;
    *capped = 0;
    switch (ls->rule) {
    case GRID_ROWS: gx = m; break;
    case GRID_ELEMENTS: gx = ceil_div(m * n, ls->block[0] * ls->block[1]); break;
    case GRID_TILES:
        gx = ceil_div(n, ls->block[0]);
        gy = ceil_div(m, ls->block[1]);
        break;
    case GRID_FIXED:
        gx = ls->grid[0];
        gy = ls->grid[1];
        break;
    }
    if (gx > DT_KDIR_MAX_GRID_X) {
        if (ls->rule == GRID_FIXED) goto too_big;
        gx = DT_KDIR_MAX_GRID_X; /* grid-stride kernels cover the rest */
        *capped = 1;
    }
    if (gy > DT_KDIR_MAX_GRID_YZ) goto too_big;
    grid[0] = (unsigned)gx;
    grid[1] = (unsigned)gy;
    grid[2] = 1;
    return DT_OK;
too_big:
    return dt_fail(err, DT_EINVAL, "%s: grid %lldx%lld is larger than CUDA launches (x <= %lld, "
                   "y <= %lld)", where, gx, gy, DT_KDIR_MAX_GRID_X, DT_KDIR_MAX_GRID_YZ);
}

static const char *rule_name(grid_rule r) {
    return r == GRID_ROWS ? "rows" : r == GRID_ELEMENTS ? "elements" : r == GRID_TILES ? "tiles"
                                                                                     : "fixed";
}

static void add_opt(dt_cuda_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_opt(dt_cuda_plan *p, const char *fmt, ...) {
    DT_ASSERT(p->nopts < DT_CUDA_MAX_OPTS);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->opts[p->nopts++], DT_CUDA_OPT_LEN, fmt, ap);
    va_end(ap);
}

/* The shape and dtype macros of a .cu, as the built-in kernels get them, plus the block. */
static void cu_options(const dt_case_layout *L, const char *arch, const launch_spec *ls,
                       dt_cuda_plan *p) {
    const dt_op_info *info = dt_op_get(L->op);
    add_opt(p, "--gpu-architecture=%s", arch);
    add_opt(p, "-default-device");
    add_opt(p, "--std=c++17");
    add_opt(p, "-lineinfo");
    add_opt(p, "-DM=%lld", (long long)L->m);
    add_opt(p, "-DN=%lld", (long long)L->n);
    if (info->is_gemm) add_opt(p, "-DK=%lld", (long long)L->k);
    add_opt(p, "-DLDA=%lld", (long long)L->buf[0].row_stride);
    if (info->buffers[1].viewable) add_opt(p, "-DLDB=%lld", (long long)L->buf[1].row_stride);
    add_opt(p, "-DLDO=%lld", (long long)L->buf[dt_layout_output(L)].row_stride);
    add_opt(p, "-DDT_ELEM=%d", L->dtype == DT_BF16 ? 1 : L->dtype == DT_F16 ? 2 : 0);
    add_opt(p, "-DDT_BLOCK_X=%lld", ls->block[0]);
    add_opt(p, "-DDT_BLOCK_Y=%lld", ls->block[1]);
}

dt_status dt_kdir_plan(const char *dir, const dt_kdir_file *f, const char *text,
                       const dt_case_layout *L, const char *arch, dt_cuda_plan *p,
                       dt_err *err) {
    memset(p, 0, sizeof *p);
    DT_ASSERT(f->kind != DT_KDIR_NONE);
    const dt_op_info *info = dt_op_get(L->op);
    int elementwise = L->op == DT_OP_ADD || L->op == DT_OP_GELU_ADD;
    launch_spec ls = {{256, 1}, elementwise ? GRID_ELEMENTS : GRID_ROWS, {1, 1}, 0};
    if (info->is_gemm) {
        ls.block[0] = ls.block[1] = 16;
        ls.rule = GRID_TILES;
    }
    dt_status st = f->kind == DT_KDIR_CUBIN ? DT_OK : directive_of(f->name, text, &ls, err);
    if (st != DT_OK) return st;
    /* DIR/<op>.launch wins over the file's own line */
    char lpath[4200], *ltext = NULL;
    size_t llen = 0;
    snprintf(lpath, sizeof lpath, "%s/%s.launch", dir, info->name);
    struct stat sb;
    if (stat(lpath, &sb) == 0) {
        if ((st = dt_kdir_read(lpath, &ltext, &llen, err)) != DT_OK) return st;
        char where[80];
        snprintf(where, sizeof where, "%s.launch", info->name);
        st = strstr(ltext, "dualtime-launch:") ? directive_of(where, ltext, &ls, err)
                                               : parse_directive(where, ltext, &ls, err);
        free(ltext);
        if (st != DT_OK) return st;
    }
    if (ls.block[0] * ls.block[1] > 1024)
        return dt_fail(err, DT_EINVAL, "%s: block %lldx%lld has more than 1024 threads", f->name,
                       ls.block[0], ls.block[1]);
    int capped = 0;
    if ((st = grid_of(f->name, &ls, L->m, L->n, p->grid, &capped, err)) != DT_OK) return st;
    p->block[0] = (unsigned)ls.block[0];
    p->block[1] = (unsigned)ls.block[1];
    p->block[2] = 1;
    p->shared_bytes = (unsigned)ls.smem;
    p->source_name = f->kind == DT_KDIR_CU ? "user.cu" : f->kind == DT_KDIR_PTX ? "user.ptx"
                                                                                : "user.cubin";
    char names[2][64];
    dt_kdir_entries(L->op, L->dtype, names);
    snprintf(p->kernel_name, sizeof p->kernel_name, "%s", names[0]);
    if (f->kind == DT_KDIR_CU) cu_options(L, arch, &ls, p);
    snprintf(p->summary, sizeof p->summary, "user %s grid=(%u,%u) block=(%u,%u) [%s%s] smem=%u",
             f->name, p->grid[0], p->grid[1], p->block[0], p->block[1], rule_name(ls.rule),
             capped ? ", capped" : "", p->shared_bytes);
    return DT_OK;
}
