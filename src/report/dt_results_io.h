/* dt_results_io.h — reading, validating and atomically writing results.json, and
 * regenerating results.md from it.
 *
 * dt_results_load() refuses malformed, truncated or foreign files with one line naming
 * what is wrong (jansson's line/column for syntax errors, the JSON path of a missing or
 * mistyped field otherwise). Schema: docs/results-format.md. dt_results_write_atomic()
 * writes a temporary file in the destination's directory, fsyncs it, renames it over
 * the destination and fsyncs the directory, so a reader sees the old or the new file,
 * never a torn one. Ownership: *out of a successful load is the caller's (json_decref).
 * Never includes cuda.h; reentrant. */
#ifndef DT_RESULTS_IO_H
#define DT_RESULTS_IO_H

#include "common/dt_common.h"

#include <jansson.h>
#include <stdint.h>

#define DT_RESULTS_FORMAT "dualtime-results"
#define DT_RESULTS_FORMAT_VERSION 1

/* Checks the structure of an in-memory results object (what dt_results_load checks
 * after parsing). `what` names the source in messages (a path or "results"). */
dt_status dt_results_validate(const json_t *results, const char *what, dt_err *err);

/* The largest results.json the loader reads (1 GiB); larger files are refused. */
#define DT_RESULTS_MAX_BYTES ((uint64_t)1 << 30)

/* Parses and validates path (a regular file of at most DT_RESULTS_MAX_BYTES); on success
 * *out is a new reference. */
dt_status dt_results_load(const char *path, json_t **out, dt_err *err);

/* Writes `text` (len bytes) to path atomically (temp file in the same directory,
 * fsync, rename, fsync of the directory). Mode 0644. */
dt_status dt_results_write_text_atomic(const char *path, const char *text, size_t len,
                                       dt_err *err);

/* Serializes results (2-space indent, insertion order, 17 significant digits so that
 * every double round-trips) and writes it atomically to path. */
dt_status dt_results_write_atomic(const json_t *results, const char *path, dt_err *err);

/* Load json_path, derive every statistic again from the raw samples, and write the
 * Markdown report atomically to md_path. The JSON file is not modified. */
dt_status dt_report_regenerate(const char *json_path, const char *md_path, dt_err *err);

#endif
