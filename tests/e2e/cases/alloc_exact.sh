#!/usr/bin/env bash
# alloc_exact - `memtrace alloc --exact` on a JVM with -XX:+DTraceAllocProbes
# counts exactly the objects the workload allocated; without the flag it
# refuses with a clear message.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

jvm_start plain -Xmx128m AllocShares --go "$TMPD/never"
"$MEMTRACE" alloc -p "$JVM_PID" --exact --duration 1 >"$TMPD/o" 2>"$TMPD/e" && fail "--exact ran without DTraceAllocProbes"
grep -q -- "-XX:+DTraceAllocProbes" "$TMPD/e" || { cat "$TMPD/e"; fail "no remedy named"; }
jvm_stop "$JVM_PID"

jvm_start w -Xmx128m -XX:+DTraceAllocProbes AllocShares --go "$TMPD/go" --exact-count 200000
"$MEMTRACE" alloc -p "$JVM_PID" --exact --json >"$TMPD/mt.json" 2>"$TMPD/mt.err" &
mt=$!
wait_for_line "$TMPD/mt.json" '"start"' 20 || { cat "$TMPD/mt.err"; fail "alloc did not start"; }
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 90 || fail "workload did not finish"
kill -INT $mt; wait $mt || { cat "$TMPD/mt.err"; fail "alloc exited non-zero"; }
grep -q "warning: --exact" "$TMPD/mt.err" || fail "no cost warning printed"
python3 "$ROOT/tests/e2e/alloc_check.py" exact "$TMPD/mt.json" "$TMPD/w.out" || fail "exact counts differ"
