#!/usr/bin/env bash
# End to end with three implementations on the CPU (--impls, docs/implementations.md):
# torch (the baseline), native, and a copy of the native worker named through worker: with
# a quoted path holding a space. results.json holds all three with their samples, every
# candidate's verdict vs the baseline, and sample positions in the rotated Latin square;
# results.md names them all and regenerates identically; the device phase (a fake cuda
# worker) orders device samples the same way and has a ratio table per candidate; compare pairs every candidate;
# --dry-run lists them; an interrupted run of three resumes. Refusals exit 2 before anything starts (no output directory): bad
# specs, a module that does not exist, a single implementation, --impls with an older
# spelling, and a worker whose hello says it is unavailable (the reason in the message).
set -u
B="$1"; D="$B/dualtime"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch not importable by /usr/bin/python3: skip"; exit 77; }
T=$(mktemp -d); [ -n "${KEEP_T:-}" ] || trap 'rm -rf "$T"' EXIT; echo "tmp $T"
pass=0; fail=0
ok() { pass=$((pass+1)); }
no() { fail=$((fail+1)); echo "FAIL: $*"; }
SMALL=(--backends cpu --operations add,gemm --row-shapes 17x257 --gemm-shapes 32x32x32
       --samples 3 --sample-ms 2 --warmup-ms 5 --threads 1 --quiet --python /usr/bin/python3)
mkdir -p "$T/a dir"
cp "$B/dualtime-native-worker" "$T/a dir/"
IMPLS="torch,native,copy=worker:'$T/a dir/dualtime-native-worker'"

# 1. three implementations in one run
"$D" run --output "$T/three" "${SMALL[@]}" --impls "$IMPLS"; rc=$?
[ $rc -eq 0 ] && ok || no "three-implementation run exit $rc"
/usr/bin/python3 - "$T/three/results.json" "$T/a dir/dualtime-native-worker" <<'EOP' && ok || no "results.json of three"
import json, sys
r = json.load(open(sys.argv[1]))
fw = r["frameworks"]
assert [f["id"] for f in fw] == ["torch", "native", "copy"], [f["id"] for f in fw]
assert [f["role"] for f in fw] == ["baseline", "candidate", "candidate"]
assert fw[2]["command"][0] == sys.argv[2], fw[2]["command"]
assert fw[2]["command"][1:] == ["--threads", "1"], fw[2]["command"]
assert len(r["cases"]) == 2
for c in r["cases"]:
    assert c["valid"] is True, c["id"]
    assert sorted(c["impl"]) == ["copy", "native", "torch"], sorted(c["impl"])
    for k, im in c["impl"].items():
        assert im["status"] == "ok", (c["id"], k, im["error"])
        assert len(im["samples"]["e2e_batch"]) == 3 and len(im["samples"]["e2e_single"]) == 3
    vs = c["derived"]["scopes"]["e2e_batch"]["vs_baseline"]
    assert sorted(vs) == ["copy", "native"], sorted(vs)
    for k in ("copy", "native"):
        assert vs[k]["verdict"] in ("faster", "slower", "indistinguishable"), vs[k]
    # the rotated Latin square: at index i the order is rotation i of (native, copy, torch)
    for scope in ("e2e_batch", "e2e_single"):
        seq = ["native", "copy", "torch"]
        posn = {k: [0, 0, 0] for k in seq}
        for i in range(3):
            at = sorted(seq, key=lambda k: c["impl"][k]["samples"][scope][i]["position"])
            assert at == seq[i:] + seq[:i], (c["id"], scope, i, at)
            for q, k in enumerate(at):
                posn[k][q] += 1
        assert all(v == [1, 1, 1] for v in posn.values()), posn
vc = r["derived"]["vs_baseline"] if "vs_baseline" in r["derived"] else None
EOP
md="$T/three/results.md"
head -1 "$md" | grep -q '^# dualtime results: native, copy vs torch' && ok || no "results.md title: $(head -1 "$md")"
for id in native copy torch; do
  grep -q "| add_17x257 | $id |" "$md" && ok || no "results.md has no row of $id"
done
grep -qF "| torch E2E batch p50 | torch p90 | torch single p50 | native p50 |" "$md" && grep -qF "native ratio [95% CI] | native verdict | copy p50 |" "$md" && ok ||
  no "results.md has no column group per implementation"
[ -s "$T/three/plots/ratios.svg" ] && grep -q "native / torch" "$T/three/plots/ratios.svg" &&
  [ -s "$T/three/plots/ratios-copy.svg" ] && grep -q "copy / torch" "$T/three/plots/ratios-copy.svg" &&
  grep -qF "![ratios of copy](plots/ratios-copy.svg)" "$md" && ok ||
  no "no ratio chart per candidate (plots/ratios.svg, plots/ratios-copy.svg, linked in results.md)"
cp "$md" "$T/first.md"
"$D" report "$T/three/results.json" 2>/dev/null && cmp -s "$T/first.md" "$md" && ok || no "report regeneration differs"
out=$("$D" compare "$T/three/results.json" "$T/three/results.json" 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "copy" <<<"$out" && grep -q "native" <<<"$out" && ok ||
  no "compare of a run with itself: exit $rc: $(head -c 400 <<<"$out")"
out=$("$D" run --dry-run "${SMALL[@]}" --impls "$IMPLS" 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "implementations: torch (baseline, pytorch), native (candidate, dualtime-native), copy (candidate, dualtime-native)" <<<"$out" &&
  ok || no "dry run: exit $rc: $(grep implementations <<<"$out")"

# 1b. the device phase with three (tests/e2e/fake_device_worker.py claims cuda): device
# samples in the Latin square too (reversed in round 1), a ratio table per candidate
H="$(cd "$(dirname "$0")" && pwd)"
FK="$H/fake_device_worker.py"
FAKE_DEVICE_NS=5000 "$D" run --output "$T/dev" --backends cuda --device-timing --operations add \
  --row-shapes 17x257 --samples 3 --rounds 2 --sample-ms 2 --warmup-ms 5 --threads 1 --quiet \
  --impls "ft=worker:$FK /usr/bin/python3 $B/dualtime_torch_worker.py,fn=worker:$FK $B/dualtime-native-worker,n3=worker:$FK $B/dualtime-native-worker"; rc=$?
[ $rc -eq 0 ] && ok || no "device run of three: exit $rc"
/usr/bin/python3 - "$T/dev/results.json" <<'EOP' && ok || no "device samples of three"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["cases"][0]
seq = ["fn", "n3", "ft"]
for scope in ("control_batch", "probe_single", "dispatch_batch"):
    for rnd in (0, 1):
        for i in range(3):
            at = sorted(seq, key=lambda k: [s for s in c["impl"][k]["samples"][scope]
                                            if s["round"] == rnd and s["index"] == i][0]["position"])
            want = seq[i:] + seq[:i]
            assert at == (want if rnd == 0 else want[::-1]), (scope, rnd, i, at)
EOP
grep -qF "Ratios of **n3** to the baseline **ft**:" "$T/dev/results.md" &&
  grep -qF "Ratios of **fn** to the baseline **ft**:" "$T/dev/results.md" && ok ||
  no "results.md: no device ratio table per candidate"

# 2. an interrupted three-implementation run resumes (check_resume matches all three)
"$D" run --output "$T/rs" "${SMALL[@]}" --operations add,sum,softmax,gemm --sample-ms 10 \
  --impls "torch,native,n2=native" & p=$!
for _ in $(seq 1 120); do
  sleep 0.5
  /usr/bin/python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["cases"] else 1)' \
    "$T/rs/results.json" 2>/dev/null && break
done
kill -INT $p 2>/dev/null; wait $p
"$D" run --resume "$T/rs" --quiet; rc=$?
[ $rc -eq 0 ] && ok || no "resume of three: exit $rc"
/usr/bin/python3 - "$T/rs/results.json" <<'EOP' && ok || no "resumed results.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["complete"] is True and len(r["cases"]) == 4, (r["complete"], len(r["cases"]))
assert [f["id"] for f in r["frameworks"]] == ["torch", "native", "n2"]
assert all(c["valid"] and sorted(c["impl"]) == ["n2", "native", "torch"] for c in r["cases"])
EOP

# 3. refusals: exit 2, the flag and the value named, nothing created
refused() { # refused NAME EXPECTED-TEXT ARGS...
  local name="$1" want="$2"; shift 2
  local err; err=$("$D" run --output "$T/r-$name" "${SMALL[@]}" "$@" 2>&1); local rc=$?
  [ $rc -eq 2 ] || { no "$name: exit $rc, wanted 2 ($err)"; return; }
  grep -qF -- "$want" <<<"$err" && ok || no "$name: message '$err' lacks '$want'"
  [ ! -e "$T/r-$name" ] && ok || no "$name: the output directory was created"
}
refused dup "--impls: 'torch,native,torch': the name 'torch' is used twice" --impls torch,native,torch
refused unknown "--impls: 'triton': unknown implementation" --impls torch,triton
refused noname "--impls: 'py:x.py' needs a name" --impls torch,py:x.py
refused nomodule "--impls m: the Python file '$T/none.py' does not exist" --impls "torch,m=py:$T/none.py"
refused nodir "--impls k: the directory '$T/none' does not exist" --impls "torch,k=cuda:$T/none"
refused one "name a baseline and at least one implementation" --impls torch
refused quote "unterminated ' quote" --impls "torch,w=worker:'/bin/x"
refused both "--impls: cannot be combined with --candidate-worker" --impls torch,native --candidate-worker /bin/true
refused noprog "--impls w: '/no/such/worker' is not an executable program" --impls "torch,w=worker:/no/such/worker"
cat > "$T/unavailable.sh" <<'EOW'
#!/bin/sh
read -r line
echo '{"ok":true,"protocol":1,"worker":"fake","framework":"fake","unavailable":"torch.compile needs torch 2.0 or later (this is 1.13)","backends":{"cpu":{"available":true},"cuda":{"available":false}}}'
while read -r line; do echo '{"ok":false,"error":"unavailable"}'; done
EOW
chmod +x "$T/unavailable.sh"
refused unavailable "--impls fake: torch.compile needs torch 2.0 or later (this is 1.13)" \
  --impls "torch,native,fake=worker:$T/unavailable.sh"
refused unavailable-old "--candidate-worker: torch.compile needs torch 2.0 or later" \
  --candidate-worker "$T/unavailable.sh"

echo "test_impls: $pass passed, $fail failed"
[ $fail -eq 0 ]
