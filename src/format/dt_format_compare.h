/* dt_format_compare.h — the Markdown text of a comparison of two runs
 * (dt_compare_runs.h): what `dualtime compare A B` prints (the default; --format json is
 * format/dt_compare_json.h).
 *
 * Purpose. A header (A's and B's start time and git revision, comparability, the method
 * with the threshold, interval level, resamples, minimum pairs and spread floor of the
 * result), the table `Case | Scope | Framework | A p50 µs | B p50 µs | A ratio | B ratio
 * | Change B/A [95% CI] | Spread | Detectable ≥ | Verdict` (one row per case, scope and
 * implementation; candidates show their paired ratio to the baseline in each run and the
 * change of it, the baseline its own B/A; a spread marked "(floor)" was not measured; a
 * case whose identity differs gets a row naming the differences), the cases only in A or
 * only in B, the result line (a regression of a candidate in which case/scopes, or no
 * change) and a note when the baseline itself moved (the machine's drift). Every number
 * comes from the result (prose numbers included). Difference lists are cut at 2047
 * bytes and the regression list at 1023.
 *
 * Ownership: *text is a fresh NUL-terminated string the caller frees; *len its length.
 * Thread-safety: reentrant. Never includes jansson.h or cuda.h. */
#ifndef DT_FORMAT_COMPARE_H
#define DT_FORMAT_COMPARE_H

#include "common/dt_common.h"
#include "stats/dt_compare_runs.h"

dt_status dt_format_compare_md(const dt_compare_result *res, char **text, size_t *len,
                               dt_err *err);

#endif
