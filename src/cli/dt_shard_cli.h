/* dt_shard_cli.h — the command-line side of sharded runs (docs/sharding.md):
 * `dualtime plan`'s own flags and plan.json writing, `dualtime run --plan`'s flags turned
 * into the run flags the plan holds, and all of `dualtime merge`. Messages go to stderr
 * as one line "dualtime: ..."; functions return an exit status (0, or 2 for bad
 * arguments or a refused shard set), or -1 to go on. Not thread-safe (getopt-free, but
 * prints). */
#ifndef DT_SHARD_CLI_H
#define DT_SHARD_CLI_H

#include "plan/dt_shard.h"

/* `dualtime plan` argv (after "plan") without "--shards N": *n_shards and the rest
 * (argv[0] = "plan", then the run flags, for the run parser) in *rest (caller frees the
 * array, not its strings). Returns -1 to go on, else the exit status. */
int dt_shard_cli_plan_args(int argc, char **argv, int *n_shards, char ***rest, int *n_rest);

/* Fills doc's run flags (argv[1..argc), --output and its value left out), tool and time,
 * assigns shards, creates DIR and writes DIR/plan.json. Returns the exit status. */
int dt_shard_cli_plan_write(dt_plan_doc *doc, int n_shards, int argc, char **argv,
                            const char *dir, const char *git_revision);

/* `dualtime run --plan FILE --shard I/N --output DIR [--quiet] [--no-pin] [--python P]`:
 * the plan loaded and checked against I/N, and the run's argv rebuilt from the plan's
 * run flags (relative paths resolved from FILE's folder). */
typedef struct dt_shard_run {
    dt_plan_doc doc;
    int index;
    int argc;
    char **argv; /* "run", the plan's flags, --output DIR ...; owned */
} dt_shard_run;

/* argv after "run". Any run flag other than --plan, --shard, --output, --quiet, --no-pin
 * and --python conflicts with the plan (exit 2). Returns -1 to go on, else the exit status. */
int dt_shard_cli_run_args(int argc, char **argv, dt_shard_run *out);
void dt_shard_cli_run_free(dt_shard_run *sr);

/* A worker command or interpreter path with its relative paths ("./x", "../x", a first
 * word with a '/') resolved from dir, as run --plan resolves a plan's (caller frees). */
char *dt_shard_cli_resolve_command(const char *cmd, const char *dir);

/* `dualtime merge SHARD_DIR... --output DIR [--plan FILE]` (argv after "merge"). */
int dt_shard_cli_merge(int argc, char **argv, int full_argc, char **full_argv);

#endif
