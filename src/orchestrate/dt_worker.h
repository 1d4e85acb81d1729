/* dt_worker.h — one worker process and the request/response channel to it
 * (docs/protocol.md).
 *
 * The orchestrator starts a worker with posix_spawn (no shell), with stdin/stdout as
 * pipes and stderr captured into a 4 KiB tail. dt_worker_request() sends one JSON
 * request line and waits up to timeout_s for one JSON response line. A worker that
 * exits, closes its stdout, answers garbage or times out is killed (SIGKILL) and marked
 * dead; the caller records the error with the stderr tail and starts a fresh one.
 *
 * Ownership: dt_worker owns its pipes and child; dt_worker_stop() releases them. The
 * response json_t is owned by the caller (json_decref). Not thread-safe. */
#ifndef DT_WORKER_H
#define DT_WORKER_H

#include <jansson.h>
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
} dt_worker;

/* Copies argv (NULL-terminated) into w. Does not start it. */
void dt_worker_init(dt_worker *w, char *const argv[]);
/* Starts the process. */
dt_status dt_worker_start(dt_worker *w, dt_err *err);
/* Sends request (not consumed) and waits for a response object with "ok".
 * On DT_OK *response is set (may have ok:false; the caller inspects it). Any transport
 * failure kills the worker and returns DT_EWORKER with a message. */
dt_status dt_worker_request(dt_worker *w, const json_t *request, double timeout_s,
                            json_t **response, dt_err *err);
/* Convenience: like dt_worker_request but also turns ok:false into DT_EWORKER with the
 * worker's error text, setting *dead = 0 (worker still usable) or 1. */
dt_status dt_worker_call(dt_worker *w, const json_t *request, double timeout_s,
                         json_t **response, dt_err *err);
int dt_worker_alive(const dt_worker *w);
/* Copies the stderr tail (oldest first) into buf, NUL-terminated. */
void dt_worker_stderr_tail(dt_worker *w, char *buf, size_t len);
/* Sends quit, waits briefly, then kills. Safe to call on a stopped worker. */
void dt_worker_stop(dt_worker *w);
/* Kills immediately (SIGKILL) and reaps. */
void dt_worker_kill(dt_worker *w, const char *why);
/* Frees argv copies; stops the worker if running. */
void dt_worker_free(dt_worker *w);

#endif
