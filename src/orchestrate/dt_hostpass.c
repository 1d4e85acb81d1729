/* dt_hostpass.c — parallel arena copies and SHA-256s (see dt_hostpass.h). */
#include "dt_hostpass.h"

#include <string.h>

#define COPY_CHUNK_BYTES ((size_t)4 << 20)

void dt_hostpass_copy(void *dst, const void *src, size_t bytes) {
    if (bytes <= COPY_CHUNK_BYTES) { /* small: no parallel region */
        memcpy(dst, src, bytes);
        return;
    }
    uint8_t *d = dst;
    const uint8_t *s = src;
    int64_t chunks = (int64_t)((bytes + COPY_CHUNK_BYTES - 1) / COPY_CHUNK_BYTES);
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; c++) {
        size_t at = (size_t)c * COPY_CHUNK_BYTES;
        memcpy(d + at, s + at, bytes - at < COPY_CHUNK_BYTES ? bytes - at : COPY_CHUNK_BYTES);
    }
}

void dt_hostpass_sha256_buffers(const dt_case_layout *L, const uint8_t *base, const int *buf,
                                int n, char (*hex)[65]) {
#pragma omp parallel for schedule(dynamic, 1) if (n > 1)
    for (int i = 0; i < n; i++) dt_buffer_sha256(L, buf[i], base, hex[i]);
}

void dt_hostpass_sha256_arenas(const dt_case_layout *L, int b, const uint8_t *const *bases,
                               int n, char (*hex)[65]) {
#pragma omp parallel for schedule(dynamic, 1) if (n > 1)
    for (int i = 0; i < n; i++)
        if (bases[i]) dt_buffer_sha256(L, b, bases[i], hex[i]);
}
