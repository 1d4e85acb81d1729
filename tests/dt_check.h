/* dt_check.h — the counting check of dualtime's plain-C tests: CHECK(cond, fmt, ...)
 * counts a pass or prints "FAIL file:line: cond: message" and counts a failure; the test
 * prints "N passed, N failed" from g_pass/g_fail and exits nonzero on any failure.
 * Include once per test program (it defines the counters). */
#ifndef DT_CHECK_H
#define DT_CHECK_H

#include <stdio.h>

static int g_pass, g_fail;

#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        if (cond) {                                                                         \
            g_pass++;                                                                       \
        } else {                                                                            \
            g_fail++;                                                                       \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                 \
            fprintf(stderr, __VA_ARGS__);                                                   \
            fputc('\n', stderr);                                                            \
        }                                                                                   \
    } while (0)

#endif
