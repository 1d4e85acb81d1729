#!/usr/bin/env python3
"""scripts/proc_offsets.py — how much one worker process's held device times differ from
another's, over several runs of the same small plan (each run starts fresh processes).

    python3 scripts/proc_offsets.py [--all] RUN1/results.json RUN2/results.json ...

Two default runs on the H200 (session 5: A and B of the same build; session 6) kept the
held medians of large cases within 1%, but at the small ones each worker process had an
offset of its own for the whole run: the torch main worker's control medians +4.6% in B
over A, the native probe worker's +6.2%, the other processes within 1-2% (the issue-12
criterion, held medians within 2% on 95% of rows, reads 70-79%). This script measures
that spread directly. For each run and each implementation x held scope
(control_batch, control_single, probe_batch, probe_single): the geometric mean over the
run's small cases (m x n <= 128 x 1024, where the offsets live; --all: every case) of the case's median relative to the same case's median in the first run
(1.000 for run 1), and each run's held floors (ceilings; measured by the native main
worker). Then per implementation x scope the spread over runs (max/min - 1). A spread of a
few % where the within-run intervals are far tighter means a per-process offset, not noise.
Exit 1 when fewer than two runs share a case."""
import json
import math
import sys

HELD = ("control_batch", "control_single", "probe_batch", "probe_single")
FLOORS = ("held_floor_batch_us", "held_floor_single_us", "held_touch_floor_batch_us",
          "held_touch_floor_single_us")


def medians(run, small_only):
    out = {}
    for c in run["cases"]:
        if small_only and c["m"] * c["n"] > 128 * 1024:
            continue
        for scope, d in ((c.get("derived") or {}).get("scopes") or {}).items():
            if scope not in HELD:
                continue
            for impl, s in d.items():
                if isinstance(s, dict) and s.get("p50"):
                    out[(c["id"], scope, impl)] = s["p50"]
    return out


def main(argv):
    small_only = "--all" not in argv
    paths = [a for a in argv[1:] if a != "--all"]
    if len(paths) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    runs = [json.load(open(p)) for p in paths]
    meds = [medians(r, small_only) for r in runs]
    keys = set(meds[0])
    for m in meds[1:]:
        keys &= set(m)
    if not keys:
        print("proc_offsets: the runs share no case x scope", file=sys.stderr)
        return 1
    groups = sorted({(k[2], k[1]) for k in keys})
    print("run  " + " ".join(f"{i}/{s}"[:22].rjust(22) for i, s in groups) + "  "
          + " ".join(f.replace("_us", "").rjust(18) for f in FLOORS))
    rel = {g: [] for g in groups}
    for n, m in enumerate(meds):
        row = []
        for g in groups:
            logs = [math.log(m[k] / meds[0][k]) for k in keys if (k[2], k[1]) == g]
            v = math.exp(sum(logs) / len(logs))
            rel[g].append(v)
            row.append(f"{v:22.3f}")
        c = runs[n].get("environment", {}).get("ceilings", {}) or {}
        fl = " ".join(f"{c.get(f, float('nan')):18.3f}" for f in FLOORS)
        print(f"{n + 1:<4d} " + " ".join(row) + "  " + fl)
    print("spread (max/min - 1), %:")
    for g in groups:
        print(f"  {g[0]:>10s} {g[1]:15s} {100 * (max(rel[g]) / min(rel[g]) - 1):6.2f}"
              f"  ({len([k for k in keys if (k[2], k[1]) == g])} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
