/* dt_latin.c — the rotated Latin square of sample order (contract in dt_latin.h). */
#include "dt_latin.h"

#include "../common/dt_common.h"

void dt_latin_order(int n, int index, int flip, int order[]) {
    DT_ASSERT(n >= 1 && n <= DT_LATIN_MAX && index >= 0);
    for (int q = 0; q < n; q++) {
        int seq = (index + q) % n;             /* position in 1, 2, ..., n-1, 0 */
        int impl = (seq + 1) % n;
        order[flip ? n - 1 - q : q] = impl;
    }
}
