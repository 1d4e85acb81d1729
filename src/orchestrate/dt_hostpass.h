/* dt_hostpass.h — the run loop's big host passes over an arena on the oracle's OpenMP
 * threads (docs/device-workflow.md, "Host passes per case-round"): the arena copies
 * (pristine -> an implementation's /dev/shm arena; an anti-cheat input set into it) and
 * the SHA-256s of a case's inputs and of each implementation's output. A single thread
 * copies about 5-10 GB/s and hashes 1-2 GB/s; the default CUDA matrix copies and hashes
 * tens of GB per round. Results are the same bytes and the same hashes as memcpy and
 * dt_buffer_sha256 (each SHA-256 is still one sequential stream; the parallelism is across
 * buffers and arenas).
 *
 * Ownership: the caller's memory only. Units: bytes. Thread-safety: reentrant (call it
 * from one thread at a time: it opens OpenMP parallel regions). Library code. */
#ifndef DT_HOSTPASS_H
#define DT_HOSTPASS_H

#include <stddef.h>
#include <stdint.h>

#include "../data/dt_arena.h"

/* memcpy(dst, src, bytes) in chunks on the OpenMP threads; the regions must not overlap. */
void dt_hostpass_copy(void *dst, const void *src, size_t bytes);

/* hex[i] = dt_buffer_sha256(L, buf[i], base, ...) for i < n, the buffers on parallel
 * threads. */
void dt_hostpass_sha256_buffers(const dt_case_layout *L, const uint8_t *base, const int *buf,
                                int n, char (*hex)[65]);

/* hex[i] = the SHA-256 of buffer b of arena bases[i] (layout L) for i < n, one thread
 * per arena (NULL bases are skipped, their hex left as it was). */
void dt_hostpass_sha256_arenas(const dt_case_layout *L, int b, const uint8_t *const *bases,
                               int n, char (*hex)[65]);

#endif
