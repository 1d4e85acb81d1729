/* dt_table_json.h — the run's flat table (format/dt_format_csv.h, dt_table_row) as one
 * JSON array (`dualtime report --format json`), for pandas (pd.read_json) or a
 * spreadsheet: one object per row, keys = dt_format_table_columns() in that order,
 * numbers as numbers (17 significant digits), missing values null, "valid" a boolean.
 *
 * A codec file: with dt_record_json.c, dt_compare_json.c and the protocol modules the
 * only place that includes jansson. Ownership: *text is a fresh NUL-terminated string
 * (2-space indentation, a final newline) the caller frees; nothing on failure. The
 * record must be derived. Thread-safety: reentrant. */
#ifndef DT_TABLE_JSON_H
#define DT_TABLE_JSON_H

#include "common/dt_common.h"
#include "record/dt_record.h"

#include <stddef.h>

/* The table of r as JSON text. DT_EINVAL: not derived or a string that is not UTF-8. */
dt_status dt_table_json(const dt_record *r, char **text, size_t *len, dt_err *err);

#endif
