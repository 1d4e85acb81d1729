#!/usr/bin/env python3
"""scripts/sweep_check.py — issue 18's targets 1 and 2 on runs of shapes outside the default matrix.

    python3 scripts/sweep_check.py RUN/results.json[.gz] [...]

For every valid case of every run, one row: the held device control batch of the
candidate (default "native", --cand ID) and of the baseline (torch eager), their paired
ratio with its interval and verdict, and each one's share of the run's in-run copy
bandwidth (derived.roofline copy_pct; memory-bound ops only), with ">L2" where the case's
fewest bytes exceed the GPU's L2. Then the misses:
  target 1: a row or elementwise op whose held control verdict is "slower";
  target 2: a memory-bound case above L2 whose candidate is under 90% of the copy ceiling.
Exit 0 when neither has a miss, 1 otherwise, 2 on bad arguments."""
import gzip
import json
import sys


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def rows(run, cand):
    l2 = ((run.get("environment") or {}).get("gpu") or {}).get("l2_bytes") or 0
    views = bool((run.get("settings") or {}).get("input_views"))
    for c in run.get("cases", []):
        if not c.get("valid"):
            yield {"id": c["id"], "dtype": c.get("dtype"), "invalid": True}
            continue
        d = c.get("derived") or {}
        sc = (d.get("scopes") or {}).get("control_batch") or {}
        base = next(iter(c.get("impl") or {}), None)  # the record lists the baseline first
        vs = (sc.get("vs_baseline") or {}).get(cand) or {}
        rl = d.get("roofline") or {}
        ri = rl.get("impl") or {}
        yield {"id": c["id"], "op": c.get("op"), "dtype": c.get("dtype"), "views": views or c.get("views"),
               "cand_us": (sc.get(cand) or {}).get("p50"), "base_us": (sc.get(base) or {}).get("p50"),
               "ratio": (vs.get("ratio") or {}).get("median"), "lo": (vs.get("ratio") or {}).get("ci_low"),
               "hi": (vs.get("ratio") or {}).get("ci_high"), "verdict": vs.get("verdict"),
               "memory": rl.get("bound") == "memory",
               "cand_pct": (ri.get(cand) or {}).get("copy_pct") or (ri.get(cand) or {}).get("flop_pct"),
               "base_pct": (ri.get(base) or {}).get("copy_pct") or (ri.get(base) or {}).get("flop_pct"),
               "above_l2": bool(l2) and (rl.get("min_bytes") or 0) > l2}


def fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) else "—"


def main(argv):
    cand = "native"
    if len(argv) > 2 and argv[1] == "--cand":
        cand, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    slower, low, n = [], [], 0
    print("| case | dtype | views | %s µs | torch µs | ratio [CI] | verdict | %s %% | torch %% | >L2 |" % (cand, cand))
    print("|---|---|---|---:|---:|---|---|---:|---:|---|")
    for path in argv[1:]:
        for r in rows(load(path), cand):
            n += 1
            if r.get("invalid"):
                print("| %s | %s | | INVALID | | | | | | |" % (r["id"], r["dtype"]))
                slower.append("%s %s (invalid)" % (r["id"], r["dtype"]))
                continue
            print("| %s | %s | %s | %s | %s | %s [%s, %s] | %s | %s | %s | %s |" % (
                r["id"], r["dtype"], "views" if r["views"] else "", fmt(r["cand_us"], ".4g"),
                fmt(r["base_us"], ".4g"), fmt(r["ratio"], ".3f"), fmt(r["lo"], ".3f"), fmt(r["hi"], ".3f"),
                r["verdict"], fmt(r["cand_pct"], ".1f"), fmt(r["base_pct"], ".1f"), ">L2" if r["above_l2"] else ""))
            tag = "%s %s%s" % (r["id"], r["dtype"], " views" if r["views"] else "")
            if r["op"] != "gemm" and r["verdict"] == "slower":
                slower.append("%s %s" % (tag, fmt(r["ratio"], ".3f")))
            if r["memory"] and r["above_l2"] and isinstance(r["cand_pct"], (int, float)) and r["cand_pct"] < 90:
                low.append("%s %s%%" % (tag, fmt(r["cand_pct"], ".1f")))
    print("\n%d cases; target 1 (row/elementwise never slower than torch eager): %d miss(es)%s"
          % (n, len(slower), ": " + ", ".join(slower) if slower else ""))
    print("target 2 (memory-bound above L2 >= 90%% of copy): %d miss(es)%s"
          % (len(low), ": " + ", ".join(low) if low else ""))
    return 1 if slower or low else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
