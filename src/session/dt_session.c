/* dt_session.c — starting and stopping the workers of a run, the backend choice
 * (contract in dt_session.h). */
#define _GNU_SOURCE
#include "dt_session.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/dt_spawn.h"

/* A command line being built: owned words, NULL-terminated. */
typedef struct cmd_words {
    char *w[DT_WORKER_MAX_ARGS + 1];
    int n;
} cmd_words;

static void words_free(cmd_words *c) {
    for (int i = 0; i < c->n; i++) free(c->w[i]);
    c->n = 0;
    c->w[0] = NULL;
}

/* Splits a worker command on spaces (no shell, no quoting); argv[0] resolved in PATH. */
static dt_status split_cmd(const char *flag, const char *text, cmd_words *c, dt_err *err) {
    c->n = 0;
    char *copy = dt_xstrdup(text);
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (c->n == DT_WORKER_MAX_ARGS - 2) {
            free(copy);
            words_free(c);
            return dt_fail(err, DT_EINVAL, "%s: too many words in '%s'", flag, text);
        }
        c->w[c->n++] = dt_xstrdup(t);
    }
    free(copy);
    c->w[c->n] = NULL;
    if (c->n == 0) return dt_fail(err, DT_EINVAL, "%s: empty command", flag);
    char path[PATH_MAX];
    if (dt_spawn_which(c->w[0], path, sizeof path) != 0) {
        dt_status st = dt_fail(err, DT_EINVAL, "%s: '%s' is not an executable program", flag,
                               c->w[0]);
        words_free(c);
        return st;
    }
    free(c->w[0]);
    c->w[0] = dt_xstrdup(path);
    return DT_OK;
}

/* Appends "--threads N" (every worker gets it as its last arguments). */
static void add_threads(cmd_words *c, int threads) {
    char t[32];
    snprintf(t, sizeof t, "%d", threads);
    c->w[c->n++] = dt_xstrdup("--threads");
    c->w[c->n++] = dt_xstrdup(t);
    c->w[c->n] = NULL;
}

/* Initialises member m's two workers with argv and starts the main one (hello). */
static dt_status member_start(dt_session *s, dt_session_member *m, char *const argv[],
                              dt_err *err) {
    for (int k = 0; k < DT_STEP_COUNT; k++) {
        dt_worker_init(&m->worker[k], argv);
        m->worker[k].cpus = m->cpus[0] ? m->cpus : NULL;
    }
    return dt_protocol_start(&m->worker[DT_STEP_MAIN], s->timeout_s, &m->hello, err);
}

/* A given command (--candidate-worker / --baseline-worker) or the default program. */
static dt_status start_command(dt_session *s, dt_session_member *m, const char *flag,
                               const char *cmd, const char *default_prog, int threads,
                               dt_err *err) {
    cmd_words c = {{0}, 0};
    if (cmd) {
        dt_status st = split_cmd(flag, cmd, &c, err);
        if (st != DT_OK) return st;
    } else {
        c.w[c.n++] = dt_xstrdup(default_prog);
    }
    add_threads(&c, threads);
    dt_err e;
    dt_status st = member_start(s, m, c.w, &e);
    words_free(&c);
    if (st != DT_OK) return dt_fail(err, st, "%s worker: %s", m->role, e.msg);
    return DT_OK;
}

int dt_session_python_candidates(const char *python_arg, const char *cands[2], const char **how) {
    if (python_arg) {
        cands[0] = python_arg;
        *how = "--python";
        return 1;
    }
    const char *env = getenv("DUALTIME_PYTHON");
    if (env) {
        cands[0] = env;
        *how = "DUALTIME_PYTHON";
        return 1;
    }
    cands[0] = "python3";
    cands[1] = "/usr/bin/python3";
    *how = "python3 on PATH, then /usr/bin/python3";
    return 2;
}

/* The PyTorch worker with the first interpreter whose hello works. */
static dt_status start_torch(dt_session *s, dt_session_member *m, const dt_session_settings *set,
                             dt_err *err) {
    char script[PATH_MAX + 32];
    snprintf(script, sizeof script, "%s/dualtime_torch_worker.py", set->exe_dir);
    if (access(script, R_OK) != 0)
        return dt_fail(err, DT_EINVAL, "the PyTorch worker %s is missing (rebuild dualtime)",
                       script);
    const char *cands[2], *how;
    int nc = dt_session_python_candidates(set->python, cands, &how);
    char threads[32];
    snprintf(threads, sizeof threads, "%d", set->threads);
    char last[DT_ERR_LEN] = "no python3 found";
    char tried[1024] = "";
    for (int i = 0; i < nc; i++) {
        char path[PATH_MAX];
        if (dt_spawn_which(cands[i], path, sizeof path) != 0) {
            if (set->python)
                return dt_fail(err, DT_EINVAL, "--python: '%s' is not an executable program",
                               set->python);
            continue;
        }
        if (strstr(tried, path)) continue;
        strncat(tried, path, sizeof tried - strlen(tried) - 2);
        strcat(tried, " ");
        char *argv[] = {path, script, "--threads", threads, NULL};
        dt_err e;
        if (member_start(s, m, argv, &e) == DT_OK) {
            snprintf(s->python, sizeof s->python, "%s", path);
            return DT_OK;
        }
        snprintf(last, sizeof last, "%s", e.msg);
        for (int k = 0; k < DT_STEP_COUNT; k++) dt_worker_free(&m->worker[k]);
        dt_hello_free(&m->hello);
    }
    return dt_fail(err, DT_EINVAL, "no usable PyTorch worker (tried %s): %s", tried, last);
}

/* Explicit, never a silent fallback: a requested backend every worker must offer;
 * automatic: cuda when both offer it, else cpu with the reason. */
static dt_status choose_backend(dt_session *s, const char *requested, dt_err *err) {
    const dt_hello *h0 = &s->member[0].hello, *h1 = &s->member[1].hello;
    if (requested) {
        for (int i = 0; i < DT_SESSION_IMPLS; i++) {
            const dt_hello *h = &s->member[i].hello;
            const dt_hello_backend *b = dt_hello_backend_get(h, requested);
            if (!b || !b->available)
                return dt_fail(err, DT_EINVAL, "--backends %s: the %s worker (%s) cannot run it: %s",
                               requested, s->member[i].role, h->framework ? h->framework : "(null)",
                               b && b->reason ? b->reason : "not offered");
        }
        snprintf(s->backend, sizeof s->backend, "%s", requested);
        snprintf(s->backend_choice, sizeof s->backend_choice, "requested (--backends %s)",
                 requested);
    } else if (h0->cuda.available && h1->cuda.available) {
        snprintf(s->backend, sizeof s->backend, "cuda");
        snprintf(s->backend_choice, sizeof s->backend_choice,
                 "default: cuda (a GPU is usable by both workers)");
    } else {
        snprintf(s->backend, sizeof s->backend, "cpu");
        const char *why = !h0->cuda.available
                              ? (h0->cuda.reason ? h0->cuda.reason : "candidate has no cuda")
                              : (h1->cuda.reason ? h1->cuda.reason : "baseline has no cuda");
        snprintf(s->backend_choice, sizeof s->backend_choice, "default: cpu (no usable GPU: %s)",
                 why);
    }
    return DT_OK;
}

/* Ids from the hellos; the roles when either is missing or both are the same. */
static void fix_ids(dt_session *s) {
    const char *a = s->member[0].hello.worker, *b = s->member[1].hello.worker;
    int use_roles = !a || !b || !*a || !*b || strcmp(a, b) == 0;
    for (int i = 0; i < DT_SESSION_IMPLS; i++) {
        dt_session_member *m = &s->member[i];
        snprintf(m->id, sizeof m->id, "%s", use_roles ? m->role : m->hello.worker);
    }
}

dt_status dt_session_start(dt_session *s, const dt_session_settings *set, dt_err *err) {
    memset(s, 0, sizeof *s);
    s->timeout_s = set->timeout_s;
    s->member[0].role = "candidate";
    s->member[1].role = "baseline";
    for (int i = 0; i < DT_SESSION_IMPLS; i++)
        if (set->cpus[i])
            snprintf(s->member[i].cpus, sizeof s->member[i].cpus, "%s", set->cpus[i]);
    s->count = DT_SESSION_IMPLS;
    char native[PATH_MAX + 32];
    snprintf(native, sizeof native, "%s/dualtime-native-worker", set->exe_dir);
    dt_status st = start_command(s, &s->member[0], "--candidate-worker", set->candidate_cmd,
                                 native, set->threads, err);
    if (st == DT_OK) {
        if (set->baseline_cmd)
            st = start_command(s, &s->member[1], "--baseline-worker", set->baseline_cmd, NULL,
                               set->threads, err);
        else
            st = start_torch(s, &s->member[1], set, err);
    }
    if (st == DT_OK) st = choose_backend(s, set->backend, err);
    if (st != DT_OK) {
        dt_session_stop(s);
        return st;
    }
    fix_ids(s);
    return DT_OK;
}

dt_worker *dt_session_worker(dt_session *s, int i, dt_session_step step) {
    DT_ASSERT(i >= 0 && i < s->count && step >= DT_STEP_MAIN && step < DT_STEP_COUNT);
    return &s->member[i].worker[step];
}

dt_status dt_session_ready(dt_session *s, int i, dt_session_step step, int *started,
                           dt_err *err) {
    dt_worker *w = dt_session_worker(s, i, step);
    *started = 0;
    if (dt_worker_alive(w)) return DT_OK;
    dt_hello h;
    dt_status st = dt_protocol_start(w, s->timeout_s, &h, err);
    if (st != DT_OK) return st;
    dt_hello_free(&h);
    *started = 1;
    return DT_OK;
}

void dt_session_stop(dt_session *s) {
    for (int i = 0; i < DT_SESSION_IMPLS; i++) {
        dt_session_member *m = &s->member[i];
        /* a zeroed worker has no argv: nothing to stop */
        for (int k = 0; k < DT_STEP_COUNT; k++)
            if (m->worker[k].argv[0]) dt_worker_free(&m->worker[k]);
        dt_hello_free(&m->hello);
    }
    s->count = 0;
}
