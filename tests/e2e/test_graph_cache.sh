#!/usr/bin/env bash
# Issue 13 items 1 and 2 end to end without a GPU. CLI: bad --cache values and --cache
# cold where it cannot run exit 2 with one line naming flag and value (nothing written).
# The cpu backend records the graph scope unavailable ("cpu: no graphs") and the run
# stays valid. With both workers wrapped by fake_device_worker.py (claims cuda): --graph
# gives graph_batch samples (held, R_dev calls) next to control and dispatch; a worker
# that answers "unavailable" has the reason recorded and its case stays valid; --cache
# cold sends every device request with the flush (> 2 x L2) and the copies of
# dt_cache_copies, the confirmation is recorded per implementation, a worker that does
# not confirm is flagged (warm_reason), and results.md says the cache state. The PyTorch
# worker itself answers a graph request on a cpu case with "cpu: no graphs" and refuses
# a bad "cache".
. "$(dirname "$0")/e2e_lib.sh" "$1"
expect2() { # expect2 "what it must say" args...
  local want="$1"; shift
  local out rc
  out=$("$D" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" <<<"$out" && [ "$(wc -l <<<"$out")" -eq 1 ] && [ ! -e "$T/o" ]; then
    ok
  else
    no "dualtime $* -> rc=$rc out='$out' (wanted '$want')"
  fi
}
FAKE=(--candidate-worker "$HERE/fake_device_worker.py $B/dualtime-native-worker"
      --baseline-worker "$HERE/fake_device_worker.py /usr/bin/python3 $B/dualtime_torch_worker.py")
SMALL=(--operations add,softmax --row-shapes 17x257 --samples 3 --rounds 1 --sample-ms 2
       --warmup-ms 5 --threads 1 --quiet)

expect2 "--cache: 'hot' is not warm or cold" run --output "$T/o" --backends cpu --cache hot
expect2 "--cache: '' is not warm or cold" run --output "$T/o" --backends cpu --cache ''
expect2 "--cache cold: the cpu backend has no device windows" run --output "$T/o" --backends cpu --cache cold
expect2 "plan: --graph is not carried by plan files yet" plan --shards 2 --output "$T/o" --backends cuda --graph
expect2 "plan: --cache cold is not carried by plan files yet" plan --shards 2 --output "$T/o" --backends cuda --cache cold
expect2 "--cache cold: needs the device scopes" run --output "$T/o" --backends cuda --no-device-timing --cache cold
# cuda chosen by the fakes, but no worker reports the L2 size
expect2 "--cache cold: no worker reported the device's L2 size" run --output "$T/o" --backends cuda --cache cold "${SMALL[@]}" "${FAKE[@]}"

# cpu: the graph scope is unavailable, not a failure
"$D" run --output "$T/cpu" --backends cpu --graph "${SMALL[@]}"; rc=$?
[ $rc -eq 0 ] && ok || no "cpu --graph exit $rc"
/usr/bin/python3 - "$T/cpu/results.json" <<'EOP' && ok || no "cpu graph unavailable"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["settings"]["graph"] is True and r["settings"]["cache"] == "warm", r["settings"]
for c in r["cases"]:
    assert c["valid"], c["id"]
    for fw, ci in c["impl"].items():
        assert ci["graph_unavailable"] == "cpu: no graphs", (fw, ci.get("graph_unavailable"))
        assert "graph_batch" not in ci["samples"] and "cache" not in ci
EOP
grep -q "unavailable: cpu: no graphs" "$T/cpu/results.md" && ok || no "results.md: cpu: no graphs"

# fake cuda: graph samples, one worker's graph unavailable, cold cache confirmed
L2=1048576
FAKE_L2_BYTES=$L2 FAKE_DEVICE_NS=4000 FAKE_GRAPH_UNAVAILABLE=dualtime_torch_worker.py \
  FAKE_DEVICE_LOG="$T/cold.log" "$D" run --output "$T/cold" --backends cuda --graph --cache cold \
  "${SMALL[@]}" "${FAKE[@]}"; rc=$?
[ $rc -eq 0 ] && ok || no "fake cuda --graph --cache cold exit $rc"
/usr/bin/python3 - "$T/cold/results.json" "$T/cold.log" $L2 <<'EOP' && ok || no "graph and cold samples"
import json, sys
r = json.load(open(sys.argv[1])); l2 = int(sys.argv[3])
log = [json.loads(x) for x in open(sys.argv[2])]
assert r["settings"]["graph"] is True and r["settings"]["cache"] == "cold", r["settings"]
for c in r["cases"]:
    assert c["valid"], c["id"]
    nat, tor = c["impl"]["fake-native"], c["impl"]["fake-torch"]
    rdev = min(nat["calibration"]["reps"], 64)
    g = nat["samples"]["graph_batch"]
    assert len(g) == 3 and all(x["reps"] == rdev and x["us"] > 0 for x in g), g
    assert sorted(x["index"] for x in g) == [0, 1, 2]
    assert "graph_unavailable" not in nat
    assert tor["graph_unavailable"] == "planted: dualtime_torch_worker.py cannot be captured"
    assert "graph_batch" not in tor["samples"]
    # the graph sample comes last on even indexes, first on odd ones
    for x in g:
        ctl = [y["position"] for y in nat["samples"]["control_batch"] if y["index"] == x["index"]][0]
        assert (x["position"] > ctl) == (x["index"] % 2 == 0), (x, ctl)
    for ci in (nat, tor):
        ca = ci["cache"]
        assert ca["l2_bytes"] == l2 and ca["flush_bytes"] > 2 * l2 and "warm_reason" not in ca, ca
        want = min(rdev, 2 * l2 // ca["copy_bytes"] + 1, 1024)
        assert ca["copies"] == want, (ca, rdev, want)
# every device request was cold, with a flush > 2 x L2; batch requests rotate, singles do not
# (the E2E decomposition's sample is warm: docs/device-timing.md, "Cold cache")
dev = [x for x in log if x["scope"] in ("control", "probe", "graph") and not x.get("decomp")]
assert dev and all(x["cache"] == "cold" and x["flush_bytes"] > 2 * l2 for x in dev), dev[:3]
assert all(x["copies"] == 1 for x in dev if x["reps"] == 1)
assert any(x["copies"] > 1 for x in dev if x["reps"] > 1)
assert any(x["scope"] == "graph" and x["hold"] for x in dev)
# an unavailable graph is not "too few samples" of that implementation
gr = [x for x in r["derived"]["assessment"]["reasons"] if "graph_batch" in x]
assert gr and not any("fake-torch" in x for x in gr), gr
EOP
grep -q "^## Graph replay vs held control vs dispatch" "$T/cold/results.md" && ok || no "graph section"
grep -q "unavailable: planted" "$T/cold/results.md" && ok || no "unavailable reason in results.md"
grep -q "^\*\*Cold\*\* (\`--cache cold\`)" "$T/cold/results.md" && grep -q "cold (.* cop" "$T/cold/results.md" &&
  ok || no "cache state in results.md"

# a worker that ignores the cold request is flagged, never reported cold
FAKE_L2_BYTES=$L2 FAKE_CACHE_IGNORE=1 "$D" run --output "$T/ign" --backends cuda --cache cold \
  --operations add --row-shapes 17x257 --samples 3 --rounds 1 --sample-ms 2 --warmup-ms 5 \
  --threads 1 --quiet "${FAKE[@]}"; rc=$?
[ $rc -eq 0 ] && ok || no "ignored cold exit $rc"
/usr/bin/python3 - "$T/ign/results.json" <<'EOP' && ok || no "unconfirmed cold flagged"
import json, sys
r = json.load(open(sys.argv[1]))
for ci in r["cases"][0]["impl"].values():
    assert "did not confirm a cold cache" in ci["cache"]["warm_reason"], ci["cache"]
EOP
grep -q "not confirmed cold" "$T/ign/results.md" && ok || no "results.md: not confirmed cold"

# the PyTorch worker by itself: graph on a cpu case, a bad cache value
"$D" list --json > "$T/ops.json"
/usr/bin/python3 - "$B/dualtime_torch_worker.py" "$T/ops.json" <<'EOP' && ok || no "torch worker graph/cache requests"
import json, mmap, os, subprocess, sys
ops = json.load(open(sys.argv[2]))["ops"]
p = subprocess.Popen(["/usr/bin/python3", sys.argv[1], "--threads", "1"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
def ask(req):
    p.stdin.write(json.dumps(req) + "\n"); p.stdin.flush()
    return json.loads(p.stdout.readline())
assert ask({"cmd": "hello", "protocol": 1, "ops": ops})["ok"]
name = "/dualtime-test-graph-%d" % os.getpid()
m, n = 4, 8
nbytes = 3 * m * n * 4
fd = os.open("/dev/shm" + name, os.O_CREAT | os.O_RDWR, 0o600); os.ftruncate(fd, nbytes); os.close(fd)
try:
    bufs = [{"name": b, "dtype": "f32", "rows": m, "cols": n, "row_stride": n,
             "data_offset": i * m * n * 4, "is_output": b == "out"} for i, b in enumerate(("a", "b", "out"))]
    r = ask({"cmd": "prepare", "case": "add_4x8", "op": "add", "backend": "cpu", "m": m, "n": n,
             "shm": name, "arena_bytes": nbytes, "buffers": bufs})
    assert r["ok"], r
    r = ask({"cmd": "device", "scope": "graph", "reps": 4, "hold": True})
    assert r == {"ok": True, "unavailable": "cpu: no graphs"}, r
    r = ask({"cmd": "device", "scope": "control", "reps": 4, "cache": "hot"})
    assert not r["ok"] and "'cache' must be" in r["error"], r
    r = ask({"cmd": "device", "scope": "control", "reps": 4, "cache": "cold", "copies": 0,
             "flush_bytes": 64})
    assert not r["ok"] and "copies" in r["error"], r
    r = ask({"cmd": "device", "scope": "sideways", "reps": 4})
    assert not r["ok"] and "control, probe or graph" in r["error"], r
    assert ask({"cmd": "release"})["ok"]
finally:
    os.unlink("/dev/shm" + name)
    ask({"cmd": "quit"})
EOP
echo "test_graph_cache: $((pass+fail)) tests, $pass passed, $fail failed"
[ $fail -eq 0 ]
