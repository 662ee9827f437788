#!/usr/bin/env bash
# locks_monitor_stacks - the stacks of the threads that contend for a monitor
# (`memtrace locks --stacks --enable-monitor-probes`: walked in the kernel at
# hotspot:monitor__contended__enter) against the workload's construction and
# JFR's jdk.JavaMonitorEnter (threshold 0) on the same run:
# tests/java/MonContention.java, two "left" threads entering a
# MonContention$Left through lambda -> pathLeft -> holdLeft and two "right"
# threads entering a MonContention$Right through pathRight or pathRight2 ->
# holdRight, 1000 times each holding it 200 us. Per monitor class the
# contended entries equal JFR's events (also the stream's count), every stack
# kept is one the workload can have, and each, from the thread's lambda to
# the leaf, has exactly as many entries as JFR's events with that stack.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

sed '/name="jdk.JavaMonitorEnter"/,/<\/event>/{s#<setting name="threshold"[^>]*>[^<]*</setting>#<setting name="threshold">0 ms</setting>#}' \
	"$JAVA_HOME/lib/jfr/default.jfc" >"$TMPD/mon.jfc"
grep -A3 'name="jdk.JavaMonitorEnter"' "$TMPD/mon.jfc" | grep -q '>0 ms<' || fail "could not set jdk.JavaMonitorEnter's threshold"
jvm_start m -Xmx128m "-XX:StartFlightRecording:filename=$TMPD/m.jfr,settings=$TMPD/mon.jfc" \
	MonContention 2 1000 200 "$TMPD/go"
pid=$JVM_PID
"$MEMTRACE" locks -p "$pid" --enable-monitor-probes --stacks --json >"$TMPD/locks.json" 2>"$TMPD/locks.err" &
m=$!
wait_for_line "$TMPD/locks.json" '"start"' 30 || { cat "$TMPD/locks.err"; fail "locks did not start"; }
sleep 0.3
touch "$TMPD/go"
wait_for_line "$TMPD/m.out" DONE 60 || fail "the workload did not finish"
kill -INT "$m"
wait "$m" || { cat "$TMPD/locks.err"; fail "memtrace locks failed"; }
jvm_stop "$pid" # the recording is written at exit
jtool jfr print --json --stack-depth 64 --events jdk.JavaMonitorEnter "$TMPD/m.jfr" >"$TMPD/jfr.json" || fail "jfr print"
python3 - "$TMPD/locks.json" "$TMPD/jfr.json" <<'PY' || fail "memtrace and JFR disagree"
import json, sys
from collections import Counter
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = json.load(open(sys.argv[2]))["recording"]["events"]
jfr, jst = Counter(), Counter()
lam = {"MonContention$Left": "MonContention.lambda$main$0", "MonContention$Right": "MonContention.lambda$main$1"}
def tail(cls, frames):
    return tuple(frames[frames.index(lam[cls]):]) if lam[cls] in frames else tuple(frames)
for e in ev:
    v = e["values"]
    cls = v["monitorClass"]["name"].replace("/", ".")
    if cls not in lam:
        continue
    jfr[cls] += 1
    fr = [f["method"]["type"]["name"].replace("/", ".") + "." + f["method"]["name"]
          for f in reversed(v["stackTrace"]["frames"])]
    jst[(cls, tail(cls, fr))] += 1
ms = {r["class"]: r for r in recs if r["event"] == "monitor_stacks" and r["class"] in lam}
lc = {r["class"]: r for r in recs if r["event"] == "lock_class"}
summ = [r for r in recs if r["event"] == "monitor_stacks_summary"][0]
print("jfr:", dict(jfr))
print("jfr stacks:", dict(jst))
print("memtrace:", {c: (r["entries"], [(s["entries"], s["frames"][-3:]) for s in r["stacks"]]) for c, r in ms.items()})
assert summ["no_thread"] == 0 and summ["map_full"] == 0, summ
want = {
    "MonContention$Left": [("MonContention.lambda$main$0", "MonContention.pathLeft", "MonContention.holdLeft")],
    "MonContention$Right": [("MonContention.lambda$main$1", "MonContention.pathRight", "MonContention.holdRight"),
                            ("MonContention.lambda$main$1", "MonContention.pathRight2", "MonContention.holdRight")],
}
for cls in lam:
    r = ms[cls]
    assert jfr[cls] > 0, (cls, "JFR saw no contended entry")
    assert r["entries"] == jfr[cls], (cls, "entries", r["entries"], jfr[cls])
    assert lc[cls]["contended"] == jfr[cls], (cls, "the stream's count", lc[cls]["contended"], jfr[cls])
    assert r["unwalked"] == 0, r
    assert sum(s["entries"] for s in r["stacks"]) == r["entries"], r
    for s in r["stacks"]:
        t = tail(cls, s["frames"])
        assert t in want[cls], (cls, "a stack the workload cannot have", s["frames"])
        assert s["entries"] == jst[(cls, t)], (cls, t, "entries", s["entries"], jst[(cls, t)])
PY
