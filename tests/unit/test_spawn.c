/* test_spawn.c — the one spawner (src/common/dt_spawn.h): captured output and exit
 * status, stderr to /dev/null or merged, input on stdin, the time limit (the child is
 * killed), a signal's 128+N, a program that cannot start, a started child's pipes and
 * process group, and PATH lookup. Run: ctest -R test_spawn. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../dt_check.h"
#include "common/dt_common.h"
#include "common/dt_spawn.h"

static void test_capture(void) {
    char out[256];
    char *echo[] = {"sh", "-c", "echo hello; echo oops >&2; exit 3", NULL};
    int rc = dt_spawn_capture(echo, NULL, 0, 10, out, sizeof out);
    CHECK(rc == 3, "exit status %d, wanted 3", rc);
    CHECK(strcmp(out, "hello\n") == 0, "stdout only: '%s'", out);
    rc = dt_spawn_capture(echo, NULL, 1, 10, out, sizeof out);
    CHECK(rc == 3 && strstr(out, "hello") && strstr(out, "oops"), "merged: rc %d '%s'", rc, out);
    char *cat[] = {"cat", NULL};
    rc = dt_spawn_capture(cat, "line one\nline two\n", 0, 10, out, sizeof out);
    CHECK(rc == 0 && strcmp(out, "line one\nline two\n") == 0, "input: rc %d '%s'", rc, out);
    /* truncated to len-1, read to the end (the child is not blocked by a full pipe) */
    char small[8];
    char *yes[] = {"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x", NULL};
    rc = dt_spawn_capture(yes, NULL, 0, 10, small, sizeof small);
    CHECK(rc == 0 && strcmp(small, "xxxxxxx") == 0, "truncated: rc %d '%s'", rc, small);
}

static void test_limits(void) {
    char out[64];
    char *sleepy[] = {"sleep", "30", NULL};
    int64_t t0 = dt_now_ns();
    int rc = dt_spawn_capture(sleepy, NULL, 0, 0.3, out, sizeof out);
    double s = (double)(dt_now_ns() - t0) / 1e9;
    CHECK(rc == -2 && s < 5, "timeout: rc %d after %.1f s", rc, s);
    char *killed[] = {"sh", "-c", "kill -9 $$", NULL};
    rc = dt_spawn_capture(killed, NULL, 0, 10, out, sizeof out);
    CHECK(rc == 128 + 9, "signal: rc %d, wanted 137", rc);
    char *none[] = {"/nonexistent/program", NULL};
    rc = dt_spawn_capture(none, NULL, 1, 10, out, sizeof out);
    CHECK(rc == -1 || rc == 127, "cannot start: rc %d", rc);
}

static void test_start(void) {
    char path[4096];
    CHECK(dt_spawn_which("cat", path, sizeof path) == 0 && path[0] == '/', "which cat: %s", path);
    CHECK(dt_spawn_which("dt-no-such-program", path, sizeof path) == -1, "which of nothing");
    CHECK(dt_spawn_which("/bin/sh", path, sizeof path) == 0 && strcmp(path, "/bin/sh") == 0,
          "which of a path");
    char *argv[] = {path, NULL};
    dt_spawn_which("cat", path, sizeof path);
    dt_spawn_opts o = {DT_SPAWN_PIPE, DT_SPAWN_PIPE, DT_SPAWN_PIPE, 0, 1, NULL};
    dt_child c;
    dt_err err = {{0}};
    CHECK(dt_spawn_start(argv, &o, &c, &err) == DT_OK, "start: %s", err.msg);
    CHECK(c.in_fd >= 0 && c.out_fd >= 0 && c.err_fd >= 0, "three pipes");
    CHECK(getpgid(c.pid) == c.pid, "own process group");
    CHECK(write(c.in_fd, "ping\n", 5) == 5, "write");
    close(c.in_fd);
    char buf[16] = "";
    ssize_t n = read(c.out_fd, buf, sizeof buf - 1);
    CHECK(n == 5 && strncmp(buf, "ping\n", 5) == 0, "echoed: %zd", n);
    close(c.out_fd);
    close(c.err_fd);
    int st = 0;
    waitpid(c.pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "cat exit");
    char *bad[] = {"/nonexistent/worker", NULL};
    CHECK(dt_spawn_start(bad, &o, &c, &err) == DT_EWORKER && c.pid == 0 && c.error != 0 &&
              strstr(err.msg, "/nonexistent/worker"),
          "start of nothing: %s", err.msg);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    test_capture();
    test_limits();
    test_start();
    printf("test_spawn: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
