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

static long long ival(const json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

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

    json_t *b = dt_clocks_read(h);
    CHECK(ival(b, "sm_mhz") == 1980 && ival(b, "mem_mhz") == 2619 && ival(b, "temp_c") == 38);
    CHECK(fabs(json_number_value(json_object_get(b, "power_w")) - 123.456) < 1e-9);
    CHECK(ival(b, "throttle_mask") == 0 && json_array_size(json_object_get(b, "throttle_reasons")) == 0);
    CHECK(ival(b, "pstate") == 0);

    /* the GPU ran hot and capped its power: the same rule as on constructed JSON */
    setenv("FAKE_NVML_SM", "1755", 1);
    setenv("FAKE_NVML_TEMP", "52", 1);
    setenv("FAKE_NVML_REASONS", "0x5", 1); /* gpu_idle | sw_power_cap */
    json_t *a = dt_clocks_read(h);
    const json_t *rs = json_object_get(a, "throttle_reasons");
    CHECK(json_array_size(rs) == 2 && strcmp(json_string_value(json_array_get(rs, 0)), "gpu_idle") == 0 &&
          strcmp(json_string_value(json_array_get(rs, 1)), "sw_power_cap") == 0);
    CHECK(dt_clocks_moved(b, a, why, sizeof why) == 1);
    CHECK_MSG(strcmp(why, "SM clock 1980→1755 MHz (-11.4%); temperature rose 38→52 °C; "
                          "after: sw_power_cap") == 0, why);
    json_decref(a);

    /* failing queries read null, the others still read */
    setenv("FAKE_NVML_POWER_MW", "fail", 1);
    setenv("FAKE_NVML_REASONS", "fail", 1);
    setenv("FAKE_NVML_PSTATE", "32", 1); /* NVML_PSTATE_UNKNOWN */
    a = dt_clocks_read(h);
    CHECK(json_is_null(json_object_get(a, "power_w")) && json_is_null(json_object_get(a, "throttle_mask")) &&
          json_is_null(json_object_get(a, "throttle_reasons")) && json_is_null(json_object_get(a, "pstate")));
    CHECK(ival(a, "sm_mhz") == 1755);
    json_decref(a);
    json_decref(b);

    json_t *d = dt_clocks_describe(h);
    CHECK(strcmp(json_string_value(json_object_get(d, "name")), "Fake H200") == 0);
    CHECK(strcmp(json_string_value(json_object_get(d, "driver_version")), "580.159.04") == 0);
    CHECK(strcmp(json_string_value(json_object_get(d, "pci_bus_id")), "00000000:1B:00.0") == 0);
    CHECK(ival(d, "pci_bus") == 0x1b && ival(d, "device_index") == 0);
    CHECK(strstr(json_string_value(json_object_get(d, "library")), "fake_nvml") != NULL);
    json_decref(d);
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
