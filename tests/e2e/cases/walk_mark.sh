#!/usr/bin/env bash
# walk_mark - the frozen copy's own mark of the live heap (user/agent/heapmark.c)
# against HotSpot's JVMTI walk of the same frozen image, object by object
# (`memtrace selftest-walks`: the copy marks, then JVMTI walks on):
#  - every object both found has the same class and size in both;
#  - every object only JVMTI found is reachable only through a weak
#    referent (WeakHold plants 3000 WeakOnly objects held by WeakReferences
#    alone: the mark leaves exactly those, as the collector would; JDK 17
#    and 25 number reference types differently, the agent reads which is
#    which from WeakReference's own Klass), and the mark keeps
#    SoftReferences' referents;
#  - the histogram says so: WeakOnly 0, SoftOnly 3000 (JVMTI's walk in the
#    copy, MEMTRACE_MARK=0: WeakOnly 3000);
#  - a layout that does not hold (MEMTRACE_TEST_FREEZE=badlayout: a wrong
#    offset) stops the mark with a reason, a second copy walks with JVMTI and
#    the answer is that walk's; nothing is left behind, the JVM is unharmed.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

N=3000
jvm_start w -Xmx256m WeakHold $N
"$MEMTRACE" selftest-walks -p "$JVM_PID" >"$TMPD/sw.json" 2>"$TMPD/sw.err" ||
	{ cat "$TMPD/sw.err"; tail -20 "$TMPD/sw.json"; fail "the mark and JVMTI's walk disagree"; }
python3 - "$TMPD/sw.json" $N <<'PY' || fail "selftest-walks"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
w = [r for r in rows if r.get("event") == "walks"][0]
n = int(sys.argv[2])
print("  walks: %s" % w, file=sys.stderr)
assert w["class_differs"] == 0 and w["size_differs"] == 0, w
assert w["both"] == w["jvmti"] - w["jvmti_only"] and w["both"] == w["mark"] - w["mark_only"], w
# the weak-only objects: the WeakOnly instances (JDK internals may add a few)
weak = {r["class"]: r["objects"] for r in rows if r.get("only") == "jvmti_weak"}
assert weak.get("WeakHold$WeakOnly", 0) == n, weak
assert w["jvmti_only"] == w["jvmti_only_weak"], w
# what only the mark found: roots and edges JVMTI does not report
mark = {r["class"]: r["objects"] for r in rows if r.get("only") == "mark"}
print("  only the mark: %s" % mark, file=sys.stderr)
assert "WeakHold$SoftOnly" not in mark and "WeakHold$Strong" not in mark, mark
PY

h() { # OUT [env...]: histo --json, instances of WeakHold's classes
	env "${@:2}" "$MEMTRACE" --json histo -p "$JVM_PID" >"$TMPD/$1.json" 2>"$TMPD/$1.err" ||
		{ cat "$TMPD/$1.err"; fail "histo $1"; }
	json_get "$TMPD/$1.json" '[sum(r["instances"] for r in recs if r.get("class") == c) for c in ("WeakHold$WeakOnly", "WeakHold$SoftOnly", "WeakHold$Strong")]'
}
assert_eq "$(h mark)" "[0, $N, $N]" "histo (the mark): weak referents dropped, soft kept"
grep -q "the copy marked" "$TMPD/mark.err" || { cat "$TMPD/mark.err"; fail "histo did not mark"; }
assert_eq "$(h jvmti MEMTRACE_MARK=0)" "[$N, $N, $N]" "histo (JVMTI in the copy) follows weak referents"
grep -q "the copy walked" "$TMPD/jvmti.err" || { cat "$TMPD/jvmti.err"; fail "MEMTRACE_MARK=0 marked"; }

# a layout that does not hold: the mark stops, says why, and JVMTI walks a second copy
assert_eq "$(h bad MEMTRACE_TEST_FREEZE=badlayout)" "[$N, $N, $N]" "histo after a failed mark: JVMTI's"
grep -q "the frozen copy's own mark stopped (.*): the copy walked with JVMTI instead" "$TMPD/bad.err" ||
	{ cat "$TMPD/bad.err"; fail "no reason for the failed mark"; }
copies_gone "$JVM_PID" || fail "a copy outlived the walks"
kill -0 "$JVM_PID" || fail "the JVM died"
assert_eq "$(h again)" "[0, $N, $N]" "the next histo marks again"
