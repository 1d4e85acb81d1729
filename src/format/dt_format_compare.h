/* dt_format_compare.h — the Markdown text of a comparison of two runs
 * (dt_compare_runs.h): what `dualtime compare A B` prints.
 *
 * Purpose. A header (A's and B's start time and git revision, comparability with the
 * run-level differences named, the method with the threshold, interval level and
 * resamples of the result), the table `Case | Scope | Framework | A p50 µs | B p50 µs |
 * B/A [95% CI] | Round spread | Verdict` (one row per case, scope and implementation;
 * a case whose inputs differ gets a row naming the differences), the cases only in A or
 * only in B, the result line (regression of the candidate in which case/scopes, or
 * none) and a note when the baseline is slower too. Every number comes from the result
 * (prose numbers included); the text is byte-identical to the old dt_compare's. Long
 * difference lists are cut at 2047 bytes and the regression list at 1023, as before.
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
