#!/usr/bin/env bash
# histo_jmap - `memtrace histo -p PID --json` counts what the collector keeps:
# every class's instances and bytes equal `jcmd PID GC.class_histogram`'s
# (jmap -histo:live: a full GC, then a count) on an idle JVM, class by class,
# taken right after it. The differences allowed are named: the objects of
# jcmd's own request while it runs (its argument strings: a String[], up to
# 4 Strings and their byte[], an int[]; on JDK 25 two classes it loads for
# the request and an int[] each, unloadable once it is done), and on JDK 22+
# G1's filler arrays (jdk.internal.vm.FillerElement[], dead space jcmd's
# heap iteration counts).
# The workload's own classes are checked by name, and the totals line says
# the walk was complete; the mark in two threads counts every class alike.
# Under G1 and, where the JDK has it, Shenandoah (its
# heap frozen too: walk_shenandoah has it moving objects meanwhile).
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

gcs=(G1)
"$JAVA" -XX:+UseShenandoahGC -version >/dev/null 2>&1 && gcs+=(Shenandoah)
for gc in "${gcs[@]}"; do
jvm_start "w$gc" -Xmx128m -XX:+Use${gc}GC QueryWorkload planted
"$MEMTRACE" histo -p "$JVM_PID" >/dev/null 2>&1 # the agent loaded: its objects in both
jtool jcmd "$JVM_PID" GC.class_histogram >"$TMPD/jcmd.txt" || fail "$gc: jcmd"
"$MEMTRACE" histo -p "$JVM_PID" --json >"$TMPD/h.json" 2>"$TMPD/h.err" || { cat "$TMPD/h.err"; fail "$gc: histo"; }
grep -q "frozen: .*the copy marked" "$TMPD/h.err" || { cat "$TMPD/h.err"; fail "$gc: histo: the copy did not mark"; }
note "$gc:"
python3 - "$TMPD/h.json" "$TMPD/jcmd.txt" "$gc" <<'PY' || fail "$gc: histo differs from jcmd GC.class_histogram"
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
mine = {r["class"]: (r["instances"], r["bytes"]) for r in rows if "class" in r}
tot = [r for r in rows if r.get("event") == "histo_total"][0]
assert tot["partial"] is False and tot["instances"] == sum(v[0] for v in mine.values())
prim = {"B": "byte", "C": "char", "D": "double", "F": "float", "I": "int", "J": "long",
        "S": "short", "Z": "boolean"}
def jname(n):
    n = re.sub(r" \(.*\)$", "", n)
    dims = len(n) - len(n.lstrip("["))
    n = n[dims:]
    if dims:
        n = prim[n] if n in prim else n[1:-1]
    return n + "[]" * dims
theirs = {}
for l in open(sys.argv[2]):
    m = re.match(r"\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)", l)
    if m: theirs[jname(m.group(3))] = (int(m.group(1)), int(m.group(2)))
# jcmd's own request, alive while it counts; dead filler arrays it counts
slack = {"java.lang.String": 4, "byte[]": 4, "java.lang.String[]": 1, "int[]": 2,
         "java.lang.Class": 2, "jdk.internal.vm.FillerElement[]": 1 << 40}
# Shenandoah's full GC for jcmd's count clears every SoftReference (G1's
# keeps them while memory is ample); the agent's next request looks its
# fields up again, which makes classes' reflection data anew (a SoftReference
# to a Class$ReflectionData and its Class[]): memtrace may count those
extra = {"java.lang.Class$ReflectionData", "java.lang.ref.SoftReference", "java.lang.Class[]"} \
    if sys.argv[3] == "Shenandoah" else set()
bad = []
for c in sorted(set(mine) | set(theirs)):
    a, b = mine.get(c, (0, 0)), theirs.get(c, (0, 0))
    if c in extra and a[0] >= b[0]:
        continue
    if a != b and not (0 <= b[0] - a[0] <= slack.get(c, 0)):
        bad.append((c, a, b))
same = sum(1 for c in theirs if mine.get(c) == theirs[c])
print("  %d of %d classes equal; totals memtrace %d, jcmd %d" % (same, len(theirs),
      sum(v[0] for v in mine.values()), sum(v[0] for v in theirs.values())), file=sys.stderr)
assert not bad, bad[:10]
want = ["Order", "Datum", "QueryWorkload$QNode", "QueryWorkload$QHolder", "QueryWorkload$QKey", "QueryWorkload$QEntry"]
for c in want:
    assert c in mine and mine[c] == theirs[c], c
assert mine["Order"][0] == 50 and mine["QueryWorkload$QNode"][0] == 100
PY
# the mark in two threads (MEMTRACE_COPY_THREADS=2: on a heap this small
# too, sharing every 4 objects): every class as the one thread counted it.
# Not Shenandoah's: the copy follows forwarding pointers there, in one thread
if [ "$gc" = G1 ]; then
MEMTRACE_COPY_THREADS=2 "$MEMTRACE" histo -p "$JVM_PID" --json >"$TMPD/h2.json" 2>"$TMPD/h2.err" ||
	{ cat "$TMPD/h2.err"; fail "$gc: histo, two threads"; }
grep -q "references in [0-9.]* [mu]*s in two threads" "$TMPD/h2.err" ||
	{ cat "$TMPD/h2.err"; fail "$gc: the copy did not mark in two threads"; }
python3 - "$TMPD/h.json" "$TMPD/h2.json" <<'PY' || fail "$gc: histo in one and two threads differ"
import json, sys
def rows(f):
    return {r["class"]: (r["instances"], r["bytes"]) for r in map(json.loads,
            (l for l in open(f) if l.startswith("{"))) if "class" in r}
a, b = rows(sys.argv[1]), rows(sys.argv[2])
assert a == b, sorted((c, a.get(c), b.get(c)) for c in set(a) | set(b) if a.get(c) != b.get(c))[:10]
print("  two threads: %d classes alike" % len(a), file=sys.stderr)
PY
fi
jvm_stop "$JVM_PID"
done
