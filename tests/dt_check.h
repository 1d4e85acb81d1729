/* dt_check.h — the one check harness of dualtime's plain-C tests. Every check counts a
 * pass or a failure in g_pass / g_fail; a failure prints "FAIL file:line: cond: message"
 * on stderr (stdout flushed first, so a log of both reads in order); the test ends with
 * `return dt_check_summary("name");`, which prints "name: N tests, N passed, N failed"
 * and gives the exit status (0 all passed, 1 a check failed).
 *
 *   CHECK(cond)                     the condition's text is the message
 *   CHECK(cond, fmt, ...)           printf-style message
 *   CHECK_MSG(cond, text)           a run-time string as the message (not a format)
 *   CHECK_AT(line, cond, fmt, ...)  reported at line: for helpers given the caller's __LINE__
 *   REQUIRE(cond[, fmt, ...])       CHECK, and on failure `goto done` (the function's cleanup)
 *
 * g_check_verbose = 1 makes every passing check with a message print "PASS  message" on
 * stdout too. Include once per test program (it defines the counters); not thread-safe. */
#ifndef DT_CHECK_H
#define DT_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int g_pass, g_fail;
static int g_check_verbose;

static inline int dt_check_(int ok, const char *file, int line, const char *cond,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static inline int dt_check_(int ok, const char *file, int line, const char *cond,
                            const char *fmt, ...) {
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ok) {
        g_pass++;
        if (g_check_verbose && msg[0]) {
            printf("PASS  %s\n", msg);
            fflush(stdout);
        }
        return 1;
    }
    g_fail++;
    fflush(stdout);
    fprintf(stderr, "FAIL %s:%d: %s%s%s\n", file, line, cond, msg[0] ? ": " : "", msg);
    return 0;
}

/* Prints "<name>: N tests, N passed, N failed" on stdout; the test's exit status. */
static inline int dt_check_summary(const char *name) {
    printf("%s: %d tests, %d passed, %d failed\n", name, g_pass + g_fail, g_pass, g_fail);
    return g_fail ? 1 : 0;
}

/* CHECK(cond) and CHECK(cond, fmt, ...): the argument count picks the form (up to 32). The
 * message's arguments are evaluated after the condition (the ?: sequences them), so a
 * message may print what a call in the condition filled in (function arguments have no
 * order: "plan(..., &p) == DT_OK, "%u", p.bytes" once printed the p from before). */
#define DT_CHECK_1_(cond) dt_check_((cond) ? 1 : 0, __FILE__, __LINE__, #cond, "%s", "")
#define DT_CHECK_N_(cond, ...)                                                                \
    ((cond) ? dt_check_(1, __FILE__, __LINE__, #cond, __VA_ARGS__)                            \
            : dt_check_(0, __FILE__, __LINE__, #cond, __VA_ARGS__))
#define DT_CHECK_PICK_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, \
                       a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30,  \
                       a31, a32, name, ...)                                                   \
    name
#define DT_CHECK_(...)                                                                        \
    DT_CHECK_PICK_(__VA_ARGS__, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_,            \
                   DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_,            \
                   DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_,            \
                   DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_,            \
                   DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_,            \
                   DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_N_,            \
                   DT_CHECK_N_, DT_CHECK_N_, DT_CHECK_1_, unused)(__VA_ARGS__)

#define CHECK(...) ((void)DT_CHECK_(__VA_ARGS__))
#define CHECK_MSG(cond, text)                                                                 \
    ((void)dt_check_((cond) ? 1 : 0, __FILE__, __LINE__, #cond, "%s", (text)))
#define CHECK_AT(line, cond, ...)                                                             \
    ((void)((cond) ? dt_check_(1, __FILE__, (line), #cond, __VA_ARGS__)                       \
                   : dt_check_(0, __FILE__, (line), #cond, __VA_ARGS__)))
#define REQUIRE(...)                                                                          \
    do {                                                                                      \
        if (!DT_CHECK_(__VA_ARGS__)) goto done;                                               \
    } while (0)

#endif
