/* dt_shm.h — private POSIX shared-memory segments that carry tensors between the
 * orchestrator and its workers.
 *
 * Names are "/dualtime-<pid>-<serial>-<random>"; segments are created with O_EXCL and
 * mode 0600 and unlinked by the creator on every exit path (dt_shm_destroy, and
 * dt_shm_sweep_stale at the next start for a creator that was killed).
 * Ownership: a dt_shm owns its mapping; destroy/close unmaps. A dt_shm is used by one
 * thread at a time; create may run on several threads at once (atomic name counter). */
#ifndef DT_SHM_H
#define DT_SHM_H

#include <stdint.h>

#include "../common/dt_common.h"

typedef struct dt_shm {
    char name[64];
    uint8_t *base;
    int64_t bytes;
    int owner; /* 1: created here, unlinked by dt_shm_destroy */
} dt_shm;

/* Creates and maps a new segment of `bytes` bytes. */
dt_status dt_shm_create(dt_shm *s, int64_t bytes, dt_err *err);
/* Maps an existing segment created by another process (workers). */
dt_status dt_shm_open(dt_shm *s, const char *name, int64_t bytes, dt_err *err);
/* Unmaps; unlinks too if this process created it. Safe on a zeroed dt_shm. */
void dt_shm_destroy(dt_shm *s);
/* Removes segments left by dualtime processes that no longer exist. Returns count. */
int dt_shm_sweep_stale(void);

#endif
