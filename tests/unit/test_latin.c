/* test_latin.c — the sample order of n implementations (dt_latin_order,
 * src/orchestrate/dt_latin.h): a permutation at every index; over any n consecutive
 * indexes (aligned or not, flipped or not) every implementation takes every position
 * exactly once; a round and its flipped successor hold every pairwise order equally
 * often; with two implementations the ABBA order of before (candidate first on even
 * indexes, the baseline first on odd ones; flipped in alternate rounds); one
 * implementation always first. Run: ctest -R test_latin. */
#include <string.h>

#include "../dt_check.h"
#include "orchestrate/dt_latin.h"

static void test_positions(void) {
    for (int n = 1; n <= 9; n++)
        for (int flip = 0; flip < 2; flip++)
            for (int start = 0; start < 2 * n + 3; start++) {
                int count[9][9];
                memset(count, 0, sizeof count);
                int perm_ok = 1;
                for (int i = start; i < start + n; i++) {
                    int o[9], seen[9] = {0};
                    dt_latin_order(n, i, flip, o);
                    for (int q = 0; q < n; q++) {
                        if (o[q] < 0 || o[q] >= n || seen[o[q]]++) perm_ok = 0;
                        else count[o[q]][q]++;
                    }
                }
                int equal = 1;
                for (int k = 0; k < n; k++)
                    for (int q = 0; q < n; q++)
                        if (count[k][q] != 1) equal = 0;
                CHECK(perm_ok && equal, "n=%d flip=%d indexes %d..%d: every implementation in "
                      "every position once", n, flip, start, start + n - 1);
            }
}

static void test_pairwise(void) {
    for (int n = 2; n <= 7; n++) {
        int before[7][7];
        memset(before, 0, sizeof before);
        for (int flip = 0; flip < 2; flip++)
            for (int i = 0; i < n; i++) {
                int o[7];
                dt_latin_order(n, i, flip, o);
                for (int p = 0; p < n; p++)
                    for (int q = p + 1; q < n; q++) before[o[p]][o[q]]++;
            }
        int ok = 1;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                if (a != b && before[a][b] != n) ok = 0;
        CHECK(ok, "n=%d: a round and a flipped round hold a-before-b %d times for every pair",
              n, n);
    }
}

static void test_two_is_abba(void) {
    for (int i = 0; i < 8; i++)
        for (int flip = 0; flip < 2; flip++) {
            int o[2];
            dt_latin_order(2, i, flip, o);
            int want_first = ((i & 1) ^ flip) ? 0 : 1; /* the candidate (1) on even i */
            CHECK(o[0] == want_first && o[1] == 1 - want_first,
                  "n=2 index %d flip %d: (%d %d), wanted %d first", i, flip, o[0], o[1],
                  want_first);
        }
    int o[3];
    dt_latin_order(3, 0, 0, o);
    CHECK(o[0] == 1 && o[1] == 2 && o[2] == 0, "n=3 index 0: candidates in order, then the "
          "baseline: (%d %d %d)", o[0], o[1], o[2]);
    dt_latin_order(3, 1, 0, o);
    CHECK(o[0] == 2 && o[1] == 0 && o[2] == 1, "n=3 index 1 rotated: (%d %d %d)", o[0], o[1],
          o[2]);
    dt_latin_order(1, 5, 1, o);
    CHECK(o[0] == 0, "n=1: the only one");
}

int main(void) {
    test_positions();
    test_pairwise();
    test_two_is_abba();
    return dt_check_summary("test_latin");
}
