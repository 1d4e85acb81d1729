/* dt_cpu_plant.h — planted cheats of the native worker's CPU backend (tests only; issue 17
 * item 7, docs/anti-cheat.md): DUALTIME_PLANT_CHEAT=<kind>:<op> makes that op cheat in
 * one of the ways the anti-cheat checks must catch, each honest on its first call (the
 * cold call passes):
 *   cached   computes once, then copies that first result into the output (a replay)
 *   skip     skips the work while the first input's leading bytes are unchanged
 *   async    returns at once and computes on a thread 10 ms later (a "side stream")
 *   lazy     computes nothing in run; download computes the output (a lazy output)
 *   physics  computes only the first call of every run request (faster than physics)
 *   scratch  computes correctly, then writes its first input's first byte (its first
 *            value with the low bit flipped: an input used as scratch; cheat.wrote_input
 *            at a timed sample, where the cold call passed)
 * Unset (the default) or naming another op: no plant, the backend is honest. Ownership:
 * the plant holds a private copy of the output (cached) and its thread (async), joined
 * before every run and at free. Not thread-safe (one case of one worker). */
#ifndef DT_CPU_PLANT_H
#define DT_CPU_PLANT_H

#include <stdint.h>

#include "../../src/plan/dt_ops.h"

typedef struct dt_cpu_plant dt_cpu_plant;
/* One call of the op on ctx (the backend's per-case state). */
typedef void (*dt_cpu_plant_call)(const void *ctx);

/* The plant for a case of op (out: its output bytes in the arena; in: the first input's
 * first in_bytes), or NULL when DUALTIME_PLANT_CHEAT does not name op. */
dt_cpu_plant *dt_cpu_plant_new(dt_op op, uint8_t *out, int64_t out_bytes, const uint8_t *in,
                               int64_t in_bytes, dt_cpu_plant_call call, const void *ctx);
/* run(reps) the planted way; returns the host ns the calls took. */
int64_t dt_cpu_plant_run(dt_cpu_plant *p, int64_t reps);
/* download: the lazy plant computes here. */
void dt_cpu_plant_download(dt_cpu_plant *p);
void dt_cpu_plant_free(dt_cpu_plant *p);
/* The plant's kind ("cached", ...) for the implementation line. */
const char *dt_cpu_plant_kind(const dt_cpu_plant *p);

#endif
