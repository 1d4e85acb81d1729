/* dt_shard_cli.c — `dualtime plan` / `run --plan` argument handling and `dualtime merge`
 * (dt_shard_cli.h). The plan's cases are built by the caller (dt_main.c, which owns the
 * run flags' parser); merge is whole here: load the plan and the shards' results.json,
 * dt_record_merge, derive, dt_outputs_write. */
#define _GNU_SOURCE
#include "cli/dt_shard_cli.h"
#include "cli/dt_sys.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "format/dt_outputs.h"
#include "record/dt_file.h"
#include "record/dt_plan_json.h"
#include "record/dt_record_json.h"
#include "record/dt_record_merge.h"
#include "stats/dt_derive.h"

#define EXIT_BAD 2

#define shard_bad dt_cli_bad /* "dualtime: ..." on stderr, exit status 2 (cli/dt_sys.h) */

int dt_shard_cli_plan_args(int argc, char **argv, int *n_shards, char ***rest, int *n_rest) {
    char **r = dt_xcalloc((size_t)argc + 2, sizeof *r);
    int n = 0;
    *n_shards = 0;
    r[n++] = "plan";
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--shards") == 0 && i + 1 < argc) v = argv[++i];
        else if (strncmp(argv[i], "--shards=", 9) == 0) v = argv[i] + 9;
        else if (strcmp(argv[i], "--shards") == 0) v = "";
        if (!v) {
            r[n++] = argv[i];
            continue;
        }
        char *end;
        errno = 0;
        long s = strtol(v, &end, 10);
        if (errno || end == v || *end || s < 1 || s > DT_SHARDS_MAX) {
            free(r);
            return shard_bad("--shards: '%s' is not a whole number in 1..%d", v, DT_SHARDS_MAX);
        }
        *n_shards = (int)s;
    }
    if (*n_shards == 0) {
        free(r);
        return shard_bad("plan: --shards N is required");
    }
    *rest = r;
    *n_rest = n;
    return -1;
}

int dt_shard_cli_plan_write(dt_plan_doc *doc, int n_shards, int argc, char **argv,
                            const char *dir, const char *git_revision) {
    dt_err e;
    if (dt_shard_assign(doc, n_shards, &e) != DT_OK) return shard_bad("%s", e.msg);
    doc->run_args = dt_xcalloc((size_t)argc + 1, sizeof *doc->run_args);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--output") == 0) {
            i++;
            continue;
        }
        if (strncmp(argv[i], "--output=", 9) == 0) continue;
        doc->run_args[doc->n_run_args++] = dt_xstrdup(argv[i]);
    }
    doc->tool_version = dt_xstrdup(DT_VERSION);
    doc->git_revision = dt_xstrdup(git_revision);
    char now[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    doc->created_at = dt_xstrdup(now);
    char *text = NULL;
    size_t len = 0;
    if (dt_plan_encode(doc, &text, &len, &e) != DT_OK) return shard_bad("plan: %s", e.msg);
    struct stat st;
    if (stat(dir, &st) != 0 && mkdir(dir, 0755) != 0) {
        free(text);
        return shard_bad("--output: cannot create '%s': %s", dir, strerror(errno));
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/plan.json", dir);
    if (stat(path, &st) == 0) {
        free(text);
        return shard_bad("--output: '%s' already exists; dualtime never overwrites a plan", path);
    }
    dt_status s = dt_file_write_atomic(path, text, len, &e);
    free(text);
    if (s != DT_OK) return shard_bad("plan: %s", e.msg);
    fprintf(stderr, "dualtime: wrote %s: %d cases in %d shards, plan %.12s\n", path,
            doc->cases.count, doc->n_shards, doc->plan_id);
    return 0;
}

/* ---- run --plan ---------------------------------------------------------------------- */

/* A copy of word, resolved from dir when it is a relative path ("./x", "../x", or with
 * any '/' when first is set). */
static char *resolve_word(const char *word, const char *dir, int first) {
    int rel = word[0] != '/' && (strncmp(word, "./", 2) == 0 || strncmp(word, "../", 3) == 0 ||
                                 (first && strchr(word, '/')));
    if (!rel) return dt_xstrdup(word);
    char *out = NULL;
    if (asprintf(&out, "%s/%s", dir, word) < 0) DT_ASSERT(0);
    return out;
}

/* A worker command or interpreter path with its relative paths resolved from dir. */
static char *resolve_command(const char *cmd, const char *dir) {
    size_t cap = strlen(cmd) * 2 + strlen(dir) * 8 + 64, used = 0;
    char *out = dt_xcalloc(cap, 1), *copy = dt_xstrdup(cmd), *save = NULL;
    int first = 1;
    for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save), first = 0) {
        char *r = resolve_word(w, dir, first);
        size_t need = strlen(r) + 2;
        if (used + need >= cap) {
            cap = (used + need) * 2;
            char *grown = realloc(out, cap);
            DT_ASSERT(grown);
            out = grown;
        }
        used += (size_t)snprintf(out + used, cap - used, "%s%s", first ? "" : " ", r);
        free(r);
    }
    free(copy);
    return out;
}

char *dt_shard_cli_resolve_command(const char *cmd, const char *dir) {
    return resolve_command(cmd, dir);
}

static int is_path_flag(const char *a) {
    return strcmp(a, "--python") == 0 || strcmp(a, "--candidate-worker") == 0 ||
           strcmp(a, "--baseline-worker") == 0;
}

/* The plan's run flags with path values resolved from dir, after "run". */
static void rebuild_argv(dt_shard_run *sr, const char *dir, const char *output, int quiet,
                         const char *python) {
    const dt_plan_doc *d = &sr->doc;
    sr->argv = dt_xcalloc(d->n_run_args + 8, sizeof *sr->argv);
    sr->argv[sr->argc++] = dt_xstrdup("run");
    for (size_t i = 0; i < d->n_run_args; i++) {
        const char *a = d->run_args[i], *eq = strchr(a, '=');
        if (i > 0 && is_path_flag(d->run_args[i - 1])) {
            sr->argv[sr->argc++] = resolve_command(a, dir);
        } else if (eq && strncmp(a, "--", 2) == 0) {
            char flag[64];
            snprintf(flag, sizeof flag, "%.*s", (int)(eq - a) < 63 ? (int)(eq - a) : 63, a);
            if (is_path_flag(flag)) {
                char *v = resolve_command(eq + 1, dir), *w = NULL;
                if (asprintf(&w, "%s=%s", flag, v) < 0) DT_ASSERT(0);
                free(v);
                sr->argv[sr->argc++] = w;
            } else {
                sr->argv[sr->argc++] = dt_xstrdup(a);
            }
        } else {
            sr->argv[sr->argc++] = dt_xstrdup(a);
        }
    }
    sr->argv[sr->argc++] = dt_xstrdup("--output");
    sr->argv[sr->argc++] = dt_xstrdup(output);
    if (quiet) sr->argv[sr->argc++] = dt_xstrdup("--quiet");
    if (python) {
        sr->argv[sr->argc++] = dt_xstrdup("--python");
        sr->argv[sr->argc++] = dt_xstrdup(python);
    }
}

/* The value of flag `name` at argv[*i] ("--name V" or "--name=V"); NULL when not it. */
static const char *flag_value(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] == 0 && *i + 1 < argc) return argv[++*i];
    if (argv[*i][n] == 0) return "";
    return NULL;
}

int dt_shard_cli_run_args(int argc, char **argv, dt_shard_run *sr) {
    memset(sr, 0, sizeof *sr);
    const char *plan = NULL, *shard = NULL, *output = NULL, *python = NULL, *v;
    int quiet = 0, no_pin = 0;
    for (int i = 0; i < argc; i++) {
        if ((v = flag_value(argc, argv, &i, "--plan"))) plan = v;
        else if ((v = flag_value(argc, argv, &i, "--shard"))) shard = v;
        else if ((v = flag_value(argc, argv, &i, "--output"))) output = v;
        else if ((v = flag_value(argc, argv, &i, "--python"))) python = v;
        else if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else if (strcmp(argv[i], "--no-pin") == 0) no_pin = 1;
        else
            return shard_bad("run --plan: '%s' conflicts with the plan (its settings are the "
                             "plan's; only --shard, --output, --quiet, --no-pin and --python "
                             "go with --plan)", argv[i]);
    }
    if (!plan || !*plan) return shard_bad("run --plan: missing FILE");
    if (!shard) return shard_bad("run --plan: --shard I/N is required");
    if (!output || !*output) return shard_bad("--output DIR is required (a new directory for the results)");
    int idx, count;
    dt_err e;
    if (dt_shard_parse(shard, &idx, &count, &e) != DT_OK) return shard_bad("%s", e.msg);
    if (dt_plan_load(plan, &sr->doc, &e) != DT_OK) return shard_bad("--plan: %s", e.msg);
    if (count != sr->doc.n_shards) {
        int n = sr->doc.n_shards;
        dt_shard_cli_run_free(sr);
        return shard_bad("--shard: '%s': the plan %s has %d shards", shard, plan, n);
    }
    sr->index = idx;
    char *dir = dt_xstrdup(plan), *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    rebuild_argv(sr, slash ? (dir[0] ? dir : "/") : ".", output, quiet, python);
    if (no_pin) sr->argv[sr->argc++] = dt_xstrdup("--no-pin");
    free(dir);
    return -1;
}

void dt_shard_cli_run_free(dt_shard_run *sr) {
    dt_plan_doc_free(&sr->doc);
    for (int i = 0; i < sr->argc; i++) free(sr->argv[i]);
    free(sr->argv);
    sr->argv = NULL;
    sr->argc = 0;
}

/* ---- merge --------------------------------------------------------------------------- */

/* Loads every shard's results.json; names[i] = the directory as given. */
static int load_shards(char **dirs, int n, dt_record **recs) {
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/results.json", dirs[i]);
        dt_err e;
        if (dt_record_load(path, &recs[i], &e) != DT_OK)
            return shard_bad("merge: %s: %s", dirs[i], e.msg);
    }
    return -1;
}

/* Merges, derives, writes; recs are consumed on success. */
static int merge_write(const dt_plan_doc *doc, dt_record **recs, char **dirs, int n,
                       const char *output, int full_argc, char **full_argv) {
    const char **ids = dt_xcalloc((size_t)doc->cases.count + 1, sizeof *ids);
    for (int i = 0; i < doc->cases.count; i++) ids[i] = doc->cases.cases[i].id;
    dt_merge_plan mp = {doc->plan_id, doc->n_shards, doc->cases.count, ids, doc->shard_of};
    dt_record *m = NULL;
    dt_err e;
    dt_status st = dt_record_merge(&mp, recs, (const char *const *)dirs, (size_t)n, &m, &e);
    free(ids);
    if (st != DT_OK) return shard_bad("merge: %s", e.msg);
    dt_strv_free(&m->command_line);
    for (int i = 0; i < full_argc; i++) dt_strv_push(&m->command_line, full_argv[i]);
    int rc = 0;
    if (mkdir(output, 0755) != 0)
        rc = shard_bad("--output: cannot create '%s': %s", output, strerror(errno));
    if (rc == 0 && (dt_derive_run(m, &e) != DT_OK || dt_outputs_write(m, output, &e) != DT_OK))
        rc = shard_bad("merge: %s", e.msg);
    if (rc == 0) {
        size_t valid = 0;
        for (size_t i = 0; i < m->n_cases; i++) valid += m->cases[i].valid != 0;
        fprintf(stderr, "dualtime: merged %d shards, %zu cases (%zu valid): %s/results.md "
                "(assessment: %s)\n", n, m->n_cases, valid, output,
                m->derived.present ? dt_level_name(m->derived.level) : "?");
        if (valid != m->n_cases) rc = 1;
    }
    dt_record_free(m);
    return rc;
}

int dt_shard_cli_merge(int argc, char **argv, int full_argc, char **full_argv) {
    const char *output = NULL, *plan = NULL, *v;
    char **dirs = dt_xcalloc((size_t)argc + 1, sizeof *dirs);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if ((v = flag_value(argc, argv, &i, "--output"))) output = v;
        else if ((v = flag_value(argc, argv, &i, "--plan"))) plan = v;
        else if (argv[i][0] == '-') {
            free(dirs);
            return shard_bad("merge: unknown option '%s'", argv[i]);
        } else dirs[n++] = argv[i];
    }
    int rc = -1;
    char planbuf[PATH_MAX];
    struct stat st;
    if (n == 0) rc = shard_bad("merge: no shard directories given");
    else if (!output || !*output) rc = shard_bad("merge: --output DIR is required");
    else if (stat(output, &st) == 0)
        rc = shard_bad("--output: '%s' already exists; dualtime never overwrites results", output);
    if (rc < 0 && !plan) { /* the plan beside the shards: DIR/plan.json for DIR/shard-* */
        snprintf(planbuf, sizeof planbuf, "%s", dirs[0]);
        size_t l = strlen(planbuf);
        while (l > 1 && planbuf[l - 1] == '/') planbuf[--l] = 0;
        char *slash = strrchr(planbuf, '/');
        if (slash) snprintf(slash + 1, sizeof planbuf - (size_t)(slash + 1 - planbuf), "plan.json");
        else snprintf(planbuf, sizeof planbuf, "plan.json");
        plan = planbuf;
    }
    dt_plan_doc doc = {0};
    dt_err e;
    if (rc < 0 && dt_plan_load(plan, &doc, &e) != DT_OK)
        rc = shard_bad("merge: %s (give the plan with --plan FILE)", e.msg);
    dt_record **recs = dt_xcalloc((size_t)n + 1, sizeof *recs);
    if (rc < 0) rc = load_shards(dirs, n, recs);
    if (rc < 0) rc = merge_write(&doc, recs, dirs, n, output, full_argc, full_argv);
    for (int i = 0; i < n; i++) dt_record_free(recs[i]);
    free(recs);
    free(dirs);
    dt_plan_doc_free(&doc);
    return rc;
}
