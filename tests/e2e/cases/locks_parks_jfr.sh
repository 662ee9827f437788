#!/usr/bin/env bash
# locks_parks_jfr - java.util.concurrent contention from the hotspot:thread__park__*
# probes (no JVM flag, no agent) against JFR's jdk.ThreadPark (threshold 0) on
# the same run: 4 threads x 1500 takes of one fair ReentrantLock held 100 us
# (tests/java/ParkContention.java), a "sleeper" parking 150 times with
# parkNanos and no blocker, a "napper" calling Thread.sleep(1) 150 times. The
# parks on ReentrantLock$FairSync and those without a blocker must be equal in
# number, their time parked within 5 % and never below JFR's: JFR times each
# park inside the probes' window (from after park__begin to the start of its
# commit), so memtrace's is longer by a constant per park - the probes' trap
# out of park__begin and into park__end, and JFR's commit (its stack walk):
# 11-18 us on a VM whose uprobe trap costs 5 us (stop 22; with 50 us holds,
# parks of ~240 us, that was 5.2 %; with 100 us, parks of ~0.7 ms, +1.0 to
# +2.7 %). The lock is contended (it had an
# owner), the sleeper's (1 ms each) parks are waiting; Thread.sleep is counted apart
# (thread__sleep__* probes vs JFR's jdk.ThreadSleep).
# On the same run, `memtrace record` has the parks and sleeps in its stream:
# `check` finds rules 1-5 hold (also on a second recording filtered to two
# threads and paused for a while), and `report` sums them per blocker class
# equal to JFR in number, within 5 % in time, contended vs waiting as above.
# ALONE: park times against JFR's, within 5 % and never below
# TIMEOUT: 150
. "$ROOT/tests/e2e/lib.sh"

sed '/name="jdk.Thread\(Park\|Sleep\)"/,/<\/event>/{s#<setting name="threshold"[^>]*>[^<]*</setting>#<setting name="threshold">0 ms</setting>#}' \
	"$JAVA_HOME/lib/jfr/default.jfc" >"$TMPD/park.jfc"
grep -A3 'name="jdk.ThreadPark"' "$TMPD/park.jfc" | grep -q '>0 ms<' || fail "could not set jdk.ThreadPark's threshold"
jvm_start p -Xmx128m "-XX:StartFlightRecording:filename=$TMPD/p.jfr,settings=$TMPD/park.jfc" \
	ParkContention 4 1500 100 "$TMPD/go"
pid=$JVM_PID
"$MEMTRACE" locks -p "$pid" --stacks --duration 20 --json >"$TMPD/locks.json" 2>"$TMPD/locks.err" &
m=$!
wait_for_line "$TMPD/locks.json" '"start"' 30 || { cat "$TMPD/locks.err"; fail "locks did not start"; }
# the live view's lock rows, on the same run: per-second rates whose sum over
# the intervals is the total
"$MEMTRACE" top -p "$pid" --locks --json --interval 1 >"$TMPD/top.json" 2>"$TMPD/top.err" &
tp=$!
wait_for_line "$TMPD/top.json" '"top"' 30 || { cat "$TMPD/top.err"; fail "top did not start"; }
# the stream, whole and partial
"$MEMTRACE" record -p "$pid" -o "$TMPD/r.mtr" 2>"$TMPD/rec.err" &
rp=$!
"$MEMTRACE" record -p "$pid" -o "$TMPD/r2.mtr" --thread 'contender-[01]' --pause 0.3-0.8 \
	2>"$TMPD/rec2.err" &
rp2=$!
wait_for_line "$TMPD/rec.err" 'recording pid' 30 || { cat "$TMPD/rec.err"; fail "record did not start"; }
wait_for_line "$TMPD/rec2.err" 'recording pid' 30 || { cat "$TMPD/rec2.err"; fail "record did not start"; }
sleep 0.5
touch "$TMPD/go"
wait_for_line "$TMPD/p.out" DONE 60 || fail "the workload did not finish"
kill -INT "$m" "$rp" "$rp2"
wait "$m" || { cat "$TMPD/locks.err"; fail "memtrace locks failed"; }
wait "$rp" || { cat "$TMPD/rec.err"; fail "memtrace record failed"; }
wait "$rp2" || { cat "$TMPD/rec2.err"; fail "memtrace record (filtered) failed"; }
for r in r r2; do
	"$MEMTRACE" check "$TMPD/$r.mtr" >"$TMPD/$r.check" || { cat "$TMPD/$r.check"; fail "check: $r.mtr breaks rules 1-5"; }
	grep -q ' 0 violations' "$TMPD/$r.check" || fail "check: $(cat "$TMPD/$r.check")"
	cat "$TMPD/$r.check"
done
"$MEMTRACE" report --json "$TMPD/r.mtr" >"$TMPD/report.json" || fail "report failed"
"$MEMTRACE" report --json "$TMPD/r2.mtr" >"$TMPD/report2.json" || fail "report (filtered) failed"
n0=$(wc -l <"$TMPD/top.json")
for _ in $(seq 50); do [ "$(wc -l <"$TMPD/top.json")" -ge $((n0 + 2)) ] && break; sleep 0.1; done
kill -INT "$tp"; wait "$tp" || { cat "$TMPD/top.err"; fail "memtrace top failed"; }
jvm_stop "$pid" # the recording is written at exit
jtool jfr print --json --stack-depth 64 --events jdk.ThreadPark,jdk.ThreadSleep "$TMPD/p.jfr" >"$TMPD/jfr.json" || fail "jfr print"
python3 - "$TMPD/locks.json" "$TMPD/jfr.json" "$TMPD/top.json" "$TMPD/report.json" "$TMPD/report2.json" <<'PY' || fail "memtrace and JFR disagree"
import json, re, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = json.load(open(sys.argv[2]))["recording"]["events"]
def dur(s):
    m = re.match(r"PT(?:(\d+)H)?(?:(\d+)M)?([\d.]+)S", s)
    return ((int(m.group(1) or 0) * 60 + int(m.group(2) or 0)) * 60 + float(m.group(3))) * 1e9
jfr = {}
sleeps = [e for e in ev if e["type"] == "jdk.ThreadSleep"]
ev = [e for e in ev if e["type"] == "jdk.ThreadPark"]
for e in ev:
    v = e["values"]
    cls = v["parkedClass"]["name"].replace("/", ".") if v["parkedClass"] else None
    n, t = jfr.get(cls, (0, 0.0))
    jfr[cls] = (n + 1, t + dur(v["duration"]))
ours = {}
kind = {}
our_sleeps = 0
for r in recs:
    if r["event"] != "park_lock":
        continue
    if r["how"] == "sleep":
        our_sleeps += r["parks"]
        continue
    cls = r["class"] or None
    n, t = ours.get(cls, (0, 0))
    ours[cls] = (n + r["parks"], t + r["parked_ns"])
    kind.setdefault(cls, set()).add(r["kind"])
summ = [r for r in recs if r["event"] == "park_summary"][0]
print("jfr:", jfr)
print("memtrace:", ours, summ)
fair = "java.util.concurrent.locks.ReentrantLock$FairSync"
assert summ["no_thread"] == 0 and summ["map_full"] == 0 and summ["missed"] == 0, summ
for cls in (fair, None):
    (jn, jt), (mn, mt) = jfr[cls], ours.get(cls, (0, 0))
    assert jn == mn, (cls, "count", jn, mn)
    print(f"{cls}: {mn} parks, memtrace {mt / 1e9:.4f} s, JFR {jt / 1e9:.4f} s: "
          f"{100 * (mt - jt) / jt:+.2f} %, {(mt - jt) / max(mn, 1) / 1e3:.1f} us a park")
    assert jt <= mt <= 1.05 * jt, (cls, "time", jt, mt)
assert jfr[None][0] == 150, jfr[None]
assert kind[fair] == {"contended"}, kind
assert kind[None] == {"waiting"}, kind
napper = sum(1 for e in sleeps if e["values"]["eventThread"]["javaName"] == "napper")
assert napper == 150, napper
assert napper <= our_sleeps <= len(sleeps), (napper, our_sleeps, len(sleeps))
own = [r for r in recs if r["event"] == "park_lock" and r["class"] == fair][0]
# the waiters' stacks (--stacks): every one kept goes through the contender's
# lambda into ReentrantLock.lock; from there to the leaf it is JFR's most
# frequent stack of the same parks, frame for frame
want = ["ParkContention.lambda$main$0", "java.util.concurrent.locks.ReentrantLock.lock"]
for st in own["stacks"]:
    f = st["frames"]
    assert all(w in f for w in want) and f.index(want[0]) < f.index(want[1]), f
    assert f[-1] == "jdk.internal.misc.Unsafe.park", f
jst = {}
for e in ev:
    v = e["values"]
    if v["parkedClass"] and v["parkedClass"]["name"].replace("/", ".") == fair and v.get("stackTrace"):
        names = tuple(fr["method"]["type"]["name"].replace("/", ".") + "." + fr["method"]["name"]
                      for fr in reversed(v["stackTrace"]["frames"]))
        jst[names] = jst.get(names, 0) + 1
jtop = max(jst.items(), key=lambda x: x[1])[0]
ours = own["stacks"][0]["frames"]
tail = lambda fr: list(fr[fr.index(want[0]):])
print("JFR's top stack from the lambda:", tail(jtop))
assert tail(ours) == tail(jtop), (tail(ours), tail(jtop))
top = [json.loads(l) for l in open(sys.argv[3]) if l.startswith("{")]
top_parks = sum(x["parks_per_s"] for t in top for x in t.get("locks", []) if x["class"] == fair)
print("top: FairSync parks summed over the intervals:", top_parks)
assert round(top_parks) == jfr[fair][0], (top_parks, jfr[fair][0])
assert own["owner"].startswith("contender-"), own
# the recording: parks and sleeps per blocker class, from the stream
rep = [json.loads(l) for l in open(sys.argv[4]) if l.startswith("{")]
pc = {(r["class"], r["how"]): r for r in rep if r["event"] == "park_class"}
print("report:", pc)
assert all(r["event"] != "wait_edge" for r in rep), "threads blocked at the end?"
for (cls, how), name in (((fair, "park"), fair), (("(no blocker)", "timed"), None)):
    r, (jn, jt) = pc[(cls, how)], jfr[name]
    assert r["parks"] == jn, (cls, "count", r["parks"], jn)
    assert jt <= r["parked_ns"] <= 1.05 * jt, (cls, "time", r["parked_ns"], jt)
assert pc[(fair, "park")]["contended_parks"] == pc[(fair, "park")]["parks"], pc
assert pc[(fair, "park")]["blockers"] == 1, pc
assert pc[("(no blocker)", "timed")]["waiting_parks"] == 150, pc
assert napper <= pc[("Thread.sleep", "sleep")]["parks"] <= len(sleeps), (pc, len(sleeps))
# two contenders of four, part of the time: fewer, never more
rep2 = [json.loads(l) for l in open(sys.argv[5]) if l.startswith("{")]
pc2 = {(r["class"], r["how"]): r for r in rep2 if r["event"] == "park_class"}
print("filtered report:", pc2)
assert set(pc2) == {(fair, "park")}, pc2
assert 0 < pc2[(fair, "park")]["parks"] < pc[(fair, "park")]["parks"], pc2
PY
