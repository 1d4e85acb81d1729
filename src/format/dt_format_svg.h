/* dt_format_svg.h — the SVG charts of a derived run record (plots/ratios.svg,
 * plots/roofline.svg), as text; writing the files is dt_outputs' job.
 *
 * Purpose. dt_format_svg_ratios() draws one row per case and, per scope (e2e_batch,
 * e2e_single, control_batch, control_single, those with a ratio in the run), the median
 * candidate/baseline ratio as a marker with its 95% bootstrap interval as a whisker, on a
 * log axis with 1-2-5 ticks and a line at 1 ("candidate faster" to the left). Cases not
 * shown (dt_format_case_shown: invalid, or an implementation failed) carry the word
 * "invalid" and no marker; a ratio without an interval (fewer pairs than the policy's
 * min_pairs_interval) is a hollow marker. dt_format_svg_roofline() draws, per case with
 * roofline data and per implementation (candidates in order, then the baseline), a bar
 * of the achieved bandwidth as % of the copy ceiling. Both are plain SVG 1.1 (no
 * scripts, no external resources, font-family sans-serif, explicit width/height and
 * viewBox, text escaped, invalid UTF-8 and control characters as '?').
 *
 * Implementations: r->impls[0] is the baseline. dt_format_svg_ratios() charts the first
 * candidate (impls[1]); dt_format_svg_ratios_vs() charts any candidate, so a run with N
 * implementations has N-1 ratio charts (named by dt_format_svg_ratios_name). The roofline chart holds every implementation.
 * With two implementations the text is byte-identical to the old dt_plot writer.
 *
 * Input: a record through the derive step (dt_derive_run); only c->derived and the run's
 * identity (impl ids, framework names and versions, settings.backend) are read. The
 * output depends only on the record.
 *
 * Ownership: *svg is a fresh NUL-terminated string the caller frees; *len its length.
 * Nothing is retained. Units: pixels in the drawing; ratios unitless; bandwidth GB/s.
 * Thread-safety: reentrant (no globals). Never includes cuda.h or jansson.h. */
#ifndef DT_FORMAT_SVG_H
#define DT_FORMAT_SVG_H

#include "common/dt_common.h"
#include "record/dt_record.h"

/* File names of the charts relative to the output directory (for dt_outputs and the
 * Markdown links). */
#define DT_FORMAT_SVG_DIR "plots"
#define DT_FORMAT_SVG_RATIOS "plots/ratios.svg"
#define DT_FORMAT_SVG_ROOFLINE "plots/roofline.svg"

/* The ratio chart of the first candidate (impls[1]) over the baseline. DT_EINVAL when
 * the run has no candidate. */
dt_status dt_format_svg_ratios(const dt_record *r, char **svg, size_t *len, dt_err *err);

/* The ratio chart of candidate impls[cand] (1 <= cand < n_impls) over the baseline. */
dt_status dt_format_svg_ratios_vs(const dt_record *r, size_t cand, char **svg, size_t *len,
                                  dt_err *err);

/* The file name (relative to the output directory) of candidate impls[cand]'s ratio
 * chart into buf: DT_FORMAT_SVG_RATIOS for the first candidate, "plots/ratios-ID.svg"
 * for the others (ID the candidate's id when it is 1..63 of A-Z a-z 0-9 _ . -, else
 * "impl<cand>"), so results.md links and dt_outputs writes the same names. */
void dt_format_svg_ratios_name(const dt_record *r, size_t cand, char *buf, size_t cap);

/* The roofline chart; *svg is NULL, *len 0 (and DT_OK) when no case has roofline data. */
dt_status dt_format_svg_roofline(const dt_record *r, char **svg, size_t *len, dt_err *err);

/* 1 when some case carries roofline data that dt_format_svg_roofline can draw. */
int dt_format_svg_has_roofline(const dt_record *r);

#endif
