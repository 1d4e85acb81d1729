/* fake_nvml.c — a stand-in for libnvidia-ml.so.1 for tests/clocks/test_clocks_fake.c.
 * Values come from environment variables read at every call, so the test can change
 * them between snapshots: FAKE_NVML_SM, FAKE_NVML_MEM (MHz), FAKE_NVML_TEMP (°C),
 * FAKE_NVML_POWER_MW, FAKE_NVML_REASONS (mask), FAKE_NVML_PSTATE; a variable set to
 * "fail" makes that query return NVML_ERROR_NOT_SUPPORTED (3). FAKE_NVML_INIT=fail
 * makes nvmlInit_v2 fail with NVML_ERROR_DRIVER_NOT_LOADED (9); FAKE_NVML_DEVICES is the
 * device count (default 1; device i has UUID GPU-<i, 8 hex digits>-fake and PCI bus
 * 0x1b + i). The counter of live inits is exported for the test.
 * nvmlDeviceGetTotalEnergyConsumption: a counter (mJ) that starts at FAKE_NVML_ENERGY_MJ
 * (default 1000000) and grows by FAKE_NVML_ENERGY_STEP_MJ (default 40) at every read;
 * FAKE_NVML_ENERGY=fail makes it return NOT_SUPPORTED (a GPU without the counter). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

int fake_nvml_inits; /* nvmlInit_v2 minus nvmlShutdown */

static int value(const char *var, unsigned long long dflt, unsigned long long *out) {
    const char *s = getenv(var);
    if (s && strcmp(s, "fail") == 0) return 3;
    *out = s ? strtoull(s, NULL, 0) : dflt;
    return 0;
}

int nvmlInit_v2(void) {
    const char *s = getenv("FAKE_NVML_INIT");
    if (s && strcmp(s, "fail") == 0) return 9;
    fake_nvml_inits++;
    return 0;
}
int nvmlShutdown(void) {
    fake_nvml_inits--;
    return 0;
}
const char *nvmlErrorString(int r) {
    return r == 9 ? "Driver Not Loaded" : r == 2 ? "Invalid Argument" : "Not Supported";
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **dev) {
    unsigned long long n = 1;
    value("FAKE_NVML_DEVICES", 1, &n);
    if (index >= n) return 2;
    *dev = (void *)(size_t)(0x1000 + index);
    return 0;
}
int nvmlDeviceGetClockInfo(void *dev, int type, unsigned int *mhz) {
    unsigned long long v;
    int r = type == 1 ? value("FAKE_NVML_SM", 1980, &v) : type == 2 ? value("FAKE_NVML_MEM", 2619, &v) : 2;
    if (r == 0) *mhz = (unsigned int)v;
    return r;
}
int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned int *c) {
    unsigned long long v;
    int r = sensor == 0 ? value("FAKE_NVML_TEMP", 38, &v) : 2;
    if (r == 0) *c = (unsigned int)v;
    return r;
}
int nvmlDeviceGetPowerUsage(void *dev, unsigned int *mw) {
    unsigned long long v;
    int r = value("FAKE_NVML_POWER_MW", 123456, &v);
    if (r == 0) *mw = (unsigned int)v;
    return r;
}
int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *mask) {
    return value("FAKE_NVML_REASONS", 0, mask);
}
int nvmlDeviceGetPerformanceState(void *dev, int *p) {
    unsigned long long v;
    int r = value("FAKE_NVML_PSTATE", 0, &v);
    if (r == 0) *p = (int)v;
    return r;
}
int nvmlDeviceGetName(void *dev, char *buf, unsigned int len) {
    snprintf(buf, len, "Fake H200");
    return 0;
}
/* Device i of FAKE_NVML_DEVICES: UUID GPU-<i as 8 hex digits>-fake, PCI bus 0x1b + i. */
static unsigned dev_index(void *dev) { return (unsigned)((size_t)dev - 0x1000); }
int nvmlDeviceGetUUID(void *dev, char *buf, unsigned int len) {
    snprintf(buf, len, "GPU-%08x-fake", dev_index(dev));
    return 0;
}
int nvmlSystemGetDriverVersion(char *buf, unsigned int len) {
    snprintf(buf, len, "580.159.04");
    return 0;
}
int nvmlSystemGetNVMLVersion(char *buf, unsigned int len) {
    snprintf(buf, len, "13.580.159.04");
    return 0;
}
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} fake_pci;
int nvmlDeviceGetPciInfo_v3(void *dev, fake_pci *p) {
    memset(p, 0, sizeof *p);
    p->bus = 0x1b + dev_index(dev);
    snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
    return 0;
}

static unsigned long long g_energy_reads;
int nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj) {
    unsigned long long start = 0, step = 40;
    int r = value("FAKE_NVML_ENERGY", 0, &start);
    if (r != 0) return r;
    value("FAKE_NVML_ENERGY_MJ", 1000000, &start);
    value("FAKE_NVML_ENERGY_STEP_MJ", 40, &step);
    *mj = start + step * g_energy_reads++;
    return 0;
}
