/* dt_clocks.h — GPU clocks, temperature, power and clock-event ("throttle") reasons
 * through NVML, loaded at run time with dlopen, so dualtime neither links nor needs
 * NVML: where it is absent, dt_clocks_open says why and the run records that.
 *
 * The orchestrator reads the clocks before and after the timed part of a case and
 * flags the case when they moved (dt_clocks_moved; the rule is in
 * docs/results-format.md, "GPU clocks"). Nothing here includes cuda.h or nvml.h: the
 * few NVML declarations needed are in dt_clocks.c.
 *
 * Library search: $DT_NVML_LIBRARY (when set, tried first), libnvidia-ml.so.1 (the
 * loader's path), then /usr/local/nvidia/lib64, /usr/lib/x86_64-linux-gnu, /usr/lib64,
 * /usr/lib/wsl/lib. The device index is NVML's (it ignores CUDA_VISIBLE_DEVICES); the
 * device's PCI bus is in dt_clocks_describe so a caller can check it is the GPU in use.
 *
 * Ownership: dt_clocks_open returns a handle the caller closes; snapshots and
 * descriptions are filled into the caller's record structs (record/dt_record.h).
 * Units in names: MHz, °C, W. Not thread-safe per handle (NVML itself is); a handle
 * holds one NVML init reference. */
#ifndef DT_CLOCKS_H
#define DT_CLOCKS_H

#include <stddef.h>

#include "../record/dt_record.h"

typedef struct dt_clocks dt_clocks;

/* SM clock change (relative) above which a case counts as moved. */
#define DT_CLOCKS_SM_TOLERANCE 0.02
/* Temperature rise (°C) above which a case counts as moved. */
#define DT_CLOCKS_MAX_TEMP_RISE_C 10

/* Loads NVML, initializes it and gets the device at NVML index device_index. On
 * failure returns NULL and writes one line into why (len bytes) naming every library
 * path tried or the NVML call that failed; never prints, never exits. */
dt_clocks *dt_clocks_open(int device_index, char *why, size_t len);

/* Empties s: integer fields DT_NULL_I64, power NAN, no throttle reading. */
void dt_clocks_snapshot_init(dt_clock_snapshot *s);
/* Frees s's reason names and empties it. */
void dt_clocks_snapshot_free(dt_clock_snapshot *s);

/* One snapshot into *s (owned by the caller: dt_clocks_snapshot_free or
 * dt_clocks_record): sm_mhz, mem_mhz, temp_c, power_w, throttle_mask with its reason
 * names (has_throttle), pstate. Each field is null (DT_NULL_I64 / NAN / has_throttle 0)
 * when its query fails (or the NVML call is missing); h == NULL gives all nulls. Reason
 * names: gpu_idle, applications_clocks_setting, sw_power_cap, hw_slowdown, sync_boost,
 * sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown,
 * display_clock_setting, other_0x<bit> for unknown bits. */
void dt_clocks_read(dt_clocks *h, dt_clock_snapshot *s);

/* The description fields of environment.nvml (library opened, device_index, name, uuid,
 * driver_version, nvml_version, pci_bus_id, pci_bus; null when unknown) into *n, with
 * has_description set; available/reason are the caller's. */
void dt_clocks_describe(dt_clocks *h, dt_nvml *n);

/* The GPU's total-energy counter (nvmlDeviceGetTotalEnergyConsumption, millijoules since
 * the driver loaded; the whole GPU's) into *mj: 1 when read; 0 when not, with why (len
 * bytes, may be NULL) "NVML has no energy counter" (the call is missing or fails: GPUs
 * before Volta) or "NVML not open" (h NULL). The counter updates at its own rate (tens
 * of ms), so a caller sums many windows before dividing. */
int dt_clocks_energy_mj(dt_clocks *h, unsigned long long *mj, char *why, size_t len);

/* Shuts NVML down (one reference) and unloads it. NULL is fine. */
void dt_clocks_close(dt_clocks *h);

/* Pure: 1 when the clocks moved between two snapshots, else 0. NULL means no reading.
 * Moved: SM clock changed by more than DT_CLOCKS_SM_TOLERANCE (relative to before),
 * memory clock changed at all, temperature rose by more than DT_CLOCKS_MAX_TEMP_RISE_C,
 * or a reason other than gpu_idle / applications_clocks_setting is present in either
 * snapshot (from throttle_mask when it was read, else from the reason names).
 * A null field is not compared. why (len bytes, may be NULL) gets every finding,
 * joined by "; " (e.g. "SM clock 1980→1755 MHz (-11.4%); after: sw_power_cap"), or
 * "" when steady, or "no reading before" / "no reading after" (then 0). */
int dt_clocks_moved(const dt_clock_snapshot *before, const dt_clock_snapshot *after, char *why,
                    size_t len);

/* Records one round's readings in a case (pure, no NVML): appends a clock round (round,
 * before, after, moved, why: valid UTF-8) to c; the case's summary (the first round
 * that moved, else the latest) and clocks_moved follow from the record
 * (dt_case_clock_shown). Takes the snapshots' contents (NULL: no reading) and leaves
 * them empty. */
void dt_clocks_record(dt_case *c, int round, dt_clock_snapshot *before, dt_clock_snapshot *after);

/* 1 when s is valid UTF-8 (NVML strings and cut messages are checked before storing). */
int dt_clocks_utf8_valid(const char *s);

#endif
