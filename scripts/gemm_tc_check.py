#!/usr/bin/env python3
"""scripts/gemm_tc_check.py RESULTS.json [RESULTS.json ...]

The bf16/f16 gemm table of scripts/device.sh step `gemm-tc` (issues 19 and 18 item 6):
per run its FLOP ceilings (environment.ceilings.flops) and per gemm case and
implementation the roofline's time (device control batch p50 where present), TFLOP/s,
% of the FLOP ceiling of the dtype and, for every candidate, its throughput against the
baseline (baseline us / candidate us) next to issue 19's target (>= 0.75 at 1024^3,
>= 0.90 at 4096^3 and 8192^3; tails and views: no target), plus which kernel variant the
native worker ran. Exit 1 when a case is invalid, a valid case has no roofline, or a
CUDA run has no bf16/fp16 FLOP ceiling or a bf16/f16 gemm row lacks its % of peak;
missed speed targets are printed (MISS), not failed: the table is the measurement."""
import json
import sys

TARGETS = {(1024, 1024, 1024): 0.75, (4096, 4096, 4096): 0.90, (8192, 8192, 8192): 0.90}


def variant(impl):
    text = impl.get("implementation") or ""
    for word in text.split():
        if word.startswith("variant="):
            rest = text.split("variant=", 1)[1]
            return rest.split(" grid=")[0][:60]
    return text[:40]


def check(path):
    r = json.load(open(path))
    bad = []
    ids = [f["id"] for f in r["frameworks"]]
    base = ids[0]
    ce = r.get("environment", {}).get("ceilings", {}) or {}
    fl = ce.get("flops", {}) or {}
    cuda = (r.get("settings", {}) or {}).get("backend") == "cuda"
    print("%s: FLOP ceilings fp32 %s, bf16 %s, fp16 %s TFLOP/s (%s)" % (
        path, fl.get("fp32_tflops"), fl.get("bf16_tflops"), fl.get("fp16_tflops"),
        (fl.get("method") or "no method")[:300]))
    if cuda and not (fl.get("bf16_tflops") and fl.get("fp16_tflops") and fl.get("fp32_tflops")):
        bad.append("%s: a FLOP ceiling is missing: %s" % (path, fl))
    print("| case | dtype | impl | variant | us | TFLOP/s | %% of peak | vs %s | target |" % base)
    print("|---|---|---|---|---:|---:|---:|---:|---|")
    for c in r["cases"]:
        if c.get("op") != "gemm":
            continue
        if c.get("valid") is not True:
            bad.append("%s: invalid" % c["id"])
            continue
        rl = (c.get("derived") or {}).get("roofline")
        if not rl:
            bad.append("%s: no roofline" % c["id"])
            continue
        shape = (c["m"], c["n"], c["k"])
        views = c.get("views") is True
        target = None if views else TARGETS.get(shape)
        b_us = rl["impl"].get(base, {}).get("us")
        for fid in ids:
            e = rl["impl"].get(fid)
            if not e:
                bad.append("%s: no roofline entry for %s" % (c["id"], fid))
                continue
            pct = e.get("flop_pct")
            if cuda and c.get("dtype") in ("bf16", "f16") and pct is None:
                bad.append("%s %s: no %% of peak" % (c["id"], fid))
            ratio = b_us / e["us"] if b_us and e.get("us") else None
            verdict = ""
            if fid != base and target is not None and ratio is not None:
                verdict = "%s >= %.2f" % ("met" if ratio >= target else "MISS", target)
            print("| %s | %s | %s | %s | %.2f | %.3g | %s | %s | %s |" % (
                c["id"], c.get("dtype"), fid, variant(c["impl"].get(fid, {})), e["us"],
                e["tflops"], "%.1f%%" % pct if pct is not None else "-",
                "%.3f" % ratio if ratio is not None and fid != base else "-", verdict))
    return bad


def main(paths):
    bad = []
    for p in paths:
        try:
            bad += check(p)
        except (OSError, ValueError, KeyError) as exc:
            bad.append("%s: %s" % (p, exc))
    for b in bad:
        print("FAIL", b)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
