#!/usr/bin/env python3
"""scripts/nvml_cost.py — what one NVML query costs on this machine (device.sh nvml-cost).

    python3 scripts/nvml_cost.py [N]

Times N (default 50) calls each of nvmlDeviceGetTotalEnergyConsumption (read around every
third e2e batch sample: src/orchestrate/dt_run.c, DT_RUN_ENERGY_EVERY) and the clock and
temperature reads of a clock snapshot, on GPU 0, through libnvidia-ml.so.1 with ctypes.
Prints median, min and max in ms per call. Measured on the H200 (session 5): energy
3.19 ms median (2.77-15.3). Exit 1 when NVML cannot be loaded or initialised."""
import ctypes
import sys
import time


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 50
    try:
        nv = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError as e:
        print(f"nvml_cost: {e}", file=sys.stderr)
        return 1
    if nv.nvmlInit_v2() != 0:
        print("nvml_cost: nvmlInit_v2 failed", file=sys.stderr)
        return 1
    h = ctypes.c_void_p()
    nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))
    u64, u32 = ctypes.c_ulonglong(), ctypes.c_uint()
    calls = [("energy (total energy consumption)", lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(u64))),
             ("SM clock", lambda: nv.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(u32))),
             ("temperature", lambda: nv.nvmlDeviceGetTemperature(h, 0, ctypes.byref(u32)))]
    for name, f in calls:
        t = []
        for _ in range(n):
            t0 = time.perf_counter()
            f()
            t.append(time.perf_counter() - t0)
        t.sort()
        print(f"nvml {name}: median {t[n // 2] * 1e3:.3f} ms, min {t[0] * 1e3:.3f}, max {t[-1] * 1e3:.3f} ({n} calls)")
    nv.nvmlShutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
