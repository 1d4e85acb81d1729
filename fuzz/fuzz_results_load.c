/* fuzz_results_load.c — libFuzzer harness for the results.json reader: arbitrary bytes go
 * to a temporary file and through dt_results_load(); an accepted file must also survive
 * dt_derive() and dt_report_md_string() (what `dualtime report` does with it).
 * Any crash, sanitizer report or leak is a bug. The bootstrap resample count is capped
 * at 200 before deriving so that one execution stays fast (the count is validated by
 * the loader, not by the statistics). Build: fuzz/run.sh (see docs/fuzzing.md). */
#include "report/dt_derive.h"
#include "report/dt_report_md.h"
#include "report/dt_results_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_path[64];

static void cleanup(void) {
    if (g_path[0]) unlink(g_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_path[0]) {
        snprintf(g_path, sizeof g_path, "/tmp/dt-fuzz-results-XXXXXX");
        int fd = mkstemp(g_path);
        if (fd < 0) abort();
        close(fd);
        atexit(cleanup);
    }
    FILE *f = fopen(g_path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);

    json_t *r = NULL;
    dt_err err = {{0}};
    if (dt_results_load(g_path, &r, &err) != DT_OK) {
        if (r || !err.msg[0]) abort(); /* a failure must say why and return nothing */
        return 0;
    }
    json_t *bs = json_object_get(json_object_get(r, "settings"), "bootstrap");
    json_t *rs = json_object_get(bs, "resamples");
    if (json_is_integer(rs) && json_integer_value(rs) > 200)
        json_object_set_new(bs, "resamples", json_integer(200));
    if (dt_derive(r, &err) == DT_OK) {
        char *md = NULL;
        size_t len = 0;
        if (dt_report_md_string(r, &md, &len, &err) == DT_OK) {
            if (!md || strlen(md) != len) abort();
        }
        free(md);
    } else if (!err.msg[0]) {
        abort();
    }
    json_decref(r);
    return 0;
}
