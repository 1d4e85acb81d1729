#!/usr/bin/env python3
"""scripts/rerun_check.py — issue 12's rerun criteria for two runs of the same code.

    python3 scripts/rerun_check.py A/results.json[.gz] B/results.json[.gz]

A and B may also be `dualtime report RUN/results.json --format json` tables: the run
derived again by this build (a file from an older build keeps the verdicts it was
written with).

Reads each case x scope x candidate verdict (derived.scopes.S.vs_baseline) and each
implementation's scope median (p50) from both runs (their derived sections: a complete
run's results.json has them). Prints: the share of case x scope rows with the same
verdict (target >= 98%), every flip with both intervals (a flip should have an interval
touching the +-2% band; in held scopes the interval the verdict read: the ratio's widened
by its process_band), and the share of held device rows (control_*, probe_*, graph_*)
whose medians are within 2% (target >= 95%), the worst ten. Exit 0 when both targets are
met, 1 otherwise."""
import gzip
import json
import sys

HELD = ("control_batch", "control_single", "probe_batch", "probe_single", "graph_batch")


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def widened(lo, hi, band):
    """The verdict's interval: the ratio's, widened by a held scope's process band."""
    if lo is None or hi is None or not band:
        return lo, hi
    return lo / band, hi * band


def rows(run):
    verdict, median = {}, {}
    if isinstance(run, list):  # `dualtime report --format json` rows (derived again)
        for r in run:
            key = (r["case"], r["scope"], r["implementation"])
            if r.get("p50_us") is not None:
                median[key] = r["p50_us"]
            if r.get("role") != "baseline" and r.get("verdict"):
                verdict[key] = (r["verdict"],) + widened(r.get("ci_low"), r.get("ci_high"),
                                                         r.get("process_band"))
        return verdict, median
    for c in run["cases"]:
        for scope, d in ((c.get("derived") or {}).get("scopes") or {}).items():
            for impl, v in (d.get("vs_baseline") or {}).items():
                r = v.get("ratio") or {}
                verdict[(c["id"], scope, impl)] = (v.get("verdict"),) + widened(
                    r.get("ci_low"), r.get("ci_high"), v.get("process_band"))
            for impl, s in d.items():
                if isinstance(s, dict) and "p50" in s:
                    median[(c["id"], scope, impl)] = s["p50"]
    return verdict, median


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    (va, ma), (vb, mb) = rows(load(argv[1])), rows(load(argv[2]))
    keys = sorted(set(va) & set(vb))
    if not keys:
        print("rerun_check: no case x scope rows in common (derived sections missing?)")
        return 1
    flips = [k for k in keys if va[k][0] != vb[k][0]]
    same = 1 - len(flips) / len(keys)
    print(f"verdicts: {len(keys) - len(flips)} of {len(keys)} case x scope rows the same "
          f"({100 * same:.1f}%, target >= 98%)")
    for k in flips:
        (a, al, ah), (b, bl, bh) = va[k], vb[k]
        touch = all(x is not None for x in (al, ah, bl, bh)) and (al <= 1.02 and ah >= 0.98 or bl <= 1.02 and bh >= 0.98)
        print(f"  flip {k[0]} {k[1]} {k[2]}: {a} [{al:.3f}, {ah:.3f}] -> {b} [{bl:.3f}, {bh:.3f}]"
              f"{'' if touch else '  (neither interval touches the 2% band)'}")
    held = [k for k in sorted(set(ma) & set(mb)) if k[1] in HELD and ma[k] > 0]
    dev = sorted(((mb[k] / ma[k] - 1, k) for k in held), key=lambda x: -abs(x[0]))
    within = sum(1 for d, _ in dev if abs(d) <= 0.02)
    share = within / len(dev) if dev else 0
    print(f"held device medians: {within} of {len(dev)} rows within 2% ({100 * share:.1f}%, "
          f"target >= 95%); the worst:")
    for d, k in dev[:10]:
        print(f"  {k[0]} {k[1]} {k[2]}: {ma[k]:.4g} -> {mb[k]:.4g} us ({100 * d:+.1f}%)")
    return 0 if same >= 0.98 and share >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
