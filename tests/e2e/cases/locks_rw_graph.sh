#!/usr/bin/env bash
# locks_rw_graph - the wait graph of a busy read-write lock agrees with the
# parks table (issue 31, item 16: threads parked on a ReentrantReadWriteLock
# were "owned by nobody (waiting, not contending), blocked since before
# tracing began" while they parked thousands of times a second in the window
# and the same output named the lock's owner). tests/java/WaitKinds.java
# rwchurn: 2 writers and 3 readers take one lock ~100 us at a time.
# `memtrace locks --duration 2 --json`, up to 5 times until the graph holds
# threads parked on that lock: each such edge names who holds it (a writer, or
# its read holds, or says it is being handed over: never "nobody, waiting"),
# and its park began inside the window (a time, not "since before tracing
# began", shorter than the window); the parks table counts the lock as
# contended, with every park of it. A waiter's stack is its park's
# (Unsafe.park on top), or the edge says why it was not read (the thread
# moved on while its stack was read: it parks ~10000 times a second); runs
# go on until an edge on the lock carries a stack.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

jvm_start j -Xmx64m WaitKinds rwchurn 100
pid=$JVM_PID
wait_for_line "$TMPD/j.out" "OPS" 30 || fail "the workload did not start"
cls='java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync'
for i in 1 2 3 4 5; do
	"$MEMTRACE" locks -p "$pid" --duration 2 --json >"$TMPD/trace$i.json" 2>"$TMPD/trace$i.err" ||
		{ cat "$TMPD/trace$i.err"; fail "memtrace locks failed"; }
	grep -q "\"event\":\"wait_edge\".*\"class\":\"$cls\".*\"frames\":\[\"" "$TMPD/trace$i.json" && break
done
note "$(grep -c '"wait_edge"' "$TMPD/trace$i.json") edges in run $i; $(tail -1 "$TMPD/j.out")"
python3 - "$TMPD/trace$i.json" "$cls" <<'PY' || fail "the wait graph contradicts the parks"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
cls = sys.argv[2]
edges = [r for r in recs if r["event"] == "wait_edge" and r["class"] == cls]
assert edges, "no thread parked on the lock in 5 readings"
for e in edges:
    print(f"  {e['thread']}: owner {e['owner'] or '-'} readers {e.get('readers', 0)} "
          f"free {e.get('lock_free', False)} blocked {e['blocked_ns']}")
    assert e["thread"].startswith("rw-"), e
    assert e["lock_kind"] == "parked", e
    assert e["owner_tid"] or e.get("readers") or e.get("lock_free"), ("held by nobody?", e)
    assert e["blocked_ns"] is not None and e["blocked_ns"] < 2.5e9, ("began before tracing?", e)
    if e.get("frames"):
        assert e["frames"][-1] == "jdk.internal.misc.Unsafe.park", e["frames"]
    else:
        assert e.get("frames_unread"), ("a stack missing and not said why", e)
        print("    its stack not read:", e["frames_unread"])
assert any(e.get("frames") for e in edges), "no waiter's stack read in 5 readings"
parks = [r for r in recs if r["event"] == "park_lock" and r["class"] == cls]
assert parks and all(p["kind"] == "contended" for p in parks), parks
print("parks on the lock:", sum(p["parks"] for p in parks), "all contended")
PY
