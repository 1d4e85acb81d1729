/* dt_decomp_raw.h — the E2E decomposition's raw samples as the run record holds them
 * (issue 13 item 3): the timestamps of one unheld single-call probe sample on the host
 * clock, and an implementation's set of them. Data only: the arithmetic (segments, checks,
 * the median sample) is stats/dt_decomp.h, which reads these. Units: ns. Ownership: a raw
 * sample owns its arrays, a set its samples and reason. Not thread-safe. */
#ifndef DT_DECOMP_RAW_H
#define DT_DECOMP_RAW_H

#include <stddef.h>
#include <stdint.h>

typedef struct dt_decomp_interval {
    int64_t a_ns, b_ns; /* launch: enter, exit; kernel: start, end (host clock) */
} dt_decomp_interval;

/* One decomposition sample as recorded (results.json "decomposition"). */
typedef struct dt_decomp_raw {
    int32_t round;                 /* round of the sample */
    int64_t position;              /* place in the run's global sample order */
    int64_t call_start_ns;         /* host clock */
    int64_t sync_return_ns;        /* host clock */
    double host_call_ns;           /* measured single call (host timer) */
    double clock_offset_ns;        /* CUPTI clock - host clock (already applied) */
    double clock_uncertainty_ns;   /* u; >= 0 */
    int64_t clock_source;          /* dt_timing_clock_source (1 callback, 2 offset) */
    dt_decomp_interval *launches;  /* in order of entry */
    size_t n_launches;
    dt_decomp_interval *kernels;   /* in order of start */
    size_t n_kernels;
} dt_decomp_raw;

/* The samples of one implementation (three per round) and, when none could be taken, why. */
typedef struct dt_decomp_set {
    dt_decomp_raw *v;
    size_t n, cap;
    char *unavailable;          /* NULL: no reason recorded */
} dt_decomp_set;

/* Frees raw's arrays and zeroes it. */
void dt_decomp_raw_free(dt_decomp_raw *raw);
/* Deep copy (arrays duplicated). */
void dt_decomp_raw_copy(dt_decomp_raw *dst, const dt_decomp_raw *src);
/* Appends *raw (struct move: its arrays now belong to set). */
void dt_decomp_set_push(dt_decomp_set *set, const dt_decomp_raw *raw);
/* Records why no sample was taken (the first reason wins; copied). */
void dt_decomp_set_unavailable(dt_decomp_set *set, const char *reason);
void dt_decomp_set_free(dt_decomp_set *set);

#endif
