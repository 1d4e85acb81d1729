/* test_file_async.c — background atomic writes (src/record/dt_file_async.c): a started
 * write is on disk after the join; writes are ordered (the last started wins); a failed
 * write is returned by the next start (which then writes nothing) or by the join, never
 * lost; the writer thread blocks signals (a SIGUSR1 sent to the process while a write is
 * in flight and this thread blocks it waits for this thread). CPU only. */
#define _GNU_SOURCE
#include "record/dt_file.h"
#include "record/dt_file_async.h"

#include "../dt_check.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *text_of(const char *s) { return dt_xstrdup(s); }

/* 1 when path holds exactly s. */
static int holds(const char *path, const char *s) {
    char *t = NULL;
    size_t n = 0;
    dt_err err;
    if (dt_file_read(path, 1 << 30, "file", &t, &n, &err) != DT_OK) return 0;
    int ok = n == strlen(s) && memcmp(t, s, n) == 0;
    free(t);
    return ok;
}

static volatile sig_atomic_t g_usr1;
static pthread_t g_main;
static volatile sig_atomic_t g_on_main = 1;
static void on_usr1(int s) {
    (void)s;
    g_usr1++;
    if (!pthread_equal(pthread_self(), g_main)) g_on_main = 0;
}

int main(void) {
    char dir[] = "/tmp/dt-test-async-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[128], bad[160];
    snprintf(path, sizeof path, "%s/results.json", dir);
    snprintf(bad, sizeof bad, "%s/no-such-dir/results.json", dir);
    dt_err err = {{0}};
    dt_file_async *w = dt_file_async_new();

    CHECK(dt_file_async_join(w, &err) == DT_OK, "join with nothing in flight");
    CHECK(dt_file_async_start(w, path, text_of("one\n"), 4, &err) == DT_OK, "%s", err.msg);
    CHECK(dt_file_async_join(w, &err) == DT_OK && holds(path, "one\n"), "written: %s", err.msg);

    /* ordered: many starts without joins, the last wins */
    int ok = 1;
    char buf[64];
    for (int i = 0; i < 50; i++) {
        snprintf(buf, sizeof buf, "text %d\n", i);
        ok &= dt_file_async_start(w, path, text_of(buf), strlen(buf), &err) == DT_OK;
    }
    CHECK(ok && dt_file_async_join(w, &err) == DT_OK && holds(path, "text 49\n"),
          "50 writes in order, the last on disk");

    /* a failure comes back at the join */
    CHECK(dt_file_async_start(w, bad, text_of("x"), 1, &err) == DT_OK, "started: %s", err.msg);
    err.msg[0] = 0;
    CHECK(dt_file_async_join(w, &err) == DT_EIO && strstr(err.msg, "no-such-dir"),
          "join returns the failure: %s", err.msg);
    CHECK(dt_file_async_join(w, &err) == DT_OK, "returned once");

    /* ... or at the next start, which then writes nothing */
    CHECK(dt_file_async_start(w, bad, text_of("x"), 1, &err) == DT_OK, "started");
    err.msg[0] = 0;
    CHECK(dt_file_async_start(w, path, text_of("lost?\n"), 6, &err) == DT_EIO &&
              strstr(err.msg, "no-such-dir"),
          "next start returns the failure: %s", err.msg);
    CHECK(dt_file_async_join(w, &err) == DT_OK && holds(path, "text 49\n"),
          "the refused text was not written");

    /* signals go to this thread, not the writer's */
    g_main = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    size_t big = 64u << 20;
    char *t = dt_xmalloc(big + 1);
    memset(t, 'a', big);
    t[big] = 0;
    CHECK(dt_file_async_start(w, path, t, big, &err) == DT_OK, "big write");
    /* blocked here, the signal can only go to the writer, unless it blocks it too: then
     * it stays pending until this thread unblocks it */
    sigset_t one, old;
    sigemptyset(&one);
    sigaddset(&one, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &one, &old);
    kill(getpid(), SIGUSR1);
    CHECK(dt_file_async_join(w, &err) == DT_OK, "big write joined: %s", err.msg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    CHECK(g_usr1 > 0 && g_on_main, "SIGUSR1 handled on the calling thread (%d)", (int)g_usr1);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (size_t)sb.st_size == big, "big file complete");

    dt_file_async_free(w);
    dt_file_async_free(NULL);
    unlink(path);
    rmdir(dir);
    return dt_check_summary("test_file_async");
}
