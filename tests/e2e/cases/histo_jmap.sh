#!/usr/bin/env bash
# histo_jmap - `memtrace histo -p PID --json` counts the same instances as
# `jcmd PID GC.class_histogram` (jmap -histo:live) for QueryWorkload's own
# classes, and its totals line says the walk was complete.
# TIMEOUT: 45
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx128m QueryWorkload planted
"$MEMTRACE" histo -p "$JVM_PID" --json >"$TMPD/h.json" 2>"$TMPD/h.err" || { cat "$TMPD/h.err"; fail "histo"; }
"$JAVA_HOME/bin/jcmd" "$JVM_PID" GC.class_histogram >"$TMPD/jcmd.txt" || fail "jcmd"
python3 - "$TMPD/h.json" "$TMPD/jcmd.txt" <<'PY' || fail "histo differs from jcmd GC.class_histogram"
import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
mine = {r["class"]: r for r in rows if "class" in r}
tot = [r for r in rows if r.get("event") == "histo_total"][0]
assert tot["partial"] is False and tot["instances"] == sum(r["instances"] for r in mine.values())
theirs = {}
for l in open(sys.argv[2]):
    m = re.match(r"\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)", l)
    if m: theirs[m.group(3)] = (int(m.group(1)), int(m.group(2)))
want = ["Order", "Datum", "QueryWorkload$QNode", "QueryWorkload$QHolder", "QueryWorkload$QKey", "QueryWorkload$QEntry"]
for c in want:
    assert c in mine and c in theirs, c
    print("  %-24s memtrace %4d  jcmd %4d" % (c, mine[c]["instances"], theirs[c][0]), file=sys.stderr)
    assert mine[c]["instances"] == theirs[c][0], c
    assert mine[c]["bytes"] == theirs[c][1], (c, mine[c]["bytes"], theirs[c][1])
assert mine["Order"]["instances"] == 50 and mine["QueryWorkload$QNode"]["instances"] == 100
PY
