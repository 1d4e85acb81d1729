/* dt_kcache.c — the on-disk cache of compiled kernel images (dt_kcache.h). */
#define _GNU_SOURCE
#include "dt_kcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dt_kernel_dir.h"

#define KC_MAGIC "dualtime-kcache 1\n"
#define KC_MAX_BYTES (256u << 20) /* no kernel image is near this: larger is corrupt */

static int g_resolved;
static char g_dir[4096];
static const char *g_why = "not resolved";

void dt_kcache_reset(void) { g_resolved = 0; }

/* mkdir -p path (mode 0700 for the parts it creates); 0 or -1 with errno. */
static int mkdirs(char *path) {
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        int r = mkdir(path, 0700);
        *p = '/';
        if (r != 0 && errno != EEXIST) return -1;
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

const char *dt_kcache_dir(const char **why) {
    if (!g_resolved) {
        g_resolved = 1;
        g_dir[0] = 0;
        const char *env = getenv("DUALTIME_KERNEL_CACHE"), *xdg = getenv("XDG_CACHE_HOME"),
                   *home = getenv("HOME");
        static char msg[4200];
        if (env && strcmp(env, "off") == 0) {
            g_why = "off (DUALTIME_KERNEL_CACHE=off)";
        } else if (env && *env) {
            snprintf(g_dir, sizeof g_dir, "%s", env);
        } else if (xdg && *xdg == '/') {
            snprintf(g_dir, sizeof g_dir, "%s/dualtime/kernels", xdg);
        } else if (home && *home == '/') {
            snprintf(g_dir, sizeof g_dir, "%s/.cache/dualtime/kernels", home);
        } else {
            g_why = "off (no DUALTIME_KERNEL_CACHE, XDG_CACHE_HOME or HOME)";
        }
        if (g_dir[0] && mkdirs(g_dir) != 0) {
            snprintf(msg, sizeof msg, "off (mkdir %s: %s)", g_dir, strerror(errno));
            g_why = msg;
            g_dir[0] = 0;
        } else if (g_dir[0]) {
            g_why = NULL;
        }
    }
    if (why) *why = g_why;
    return g_dir[0] ? g_dir : NULL;
}

static int key_ok(const char *key) {
    size_t n = strlen(key);
    if (n != 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f'))) return 0;
    return 1;
}

static int entry_path(const char *key, char *path, size_t len) {
    const char *dir = dt_kcache_dir(NULL);
    if (!dir || !key_ok(key)) return -1;
    return snprintf(path, len, "%s/%s.img", dir, key) < (int)len ? 0 : -1;
}

int dt_kcache_get(const char *key, char **image, size_t *bytes) {
    char path[4200];
    *image = NULL;
    *bytes = 0;
    if (entry_path(key, path, sizeof path) != 0) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char head[sizeof KC_MAGIC - 1 + 65];
    struct stat st;
    int ok = fstat(fileno(f), &st) == 0 && st.st_size > (off_t)sizeof head &&
             (size_t)st.st_size - sizeof head <= KC_MAX_BYTES &&
             fread(head, 1, sizeof head, f) == sizeof head &&
             memcmp(head, KC_MAGIC, sizeof KC_MAGIC - 1) == 0 && head[sizeof head - 1] == '\n';
    size_t n = ok ? (size_t)st.st_size - sizeof head : 0;
    char *img = ok ? malloc(n + 1) : NULL;
    ok = img && fread(img, 1, n, f) == n;
    fclose(f);
    if (ok) {
        char want[65], got[65];
        memcpy(want, head + sizeof KC_MAGIC - 1, 64);
        want[64] = 0;
        dt_kdir_sha256(img, n, got);
        ok = strcmp(want, got) == 0;
    }
    if (!ok) {
        free(img);
        return 0;
    }
    img[n] = 0; /* a PTX image is text */
    *image = img;
    *bytes = n;
    return 1;
}

int dt_kcache_put(const char *key, const char *image, size_t bytes) {
    char path[4200], tmp[4300], dig[65];
    if (!image || bytes == 0 || bytes > KC_MAX_BYTES || entry_path(key, path, sizeof path) != 0)
        return -1;
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    dt_kdir_sha256(image, bytes, dig);
    dig[64] = '\n';
    int ok = write(fd, KC_MAGIC, sizeof KC_MAGIC - 1) == (ssize_t)(sizeof KC_MAGIC - 1) &&
             write(fd, dig, 65) == 65;
    for (size_t off = 0; ok && off < bytes;) {
        ssize_t w = write(fd, image + off, bytes - off);
        if (w <= 0) ok = 0;
        else off += (size_t)w;
    }
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) == 0) return 0;
    unlink(tmp);
    return -1;
}
