#!/usr/bin/env bash
# The report's SVG charts as a person sees them: `dualtime report` on a hand-made
# results.json (written below by python3: device scopes, an invalid case, a case without
# an interval, a case id with '<&>', roofline ceilings), then headless Chromium renders
# plots/ratios.svg and plots/roofline.svg directly and as <img> in a page (as a code
# host shows them). Each screenshot must exist, be non-trivial in size, not be blank, and
# show the scope colours (so markers and bars were drawn, not an XML error page).
# Skips (77) without /usr/bin/chromium or when Chromium cannot start here.
# Usage: bash tests/e2e/test_plots_browser.sh BUILD_DIR
set -u
B="$1"; D="$B/dualtime"
CHROME=${DT_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROME" ]; then echo "SKIP: $CHROME not found"; exit 77; fi
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$PY" - "$T/results.json" <<'EOF' || { echo "FAIL: cannot write the fixture"; exit 1; }
import json, random, sys
rnd = random.Random(5)
def samples(us, n=9, rounds=2, reps=100, jitter=0.03):
    out, pos = [], 0
    for r in range(rounds):
        for i in range(n):
            out.append({"us": us * (1 + jitter * (2 * rnd.random() - 1)), "reps": reps,
                        "round": r, "index": i, "position": pos}); pos += 1
    return out
def case(cid, op, m, n, cand_us, base_us, valid=True, n_samples=9, rounds=2):
    impl = {}
    for fw, us in (("native", cand_us), ("torch", base_us)):
        failed = not valid and fw == "native"
        sm = {"e2e_batch": samples(us, n_samples, rounds),
              "e2e_single": samples(3 * us, n_samples, rounds, 1),
              "control_batch": samples(0.8 * us, n_samples, rounds, 64),
              "control_single": samples(2.4 * us, n_samples, rounds, 1)}
        impl[fw] = {"status": "failed" if failed else "ok",
                    "error": "worker crashed (signal 11)" if failed else None,
                    "checks": [{"when": "cold", "ok": not failed}], "samples": sm}
    return {"id": cid, "op": op, "m": m, "n": n, "k": 0, "views": False, "backend": "cuda",
            "valid": valid, "impl": impl}
cases = [case("add_1x127", "add", 1, 127, 4.2, 8.6),
         case("add_8192x8192", "add", 8192, 8192, 187, 188),
         case("softmax_1024x4096", "softmax", 1024, 4096, 7.7, 15.2),
         case("rmsnorm_64x4096", "rmsnorm", 64, 4096, 3.7, 25.1),
         case("sum_17x257", "sum", 17, 257, 9.0, 4.0),
         case("layernorm_fail", "layernorm", 17, 257, 5.0, 10.0, valid=False),
         case("few <&> pairs", "add", 17, 257, 6.0, 10.0, n_samples=2, rounds=1)]
# format 2 with held windows: control_* are the held device windows (a format-1 file's
# control would read as dispatch and draw in the dispatch colours)
r = {"format": "dualtime-results", "format_version": 2, "complete": True,
     "settings": {"backend": "cuda", "samples": 9, "rounds": 2, "held_windows": True,
                  "bootstrap": {"resamples": 500, "seed": 7}},
     "frameworks": [{"id": "torch", "role": "baseline", "framework": "pytorch",
                     "framework_version": "2.11.0"},
                    {"id": "native", "role": "candidate", "framework": "dualtime-native",
                     "framework_version": "0.1.0"}],
     "environment": {"host": {"cpu": "test"}, "gpu": {"name": "test GPU"},
                     "ceilings": {"copy_gbps": 3900.0, "launch_sync_floor_us": 8.0}},
     "cases": cases}
json.dump(r, open(sys.argv[1], "w"), indent=1)
EOF

"$D" report "$T/results.json" 2>"$T/report.err" || { bad "dualtime report: $(cat "$T/report.err")"; exit 1; }
for f in plots/ratios.svg plots/roofline.svg; do
  [ -s "$T/$f" ] || bad "$f was not written"
  grep -qF "]($f)" "$T/results.md" || bad "results.md does not link $f"
done
[ $fail -eq 0 ] || exit 1

# The same images as a code host shows them: <img> in a page (no scripts, no fonts).
cat >"$T/page.html" <<'EOF'
<!DOCTYPE html><html><body style="margin:0;background:#fff">
<img src="plots/ratios.svg" style="max-width:100%"><br>
<img src="plots/roofline.svg" style="max-width:100%">
</body></html>
EOF

shot() { # shot OUT.png URL WIDTH HEIGHT; 0 when the PNG was written
  local prof; prof=$(mktemp -d -p "$T")
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$prof" \
    --screenshot="$1" --window-size="$3,$4" "$2" >"$T/chrome.log" 2>&1
  [ -s "$1" ]
}

# Can Chromium start at all here? If not, skip rather than fail.
echo '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>' >"$T/probe.svg"
if ! shot "$T/probe.png" "file://$T/probe.svg" 200 200; then
  echo "SKIP: Chromium cannot render here:"; tail -5 "$T/chrome.log"; exit 77
fi

# check PNG MIN_BYTES MIN_INK COLOR... : decodes the PNG (zlib + scanline filters) and
# requires MIN_INK non-white pixels and, per COLOR (#rrggbb), at least 30 pixels close to it.
check() {
  "$PY" - "$@" <<'EOF'
import struct, sys, zlib
path, min_bytes, min_ink = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
colors = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in sys.argv[4:]]
data = open(path, "rb").read()
if len(data) < min_bytes: sys.exit(f"{path}: only {len(data)} bytes")
if data[:8] != b"\x89PNG\r\n\x1a\n": sys.exit(f"{path}: not a PNG")
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, typ = struct.unpack(">I4s", data[pos:pos + 8]); body = data[pos + 8:pos + 8 + n]
    if typ == b"IHDR": w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif typ == b"IDAT": idat += body
    pos += 12 + n
if depth != 8 or ctype not in (2, 6): sys.exit(f"{path}: unexpected PNG type {depth}/{ctype}")
bpp = 4 if ctype == 6 else 3
raw, stride = zlib.decompress(idat), w * bpp
prev, ink, hits = bytearray(stride), 0, [0] * len(colors)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0; b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        px = line[x:x + 3]
        if px[0] < 235 or px[1] < 235 or px[2] < 235: ink += 1
        for k, col in enumerate(colors):
            if abs(px[0] - col[0]) < 24 and abs(px[1] - col[1]) < 24 and abs(px[2] - col[2]) < 24:
                hits[k] += 1
    prev = line
if ink < min_ink: sys.exit(f"{path}: looks blank ({ink} non-white pixels of {w * h})")
for k, col in enumerate(colors):
    if hits[k] < 30: sys.exit(f"{path}: colour #{bytes(col).hex()} missing ({hits[k]} pixels)")
print(f"{path}: {w}x{h}, {len(data)} bytes, {ink} non-white pixels, colours {hits}")
EOF
}

BLUE='#0072B2'; ORANGE='#E69F00'; GREEN='#009E73'; PINK='#CC79A7'
if shot "$T/ratios.png" "file://$T/plots/ratios.svg" 1200 900; then
  check "$T/ratios.png" 8000 3000 "$BLUE" "$ORANGE" "$GREEN" "$PINK" || fail=1
else bad "no screenshot of ratios.svg: $(tail -3 "$T/chrome.log")"; fi
if shot "$T/roofline.png" "file://$T/plots/roofline.svg" 1200 900; then
  check "$T/roofline.png" 8000 3000 "$BLUE" "$ORANGE" || fail=1
else bad "no screenshot of roofline.svg: $(tail -3 "$T/chrome.log")"; fi
if shot "$T/page.png" "file://$T/page.html" 1200 1400; then
  check "$T/page.png" 8000 6000 "$BLUE" "$ORANGE" "$GREEN" "$PINK" || fail=1
else bad "no screenshot of the page: $(tail -3 "$T/chrome.log")"; fi

if [ -n "${DT_PLOTS_KEEP:-}" ]; then mkdir -p "$DT_PLOTS_KEEP" && cp "$T"/*.png "$T"/plots/*.svg "$DT_PLOTS_KEEP"/; fi
[ $fail -eq 0 ] && echo "plots render in Chromium" || exit 1
