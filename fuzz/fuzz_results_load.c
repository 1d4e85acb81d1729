/* fuzz_results_load.c — libFuzzer harness for the results.json reader: arbitrary bytes go
 * to a temporary file and through dt_record_load() (the codec); an accepted file must
 * also survive dt_derive_run() and dt_format_md() (what `dualtime report` does with it)
 * and encode again. Any crash, sanitizer report or leak is a bug. The bootstrap resample
 * count is capped at 200 before deriving so that one execution stays fast (the count is
 * validated by the loader, not by the statistics). Build: fuzz/run.sh (docs/fuzzing.md). */
#define _GNU_SOURCE
#include "format/dt_format_md.h"
#include "record/dt_record_json.h"
#include "stats/dt_derive.h"

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

    dt_record *r = NULL;
    dt_err err = {{0}};
    if (dt_record_load(g_path, &r, &err) != DT_OK) {
        if (r || !err.msg[0]) abort(); /* a failure must say why and return nothing */
        return 0;
    }
    if (r->settings.bootstrap_resamples > 200) r->settings.bootstrap_resamples = 200;
    if (dt_derive_run(r, &err) == DT_OK) {
        char *md = NULL;
        size_t len = 0;
        if (dt_format_md(r, &md, &len, &err) == DT_OK) {
            if (!md || strlen(md) != len) abort();
        }
        free(md);
        char *text = NULL;
        if (dt_record_encode(r, &text, &len, &err) == DT_OK && (!text || strlen(text) != len))
            abort();
        free(text);
    } else if (!err.msg[0]) {
        abort();
    }
    dt_record_free(r);
    return 0;
}
