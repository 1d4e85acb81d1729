#!/usr/bin/env python3
"""scripts/graph_cold_check.py WARM/results.json COLD/results.json [CASE] [MIN_RATIO]

The check of scripts/device.sh step graph-cold (issue 13 items 1 and 2; docs/device-timing.md,
"Graph replay" and "Cold cache"). Prints, from the two runs of the step (the same flags,
--graph in both, --cache cold in the second):

1. graph replay vs held control vs dispatch, batch, µs per call (p50) of every case and
   implementation of the warm run, with the reason where the graph scope is unavailable;
2. cold / warm of the p50s of control_batch, control_single, dispatch_batch and graph_batch
   for every case and implementation;
3. the cache state the cold run recorded (copies, flush bytes, any warm_reason).

Exit 0 when: both runs are complete and valid, the warm run says cache warm and the cold
run cache cold, the cold run has no warm_reason, the native implementation has graph_batch
samples in every case of both runs, and in CASE (default add_512x4096, inside L2) cold /
warm of control_batch is at least MIN_RATIO (default 1.3) for every implementation: a case
that fits in L2 must read clearly slower from DRAM, or the flush and rotation do not work.
Exit 1 otherwise (the reasons printed), 2 on bad arguments. Standard library only.
"""
import json
import sys

SCOPES = ("control_batch", "control_single", "dispatch_batch", "graph_batch")


def p50(case, scope, impl):
    d = case.get("derived", {}).get("scopes", {}).get(scope, {}).get(impl, {})
    return d.get("p50") if d.get("n") else None


def num(x):
    return "—" if x is None else ("%.3g" % x)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    warm, cold = (json.load(open(p)) for p in argv[1:3])
    target = argv[3] if len(argv) > 3 else "add_512x4096"
    need = float(argv[4]) if len(argv) > 4 else 1.3
    bad = []
    for name, r, want in (("warm", warm, "warm"), ("cold", cold, "cold")):
        if not r.get("complete"):
            bad.append("%s run incomplete" % name)
        if r.get("settings", {}).get("cache") != want:
            bad.append("%s run: settings.cache is %r" % (name, r.get("settings", {}).get("cache")))
        if r.get("settings", {}).get("graph") is not True:
            bad.append("%s run: settings.graph is not true" % name)
        for c in r["cases"]:
            if not c["valid"]:
                bad.append("%s run: case %s invalid" % (name, c["id"]))
            for impl, ci in c["impl"].items():
                if impl == "native" and not ci["samples"].get("graph_batch"):
                    bad.append("%s run: native %s has no graph_batch samples (%s)"
                               % (name, c["id"], ci.get("graph_unavailable", "no reason")))
    print("## Graph replay vs held control vs dispatch (warm run, batch, µs per call p50)\n")
    print("| case | impl | graph | held control | dispatch | graph/held |")
    print("|---|---|---:|---:|---:|---:|")
    for c in warm["cases"]:
        for impl, ci in sorted(c["impl"].items()):
            g, h, d = (p50(c, s, impl) for s in ("graph_batch", "control_batch", "dispatch_batch"))
            gtxt = "unavailable: " + ci["graph_unavailable"] if ci.get("graph_unavailable") else num(g)
            print("| %s | %s | %s | %s | %s | %s |" % (c["id"], impl, gtxt, num(h), num(d),
                                                      num(g / h) if g and h else "—"))
    print("\n## Cold / warm (p50 ratios; > 1: slower from DRAM)\n")
    print("| case | impl | " + " | ".join(SCOPES) + " | copies | warm_reason |")
    print("|---|---|" + "---:|" * len(SCOPES) + "---:|---|")
    byid = {c["id"]: c for c in warm["cases"]}
    for c in cold["cases"]:
        w = byid.get(c["id"])
        if w is None:
            bad.append("case %s only in the cold run" % c["id"])
            continue
        for impl, ci in sorted(c["impl"].items()):
            cells = []
            for s in SCOPES:
                a, b = p50(w, s, impl), p50(c, s, impl)
                cells.append(num(b / a) if a and b else "—")
            cache = ci.get("cache", {})
            if cache.get("warm_reason"):
                bad.append("cold run: %s %s: %s" % (c["id"], impl, cache["warm_reason"]))
            if not cache:
                bad.append("cold run: %s %s recorded no cache confirmation" % (c["id"], impl))
            print("| %s | %s | %s | %s | %s |" % (c["id"], impl, " | ".join(cells),
                                                 cache.get("copies", "—"),
                                                 cache.get("warm_reason", "")))
            if c["id"] == target:
                a, b = p50(w, "control_batch", impl), p50(c, "control_batch", impl)
                if not (a and b and b / a >= need):
                    bad.append("%s %s: control_batch cold/warm %s < %.2f (warm %s, cold %s µs): "
                               "the flush or the rotation does not reach DRAM"
                               % (target, impl, num(b / a) if a and b else "—", need, num(a), num(b)))
    if target not in byid:
        bad.append("case %s is not in the runs" % target)
    print()
    for b in bad:
        print("FAIL:", b)
    print("graph-cold check: %s" % ("pass" if not bad else "%d problem(s)" % len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
