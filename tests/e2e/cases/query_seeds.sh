#!/usr/bin/env bash
# query_seeds - the seed's programs 03-05 (objects reachable from threads,
# K3-style aspects attributed to their key object, consumption per class
# loader) on QuerySeeds, whose answers are known by construction; the
# programs (tests/query/seeds/*.mq) say how and why they differ from the
# seed's listings (tests/dsl/03-05). Exact answers: object counts from the
# construction, bytes from `jcmd GC.class_histogram` of the same JVM (every
# class in the counted graphs is the workload's own or HashMap$Node, whose
# instances all have one size). A saved snapshot of the same heap answers the
# same, a heap dump the same counts.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx128m QuerySeeds "$ROOT/build/java-dyn"
jtool jcmd "$JVM_PID" GC.class_histogram >"$TMPD/histo.txt" || fail "jcmd GC.class_histogram"
for p in 03_reachable_from_threads 04_k3_aspects 05_top_components; do
	"$MEMTRACE" query -p "$JVM_PID" -f "$ROOT/tests/query/seeds/$p.mq" >"$TMPD/$p.json" 2>"$TMPD/$p.err" ||
		{ cat "$TMPD/$p.err"; fail "query $p"; }
	grep -q "heap walk paused JVM $JVM_PID for" "$TMPD/$p.err" || { cat "$TMPD/$p.err"; fail "$p: no pause"; }
	grep -q "PARTIAL" "$TMPD/$p.err" && fail "$p: partial walk"
	note "$p: $(cat "$TMPD/$p.json")"
done
python3 - "$TMPD" <<'PY' || fail "a seed program's answer differs from the construction"
import json, re, sys
d = sys.argv[1]
rows = {}  # class name -> list of (instances, bytes): one per defining loader
for l in open(d + "/histo.txt"):
    m = re.match(r"\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)", l)
    if m:
        name = m.group(3)
        a = re.match(r"^\[L(.*);$", name)  # "[LC;" (JDK 17) and "C[]" are the same class
        if a: name = a.group(1) + "[]"
        rows.setdefault(name, []).append((int(m.group(1)), int(m.group(2))))
def each(c):
    """the one instance size of class c (every row, every instance)"""
    sizes = set()
    for n, b in rows[c]:
        assert b % n == 0, (c, n, b)
        sizes.add(b // n)
    assert len(sizes) == 1, (c, rows[c])
    return sizes.pop()
def load(p):
    return json.load(open("%s/%s.json" % (d, p)))
def check(what, got, want):
    print("  %-34s got %-12s expected %s" % (what, got, want), file=sys.stderr)
    assert got == want, (what, got, want)

# 03: thread N reaches its Worker, Graph, TNode[64], N TNode and N TLeaf
S = "QuerySeeds$"
r = load("03_reachable_from_threads")["all"]
check("03 threads", sorted(r), sorted("seed-worker-%d" % n for n in (5, 10, 20)))
for n in (5, 10, 20):
    v = r["seed-worker-%d" % n]
    check("03 seed-worker-%d objects" % n, v["nbObjects"], 3 + 2 * n)
    check("03 seed-worker-%d bytes" % n, v["nbSize"],
          each(S + "Worker") + each(S + "Graph") + each(S + "TNode[]") +
          n * (each(S + "TNode") + each(S + "TLeaf")))

# 04: key n owns itself, its K3Part[4] with n+1 K3Part, its HashMap$Node, the
# Aspect with its AspectItem[8] and 2(n+1) AspectItem; the decoy map's none
r = load("04_k3_aspects")["all"]
want = sorted(each(S + "K3Object") + each(S + "K3Part[]") + (n + 1) * each(S + "K3Part") +
              each("java.util.HashMap$Node") + each(S + "Aspect") + each(S + "AspectItem[]") +
              2 * (n + 1) * each(S + "AspectItem") for n in range(4))
check("04 K3Object instances", len(r), 4)
check("04 bytes per K3Object (sorted)", sorted(v["nbSize"] for v in r.values()), want)

# 05: loader N (the one whose classes have N QCarried) owns its QLoader
# object, the QCarried[N] a stack local of its thread holds, N QCarried and N
# QCarriedPart; QCarried[] rows (one per loader) ordered by size give N's array
r = load("05_top_components")
carried = {k: v["n"] for k, v in r["Carried"].items() if v["n"]}
check("05 loaders with QCarried", sorted(carried.values()), [10, 20, 30])
arrays = sorted(b for _, b in rows["QCarried[]"])
check("05 QCarried[] rows", len(arrays), 3)
for i, (lid, n) in enumerate(sorted(carried.items(), key=lambda kv: kv[1])):
    check("05 loader of %d QCarried bytes" % n, r["Component"][lid]["nbSize"],
          each(S + "QLoader") + arrays[i] + n * (each("QCarried") + each("QCarriedPart")))
PY
# the same programs on a saved snapshot of the same heap answer the same; on a
# jcmd GC.heap_dump the counts and the K3 sizes too (an .hprof's Thread size
# misses @Contended padding: user/heap/hprof.c). Ids differ between sources, so
# answers are compared by thread name, sorted, and by loader (its QCarried).
"$MEMTRACE" snapshot -p "$JVM_PID" -o "$TMPD/heap.snap" 2>"$TMPD/s.err" || { cat "$TMPD/s.err"; fail "snapshot"; }
jtool jcmd "$JVM_PID" GC.heap_dump "$TMPD/heap.hprof" >/dev/null || fail "jcmd GC.heap_dump"
for p in 03_reachable_from_threads 04_k3_aspects 05_top_components; do
	for src in snap hprof; do
		"$MEMTRACE" query "$TMPD/heap.$src" -f "$ROOT/tests/query/seeds/$p.mq" >"$TMPD/$p.$src" 2>"$TMPD/e" ||
			{ cat "$TMPD/e"; fail "$p on the $src"; }
	done
done
python3 - "$TMPD" <<'PY' || fail "a saved snapshot or a heap dump answers otherwise"
import json, sys
d = sys.argv[1]
def norm(p, f):
    r = json.load(open("%s/%s%s" % (d, p, f)))
    if p.startswith("03"):
        return r["all"]
    if p.startswith("04"):
        return sorted(v["nbSize"] for v in r["all"].values())
    n = {k: v["n"] for k, v in r["Carried"].items() if v["n"]}
    return sorted((n[k], r["Component"][k]["nbSize"]) for k in n)
for p in ("03_reachable_from_threads", "04_k3_aspects", "05_top_components"):
    live, snap = norm(p, ".json"), norm(p, ".snap")
    print("  %s: live = snapshot: %s" % (p, live == snap), file=sys.stderr)
    assert live == snap, (p, live, snap)
live, hp = norm("03_reachable_from_threads", ".json"), norm("03_reachable_from_threads", ".hprof")
assert {k: v["nbObjects"] for k, v in live.items()} == {k: v["nbObjects"] for k, v in hp.items()}, (live, hp)
assert norm("04_k3_aspects", ".json") == norm("04_k3_aspects", ".hprof")
assert [n for n, _ in norm("05_top_components", ".hprof")] == [10, 20, 30]
PY
kill -0 "$JVM_PID" || fail "JVM died"
