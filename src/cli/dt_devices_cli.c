/* dt_devices_cli.c — a run over several local GPUs: plan, one child per device, merge
 * (dt_devices_cli.h, docs/devices.md). */
#define _GNU_SOURCE
#include "cli/dt_devices_cli.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/dt_shard_cli.h"
#include "cli/dt_sys.h"
#include "common/dt_affinity.h"
#include "common/dt_spawn.h"
#include "format/dt_format_summary.h"
#include "format/dt_outputs.h"
#include "orchestrate/dt_devices.h"
#include "orchestrate/dt_run.h"
#include "record/dt_file.h"
#include "record/dt_plan_json.h"
#include "record/dt_record_json.h"
#include "record/dt_record_merge.h"
#include "stats/dt_derive.h"

#define EXIT_BAD 2

#define dev_bad dt_cli_bad /* "dualtime: ..." on stderr, exit status 2 (cli/dt_sys.h) */

/* One device of the run and its children (the shard, then the replicated cases). */
typedef struct dev_job {
    dt_device_info info;
    int known;                  /* info came from NVML */
    int shard;                  /* its plan shard; -1: none (more devices than cases) */
    char cpus[DT_PIN_LIST_LEN]; /* "" : not confined */
    char main_dir[PATH_MAX], rep_dir[PATH_MAX];
    int phase; /* next child: 0 the shard, 1 the replicated cases, 2 none */
    dt_child child;
    int running;
    char line[2048];
    size_t line_len;
    int main_status, rep_status; /* exit statuses; -1: not run */
} dev_job;

/* The run as the command line gave it. */
typedef struct dev_run {
    const char *devices, *replicate, *output, *backends;
    int quiet, no_pin;
    dt_strv pass; /* the run flags for plan and replicate children */
    char exe[PATH_MAX];
    char plan_path[PATH_MAX];
    dt_plan_doc doc;
    int n_shards;
    dt_strv rep_ids; /* --replicate: the chosen case ids */
    dev_job *jobs;
    int n_jobs;
} dev_run;

int dt_devices_cli_wanted(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "--devices", 9) == 0 || strncmp(argv[i], "--replicate", 11) == 0) {
            char c = argv[i][argv[i][2] == 'd' ? 9 : 11];
            if (c == 0 || c == '=') return 1;
        }
    return 0;
}

/* ---- arguments -------------------------------------------------------------------------- */

/* "--name V" / "--name=V" at argv[*i]: the value (NULL: not this flag; "" : no value). */
static const char *flag_value(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != 0) return NULL;
    return *i + 1 < argc ? argv[++*i] : "";
}

static int is_path_flag(const char *a) {
    return strcmp(a, "--python") == 0 || strcmp(a, "--candidate-worker") == 0 ||
           strcmp(a, "--baseline-worker") == 0;
}

/* A path flag's value with its relative paths made absolute (the children run plans
 * whose relative paths resolve from the plan's folder). */
static void push_abs(dt_strv *sv, const char *value) {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, ".");
    char *v = dt_shard_cli_resolve_command(value, cwd);
    dt_strv_push(sv, v);
    free(v);
}

/* argv into dr: --devices, --replicate, --output and --quiet taken out, the rest passed
 * on. Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, dev_run *dr) {
    static const char *const k_refused[] = {"--plan", "--shard", "--resume", "--dry-run"};
    const char *v;
    for (int i = 0; i < argc; i++) {
        for (size_t k = 0; k < sizeof k_refused / sizeof k_refused[0]; k++) {
            size_t n = strlen(k_refused[k]);
            if (strncmp(argv[i], k_refused[k], n) == 0 && (!argv[i][n] || argv[i][n] == '='))
                return dev_bad("--devices: %s does not go with --devices (a devices run plans "
                               "and merges its own shards)",
                               k_refused[k]);
        }
        if ((v = flag_value(argc, argv, &i, "--devices")))
            dr->devices = v;
        else if ((v = flag_value(argc, argv, &i, "--replicate")))
            dr->replicate = v;
        else if ((v = flag_value(argc, argv, &i, "--output")))
            dr->output = v;
        else if (strcmp(argv[i], "--quiet") == 0)
            dr->quiet = 1;
        else if ((v = flag_value(argc, argv, &i, "--backends"))) {
            dr->backends = v;
            dt_strv_push(&dr->pass, "--backends");
            dt_strv_push(&dr->pass, v);
        } else if (is_path_flag(argv[i]) && i + 1 < argc) {
            dt_strv_push(&dr->pass, argv[i]);
            push_abs(&dr->pass, argv[++i]);
        } else {
            const char *eq = strchr(argv[i], '=');
            char flag[64] = "";
            if (eq && eq - argv[i] < 63)
                snprintf(flag, sizeof flag, "%.*s", (int)(eq - argv[i]), argv[i]);
            if (flag[0] && is_path_flag(flag)) {
                dt_strv_push(&dr->pass, flag);
                push_abs(&dr->pass, eq + 1);
            } else {
                if (strcmp(argv[i], "--no-pin") == 0) dr->no_pin = 1;
                dt_strv_push(&dr->pass, argv[i]);
            }
        }
    }
    if (!dr->devices)
        return dev_bad("--replicate: needs --devices LIST (the GPUs to replicate on)");
    if (dr->backends && strcmp(dr->backends, "cuda") != 0)
        return dev_bad("--devices: '%s' needs --backends cuda (--backends %s has no devices)",
                       dr->devices, dr->backends);
    if (!dr->backends) {
        dt_strv_push(&dr->pass, "--backends");
        dt_strv_push(&dr->pass, "cuda");
    }
    if (!dr->output || !*dr->output)
        return dev_bad("--output DIR is required (a new directory for the results)");
    struct stat st;
    if (lstat(dr->output, &st) == 0)
        return dev_bad("--output: '%s' already exists; dualtime never overwrites results",
                       dr->output);
    if (dt_exe_dir(dr->exe, sizeof dr->exe) != 0)
        return dev_bad("cannot locate the dualtime binary");
    size_t l = strlen(dr->exe);
    snprintf(dr->exe + l, sizeof dr->exe - l, "/dualtime");
    return -1;
}

/* The devices of LIST, described; jobs allocated. Returns -1 or the exit status. */
static int pick_devices(dev_run *dr) {
    dt_device_info present[DT_DEVICES_MAX];
    char why[DT_ERR_LEN] = "";
    int n_present = dt_devices_enumerate(present, DT_DEVICES_MAX, why, sizeof why);
    int idx[DT_DEVICES_MAX], n = 0;
    dt_err e;
    if (dt_devices_parse(dr->devices, n_present, why, idx, &n, &e) != DT_OK)
        return dev_bad("%s", e.msg);
    dr->jobs = dt_xcalloc((size_t)n, sizeof *dr->jobs);
    dr->n_jobs = n;
    for (int i = 0; i < n; i++) {
        dev_job *j = &dr->jobs[i];
        j->known = n_present > 0;
        if (j->known) j->info = present[idx[i]];
        j->info.index = idx[i];
        j->main_status = j->rep_status = -1;
        j->shard = -1;
        snprintf(j->main_dir, sizeof j->main_dir, "%s/devices/gpu-%d", dr->output, idx[i]);
        snprintf(j->rep_dir, sizeof j->rep_dir, "%s/devices/replicate/gpu-%d", dr->output, idx[i]);
    }
    return -1;
}

/* ---- the plan ------------------------------------------------------------------------------ */

/* Removes what a refused start wrote: the plan and the folders (nothing else is there). */
static void undo_start(const dev_run *dr) {
    char p[PATH_MAX];
    unlink(dr->plan_path);
    snprintf(p, sizeof p, "%s/devices/replicate", dr->output);
    rmdir(p);
    snprintf(p, sizeof p, "%s/devices", dr->output);
    rmdir(p);
    rmdir(dr->output);
}

/* argv for a child: exe, words..., then the extra words; NULL-terminated (free the array). */
static char **child_argv(const char *exe, const char *const *words, size_t n, const dt_strv *more) {
    size_t total = 1 + n + (more ? more->n : 0) + 1;
    char **a = dt_xcalloc(total, sizeof *a);
    size_t k = 0;
    a[k++] = (char *)exe;
    for (size_t i = 0; i < n; i++) a[k++] = (char *)words[i];
    for (size_t i = 0; more && i < more->n; i++) a[k++] = more->v[i];
    return a;
}

/* `dualtime plan --shards 1` of the run flags into DIR/devices, then re-assigned over
 * min(devices, cases) shards. Returns -1 or the exit status. */
static int make_plan(dev_run *dr) {
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s/devices", dr->output) >= (int)sizeof dir - 16)
        return dev_bad("--output: '%s': path too long", dr->output);
    snprintf(dr->plan_path, sizeof dr->plan_path, "%.*s/plan.json", PATH_MAX - 16, dir);
    if (mkdir(dr->output, 0755) != 0)
        return dev_bad("--output: cannot create '%s': %s", dr->output, strerror(errno));
    const char *words[] = {"plan", "--shards", "1", "--output", dir};
    char **argv = child_argv(dr->exe, words, 5, &dr->pass);
    char out[8192];
    int rc = dt_spawn_capture(argv, NULL, 1, 300, out, sizeof out);
    free(argv);
    if (rc != 0) {
        fputs(out, stderr); /* the plan's own one-line refusal (flag and value) */
        undo_start(dr);
        return rc == 2 ? EXIT_BAD : dev_bad("--devices: planning the run failed (status %d)", rc);
    }
    dt_err e;
    if (dt_plan_load(dr->plan_path, &dr->doc, &e) != DT_OK) {
        undo_start(dr);
        return dev_bad("--devices: %s", e.msg);
    }
    dr->n_shards = dr->n_jobs < dr->doc.cases.count ? dr->n_jobs : dr->doc.cases.count;
    if (dr->replicate &&
        dt_devices_replicate_select(dr->replicate, &dr->doc.cases, &dr->rep_ids, &e) != DT_OK) {
        undo_start(dr);
        return dev_bad("%s", e.msg);
    }
    free(dr->doc.shard_of);
    dr->doc.shard_of = NULL;
    char *text = NULL;
    size_t len = 0;
    dt_status st = dt_shard_assign(&dr->doc, dr->n_shards, &e);
    if (st == DT_OK) st = dt_plan_encode(&dr->doc, &text, &len, &e);
    if (st == DT_OK) st = dt_file_write_atomic(dr->plan_path, text, len, &e);
    free(text);
    if (st != DT_OK) {
        undo_start(dr);
        return dev_bad("--devices: %s", e.msg);
    }
    for (int i = 0; i < dr->n_jobs; i++) dr->jobs[i].shard = i < dr->n_shards ? i : -1;
    return -1;
}

/* Each device's share of this process's CPUs (none with --no-pin or too few CPUs). */
static void share_cpus(dev_run *dr) {
    char self[1024];
    cpu_set_t set;
    if (dr->no_pin || dt_affinity_self(self, sizeof self) != 0 ||
        dt_affinity_parse(self, &set) != 0)
        return;
    int cpus[CPU_SETSIZE], n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    char(*lists)[DT_PIN_LIST_LEN] = dt_xcalloc((size_t)dr->n_jobs, sizeof *lists);
    if (dt_devices_split_cpus(cpus, n, dr->n_jobs, lists))
        for (int i = 0; i < dr->n_jobs; i++)
            snprintf(dr->jobs[i].cpus, DT_PIN_LIST_LEN, "%s", lists[i]);
    free(lists);
}

/* ---- the children ----------------------------------------------------------------------- */

/* Sets (value non-NULL) or unsets an environment variable. */
static void env_set(const char *name, const char *value) {
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

/* Starts job j's next child (its shard, then the replicated cases); 0 when none is left. */
static int job_start(dev_run *dr, dev_job *j) {
    char shard[32];
    const char *words[16];
    size_t n = 0;
    const dt_strv *more = NULL;
    dt_strv rep = {0};
    if (j->phase == 0 && j->shard < 0) j->phase = 1;
    if (j->phase == 1 && dr->rep_ids.n == 0) j->phase = 2;
    if (j->phase == 2 || dt_run_stop_requested()) return 0;
    if (j->phase == 0) {
        snprintf(shard, sizeof shard, "%d/%d", j->shard, dr->n_shards);
        const char *w[] = {"run", "--plan",   dr->plan_path, "--shard",
                           shard, "--output", j->main_dir,   "--quiet"};
        for (n = 0; n < sizeof w / sizeof w[0]; n++) words[n] = w[n];
    } else {
        words[n++] = "run";
        for (size_t i = 0; i < dr->pass.n; i++) dt_strv_push(&rep, dr->pass.v[i]);
        dt_devices_replicate_flags(&dr->doc.cases, &dr->rep_ids, &rep);
        dt_strv_push(&rep, "--output");
        dt_strv_push(&rep, j->rep_dir);
        dt_strv_push(&rep, "--quiet");
        more = &rep;
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s/devices/replicate", dr->output);
        mkdir(parent, 0755);
    }
    char **argv = child_argv(dr->exe, words, n, more);
    char index[16];
    snprintf(index, sizeof index, "%d", j->info.index);
    /* the child's environment: only its GPU visible, which is then CUDA device 0 */
    static const char *const k_env[] = {"CUDA_VISIBLE_DEVICES", "DUALTIME_CUDA_DEVICE",
                                        "DUALTIME_NVML_DEVICE"};
    char *keep[3];
    for (int k = 0; k < 3; k++) keep[k] = getenv(k_env[k]) ? dt_xstrdup(getenv(k_env[k])) : NULL;
    if (j->known && j->info.uuid[0]) {
        env_set(k_env[0], j->info.uuid);
        env_set(k_env[1], "0");
    }
    env_set(k_env[2], index);
    dt_spawn_opts o = {
        DT_SPAWN_NULL, DT_SPAWN_NULL, DT_SPAWN_PIPE, 0, 1, j->cpus[0] ? j->cpus : NULL};
    dt_err e;
    dt_status st = dt_spawn_start(argv, &o, &j->child, &e);
    for (int k = 0; k < 3; k++) {
        env_set(k_env[k], keep[k]);
        free(keep[k]);
    }
    free(argv);
    dt_strv_free(&rep);
    if (st != DT_OK) {
        fprintf(stderr, "dualtime: [gpu %d] cannot start: %s\n", j->info.index, e.msg);
        if (j->phase == 0)
            j->main_status = 127;
        else
            j->rep_status = 127;
        j->phase++;
        return job_start(dr, j);
    }
    j->running = 1;
    j->line_len = 0;
    if (!dr->quiet && j->phase == 0)
        fprintf(stderr, "dualtime: [gpu %d] %s%s%s: shard %s into %s\n", j->info.index,
                j->info.name[0] ? j->info.name : "GPU", j->cpus[0] ? ", CPUs " : "", j->cpus, shard,
                j->main_dir);
    else if (!dr->quiet)
        fprintf(stderr, "dualtime: [gpu %d] the replicated cases into %s\n", j->info.index,
                j->rep_dir);
    return 1;
}

/* Forwards the child's complete stderr lines, each prefixed with its device. */
static void job_forward(dev_job *j, const char *buf, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char ch = buf[i];
        if (ch != '\n' && ch != '\r' && j->line_len < sizeof j->line - 1) {
            j->line[j->line_len++] = ch;
            continue;
        }
        if (ch != '\n' && ch != '\r') continue; /* an over-long line: cut */
        if (j->line_len == 0) continue;
        j->line[j->line_len] = 0;
        const char *t = strncmp(j->line, "dualtime: ", 10) == 0 ? j->line + 10 : j->line;
        fprintf(stderr, "dualtime: [gpu %d] %s\n", j->info.index, t);
        j->line_len = 0;
    }
}

/* The child of j ended (stderr closed): reap it and record its status. */
static void job_reap(dev_job *j) {
    job_forward(j, "\n", 1);
    close(j->child.err_fd);
    int ws = 0;
    while (waitpid(j->child.pid, &ws, 0) < 0 && errno == EINTR) {
    }
    dt_spawn_forget_group(j->child.pid);
    int status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    if (j->phase == 0)
        j->main_status = status;
    else
        j->rep_status = status;
    j->running = 0;
    j->phase++;
}

/* ---- progress (a terminal only) --------------------------------------------------------- */

/* Case rounds finished by the running shard of j so far, from its results.json (written
 * after every case); *total gets the shard's case rounds. */
static int64_t job_done(const dev_run *dr, const dev_job *j, int64_t *total) {
    int64_t cases = 0, done = 0, rounds = 1;
    for (int i = 0; i < dr->doc.cases.count; i++) cases += dr->doc.shard_of[i] == j->shard;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/results.json", j->main_dir);
    dt_record *r = NULL;
    dt_err e;
    if (dt_record_load(path, &r, &e) == DT_OK) {
        if (r->settings.rounds != DT_NULL_I64 && r->settings.rounds > 0)
            rounds = r->settings.rounds;
        for (size_t i = 0; i < r->n_cases; i++) done += (int64_t)r->cases[i].n_rounds_done;
        dt_record_free(r);
    } else if (dr->doc.settings.rounds > 0) {
        rounds = dr->doc.settings.rounds;
    }
    *total = cases * rounds;
    return done;
}

/* One progress line: case rounds done over every device, elapsed, ETA. */
static void show_progress(const dev_run *dr, int64_t t0_ns) {
    int64_t done = 0, total = 0, running = 0;
    for (int i = 0; i < dr->n_jobs; i++) {
        const dev_job *j = &dr->jobs[i];
        if (j->shard < 0) continue;
        int64_t t = 0, d = job_done(dr, j, &t);
        total += t;
        done += j->phase > 0 ? t : d;
        running += j->running;
    }
    double el = (double)(dt_now_ns() - t0_ns) / 1e9;
    char eta[32] = "--";
    if (done > 0 && total > done) {
        double left = el / (double)done * (double)(total - done);
        snprintf(eta, sizeof eta, "%dm%02ds", (int)(left / 60), (int)left % 60);
    }
    fprintf(stderr,
            "\r\033[K[devices] %lld/%lld case rounds, %lld GPU%s running, elapsed "
            "%dm%02ds  ETA %s",
            (long long)done, (long long)total, (long long)running, running == 1 ? "" : "s",
            (int)(el / 60), (int)el % 60, eta);
    fflush(stderr);
}

/* Runs every job's children, the devices concurrently; a stop request is passed on to
 * the running children (they keep what they have) and starts no more. */
static void run_jobs(dev_run *dr) {
    for (int i = 0; i < dr->n_jobs; i++) job_start(dr, &dr->jobs[i]);
    struct pollfd *fds = dt_xcalloc((size_t)dr->n_jobs, sizeof *fds);
    int *who = dt_xcalloc((size_t)dr->n_jobs, sizeof *who), forwarded = 0;
    int progress = !dr->quiet && isatty(2);
    int64_t t0 = dt_now_ns(), shown = 0;
    while (1) {
        if (progress && dt_now_ns() - shown > 3000000000LL) {
            show_progress(dr, t0);
            shown = dt_now_ns();
        }
        int nf = 0;
        for (int i = 0; i < dr->n_jobs; i++)
            if (dr->jobs[i].running) {
                fds[nf].fd = dr->jobs[i].child.err_fd;
                fds[nf].events = POLLIN;
                who[nf++] = i;
            }
        if (nf == 0) break;
        if (dt_run_stop_requested() && !forwarded) {
            for (int k = 0; k < nf; k++) kill(dr->jobs[who[k]].child.pid, SIGTERM);
            forwarded = 1;
        }
        if (poll(fds, (nfds_t)nf, 1000) < 0 && errno != EINTR) break;
        for (int k = 0; k < nf; k++) {
            if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            dev_job *j = &dr->jobs[who[k]];
            char buf[4096];
            ssize_t got = read(j->child.err_fd, buf, sizeof buf);
            if (progress) fputs("\r\033[K", stderr); /* a line, or a start message, follows */
            shown = 0;
            if (got > 0) {
                job_forward(j, buf, (size_t)got);
            } else if (got == 0 || errno != EINTR) {
                job_reap(j);
                job_start(dr, j);
            }
        }
    }
    if (progress) fputs("\r\033[K", stderr);
    free(fds);
    free(who);
}

/* ---- the merge ------------------------------------------------------------------------------ */

/* Job j's device entry in holder (from its shard's record, or its replicated run's). */
static void device_entry(const dev_run *dr, const dev_job *j, const dt_record *rec,
                         dt_record *holder) {
    dt_device_rec *d = dt_record_device_add(holder);
    d->index = j->info.index;
    const dt_nvml *n = rec ? &rec->env.nvml : NULL;
    int described = n && n->has_description && n->available;
    dt_record_set_str(&d->name, described ? n->name : j->info.name[0] ? j->info.name : NULL);
    dt_record_set_str(&d->uuid, described ? n->uuid : j->info.uuid[0] ? j->info.uuid : NULL);
    dt_record_set_str(&d->pci_bus_id, described               ? n->pci_bus_id
                                      : j->info.pci_bus_id[0] ? j->info.pci_bus_id
                                                              : NULL);
    d->shard = j->shard >= 0 ? j->shard : DT_NULL_I64;
    dt_record_set_str(&d->cpus, j->cpus[0] ? j->cpus : NULL);
    const char *dir = j->shard >= 0 ? j->main_dir : j->rep_status >= 0 ? j->rep_dir : NULL;
    size_t ol = strlen(dr->output);
    if (dir) dt_record_set_str(&d->dir, strncmp(dir, dr->output, ol) == 0 ? dir + ol + 1 : dir);
    int status = j->shard >= 0 ? j->main_status : j->rep_status;
    d->exit_status = status >= 0 ? status : DT_NULL_I64;
    if (rec) {
        dt_record_set_str(&d->started_at, rec->started_at);
        dt_record_set_str(&d->finished_at, rec->finished_at);
        if (rec->env.ceilings.present) dt_ceilings_copy(&d->ceilings, &rec->env.ceilings);
    }
}

/* Loads DIR/results.json of a child (NULL when it left none, with a message). */
static dt_record *load_child(const dev_job *j, const char *dir, int status) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/results.json", dir);
    dt_record *r = NULL;
    dt_err e;
    if (dt_record_load(path, &r, &e) != DT_OK) {
        fprintf(stderr, "dualtime: [gpu %d] left no results (exit %d): %s\n", j->info.index, status,
                e.msg);
        return NULL;
    }
    return r;
}

/* The replicated runs, one per device (NULL where none), derived, into r->replicas. */
static void add_replicas(const dev_run *dr, dt_record *m) {
    dt_record **reps = dt_xcalloc((size_t)dr->n_jobs, sizeof *reps);
    for (int i = 0; i < dr->n_jobs; i++) {
        const dev_job *j = &dr->jobs[i];
        reps[i] = j->rep_status >= 0 ? load_child(j, j->rep_dir, j->rep_status) : NULL;
        dt_err e;
        if (reps[i] && dt_derive_run(reps[i], &e) != DT_OK) {
            dt_record_free(reps[i]);
            reps[i] = NULL;
        }
    }
    dt_devices_replicas(m, (const dt_record *const *)reps, (size_t)dr->n_jobs, &dr->rep_ids);
    for (int i = 0; i < dr->n_jobs; i++) dt_record_free(reps[i]);
    free(reps);
}

/* Merges the shards into DIR; returns the exit status. */
static int merge_all(dev_run *dr, int full_argc, char **full_argv) {
    int n = dr->n_shards, rc = 0;
    dt_record **recs = dt_xcalloc((size_t)n + 1, sizeof *recs), *holder = dt_record_new();
    char **names = dt_xcalloc((size_t)n + 1, sizeof *names);
    for (int i = 0; i < dr->n_jobs; i++) {
        dev_job *j = &dr->jobs[i];
        dt_record *rec = j->shard >= 0 ? load_child(j, j->main_dir, j->main_status) : NULL;
        if (j->shard >= 0) {
            recs[j->shard] = rec;
            names[j->shard] = j->main_dir;
            if (!rec) rc = j->main_status == EXIT_BAD ? EXIT_BAD : 1;
            device_entry(dr, j, rec, holder);
        } else { /* no shard (more GPUs than cases): its replicated run describes it */
            dt_record *rep = j->rep_status >= 0 ? load_child(j, j->rep_dir, j->rep_status) : NULL;
            device_entry(dr, j, rep, holder);
            dt_record_free(rep);
        }
    }
    dt_record *m = NULL;
    dt_err e;
    if (rc == 0) {
        const char **ids = dt_xcalloc((size_t)dr->doc.cases.count + 1, sizeof *ids);
        for (int i = 0; i < dr->doc.cases.count; i++) ids[i] = dr->doc.cases.cases[i].id;
        dt_merge_plan mp = {dr->doc.plan_id, dr->doc.n_shards, dr->doc.cases.count, ids,
                            dr->doc.shard_of};
        if (dt_record_merge(&mp, recs, (const char *const *)names, (size_t)n, &m, &e) != DT_OK)
            rc = (fprintf(stderr, "dualtime: --devices: %s\n", e.msg), 1);
        free(ids);
    }
    if (m) {
        m->devices = holder->devices;
        m->n_devices = holder->n_devices;
        holder->devices = NULL;
        holder->n_devices = 0;
        dt_strv_free(&m->command_line);
        for (int i = 0; i < full_argc; i++) dt_strv_push(&m->command_line, full_argv[i]);
        dt_devices_mark_cases(m);
        dt_devices_count_cases(m);
        if (dr->rep_ids.n) add_replicas(dr, m);
        if (dt_derive_run(m, &e) != DT_OK || dt_outputs_write(m, dr->output, &e) != DT_OK)
            rc = (fprintf(stderr, "dualtime: --devices: %s\n", e.msg), 1);
    }
    if (m && rc == 0) {
        for (size_t i = 0; i < m->n_cases; i++)
            if (!m->cases[i].valid) rc = 1;
        if (!dr->quiet)
            fprintf(stderr,
                    "dualtime: %s: %s/results.md (%zu cases on %d device%s; assessment: "
                    "%s)\n",
                    rc ? "done with FAILED cases" : "done", dr->output, m->n_cases, dr->n_jobs,
                    dr->n_jobs == 1 ? "" : "s",
                    m->derived.present ? dt_level_name(m->derived.level) : "?");
        char abs_dir[PATH_MAX], *text = NULL;
        size_t len = 0;
        if (!dr->quiet && realpath(dr->output, abs_dir) && /* as a plain run ends */
            dt_format_summary(m, abs_dir, &text, &len, &e) == DT_OK)
            fwrite(text, 1, len, stderr);
        free(text);
    } else if (rc) {
        fprintf(stderr,
                "dualtime: --devices: no merged results; each device's run is in "
                "%s/devices\n",
                dr->output);
    }
    for (int i = 0; i < n; i++) dt_record_free(recs[i]);
    dt_record_free(m);
    dt_record_free(holder);
    free(recs);
    free(names);
    return rc;
}

int dt_devices_cli_run(int argc, char **argv, int full_argc, char **full_argv) {
    dev_run dr;
    memset(&dr, 0, sizeof dr);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = dt_run_request_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    int rc = parse_args(argc, argv, &dr);
    if (rc < 0) rc = pick_devices(&dr);
    if (rc < 0) rc = make_plan(&dr);
    if (rc < 0) {
        share_cpus(&dr);
        if (!dr.quiet)
            fprintf(stderr, "dualtime: %d cases over %d device%s (%d shard%s%s); results in %s\n",
                    dr.doc.cases.count, dr.n_jobs, dr.n_jobs == 1 ? "" : "s", dr.n_shards,
                    dr.n_shards == 1 ? "" : "s",
                    dr.rep_ids.n ? ", then the replicated cases on every device" : "", dr.output);
        int64_t t0 = dt_now_ns();
        run_jobs(&dr);
        rc = merge_all(&dr, full_argc, full_argv);
        if (!dr.quiet)
            fprintf(stderr, "dualtime: --devices %s: wall %.1f s\n", dr.devices,
                    (double)(dt_now_ns() - t0) / 1e9);
    }
    dt_plan_doc_free(&dr.doc);
    dt_strv_free(&dr.pass);
    dt_strv_free(&dr.rep_ids);
    free(dr.jobs);
    return rc;
}
