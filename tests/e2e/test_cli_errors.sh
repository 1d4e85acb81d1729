#!/usr/bin/env bash
# Bad command lines: each must exit 2 with one clear line naming the flag and value, and
# leave nothing behind (no output directory).
set -u
B="$1"; D="$B/dualtime"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
expect2() { # expect2 "what it must say" args...
  local want="$1"; shift
  local out rc
  out=$("$D" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" <<<"$out" && [ "$(wc -l <<<"$out")" -eq 1 ] && [ ! -e "$T/o" ]; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); echo "FAIL: dualtime $* -> rc=$rc out='$out' (wanted '$want')"
  fi
}
expect2 "--output DIR is required" run --backends cpu
expect2 "unknown operation 'addd'" run --output "$T/o" --backends cpu --operations addd
expect2 "malformed shape '17y257'" run --output "$T/o" --backends cpu --row-shapes 17y257
expect2 "every dimension must be in 1..2147483647" run --output "$T/o" --backends cpu --row-shapes 0x5
expect2 "malformed shape '-3x5'" run --output "$T/o" --backends cpu --row-shapes -3x5
expect2 "malformed shape '4x4'" run --output "$T/o" --backends cpu --gemm-shapes 4x4
expect2 "duplicate shape '4x4'" run --output "$T/o" --backends cpu --row-shapes 4x4,4x4
expect2 "--samples: '0'" run --output "$T/o" --backends cpu --samples 0
expect2 "--samples: '-1'" run --output "$T/o" --backends cpu --samples -1
expect2 "--samples: 'abc'" run --output "$T/o" --backends cpu --samples abc
expect2 "--sample-ms: '0'" run --output "$T/o" --backends cpu --sample-ms 0
expect2 "--prime: '17'" run --output "$T/o" --backends cpu --prime 17
expect2 "--prime: '-1'" run --output "$T/o" --backends cpu --prime -1
expect2 "--threads: '0'" run --output "$T/o" --backends cpu --threads 0
expect2 "--rounds: '0'" run --output "$T/o" --backends cpu --rounds 0
expect2 "--timeout: 'x'" run --output "$T/o" --backends cpu --timeout x
expect2 "unknown backend 'metal'" run --output "$T/o" --backends metal
expect2 "--probe-kind: 'fast'" run --output "$T/o" --backends cuda --probe-kind fast
expect2 "unknown option '--bogus'" run --output "$T/o" --bogus
expect2 "--device-timing: the cpu backend has no device scopes" run --output "$T/o" --backends cpu --device-timing
expect2 "unknown command 'frobnicate'" frobnicate
mkdir "$T/exists"
expect2 "already exists" run --output "$T/exists" --backends cpu
# a requested backend that is unavailable is an error, never a fallback
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then
  expect2 "--backends cuda:" run --output "$T/o" --backends cuda --quick
fi
# PyTorch missing: the error says how to get it
cat > "$T/notorch" <<'EOS'
#!/bin/sh
exec /usr/bin/python3 -S "$@"
EOS
chmod +x "$T/notorch"
expect2 "apt-get install --no-install-recommends python3-torch" run --output "$T/o" --backends cpu --python "$T/notorch"
expect2 "report: " report "$T/nonexistent.json"
expect2 "list: unknown argument '--bogus'" list --bogus
# `list --json` is the registry the text list shows: same ops, order and tolerances
"$D" list --json > "$T/ops.json" && "$D" list > "$T/ops.txt" &&
  /usr/bin/python3 - "$T/ops.json" "$T/ops.txt" <<'EOS'
import json, sys
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
assert doc["format"] == "dualtime-ops" and doc["version"] == 1, doc.get("format")
assert len(doc["ops"]) == 9, len(doc["ops"])
for o in doc["ops"]:
    b = o["buffers"]
    assert b[-1]["name"] == "out" and b[-1]["is_output"] and not any(x["is_output"] for x in b[:-1]), o
    assert all(x["dtype"] in ("f32", "i64") and x["rows"] in "MNK1" and x["cols"] in "MNK1" for x in b), o
    assert ("%-20s %-52s %-8g %-8g" % (o["name"], o["definition"], o["atol"], o["rtol"])) in text, o["name"]
for be in ("cpu", "cuda"):
    s = doc["shapes"][be]
    assert s["rows"] and s["gemm"] and all(len(x) == 2 for x in s["rows"]) and all(len(x) == 3 for x in s["gemm"]), s
    assert (s["logits_rows"] == [[4096, 50257], [2048, 128256]]) == (be == "cuda") and not set(map(tuple, s["logits_rows"])) & set(map(tuple, s["rows"])), s
EOS
if [ $? -eq 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: dualtime list --json"; fi
echo "{\"format\":\"other\"}" > "$T/foreign.json"
expect2 "report: " report "$T/foreign.json"
# Hostile argument vectors (about 200, seeded so a failure reproduces): long strings,
# NUL-free binary bytes, huge and odd numbers, empty values, repeated flags, on top of a
# valid and fast base command line (so the rare valid vector finishes quickly: the native
# worker stands in for the PyTorch one). Every
# vector must exit 0, 1 or 2 (never a signal or a hang), and one that exits 2 must leave
# nothing behind. Runs inside $T/w so a relative --output lands there.
D=$(cd "$B" && pwd)/dualtime
mkdir -p "$T/w"; cd "$T/w" || exit 1
RANDOM=20240611
chars=(); for ((j = 1; j < 256; j++)); do chars+=("$(printf "\\$(printf '%03o' $j)")"); done
chars[9]=$'\n' # command substitution ate the newline (byte 10)
bytes() { # bytes N: N random bytes in 1..255 into $val
  local j; val=""
  for ((j = 0; j < $1; j++)); do val+=${chars[RANDOM % 255]}; done
}
long=$(printf 'x%.0s' $(seq 5000)); huge=$(printf 'A%.0s' $(seq 100000))
many=$(for i in $(seq 70); do printf '%dx%d,' "$i" "$i"; done); many=${many%,}
vals=("" " " "$long" "$huge" "0" "-1" "-0" "1e308" "1e-320" "inf" "nan" "-nan" "0x10" " 5" "5 "
      "99999999999999999999999" "9223372036854775807" "-9223372036854775808" "18446744073709551616"
      "%s%n%x%p" "\$(touch pwned)" "../../../../etc/passwd" "/dev/null" "/" "a,b" ",,," "add,,sum"
      "add,add" "x" "1x" "1x1," ",1x1" "1x1x" "1x1x1x1" "0x0" "65536x65536" "65537x1" "$many"
      "1x1,1x1" "-1x5" "1X1" "cpu,cpu" "cpu,cuda" "cuda" "CPU" "--quick" "-" "--" "=" "--output"
      "0.000001" "1e9" "4096" "1e-9")
flags=(--backends --operations --row-shapes --gemm-shapes --samples --sample-ms --warmup-ms --prime
       --threads --timeout --seed --rounds --probe-kind --output --python --bogus -x --quick=1
       --input-views --capture-sources --quiet --device-timing --samples= --row-shapes=)
base=(run --output o --quick --backends cpu --operations add --row-shapes 1x1 --samples 1
      --sample-ms 0.01 --warmup-ms 0 --rounds 1 --timeout 20
      --baseline-worker "$(dirname "$D")/dualtime-native-worker") # no PyTorch start-up
pick() { # a hostile value into $val
  if ((RANDOM % 4 == 0)); then bytes $((1 + RANDOM % 40)); else val=${vals[RANDOM % ${#vals[@]}]}; fi
}
hpass=0; hfail=0; nvalid=0
for ((v = 0; v < 200; v++)); do
  argv=("${base[@]}")
  ((v % 10 == 0)) && argv=("${argv[@]:1}")            # seed style: flags only
  for ((m = 0; m < 1 + RANDOM % 3; m++)); do
    f=${flags[RANDOM % ${#flags[@]}]}
    pick
    case "$f" in
      --python) val="/nonexistent/$val" ;;             # never start a random program
      --output) val="out$v-${val:0:50}" ;;
    esac
    case "$f" in
      --input-views|--capture-sources|--quiet|--device-timing|-x) argv+=("$f") ;;
      *=) argv+=("$f$val") ;;
      *) argv+=("$f" "$val") ;;
    esac
  done
  if ((v % 10 == 1)); then pick; argv=(report "$val"); fi
  if ((v % 10 == 2)); then pick; a1=$val; pick; argv=(compare "$a1" "$val"); fi
  timeout -k 5 120 "$D" "${argv[@]}" >/dev/null 2>"$T/err"; rc=$?
  if [ $rc -gt 2 ]; then
    hfail=$((hfail + 1))
    echo "FAIL: hostile vector $v: rc=$rc ($([ $rc -gt 128 ] && echo "signal $((rc - 128))" || echo "timeout or bad status")): $(printf '%q ' "${argv[@]}" | head -c 300)"
    head -c 300 "$T/err"
  elif [ $rc -eq 2 ] && [ -n "$(ls -A "$T/w")" ]; then
    hfail=$((hfail + 1)); echo "FAIL: hostile vector $v: rc=2 but left $(ls -A "$T/w" | head -c 200)"
  else
    hpass=$((hpass + 1))
  fi
  [ $rc -le 1 ] && nvalid=$((nvalid + 1))
  rm -rf "${T:?}/w/"* "${T:?}/w/".[!.]* 2>/dev/null
done
cd "$T" || exit 1
echo "hostile vectors: $hpass passed, $hfail failed ($nvalid ran or reported)"
pass=$((pass + hpass)); fail=$((fail + hfail))
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
