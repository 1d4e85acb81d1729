/* dt_file.h — whole-file reads with a size bound and atomic whole-file writes.
 *
 * dt_file_write_atomic writes a temporary file in the destination's directory (mode
 * 0644), fsyncs it, renames it over the destination and fsyncs the directory, so a
 * reader sees the old or the new file, never a torn one; on failure the temporary file
 * is removed and the destination is untouched. dt_file_read refuses non-regular files
 * and files larger than max_bytes before reading them (a hostile or runaway file is
 * refused with a message rather than by running out of memory).
 * Ownership: *text of a successful read is the caller's (free); it is NUL-terminated
 * (len excludes the NUL). Units: bytes. Reentrant; never prints. */
#ifndef DT_FILE_H
#define DT_FILE_H

#include "common/dt_common.h"

#include <stdint.h>

/* Writes len bytes of text to path atomically (see above). DT_EIO naming the failed
 * step ("write", "fsync", "rename", ...) on failure. */
dt_status dt_file_write_atomic(const char *path, const char *text, size_t len, dt_err *err);

/* Reads all of path. DT_EIO "cannot read: <errno text>" when it cannot be opened or
 * read; DT_EINVAL "not a regular file" / "N bytes is larger than results.json may be
 * (M bytes)" (the message names `what_kind`, e.g. "results.json"). */
dt_status dt_file_read(const char *path, uint64_t max_bytes, const char *what_kind,
                       char **text, size_t *len, dt_err *err);

#endif
