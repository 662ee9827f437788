#!/usr/bin/env bash
# alloc_sites - `memtrace alloc --by stack` names the allocating Java method:
# AllocShares allocates each class in its own method (big/mid/small); with
# those methods kept out of line (JIT) and in the interpreter (-Xint), each
# class's bytes must come from its own method (>= 90 %). Also checks that
# the collapsed stacks and the flame graph are written and hold that frame.
# TIMEOUT: 150
. "$ROOT/tests/e2e/lib.sh"

for mode in jit interp; do
	rm -f "$TMPD/go"
	if [ $mode = jit ]; then
		flags=(-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,AllocShares::big
		       -XX:CompileCommand=dontinline,AllocShares::mid -XX:CompileCommand=dontinline,AllocShares::small)
		mb=1024
	else
		flags=(-Xint)
		mb=96
	fi
	jvm_start "w$mode" -Xmx128m "${flags[@]}" AllocShares --go "$TMPD/go" --mb $mb
	"$MEMTRACE" alloc -p "$JVM_PID" --by stack --json --collapsed "$TMPD/$mode.collapsed" \
		--flamegraph "$TMPD/$mode.html" >"$TMPD/$mode.json" 2>"$TMPD/$mode.err" &
	mt=$!
	wait_for_line "$TMPD/$mode.json" '"start"' 20 || { cat "$TMPD/$mode.err"; fail "alloc did not start"; }
	touch "$TMPD/go"
	wait_for_line "$TMPD/w$mode.out" DONE 120 || fail "workload did not finish ($mode)"
	kill -INT $mt; wait $mt || { cat "$TMPD/$mode.err"; fail "alloc exited non-zero"; }
	python3 - "$TMPD/$mode.json" <<'PY' || fail "allocation sites wrong ($mode)"
import json, sys
final = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
ok = True
for cls, meth in (("Big", "big"), ("Mid", "mid"), ("Small", "small")):
    rows = [s for s in final["sites"] if s["class"] == "AllocShares$" + cls]
    total = sum(s["bytes"] for s in rows)
    mine = sum(s["bytes"] for s in rows if s["site"] == "AllocShares." + meth)
    share = mine / total if total else 0
    print(f"AllocShares${cls}: {100*share:.1f} % of its bytes at AllocShares.{meth}; sites: "
          + ", ".join(f"{s['site']} {s['bytes']}" for s in rows[:3]))
    ok &= share >= 0.9
sys.exit(0 if ok else 1)
PY
	grep -Eq "AllocShares.big(_\[[01ji]\])?;" "$TMPD/$mode.collapsed" || fail "collapsed stacks lack the frame ($mode)"
	grep -q "AllocShares.big" "$TMPD/$mode.html" || fail "flame graph lacks the frame ($mode)"
	jvm_stop "$JVM_PID"
done
