#!/usr/bin/env bash
# locks_waits - waiting for a notify or a signal is a wait of its own kind,
# with its stack (issue 31, item 9: `locks --now` said "0 waiting on a lock"
# while jstack showed Derby's threads in Object.wait). tests/java/WaitKinds.java
# has threads in Object.wait (untimed, timed), in Condition.await (untimed,
# timed), entering a monitor again after a notify while another thread holds
# it, blocked entering a held monitor, awaiting a latch and waiting for a write
# lock a reader holds; they stay there. Oracle: jstack on the same JVM right
# after `memtrace locks --now --json --stacks`. Per thread: the state jstack
# prints, the object it names (address, class) and the whole stack, frame by
# frame (method names; lines where memtrace has them) - for the workload's
# threads and every other thread jstack shows waiting on an object. Then the
# tracing mode's wait graph holds the same waits as edges of their kinds
# (object_wait, condition with its lock, relock with its owner), with stacks.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start j -Xmx64m WaitKinds still
pid=$JVM_PID
"$MEMTRACE" locks -p "$pid" --now --json --stacks >"$TMPD/now.json" 2>"$TMPD/now.err" ||
	{ cat "$TMPD/now.err"; fail "memtrace locks --now failed"; }
jtool jstack "$pid" >"$TMPD/jstack.txt" 2>&1 || fail "jstack failed"
"$MEMTRACE" locks -p "$pid" --now >"$TMPD/now.txt" 2>&1 || fail "memtrace locks --now (text) failed"
cat "$TMPD/now.txt" >&2

python3 - "$TMPD/now.json" "$TMPD/jstack.txt" <<'PY' || fail "memtrace and jstack disagree"
import json, re, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
dump = open(sys.argv[2]).read()
ours = {r["thread"]: r for r in recs if r["event"] == "blocked"}

# jstack: per thread its state, the object of its wait and the frames (innermost first)
LOCK = re.compile(r"^\t- (waiting on|waiting to re-lock in wait\(\)|waiting to lock|parking to wait for)"
                  r"\s+<0x0*([0-9a-f]+)> \(a ([^)]+)\)", re.M)
js = {}
for block in dump.split("\n\n"):
    m = re.match(r'"([^"]+)"', block)
    st = re.search(r"java.lang.Thread.State: (.+)", block)
    if not m or not st:
        continue
    frames = [(f, int(n) if n else 0) for f, n in
              re.findall(r"^\tat ([^(]+)\((?:[^)]*?/)?(?:[^:)]*:(\d+)|[^)]*)\)$", block, re.M)]
    lock = LOCK.search(block)
    js[m.group(1)] = dict(state=st.group(1).strip(), frames=frames,
                          lock=(lock.group(1), int(lock.group(2), 16), lock.group(3)) if lock else None)

# the workload's threads: how each waits, as memtrace and jstack say it
want = {
    "objwait-1": ("object_wait", "notify", "waiting on"),
    "objwait-2": ("object_wait", "notify", "waiting on"),
    "objwait-timed": ("object_wait", "notify", "waiting on"),
    "cond-1": ("condition", "notify", "parking to wait for"),
    "cond-2": ("condition", "notify", "parking to wait for"),
    "cond-timed": ("condition", "notify", "parking to wait for"),
    "relock": ("relock", "contended", "waiting to re-lock in wait()"),
    "gate-1": ("monitor", "contended", "waiting to lock"),
    "gate-2": ("monitor", "contended", "waiting to lock"),
    "latch": ("parked", "waiting", "parking to wait for"),
    "rw-writer": ("parked", "contended", "parking to wait for"),
}
missing = set(want) - set(ours)
assert not missing, ("memtrace misses", sorted(missing))
# every thread jstack shows waiting on an object, memtrace shows too
# ("<no object reference available>": a compiled Object.wait, no object to compare)
others = {n for n, t in js.items() if t["lock"]} - set(ours)
assert not others, ("jstack shows these waiting, memtrace does not", sorted(others))
checked = 0
for name, j in js.items():
    if name not in ours or not j["lock"]:
        continue
    r = ours[name]
    how, addr, cls = j["lock"]
    if name in want:
        assert (r["wait"], r["kind"], how) == want[name], (name, r["wait"], r["kind"], how)
    assert r["state"] == j["state"], (name, r["state"], j["state"])
    assert (int(r["object"], 16), r["lock_class"]) == (addr, cls), (name, r["object"], r["lock_class"], j["lock"])
    assert "frames" in r, (name, r.get("stack_error"))
    names = list(reversed(r["frames"]))
    lines = list(reversed(r["lines"]))
    assert names == [f for f, _ in j["frames"]], (name, names, j["frames"])
    for (f, jl), ml in zip(j["frames"], lines):
        assert not ml or ml == jl, (name, f, ml, jl)
    checked += 1
print("threads agreeing with jstack (state, object, class, every frame):", checked)
assert checked >= len(want)
assert ours["relock"]["owner"] == "relock-holder" and ours["gate-1"]["owner"] == "gate-holder"
assert ours["rw-writer"]["readers"] == 1 and ours["rw-writer"]["owner"] is None, ours["rw-writer"]
c = ours["cond-1"]
assert c["condition_lock_class"] == "java.util.concurrent.locks.ReentrantLock$NonfairSync", c
assert ours["objwait-1"]["owner"] is None and ours["objwait-1"]["stable"], ours["objwait-1"]
PY
grep -q 'waiting in Object.wait on WaitKinds$Box @0x[0-9a-f]* (owner unknown until a notify)' "$TMPD/now.txt" ||
	fail "the text does not say what objwait-1 waits for"
grep -q 'waiting in Condition.await on .* of java.util.concurrent.locks.ReentrantLock$NonfairSync @0x[0-9a-f]* (timed; owner unknown until a signal)' "$TMPD/now.txt" ||
	fail "the text does not say what cond-timed waits for"

# the tracing mode's wait graph: the same waits, their kinds and stacks
"$MEMTRACE" locks -p "$pid" --duration 1 --json >"$TMPD/trace.json" 2>"$TMPD/trace.err" ||
	{ cat "$TMPD/trace.err"; fail "memtrace locks (tracing) failed"; }
python3 - "$TMPD/trace.json" "$JDK" <<'PY' || fail "the wait graph misses a kind of wait"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
e = {r["thread"]: r for r in recs if r["event"] == "wait_edge"}
wait = "java.lang.Object.wait0" if sys.argv[2] != "17" else "java.lang.Object.wait"
for name, kind in [("objwait-1", "object_wait"), ("cond-1", "condition"), ("relock", "relock"),
                   ("gate-1", "monitor"), ("latch", "parked"), ("rw-writer", "parked")]:
    assert e[name]["lock_kind"] == kind, e[name]
    assert e[name]["frames"][:3] == ["WaitKinds$Waiter.run", "WaitKinds$Waiter.level1",
                                     "WaitKinds$Waiter.level2"], e[name]["frames"]
assert e["objwait-1"]["frames"][-1] == wait, e["objwait-1"]["frames"]
assert e["objwait-1"]["owner_tid"] == 0 and e["objwait-1"]["blocked_ns"] is None, e["objwait-1"]
assert e["cond-1"]["condition_lock_class"] == "java.util.concurrent.locks.ReentrantLock$NonfairSync"
assert e["relock"]["owner"] == "relock-holder" and e["gate-1"]["owner"] == "gate-holder"
assert e["rw-writer"]["readers"] == 1, e["rw-writer"]
assert "lock_free" not in e["latch"] and e["latch"]["owner_tid"] == 0, e["latch"]
assert not [r for r in recs if r["event"] == "deadlock"]
print("wait graph edges:", {n: e[n]["lock_kind"] for n in sorted(e)})
PY
