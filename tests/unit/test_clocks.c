/* test_clocks.c — the clocks-moved rule (dt_clocks_moved) on hand-built snapshots, the
 * per-round record in a typed case (dt_clocks_record), and dt_clocks_open failing politely
 * where NVML is absent (this machine) or succeeding where it is present. No GPU needed.
 * Run: ctest -R test_clocks. */
#define _GNU_SOURCE
#include "../dt_check.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "orchestrate/dt_clocks.h"

#include <stdlib.h>

/* A snapshot (heap, so a test can pass it like the old JSON objects); negative numbers
 * mean null; mask < 0: no throttle reading. */
static dt_clock_snapshot *snap(int sm, int mem, int temp, double power, long long mask) {
    dt_clock_snapshot *o = malloc(sizeof *o);
    dt_clocks_snapshot_init(o);
    if (sm >= 0) o->sm_mhz = sm;
    if (mem >= 0) o->mem_mhz = mem;
    if (temp >= 0) o->temp_c = temp;
    if (power >= 0) o->power_w = power;
    if (mask >= 0) {
        o->has_throttle = 1;
        o->throttle_mask = (uint64_t)mask; /* the mask decides */
    }
    o->pstate = 0;
    return o;
}

static void snap_free(dt_clock_snapshot *s) {
    if (!s) return;
    dt_clocks_snapshot_free(s);
    free(s);
}

/* moved(before, after) with both consumed; checks the verdict and that why contains
 * needle ("" = why must be empty). */
static void expect(dt_clock_snapshot *before, dt_clock_snapshot *after, int want,
                   const char *needle, int line) {
    char why[512];
    int got = dt_clocks_moved(before, after, why, sizeof why);
    char msg[700];
    snprintf(msg, sizeof msg, "line %d: moved=%d why=\"%s\"", line, got, why);
    CHECK_MSG(got == want, msg);
    if (*needle)
        CHECK_MSG(strstr(why, needle) != NULL, msg);
    else
        CHECK_MSG(why[0] == 0, msg);
    snap_free(before);
    snap_free(after);
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
    dt_clock_snapshot *b = snap(1980, 2619, 40, 300, 0), *a = snap(1500, 1593, 60, 700, 0x4);
    CHECK(dt_clocks_moved(b, a, why, sizeof why) == 1);
    CHECK_MSG(strcmp(why, "SM clock 1980→1500 MHz (-24.2%); memory clock 2619→1593 MHz; "
                          "temperature rose 40→60 °C; after: sw_power_cap") == 0, why);
    /* a tiny buffer truncates but never overflows; NULL why is fine */
    char tiny[8];
    CHECK(dt_clocks_moved(b, a, tiny, sizeof tiny) == 1 && strlen(tiny) < sizeof tiny);
    CHECK(dt_clocks_moved(b, a, NULL, 0) == 1);
    snap_free(b);
    snap_free(a);
    /* null fields are not compared */
    EXPECT(snap(-1, -1, -1, -1, -1), snap(1000, 1000, 90, 700, -1), 0, "");
    EXPECT(snap(1980, -1, 40, -1, -1), snap(1500, 2619, -1, -1, -1), 1, "SM clock");
    /* no mask: the names decide */
    b = snap(1980, 2619, 40, 300, -1);
    a = snap(1980, 2619, 40, 300, -1);
    dt_strv_push(&b->throttle_reasons, "gpu_idle");
    dt_strv_push(&a->throttle_reasons, "applications_clocks_setting");
    dt_strv_push(&a->throttle_reasons, "sw_power_cap");
    EXPECT(b, a, 1, "after: sw_power_cap");
    b = snap(1980, 2619, 40, 300, -1);
    dt_strv_push(&b->throttle_reasons, "gpu_idle");
    EXPECT(b, snap(1980, 2619, 40, 300, -1), 0, "");
    /* a missing snapshot never counts as moved */
    EXPECT(NULL, snap(1980, 2619, 40, 300, 0), 0, "no reading before");
    EXPECT(snap(1980, 2619, 40, 300, 0), NULL, 0, "no reading after");
    /* SM from 0 */
    EXPECT(snap(0, 2619, 40, 300, 0), snap(1980, 2619, 40, 300, 0), 1, "SM clock 0→1980 MHz");
}

/* Records one round into c (the snapshots are consumed). */
static void record(dt_case *c, int round, dt_clock_snapshot *before, dt_clock_snapshot *after) {
    dt_clocks_record(c, round, before, after);
    snap_free(before);
    snap_free(after);
}

static size_t rounds_moved(const dt_case *c) {
    size_t n = 0;
    for (size_t i = 0; i < c->n_clock_rounds; i++) n += c->clock_rounds[i].moved != 0;
    return n;
}

static void test_record(void) {
    dt_record *r = dt_record_new();
    dt_record_impl_add(r, "torch", DT_ROLE_BASELINE);
    dt_case *c = dt_record_case_add(r, "add_1x1");
    /* round 0 steady */
    record(c, 0, snap(1980, 2619, 40, 300, 0), snap(1980, 2619, 41, 320, 0));
    const dt_clock_round *cl = dt_case_clock_shown(c);
    CHECK(!c->clocks_moved);
    CHECK(cl && !cl->moved);
    CHECK(cl && strcmp(cl->why, "") == 0);
    CHECK(cl && cl->has_after && cl->after.temp_c == 41);
    CHECK(c->n_clock_rounds == 1);
    /* round 1 moved: the summary shows it */
    record(c, 1, snap(1980, 2619, 41, 300, 0), snap(1700, 2619, 42, 690, 0x4));
    cl = dt_case_clock_shown(c);
    CHECK(c->clocks_moved);
    CHECK(cl && cl->moved);
    CHECK(cl && cl->round == 1);
    CHECK(cl && strstr(cl->why, "after: sw_power_cap") != NULL);
    CHECK(cl && cl->after.sm_mhz == 1700);
    /* round 2 steady again: the case stays moved, the summary keeps round 1 */
    record(c, 2, snap(1980, 2619, 41, 300, 0), snap(1980, 2619, 42, 300, 0));
    cl = dt_case_clock_shown(c);
    CHECK(c->clocks_moved);
    CHECK(cl && cl->round == 1);
    CHECK(rounds_moved(c) == 1);
    CHECK(c->n_clock_rounds == 3);
    /* missing readings are recorded as null and never count as moved */
    dt_case *d = dt_record_case_add(r, "x");
    c = &r->cases[0]; /* the add may have moved the array */
    record(d, 0, NULL, snap(1980, 2619, 40, 300, 0));
    const dt_clock_round *dl = dt_case_clock_shown(d);
    CHECK(!d->clocks_moved);
    CHECK(dl && !dl->has_before);
    CHECK(dl && strcmp(dl->why, "no reading before") == 0);
    /* the record serializes (valid UTF-8 everywhere) */
    CHECK(dt_clocks_utf8_valid(c->clock_rounds[1].why) &&
          strstr(c->clock_rounds[1].why, "1980→1700") != NULL);
    dt_record_free(r);
}

static void test_open(void) {
    char why[512];
    /* a negative index is refused before any library is loaded */
    why[0] = 0;
    CHECK(dt_clocks_open(-1, why, sizeof why) == NULL);
    CHECK_MSG(strstr(why, "negative") != NULL, why);
    /* reading or closing nothing is harmless */
    dt_clock_snapshot r;
    dt_clocks_read(NULL, &r);
    CHECK(r.sm_mhz == DT_NULL_I64 && r.pstate == DT_NULL_I64 && !r.has_throttle &&
          r.throttle_reasons.n == 0);
    dt_clocks_snapshot_free(&r);
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
        dt_clock_snapshot s;
        dt_clocks_read(h, &s);
        printf("NVML present: sm %lld MHz, mem %lld MHz, %lld C, %.1f W, mask %llu, P%lld\n",
               (long long)s.sm_mhz, (long long)s.mem_mhz, (long long)s.temp_c, s.power_w,
               (unsigned long long)s.throttle_mask, (long long)s.pstate);
        /* every field was read (a snapshot has every field) */
        CHECK_MSG(s.sm_mhz != DT_NULL_I64, "sm_mhz");
        CHECK_MSG(s.mem_mhz != DT_NULL_I64, "mem_mhz");
        CHECK_MSG(s.temp_c != DT_NULL_I64, "temp_c");
        CHECK_MSG(!isnan(s.power_w), "power_w");
        CHECK_MSG(s.has_throttle, "throttle_mask");
        CHECK_MSG(s.pstate != DT_NULL_I64, "pstate");
        dt_clocks_snapshot_free(&s);
        dt_record *rd = dt_record_new();
        dt_clocks_describe(h, &rd->env.nvml);
        CHECK(rd->env.nvml.library != NULL);
        dt_record_free(rd);
        dt_clocks_close(h);
    }
}

int main(void) {
    test_rule();
    test_record();
    test_open();
    return dt_check_summary("test_clocks");
}
