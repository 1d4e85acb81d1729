/* dt_sys.h — small system facts the CLI records: paths next to the executable, file
 * hashes, host description, git state (git runs through the one spawner,
 * common/dt_spawn.h). Facts go into the run record's structs (strings copied). Fallible
 * functions return 0/-1. */
#ifndef DT_SYS_H
#define DT_SYS_H

#include <stddef.h>

#include "record/dt_record.h"

/* Directory of /proc/self/exe (no trailing slash). */
int dt_exe_dir(char *buf, size_t len);
/* SHA-256 of a file's contents as lowercase hex; -1 if unreadable. */
int dt_file_sha256(const char *path, char out_hex[65]);
/* The host: cpu model, cores, os, kernel, machine, hostname. */
void dt_host_info(dt_host *h);
/* git_revision, git_dirty (-1: unknown) and git_source ("git", or "build (...)" with
 * build_rev when repo_dir is not a checkout, or is a checkout at another revision than
 * build_rev, a known one: the binary is then the build's) of the tree at repo_dir into t. */
void dt_git_info(const char *repo_dir, const char *build_rev, dt_tool *t);
/* A refusal of bad input: "dualtime: <message>" on stderr; returns 2, the CLI's exit
 * status for bad input (README "Exit codes"). The one such printer of every subcommand. */
int dt_cli_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
