#!/usr/bin/env python3
"""scripts/compile_check.py — issue 18's target 3 (native against torch.compile) on a run.

    python3 scripts/compile_check.py RUN/results.json[.gz] [--cand ID] [--compile ID] [--all]

The run must have the implementations torch (the baseline), the candidate (default
"native") and torch.compile (default "torch-compile"), e.g. `scripts/device.sh
compile-full`. For every valid case, the held device control batch p50 of the three, the
candidate's time over torch.compile's, and the candidate's share of the byte floor (the
case's fewest bytes at the in-run copy bandwidth: derived.roofline copy_pct). Target 3:
  - at 8192x8192, every op in fp32 and bf16: ratio <= 0.95 or >= 95% of the byte floor;
  - at vocabulary rows (N >= 32000): ratio <= 0.6 or >= 95% of the byte floor;
whichever is looser. Rows only for those shapes unless --all. The ratio is the quotient
of the two paired ratios to torch in the same run (each median over pairs of one
(round, index)), so both share torch as the drift control; the p50s are shown too.
Exit 0 when no targeted case misses, 1 when one does (or is invalid), 2 on bad arguments."""
import sys

from sweep_check import fmt, load  # the same record reader and number format


def target(case):
    """(ratio bound, floor %) of target 3 for the case, or None when it is not targeted."""
    if case.get("op") == "gemm":
        return None
    if case.get("m") == 8192 and case.get("n") == 8192:
        return 0.95, 95.0
    if (case.get("n") or 0) >= 32000:
        return 0.6, 95.0
    return None



def main(argv):
    cand, comp, show_all, paths = "native", "torch-compile", False, []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--cand", "--compile") and i + 1 < len(argv):
            if a == "--cand":
                cand = argv[i + 1]
            else:
                comp = argv[i + 1]
            i += 2
            continue
        if a == "--all":
            show_all = True
        elif a.startswith("-"):
            print("compile_check: unknown option %s" % a, file=sys.stderr)
            return 2
        else:
            paths.append(a)
        i += 1
    if len(paths) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    run = load(paths[0])
    misses, n_t = [], 0
    print("| case | dtype | torch µs | %s µs | %s µs | %s / %s | %s %% floor | target | met |"
          % (cand, comp, cand, comp, cand))
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    for c in run.get("cases", []):
        t = target(c)
        if t is None and not show_all:
            continue
        tag = "%s %s" % (c["id"], c.get("dtype"))
        if not c.get("valid"):
            print("| %s | %s | INVALID | | | | | | |" % (c["id"], c.get("dtype")))
            if t:
                n_t += 1
                misses.append(tag + " (invalid)")
            continue
        d = c.get("derived") or {}
        sc = (d.get("scopes") or {}).get("control_batch") or {}
        if comp not in sc or cand not in sc:
            have = sorted(c.get("impl") or {})
            print("compile_check: %s has no control_batch of %s and %s (implementations: %s)"
                  % (c["id"], cand, comp, ", ".join(have)), file=sys.stderr)
            return 2
        vs = sc.get("vs_baseline") or {}
        rc = ((vs.get(cand) or {}).get("ratio") or {}).get("median")
        rt = ((vs.get(comp) or {}).get("ratio") or {}).get("median")
        base = next(iter(c.get("impl") or {}), None)
        p = {k: (sc.get(k) or {}).get("p50") for k in (base, cand, comp)}
        ratio = rc / rt if isinstance(rc, (int, float)) and isinstance(rt, (int, float)) and rt else None
        pct = (((d.get("roofline") or {}).get("impl") or {}).get(cand) or {}).get("copy_pct")
        met = ""
        if t:
            n_t += 1
            ok = (ratio is not None and ratio <= t[0]) or (pct is not None and pct >= t[1])
            met = "yes" if ok else "**no**"
            if not ok:
                misses.append("%s %s× %s%%" % (tag, fmt(ratio, ".3f"), fmt(pct, ".1f")))
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            c["id"], c.get("dtype"), fmt(p[base], ".4g"), fmt(p[cand], ".4g"), fmt(p[comp], ".4g"),
            fmt(ratio, ".3f"), fmt(pct, ".1f"),
            "≤ %.2f× or ≥ %.0f%%" % t if t else "", met))
    print("\n%d targeted cases; target 3: %d miss(es)%s"
          % (n_t, len(misses), ": " + ", ".join(misses) if misses else ""))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
