/* dt_spawn.h — the one way dualtime starts another program: posix_spawn (no shell), with
 * each of stdin/stdout/stderr either a pipe back to the caller, /dev/null, or (stderr
 * only) merged into stdout. It serves the workers (dt_worker: three pipes, the child in
 * its own process group with default signal dispositions), the capture of a command's
 * output (git, the doctor's interpreter and native-worker probes: optional input on
 * stdin, a time limit) and PATH lookup of a program.
 *
 * Ownership: dt_spawn_start gives the caller the child's pid and the parent ends of the
 * pipes it asked for (close-on-exec; the caller closes them and reaps the child).
 * dt_spawn_capture does everything itself and leaves nothing open. Never prints, never
 * exits. Thread-safety: reentrant, but a child inherits every descriptor of the process
 * that is not close-on-exec (dualtime opens its own with O_CLOEXEC). */
#ifndef DT_SPAWN_H
#define DT_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#include "dt_common.h"

/* What one standard stream of the child is connected to. */
typedef enum dt_spawn_io {
    DT_SPAWN_NULL = 0,  /* /dev/null */
    DT_SPAWN_PIPE = 1,  /* a pipe; the parent's end is returned */
    DT_SPAWN_MERGE = 2, /* stderr only: the same pipe as stdout */
    DT_SPAWN_INHERIT = 3, /* the parent's own descriptor */
} dt_spawn_io;

typedef struct dt_spawn_opts {
    dt_spawn_io in, out, err;
    int search_path; /* 1: argv[0] is looked up in PATH (posix_spawnp) */
    int own_group;   /* 1: own process group, empty signal mask, default dispositions */
    const char *cpus; /* CPU list ("2-3,5") the child starts pinned to (it inherits the
                         calling thread's affinity, set for the spawn and restored);
                         NULL: inherit as it is */
} dt_spawn_opts;

/* A started child and the parent's ends of its pipes (-1 where none). */
typedef struct dt_child {
    pid_t pid;
    int in_fd, out_fd, err_fd;
    int error; /* after a failed start: the errno value (strerror names it) */
} dt_child;

/* Starts argv (NULL-terminated) as opts says. On failure nothing is left open and err
 * names the program (DT_EIO for pipes, DT_EWORKER when the program cannot start). */
dt_status dt_spawn_start(char *const argv[], const dt_spawn_opts *opts, dt_child *child,
                         dt_err *err);

/* Runs argv (PATH lookup, no shell) to its end with `input` on its stdin (NULL:
 * /dev/null), its stdout (and its stderr when merge_stderr, else /dev/null) into out
 * (NUL-terminated, truncated to len-1 bytes; the child is read to its end). timeout_s
 * <= 0 waits without limit. Returns the exit status, 128+signal when it was killed, -1
 * when it cannot start, -2 after timeout_s (the child is then killed). */
int dt_spawn_capture(char *const argv[], const char *input, int merge_stderr, double timeout_s,
                     char *out, size_t len);

/* Resolves a program name through PATH (a name with '/' must itself be executable) into
 * out; returns 0, or -1 when there is no such executable. */
int dt_spawn_which(const char *name, char *out, size_t len);

#endif
