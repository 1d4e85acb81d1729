#!/usr/bin/env python3
"""scripts/probe_ratio_ab.py — held probe/control of two runs of the same cases side by side.

    python3 scripts/probe_ratio_ab.py A/results.json B/results.json

Per case and implementation: probe_batch / control_batch and probe_single / control_single
(medians of the derived scopes) in A and in B, and B - A. For an A/B of how the probe
workers are set up (device.sh probe-warmup-ab: concurrent warm-ups in A, serial in B).
Exit 1 when the runs share no case with both scopes."""
import json
import sys


def ratios(path):
    out = {}
    with open(path) as f:
        run = json.load(f)
    for c in run["cases"]:
        sc = (c.get("derived") or {}).get("scopes") or {}
        for impl in c["impl"]:
            try:
                b = sc["probe_batch"][impl]["p50"] / sc["control_batch"][impl]["p50"]
                s = sc["probe_single"][impl]["p50"] / sc["control_single"][impl]["p50"]
            except (KeyError, TypeError, ZeroDivisionError):
                continue
            out[(c["id"], impl)] = (b, s)
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    a, b = ratios(argv[1]), ratios(argv[2])
    keys = sorted(set(a) & set(b))
    if not keys:
        print("probe_ratio_ab: no case with probe and control scopes in both runs")
        return 1
    print(f"{'case':34s} {'impl':8s} {'batch A':>8s} {'batch B':>8s} {'single A':>9s} {'single B':>9s}")
    for k in keys:
        print(f"{k[0]:34s} {k[1]:8s} {a[k][0]:8.3f} {b[k][0]:8.3f} {a[k][1]:9.3f} {b[k][1]:9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
