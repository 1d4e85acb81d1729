/* test_affinity.c — CPU pinning (src/common/dt_affinity.h): CPU lists parsed and formatted
 * (ranges, malformed lists refused), the plan (too few CPUs: not pinned with the reason;
 * enough: CPU 0 left, the orchestrator alone on the next, disjoint worker shares capped at
 * the thread count; the cpu backend's rule that a share holds --threads CPUs), and a spawned child inheriting the CPU list it was given
 * (dt_spawn opts.cpus) while the caller's own affinity is restored. Run: ctest -R
 * test_affinity. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../dt_check.h"
#include "common/dt_affinity.h"
#include "common/dt_common.h"
#include "common/dt_spawn.h"

static void test_lists(void) {
    cpu_set_t s;
    char out[DT_PIN_LIST_LEN];
    CHECK(dt_affinity_parse("0,2-4,7", &s) == 0 && CPU_COUNT(&s) == 5 && CPU_ISSET(3, &s) &&
          !CPU_ISSET(1, &s), "0,2-4,7 parsed");
    dt_affinity_format(&s, out, sizeof out);
    CHECK(strcmp(out, "0,2-4,7") == 0, "formatted back: '%s'", out);
    const char *bad[] = {"", "a", "1-", "3-1", "1,,2", "-1", "2 3", "1-2-3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(dt_affinity_parse(bad[i], &s) != 0, "'%s' refused", bad[i]);
    CPU_ZERO(&s);
    dt_affinity_format(&s, out, sizeof out);
    CHECK(out[0] == '\0', "empty set: '%s'", out);
}

static void test_plan(void) {
    int cpus[16];
    for (int i = 0; i < 16; i++) cpus[i] = i;
    dt_pin_plan p;
    dt_affinity_plan(cpus, 2, 2, 8, 0, &p);
    CHECK(!p.pinned && strstr(p.why, "2 usable CPUs") && strstr(p.why, "at least 4"),
          "2 CPUs: not pinned: %s", p.why);
    dt_affinity_plan(cpus, 3, 2, 8, 0, &p);
    CHECK(!p.pinned, "3 CPUs, 2 workers: not pinned");
    dt_affinity_plan(cpus, 4, 2, 8, 0, &p);
    CHECK(p.pinned && strcmp(p.orchestrator, "1") == 0 && strcmp(p.worker[0], "2") == 0 &&
          strcmp(p.worker[1], "3") == 0, "4 CPUs: %s | %s | %s", p.orchestrator, p.worker[0],
          p.worker[1]);
    CHECK(p.spare[0] == '\0', "4 CPUs: no spare: '%s'", p.spare);
    dt_affinity_plan(cpus, 16, 2, 8, 0, &p);
    CHECK(p.pinned && strcmp(p.orchestrator, "1") == 0 && strcmp(p.worker[0], "2-8") == 0 &&
          strcmp(p.worker[1], "9-15") == 0, "16 CPUs: %s | %s | %s", p.orchestrator,
          p.worker[0], p.worker[1]);
    CHECK(p.spare[0] == '\0', "16 CPUs, 7 a worker: no spare CPU: '%s'", p.spare);
    dt_affinity_plan(cpus, 16, 2, 2, 0, &p);
    CHECK(p.pinned && strcmp(p.worker[0], "2-3") == 0 && strcmp(p.worker[1], "9-10") == 0,
          "capped at 2 threads: %s | %s", p.worker[0], p.worker[1]);
    CHECK(strcmp(p.spare, "4-8,11-15") == 0, "capped at 2: the rest of each share is spare: "
          "'%s'", p.spare);
    dt_affinity_plan(cpus, 16, 2, DT_PIN_GPU_WORKER_CPUS, 0, &p);
    CHECK(p.pinned && strcmp(p.worker[0], "2-4") == 0 && strcmp(p.worker[1], "9-11") == 0 &&
          strcmp(p.spare, "5-8,12-15") == 0 && strcmp(p.usable, "0-15") == 0,
          "a GPU run: %s | %s, spare '%s', usable '%s'", p.worker[0], p.worker[1], p.spare,
          p.usable);
    dt_affinity_plan(cpus, 15, 2, 8, 0, &p); /* 13 = 2 x 6 + 1: the CPU past the shares */
    CHECK(p.pinned && strcmp(p.worker[1], "8-13") == 0 && strcmp(p.spare, "14") == 0,
          "15 CPUs: %s, spare '%s'", p.worker[1], p.spare);
    dt_affinity_plan(cpus, 16, 2, 8, 1, &p);
    CHECK(!p.pinned && strstr(p.why, "fewer than --threads 8"), "cpu backend, 7 < 8: %s", p.why);
    dt_affinity_plan(cpus, 16, 2, 7, 1, &p);
    CHECK(p.pinned && strcmp(p.worker[1], "9-15") == 0, "cpu backend, 7 threads: %s", p.worker[1]);
    int odd[] = {4, 5, 8, 9, 12};
    dt_affinity_plan(odd, 5, 2, 8, 0, &p);
    CHECK(p.pinned && strcmp(p.orchestrator, "5") == 0 && strcmp(p.worker[0], "8") == 0 &&
          strcmp(p.worker[1], "9") == 0, "a sparse mask: %s | %s | %s", p.orchestrator,
          p.worker[0], p.worker[1]);
}

/* A child spawned with opts.cpus reports that affinity; the caller's stays as it was. */
static void test_spawn_pinned(void) {
    char before[DT_PIN_LIST_LEN], after[DT_PIN_LIST_LEN];
    REQUIRE(dt_affinity_self(before, sizeof before) == 0, "own affinity");
    cpu_set_t s;
    REQUIRE(sched_getaffinity(0, sizeof s, &s) == 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &s)) first = c;
    char want[16];
    snprintf(want, sizeof want, "%d", first);
    char *argv[] = {"sh", "-c", "grep Cpus_allowed_list /proc/self/status", NULL};
    dt_spawn_opts o = {DT_SPAWN_NULL, DT_SPAWN_PIPE, DT_SPAWN_NULL, 1, 0, want};
    dt_child c;
    dt_err e;
    REQUIRE(dt_spawn_start(argv, &o, &c, &e) == DT_OK, "%s", e.msg);
    char buf[256] = "";
    size_t got = 0;
    ssize_t k;
    while ((k = read(c.out_fd, buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)k;
    buf[got] = '\0';
    close(c.out_fd);
    int st;
    waitpid(c.pid, &st, 0);
    char line[64];
    snprintf(line, sizeof line, "\t%s\n", want);
    CHECK(strstr(buf, line) != NULL, "child pinned to %s: '%s'", want, buf);
    dt_affinity_self(after, sizeof after);
    CHECK(strcmp(before, after) == 0, "caller's affinity restored: %s -> %s", before, after);
done:;
}

int main(void) {
    test_lists();
    test_plan();
    test_spawn_pinned();
    return dt_check_summary("test_affinity");
}
