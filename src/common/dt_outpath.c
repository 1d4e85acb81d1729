/* dt_outpath.c — the output-path rule (contract in dt_outpath.h). */
#define _GNU_SOURCE
#include "dt_outpath.h"

#include <errno.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>

/* What kind of thing st describes, as a noun for messages. */
static const char *kind_of(const struct stat *st) {
    if (S_ISDIR(st->st_mode)) return "a directory";
    if (S_ISCHR(st->st_mode)) return "a character device";
    if (S_ISBLK(st->st_mode)) return "a block device";
    if (S_ISFIFO(st->st_mode)) return "a FIFO";
    if (S_ISSOCK(st->st_mode)) return "a socket";
    if (S_ISLNK(st->st_mode)) return "a symbolic link";
    if (S_ISREG(st->st_mode)) return "a regular file";
    return "not a regular file";
}

/* The parent of path must be an existing directory (followed through links: a parent
 * reached through a symlinked folder is an ordinary place to write). */
static dt_status check_parent(const char *flag, const char *path, dt_err *err) {
    char *copy = dt_xstrdup(path);
    const char *parent = dirname(copy);
    struct stat st;
    dt_status s = DT_OK;
    if (stat(parent, &st) != 0)
        s = dt_fail(err, DT_EINVAL, "%s %s: its folder %s does not exist (%s)", flag, path,
                    parent, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        s = dt_fail(err, DT_EINVAL, "%s %s: %s is %s, not a folder", flag, path, parent,
                    kind_of(&st));
    free(copy);
    return s;
}

dt_status dt_outpath_check(const char *flag, const char *path, const char *const *inputs,
                           size_t n_inputs, dt_err *err) {
    if (!path || !*path) return dt_fail(err, DT_EINVAL, "%s: empty path", flag);
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT && errno != ENOTDIR)
            return dt_fail(err, DT_EINVAL, "%s %s: %s", flag, path, strerror(errno));
        return check_parent(flag, path, err);
    }
    for (size_t i = 0; i < n_inputs; i++) {
        struct stat in;
        if (inputs[i] && stat(inputs[i], &in) == 0) {
            struct stat target = st;
            /* a symlink is judged by what it points to here, for the clearer message */
            if (S_ISLNK(st.st_mode) && stat(path, &target) != 0) continue;
            if (target.st_dev == in.st_dev && target.st_ino == in.st_ino)
                return dt_fail(err, DT_EINVAL,
                               "%s %s is the input %s: refusing to overwrite what is being read",
                               flag, path, inputs[i]);
        }
    }
    if (!S_ISREG(st.st_mode))
        return dt_fail(err, DT_EINVAL,
                       "%s %s is %s: dualtime writes only regular files or new paths", flag,
                       path, kind_of(&st));
    return DT_OK;
}

dt_status dt_outpath_check_dir(const char *flag, const char *dir, dt_err *err) {
    if (!dir || !*dir) return dt_fail(err, DT_EINVAL, "%s: empty path", flag);
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno != ENOENT && errno != ENOTDIR)
            return dt_fail(err, DT_EINVAL, "%s %s: %s", flag, dir, strerror(errno));
        return check_parent(flag, dir, err);
    }
    if (!S_ISDIR(st.st_mode))
        return dt_fail(err, DT_EINVAL, "%s %s is %s, not a folder dualtime can write into", flag,
                       dir, kind_of(&st));
    return DT_OK;
}
