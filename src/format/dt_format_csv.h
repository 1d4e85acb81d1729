/* dt_format_csv.h — the run's numbers as a flat table for pandas or a spreadsheet
 * (`dualtime report --format csv`), and the rows that table and its JSON twin
 * (format/dt_table_json.h, `--format json`) share.
 *
 * Purpose. One row per case x implementation x scope that has a summary (the scope has
 * samples in that implementation), in plan order, implementations in display order
 * (candidates, then the baseline), scopes in enum order. Columns (dt_format_table_columns,
 * in this order): case, op, dtype, shape, m, n, k, valid, implementation, role, scope,
 * samples, p50_us, p90_us, min_us, iqr_us, noise, ratio, ci_low, ci_high, pairs, verdict —
 * times in µs per call; ratio/ci/pairs/verdict vs the baseline for a candidate row with
 * a ratio, empty for the baseline's rows and where there is none; noise = iqr/p50. A
 * valid-but-failed implementation has no rows for the scopes it did not measure.
 *
 * CSV: RFC 4180 — comma separated, CRLF line ends, a header line, a field quoted with
 * '"' (and '"' doubled) when it holds a comma, a quote, CR or LF; numbers with "%.9g";
 * empty fields for missing values.
 *
 * Ownership: rows borrow the record's strings (valid while r lives); *rows from
 * dt_format_table_rows is the caller's to free() (NULL when there are none); *text from
 * dt_format_csv is a fresh NUL-terminated string the caller frees. The record must be
 * derived (dt_derive_run). Thread-safety: reentrant. Never includes jansson.h. */
#ifndef DT_FORMAT_CSV_H
#define DT_FORMAT_CSV_H

#include "common/dt_common.h"
#include "record/dt_record.h"

#include <stddef.h>

typedef struct dt_table_row {
    const char *case_id, *op, *dtype;
    char shape[64];              /* "17x257", "127x193x61" */
    int64_t m, n, k;             /* k 0 for row ops */
    int valid;
    const char *impl, *role;
    dt_scope scope;
    size_t n_samples;
    double p50_us, p90_us, min_us, iqr_us, noise; /* NAN: missing */
    int has_ratio;               /* a candidate row with a ratio vs the baseline */
    double ratio, ci_low, ci_high;                 /* NAN: missing */
    size_t pairs;
    const char *verdict;         /* NULL: no ratio */
    double process_band;         /* held scopes: the verdict's interval widening; NAN: none */
} dt_table_row;

/* The column names, in order (n receives their count). */
const char *const *dt_format_table_columns(size_t *n);
/* Every row of r. DT_EINVAL when r is not derived. */
dt_status dt_format_table_rows(const dt_record *r, dt_table_row **rows, size_t *n_rows,
                               dt_err *err);
/* The CSV text of r. DT_EINVAL (not derived), DT_EIO (memory stream). */
dt_status dt_format_csv(const dt_record *r, char **text, size_t *len, dt_err *err);

#endif
