#!/usr/bin/env python3
"""scripts/devices_check.py DEVICES_RUN/results.json [N_DEVICES]

Checks a `dualtime run --devices` run (scripts/device.sh steps `devices`, `devices-all`):
it is complete with N_DEVICES entries in "devices" (default: any, at least one), each
with a UUID, its own ceilings without error and exit status 0; every case names a device
of that list (index, name, UUID as in the list) and has clocks; the devices' case counts
add up to the run's cases; results.md beside it has the Devices section with one row per
device. Prints the devices table and one line per finding; exit 0 when all hold."""
import json
import os
import sys


def main(path, want=None):
    r = json.load(open(path))
    bad = []
    devs = r.get("devices") or []
    if not r.get("complete"):
        bad.append("the run is not complete")
    if not devs or (want is not None and len(devs) != want):
        bad.append("%d devices, want %s" % (len(devs), want if want is not None else ">= 1"))
    by = {d["index"]: d for d in devs}
    for d in devs:
        ce = d.get("ceilings") or {}
        print("device %s: %s %s bus %s cpus %s cases %s valid %s copy %s GB/s sync floor %s us"
              % (d["index"], d.get("name"), d.get("uuid"), d.get("pci_bus_id"), d.get("cpus"),
                 d.get("cases"), d.get("valid"), ce.get("copy_gbps"), ce.get("launch_sync_floor_us")))
        if d.get("shard") is None:  # more GPUs than cases: this one ran no shard
            continue
        if not d.get("uuid"):
            bad.append("device %s has no UUID" % d["index"])
        if not ce or ce.get("error"):
            bad.append("device %s has no ceilings: %s" % (d["index"], ce.get("error")))
        if d.get("exit_status") != 0:
            bad.append("device %s: its run exited %s" % (d["index"], d.get("exit_status")))
    for c in r["cases"]:
        dv = c.get("device")
        if not dv or dv.get("index") not in by:
            bad.append("%s: no device of the list (%s)" % (c["id"], dv))
            continue
        d = by[dv["index"]]
        if dv.get("uuid") != d.get("uuid") or dv.get("name") != d.get("name"):
            bad.append("%s: device %s differs from its devices entry" % (c["id"], dv))
        if "clocks" not in c:
            bad.append("%s: no clocks" % c["id"])
    if sum(d.get("cases") or 0 for d in devs) != len(r["cases"]):
        bad.append("the devices' case counts do not add up to %d" % len(r["cases"]))
    md = os.path.join(os.path.dirname(path), "results.md")
    text = open(md).read() if os.path.exists(md) else ""
    if "## Devices (--devices)" not in text:
        bad.append("results.md has no Devices section")
    for d in devs:
        if "| %s | " % d["index"] not in text:
            bad.append("results.md has no row of device %s" % d["index"])
    for b in bad:
        print("FAIL:", b)
    print("%d devices, %d cases, %d findings" % (len(devs), len(r["cases"]), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else None))
