#!/usr/bin/env bash
# attach_concurrent - six memtrace processes load the agent into one JVM at
# the same moment (serve and a command can): every load succeeds (the agent
# directory is locked from placing the copy to removing it), the JVM keeps
# computing, and no copy is left behind.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w AttachWorkload
pids=()
for i in 1 2 3 4 5 6; do
	"$MEMTRACE" attach --load -p "$JVM_PID" >"$TMPD/a.$i" 2>&1 &
	pids+=($!)
done
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || { cat "$TMPD/a.$((i + 1))"; fail "concurrent load $((i + 1)) failed"; }
done
kill -0 "$JVM_PID" || fail "the JVM died"
left=$(agent_copies_left "/proc/$JVM_PID/root/tmp/.memtrace-$(stat -c %u /proc/$JVM_PID)")
assert_eq "$left" 0 "agent copies left in the JVM's /tmp"
"$MEMTRACE" detach -p "$JVM_PID" >/dev/null || fail "detach"
