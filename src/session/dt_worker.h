/* dt_worker.h — one worker process and the line channel to it (docs/protocol.md): the
 * transport under session/dt_protocol, which gives the lines their meaning.
 *
 * A worker is started through the one spawner (common/dt_spawn.h: no shell, stdin and
 * stdout pipes, stderr captured into a 4 KiB tail, its own process group).
 * dt_worker_request() sends one request line and waits up to timeout_s for one answer
 * line. A worker that exits, closes its stdout, times out, or (dt_worker_fail, called by
 * the protocol) answers garbage is killed (SIGKILL) and marked dead; the caller records
 * the error with the stderr tail and starts a fresh one.
 *
 * Ownership: dt_worker owns its pipes and child; dt_worker_stop() releases them. The
 * answer text is the caller's (free). Not thread-safe. */
#ifndef DT_WORKER_H
#define DT_WORKER_H

#include <sys/types.h>

#include "../common/dt_common.h"

#define DT_WORKER_MAX_ARGS 32
#define DT_STDERR_TAIL 4096

typedef struct dt_worker {
    char *argv[DT_WORKER_MAX_ARGS + 1]; /* owned copies; argv[0] is the program */
    pid_t pid;                          /* 0 when not running */
    int to_fd, from_fd, err_fd;         /* pipes: worker stdin, stdout, stderr */
    char *rbuf;                         /* partial response line */
    size_t rlen, rcap;
    char tail[DT_STDERR_TAIL];          /* ring of the last stderr bytes */
    size_t tail_len, tail_pos;
    int exit_status;                    /* waitpid status after death, -1 unknown */
    char death[256];                    /* why it was stopped, "" if alive */
    int timed_out;                      /* the last request ran out of time (reset by start) */
    const char *cpus;                   /* CPU list to start it pinned to (not owned;
                                           NULL: inherit the caller's affinity) */
} dt_worker;

/* Copies argv (NULL-terminated) into w. Does not start it. */
void dt_worker_init(dt_worker *w, char *const argv[]);
/* Starts the process. */
dt_status dt_worker_start(dt_worker *w, dt_err *err);
/* Sends one request line (no newline; it is added) and waits for one answer line: on
 * DT_OK *answer is it (NUL-terminated, without the newline; caller frees). Any transport
 * failure kills the worker and returns DT_EWORKER with a message. */
dt_status dt_worker_request(dt_worker *w, const char *line, double timeout_s, char **answer,
                            dt_err *err);
/* dt_worker_request in two halves, so that several workers work on a request at once:
 * send writes the line; receive waits (timeout_s from now) for the answer of the one
 * request sent and not yet received. Same failures as dt_worker_request. */
dt_status dt_worker_send(dt_worker *w, const char *line, dt_err *err);
dt_status dt_worker_receive(dt_worker *w, double timeout_s, char **answer, dt_err *err);
/* Kills w because of `what` (e.g. its answer is not a protocol line) and returns
 * DT_EWORKER with "worker PROG: what (how it ended)". */
dt_status dt_worker_fail(dt_worker *w, const char *what, dt_err *err);
int dt_worker_alive(const dt_worker *w);
/* A check the waits of every request make (between polls, at most 1 s apart; NULL: none):
 * when it returns nonzero the request fails at once and the worker is killed, so a stop
 * asked for by a signal never waits for a hung worker. */
void dt_worker_set_interrupt(int (*interrupted)(void));
/* Copies the stderr tail (oldest first) into buf, NUL-terminated. */
void dt_worker_stderr_tail(dt_worker *w, char *buf, size_t len);
/* Sends quit, waits briefly, then kills. Safe to call on a stopped worker. */
void dt_worker_stop(dt_worker *w);
/* Kills immediately (SIGKILL) and reaps. */
void dt_worker_kill(dt_worker *w, const char *why);
/* Frees argv copies; stops the worker if running. */
void dt_worker_free(dt_worker *w);

#endif
