/* dt_latin.h — the order in which the implementations of a run take their samples: a
 * rotated Latin square, so that over any n consecutive sample indexes every one of n
 * implementations takes every position (first, second, ...) exactly once, whatever
 * drift or warm-up effect a position carries. With two it is the ABBA order the run
 * always had: the candidate first on even indexes, the baseline on odd ones.
 *
 * Pure function; no state, no allocation; thread-safe. (The order of the three device
 * samples within one implementation's turn is dt_run_device_order, orchestrate/dt_run.h.) */
#ifndef DT_LATIN_H
#define DT_LATIN_H

#define DT_LATIN_MAX 64 /* n at most this */

/* The implementations (indexes in record order: 0 the baseline, 1.. the candidates) in
 * the order they take sample index `index` (>= 0), into order[0..n): the sequence
 * 1, 2, ..., n-1, 0 (candidates, then the baseline) rotated left by index mod n, i.e.
 * order[q] = seq[(index + q) mod n]; reversed when flip (alternate rounds), so that n
 * indexes of a round and n of the next one hold every pairwise order (a before b, b
 * before a) equally often. n in 1..DT_LATIN_MAX. */
void dt_latin_order(int n, int index, int flip, int order[]);

#endif
