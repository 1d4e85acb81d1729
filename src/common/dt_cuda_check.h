/* dt_cuda_check.h — the one check-macro family for CUDA driver (CUresult), NVRTC
 * (nvrtcResult) and CUPTI (CUptiResult) calls, generated per API by one generator.
 *
 * A failing call becomes one line:
 *   "<file>:<line>: <call as text> failed: <ERROR_NAME> (<code>): <error string>"
 * where a NULL name or string from the API becomes "unknown". The macros, for any API
 * tag `api` in {cu, nvrtc, cupti}:
 *   DT_CUDA_CHECK(api, call, buf, len)   1 = ok; 0 = failed, the line written into buf
 *   DT_CUDA_OK(api, call, sink)          1 = ok; 0 = failed, the line passed to
 *                                        sink(const char *line) first (e.g. a module's
 *                                        "keep the first error" function)
 *   DT_CUDA_TRY(api, call, err)          returns dt_fail(err, DT_EDEVICE, line) from the
 *                                        enclosing function (needs src/common/dt_common.h)
 *   DT_CUDA_GOTO(api, call, err, st, label)  sets st likewise and jumps to label
 *   DT_CUDA_OR_EXIT(api, call)           tests only: prints the line to stderr, exit(1)
 *                                        (needs <stdlib.h>)
 * Each call is evaluated exactly once.
 *
 * Which APIs exist depends on the headers included BEFORE this one: cuda.h defines the
 * `cu` functions, nvrtc.h the `nvrtc` ones, cupti.h (cupti_result.h) the `cupti` ones.
 * This header includes none of them, so code that checks only NVRTC calls never sees
 * cuda.h nor links libcuda; it may be included again after another API's header (each
 * API's part has its own guard). DT_CUDA_CHECK_API(tag, type, success, describe) is the
 * generator; tests/unit/test_cuda_check.c instantiates it with a fake API.
 *
 * Ownership: names and strings come from the APIs' static tables (never freed); the
 * caller owns buf. Thread-safety: reentrant (no state). */
#ifndef DT_CUDA_CHECK_H
#define DT_CUDA_CHECK_H

#include <stddef.h>
#include <stdio.h>

/* Room for one failure line (file, call text, name and string). */
#define DT_CUDA_CHECK_TEXT_LEN 768

/* Writes the failure line into buf (len > 0); NULL name or str become "unknown". */
static inline void dt_cuda_check_format(char *buf, size_t len, const char *file, int line,
                                        const char *call, const char *name, int code,
                                        const char *str) {
    if (!buf || len == 0) return;
    snprintf(buf, len, "%s:%d: %s failed: %s (%d): %s", file, line, call,
             name ? name : "unknown", code, str ? str : "unknown");
}

/* The generator. Defines, for one API:
 *   int dt_<tag>_check(type r, call, file, line, buf, len)  1 if r == success, else the
 *                                                           line into buf and 0;
 *   int dt_<tag>_ok(type r, call, file, line, sink)         same, the line to sink.
 * describe(type r, const char **name, const char **str) sets the error's name and
 * string (either may be left NULL). */
#define DT_CUDA_CHECK_API(tag, type, success, describe)                                  \
    static inline int dt_##tag##_check(type r_, const char *call_, const char *file_,    \
                                       int line_, char *buf_, size_t len_) {             \
        if (r_ == (success)) return 1;                                                   \
        const char *name_ = NULL, *str_ = NULL;                                          \
        describe(r_, &name_, &str_);                                                     \
        dt_cuda_check_format(buf_, len_, file_, line_, call_, name_, (int)r_, str_);     \
        return 0;                                                                        \
    }                                                                                    \
    static inline int dt_##tag##_ok(type r_, const char *call_, const char *file_,       \
                                    int line_, void (*sink_)(const char *)) {            \
        if (r_ == (success)) return 1;                                                   \
        char text_[DT_CUDA_CHECK_TEXT_LEN];                                              \
        dt_##tag##_check(r_, call_, file_, line_, text_, sizeof text_);                  \
        if (sink_) sink_(text_);                                                         \
        return 0;                                                                        \
    }

#define DT_CUDA_CHECK(api, call, buf, len)                                               \
    dt_##api##_check((call), #call, __FILE__, __LINE__, (buf), (len))

#define DT_CUDA_OK(api, call, sink) dt_##api##_ok((call), #call, __FILE__, __LINE__, (sink))

#define DT_CUDA_TRY(api, call, err)                                                      \
    do {                                                                                 \
        char dt_text_[DT_CUDA_CHECK_TEXT_LEN];                                           \
        if (!DT_CUDA_CHECK(api, call, dt_text_, sizeof dt_text_))                        \
            return dt_fail((err), DT_EDEVICE, "%s", dt_text_);                           \
    } while (0)

#define DT_CUDA_GOTO(api, call, err, st, label)                                          \
    do {                                                                                 \
        char dt_text_[DT_CUDA_CHECK_TEXT_LEN];                                           \
        if (!DT_CUDA_CHECK(api, call, dt_text_, sizeof dt_text_)) {                      \
            (st) = dt_fail((err), DT_EDEVICE, "%s", dt_text_);                           \
            goto label;                                                                  \
        }                                                                                \
    } while (0)

#define DT_CUDA_OR_EXIT(api, call)                                                       \
    do {                                                                                 \
        char dt_text_[DT_CUDA_CHECK_TEXT_LEN];                                           \
        if (!DT_CUDA_CHECK(api, call, dt_text_, sizeof dt_text_)) {                      \
            fprintf(stderr, "%s\n", dt_text_);                                           \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

#endif /* DT_CUDA_CHECK_H */

/* ---- the CUDA driver API (cuda.h seen) ------------------------------------------ */
#if defined(CUDA_VERSION) && !defined(DT_CUDA_CHECK_CU)
#define DT_CUDA_CHECK_CU
static inline void dt_cuda_describe_cu(CUresult r, const char **name, const char **str) {
    if (cuGetErrorName(r, name) != CUDA_SUCCESS) *name = NULL;
    if (cuGetErrorString(r, str) != CUDA_SUCCESS) *str = NULL;
}
DT_CUDA_CHECK_API(cu, CUresult, CUDA_SUCCESS, dt_cuda_describe_cu)
#endif

/* ---- NVRTC (nvrtc.h seen): nvrtcGetErrorString gives the enum's name; NVRTC has no
 * description of its own, so a short one comes from this table ----------------------- */
#if defined(__NVRTC_H__) && !defined(DT_CUDA_CHECK_NVRTC)
#define DT_CUDA_CHECK_NVRTC
static inline void dt_cuda_describe_nvrtc(nvrtcResult r, const char **name, const char **str) {
    static const char *const what[] = {
        "no error", "out of memory", "program creation failed", "invalid input",
        "invalid program", "invalid option", "compilation failed (see the program log)",
        "builtin operation failed", "no name expressions after compilation",
        "no lowered names before compilation", "name expression not valid",
        "internal error", "time file write failed", "no PCH create attempted",
        "PCH create heap exhausted", "PCH create failed", "cancelled",
        "time trace file write failed"};
    *name = nvrtcGetErrorString(r);
    *str = (int)r >= 0 && (size_t)r < sizeof what / sizeof *what ? what[r] : NULL;
}
DT_CUDA_CHECK_API(nvrtc, nvrtcResult, NVRTC_SUCCESS, dt_cuda_describe_nvrtc)
#endif

/* ---- CUPTI (cupti.h / cupti_result.h seen) ---------------------------------------- */
#if defined(_CUPTI_RESULT_H_) && !defined(DT_CUDA_CHECK_CUPTI)
#define DT_CUDA_CHECK_CUPTI
static inline void dt_cuda_describe_cupti(CUptiResult r, const char **name, const char **str) {
    if (cuptiGetResultString(r, name) != CUPTI_SUCCESS) *name = NULL;
    if (cuptiGetErrorMessage(r, str) != CUPTI_SUCCESS) *str = NULL;
}
DT_CUDA_CHECK_API(cupti, CUptiResult, CUPTI_SUCCESS, dt_cuda_describe_cupti)
#endif
