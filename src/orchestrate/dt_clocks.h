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
 * Ownership: dt_clocks_open returns a handle the caller closes; JSON results are new
 * references the caller owns. Units in names: MHz, °C, W. Not thread-safe per handle
 * (NVML itself is); a handle holds one NVML init reference. */
#ifndef DT_CLOCKS_H
#define DT_CLOCKS_H

#include <jansson.h>
#include <stddef.h>

typedef struct dt_clocks dt_clocks;

/* SM clock change (relative) above which a case counts as moved. */
#define DT_CLOCKS_SM_TOLERANCE 0.02
/* Temperature rise (°C) above which a case counts as moved. */
#define DT_CLOCKS_MAX_TEMP_RISE_C 10

/* Loads NVML, initializes it and gets the device at NVML index device_index. On
 * failure returns NULL and writes one line into why (len bytes) naming every library
 * path tried or the NVML call that failed; never prints, never exits. */
dt_clocks *dt_clocks_open(int device_index, char *why, size_t len);

/* One snapshot: {"sm_mhz": int, "mem_mhz": int, "temp_c": int, "power_w": real,
 * "throttle_reasons": ["sw_power_cap", ...], "throttle_mask": int, "pstate": int}.
 * Each field is null when its query fails (or the NVML call is missing); h == NULL
 * gives all nulls. Reason names: gpu_idle, applications_clocks_setting, sw_power_cap,
 * hw_slowdown, sync_boost, sw_thermal_slowdown, hw_thermal_slowdown,
 * hw_power_brake_slowdown, display_clock_setting, other_0x<bit> for unknown bits. */
json_t *dt_clocks_read(dt_clocks *h);

/* {"library": path opened, "device_index": n, "name": ..., "pci_bus_id": ...,
 * "driver_version": ..., "nvml_version": ...}; strings null when unknown. */
json_t *dt_clocks_describe(dt_clocks *h);

/* Shuts NVML down (one reference) and unloads it. NULL is fine. */
void dt_clocks_close(dt_clocks *h);

/* Pure: 1 when the clocks moved between two snapshots (dt_clocks_read's shape), else 0.
 * Moved: SM clock changed by more than DT_CLOCKS_SM_TOLERANCE (relative to before),
 * memory clock changed at all, temperature rose by more than DT_CLOCKS_MAX_TEMP_RISE_C,
 * or a reason other than gpu_idle / applications_clocks_setting is present in either
 * snapshot (from throttle_mask when it is an integer, else from throttle_reasons).
 * A null field is not compared. why (len bytes, may be NULL) gets every finding,
 * joined by "; " (e.g. "SM clock 1980→1755 MHz (-11.4%); after: sw_power_cap"), or
 * "" when steady, or "no reading before" / "no reading after" (then 0). */
int dt_clocks_moved(const json_t *before, const json_t *after, char *why, size_t len);

/* Records one round's readings in a case object (pure, no NVML): appends
 * {"round","before","after","moved","why"} to case.clocks.rounds, sets case.clocks
 * {"before","after","moved","why"} to the first round that moved (else to the latest
 * round), "rounds_moved" to the count, and case.clocks_moved to whether any round
 * moved. Takes ownership of before and after (NULL: stored as null). */
void dt_clocks_record(json_t *case_json, int round, json_t *before, json_t *after);

#endif
