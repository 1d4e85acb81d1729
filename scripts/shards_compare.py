#!/usr/bin/env python3
"""scripts/shards_compare.py PLAN.json MERGED/results.json SINGLE/results.json

Checks a merged sharded run against a single run of the same flags (scripts/device.sh
step `shards`): the merged run holds every planned case exactly once, in plan order,
each from its planned shard, every case valid; the single run has the same case ids and
every case the same input SHA-256s. Prints one line per finding; exit 0 when all hold."""
import json
import sys


def main(plan_path, merged_path, single_path):
    plan = json.load(open(plan_path))
    merged = json.load(open(merged_path))
    single = json.load(open(single_path))
    planned = [c["id"] for c in plan["cases"]]
    bad = []
    ids = [c["id"] for c in merged["cases"]]
    if ids != planned:
        bad.append("merged cases %s are not the plan's %s" % (ids, planned))
    if [c["id"] for c in single["cases"]] != planned:
        bad.append("the single run's cases differ from the plan's")
    shard_of = {c["id"]: c["shard"] for c in plan["cases"]}
    ins = {c["id"]: [(i["name"], i["sha256"]) for i in c["inputs"]] for c in single["cases"]}
    for c in merged["cases"]:
        if c.get("shard") != shard_of.get(c["id"]):
            bad.append("%s: shard %s, planned %s" % (c["id"], c.get("shard"), shard_of.get(c["id"])))
        if c["valid"] is not True:
            bad.append("%s: invalid" % c["id"])
        mine = [(i["name"], i["sha256"]) for i in c["inputs"]]
        if not mine or mine != ins.get(c["id"]):
            bad.append("%s: input SHA-256s differ from the single run's" % c["id"])
    if merged.get("plan", {}).get("id") != plan["plan_id"]:
        bad.append("merged plan id is not the plan's")
    for b in bad:
        print("FAIL:", b)
    print("%d planned cases, merged %d, %d findings" % (len(planned), len(ids), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
