/* dt_worker.c — worker processes over pipes (see dt_worker.h). */
#define _GNU_SOURCE
#include "dt_worker.h"

#include "../common/dt_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DT_MAX_RESPONSE (16u << 20)

void dt_worker_init(dt_worker *w, char *const argv[]) {
    memset(w, 0, sizeof *w);
    int i = 0;
    for (; argv[i] && i < DT_WORKER_MAX_ARGS; i++) w->argv[i] = dt_xstrdup(argv[i]);
    w->argv[i] = NULL;
    w->to_fd = w->from_fd = w->err_fd = -1;
    w->exit_status = -1;
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

dt_status dt_worker_start(dt_worker *w, dt_err *err) {
    DT_ASSERT(w->pid == 0);
    /* stdin/stdout/stderr are pipes; the worker gets its own process group so a terminal
     * Ctrl-C reaches only us: we stop workers ourselves. */
    dt_spawn_opts o = {DT_SPAWN_PIPE, DT_SPAWN_PIPE, DT_SPAWN_PIPE, 0, 1, w->cpus};
    dt_child c;
    dt_err e;
    dt_status st = dt_spawn_start(w->argv, &o, &c, &e);
    if (st == DT_EIO) return dt_fail(err, DT_EIO, "%s", e.msg);
    if (st != DT_OK)
        return dt_fail(err, DT_EWORKER, "cannot start worker %s: %s", w->argv[0],
                       strerror(c.error));
    w->pid = c.pid;
    w->to_fd = c.in_fd;
    w->from_fd = c.out_fd;
    w->err_fd = c.err_fd;
    fcntl(w->from_fd, F_SETFL, O_NONBLOCK);
    fcntl(w->err_fd, F_SETFL, O_NONBLOCK);
    w->rlen = 0;
    w->tail_len = w->tail_pos = 0;
    w->death[0] = 0;
    w->exit_status = -1;
    w->timed_out = 0;
    return DT_OK;
}

int dt_worker_alive(const dt_worker *w) { return w->pid > 0; }

static void tail_add(dt_worker *w, const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        w->tail[w->tail_pos] = p[i];
        w->tail_pos = (w->tail_pos + 1) % DT_STDERR_TAIL;
        if (w->tail_len < DT_STDERR_TAIL) w->tail_len++;
    }
}

static void drain_stderr(dt_worker *w) {
    if (w->err_fd < 0) return;
    char buf[4096];
    for (;;) {
        ssize_t n = read(w->err_fd, buf, sizeof buf);
        if (n > 0) {
            tail_add(w, buf, (size_t)n);
            continue;
        }
        if (n == 0) close_fd(&w->err_fd);
        break;
    }
}

void dt_worker_stderr_tail(dt_worker *w, char *buf, size_t len) {
    drain_stderr(w);
    size_t n = w->tail_len < len - 1 ? w->tail_len : len - 1;
    size_t start = (w->tail_pos + DT_STDERR_TAIL - w->tail_len) % DT_STDERR_TAIL;
    start = (start + (w->tail_len - n)) % DT_STDERR_TAIL;
    for (size_t i = 0; i < n; i++) buf[i] = w->tail[(start + i) % DT_STDERR_TAIL];
    buf[n] = 0;
}

static void reap(dt_worker *w, int block) {
    if (w->pid <= 0) return;
    int st = 0;
    pid_t r = waitpid(w->pid, &st, block ? 0 : WNOHANG);
    if (r == w->pid) {
        /* whatever the worker left in its group (a shell's children) goes with it */
        kill(-w->pid, SIGKILL);
        dt_spawn_forget_group(w->pid);
        w->exit_status = st;
        w->pid = 0;
    }
}

static void describe_exit(dt_worker *w, char *buf, size_t len) {
    if (w->exit_status < 0) {
        snprintf(buf, len, "still running");
    } else if (WIFSIGNALED(w->exit_status)) {
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(w->exit_status),
                 strsignal(WTERMSIG(w->exit_status)));
    } else {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(w->exit_status));
    }
}

void dt_worker_kill(dt_worker *w, const char *why) {
    if (why && !w->death[0]) snprintf(w->death, sizeof w->death, "%s", why);
    if (w->pid > 0) {
        /* the worker's group: its own children die with it (a shell's sleep) */
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        reap(w, 1);
    }
    drain_stderr(w);
    close_fd(&w->to_fd);
    close_fd(&w->from_fd);
    close_fd(&w->err_fd);
}

/* Writes all of buf, tolerating EINTR; returns 0 on success. */
static int write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t k = write(fd, buf, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        buf += k;
        n -= (size_t)k;
    }
    return 0;
}

dt_status dt_worker_fail(dt_worker *w, const char *what, dt_err *err) {
    char how[128];
    /* give the process a moment to be reaped so we can say how it ended */
    for (int i = 0; i < 50 && w->pid > 0; i++) {
        reap(w, 0);
        if (w->pid > 0) usleep(2000);
    }
    dt_worker_kill(w, what);
    describe_exit(w, how, sizeof how);
    return dt_fail(err, DT_EWORKER, "worker %s: %s (%s)", w->argv[0], what, how);
}

static int (*g_interrupted)(void);

void dt_worker_set_interrupt(int (*interrupted)(void)) { g_interrupted = interrupted; }

dt_status dt_worker_send(dt_worker *w, const char *line, dt_err *err) {
    if (w->pid <= 0) return dt_fail(err, DT_EWORKER, "worker %s is not running", w->argv[0]);
    /* A worker that died closes the pipe: write fails with EPIPE (SIGPIPE is ignored by
     * the CLI). */
    size_t n = strlen(line);
    if (write_all(w->to_fd, line, n) != 0 || write_all(w->to_fd, "\n", 1) != 0)
        return dt_worker_fail(w, "closed its input", err);
    w->rlen = 0;
    return DT_OK;
}

dt_status dt_worker_request(dt_worker *w, const char *line, double timeout_s, char **answer,
                            dt_err *err) {
    *answer = NULL;
    dt_status st = dt_worker_send(w, line, err);
    return st != DT_OK ? st : dt_worker_receive(w, timeout_s, answer, err);
}

dt_status dt_worker_receive(dt_worker *w, double timeout_s, char **answer, dt_err *err) {
    *answer = NULL;
    if (w->pid <= 0) return dt_fail(err, DT_EWORKER, "worker %s is not running", w->argv[0]);
    int64_t deadline = dt_now_ns() + (int64_t)(timeout_s * 1e9);
    for (;;) {
        /* a complete line in the buffer? */
        char *nl = w->rbuf ? memchr(w->rbuf, '\n', w->rlen) : NULL;
        if (nl) {
            *nl = 0;
            *answer = dt_xstrdup(w->rbuf);
            return DT_OK;
        }
        if (g_interrupted && g_interrupted())
            return dt_worker_fail(w, "interrupted while waiting for its answer", err);
        int64_t left_ms = (deadline - dt_now_ns()) / 1000000;
        if (left_ms <= 0) {
            char what[128];
            snprintf(what, sizeof what, "did not answer within %.0f s (--timeout)", timeout_s);
            w->timed_out = 1;
            return dt_worker_fail(w, what, err);
        }
        struct pollfd pf[2] = {{w->from_fd, POLLIN, 0}, {w->err_fd, POLLIN, 0}};
        int np = w->err_fd >= 0 ? 2 : 1;
        int pr = poll(pf, (nfds_t)np, left_ms > 1000 ? 1000 : (int)left_ms);
        if (pr < 0 && errno != EINTR) return dt_worker_fail(w, "poll failed", err);
        if (np == 2 && (pf[1].revents & (POLLIN | POLLHUP))) drain_stderr(w);
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            if (w->rcap - w->rlen < 65536) {
                size_t cap = w->rcap ? w->rcap * 2 : 131072;
                w->rbuf = realloc(w->rbuf, cap);
                DT_ASSERT(w->rbuf);
                w->rcap = cap;
            }
            ssize_t k = read(w->from_fd, w->rbuf + w->rlen, w->rcap - w->rlen - 1);
            if (k > 0) {
                w->rlen += (size_t)k;
                w->rbuf[w->rlen] = 0;
                if (w->rlen > DT_MAX_RESPONSE)
                    return dt_worker_fail(w, "answered a line longer than 16 MiB", err);
            } else if (k == 0) {
                return dt_worker_fail(w, "closed its output (exited or crashed)", err);
            } else if (errno != EAGAIN && errno != EINTR) {
                return dt_worker_fail(w, "read from worker failed", err);
            }
        }
        reap(w, 0);
        if (w->pid <= 0) {
            /* it exited; read what is left before declaring death */
            ssize_t k;
            while (w->rcap - w->rlen > 1 &&
                   (k = read(w->from_fd, w->rbuf + w->rlen, w->rcap - w->rlen - 1)) > 0) {
                w->rlen += (size_t)k;
                w->rbuf[w->rlen] = 0;
            }
            if (!(w->rbuf && memchr(w->rbuf, '\n', w->rlen))) {
                drain_stderr(w);
                return dt_worker_fail(w, "exited while serving a request", err);
            }
        }
    }
}

void dt_worker_stop(dt_worker *w) {
    if (w->pid > 0) {
        char *r = NULL;
        dt_err e;
        if (dt_worker_request(w, "{\"cmd\":\"quit\"}", 5.0, &r, &e) == DT_OK) {
            free(r);
            for (int i = 0; i < 250 && w->pid > 0; i++) {
                reap(w, 0);
                if (w->pid > 0) usleep(2000);
            }
        }
    }
    dt_worker_kill(w, "stopped");
}

void dt_worker_free(dt_worker *w) {
    dt_worker_stop(w);
    for (int i = 0; w->argv[i]; i++) free(w->argv[i]);
    free(w->rbuf);
    memset(w, 0, sizeof *w);
    w->to_fd = w->from_fd = w->err_fd = -1;
}
