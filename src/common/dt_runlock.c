/* dt_runlock.c — flock on DIR/.lock (contract in dt_runlock.h). */
#define _GNU_SOURCE
#include "dt_runlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

dt_status dt_runlock_take(dt_runlock *lock, const char *dir, dt_err *err) {
    lock->fd = -1;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, DT_RUNLOCK_FILE) >= (int)sizeof path)
        return dt_fail(err, DT_EINVAL, "%s: path too long", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return dt_fail(err, DT_EINVAL, "cannot open the run lock %s: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        close(fd);
        if (e != EWOULDBLOCK)
            return dt_fail(err, DT_EINVAL, "cannot lock %s: %s", path, strerror(e));
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\r\n")] = '\0';
        return dt_fail(err, DT_EINVAL, "%s is in use by dualtime pid %s (another run or resume "
                       "is writing it)", dir, *pid ? pid : "unknown");
    }
    char text[32];
    int len = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)len, 0) != len) {
        int e = errno;
        close(fd);
        return dt_fail(err, DT_EIO, "cannot write the run lock %s: %s", path, strerror(e));
    }
    lock->fd = fd;
    return DT_OK;
}

void dt_runlock_release(dt_runlock *lock) {
    if (lock->fd >= 0) {
        flock(lock->fd, LOCK_UN);
        close(lock->fd);
    }
    lock->fd = -1;
}
