/* dt_refcache.h — the FP64 reference of a case kept on disk between the rounds of one
 * run (docs/device-workflow.md, "Host passes per case-round"), so a reference that costs
 * far more to compute than to read is computed once per case and input set, not once per
 * round, while the orchestrator keeps in memory only the case in flight (issue 16 item 3:
 * nothing of other cases stays in RAM).
 *
 * Which references: dt_refcache_worth — the case's flops (dt_op_flops) per output
 * element at least DT_REFCACHE_MIN_FLOPS_PER_ELEM (gemm: 2K, so K >= 128; sum and
 * cross_entropy: a whole row per element, N >= 256 and N >= 86); elementwise and row-normalising ops (a few flops per element) are cheaper to
 * recompute on the oracle's threads than to write and read back (16 bytes per element).
 * DUALTIME_REF_CACHE=0 turns the cache off, =all caches every case (tests, A/B).
 *
 * A file holds a header (magic, version, the case's key: op, dtype, input distribution,
 * m, n, k, views, output shape; the checksum of the exact pristine arena the reference
 * was computed from; the checksum of the data), then ref and scale (rows x cols doubles
 * each). A load is trusted only when every key field, the pristine checksum of the
 * arena in hand and the data checksum match and the file has exactly the right size;
 * anything else is a rejection with the reason (the caller recomputes and records it),
 * never a silent reuse. The checksum (dt_refcache_checksum) is a 64-bit multiply-rotate
 * hash over 8-byte words in 1 MiB chunks on the oracle's OpenMP threads: it catches
 * corruption, truncation and a stale file, not an adversary who can write the run's
 * directory.
 *
 * Files live in DIR/.scratch/ref/<case id>.set<k>.ref of the run's output directory; the
 * last round that uses a file removes it, dt_refcache_finish removes what is left and
 * the directories at the end of a complete run. An interrupted run leaves them; its resume
 * verifies them like any other.
 *
 * Ownership: a dt_refcache is a plain value; loaded references are owned by the caller
 * (dt_oracle_free). Thread-safety: one caller per dt_refcache; distinct files may be used
 * concurrently. Library code: no output, no exit. */
#ifndef DT_REFCACHE_H
#define DT_REFCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "../common/dt_common.h"
#include "../data/dt_arena.h"
#include "../oracle/dt_oracle.h"

#define DT_REFCACHE_MIN_FLOPS_PER_ELEM 256.0

enum { DT_REFCACHE_OFF = 0, DT_REFCACHE_AUTO = 1, DT_REFCACHE_ALL = 2 };

typedef struct dt_refcache {
    int mode;        /* DT_REFCACHE_* */
    char dir[4096];  /* OUTPUT/.scratch/ref ("" when off) */
} dt_refcache;

/* What one dt_refcache_get did. */
typedef struct dt_refcache_outcome {
    int loaded;       /* the reference came from the file (verified) */
    int saved;        /* it was computed and written for a later round */
    int rejected;     /* a file was there but not trusted: why says why (then computed) */
    char why[320];
} dt_refcache_outcome;

/* Sets rc up for a run writing into output_dir; env is DUALTIME_REF_CACHE's value (NULL
 * or "": auto; "0": off; "all": every case). Creates nothing yet. */
void dt_refcache_init(dt_refcache *rc, const char *output_dir, const char *env);

/* 1 when the reference of layout L goes to disk under rc's mode. */
int dt_refcache_worth(const dt_refcache *rc, const dt_case_layout *L);

/* The checksum of bytes [p, p + n) (0 for n 0); equal bytes give equal sums for any
 * thread count. */
uint64_t dt_refcache_checksum(const void *p, size_t n);

/* The file of (case_id, set) into path. */
void dt_refcache_path(const dt_refcache *rc, const char *case_id, int set, char *path,
                      size_t len);

/* Writes ref (the reference of L computed from an arena with checksum pristine_sum) to
 * path (through a temporary file renamed into place). */
dt_status dt_refcache_save(const char *path, const dt_case_layout *L, uint64_t pristine_sum,
                           const dt_oracle_ref *ref, dt_err *err);

/* Reads path into ref when it is the reference of L from an arena with checksum
 * pristine_sum: 1 loaded and verified (ref owned by the caller); 0 no such file; -1 a
 * file that is not trusted (why says why; ref zeroed). */
int dt_refcache_load(const char *path, const dt_case_layout *L, uint64_t pristine_sum,
                     dt_oracle_ref *ref, char *why, size_t len);

/* The reference of input set `set` of case case_id from pristine (layout L): loaded when
 * rc has a trusted file (removed after the load unless keep), else dt_oracle_compute and,
 * when save and dt_refcache_worth, written for a later round (a failed write is not an
 * error: why says it, the reference is still returned). out says what happened. */
dt_status dt_refcache_get(const dt_refcache *rc, const char *case_id, int set,
                          const dt_case_layout *L, const uint8_t *pristine, int save, int keep,
                          dt_oracle_ref *ref, dt_refcache_outcome *out, dt_err *err);

/* Removes rc's files (.ref and unfinished temporaries) and directories (the end of a
 * complete run: no later round needs them). */
void dt_refcache_finish(const dt_refcache *rc);

#endif
