/* dt_help.h — the per-subcommand usage texts of the CLI (`dualtime run --help`,
 * `report --help`, `compare --help`, `list --help`; `-h` is the same).
 *
 * Purpose: each subcommand answers --help with its own usage on stdout and exit 0,
 * wherever the flag sits among its arguments. The run options are not repeated here:
 * the run help is the general usage's "run options:" section (dt_main.c's k_usage), so
 * a flag added there shows in both. doctor keeps its own usage (cli/dt_doctor.c).
 *
 * Ownership: nothing is allocated; the texts are static. Thread-safety: reentrant. */
#ifndef DT_HELP_H
#define DT_HELP_H

#include <stdio.h>

/* 1 when one of argv[0..argc) is "--help" or "-h" (arguments after a "--" do not
 * count), else 0. */
int dt_help_wanted(int argc, char **argv);

/* Writes the usage of subcommand cmd ("run", "report", "compare", "list"; a cmd that
 * starts with '-' is the flags-only form of run) to o. general_usage is the CLI's full
 * usage text, whose "run options:" section and exit-status line the run help shows.
 * Returns 0 when cmd has a usage here, -1 when not (doctor, unknown commands: the
 * caller goes on as without --help). */
int dt_help_print(FILE *o, const char *cmd, const char *general_usage);

#endif
