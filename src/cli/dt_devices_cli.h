/* dt_devices_cli.h — `dualtime run --devices LIST [--replicate CASES]` (docs/devices.md):
 * one run spread over local GPUs.
 *
 * The run is planned once (`dualtime plan`, one shard per device, in DIR/devices), then
 * every device runs its shard as its own `dualtime run --plan` child, concurrently: its
 * own session (workers), its own ceilings, its own NVML clocks, confined to its own share
 * of the CPUs, seeing only its GPU (CUDA_VISIBLE_DEVICES = the GPU's UUID,
 * DUALTIME_NVML_DEVICE = its NVML index). The shards are merged (record/dt_record_merge.h)
 * into DIR/results.json and DIR/results.md with each case's device, the devices table
 * (per-device ceilings) and, with --replicate, the chosen cases run on every device
 * afterwards and their spread between devices. Everything above the run loop: the run
 * loop itself is untouched.
 * Messages go to stderr as "dualtime: ..." lines (a child's prefixed with its device);
 * returns the exit status (0 every case valid, 1 a case or a device's run failed, 2 bad
 * arguments: the flag and value named, nothing written). Not thread-safe (signals,
 * environment of the children). */
#ifndef DT_DEVICES_CLI_H
#define DT_DEVICES_CLI_H

/* 1 when argv[0..argc) holds --devices or --replicate (a devices run). */
int dt_devices_cli_wanted(int argc, char **argv);

/* argv: the run flags (after "run", or after the program name in the seed style);
 * full_argv: the whole command line, recorded. */
int dt_devices_cli_run(int argc, char **argv, int full_argc, char **full_argv);

#endif
