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
expect2 "every dimension must be in 1..65536" run --output "$T/o" --backends cpu --row-shapes 0x5
expect2 "malformed shape '-3x5'" run --output "$T/o" --backends cpu --row-shapes -3x5
expect2 "malformed shape '4x4'" run --output "$T/o" --backends cpu --gemm-shapes 4x4
expect2 "duplicate shape '4x4'" run --output "$T/o" --backends cpu --row-shapes 4x4,4x4
expect2 "--samples: '0'" run --output "$T/o" --backends cpu --samples 0
expect2 "--samples: '-1'" run --output "$T/o" --backends cpu --samples -1
expect2 "--samples: 'abc'" run --output "$T/o" --backends cpu --samples abc
expect2 "--sample-ms: '0'" run --output "$T/o" --backends cpu --sample-ms 0
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
echo "{\"format\":\"other\"}" > "$T/foreign.json"
expect2 "report: " report "$T/foreign.json"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
