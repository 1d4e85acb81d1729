/* dt_format_summary.h — the few lines `dualtime run` (and --resume) prints on stderr at
 * the end of a run: where the results are, the assessment headline, the verdict counts
 * of each candidate, and its slowest and fastest ratio.
 *
 * Purpose. A pure formatter over a derived record (dt_derive_run has run): it prints
 *   results:    /abs/dir  (results.md, results.json)
 *   assessment: <level> — <the first counted findings of derived.summary>
 *   <cand> vs <base> (e2e_batch verdicts): N faster, N slower, N indistinguishable, ...
 *   slowest:    <case> <scope> <ratio> [<ci_low>, <ci_high>]
 *   fastest:    <case> <scope> <ratio> [<ci_low>, <ci_high>]
 * slowest/fastest are the largest and smallest candidate/baseline ratio (median of the
 * paired ratios) over every shown case and every scope that carries verdicts (the probe
 * scopes are diagnostics and left out); the interval is "[—, —]" when there is none.
 * Plain text, no Markdown; numbers formatted as in results.md (dt_format_util.h).
 *
 * Ownership: *text is a fresh NUL-terminated string the caller frees, *len its length
 * (NULL and 0 on failure). results_dir is copied into the text as given (the CLI passes
 * the absolute path). Thread-safety: reentrant. Never includes jansson.h or cuda.h. */
#ifndef DT_FORMAT_SUMMARY_H
#define DT_FORMAT_SUMMARY_H

#include "common/dt_common.h"
#include "record/dt_record.h"

#include <stddef.h>

/* The summary of r, whose outputs are in results_dir. DT_EINVAL when r is not derived
 * or results_dir is NULL; DT_EIO when the memory stream fails. */
dt_status dt_format_summary(const dt_record *r, const char *results_dir, char **text,
                            size_t *len, dt_err *err);

#endif
