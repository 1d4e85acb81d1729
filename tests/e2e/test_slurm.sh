#!/usr/bin/env bash
# A sharded run through a real Slurm on this machine: munged, slurmctld and slurmd are
# started by hand (no systemd) with a minimal slurm.conf in a temporary folder (one node
# with this machine's CPUs and memory from `slurmd -C`, proctrack/linuxproc, task/none),
# examples/slurm/submit.sh submits a 2-task job array running the two shards of the quick
# CPU matrix (--threads 1) and the merge as an afterok-dependent job; the test polls the
# output files (no squeue/sacct needed), then checks that the merged run holds every
# planned case exactly once and every case valid. The daemons are stopped on every exit
# path (trap).
# Slurm missing: under CI=true or DT_SLURM_TEST=1 it is installed (apt-get slurm-wlm
# munge; a failed install FAILS the test), elsewhere the test skips (77). Needs root.
set -u
B="$(cd "$1" && pwd)"; D="$B/dualtime"
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
MUST=0; { [ "${CI:-}" = true ] || [ "${DT_SLURM_TEST:-}" = 1 ]; } && MUST=1
skip_or_fail() { if [ $MUST = 1 ]; then echo "FAIL: $*"; exit 1; fi; echo "$*: skip"; exit 77; }
START=$(date +%s)

[ "$(id -u)" = 0 ] || skip_or_fail "not root (the Slurm daemons run as root here)"
/usr/bin/python3 -c 'import torch' 2>/dev/null || skip_or_fail "torch not importable by /usr/bin/python3"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  [ $MUST = 1 ] || { echo "slurm-wlm/munge not installed (CI=true or DT_SLURM_TEST=1 installs them): skip"; exit 77; }
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null 2>&1 ||
    { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null; } ||
    { echo "FAIL: apt-get install slurm-wlm munge failed"; exit 1; }
  command -v slurmctld >/dev/null && command -v munged >/dev/null ||
    { echo "FAIL: slurm-wlm/munge installed but slurmctld/munged not found"; exit 1; }
fi

T=$(mktemp -d /tmp/dt-slurm.XXXXXX); chmod 755 "$T"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
logs() { for f in "$T"/*.log "$T"/p/slurm-*.out; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done; }

# munge: the key (created when missing), a private socket
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge && chown munge:munge /etc/munge && chmod 700 /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
fi
chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
mkdir -p "$T/munge" && chown munge:munge "$T/munge" && chmod 755 "$T/munge"
SOCK="$T/munge/munge.socket"
setpriv --reuid=munge --regid=munge --init-groups munged -F --socket="$SOCK" --pid-file="$T/munge/munged.pid" \
  --seed-file="$T/munge/munged.seed" --log-file="$T/munge/munged.log" \
  >"$T/munged.out" 2>&1 & PIDS+=($!)
for _ in $(seq 1 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] && ok || { no "munged did not start"; cat "$T/munge/munged.log"; exit 1; }

# slurm.conf: this machine as the one node, free ports, state under $T
NODE=$(hostname -s)
HW=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
read -r P1 P2 < <(/usr/bin/python3 -c 'import socket
ss=[socket.socket() for _ in range(2)]
[s.bind(("127.0.0.1",0)) for s in ss]; print(*[s.getsockname()[1] for s in ss])')
mkdir -p "$T/state" "$T/spool"
cat > "$T/slurm.conf" <<CONF
ClusterName=dtci
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$P1
SlurmdPort=$P2
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
NodeName=$NODE NodeAddr=127.0.0.1 $HW State=UNKNOWN
PartitionName=dt Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
slurmctld -D -c -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 & PIDS+=($!)
slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 & PIDS+=($!)
idle=0
for _ in $(seq 1 300); do
  st=$(sinfo -h -n "$NODE" -o %t 2>/dev/null)
  case "$st" in idle*) idle=1; break;; esac
  sleep 0.2
done
[ $idle = 1 ] && ok || { no "the node never became idle (state '${st:-}')"; logs; exit 1; }

# a plan of the quick CPU matrix in two shards, submitted as an array + a dependent merge
P="$T/p"
"$D" plan --shards 2 --output "$P" --backends cpu --quick --threads 1 --samples 3 \
  --sample-ms 2 --warmup-ms 5 --python /usr/bin/python3 2>/dev/null && ok || { no "plan"; exit 1; }
chmod -R a+rwX "$T"
JOBS=$(DUALTIME="$D" "$SRC/examples/slurm/submit.sh" "$P" 2>"$T/submit.err")
[ -n "$JOBS" ] && ok || { no "submit: $(cat "$T/submit.err")"; logs; exit 1; }
done_=0
for _ in $(seq 1 1800); do   # up to 6 minutes
  [ -f "$P/merged/results.json" ] && [ -f "$P/merged/results.md" ] && { done_=1; break; }
  sleep 0.2
done
[ $done_ = 1 ] && ok || { no "no merged results after 6 minutes (jobs $JOBS)"; logs; exit 1; }
sleep 0.5 # results.md is the merge's last file; let the job end
/usr/bin/python3 - "$P" <<'EOP' && ok || { no "merged run"; logs; }
import json, sys
d = sys.argv[1]
plan = json.load(open(d + "/plan.json"))
m = json.load(open(d + "/merged/results.json"))
planned = [c["id"] for c in plan["cases"]]
got = [c["id"] for c in m["cases"]]
assert len(planned) == 19, len(planned)
assert got == planned, (got, planned)           # every planned case exactly once, in order
assert len(set(got)) == len(got)
bad = [c["id"] for c in m["cases"] if c["valid"] is not True]
assert not bad, "invalid cases: %s" % bad
assert sorted(set(c["shard"] for c in m["cases"])) == [0, 1]
assert m["plan"]["id"] == plan["plan_id"] and m["complete"] is True
assert m["derived"]["counts"] == {**m["derived"]["counts"], "cases": 19, "valid": 19}
for i in (0, 1):
    s = json.load(open("%s/shard-%d/results.json" % (d, i)))
    assert s["plan"]["shard"] == i and s["settings"]["threads"] == 1
print("merged: %d cases, all valid, shards %s" % (len(got), [s["shard"] for s in m["shards"]]))
EOP
[ -f "$P/slurm-shard-0.out" ] && [ -f "$P/slurm-shard-1.out" ] \
  && ok || no "the array tasks left no Slurm output files"
echo "slurm test wall time: $(( $(date +%s) - START )) s"
echo "$((pass+fail)) checks, $pass passed, $fail failed"
[ $fail -eq 0 ]
