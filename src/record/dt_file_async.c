/* dt_file_async.c — background atomic file writes, one in flight (dt_file_async.h). */
#define _GNU_SOURCE
#include "record/dt_file_async.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "record/dt_file.h"

struct dt_file_async {
    pthread_t thread;
    int running;  /* a thread was started and not yet joined */
    char *path;   /* of the write in flight (owned) */
    char *text;   /* its bytes (owned) */
    size_t len;
    dt_status st; /* its outcome, set by the thread */
    dt_err err;   /* its message */
};

dt_file_async *dt_file_async_new(void) { return dt_xcalloc(1, sizeof(dt_file_async)); }

static void *write_thread(void *arg) {
    dt_file_async *w = arg;
    w->st = dt_file_write_atomic(w->path, w->text, w->len, &w->err);
    return NULL;
}

static void release(dt_file_async *w) {
    free(w->path);
    free(w->text);
    w->path = w->text = NULL;
    w->len = 0;
}

dt_status dt_file_async_join(dt_file_async *w, dt_err *err) {
    if (!w->running) return DT_OK;
    DT_ASSERT(pthread_join(w->thread, NULL) == 0);
    w->running = 0;
    release(w);
    if (w->st != DT_OK) {
        dt_status st = dt_fail(err, w->st, "%s", w->err.msg);
        w->st = DT_OK;
        return st;
    }
    return DT_OK;
}

dt_status dt_file_async_start(dt_file_async *w, const char *path, char *text, size_t len,
                              dt_err *err) {
    dt_status st = dt_file_async_join(w, err);
    if (st != DT_OK) {
        free(text);
        return st;
    }
    w->path = dt_xstrdup(path);
    w->text = text;
    w->len = len;
    w->st = DT_OK;
    sigset_t all, old; /* the thread inherits a mask that blocks every signal */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->thread, NULL, write_thread, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        w->running = 1;
        return DT_OK;
    }
    st = dt_file_write_atomic(w->path, w->text, w->len, err); /* no thread: here */
    release(w);
    return st;
}

void dt_file_async_free(dt_file_async *w) {
    if (!w) return;
    dt_err e;
    (void)dt_file_async_join(w, &e);
    free(w);
}
