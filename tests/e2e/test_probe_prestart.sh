#!/usr/bin/env bash
# The probe workers started together before the run (session/dt_session.h,
# dt_session_prestart; src/cli/dt_main.c): with device timing, every probe process the
# probe kind needs (auto: both kinds for each implementation) is spawned and sent hello
# at once before the ceilings and the first case, instead of one after the other in the
# first case. With fake device workers that log every request (FAKE_REQ_LOG):
#  - default (auto): 2 implementations x 2 kinds = 4 probe processes; they started within
#    half of the slowest one's start-up (process start to hello answered: they were spawned
#    at once; one after the other they spread over more than the slowest start-up), and
#    all their hellos were answered before the first prepare of any main worker; each still got probe_process before its first
#    prepare (the persistent probe mode is unchanged); the run is valid;
#    with --backends cuda each was spawned before the main workers' hellos were all
#    answered (session 8: their start-ups overlap the main workers');
#  - --probe-kind serialized: 2 probe processes, the same;
#  - DUALTIME_PROBE_PRESTART=0 (on demand, as before): the probe processes start in the
#    first case, after the main workers' prepares, one after the other;
#  - the three runs measure the same facts (inputs, output SHA-256s, oracle numbers);
#  - DUALTIME_PROBE_PRESTART=2: exit 2 naming it, no output directory.
. "$(dirname "$0")/e2e_lib.sh" "$1"
ARGS=(--backends cuda --device-timing --operations add,softmax --row-shapes 17x257,64x1024 --samples 3
      --rounds 2 --sample-ms 2 --warmup-ms 5 --threads 1 --quiet
      --candidate-worker "$HERE/fake_device_worker.py $B/dualtime-native-worker"
      --baseline-worker "$HERE/fake_device_worker.py /usr/bin/python3 $B/dualtime_torch_worker.py")
# run NAME EXPECT-RC [ENV...] -- [ARGS...]
run() { local name="$1" want="$2"; shift 2; local envs=()
  while (($#)) && [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" FAKE_REQ_LOG="$T/$name.req" FAKE_DEVICE_NS=4000 "$D" run --output "$T/$name" \
    "${ARGS[@]}" "$@" >"$T/$name.log" 2>&1; local rc=$?
  [ $rc -eq "$want" ] && ok || no "$name: exit $rc, expected $want: $(tail -3 "$T/$name.log")"; }
run auto 0 --
run serialized 0 -- --probe-kind serialized
run ondemand 0 DUALTIME_PROBE_PRESTART=0 --

# starts NAME MODE N: the probe processes (those sent probe_process) and when they started
starts() { /usr/bin/python3 - "$T/$1.req" "$2" "$3" <<'EOP'
import collections, json, sys
path, mode, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
reqs = collections.defaultdict(list)
for l in open(path):
    x = json.loads(l)
    reqs[x["pid"]].append(x)
probes = [p for p, rs in reqs.items() if any(r["cmd"] == "probe_process" for r in rs)]
mains = [p for p in reqs if p not in probes]
assert len(probes) == want, ("probe processes", len(probes), want)
for p in probes:  # probe_process before the first prepare, as before
    cmds = [r["cmd"] for r in reqs[p] if r["cmd"] != "start"]
    assert cmds[0] == "hello" and cmds.index("probe_process") < cmds.index("prepare"), cmds[:6]
hello = {p: next(r for r in reqs[p] if r["cmd"] == "hello") for p in probes}
start = {p: next(r for r in reqs[p] if r["cmd"] == "start")["t_in"] for p in probes}
first_main_prepare = min(r["t_in"] for p in mains for r in reqs[p] if r["cmd"] == "prepare")
# started together: the processes' starts lie within half the slowest start (process start
# to hello answered); one after the other, each starts after the one before answered, so
# the starts spread over more than the slowest start
slowest = max(hello[p]["t_out"] - start[p] for p in probes)
spread = max(start.values()) - min(start.values())
together = spread < 0.5 * slowest
before = all(h["t_out"] < first_main_prepare for h in hello.values())
# --backends cuda with device timing: spawned with the main workers (session 8), each
# before the last main worker's hello was answered
main_hello = max(next(r for r in reqs[p] if r["cmd"] == "hello")["t_out"] for p in mains)
early = all(start[p] < main_hello for p in probes)
if mode == "together":
    assert together and before, ("not started together before the run", spread, slowest, hello,
                                 first_main_prepare)
    assert early, ("not started with the main workers", start, main_hello)
else:
    assert spread > slowest and not before and not early, ("started together", spread, slowest,
                                                           hello, first_main_prepare)
print("ok", path, mode, len(probes), "probe processes, starts spread %.3f s, slowest start %.3f s" % (spread, slowest))
EOP
}
starts auto together 4 && ok || no "auto: the 4 probe processes did not start together before the first case"
starts serialized together 2 && ok || no "serialized: the 2 probe processes did not start together"
starts ondemand apart 4 && ok || no "DUALTIME_PROBE_PRESTART=0: the probe processes did not start on demand"
for n in auto serialized ondemand; do /usr/bin/python3 "$HERE/run_facts.py" "$T/$n/results.json" >"$T/$n.facts"; done
grep -q "^check" "$T/auto.facts" && ! grep -q "^valid .* False" "$T/auto.facts" && ok || no "auto: no facts, or an invalid case"
cmp -s "$T/auto.facts" "$T/ondemand.facts" && ok || no "prestart changed what was measured: $(diff "$T/auto.facts" "$T/ondemand.facts" | head -4)"
cmp -s "$T/auto.facts" "$T/serialized.facts" && ok || no "serialized: facts differ: $(diff "$T/auto.facts" "$T/serialized.facts" | head -4)"
run bad 2 DUALTIME_PROBE_PRESTART=2 --
grep -q "DUALTIME_PROBE_PRESTART=2" "$T/bad.log" && ok || no "the refusal does not name DUALTIME_PROBE_PRESTART=2: $(cat "$T/bad.log")"
[ ! -e "$T/bad" ] && ok || no "a refused run left $T/bad"
e2e_end test_probe_prestart
