/* dt_common.h — the few things every dualtime module shares.
 *
 * Error handling follows two tiers (see docs/architecture.md):
 *  - DT_ASSERT for programming errors: aborts with file:line, kept on in tests.
 *  - dt_status + a caller-supplied error buffer (dt_err) for everything the
 *    environment can do to us (bad input, a missing GPU, a crashed worker).
 * Library code never exits and never prints to stdout; only src/cli chooses exit codes.
 * Thread-safety: all functions here are reentrant. */
#ifndef DT_COMMON_H
#define DT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define DT_ERR_LEN 512

/* A caller-owned error message buffer. Fallible functions write one line into it. */
typedef struct dt_err {
    char msg[DT_ERR_LEN];
} dt_err;

typedef enum dt_status {
    DT_OK = 0,
    DT_EINVAL = 1,   /* bad argument or malformed input */
    DT_EIO = 2,      /* a file, pipe or shared-memory operation failed */
    DT_EWORKER = 3,  /* a worker crashed, hung, or answered nonsense */
    DT_EDEVICE = 4,  /* the GPU, driver, NVRTC or CUPTI refused */
    DT_ECHECK = 5,   /* an output failed the oracle or an arena check */
    DT_EUNAVAIL = 6, /* a requested facility is not available here */
} dt_status;

/* Formats a message into err (if err is non-NULL) and returns status. */
dt_status dt_fail(dt_err *err, dt_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Aborts with file:line and the expression text. Used for bugs, never for input. */
#define DT_ASSERT(cond)                                                              \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__,    \
                    #cond);                                                          \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* Host monotonic clock in nanoseconds (CLOCK_MONOTONIC). This is the clock of every
 * host interval dualtime publishes; the CUPTI probe is calibrated against it. */
int64_t dt_now_ns(void);

/* Writes s to o as a JSON string literal, the way jansson's dump escapes it: quotes,
 * \" \\ \b \f \n \r \t, \uXXXX for other control characters, other bytes as they are.
 * For text that shows JSON without being a codec (reports, compare's differences). */
void dt_json_string_write(FILE *o, const char *s);

/* Allocation that aborts on failure (out of memory is not a recoverable input error). */
void *dt_xmalloc(size_t n);
void *dt_xcalloc(size_t count, size_t n);
char *dt_xstrdup(const char *s);

#endif
