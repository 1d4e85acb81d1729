/* dt_kcache.h — the on-disk cache of compiled kernel images (NVRTC cubins and PTX) that
 * the native CUDA workers share: a run's main and probe workers, its rounds and the
 * next run compile each kernel once instead of once per process (~100 ms each, about 60
 * kernels a default run; measured on the H200 as "probe worker prepare").
 *
 * Where: DUALTIME_KERNEL_CACHE=DIR, or `off` for none; unset: $XDG_CACHE_HOME/dualtime/
 * kernels, else $HOME/.cache/dualtime/kernels (created 0700). An entry is DIR/KEY.img,
 * KEY the caller's 64 hex digits (SHA-256 of everything that makes the image: source,
 * headers, compile options, NVRTC version); the file holds a magic line, the SHA-256 of
 * the image and the image. An entry whose digest does not match (a torn or edited file)
 * is a miss and is replaced, never loaded. Writes go to a temporary file renamed over the
 * entry, so concurrent workers never see half an entry.
 * Ownership: dt_kcache_get returns a malloc'd image the caller frees. Units: bytes.
 * Thread-safety: the directory is resolved once per process (not thread-safe then);
 * get and put are reentrant. */
#ifndef DT_KCACHE_H
#define DT_KCACHE_H

#include <stddef.h>

/* The cache directory (created on first use), or NULL when off or unusable; *why (may
 * be NULL) says why it is NULL ("off", "mkdir DIR: ..."). Resolved once per process. */
const char *dt_kcache_dir(const char **why);

/* 1 and *image (*bytes) when DIR/key.img exists and is intact; 0 otherwise. */
int dt_kcache_get(const char *key, char **image, size_t *bytes);

/* Stores image under key (best effort: 0 stored, -1 not; a full disk only costs a
 * compile next time). */
int dt_kcache_put(const char *key, const char *image, size_t bytes);

/* Test hook: forget the resolved directory, so the next call reads the environment. */
void dt_kcache_reset(void);

#endif
