#!/usr/bin/env bash
# attach_kill9 - memtrace killed with SIGKILL while its session is open: the
# JVM keeps running and computing, the agent goes dormant by itself, and the
# next attach works. While a session is open, a second memtrace is refused
# (one client at a time) with a clear message.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w AttachWorkload
"$MEMTRACE" attach -p "$JVM_PID" --hold 30 >"$TMPD/hold.out" 2>&1 &
HOLD=$!
wait_for_line "$TMPD/hold.out" "attached to JVM" 15 || { cat "$TMPD/hold.out"; fail "hold attach"; }

# one client at a time
"$MEMTRACE" attach -p "$JVM_PID" 2>"$TMPD/busy.err" && fail "second session accepted"
assert_contains "$TMPD/busy.err" "another memtrace is connected"

kill -9 "$HOLD"
wait "$HOLD" 2>/dev/null
t0=$(grep -c '^tick ' "$TMPD/w.out")
"$MEMTRACE" --json attach -p "$JVM_PID" >"$TMPD/a.json" 2>"$TMPD/a.err" || { cat "$TMPD/a.err"; fail "attach after kill -9"; }
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["loaded_now"]')" False "reused the loaded agent"
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["sessions"]')" 2 "sessions"
"$MEMTRACE" detach -p "$JVM_PID" >/dev/null || fail "detach"
wait_for_line "$TMPD/w.out" "^tick $((t0 + 2)) " 10 || fail "JVM stopped ticking"
[ "$(awk '/^tick /{print $4}' "$TMPD/w.out" | sort -u | wc -l)" -eq 1 ] || fail "checksum changed"
kill -0 "$JVM_PID" || fail "JVM died"
exit 0
