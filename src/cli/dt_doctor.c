/* dt_doctor.c — `dualtime doctor` (contract in dt_doctor.h). No cuda.h, nvrtc.h, cupti.h
 * or nvml.h: the few entry points are declared here with plain C types and found with
 * dlsym, so the binary neither links nor needs any of them. */
#define _GNU_SOURCE
#include "cli/dt_doctor.h"

#include "cli/dt_sys.h"
#include "common/dt_common.h"
#include "common/dt_spawn.h"
#include "session/dt_protocol.h"
#include "session/dt_session.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define DOC_EXIT_OK 0
#define DOC_EXIT_BAD 2
#define DOC_OUT_BYTES 16384

/* What the checks found; the verdicts are computed from it. */
typedef struct doctor {
    double timeout_s;
    const char *python_arg;
    char exe_dir[PATH_MAX];
    int driver_ok;          /* libcuda loads, cuInit works, >= 1 device */
    char driver_why[640];
    int nvrtc_ok;
    int cuda_module_ok;     /* libdualtime_cuda.so present */
    int native_ok;          /* the native worker answered hello with cpu available */
    int native_cuda_ok;     /* ... and said cuda is available */
    char native_cuda_why[512];
    int torch_ok;           /* an interpreter imports torch */
    int torch_cuda_ok;      /* ... and torch.cuda.is_available() */
    int torch_script_ok;
    int shm_ok;
} doctor;

static void line(const char *what, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(const char *what, int ok, const char *fmt, ...) {
    char msg[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *p = msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    printf("%-13s %-3s %s\n", what, ok ? "ok" : "no", msg);
    fflush(stdout);
}

/* The first line of text (for reasons), at most len-1 bytes. */
static void first_line(const char *text, char *out, size_t len) {
    size_t n = strcspn(text, "\n");
    if (n >= len) n = len - 1;
    memcpy(out, text, n);
    out[n] = '\0';
}

/* The last non-empty line of text (a Python traceback's message). */
static void last_line(const char *text, char *out, size_t len) {
    const char *end = text + strlen(text);
    while (end > text && (end[-1] == '\n' || end[-1] == '\r')) end--;
    const char *start = end;
    while (start > text && start[-1] != '\n') start--;
    size_t n = (size_t)(end - start);
    if (n >= len) n = len - 1;
    memcpy(out, start, n);
    out[n] = '\0';
}

/* dlopen of name, then of each dir/name; the path that worked goes to used. */
static void *open_lib(const char *name, const char *const *dirs, char *used, size_t ulen,
                      char *why, size_t wlen) {
    dlerror();
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h) {
        snprintf(used, ulen, "%s", name);
        return h;
    }
    const char *e = dlerror();
    snprintf(why, wlen, "%s", e ? e : "dlopen failed");
    for (int i = 0; dirs && dirs[i]; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dirs[i], name);
        if (access(p, R_OK) != 0) continue;
        h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(used, ulen, "%s", p);
            return h;
        }
        e = dlerror();
        snprintf(why, wlen, "%s", e ? e : "dlopen failed");
    }
    return NULL;
}

static void *sym(void *h, const char *name) { return h ? dlsym(h, name) : NULL; }

/* ---- GPU driver ------------------------------------------------------------------- */

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_int_fn)(int *);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_device_name_fn)(char *, int, int);
typedef int (*cu_device_attr_fn)(int *, int, int);
typedef int (*cu_device_mem_fn)(size_t *, int);
typedef int (*cu_error_string_fn)(int, const char **);

static void check_driver(doctor *d) {
    char used[PATH_MAX], why[512] = "";
    void *h = open_lib("libcuda.so.1", NULL, used, sizeof used, why, sizeof why);
    if (!h) {
        snprintf(d->driver_why, sizeof d->driver_why, "no CUDA driver (%s)", why);
        line("gpu driver", 0, "libcuda.so.1 does not load (%s); fix: install the NVIDIA driver "
             "(it brings libcuda.so.1) on a machine with an NVIDIA GPU", why);
        return;
    }
    cu_init_fn init;
    cu_int_fn version, count;
    cu_device_get_fn get;
    cu_device_name_fn name;
    cu_device_attr_fn attr;
    cu_device_mem_fn mem;
    cu_error_string_fn estr;
    void *p;
#define LOAD(var, s) (p = sym(h, s), memcpy(&var, &p, sizeof var), p != NULL)
    if (!LOAD(init, "cuInit") || !LOAD(version, "cuDriverGetVersion") ||
        !LOAD(count, "cuDeviceGetCount") || !LOAD(get, "cuDeviceGet") ||
        !LOAD(name, "cuDeviceGetName")) {
        snprintf(d->driver_why, sizeof d->driver_why, "libcuda.so.1 lacks the driver API");
        line("gpu driver", 0, "libcuda.so.1 lacks cuInit/cuDeviceGetName; fix: reinstall the NVIDIA driver");
        dlclose(h);
        return;
    }
    if (!LOAD(attr, "cuDeviceGetAttribute")) attr = NULL;
    if (!LOAD(mem, "cuDeviceTotalMem_v2")) mem = NULL;
    if (!LOAD(estr, "cuGetErrorString")) estr = NULL;
#undef LOAD
    int ver = 0;
    version(&ver);
    int rc = init(0);
    if (rc != 0) {
        const char *s = NULL;
        if (estr) estr(rc, &s);
        snprintf(d->driver_why, sizeof d->driver_why, "cuInit failed: error %d (%s)", rc,
                 s ? s : "?");
        line("gpu driver", 0, "driver %d.%d loads but cuInit fails: error %d (%s); fix: check "
             "nvidia-smi, that /dev/nvidia* exist and are accessible, CUDA_VISIBLE_DEVICES",
             ver / 1000, (ver % 1000) / 10, rc, s ? s : "?");
        dlclose(h);
        return;
    }
    int n = 0;
    count(&n);
    if (n < 1) {
        snprintf(d->driver_why, sizeof d->driver_why, "the driver sees no CUDA device");
        line("gpu driver", 0, "driver %d.%d sees no CUDA device; fix: check nvidia-smi and "
             "CUDA_VISIBLE_DEVICES", ver / 1000, (ver % 1000) / 10);
        dlclose(h);
        return;
    }
    char devs[1024] = "";
    for (int i = 0; i < n && i < 16; i++) {
        int dev = 0;
        char nm[256] = "?";
        if (get(&dev, i) == 0) name(nm, sizeof nm, dev);
        int ma = 0, mi = 0;
        size_t bytes = 0;
        if (attr) {
            attr(&ma, 75, dev); /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
            attr(&mi, 76, dev); /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR */
        }
        if (mem) mem(&bytes, dev);
        size_t l = strlen(devs);
        snprintf(devs + l, sizeof devs - l, "%s%d: %s (sm_%d%d, %.0f GiB)", i ? "; " : "", i, nm,
                 ma, mi, (double)bytes / (1 << 30));
    }
    d->driver_ok = 1;
    line("gpu driver", 1, "CUDA driver %d.%d, %d device%s: %s", ver / 1000, (ver % 1000) / 10, n,
         n == 1 ? "" : "s", devs);
    dlclose(h);
}

/* ---- NVRTC, CUPTI, NVML ------------------------------------------------------------ */

static const char *const k_cuda_dirs[] = {"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
                                          "/usr/local/cuda/extras/CUPTI/lib64", NULL};

static void check_nvrtc(doctor *d) {
    char used[PATH_MAX], why[512] = "";
    void *h = open_lib("libnvrtc.so.13", k_cuda_dirs, used, sizeof used, why, sizeof why);
    if (!h) {
        line("nvrtc", 0, "libnvrtc.so.13 does not load (%s); fix: install the CUDA 13 toolkit "
             "(NVRTC) at /usr/local/cuda", why);
        return;
    }
    int (*ver)(int *, int *);
    void *p = sym(h, "nvrtcVersion");
    memcpy(&ver, &p, sizeof ver);
    int ma = 0, mi = 0;
    if (!p || ver(&ma, &mi) != 0) {
        line("nvrtc", 0, "%s loads but nvrtcVersion fails; fix: reinstall the CUDA 13 toolkit", used);
    } else {
        d->nvrtc_ok = 1;
        line("nvrtc", 1, "NVRTC %d.%d (%s)", ma, mi, used);
    }
    dlclose(h);
}

/* 1 when /proc/driver/nvidia/params says profiling is for admins only. */
static int profiling_admin_only(void) {
    FILE *f = fopen("/proc/driver/nvidia/params", "r");
    if (!f) return 0;
    char l[256];
    int admin = 0;
    while (fgets(l, sizeof l, f))
        if (strncmp(l, "RmProfilingAdminOnly:", 21) == 0) admin = atoi(l + 21) == 1;
    fclose(f);
    return admin;
}

static void check_cupti(doctor *d) {
    char used[PATH_MAX], why[512] = "";
    void *h = open_lib("libcupti.so.13", k_cuda_dirs, used, sizeof used, why, sizeof why);
    if (!h) {
        line("cupti", 0, "libcupti.so.13 does not load (%s); fix: install the CUDA 13 toolkit "
             "(CUPTI) at /usr/local/cuda; without it there is no kernel probe (--device-timing)",
             why);
        return;
    }
    int (*ver)(uint32_t *);
    void *p = sym(h, "cuptiGetVersion");
    memcpy(&ver, &p, sizeof ver);
    uint32_t v = 0;
    if (!p || ver(&v) != 0) {
        line("cupti", 0, "%s loads but cuptiGetVersion fails; fix: reinstall the CUDA 13 toolkit", used);
    } else if (profiling_admin_only() && geteuid() != 0) {
        line("cupti", 0, "CUPTI API %u (%s) loads, but the driver restricts profiling to admin "
             "users (RmProfilingAdminOnly: 1), so the kernel probe will fail; fix: run as root, "
             "or load the driver with NVreg_RestrictProfilingToAdminUsers=0", v, used);
    } else {
        line("cupti", 1, "CUPTI API %u (%s)%s", v, used,
             profiling_admin_only() ? "; profiling is admin-only (RmProfilingAdminOnly: 1) "
                                      "and this is root" : "");
    }
    dlclose(h);
}

static void check_nvml(doctor *d) {
    (void)d;
    char used[PATH_MAX], why[512] = "";
    void *h = open_lib("libnvidia-ml.so.1", NULL, used, sizeof used, why, sizeof why);
    if (!h) {
        line("nvml", 0, "libnvidia-ml.so.1 does not load (%s); GPU clocks and temperatures "
             "are not recorded; fix: install the NVIDIA driver's NVML (optional)", why);
        return;
    }
    int (*init)(void), (*shut)(void);
    int (*drv)(char *, unsigned);
    void *p = sym(h, "nvmlInit_v2");
    memcpy(&init, &p, sizeof init);
    p = sym(h, "nvmlShutdown");
    memcpy(&shut, &p, sizeof shut);
    p = sym(h, "nvmlSystemGetDriverVersion");
    memcpy(&drv, &p, sizeof drv);
    int rc = init && shut ? init() : -1;
    if (rc != 0) {
        line("nvml", 0, "libnvidia-ml.so.1 loads but nvmlInit fails (%d); GPU clocks are not "
             "recorded; fix: check nvidia-smi (optional)", rc);
    } else {
        char v[96] = "?";
        if (drv) drv(v, sizeof v);
        line("nvml", 1, "NVML, driver %s", v);
        shut();
    }
    dlclose(h);
}

/* ---- the PyTorch worker's interpreter -------------------------------------------- */

static const char k_torch_probe[] =
    "import sys\n"
    "print('python', sys.version.split()[0])\n"
    "import torch\n"
    "print('torch', torch.__version__)\n"
    "c = torch.cuda.is_available()\n"
    "print('cuda', int(c), torch.version.cuda or 'none')\n"
    "if c:\n"
    "    print('devices', '; '.join(torch.cuda.get_device_name(i) for i in "
    "range(torch.cuda.device_count())))\n";

/* The value after "key " on a line of out, or "" */
static void field(const char *out, const char *key, char *v, size_t len) {
    v[0] = '\0';
    size_t kl = strlen(key);
    for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, key, kl) == 0 && l[kl] == ' ') {
            first_line(l + kl + 1, v, len);
            return;
        }
    }
}

static void check_torch(doctor *d) {
    const char *cands[2], *how;
    int nc = dt_session_python_candidates(d->python_arg, cands, &how);
    char tried[8192] = "";
    for (int i = 0; i < nc; i++) {
        char path[PATH_MAX];
        if (dt_spawn_which(cands[i], path, sizeof path) != 0) {
            size_t l = strlen(tried);
            snprintf(tried + l, sizeof tried - l, "%s%s: not found", l ? "; " : "", cands[i]);
            continue;
        }
        if (strstr(tried, path)) continue;
        char *out = dt_xmalloc(DOC_OUT_BYTES);
        char *argv[] = {path, "-c", (char *)k_torch_probe, NULL};
        int rc = dt_spawn_capture(argv, NULL, 1, d->timeout_s, out, DOC_OUT_BYTES);
        char pyv[64], tv[64], cu[64], devs[512], why[300];
        field(out, "python", pyv, sizeof pyv);
        field(out, "torch", tv, sizeof tv);
        field(out, "cuda", cu, sizeof cu);
        field(out, "devices", devs, sizeof devs);
        if (rc == 0 && tv[0]) {
            d->torch_ok = 1;
            d->torch_cuda_ok = cu[0] == '1';
            line("torch", 1, "%s (Python %s): torch %s, CUDA %s%s%s%s", path, pyv, tv,
                 d->torch_cuda_ok ? "available" : "not available",
                 d->torch_cuda_ok ? " (" : "", d->torch_cuda_ok ? devs : "",
                 d->torch_cuda_ok ? ")" : "");
            if (tried[0]) printf("%-13s     (passed over: %s)\n", "", tried);
            free(out);
            return;
        }
        if (rc == -2) snprintf(why, sizeof why, "did not answer within %.0f s", d->timeout_s);
        else if (rc == -1 || rc == 127) snprintf(why, sizeof why, "cannot be started");
        else last_line(out, why, sizeof why);
        size_t l = strlen(tried);
        if (pyv[0])
            snprintf(tried + l, sizeof tried - l, "%s%s (Python %s): %s", l ? "; " : "", path,
                     pyv, why);
        else
            snprintf(tried + l, sizeof tried - l, "%s%s: %s", l ? "; " : "", path, why);
        free(out);
    }
    line("torch", 0, "no interpreter with PyTorch (tried %s: %s); fix: apt-get install "
         "--no-install-recommends python3-torch, or point --python / DUALTIME_PYTHON at a "
         "python with torch", how, tried[0] ? tried : "nothing");
}

/* ---- shared memory and the build ------------------------------------------------- */

static void check_shm(doctor *d) {
    char name[64];
    snprintf(name, sizeof name, "/dualtime-doctor-%ld", (long)getpid());
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        line("shared mem", 0, "cannot create a segment in /dev/shm (%s); fix: mount a writable "
             "tmpfs on /dev/shm (docker: --shm-size=1g)", strerror(errno));
        return;
    }
    int ok = ftruncate(fd, 1 << 20) == 0;
    int e = errno;
    close(fd);
    shm_unlink(name);
    if (!ok) {
        line("shared mem", 0, "/dev/shm refuses 1 MiB (%s); fix: enlarge /dev/shm", strerror(e));
        return;
    }
    struct statvfs sv;
    double free_b = statvfs("/dev/shm", &sv) == 0 ? (double)sv.f_bavail * sv.f_frsize : -1;
    if (free_b >= 0 && free_b < 64.0 * (1 << 20)) {
        line("shared mem", 0, "/dev/shm has only %.0f MiB free; large shapes need up to a few "
             "GiB; fix: enlarge /dev/shm (docker: --shm-size=8g)", free_b / (1 << 20));
        return;
    }
    d->shm_ok = 1;
    if (free_b >= 0)
        line("shared mem", 1, "/dev/shm writable, %.1f GiB free", free_b / (1 << 30));
    else
        line("shared mem", 1, "/dev/shm writable");
}

/* Asks the native worker for hello; fills native_ok / native_cuda_ok / reason. */
static void check_native(doctor *d) {
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/dualtime-native-worker", d->exe_dir);
    if (access(path, X_OK) != 0) {
        line("native worker", 0, "%s is missing; fix: rebuild dualtime (cmake --build build)", path);
        snprintf(d->native_cuda_why, sizeof d->native_cuda_why, "the native worker is missing");
        return;
    }
    char *out = dt_xmalloc(DOC_OUT_BYTES);
    char *argv[] = {path, NULL};
    int rc = dt_spawn_capture(argv, "{\"cmd\":\"hello\"}\n{\"cmd\":\"quit\"}\n", 1,
                              d->timeout_s, out, DOC_OUT_BYTES);
    /* the first line that is a hello answer (ok:true) counts; stderr is mixed in */
    dt_hello hello;
    int have = 0;
    for (char *l = out; l && *l && !have; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (*l != '{') continue;
        have = dt_hello_parse(l, strcspn(l, "\n"), &hello, NULL) == DT_OK;
    }
    if (!have) {
        char why[300];
        if (rc == -2) snprintf(why, sizeof why, "did not answer within %.0f s", d->timeout_s);
        else if (rc > 128) snprintf(why, sizeof why, "killed by signal %d", rc - 128);
        else first_line(out, why, sizeof why);
        line("native worker", 0, "%s does not answer hello (%s); fix: rebuild dualtime", path, why);
        snprintf(d->native_cuda_why, sizeof d->native_cuda_why, "the native worker does not start");
        free(out);
        return;
    }
    d->native_ok = hello.cpu.available;
    d->native_cuda_ok = hello.cuda.available;
    snprintf(d->native_cuda_why, sizeof d->native_cuda_why, "%s",
             hello.cuda.reason ? hello.cuda.reason : "?");
    if (d->native_ok)
        line("native worker", 1, "%s: cpu backend available (%lld threads); cuda %s", path,
             hello.threads < 0 ? 0LL : hello.threads, d->native_cuda_ok ? "available" : "unavailable");
    else
        line("native worker", 0, "%s answers but says its cpu backend is unavailable; fix: "
             "rebuild dualtime", path);
    dt_hello_free(&hello);
    free(out);
}

static void check_build(doctor *d) {
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/dualtime_torch_worker.py", d->exe_dir);
    d->torch_script_ok = access(p, R_OK) == 0;
    if (d->torch_script_ok)
        line("torch worker", 1, "%s", p);
    else
        line("torch worker", 0, "%s is missing; fix: rebuild dualtime (the build copies it)", p);
    snprintf(p, sizeof p, "%s/libdualtime_cuda.so", d->exe_dir);
    d->cuda_module_ok = access(p, R_OK) == 0;
    if (d->cuda_module_ok)
        line("cuda module", 1, "%s", p);
    else
        line("cuda module", 0, "%s is missing: this build has no CUDA backend; fix: install the "
             "CUDA toolkit at /usr/local/cuda and rebuild", p);
    snprintf(p, sizeof p, "%s/libdualtime_timing.so", d->exe_dir);
    if (access(p, R_OK) == 0)
        line("timing helper", 1, "%s", p);
    else
        line("timing helper", 0, "%s is missing: no device timing (--device-timing); fix: "
             "install the CUDA toolkit (CUPTI) and rebuild", p);
}

/* ---- main ------------------------------------------------------------------------ */

static void usage(FILE *f) {
    fputs("usage: dualtime doctor [--python PATH] [--timeout SECONDS]\n"
          "  Checks what this machine can run (GPU driver, NVRTC, CUPTI, NVML, PyTorch,\n"
          "  shared memory, the build's own pieces): one line each, \"ok\" or the reason\n"
          "  and the fix. Exit status 0 when the cpu backend is usable, 2 otherwise.\n",
          f);
}

int dt_doctor_main(int argc, char **argv) {
    doctor d;
    memset(&d, 0, sizeof d);
    d.timeout_s = 60;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return DOC_EXIT_OK;
        }
        if ((strcmp(a, "--python") == 0 || strcmp(a, "--timeout") == 0)) {
            if (i + 1 >= argc) {
                fprintf(stderr, "dualtime: doctor: %s needs a value\n", a);
                return DOC_EXIT_BAD;
            }
            val = argv[++i];
        } else if (strncmp(a, "--python=", 9) == 0) {
            a = "--python";
            val = argv[i] + 9;
        } else if (strncmp(a, "--timeout=", 10) == 0) {
            a = "--timeout";
            val = argv[i] + 10;
        } else {
            char shown[80];
            snprintf(shown, sizeof shown, "%s", a);
            fprintf(stderr, "dualtime: doctor: unknown argument '%s' (see dualtime doctor --help)\n",
                    shown);
            return DOC_EXIT_BAD;
        }
        if (strcmp(a, "--python") == 0) {
            if (!*val) {
                fprintf(stderr, "dualtime: doctor: --python: empty path\n");
                return DOC_EXIT_BAD;
            }
            d.python_arg = val;
        } else {
            char *end = NULL;
            errno = 0;
            double t = strtod(val, &end);
            if (errno || !end || end == val || *end || !(t >= 1 && t <= 3600)) {
                char shown[80];
                snprintf(shown, sizeof shown, "%s", val);
                fprintf(stderr, "dualtime: doctor: --timeout: '%s' is not a number of seconds in "
                        "[1, 3600]\n", shown);
                return DOC_EXIT_BAD;
            }
            d.timeout_s = t;
        }
    }
    if (dt_exe_dir(d.exe_dir, sizeof d.exe_dir) != 0) {
        fprintf(stderr, "dualtime: doctor: cannot locate the dualtime binary\n");
        return DOC_EXIT_BAD;
    }
    printf("dualtime %s doctor: what this machine can run (one line per piece: ok, or why "
           "not and the fix)\n", DT_VERSION);
    check_driver(&d);
    check_nvrtc(&d);
    check_cupti(&d);
    check_nvml(&d);
    check_torch(&d);
    check_shm(&d);
    check_build(&d);
    check_native(&d);

    int cpu_ok = d.native_ok && d.torch_ok && d.torch_script_ok && d.shm_ok;
    if (cpu_ok) {
        line("=> cpu", 1, "dualtime run --backends cpu can run here");
    } else {
        const char *why = !d.native_ok        ? "the native worker does not serve the cpu"
                          : !d.torch_ok        ? "no python with PyTorch"
                          : !d.torch_script_ok ? "the torch worker script is missing"
                                               : "no usable shared memory";
        line("=> cpu", 0, "dualtime run --backends cpu cannot run here: %s (see above)", why);
    }
    const char *cwhy = NULL;
    if (!d.driver_ok) cwhy = d.driver_why;
    else if (!d.cuda_module_ok) cwhy = "this build has no CUDA backend (libdualtime_cuda.so)";
    else if (!d.nvrtc_ok) cwhy = "NVRTC does not load";
    else if (!d.native_cuda_ok) cwhy = d.native_cuda_why;
    else if (!d.torch_ok) cwhy = "no python with PyTorch";
    else if (!d.torch_cuda_ok) cwhy = "PyTorch here has no CUDA (torch.cuda.is_available() is False)";
    if (cpu_ok && !cwhy)
        line("=> cuda", 1, "dualtime run --backends cuda can run here");
    else
        line("=> cuda", 0, "dualtime run --backends cuda cannot run here: %s",
             cwhy ? cwhy : "the cpu pieces it also needs are missing (see above)");
    return cpu_ok ? DOC_EXIT_OK : DOC_EXIT_BAD;
}
