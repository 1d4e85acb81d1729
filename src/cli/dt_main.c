/* dt_main.c — the dualtime command line: the only place that prints results for a
 * person and chooses exit codes (0 all cases valid, 1 a case failed, 2 bad arguments or
 * environment). `run` is: arguments into run_settings, the session (workers and backend,
 * session/dt_session.h), the run-level record, the run loop (orchestrate/dt_run.h,
 * which writes the outputs), one summary line. No framework is named here beyond the
 * build's file list: ids come from the workers' hellos.
 *
 *   dualtime run --output DIR [options]     benchmark (also: dualtime --output DIR ...)
 *   dualtime report DIR/results.json        results.md and plots again from the raw JSON
 *   dualtime compare A/results.json B/results.json [--threshold 0.05] [--format md|json]
 *   dualtime list [--json]                  ops, definitions, tolerances, default shapes
 *   dualtime plan --shards N --output DIR [run options]      a run split in shards
 *   dualtime run --plan DIR/plan.json --shard I/N --output D  one shard (docs/sharding.md)
 *   dualtime merge DIR/shard-* --output DIR/merged           (cli/dt_shard_cli.c)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/dt_devices_cli.h"
#include "cli/dt_doctor.h"
#include "cli/dt_dryrun.h"
#include "cli/dt_help.h"
#include "cli/dt_shard_cli.h"
#include "cli/dt_sys.h"
#include "common/dt_affinity.h"
#include "common/dt_common.h"
#include "common/dt_outpath.h"
#include "common/dt_runlock.h"
#include "common/dt_spawn.h"
#include "data/dt_arena.h"
#include "data/dt_shm.h"
#include "format/dt_format_compare.h"
#include "format/dt_format_csv.h"
#include "format/dt_format_summary.h"
#include "format/dt_outputs.h"
#include "orchestrate/dt_ceilings.h"
#include "orchestrate/dt_clocks.h"
#include "orchestrate/dt_memcheck.h"
#include "orchestrate/dt_run.h"
#include "oracle/dt_oracle.h"
#include "plan/dt_ops.h"
#include "session/dt_ops_json.h"
#include "plan/dt_plan.h"
#include "format/dt_compare_json.h"
#include "plan/dt_shard.h"
#include "record/dt_record_json.h"
#include "format/dt_table_json.h"
#include "record/dt_file.h"
#include "common/dt_outpath.h"
#include "session/dt_protocol.h"
#include "session/dt_session.h"
#include "session/dt_worker.h"
#include "stats/dt_compare_runs.h"
#include "stats/dt_derive.h"

#if defined(__has_include)
#if __has_include("dt_git_rev.h")
#include "dt_git_rev.h" /* the build's revision (generated at every build: CMakeLists.txt) */
#endif
#endif
#ifndef DT_GIT_REV_BUILD
#define DT_GIT_REV_BUILD "unknown"
#endif

#define EXIT_BAD 2

static const char *k_usage =
    "usage: dualtime run --output DIR [options]\n"
    "       dualtime run --resume DIR [--retry-failed]  finish an interrupted run (and run\n"
    "                                          its failed cases again)\n"
    "       dualtime report RESULTS.json [--format md|csv|json] [--output FILE]\n"
    "       dualtime compare A/results.json B/results.json [--threshold T] [--format md|json]\n"
    "       dualtime list [--json]             ops, definitions, tolerances, default shapes\n"
    "       dualtime doctor                    what this machine can run, and the fix if not\n"
    "       dualtime plan --shards N --output DIR [run options]   split a run (DIR/plan.json)\n"
    "       dualtime run --devices LIST --output DIR [options]   one run over local GPUs\n"
    "       dualtime run --plan DIR/plan.json --shard I/N --output DIR/shard-I\n"
    "       dualtime merge DIR/shard-* --output DIR/merged [--plan DIR/plan.json]\n"
    "\n"
    "dualtime benchmarks its native kernels against PyTorch: host end-to-end time, GPU\n"
    "time (stream events) and per-kernel GPU time (CUPTI), every output checked against\n"
    "an FP64 oracle first.\n"
    "\n"
    "run options:\n"
    "  --output DIR            new directory for results.json, results.md (must not exist)\n"
    "  --backends LIST         cpu or cuda (default: cuda when a GPU is usable, else cpu)\n"
    "  --operations LIST       add,gelu_add,sum,softmax,rmsnorm,layernorm,\n"
    "                          residual_layernorm,cross_entropy,gemm (default: all)\n"
    "  --row-shapes MxN,...    shapes of the row and elementwise ops\n"
    "  --gemm-shapes MxNxK,... shapes of gemm\n"
    "  --quick                 smoke subset of shapes\n"
    "  --input-views           inputs are strided views at an unaligned offset\n"
    "  --samples N             samples per scope (default 9)\n"
    "  --sample-ms MS          target duration of one batch sample (default 15 on cuda,\n"
    "                          20 on cpu)\n"
    "  --warmup-ms MS          warmup per implementation and case-round (default 80 on\n"
    "                          cuda, where the implementations warm at once; 150 on cpu)\n"
    "  --prime N               untimed calls right before every timed sample, in the same\n"
    "                          request (default 1, 0..16; docs/protocol.md, Priming)\n"
    "  --rounds N              repeat the plan, order rotated and reversed (default: 2 on\n"
    "                          cuda, 1 on cpu)\n"
    "  --seed N                input seed (default 1)\n"
    "  --dtypes LIST           fp32,bf16,fp16 (also f32, f16, bfloat16; default fp32)\n"
    "  --inputs NAME           uniform (default), normal, wide-logits, offset, cancel\n"
    "  --threads N             CPU threads of both frameworks (default min(8, cores))\n"
    "  --timeout S             seconds a worker may take for one request (default 180)\n"
    "  --start-timeout S       seconds a worker may take to start and answer hello\n"
    "                          (default 120)\n"
    "  --device-timing         the device scopes (held control, CUPTI probe, dispatch):\n"
    "                          on by default on cuda; an error on cpu\n"
    "  --no-device-timing      host scopes only\n"
    "  --probe-kind KIND       auto (default: a pilot per case picks the less perturbing),\n"
    "                          concurrent or serialized CUPTI kernel records\n"
    "  --graph                 also the graph replay scope (cuda): R_dev calls captured in\n"
    "                          a CUDA graph, replayed in a held window (off by default)\n"
    "  --cache warm|cold       device windows with warm L2 (default) or cold: L2 flushed\n"
    "                          before every window, batch calls rotating over arena copies\n"
    "                          larger than 2 x L2 (cuda only; host scopes stay warm)\n"
    "  --no-pin                do not pin the orchestrator and workers to their own CPUs\n"
    "  --devices LIST          GPUs to spread the cases over, concurrently (0,1,3 or all;\n"
    "                          NVML's numbering): one shard per GPU with its own workers,\n"
    "                          CPUs and ceilings, merged into DIR (docs/devices.md). Without\n"
    "                          it the run uses the first GPU, as always\n"
    "  --replicate CASES       with --devices: these case ids (or all) run again on every\n"
    "                          listed GPU afterwards; results.md shows their spread\n"
    "  --capture-sources       keep every run-time compiled source in DIR/sources\n"
    "  --python PATH           interpreter of the PyTorch worker (default: DUALTIME_PYTHON,\n"
    "                          else the first of python3 on PATH and /usr/bin/python3\n"
    "                          that can import torch)\n"
    "  --impls LIST            the implementations, the first the baseline (default\n"
    "                          torch,native): native, torch, torch-compile[:MODE],\n"
    "                          NAME=py:FILE.py, NAME=cuda:DIR, NAME=worker:CMD (CMD split\n"
    "                          like a shell; docs/implementations.md)\n"
    "  --candidate-worker CMD  older spelling: the command of the candidate (--impls\n"
    "                          torch,NAME=worker:CMD)\n"
    "  --baseline-worker CMD   older spelling: the command of the baseline\n"
    "  --quiet                 no progress line and no end-of-run summary\n"
    "  --dry-run               print the plan and an estimate of its wall time; run and\n"
    "                          write nothing (--output not needed)\n"
    "\n"
    "dualtime compare A/results.json B/results.json [--threshold T] [--format md|json]\n"
    "  Compares run B against run A. Each candidate is judged on its paired ratio to\n"
    "  the baseline within each run (the baseline is the drift control): a change is\n"
    "  reported only when its 95% interval clears both the threshold (default 0.05)\n"
    "  and the run-to-run spread of the paired ratio between rounds. Every row states\n"
    "  the smallest change it could have detected. --format json prints the result as\n"
    "  JSON (docs/results-format.md); Markdown is the default.\n"
    "  Exit status: 0 no change, 1 a regression of a candidate, 2 the runs cannot be\n"
    "  compared (a run incomplete or empty, no shared case, or different backend, GPU,\n"
    "  CPU, threads, input views, implementations or baseline version).\n"
    "\n"
    "exit status: 0 every case valid, 1 a case failed, 2 bad arguments or environment.\n";

#define bad dt_cli_bad /* "dualtime: ..." on stderr, exit status 2 (cli/dt_sys.h) */

/* Strict number parsing: the whole text must be a number in [lo, hi]. */
static int parse_long(const char *flag, const char *text, long long lo, long long hi,
                      long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        bad("%s: '%s' is not a whole number in %lld..%lld", flag, text, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_double(const char *flag, const char *text, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= lo && v <= hi)) {
        bad("%s: '%s' is not a number in %g..%g", flag, text, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* `dualtime list --json`: the registry as one JSON document (session/dt_ops_json.h). */
static int list_json(void) {
    char *text = dt_ops_list_json_text();
    if (!text) return bad("list --json: cannot encode the op table");
    int rc = fputs(text, stdout) < 0 ? 1 : 0;
    free(text);
    return rc;
}

static int cmd_list(int argc, char **argv) {
    if (argc == 1 && strcmp(argv[0], "--json") == 0) return list_json();
    if (argc > 0) return bad("list: unknown argument '%s' (only --json)", argv[0]);
    printf("Operations (FP32; rows are the last axis; pass rule |out-ref| <= atol + rtol*scale):\n\n");
    printf("%-20s %-52s %-8s %-8s %s\n", "op", "definition", "atol", "rtol", "scale");
    for (int i = 0; i < DT_OP_COUNT; i++) {
        const dt_op_info *o = dt_op_get((dt_op)i);
        printf("%-20s %-52s %-8g %-8g %s\n", o->name, o->definition, o->atol, o->rtol,
               o->scale_doc);
    }
    printf("\nbf16/f16 (--dtypes): |out-ref| <= ulps*ulp(|ref|) + scale_ulps*ulp(scale) + atol "
           "+ rtol*scale, in ulps of the output type:\n\n");
    printf("  %-20s %-5s %-5s %-6s %s\n", "op", "dtype", "ulps", "scale", "why");
    for (int i = 0; i < DT_OP_COUNT; i++)
        for (int d = DT_BF16; d <= DT_F16; d++) {
            const dt_tolerance t = dt_op_tolerance((dt_op)i, (dt_dtype)d);
            printf("  %-20s %-5s %-5g %-6g %s\n", dt_op_get((dt_op)i)->name,
                   dt_dtype_name((dt_dtype)d), t.ulps, t.scale_ulps, t.reason);
        }
    printf("\ninput distributions (--inputs):\n");
    for (int i = 0; i < DT_INPUTS_COUNT; i++)
        printf("  %-12s %s\n", dt_inputs_name((dt_inputs)i), dt_inputs_describe((dt_inputs)i));
    const char *backends[] = {"cpu", "cuda"};
    for (int b = 0; b < 2; b++) {
        for (int g = 0; g < 2; g++) {
            dt_shape_list sl;
            dt_shapes_default(backends[b], 0, g, &sl);
            printf("\ndefault %s shapes (%s):", g ? "gemm" : "row", backends[b]);
            for (int i = 0; i < sl.count; i++) {
                char s[64];
                dt_shape_format(&sl.s[i], s, sizeof s);
                printf(" %s%s", s, sl.logits_only[i] ? " (softmax, cross_entropy)" : "");
            }
        }
    }
    dt_shape_list q;
    dt_shapes_default("cpu", 1, 0, &q);
    printf("\n--quick row shapes:");
    for (int i = 0; i < q.count; i++) {
        char s[64];
        dt_shape_format(&q.s[i], s, sizeof s);
        printf(" %s", s);
    }
    dt_shapes_default("cpu", 1, 1, &q);
    printf("\n--quick gemm shapes:");
    for (int i = 0; i < q.count; i++) {
        char s[64];
        dt_shape_format(&q.s[i], s, sizeof s);
        printf(" %s", s);
    }
    printf("\n");
    return 0;
}

static int cmd_report(int argc, char **argv);

/* `report --format csv|json [--output FILE]`: the flat table (format/dt_format_csv.h,
 * format/dt_table_json.h) on stdout or in FILE; `--format md` is plain `report`. Returns
 * -1 when argv has no --format (the caller goes on as `report`), else the exit status. */
static int cmd_report_format(int argc, char **argv) {
    const char *in = NULL, *out = NULL, *format = NULL, *unknown = NULL;
    char **rest = dt_xcalloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0, rc = -1;
    for (int i = 0; i < argc && rc < 0; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--format") == 0) {
            if (i + 1 < argc) format = argv[++i];
            else rc = bad("report: --format needs md, csv or json");
        } else if (strncmp(a, "--format=", 9) == 0) {
            format = a + 9;
        } else {
            rest[nrest++] = argv[i];
            if (strcmp(a, "--output") == 0 && i + 1 < argc) out = rest[nrest++] = argv[++i];
            else if (a[0] == '-' && !unknown) unknown = a;
            else if (a[0] != '-' && !in) in = a;
        }
    }
    if (rc < 0 && !format) {
        free(rest);
        return -1;
    }
    if (rc < 0 && strcmp(format, "md") != 0 && unknown)
        rc = bad("report: unknown option '%s'", unknown);
    if (rc < 0 && strcmp(format, "md") == 0) rc = cmd_report(nrest, rest);
    else if (rc < 0 && strcmp(format, "csv") != 0 && strcmp(format, "json") != 0)
        rc = bad("report: --format '%s' is not md, csv or json", format);
    else if (rc < 0 && !in) rc = bad("report: missing RESULTS.json");
    else if (rc < 0) {
        dt_err e;
        dt_record *r = NULL;
        char *text = NULL;
        size_t len = 0;
        const char *inputs[1] = {in};
        dt_status st = out ? dt_outpath_check("--output", out, inputs, 1, &e) : DT_OK;
        if (st == DT_OK) st = dt_record_load(in, &r, &e);
        if (st == DT_OK) st = dt_derive_run(r, &e);
        if (st == DT_OK)
            st = format[0] == 'c' ? dt_format_csv(r, &text, &len, &e) : dt_table_json(r, &text, &len, &e);
        if (st == DT_OK && out) st = dt_file_write_atomic(out, text, len, &e);
        else if (st == DT_OK && fwrite(text, 1, len, stdout) != len) st = dt_fail(&e, DT_EIO, "stdout: write failed");
        free(text);
        dt_record_free(r);
        rc = st == DT_OK ? 0 : bad("report: %s", e.msg);
        if (st == DT_OK && out) fprintf(stderr, "dualtime: wrote %s\n", out);
    }
    free(rest);
    return rc;
}

static int cmd_report(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    int frc = cmd_report_format(argc, argv);
    if (frc >= 0) return frc;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--output") == 0 && i + 1 < argc) out = argv[++i];
        else if (strcmp(argv[i], "--help") == 0) return fputs(k_usage, stdout), 0;
        else if (argv[i][0] == '-') return bad("report: unknown option '%s'", argv[i]);
        else if (!in) in = argv[i];
        else return bad("report: unexpected argument '%s'", argv[i]);
    }
    if (!in) return bad("report: missing RESULTS.json");
    char md[PATH_MAX];
    dt_err e;
    if (!out) {
        snprintf(md, sizeof md, "%s", in);
        char *slash = strrchr(md, '/');
        if (slash) snprintf(slash + 1, sizeof md - (size_t)(slash + 1 - md), "results.md");
        else snprintf(md, sizeof md, "results.md");
        out = md;
    }
    /* never onto the input, a link, a device or a FIFO: refused before anything is written */
    if (dt_outputs_check_report(out, (const char *const[]){in}, 1, &e) != DT_OK)
        return bad("report: %s", e.msg);
    /* load, derive, write results.md and its plots; the input is never rewritten */
    dt_record *r = NULL;
    dt_status st = dt_record_load(in, &r, &e);
    if (st == DT_OK) st = dt_derive_run(r, &e);
    if (st == DT_OK) st = dt_outputs_write_report(r, out, &e);
    dt_record_free(r);
    if (st != DT_OK) return bad("report: %s", e.msg);
    fprintf(stderr, "dualtime: wrote %s\n", out);
    return 0;
}

/* The comparison's text in the chosen format: the result, or the refusal (JSON only). */
static dt_status compare_text(int json, const dt_compare_result *res, const char *refusal,
                              char **text, size_t *len, dt_err *e) {
    if (!json) return dt_format_compare_md(res, text, len, e);
    return res ? dt_compare_result_encode(res, text, len, e)
               : dt_compare_refusal_encode(refusal, text, len, e);
}

static int cmd_compare(int argc, char **argv) {
    const char *a = NULL, *b = NULL;
    double threshold = -1; /* -1: A's policy */
    int json = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--threshold") == 0 && i + 1 < argc) {
            if (parse_double("--threshold", argv[++i], 0.0, 1.0, &threshold)) return EXIT_BAD;
            if (threshold >= 1.0) return bad("--threshold: '%s' is not in [0, 1)", argv[i]);
        } else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "json") == 0) json = 1;
            else if (strcmp(f, "md") == 0) json = 0;
            else return bad("compare: --format: '%s' is not md or json", f);
        } else if (strcmp(argv[i], "--help") == 0) {
            return fputs(k_usage, stdout), 0;
        } else if (argv[i][0] == '-') {
            return bad("compare: unknown option '%s'", argv[i]);
        } else if (!a) {
            a = argv[i];
        } else if (!b) {
            b = argv[i];
        } else {
            return bad("compare: unexpected argument '%s'", argv[i]);
        }
    }
    if (!a || !b) return bad("compare: needs two results.json files (A then B)");
    dt_err e;
    dt_record *ra = NULL, *rb = NULL;
    dt_compare_result *res = NULL;
    char *text = NULL;
    size_t len = 0;
    dt_status st = dt_record_load(a, &ra, &e);
    if (st == DT_OK) st = dt_record_load(b, &rb, &e);
    if (st == DT_OK && threshold < 0) threshold = ra->derived.policy.compare_threshold;
    if (st == DT_OK) st = dt_compare_runs(ra, rb, threshold, &res, &e);
    int rc = dt_compare_exit_status(st, res);
    /* a refusal: its message (it starts with "compare: ") once on stderr, and in JSON */
    if (st != DT_OK)
        fprintf(stderr, "dualtime: %s%s\n", strncmp(e.msg, "compare: ", 9) ? "compare: " : "",
                e.msg);
    dt_err fe;
    if ((st == DT_OK || json) && compare_text(json, res, e.msg, &text, &len, &fe) == DT_OK)
        fwrite(text, 1, len, stdout);
    else if (st == DT_OK)
        rc = bad("compare: %s", fe.msg);
    free(text);
    dt_compare_result_free(res);
    dt_record_free(ra);
    dt_record_free(rb);
    return rc;
}

/* ---- run -------------------------------------------------------------------------------- */

/* The run's command line, parsed and checked. */
typedef struct run_settings {
    const char *output, *backends, *operations, *row_shapes, *gemm_shapes, *python;
    const char *candidate_cmd, *baseline_cmd;
    const char *impls_text;  /* --impls (NULL: the older spellings or the default) */
    dt_impl_specs impls;     /* --impls parsed (n 0 until check_run_settings) */
    const char *dtypes_text, *inputs_text; /* --dtypes, --inputs (NULL: fp32, uniform) */
    dt_dtype dtypes[DT_MAX_DTYPES];
    int ndtypes, inputs;
    long long samples, rounds, seed, threads, prime;
    double sample_ms, warmup_ms, timeout_s, start_timeout_s;
    int quick, views, device_timing, capture_sources, quiet, probe_kind;
    int no_pin;            /* --no-pin */
    int graph;             /* --graph */
    int cache_cold;        /* --cache cold */
    /* device_timing, samples and rounds are -1 until given: their defaults depend on the
     * backend (apply_backend_defaults) */
    const char *backend;   /* --backends checked: "cpu", "cuda" or NULL (automatic) */
    int ops[DT_OP_COUNT];  /* selected operations */
    dt_shape_list rows, gemms;
    int dry_run;           /* --dry-run */
} run_settings;

/* Everything one `dualtime run` holds between its steps. */
typedef struct run_job {
    run_settings a;
    int full_argc;
    char **full_argv;
    dt_record *resume;     /* the interrupted run's record (owned), NULL for a new run */
    char exe_dir[PATH_MAX];
    char now[64];          /* start time, UTC ISO 8601 */
    dt_session session;
    dt_run_config cfg;
    dt_record *results;    /* the run's record */
    dt_pin_plan pin;       /* the CPUs of the orchestrator and each member's workers */
    char orch_cpus[DT_PIN_LIST_LEN]; /* the orchestrator's affinity once pinned (or not) */
    dt_clocks *clocks;
    dt_runlock lock;       /* a new run's lock on its directory (a resume's is cmd_resume's) */
    const dt_plan_doc *shard_plan; /* run --plan: the plan (not owned); NULL otherwise */
    int shard_index;               /* run --plan: the shard this run is */
} run_job;

static void settings_defaults(run_settings *a) {
    memset(a, 0, sizeof *a);
    a->samples = -1;
    a->rounds = -1;
    a->device_timing = -1;
    a->probe_kind = DT_RUN_PROBE_AUTO;
    a->seed = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    a->threads = ncpu > 8 ? 8 : (ncpu > 0 ? ncpu : 1);
    a->sample_ms = -1; /* by backend: apply_backend_defaults */
    a->warmup_ms = -1;
    a->prime = 1;
    a->timeout_s = 180;
    a->start_timeout_s = DT_WORKER_START_S;
}

enum { O_OUT = 1000, O_BACK, O_OPS, O_ROWS, O_GEMM, O_VIEWS, O_SAMPLES, O_SMS, O_WMS, O_CAP,
       O_QUICK, O_THREADS, O_TIMEOUT, O_SEED, O_ROUNDS, O_DEV, O_PROBE, O_PY, O_CAND, O_BASE,
       O_QUIET, O_PRIME, O_HELP, O_NODEV, O_NOPIN, O_DRY, O_START, O_DTYPES, O_INPUTS,
       O_IMPLS, O_GRAPH, O_CACHE };

static const struct option k_run_opts[] = {
    {"output", required_argument, 0, O_OUT},        {"backends", required_argument, 0, O_BACK},
    {"operations", required_argument, 0, O_OPS},    {"row-shapes", required_argument, 0, O_ROWS},
    {"gemm-shapes", required_argument, 0, O_GEMM},  {"input-views", no_argument, 0, O_VIEWS},
    {"samples", required_argument, 0, O_SAMPLES},   {"sample-ms", required_argument, 0, O_SMS},
    {"warmup-ms", required_argument, 0, O_WMS},     {"capture-sources", no_argument, 0, O_CAP},
    {"quick", no_argument, 0, O_QUICK},             {"threads", required_argument, 0, O_THREADS},
    {"timeout", required_argument, 0, O_TIMEOUT},   {"seed", required_argument, 0, O_SEED},
    {"rounds", required_argument, 0, O_ROUNDS},     {"device-timing", no_argument, 0, O_DEV},
    {"probe-kind", required_argument, 0, O_PROBE},  {"python", required_argument, 0, O_PY},
    {"candidate-worker", required_argument, 0, O_CAND},
    {"baseline-worker", required_argument, 0, O_BASE},
    {"quiet", no_argument, 0, O_QUIET},             {"help", no_argument, 0, O_HELP},
    {"prime", required_argument, 0, O_PRIME},
    {"no-device-timing", no_argument, 0, O_NODEV},  {"no-pin", no_argument, 0, O_NOPIN},
    {"dry-run", no_argument, 0, O_DRY},
    {"start-timeout", required_argument, 0, O_START},
    {"dtypes", required_argument, 0, O_DTYPES},     {"inputs", required_argument, 0, O_INPUTS},
    {"impls", required_argument, 0, O_IMPLS},
    {"graph", no_argument, 0, O_GRAPH},             {"cache", required_argument, 0, O_CACHE},
    {0, 0, 0, 0}};

/* One option with a number value into a; -1 when it is not one (message printed). */
static int parse_number_opt(int c, const char *v, run_settings *a) {
    switch (c) {
    case O_SAMPLES: return parse_long("--samples", v, 1, 1001, &a->samples);
    case O_SMS: return parse_double("--sample-ms", v, 0.001, 60000, &a->sample_ms);
    case O_WMS: return parse_double("--warmup-ms", v, 0, 600000, &a->warmup_ms);
    case O_PRIME: return parse_long("--prime", v, 0, 16, &a->prime);
    case O_THREADS: return parse_long("--threads", v, 1, 1024, &a->threads);
    case O_TIMEOUT: return parse_double("--timeout", v, 0.1, 86400, &a->timeout_s);
    case O_START: return parse_double("--start-timeout", v, 0.1, 86400, &a->start_timeout_s);
    case O_SEED: return parse_long("--seed", v, 0, LLONG_MAX, &a->seed);
    case O_ROUNDS: return parse_long("--rounds", v, 1, 1000, &a->rounds);
    }
    DT_ASSERT(0);
    return -1;
}

/* The options of argv into a. Returns -1 to go on, else the exit status (0 for --help). */
static int parse_run_args(int argc, char **argv, run_settings *a) {
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", k_run_opts, NULL)) != -1) {
        switch (c) {
        case O_OUT: a->output = optarg; break;
        case O_BACK: a->backends = optarg; break;
        case O_OPS: a->operations = optarg; break;
        case O_ROWS: a->row_shapes = optarg; break;
        case O_GEMM: a->gemm_shapes = optarg; break;
        case O_VIEWS: a->views = 1; break;
        case O_SAMPLES: case O_SMS: case O_WMS: case O_PRIME: case O_THREADS: case O_TIMEOUT:
        case O_SEED: case O_ROUNDS: case O_START:
            if (parse_number_opt(c, optarg, a)) return EXIT_BAD;
            break;
        case O_CAP: a->capture_sources = 1; break;
        case O_QUICK: a->quick = 1; break;
        case O_DEV: a->device_timing = 1; break;
        case O_NODEV: a->device_timing = 0; break;
        case O_NOPIN: a->no_pin = 1; break;
        case O_PROBE:
            if (strcmp(optarg, "concurrent") == 0) a->probe_kind = DT_RUN_PROBE_CONCURRENT;
            else if (strcmp(optarg, "serialized") == 0) a->probe_kind = DT_RUN_PROBE_SERIALIZED;
            else if (strcmp(optarg, "auto") == 0) a->probe_kind = DT_RUN_PROBE_AUTO;
            else return bad("--probe-kind: '%s' is not auto, concurrent or serialized", optarg);
            break;
        case O_PY: a->python = optarg; break;
        case O_CAND: a->candidate_cmd = optarg; break;
        case O_BASE: a->baseline_cmd = optarg; break;
        case O_IMPLS: a->impls_text = optarg; break;
        case O_QUIET: a->quiet = 1; break;
        case O_DRY: a->dry_run = 1; break;
        case O_DTYPES: a->dtypes_text = optarg; break;
        case O_INPUTS: a->inputs_text = optarg; break;
        case O_GRAPH: a->graph = 1; break;
        case O_CACHE:
            if (strcmp(optarg, "warm") == 0) a->cache_cold = 0;
            else if (strcmp(optarg, "cold") == 0) a->cache_cold = 1;
            else return bad("--cache: '%s' is not warm or cold", optarg);
            break;
        case O_HELP: fputs(k_usage, stdout); return 0;
        default:
            if (optopt) return bad("option '%s' needs a value", argv[optind - 1]);
            return bad("unknown option '%s' (see dualtime --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) return bad("unexpected argument '%s'", argv[optind]);
    return -1;
}

/* --impls (or its older spellings) into a->impls, its files and directories checked:
 * -1 to go on, else EXIT_BAD (message printed). */
static int check_impls(run_settings *a) {
    dt_err e;
    dt_impl_specs_free(&a->impls);
    if (a->impls_text && (a->candidate_cmd || a->baseline_cmd))
        return bad("--impls: cannot be combined with %s (name that worker in the list: "
                   "--impls ...,NAME=worker:CMD)", a->candidate_cmd ? "--candidate-worker"
                                                                   : "--baseline-worker");
    if (a->impls_text || (!a->candidate_cmd && !a->baseline_cmd)) {
        if (dt_impl_specs_parse("--impls", a->impls_text ? a->impls_text : DT_IMPL_DEFAULT,
                                &a->impls, &e) != DT_OK)
            return bad("%s", e.msg);
        if (a->impls.n < 2)
            return bad("--impls: '%s': name a baseline and at least one implementation to "
                       "compare with it", a->impls_text);
    } else {
        dt_impl_specs_legacy(a->candidate_cmd, a->baseline_cmd, &a->impls);
    }
    if (dt_impl_specs_check(&a->impls, &e) != DT_OK) return bad("%s", e.msg);
    return -1;
}

/* Checks the parsed settings that need no worker: output, operations, shapes, backend.
 * Returns -1 to go on, else EXIT_BAD (message printed). */
static int check_run_settings(run_settings *a, int resuming) {
    if (!a->output) return bad("--output DIR is required (a new directory for the results)");
    if (!a->output[0]) return bad("--output: empty path");
    struct stat st;
    if (!resuming && lstat(a->output, &st) == 0)
        return bad("--output: '%s' already exists; dualtime never overwrites results "
                   "(to finish an interrupted run: dualtime run --resume %s)", a->output, a->output);
    dt_err e;
    if (!resuming && dt_outpath_check_dir("--output", a->output, &e) != DT_OK)
        return bad("%s", e.msg);
    if (dt_run_env_check(&e) != DT_OK) return bad("%s", e.msg);
    const char *pre = getenv("DUALTIME_PROBE_PRESTART");
    if (pre && *pre && strcmp(pre, "0") != 0 && strcmp(pre, "1") != 0)
        return bad("DUALTIME_PROBE_PRESTART=%s: expected 0 or 1", pre);
    if (a->operations) {
        if (dt_ops_parse(a->operations, a->ops, &e) != DT_OK) return bad("%s", e.msg);
    } else {
        for (int i = 0; i < DT_OP_COUNT; i++) a->ops[i] = 1;
    }
    if (a->row_shapes && dt_shapes_parse(a->row_shapes, 0, "--row-shapes", &a->rows, &e) != DT_OK)
        return bad("%s", e.msg);
    if (a->gemm_shapes &&
        dt_shapes_parse(a->gemm_shapes, 1, "--gemm-shapes", &a->gemms, &e) != DT_OK)
        return bad("%s", e.msg);
    a->dtypes[0] = DT_F32;
    a->ndtypes = 1;
    if (a->dtypes_text && dt_dtypes_parse(a->dtypes_text, a->dtypes, &a->ndtypes, &e) != DT_OK)
        return bad("%s", e.msg);
    if (a->inputs_text && (a->inputs = dt_inputs_find(a->inputs_text)) < 0)
        return bad("--inputs: unknown distribution '%s' (known: uniform, normal, wide-logits, "
                   "offset, cancel)", a->inputs_text);
    if (a->backends) {
        if (strcmp(a->backends, "cpu") == 0 || strcmp(a->backends, "cuda") == 0)
            a->backend = a->backends;
        else if (strchr(a->backends, ','))
            return bad("--backends: '%s': one backend per run (cpu or cuda); run twice for both",
                       a->backends);
        else
            return bad("--backends: unknown backend '%s' (known: cpu, cuda)", a->backends);
    }
    if (a->device_timing == 1 && a->backend && strcmp(a->backend, "cpu") == 0)
        return bad("--device-timing: the cpu backend has no device scopes; use --backends cuda");
    if (a->cache_cold && a->backend && strcmp(a->backend, "cpu") == 0)
        return bad("--cache cold: the cpu backend has no device windows to run cold (host "
                   "scopes stay warm); use --backends cuda");
    if (a->cache_cold && a->device_timing == 0)
        return bad("--cache cold: needs the device scopes, and --no-device-timing turns them off");
    return check_impls(a);
}

/* Defaults that depend on the backend (docs/device-workflow.md, "Defaults on cuda"):
 * cuda: device timing on, 2 rounds (the assessment needs >= 2 for comparative), 9
 * samples of 15 ms and 80 ms of warm-up (session 10: 205 s for the default matrix on the
 * H200, was 224 s at 20 / 150 ms; the same verdicts in two such runs, docs/device-workflow.md
 * "Reruns"); cpu: no device timing, 1 round, 9 samples of 20 ms, 150 ms of warm-up.
 * Given flags win. */
static void apply_backend_defaults(run_settings *a, const char *backend) {
    int cuda = strcmp(backend, "cuda") == 0;
    if (a->device_timing < 0) a->device_timing = cuda;
    if (a->rounds < 0) a->rounds = cuda ? 2 : 1;
    if (a->samples < 0) a->samples = 9;
    if (a->sample_ms < 0) a->sample_ms = cuda ? 15 : 20;
    if (a->warmup_ms < 0) a->warmup_ms = cuda ? 80 : 150;
}

/* A resume re-parses the run's recorded command line, so a default it left to the backend
 * would take this build's value; the recorded one is what the finished (case, round)
 * pairs were measured with, so it stays (absent in the record: this build's default). */
static void resume_defaults(run_settings *a, const dt_settings *was) {
    if (a->device_timing < 0 && (was->device_timing == 0 || was->device_timing == 1))
        a->device_timing = was->device_timing;
    /* absent: DT_NULL_I64 / NAN, which no comparison below takes */
    if (a->rounds < 0 && was->rounds > 0) a->rounds = was->rounds;
    if (a->samples < 0 && was->samples > 0) a->samples = was->samples;
    if (a->sample_ms < 0 && was->sample_ms > 0) a->sample_ms = was->sample_ms;
    if (a->warmup_ms < 0 && was->warmup_ms >= 0) a->warmup_ms = was->warmup_ms;
}

/* Pinning (issue 12, item 6): with enough CPUs the orchestrator is pinned to one now and
 * each member's workers start pinned to their own (common/dt_affinity.h); --no-pin or
 * too few CPUs leave everything as it is, the reason kept for the record. */
static void plan_pinning(run_job *j) {
    if (j->a.no_pin) {
        memset(&j->pin, 0, sizeof j->pin);
        snprintf(j->pin.why, sizeof j->pin.why, "not pinned: --no-pin");
    } else {
        /* before the backend is settled: an explicit cpu run must keep --threads CPUs per
         * worker; cuda (or automatic) caps each share at --threads */
        int cpu = j->a.backend && strcmp(j->a.backend, "cpu") == 0;
        if (j->a.impls.n > DT_PIN_MAX_WORKERS) {
            memset(&j->pin, 0, sizeof j->pin);
            snprintf(j->pin.why, sizeof j->pin.why, "not pinned: %d implementations (pinning "
                     "gives at most %d their own CPUs)", j->a.impls.n, DT_PIN_MAX_WORKERS);
        } else {
            /* a GPU run's workers need few CPUs (their host thread, the driver's and
             * CUPTI's): the rest is spare for the orchestrator's preparer
             * (orchestrate/dt_casehost.h). No --backends counts as GPU where the
             * driver's device node is there. */
            int gpu = j->a.backend ? strcmp(j->a.backend, "cuda") == 0
                                   : access("/dev/nvidiactl", F_OK) == 0;
            int take = (int)j->a.threads;
            if (gpu && take > DT_PIN_GPU_WORKER_CPUS) take = DT_PIN_GPU_WORKER_CPUS;
            dt_affinity_plan_here(j->a.impls.n, take, cpu, &j->pin);
        }
        /* the oracle's threads keep every CPU: only this thread is pinned below */
        if (j->pin.pinned) dt_oracle_threads_start();
        if (j->pin.pinned && dt_affinity_pin_self(j->pin.orchestrator) != 0) {
            char why[sizeof j->pin.why];
            snprintf(why, sizeof why, "not pinned: sched_setaffinity(%s): %s",
                     j->pin.orchestrator, strerror(errno));
            memset(&j->pin, 0, sizeof j->pin);
            snprintf(j->pin.why, sizeof j->pin.why, "%s", why);
        }
    }
    if (dt_affinity_self(j->orch_cpus, sizeof j->orch_cpus) != 0) j->orch_cpus[0] = '\0';
}

/* The progress line while a worker starts (what: "the PyTorch worker"...; NULL: done). */
static void show_start(void *ctx, const char *what) {
    (void)ctx;
    if (what) fprintf(stderr, "\r\033[Kstarting %s\u2026", what);
    else fputs("\r\033[K", stderr);
    fflush(stderr);
}

/* --cache cold once the backend is settled: cuda with device timing, and an L2 size from a
 * worker's hello (the largest reported) for the flush and the rotation. */
static int cache_check(run_job *j) {
    const run_settings *a = &j->a;
    if (!a->cache_cold) return -1;
    if (strcmp(j->session.backend, "cuda") != 0)
        return bad("--cache cold: the cpu backend has no device windows to run cold (host "
                   "scopes stay warm); this run uses %s (%s)", j->session.backend,
                   j->session.backend_choice);
    if (!a->device_timing)
        return bad("--cache cold: needs the device scopes, and --no-device-timing turns them off");
    j->cfg.l2_bytes = 0;
    for (int i = 0; i < j->session.count; i++)
        if (j->session.member[i].hello.cuda_l2_bytes > j->cfg.l2_bytes)
            j->cfg.l2_bytes = j->session.member[i].hello.cuda_l2_bytes;
    if (j->cfg.l2_bytes <= 0)
        return bad("--cache cold: no worker reported the device's L2 size (hello "
                   "backends.cuda.info.l2_bytes), so the flush cannot be sized");
    return -1;
}

/* Starts the workers and builds the plan for the backend they settle on. */
/* The probe workers a device-timed run will need (bit 1 << step): both kinds for the
 * auto probe kind; 0 when they start on demand (DUALTIME_PROBE_PRESTART=0, an A/B). */
static unsigned probe_steps(const run_settings *a) {
    const char *pre = getenv("DUALTIME_PROBE_PRESTART");
    if (pre && strcmp(pre, "0") == 0) return 0;
    return a->probe_kind == DT_RUN_PROBE_CONCURRENT   ? 1u << DT_STEP_PROBE
           : a->probe_kind == DT_RUN_PROBE_SERIALIZED ? 1u << DT_STEP_PROBE_SERIAL
                                                      : (1u << DT_STEP_PROBE) | (1u << DT_STEP_PROBE_SERIAL);
}

static int start_run(run_job *j) {
    run_settings *a = &j->a;
    int rc;
    if (dt_exe_dir(j->exe_dir, sizeof j->exe_dir) != 0)
        return bad("cannot locate the dualtime binary");
    dt_shm_sweep_stale();
    plan_pinning(j);
    /* the run's workers inherit it: a --compile worker then probes only that backend at
     * hello (docs/torch-worker.md, "The compile cache"); automatic choice: both */
    if (a->backend) setenv("DUALTIME_RUN_BACKEND", a->backend, 1);
    else unsetenv("DUALTIME_RUN_BACKEND");
    dt_session_settings ss = {.exe_dir = j->exe_dir, .python = a->python,
                              .backend = a->backend, .threads = (int)a->threads,
                              .timeout_s = a->timeout_s, .start_timeout_s = a->start_timeout_s,
                              .on_start = !a->quiet && isatty(2) ? show_start : NULL,
                              .impls = &a->impls,
                              /* --backends cuda with device timing: the probe workers start
                               * with the main ones (on an automatic backend the choice
                               * waits for the hellos, and a cpu run never needs them; a
                               * --dry-run measures nothing) */
                              .early_steps = a->backend && strcmp(a->backend, "cuda") == 0 &&
                                                     a->device_timing != 0 && !a->dry_run
                                                 ? probe_steps(a)
                                                 : 0};
    for (int i = 0; j->pin.pinned && i < a->impls.n; i++) ss.cpus[i] = j->pin.worker[i];
    dt_err e;
    if (dt_session_start(&j->session, &ss, &e) != DT_OK) return bad("%s", e.msg);
    const char *backend = j->session.backend;
    if (a->device_timing == 1 && strcmp(backend, "cuda") != 0)
        return bad("--device-timing needs the cuda backend, and this run uses %s (%s)", backend,
                   j->session.backend_choice);
    if (j->resume) resume_defaults(a, &j->resume->settings);
    apply_backend_defaults(a, backend);
    if ((rc = cache_check(j)) >= 0) return rc;
    if (!a->row_shapes) dt_shapes_default(backend, a->quick, 0, &a->rows);
    if (!a->gemm_shapes) dt_shapes_default(backend, a->quick, 1, &a->gemms);
    dt_plan_build_typed(&j->cfg.plan, a->ops, &a->rows, &a->gemms, a->views, a->dtypes,
                        a->ndtypes);
    if (j->cfg.plan.count == 0) return bad("nothing to run: the selected operations have no shapes");
    /* shapes are limited by memory: refuse up front what cannot fit (issue 16) */
    dt_mem_free mf;
    dt_mem_free_read(&mf);
    mf.device_bytes = -1; /* the least free memory a cuda worker reported; -1: skipped */
    for (int i = 0; strcmp(backend, "cuda") == 0 && i < j->session.count; i++) {
        const dt_hello *h = &j->session.member[i].hello;
        int64_t f = h->text ? h->cuda_memory_free_bytes : -1;
        if (f >= 0 && (mf.device_bytes < 0 || f < mf.device_bytes)) mf.device_bytes = f;
    }
    if (dt_memcheck_plan(&j->cfg.plan, j->session.count, &mf, NULL, 0, &e) != DT_OK)
        return bad("%s", e.msg);
    return -1;
}

/* A resumed run must be the same comparison on the same backend. */
static int check_resume(run_job *j) {
    const char *backend = j->session.backend;
    const char *was = j->resume->settings.backend;
    if (!was || strcmp(was, backend) != 0)
        return bad("--resume: the run used backend %s, this machine chose %s", was ? was : "?",
                   backend);
    /* the record and the session both keep the baseline first */
    const dt_record *r = j->resume;
    int same = r->n_impls == (size_t)j->session.count;
    for (int i = 0; same && i < j->session.count; i++)
        same = strcmp(r->impls[i].id, j->session.member[i].id) == 0;
    if (!same) {
        char was[512] = "", here[512] = "";
        for (size_t i = 0; i < r->n_impls; i++)
            snprintf(was + strlen(was), sizeof was - strlen(was), "%s%s", i ? "," : "",
                     r->impls[i].id);
        for (int i = 0; i < j->session.count; i++)
            snprintf(here + strlen(here), sizeof here - strlen(here), "%s%s", i ? "," : "",
                     j->session.member[i].id);
        return bad("--resume: the run had the implementations %s, the workers here are %s",
                   was, here);
    }
    return -1;
}

static void fill_settings(const run_job *j, dt_settings *s) {
    const run_settings *a = &j->a;
    dt_record_set_str(&s->backend, j->session.backend);
    dt_record_set_str(&s->backend_choice, j->session.backend_choice);
    s->operations = dt_xcalloc(DT_OP_COUNT, sizeof *s->operations);
    s->n_operations = 0;
    for (int i = 0; i < DT_OP_COUNT; i++)
        if (a->ops[i]) s->operations[s->n_operations++] = (dt_op)i;
    s->samples = a->samples;
    s->sample_ms = a->sample_ms;
    s->warmup_ms = a->warmup_ms;
    s->prime = a->prime;
    s->rounds = a->rounds;
    s->seed = a->seed;
    s->input_views = a->views;
    s->threads = a->threads;
    s->timeout_s = a->timeout_s;
    s->quick = a->quick;
    s->device_timing = a->device_timing;
    static const char *const k_kinds[] = {"concurrent", "serialized", "auto"};
    dt_record_set_str(&s->probe_kind, k_kinds[a->probe_kind]);
    s->pin = j->pin.pinned;
    dt_record_set_str(&s->pin_reason, j->pin.pinned ? NULL : j->pin.why);
    s->capture_sources = a->capture_sources;
    s->max_reps = DT_RUN_MAX_REPS;
    s->device_reps_cap = DT_RUN_DEVICE_REPS_CAP;
    dt_record_set_str(&s->inputs, dt_inputs_name((dt_inputs)a->inputs));
    char dts[64] = "";
    for (int i = 0; i < a->ndtypes; i++) {
        strcat(dts, i ? "," : "");
        strcat(dts, dt_dtype_name(a->dtypes[i]));
    }
    dt_record_set_str(&s->dtypes, dts);
    s->graph = a->graph;
    dt_record_set_str(&s->cache, a->cache_cold ? "cold" : "warm");
    s->bootstrap_resamples = 2000;
    s->bootstrap_seed = 20261130;
}

/* provenance.files: the binaries and scripts of this build, with their hashes. */
static void add_files(dt_record *r, const char *exe_dir) {
    static const char *const k_files[][2] = {
        {"dualtime", "dualtime"},
        {"native worker", "dualtime-native-worker"},
        {"native CUDA backend", "libdualtime_cuda.so"},
        {"device-timing helper", "libdualtime_timing.so"},
        {"PyTorch worker", "dualtime_torch_worker.py"}};
    for (size_t i = 0; i < sizeof k_files / sizeof k_files[0]; i++) {
        char p[PATH_MAX + 64], hex[65];
        snprintf(p, sizeof p, "%s/%s", exe_dir, k_files[i][1]);
        if (dt_file_sha256(p, hex) == 0) dt_record_prov_file_add(r, k_files[i][0], p, hex);
    }
}

/* The implementations, in the session's order: the baseline first, then the candidates. */
static void add_impls(const run_job *j, dt_record *r) {
    for (int k = 0; k < j->session.count; k++) {
        const dt_session_member *m = &j->session.member[k];
        dt_impl *im = dt_record_impl_add(r, m->id, k == 0 ? DT_ROLE_BASELINE : DT_ROLE_CANDIDATE);
        dt_record_set_str(&im->framework, m->hello.framework);
        dt_record_set_str(&im->framework_version, m->hello.framework_version);
        const dt_worker *w = &m->worker[DT_STEP_MAIN];
        for (int i = 0; w->argv[i]; i++) dt_strv_push(&im->command, w->argv[i]);
        dt_record_set_str(&im->hello_json, m->hello.text);
        if (m->cpus[0]) dt_record_set_str(&im->cpus, m->cpus);
    }
}

/* --threads above the machine's cores: a warning on stderr and a note in the record
 * (results.md shows it under the settings). */
static void note_threads(const run_job *j, dt_record *r) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores <= 0 || j->a.threads <= cores) return;
    char note[160];
    snprintf(note, sizeof note, "--threads %lld exceeds the %ld cores of this machine: the "
             "frameworks' threads share cores and time each other", j->a.threads, cores);
    fprintf(stderr, "dualtime: warning: %s\n", note);
    dt_strv_push(&r->notes, note);
}

/* The hello that describes the device: the first candidate's with a description, else
 * the baseline's; NULL when none has one. */
static const dt_hello *cuda_describer(const dt_session *s) {
    for (int k = 1; k <= s->count; k++)
        if (s->member[k % s->count].hello.cuda_info_json) return &s->member[k % s->count].hello;
    return NULL;
}

/* The run-level part of the record (no cases yet). */
static dt_record *run_record(const run_job *j) {
    dt_record *r = dt_record_new();
    r->complete = 0;
    dt_record_set_str(&r->tool.name, "dualtime");
    dt_record_set_str(&r->tool.version, DT_VERSION);
    char repo[PATH_MAX + 4];
    snprintf(repo, sizeof repo, "%s/..", j->exe_dir);
    dt_git_info(repo, DT_GIT_REV_BUILD, &r->tool);
    for (int i = 0; i < j->full_argc; i++) dt_strv_push(&r->command_line, j->full_argv[i]);
    dt_record_set_str(&r->started_at, j->now);
    dt_record_set_str(&r->finished_at, j->now);
    fill_settings(j, &r->settings);
    r->derived.policy.bootstrap_resamples = r->settings.bootstrap_resamples;
    r->derived.policy.bootstrap_seed = r->settings.bootstrap_seed;
    add_impls(j, r);
    dt_host_info(&r->env.host);
    const dt_hello *h0 = cuda_describer(&j->session);
    if (strcmp(j->session.backend, "cuda") == 0 && h0) {
        /* the first candidate's description of the device (the baseline's when none has) */
        dt_record_set_str(&r->env.gpu_json, h0->cuda_info_json);
        dt_record_set_str(&r->env.gpu_name, h0->cuda_name);
    }
    dt_record_set_str(&r->env.python, j->session.python);
    if (j->orch_cpus[0]) dt_record_set_str(&r->env.orchestrator_cpus, j->orch_cpus);
    add_files(r, j->exe_dir);
    note_threads(j, r);
    return r;
}

/* GPU clocks through NVML (dlopen; absent NVML is recorded, not fatal). NVML's index is
 * not CUDA's ordinal in general: the PCI bus must match the worker's device. */
static void open_clocks(run_job *j) {
    if (strcmp(j->session.backend, "cuda") != 0) return;
    const char *dev_env = getenv("DUALTIME_NVML_DEVICE"); /* a --devices child's GPU */
    if (!dev_env || !*dev_env) dev_env = getenv("DUALTIME_CUDA_DEVICE");
    int dev_index = dev_env && *dev_env ? atoi(dev_env) : 0;
    char why[DT_ERR_LEN];
    dt_nvml *nvml = &j->results->env.nvml;
    nvml->present = 1;
    j->clocks = dt_clocks_open(dev_index, why, sizeof why);
    if (j->clocks) {
        dt_clocks_describe(j->clocks, nvml);
        const dt_hello *h = cuda_describer(&j->session);
        int64_t cuda_bus = h ? h->cuda_pci_bus : DT_NULL_I64;
        if (cuda_bus != DT_NULL_I64 && nvml->pci_bus != DT_NULL_I64 && cuda_bus != nvml->pci_bus) {
            snprintf(why, sizeof why, "NVML device %d is on PCI bus %lld, the CUDA device on "
                     "bus %lld (set DUALTIME_CUDA_DEVICE / CUDA_DEVICE_ORDER=PCI_BUS_ID)",
                     dev_index, (long long)nvml->pci_bus, (long long)cuda_bus);
            dt_clocks_close(j->clocks);
            j->clocks = NULL;
        }
    }
    nvml->available = j->clocks != NULL;
    dt_record_set_str(&nvml->reason, j->clocks ? NULL : why);
    if (!j->a.quiet && !j->clocks) fprintf(stderr, "dualtime: GPU clocks not read: %s\n", why);
}

/* A resumed run keeps the interrupted run's record and notes this resumption (when,
 * which tool, frameworks and environment). */
static int merge_resume(run_job *j) {
    char *text = NULL, *notes = NULL;
    size_t len = 0;
    dt_err e;
    if (dt_record_encode(j->results, &text, &len, &e) != DT_OK ||
        dt_protocol_resume_note(j->resume->resumes_json, j->now, text, &notes, &e) != DT_OK) {
        free(text);
        return bad("--resume: %s", e.msg);
    }
    free(text);
    free(j->resume->resumes_json);
    j->resume->resumes_json = notes;
    j->resume->complete = 0;
    j->resume->interrupted_signal = 0;
    dt_record_free(j->results);
    j->results = j->resume;
    j->resume = NULL; /* owned as results now */
    return -1;
}

static void fill_config(run_job *j) {
    const run_settings *a = &j->a;
    dt_run_config *cfg = &j->cfg;
    cfg->output_dir = a->output;
    cfg->backend = j->session.backend;
    cfg->samples = (int)a->samples;
    cfg->sample_ms = a->sample_ms;
    cfg->warmup_ms = a->warmup_ms;
    cfg->prime = (int)a->prime;
    cfg->rounds = (int)a->rounds;
    cfg->seed = (uint64_t)a->seed;
    cfg->threads = (int)a->threads;
    cfg->timeout_s = a->timeout_s;
    cfg->device_timing = a->device_timing;
    cfg->probe_kind = a->probe_kind;
    cfg->capture_sources = a->capture_sources;
    cfg->max_reps = DT_RUN_MAX_REPS;
    cfg->device_reps_cap = DT_RUN_DEVICE_REPS_CAP;
    cfg->progress = !a->quiet && isatty(2);
    for (int i = 0; i < j->session.count; i++) cfg->fw_ids[i] = j->session.member[i].id;
    cfg->clocks = j->clocks;
    cfg->inputs = a->inputs;
    cfg->graph = a->graph;
    cfg->cache_cold = a->cache_cold;
    cfg->spare_cpus = j->pin.pinned ? j->pin.spare : NULL;
    cfg->usable_cpus = j->pin.pinned ? j->pin.usable : NULL;
}

/* The end-of-run summary on stderr (format/dt_format_summary.h), terminal or not; --quiet
 * leaves it out. The results directory is shown as an absolute path. */
static void print_summary(const run_job *j) {
    char abs_dir[PATH_MAX], *text = NULL;
    size_t len = 0;
    dt_err e;
    if (j->a.quiet || !realpath(j->a.output, abs_dir)) return;
    if (dt_format_summary(j->results, abs_dir, &text, &len, &e) == DT_OK)
        fwrite(text, 1, len, stderr);
    free(text);
}

/* Before any worker starts: SIGINT, SIGTERM and SIGHUP ask the run to stop (it keeps
 * what it has; before the run directory exists nothing is written); a crash (abort, a
 * fault) kills the workers' process groups first. atexit does the same on every exit. */
static void fatal_signal(int signo) {
    dt_spawn_kill_groups();
    signal(signo, SIG_DFL);
    raise(signo);
}

static void install_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = dt_run_request_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    dt_worker_set_interrupt(dt_run_stop_requested); /* no wait outlasts a stop request */
    sa.sa_handler = fatal_signal;
    sa.sa_flags = SA_RESETHAND;
    const int fatal[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) sigaction(fatal[i], &sa, NULL);
}

/* A stop asked for before the run directory holds anything: nothing was written. */
static int stopped_early(void) {
    if (!dt_run_stop_requested()) return -1;
    fprintf(stderr, "dualtime: interrupted before the run started; nothing was written\n");
    return 1;
}

/* nftw callback of remove_tree. */
static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Removes a directory this run made and filled (never one it did not make). */
static void remove_tree(const char *dir) { nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS); }

/* A new run's directory appears only resumable: it is made under a temporary name in the
 * same parent (.NAME.starting-PID), locked, given its first results.json (the plan's
 * settings, implementations and environment; no case yet) and renamed into place
 * (RENAME_NOREPLACE). A kill before the rename leaves no DIR (at most the temporary
 * directory after kill -9); a failed first write (a full disk) removes it. */
static int create_run_dir(run_job *j) {
    char out[PATH_MAX], tmp[PATH_MAX];
    snprintf(out, sizeof out, "%s", j->a.output);
    for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; n--) out[n - 1] = '\0'; /* "DIR/" */
    const char *slash = strrchr(out, '/');
    int plen = slash ? (int)(slash - out + 1) : 0;
    if (snprintf(tmp, sizeof tmp, "%.*s.%s.starting-%ld", plen, out, slash ? slash + 1 : out,
                 (long)getpid()) >= (int)sizeof tmp)
        return bad("--output: '%s': path too long", out);
    if (mkdir(tmp, 0755) != 0)
        return bad("--output: cannot create '%s': %s", tmp, strerror(errno));
    dt_err e;
    dt_status st = dt_runlock_take(&j->lock, tmp, &e);
    if (st == DT_OK) st = dt_derive_run(j->results, &e);
    if (st == DT_OK) st = dt_outputs_write(j->results, tmp, &e);
    if (st != DT_OK) {
        dt_runlock_release(&j->lock);
        remove_tree(tmp);
        return bad("--output %s: cannot write the run's first results (nothing was left "
                   "behind): %s", out, e.msg);
    }
    int rn = renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE);
    struct stat sb;
    if (rn != 0 && (errno == EINVAL || errno == ENOSYS)) /* no RENAME_NOREPLACE here */
        rn = lstat(out, &sb) == 0 ? (errno = EEXIST, -1) : rename(tmp, out);
    if (rn != 0) {
        int err = errno;
        dt_runlock_release(&j->lock);
        remove_tree(tmp);
        return bad("--output: cannot create '%s': %s", out, strerror(err));
    }
    return -1;
}

/* The run itself and its one summary line; returns the exit status. */
static int run_and_summarize(run_job *j) {
    if (!j->a.quiet)
        fprintf(stderr, "dualtime: %d cases x %lld round(s) on %s (%s); results in %s\n",
                j->cfg.plan.count, j->a.rounds, j->session.backend, j->session.backend_choice,
                j->a.output);
    int any_invalid = 0;
    dt_err e;
    if (dt_run_plan(&j->cfg, &j->session, j->results, &any_invalid, &e) != DT_OK) {
        fprintf(stderr, "dualtime: %s\n", e.msg);
        return 1;
    }
    const dt_run_derived *d = &j->results->derived;
    if (!j->a.quiet)
        fprintf(stderr, "dualtime: %s: %s/results.md (assessment: %s)\n",
                any_invalid ? "done with FAILED cases" : "done", j->a.output,
                d->present ? dt_level_name(d->level) : "?");
    print_summary(j);
    return any_invalid ? 1 : 0;
}

/* run --plan: this machine's expansion of the plan's flags must be the plan's cases;
 * the run keeps only this shard's. */
static int shard_select(run_job *j) {
    dt_err e;
    dt_plan mine;
    if (dt_shard_check_cases(j->shard_plan, &j->cfg.plan, &e) != DT_OK ||
        dt_shard_select(j->shard_plan, j->shard_index, &mine, &e) != DT_OK)
        return bad("--plan: %s", e.msg);
    dt_plan_free(&j->cfg.plan);
    j->cfg.plan = mine;
    return -1;
}

/* run --plan: the record names the plan and the shard. */
static void shard_mark(run_job *j) {
    dt_shard_ref *p = &j->results->plan;
    p->present = 1;
    dt_record_set_str(&p->plan_id, j->shard_plan->plan_id);
    p->index = j->shard_index;
    p->count = j->shard_plan->n_shards;
}

/* A start-up step beginning now, for the phase trace (dt_run_config.startup_*). */
static void startup_mark(run_job *j, const char *phase) {
    dt_run_config *cfg = &j->cfg;
    if (cfg->n_startup >= DT_RUN_STARTUP_MAX) return;
    cfg->startup_phase[cfg->n_startup] = phase;
    cfg->startup_ns[cfg->n_startup++] = dt_now_ns();
}

/* Starts the workers, records the run-level facts, runs. */
static int run_job_go(run_job *j) {
    startup_mark(j, "start: main workers");
    int rc = start_run(j);
    if (dt_run_stop_requested() && rc != 0) rc = -1; /* a start cut short: say so instead */
    if (rc >= 0 || (rc = stopped_early()) >= 0) return rc;
    if (j->shard_plan && (rc = shard_select(j)) >= 0) return rc;
    if (j->resume && (rc = check_resume(j)) >= 0) return rc;
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(j->now, sizeof j->now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    j->results = run_record(j);
    if (j->shard_plan) shard_mark(j);
    /* the probe workers device timing will need, started together now rather than one
     * after the other in the first case (nothing is measured yet; session 6) */
    startup_mark(j, "start: probe workers");
    const unsigned probes = j->a.device_timing ? probe_steps(&j->a) : 0;
    if (probes) dt_session_prestart(&j->session, probes);
    /* device ceilings for the report's rooflines: never fatal */
    double cto = j->a.timeout_s < 60 ? j->a.timeout_s : 60;
    startup_mark(j, "start: ceilings");
    dt_ceilings_measure(&j->session, j->session.backend, cto, &j->results->env.ceilings);
    startup_mark(j, "start: clocks, run directory");
    open_clocks(j);
    if (j->resume) {
        if ((rc = merge_resume(j)) >= 0) return rc;
    } else if ((rc = stopped_early()) >= 0 || (rc = create_run_dir(j)) >= 0) {
        return rc; /* only now the output directory, resumable from its first moment */
    }
    fill_config(j);
    return run_and_summarize(j);
}

/* --dry-run: the settings checked as for a run (the output directory is not needed and
 * never created), the workers started for their ids and the backend, then the plan and
 * its estimate on stdout (cli/dt_dryrun.h). Returns the exit status. */
static int dry_run(run_job *j) {
    run_settings *a = &j->a;
    if (!a->output) a->output = "(dry run)";
    int rc = check_run_settings(a, 1);
    if (rc >= 0) return rc;
    int64_t t0 = dt_now_ns();
    if ((rc = start_run(j)) >= 0) return rc;
    dt_dryrun d = {&j->cfg.plan, j->session.backend, j->session.backend_choice,
                   {NULL}, {NULL}, {NULL}, j->session.count, a->samples,
                   a->rounds, a->prime, a->threads, a->sample_ms, a->warmup_ms,
                   a->device_timing, (double)(dt_now_ns() - t0) / 1e9};
    for (int k = 0; k < j->session.count; k++) {
        d.impl_ids[k] = j->session.member[k].id;
        d.impl_roles[k] = j->session.member[k].role;
        d.impl_frameworks[k] = j->session.member[k].hello.framework;
    }
    dt_dryrun_print(stdout, &d);
    return 0;
}

static void run_job_free(run_job *j) {
    dt_impl_specs_free(&j->a.impls);
    dt_record_free(j->results);
    dt_record_free(j->resume);
    dt_clocks_close(j->clocks);
    dt_session_stop(&j->session);
    dt_runlock_release(&j->lock);
    dt_plan_free(&j->cfg.plan);
    free(j);
}

/* resume: NULL for a new run; else the decoded results.json of an interrupted run (taken
 * over) whose recorded command line is being re-parsed (output = the run's directory). */
static int cmd_run(int argc, char **argv, int full_argc, char **full_argv, dt_record *resume,
                   const char *resume_dir) {
    run_job *j = dt_xcalloc(1, sizeof *j);
    j->lock.fd = -1;
    install_signals();
    settings_defaults(&j->a);
    j->full_argc = full_argc;
    j->full_argv = full_argv;
    j->resume = resume;
    int rc = parse_run_args(argc, argv, &j->a);
    if (rc < 0 && resume) j->a.output = resume_dir;
    if (rc < 0 && j->a.dry_run && !resume) rc = dry_run(j);
    if (rc < 0) rc = check_run_settings(&j->a, resume != NULL);
    if (rc < 0) rc = run_job_go(j);
    run_job_free(j);
    return rc;
}

/* --retry-failed: the failed cases leave the record, so the run does them again from
 * scratch (every round) with the same inputs; the valid ones stay as they are. Returns
 * how many were taken out. */
static size_t drop_failed(dt_record *r) {
    size_t n = 0;
    for (size_t i = r->n_cases; i-- > 0;)
        if (!r->cases[i].valid) {
            dt_record_case_remove(r, i);
            n++;
        }
    return n;
}

/* dualtime run --resume DIR [--retry-failed] [--quiet]: finishes an interrupted run with
 * its own recorded command line: finished (case, round) pairs are kept, the others are
 * run again with the same inputs (same seed and shapes). --retry-failed also runs the
 * failed cases again (of a finished run too). The run directory's lock is taken before
 * results.json is read and held to the end. */
static int cmd_resume(int argc, char **argv) {
    const char *dir = NULL;
    int quiet = 0, retry = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "run") == 0 && i == 1) continue;
        if (strcmp(argv[i], "--resume") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strncmp(argv[i], "--resume=", 9) == 0) dir = argv[i] + 9;
        else if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else if (strcmp(argv[i], "--retry-failed") == 0) retry = 1;
        else return bad("--resume takes only a directory (and --retry-failed, --quiet): "
                        "unexpected '%s'", argv[i]);
    }
    if (!dir || !*dir) return bad("--resume: missing DIR");
    struct stat sb;
    if (lstat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return bad("--resume: '%s' is not a run directory", dir);
    dt_err e;
    if (dt_outputs_check(dir, &e) != DT_OK) return bad("--resume: %s", e.msg);
    dt_runlock lock;
    if (dt_runlock_take(&lock, dir, &e) != DT_OK) return bad("--resume: %s", e.msg);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/results.json", dir);
    dt_record *r = NULL;
    if (dt_record_load(path, &r, &e) != DT_OK) {
        dt_runlock_release(&lock);
        return bad("--resume: %s", e.msg);
    }
    if (r->n_devices) { /* its shards are its devices' runs (docs/devices.md) */
        dt_record_free(r);
        dt_runlock_release(&lock);
        return bad("--resume: %s is a --devices run: not resumable; run it again into a new "
                   "folder", dir);
    }
    size_t dropped = retry ? drop_failed(r) : 0;
    if (r->complete && !dropped) {
        dt_record_free(r);
        dt_runlock_release(&lock);
        fprintf(stderr, "dualtime: %s is complete; nothing to resume%s\n", dir,
                retry ? " (no failed case)" : "");
        return 0;
    }
    /* the recorded command line, re-parsed (its own "run" word dropped) */
    const dt_strv *cl = &r->command_line;
    size_t start = cl->n > 1 && strcmp(cl->v[1], "run") == 0 ? 2 : 1;
    char **args = dt_xcalloc(cl->n + 3, sizeof *args);
    int na = 0;
    args[na++] = "run";
    for (size_t i = start; i < cl->n; i++) args[na++] = cl->v[i];
    if (quiet) args[na++] = "--quiet";
    if (!quiet && dropped)
        fprintf(stderr, "dualtime: resuming %s: %zu failed case(s) run again\n", dir, dropped);
    else if (!quiet)
        fprintf(stderr, "dualtime: resuming %s\n", dir);
    /* args point into r's command line: the run takes r over but frees it only at its end */
    int rc = cmd_run(na, args, na, args, r, dir);
    free(args);
    dt_runlock_release(&lock);
    return rc;
}

/* ---- plan, run --plan (docs/sharding.md; merge is dt_shard_cli.c) ---------------------- */

/* The plan's settings from the parsed run flags. */
static void plan_settings(const run_settings *a, dt_plan_settings *s) {
    s->backend = dt_xstrdup(a->backend);
    s->operations = a->operations ? dt_xstrdup(a->operations) : NULL;
    s->samples = a->samples;
    s->rounds = a->rounds;
    s->seed = a->seed;
    s->threads = a->threads;
    s->prime = a->prime;
    s->sample_ms = a->sample_ms;
    s->warmup_ms = a->warmup_ms;
    s->timeout_s = a->timeout_s;
    s->quick = a->quick;
    s->input_views = a->views;
    s->device_timing = a->device_timing;
    s->capture_sources = a->capture_sources;
    static const char *const k_plan_kinds[] = {"concurrent", "serialized", "auto"};
    s->probe_kind = dt_xstrdup(k_plan_kinds[a->probe_kind]);
    s->candidate_cmd = a->candidate_cmd ? dt_xstrdup(a->candidate_cmd) : NULL;
    s->baseline_cmd = a->baseline_cmd ? dt_xstrdup(a->baseline_cmd) : NULL;
    s->python = a->python ? dt_xstrdup(a->python) : NULL;
}

/* dualtime plan --shards N --output DIR [run options]: the run's cases, without starting
 * a worker (so the backend must be given), split into N shards in DIR/plan.json. */
static int cmd_plan(int argc, char **argv) {
    int n_shards = 0, n_rest = 0;
    char **rest = NULL;
    int rc = dt_shard_cli_plan_args(argc, argv, &n_shards, &rest, &n_rest);
    if (rc >= 0) return rc;
    run_settings a;
    settings_defaults(&a);
    rc = parse_run_args(n_rest, rest, &a);
    if (rc < 0) rc = check_run_settings(&a, 1);
    if (rc < 0 && !a.backend)
        rc = bad("plan: --backends cpu or --backends cuda is required (a plan fixes the backend)");
    if (rc < 0 && (a.graph || a.cache_cold)) /* never dropped silently */
        rc = bad("plan: %s is not carried by plan files yet; run it without a plan",
                 a.graph ? "--graph" : "--cache cold");
    dt_plan_doc doc = {0};
    if (rc < 0) {
        apply_backend_defaults(&a, a.backend);
        if (!a.row_shapes) dt_shapes_default(a.backend, a.quick, 0, &a.rows);
        if (!a.gemm_shapes) dt_shapes_default(a.backend, a.quick, 1, &a.gemms);
        dt_plan_build_typed(&doc.cases, a.ops, &a.rows, &a.gemms, a.views, a.dtypes, a.ndtypes);
        plan_settings(&a, &doc.settings);
        char exe_dir[PATH_MAX], repo[PATH_MAX + 4];
        dt_tool t = {0};
        if (dt_exe_dir(exe_dir, sizeof exe_dir) == 0) {
            snprintf(repo, sizeof repo, "%s/..", exe_dir);
            dt_git_info(repo, DT_GIT_REV_BUILD, &t);
        }
        rc = dt_shard_cli_plan_write(&doc, n_shards, n_rest, rest, a.output,
                                     t.git_revision ? t.git_revision : DT_GIT_REV_BUILD);
        free(t.git_revision);
        free(t.git_source);
    }
    dt_plan_doc_free(&doc);
    dt_impl_specs_free(&a.impls);
    free(rest);
    return rc;
}

/* dualtime run --plan FILE --shard I/N --output DIR: one shard of a plan, with the
 * plan's flags (argv after "run"). */
static int cmd_run_plan(int argc, char **argv, int full_argc, char **full_argv) {
    dt_shard_run sr;
    int rc = dt_shard_cli_run_args(argc, argv, &sr);
    if (rc >= 0) return rc;
    run_job *j = dt_xcalloc(1, sizeof *j);
    j->lock.fd = -1;
    install_signals(); /* a stopped shard keeps what it has, as any run */
    settings_defaults(&j->a);
    j->full_argc = full_argc;
    j->full_argv = full_argv;
    j->shard_plan = &sr.doc;
    j->shard_index = sr.index;
    rc = parse_run_args(sr.argc, sr.argv, &j->a);
    if (rc < 0) rc = check_run_settings(&j->a, 0);
    if (rc < 0) rc = run_job_go(j);
    run_job_free(j);
    dt_shard_cli_run_free(&sr);
    return rc;
}

/* 1 when argv[1..] holds flag ("--plan" or "--plan=..."). */
static int has_flag(int argc, char **argv, const char *flag) {
    size_t n = strlen(flag);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], flag, n) == 0 && (argv[i][n] == 0 || argv[i][n] == '=')) return 1;
    return 0;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    atexit(dt_spawn_kill_groups); /* workers never outlive dualtime, whatever the exit */
    if (argc < 2) {
        fputs(k_usage, stderr);
        return EXIT_BAD;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(k_usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("dualtime %s (%s)\n", DT_VERSION, DT_GIT_REV_BUILD);
        return 0;
    }
    if (dt_help_wanted(argc - 1, argv + 1) && dt_help_print(stdout, cmd, k_usage) == 0) return 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--resume") == 0 || strncmp(argv[i], "--resume=", 9) == 0)
            return cmd_resume(argc, argv);
    if (strcmp(cmd, "run") == 0 && dt_devices_cli_wanted(argc - 2, argv + 2))
        return dt_devices_cli_run(argc - 2, argv + 2, argc, argv);
    if (cmd[0] == '-' && dt_devices_cli_wanted(argc - 1, argv + 1))
        return dt_devices_cli_run(argc - 1, argv + 1, argc, argv);
    if (strcmp(cmd, "run") == 0 && has_flag(argc, argv, "--plan"))
        return cmd_run_plan(argc - 2, argv + 2, argc, argv);
    if (strcmp(cmd, "plan") == 0) return cmd_plan(argc - 2, argv + 2);
    if (strcmp(cmd, "merge") == 0) return dt_shard_cli_merge(argc - 2, argv + 2, argc, argv);
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1, argc, argv, NULL, NULL);
    if (cmd[0] == '-') /* seed style: flags only */
        return cmd_run(argc, argv, argc, argv, NULL, NULL);
    if (strcmp(cmd, "report") == 0) return cmd_report(argc - 2, argv + 2);
    if (strcmp(cmd, "compare") == 0) return cmd_compare(argc - 2, argv + 2);
    if (strcmp(cmd, "list") == 0) return cmd_list(argc - 2, argv + 2);
    if (strcmp(cmd, "doctor") == 0) return dt_doctor_main(argc - 2, argv + 2);
    return bad("unknown command '%s' (run, report, compare, list, doctor; see dualtime --help)", cmd);
}
