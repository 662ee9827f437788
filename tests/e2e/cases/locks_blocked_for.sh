#!/usr/bin/env bash
# locks_blocked_for - the wait graph's "blocked for" against the workload's own
# clock: tests/java/JucLocks.java records System.nanoTime() (CLOCK_MONOTONIC,
# the probes' clock) right before each of its threads blocks for good and
# prints it. "waiter" parks on a held ReentrantLock before memtrace attaches;
# after it, "latch-waiter" parks on a CountDownLatch (waiting), "mon-waiter"
# blocks entering a monitor "mon-holder" holds, and "rw-1"/"rw-2" deadlock on
# two ReentrantReadWriteLock write locks.
#  - `memtrace locks`: each edge's blocked_ns is the time from its park (or
#    contended entry) to the graph's time (graph_mono_ns): between that minus
#    50 ms and that minus nothing, from the thread's nanoTime() - the gap is
#    the few microseconds of Java between nanoTime() and the probe, plus any
#    time the thread waited for a CPU (50 ms bounds that on this 2-core
#    machine under load; the figures are ~3 s). "waiter" says it began before
#    tracing (blocked_ns null), never a made-up figure.
#  - `memtrace record` of the same run: `check` holds, and `report` finds the
#    j.u.c. deadlock from the stream's parks (owners read at each park) - the
#    threads jstack's deadlock detection names - and the other edges (the
#    monitor's owner unknown: it entered uncontended, no probe saw it).
# ALONE: blocked-for against the workload's clock within 50 ms
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start j -Xmx64m JucLocks blocked --go "$TMPD/go" latch monitor rwdeadlock
pid=$JVM_PID
wait_for_line "$TMPD/j.out" 'GO?' 30 || fail "the workload did not reach --go"
"$MEMTRACE" locks -p "$pid" --enable-monitor-probes --json >"$TMPD/locks.json" 2>"$TMPD/locks.err" &
l=$!
"$MEMTRACE" record -p "$pid" -o "$TMPD/r.mtr" 2>"$TMPD/rec.err" &
r=$!
wait_for_line "$TMPD/locks.json" '"start"' 30 || { cat "$TMPD/locks.err"; fail "locks did not start"; }
wait_for_line "$TMPD/rec.err" 'recording pid' 30 || { cat "$TMPD/rec.err"; fail "record did not start"; }
touch "$TMPD/go"
wait_for_line "$TMPD/j.out" LOCKED 30 || { cat "$TMPD/j.out"; fail "the workload did not block"; }
jtool jstack "$pid" >"$TMPD/jstack.txt" 2>&1 || fail "jstack"
sleep 3 # blocked for some seconds (the tracers end on a signal: their start may be slow under load)
kill -INT "$l" "$r"
wait "$l" || { cat "$TMPD/locks.err"; fail "memtrace locks failed"; }
wait "$r" || { cat "$TMPD/rec.err"; fail "memtrace record failed"; }
"$MEMTRACE" check "$TMPD/r.mtr" >"$TMPD/check.out" || { cat "$TMPD/check.out"; fail "check: rules 1-5 broken"; }
cat "$TMPD/check.out"
"$MEMTRACE" report --json "$TMPD/r.mtr" >"$TMPD/report.json" || fail "report failed"
python3 - "$TMPD/j.out" "$TMPD/locks.json" "$TMPD/report.json" "$TMPD/jstack.txt" <<'PY' || fail "blocked-for or the graph is wrong"
import json, re, sys
starts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^START (\S+) (\d+)$", open(sys.argv[1]).read(), re.M)}
recs = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
rep = [json.loads(l) for l in open(sys.argv[3]) if l.startswith("{")]
at = [r for r in recs if r["event"] == "summary"][0]["graph_mono_ns"]
edges = {r["thread"]: r for r in recs if r["event"] == "wait_edge"}
print("starts:", starts, "graph at", at)
want = {"latch-waiter": ("parked", ""), "mon-waiter": ("monitor", "mon-holder"),
        "rw-1": ("parked", "rw-2"), "rw-2": ("parked", "rw-1")}
for name, (kind, owner) in want.items():
    e = edges[name]
    expect = at - starts[name]
    print(f"{name}: blocked {e['blocked_ns'] / 1e9:.6f} s, by its own clock {expect / 1e9:.6f} s, "
          f"gap {(expect - e['blocked_ns']) / 1e6:.3f} ms")
    assert (e["lock_kind"], e["owner"]) == (kind, owner), e
    assert expect > 2e9, ("too short to mean anything", name, expect)
    assert -1e6 <= expect - e["blocked_ns"] <= 50e6, (name, e["blocked_ns"], expect)
w = edges["waiter"]
assert (w["lock_kind"], w["owner"], w["blocked_ns"]) == ("parked", "holder", None), w
dl = [r for r in recs if r["event"] == "deadlock"]
assert len(dl) == 1 and sorted(t["thread"] for t in dl[0]["threads"]) == ["rw-1", "rw-2"], dl
# the recording: the deadlock from the stream alone, as jstack finds it
js = open(sys.argv[4]).read()
assert js.count("Found one Java-level deadlock") == 1, js
jdl = re.search(r"Found one Java-level deadlock:\n=+\n(.*?)\nJava stack information", js, re.S).group(1)
jthreads = sorted(re.findall(r'^"([^"]+)":', jdl, re.M))
rdl = [r for r in rep if r["event"] == "deadlock"]
print("report's deadlocks:", rdl, "jstack's:", jthreads)
assert len(rdl) == 1, rdl
assert sorted(t["thread"] for t in rdl[0]["threads"]) == jthreads == ["rw-1", "rw-2"], (rdl, jthreads)
cls = "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync"
assert all((t["lock_kind"], t["class"]) == ("parked", cls) for t in rdl[0]["threads"]), rdl
assert "ownable synchronizer" in jdl and cls.split(".")[-1] in jdl, jdl
redges = {r["thread"]: r for r in rep if r["event"] == "wait_edge"}
# mon-holder entered its monitor without contention: no probe saw it, and
# a recording has no JVM to ask - its owner is unknown, not guessed
want["mon-waiter"] = ("monitor", "")
for name, (kind, owner) in want.items():
    assert (redges[name]["lock_kind"], redges[name]["owner"]) == (kind, owner), redges[name]
assert "waiter" not in redges, "parked before the recording: not in its stream"
PY
