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

/* Splits a worker command like a shell (dt_words_split); argv[0] resolved in PATH. */
static dt_status split_cmd(const char *flag, const char *text, cmd_words *c, dt_err *err) {
    c->n = 0;
    char **w = NULL;
    int n = 0;
    dt_status st = dt_words_split(flag, text, &w, &n, err);
    if (st != DT_OK) return st;
    if (n > DT_WORKER_MAX_ARGS - 2) {
        dt_words_free(w);
        return dt_fail(err, DT_EINVAL, "%s: too many words in '%s'", flag, text);
    }
    for (int i = 0; i < n; i++) c->w[c->n++] = dt_xstrdup(w[i]);
    c->w[c->n] = NULL;
    dt_words_free(w);
    if (c->n == 0) return dt_fail(err, DT_EINVAL, "%s: empty command", flag);
    char path[PATH_MAX];
    if (dt_spawn_which(c->w[0], path, sizeof path) != 0) {
        st = dt_fail(err, DT_EINVAL, "%s: '%s' is not an executable program", flag, c->w[0]);
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

/* The command of w as one line (for messages), into buf. */
static void command_text(const dt_worker *w, char *buf, size_t len) {
    buf[0] = '\0';
    for (int i = 0; w->argv[i]; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? " " : "", w->argv[i]);
    }
}

/* The start-up limit of one worker: --start-timeout, else DT_WORKER_START_S. */
static double start_limit(const dt_session *s) {
    return s->start_timeout_s > 0 ? s->start_timeout_s : DT_WORKER_START_S;
}

/* Starts w and asks hello within the start-up limit, telling on_start while it waits; a
 * start that runs out of time says so with the command. */
static dt_status start_worker(dt_session *s, const char *what, dt_worker *w, dt_hello *h,
                              dt_err *err) {
    double limit = start_limit(s);
    if (s->on_start) s->on_start(s->on_start_ctx, what);
    dt_status st = dt_protocol_start(w, limit, h, err);
    if (s->on_start) s->on_start(s->on_start_ctx, NULL);
    if (st != DT_OK && w->timed_out) {
        char cmd[1024];
        command_text(w, cmd, sizeof cmd);
        return dt_fail(err, st, "%s's start-up timed out after %g s (--start-timeout): %s", what,
                       limit, cmd);
    }
    return st;
}

/* Reads the hello of m's worker for step k sent at the session's start (early_steps): a
 * good one makes it fresh (like dt_session_prestart's); a failed one leaves it stopped
 * (dt_protocol_start_receive kills it), for dt_session_ready to start again on demand.
 * 1 when it started. */
static int pending_receive(dt_session *s, dt_session_member *m, int k) {
    if (!m->pending[k]) return 0;
    m->pending[k] = 0;
    dt_hello h;
    dt_err e;
    if (dt_protocol_start_receive(&m->worker[k], start_limit(s), &h, &e) != DT_OK) return 0;
    dt_hello_free(&h);
    m->fresh[k] = 1;
    return 1;
}

/* Frees m's workers (stopping any running), their pending hellos forgotten. */
static void member_workers_free(dt_session_member *m) {
    for (int k = 0; k < DT_STEP_COUNT; k++) {
        dt_worker_free(&m->worker[k]);
        m->pending[k] = 0;
    }
}

/* Initialises member m's two workers with argv, spawns the early ones (hello sent, not
 * read) and starts the main one (hello). */
static dt_status member_start(dt_session *s, dt_session_member *m, char *const argv[],
                              unsigned early, dt_err *err) {
    for (int k = 0; k < DT_STEP_COUNT; k++) {
        dt_worker_init(&m->worker[k], argv);
        m->worker[k].cpus = m->cpus[0] ? m->cpus : NULL;
    }
    dt_err e;
    for (int k = DT_STEP_MAIN + 1; k < DT_STEP_COUNT; k++)
        if (early & (1u << k)) m->pending[k] = dt_protocol_start_send(&m->worker[k], &e) == DT_OK;
    return start_worker(s, m->what, &m->worker[DT_STEP_MAIN], &m->hello, err);
}

/* The native worker (native, cuda:DIR) or a given command (worker:CMD). */
static dt_status start_command(dt_session *s, dt_session_member *m, const dt_impl_spec *spec,
                               const char *native_prog, int threads, unsigned early,
                               dt_err *err) {
    cmd_words c = {{0}, 0};
    char flag[DT_IMPL_NAME_LEN + 16];
    snprintf(flag, sizeof flag, "%s%s%s", spec->flag, spec->name[0] ? " " : "", spec->name);
    if (spec->kind == DT_IMPL_WORKER) {
        dt_status st = split_cmd(flag, spec->arg, &c, err);
        if (st != DT_OK) return st;
        const char *base = strrchr(c.w[0], '/');
        snprintf(m->what, sizeof m->what, "the %s worker",
                 spec->name[0] ? spec->name : base ? base + 1 : c.w[0]);
    } else {
        c.w[c.n++] = dt_xstrdup(native_prog);
        const char *extra[2];
        char buf[PATH_MAX];
        int ne = dt_impl_spec_extra_args(spec, extra, buf, sizeof buf);
        for (int i = 0; i < ne; i++) c.w[c.n++] = dt_xstrdup(extra[i]);
        c.w[c.n] = NULL;
        if (spec->name[0] && strcmp(spec->name, "native") != 0)
            snprintf(m->what, sizeof m->what, "the native worker (%s)", spec->name);
        else
            snprintf(m->what, sizeof m->what, "the native worker");
    }
    add_threads(&c, threads);
    dt_err e;
    dt_status st = member_start(s, m, c.w, early, &e);
    words_free(&c);
    if (st != DT_OK) return dt_fail(err, st, "%s: %s", m->label, e.msg);
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

/* The PyTorch worker (torch, torch-compile, py:FILE) with the first interpreter whose
 * hello works. */
static dt_status start_torch(dt_session *s, dt_session_member *m, const dt_session_settings *set,
                             const dt_impl_spec *spec, dt_err *err) {
    char script[PATH_MAX + 32];
    snprintf(script, sizeof script, "%s/dualtime_torch_worker.py", set->exe_dir);
    if (access(script, R_OK) != 0)
        return dt_fail(err, DT_EINVAL, "the PyTorch worker %s is missing (rebuild dualtime)",
                       script);
    const char *cands[2], *how;
    int nc = dt_session_python_candidates(set->python, cands, &how);
    if (spec->name[0] && strcmp(spec->name, "torch") != 0)
        snprintf(m->what, sizeof m->what, "the PyTorch worker (%s)", spec->name);
    else
        snprintf(m->what, sizeof m->what, "the PyTorch worker");
    const char *extra[2];
    char extra_buf[PATH_MAX];
    int ne = dt_impl_spec_extra_args(spec, extra, extra_buf, sizeof extra_buf);
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
        char *argv[7] = {path, script};
        int na = 2;
        for (int k = 0; k < ne; k++) argv[na++] = (char *)extra[k];
        argv[na++] = "--threads";
        argv[na++] = threads;
        argv[na] = NULL;
        dt_err e;
        if (member_start(s, m, argv, set->early_steps, &e) == DT_OK) {
            snprintf(s->python, sizeof s->python, "%s", path);
            return DT_OK;
        }
        /* a start that ran out of time is not tried again with another interpreter */
        if (m->worker[DT_STEP_MAIN].timed_out) {
            dt_status st = dt_fail(err, DT_EINVAL, "%s", e.msg);
            member_workers_free(m);
            dt_hello_free(&m->hello);
            return st;
        }
        snprintf(last, sizeof last, "%s", e.msg);
        member_workers_free(m);
        dt_hello_free(&m->hello);
    }
    return dt_fail(err, DT_EINVAL, "no usable PyTorch worker (tried %s): %s", tried, last);
}

/* Explicit, never a silent fallback: a requested backend every worker must offer;
 * automatic: cuda when every member offers it, else cpu with the first reason. */
static dt_status choose_backend(dt_session *s, const char *requested, dt_err *err) {
    if (requested) {
        for (int k = 1; k <= s->count; k++) { /* the candidates, then the baseline */
            int i = k % s->count;
            const dt_hello *h = &s->member[i].hello;
            const dt_hello_backend *b = dt_hello_backend_get(h, requested);
            /* "--impls NAME", or "the candidate worker" for the older spellings */
            const char *label = s->member[i].label;
            if (!b || !b->available)
                return dt_fail(err, DT_EINVAL, "--backends %s: %s%s (%s) cannot run it: %s",
                               requested, label[0] == '-' ? "" : "the ", label,
                               h->framework ? h->framework : "(null)",
                               b && b->reason ? b->reason : "not offered");
        }
        snprintf(s->backend, sizeof s->backend, "%s", requested);
        snprintf(s->backend_choice, sizeof s->backend_choice, "requested (--backends %s)",
                 requested);
        return DT_OK;
    }
    int lacking = -1; /* the first member without cuda, the candidates before the baseline */
    for (int k = 1; k <= s->count && lacking < 0; k++)
        if (!s->member[k % s->count].hello.cuda.available) lacking = k % s->count;
    if (lacking < 0) {
        snprintf(s->backend, sizeof s->backend, "cuda");
        snprintf(s->backend_choice, sizeof s->backend_choice, "default: cuda (a GPU is usable "
                 "by %s)", s->count == 2 ? "both workers" : "every worker");
        return DT_OK;
    }
    snprintf(s->backend, sizeof s->backend, "cpu");
    const dt_session_member *m = &s->member[lacking];
    char why[256];
    if (m->hello.cuda.reason) snprintf(why, sizeof why, "%s", m->hello.cuda.reason);
    else snprintf(why, sizeof why, "%s has no cuda", m->role);
    snprintf(s->backend_choice, sizeof s->backend_choice, "default: cpu (no usable GPU: %s)", why);
    return DT_OK;
}

/* Ids: the specs' names; for the older spellings (no names) the hellos, or the roles when
 * one is missing or two are the same. */
static void fix_ids(dt_session *s, const dt_impl_specs *specs) {
    int named = 1, use_roles = 0;
    for (int i = 0; i < s->count; i++) {
        if (!specs->v[i].name[0]) named = 0;
        const char *a = s->member[i].hello.worker;
        if (!a || !*a) use_roles = 1;
        for (int j = 0; j < i && !use_roles; j++)
            if (strcmp(a, s->member[j].hello.worker) == 0) use_roles = 1;
    }
    for (int i = 0; i < s->count; i++) {
        dt_session_member *m = &s->member[i];
        const char *id = named ? specs->v[i].name : use_roles ? m->role : m->hello.worker;
        snprintf(m->id, sizeof m->id, "%s", id);
    }
}

/* Starts member i as spec says; a hello that says the worker is unavailable refuses it. */
static dt_status start_member(dt_session *s, int i, const dt_impl_spec *spec,
                              const dt_session_settings *set, dt_err *err) {
    dt_session_member *m = &s->member[i];
    m->role = i == 0 ? "baseline" : "candidate";
    if (spec->name[0]) snprintf(m->label, sizeof m->label, "%s %s", spec->flag, spec->name);
    else snprintf(m->label, sizeof m->label, "%s worker", m->role);
    if (set->cpus[i]) snprintf(m->cpus, sizeof m->cpus, "%s", set->cpus[i]);
    char native[PATH_MAX + 32];
    snprintf(native, sizeof native, "%s/dualtime-native-worker", set->exe_dir);
    dt_err e;
    dt_status st = dt_impl_spec_is_torch(spec) ? start_torch(s, m, set, spec, &e)
                                               : start_command(s, m, spec, native, set->threads,
                                                               set->early_steps, &e);
    if (st != DT_OK) {
        /* --impls names the implementation in every message; the older spellings keep theirs */
        if (spec->name[0] && strncmp(e.msg, m->label, strlen(m->label)) != 0)
            return dt_fail(err, st, "%s: %s", m->label, e.msg);
        return dt_fail(err, st, "%s", e.msg);
    }
    if (m->hello.unavailable)
        return dt_fail(err, DT_EINVAL, "%s: %s", spec->name[0] ? m->label : spec->flag,
                       m->hello.unavailable);
    return DT_OK;
}

dt_status dt_session_start(dt_session *s, const dt_session_settings *set, dt_err *err) {
    memset(s, 0, sizeof *s);
    s->timeout_s = set->timeout_s;
    s->start_timeout_s = set->start_timeout_s;
    s->on_start = set->on_start;
    s->on_start_ctx = set->on_start_ctx;
    dt_impl_specs legacy = {0};
    const dt_impl_specs *specs = set->impls;
    if (!specs) {
        dt_impl_specs_legacy(set->candidate_cmd, set->baseline_cmd, &legacy);
        specs = &legacy;
    }
    DT_ASSERT(specs->n >= 1 && specs->n <= DT_SESSION_MAX_IMPLS);
    /* the older spellings (no names) start the candidate first: its errors come first,
     * as before --impls */
    int older = !specs->v[0].name[0];
    dt_status st = DT_OK;
    s->count = specs->n;
    for (int k = 0; k < specs->n && st == DT_OK; k++) {
        int i = older ? (k + 1) % specs->n : k;
        st = start_member(s, i, &specs->v[i], set, err);
    }
    if (st == DT_OK) st = choose_backend(s, set->backend, err);
    if (st == DT_OK) fix_ids(s, specs);
    dt_impl_specs_free(&legacy);
    if (st != DT_OK) {
        dt_session_stop(s);
        return st;
    }
    return DT_OK;
}

dt_worker *dt_session_worker(dt_session *s, int i, dt_session_step step) {
    DT_ASSERT(i >= 0 && i < s->count && step >= DT_STEP_MAIN && step < DT_STEP_COUNT);
    return &s->member[i].worker[step];
}

int dt_session_prestart(dt_session *s, unsigned mask) {
    int sent[DT_SESSION_MAX_IMPLS][DT_STEP_COUNT] = {{0}}, n = 0;
    dt_err e;
    if (s->on_start) s->on_start(s->on_start_ctx, "the probe workers");
    for (int i = 0; i < s->count; i++)
        for (int k = DT_STEP_MAIN + 1; k < DT_STEP_COUNT; k++)
            if ((mask & (1u << k)) && !s->member[i].pending[k] &&
                !dt_worker_alive(&s->member[i].worker[k]))
                sent[i][k] = dt_protocol_start_send(&s->member[i].worker[k], &e) == DT_OK;
    for (int i = 0; i < s->count; i++) /* those sent at the session's start */
        for (int k = DT_STEP_MAIN + 1; k < DT_STEP_COUNT; k++)
            n += pending_receive(s, &s->member[i], k);
    for (int i = 0; i < s->count; i++)
        for (int k = DT_STEP_MAIN + 1; k < DT_STEP_COUNT; k++) {
            dt_hello h;
            if (!sent[i][k] ||
                dt_protocol_start_receive(&s->member[i].worker[k], start_limit(s), &h, &e) != DT_OK)
                continue; /* a failed start leaves the worker stopped (dt_session_ready) */
            dt_hello_free(&h);
            s->member[i].fresh[k] = 1;
            n++;
        }
    if (s->on_start) s->on_start(s->on_start_ctx, NULL);
    return n;
}

dt_status dt_session_ready(dt_session *s, int i, dt_session_step step, int *started,
                           dt_err *err) {
    dt_worker *w = dt_session_worker(s, i, step);
    *started = 0;
    pending_receive(s, &s->member[i], step); /* its hello first, never a step's answer */
    if (dt_worker_alive(w)) {
        *started = s->member[i].fresh[step];
        s->member[i].fresh[step] = 0;
        return DT_OK;
    }
    s->member[i].fresh[step] = 0;
    dt_hello h;
    dt_status st = start_worker(s, s->member[i].what, w, &h, err);
    if (st != DT_OK) return st;
    dt_hello_free(&h);
    *started = 1;
    return DT_OK;
}

void dt_session_stop(dt_session *s) {
    for (int i = 0; i < DT_SESSION_MAX_IMPLS; i++) {
        dt_session_member *m = &s->member[i];
        /* a zeroed worker has no argv: nothing to stop */
        for (int k = 0; k < DT_STEP_COUNT; k++) {
            if (m->worker[k].argv[0]) dt_worker_free(&m->worker[k]);
            m->pending[k] = 0;
        }
        dt_hello_free(&m->hello);
    }
    s->count = 0;
}
