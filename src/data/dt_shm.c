/* dt_shm.c — POSIX shared-memory segments (see dt_shm.h). */
#define _GNU_SOURCE
#include "dt_shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned g_serial;

dt_status dt_shm_create(dt_shm *s, int64_t bytes, dt_err *err) {
    memset(s, 0, sizeof *s);
    if (bytes <= 0) return dt_fail(err, DT_EINVAL, "shared memory size %lld", (long long)bytes);
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        snprintf(s->name, sizeof s->name, "/dualtime-%d-%u-%08x", (int)getpid(),
                 __atomic_fetch_add(&g_serial, 1, __ATOMIC_RELAXED),
                 (unsigned)(dt_now_ns() ^ (attempt * 2654435761u)));
        fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0)
        return dt_fail(err, DT_EIO, "shm_open(%s): %s", s->name, strerror(errno));
    /* the pages are reserved now (posix_fallocate), so a full /dev/shm is this error and
     * never a SIGBUS when the arena is first written */
    int fe = ftruncate(fd, (off_t)bytes) != 0 ? errno : posix_fallocate(fd, 0, (off_t)bytes);
    if (fe != 0) {
        close(fd);
        shm_unlink(s->name);
        return dt_fail(err, DT_EIO, "could not allocate %lld bytes for the shared arena %s: %s "
                       "(is /dev/shm large enough?)", (long long)bytes, s->name, strerror(fe));
    }
    void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(s->name);
        return dt_fail(err, DT_EIO, "could not allocate %lld bytes for the shared arena %s "
                       "(mmap): %s", (long long)bytes, s->name, strerror(e));
    }
    s->base = p;
    s->bytes = bytes;
    s->owner = 1;
    return DT_OK;
}

dt_status dt_shm_open(dt_shm *s, const char *name, int64_t bytes, dt_err *err) {
    memset(s, 0, sizeof *s);
    if (strlen(name) >= sizeof s->name || strncmp(name, "/dualtime-", 10) != 0)
        return dt_fail(err, DT_EINVAL, "bad shared memory name '%s'", name);
    snprintf(s->name, sizeof s->name, "%s", name);
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) return dt_fail(err, DT_EIO, "shm_open(%s): %s", name, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < bytes) {
        close(fd);
        return dt_fail(err, DT_EINVAL, "shared memory %s is smaller than %lld bytes", name,
                       (long long)bytes);
    }
    void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return dt_fail(err, DT_EIO, "mmap(%s): %s", name, strerror(e));
    s->base = p;
    s->bytes = bytes;
    s->owner = 0;
    return DT_OK;
}

void dt_shm_destroy(dt_shm *s) {
    if (s->base) munmap(s->base, (size_t)s->bytes);
    if (s->owner && s->name[0]) shm_unlink(s->name);
    memset(s, 0, sizeof *s);
}

int dt_shm_sweep_stale(void) {
    DIR *d = opendir("/dev/shm");
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid = 0;
        if (sscanf(e->d_name, "dualtime-%d-", &pid) != 1 || pid <= 0) continue;
        if (kill(pid, 0) == 0 || errno != ESRCH) continue;
        char name[300];
        snprintf(name, sizeof name, "/%s", e->d_name);
        if (shm_unlink(name) == 0) removed++;
    }
    closedir(d);
    return removed;
}
