#!/usr/bin/env bash
# locks_now - `memtrace locks --now` reads the threads blocked on locks from the
# JVM's memory (no probes, no flag, no agent) and finds deadlocks on
# java.util.concurrent locks (two ReentrantReadWriteLock write locks), across
# both kinds (a monitor and a ReentrantLock), next to plain contention (a held
# ReentrantLock) and idle pool workers (waiting for a signal of a condition).
# Oracle: jstack on the same JVM - its deadlock report and its thread dump's
# "parking to wait for" / "waiting to lock" lines (object address and class).
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

jvm_start j -Xmx128m JucLocks rwdeadlock mixed blocked idle
pid=$JVM_PID
wait_for_line "$TMPD/j.out" LOCKED 30 || fail "the workload's threads did not block"
flag() { jtool jcmd "$pid" VM.flags -all 2>/dev/null | grep -o 'DTraceMonitorProbes *= *[a-z]*' | awk '{print $NF}'; }

"$MEMTRACE" locks -p "$pid" --now --json >"$TMPD/now.json" 2>"$TMPD/now.err" ||
	{ cat "$TMPD/now.err"; fail "memtrace locks --now failed"; }
"$MEMTRACE" locks -p "$pid" --now >"$TMPD/now.txt" 2>&1 || fail "memtrace locks --now (text) failed"
jtool jstack "$pid" >"$TMPD/jstack.txt" 2>&1 || fail "jstack failed"
cat "$TMPD/now.txt" >&2
assert_eq "$(flag)" false "DTraceMonitorProbes untouched"
assert_contains "$TMPD/now.txt" "deadlock 2:"

python3 - "$TMPD/now.json" "$TMPD/jstack.txt" <<'PY' || fail "memtrace and jstack disagree"
import json, re, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
dump = open(sys.argv[2]).read()

# jstack's deadlocks: {frozenset of (thread, class, holder)}
found = set()
for sec in re.split(r'Found one Java-level deadlock:', dump)[1:]:
    body = sec.split('Java stack information')[0]
    trip = re.findall(r'"([^"]+)":\n\s+waiting (?:to lock monitor|for ownable synchronizer) '
                      r'0x[0-9a-f]+, \((?:object 0x[0-9a-f]+, )?a ([^)]+)\),?\n\s+which is held by "([^"]+)"', body)
    trip += re.findall(r'"([^"]+)":\n\s+waiting to lock monitor 0x[0-9a-f]+ \(object 0x[0-9a-f]+, a ([^)]+)\),\n'
                       r'\s+which is held by "([^"]+)"', body)
    found.add(frozenset(trip))
ours = set()
for r in recs:
    if r["event"] == "deadlock":
        ours.add(frozenset((t["thread"], t["lock_class"], t["owner"]) for t in r["threads"]))
print("jstack:", sorted(map(sorted, found)))
print("memtrace:", sorted(map(sorted, ours)))
assert len(found) == 2 and ours == found, (found, ours)
summ = [r for r in recs if r["event"] == "summary"][0]
assert summ["deadlocks"] == 2, summ

# every blocked thread: the object and class jstack names for it
threads = {}
for block in dump.split('\n\n'):
    m = re.match(r'"([^"]+)"', block)
    if not m:
        continue
    w = re.search(r'- (?:parking to wait for|waiting to lock)\s+<0x0*([0-9a-f]+)> \(a ([^)]+)\)', block)
    if w:
        threads[m.group(1)] = (int(w.group(1), 16), w.group(2))
blocked = {r["thread"]: r for r in recs if r["event"] == "blocked"}
want = {"rw-1", "rw-2", "mix-1", "mix-2", "waiter", "pool-1-thread-1", "pool-1-thread-2"}
assert want <= set(blocked), sorted(blocked)
for name in want:
    r = blocked[name]
    addr, cls = threads[name]
    assert int(r["object"], 16) == addr and r["lock_class"] == cls, (name, r, threads[name])
assert blocked["waiter"]["owner"] == "holder" and blocked["waiter"]["kind"] == "contended", blocked["waiter"]
# idle pool workers wait for a signal of their queue's condition: nobody to name
for w in ("pool-1-thread-1", "pool-1-thread-2"):
    assert (blocked[w]["wait"], blocked[w]["kind"], blocked[w]["owner"]) == ("condition", "notify", None), blocked[w]
    assert blocked[w]["condition_lock_class"] == "java.util.concurrent.locks.ReentrantLock$NonfairSync", blocked[w]
assert blocked["mix-2"]["wait"] == "monitor" and blocked["mix-1"]["wait"] == "parked"
print("blocked threads agree with jstack:", len(want))
PY

# the tracing mode's wait graph holds the same deadlocks (parked threads and
# monitors entered before tracing began, read from the JVM at the end)
"$MEMTRACE" locks -p "$pid" --duration 1 --json >"$TMPD/trace.json" 2>"$TMPD/trace.err" ||
	{ cat "$TMPD/trace.err"; fail "memtrace locks (tracing) failed"; }
python3 - "$TMPD/trace.json" <<'PY' || fail "the tracing mode's deadlocks differ"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
dl = sorted(sorted((t["thread"], t["lock_kind"], t["class"]) for t in r["threads"])
            for r in recs if r["event"] == "deadlock")
want = sorted([
    sorted([("rw-1", "parked", "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync"),
            ("rw-2", "parked", "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync")]),
    sorted([("mix-1", "parked", "java.util.concurrent.locks.ReentrantLock$NonfairSync"),
            ("mix-2", "monitor", "JucLocks$Mon")]),
])
assert dl == want, (dl, want)
edges = {r["thread"]: r for r in recs if r["event"] == "wait_edge"}
assert edges["waiter"]["owner"] == "holder" and edges["waiter"]["lock_kind"] == "parked", edges["waiter"]
PY

# a JVM without deadlocks: none reported
jvm_start q -Xmx64m JucLocks blocked idle
wait_for_line "$TMPD/q.out" LOCKED 30 || fail "second workload"
"$MEMTRACE" locks -p "$JVM_PID" --now >"$TMPD/q.txt" 2>&1 || fail "locks --now on the second JVM"
assert_contains "$TMPD/q.txt" "no deadlock"

# compact object headers (JDK 24+): the class is read from the mark word
if [ "$JDK" = 25 ]; then
	jvm_start c -Xmx64m -XX:+UseCompactObjectHeaders JucLocks rwdeadlock
	wait_for_line "$TMPD/c.out" LOCKED 30 || fail "compact-headers workload"
	"$MEMTRACE" locks -p "$JVM_PID" --now >"$TMPD/c.txt" 2>&1 || { cat "$TMPD/c.txt"; fail "locks --now with compact headers"; }
	assert_contains "$TMPD/c.txt" 'deadlock 1:'
	assert_contains "$TMPD/c.txt" '"rw-1" (tid [0-9]*) parked on java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync'
fi
