/* dt_help.c — per-subcommand usage texts (contract in dt_help.h). */
#include "cli/dt_help.h"

#include <string.h>

static const char *const k_report =
    "usage: dualtime report RESULTS.json [--format md|csv|json] [--output FILE]\n"
    "\n"
    "Reads a run's results.json again (never rewriting it) and writes:\n"
    "  --format md    results.md and its plots (default), beside the input unless\n"
    "                 --output names the results.md path\n"
    "  --format csv   one row per case x implementation x scope: p50/p90/min/iqr (us per\n"
    "                 call), n, the ratio and its interval vs the baseline, the verdict\n"
    "                 (held device scopes: the process_band its interval was widened\n"
    "                 by), dtype and shape (RFC 4180 quoting); stdout unless --output FILE\n"
    "  --format json  the same rows as one flat JSON array (for pandas); stdout unless\n"
    "                 --output FILE\n"
    "\n"
    "exit status: 0 written, 2 bad arguments or an unreadable file.\n";

static const char *const k_compare =
    "usage: dualtime compare A/results.json B/results.json [--threshold 0.05]\n"
    "                        [--format md|json]\n"
    "\n"
    "Compares two runs case by case (B against A) and prints the report on stdout.\n"
    "  --threshold T  a row is slower only when the interval of change = ratio_B/ratio_A\n"
    "                 lies above max(1 + T, spread), faster only when below\n"
    "                 min(1 - T, 1/spread) (default 0.05). The spread is at least the\n"
    "                 process band of held device rows and of E2E / dispatch rows that\n"
    "                 the host's launches pace (docs/results-format.md)\n"
    "  --format F     md (Markdown, the default) or json\n"
    "\n"
    "exit status: 0 no regression, 1 a regression, 2 bad arguments, unreadable files or\n"
    "runs that cannot be compared.\n";

static const char *const k_list =
    "usage: dualtime list [--json]\n"
    "\n"
    "Prints the operations (definition, tolerances and the scale of the pass rule) and\n"
    "the default and --quick shapes of each backend.\n"
    "  --json  the same registry as one JSON document (format dualtime-ops)\n"
    "\n"
    "exit status: 0, or 2 on an unknown argument.\n";

static const char *const k_run_head =
    "usage: dualtime run --output DIR [options]\n"
    "       dualtime run --resume DIR [--quiet]   finish an interrupted run\n"
    "\n"
    "Benchmarks the candidate worker against the baseline worker on every case of the\n"
    "plan and writes DIR/results.json, DIR/results.md and the plots; at the end a short\n"
    "summary on stderr (results path, assessment, verdicts, slowest and fastest ratio).\n"
    "Every output is checked against an FP64 oracle, and every implementation by the named\n"
    "anti-cheat checks (cheat.cached_result, cheat.skipped_work, cheat.side_stream,\n"
    "cheat.wrote_input, cheat.aliased_output, cheat.faster_than_physics: docs/anti-cheat.md);\n"
    "a failed or caught implementation fails its case (no verdict, exit status 1).\n"
    "\n";

int dt_help_wanted(int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) return 0;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    }
    return 0;
}

/* The run help: its head, then the general usage from "run options:" on. */
static void print_run(FILE *o, const char *general_usage) {
    fputs(k_run_head, o);
    const char *opts = general_usage ? strstr(general_usage, "run options:") : NULL;
    if (opts) fputs(opts, o);
}

int dt_help_print(FILE *o, const char *cmd, const char *general_usage) {
    if (!cmd) return -1;
    if (strcmp(cmd, "run") == 0 || cmd[0] == '-') print_run(o, general_usage);
    else if (strcmp(cmd, "report") == 0) fputs(k_report, o);
    else if (strcmp(cmd, "compare") == 0) fputs(k_compare, o);
    else if (strcmp(cmd, "list") == 0) fputs(k_list, o);
    else return -1;
    return 0;
}
