/* spinner.c — a co-runner: busy BUSY_US, sleep IDLE_US, for SECONDS (emulates the
 * orchestrator's preparer taking part of one core). usage: spinner BUSY_US IDLE_US SECONDS */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static int64_t now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
int main(int argc, char **argv) {
    int64_t busy = atoll(argv[1]) * 1000, idle = atoll(argv[2]), end = now() + atoll(argv[3]) * 1000000000LL;
    volatile uint64_t x = 0;
    while (now() < end) {
        int64_t t0 = now();
        while (now() - t0 < busy) for (int i = 0; i < 1000; i++) x += i;
        if (idle > 0) usleep(idle);
    }
    return 0;
}
