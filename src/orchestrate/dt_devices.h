/* dt_devices.h — the pure parts of a run over several local GPUs (`dualtime run --devices
 * LIST`, docs/devices.md): the LIST, the GPUs present (NVML), the CPUs each device's run
 * is confined to, the --replicate selection and the flags that rebuild it, and what the
 * merged record learns from the per-device runs (each case's device, the devices table,
 * the spread of replicated cases).
 *
 * The process side (one `dualtime run --plan` child per device, their stderr, the merge)
 * is cli/dt_devices_cli.c. Device indexes are NVML's (nvidia-smi's numbering, PCI bus
 * order); a device's run sees only it (CUDA_VISIBLE_DEVICES = its UUID), so inside that
 * run it is CUDA device 0 and NVML device `index` (DUALTIME_NVML_DEVICE).
 * Ownership: strings and arrays filled here are the caller's (or the record's). Units:
 * microseconds (us), relative spreads. Never prints, never exits; reentrant. */
#ifndef DT_DEVICES_H
#define DT_DEVICES_H

#include <stddef.h>

#include "common/dt_affinity.h"
#include "common/dt_common.h"
#include "plan/dt_plan.h"
#include "record/dt_record.h"

#define DT_DEVICES_MAX 64

/* One GPU as NVML describes it (strings "" when unknown). */
typedef struct dt_device_info {
    int index;
    char name[96], uuid[96], pci_bus_id[32];
} dt_device_info;

/* Parses a --devices LIST: "all", or indexes "0,1,3" (each once, each < n_present).
 * n_present < 0: NVML could not count the GPUs; then only "0" (and "all", meaning 0) is
 * accepted, `why_unknown` saying why in the refusal. out[] gets the indexes in the
 * given order, *n their count (1..DT_DEVICES_MAX). DT_EINVAL: "--devices: 'LIST': ...". */
dt_status dt_devices_parse(const char *list, int n_present, const char *why_unknown, int *out,
                           int *n, dt_err *err);

/* The GPUs NVML sees: describes indexes 0, 1, ... until one cannot be opened, into
 * out[0..max) and returns their count; -1 when NVML is absent or has no device 0, with
 * why (len bytes). (Tests give a fake NVML through DT_NVML_LIBRARY, orchestrate/dt_clocks.h.) */
int dt_devices_enumerate(dt_device_info *out, int max, char *why, size_t len);

/* Splits the usable CPUs cpus[0..n) (ascending) into `parts` consecutive equal shares,
 * lists[i] a CPU list ("4-7"). Returns 1, or 0 (lists untouched) when n < parts. */
int dt_devices_split_cpus(const int *cpus, int n, int parts, char (*lists)[DT_PIN_LIST_LEN]);

/* --replicate LIST: "all" or case ids of plan (comma-separated, each once). The chosen
 * ids (plan order) into *ids. DT_EINVAL: "--replicate: 'ID' is not a case of this run
 * (cases: ...)". */
dt_status dt_devices_replicate_select(const char *list, const dt_plan *plan, dt_strv *ids,
                                      dt_err *err);

/* The run flags that make a run of at least the cases ids of plan (their ops, row
 * shapes, gemm shapes and dtypes; a row op runs every chosen row shape, so the run may
 * hold more cases than chosen): "--operations", V, "--row-shapes", V, ... appended to
 * *argv_out (copies). */
void dt_devices_replicate_flags(const dt_plan *plan, const dt_strv *ids, dt_strv *argv_out);

/* Every case of the merged record r gets the device of its shard (r->devices[k].shard
 * == case.shard): index, name, UUID. Cases whose shard has no device keep none. */
void dt_devices_mark_cases(dt_record *r);

/* Counts per device of the merged, derived record r: cases and valid cases. */
void dt_devices_count_cases(dt_record *r);

/* r->replicas from reps[0..n) (n == r->n_devices; the replicated run on each device,
 * derived; NULL where a device produced none): for each id of ids and each of r's
 * implementations, scopes e2e_batch and (when any device has it) control_batch: the
 * p50 per device and spread = (max - min) / min over the devices with a value (NAN
 * with fewer than 2). */
void dt_devices_replicas(dt_record *r, const dt_record *const *reps, size_t n,
                         const dt_strv *ids);

#endif
