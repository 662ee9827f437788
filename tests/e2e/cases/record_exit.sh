#!/usr/bin/env bash
# record_exit - a JVM that exits during `memtrace record
# --enable-monitor-probes` ends the recording, not in an error: exit 0, the
# file complete (check passes, the trailer says the JVM exited), stderr
# saying the JVM exited and that the monitor flag needs no restoring (it
# went with the JVM), no warning or error. With the object category too
# (the agent's stream ends with its JVM). Before: "warning: cannot restore
# DTraceMonitorProbes ... (No such file or directory)", and with objects
# "reading the ring buffer failed: Connection reset by peer", exit 1.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

n=0
for cats in "" "object,thread,type,sync"; do
	n=$((n + 1))
	rm -f "$TMPD/go"
	jvm_start "w$n" -Xmx128m GcWorkload --go "$TMPD/go" --alloc-mb 128 --exit-after 3
	args=(record -p "$JVM_PID" -o "$TMPD/$n.rec.gz" --duration 30 --enable-monitor-probes)
	[ -n "$cats" ] && args+=(--categories "$cats")
	"$MEMTRACE" "${args[@]}" 2>"$TMPD/$n.err" &
	m=$!
	wait_for_line "$TMPD/$n.err" "recording pid" 20 || { cat "$TMPD/$n.err" >&2; fail "record did not start"; }
	touch "$TMPD/go"
	wait "$m" || { cat "$TMPD/$n.err" >&2; fail "record exited $? when its JVM exited (${cats:-all})"; }
	assert_contains "$TMPD/$n.err" "JVM $JVM_PID exited: the recording holds what it did up to its exit"
	assert_contains "$TMPD/$n.err" "JVM $JVM_PID exited: -XX:DTraceMonitorProbes needs no restoring"
	! grep -E "warning:|error:" "$TMPD/$n.err" || fail "a warning or an error when the JVM exited (${cats:-all})"
	"$MEMTRACE" check "$TMPD/$n.rec.gz" >"$TMPD/$n.check" || { cat "$TMPD/$n.check" >&2; fail "check (${cats:-all})"; }
	assert_eq "$(zcat "$TMPD/$n.rec.gz" | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["jvm_exited"])')" \
		True "the trailer says the JVM exited (${cats:-all})"
	note "${cats:-all}: $(cat "$TMPD/$n.check")"
done
