#!/usr/bin/env bash
# query_sources - one program, three sources: the live JVM, its saved
# snapshot (`memtrace snapshot`) and a `jcmd GC.heap_dump` of the same
# quiescent heap give the same answers (incl. QPayload instances of three
# class loaders: 10, 20, 30); corrupt and foreign files are clear
# errors with a non-zero exit.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx128m QueryWorkload planted loaders "$ROOT/build/java-dyn"
"$MEMTRACE" snapshot -p "$JVM_PID" -o "$TMPD/heap.snap" 2>"$TMPD/s.err" || { cat "$TMPD/s.err"; fail "snapshot"; }
grep -q "saved .* objects" "$TMPD/s.err" || { cat "$TMPD/s.err"; fail "snapshot said nothing"; }
jtool jcmd "$JVM_PID" GC.heap_dump "$TMPD/heap.hprof" >/dev/null || fail "jcmd GC.heap_dump"
for prog in "$ROOT/tests/dsl/02_pseudojbb.mq" "$ROOT"/tests/query/*.mq; do
	n=$(basename "$prog" .mq)
	"$MEMTRACE" query -p "$JVM_PID" -f "$prog" >"$TMPD/$n.live" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "$n live"; }
	"$MEMTRACE" query "$TMPD/heap.snap" -f "$prog" >"$TMPD/$n.snap" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "$n snapshot"; }
	"$MEMTRACE" query "$TMPD/heap.hprof" -f "$prog" >"$TMPD/$n.hprof" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "$n hprof"; }
	python3 - "$n" "$TMPD/$n".{live,snap,hprof} <<'PY' || fail "$n: the sources disagree"
import json, sys
r = [json.load(open(f)) for f in sys.argv[2:]]
if sys.argv[1] == "per_loader": # instance names are loader ids: object ids differ per source
    r = [sorted(json.dumps(v, sort_keys=True) for v in x["perloader"].values() if v["n"]) for x in r]
print("  %s" % json.dumps(r[0], sort_keys=True), file=sys.stderr)
assert r[0] == r[1] == r[2], r
PY
done
grep -q '"n": *202' "$TMPD/reach_holder.hprof" || fail "hprof reachability"
# shallow sizes: exact live (JVMTI), estimated from the dump -- equal by construction
assert_eq "$(json_get "$TMPD/reach_bytes.hprof" 'recs[0]["held"]["holder"]["bytes"]')" 9232 "hprof size estimate"
assert_eq "$(json_get "$TMPD/reach_bytes.live" 'recs[0]["held"]["holder"]["bytes"]')" 9232 "live sizes"
# three loaders keep 10, 20 and 30 QPayload; the others none
assert_eq "$(json_get "$TMPD/per_loader.live" 'sorted(v["n"] for v in recs[0]["perloader"].values() if v["n"])')" \
	"[10, 20, 30]" "per-loader consumption"
# a snapshot cut short by --max-pause says so when queried
"$MEMTRACE" snapshot -p "$JVM_PID" -o "$TMPD/part.snap" --max-pause 0 2>"$TMPD/e" || { cat "$TMPD/e"; fail "partial snapshot"; }
"$MEMTRACE" query --json "$TMPD/part.snap" -f "$ROOT/tests/query/reach_holder.mq" >"$TMPD/p.json" 2>"$TMPD/e" || fail "query partial"
assert_eq "$(json_get "$TMPD/p.json" '(recs[0]["source"], recs[0]["partial"])')" "('snapshot', True)" "partial snapshot flag"
grep -q "cut short" "$TMPD/e" || { cat "$TMPD/e"; fail "no partial warning for the file"; }
kill -0 "$JVM_PID" || fail "JVM died"
# corrupt files
bad() { # FILE PATTERN
	"$MEMTRACE" query "$1" -f "$ROOT/tests/query/keyed.mq" >"$TMPD/o" 2>"$TMPD/e" && fail "$1 was accepted"
	grep -q -- "$2" "$TMPD/e" || { cat "$TMPD/e"; fail "$1: expected '$2'"; }
}
head -c 5000 "$TMPD/heap.snap" >"$TMPD/trunc.snap"; bad "$TMPD/trunc.snap" "trailer does not match"
cp "$TMPD/heap.snap" "$TMPD/flip.snap"
printf '\x5a' | dd of="$TMPD/flip.snap" bs=1 seek=4000 conv=notrunc 2>/dev/null
bad "$TMPD/flip.snap" "checksum mismatch"
# an HPROF cut 100 bytes into its first heap dump segment, and one cut after
# its strings and classes (records whole: no heap dump). A fixed 300 000
# bytes fell inside the segments on JDK 17.0.15 and on a record boundary
# among JDK 17.0.21's 1.9 MB of strings.
seg=$(python3 - "$TMPD/heap.hprof" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
off = d.index(b"\0") + 13
while off < len(d) and d[off] not in (0x0C, 0x1C):
    off += 9 + struct.unpack(">I", d[off + 5:off + 9])[0]
print(off)
PY
)
head -c $((seg + 100)) "$TMPD/heap.hprof" >"$TMPD/trunc.hprof"; bad "$TMPD/trunc.hprof" "truncated HPROF record"
head -c "$seg" "$TMPD/heap.hprof" >"$TMPD/noheap.hprof"; bad "$TMPD/noheap.hprof" "holds no heap dump"
echo "hello" >"$TMPD/junk.bin"; bad "$TMPD/junk.bin" "not a memtrace snapshot"
: >"$TMPD/empty.bin"; bad "$TMPD/empty.bin" "is empty"
bad "$TMPD/nonexistent" "cannot open"
