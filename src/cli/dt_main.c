/* dt_main.c — the dualtime command line: the only place that prints results for a
 * person and chooses exit codes (0 all cases valid, 1 a case failed, 2 bad arguments or
 * environment).
 *
 *   dualtime run --output DIR [options]     benchmark (also: dualtime --output DIR ...)
 *   dualtime report DIR/results.json        regenerate results.md from the raw JSON
 *   dualtime compare A/results.json B/results.json [--threshold 0.05]
 *   dualtime list [--json]                  ops, definitions, tolerances, default shapes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/dt_doctor.h"
#include "cli/dt_sys.h"
#include "common/dt_common.h"
#include "data/dt_shm.h"
#include "orchestrate/dt_clocks.h"
#include "orchestrate/dt_ceilings.h"
#include "orchestrate/dt_run.h"
#include "orchestrate/dt_worker.h"
#include "plan/dt_ops.h"
#include "plan/dt_ops_json.h"
#include "plan/dt_plan.h"
#include "report/dt_compare.h"
#include "report/dt_results_io.h"

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
    "  --rounds N              repeat the plan, order rotated and reversed (default 1)\n"
    "  --seed N                input seed (default 1)\n"
    "  --threads N             CPU threads of both frameworks (default min(8, cores))\n"
    "  --timeout S             seconds a worker may take for one request (default 180)\n"
    "  --device-timing         add the device scopes (CUDA: stream control, CUPTI probe)\n"
    "  --probe-kind KIND       concurrent or serialized CUPTI kernel records\n"
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

/* Splits a worker command on spaces into argv (no shell, no quoting). */
static int split_cmd(const char *flag, const char *text, char **argv, int max) {
    char *copy = dt_xstrdup(text);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (n == max) {
            free(copy);
            return bad("%s: too many words in '%s'", flag, text), -1;
        }
        argv[n++] = dt_xstrdup(t);
    }
    free(copy);
    argv[n] = NULL;
    if (n == 0) return bad("%s: empty command", flag), -1;
    char path[PATH_MAX];
    if (dt_which(argv[0], path, sizeof path) != 0)
        return bad("%s: '%s' is not an executable program", flag, argv[0]), -1;
    free(argv[0]);
    argv[0] = dt_xstrdup(path);
    return n;
}

/* `dualtime list --json`: the registry as one JSON document (src/plan/dt_ops_json.h). */
static int list_json(void) {
    json_t *doc = dt_ops_list_json();
    /* 15 digits: the tolerances are short decimal literals, printed as written */
    int rc = json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER |
                                         JSON_REAL_PRECISION(15)) == 0 ? 0 : 1;
    json_decref(doc);
    putchar('\n');
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
    dt_err e;
    if (dt_report_regenerate(in, out, &e) != DT_OK) return bad("report: %s", e.msg);
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
    json_t *ja = NULL, *jb = NULL;
    if (dt_results_load(a, &ja, &e) != DT_OK) return bad("compare: %s", e.msg);
    if (dt_results_load(b, &jb, &e) != DT_OK) {
        json_decref(ja);
        return bad("compare: %s", e.msg);
    }
    int regression = 0;
    dt_status st = dt_compare(ja, jb, threshold, stdout, &regression, &e);
    json_decref(ja);
    json_decref(jb);
    if (st != DT_OK) return bad("compare: %s", e.msg);
    return regression ? 1 : 0;
}

/* ---- run -------------------------------------------------------------------------------- */

typedef struct run_args {
    const char *output, *backends, *operations, *row_shapes, *gemm_shapes, *python;
    const char *candidate_cmd, *baseline_cmd;
    long long samples, rounds, seed, threads, prime;
    double sample_ms, warmup_ms, timeout_s;
    int quick, views, device_timing, capture_sources, quiet, probe_kind;
} run_args;

/* Starts the baseline (PyTorch) worker with the first interpreter whose hello works. */
static int start_torch_worker(const run_args *a, const char *exe_dir, dt_worker *w,
                              json_t **hello, char *python_used, size_t plen) {
    char script[PATH_MAX + 32];
    snprintf(script, sizeof script, "%s/dualtime_torch_worker.py", exe_dir);
    if (access(script, R_OK) != 0)
        return bad("the PyTorch worker %s is missing (rebuild dualtime)", script);
    const char *cands[4];
    int nc = 0;
    if (a->python) cands[nc++] = a->python;
    else if (getenv("DUALTIME_PYTHON")) cands[nc++] = getenv("DUALTIME_PYTHON");
    else {
        cands[nc++] = "python3";
        cands[nc++] = "/usr/bin/python3";
    }
    char threads[32];
    snprintf(threads, sizeof threads, "%lld", a->threads);
    char last[DT_ERR_LEN] = "no python3 found";
    char tried[1024] = "";
    for (int i = 0; i < nc; i++) {
        char path[PATH_MAX];
        if (dt_which(cands[i], path, sizeof path) != 0) {
            if (a->python) return bad("--python: '%s' is not an executable program", a->python);
            continue;
        }
        if (strstr(tried, path)) continue;
        strncat(tried, path, sizeof tried - strlen(tried) - 2);
        strcat(tried, " ");
        char *argv[] = {path, script, "--threads", threads, NULL};
        dt_worker_init(w, argv);
        dt_err e;
        if (dt_worker_start_hello(w, a->timeout_s, hello, &e) == DT_OK) {
            snprintf(python_used, plen, "%s", path);
            return 0;
        }
        snprintf(last, sizeof last, "%s", e.msg);
        dt_worker_free(w);
    }
    return bad("no usable PyTorch worker (tried %s): %s", tried, last);
}

static json_t *settings_json(const run_args *a, const char *backend, const char *choice,
                             const int ops[DT_OP_COUNT]) {
    json_t *opl = json_array();
    for (int i = 0; i < DT_OP_COUNT; i++)
        if (ops[i]) json_array_append_new(opl, json_string(dt_op_get((dt_op)i)->name));
    return json_pack(
        "{s:s,s:s,s:o,s:I,s:f,s:f,s:I,s:I,s:I,s:b,s:I,s:f,s:b,s:b,s:s,s:b,s:I,s:I,s:{s:I,s:I}}",
        "backend", backend, "backend_choice", choice, "operations", opl, "samples",
        (json_int_t)a->samples, "sample_ms", a->sample_ms, "warmup_ms", a->warmup_ms, "prime",
        (json_int_t)a->prime, "rounds",
        (json_int_t)a->rounds, "seed", (json_int_t)a->seed, "input_views", a->views, "threads",
        (json_int_t)a->threads, "timeout_s", a->timeout_s, "quick", a->quick, "device_timing",
        a->device_timing, "probe_kind", a->probe_kind ? "serialized" : "concurrent",
        "capture_sources", a->capture_sources, "max_reps", (json_int_t)100000,
        "device_reps_cap", (json_int_t)64, "bootstrap", "resamples", (json_int_t)2000, "seed",
        (json_int_t)20261130);
}

static void add_file(json_t *files, const char *what, const char *path) {
    char hex[65];
    if (dt_file_sha256(path, hex) == 0)
        json_array_append_new(files, json_pack("{s:s,s:s,s:s}", "what", what, "path", path,
                                               "sha256", hex));
}

/* resume: NULL for a new run; else the loaded results.json of an interrupted run whose
 * recorded command line is being re-parsed (output = the run's directory). */
static int cmd_run(int argc, char **argv, int full_argc, char **full_argv, json_t *resume,
                   const char *resume_dir) {
    run_args a = {0};
    a.samples = 9;
    a.rounds = 1;
    a.seed = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    a.threads = ncpu > 8 ? 8 : (ncpu > 0 ? ncpu : 1);
    a.sample_ms = 20;
    a.warmup_ms = 150;
    a.prime = 1;
    a.timeout_s = 180;
    enum { O_OUT = 1000, O_BACK, O_OPS, O_ROWS, O_GEMM, O_VIEWS, O_SAMPLES, O_SMS, O_WMS,
           O_CAP, O_QUICK, O_THREADS, O_TIMEOUT, O_SEED, O_ROUNDS, O_DEV, O_PROBE, O_PY,
           O_CAND, O_BASE, O_QUIET, O_PRIME, O_HELP };
    static const struct option opts[] = {
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
        {0, 0, 0, 0}};
    opterr = 0;
    optind = 1;
    int c;
    long long v;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_OUT: a.output = optarg; break;
        case O_BACK: a.backends = optarg; break;
        case O_OPS: a.operations = optarg; break;
        case O_ROWS: a.row_shapes = optarg; break;
        case O_GEMM: a.gemm_shapes = optarg; break;
        case O_VIEWS: a.views = 1; break;
        case O_SAMPLES:
            if (parse_long("--samples", optarg, 1, 1001, &a.samples)) return EXIT_BAD;
            break;
        case O_SMS:
            if (parse_double("--sample-ms", optarg, 0.001, 60000, &a.sample_ms)) return EXIT_BAD;
            break;
        case O_WMS:
            if (parse_double("--warmup-ms", optarg, 0, 600000, &a.warmup_ms)) return EXIT_BAD;
            break;
        case O_PRIME:
            if (parse_long("--prime", optarg, 0, 16, &a.prime)) return EXIT_BAD;
            break;
        case O_CAP: a.capture_sources = 1; break;
        case O_QUICK: a.quick = 1; break;
        case O_THREADS:
            if (parse_long("--threads", optarg, 1, 1024, &a.threads)) return EXIT_BAD;
            break;
        case O_TIMEOUT:
            if (parse_double("--timeout", optarg, 0.1, 86400, &a.timeout_s)) return EXIT_BAD;
            break;
        case O_SEED:
            if (parse_long("--seed", optarg, 0, LLONG_MAX, &a.seed)) return EXIT_BAD;
            break;
        case O_ROUNDS:
            if (parse_long("--rounds", optarg, 1, 1000, &v)) return EXIT_BAD;
            a.rounds = v;
            break;
        case O_DEV: a.device_timing = 1; break;
        case O_PROBE:
            if (strcmp(optarg, "concurrent") == 0) a.probe_kind = 0;
            else if (strcmp(optarg, "serialized") == 0) a.probe_kind = 1;
            else return bad("--probe-kind: '%s' is not concurrent or serialized", optarg);
            break;
        case O_PY: a.python = optarg; break;
        case O_CAND: a.candidate_cmd = optarg; break;
        case O_BASE: a.baseline_cmd = optarg; break;
        case O_QUIET: a.quiet = 1; break;
        case O_HELP: fputs(k_usage, stdout); return 0;
        default:
            if (optopt) return bad("option '%s' needs a value", argv[optind - 1]);
            return bad("unknown option '%s' (see dualtime --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) return bad("unexpected argument '%s'", argv[optind]);
    if (resume) a.output = resume_dir;
    if (!a.output) return bad("--output DIR is required (a new directory for the results)");
    if (!a.output[0]) return bad("--output: empty path");
    struct stat st;
    if (!resume && stat(a.output, &st) == 0)
        return bad("--output: '%s' already exists; dualtime never overwrites results "
                   "(to finish an interrupted run: dualtime run --resume %s)", a.output, a.output);

    int ops[DT_OP_COUNT];
    dt_err e;
    if (a.operations) {
        if (dt_ops_parse(a.operations, ops, &e) != DT_OK) return bad("%s", e.msg);
    } else {
        for (int i = 0; i < DT_OP_COUNT; i++) ops[i] = 1;
    }
    dt_shape_list rows, gemms;
    if (a.row_shapes && dt_shapes_parse(a.row_shapes, 0, "--row-shapes", &rows, &e) != DT_OK)
        return bad("%s", e.msg);
    if (a.gemm_shapes && dt_shapes_parse(a.gemm_shapes, 1, "--gemm-shapes", &gemms, &e) != DT_OK)
        return bad("%s", e.msg);
    const char *backend = NULL;
    if (a.backends) {
        if (strcmp(a.backends, "cpu") == 0 || strcmp(a.backends, "cuda") == 0)
            backend = a.backends;
        else if (strchr(a.backends, ','))
            return bad("--backends: '%s': one backend per run (cpu or cuda); run twice for both",
                       a.backends);
        else
            return bad("--backends: unknown backend '%s' (known: cpu, cuda)", a.backends);
    }
    if (a.device_timing && backend && strcmp(backend, "cpu") == 0)
        return bad("--device-timing: the cpu backend has no device scopes; use --backends cuda");

    char exe_dir[PATH_MAX];
    if (dt_exe_dir(exe_dir, sizeof exe_dir) != 0) return bad("cannot locate the dualtime binary");
    dt_shm_sweep_stale();

    /* workers */
    char threads[32];
    snprintf(threads, sizeof threads, "%lld", a.threads);
    dt_worker wk[2];
    json_t *hello[2] = {NULL, NULL};
    char python_used[PATH_MAX] = "";
    {
        char *argv0[DT_WORKER_MAX_ARGS + 1];
        int n;
        if (a.candidate_cmd) {
            n = split_cmd("--candidate-worker", a.candidate_cmd, argv0, DT_WORKER_MAX_ARGS - 2);
            if (n < 0) return EXIT_BAD;
        } else {
            char p[PATH_MAX + 32];
            snprintf(p, sizeof p, "%s/dualtime-native-worker", exe_dir);
            argv0[0] = dt_xstrdup(p);
            n = 1;
        }
        argv0[n] = dt_xstrdup("--threads");
        argv0[n + 1] = dt_xstrdup(threads);
        argv0[n + 2] = NULL;
        dt_worker_init(&wk[0], argv0);
        for (int i = 0; argv0[i]; i++) free(argv0[i]);
        if (dt_worker_start_hello(&wk[0], a.timeout_s, &hello[0], &e) != DT_OK)
            return bad("candidate worker: %s", e.msg);
    }
    if (a.baseline_cmd) {
        char *argv1[DT_WORKER_MAX_ARGS + 1];
        int n = split_cmd("--baseline-worker", a.baseline_cmd, argv1, DT_WORKER_MAX_ARGS - 2);
        if (n < 0) return EXIT_BAD;
        argv1[n] = dt_xstrdup("--threads");
        argv1[n + 1] = dt_xstrdup(threads);
        argv1[n + 2] = NULL;
        dt_worker_init(&wk[1], argv1);
        for (int i = 0; argv1[i]; i++) free(argv1[i]);
        if (dt_worker_start_hello(&wk[1], a.timeout_s, &hello[1], &e) != DT_OK) {
            dt_worker_free(&wk[0]);
            return bad("baseline worker: %s", e.msg);
        }
    } else if (start_torch_worker(&a, exe_dir, &wk[1], &hello[1], python_used,
                                  sizeof python_used) != 0) {
        dt_worker_free(&wk[0]);
        return EXIT_BAD;
    }

    /* backend choice: explicit, never a silent fallback */
    char choice[600];
    int status = EXIT_BAD;
    json_t *cuda0 = json_object_get(json_object_get(hello[0], "backends"), "cuda");
    json_t *cuda1 = json_object_get(json_object_get(hello[1], "backends"), "cuda");
    int gpu0 = json_is_true(json_object_get(cuda0, "available"));
    int gpu1 = json_is_true(json_object_get(cuda1, "available"));
    const char *why0 = json_string_value(json_object_get(cuda0, "reason"));
    const char *why1 = json_string_value(json_object_get(cuda1, "reason"));
    if (backend) {
        snprintf(choice, sizeof choice, "requested (--backends %s)", backend);
        for (int i = 0; i < 2; i++) {
            json_t *b = json_object_get(json_object_get(hello[i], "backends"), backend);
            if (!json_is_true(json_object_get(b, "available"))) {
                const char *why = json_string_value(json_object_get(b, "reason"));
                bad("--backends %s: the %s worker (%s) cannot run it: %s", backend,
                    i ? "baseline" : "candidate",
                    json_string_value(json_object_get(hello[i], "framework")),
                    why ? why : "not offered");
                goto out;
            }
        }
    } else if (gpu0 && gpu1) {
        backend = "cuda";
        snprintf(choice, sizeof choice, "default: cuda (a GPU is usable by both workers)");
    } else {
        backend = "cpu";
        snprintf(choice, sizeof choice, "default: cpu (no usable GPU: %s)",
                 !gpu0 ? (why0 ? why0 : "candidate has no cuda") : (why1 ? why1 : "baseline has no cuda"));
    }
    if (a.device_timing && strcmp(backend, "cuda") != 0) {
        bad("--device-timing needs the cuda backend, and this run uses %s (%s)", backend, choice);
        goto out;
    }

    if (!a.row_shapes) dt_shapes_default(backend, a.quick, 0, &rows);
    if (!a.gemm_shapes) dt_shapes_default(backend, a.quick, 1, &gemms);

    dt_run_config cfg;
    memset(&cfg, 0, sizeof cfg);
    dt_plan_build(&cfg.plan, ops, &rows, &gemms, a.views);
    if (cfg.plan.count == 0) {
        bad("nothing to run: the selected operations have no shapes");
        goto out;
    }

    /* ids */
    const char *id0 = json_string_value(json_object_get(hello[0], "worker"));
    const char *id1 = json_string_value(json_object_get(hello[1], "worker"));
    if (!id0 || !id1 || !*id0 || !*id1 || strcmp(id0, id1) == 0) {
        id0 = "candidate";
        id1 = "baseline";
    }

    if (resume) {
        const char *was = json_string_value(
            json_object_get(json_object_get(resume, "settings"), "backend"));
        if (!was || strcmp(was, backend) != 0) {
            bad("--resume: the run used backend %s, this machine chose %s", was ? was : "?",
                backend);
            dt_plan_free(&cfg.plan);
            goto out;
        }
        json_t *fw = json_object_get(resume, "frameworks");
        const char *r0 = json_string_value(json_object_get(json_array_get(fw, 0), "id"));
        const char *r1 = json_string_value(json_object_get(json_array_get(fw, 1), "id"));
        if (!r0 || !r1 || strcmp(r0, id0) != 0 || strcmp(r1, id1) != 0) {
            bad("--resume: the run compared %s with %s, the workers here are %s and %s",
                r0 ? r0 : "?", r1 ? r1 : "?", id0, id1);
            dt_plan_free(&cfg.plan);
            goto out;
        }
    }

    /* only now create the output directory */
    if (!resume && mkdir(a.output, 0755) != 0) {
        bad("--output: cannot create '%s': %s", a.output, strerror(errno));
        dt_plan_free(&cfg.plan);
        goto out;
    }

    json_t *cmdline = json_array();
    for (int i = 0; i < full_argc; i++) json_array_append_new(cmdline, json_string(full_argv[i]));
    char now[64];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char repo[PATH_MAX + 4];
    snprintf(repo, sizeof repo, "%s/..", exe_dir);
    json_t *git = dt_git_info(repo, DT_GIT_REV_BUILD);
    json_t *files = json_array();
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/dualtime", exe_dir);
    add_file(files, "dualtime", p);
    snprintf(p, sizeof p, "%s/dualtime-native-worker", exe_dir);
    add_file(files, "native worker", p);
    snprintf(p, sizeof p, "%s/libdualtime_cuda.so", exe_dir);
    add_file(files, "native CUDA backend", p);
    snprintf(p, sizeof p, "%s/libdualtime_timing.so", exe_dir);
    add_file(files, "device-timing helper", p);
    snprintf(p, sizeof p, "%s/dualtime_torch_worker.py", exe_dir);
    add_file(files, "PyTorch worker", p);

    json_t *fws = json_array();
    const char *ids[2] = {id0, id1};
    for (int i = 0; i < 2; i++) {
        json_t *cmd = json_array();
        for (int j = 0; wk[i].argv[j]; j++) json_array_append_new(cmd, json_string(wk[i].argv[j]));
        json_array_append_new(
            fws, json_pack("{s:s,s:s,s:O,s:O,s:o,s:o}", "id", ids[i], "role",
                           i ? "baseline" : "candidate", "framework",
                           json_object_get(hello[i], "framework"), "framework_version",
                           json_object_get(hello[i], "framework_version"), "command", cmd,
                           "hello", hello[i]));
    }
    json_t *gpu = NULL; /* the candidate's description of the device, plus "name" */
    if (strcmp(backend, "cuda") == 0 && json_is_object(json_object_get(cuda0, "info"))) {
        gpu = json_deep_copy(json_object_get(cuda0, "info"));
        json_t *nm = json_object_get(gpu, "gpu");
        if (json_is_string(nm) && !json_object_get(gpu, "name")) json_object_set(gpu, "name", nm);
    }
    json_t *results = json_pack(
        "{s:s,s:i,s:b,s:{s:s,s:s,s:O,s:O,s:s},s:o,s:s,s:s,s:o,s:o,s:{s:o,s:O,s:s},s:{s:o,s:[]},s:[]}",
        "format", "dualtime-results", "format_version", 1, "complete", 0, "tool", "name",
        "dualtime", "version", DT_VERSION, "git_revision", json_object_get(git, "revision"),
        "git_dirty", json_object_get(git, "dirty"), "git_source",
        json_string_value(json_object_get(git, "source")), "command_line", cmdline,
        "started_at", now, "finished_at", now, "settings",
        settings_json(&a, backend, choice, ops), "frameworks", fws, "environment", "host",
        dt_host_info(), "gpu", gpu ? gpu : json_null(), "python", python_used, "provenance",
        "files", files, "sources", "cases");
    json_decref(git);
    json_decref(gpu);
    DT_ASSERT(results);
    {   /* device ceilings for the report's rooflines: the first worker offering them; never fatal */
        json_t *ceil = NULL;
        dt_err ce = {{0}}, ce2;
        double cto = a.timeout_s < 60 ? a.timeout_s : 60;
        if (dt_ceilings_measure(&wk[0], backend, cto, &ceil, &ce) != DT_OK && dt_worker_alive(&wk[1]))
            dt_ceilings_measure(&wk[1], backend, cto, &ceil, &ce2);
        json_object_set_new(json_object_get(results, "environment"), "ceilings",
                            ceil ? ceil : json_pack("{s:s}", "error", ce.msg));
    }
    /* GPU clocks through NVML (dlopen; absent NVML is recorded, not fatal). NVML's index
     * is not CUDA's ordinal in general: the PCI bus must match the worker's device. */
    dt_clocks *clocks = NULL;
    if (strcmp(backend, "cuda") == 0) {
        const char *dev_env = getenv("DUALTIME_CUDA_DEVICE");
        int dev_index = dev_env && *dev_env ? atoi(dev_env) : 0;
        char why[DT_ERR_LEN];
        json_t *nvml = NULL;
        clocks = dt_clocks_open(dev_index, why, sizeof why);
        if (clocks) {
            nvml = dt_clocks_describe(clocks);
            json_t *cuda_bus = json_object_get(gpu, "pci_bus");
            json_t *nvml_bus = json_object_get(nvml, "pci_bus");
            if (json_is_integer(cuda_bus) && json_is_integer(nvml_bus) &&
                json_integer_value(cuda_bus) != json_integer_value(nvml_bus)) {
                snprintf(why, sizeof why, "NVML device %d is on PCI bus %lld, the CUDA device on "
                         "bus %lld (set DUALTIME_CUDA_DEVICE / CUDA_DEVICE_ORDER=PCI_BUS_ID)",
                         dev_index, (long long)json_integer_value(nvml_bus),
                         (long long)json_integer_value(cuda_bus));
                dt_clocks_close(clocks);
                clocks = NULL;
            }
        }
        if (!nvml) nvml = json_object();
        json_object_set_new(nvml, "available", json_boolean(clocks != NULL));
        json_object_set_new(nvml, "reason", clocks ? json_null() : json_string(why));
        json_object_set_new(json_object_get(results, "environment"), "nvml", nvml);
        if (!a.quiet && !clocks)
            fprintf(stderr, "dualtime: GPU clocks not read: %s\n", why);
    }
    if (resume) {
        /* keep the interrupted run's record; note this resumption */
        json_t *resumes = json_object_get(resume, "resumes");
        if (!json_is_array(resumes)) {
            resumes = json_array();
            json_object_set_new(resume, "resumes", resumes);
        }
        json_array_append_new(resumes,
                              json_pack("{s:s,s:O,s:O,s:O}", "at", now, "tool",
                                        json_object_get(results, "tool"), "frameworks",
                                        json_object_get(results, "frameworks"), "environment",
                                        json_object_get(results, "environment")));
        json_object_set_new(resume, "complete", json_false());
        json_object_del(resume, "interrupted");
        json_decref(results);
        results = json_incref(resume);
    }

    cfg.output_dir = a.output;
    cfg.backend = backend;
    cfg.samples = (int)a.samples;
    cfg.sample_ms = a.sample_ms;
    cfg.warmup_ms = a.warmup_ms;
    cfg.prime = (int)a.prime;
    cfg.rounds = (int)a.rounds;
    cfg.seed = (uint64_t)a.seed;
    cfg.threads = (int)a.threads;
    cfg.timeout_s = a.timeout_s;
    cfg.device_timing = a.device_timing;
    cfg.probe_kind = a.probe_kind;
    cfg.capture_sources = a.capture_sources;
    cfg.max_reps = 100000;
    cfg.device_reps_cap = 64;
    cfg.progress = !a.quiet && isatty(2);
    cfg.fw_ids[0] = id0;
    cfg.fw_ids[1] = id1;
    cfg.clocks = clocks;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = dt_run_request_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    if (!a.quiet)
        fprintf(stderr, "dualtime: %d cases x %lld round(s) on %s (%s); results in %s\n",
                cfg.plan.count, a.rounds, backend, choice, a.output);
    /* probe instances: same commands, started only if device timing needs them */
    dt_worker probe_wk[2];
    dt_worker_init(&probe_wk[0], wk[0].argv);
    dt_worker_init(&probe_wk[1], wk[1].argv);
    dt_worker *wp[4] = {&wk[0], &wk[1], &probe_wk[0], &probe_wk[1]};
    int any_invalid = 0;
    dt_status rs = dt_run_plan(&cfg, wp, results, &any_invalid, &e);
    if (rs != DT_OK) {
        fprintf(stderr, "dualtime: %s\n", e.msg);
        status = 1;
    } else {
        status = any_invalid ? 1 : 0;
        json_t *ass = json_object_get(json_object_get(results, "derived"), "assessment");
        const char *lvl = json_string_value(json_object_get(ass, "level"));
        if (!a.quiet)
            fprintf(stderr, "dualtime: %s: %s/results.md (assessment: %s)%s\n",
                    any_invalid ? "done with FAILED cases" : "done", a.output,
                    lvl ? lvl : "?", any_invalid ? "" : "");
    }
    json_decref(results);
    dt_clocks_close(clocks);
    dt_worker_free(&probe_wk[0]);
    dt_worker_free(&probe_wk[1]);
    dt_plan_free(&cfg.plan);
    hello[0] = hello[1] = NULL; /* owned by results now */
out:
    json_decref(hello[0]);
    json_decref(hello[1]);
    dt_worker_free(&wk[0]);
    dt_worker_free(&wk[1]);
    return status;
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
    json_t *r = NULL;
    if (dt_results_load(path, &r, &e) != DT_OK) return bad("--resume: %s", e.msg);
    if (json_is_true(json_object_get(r, "complete"))) {
        json_decref(r);
        fprintf(stderr, "dualtime: %s is complete; nothing to resume\n", dir);
        return 0;
    }
    json_t *cl = json_object_get(r, "command_line");
    size_t n = json_array_size(cl), start = 1;
    if (n > 1 && strcmp(json_string_value(json_array_get(cl, 1)), "run") == 0) start = 2;
    char **args = dt_xcalloc(n + 3, sizeof *args);
    int na = 0;
    args[na++] = "run";
    for (size_t i = start; i < n; i++) {
        const char *v = json_string_value(json_array_get(cl, i));
        if (!v) {
            free(args);
            json_decref(r);
            return bad("--resume: %s has a malformed command_line", path);
        }
        args[na++] = (char *)v;
    }
    if (quiet) args[na++] = "--quiet";
    if (!quiet) fprintf(stderr, "dualtime: resuming %s\n", dir);
    int rc = cmd_run(na, args, na, args, r, dir);
    free(args);
    json_decref(r);
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
