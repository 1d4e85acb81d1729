/* test_clocks.c — the clocks-moved rule (dt_clocks_moved) on hand-built snapshots, the
 * per-round record in a case (dt_clocks_record), and dt_clocks_open failing politely
 * where NVML is absent (this machine) or succeeding where it is present. No GPU needed.
 * Run: ctest -R test_clocks. */
#define _GNU_SOURCE
#include "../dt_check.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "orchestrate/dt_clocks.h"

#include <stdlib.h>

/* A snapshot; negative numbers mean null; mask < 0: reasons null. */
static json_t *snap(int sm, int mem, int temp, double power, long long mask) {
    json_t *o = json_object();
    json_object_set_new(o, "sm_mhz", sm >= 0 ? json_integer(sm) : json_null());
    json_object_set_new(o, "mem_mhz", mem >= 0 ? json_integer(mem) : json_null());
    json_object_set_new(o, "temp_c", temp >= 0 ? json_integer(temp) : json_null());
    json_object_set_new(o, "power_w", power >= 0 ? json_real(power) : json_null());
    json_object_set_new(o, "throttle_mask", mask >= 0 ? json_integer(mask) : json_null());
    json_object_set_new(o, "throttle_reasons", json_null()); /* the mask decides */
    json_object_set_new(o, "pstate", json_integer(0));
    return o;
}

/* moved(before, after) with both consumed; checks the verdict and that why contains
 * needle ("" = why must be empty). */
static void expect(json_t *before, json_t *after, int want, const char *needle, int line) {
    char why[512];
    int got = dt_clocks_moved(before, after, why, sizeof why);
    char msg[700];
    snprintf(msg, sizeof msg, "line %d: moved=%d why=\"%s\"", line, got, why);
    CHECK_MSG(got == want, msg);
    if (*needle)
        CHECK_MSG(strstr(why, needle) != NULL, msg);
    else
        CHECK_MSG(why[0] == 0, msg);
    json_decref(before);
    json_decref(after);
}
#define EXPECT(b, a, want, needle) expect((b), (a), (want), (needle), __LINE__)

static void test_rule(void) {
    /* steady */
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(1980, 2619, 45, 650, 0), 0, "");
    /* SM within 2% either way is steady (1980 * 0.98 = 1940.4) */
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(1941, 2619, 40, 300, 0), 0, "");
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(2019, 2619, 40, 300, 0), 0, "");
    /* SM beyond 2% */
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(1935, 2619, 40, 300, 0), 1,
           "SM clock 1980→1935 MHz (-2.3%)");
    EXPECT(snap(1755, 2619, 40, 300, 0), snap(1980, 2619, 40, 300, 0), 1, "(+12.8%)");
    /* memory clock: any change */
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(1980, 2618, 40, 300, 0), 1,
           "memory clock 2619→2618 MHz");
    /* temperature: a rise of 10 °C is fine, 11 is not, a fall never counts */
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(1980, 2619, 50, 300, 0), 0, "");
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(1980, 2619, 51, 300, 0), 1,
           "temperature rose 40→51 °C");
    EXPECT(snap(1980, 2619, 70, 300, 0), snap(1980, 2619, 40, 300, 0), 0, "");
    /* idle and applications-clocks-setting reasons are harmless */
    EXPECT(snap(1980, 2619, 40, 300, 0x1), snap(1980, 2619, 40, 300, 0x3), 0, "");
    /* any other reason in either snapshot */
    EXPECT(snap(1980, 2619, 40, 300, 0x4), snap(1980, 2619, 40, 300, 0), 1, "before: sw_power_cap");
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(1980, 2619, 40, 300, 0x1 | 0x8 | 0x40), 1,
           "after: hw_slowdown, hw_thermal_slowdown");
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(1980, 2619, 40, 300, 0x20), 1,
           "after: sw_thermal_slowdown");
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(1980, 2619, 40, 300, 0x80), 1,
           "hw_power_brake_slowdown");
    EXPECT(snap(1980, 2619, 40, 300, 0), snap(1980, 2619, 40, 300, 0x1000), 1, "other_0x1000");
    /* every finding is listed */
    char why[512];
    json_t *b = snap(1980, 2619, 40, 300, 0), *a = snap(1500, 1593, 60, 700, 0x4);
    CHECK(dt_clocks_moved(b, a, why, sizeof why) == 1);
    CHECK_MSG(strcmp(why, "SM clock 1980→1500 MHz (-24.2%); memory clock 2619→1593 MHz; "
                          "temperature rose 40→60 °C; after: sw_power_cap") == 0, why);
    /* a tiny buffer truncates but never overflows; NULL why is fine */
    char tiny[8];
    CHECK(dt_clocks_moved(b, a, tiny, sizeof tiny) == 1 && strlen(tiny) < sizeof tiny);
    CHECK(dt_clocks_moved(b, a, NULL, 0) == 1);
    json_decref(b);
    json_decref(a);
    /* null fields are not compared */
    EXPECT(snap(-1, -1, -1, -1, -1), snap(1000, 1000, 90, 700, -1), 0, "");
    EXPECT(snap(1980, -1, 40, -1, -1), snap(1500, 2619, -1, -1, -1), 1, "SM clock");
    /* no mask: the names decide */
    b = snap(1980, 2619, 40, 300, -1);
    a = snap(1980, 2619, 40, 300, -1);
    json_object_set_new(b, "throttle_reasons", json_pack("[s]", "gpu_idle"));
    json_object_set_new(a, "throttle_reasons", json_pack("[s,s]", "applications_clocks_setting",
                                                         "sw_power_cap"));
    EXPECT(b, a, 1, "after: sw_power_cap");
    b = snap(1980, 2619, 40, 300, -1);
    json_object_set_new(b, "throttle_reasons", json_pack("[s]", "gpu_idle"));
    EXPECT(b, snap(1980, 2619, 40, 300, -1), 0, "");
    /* a missing snapshot never counts as moved */
    EXPECT(NULL, snap(1980, 2619, 40, 300, 0), 0, "no reading before");
    EXPECT(snap(1980, 2619, 40, 300, 0), json_null(), 0, "no reading after");
    /* SM from 0 */
    EXPECT(snap(0, 2619, 40, 300, 0), snap(1980, 2619, 40, 300, 0), 1, "SM clock 0→1980 MHz");
}

static void test_record(void) {
    json_t *c = json_pack("{s:s}", "id", "add_1x1");
    /* round 0 steady */
    dt_clocks_record(c, 0, snap(1980, 2619, 40, 300, 0), snap(1980, 2619, 41, 320, 0));
    json_t *cl = json_object_get(c, "clocks");
    CHECK(json_is_false(json_object_get(c, "clocks_moved")));
    CHECK(json_is_false(json_object_get(cl, "moved")));
    CHECK(strcmp(json_string_value(json_object_get(cl, "why")), "") == 0);
    CHECK(json_integer_value(json_object_get(json_object_get(cl, "after"), "temp_c")) == 41);
    CHECK(json_array_size(json_object_get(cl, "rounds")) == 1);
    /* round 1 moved: the summary shows it */
    dt_clocks_record(c, 1, snap(1980, 2619, 41, 300, 0), snap(1700, 2619, 42, 690, 0x4));
    CHECK(json_is_true(json_object_get(c, "clocks_moved")));
    CHECK(json_is_true(json_object_get(cl, "moved")));
    CHECK(json_integer_value(json_object_get(cl, "round")) == 1);
    CHECK(strstr(json_string_value(json_object_get(cl, "why")), "after: sw_power_cap") != NULL);
    CHECK(json_integer_value(json_object_get(json_object_get(cl, "after"), "sm_mhz")) == 1700);
    /* round 2 steady again: the case stays moved, the summary keeps round 1 */
    dt_clocks_record(c, 2, snap(1980, 2619, 41, 300, 0), snap(1980, 2619, 42, 300, 0));
    CHECK(json_is_true(json_object_get(c, "clocks_moved")));
    CHECK(json_integer_value(json_object_get(cl, "round")) == 1);
    CHECK(json_integer_value(json_object_get(cl, "rounds_moved")) == 1);
    CHECK(json_array_size(json_object_get(cl, "rounds")) == 3);
    /* missing readings are recorded as null and never count as moved */
    json_t *d = json_pack("{s:s}", "id", "x");
    dt_clocks_record(d, 0, NULL, snap(1980, 2619, 40, 300, 0));
    CHECK(json_is_false(json_object_get(d, "clocks_moved")));
    CHECK(json_is_null(json_object_get(json_object_get(d, "clocks"), "before")));
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(d, "clocks"), "why")),
                 "no reading before") == 0);
    /* the record serializes (valid UTF-8 everywhere) */
    char *s = json_dumps(c, 0);
    CHECK(s != NULL && strstr(s, "1980→1700") != NULL);
    free(s);
    json_decref(c);
    json_decref(d);
}

static void test_open(void) {
    char why[512];
    /* a negative index is refused before any library is loaded */
    why[0] = 0;
    CHECK(dt_clocks_open(-1, why, sizeof why) == NULL);
    CHECK_MSG(strstr(why, "negative") != NULL, why);
    /* reading or closing nothing is harmless */
    json_t *r = dt_clocks_read(NULL);
    CHECK(json_is_null(json_object_get(r, "sm_mhz")) && json_is_null(json_object_get(r, "pstate")) &&
          json_is_null(json_object_get(r, "throttle_reasons")));
    json_decref(r);
    dt_clocks_close(NULL);
    /* a library that is not NVML: refused with a reason (libm has no nvmlInit_v2) */
    setenv("DT_NVML_LIBRARY", "libm.so.6", 1);
    dt_clocks *h = dt_clocks_open(0, why, sizeof why);
    if (h) {
        dt_clocks_close(h); /* a real NVML was found first? no: env is tried first */
        CHECK_MSG(0, "libm.so.6 opened as NVML");
    } else {
        CHECK_MSG(strstr(why, "lacks nvmlInit_v2") != NULL, why);
    }
    /* the real search: absent here (NULL + a reason naming the paths), present on a
     * GPU machine (then a snapshot has every field) */
    unsetenv("DT_NVML_LIBRARY");
    why[0] = 0;
    h = dt_clocks_open(0, why, sizeof why);
    if (!h) {
        printf("NVML absent: %s\n", why);
        CHECK_MSG(strstr(why, "libnvidia-ml.so.1") != NULL || strstr(why, "nvml") != NULL, why);
        CHECK_MSG(strstr(why, "/usr/local/nvidia/lib64") != NULL ||
                      strstr(why, "nvmlInit_v2") != NULL ||
                      strstr(why, "nvmlDeviceGetHandleByIndex_v2") != NULL, why);
        /* a tiny or absent buffer is fine */
        char tiny[4];
        CHECK(dt_clocks_open(0, tiny, sizeof tiny) == NULL && strlen(tiny) < sizeof tiny);
        CHECK(dt_clocks_open(0, NULL, 0) == NULL);
    } else {
        json_t *s = dt_clocks_read(h);
        char *t = json_dumps(s, JSON_COMPACT);
        printf("NVML present: %s\n", t);
        free(t);
        const char *keys[] = {"sm_mhz", "mem_mhz", "temp_c", "power_w", "throttle_reasons",
                              "throttle_mask", "pstate"};
        for (size_t i = 0; i < 7; i++)
            CHECK_MSG(json_object_get(s, keys[i]) != NULL, keys[i]);
        json_decref(s);
        json_t *d = dt_clocks_describe(h);
        CHECK(json_is_string(json_object_get(d, "library")));
        json_decref(d);
        dt_clocks_close(h);
    }
}

int main(void) {
    test_rule();
    test_record();
    test_open();
    return dt_check_summary("test_clocks");
}
