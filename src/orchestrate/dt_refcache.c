/* dt_refcache.c — FP64 references on disk between rounds (see dt_refcache.h). */
#define _GNU_SOURCE
#include "dt_refcache.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../plan/dt_ops.h"

#define REF_MAGIC "DTREFv2" /* v2 (session 7): residual_layernorm scale takes mean|a+b| */
#define CHUNK_BYTES ((size_t)1 << 20)

/* The file header: every field that decides the reference, and the two checksums. */
typedef struct ref_header {
    char magic[8];
    int32_t op, dtype, inputs, views;
    int64_t m, n, k, rows, cols;
    uint64_t pristine_sum; /* dt_refcache_checksum of the whole pristine arena */
    int64_t arena_bytes;
    uint64_t data_sum;     /* dt_refcache_checksum of ref then scale (as one sum each) */
    uint64_t header_sum;   /* of the bytes above */
} ref_header;

void dt_refcache_init(dt_refcache *rc, const char *output_dir, const char *env) {
    memset(rc, 0, sizeof *rc);
    rc->mode = !env || !*env ? DT_REFCACHE_AUTO
               : strcmp(env, "0") == 0 ? DT_REFCACHE_OFF
               : strcmp(env, "all") == 0 ? DT_REFCACHE_ALL
                                         : DT_REFCACHE_AUTO;
    if (rc->mode != DT_REFCACHE_OFF && output_dir)
        snprintf(rc->dir, sizeof rc->dir, "%s/.scratch/ref", output_dir);
    if (!rc->dir[0]) rc->mode = DT_REFCACHE_OFF;
}

int dt_refcache_worth(const dt_refcache *rc, const dt_case_layout *L) {
    if (rc->mode == DT_REFCACHE_OFF) return 0;
    if (rc->mode == DT_REFCACHE_ALL) return 1;
    const dt_buffer_layout *O = &L->buf[dt_layout_output(L)];
    double elems = (double)O->rows * (double)O->cols;
    return elems > 0 && dt_op_flops(L->op, L->m, L->n, L->k) / elems >=
                            DT_REFCACHE_MIN_FLOPS_PER_ELEM;
}

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

/* One chunk: four lanes of multiply-rotate over 8-byte words, the tail bytewise. */
static uint64_t chunk_sum(const uint8_t *p, size_t n, uint64_t seed) {
    const uint64_t P1 = 0x9e3779b185ebca87ull, P2 = 0xc2b2ae3d27d4eb4full;
    uint64_t v[4] = {seed + P1, seed ^ P2, seed - P1, seed + (P2 << 1)};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int l = 0; l < 4; l++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * (size_t)l, 8);
            v[l] = rotl64(v[l] + w * P2, 31) * P1;
        }
    uint64_t h = rotl64(v[0], 1) + rotl64(v[1], 7) + rotl64(v[2], 12) + rotl64(v[3], 18);
    for (; i < n; i++) h = (h ^ p[i]) * P1;
    return mix64(h ^ (uint64_t)n);
}

uint64_t dt_refcache_checksum(const void *p, size_t n) {
    if (n == 0) return 0;
    const uint8_t *b = p;
    int64_t chunks = (int64_t)((n + CHUNK_BYTES - 1) / CHUNK_BYTES);
    uint64_t *part = dt_xmalloc((size_t)chunks * sizeof *part);
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; c++) {
        size_t at = (size_t)c * CHUNK_BYTES;
        size_t len = n - at < CHUNK_BYTES ? n - at : CHUNK_BYTES;
        part[c] = chunk_sum(b + at, len, (uint64_t)c);
    }
    uint64_t h = (uint64_t)n;
    for (int64_t c = 0; c < chunks; c++) h = mix64(h ^ part[c]) + (uint64_t)c;
    free(part);
    return h;
}

void dt_refcache_path(const dt_refcache *rc, const char *case_id, int set, char *path,
                      size_t len) {
    char id[256];
    size_t j = 0;
    for (const char *s = case_id; *s && j + 1 < sizeof id; s++) /* a file name, not a path */
        id[j++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                          (*s >= '0' && *s <= '9') || *s == '-' || *s == '.' || *s == '_'
                      ? *s
                      : '_';
    id[j] = 0;
    snprintf(path, len, "%s/%s.set%d.ref", rc->dir, id, set);
}

static void header_make(ref_header *h, const dt_case_layout *L, uint64_t pristine_sum,
                        int64_t rows, int64_t cols) {
    memset(h, 0, sizeof *h);
    memcpy(h->magic, REF_MAGIC, sizeof h->magic);
    h->op = (int32_t)L->op;
    h->dtype = (int32_t)L->dtype;
    h->inputs = (int32_t)L->inputs;
    h->views = L->views;
    h->m = L->m;
    h->n = L->n;
    h->k = L->k;
    h->rows = rows;
    h->cols = cols;
    h->pristine_sum = pristine_sum;
    h->arena_bytes = L->total_bytes;
}

static uint64_t data_sum(const double *ref, const double *scale, int64_t count) {
    size_t bytes = (size_t)count * sizeof(double);
    return mix64(dt_refcache_checksum(ref, bytes)) ^ dt_refcache_checksum(scale, bytes);
}

static int write_all(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n; }

dt_status dt_refcache_save(const char *path, const dt_case_layout *L, uint64_t pristine_sum,
                           const dt_oracle_ref *ref, dt_err *err) {
    ref_header h;
    header_make(&h, L, pristine_sum, ref->rows, ref->cols);
    int64_t count = ref->rows * ref->cols;
    h.data_sum = data_sum(ref->ref, ref->scale, count);
    h.header_sum = dt_refcache_checksum(&h, offsetof(ref_header, header_sum));
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return dt_fail(err, DT_EIO, "reference cache: cannot create %s: %s", tmp, strerror(errno));
    size_t bytes = (size_t)count * sizeof(double);
    int ok = write_all(f, &h, sizeof h) && write_all(f, ref->ref, bytes) &&
             write_all(f, ref->scale, bytes);
    int saved_errno = errno;
    if (fclose(f) != 0) ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        if (ok) saved_errno = errno;
        unlink(tmp);
        return dt_fail(err, DT_EIO, "reference cache: cannot write %s: %s", path,
                       strerror(saved_errno));
    }
    return DT_OK;
}

/* Which key field of the file differs from want (NULL: none). */
static const char *header_mismatch(const ref_header *got, const ref_header *want) {
    if (memcmp(got->magic, REF_MAGIC, sizeof got->magic) != 0) return "not a reference file";
    if (dt_refcache_checksum(got, offsetof(ref_header, header_sum)) != got->header_sum)
        return "header checksum differs";
    if (got->op != want->op || got->dtype != want->dtype || got->inputs != want->inputs ||
        got->views != want->views || got->m != want->m || got->n != want->n ||
        got->k != want->k || got->rows != want->rows || got->cols != want->cols ||
        got->arena_bytes != want->arena_bytes)
        return "another case's reference (op, dtype, inputs or shape differ)";
    if (got->pristine_sum != want->pristine_sum)
        return "computed from other inputs (pristine arena checksum differs)";
    return NULL;
}

int dt_refcache_load(const char *path, const dt_case_layout *L, uint64_t pristine_sum,
                     dt_oracle_ref *ref, char *why, size_t len) {
    memset(ref, 0, sizeof *ref);
    why[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return 0;
        snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    const dt_buffer_layout *O = &L->buf[dt_layout_output(L)];
    ref_header got, want;
    header_make(&want, L, pristine_sum, O->rows, O->cols);
    int64_t count = O->rows * O->cols;
    size_t bytes = (size_t)count * sizeof(double);
    struct stat sb;
    const char *bad = NULL;
    double *r = NULL, *s = NULL;
    if (fread(&got, 1, sizeof got, f) != sizeof got) bad = "truncated header";
    else if ((bad = header_mismatch(&got, &want)) != NULL) {
    } else if (fstat(fileno(f), &sb) != 0 || (uint64_t)sb.st_size != sizeof got + 2 * (uint64_t)bytes)
        bad = "wrong file size (truncated or padded)";
    else if (!(r = malloc(bytes)) || !(s = malloc(bytes)))
        bad = "no memory for the reference";
    else if (fread(r, 1, bytes, f) != bytes || fread(s, 1, bytes, f) != bytes)
        bad = "short read";
    else if (data_sum(r, s, count) != got.data_sum)
        bad = "data checksum differs (corrupted)";
    fclose(f);
    if (bad) {
        free(r);
        free(s);
        snprintf(why, len, "%s: %s", path, bad);
        return -1;
    }
    dt_oracle_ref_adopt(L, r, s, ref);
    return 1;
}

/* mkdir -p of rc's two levels. */
static int make_dirs(const dt_refcache *rc) {
    char up[sizeof rc->dir];
    snprintf(up, sizeof up, "%s", rc->dir);
    char *slash = strrchr(up, '/');
    if (slash) *slash = 0;
    if (mkdir(up, 0755) != 0 && errno != EEXIST) return -1;
    return mkdir(rc->dir, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

dt_status dt_refcache_get(const dt_refcache *rc, const char *case_id, int set,
                          const dt_case_layout *L, const uint8_t *pristine, int save, int keep,
                          dt_oracle_ref *ref, dt_refcache_outcome *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    if (!dt_refcache_worth(rc, L)) return dt_oracle_compute(L, pristine, ref, err);
    char path[4400];
    dt_refcache_path(rc, case_id, set, path, sizeof path);
    uint64_t sum = dt_refcache_checksum(pristine, (size_t)L->total_bytes);
    int got = dt_refcache_load(path, L, sum, ref, out->why, sizeof out->why);
    if (got == 1) {
        out->loaded = 1;
        if (!keep) unlink(path);
        return DT_OK;
    }
    if (got < 0) {
        out->rejected = 1;
        unlink(path); /* never trusted again; recomputed (and rewritten if save) */
    }
    dt_status st = dt_oracle_compute(L, pristine, ref, err);
    if (st != DT_OK || !save) return st;
    dt_err e;
    if (make_dirs(rc) != 0) {
        snprintf(out->why, sizeof out->why, "cannot create %.200s: %s", rc->dir, strerror(errno));
    } else if (dt_refcache_save(path, L, sum, ref, &e) != DT_OK) {
        snprintf(out->why, sizeof out->why, "%.300s", e.msg);
    } else {
        out->saved = 1;
    }
    return DT_OK;
}

void dt_refcache_finish(const dt_refcache *rc) {
    if (!rc->dir[0]) return;
    DIR *d = opendir(rc->dir);
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) { /* files no round needs */
        size_t n = strlen(de->d_name);
        if ((n > 4 && strcmp(de->d_name + n - 4, ".ref") == 0) || strstr(de->d_name, ".ref.tmp-")) {
            char path[sizeof rc->dir + 300];
            snprintf(path, sizeof path, "%s/%s", rc->dir, de->d_name);
            unlink(path);
        }
    }
    if (d) closedir(d);
    rmdir(rc->dir);
    char up[sizeof rc->dir];
    snprintf(up, sizeof up, "%s", rc->dir);
    char *slash = strrchr(up, '/');
    if (slash) *slash = 0;
    rmdir(up);
}
