/* dt_file.c — bounded whole-file reads and atomic writes (dt_file.h). Moved here from
 * src/report/dt_results_io.c with the same behaviour. */
#define _GNU_SOURCE
#include "record/dt_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes all of text to fd; 0 or the errno of the failure. */
static int write_all(int fd, const char *text, size_t len) {
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        off += (size_t)w;
    }
    return 0;
}

/* Makes a rename in path's directory durable; some file systems refuse fsync on
 * directories, which is not an error. */
static void sync_dir_of(const char *path) {
    char *dir = dt_xstrdup(path);
    char *slash = strrchr(dir, '/');
    const char *d = ".";
    if (slash) {
        *slash = 0;
        d = slash == dir ? "/" : dir;
    }
    int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    free(dir);
}

dt_status dt_file_write_atomic(const char *path, const char *text, size_t len, dt_err *err) {
    size_t plen = strlen(path);
    char *tmp = dt_xmalloc(plen + 16);
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC); /* not inherited by a worker started meanwhile */
    if (fd < 0) {
        dt_status st = dt_fail(err, DT_EIO, "%s: cannot create a temporary file: %s", path,
                               strerror(errno));
        free(tmp);
        return st;
    }
    const char *why = NULL;
    int saved = 0;
    if (fchmod(fd, 0644) != 0) {
        why = "chmod";
        saved = errno;
    }
    if (!why && (saved = write_all(fd, text, len)) != 0)
        why = "write";
    if (!why && fsync(fd) != 0) {
        why = "fsync";
        saved = errno;
    }
    if (close(fd) != 0 && !why) {
        why = "close";
        saved = errno;
    }
    if (!why && rename(tmp, path) != 0) {
        why = "rename";
        saved = errno;
    }
    if (why) {
        unlink(tmp);
        free(tmp);
        return dt_fail(err, DT_EIO, "%s: %s failed: %s", path, why, strerror(saved));
    }
    free(tmp);
    sync_dir_of(path);
    return DT_OK;
}

dt_status dt_file_read(const char *path, uint64_t max_bytes, const char *what_kind,
                       char **text, size_t *len, dt_err *err) {
    *text = NULL;
    *len = 0;
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return dt_fail(err, DT_EINVAL, "%s: not a regular file", path);
    if (stat(path, &sb) == 0 && (uint64_t)sb.st_size > max_bytes)
        return dt_fail(err, DT_EINVAL, "%s: %llu bytes is larger than %s may be (%llu bytes)",
                       path, (unsigned long long)sb.st_size, what_kind,
                       (unsigned long long)max_bytes);
    FILE *f = fopen(path, "rb");
    if (!f)
        return dt_fail(err, DT_EIO, "%s: cannot read: %s", path, strerror(errno));
    size_t cap = (size_t)sb.st_size + 1, n = 0;
    char *buf = dt_xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap) { /* the file grew since stat */
            if ((uint64_t)cap > max_bytes) {
                fclose(f);
                free(buf);
                return dt_fail(err, DT_EINVAL, "%s: larger than %s may be (%llu bytes)", path,
                               what_kind, (unsigned long long)max_bytes);
            }
            cap *= 2;
            buf = realloc(buf, cap);
            DT_ASSERT(buf);
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    int saved = errno;
    fclose(f);
    if (bad) {
        free(buf);
        return dt_fail(err, DT_EIO, "%s: cannot read: %s", path, strerror(saved));
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return DT_OK;
}
