#!/usr/bin/env bash
# alloc_shares - `memtrace alloc` (TLAB sampling, no JVM flags): byte shares of
# three classes known by construction (50/30/20) within 3 points, total bytes
# within 10 % of the JVM's own ThreadMXBean count, for the same window.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m AllocShares --go "$TMPD/go" --mb 3072
"$MEMTRACE" alloc -p "$JVM_PID" --json >"$TMPD/mt.json" 2>"$TMPD/mt.err" &
mt=$!
wait_for_line "$TMPD/mt.json" '"start"' 20 || { cat "$TMPD/mt.err"; fail "alloc did not start"; }
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 90 || fail "workload did not finish"
kill -INT $mt; wait $mt || { cat "$TMPD/mt.err"; fail "alloc exited non-zero"; }
python3 "$ROOT/tests/e2e/alloc_check.py" shares "$TMPD/mt.json" "$TMPD/w.out" || fail "alloc disagrees with the workload"
