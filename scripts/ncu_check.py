#!/usr/bin/env python3
"""scripts/ncu_check.py — issue 12: the native held control against ncu's kernel time.

    python3 scripts/ncu_check.py [--shape MxN] RUN/results.json NCU.csv [NCU.csv ...]

RUN: a device-timed CUDA run holding the cases (its native control_batch p50, µs per call,
one kernel a call for the row and elementwise ops). NCU.csv: `ncu --csv --page raw --metrics
gpu__time_duration.sum` output of the native worker running the same cases (device.sh
ncu-8192). Per kernel dt_<op>_<dtype> the median of its profiled launches (ncu's units
row: ns, us or ms) is matched to the run's case <op>_<m>x<n> of that dtype (one shape a
kernel name, as in the step). Prints op, ncu median, control p50, ratio and whether it is
within 3% (the issue's criterion). --shape MxN: only the run's cases of that shape (a
default-matrix run has several shapes a kernel name; the profiled one is 8192x8192). Exit 0 when every matched row is, 1 otherwise or when
nothing matched, 2 on a usage error."""
import csv
import gzip
import json
import re
import statistics
import sys

UNIT = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
        "second": 1e6, "s": 1e6}
DTYPES = {"f32": "f32", "bf16": "bf16", "f16": "f16"}


def ncu_times(paths):
    """kernel name -> [us] from ncu raw CSV files."""
    out = {}
    for path in paths:
        with open(path, newline="") as f:
            rows = list(csv.reader(line for line in f if not line.startswith("==")))
        hdr = None
        for i, r in enumerate(rows):
            if "Kernel Name" in r and "gpu__time_duration.sum" in r:
                hdr = i
                break
        if hdr is None:
            continue
        h = rows[hdr]
        kn, tm = h.index("Kernel Name"), h.index("gpu__time_duration.sum")
        scale = 1e-3  # ns unless a units row says otherwise
        for r in rows[hdr + 1:]:
            if len(r) <= max(kn, tm):
                continue
            v = r[tm].replace(",", "")
            if r[tm] in UNIT:
                scale = UNIT[r[tm]]
                continue
            try:
                x = float(v)
            except ValueError:
                continue
            name = re.sub(r"\(.*$", "", r[kn]).strip()
            out.setdefault(name, []).append(x * scale)
    return out


def main(argv):
    shape = None
    if len(argv) > 2 and argv[1] == "--shape":
        shape = argv[2]
        argv = argv[:1] + argv[3:]
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    op = gzip.open if argv[1].endswith(".gz") else open
    with op(argv[1], "rt") as f:
        run = json.load(f)
    times = ncu_times(argv[2:])
    rows = []
    for c in run["cases"]:
        dt = c.get("dtype", "f32")
        name = f"dt_{c['op']}_{DTYPES.get(dt, dt)}"
        if name not in times or (shape and f"{c['m']}x{c['n']}" != shape):
            continue
        ctl = (((c.get("derived") or {}).get("scopes") or {}).get("control_batch") or {}).get("native")
        if not ctl:
            continue
        k = statistics.median(times[name])
        rows.append((c["id"], name, len(times[name]), k, ctl["p50"], ctl["p50"] / k))
    if not rows:
        print("ncu_check: no kernel of the CSV matched a case with a native control_batch",
              file=sys.stderr)
        return 1
    print(f"{'case':28s} {'kernel':28s} {'n':>3s} {'ncu us':>9s} {'control us':>11s} {'ratio':>7s}")
    bad = 0
    for cid, name, n, k, ctl, r in rows:
        ok = abs(r - 1) <= 0.03
        bad += not ok
        print(f"{cid:28s} {name:28s} {n:3d} {k:9.2f} {ctl:11.2f} {r:7.3f} {'met' if ok else 'MISS'}")
    print(f"native control within 3% of ncu gpu__time_duration: {len(rows) - bad} of {len(rows)}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
