#!/usr/bin/env bash
# locks_deadlock - two threads deadlock on two monitors (tests/java/Deadlock.java).
# `memtrace locks --enable-monitor-probes` (DTraceMonitorProbes switched on in
# the running JVM, then restored) reports both threads, both monitors and
# their classes; a recording of the same run passes `check` and `report`
# finds the same deadlock.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start d -Xmx64m -XX:+UseSerialGC Deadlock --go "$TMPD/go"
pid=$JVM_PID
flag() { jtool jcmd "$pid" VM.flags -all 2>/dev/null | grep -w DTraceMonitorProbes | grep -o 'DTraceMonitorProbes *= *[a-z]*' | awk '{print $NF}'; }
assert_eq "$(flag)" false "DTraceMonitorProbes before"
"$MEMTRACE" locks -p "$pid" --enable-monitor-probes --json >"$TMPD/locks.json" 2>"$TMPD/locks.err" &
l=$!
"$MEMTRACE" record -p "$pid" -o "$TMPD/d.rec.gz" 2>"$TMPD/rec.err" &
r=$!
wait_for_line "$TMPD/locks.json" '"start"' 20 || { cat "$TMPD/locks.err"; fail "locks did not start"; }
wait_for_line "$TMPD/rec.err" 'recording pid' 20 || { cat "$TMPD/rec.err"; fail "record did not start"; }
assert_eq "$(flag)" true "DTraceMonitorProbes while tracing"
touch "$TMPD/go"
wait_for_line "$TMPD/d.out" DEADLOCKED 20 || fail "no deadlock"
sleep 0.5
kill -INT "$l" "$r" # on a signal, not a duration: attaching may take seconds under load
wait "$l" || { cat "$TMPD/locks.err"; fail "locks failed"; }
wait "$r" || { cat "$TMPD/rec.err"; fail "record failed"; }
assert_contains "$TMPD/locks.err" "writing 1 (true) into -XX:DTraceMonitorProbes"
assert_eq "$(flag)" false "DTraceMonitorProbes after (restored)"
cat "$TMPD/locks.json" >&2
check_deadlock() {
python3 - "$1" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
dl = [r for r in recs if r["event"] == "deadlock"]
assert len(dl) == 1, dl
th = dl[0]["threads"]
assert sorted(t["thread"] for t in th) == ["locker-1", "locker-2"], th
assert sorted(t["class"] for t in th) == ["Deadlock$LockA", "Deadlock$LockB"], th
assert len({t["waits_for"] for t in th}) == 2, th
# the graph's contention (waits for a notify - main's join, the JDK's own
# threads - are edges too, owned by no one)
edges = [r for r in recs if r["event"] == "wait_edge" and r["lock_kind"] != "object_wait"]
assert {(e["thread"], e["owner"]) for e in edges} == {("locker-1", "locker-2"), ("locker-2", "locker-1")}, edges
assert all(not r["owner_tid"] for r in recs if r["event"] == "wait_edge" and r["lock_kind"] == "object_wait")
classes = {r["class"] for r in recs if r["event"] == "lock_class"}
assert {"Deadlock$LockA", "Deadlock$LockB"} <= classes, classes
PY
}
check_deadlock "$TMPD/locks.json" || fail "locks did not report the deadlock"
"$MEMTRACE" check "$TMPD/d.rec.gz" >"$TMPD/check.out" || { cat "$TMPD/check.out"; fail "check failed"; }
"$MEMTRACE" report --json "$TMPD/d.rec.gz" >"$TMPD/report.json" || fail "report failed"
check_deadlock "$TMPD/report.json" || { cat "$TMPD/report.json" >&2; fail "report did not find the deadlock"; }
