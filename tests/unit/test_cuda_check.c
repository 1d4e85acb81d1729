/* test_cuda_check.c — the check-macro generator of src/common/dt_cuda_check.h on a fake
 * API (no CUDA headers, no GPU): the failure line carries file:line, the call as text,
 * the error name, code and string; NULL names or strings become "unknown"; success
 * leaves the buffer and the sink untouched; every macro form (CHECK, OK with a sink, TRY,
 * GOTO) evaluates the call exactly once and fails the way it documents. The real APIs'
 * parts (cu, nvrtc, cupti) are the same generator with the APIs' own describe functions;
 * tests/cuda/test_nvrtc_compile.c checks the nvrtc one without a driver.
 * Run: ctest -R test_cuda_check. */
#include <string.h>

#include "common/dt_common.h"
#include "common/dt_cuda_check.h"
#include "../dt_check.h"

/* A fake API: FAKE_OK = 0; FAKE_NAMED has a name and a string, FAKE_BARE neither. */
typedef enum fake_result { FAKE_OK = 0, FAKE_NAMED = 7, FAKE_BARE = 9 } fake_result;

static void fake_describe(fake_result r, const char **name, const char **str) {
    if (r == FAKE_NAMED) {
        *name = "FAKE_ERROR_NAMED";
        *str = "a named failure";
    } /* FAKE_BARE: both stay NULL */
}
DT_CUDA_CHECK_API(fake, fake_result, FAKE_OK, fake_describe)

static int g_calls;
static fake_result fake_call(fake_result r) {
    g_calls++;
    return r;
}

static char g_sunk[DT_CUDA_CHECK_TEXT_LEN];
static int g_sinks;
static void sink(const char *line) {
    g_sinks++;
    snprintf(g_sunk, sizeof g_sunk, "%s", line);
}

static dt_status try_form(fake_result r, dt_err *err) {
    DT_CUDA_TRY(fake, fake_call(r), err);
    return DT_OK;
}

static dt_status goto_form(fake_result r, dt_err *err, int *cleaned) {
    dt_status st = DT_OK;
    DT_CUDA_GOTO(fake, fake_call(r), err, st, done);
    *cleaned = 0;
    return st;
done:
    *cleaned = 1;
    return st;
}

int main(void) {
    char buf[DT_CUDA_CHECK_TEXT_LEN];

    /* success: 1, buffer untouched, call once */
    strcpy(buf, "untouched");
    g_calls = 0;
    CHECK(DT_CUDA_CHECK(fake, fake_call(FAKE_OK), buf, sizeof buf) == 1, "ok must pass");
    CHECK(strcmp(buf, "untouched") == 0, "buffer written on success: %s", buf);
    CHECK(g_calls == 1, "call evaluated %d times", g_calls);

    /* failure with a name and a string: the whole line, exactly */
    g_calls = 0;
    int line = __LINE__ + 1;
    int ok = DT_CUDA_CHECK(fake, fake_call(FAKE_NAMED), buf, sizeof buf);
    char want[DT_CUDA_CHECK_TEXT_LEN];
    snprintf(want, sizeof want, "%s:%d: fake_call(FAKE_NAMED) failed: FAKE_ERROR_NAMED (7): "
             "a named failure", __FILE__, line);
    CHECK(ok == 0, "failure must return 0");
    CHECK(strcmp(buf, want) == 0, "line\n  got  %s\n  want %s", buf, want);
    CHECK(g_calls == 1, "call evaluated %d times", g_calls);

    /* NULL name and string become "unknown" */
    CHECK(DT_CUDA_CHECK(fake, FAKE_BARE, buf, sizeof buf) == 0, "bare failure must fail");
    CHECK(strstr(buf, ": FAKE_BARE failed: unknown (9): unknown") != NULL, "got %s", buf);

    /* a short buffer truncates, never overflows; a NULL buffer is tolerated */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    CHECK(DT_CUDA_CHECK(fake, FAKE_NAMED, tiny, sizeof tiny) == 0, "tiny failure");
    CHECK(tiny[sizeof tiny - 1] == '\0' && strlen(tiny) == sizeof tiny - 1, "tiny: %s", tiny);
    CHECK(DT_CUDA_CHECK(fake, FAKE_NAMED, NULL, 0) == 0, "NULL buffer must still fail");

    /* the sink form: called once on failure, never on success */
    g_sinks = 0;
    g_calls = 0;
    CHECK(DT_CUDA_OK(fake, fake_call(FAKE_OK), sink) == 1 && g_sinks == 0, "sink on success");
    CHECK(DT_CUDA_OK(fake, fake_call(FAKE_NAMED), sink) == 0 && g_sinks == 1, "sink once");
    CHECK(strstr(g_sunk, "fake_call(FAKE_NAMED) failed: FAKE_ERROR_NAMED (7): a named failure"),
          "sunk: %s", g_sunk);
    CHECK(g_calls == 2, "calls %d", g_calls);

    /* TRY returns DT_EDEVICE with the line in err */
    dt_err err = {{0}};
    CHECK(try_form(FAKE_OK, &err) == DT_OK, "try ok");
    CHECK(try_form(FAKE_NAMED, &err) == DT_EDEVICE, "try must fail with DT_EDEVICE");
    CHECK(strstr(err.msg, "fake_call(r) failed: FAKE_ERROR_NAMED (7): a named failure"),
          "try msg: %s", err.msg);

    /* GOTO sets st and jumps to the label */
    int cleaned = -1;
    err.msg[0] = '\0';
    CHECK(goto_form(FAKE_OK, &err, &cleaned) == DT_OK && cleaned == 0, "goto ok path");
    CHECK(goto_form(FAKE_BARE, &err, &cleaned) == DT_EDEVICE && cleaned == 1, "goto fail path");
    CHECK(strstr(err.msg, "failed: unknown (9): unknown") != NULL, "goto msg: %s", err.msg);

    printf("test_cuda_check: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
