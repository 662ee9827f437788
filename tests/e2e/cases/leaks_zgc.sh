#!/usr/bin/env bash
# leaks_zgc - `memtrace leaks` on a ZGC JVM: its heap snapshots are frozen
# copies whose pause copies the used heap (walk_zgc), taken inside the
# sampling session, with --max-pause as the consent their estimated pause
# needs; on LeakGrowth's slow planted leaks under allocation churn (as in
# leaks_growth, G1):
#  - the three leaks are suspects with their holders (the static map
#    LeakGrowth.BY_ID, the static list LeakGrowth.LISTENERS, a map only a
#    local variable of thread "keeper" holds), the cache and the LRU are not;
#  - each leak's objects gained equal the workload's own count of what it
#    added between the first and the last snapshot's instants, within one;
#  - no sample was lost (the agent's thread keeps draining its rings while it
#    prepares the copy's room and while a killed copy exits: before that, one
#    run lost 3.8 k samples), no copy is left behind, the JVM lives on.
# The snapshots' pauses and one jmap -histo:live's are notes.
# TIMEOUT: 180
. "$ROOT/tests/e2e/lib.sh"

"$JAVA" -XX:+UseZGC -version >/dev/null 2>&1 || skip "JDK $JDK has no ZGC"
LOG="$TMPD/safepoint.log"
mkfifo "$TMPD/in"
exec 3<>"$TMPD/in"
"$JAVA" -XX:+UseZGC -Xmx1g "-Xlog:safepoint:file=$LOG" -cp "$CLASSES" LeakGrowth 1 10 20 20 1000000 25 \
	<"$TMPD/in" >"$TMPD/w.out" 2>&1 &
JVM_PID=$!
JVM_PIDS+=("$JVM_PID")
wait_for_line "$TMPD/w.out" READY 60 || { cat "$TMPD/w.out"; fail "LeakGrowth did not start"; }
"$MEMTRACE" --json leaks -p "$JVM_PID" --max-pause 5000 >"$TMPD/l.json" 2>"$TMPD/l.err" ||
	{ cat "$TMPD/l.err"; fail "leaks"; }
grep -q "ZGC's heap is shared memory: the frozen copy copies its used heap" "$TMPD/l.err" ||
	{ cat "$TMPD/l.err"; fail "the copy's pause was not said"; }
[ "$(grep -c "ZGC's heap is shared memory" "$TMPD/l.err")" -eq 1 ] || fail "the copy's pause said more than once"
grep "lost" "$TMPD/l.err" && fail "samples lost"
K=$(json_get "$TMPD/l.json" '[r for r in recs if r.get("event") == "leaks"][0]["snapshots"]')
[ "$K" -ge 3 ] || fail "$K snapshots"
walk_ms=$(grep '"HeapWalkOperation"' "$LOG" | sed -n 's/.*Total: \([0-9]*\) ns.*/\1/p' |
	awk '{ s += $1; n++ } END { printf "%d walks, %.0f ms in all", n, s / 1e6 }')
at=$(json_get "$TMPD/l.json" '[r for r in recs if r.get("event") == "snapshots"][0]["at_mono_ns"]')
t1=$(echo "$at" | python3 -c 'import json,sys; a=json.load(sys.stdin); print(a[0], a[-1])')
echo "between $t1" >&3
wait_for_line "$TMPD/w.out" BETWEEN 5 || fail "the workload did not count"
truth=$(sed -n 's/^BETWEEN //p' "$TMPD/w.out" | tail -1)
python3 - "$TMPD/l.json" $truth <<'PY' || { cat "$TMPD/l.err"; fail "the leaks"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
index, listeners, local = (int(x) for x in sys.argv[2:5])
leaks = [r for r in rows if r.get("event") == "leak"]
for r in leaks:
    print("  #%d %s +%d" % (r["rank"], r["holder"], r["objects_gained"]), file=sys.stderr)
def gained(holder, cls):
    h = [r for r in leaks if r["holder"] == holder]
    assert len(h) == 1, (holder, [r["holder"] for r in leaks])
    return sum(c["gained"] for c in h[0]["classes"] if c["class"] == cls)
for holder, cls, n in [("class LeakGrowth -> static LeakGrowth.BY_ID (java.util.HashMap)", "LeakGrowth$Invoice", index),
                       ("class LeakGrowth -> static LeakGrowth.LISTENERS (java.util.ArrayList)", "LeakGrowth$Listener", listeners),
                       ('a local variable in thread "keeper" (java.util.HashMap)', "LeakGrowth$Entry", local)]:
    g = gained(holder, cls)
    assert abs(g - n) <= 1, (holder, g, n)
for r in leaks:
    assert "LRU" not in r["holder"] and "CACHE" not in r["holder"], r["holder"]
PY
jtool jmap -histo:live "$JVM_PID" >/dev/null || fail "jmap -histo:live"
jmap_ms=$(grep '"GC_HeapInspection"' "$LOG" | tail -1 | sed -n 's/.*Total: \([0-9]*\) ns.*/\1/p' |
	awk '{ printf "%.0f", $1 / 1e6 }')
note "$K snapshots, truth $truth (index listeners local); pauses: $walk_ms; one jmap -histo:live: $jmap_ms ms"
sleep 1
copies_gone "$JVM_PID" || fail "a copy outlived the snapshots"
kill -0 "$JVM_PID" || fail "the JVM died"
jvm_stop "$JVM_PID"
