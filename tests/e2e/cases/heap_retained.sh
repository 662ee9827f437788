#!/usr/bin/env bash
# heap_retained - who holds the memory, against sizes known by construction
# (tests/java/RetainWorkload.java) and an independent dominator computation
# over a `jcmd GC.heap_dump` of the same quiescent heap
# (tests/e2e/hprof_dominators.py, Cooper-Harvey-Kennedy in Python):
# - the query built-in `retained`, live and on the dump: owner k retains
#   Owner + byte[1000 (k+1)] + (k+1) (Node + long[16]) (Owner's and Node's
#   sizes from `jmap -histo:live`, arrays 16 + elements); a Shared held by
#   two owners is retained by neither (its immediate dominator is the list's
#   array); the list retains itself, its array, the owners and the Shareds;
# - on the dump, every object's retained size equals the oracle's (the
#   workload names no field `id`: a Java field hides the built-in of its name);
# - `memtrace heap --retained` (live and dump) ranks class RetainWorkload
#   (BIG's 4 MiB, OWNERS) first, and by class gives Owner the sum of its
#   10 owners and Shared 5 times its size;
# - `memtrace heap --paths` (live and dump): the shortest path from a GC
#   root to a Shared names the static OWNERS, ArrayList.elementData, an array
#   index and Owner.shared; `--id` on the dump gives an owner's path and its
#   referrer; bad input gets a message and a non-zero exit;
# - the same answers with the records kept in place or copied, the
#   references in place by position (MT_AP_FREEZE_REFPOS; each object's CLASS
#   reference implied, MT_AP_FREEZE_NOCLASS, or a record) or by id, written
#   by the copy in one thread or two, and retained by class summed by one
#   walker or two.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start r -Xmx64m RetainWorkload
"$MEMTRACE" query -p "$JVM_PID" -f "$ROOT/tests/query/retain/retain.mq" >"$TMPD/q.live" 2>"$TMPD/e" ||
	{ cat "$TMPD/e"; fail "query live"; }
"$MEMTRACE" --json heap -p "$JVM_PID" --retained --top 2000 >"$TMPD/h.live" 2>"$TMPD/e" ||
	{ cat "$TMPD/e"; fail "heap --retained live"; }
# the same answer with the snapshot's arrays in huge pages and in small ones
# (util_hugepages_wanted(): the machine decides, the environment overrides)
for hp in 0 1; do
	MEMTRACE_HUGEPAGES=$hp "$MEMTRACE" --json heap -p "$JVM_PID" --retained --top 2000 \
		>"$TMPD/h.hp$hp" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "heap --retained, MEMTRACE_HUGEPAGES=$hp"; }
done
python3 - "$TMPD" <<'PY' || fail "huge and small pages answer alike"
import json, sys
d = sys.argv[1]
def rows(f): # the answers, without the times or the root count (threads'
    out = []  # stacks at the instant: the agent's and the attach listener's)
    for l in open(d + "/" + f):
        r = json.loads(l) if l.startswith("{") else {}
        if r.get("event", "").startswith("retained"):
            out.append({k: v for k, v in r.items() if not k.endswith("_ms") and k != "roots"})
    return out
a, b, c = rows("h.live"), rows("h.hp0"), rows("h.hp1")
assert a and a == b == c, (len(a), len(b), len(c))
PY
# the records kept where the frozen copy wrote them (a take's own pool,
# MT_AP_FREEZE_INPLACE: the view built over them) against read out of the
# copy into memtrace's memory (MEMTRACE_NO_INPLACE): the same answers, and
# the query's too
# A take of this tiny heap (24 k objects, the copy done in ~5 ms) came out
# of place once in ~500 under load (stop 51: the records then read out of the
# copy, the answer the same; why is not known yet): each in-place run is
# tried up to three times, and a retry is said.
inplace_run() { # NAME WANT [ENV...]: heap --retained into h.NAME until WANT
	local name=$1 want=$2 try
	shift 2
	for try in 1 2 3; do
		env "$@" MEMTRACE_PHASES=1 "$MEMTRACE" --json heap -p "$JVM_PID" --retained --top 2000 \
			>"$TMPD/h.$name" 2>"$TMPD/$name.err" ||
			{ cat "$TMPD/$name.err"; fail "heap --retained ($name)"; }
		eval "$want" && return 0
		note "$name: try $try not in place as asked: $(grep -o '(the copy: .*' "$TMPD/$name.err")"
	done
	return 1
}
inplace_run ip 'grep -q "kept where the copy wrote them, references by position, CLASS ones implied" "$TMPD/ip.err"' ||
	{ cat "$TMPD/ip.err"; fail "the records were not kept in place, by position"; }
# ... each object's CLASS reference a record (MEMTRACE_CLASS_RECORDS: not
# implied, the view's references as before stop 58)
inplace_run pc 'grep -q "kept where the copy wrote them, references by position;" "$TMPD/pc.err"' \
	MEMTRACE_CLASS_RECORDS=1 ||
	{ cat "$TMPD/pc.err"; fail "MEMTRACE_CLASS_RECORDS: not by position with CLASS records"; }
MEMTRACE_CLASS_RECORDS=1 "$MEMTRACE" query -p "$JVM_PID" -f "$ROOT/tests/query/retain/retain.mq" \
	>"$TMPD/q.pc" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "query, CLASS records"; }
cmp "$TMPD/q.live" "$TMPD/q.pc" || fail "the query with CLASS references implied and as records differ"
# ... with the references by id (MEMTRACE_NO_REFPOS: the view makes its
# references of 24-byte records, below them, each CLASS one added)
inplace_run id 'grep -q "kept where the copy wrote them" "$TMPD/id.err" && ! grep -q "by position" "$TMPD/id.err"' \
	MEMTRACE_NO_REFPOS=1 ||
	{ cat "$TMPD/id.err"; fail "MEMTRACE_NO_REFPOS: not in place by id"; }
MEMTRACE_NO_REFPOS=1 "$MEMTRACE" query -p "$JVM_PID" -f "$ROOT/tests/query/retain/retain.mq" \
	>"$TMPD/q.id" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "query by id"; }
cmp "$TMPD/q.live" "$TMPD/q.id" || fail "the query by position and by id differ"
MEMTRACE_NO_INPLACE=1 MEMTRACE_PHASES=1 "$MEMTRACE" --json heap -p "$JVM_PID" --retained \
	--top 2000 >"$TMPD/h.cp" 2>"$TMPD/cp.err" || { cat "$TMPD/cp.err"; fail "heap --retained copied"; }
grep -q "kept where the copy wrote them" "$TMPD/cp.err" && fail "MEMTRACE_NO_INPLACE kept them in place"
MEMTRACE_NO_INPLACE=1 "$MEMTRACE" query -p "$JVM_PID" -f "$ROOT/tests/query/retain/retain.mq" \
	>"$TMPD/q.cp" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "query copied"; }
cmp "$TMPD/q.live" "$TMPD/q.cp" || fail "the query in place and copied differ"
# the copy's mark and records in two threads (MEMTRACE_COPY_THREADS=2: on a
# heap this small too; a heap of 256 Ki / a million objects or more takes
# them by itself) and in one: the same answers
MEMTRACE_COPY_THREADS=2 MEMTRACE_BYCLASS_THREADS=2 MEMTRACE_PHASES=1 "$MEMTRACE" --json heap \
	-p "$JVM_PID" --retained --top 2000 >"$TMPD/h.t2" 2>"$TMPD/t2.err" ||
	{ cat "$TMPD/t2.err"; fail "heap --retained, two threads"; }
# ... and retained by class summed by two walkers over parts of the tree
# (MEMTRACE_BYCLASS_THREADS=2; a tree of a million objects takes them by itself)
grep -q "retained by class: [0-9]* parts of the dominator tree, two walkers" "$TMPD/t2.err" ||
	{ cat "$TMPD/t2.err"; fail "retained by class was not summed by two walkers"; }
grep -q "its records [0-9.]* ms,.* written by 2 threads" "$TMPD/t2.err" ||
	{ cat "$TMPD/t2.err"; fail "the copy's records were not written by two threads"; }
# ... and its mark in two threads (from the start, sharing every 4 objects)
grep -q "marked by 2)" "$TMPD/t2.err" || { cat "$TMPD/t2.err"; fail "the copy did not mark in two threads"; }
MEMTRACE_COPY_THREADS=1 MEMTRACE_BYCLASS_THREADS=1 MEMTRACE_PHASES=1 "$MEMTRACE" --json heap \
	-p "$JVM_PID" --retained --top 2000 >"$TMPD/h.t1" 2>"$TMPD/t1.err" ||
	{ cat "$TMPD/t1.err"; fail "heap --retained, one thread"; }
grep -q "retained by class: 1 part of the dominator tree, one walker" "$TMPD/t1.err" ||
	{ cat "$TMPD/t1.err"; fail "retained by class was not summed by one walker"; }
grep -q "its records [0-9.]* ms,.* written by 1 thread[;)]" "$TMPD/t1.err" ||
	{ cat "$TMPD/t1.err"; fail "the copy's records were not written by one thread"; }
grep -q "marked by 1)" "$TMPD/t1.err" || { cat "$TMPD/t1.err"; fail "the copy did not mark in one thread"; }
MEMTRACE_COPY_THREADS=2 "$MEMTRACE" query -p "$JVM_PID" -f "$ROOT/tests/query/retain/retain.mq" \
	>"$TMPD/q.t2" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "query, two threads"; }
cmp "$TMPD/q.live" "$TMPD/q.t2" || fail "the query in one and two threads differ"
python3 - "$TMPD" <<'PY' || fail "in place and copied answer alike"
import json, sys
d = sys.argv[1]
def rows(f):
    out = []
    for l in open(d + "/" + f):
        r = json.loads(l) if l.startswith("{") else {}
        if r.get("event", "").startswith("retained"):
            out.append({k: v for k, v in r.items() if not k.endswith("_ms") and k != "roots"})
    return out
a, b, c, i, pc = rows("h.live"), rows("h.ip"), rows("h.cp"), rows("h.id"), rows("h.pc")
assert a and a == b == c == i == pc, (len(a), len(b), len(c), len(i), len(pc))
t1, t2 = rows("h.t1"), rows("h.t2")
assert a == t1 == t2, (len(t1), len(t2))
PY
note "in place (by position, by id), copied, one and two threads: $(grep -c '"retained' "$TMPD/h.ip") rows alike"
"$MEMTRACE" --json heap -p "$JVM_PID" --paths RetainWorkload.Shared --top 5 >"$TMPD/p.live" 2>"$TMPD/e" ||
	{ cat "$TMPD/e"; fail "heap --paths live"; }
"$MEMTRACE" heap -p "$JVM_PID" --paths RetainWorkload.Shared --top 1 >"$TMPD/p.txt" 2>"$TMPD/e" ||
	{ cat "$TMPD/e"; fail "heap --paths text"; }
jtool jmap -histo:live "$JVM_PID" >"$TMPD/histo" || fail "jmap -histo:live"
jtool jcmd "$JVM_PID" GC.heap_dump "$TMPD/r.hprof" >/dev/null || fail "jcmd GC.heap_dump"
"$MEMTRACE" query "$TMPD/r.hprof" -f "$ROOT/tests/query/retain/retain.mq" >"$TMPD/q.hprof" 2>"$TMPD/e" ||
	{ cat "$TMPD/e"; fail "query dump"; }
"$MEMTRACE" --json heap "$TMPD/r.hprof" --retained --top 2000 >"$TMPD/h.hprof" 2>"$TMPD/e" ||
	{ cat "$TMPD/e"; fail "heap --retained dump"; }
"$MEMTRACE" --json heap "$TMPD/r.hprof" --paths RetainWorkload.Shared --top 5 >"$TMPD/p.hprof" 2>"$TMPD/e" ||
	{ cat "$TMPD/e"; fail "heap --paths dump"; }
"$MEMTRACE" query "$TMPD/r.hprof" -e 'R : struct id : int  r : int end
set_type a:
    all : table_of R <- objects.map([it | struct R it.id, it.retained end])
instances_for a have_names = "a"' >"$TMPD/all.hprof" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "all retained"; }
HPROF_KEY_CLASSES='RetainWorkload$Owner' python3 "$ROOT/tests/e2e/hprof_dominators.py" \
	"$TMPD/r.hprof" "$TMPD/oracle.json" || fail "oracle"

python3 - "$TMPD" <<'PY' || fail "retained sizes"
import json, re, sys
d = sys.argv[1]
def a8(n): return (n + 7) & ~7
size = {}
for l in open(d + "/histo"):
    m = re.match(r"\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)", l)
    if m:
        size[m.group(3)] = int(m.group(2)) // int(m.group(1))
S_owner, S_node, S_shared = size["RetainWorkload$Owner"], size["RetainWorkload$Node"], size["RetainWorkload$Shared"]
S_list = size["java.util.ArrayList"]
owner = [S_owner + a8(16 + 1000 * (k + 1)) + (k + 1) * (S_node + a8(16 + 8 * 16)) for k in range(10)]
shared = S_shared + a8(16 + 500)
listr = S_list + a8(16 + 4 * 10) + sum(owner) + 5 * shared
oracle = json.load(open(d + "/oracle.json"))
for src in ("live", "hprof"):
    q = json.load(open("%s/q.%s" % (d, src)))["r"]["r"]
    got = {x["key"]: x["r"] for x in q["owners"]}
    assert got == dict(enumerate(owner)), (src, got, owner)
    assert q["shared"] == [shared] * 5, (src, q["shared"], shared)
    assert q["list"] == [listr], (src, q["list"], listr)
    # memtrace heap --retained: by class, and the top retainer
    h = [json.loads(l) for l in open("%s/h.%s" % (d, src)) if l.startswith("{")]
    cls = {r["class"]: r for r in h if r["event"] == "retained_class"}
    assert cls["RetainWorkload$Owner"]["retained"] == sum(owner), (src, cls["RetainWorkload$Owner"])
    assert cls["RetainWorkload$Owner"]["top_instances"] == 10
    assert cls["RetainWorkload$Shared"]["retained"] == 5 * shared, (src, cls["RetainWorkload$Shared"])
    top = [r for r in h if r["event"] == "retainer"][0]["object"]
    assert top["class"] == "class RetainWorkload" and top["retained"] > (4 << 20) + listr, (src, top)
    tot = [r for r in h if r["event"] == "retained_total"][0]
    print("  %s: owners %s, list %d, %d objects, dominators %.1f ms" % (src, owner, listr,
          tot["objects"], tot["dominators_ms"]), file=sys.stderr)
# every object of the dump: memtrace's retained = the oracle's
mine = {str(x["id"]): x["r"] for x in json.load(open(d + "/all.hprof"))["a"]["a"]["all"]}
orc = oracle["retained"]
assert set(k for k, v in mine.items() if v is not None) == set(orc), "reachable sets differ"
bad = [(k, mine[k], orc[k]) for k in orc if mine[k] != orc[k]]
assert not bad, "%d objects differ, e.g. %s" % (len(bad), bad[:5])
# the oracle's own view of the construction: owners by key, the Shareds' dominator
keys = oracle["keys"]["RetainWorkload$Owner"]
assert sorted((k, orc[o]) for o, k in keys.items()) == list(enumerate(owner))
print("  dump: %d reachable objects agree with the oracle" % len(orc), file=sys.stderr)
PY
python3 - "$TMPD/p.live" "$TMPD/p.hprof" <<'PY' || fail "paths"
import json, sys
for f in sys.argv[1:]:
  recs = [json.loads(l) for l in open(f) if l.startswith("{")]
  assert len(recs) == 5, recs
  for r in recs:
    p = r["path"]
    assert "root" in p[0] and p[-1]["class"] == "RetainWorkload$Shared" and p[-1]["id"] == r["id"]
    steps = [(s.get("ref"), s.get("field", s.get("index"))) for s in p[1:]]
    i = steps.index(("static_field", "OWNERS"))
    assert p[i]["class"] == "class RetainWorkload", (f, p)
    assert steps[i + 1] == ("field", "elementData") and steps[i + 2][0] == "array_element", steps
    assert 0 <= steps[i + 2][1] < 10 and steps[i + 3:] == [("field", "shared")], steps
PY
grep -q "static RetainWorkload.OWNERS -> java.util.ArrayList" "$TMPD/p.txt" || { cat "$TMPD/p.txt"; fail "text path"; }
# --id on the dump: an owner's referrer is the list's array; --id needs a file
oid=$(python3 -c "import json; k=json.load(open('$TMPD/oracle.json'))['keys']['RetainWorkload\$Owner']; print([o for o, v in k.items() if v == 3][0])")
"$MEMTRACE" --json heap "$TMPD/r.hprof" --id "$oid" >"$TMPD/id.json" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "--id"; }
assert_eq "$(json_get "$TMPD/id.json" '[r["class"] for r in recs[0]["referrers"]], recs[0]["path"][-2]["class"]')" \
	"(['java.lang.Object[]'], 'java.lang.Object[]')" "--id referrers and path"
"$MEMTRACE" heap -p "$JVM_PID" --id 5 >/dev/null 2>"$TMPD/e" && fail "--id on a live JVM"
grep -q "needs a heap file" "$TMPD/e" || { cat "$TMPD/e"; fail "--id live: no reason"; }
# bad input: a clear message and a non-zero exit
bad() { # CODE PATTERN ARGS...
	local code=$1 pat=$2; shift 2
	"$MEMTRACE" heap "$@" >/dev/null 2>"$TMPD/e"; local rc=$?
	[ $rc -eq "$code" ] || { cat "$TMPD/e"; fail "heap $*: exit $rc, expected $code"; }
	grep -q -- "$pat" "$TMPD/e" || { cat "$TMPD/e"; fail "heap $*: no '$pat'"; }
}
bad 2 "usage: memtrace heap" --retained
bad 2 "usage: memtrace heap" "$TMPD/r.hprof" --retained --paths X
bad 1 "no class of the heap is named 'NoSuchClass'" "$TMPD/r.hprof" --paths NoSuchClass
bad 1 "no object of the heap has id 12345" "$TMPD/r.hprof" --id 12345
bad 1 "cannot open" "$TMPD/nonexistent" --retained
bad 2 "invalid --id" "$TMPD/r.hprof" --id abc
kill -0 "$JVM_PID" || fail "JVM died"
exit 0
