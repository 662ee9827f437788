#!/usr/bin/env bash
# sinks_readers - the profile sinks' files read by the real readers: pprof by
# `go tool pprof` (totals, sample types, top frames), collapsed stacks by
# their format, the HTML flame graph laid out by headless Chromium (widths
# proportional to bytes, hostile frame names shown as text, not run).
# JDKS: none
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

out="$TMPD/out"
mkdir -p "$out"
"$MEMTRACE" selftest-sinks "$out" || fail "selftest-sinks exited $?"

# Collapsed: 4 distinct stacks (two rows merge), 100,000,000 bytes, heaviest first.
[ "$(wc -l <"$out/alloc.collapsed")" -eq 4 ] || { cat "$out/alloc.collapsed" >&2; fail "collapsed: expected 4 lines"; }
sum=$(awk '{ s += $NF } END { printf "%d", s }' "$out/alloc.collapsed")
assert_eq "$sum" 100000000 "collapsed: total bytes"
head -1 "$out/alloc.collapsed" | grep -q ';byte\[\] 50000000$' || fail "collapsed: heaviest stack first"

# pprof, read by the real reader.
command -v go >/dev/null || skip "go is not installed (apt-get install golang-go; make deps does it)"
export HOME=${HOME:-$TMPD} GOCACHE="$TMPD/gocache"
go tool pprof -top -unit=B -sample_index=alloc_space "$out/alloc.pb.gz" >"$TMPD/top.txt" 2>&1 ||
	{ cat "$TMPD/top.txt" >&2; fail "go tool pprof could not read the profile"; }
cat "$TMPD/top.txt" >&2
assert_contains "$TMPD/top.txt" "Type: alloc_space"
assert_contains "$TMPD/top.txt" "Total samples = 100000000B"
assert_contains "$TMPD/top.txt" "Duration: 10s"
rows=$(grep -E '^ *[0-9]+B ' "$TMPD/top.txt" | awk '{ print $6 "|" $1 }' | head -4 | tr '\n' ' ')
assert_eq "$rows" 'byte[]|50000000B java.util.HashMap$Node[]|30000000B long[]|15000000B com.example.Ünïcödé$λ|5000000B ' \
	"pprof top leaves (frame|flat bytes)"
go tool pprof -top -sample_index=alloc_objects "$out/alloc.pb.gz" >"$TMPD/objs.txt" 2>&1 || fail "pprof alloc_objects"
assert_contains "$TMPD/objs.txt" "Total samples = 1000 *$"
grep -qE '^ +500 +50\.00% .* byte\[\]$' "$TMPD/objs.txt" || { cat "$TMPD/objs.txt" >&2; fail "pprof: 500 byte[] objects"; }
# cumulative: main holds everything, App.handle half
go tool pprof -top -cum -unit=B -sample_index=alloc_space "$out/alloc.pb.gz" >"$TMPD/cum.txt" 2>&1
grep -qE ' 100000000B +100% +com\.example\.App\.main$' "$TMPD/cum.txt" || { cat "$TMPD/cum.txt" >&2; fail "pprof: cum of App.main"; }

# The flame graph, laid out by a browser.
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || skip "chromium is not installed (apt-get install chromium; make deps does it)"
"$chrome" --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-component-update --disable-sync --no-first-run --user-data-dir="$TMPD/chrome" \
	--window-size=1200,400 --dump-dom "file://$out/alloc.html" >"$TMPD/dom.html" 2>"$TMPD/chrome.err" ||
	{ tail "$TMPD/chrome.err" >&2; fail "chromium could not load the flame graph"; }
python3 - "$TMPD/dom.html" <<'PY' || fail "flame graph layout"
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
boxes = {}
for style, text in re.findall(r'<div class="f[^"]*" style="([^"]*)">([^<]*)</div>', dom):
    w = float(re.search(r"width: ([0-9.]+)px", style).group(1))
    boxes[text] = w
need = ["all", "java.lang.Thread.run", "byte[]", "long[]", "java.util.HashMap$Node[]",
        "&lt;script&gt;alert('x&amp;y')&lt;/script&gt;\"q\""]
missing = [n for n in need if n not in boxes]
if missing:
    sys.exit("frames not drawn: %s (drawn: %s)" % (missing, list(boxes)[:20]))
total = boxes["all"]
for name, share in [("byte[]", .50), ("java.util.HashMap$Node[]", .30), ("long[]", .15)]:
    got = boxes[name] / total
    if abs(got - share) > 0.01:
        sys.exit("%s is %.3f of the width, expected %.2f" % (name, got, share))
if dom.count("<script") != 1:
    sys.exit("a frame name became a script element")
print("flame graph: %d frames drawn, widths proportional" % len(boxes), file=sys.stderr)
PY
