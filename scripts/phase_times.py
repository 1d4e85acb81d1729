#!/usr/bin/env python3
"""scripts/phase_times.py — where a run's wall time went, from DUALTIME_PHASE_TRACE.

    DUALTIME_PHASE_TRACE=run.trace dualtime run ... ; python3 scripts/phase_times.py run.trace

The trace has one line per phase change: "ns case round implementation phase" (ns since the
run loop started; the start-up steps before it come first, round -1, negative ns: "start:
main workers", "start: probe workers", "start: ceilings", "start: clocks, run directory");
a phase lasts until the next line. Prints the seconds per phase (summed
over cases, implementations and rounds, largest first), then the slowest cases (both
rounds, every phase), then the total."""
import collections
import sys


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    rows = []
    with open(argv[1]) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) == 5:
                rows.append((int(p[0]), p[1], p[3], p[4]))
    if len(rows) < 2:
        print("phase_times: fewer than two trace lines", file=sys.stderr)
        return 1
    by_phase, by_case = collections.Counter(), collections.Counter()
    for (t0, case, impl, phase), nxt in zip(rows, rows[1:]):
        s = (nxt[0] - t0) / 1e9
        key = phase if phase in ("inputs", "FP64 reference", "write outputs") else f"{phase} ({impl})"
        by_phase[key] += s
        by_case[case] += s
    total = (rows[-1][0] - rows[0][0]) / 1e9
    print(f"{'phase':48s} {'s':>9s} {'share':>6s}")
    for k, v in by_phase.most_common():
        print(f"{k:48s} {v:9.2f} {100 * v / total:5.1f}%")
    print(f"\n{'slowest cases':48s} {'s':>9s}")
    for k, v in by_case.most_common(12):
        print(f"{k:48s} {v:9.2f}")
    print(f"\ntotal {total:.2f} s over {len(by_case)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
