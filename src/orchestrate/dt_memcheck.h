/* dt_memcheck.h — shapes limited by memory, not by a cap (issue 16): before a run starts,
 * every case's bytes are checked against what is free on the host (MemAvailable), in
 * /dev/shm (statvfs) and on the device (when the worker's hello reported its free memory).
 *
 * Per case (dt_case_bytes_of below): the host needs the orchestrator's
 * pristine arena (and the anti-cheat input sets: dt_cheat.h), the FP64 reference and
 * scale and the oracle's scratch, plus the
 * implementations' shared arenas (tmpfs pages are host memory too); /dev/shm needs one
 * arena per implementation; the device one arena per implementation. The orchestrator
 * holds one case at a time (it frees the case's buffers before the next), so the largest
 * case decides. Units: bytes. Ownership: nothing is kept. Thread-safety: reentrant. */
#ifndef DT_MEMCHECK_H
#define DT_MEMCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "../common/dt_common.h"
#include "../plan/dt_plan.h"

/* Bytes one case needs while it runs (shape, dtype and views as in the case):
 * host: the orchestrator's pristine arena, the FP64 reference and scale, and the oracle's
 * scratch (dense doubles of A and B for gemm); shm: one arena per implementation
 * (nimpls), in /dev/shm; device: one arena per implementation on the device. */
typedef struct dt_case_bytes {
    int64_t arena_bytes, host_bytes, shm_bytes, device_bytes;
} dt_case_bytes;
void dt_case_bytes_of(const dt_case_spec *c, int nimpls, dt_case_bytes *out);

/* What is free now: host MemAvailable and /dev/shm's available bytes (-1 when unknown). */
typedef struct dt_mem_free {
    int64_t host_bytes, shm_bytes;
    int64_t device_bytes; /* -1: the worker did not report it: the device check is skipped */
} dt_mem_free;
void dt_mem_free_read(dt_mem_free *f);

/* Checks every case of plan (nimpls implementations, each with its own arena) against
 * `free_now`. DT_EINVAL naming the first case that cannot fit, the bytes it needs and the
 * bytes free ("case X needs N bytes of host memory, M are available"). note (may be
 * NULL) gets one line on what was checked (and that the device check was skipped). */
dt_status dt_memcheck_plan(const dt_plan *plan, int nimpls, const dt_mem_free *free_now,
                           char *note, size_t note_len, dt_err *err);

#endif
