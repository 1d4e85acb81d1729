/* dt_compare_json.h — the JSON form of a comparison of two runs (`dualtime compare A B
 * --format json`): a dt_compare_result (stats/dt_compare_runs.h) as JSON text, and the
 * JSON of a refusal (the runs cannot be compared).
 *
 * Purpose. The same content as the Markdown of format/dt_format_compare.h, for machines:
 * every row with both runs' sides, the change with its interval, the spread, the
 * smallest detectable change and the verdict; the layout is docs/results-format.md
 * ("Comparing two runs", JSON). Text: 2-space indentation, keys in a fixed order, reals
 * with 17 significant digits, NAN as null, a final newline. A codec file: with
 * dt_record_json.c the only place here that includes jansson.
 *
 * Ownership: *text is a fresh NUL-terminated string the caller frees; *len excludes the
 * NUL; nothing is returned on failure (DT_EINVAL: a string that is not UTF-8). Units:
 * microseconds per call; ratios unitless. Thread-safety: reentrant. */
#ifndef DT_COMPARE_JSON_H
#define DT_COMPARE_JSON_H

#include "common/dt_common.h"
#include "stats/dt_compare_runs.h"

#include <stddef.h>

#define DT_COMPARE_FORMAT "dualtime-compare"
#define DT_COMPARE_FORMAT_VERSION 1

/* The result as JSON ("comparable": true, "exit_status" 0 or 1). */
dt_status dt_compare_result_encode(const dt_compare_result *res, char **text, size_t *len,
                                   dt_err *err);

/* A refusal as JSON: {"format", "format_version", "comparable": false, "reason": reason,
 * "exit_status": 2}; reason is dt_compare_runs's error message. */
dt_status dt_compare_refusal_encode(const char *reason, char **text, size_t *len,
                                    dt_err *err);

#endif
