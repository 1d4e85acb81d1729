/* dt_plot.h — SVG charts of a derived results object, written next to results.md.
 *
 * dt_plot_write_all() writes DIR/plots/ratios.svg: one row per case, and per scope
 * (e2e_batch, e2e_single, control_batch, control_single, those present in the run) the
 * median candidate/baseline ratio as a marker with its 95% bootstrap interval as a
 * whisker, on a log axis with 1-2-5 ticks and a line at 1 ("candidate faster" to the
 * left). Invalid cases show the word "invalid" and no marker; a ratio without an
 * interval (fewer than 3 pairs) is a hollow marker. When some case has
 * derived.roofline data it also writes DIR/plots/roofline.svg: per case and framework
 * a bar of the achieved bandwidth as % of the copy ceiling. The charts are plain
 * SVG 1.1 (no scripts, no external resources, font-family sans-serif, explicit
 * width/height and viewBox, text escaped), so they render in a browser and as images
 * on a code host's page. Like results.md they only read the JSON, which must have been
 * through dt_derive(); the output depends only on it.
 *
 * Ownership: nothing is retained; `written` (may be NULL) receives the written file
 * names relative to DIR ("plots/ratios.svg"). Files are written atomically. Reentrant;
 * never includes cuda.h. */
#ifndef DT_PLOT_H
#define DT_PLOT_H

#include "common/dt_common.h"

#include <jansson.h>

#define DT_PLOT_DIR "plots"
#define DT_PLOT_RATIOS "plots/ratios.svg"
#define DT_PLOT_ROOFLINE "plots/roofline.svg"

/* Writes every chart into dir/plots/ (created when missing) and appends the file names
 * (relative to dir) to `written` when it is a JSON array. */
dt_status dt_plot_write_all(const json_t *results, const char *dir, json_t *written,
                            dt_err *err);

/* The ratio chart as a fresh NUL-terminated string (caller frees), *len its length. */
dt_status dt_plot_ratios_svg(const json_t *results, char **svg, size_t *len, dt_err *err);

/* The roofline chart; *svg is NULL (and DT_OK) when no case has roofline data. */
dt_status dt_plot_roofline_svg(const json_t *results, char **svg, size_t *len, dt_err *err);

/* 1 when some case carries roofline data that dt_plot_roofline_svg can draw. */
int dt_plot_has_roofline(const json_t *results);

#endif
