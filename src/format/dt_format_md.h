/* dt_format_md.h — results.md as text, from a derived run record.
 *
 * Purpose. dt_format_md() prints the sections of docs/results-format.md ("results.md"):
 * the title and the assessment headline first (at most three lines: the run level and
 * the scopes grouped by level, the counted findings of derived.summary, a link to the
 * details), what was run, the host end-to-end table, the plot links, setup phases,
 * correctness, device control (held) and dispatch (unheld) side by side with the held
 * floor check, kernel probe diagnostics with the probe kinds (when measured), GPU
 * clocks, rooflines and the E2E floor (when ceilings or floor samples exist), failures,
 * the assessment details (per scope, every finding), and what the numbers do not
 * establish. It only reads the
 * record: raw fields and the derived blocks that dt_derive_run() filled. Every threshold
 * or band quoted in the prose (the indistinguishable band, the interval level, the
 * small-case bound, the clocks rule) is printed from r->derived.policy, the constants
 * the derivation used, never from a copy here. Text cells are escaped for Markdown.
 *
 * Implementations: r->impls[0] is the baseline, impls[1..] candidates. Per-implementation
 * rows and columns list the candidates in order, then the baseline; the pairwise parts
 * (ratio columns, verdicts, counts) are printed per candidate against the baseline. With
 * one candidate the sections issue 12 left alone are byte-identical to the old
 * dt_report_md_string() of the same results.json (tests/unit/test_format_md_legacy.c).
 *
 * Ownership: *text is a fresh NUL-terminated string the caller frees, *len its length
 * (NULL and 0 on failure). Nothing is retained. Units: µs per call, ms for setup phases.
 * Thread-safety: reentrant. Never includes jansson.h or cuda.h. */
#ifndef DT_FORMAT_MD_H
#define DT_FORMAT_MD_H

#include "common/dt_common.h"
#include "record/dt_record.h"

#include <stddef.h>

/* results.md of r. DT_EINVAL when the run has no candidate (n_impls < 2); DT_EIO when the
 * memory stream fails. */
dt_status dt_format_md(const dt_record *r, char **text, size_t *len, dt_err *err);

#endif
