#!/usr/bin/env bash
# query_age - the built-in `age` (GCs survived since memtrace first saw the
# object) by construction, on AgeQuery: `query --every 3 --count 3` keeps one
# agent session for three walks. Walk 1 sees the 100 Early objects (age 0);
# then the workload runs System.gc() 3 times and allocates 50 Late objects;
# walk 2: Early age = GCs between walks 1 and 2, Late (first seen) age 0;
# then System.gc() twice; walk 3: Early = GCs since walk 1, Late = GCs since
# walk 2. The GC counts memtrace reports (JVMTI GarbageCollectionFinish, the
# `gcs` field) must equal the workload's GarbageCollectorMXBean counts and
# the System.gc() calls. The last walk saved with --save answers the same; a
# new session starts from scratch (tags and GC count released, also after
# memtrace is killed with SIGKILL mid-session; 15 sessions leave the JVM's
# threads, fds and RSS as they were); an .hprof dump has no ages (a clear
# compile error). The sessions' walks tag every object, so they are walked in
# a pause, whose estimate a loaded machine can push over the 100 ms memtrace
# takes without consent: each session gives --max-pause (walk_consent.sh
# tests the bound).
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"
PROG="$ROOT/tests/query/seeds/ages.mq"

mkfifo "$TMPD/in"
exec 3<>"$TMPD/in"
# (not jvm_start: a background command of a script reads /dev/null unless redirected)
"$JAVA" -Xmx64m -cp "$CLASSES" AgeQuery <"$TMPD/in" >"$TMPD/w.out" 2>&1 &
JVM_PID=$!
JVM_PIDS+=("$JVM_PID")
wait_for_line "$TMPD/w.out" READY 60 || { cat "$TMPD/w.out"; fail "AgeQuery did not start"; }
colls() { sed -n "s/^$1.*collections=//p" "$TMPD/w.out" | tail -1; }
c0=$(colls READY)
"$MEMTRACE" query -p "$JVM_PID" --json --every 3 --count 3 --max-pause 30000 -f "$PROG" --save "$TMPD/last.snap" \
	>"$TMPD/q.json" 2>"$TMPD/q.err" &
Q=$!
wait_for_line "$TMPD/q.json" '"walk":1' 15 || { cat "$TMPD/q.err"; fail "no first walk"; }
echo "gc 3" >&3
echo "alloc" >&3
wait_for_line "$TMPD/w.out" "alloc done" 5 || fail "the workload did not allocate"
c1=$(colls "alloc done")
grep -q '"walk":2' "$TMPD/q.json" && fail "walk 2 came before the workload was done (too slow a machine?)"
wait_for_line "$TMPD/q.json" '"walk":2' 10 || { cat "$TMPD/q.err"; fail "no second walk"; }
echo "gc 2" >&3
wait_for_line "$TMPD/w.out" "gc done collections=$((c1 + 2))" 5 || { cat "$TMPD/w.out"; fail "second gc"; }
c2=$(colls "gc done")
wait "$Q" || { cat "$TMPD/q.err"; fail "query --count 3"; }
cat "$TMPD/q.err" >&2
grep -q "age counts the GCs since memtrace first saw the object" "$TMPD/q.err" || fail "no age note"
assert_eq "$(grep -c 'heap walk paused' "$TMPD/q.err")" 3 "three walks, each with its pause"
note "MXBean collections: start $c0, after gc 3 $c1, after gc 2 $c2"
assert_eq "$((c1 - c0)) $((c2 - c1))" "3 2" "collections of System.gc() x3, x2 (GarbageCollectorMXBean)"
python3 - "$TMPD/q.json" $((c1 - c0)) $((c2 - c1)) <<'PY' || fail "ages differ from the construction"
import json, sys
w = [json.loads(l) for l in open(sys.argv[1])]
k1, k2 = int(sys.argv[2]), int(sys.argv[3])
def check(what, got, want):
    print("  %-28s got %-28s expected %s" % (what, got, want), file=sys.stderr)
    assert got == want, (what, got, want)
check("walks", [x["walk"] for x in w], [1, 2, 3])
g = [x["gcs"] for x in w]
check("JVMTI GCs since walk 1", [g[1] - g[0], g[2] - g[0]], [k1, k1 + k2])
r = [(x["result"]["early"]["early"], x["result"]["late"]["late"]) for x in w]
# (n, sum of ages, objects at least 1 GC old): every object of a batch has the same age
check("walk 1 early, late", r[0], ({"n": 100, "ages": 0, "old": 0}, {"n": 0, "ages": 0, "old": 0}))
check("walk 2 early, late", r[1], ({"n": 100, "ages": 100 * k1, "old": 100}, {"n": 50, "ages": 0, "old": 0}))
check("walk 3 early, late", r[2], ({"n": 100, "ages": 100 * (k1 + k2), "old": 100},
                                   {"n": 50, "ages": 50 * k2, "old": 50}))
PY
# the saved last walk answers as the live one did
"$MEMTRACE" query --json "$TMPD/last.snap" -f "$PROG" >"$TMPD/s.json" 2>"$TMPD/s.err" || { cat "$TMPD/s.err"; fail "query the saved snapshot"; }
assert_eq "$(json_get "$TMPD/s.json" 'json.dumps(recs[0]["result"], sort_keys=True)')" \
	"$(tail -1 "$TMPD/q.json" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["result"], sort_keys=True))')" \
	"saved snapshot vs live walk 3"
assert_eq "$(json_get "$TMPD/s.json" 'recs[0]["gcs"]')" "$(json_get "$TMPD/q.json" 'recs[2]["gcs"]')" "saved GC count"
# a new session: the agent released the tags and its GC count
fresh() {
	"$MEMTRACE" query -p "$JVM_PID" --json -f "$PROG" >"$TMPD/f.json" 2>"$TMPD/f.err" || { cat "$TMPD/f.err"; fail "query ($1)"; }
	assert_eq "$(json_get "$TMPD/f.json" '(recs[0]["gcs"], recs[0]["result"]["early"]["early"]["ages"], recs[0]["result"]["late"]["late"]["ages"])')" \
		"(0, 0, 0)" "a new session starts from scratch ($1)"
}
fresh "after --count 3"
"$MEMTRACE" query -p "$JVM_PID" --json --every 1 --count 30 --max-pause 30000 -f "$PROG" >"$TMPD/k.json" 2>"$TMPD/k.err" &
K=$!
wait_for_line "$TMPD/k.json" '"walk":1' 15 || { cat "$TMPD/k.err"; fail "no walk before kill"; }
echo "gc 1" >&3
wait_for_line "$TMPD/k.json" '"walk":2' 10 || { cat "$TMPD/k.err"; fail "no walk 2 before kill"; }
kill -9 "$K"; wait "$K" 2>/dev/null
fresh "after kill -9 mid-session"
# sessions come and go: the JVM's threads and fds stay within the bounds
# attach_cycles states and its RSS within 3 MiB: the session's tags are
# cleared (disposing the walk's env instead left ~15 B per tagged object in
# the JVM: +9 MiB over these 15 sessions; now +0.1 MiB)
threads() { ls /proc/$JVM_PID/task | wc -l; }
fds() { ls /proc/$JVM_PID/fd | wc -l; }
rss_kb() { awk '/^VmRSS:/{print $2}' /proc/$JVM_PID/status; }
t0=$(threads) f0=$(fds) r0=$(rss_kb)
for ((i = 0; i < 15; i++)); do
	"$MEMTRACE" -q query -p "$JVM_PID" --every 0 --count 3 --max-pause 30000 -f "$PROG" >/dev/null 2>"$TMPD/c.err" ||
		{ cat "$TMPD/c.err"; fail "session #$i"; }
done
t1=$(threads) f1=$(fds) r1=$(rss_kb)
note "15 sessions of 3 walks: threads $t0 -> $t1, fds $f0 -> $f1, RSS $r0 -> $r1 KiB"
[ $((t1 - t0)) -le 3 ] && [ $((t0 - t1)) -le 3 ] || fail "threads $t0 -> $t1"
[ $((f1 - f0)) -le 2 ] && [ $((f0 - f1)) -le 2 ] || fail "fds $f0 -> $f1"
[ $((r1 - r0)) -le 3072 ] || fail "RSS grew by $((r1 - r0)) KiB"
fresh "after 15 sessions"
# an .hprof dump has no ages: a compile error that says why
jtool jcmd "$JVM_PID" GC.heap_dump "$TMPD/h.hprof" >/dev/null || fail "jcmd GC.heap_dump"
"$MEMTRACE" query "$TMPD/h.hprof" -f "$PROG" >"$TMPD/h.out" 2>"$TMPD/h.err" && fail "age on an .hprof dump succeeded"
grep -q "ages.mq:6:55: error: objects have no 'age' here: a heap dump (.hprof) carries no GC history" "$TMPD/h.err" ||
	{ cat "$TMPD/h.err"; fail "hprof age message"; }
kill -0 "$JVM_PID" || fail "JVM died"
