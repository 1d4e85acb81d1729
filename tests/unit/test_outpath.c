/* test_outpath.c — the output-path rule (src/common/dt_outpath.h) and the run-directory
 * lock (src/common/dt_runlock.h), each case decided by what the path is: an input, a
 * hard link or a symlink to it, a device, a FIFO, a directory, a new path; a lock held
 * by another process refused with its pid, and free again once that process is gone. */
#define _GNU_SOURCE
#include "common/dt_outpath.h"
#include "common/dt_runlock.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../dt_check.h"

static char g_dir[256];

static const char *at(const char *name) {
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static void touch(const char *path) {
    FILE *f = fopen(path, "w");
    if (f) { fputs("x\n", f); fclose(f); }
}

static int refused(const char *path, const char *input, const char *needle) {
    dt_err e = {{0}};
    const char *in[1] = {input};
    dt_status s = dt_outpath_check("--output", path, in, input ? 1 : 0, &e);
    if (s == DT_OK) return 0;
    if (needle && !strstr(e.msg, needle)) {
        fprintf(stderr, "message lacks '%s': %s\n", needle, e.msg);
        return 0;
    }
    return strstr(e.msg, "--output") != NULL;
}

static void test_outpath(void) {
    const char *input = strdup(at("results.json"));
    touch(input);
    touch(at("other.md"));
    /* the input itself, spelled differently, through a hard link and a symlink */
    CHECK(refused(input, input, "is the input"), "the input itself");
    char dotted[600];
    snprintf(dotted, sizeof dotted, "%s/./results.json", g_dir);
    CHECK(refused(dotted, input, "is the input"), "the input spelled with ./");
    CHECK(link(input, at("hard.json")) == 0, "link");
    CHECK(refused(at("hard.json"), input, "is the input"), "a hard link to the input");
    CHECK(symlink(input, at("sym.json")) == 0, "symlink");
    CHECK(refused(at("sym.json"), input, "is the input"), "a symlink to the input");
    /* a symlink to something else is still refused (the rename would replace the link) */
    CHECK(symlink(at("other.md"), at("sym.md")) == 0, "symlink 2");
    CHECK(refused(at("sym.md"), input, "symbolic link"), "a symlink to another file");
    /* not regular files */
    CHECK(refused("/dev/full", input, "character device"), "/dev/full");
    CHECK(refused("/dev/null", NULL, "character device"), "/dev/null");
    CHECK(mkfifo(at("fifo"), 0600) == 0, "mkfifo");
    CHECK(refused(at("fifo"), input, "FIFO"), "a FIFO");
    CHECK(mkdir(at("adir"), 0755) == 0, "mkdir");
    CHECK(refused(at("adir"), input, "directory"), "a directory");
    /* a new path needs an existing folder; a file as the folder is refused */
    CHECK(refused(at("missing/out.md"), input, "does not exist"), "missing folder");
    CHECK(refused(at("other.md/out.md"), input, "not a folder"), "a file as folder");
    /* what is allowed: a new path, and an existing regular file that is not an input */
    dt_err e = {{0}};
    const char *in[1] = {input};
    CHECK(dt_outpath_check("--output", at("new.md"), in, 1, &e) == DT_OK, "new path: %s", e.msg);
    CHECK(dt_outpath_check("--output", at("other.md"), in, 1, &e) == DT_OK, "other file: %s",
          e.msg);
    /* directories a writer fills */
    CHECK(dt_outpath_check_dir("--output", at("adir"), &e) == DT_OK, "existing dir: %s", e.msg);
    CHECK(dt_outpath_check_dir("--output", at("newdir"), &e) == DT_OK, "new dir: %s", e.msg);
    CHECK(dt_outpath_check_dir("--output", "/dev/full", &e) != DT_OK, "device as dir");
    CHECK(dt_outpath_check_dir("--output", at("other.md"), &e) != DT_OK, "file as dir");
    CHECK(symlink(at("adir"), at("symdir")) == 0, "symlink dir");
    CHECK(dt_outpath_check_dir("--output", at("symdir"), &e) != DT_OK, "symlink as dir");
}

static void test_runlock(void) {
    const char *dir = strdup(at("run"));
    CHECK(mkdir(dir, 0755) == 0, "mkdir run");
    /* a child holds the lock; the parent is refused with the child's pid */
    int p2c[2], c2p[2];
    CHECK(pipe(p2c) == 0 && pipe(c2p) == 0, "pipes");
    pid_t child = fork();
    if (child == 0) {
        dt_runlock l;
        dt_err e;
        char c = dt_runlock_take(&l, dir, &e) == DT_OK ? 'y' : 'n';
        if (write(c2p[1], &c, 1) != 1) _exit(3);
        if (read(p2c[0], &c, 1) != 1) _exit(4); /* hold until told */
        _exit(0);
    }
    char c = 0;
    CHECK(read(c2p[0], &c, 1) == 1 && c == 'y', "child took the lock");
    dt_runlock mine;
    dt_err e = {{0}};
    CHECK(dt_runlock_take(&mine, dir, &e) != DT_OK, "second writer refused");
    char pidtxt[32];
    snprintf(pidtxt, sizeof pidtxt, "pid %ld", (long)child);
    CHECK(strstr(e.msg, pidtxt) != NULL, "message names the holder: %s", e.msg);
    CHECK(mine.fd == -1, "no fd on refusal");
    /* the holder dies (no release): the kernel drops the flock, the stale file is harmless */
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    CHECK(dt_runlock_take(&mine, dir, &e) == DT_OK, "free after the holder died: %s", e.msg);
    CHECK(fcntl(mine.fd, F_GETFD) & FD_CLOEXEC, "close-on-exec");
    dt_runlock again;
    CHECK(dt_runlock_take(&again, dir, &e) != DT_OK, "held by this process: a second take refused");
    dt_runlock_release(&mine);
    CHECK(dt_runlock_take(&again, dir, &e) == DT_OK, "free after release: %s", e.msg);
    dt_runlock_release(&again);
    dt_runlock_release(&again); /* twice is harmless */
    CHECK(dt_runlock_take(&again, at("no-such-dir"), &e) != DT_OK, "missing dir refused");
    close(p2c[0]); close(p2c[1]); close(c2p[0]); close(c2p[1]);
}

int main(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/dt-outpath-XXXXXX");
    if (!mkdtemp(g_dir)) { perror("mkdtemp"); return 1; }
    test_outpath();
    test_runlock();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
