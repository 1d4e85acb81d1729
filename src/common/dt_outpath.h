/* dt_outpath.h — may a writer put a file at this path?
 *
 * Every file dualtime writes (results.json, results.md, the plots' SVG files, a report or a
 * comparison written with --output) goes through dt_outpath_check first. The rule is
 * decided by what the path *is*, never by comparing strings:
 *   - a path that does not exist is fine when its parent is an existing directory;
 *   - an existing regular file is fine unless it is one of the writer's inputs (same
 *     device and inode, so a hard link, a "./" spelling or a symlink to an input is
 *     caught too);
 *   - anything else is refused: a symbolic link (the atomic rename would replace the
 *     link, and a link may point at an input), a directory, a character or block
 *     device (/dev/full), a FIFO, a socket.
 * dt_outpath_check_dir applies the same idea to a directory a writer fills (plots/):
 * an existing real directory or a new path under an existing directory.
 * Thread-safety: reentrant. Nothing here writes anything. */
#ifndef DT_OUTPATH_H
#define DT_OUTPATH_H

#include <stddef.h>

#include "dt_common.h"

/* Checks that `path` may be (over)written. `inputs` (n_inputs paths, may be NULL when
 * n_inputs is 0) are the files the writer reads; a path that is one of them is refused.
 * `flag` names the option the path came from (e.g. "--output"), for the message.
 * Returns DT_OK, or DT_EINVAL with one line in err naming the flag, the path and why. */
dt_status dt_outpath_check(const char *flag, const char *path, const char *const *inputs,
                           size_t n_inputs, dt_err *err);

/* Checks that `dir` is an existing directory (not a symlink) or a new path whose parent
 * is an existing directory. Same message conventions as dt_outpath_check. */
dt_status dt_outpath_check_dir(const char *flag, const char *dir, dt_err *err);

#endif
