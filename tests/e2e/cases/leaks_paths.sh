#!/usr/bin/env bash
# leaks_paths - `memtrace leaks --paths` on two planted leaks whose holders
# are known (tests/java/LeakPaths.java): each suspect's path, from a GC root
# to one of its live sampled objects, found in the heap walk by the
# sampling session's tags (the walk itself stays untagged), names every
# holder on the way:
#   byte[] of leakMap: static LeakPaths.CACHE -> HashMap.table -> an array
#     slot -> (HashMap$Node.next)* -> HashMap$Node.value -> the byte[];
#   long[] of leakListener: static LeakPaths.BUS -> Bus.listeners ->
#     ArrayList.elementData -> an array slot -> LeakPaths$Recorder.seen.
# The first step is a root, the last the sampled object (path_object); the
# agent's own JNI references are no roots. The text form shows the same
# chain. The JVM keeps running and the agent serves the next session.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start l -Xmx128m -Xmn4m LeakPaths
"$MEMTRACE" --json leaks -p "$JVM_PID" --sampled --duration 8 --interval 64k --paths --no-site-counters \
	>"$TMPD/l.json" 2>"$TMPD/l.err" || { cat "$TMPD/l.err"; fail "memtrace leaks --paths"; }
python3 - "$TMPD/l.json" <<'PY' || { cat "$TMPD/l.err"; fail "paths"; }
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
S = r["suspects"]
def find(pred):
    m = [s for s in S if pred(s)]
    assert m, "no suspect: %s" % [(s["class"], s["site"]) for s in S]
    return m[0]
def steps(s):
    p = s["path"]
    assert p and "root" in p[0], s
    assert p[-1]["id"] == s["path_object"], s
    for a, b in zip(p, p[1:]):
        assert "ref" in b and b["id"] != a["id"], p
    print("  %s: %s" % (s["class"], " | ".join(x.get("via", x.get("root", "")) + " -> " + x["class"] for x in p)),
          file=sys.stderr)
    return [(x["ref"], x.get("field", x.get("index"))) for x in p[1:]], p
m, pm = steps(find(lambda s: s["class"] == "byte[]" and "leakMap" in s["site"]))
i = m.index(("static_field", "CACHE"))
assert pm[i + 1]["class"] == "java.util.HashMap"
assert m[i + 1] == ("field", "table") and m[i + 2][0] == "array_element", m
assert all(x == ("field", "next") for x in m[i + 3:-1]), m
assert m[-1] == ("field", "value") and pm[-1]["class"] == "byte[]", m
l, pl = steps(find(lambda s: s["class"] == "long[]" and "leakListener" in s["site"]))
i = l.index(("static_field", "BUS"))
assert l[i + 1:i + 3] == [("field", "listeners"), ("field", "elementData")], l
assert l[i + 3][0] == "array_element" and pl[i + 4]["class"] == "LeakPaths$Recorder", (l, pl)
assert l[i + 4:] == [("field", "seen")] and pl[-1]["class"] == "long[]", l
PY
"$MEMTRACE" leaks -p "$JVM_PID" --sampled --duration 5 --interval 64k --paths --no-site-counters >"$TMPD/l.txt" 2>"$TMPD/e" ||
	{ cat "$TMPD/e"; fail "leaks --paths text"; }
# (a short window under load may rank one leak only)
grep -qE "static LeakPaths.(BUS -> LeakPaths\$Bus|CACHE -> java.util.HashMap)" "$TMPD/l.txt" ||
	{ cat "$TMPD/l.txt"; fail "text path"; }
grep -q "heap walk paused JVM" "$TMPD/e" || { cat "$TMPD/e"; fail "the walk's pause not shown"; }
kill -0 "$JVM_PID" || fail "JVM died"
"$MEMTRACE" --json attach -p "$JVM_PID" >"$TMPD/a.json" || fail "attach after leaks --paths"
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["loaded_now"]')" False "agent reused"
exit 0
