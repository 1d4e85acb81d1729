#!/usr/bin/env python3
"""tests/e2e/run_facts.py RESULTS.json — the facts of a run that no scheduling change may
alter, one per line, sorted: each case's validity and input SHA-256s, each implementation's
output SHA-256, and every check's outcome with its oracle numbers (max error, budget used).
Two runs of the same plan that differ only in how the work was scheduled (the preparer,
warm-ups at once) must print the same lines (tests/e2e/test_prefetch_run.sh,
test_warmup_run.sh compare them with cmp)."""
import json
import sys

r = json.load(open(sys.argv[1]))
for c in sorted(r["cases"], key=lambda c: c["id"]):
    print("valid", c["id"], c["valid"], json.dumps(c["inputs"], sort_keys=True))
    for impl, ci in sorted(c["impl"].items()):
        print("sha", c["id"], impl, ci.get("output_sha256"))
        for k in ci.get("checks", []):
            o = k["oracle"]
            print("check", c["id"], impl, k["when"], k["ok"], repr(o["max_abs_error"]),
                  repr(o["max_budget_used"]))
