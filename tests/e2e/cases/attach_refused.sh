#!/usr/bin/env bash
# attach_refused - JVMs that cannot be attached get a clear error, exit 1, and
# survive: -XX:+DisableAttachMechanism (the listener never starts: memtrace
# reads the flag and refuses at once, the flag named, without signalling the
# JVM - no thread dump on its stdout), -Xrs (SIGQUIT would kill it: memtrace refuses to
# send it; HotSpot starts the listener at startup under -Xrs, so attach works
# until its socket is removed), and a process that is not a JVM.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start off -XX:+DisableAttachMechanism AttachWorkload
OFF=$JVM_PID
t0=$(date +%s)
"$MEMTRACE" attach -p "$OFF" 2>"$TMPD/off.err" && fail "attach to DisableAttachMechanism"
cat "$TMPD/off.err" >&2
assert_contains "$TMPD/off.err" "DisableAttachMechanism"
assert_contains "$TMPD/off.err" "sent it nothing"
[ $(( $(date +%s) - t0 )) -le 15 ] || fail "waited too long"
sleep 0.5
grep -q "Full thread dump" "$TMPD/off.out" && fail "memtrace signalled the JVM: it printed a thread dump"
kill -0 "$OFF" || fail "JVM died"

jvm_start rs -Xrs AttachWorkload
"$MEMTRACE" attach -p "$JVM_PID" >/dev/null || fail "attach to -Xrs (listener started at startup)"
rm /tmp/.java_pid$JVM_PID
"$MEMTRACE" attach --load -p "$JVM_PID" 2>"$TMPD/rs.err" && fail "attach to -Xrs without its socket"
cat "$TMPD/rs.err" >&2
assert_contains "$TMPD/rs.err" "Xrs"
sleep 0.5
kill -0 "$JVM_PID" || fail "-Xrs JVM died"

sleep 30 &
S=$!
"$MEMTRACE" attach -p "$S" 2>"$TMPD/nj.err" && fail "attach to sleep"
assert_contains "$TMPD/nj.err" "not a HotSpot JVM"
kill "$S"
exit 0
