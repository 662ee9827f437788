#!/usr/bin/env bash
# heap_memory - memtrace's own memory for a heap answer is said, bounded and
# true (#29: peak RSS per million objects stated and bounded; never harm the
# target: on a machine short of memory the kernel's OOM killer may pick the
# JVM). Two heaps of different shapes: FreezeWorkload 500000 (1.0 M objects,
# about one reference each) and RefDense 400000 (0.4 M objects, six
# references each plus the array's).
# - heap --retained, query, leaks and snapshot -o say "memtrace holds at most
#   X" once the copy's mark has counted the heap; memtrace's measured peak
#   RSS (getrusage's ru_maxrss of the process, an independent count) must be
#   at most X, and X at most 1.6 times it (a bound of use, not a guess);
# - --max-memory under X: refused before memtrace holds the records, exit 1,
#   the figures and the advice said; the JVM alive, its frozen copy gone, a
#   histo right after it works;
# - memtrace in a memory cgroup whose limit is under X (v1 or v2, made here):
#   refused the same way, naming the cgroup; without the bound the kernel
#   would have killed memtrace there (or, on a real node, maybe the JVM);
# - while it takes heap snapshots memtrace's oom_score_adj is 1000 (the
#   frozen copy's): the kernel kills it before the JVM, whose own stays 0;
# - a walk by JVMTI in a pause (--walk paused) peaks under 192 bytes per
#   reference it reports, and over --max-memory is refused mid-walk;
# - leaks on a heap that outgrows the bound at its third snapshot (RefDense
#   grows by a known count after each snapshot) answers from the two taken:
#   the holder named, its growth exact, exit 0;
# - doctor says the bound (--max-memory's exactly, else from MemAvailable).
# TIMEOUT: 180
. "$ROOT/tests/e2e/lib.sh"

jvm_start f -Xmx512m FreezeWorkload 500000 0
fpid=$JVM_PID
jvm_start d -Xmx512m RefDense 400000
dpid=$JVM_PID

# run NAME CMD...: memtrace's stdout/stderr into $TMPD/NAME.{out,err}, its
# exit code and peak RSS (KiB) into $TMPD/NAME.rc and .rss
run() {
	local name=$1; shift
	python3 - "$TMPD/$name" "$@" <<'PY'
import resource, subprocess, sys
base, cmd = sys.argv[1], sys.argv[2:]
with open(base + ".out", "w") as o, open(base + ".err", "w") as e:
    rc = subprocess.call(cmd, stdout=o, stderr=e)
open(base + ".rc", "w").write(f"{rc}\n")
open(base + ".rss", "w").write(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\n")
PY
}

# bound NAME: the MiB of "memtrace holds at most X" in NAME's stderr
bound() {
	python3 - "$TMPD/$1.err" <<'PY'
import re, sys
m = re.search(r"memtrace holds at most ([\d.]+) (KiB|MiB|GiB)", open(sys.argv[1]).read())
print(f"{float(m[1]) * {'KiB': 1 / 1024, 'MiB': 1, 'GiB': 1024}[m[2]]:.1f}" if m else "")
PY
}

for w in f d; do
	pid=${w}pid
	pid=${!pid}
	run "$w.retained" "$MEMTRACE" heap -p "$pid" --retained
	run "$w.query" "$MEMTRACE" query -p "$pid" -f "$ROOT/tests/dsl/03_reachable_from_threads.mq"
	run "$w.leaks" env MEMTRACE_PHASES=1 "$MEMTRACE" leaks -p "$pid" --duration 3 --snapshots 3
	# each snapshot's view where its copy wrote the records, by position,
	# in the pool the one before left (its pages made once)
	assert_eq "$(grep -c "kept where the copy wrote them, references by position" "$TMPD/$w.leaks.err")" 3 \
		"$w.leaks: snapshots whose view was built where the copy wrote them"
	assert_eq "$(grep -c "the one the snapshot before left" "$TMPD/$w.leaks.err")" 2 \
		"$w.leaks: snapshots written into the pool the one before left"
	run "$w.snapshot" "$MEMTRACE" snapshot -p "$pid" -o "$TMPD/$w.snap"
	for c in retained query leaks snapshot; do
		n="$w.$c"
		[ "$(cat "$TMPD/$n.rc")" = 0 ] || { cat "$TMPD/$n.err" >&2; fail "$n exited $(cat "$TMPD/$n.rc")"; }
		b=$(bound "$n")
		[ -n "$b" ] || { cat "$TMPD/$n.err" >&2; fail "$n: no 'memtrace holds at most' line"; }
		[ "$(grep -c "memtrace holds at most" "$TMPD/$n.err")" = 1 ] ||
			fail "$n: the bound said more than once"
		rss=$(cat "$TMPD/$n.rss")
		note "$n (JDK $JDK): bound $b MiB, peak RSS $(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }') MiB"
		awk -v b="$b" -v k="$rss" 'BEGIN { exit !(k / 1024 <= b) }' ||
			fail "$n: peak RSS $rss KiB over the bound said, $b MiB"
		awk -v b="$b" -v k="$rss" 'BEGIN { exit !(b <= 1.6 * k / 1024) }' ||
			fail "$n: the bound $b MiB is more than 1.6 times the peak RSS ($rss KiB)"
	done
done

# --max-memory under the bound: refused before the records are held
b=$(bound f.retained)
half=$(awk -v b="$b" 'BEGIN { printf "%dM", b / 2 }')
run f.max "$MEMTRACE" --max-memory "$half" heap -p "$fpid" --retained
assert_eq "$(cat "$TMPD/f.max.rc")" 1 "heap --retained over --max-memory $half: exit code"
assert_contains "$TMPD/f.max.err" "would take memtrace about"
assert_contains "$TMPD/f.max.err" "over --max-memory"
assert_contains "$TMPD/f.max.err" "memtrace histo"
rss=$(cat "$TMPD/f.max.rss")
note "refused at --max-memory $half: peak RSS $((rss / 1024)) MiB"
[ "$rss" -lt $((${half%M} * 1024)) ] || fail "refused, yet memtrace's peak RSS ($rss KiB) reached $half"
kill -0 "$fpid" || fail "the JVM died"
for ((i = 0; i < 50; i++)); do
	[ -z "$(ps --ppid "$fpid" -o comm= | grep memtrace-copy)" ] && break
	sleep 0.1
done
[ -z "$(ps --ppid "$fpid" -o comm= | grep memtrace-copy)" ] || fail "the frozen copy outlived the refusal"
run f.histo "$MEMTRACE" histo -p "$fpid"
assert_eq "$(cat "$TMPD/f.histo.rc")" 0 "histo after the refusal"
assert_contains "$TMPD/f.histo.out" FreezeWorkload
run f.badmax "$MEMTRACE" --max-memory 12parsecs heap -p "$fpid" --retained
assert_eq "$(cat "$TMPD/f.badmax.rc")" 2 "--max-memory 12parsecs: exit code"
assert_contains "$TMPD/f.badmax.err" "--max-memory takes a size"

# doctor says what memtrace may hold for a heap answer: --max-memory's
# figure exactly; without it at most MemAvailable (besides what memtrace
# holds: 64 MiB of slack) and at least a tenth of it
"$MEMTRACE" --json --max-memory 1G doctor -p "$fpid" >"$TMPD/doc1.json" 2>/dev/null || fail "doctor"
assert_eq "$(grep -o '"heap_answer_memory_max":[0-9]*' "$TMPD/doc1.json" | cut -d: -f2)" 1073741824 \
	"doctor's heap_answer_memory_max under --max-memory 1G"
"$MEMTRACE" --json doctor -p "$fpid" >"$TMPD/doc2.json" 2>/dev/null || fail "doctor"
room=$(grep -o '"heap_answer_memory_max":[0-9]*' "$TMPD/doc2.json" | cut -d: -f2)
avail=$(awk '/^MemAvailable:/ { printf "%.0f\n", $2 * 1024 }' /proc/meminfo) # (print would say 2.4e+10)
note "doctor: memtrace may hold $((room >> 20)) MiB for a heap answer; MemAvailable $((avail >> 20)) MiB"
[ -n "$room" ] && [ "$room" -le $((avail + (64 << 20))) ] && [ "$room" -ge $((avail / 10)) ] ||
	fail "doctor's heap_answer_memory_max ($room) against MemAvailable ($avail)"
"$MEMTRACE" doctor -p "$fpid" 2>/dev/null | grep -q "memory for heap answers: memtrace may hold up to" ||
	fail "doctor does not say what memtrace may hold for a heap answer"

# a walk by JVMTI in a pause holds each reported reference until its objects
# are numbered: its peak under 192 bytes a reference (the bound memtrace
# checks as they come), and refused mid-walk over --max-memory
run f.paused "$MEMTRACE" --walk paused heap -p "$fpid" --retained --max-pause 10000
[ "$(cat "$TMPD/f.paused.rc")" = 0 ] || { cat "$TMPD/f.paused.err" >&2; fail "--walk paused heap"; }
refs=$(grep -o 'objects, [0-9]* references' "$TMPD/f.paused.err" | head -1 | grep -o '[0-9]*')
[ -n "$refs" ] || { cat "$TMPD/f.paused.err" >&2; fail "--walk paused: no reference count"; }
rss=$(cat "$TMPD/f.paused.rss")
note "walk in a pause (JDK $JDK): $refs references, peak RSS $((rss / 1024)) MiB, bound $(((32 << 20) + refs * 101 / 100 * 192 >> 20)) MiB"
[ $((rss * 1024)) -le $(((32 << 20) + refs * 101 / 100 * 192)) ] ||
	fail "a walk in a pause: peak RSS $rss KiB over 32 MiB + 192 bytes a reference ($refs)"
run f.pausedmax "$MEMTRACE" --walk paused --max-memory 100M heap -p "$fpid" --retained --max-pause 10000
assert_eq "$(cat "$TMPD/f.pausedmax.rc")" 1 "a walk in a pause over --max-memory 100M: exit code"
assert_contains "$TMPD/f.pausedmax.err" "a heap walk by JVMTI (not frozen) reports each reference"
assert_contains "$TMPD/f.pausedmax.err" "over --max-memory 100.0 MiB"
kill -0 "$fpid" || fail "the JVM died"
run f.histo2 "$MEMTRACE" histo -p "$fpid"
assert_eq "$(cat "$TMPD/f.histo2.rc")" 0 "histo after a walk refused in a pause"

# a leak search on a heap that outgrows the bound: RefDense 300000 300000
# adds 300 000 Nodes after each snapshot, so the third holds 0.93 M objects
# (about 310 MiB of bound, each snapshot's view built where its copy wrote
# the records) where the first two held 0.33 and 0.63 M (about 125 and 220):
# --max-memory 260M refuses the third and leaks answers from the two taken
jvm_start g -Xmx1g RefDense 300000 300000
gpid=$JVM_PID
run g.leaks "$MEMTRACE" --max-memory 260M leaks -p "$gpid" --duration 4 --snapshots 5
[ "$(cat "$TMPD/g.leaks.rc")" = 0 ] || { cat "$TMPD/g.leaks.err" >&2; fail "leaks over the bound at its third snapshot"; }
assert_contains "$TMPD/g.leaks.err" "2 of 5 heap snapshots taken: the next would not fit in memory"
assert_contains "$TMPD/g.leaks.err" "over --max-memory 260.0 MiB"
assert_contains "$TMPD/g.leaks.out" "static RefDense.grown"
assert_contains "$TMPD/g.leaks.out" "+300000 RefDense\$Node"
copies_gone "$gpid" || fail "a frozen copy outlived leaks"
kill -0 "$gpid" || fail "the growing JVM died"
jvm_stop "$gpid"

# while it holds heaps memtrace is the OOM killer's first pick, not the JVM
"$MEMTRACE" leaks -p "$fpid" --duration 3 --snapshots 2 >/dev/null 2>"$TMPD/adj.err" &
mt=$!
adj=""
for ((i = 0; i < 50; i++)); do
	adj=$(cat "/proc/$mt/oom_score_adj" 2>/dev/null)
	[ "$adj" = 1000 ] && break
	sleep 0.1
done
wait $mt || { cat "$TMPD/adj.err" >&2; fail "leaks for oom_score_adj"; }
assert_eq "$adj" 1000 "memtrace's oom_score_adj while it takes heap snapshots"
[ "$(cat "/proc/$fpid/oom_score_adj")" = 0 ] || fail "the JVM's oom_score_adj changed"

# memtrace in a memory cgroup of its own whose limit is under the bound
cg=""
mine=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
if [ -d /sys/fs/cgroup/memory ] && [ -n "$mine" ]; then
	cg="/sys/fs/cgroup/memory${mine%/}/memtrace-e2e-$$"
	mkdir "$cg" && echo $((80 << 20)) >"$cg/memory.limit_in_bytes" || cg=""
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	mine=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
	cg="/sys/fs/cgroup${mine%/}/memtrace-e2e-$$"
	mkdir "$cg" && echo $((80 << 20)) >"$cg/memory.max" || cg=""
fi
if [ -n "$cg" ]; then
	run f.cg sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" heap -p "$3" --retained' sh \
		"$cg" "$MEMTRACE" "$fpid"
	rmdir "$cg" 2>/dev/null
	assert_eq "$(cat "$TMPD/f.cg.rc")" 1 "heap --retained in an 80 MiB cgroup: exit code"
	assert_contains "$TMPD/f.cg.err" "memtrace's memory cgroup has"
	assert_contains "$TMPD/f.cg.err" "memtrace did not hold it"
	kill -0 "$fpid" || fail "the JVM died"
else
	note "no memory cgroup could be made here: the cgroup part was not run"
fi
jvm_stop "$fpid"
jvm_stop "$dpid"
echo "ok"
