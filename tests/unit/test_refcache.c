/* test_refcache.c — the FP64 reference cache between rounds (src/orchestrate/dt_refcache.h):
 * the checksum (equal bytes, equal sums for 1 and 2 threads; one flipped bit or a moved
 * byte changes it), which cases are worth caching, a saved and reloaded reference equal
 * to a fresh one bit for bit (gemm, and cross_entropy under --input-views), and every
 * untrustworthy file rejected with its reason, never loaded: a flipped data byte, a
 * truncated file, a patched header, a file of another case or of other inputs; then
 * dt_refcache_get as the run loop uses it (round 0 saves, the last round loads and
 * removes; a corrupted file is recomputed, equal to fresh) and dt_refcache_finish. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../dt_check.h"
#include "orchestrate/dt_refcache.h"

static int same_ref(const dt_oracle_ref *a, const dt_oracle_ref *b) {
    size_t bytes = (size_t)(a->rows * a->cols) * sizeof(double);
    return a->op == b->op && a->rows == b->rows && a->cols == b->cols && a->dtype == b->dtype &&
           a->atol == b->atol && a->rtol == b->rtol && a->tol.ulps == b->tol.ulps &&
           memcmp(a->ref, b->ref, bytes) == 0 && memcmp(a->scale, b->scale, bytes) == 0;
}

static void checksum_cases(void) {
    size_t n = (3u << 20) + 13; /* several chunks and a tail */
    uint8_t *p = malloc(n);
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 131u + (i >> 9));
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    uint64_t one = dt_refcache_checksum(p, n);
    omp_set_num_threads(2);
    uint64_t two = dt_refcache_checksum(p, n);
    omp_set_num_threads(saved);
    CHECK(one == two, "checksum independent of the thread count");
    p[(2u << 20) + 5] ^= 0x10;
    CHECK(dt_refcache_checksum(p, n) != one, "one flipped bit changes the checksum");
    p[(2u << 20) + 5] ^= 0x10;
    CHECK(dt_refcache_checksum(p, n) == one, "restored bytes give the sum back");
    p[n - 1] ^= 1;
    CHECK(dt_refcache_checksum(p, n) != one, "a flipped tail byte changes it");
    p[n - 1] ^= 1;
    uint8_t t = p[100];
    p[100] = p[101];
    p[101] = t;
    CHECK(p[100] == p[101] || dt_refcache_checksum(p, n) != one, "swapped bytes change it");
    CHECK(dt_refcache_checksum(p, n - 1) != one, "a shorter range changes it");
    free(p);
}

static void worth_cases(void) {
    dt_refcache rc;
    dt_refcache_init(&rc, "/tmp/x", NULL);
    CHECK(rc.mode == DT_REFCACHE_AUTO && strcmp(rc.dir, "/tmp/x/.scratch/ref") == 0, "auto");
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_GEMM, 256, 256, 256, 0);
    CHECK(dt_refcache_worth(&rc, &L), "gemm 256^3 (512 flops per element) is cached");
    dt_layout_make(&L, DT_OP_ADD, 8192, 8192, 0, 0);
    CHECK(!dt_refcache_worth(&rc, &L), "add is recomputed, not cached");
    dt_layout_make(&L, DT_OP_SOFTMAX, 8192, 8192, 0, 0);
    CHECK(!dt_refcache_worth(&rc, &L), "softmax is recomputed, not cached");
    dt_layout_make(&L, DT_OP_SUM, 1024, 4096, 0, 0);
    CHECK(dt_refcache_worth(&rc, &L), "sum (a row per element) is cached");
    dt_layout_make(&L, DT_OP_ADD, 17, 257, 0, 0);
    dt_refcache_init(&rc, "/tmp/x", "all");
    CHECK(rc.mode == DT_REFCACHE_ALL && dt_refcache_worth(&rc, &L), "DUALTIME_REF_CACHE=all");
    dt_layout_make(&L, DT_OP_GEMM, 256, 256, 256, 0);
    dt_refcache_init(&rc, "/tmp/x", "0");
    CHECK(rc.mode == DT_REFCACHE_OFF && !dt_refcache_worth(&rc, &L) && !rc.dir[0],
          "DUALTIME_REF_CACHE=0");
}

/* Saves the reference of L (seed 5) in dir, reloads it, then corrupts copies of the file
 * in every way and checks each is rejected with the expected reason. */
static void file_cases(const char *dir, dt_op op, int64_t m, int64_t n, int64_t k, int views) {
    dt_case_layout L;
    dt_layout_make(&L, op, m, n, k, views);
    uint8_t *pristine = malloc((size_t)L.total_bytes), *other = malloc((size_t)L.total_bytes);
    dt_arena_fill(&L, pristine, 5);
    dt_arena_fill(&L, other, 6);
    dt_oracle_ref fresh, got;
    memset(&fresh, 0, sizeof fresh);
    memset(&got, 0, sizeof got);
    dt_err e;
    char path[512], bad[560], why[320];
    snprintf(path, sizeof path, "%s/%s.ref", dir, dt_op_get(op)->name);
    snprintf(bad, sizeof bad, "%s.bad", path);
    uint64_t sum = dt_refcache_checksum(pristine, (size_t)L.total_bytes);
    REQUIRE(dt_oracle_compute(&L, pristine, &fresh, &e) == DT_OK, "oracle: %s", e.msg);
    REQUIRE(dt_refcache_save(path, &L, sum, &fresh, &e) == DT_OK, "save: %s", e.msg);
    CHECK(dt_refcache_load(path, &L, sum, &got, why, sizeof why) == 1, "load: %s", why);
    CHECK(got.ref && same_ref(&got, &fresh), "%s: the reloaded reference equals a fresh one",
          dt_op_get(op)->name);
    dt_oracle_free(&got);
    CHECK(dt_refcache_load(bad, &L, sum, &got, why, sizeof why) == 0, "no file: 0");

    struct stat sb;
    stat(path, &sb);
    const long data_at = (long)(sb.st_size - 1); /* the last byte of scale */
    static const struct {
        const char *what, *reason;
    } k_bad[] = {{"flipped data byte", "data checksum differs"},
                 {"truncated", "wrong file size"},
                 {"patched header", "header checksum differs"},
                 {"other inputs", "other inputs"},
                 {"other case", "another case"}};
    for (int t = 0; t < 5; t++) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, bad);
        REQUIRE(system(cmd) == 0, "cp");
        FILE *f = fopen(bad, "r+b");
        REQUIRE(f != NULL, "open copy");
        if (t == 0) {
            fseek(f, data_at, SEEK_SET);
            int c = fgetc(f);
            fseek(f, data_at, SEEK_SET);
            fputc(c ^ 0x01, f);
        } else if (t == 2) {
            fseek(f, 8, SEEK_SET); /* the op field */
            int c = fgetc(f);
            fseek(f, 8, SEEK_SET);
            fputc(c ^ 0x01, f);
        }
        fclose(f);
        if (t == 1) CHECK(truncate(bad, sb.st_size - 8) == 0, "truncate");
        uint64_t want = sum;
        dt_case_layout L2 = L;
        if (t == 3) want = dt_refcache_checksum(other, (size_t)L.total_bytes);
        if (t == 4) L2.m = L.m + 1; /* another shape's key */
        int r = dt_refcache_load(bad, &L2, want, &got, why, sizeof why);
        CHECK(r == -1 && got.ref == NULL, "%s: rejected (got %d)", k_bad[t].what, r);
        CHECK(strstr(why, k_bad[t].reason) != NULL, "%s: reason '%s' in: %s", k_bad[t].what,
              k_bad[t].reason, why);
        unlink(bad);
    }
done:
    unlink(path);
    dt_oracle_free(&fresh);
    dt_oracle_free(&got);
    free(pristine);
    free(other);
}

/* dt_refcache_get as the run loop calls it: round 0 (save, keep), round 1 of 2 (load,
 * remove); then a corrupted file: recomputed (rejected, equal to fresh). */
static void get_cases(const char *out_dir) {
    dt_refcache rc;
    dt_refcache_init(&rc, out_dir, NULL);
    dt_case_layout L;
    dt_layout_make(&L, DT_OP_GEMM, 96, 80, 128, 0);
    uint8_t *pristine = malloc((size_t)L.total_bytes);
    dt_arena_fill(&L, pristine, 9);
    dt_oracle_ref fresh, r0, r1;
    memset(&fresh, 0, sizeof fresh);
    memset(&r0, 0, sizeof r0);
    memset(&r1, 0, sizeof r1);
    dt_refcache_outcome o;
    dt_err e;
    char path[4400];
    dt_refcache_path(&rc, "gemm_96x80x128/odd id", 0, path, sizeof path);
    CHECK(strstr(path, "/.scratch/ref/gemm_96x80x128_odd_id.set0.ref") != NULL,
          "the case id becomes one file name: %s", path);
    REQUIRE(dt_oracle_compute(&L, pristine, &fresh, &e) == DT_OK, "oracle");
    REQUIRE(dt_refcache_get(&rc, "g", 0, &L, pristine, 1, 1, &r0, &o, &e) == DT_OK, "get 0");
    CHECK(!o.loaded && o.saved && !o.rejected, "round 0 computes and saves: %s", o.why);
    CHECK(same_ref(&r0, &fresh), "round 0's reference is the fresh one");
    dt_refcache_path(&rc, "g", 0, path, sizeof path);
    CHECK(access(path, R_OK) == 0, "the file is there for round 1");
    REQUIRE(dt_refcache_get(&rc, "g", 0, &L, pristine, 0, 0, &r1, &o, &e) == DT_OK, "get 1");
    CHECK(o.loaded && !o.rejected, "round 1 loads: %s", o.why);
    CHECK(same_ref(&r1, &fresh), "round 1's loaded reference equals a fresh one");
    CHECK(access(path, F_OK) != 0, "the last round removed the file");
    dt_oracle_free(&r0);
    dt_oracle_free(&r1);

    /* a corrupted file: recomputed, never trusted */
    REQUIRE(dt_refcache_get(&rc, "g", 0, &L, pristine, 1, 1, &r0, &o, &e) == DT_OK, "get 0b");
    FILE *f = fopen(path, "r+b");
    REQUIRE(f != NULL, "open");
    fseek(f, 200, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 200, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
    REQUIRE(dt_refcache_get(&rc, "g", 0, &L, pristine, 0, 0, &r1, &o, &e) == DT_OK, "get 1b");
    CHECK(!o.loaded && o.rejected && strstr(o.why, "checksum") != NULL,
          "a corrupted file is rejected: %s", o.why);
    CHECK(same_ref(&r1, &fresh), "the recomputed reference equals a fresh one");
    CHECK(access(path, F_OK) != 0, "the corrupted file is removed");

    /* a case not worth caching: computed, no file */
    dt_oracle_free(&r1);
    dt_case_layout La;
    dt_layout_make(&La, DT_OP_ADD, 17, 257, 0, 0);
    uint8_t *pa = malloc((size_t)La.total_bytes);
    dt_arena_fill(&La, pa, 1);
    REQUIRE(dt_refcache_get(&rc, "a", 0, &La, pa, 1, 1, &r1, &o, &e) == DT_OK, "get add");
    dt_refcache_path(&rc, "a", 0, path, sizeof path);
    CHECK(!o.saved && access(path, F_OK) != 0, "add: computed, nothing written");
    free(pa);

    /* finish: leftovers and the directories go */
    dt_oracle_free(&r1);
    REQUIRE(dt_refcache_get(&rc, "left", 0, &L, pristine, 1, 1, &r1, &o, &e) == DT_OK, "left");
    dt_refcache_finish(&rc);
    char scratch[4200];
    snprintf(scratch, sizeof scratch, "%s/.scratch", out_dir);
    CHECK(access(rc.dir, F_OK) != 0 && access(scratch, F_OK) != 0,
          "finish removes the files and both directories");
done:
    dt_oracle_free(&fresh);
    dt_oracle_free(&r0);
    dt_oracle_free(&r1);
    free(pristine);
}

int main(void) {
    checksum_cases();
    worth_cases();
    char dir[] = "/tmp/dt_refcache_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return dt_check_summary("test_refcache");
    }
    file_cases(dir, DT_OP_GEMM, 64, 48, 80, 0);
    file_cases(dir, DT_OP_CROSS_ENTROPY, 33, 1000, 0, 1);
    get_cases(dir);
    rmdir(dir);
    return dt_check_summary("test_refcache");
}
