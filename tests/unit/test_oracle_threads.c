/* test_oracle_threads.c — dt_oracle_threads_start (src/oracle/dt_oracle.h): the oracle's
 * OpenMP threads started before the orchestrator pins its own thread keep every CPU, so an
 * FP64 reference is not computed on the orchestrator's one CPU. The control (threads started
 * only after the pin, in a child process) shows the hazard the function exists for: there
 * every thread inherits the one-CPU mask. Needs two CPUs (exit 77 otherwise). Run: ctest -R
 * test_oracle_threads. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../dt_check.h"
#include "oracle/dt_oracle.h"

/* The smallest CPU count any OpenMP thread but the caller (thread 0) may run on. */
static int min_thread_cpus(void) {
    int least = 1 << 30;
#pragma omp parallel
    if (omp_get_thread_num() != 0) {
        cpu_set_t s;
        int n = sched_getaffinity(0, sizeof s, &s) == 0 ? CPU_COUNT(&s) : 0;
#pragma omp critical
        if (n < least) least = n;
    }
    return least;
}

static int pin_to_first(void) {
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0) return -1;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    return sched_setaffinity(0, sizeof one, &one);
}

int main(void) {
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) != 0 || CPU_COUNT(&s) < 2) {
        puts("test_oracle_threads: fewer than 2 CPUs: skipped");
        return 77;
    }
    int cpus = CPU_COUNT(&s);
    omp_set_num_threads(cpus);
    /* control, in a child: pinned first, threads after -> every thread on one CPU */
    pid_t pid = fork();
    if (pid == 0) {
        if (pin_to_first() != 0) _exit(3);
        _exit(min_thread_cpus() == 1 ? 0 : 4);
    }
    int wst = 0;
    CHECK(pid > 0 && waitpid(pid, &wst, 0) == pid && WIFEXITED(wst) && WEXITSTATUS(wst) == 0,
          "control: threads started after the pin inherit one CPU (child status %d)",
          WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
    /* the rule: threads started first, then the pin of this thread alone */
    int n = dt_oracle_threads_start();
    CHECK(n >= 1, "threads started: %d", n);
    CHECK(pin_to_first() == 0, "this thread pinned");
    CHECK(sched_getaffinity(0, sizeof s, &s) == 0 && CPU_COUNT(&s) == 1, "the caller has one CPU");
    int least = min_thread_cpus();
    CHECK(n > 1 && least == cpus,
          "every oracle thread but the caller keeps the CPUs: smallest mask %d of %d", least, cpus);
    return dt_check_summary("test_oracle_threads");
}
