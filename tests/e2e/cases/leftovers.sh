#!/usr/bin/env bash
# leftovers - what memtrace makes a JVM create in its /tmp does not stay
# there: the perf map `alloc --by stack` asks for (/tmp/perf-PID.map) is
# removed once read, whether the JVM lives on or exits during the session (a
# map that was there before memtrace asked stays); the agent's socket
# (/tmp/.memtrace-PID.sock) goes with a JVM ended with SIGTERM during an agent
# session (the agent's socket thread bound it again as the JVM exited), and
# with a JVM killed with -9 during one (memtrace removes it and the attach
# listener's /tmp/.java_pidPID at the end of its session); one a JVM killed
# with -9 left while no memtrace watched it goes at the next agent session,
# with any JVM.
# A perf map of a process long dead whose pid a new JVM reuses (pid_max is
# 32768 here; a run of the tests wraps it) is not this JVM's: each case
# removes such a stale one before memtrace starts (CI once failed on a
# /tmp/perf-PID.map written 2 hours earlier by another test's JVM).
# TIMEOUT: 180
. "$ROOT/tests/e2e/lib.sh"

# none_left PID WHAT: fail if a file memtrace made JVM PID create is in /tmp
none_left() {
	local f
	for f in "/tmp/perf-$1.map" "/tmp/.memtrace-$1.sock" "/tmp/.java_pid$1"; do
		[ -e "$f" ] && fail "$2: $f is left behind"
	done
	return 0
}

# forget_stale PID: remove a perf map left by a dead process with JVM PID's pid
# number (the JVM was started by this test and was not asked for one yet)
forget_stale() {
	if [ -e "/tmp/perf-$1.map" ]; then
		note "a stale /tmp/perf-$1.map of an earlier process with pid $1 removed"
		rm -f "/tmp/perf-$1.map"
	fi
}

# 1. alloc --by stack on a JVM that lives on: its perf map is read, then gone.
jvm_start a -Xmx64m SteadyGc 16
A=$JVM_PID
forget_stale "$A"
[ -e "/tmp/perf-$A.map" ] && fail "a perf map of $A before memtrace asked"
"$MEMTRACE" alloc -p "$A" --by stack --duration 2 >"$TMPD/a.out" 2>&1 || { cat "$TMPD/a.out" >&2; fail "alloc --by stack exited $?"; }
[ -e "/tmp/perf-$A.map" ] && fail "alloc --by stack left /tmp/perf-$A.map behind (JVM alive)"
# ... but a map that was there before stays (not memtrace's)
jtool jcmd "$A" Compiler.perfmap >/dev/null || fail "jcmd Compiler.perfmap"
[ -e "/tmp/perf-$A.map" ] || fail "jcmd wrote no /tmp/perf-$A.map"
"$MEMTRACE" alloc -p "$A" --by stack --duration 1 >"$TMPD/a2.out" 2>&1 || { cat "$TMPD/a2.out" >&2; fail "alloc --by stack (2) exited $?"; }
[ -e "/tmp/perf-$A.map" ] || fail "alloc --by stack removed a perf map it had not made"
rm -f "/tmp/perf-$A.map"

# 2. alloc --by stack on a JVM that exits during the session.
# (it exits on SIGTERM once the session samples: on a loaded machine the
# session's start took longer than a JVM living a fixed 3 s)
jvm_start b -Xmx64m AllocTick 60 "$TMPD/b.ticks"
B=$JVM_PID
forget_stale "$B"
"$MEMTRACE" alloc -p "$B" --by stack --duration 30 >"$TMPD/b.out" 2>&1 &
mt=$!
wait_for_line "$TMPD/b.out" "sampling\|allocations of pid\|Ctrl-C" 60 || { cat "$TMPD/b.out" >&2; fail "alloc did not start"; }
sleep 1
kill -TERM "$B"
wait "$mt" || { cat "$TMPD/b.out" >&2; fail "alloc on an exiting JVM exited $?"; }
wait "$B" 2>/dev/null
none_left "$B" "alloc --by stack, JVM exited during it"

# 3. An agent session; the JVM ends with SIGTERM during it.
jvm_start c -Xmx64m SteadyGc 16
C=$JVM_PID
forget_stale "$C"
"$MEMTRACE" age -p "$C" --duration 30 >"$TMPD/c.out" 2>&1 &
M=$!
wait_for_line "$TMPD/c.out" "sampling JVM $C" 20 || { cat "$TMPD/c.out" >&2; fail "age did not start"; }
sleep 1
[ -S "/tmp/.memtrace-$C.sock" ] || fail "no agent socket in a session"
kill -TERM "$C"
wait "$C" 2>/dev/null
wait "$M"
sleep 0.5
none_left "$C" "JVM ended with SIGTERM during an agent session"

# 4. The same, killed with -9: memtrace removes the sockets at the end of its session.
jvm_start d -Xmx64m SteadyGc 16
D=$JVM_PID
forget_stale "$D"
"$MEMTRACE" age -p "$D" --duration 30 >"$TMPD/d.out" 2>&1 &
M=$!
wait_for_line "$TMPD/d.out" "sampling JVM $D" 20 || { cat "$TMPD/d.out" >&2; fail "age did not start"; }
sleep 1
kill -9 "$D"
wait "$D" 2>/dev/null
wait "$M"
none_left "$D" "JVM killed with -9 during an agent session"
assert_contains "$TMPD/d.out" "JVM $D exited"

# 5. Killed with -9 with the agent dormant: the next agent session sweeps it.
jvm_start e -Xmx64m SteadyGc 16
E=$JVM_PID
forget_stale "$E"
"$MEMTRACE" attach -p "$E" >"$TMPD/e.out" 2>&1 || { cat "$TMPD/e.out" >&2; fail "attach $E"; }
kill -9 "$E"
wait "$E" 2>/dev/null
[ -S "/tmp/.memtrace-$E.sock" ] || fail "the killed JVM left no socket (nothing to sweep)"
"$MEMTRACE" attach -p "$A" >"$TMPD/a3.out" 2>&1 || { cat "$TMPD/a3.out" >&2; fail "attach $A"; }
[ -e "/tmp/.memtrace-$E.sock" ] && fail "the next agent session left the dead JVM's /tmp/.memtrace-$E.sock"
note "no perf map, agent socket or attach socket left by JVMs alive, exited, ended with SIGTERM or -9"
