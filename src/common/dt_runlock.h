/* dt_runlock.h — one writer per run directory.
 *
 * `run --output DIR` and `run --resume DIR` hold an exclusive flock(2) on DIR/.lock for
 * the whole run; a second writer of the same directory is refused with the holder's pid.
 * The lock file holds the holder's pid as text (for the message only: the lock itself is
 * the flock, which the kernel drops when the holder dies, even by kill -9, so a stale
 * file never blocks anyone). The descriptor is close-on-exec: workers never inherit it.
 * Ownership: the caller keeps the dt_runlock until the run ends, then dt_runlock_release.
 * Thread-safety: one lock per process and directory. */
#ifndef DT_RUNLOCK_H
#define DT_RUNLOCK_H

#include "dt_common.h"

typedef struct dt_runlock {
    int fd; /* open lock file, -1 when not held */
} dt_runlock;

/* The lock file's name inside a run directory. */
#define DT_RUNLOCK_FILE ".lock"

/* Takes the lock of run directory `dir` (which must exist) without waiting. DT_OK and
 * lock->fd >= 0 when taken; DT_EINVAL with "DIR is in use by dualtime pid N" (or the
 * reason the lock file could not be opened) otherwise, lock->fd = -1. */
dt_status dt_runlock_take(dt_runlock *lock, const char *dir, dt_err *err);

/* Drops the lock (the file stays; its content no longer matters). Safe on a lock that
 * was never taken. */
void dt_runlock_release(dt_runlock *lock);

#endif
