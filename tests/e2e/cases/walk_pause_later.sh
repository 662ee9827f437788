#!/usr/bin/env bash
# walk_pause_later - a frozen walk's pause when other safepoints follow it
# before the walk's records are read (issue #31.2: a copy walks for a
# second or more, a busy JVM stops meanwhile, and memtrace printed the
# agent's timing, 51.10 ms where the JVM's log said 65.38). memtrace looks
# at the JVM's record of its last safepoint every 2 ms from the request to
# the end; the walk's is the one that holds the fork's instant - printed as
# "the JVM's safepoint record", equal to -Xlog:safepoint's HeapWalkOperation
# Total. When the next stop overwrote that record before a look saw it, the
# walk's end is read from the next one's record (its begin less its "Time
# since last"); the agent's timing ("other safepoints followed") is left
# for two stops within a look's interval. An idle FreezeWorkload of 2 M
# objects whose own thread stops the JVM every 8 ms (a thread dump: a
# ThreadDump safepoint); heap --retained (a walk with references: the
# longest). Checked: three rounds print the JVM's own figure, in at most
# six (a CI run once had two of three left to the agent's timing behind
# jcmd's stops). The first stop after a walk began 2.4-5.3 ms after its end
# on this VM, never at once: a thread the walk's pause woke first pays for
# the pages the fork shares with the copy (a copy-on-write fault at each
# first write, ~10 us here); the looks reading the walk's end from the
# next safepoint's record are checked in tests/unit/test_sptrace.c.
# ALONE: printed pauses against the JVM's safepoint log
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

LOG="$TMPD/safepoint.log"
mkfifo "$TMPD/in"
exec 3<>"$TMPD/in"
"$JAVA" -cp "$CLASSES" "-Xlog:safepoint:file=$LOG" -Xmx1g FreezeWorkload 1000000 0 <"$TMPD/in" >"$TMPD/w.out" 2>&1 &
JVM_PID=$!
JVM_PIDS+=("$JVM_PID")
wait_for_line "$TMPD/w.out" READY 60 || { cat "$TMPD/w.out"; fail "the workload did not start"; }
echo "stops 8" >&3
wait_for_line "$TMPD/w.out" "STOPS 8" 10 || fail "the workload's stops did not start"
ok=0
for round in 1 2 3 4 5 6; do
	sleep 0.3 # stops under way
	n0=$(grep -c 'Safepoint "' "$LOG" || true)
	"$MEMTRACE" --json heap -p "$JVM_PID" --retained --top 1 >"$TMPD/h.json" 2>"$TMPD/e" ||
		{ cat "$TMPD/e"; fail "heap --retained"; }
	sleep 0.1 # the log written
	tail -n +"$((n0 + 1))" "$LOG" >"$TMPD/sp.$round"
	later=$(grep -c 'Safepoint "' "$TMPD/sp.$round" || true)
	wt=$(grep '"HeapWalkOperation"' "$TMPD/sp.$round" | sed -n 's/.*Total: \([0-9]*\) ns.*/\1/p')
	[ -n "$wt" ] || { cat "$TMPD/sp.$round"; fail "no HeapWalkOperation in the log"; }
	# the next stop's "Time since last": how soon after the walk's end it began
	gap=$(grep -A1 '"HeapWalkOperation"' "$TMPD/sp.$round" | sed -n '2s/.*Time since last: \([0-9]*\) ns.*/\1/p')
	p=$(json_get "$TMPD/h.json" '[r for r in recs if r.get("event") == "retained_total"][0]["pause_ms"]')
	from=$(sed -n 's/.*heap walk paused JVM [0-9]* for [0-9.]* ms (\([^;]*\);.*/\1/p' "$TMPD/e")
	note "round $round: $later safepoints in the window, the next $(awk "BEGIN { printf \"%.3f\", ${gap:-0} / 1e6 }") ms after the walk's; printed $p ms ($from), the JVM's log $(awk "BEGIN { printf \"%.3f\", $wt / 1e6 }") ms"
	[ "$later" -gt 1 ] || fail "round $round: no other safepoint in the window (the test's premise)"
	case $from in
	"the JVM's safepoint record" | "the JVM's safepoint time")
		python3 -c "import sys; sys.exit(0 if abs($p - $wt / 1e6) <= 0.001 else 1)" ||
			fail "round $round: the JVM's figure $p ms is not the log's $wt ns"
		ok=$((ok + 1)) ;;
	"timed by the agent: other safepoints followed"*) ;;
	*) cat "$TMPD/e"; fail "round $round: an unexpected source: $from" ;;
	esac
	[ "$ok" -ge 3 ] && break
done
echo "stops 0" >&3
[ "$ok" -ge 3 ] || fail "the walk's own safepoint was told apart from the later ones in $ok rounds of $round"
kill -0 "$JVM_PID" || fail "the JVM died"
