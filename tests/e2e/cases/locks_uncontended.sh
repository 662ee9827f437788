#!/usr/bin/env bash
# locks_uncontended - a deadlock where one owner took its monitor without
# contention (tests/java/Deadlock.java --uncontended): no probe saw that
# entry, so `memtrace locks` reads the owner from ObjectMonitor::_owner
# through VMStructs (JDK 17: a BasicLock on the owner's stack; JDK 25:
# ANONYMOUS_OWNER, the owner found on its lock stack). Both wait edges have
# their owner, the one through LockA from the JVM, and the deadlock is
# reported. A recording of the same run passes `check`; offline, `report`
# has no JVM to ask: its LockA edge has no owner.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start d -Xmx64m -XX:+UseSerialGC Deadlock --go "$TMPD/go" --uncontended
pid=$JVM_PID
"$MEMTRACE" locks -p "$pid" --enable-monitor-probes --json >"$TMPD/locks.json" 2>"$TMPD/locks.err" &
l=$!
"$MEMTRACE" record -p "$pid" -o "$TMPD/d.rec.gz" --categories thread,type,sync 2>"$TMPD/rec.err" &
r=$!
wait_for_line "$TMPD/locks.json" '"start"' 20 || { cat "$TMPD/locks.err"; fail "locks did not start"; }
wait_for_line "$TMPD/rec.err" 'recording pid' 20 || { cat "$TMPD/rec.err"; fail "record did not start"; }
touch "$TMPD/go"
wait_for_line "$TMPD/d.out" DEADLOCKED 20 || fail "no deadlock"
sleep 0.5
kill -INT "$l" "$r" # on a signal, not a duration: attaching may take seconds under load
wait "$l" || { cat "$TMPD/locks.err"; fail "locks failed"; }
wait "$r" || { cat "$TMPD/rec.err"; fail "record failed"; }
cat "$TMPD/locks.json" >&2
python3 - "$TMPD/locks.json" <<'PY' || fail "locks did not name the uncontended owner"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
edges = {(e["thread"], e["class"]): e for e in recs if e["event"] == "wait_edge"}
a = edges[("locker-2", "Deadlock$LockA")]
b = edges[("locker-1", "Deadlock$LockB")]
assert a["owner"] == "locker-1" and a["owner_from"] == "jvm", a
assert b["owner"] == "locker-2" and b["owner_from"] == "stream", b
dl = [r for r in recs if r["event"] == "deadlock"]
assert len(dl) == 1, dl
assert sorted(t["thread"] for t in dl[0]["threads"]) == ["locker-1", "locker-2"], dl
PY
"$MEMTRACE" check "$TMPD/d.rec.gz" >"$TMPD/check.out" || { cat "$TMPD/check.out"; fail "check failed"; }
"$MEMTRACE" report --json "$TMPD/d.rec.gz" >"$TMPD/report.json" || fail "report failed"
python3 - "$TMPD/report.json" <<'PY' || fail "report's wait graph is not the expected one"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
edges = {(e["thread"], e["class"]): e for e in recs if e["event"] == "wait_edge"}
assert edges[("locker-1", "Deadlock$LockB")]["owner"] == "locker-2", edges
assert edges[("locker-2", "Deadlock$LockA")]["owner_tid"] == 0, edges
PY
