/* dt_outputs.h — the one "write everything" of a run directory, from a derived record:
 * results.json (the codec's encoding, written atomically), results.md (dt_format_md,
 * atomically) and the charts results.md links (plots/ratios.svg always,
 * plots/roofline.svg when some case has roofline data; dt_format_svg). It serves
 * `dualtime run` (after every case), `dualtime run --resume` (the same) and
 * `dualtime report` (results.md and plots only: the input results.json is never
 * rewritten, so a format-1 file stays as it is).
 *
 * The record must have been through dt_derive_run (stats/dt_derive.h); nothing here
 * measures, derives or reads JSON. Ownership: nothing is retained. Errors: DT_EIO
 * naming the file and the failed step; the files already written stay. The writers'
 * callers check the paths first (dt_outputs_check, dt_outputs_check_report). Not
 * thread-safe for one directory (two writers would race on the temporary files). */
#ifndef DT_OUTPUTS_H
#define DT_OUTPUTS_H

#include "common/dt_common.h"
#include "record/dt_record.h"

/* DIR/results.json, DIR/results.md and the charts in DIR/plots. */
dt_status dt_outputs_write(const dt_record *r, const char *dir, dt_err *err);

/* DIR/results.json only (atomically, like dt_outputs_write): the record as it is, with
 * its derived sections only if it has them. (The run writes results.json after every case
 * incrementally, record/dt_record_cache.h, and everything, dt_outputs_write, at most
 * every few seconds and at the end.) */
dt_status dt_outputs_write_record(const dt_record *r, const char *dir, dt_err *err);

/* May dt_outputs_write write into dir? dir is a folder or a new path, and each of its
 * files (results.json, results.md, plots/ and its charts) a regular file or a new path
 * (common/dt_outpath.h). DT_EINVAL naming the path and why; nothing is written. */
dt_status dt_outputs_check(const char *dir, dt_err *err);

/* May dt_outputs_write_report write md_path and its plots? Each is a regular file or a
 * new path and none is one of inputs (n_inputs paths, the files being read: same inode,
 * so a link or another spelling is caught). DT_EINVAL naming the path; nothing written. */
dt_status dt_outputs_check_report(const char *md_path, const char *const *inputs,
                                  size_t n_inputs, dt_err *err);

/* results.md at md_path and the plots in the directory of md_path (`dualtime report`). */
dt_status dt_outputs_write_report(const dt_record *r, const char *md_path, dt_err *err);

#endif
