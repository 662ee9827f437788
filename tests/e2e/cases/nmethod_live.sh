#!/usr/bin/env bash
# nmethod_live - compiled code read from outside (jstack/nmethod.c, jstack/methodsym.c)
# through `test_nmethod --live`: every nmethod found by walking the code heaps
# has the compile id, level and name jcmd Compiler.codelist gives; every
# PcDesc of DeepInline's nmethods decodes into inlined frames whose lines are
# javap's (as is the line of every bci of their methods), and C2's inlining of the whole chain alloc <- leaf <- c <- b <- a
# shows up as such.
# TIMEOUT: 90
. "$(dirname "$0")/../lib.sh"

bin="$ROOT/build/tests/test_nmethod"
[ -x "$bin" ] || make -C "$ROOT" -s "build/tests/test_nmethod" >/dev/null 2>&1 ||
	skip "can't build build/tests/test_nmethod"

"$JAVA_HOME/bin/javap" -c -l -p -cp "$CLASSES" DeepInline 'DeepInline$Inner' >"$TMPD/javap.txt" ||
	fail "javap"
jvm_start deep -Xmx64m DeepInline
pid=$JVM_PID

# The JIT may still be busy: try a few times until C2's chain is there.
for try in 1 2 3 4 5; do
	ASAN_OPTIONS=detect_leaks=1 "$bin" --live "$pid" DeepInline >"$TMPD/live.json" 2>"$TMPD/live.err" ||
		{ cat "$TMPD/live.err" >&2; fail "test_nmethod --live"; }
	jtool jcmd "$pid" Compiler.codelist >"$TMPD/codelist.txt" 2>&1 ||
		{ cat "$TMPD/codelist.txt" >&2; fail "jcmd Compiler.codelist"; }
	python3 - "$TMPD" >"$TMPD/check.out" 2>&1 <<'PY' && break
import json, re, sys
d = sys.argv[1]
recs = [json.loads(l) for l in open(f"{d}/live.json")]

def bad(msg):
    print("FAIL", msg)
    sys.exit(1)

# 1. the nmethods against jcmd's list (both are snapshots a moment apart)
ours = {r["id"]: r for r in recs if r.get("nm")}
cl = {}
for line in open(f"{d}/codelist.txt"):
    p = line.split()
    if len(p) >= 4 and p[0].isdigit():
        cl[int(p[0])] = (int(p[1]), p[3])
both = set(ours) & set(cl)
if len(both) < 0.9 * max(len(ours), len(cl)) or len(both) < 10:
    bad(f"only {len(both)} nmethods in common: ours {len(ours)}, codelist {len(cl)}")
for i in both:
    if (ours[i]["level"], ours[i]["name"]) != cl[i]:
        bad(f"compile id {i}: ours {ours[i]['level']} {ours[i]['name']}, codelist {cl[i]}")
    if ours[i]["find"] != 1:
        bad(f"compile id {i}: a pc in its code does not find it back ({ours[i]['find']})")
if any(r.get("error") for r in recs):
    bad("errors: " + str([r for r in recs if r.get("error")][:3]))

# 2. lines: javap's LineNumberTable of every DeepInline method
lines, cls, meth = {}, None, None
for line in open(f"{d}/javap.txt"):
    m = re.match(r"^(?:\w+ )*class (\S+)", line)
    if m:
        cls = m.group(1)
        continue
    m = re.match(r"^  \S.*?(\S+)\(.*\)( throws .*)?;$", line)
    if m:
        meth = m.group(1)
        continue
    m = re.match(r"^\s+line (\d+): (\d+)$", line)
    if m:
        lines.setdefault(f"{cls}.{meth}", []).append((int(m.group(2)), int(m.group(1))))

def want_line(m, bci):
    best = [ln for pc, ln in sorted(lines[m]) if pc <= max(bci, 0)]
    return best[-1] if best else -1

chain = ["DeepInline$Inner.alloc", "DeepInline$Inner.leaf", "DeepInline$Inner.c",
         "DeepInline$Inner.b", "DeepInline$Inner.a"]
checked = full = 0
for r in recs:
    if not r.get("pcs"):
        continue
    sc = r["scopes"]
    for s in sc:
        if s["m"] in lines:
            checked += 1
            if s["line"] != want_line(s["m"], s["bci"]):
                bad(f"{s['m']} bci {s['bci']}: line {s['line']}, javap says {want_line(s['m'], s['bci'])}")
    for k, s in enumerate(sc):
        if s["kind"] != ("inlined" if k < len(sc) - 1 else ours[r["id"]]["kind"]):
            bad(f"frame kinds {[x['kind'] for x in sc]} in compile id {r['id']}")
    if [s["m"] for s in sc[:5]] == chain and sc[-1]["kind"] == "c2":
        full += 1
if checked < 10:
    bad(f"only {checked} DeepInline frames decoded")
# 3. whole line tables: the line of every bci of every DeepInline method seen
tables = 0
for r in recs:
    if r.get("lines") and r["m"] in lines:
        got = r["table"]
        want = [want_line(r["m"], b) for b in range(len(got))]
        if got != want:
            bad(f"{r['m']} lines by bci {got}, javap says {want}")
        tables += 1
if tables < 5:
    bad(f"only {tables} DeepInline line tables")
if not full:
    print("RETRY no PcDesc with C2's whole inlined chain yet")
    sys.exit(1)
print(f"ok: {len(both)} nmethods match, {checked} frames with javap's lines, {tables} line tables, {full} full chains")
PY
	sleep 1
done
cat "$TMPD/check.out" >&2
grep -q '^ok:' "$TMPD/check.out" || fail "$(head -1 "$TMPD/check.out")"
exit 0
