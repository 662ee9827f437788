#!/usr/bin/env bash
# alloc_shares - `memtrace alloc` (TLAB sampling, no JVM flags): byte shares of
# three classes known by construction (50/30/20) within 3 points, total bytes
# within 10 % of the JVM's own ThreadMXBean count, for the same window;
# memtrace's own CPU time at most half of its lifetime.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m AllocShares --go "$TMPD/go" --mb 3072
"$MEMTRACE" alloc -p "$JVM_PID" --json >"$TMPD/mt.json" 2>"$TMPD/mt.err" &
mt=$!
wait_for_line "$TMPD/mt.json" '"start"' 20 || { cat "$TMPD/mt.err"; fail "alloc did not start"; }
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
cpu0=$(cpu_of $mt) t0=$(date +%s.%N)
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 90 || fail "workload did not finish"
# memtrace's own CPU time, threads included, while the workload ran (its
# start-up - BPF load, calibration - left out): a duty-cycle thread that spun
# (a condition variable on the wrong clock) took a whole core; a healthy
# session takes a few per cent
cpu1=$(cpu_of $mt) t1=$(date +%s.%N)
python3 -c "import sys; c, t = $cpu1 - $cpu0, $t1 - $t0; print(f'memtrace\'s CPU while the workload ran: {c:.2f} s in {t:.2f} s'); sys.exit(0 if c <= 0.5 * t else 1)" ||
	fail "memtrace took too much CPU"
kill -INT $mt; wait $mt || { cat "$TMPD/mt.err"; fail "alloc exited non-zero"; }
python3 "$ROOT/tests/e2e/alloc_check.py" shares "$TMPD/mt.json" "$TMPD/w.out" || fail "alloc disagrees with the workload"
