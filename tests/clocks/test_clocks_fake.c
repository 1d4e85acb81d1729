/* test_clocks_fake.c — dt_clocks end to end against a fake NVML (fake_nvml.c) named by
 * DT_NVML_LIBRARY: open, snapshots that follow the fake's values, fields that read null
 * when a query fails, the moved rule on two real snapshots, describe, init failures
 * with their reasons, and close releasing NVML. Run: ctest -R test_clocks_fake
 * (argument: the fake library's path). */
#define _GNU_SOURCE
#include "../dt_check.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "orchestrate/dt_clocks.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <math.h>

static int str_is(const char *s, const char *want) { return s && strcmp(s, want) == 0; }

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_clocks_fake /path/to/libdt_fake_nvml.so\n");
        return 2;
    }
    setenv("DT_NVML_LIBRARY", argv[1], 1);
    void *fake = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL); /* same instance dt_clocks gets */
    CHECK_MSG(fake != NULL, dlerror());
    if (!fake) return dt_check_summary("test_clocks_fake");
    int *inits = (int *)dlsym(fake, "fake_nvml_inits");
    CHECK(inits != NULL && *inits == 0);

    char why[512] = "";
    dt_clocks *h = dt_clocks_open(0, why, sizeof why);
    CHECK_MSG(h != NULL, why);
    if (!h) return dt_check_summary("test_clocks_fake");
    CHECK(*inits == 1);

    dt_clock_snapshot b, a;
    dt_clocks_read(h, &b);
    CHECK(b.sm_mhz == 1980 && b.mem_mhz == 2619 && b.temp_c == 38);
    CHECK(fabs(b.power_w - 123.456) < 1e-9);
    CHECK(b.has_throttle && b.throttle_mask == 0 && b.throttle_reasons.n == 0);
    CHECK(b.pstate == 0);

    /* the energy counter (issue 15): mJ, increasing; absent on a GPU without it */
    unsigned long long e0 = 0, e1 = 0;
    CHECK(dt_clocks_energy_mj(h, &e0, why, sizeof why) == 1 && e0 == 1000000);
    CHECK(dt_clocks_energy_mj(h, &e1, why, sizeof why) == 1 && e1 == e0 + 40);
    setenv("FAKE_NVML_ENERGY", "fail", 1);
    CHECK(dt_clocks_energy_mj(h, &e1, why, sizeof why) == 0);
    CHECK_MSG(strncmp(why, "NVML has no energy counter", 26) == 0, why);
    unsetenv("FAKE_NVML_ENERGY");
    CHECK(dt_clocks_energy_mj(NULL, &e1, why, sizeof why) == 0 && str_is(why, "NVML not open"));

    /* the GPU ran hot and capped its power: the same rule as on constructed snapshots */
    setenv("FAKE_NVML_SM", "1755", 1);
    setenv("FAKE_NVML_TEMP", "52", 1);
    setenv("FAKE_NVML_REASONS", "0x5", 1); /* gpu_idle | sw_power_cap */
    dt_clocks_read(h, &a);
    const dt_strv *rs = &a.throttle_reasons;
    CHECK(rs->n == 2 && strcmp(rs->v[0], "gpu_idle") == 0 && strcmp(rs->v[1], "sw_power_cap") == 0);
    CHECK(dt_clocks_moved(&b, &a, why, sizeof why) == 1);
    CHECK_MSG(strcmp(why, "SM clock 1980→1755 MHz (-11.4%); temperature rose 38→52 °C; "
                          "after: sw_power_cap") == 0, why);
    dt_clocks_snapshot_free(&a);

    /* failing queries read null, the others still read */
    setenv("FAKE_NVML_POWER_MW", "fail", 1);
    setenv("FAKE_NVML_REASONS", "fail", 1);
    setenv("FAKE_NVML_PSTATE", "32", 1); /* NVML_PSTATE_UNKNOWN */
    dt_clocks_read(h, &a);
    CHECK(isnan(a.power_w) && !a.has_throttle && a.throttle_reasons.n == 0 &&
          a.pstate == DT_NULL_I64);
    CHECK(a.sm_mhz == 1755);
    dt_clocks_snapshot_free(&a);
    dt_clocks_snapshot_free(&b);

    dt_record *r = dt_record_new();
    dt_nvml *d = &r->env.nvml;
    dt_clocks_describe(h, d);
    CHECK(str_is(d->name, "Fake H200"));
    CHECK(str_is(d->driver_version, "580.159.04"));
    CHECK(str_is(d->pci_bus_id, "00000000:1B:00.0"));
    CHECK(d->pci_bus == 0x1b && d->device_index == 0);
    CHECK(d->library && strstr(d->library, "fake_nvml") != NULL);
    dt_record_free(r);
    dt_clocks_close(h);
    CHECK(*inits == 0);

    /* a device that does not exist: NULL, the reason, NVML released */
    why[0] = 0;
    CHECK(dt_clocks_open(3, why, sizeof why) == NULL);
    CHECK_MSG(strstr(why, "nvmlDeviceGetHandleByIndex_v2(3) failed: Invalid Argument (2)") != NULL, why);
    CHECK(*inits == 0);
    /* init fails (no driver) */
    setenv("FAKE_NVML_INIT", "fail", 1);
    CHECK(dt_clocks_open(0, why, sizeof why) == NULL);
    CHECK_MSG(strstr(why, "nvmlInit_v2 failed") && strstr(why, "Driver Not Loaded (9)"), why);
    CHECK(*inits == 0);
    dlclose(fake);
    return dt_check_summary("test_clocks_fake");
}
