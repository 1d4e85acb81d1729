/* test_device_order.c — the device phase's sample order (dt_run_device_order,
 * src/orchestrate/dt_run.h): control before probe exactly on even indexes (as pairs always
 * were), every aligned block of three indexes a Latin square (each of control, probe,
 * dispatch once in each position), every block of six all six permutations (each pairwise
 * order three times), a permutation at every index, period six. Run: ctest -R
 * test_device_order. */
#include <string.h>

#include "../dt_check.h"
#include "orchestrate/dt_run.h"

/* Position of slot in order[3]. */
static int pos_of(const int order[3], int slot) {
    for (int q = 0; q < 3; q++)
        if (order[q] == slot) return q;
    return -1;
}

static void test_permutations(void) {
    for (int i = 0; i < 60; i++) {
        int o[3];
        dt_run_device_order(i, o);
        int seen[3] = {0, 0, 0}, okrange = 1;
        for (int q = 0; q < 3; q++) {
            if (o[q] < 0 || o[q] > 2) okrange = 0;
            else seen[o[q]]++;
        }
        CHECK(okrange && seen[0] == 1 && seen[1] == 1 && seen[2] == 1,
              "index %d: (%d %d %d) is a permutation of control, probe, dispatch", i, o[0], o[1],
              o[2]);
        int before = pos_of(o, DT_RUN_SLOT_CONTROL) < pos_of(o, DT_RUN_SLOT_PROBE);
        CHECK(before == (i % 2 == 0), "index %d: control before probe iff even", i);
        int p[3];
        dt_run_device_order(i + 6, p);
        CHECK(memcmp(o, p, sizeof o) == 0, "index %d: period six", i);
    }
}

static void test_latin_blocks(void) {
    for (int b = 0; b < 10; b++) {
        int count[3][3];
        memset(count, 0, sizeof count);
        for (int i = 3 * b; i < 3 * b + 3; i++) {
            int o[3];
            dt_run_device_order(i, o);
            for (int q = 0; q < 3; q++) count[o[q]][q]++;
        }
        int latin = 1;
        for (int s = 0; s < 3; s++)
            for (int q = 0; q < 3; q++)
                if (count[s][q] != 1) latin = 0;
        CHECK(latin, "indexes %d..%d: every slot once in every position", 3 * b, 3 * b + 2);
    }
}

static void test_six_blocks(void) {
    for (int b = 0; b < 5; b++) {
        int perms[6] = {0}, pair[3][3];
        memset(pair, 0, sizeof pair);
        for (int i = 6 * b; i < 6 * b + 6; i++) {
            int o[3];
            dt_run_device_order(i, o);
            perms[i - 6 * b] = o[0] * 9 + o[1] * 3 + o[2];
            for (int x = 0; x < 3; x++)
                for (int y = 0; y < 3; y++)
                    if (x != y && pos_of(o, x) < pos_of(o, y)) pair[x][y]++;
        }
        int distinct = 1;
        for (int a = 0; a < 6; a++)
            for (int c = a + 1; c < 6; c++)
                if (perms[a] == perms[c]) distinct = 0;
        CHECK(distinct, "indexes %d..%d: six distinct permutations", 6 * b, 6 * b + 5);
        for (int x = 0; x < 3; x++)
            for (int y = x + 1; y < 3; y++)
                CHECK(pair[x][y] == 3 && pair[y][x] == 3,
                      "block %d: slot %d before slot %d %d times, after %d times", b, x, y,
                      pair[x][y], pair[y][x]);
    }
}

int main(void) {
    test_permutations();
    test_latin_blocks();
    test_six_blocks();
    return dt_check_summary("test_device_order");
}
