/* dt_common.c — error formatting, the host clock and checked allocation. */
#define _GNU_SOURCE
#include "dt_common.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

dt_status dt_fail(dt_err *err, dt_status status, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

int64_t dt_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void *dt_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "dualtime: out of memory allocating %zu bytes\n", n);
        abort();
    }
    return p;
}

void *dt_xcalloc(size_t count, size_t n) {
    void *p = calloc(count ? count : 1, n ? n : 1);
    if (!p) {
        fprintf(stderr, "dualtime: out of memory allocating %zu x %zu bytes\n", count, n);
        abort();
    }
    return p;
}

char *dt_xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = dt_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

void dt_json_string_write(FILE *o, const char *s) {
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", o); break;
        case '\\': fputs("\\\\", o); break;
        case '\b': fputs("\\b", o); break;
        case '\f': fputs("\\f", o); break;
        case '\n': fputs("\\n", o); break;
        case '\r': fputs("\\r", o); break;
        case '\t': fputs("\\t", o); break;
        default:
            if (*p < 0x20)
                fprintf(o, "\\u%04X", *p);
            else
                fputc(*p, o);
        }
    }
    fputc('"', o);
}
