/* dt_main.c — the dualtime command line: the only place that prints results for a
 * person and chooses exit codes (0 all cases valid, 1 a case failed, 2 bad arguments or
 * environment). `run` is: arguments into run_settings, the session (workers and backend,
 * session/dt_session.h), the run-level record, the run loop (orchestrate/dt_run.h,
 * which writes the outputs), one summary line. No framework is named here beyond the
 * build's file list: ids come from the workers' hellos.
 *
 *   dualtime run --output DIR [options]     benchmark (also: dualtime --output DIR ...)
 *   dualtime report DIR/results.json        results.md and plots again from the raw JSON
 *   dualtime compare A/results.json B/results.json [--threshold 0.05]
 *   dualtime list [--json]                  ops, definitions, tolerances, default shapes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/dt_doctor.h"
#include "cli/dt_sys.h"
#include "common/dt_affinity.h"
#include "common/dt_common.h"
#include "data/dt_shm.h"
#include "format/dt_format_compare.h"
#include "format/dt_outputs.h"
#include "orchestrate/dt_ceilings.h"
#include "orchestrate/dt_clocks.h"
#include "orchestrate/dt_run.h"
#include "plan/dt_ops.h"
#include "session/dt_ops_json.h"
#include "plan/dt_plan.h"
#include "record/dt_record_json.h"
#include "session/dt_protocol.h"
#include "session/dt_session.h"
#include "session/dt_worker.h"
#include "stats/dt_compare_runs.h"
#include "stats/dt_derive.h"

#ifndef DT_GIT_REV_BUILD
#define DT_GIT_REV_BUILD "unknown"
#endif

#define EXIT_BAD 2

static const char *k_usage =
    "usage: dualtime run --output DIR [options]\n"
    "       dualtime run --resume DIR            finish an interrupted run\n"
    "       dualtime report RESULTS.json [--output results.md]\n"
    "       dualtime compare A/results.json B/results.json [--threshold 0.05]\n"
    "       dualtime list [--json]             ops, definitions, tolerances, default shapes\n"
    "       dualtime doctor                    what this machine can run, and the fix if not\n"
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
    "  --sample-ms MS          target duration of one batch sample (default 20)\n"
    "  --warmup-ms MS          warmup per framework and case (default 150)\n"
    "  --prime N               untimed calls right before every timed sample, in the same\n"
    "                          request (default 1, 0..16; docs/protocol.md, Priming)\n"
    "  --rounds N              repeat the plan, order rotated and reversed (default: 2 on\n"
    "                          cuda, 1 on cpu)\n"
    "  --seed N                input seed (default 1)\n"
    "  --threads N             CPU threads of both frameworks (default min(8, cores))\n"
    "  --timeout S             seconds a worker may take for one request (default 180)\n"
    "  --device-timing         the device scopes (held control, CUPTI probe, dispatch):\n"
    "                          on by default on cuda; an error on cpu\n"
    "  --no-device-timing      host scopes only\n"
    "  --probe-kind KIND       auto (default: a pilot per case picks the less perturbing),\n"
    "                          concurrent or serialized CUPTI kernel records\n"
    "  --no-pin                do not pin the orchestrator and workers to their own CPUs\n"
    "  --capture-sources       keep every run-time compiled source in DIR/sources\n"
    "  --python PATH           interpreter of the PyTorch worker (default: DUALTIME_PYTHON,\n"
    "                          else the first of python3 on PATH and /usr/bin/python3\n"
    "                          that can import torch)\n"
    "  --candidate-worker CMD  command of the candidate worker (default: native worker)\n"
    "  --baseline-worker CMD   command of the baseline worker (default: PyTorch worker)\n"
    "  --quiet                 no progress line\n"
    "\n"
    "exit status: 0 every case valid, 1 a case failed, 2 bad arguments or environment.\n";

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("dualtime: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_BAD;
}

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
    const char *backends[] = {"cpu", "cuda"};
    for (int b = 0; b < 2; b++) {
        for (int g = 0; g < 2; g++) {
            dt_shape_list sl;
            dt_shapes_default(backends[b], 0, g, &sl);
            printf("\ndefault %s shapes (%s):", g ? "gemm" : "row", backends[b]);
            for (int i = 0; i < sl.count; i++) {
                char s[64];
                dt_shape_format(&sl.s[i], s, sizeof s);
                printf(" %s", s);
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

static int cmd_report(int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--output") == 0 && i + 1 < argc) out = argv[++i];
        else if (strcmp(argv[i], "--help") == 0) return fputs(k_usage, stdout), 0;
        else if (argv[i][0] == '-') return bad("report: unknown option '%s'", argv[i]);
        else if (!in) in = argv[i];
        else return bad("report: unexpected argument '%s'", argv[i]);
    }
    if (!in) return bad("report: missing RESULTS.json");
    char md[PATH_MAX];
    if (!out) {
        snprintf(md, sizeof md, "%s", in);
        char *slash = strrchr(md, '/');
        if (slash) snprintf(slash + 1, sizeof md - (size_t)(slash + 1 - md), "results.md");
        else snprintf(md, sizeof md, "results.md");
        out = md;
    }
    /* load, derive, write results.md and its plots; the input is never rewritten */
    dt_err e;
    dt_record *r = NULL;
    dt_status st = dt_record_load(in, &r, &e);
    if (st == DT_OK) st = dt_derive_run(r, &e);
    if (st == DT_OK) st = dt_outputs_write_report(r, out, &e);
    dt_record_free(r);
    if (st != DT_OK) return bad("report: %s", e.msg);
    fprintf(stderr, "dualtime: wrote %s\n", out);
    return 0;
}

static int cmd_compare(int argc, char **argv) {
    const char *a = NULL, *b = NULL;
    double threshold = 0.05;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--threshold") == 0 && i + 1 < argc) {
            if (parse_double("--threshold", argv[++i], 0.0, 10.0, &threshold)) return EXIT_BAD;
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
    if (st == DT_OK) st = dt_compare_runs(ra, rb, threshold, &res, &e);
    if (st == DT_OK) st = dt_format_compare_md(res, &text, &len, &e);
    int regression = st == DT_OK && dt_compare_result_regression(res);
    if (st == DT_OK) fwrite(text, 1, len, stdout);
    free(text);
    dt_compare_result_free(res);
    dt_record_free(ra);
    dt_record_free(rb);
    if (st != DT_OK) return bad("compare: %s", e.msg);
    return regression ? 1 : 0;
}

/* ---- run -------------------------------------------------------------------------------- */

/* The run's command line, parsed and checked. */
typedef struct run_settings {
    const char *output, *backends, *operations, *row_shapes, *gemm_shapes, *python;
    const char *candidate_cmd, *baseline_cmd;
    long long samples, rounds, seed, threads, prime;
    double sample_ms, warmup_ms, timeout_s;
    int quick, views, device_timing, capture_sources, quiet, probe_kind;
    int no_pin;            /* --no-pin */
    /* device_timing, samples and rounds are -1 until given: their defaults depend on the
     * backend (apply_backend_defaults) */
    const char *backend;   /* --backends checked: "cpu", "cuda" or NULL (automatic) */
    int ops[DT_OP_COUNT];  /* selected operations */
    dt_shape_list rows, gemms;
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
    a->sample_ms = 20;
    a->warmup_ms = 150;
    a->prime = 1;
    a->timeout_s = 180;
}

enum { O_OUT = 1000, O_BACK, O_OPS, O_ROWS, O_GEMM, O_VIEWS, O_SAMPLES, O_SMS, O_WMS, O_CAP,
       O_QUICK, O_THREADS, O_TIMEOUT, O_SEED, O_ROUNDS, O_DEV, O_PROBE, O_PY, O_CAND, O_BASE,
       O_QUIET, O_PRIME, O_HELP, O_NODEV, O_NOPIN };

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
        case O_SEED: case O_ROUNDS:
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
        case O_QUIET: a->quiet = 1; break;
        case O_HELP: fputs(k_usage, stdout); return 0;
        default:
            if (optopt) return bad("option '%s' needs a value", argv[optind - 1]);
            return bad("unknown option '%s' (see dualtime --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) return bad("unexpected argument '%s'", argv[optind]);
    return -1;
}

/* Checks the parsed settings that need no worker: output, operations, shapes, backend.
 * Returns -1 to go on, else EXIT_BAD (message printed). */
static int check_run_settings(run_settings *a, int resuming) {
    if (!a->output) return bad("--output DIR is required (a new directory for the results)");
    if (!a->output[0]) return bad("--output: empty path");
    struct stat st;
    if (!resuming && stat(a->output, &st) == 0)
        return bad("--output: '%s' already exists; dualtime never overwrites results "
                   "(to finish an interrupted run: dualtime run --resume %s)", a->output, a->output);
    dt_err e;
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
    return -1;
}

/* Defaults that depend on the backend (docs/device-workflow.md, "Defaults on cuda"):
 * cuda: device timing on, 2 rounds (the assessment needs >= 2 for comparative) and 9
 * samples; cpu: no device timing, 1 round, 9 samples. Given flags win. */
static void apply_backend_defaults(run_settings *a, const char *backend) {
    int cuda = strcmp(backend, "cuda") == 0;
    if (a->device_timing < 0) a->device_timing = cuda;
    if (a->rounds < 0) a->rounds = cuda ? 2 : 1;
    if (a->samples < 0) a->samples = 9;
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
        dt_affinity_plan_here(DT_SESSION_IMPLS, (int)j->a.threads, cpu, &j->pin);
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

/* Starts the workers and builds the plan for the backend they settle on. */
static int start_run(run_job *j) {
    run_settings *a = &j->a;
    if (dt_exe_dir(j->exe_dir, sizeof j->exe_dir) != 0)
        return bad("cannot locate the dualtime binary");
    dt_shm_sweep_stale();
    plan_pinning(j);
    dt_session_settings ss = {j->exe_dir, a->python, a->candidate_cmd, a->baseline_cmd,
                              a->backend, (int)a->threads, a->timeout_s,
                              {j->pin.pinned ? j->pin.worker[0] : NULL,
                               j->pin.pinned ? j->pin.worker[1] : NULL}};
    dt_err e;
    if (dt_session_start(&j->session, &ss, &e) != DT_OK) return bad("%s", e.msg);
    const char *backend = j->session.backend;
    if (a->device_timing == 1 && strcmp(backend, "cuda") != 0)
        return bad("--device-timing needs the cuda backend, and this run uses %s (%s)", backend,
                   j->session.backend_choice);
    apply_backend_defaults(a, backend);
    if (!a->row_shapes) dt_shapes_default(backend, a->quick, 0, &a->rows);
    if (!a->gemm_shapes) dt_shapes_default(backend, a->quick, 1, &a->gemms);
    dt_plan_build(&j->cfg.plan, a->ops, &a->rows, &a->gemms, a->views);
    if (j->cfg.plan.count == 0) return bad("nothing to run: the selected operations have no shapes");
    return -1;
}

/* A resumed run must be the same comparison on the same backend. */
static int check_resume(run_job *j) {
    const char *backend = j->session.backend;
    const char *was = j->resume->settings.backend;
    if (!was || strcmp(was, backend) != 0)
        return bad("--resume: the run used backend %s, this machine chose %s", was ? was : "?",
                   backend);
    /* the record keeps the baseline first; the session the candidate first */
    const dt_record *r = j->resume;
    const char *r0 = r->n_impls == 2 ? r->impls[1].id : NULL;
    const char *r1 = r->n_impls == 2 ? r->impls[0].id : NULL;
    const char *id0 = j->session.member[0].id, *id1 = j->session.member[1].id;
    if (!r0 || !r1 || strcmp(r0, id0) != 0 || strcmp(r1, id1) != 0)
        return bad("--resume: the run compared %s with %s, the workers here are %s and %s",
                   r0 ? r0 : "?", r1 ? r1 : "?", id0, id1);
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

/* The implementations: the record keeps the baseline first, then the candidate. */
static void add_impls(const run_job *j, dt_record *r) {
    for (int k = DT_SESSION_IMPLS - 1; k >= 0; k--) {
        const dt_session_member *m = &j->session.member[k];
        dt_impl *im = dt_record_impl_add(r, m->id, k == 1 ? DT_ROLE_BASELINE : DT_ROLE_CANDIDATE);
        dt_record_set_str(&im->framework, m->hello.framework);
        dt_record_set_str(&im->framework_version, m->hello.framework_version);
        const dt_worker *w = &m->worker[DT_STEP_MAIN];
        for (int i = 0; w->argv[i]; i++) dt_strv_push(&im->command, w->argv[i]);
        dt_record_set_str(&im->hello_json, m->hello.text);
        if (m->cpus[0]) dt_record_set_str(&im->cpus, m->cpus);
    }
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
    const dt_hello *h0 = &j->session.member[0].hello;
    if (strcmp(j->session.backend, "cuda") == 0 && h0->cuda_info_json) {
        /* the candidate's description of the device */
        dt_record_set_str(&r->env.gpu_json, h0->cuda_info_json);
        dt_record_set_str(&r->env.gpu_name, h0->cuda_name);
    }
    dt_record_set_str(&r->env.python, j->session.python);
    if (j->orch_cpus[0]) dt_record_set_str(&r->env.orchestrator_cpus, j->orch_cpus);
    add_files(r, j->exe_dir);
    return r;
}

/* GPU clocks through NVML (dlopen; absent NVML is recorded, not fatal). NVML's index is
 * not CUDA's ordinal in general: the PCI bus must match the worker's device. */
static void open_clocks(run_job *j) {
    if (strcmp(j->session.backend, "cuda") != 0) return;
    const char *dev_env = getenv("DUALTIME_CUDA_DEVICE");
    int dev_index = dev_env && *dev_env ? atoi(dev_env) : 0;
    char why[DT_ERR_LEN];
    dt_nvml *nvml = &j->results->env.nvml;
    nvml->present = 1;
    j->clocks = dt_clocks_open(dev_index, why, sizeof why);
    if (j->clocks) {
        dt_clocks_describe(j->clocks, nvml);
        int64_t cuda_bus = j->session.member[0].hello.cuda_pci_bus;
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
    cfg->fw_ids[0] = j->session.member[0].id;
    cfg->fw_ids[1] = j->session.member[1].id;
    cfg->clocks = j->clocks;
}

/* The run itself and its one summary line; returns the exit status. */
static int run_and_summarize(run_job *j) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = dt_run_request_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
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
    return any_invalid ? 1 : 0;
}

/* Starts the workers, records the run-level facts, runs. */
static int run_job_go(run_job *j) {
    int rc = start_run(j);
    if (rc >= 0) return rc;
    if (j->resume && (rc = check_resume(j)) >= 0) return rc;
    /* only now create the output directory */
    if (!j->resume && mkdir(j->a.output, 0755) != 0)
        return bad("--output: cannot create '%s': %s", j->a.output, strerror(errno));
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(j->now, sizeof j->now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    j->results = run_record(j);
    /* device ceilings for the report's rooflines: never fatal */
    double cto = j->a.timeout_s < 60 ? j->a.timeout_s : 60;
    dt_ceilings_measure(&j->session, j->session.backend, cto, &j->results->env.ceilings);
    open_clocks(j);
    if (j->resume && (rc = merge_resume(j)) >= 0) return rc;
    fill_config(j);
    return run_and_summarize(j);
}

/* resume: NULL for a new run; else the decoded results.json of an interrupted run (taken
 * over) whose recorded command line is being re-parsed (output = the run's directory). */
static int cmd_run(int argc, char **argv, int full_argc, char **full_argv, dt_record *resume,
                   const char *resume_dir) {
    run_job *j = dt_xcalloc(1, sizeof *j);
    settings_defaults(&j->a);
    j->full_argc = full_argc;
    j->full_argv = full_argv;
    j->resume = resume;
    int rc = parse_run_args(argc, argv, &j->a);
    if (rc < 0 && resume) j->a.output = resume_dir;
    if (rc < 0) rc = check_run_settings(&j->a, resume != NULL);
    if (rc < 0) rc = run_job_go(j);
    dt_record_free(j->results);
    dt_record_free(j->resume);
    dt_clocks_close(j->clocks);
    dt_session_stop(&j->session);
    dt_plan_free(&j->cfg.plan);
    free(j);
    return rc;
}

/* dualtime run --resume DIR [--quiet]: finishes an interrupted run with its own recorded
 * command line: finished (case, round) pairs are kept, the others are run again with the
 * same inputs (same seed and shapes). */
static int cmd_resume(int argc, char **argv) {
    const char *dir = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "run") == 0 && i == 1) continue;
        if (strcmp(argv[i], "--resume") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strncmp(argv[i], "--resume=", 9) == 0) dir = argv[i] + 9;
        else if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else return bad("--resume takes only a directory (and --quiet): unexpected '%s'", argv[i]);
    }
    if (!dir || !*dir) return bad("--resume: missing DIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/results.json", dir);
    dt_err e;
    dt_record *r = NULL;
    if (dt_record_load(path, &r, &e) != DT_OK) return bad("--resume: %s", e.msg);
    if (r->complete) {
        dt_record_free(r);
        fprintf(stderr, "dualtime: %s is complete; nothing to resume\n", dir);
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
    if (!quiet) fprintf(stderr, "dualtime: resuming %s\n", dir);
    /* args point into r's command line: the run takes r over but frees it only at its end */
    int rc = cmd_run(na, args, na, args, r, dir);
    free(args);
    return rc;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
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
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--resume") == 0 || strncmp(argv[i], "--resume=", 9) == 0)
            return cmd_resume(argc, argv);
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1, argc, argv, NULL, NULL);
    if (cmd[0] == '-') /* seed style: flags only */
        return cmd_run(argc, argv, argc, argv, NULL, NULL);
    if (strcmp(cmd, "report") == 0) return cmd_report(argc - 2, argv + 2);
    if (strcmp(cmd, "compare") == 0) return cmd_compare(argc - 2, argv + 2);
    if (strcmp(cmd, "list") == 0) return cmd_list(argc - 2, argv + 2);
    if (strcmp(cmd, "doctor") == 0) return dt_doctor_main(argc - 2, argv + 2);
    return bad("unknown command '%s' (run, report, compare, list, doctor; see dualtime --help)", cmd);
}
