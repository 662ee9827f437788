#!/usr/bin/env bash
# record_stacks - allocation stacks in recordings: `memtrace record --alloc-stacks`
# on AllocStacks (five sites whose stacks and lines are known by construction:
# Throwable.getStackTrace at each site), then `check` passes (the stacks are
# MT_EV_NAME definitions before the samples that use them), and `report`
# gives each class its expected stack for >= 99 % of its bytes (collapsed
# file, the kinds' suffixes stripped), the expected line of every frame of
# the heaviest stack (JSON), and a pprof that `go tool pprof` reads with the
# allocating line.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m -XX:CompileCommand=quiet '-XX:CompileCommand=dontinline,AllocStacks*::*' \
	AllocStacks --go "$TMPD/go" --mb 512
pid=$JVM_PID
"$MEMTRACE" record -p "$pid" -o "$TMPD/s.rec.gz" --categories alloc,thread,type --alloc-stacks \
	2>"$TMPD/rec.err" &
r=$!
wait_for_line "$TMPD/rec.err" 'recording pid' 20 || { cat "$TMPD/rec.err"; fail "record did not start"; }
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 60 || fail "workload did not finish"
kill -INT "$r"
wait "$r" || { cat "$TMPD/rec.err"; fail "record failed"; }
"$MEMTRACE" check "$TMPD/s.rec.gz" >"$TMPD/check.out" || { cat "$TMPD/check.out"; fail "check failed"; }
note "$(tail -1 "$TMPD/check.out")"
"$MEMTRACE" report --json --top 40 --collapsed "$TMPD/s.collapsed" --pprof "$TMPD/s.pb.gz" \
	"$TMPD/s.rec.gz" >"$TMPD/report.json" || fail "report failed"
"$MEMTRACE" report "$TMPD/s.rec.gz" >"$TMPD/report.txt" || fail "report (text) failed"
assert_contains "$TMPD/report.txt" "top allocation stacks"
HOME=$TMPD go tool pprof -traces -lines "$TMPD/s.pb.gz" >"$TMPD/traces" 2>&1 || { cat "$TMPD/traces"; fail "go tool pprof"; }
python3 - "$TMPD/report.json" "$TMPD/s.collapsed" "$TMPD/w.out" "$TMPD/traces" <<'PY' || fail "recorded stacks wrong"
import json, re, sys
rep, col, out, traces = sys.argv[1:5]
hidden = lambda f: f == "java.lang.Thread.runWith" or "$$Lambda" in f
expect, lines = {}, {}
for l in open(out):
    if l.startswith("EXPECT "):
        _, c, s = l.split(" ", 2); expect[c] = s.strip().split(";")
    if l.startswith("LINES "):
        _, c, s = l.split(" ", 2)
        lines[c] = [(f.rsplit(":", 1)[0], int(f.rsplit(":", 1)[1])) for f in s.strip().split(";")]
assert len(expect) == 5, expect
tot = {c: 0 for c in expect}; ok = {c: 0 for c in expect}
for l in open(col):
    st, _, b = l.rstrip("\n").rpartition(" ")
    fr = st.split(";"); cls = fr[-1]
    if cls not in expect: continue
    seen = [re.sub(r"_\[[01ji]\]$", "", f) for f in fr[:-1]]
    seen = [f for f in seen if not hidden(f)]
    tot[cls] += int(b); ok[cls] += int(b) if seen == expect[cls] else 0
bad = False
for c in expect:
    share = ok[c] / tot[c] if tot[c] else 0
    print(f"  {c:22} {100 * share:6.2f} % of {tot[c]} B with the expected stack")
    bad |= share < 0.99
stacks = [json.loads(l) for l in open(rep) if '"alloc_stacks"' in l][0]["stacks"]
for c in expect:
    mine = [s for s in stacks if s["leaf"] == c]
    got = [(f["name"], f.get("line", 0)) for f in mine[0]["frames"] if not hidden(f["name"])] if mine else []
    want = [x for x in lines[c] if not hidden(x[0])]
    print(f"  {c:22} lines {'= getStackTrace' if got == want else 'DIFFER'}")
    bad |= got != want
leaf = lines["AllocStacks$ChainObj"][-1]
want = f"{leaf[0]} AllocStacks.java:{leaf[1]}"
print(f"  go tool pprof: '{want}' {'found' if want in open(traces).read() else 'MISSING'}")
bad |= want not in open(traces).read()
sys.exit(1 if bad else 0)
PY
