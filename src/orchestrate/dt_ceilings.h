/* dt_ceilings.h — asks a worker to measure the ceilings of the device it runs on (the
 * `ceilings` request of docs/protocol.md): copy bandwidth and launch floors, once per
 * run, stored by the CLI as results.environment.ceilings and read by the report's
 * roofline section (src/report/dt_derive.c, dt_report_md.c).
 *
 * Ownership: on DT_OK *ceilings is a new object the caller owns (json_decref). A
 * failure is never fatal for a run: the caller records {"error": err.msg} instead.
 * Units: GB/s = 1e9 bytes per second, µs. Not thread-safe (one worker, one request). */
#ifndef DT_CEILINGS_H
#define DT_CEILINGS_H

#include <jansson.h>

#include "common/dt_common.h"
#include "orchestrate/dt_worker.h"

/* Sends {"cmd":"ceilings","backend":backend} to the running worker w and waits up to
 * timeout_s. On success *ceilings holds the answer's "ceilings" object, checked:
 * copy_gbps, copy_bytes, launch_sync_floor_us and launch_queue_floor_us are positive
 * finite numbers; launch_sync_touch_floor_us (optional: older results.json files and
 * other workers lack it; the host time of one synchronized call that reads and writes
 * 512 bytes) and the held floors held_launch_floor_us, held_launch_batch_floor_us,
 * held_touch_floor_us, held_touch_batch_floor_us (optional likewise: event intervals of
 * held windows around one / per call of a batch of the empty and the touch kernel) are,
 * when present, positive finite numbers too; method (if present) a
 * string; "backend" is added when the worker did not name it. Fails with DT_EWORKER
 * (ok:false, e.g. a worker that does not offer ceilings; the worker stays usable unless
 * the transport failed, see dt_worker.h) or DT_EINVAL (a malformed answer, the message
 * naming the key). */
dt_status dt_ceilings_measure(dt_worker *w, const char *backend, double timeout_s,
                              json_t **ceilings, dt_err *err);

/* The validation above, on an object already in hand (e.g. a loaded results.json). */
dt_status dt_ceilings_check(const json_t *ceilings, dt_err *err);

#endif
