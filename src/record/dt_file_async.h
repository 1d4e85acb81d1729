/* dt_file_async.h — one atomic whole-file write at a time on a background thread, so that a
 * caller (the run loop, after every case) does not wait for write + fsync + rename.
 *
 * dt_file_async_start hands a text to a thread that writes it with dt_file_write_atomic
 * (so a reader sees the old or the new file, never a torn one). Writes are ordered: a
 * start first joins the write in flight, and a failure of that earlier write is returned
 * by this start (the new text is then not written) or by dt_file_async_join, never lost.
 * Whoever writes the same path by other means must join first (else an older text could
 * be renamed over a newer one). The thread blocks every signal, so signals of the run
 * (SIGINT: stop) reach the calling threads as before. When no thread can be made the
 * write happens on the caller's thread.
 * Ownership: start takes `text` (freed when written or refused); path is copied.
 * Thread-safety: one writer is used by one thread (its own thread aside). Never prints. */
#ifndef DT_FILE_ASYNC_H
#define DT_FILE_ASYNC_H

#include "common/dt_common.h"

#include <stddef.h>

typedef struct dt_file_async dt_file_async;

dt_file_async *dt_file_async_new(void);

/* Joins the write in flight (its failure returned, text freed, nothing started), then
 * starts writing len bytes of text (taken) to path. */
dt_status dt_file_async_start(dt_file_async *w, const char *path, char *text, size_t len,
                              dt_err *err);

/* Waits for the write in flight; its status (DT_OK when there was none). After a join the
 * file is on disk (or the failure was returned here). */
dt_status dt_file_async_join(dt_file_async *w, dt_err *err);

/* Joins (a failure not yet returned is dropped: join first to see it) and frees. NULL is
 * fine. */
void dt_file_async_free(dt_file_async *w);

#endif
