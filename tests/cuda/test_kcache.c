/* test_kcache.c — the on-disk cache of compiled kernel images (workers/native/dt_kcache.h),
 * no GPU: a stored image comes back byte for byte; a torn, edited, truncated or foreign
 * file is a miss (never loaded), and the next put replaces it; keys that are not 64 hex
 * digits are refused (no path out of the directory); DUALTIME_KERNEL_CACHE=off and an
 * unusable directory turn the cache off with the reason; the default is under
 * $XDG_CACHE_HOME, else $HOME/.cache. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dt_kcache.h"
#include "../dt_check.h"

static const char *K1 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
static const char *K2 = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";

static void flip_byte(const char *path, long off) {
    FILE *f = fopen(path, "r+b");
    if (!f) return;
    fseek(f, off, off < 0 ? SEEK_END : SEEK_SET);
    int c = fgetc(f);
    fseek(f, -1, SEEK_CUR);
    fputc(c ^ 0x20, f);
    fclose(f);
}

int main(void) {
    char tmpl[] = "/tmp/dt-kcache-XXXXXX";
    char *root = mkdtemp(tmpl);
    REQUIRE(root != NULL);
    char dir[512], path[700], *img = NULL;
    size_t n = 0;
    const char *why = NULL;
    snprintf(dir, sizeof dir, "%s/a/b/kernels", root);
    setenv("DUALTIME_KERNEL_CACHE", dir, 1);
    dt_kcache_reset();
    CHECK(dt_kcache_dir(&why) && strcmp(dt_kcache_dir(NULL), dir) == 0, "dir %s (%s)", dir,
          why ? why : "");
    struct stat st;
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
          "created 0700");

    /* miss, put, hit: byte for byte (binary with NULs) */
    char image[3000];
    for (size_t i = 0; i < sizeof image; i++) image[i] = (char)(i * 7 % 256);
    CHECK(dt_kcache_get(K1, &img, &n) == 0 && img == NULL, "empty cache: miss");
    CHECK(dt_kcache_put(K1, image, sizeof image) == 0, "put");
    CHECK(dt_kcache_get(K1, &img, &n) == 1 && n == sizeof image && memcmp(img, image, n) == 0,
          "hit returns the image");
    free(img);
    img = NULL;
    CHECK(dt_kcache_get(K2, &img, &n) == 0, "another key: miss");

    /* a changed byte of the image, of the digest, a truncated file: misses */
    snprintf(path, sizeof path, "%s/%s.img", dir, K1);
    flip_byte(path, -5);
    CHECK(dt_kcache_get(K1, &img, &n) == 0 && img == NULL, "edited image: miss");
    CHECK(dt_kcache_put(K1, image, sizeof image) == 0 && dt_kcache_get(K1, &img, &n) == 1,
          "the next put replaces it");
    free(img);
    img = NULL;
    flip_byte(path, 20);
    CHECK(dt_kcache_get(K1, &img, &n) == 0, "edited digest: miss");
    dt_kcache_put(K1, image, sizeof image);
    CHECK(truncate(path, 1000) == 0 && dt_kcache_get(K1, &img, &n) == 0, "torn file: miss");
    FILE *f = fopen(path, "wb");
    fputs("not a cache entry at all, just text\n", f);
    fclose(f);
    CHECK(dt_kcache_get(K1, &img, &n) == 0, "foreign file: miss");

    /* keys: 64 lower-case hex digits only */
    CHECK(dt_kcache_put("../../etc/x", image, 10) == -1, "a path as key: refused");
    CHECK(dt_kcache_put("0123", image, 10) == -1, "a short key: refused");
    CHECK(dt_kcache_put(K2, image, 0) == -1, "an empty image: refused");

    /* off, and an unusable directory: NULL with the reason */
    setenv("DUALTIME_KERNEL_CACHE", "off", 1);
    dt_kcache_reset();
    CHECK(dt_kcache_dir(&why) == NULL && why && strstr(why, "off"), "off: %s", why ? why : "");
    CHECK(dt_kcache_put(K2, image, 10) == -1 && dt_kcache_get(K1, &img, &n) == 0,
          "off: no put, no get");
    snprintf(path, sizeof path, "%s/file", root);
    f = fopen(path, "w");
    fclose(f);
    snprintf(dir, sizeof dir, "%s/file/sub", root);
    setenv("DUALTIME_KERNEL_CACHE", dir, 1);
    dt_kcache_reset();
    CHECK(dt_kcache_dir(&why) == NULL && why && strstr(why, "mkdir"), "unusable: %s",
          why ? why : "");

    /* the default: $XDG_CACHE_HOME/dualtime/kernels, else $HOME/.cache/dualtime/kernels */
    unsetenv("DUALTIME_KERNEL_CACHE");
    setenv("XDG_CACHE_HOME", root, 1);
    dt_kcache_reset();
    snprintf(dir, sizeof dir, "%s/dualtime/kernels", root);
    CHECK(dt_kcache_dir(NULL) && strcmp(dt_kcache_dir(NULL), dir) == 0, "XDG default");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", root, 1);
    dt_kcache_reset();
    snprintf(dir, sizeof dir, "%s/.cache/dualtime/kernels", root);
    CHECK(dt_kcache_dir(NULL) && strcmp(dt_kcache_dir(NULL), dir) == 0, "HOME default");
done:;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root ? root : "/nonexistent");
    if (root && system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", root);
    return dt_check_summary("test_kcache");
}
