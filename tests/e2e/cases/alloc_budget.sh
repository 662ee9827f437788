#!/usr/bin/env bash
# alloc_budget - `memtrace alloc` under its cost budget (probe/dutycycle.h):
# two sessions at once on one AllocShares JVM (byte shares 50/30/20 by
# construction, ThreadMXBean's count of the allocating thread as the total):
#  - thin: every sample kept with probability 0.1 (bpf_get_prandom_u32 in the
#    program, weights x10; fixed through MEMTRACE_TEST_DUTY): total within
#    5 %, shares within 3 points;
#  - budget: --budget 0.3 (% of the busiest thread), memtrace's own choice: it
#    thins exactly when taking every sample would cost more (as it measured),
#    and its estimates hold likewise.
# The choice of keep from a budget is unit-tested in
# tests/unit/test_dutycycle.c; the throughput side in bench/alloc_overhead.sh;
# the opt-in time windows (--budget-windows) in bench/alloc_budget.sh.
# TIMEOUT: 150
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m AllocShares --go "$TMPD/go" --mb 12288
MEMTRACE_TEST_DUTY=0.1:1 "$MEMTRACE" alloc -p "$JVM_PID" --json >"$TMPD/thin.json" 2>"$TMPD/thin.err" &
m1=$!
"$MEMTRACE" alloc -p "$JVM_PID" --json --budget 0.3 >"$TMPD/bud.json" 2>"$TMPD/bud.err" &
m3=$!
for f in thin bud; do
	wait_for_line "$TMPD/$f.json" '"start"' 20 || { cat "$TMPD/$f.err"; fail "alloc did not start ($f)"; }
done
sleep 1
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 120 || fail "workload did not finish"
kill -INT $m1 $m3
for m in $m1 $m3; do wait $m || fail "alloc exited non-zero"; done
python3 "$ROOT/tests/e2e/alloc_check.py" thin "$TMPD/thin.json" "$TMPD/w.out" || fail "thinned estimates"
python3 "$ROOT/tests/e2e/alloc_check.py" budget "$TMPD/bud.json" "$TMPD/w.out" || fail "budget estimates"
"$MEMTRACE" alloc -p "$JVM_PID" --budget 101 >/dev/null 2>"$TMPD/bad.err" && fail "--budget 101 accepted"
grep -q "invalid --budget" "$TMPD/bad.err" || fail "no clear error for --budget 101"
