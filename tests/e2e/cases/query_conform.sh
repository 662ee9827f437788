#!/usr/bin/env bash
# query_conform - the query language means what the syntax section of docs/design.md says,
# on a live JVM, its saved snapshot and a `jcmd GC.heap_dump` of the same
# quiescent heap (tests/java/Conform.java, answers known by construction):
# - `x is T` is Java's instanceof: for 23 types (interfaces and their
#   superinterfaces, nested names, Map.Entry, arrays and their covariance,
#   Cloneable/Serializable of arrays) the count over Conform's 24 objects
#   equals Java's own `o instanceof T` count the workload printed; on the
#   dump, whose class records carry no interfaces, the classes give the same
#   counts and an interface is a compile error that says why;
# - every member (Java fields first, then class, size, length, id, age,
#   retained, referrers; Class.name/.classloader, Classloader.id and
#   Thread.name before Java fields, also through an Object), the list
#   members, `in`, the null rules, the context names (THIS, REFERRER,
#   ENTITY, ENTITY.name, Unassigned) and every ref_kind name (each kind's
#   count is positive where the source has such references);
# - `root` is every heap-root kind: it claims as many objects as the seven
#   root kinds one by one; root_path of a root is the root itself unless a
#   longer-lived root reaches it too.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

Q="$ROOT/tests/query/conform"
jvm_start c -Xmx64m Conform
"$MEMTRACE" snapshot -p "$JVM_PID" -o "$TMPD/c.snap" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "snapshot"; }
jtool jcmd "$JVM_PID" GC.heap_dump "$TMPD/c.hprof" >/dev/null || fail "jcmd GC.heap_dump"

# `is`: one property per type Java counted (INSTANCEOF lines); the dump gets
# the classes only (interfaces and arrays of them: a compile error there)
python3 - "$TMPD/c.out" "$TMPD" <<'PY'
import sys
ifaces = {"Conform.Shape", "Conform.Round", "Conform.Named", "java.io.Serializable",
          "java.lang.Cloneable", "Map.Entry", "java.lang.Comparable", "java.lang.CharSequence"}
names = [l.split()[1] for l in open(sys.argv[1]) if l.startswith("INSTANCEOF ")]
assert len(names) == 23, names
def prog(path, sel):
    with open(path, "w") as f:
        f.write("set_type is_:\n"
                "    holder_all : table_of Object <- objects.filter([it | it is Conform.Holder])"
                ".map([it | it.all])\n"
                "    items : table_of Object <- objects.filter([o | not (o is java.lang.Class) and\n"
                "        o.referrers.exists([r | r in holder_all])])\n")
        for i, n in enumerate(names):
            if n in sel:
                f.write("    t%d : int <- items.filter([it | it is %s]).size\n" % (i, n))
        f.write('instances_for is_ have_names = "is"\n')
prog(sys.argv[2] + "/is_all.mq", set(names))
prog(sys.argv[2] + "/is_classes.mq", {n for n in names if n.rstrip("[]") not in ifaces})
PY
q() { # SOURCE PROGRAM OUT
	"$MEMTRACE" query "$@" >"$TMPD/q.out" 2>"$TMPD/q.err" || { cat "$TMPD/q.err"; fail "query $*"; }
}
for src in live snap hprof; do
	case $src in live) in=(-p "$JVM_PID");; snap) in=("$TMPD/c.snap");; hprof) in=("$TMPD/c.hprof");; esac
	for p in members walk roots rootkinds kinds; do
		"$MEMTRACE" query "${in[@]}" -f "$Q/$p.mq" >"$TMPD/$p.$src" 2>"$TMPD/e" ||
			{ cat "$TMPD/e"; fail "$p on $src"; }
	done
	prog=is_all; [ $src = hprof ] && prog=is_classes
	"$MEMTRACE" query "${in[@]}" -f "$TMPD/$prog.mq" >"$TMPD/is.$src" 2>"$TMPD/e" ||
		{ cat "$TMPD/e"; fail "is on $src"; }
done
# an interface on the dump: a compile error that says why
"$MEMTRACE" query "$TMPD/c.hprof" -f "$TMPD/is_all.mq" >/dev/null 2>"$TMPD/e" && fail "interfaces on a dump"
grep -q "may be or hold an interface, and a heap dump (.hprof) records no interfaces" "$TMPD/e" ||
	{ cat "$TMPD/e"; fail "no reason for the interface error"; }
# `age` on the dump: a compile error; on the live heap and the snapshot: 0 (one walk)
"$MEMTRACE" query "$TMPD/c.hprof" -e 'set_type a:
  n : int <- objects.filter([it | it.age = 0]).size
instances_for a have_names = "a"' >/dev/null 2>"$TMPD/e" && fail "age on a dump"
grep -q "no 'age' here" "$TMPD/e" || { cat "$TMPD/e"; fail "no reason for the age error"; }

python3 - "$TMPD" "$TMPD/c.out" <<'PY'
import json, sys
d = sys.argv[1]
java = [int(l.split()[2]) for l in open(sys.argv[2]) if l.startswith("INSTANCEOF ")]
def load(p, src): return json.load(open("%s/%s.%s" % (d, p, src)))
for src in ("live", "snap", "hprof"):
    # instanceof
    got = load("is", src)["is_"]["is"]
    n = 0
    for k, v in got.items():
        if k.startswith("t"):
            i = int(k[1:]); n += 1
            assert v == java[i], "%s: is #%d: %d, Java's instanceof %d" % (src, i, v, java[i])
    assert n == (23 if src != "hprof" else 10), (src, n)
    # members, known by construction (tests/java/Conform.java)
    m = load("members", src)["m"]["m"]
    want = dict(n_items=24, visited=24, plain_k7=1, label_c3=1, chain_next=1, no_next=1,
                null_eq=0, squares=3, int77=1, non_arrays=18, ids_positive=23,
                plain_retained=4, c0_referrers=[6], c4_referrers=[5], circle_class=1,
                circle_mirror=1, app_loader=True, boot_loader=1, loader_ids=True, worker=1,
                worker_obj=1, group=1, doubled=2, has_two=True, in_list=True)
    for k, v in want.items():
        assert m[k] == v, "%s: %s = %r, expected %r" % (src, k, m[k], v)
    # context names
    w = load("walk", src)
    assert w["chain"]["first"]["n"] == 11 and w["chain"]["first"]["nm"] == "first", (src, w)
    assert w["chain"]["second"] == {"n": 0, "bytes": 0, "nm": ""}, (src, w)
    assert w["orphan"]["o"]["n"] == 3, (src, w)
    # root: every root kind - claimed over `root` = the sum over the kinds
    r = load("roots", src)["r"]["root"]
    rk = sum(v[n.rstrip("_")]["n"] for n, v in load("rootkinds", src).items())
    assert r["n"] == rk > 100 and 0 < r["direct"] <= r["n"], (src, r, rk)
    # every ref kind ran; those the source must have are positive
    k = {name.rstrip("_"): v[name.rstrip("_")]["n"] for name, v in load("kinds", src).items()}
    assert len(k) == 17, k
    must = {"field", "array_element", "static_field", "system_class", "stack_local", "thread",
            "jni_global", "superclass"}
    if src != "hprof": # JVMTI reports these, a dump has none (the agent's own JNI
        must |= {"constant_pool", "other"} # locals are no roots: no jni_local here)
    for kind in must:
        assert k[kind] > 0, "%s: no object first reached over %s (%s)" % (src, kind, k)
    print("  %s: is %s, kinds %s" % (src, got, k), file=sys.stderr)
# the three sources agree where they hold the same objects
for p in ("members", "walk"):
    a, b, c = (load(p, s) for s in ("live", "snap", "hprof"))
    if p == "members":
        for x in (a, b, c):
            x["m"]["m"].pop("items"); x["m"]["m"].pop("holder_all")
    assert a == b, (p, a, b)
    assert a == c, (p, a, c)
PY
[ $? -eq 0 ] || fail "conformance"
kill -0 "$JVM_PID" || fail "JVM died"
exit 0
