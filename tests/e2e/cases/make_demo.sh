#!/usr/bin/env bash
# make_demo - what `make demo` runs after installing and building
# (scripts/demo.sh, the README's first command), shortened (DEMO_SECONDS=8),
# on each JDK: it exits 0 with every section printed, and its answers hold
# by construction of tests/java/DemoWorkload.java, whose only leak is every
# Session it makes, added to the static list LEAK and never removed:
#  - `leaks` names that list (class DemoWorkload -> static DemoWorkload.LEAK)
#    and has it grow by as many Session as char[] (each Session's payload);
#  - the query's two walks in one session (ages in GCs): at the first none is
#    3+ GCs old (memtrace has just met them all); at the second, 3 s and
#    dozens of GCs later, those 3+ GCs old are exactly the first walk's
#    sessions (none is ever dropped), 24 bytes each (header, long, reference).
# A demo that stopped working went unseen once: its query's first walk in a
# pause was estimated over the 100 ms bound and refused (stop 61).
# TIMEOUT: 180
. "$ROOT/tests/e2e/lib.sh"

cd "$ROOT"
JAVA_HOME=$JAVA_HOME DEMO_SECONDS=8 DEMO_FLAMEGRAPH=$TMPD/flame.html scripts/demo.sh >"$TMPD/demo.out" 2>"$TMPD/demo.err" ||
	{ tail -30 "$TMPD/demo.out"; cat "$TMPD/demo.err"; fail "scripts/demo.sh exited non-zero"; }
for s in "memtrace ps" "memtrace doctor" "memtrace gc" "memtrace alloc" "memtrace leaks" "memtrace query"; do
	grep -q "^### $s" "$TMPD/demo.out" || { cat "$TMPD/demo.out"; fail "no section '$s'"; }
done
python3 - "$TMPD/demo.out" <<'PY' || { cat "$TMPD/demo.out" "$TMPD/demo.err"; fail "the demo's answers"; }
import json, re, sys
out = open(sys.argv[1]).read()
leaks = out[out.index("### memtrace leaks"):out.index("### memtrace query")]
m = re.search(r"#1 +class DemoWorkload -> static DemoWorkload\.LEAK \(java\.util\.ArrayList\)", leaks)
assert m, "the leak's holder not first"
grew = dict((c, int(n)) for n, c in re.findall(r"\+(\d+) (DemoWorkload\$Session|char\[\])", leaks))
assert grew.get("DemoWorkload$Session", 0) > 100 and grew["DemoWorkload$Session"] == grew.get("char[]"), grew
q = [json.loads(l) for l in out[out.index("### memtrace query"):].splitlines() if l.startswith("{")]
assert len(q) == 2, q
first_old, first_young = q[0]["old"]["sessions seen 3+ GCs ago"], q[0]["young"]["the other sessions"]
second_old = q[1]["old"]["sessions seen 3+ GCs ago"]
assert first_old["n"] == 0, q[0]
assert first_young["n"] > 100 and second_old["n"] == first_young["n"], q
assert second_old["bytes"] == 24 * second_old["n"], second_old
print("  leak +%d sessions; query: %d sessions at the first walk, all 3+ GCs old at the second"
      % (grew["DemoWorkload$Session"], first_young["n"]), file=sys.stderr)
PY
[ -s "$TMPD/flame.html" ] || fail "no flame graph written"
note "$(grep -ho 'heap walk paused JVM [0-9]* for [0-9.]* ms' "$TMPD/demo.out" "$TMPD/demo.err" | head -2 | tr '\n' ' ')"
