/* dt_ceilings.h — the ceilings of the run's device (copy bandwidth and launch floors,
 * the `ceilings` request of docs/protocol.md), measured once per run and stored in the
 * record as environment.ceilings, read by the report's roofline and E2E floor sections.
 *
 * The first member of the session that offers them answers (the candidate, else the
 * baseline); the answer is checked by the protocol module (dt_protocol_ceilings). A
 * refusal is never fatal for a run: the record keeps the reason instead (error).
 * Ownership: the strings filled into *out are the record's. Units: GB/s = 1e9 bytes per
 * second, µs. Not thread-safe (one worker, one request). */
#ifndef DT_CEILINGS_H
#define DT_CEILINGS_H

#include "common/dt_common.h"
#include "record/dt_record.h"
#include "session/dt_session.h"

/* Asks the session's main workers in order (each up to timeout_s) until one answers;
 * *out is present either way: with the values, or with error = the first refusal. Then
 * the FLOP ceilings into out->flops from every worker (dt_flop_ceilings.h), kept
 * whether or not the copy ceilings failed. */
void dt_ceilings_measure(dt_session *s, const char *backend, double timeout_s,
                         dt_ceilings_rec *out);

#endif
