/* dt_shard.c — shard assignment and selection of a plan's cases (dt_shard.h). */
#include "dt_shard.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

dt_status dt_shard_assign(dt_plan_doc *doc, int n_shards, dt_err *err) {
    if (n_shards < 1 || n_shards > DT_SHARDS_MAX)
        return dt_fail(err, DT_EINVAL, "--shards: %d is not in 1..%d", n_shards, DT_SHARDS_MAX);
    if (n_shards > doc->cases.count)
        return dt_fail(err, DT_EINVAL, "--shards: %d shards for %d cases would leave a shard "
                       "empty", n_shards, doc->cases.count);
    free(doc->shard_of);
    doc->shard_of = dt_xcalloc((size_t)doc->cases.count, sizeof *doc->shard_of);
    for (int i = 0; i < doc->cases.count; i++)
        doc->shard_of[i] = i % n_shards;
    doc->n_shards = n_shards;
    return DT_OK;
}

dt_status dt_shard_select(const dt_plan_doc *doc, int shard, dt_plan *out, dt_err *err) {
    memset(out, 0, sizeof *out);
    if (shard < 0 || shard >= doc->n_shards)
        return dt_fail(err, DT_EINVAL, "--shard: %d is not in 0..%d", shard, doc->n_shards - 1);
    out->cases = dt_xcalloc((size_t)doc->cases.count + 1, sizeof *out->cases);
    for (int i = 0; i < doc->cases.count; i++)
        if (doc->shard_of[i] == shard)
            out->cases[out->count++] = doc->cases.cases[i];
    return DT_OK;
}

dt_status dt_shard_check_cases(const dt_plan_doc *doc, const dt_plan *built, dt_err *err) {
    int n = doc->cases.count < built->count ? doc->cases.count : built->count;
    for (int i = 0; i < n; i++)
        if (strcmp(doc->cases.cases[i].id, built->cases[i].id) != 0)
            return dt_fail(err, DT_EINVAL, "case %d is %s in the plan but %s here (a different "
                           "dualtime version?)", i, doc->cases.cases[i].id, built->cases[i].id);
    if (doc->cases.count != built->count)
        return dt_fail(err, DT_EINVAL, "the plan has %d cases, its flags give %d here (a "
                       "different dualtime version?)", doc->cases.count, built->count);
    return DT_OK;
}

dt_status dt_shard_parse(const char *text, int *index, int *count, dt_err *err) {
    char *end;
    errno = 0;
    long i = strtol(text, &end, 10);
    long n = -1;
    if (!errno && end != text && *end == '/') {
        const char *p = end + 1;
        n = strtol(p, &end, 10);
        if (errno || end == p || *end) n = -1;
    }
    if (n < 1 || n > DT_SHARDS_MAX || i < 0 || i >= n || text[0] == '-' || text[0] == '+')
        return dt_fail(err, DT_EINVAL, "--shard: '%s' is not I/N with 0 <= I < N <= %d", text,
                       DT_SHARDS_MAX);
    *index = (int)i;
    *count = (int)n;
    return DT_OK;
}

void dt_plan_doc_free(dt_plan_doc *doc) {
    if (!doc) return;
    free(doc->tool_version);
    free(doc->git_revision);
    free(doc->created_at);
    for (size_t i = 0; i < doc->n_run_args; i++) free(doc->run_args[i]);
    free(doc->run_args);
    dt_plan_settings *s = &doc->settings;
    free(s->backend);
    free(s->operations);
    free(s->probe_kind);
    free(s->candidate_cmd);
    free(s->baseline_cmd);
    free(s->python);
    dt_plan_free(&doc->cases);
    free(doc->shard_of);
    memset(doc, 0, sizeof *doc);
}
