#!/usr/bin/env bash
# age_kill9 - memtrace killed with SIGKILL while the agent streams samples
# (64 KiB interval, allocation-heavy JVM): the JVM keeps running and
# computing, the agent notices the closed socket, stops sampling and goes
# dormant; the next attach and the next sampling session work.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w AttachWorkload
"$MEMTRACE" age -p "$JVM_PID" --duration 30 --interval 16k >"$TMPD/age.out" 2>&1 &
AGE=$!
wait_for_line "$TMPD/age.out" "sampling JVM" 15 || { cat "$TMPD/age.out"; fail "age did not start"; }
sleep 2
kill -9 "$AGE"
wait "$AGE" 2>/dev/null
t0=$(grep -c '^tick ' "$TMPD/w.out")
"$MEMTRACE" --json attach -p "$JVM_PID" >"$TMPD/a.json" 2>"$TMPD/a.err" || { cat "$TMPD/a.err"; fail "attach after kill -9"; }
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["loaded_now"]')" False "reused the loaded agent"
"$MEMTRACE" --json age -p "$JVM_PID" --duration 2 --interval 16k >"$TMPD/b.json" 2>"$TMPD/b.err" ||
	{ cat "$TMPD/b.err"; fail "sampling after kill -9"; }
n=$(json_get "$TMPD/b.json" 'recs[-1]["sampled"]')
note "second session: $n samples"
[ "$n" -gt 0 ] || fail "no samples in the second session"
wait_for_line "$TMPD/w.out" "^tick $((t0 + 2)) " 10 || fail "JVM stopped ticking"
[ "$(awk '/^tick /{print $4}' "$TMPD/w.out" | sort -u | wc -l)" -eq 1 ] || fail "checksum changed"
kill -0 "$JVM_PID" || fail "JVM died"
exit 0
