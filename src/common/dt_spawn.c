/* dt_spawn.c — starting programs with posix_spawn, capturing their output, PATH lookup
 * (contract in dt_spawn.h). */
#define _GNU_SOURCE
#include "dt_spawn.h"
#include "dt_affinity.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* Pipes for the streams that want one: p[stream][0 read, 1 write]. */
static int make_pipes(const dt_spawn_opts *o, int p[3][2]) {
    dt_spawn_io want[3] = {o->in, o->out, o->err};
    for (int s = 0; s < 3; s++) {
        p[s][0] = p[s][1] = -1;
        if (want[s] == DT_SPAWN_PIPE && pipe2(p[s], O_CLOEXEC) != 0) return -1;
    }
    return 0;
}

static void close_pipes(int p[3][2]) {
    for (int s = 0; s < 3; s++) {
        close_fd(&p[s][0]);
        close_fd(&p[s][1]);
    }
}

/* The child's side of each stream: dup2 of a pipe end, or /dev/null. */
static void add_stream(posix_spawn_file_actions_t *fa, int fd, dt_spawn_io how, int child_end,
                       int out_end) {
    switch (how) {
    case DT_SPAWN_PIPE: posix_spawn_file_actions_adddup2(fa, child_end, fd); break;
    case DT_SPAWN_MERGE: posix_spawn_file_actions_adddup2(fa, out_end, fd); break;
    case DT_SPAWN_NULL:
        posix_spawn_file_actions_addopen(fa, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
        break;
    case DT_SPAWN_INHERIT: break;
    }
}

dt_status dt_spawn_start(char *const argv[], const dt_spawn_opts *o, dt_child *child,
                         dt_err *err) {
    DT_ASSERT(argv && argv[0] && o->in != DT_SPAWN_MERGE && o->out != DT_SPAWN_MERGE);
    DT_ASSERT(o->err != DT_SPAWN_MERGE || o->out == DT_SPAWN_PIPE);
    child->pid = 0;
    child->in_fd = child->out_fd = child->err_fd = -1;
    child->error = 0;
    int p[3][2];
    if (make_pipes(o, p) != 0) {
        int e = errno;
        child->error = e;
        close_pipes(p);
        return dt_fail(err, DT_EIO, "pipe: %s", strerror(e));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    add_stream(&fa, 0, o->in, p[0][0], -1);
    add_stream(&fa, 1, o->out, p[1][1], -1);
    add_stream(&fa, 2, o->err, p[2][1], p[1][1]);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    if (o->own_group) {
        /* Its own process group so a terminal Ctrl-C reaches only us (we stop children
         * ourselves); no inherited blocked or ignored signals. */
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                            POSIX_SPAWN_SETSIGDEF);
        posix_spawnattr_setpgroup(&attr, 0);
        sigset_t none, all;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);
    }
    pid_t pid = 0;
    /* posix_spawn has no affinity attribute: the child inherits the calling thread's
     * mask, so it is set for the spawn and restored after */
    cpu_set_t saved, want;
    int pinned = 0;
    if (o->cpus && dt_affinity_parse(o->cpus, &want) == 0 &&
        sched_getaffinity(0, sizeof saved, &saved) == 0)
        pinned = sched_setaffinity(0, sizeof want, &want) == 0;
    int rc = o->search_path ? posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ)
                            : posix_spawn(&pid, argv[0], &fa, &attr, argv, environ);
    if (pinned) sched_setaffinity(0, sizeof saved, &saved);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close_fd(&p[0][0]);
    close_fd(&p[1][1]);
    close_fd(&p[2][1]);
    if (rc != 0) {
        close_pipes(p);
        child->error = rc;
        return dt_fail(err, DT_EWORKER, "cannot start %s: %s", argv[0], strerror(rc));
    }
    child->pid = pid;
    child->in_fd = p[0][1];
    child->out_fd = p[1][0];
    child->err_fd = p[2][0];
    return DT_OK;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Writes all of input to fd and closes it; input is small (far below a pipe's buffer). */
static void feed_input(int *fd, const char *input) {
    size_t n = strlen(input), off = 0;
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    while (off < n) {
        ssize_t w = write(*fd, input + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    signal(SIGPIPE, old);
    close_fd(fd);
}

/* Reads fd to its end or the deadline (<= 0: none) into out; 1 when it timed out. */
static int read_until(int fd, double deadline, char *out, size_t len) {
    size_t got = 0;
    for (;;) {
        int wait_ms = -1;
        if (deadline > 0) {
            double left = deadline - now_s();
            if (left <= 0) {
                out[got] = '\0';
                return 1;
            }
            wait_ms = (int)(left * 1000) + 1;
        }
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int pr = poll(&pf, 1, wait_ms);
        if (pr <= 0) continue; /* EINTR or a timeout the loop head sees */
        char buf[4096];
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        size_t take = (size_t)k;
        if (got + take > len - 1) take = len - 1 - got;
        memcpy(out + got, buf, take);
        got += take;
    }
    out[got] = '\0';
    return 0;
}

int dt_spawn_capture(char *const argv[], const char *input, int merge_stderr, double timeout_s,
                     char *out, size_t len) {
    DT_ASSERT(len > 0);
    out[0] = '\0';
    dt_spawn_opts o = {input ? DT_SPAWN_PIPE : DT_SPAWN_NULL, DT_SPAWN_PIPE,
                       merge_stderr ? DT_SPAWN_MERGE : DT_SPAWN_NULL, 1, 0, NULL};
    dt_child c;
    dt_err e;
    if (dt_spawn_start(argv, &o, &c, &e) != DT_OK) return -1;
    if (input) feed_input(&c.in_fd, input);
    int timed_out = read_until(c.out_fd, timeout_s > 0 ? now_s() + timeout_s : 0, out, len);
    close_fd(&c.out_fd);
    if (timed_out) kill(c.pid, SIGKILL);
    int st = 0;
    while (waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) return -2;
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int dt_spawn_which(const char *name, char *out, size_t len) {
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0) return -1;
        snprintf(out, len, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    char *copy = dt_xstrdup(path);
    int found = -1;
    for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char cand[PATH_MAX];
        snprintf(cand, sizeof cand, "%s/%s", *d ? d : ".", name);
        if (access(cand, X_OK) == 0) {
            snprintf(out, len, "%s", cand);
            found = 0;
            break;
        }
    }
    free(copy);
    return found;
}
