#!/usr/bin/env python3
"""scripts/host_pin_check.py — did every CUDA worker page-lock its arena? (docs/device-workflow.md,
"Pinned uploads").

    python3 scripts/host_pin_check.py RESULTS.json [--expect pinned|pageable]

Reads each case x implementation's `implementation` line of a cuda run and counts its
"host=pinned" / "host=pageable (why)" note. Prints the counts and every distinct reason of
a pageable arena. Exit 0 when every cuda implementation of every case says what --expect
asks (default pinned), 1 otherwise (a missing note counts as a failure), 2 bad usage."""
import collections
import json
import sys


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--expect"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    expect = argv[3] if len(argv) == 4 else "pinned"
    with open(argv[1]) as f:
        r = json.load(f)
    counts, reasons, bad = collections.Counter(), collections.Counter(), []
    for c in r.get("cases", []):
        if c.get("backend") != "cuda":
            continue
        for impl, ci in (c.get("impl") or {}).items():
            line = ci.get("implementation") or ""
            at = line.rfind("host=")
            state = line[at + 5:].split(" ")[0] if at >= 0 else "none"
            counts[(impl, state)] += 1
            if state == "pageable":
                reasons[line[at:]] += 1
            if state != expect:
                bad.append("%s %s: %s" % (c.get("id"), impl, line[at:] if at >= 0 else "no host= note"))
    for (impl, state), n in sorted(counts.items()):
        print("host_pin_check: %-12s %-9s %d cases" % (impl, state, n))
    for why, n in reasons.most_common(5):
        print("host_pin_check: %d x %s" % (n, why))
    for line in bad[:5]:
        print("host_pin_check: FAIL expected %s: %s" % (expect, line))
    if not counts:
        print("host_pin_check: FAIL no cuda case in %s" % argv[1])
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
