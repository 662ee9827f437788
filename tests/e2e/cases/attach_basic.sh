#!/usr/bin/env bash
# attach_basic - `memtrace attach` loads the agent and gets its HELLO, a second
# attach wakes the same (dormant) agent, `detach` works, and the JVM keeps
# computing the same checksum throughout. Records the JDK 21+ warning.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

sums_ok() { # FILE: every "tick N sum S" line has the same S
	local n; n=$(awk '/^tick /{print $4}' "$1" | sort -u | wc -l)
	[ "$n" -eq 1 ]
}
ticks() { grep -c '^tick ' "$1"; }

jvm_start w AttachWorkload
# a socket left by an earlier process with this pid (a JVM killed before its
# agent removed it: pids come round again on a machine that ran kill -9
# tests) is not this JVM's agent: said so, exit 1
sock=/tmp/.memtrace-$JVM_PID.sock
rm -f "$sock"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$sock"
touch -d '1 hour ago' "$sock"
"$MEMTRACE" detach -p "$JVM_PID" 2>"$TMPD/d00.err" && fail "detach with an old socket succeeded"
cat "$TMPD/d00.err"
assert_contains "$TMPD/d00.err" "no memtrace agent listens"
assert_contains "$TMPD/d00.err" "left by an earlier process"
rm -f "$sock"
# nothing to detach from yet: a clear error, exit 1
"$MEMTRACE" detach -p "$JVM_PID" 2>"$TMPD/d0.err" && fail "detach without an agent succeeded"
assert_contains "$TMPD/d0.err" "no memtrace agent listens"

"$MEMTRACE" --json attach -p "$JVM_PID" >"$TMPD/a1.json" 2>"$TMPD/a1.err" || { cat "$TMPD/a1.err"; fail "attach"; }
cat "$TMPD/a1.json"
assert_eq "$(json_get "$TMPD/a1.json" 'recs[-1]["loaded_now"]')" True "first attach loads"
assert_eq "$(json_get "$TMPD/a1.json" 'recs[-1]["protocol"]')" 1 "protocol"
assert_eq "$(json_get "$TMPD/a1.json" 'recs[-1]["nspid"]')" "$JVM_PID" "pid"
assert_eq "$(json_get "$TMPD/a1.json" 'recs[-1]["state"]')" fresh "state"
assert_eq "$(json_get "$TMPD/a1.json" '"Server VM" in recs[-1]["vm_name"]')" True "vm name"
note "attach latency: $(json_get "$TMPD/a1.json" 'recs[-1]["total_ms"]') ms (load $(json_get "$TMPD/a1.json" 'recs[-1]["load_ms"]') ms)"
# the copy is gone (the JVM keeps its mapping), the private dir too
# (counted under the directory's lock: a case beside this one may be loading
# its own copy of the agent there right now - CI once failed on that)
adir=$(dirname "$(json_get "$TMPD/a1.json" 'recs[-1]["agent_path"]')")
assert_eq "$(agent_copies_left "$adir")" 0 "agent copies left in $adir"
grep -q 'libmemtrace-agent.*(deleted)' /proc/$JVM_PID/maps || fail "agent not mapped"

# text output, agent already loaded: woken, not loaded again
"$MEMTRACE" attach -p "$JVM_PID" >"$TMPD/a2.txt" || fail "second attach"
cat "$TMPD/a2.txt"
assert_contains "$TMPD/a2.txt" "agent was already loaded"
assert_contains "$TMPD/a2.txt" "woke it from dormant"

"$MEMTRACE" --json detach -p "$JVM_PID" >"$TMPD/d1.json" || fail "detach"
assert_eq "$(json_get "$TMPD/d1.json" 'recs[-1]["dormant"]')" True "detach"

# one agent thread, named
n=$(grep -l '^memtrace-agent' /proc/$JVM_PID/task/*/comm 2>/dev/null | wc -l)
assert_eq "$n" 1 "agent threads"

# the JVM keeps computing correctly
t0=$(ticks "$TMPD/w.out")
wait_for_line "$TMPD/w.out" "^tick $((t0 + 1)) " 10 || fail "JVM stopped ticking"
sums_ok "$TMPD/w.out" || fail "checksum changed: $(awk '/^tick /{print $4}' "$TMPD/w.out" | sort | uniq -c)"
kill -0 "$JVM_PID" || fail "JVM died"

if [ "$JDK" -ge 21 ]; then
	grep -i 'WARNING.*loaded dynamically' "$TMPD/w.out" >&2 || fail "JDK $JDK: expected the dynamic-load warning"
	note "JDK $JDK prints $(grep -c '^WARNING' "$TMPD/w.out") WARNING lines for one dynamic load"
else
	grep -q 'WARNING' "$TMPD/w.out" && fail "JDK $JDK: unexpected warning"
fi
exit 0
