/* test_session.c — the workers of a run (src/session/dt_session.h) with the build's
 * native worker as both members: the interpreter search order, ids from the hellos (the
 * roles when both are the same), the automatic backend and its reason, a requested
 * backend a worker cannot run, commands that are not programs, and the probe worker as
 * a second process of the same command started on demand and restarted when it dies;
 * a start that hangs fails after start_timeout_s naming the command, and on_start hears
 * which worker starts; --impls members (order, names, quoting, the unavailable refusal).
 * Skips (77) when the native worker is not next to the test's build. */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../dt_check.h"
#include "session/dt_session.h"

static char g_build[PATH_MAX];
static char g_native[PATH_MAX + 64];

static void test_python_candidates(void) {
    const char *c[2], *how;
    unsetenv("DUALTIME_PYTHON");
    CHECK(dt_session_python_candidates("/x/python", c, &how) == 1 && strcmp(c[0], "/x/python") == 0 &&
              strcmp(how, "--python") == 0, "--python first");
    setenv("DUALTIME_PYTHON", "/y/python", 1);
    CHECK(dt_session_python_candidates(NULL, c, &how) == 1 && strcmp(c[0], "/y/python") == 0 &&
              strcmp(how, "DUALTIME_PYTHON") == 0, "then DUALTIME_PYTHON");
    unsetenv("DUALTIME_PYTHON");
    CHECK(dt_session_python_candidates(NULL, c, &how) == 2 && strcmp(c[0], "python3") == 0 &&
              strcmp(c[1], "/usr/bin/python3") == 0, "then python3, /usr/bin/python3");
}

static dt_session_settings settings(const char *backend) {
    dt_session_settings s = {.exe_dir = g_build, .baseline_cmd = g_native, .backend = backend,
                             .threads = 1, .timeout_s = 30};
    return s;
}

static void test_start(void) {
    dt_session s;
    dt_err err = {{0}};
    dt_session_settings set = settings(NULL);
    CHECK(dt_session_start(&s, &set, &err) == DT_OK, "start: %s", err.msg);
    /* the members in the record's order: 0 the baseline, 1 the candidate */
    CHECK(s.count == 2 && strcmp(s.member[1].id, "candidate") == 0 &&
              strcmp(s.member[0].id, "baseline") == 0, "same worker twice: ids are the roles");
    CHECK(strcmp(s.member[1].hello.worker, "native") == 0, "hello kept");
    if (!s.member[1].hello.cuda.available) {
        CHECK(strcmp(s.backend, "cpu") == 0 && strstr(s.backend_choice, "default: cpu (no usable GPU: "),
              "automatic: %s (%s)", s.backend, s.backend_choice);
    }
    CHECK(s.python[0] == 0, "no interpreter for a given baseline command");
    dt_worker *m = dt_session_worker(&s, 1, DT_STEP_MAIN), *p = dt_session_worker(&s, 1, DT_STEP_PROBE);
    CHECK(m != p && dt_worker_alive(m) && !dt_worker_alive(p), "probe worker not started yet");
    CHECK(strstr(m->argv[0], "dualtime-native-worker") && strcmp(m->argv[1], "--threads") == 0 &&
              strcmp(m->argv[2], "1") == 0 && strcmp(p->argv[0], m->argv[0]) == 0,
          "same command, --threads appended");
    int started = 0;
    CHECK(dt_session_ready(&s, 1, DT_STEP_PROBE, &started, &err) == DT_OK && started &&
              dt_worker_alive(p) && p->pid != m->pid, "probe worker on demand: %s", err.msg);
    CHECK(dt_session_ready(&s, 1, DT_STEP_PROBE, &started, &err) == DT_OK && !started,
          "already running");
    dt_worker_kill(m, "test");
    CHECK(dt_session_ready(&s, 1, DT_STEP_MAIN, &started, &err) == DT_OK && started &&
              dt_worker_alive(m), "a dead worker restarts: %s", err.msg);
    dt_session_stop(&s);
    CHECK(!dt_worker_alive(&s.member[1].worker[DT_STEP_MAIN]), "stopped");
}

static void test_refusals(void) {
    dt_session s;
    dt_err err = {{0}};
    dt_session_settings set = settings("cuda");
    dt_status st = dt_session_start(&s, &set, &err);
    if (st != DT_OK) /* no GPU here: refused, never a fallback */
        CHECK(strstr(err.msg, "--backends cuda: the candidate worker (dualtime-native) cannot run it: "),
              "%s", err.msg);
    dt_session_stop(&s);
    set = settings(NULL);
    set.candidate_cmd = "dt-no-such-worker --x";
    CHECK(dt_session_start(&s, &set, &err) == DT_EINVAL &&
              strcmp(err.msg, "--candidate-worker: 'dt-no-such-worker' is not an executable program") == 0,
          "%s", err.msg);
    set.candidate_cmd = "   ";
    CHECK(dt_session_start(&s, &set, &err) == DT_EINVAL &&
              strcmp(err.msg, "--candidate-worker: empty command") == 0, "%s", err.msg);
    set.candidate_cmd = "/bin/false";
    CHECK(dt_session_start(&s, &set, &err) != DT_OK && strncmp(err.msg, "candidate worker: ", 18) == 0,
          "a worker that exits: %s", err.msg);
    set.candidate_cmd = NULL;
    set.baseline_cmd = NULL;
    set.exe_dir = "/nonexistent";
    CHECK(dt_session_start(&s, &set, &err) != DT_OK, "no native worker there");
}

static char g_heard[4][96];
static int g_n_heard;

static void heard(void *ctx, const char *what) {
    (void)ctx;
    if (g_n_heard < 4) snprintf(g_heard[g_n_heard++], sizeof g_heard[0], "%s", what ? what : "-");
}

/* A baseline that never answers hello: the start fails after start_timeout_s, naming the
 * command; on_start heard each start begin and end. */
static void test_start_timeout(void) {
    char script[] = "/tmp/dt-hang-worker-XXXXXX";
    int fd = mkstemp(script);
    const char text[] = "#!/bin/sh\nexec sleep 30\n";
    CHECK(fd >= 0 && write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1), "script");
    close(fd);
    chmod(script, 0755);
    dt_session_settings set = settings(NULL);
    set.baseline_cmd = script;
    set.start_timeout_s = 0.5;
    set.on_start = heard;
    dt_session s;
    dt_err err = {{0}};
    int64_t t0 = dt_now_ns();
    dt_status st = dt_session_start(&s, &set, &err);
    double secs = (double)(dt_now_ns() - t0) / 1e9;
    CHECK(st != DT_OK && secs < 10, "a hung start fails in time: %.1f s", secs);
    CHECK(strstr(err.msg, "start-up timed out after 0.5 s") && strstr(err.msg, script),
          "the message: %s", err.msg);
    CHECK(g_n_heard == 4 && strcmp(g_heard[0], "the native worker") == 0 &&
              strcmp(g_heard[1], "-") == 0 && strstr(g_heard[2], "dt-hang-worker") &&
              strcmp(g_heard[3], "-") == 0,
          "on_start: %d calls, '%s' '%s'", g_n_heard, g_heard[0], g_heard[2]);
    unlink(script);
}

/* --impls: members in the list's order (0 the baseline), ids the names, a worker: command
 * split like a shell (a quoted path with a space), a hello answering "unavailable"
 * refused naming the implementation, a start failure naming it too. */
static void test_impls(void) {
    char dir[] = "/tmp/dt-session-impls-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char spaced[PATH_MAX], link_path[PATH_MAX + 32], list[2 * PATH_MAX];
    snprintf(spaced, sizeof spaced, "%s/a dir", dir);
    mkdir(spaced, 0755);
    snprintf(link_path, sizeof link_path, "%s/w", spaced);
    CHECK(symlink(g_native, link_path) == 0, "symlink");
    snprintf(list, sizeof list, "base=native,cand=native,third=worker:'%s'", link_path);
    dt_impl_specs specs;
    dt_err err = {{0}};
    CHECK(dt_impl_specs_parse("--impls", list, &specs, &err) == DT_OK, "%s", err.msg);
    dt_session_settings set = settings(NULL);
    set.baseline_cmd = NULL;
    set.impls = &specs;
    g_n_heard = 0;
    set.on_start = heard;
    dt_session s;
    CHECK(dt_session_start(&s, &set, &err) == DT_OK, "three members: %s", err.msg);
    CHECK(s.count == 3 && strcmp(s.member[0].id, "base") == 0 &&
              strcmp(s.member[1].id, "cand") == 0 && strcmp(s.member[2].id, "third") == 0,
          "ids are the names, in the list's order");
    CHECK(strcmp(s.member[0].role, "baseline") == 0 && strcmp(s.member[2].role, "candidate") == 0,
          "roles");
    CHECK(strcmp(s.member[2].worker[DT_STEP_MAIN].argv[0], link_path) == 0 &&
              strcmp(s.member[2].worker[DT_STEP_MAIN].argv[1], "--threads") == 0,
          "the quoted path is one word: %s", s.member[2].worker[DT_STEP_MAIN].argv[0]);
    CHECK(g_n_heard == 4 && strcmp(g_heard[0], "the native worker (base)") == 0 &&
              strcmp(g_heard[2], "the native worker (cand)") == 0,
          "started in the list's order: '%s', '%s'", g_heard[0], g_heard[2]);
    if (!s.member[1].hello.cuda.available)
        CHECK(strcmp(s.backend, "cpu") == 0, "automatic: %s", s.backend_choice);
    dt_session_stop(&s);
    set.backend = "cuda";
    set.on_start = NULL;
    if (dt_session_start(&s, &set, &err) != DT_OK) /* no GPU here: the member is named */
        CHECK(strstr(err.msg, "--backends cuda: --impls cand (dualtime-native) cannot run it: "),
              "%s", err.msg);
    dt_session_stop(&s);
    set.backend = NULL;
    dt_impl_specs_free(&specs);

    char script[PATH_MAX + 32];
    snprintf(script, sizeof script, "%s/unavailable.sh", dir);
    FILE *fp = fopen(script, "w");
    if (fp) {
        fputs("#!/bin/sh\nread -r l\necho '{\"ok\":true,\"protocol\":1,\"worker\":\"u\","
              "\"unavailable\":\"no torch.compile in torch 1.13\"}'\nexec sleep 30\n", fp);
        fclose(fp);
    }
    chmod(script, 0755);
    snprintf(list, sizeof list, "native,fake=worker:%s", script);
    CHECK(dt_impl_specs_parse("--impls", list, &specs, &err) == DT_OK, "%s", err.msg);
    set.on_start = NULL;
    CHECK(dt_session_start(&s, &set, &err) == DT_EINVAL &&
              strcmp(err.msg, "--impls fake: no torch.compile in torch 1.13") == 0,
          "unavailable refused: %s", err.msg);
    CHECK(!dt_worker_alive(&s.member[0].worker[DT_STEP_MAIN]) &&
              !dt_worker_alive(&s.member[1].worker[DT_STEP_MAIN]), "everything stopped");
    dt_impl_specs_free(&specs);
    CHECK(dt_impl_specs_parse("--impls", "native,bad=worker:/bin/false", &specs, &err) == DT_OK,
          "%s", err.msg);
    CHECK(dt_session_start(&s, &set, &err) != DT_OK && strncmp(err.msg, "--impls bad: ", 13) == 0,
          "a worker that exits: %s", err.msg);
    dt_impl_specs_free(&specs);
    unlink(script);
    unlink(link_path);
    rmdir(spaced);
    rmdir(dir);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 77;
    exe[n] = 0;
    *strrchr(exe, '/') = 0; /* build/tests */
    char *up = strrchr(exe, '/');
    if (!up) return 77;
    *up = 0; /* build */
    snprintf(g_build, sizeof g_build, "%s", exe);
    snprintf(g_native, sizeof g_native, "%s/dualtime-native-worker", g_build);
    if (access(g_native, X_OK) != 0) {
        printf("no native worker at %s: skip\n", g_native);
        return 77;
    }
    test_python_candidates();
    test_start();
    test_refusals();
    test_start_timeout();
    test_impls();
    printf("test_session: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
