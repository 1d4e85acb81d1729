/* dt_clocks.c — NVML clocks, temperature, power and clock-event reasons, loaded with
 * dlopen (contract in dt_clocks.h), and the pure "did the clocks move" rule.
 *
 * NVML is declared here, not included: the few prototypes, enums and bit values below
 * follow nvml.h of NVML API version 12 (driver r535 and later, also r580 / CUDA 13),
 * whose ABI NVIDIA keeps stable. Only calls that exist since r450 are required; the
 * clock-event reasons call is looked up under its r535 name
 * (nvmlDeviceGetCurrentClocksEventReasons) and then its older one
 * (nvmlDeviceGetCurrentClocksThrottleReasons). */
#define _GNU_SOURCE
#include "orchestrate/dt_clocks.h"

#include "common/dt_common.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- NVML declarations (nvml.h, API version 12) ---- */

typedef int nvmlReturn_t;               /* enum nvmlReturn_enum */
#define NVML_SUCCESS 0
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlClockType_t;            /* enum nvmlClockType_enum */
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
typedef int nvmlTemperatureSensors_t;   /* enum nvmlTemperatureSensors_enum */
#define NVML_TEMPERATURE_GPU 0
typedef int nvmlPstates_t;              /* enum nvmlPStates_enum: 0..15, 32 unknown */
#define NVML_PSTATE_UNKNOWN 32
#define NVML_DEVICE_NAME_BUFFER_SIZE 96 /* the V2 size; 64 before */
#define NVML_SYSTEM_VERSION_BUFFER_SIZE 80

/* nvmlPciInfo_t, version 3 (nvmlDeviceGetPciInfo_v3). */
typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

/* nvmlClocksEventReason* / nvmlClocksThrottleReason* bits. */
#define DT_NVML_REASON_GPU_IDLE 0x1ULL
#define DT_NVML_REASON_APPLICATIONS_CLOCKS_SETTING 0x2ULL

static const struct {
    unsigned long long bit;
    const char *name;
} k_reasons[] = {
    {0x001ULL, "gpu_idle"},                    /* GpuIdle */
    {0x002ULL, "applications_clocks_setting"}, /* ApplicationsClocksSetting */
    {0x004ULL, "sw_power_cap"},                /* SwPowerCap */
    {0x008ULL, "hw_slowdown"},                 /* HwSlowdown */
    {0x010ULL, "sync_boost"},                  /* SyncBoost */
    {0x020ULL, "sw_thermal_slowdown"},         /* SwThermalSlowdown */
    {0x040ULL, "hw_thermal_slowdown"},         /* HwThermalSlowdown */
    {0x080ULL, "hw_power_brake_slowdown"},     /* HwPowerBrakeSlowdown */
    {0x100ULL, "display_clock_setting"},       /* DisplayClockSetting */
};
#define K_NREASONS (sizeof k_reasons / sizeof k_reasons[0])

typedef nvmlReturn_t (*fn_init)(void);
typedef nvmlReturn_t (*fn_shutdown)(void);
typedef const char *(*fn_error_string)(nvmlReturn_t);
typedef nvmlReturn_t (*fn_handle_by_index)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*fn_clock_info)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
typedef nvmlReturn_t (*fn_temperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int *);
typedef nvmlReturn_t (*fn_power_usage)(nvmlDevice_t, unsigned int *); /* milliwatts */
typedef nvmlReturn_t (*fn_reasons)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*fn_pstate)(nvmlDevice_t, nvmlPstates_t *);
typedef nvmlReturn_t (*fn_device_string)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*fn_system_string)(char *, unsigned int);
typedef nvmlReturn_t (*fn_pci_info)(nvmlDevice_t, nvmlPciInfo_t *);
typedef nvmlReturn_t (*fn_energy)(nvmlDevice_t, unsigned long long *); /* mJ since load */

/* One open NVML device. */
struct dt_clocks {
    void *lib;                  /* dlopen handle */
    char library[512];          /* the path (or soname) that loaded */
    int device_index;           /* NVML index */
    nvmlDevice_t dev;
    fn_shutdown shutdown;
    fn_error_string error_string; /* may be NULL */
    fn_clock_info clock_info;   /* the optional ones may be NULL: their fields read null */
    fn_temperature temperature;
    fn_power_usage power_usage;
    fn_reasons reasons;
    fn_pstate pstate;
    fn_device_string name, uuid;
    fn_system_string driver_version, nvml_version;
    fn_pci_info pci_info;
    fn_energy energy;           /* nvmlDeviceGetTotalEnergyConsumption (Volta and later) */
};

/* ---- open / close ---- */

static void *sym(void *lib, const char *name) {
    dlerror();
    return dlsym(lib, name);
}

static const char *nvml_err(const dt_clocks *h, nvmlReturn_t r, char *buf, size_t len) {
    const char *s = h->error_string ? h->error_string(r) : NULL;
    snprintf(buf, len, "%s (%d)", s ? s : "unknown error", r);
    return buf;
}

dt_clocks *dt_clocks_open(int device_index, char *why, size_t len) {
    char scratch[2];
    if (!why || len == 0) {
        why = scratch;
        len = sizeof scratch;
    }
    why[0] = 0;
    if (device_index < 0) {
        snprintf(why, len, "NVML: device index %d is negative", device_index);
        return NULL;
    }
    const char *env = getenv("DT_NVML_LIBRARY");
    const char *candidates[] = {
        env && *env ? env : NULL,
        "libnvidia-ml.so.1",
        "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        "/usr/lib64/libnvidia-ml.so.1",
        "/usr/lib/wsl/lib/libnvidia-ml.so.1",
    };
    void *lib = NULL;
    const char *opened = NULL;
    char tried[1024] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !lib; i++) {
        if (!candidates[i])
            continue;
        lib = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            opened = candidates[i];
        } else if (used < sizeof tried) {
            int n = snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "",
                             candidates[i]);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    if (!lib) {
        snprintf(why, len, "NVML not found (tried %s)", tried);
        return NULL;
    }
    dt_clocks *h = dt_xcalloc(1, sizeof *h);
    h->lib = lib;
    h->device_index = device_index;
    snprintf(h->library, sizeof h->library, "%s", opened);
    Dl_info info;
    fn_init init = (fn_init)sym(lib, "nvmlInit_v2");
    h->shutdown = (fn_shutdown)sym(lib, "nvmlShutdown");
    if (init && dladdr((void *)init, &info) && info.dli_fname)
        snprintf(h->library, sizeof h->library, "%s", info.dli_fname);
    h->error_string = (fn_error_string)sym(lib, "nvmlErrorString");
    fn_handle_by_index by_index = (fn_handle_by_index)sym(lib, "nvmlDeviceGetHandleByIndex_v2");
    if (!init || !h->shutdown || !by_index) {
        snprintf(why, len, "NVML at %s lacks nvmlInit_v2, nvmlShutdown or "
                 "nvmlDeviceGetHandleByIndex_v2", h->library);
        dlclose(lib);
        free(h);
        return NULL;
    }
    char eb[160];
    nvmlReturn_t r = init();
    if (r != NVML_SUCCESS) {
        snprintf(why, len, "nvmlInit_v2 failed (%s): %s", h->library, nvml_err(h, r, eb, sizeof eb));
        dlclose(lib);
        free(h);
        return NULL;
    }
    r = by_index((unsigned int)device_index, &h->dev);
    if (r != NVML_SUCCESS) {
        snprintf(why, len, "nvmlDeviceGetHandleByIndex_v2(%d) failed: %s", device_index,
                 nvml_err(h, r, eb, sizeof eb));
        h->shutdown();
        dlclose(lib);
        free(h);
        return NULL;
    }
    h->clock_info = (fn_clock_info)sym(lib, "nvmlDeviceGetClockInfo");
    h->temperature = (fn_temperature)sym(lib, "nvmlDeviceGetTemperature");
    h->power_usage = (fn_power_usage)sym(lib, "nvmlDeviceGetPowerUsage");
    h->reasons = (fn_reasons)sym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!h->reasons)
        h->reasons = (fn_reasons)sym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    h->pstate = (fn_pstate)sym(lib, "nvmlDeviceGetPerformanceState");
    h->name = (fn_device_string)sym(lib, "nvmlDeviceGetName");
    h->uuid = (fn_device_string)sym(lib, "nvmlDeviceGetUUID");
    h->driver_version = (fn_system_string)sym(lib, "nvmlSystemGetDriverVersion");
    h->nvml_version = (fn_system_string)sym(lib, "nvmlSystemGetNVMLVersion");
    h->pci_info = (fn_pci_info)sym(lib, "nvmlDeviceGetPciInfo_v3");
    h->energy = (fn_energy)sym(lib, "nvmlDeviceGetTotalEnergyConsumption");
    return h;
}

void dt_clocks_close(dt_clocks *h) {
    if (!h)
        return;
    h->shutdown();
    dlclose(h->lib);
    free(h);
}

/* ---- reading ---- */

/* The names of the reason bits in mask (known names, then other_0x<bit>) into out. */
static void reasons_names(unsigned long long mask, dt_strv *out) {
    unsigned long long known = 0;
    for (size_t i = 0; i < K_NREASONS; i++) {
        known |= k_reasons[i].bit;
        if (mask & k_reasons[i].bit) dt_strv_push(out, k_reasons[i].name);
    }
    for (int b = 0; b < 64; b++) {
        unsigned long long bit = 1ULL << b;
        if ((mask & bit) && !(known & bit)) {
            char name[32];
            snprintf(name, sizeof name, "other_0x%llx", bit);
            dt_strv_push(out, name);
        }
    }
}

void dt_clocks_snapshot_init(dt_clock_snapshot *s) {
    memset(s, 0, sizeof *s);
    s->sm_mhz = s->mem_mhz = s->temp_c = s->pstate = DT_NULL_I64;
    s->power_w = NAN;
}

void dt_clocks_read(dt_clocks *h, dt_clock_snapshot *s) {
    dt_clocks_snapshot_init(s);
    unsigned int v = 0;
    if (h && h->clock_info && h->clock_info(h->dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
        s->sm_mhz = v;
    if (h && h->clock_info && h->clock_info(h->dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
        s->mem_mhz = v;
    if (h && h->temperature && h->temperature(h->dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
        s->temp_c = v;
    if (h && h->power_usage && h->power_usage(h->dev, &v) == NVML_SUCCESS)
        s->power_w = (double)v / 1000.0;
    unsigned long long mask = 0;
    if (h && h->reasons && h->reasons(h->dev, &mask) == NVML_SUCCESS) {
        s->has_throttle = 1;
        s->throttle_mask = mask;
        reasons_names(mask, &s->throttle_reasons);
    }
    nvmlPstates_t ps = NVML_PSTATE_UNKNOWN;
    if (h && h->pstate && h->pstate(h->dev, &ps) == NVML_SUCCESS && ps >= 0 &&
        ps < NVML_PSTATE_UNKNOWN)
        s->pstate = ps;
}

/* A copy of at most len bytes of s that is valid UTF-8, or NULL (not UTF-8, or NULL). */
static char *str_or_null(const char *s, size_t len) {
    if (!s) return NULL;
    size_t n = strnlen(s, len);
    char *c = dt_xmalloc(n + 1);
    memcpy(c, s, n);
    c[n] = 0;
    if (!dt_clocks_utf8_valid(c)) {
        free(c);
        return NULL;
    }
    return c;
}

void dt_clocks_describe(dt_clocks *h, dt_nvml *n) {
    char buf[256];
    n->has_description = 1;
    dt_record_set_str(&n->library, NULL);
    n->library = h ? str_or_null(h->library, sizeof h->library) : NULL;
    n->device_index = h ? h->device_index : DT_NULL_I64;
#define DEV_STRING(field, fn)                                                              \
    free(n->field);                                                                        \
    n->field = h && h->fn && h->fn(h->dev, buf, sizeof buf) == NVML_SUCCESS                 \
                   ? str_or_null(buf, sizeof buf)                                          \
                   : NULL
#define SYS_STRING(field, fn)                                                              \
    free(n->field);                                                                        \
    n->field = h && h->fn && h->fn(buf, sizeof buf) == NVML_SUCCESS                         \
                   ? str_or_null(buf, sizeof buf)                                          \
                   : NULL
    DEV_STRING(name, name);
    DEV_STRING(uuid, uuid);
    SYS_STRING(driver_version, driver_version);
    SYS_STRING(nvml_version, nvml_version);
#undef DEV_STRING
#undef SYS_STRING
    /* generous room in case a later version grows the struct */
    union {
        nvmlPciInfo_t pci;
        char pad[512];
    } u;
    memset(&u, 0, sizeof u);
    free(n->pci_bus_id);
    n->pci_bus_id = NULL;
    n->pci_bus = DT_NULL_I64;
    if (h && h->pci_info && h->pci_info(h->dev, &u.pci) == NVML_SUCCESS) {
        n->pci_bus_id = str_or_null(u.pci.busId, sizeof u.pci.busId);
        n->pci_bus = u.pci.bus;
    }
}

/* ---- the rule ---- */

/* Appends "; "-separated text to why. */
static void why_add(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void why_add(char *why, size_t len, const char *fmt, ...) {
    if (!why || len == 0)
        return;
    size_t n = strnlen(why, len);
    if (n + 1 >= len)
        return;
    if (n > 0) {
        snprintf(why + n, len - n, "; ");
        n = strnlen(why, len);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + n, len - n, fmt, ap);
    va_end(ap);
}

/* Appends name to buf (", "-separated) unless it is harmless; counts it in *n. */
static void bad_reason_add(const char *name, char *buf, size_t len, size_t *used, int *n) {
    if (!name || strcmp(name, "gpu_idle") == 0 || strcmp(name, "applications_clocks_setting") == 0)
        return;
    int k = snprintf(buf + *used, len - *used, "%s%s", *n ? ", " : "", name);
    if (k > 0 && (size_t)k < len - *used) *used += (size_t)k;
    (*n)++;
}

/* Writes the reasons of snapshot s other than gpu_idle and applications_clocks_setting
 * into buf (", "-separated); returns how many. The mask decides when it was read, else
 * the names. */
static int bad_reasons(const dt_clock_snapshot *s, char *buf, size_t len) {
    buf[0] = 0;
    int n = 0;
    size_t used = 0;
    if (s->has_throttle) {
        dt_strv names = {0};
        reasons_names(s->throttle_mask, &names);
        for (size_t i = 0; i < names.n; i++) bad_reason_add(names.v[i], buf, len, &used, &n);
        dt_strv_free(&names);
        return n;
    }
    for (size_t i = 0; i < s->throttle_reasons.n; i++)
        bad_reason_add(s->throttle_reasons.v[i], buf, len, &used, &n);
    return n;
}

int dt_clocks_moved(const dt_clock_snapshot *before, const dt_clock_snapshot *after, char *why,
                    size_t len) {
    if (why && len)
        why[0] = 0;
    if (!before || !after) {
        why_add(why, len, "%s", !before ? "no reading before" : "no reading after");
        return 0;
    }
    int moved = 0;
    if (before->sm_mhz != DT_NULL_I64 && after->sm_mhz != DT_NULL_I64) {
        double b = (double)before->sm_mhz, a = (double)after->sm_mhz;
        double rel = b > 0 ? (a - b) / b : (a != b ? INFINITY : 0);
        if (fabs(rel) > DT_CLOCKS_SM_TOLERANCE) {
            moved = 1;
            if (isfinite(rel))
                why_add(why, len, "SM clock %.0f→%.0f MHz (%+.1f%%)", b, a, 100 * rel);
            else
                why_add(why, len, "SM clock %.0f→%.0f MHz", b, a);
        }
    }
    if (before->mem_mhz != DT_NULL_I64 && after->mem_mhz != DT_NULL_I64 &&
        after->mem_mhz != before->mem_mhz) {
        moved = 1;
        why_add(why, len, "memory clock %lld→%lld MHz", (long long)before->mem_mhz,
                (long long)after->mem_mhz);
    }
    if (before->temp_c != DT_NULL_I64 && after->temp_c != DT_NULL_I64 &&
        after->temp_c - before->temp_c > DT_CLOCKS_MAX_TEMP_RISE_C) {
        moved = 1;
        why_add(why, len, "temperature rose %lld→%lld °C", (long long)before->temp_c,
                (long long)after->temp_c);
    }
    char rb[400];
    if (bad_reasons(before, rb, sizeof rb) > 0) {
        moved = 1;
        why_add(why, len, "before: %s", rb);
    }
    if (bad_reasons(after, rb, sizeof rb) > 0) {
        moved = 1;
        why_add(why, len, "after: %s", rb);
    }
    return moved;
}

int dt_clocks_utf8_valid(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p >> 5) == 6 ? 1 : (*p >> 4) == 14 ? 2 : (*p >> 3) == 30 ? 3 : -1;
        if (n < 0) return 0;
        p++;
        for (int i = 0; i < n; i++, p++)
            if ((*p & 0xC0) != 0x80) return 0;
    }
    return 1;
}

/* why cut to valid UTF-8: a multi-byte character cut by truncation is dropped. */
static char *why_text(const char *why) {
    size_t n = strlen(why);
    char *c = dt_xstrdup(why);
    for (int k = 0; k < 4 && n > 0; k++, n--) {
        c[n] = 0;
        if (dt_clocks_utf8_valid(c)) return c;
    }
    c[0] = 0;
    return c;
}

void dt_clocks_record(dt_case *c, int round, dt_clock_snapshot *before, dt_clock_snapshot *after) {
    char why[512];
    int moved = dt_clocks_moved(before, after, why, sizeof why);
    dt_clock_round cr;
    memset(&cr, 0, sizeof cr);
    cr.round = round;
    cr.has_before = before != NULL;
    cr.has_after = after != NULL;
    if (before) cr.before = *before;
    else dt_clocks_snapshot_init(&cr.before);
    if (after) cr.after = *after;
    else dt_clocks_snapshot_init(&cr.after);
    cr.moved = moved;
    cr.why = why_text(why);
    dt_case_clock_round_add(c, &cr);
    /* the snapshots' arrays belong to the case now */
    if (before) dt_clocks_snapshot_init(before);
    if (after) dt_clocks_snapshot_init(after);
}

void dt_clocks_snapshot_free(dt_clock_snapshot *s) {
    dt_strv_free(&s->throttle_reasons);
    dt_clocks_snapshot_init(s);
}

/* ---- energy ---- */

int dt_clocks_energy_mj(dt_clocks *h, unsigned long long *mj, char *why, size_t len) {
    if (!h) {
        if (why) snprintf(why, len, "NVML not open");
        return 0;
    }
    if (!h->energy) {
        if (why) snprintf(why, len, "NVML has no energy counter");
        return 0;
    }
    nvmlReturn_t r = h->energy(h->dev, mj);
    if (r != NVML_SUCCESS) {
        char eb[128];
        if (why)
            snprintf(why, len, "NVML has no energy counter (nvmlDeviceGetTotalEnergyConsumption: %s)",
                     nvml_err(h, r, eb, sizeof eb));
        return 0;
    }
    return 1;
}
