#!/usr/bin/env bash
# The FP64 reference kept between rounds (src/orchestrate/dt_refcache.h,
# docs/device-workflow.md "Host passes per case-round"), end to end on the CPU:
#  - a 2-round run of gemm 256^3 (cached) and add 17x257 (not worth caching): the gemm's
#    file appears in OUTPUT/.scratch/ref during the run, never one for add; at the end the
#    run is valid, has no notes, every implementation has its output_sha256, and
#    .scratch is gone;
#  - the same with DUALTIME_REF_CACHE=0: no .scratch ever, and every check of every
#    implementation (the cold call's in round 0, warm and sample checks in both rounds) reads the same oracle
#    numbers (max error, budget used) as with the cache: a reused reference checks exactly
#    like a fresh one;
#  - a file corrupted between round 0 and round 1 (one byte of its data flipped): the run
#    says so in its notes ("data checksum differs ... recomputed"), recomputes, and stays
#    valid with the same oracle numbers.
. "$(dirname "$0")/e2e_lib.sh" "$1"
ARGS=(--backends cpu --operations gemm,add --gemm-shapes 256x256x256 --row-shapes 17x257
      --rounds 2 --samples 3 --sample-ms 5 --warmup-ms 20 --threads 1 --quiet
      --python /usr/bin/python3 --seed 3)
REF=.scratch/ref/gemm_256x256x256.set0.ref

# run NAME [ENV...]: runs in the background, watching .scratch; $T/NAME.seen lists what
# appeared there; CORRUPT=1 flips one data byte of the gemm's file once it is there.
run() { local name="$1"; shift
  local dir="$T/$name"
  env "$@" "$D" run --output "$dir" "${ARGS[@]}" >"$T/$name.log" 2>&1 & local pid=$!
  local done_corrupt=""
  : >"$T/$name.seen"
  while kill -0 "$pid" 2>/dev/null; do
    ls "$dir/.scratch/ref" 2>/dev/null >>"$T/$name.seen"
    if [ -n "${CORRUPT:-}" ] && [ -z "$done_corrupt" ] && [ -f "$dir/$REF" ]; then
      /usr/bin/python3 - "$dir/$REF" <<'EOP' && done_corrupt=1
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(-12, 2); b = f.read(1); f.seek(-12, 2); f.write(bytes([b[0] ^ 0x20]))
EOP
    fi
    sleep 0.05
  done
  wait "$pid"; echo $? >"$T/$name.rc"
  [ -z "${CORRUPT:-}" ] || [ -n "$done_corrupt" ] || echo "never saw $REF to corrupt" >>"$T/$name.log"
}
facts() { /usr/bin/python3 - "$T/$1/results.json" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))
print("notes", json.dumps(r.get("notes") or []))
for c in sorted(r["cases"], key=lambda c: c["id"]):
    print("valid", c["id"], c["valid"])
    for impl, ci in sorted(c["impl"].items()):
        print("sha", c["id"], impl, bool(ci.get("output_sha256")))
        for k in ci.get("checks", []):
            o = k["oracle"]
            print("check", c["id"], impl, k["when"], k["ok"], repr(o["max_abs_error"]), repr(o["max_budget_used"]))
EOP
}

run cached
CORRUPT=1 run corrupt
run off DUALTIME_REF_CACHE=0
for n in cached corrupt off; do
  [ "$(cat "$T/$n.rc")" = 0 ] && ok || { no "$n: exit $(cat "$T/$n.rc")"; tail -5 "$T/$n.log"; }
  facts "$n" >"$T/$n.facts" 2>&1 || no "$n: no results.json"
  grep -q "^valid .* False" "$T/$n.facts" && no "$n: a case is invalid" || ok
  grep -q "^sha .* False" "$T/$n.facts" && no "$n: an output_sha256 is missing" || ok
  [ -e "$T/$n/.scratch" ] && no "$n: .scratch left after a complete run" || ok
done
grep -q "gemm_256x256x256.set0.ref" "$T/cached.seen" && ok || no "cached: the gemm's reference file never appeared"
grep -q "add_17x257" "$T/cached.seen" && no "cached: add (not worth it) was cached" || ok
[ -s "$T/off.seen" ] && no "off: DUALTIME_REF_CACHE=0 still wrote $(head -1 "$T/off.seen")" || ok
grep -q '^notes \[\]$' "$T/cached.facts" && ok || no "cached: unexpected notes: $(grep ^notes "$T/cached.facts")"
grep -q '^notes .*data checksum differs.*recomputed' "$T/corrupt.facts" && ok ||
  no "corrupt: the corrupted file is not in the notes: $(grep ^notes "$T/corrupt.facts")"
n=$(grep -c '^check gemm' "$T/off.facts")
# per implementation: the cold call once (round 0) and the call after timing in each round,
# so round 1's checks read the reused reference: 2 x (1 + 2)
[ "$n" -ge 6 ] && ok || no "off: only $n gemm checks"
for n in cached corrupt; do
  if diff <(grep '^check' "$T/off.facts") <(grep '^check' "$T/$n.facts") >"$T/$n.diff"; then ok
  else no "$n: oracle numbers differ from the uncached run:"; head -6 "$T/$n.diff"; fi
done
echo "test_refcache_run: $pass passed, $fail failed"
[ "$fail" = 0 ]
