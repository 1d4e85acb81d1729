#!/usr/bin/env python3
"""scripts/issue12_check.py — issue 12's one-run criteria from a CUDA run's results.json[.gz].

    python3 scripts/issue12_check.py RUN/results.json

1. Held control batch at <= 17x257 (m x n <= 4369; the row and elementwise ops, not gemm)
   within 1.15 x (kernels per call) x the held touch floor (derived.held_floor:
   over_touch_floor / kernels_per_call <= 1.15). A miss also shows the CUPTI kernel time a
   call (probe batch kernel_sum_us_p50) and the rest, control - kernels: where the rest is
   within the touch floor, the window holds the kernels' own time plus the launch floor.
2. Held probe/control, batch and single (derived.scopes.probe_*.probe_over_control, the
   median of paired ratios): at 8192^2 (m = n = 8192) within [0.98, 1.03] (batch) and
   <= 1.03 (single); at <= 128x1024 <= 1.15 (both).
Prints each row (case, implementation, value, met/MISS) and a count per criterion.
Exit 0 when every row is met, 1 otherwise, 2 on a usage error."""
import gzip
import json
import sys


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    run = load(argv[1])
    crit = {}  # name -> [(case, impl, value, ok)]

    def add(name, case, impl, v, ok, note=""):
        crit.setdefault(name, []).append((case, impl, v, ok, note))

    for c in run["cases"]:
        d = c.get("derived") or {}
        mn = c["m"] * c["n"]
        hf = d.get("held_floor") or {}
        if mn <= 17 * 257 and c["op"] != "gemm":
            probe = (((d.get("scopes") or {}).get("probe_batch") or {}).get("probe") or {})
            for impl, h in (hf.get("impl") or {}).items():
                if h.get("over_touch_floor") and h.get("kernels_per_call"):
                    v = h["over_touch_floor"] / h["kernels_per_call"]
                    ks = (probe.get(impl) or {}).get("kernel_sum_us_p50")
                    cb = h.get("control_batch_us")
                    note = (f" (control {cb:.3f} us, kernels {ks:.3f}, rest {cb - ks:.3f}, touch "
                            f"floor {hf.get('touch_floor_us', float('nan')):.3f})"
                            if ks is not None and cb is not None else "")
                    add("held control batch / (kernels x touch floor) <= 1.15, <= 17x257",
                        c["id"], impl, v, v <= 1.15, note)
        big = c["m"] == 8192 and c["n"] == 8192
        small = mn <= 128 * 1024
        for scope in ("probe_batch", "probe_single"):
            poc = ((d.get("scopes") or {}).get(scope) or {}).get("probe_over_control") or {}
            for impl, x in poc.items():
                v = x.get("median")
                if v is None:
                    continue
                if big:
                    lo = 0.98 if scope == "probe_batch" else 0.0
                    add(f"{scope} probe/control in [{lo:.2f}, 1.03], 8192^2", c["id"], impl, v,
                        lo <= v <= 1.03)
                elif small:
                    add(f"{scope} probe/control <= 1.15, <= 128x1024", c["id"], impl, v, v <= 1.15)
    if not crit:
        print("issue12_check: no rows (not a device-timed CUDA run?)", file=sys.stderr)
        return 1
    bad = 0
    for name, rows in crit.items():
        met = sum(r[3] for r in rows)
        bad += len(rows) - met
        vals = [r[2] for r in rows]
        print(f"{name}: {met} of {len(rows)} met (range {min(vals):.3f} .. {max(vals):.3f})")
        for case, impl, v, ok, note in sorted(rows, key=lambda r: -r[2]):
            if not ok:
                print(f"  MISS {case} {impl}: {v:.3f}{note}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
