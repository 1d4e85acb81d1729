/* dt_format_devices.h — the results.md section of a run over several local GPUs
 * (`dualtime run --devices`, docs/devices.md): the per-device consistency table (what
 * each GPU ran, its identity, CPUs, wall time, median SM clock, its own ceilings and the
 * median paired ratio of its cases, so a device that disagrees with the others shows)
 * and, with --replicate, the replicated cases' p50 on every device and their spread.
 *
 * Reads only the record (r->devices, r->replicas, the cases' device, clocks and derived
 * ratios); prints nothing for a run without devices. Units: µs per call, GB/s, MHz, s.
 * Thread-safety: reentrant. Never includes jansson.h or cuda.h. */
#ifndef DT_FORMAT_DEVICES_H
#define DT_FORMAT_DEVICES_H

#include <stdio.h>

#include "record/dt_record.h"

/* "## Devices" onto o (nothing when r->n_devices is 0). */
void dt_format_devices_md(FILE *o, const dt_record *r);

#endif
