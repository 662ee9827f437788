#!/usr/bin/env bash
# leaks_pool - a `leaks` series writes each frozen copy's records into memory
# memtrace keeps (a memfd passed with the walk request):
#  - as memtrace's agent does now (MT_AP_FREEZE_INPLACE and _REFPOS): each
#    snapshot's view is built where its copy wrote the records, and from the
#    second snapshot on the copy writes into the memfd the snapshot before
#    left (MEMTRACE_PHASES says both, per snapshot);
#  - as with an agent older than that (MEMTRACE_NO_INPLACE=1,
#    MEMTRACE_RECPOOL=always: at any size): from the second snapshot on the
#    records are read out of a memfd kept for them, and memtrace says what
#    it keeps;
#  - either way the answer is the workload's own: each planted leak's
#    objects gained between the first and the last snapshot equal what
#    LeakGrowth counted it added between the two forks' instants;
#  - the JVM holds no descriptor of memtrace's memfd after the series, nor
#    after a kill -9 of memtrace in the middle of one; no copy is left; the
#    JVM is unharmed and the next `histo` works;
#  - MEMTRACE_RECPOOL=never: no memfd kept nor passed on.
# TIMEOUT: 150
. "$ROOT/tests/e2e/lib.sh"

mkfifo "$TMPD/in"
exec 3<>"$TMPD/in"
"$JAVA" -Xmx512m -cp "$CLASSES" LeakGrowth 1 10 20 20 200000 25 <"$TMPD/in" >"$TMPD/w.out" 2>&1 &
JVM_PID=$!
JVM_PIDS+=("$JVM_PID")
wait_for_line "$TMPD/w.out" READY 60 || { cat "$TMPD/w.out"; fail "LeakGrowth did not start"; }

# the JVM's descriptors of memtrace's memfd
pool_fds() { ls -l "/proc/$JVM_PID/fd" 2>/dev/null | grep -c "memtrace-records" || true; }

# check_truth JSON N WHAT: the leaks of the series against the workload's
# counts between its first and last snapshot (its Nth such count)
check_truth() {
	local at t1 truth
	at=$(json_get "$1" '[r for r in recs if r.get("event") == "snapshots"][0]["at_mono_ns"]')
	t1=$(echo "$at" | python3 -c 'import json,sys; a=json.load(sys.stdin); print(a[0], a[-1])')
	echo "between $t1" >&3
	for _ in $(seq 50); do
		[ "$(grep -c '^BETWEEN' "$TMPD/w.out")" -ge "$2" ] && break
		sleep 0.1
	done
	[ "$(grep -c '^BETWEEN' "$TMPD/w.out")" -ge "$2" ] || fail "the workload did not count"
	truth=$(sed -n 's/^BETWEEN //p' "$TMPD/w.out" | tail -1)
	note "$3; the workload added (index listeners local): $truth"
	python3 - "$1" $truth <<'PY' || fail "the leaks of $3"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
index, listeners, local = (int(x) for x in sys.argv[2:5])
leaks = [r for r in rows if r.get("event") == "leak"]
def gained(holder, cls):
    h = [r for r in leaks if r["holder"] == holder]
    assert len(h) == 1, (holder, [r["holder"] for r in leaks])
    assert h[0]["intervals_grown"] == h[0]["intervals"] == 3, h[0]
    return sum(c["gained"] for c in h[0]["classes"] if c["class"] == cls)
for holder, cls, n in [
        ("class LeakGrowth -> static LeakGrowth.BY_ID (java.util.HashMap)", "LeakGrowth$Invoice", index),
        ("class LeakGrowth -> static LeakGrowth.LISTENERS (java.util.ArrayList)", "LeakGrowth$Listener", listeners),
        ('a local variable in thread "keeper" (java.util.HashMap)', "LeakGrowth$Entry", local)]:
    g = gained(holder, cls)
    print("  %s: +%d, the workload +%d" % (holder, g, n), file=sys.stderr)
    assert abs(g - n) <= 1, (holder, g, n)
PY
}

# in place: each view where its copy wrote, the next copy into the same memfd
MEMTRACE_PHASES=1 "$MEMTRACE" --json leaks -p "$JVM_PID" --duration 6 --snapshots 4 \
	>"$TMPD/i.json" 2>"$TMPD/i.err" || { cat "$TMPD/i.err"; fail "leaks"; }
assert_eq "$(grep -c "kept where the copy wrote them, references by position" "$TMPD/i.err")" 4 \
	"snapshots whose view was built where the copy wrote them"
assert_eq "$(grep -c "the one the snapshot before left" "$TMPD/i.err")" 3 \
	"snapshots 2-4 written into the memfd the one before left"
grep -q "[1-9][0-9.]* MiB of them read from memtrace's pool\|kept for the" "$TMPD/i.err" &&
	fail "records copied out of a pool while the views were built in place"
assert_eq "$(pool_fds)" 0 "the JVM's descriptors of the memfd after the series"
check_truth "$TMPD/i.json" 1 "in place"

# as with an older agent: the records copied out of a pool kept for them
MEMTRACE_NO_INPLACE=1 MEMTRACE_RECPOOL=always MEMTRACE_PHASES=1 "$MEMTRACE" --json leaks \
	-p "$JVM_PID" --duration 6 --snapshots 4 >"$TMPD/l.json" 2>"$TMPD/l.err" ||
	{ cat "$TMPD/l.err"; fail "leaks"; }
grep "read from memtrace's pool\|kept for the" "$TMPD/l.err" >&2
reads=$(sed -n "s/.*ms, \([0-9.]*\) MiB of them read from memtrace's pool.*/\1/p" "$TMPD/l.err" | tail -n +2)
[ "$(echo "$reads" | wc -l)" -eq 3 ] || fail "pool reads for snapshots 2-4: '$reads'"
first=$(sed -n "s/.*ms, \([0-9.]*\) MiB of them read from memtrace's pool.*/\1/p" "$TMPD/l.err" | head -1)
assert_eq "$first" "0.0" "the first snapshot's records from a pool (none exists yet)"
echo "$reads" | awk '$1 < 1 { exit 1 }' || fail "a snapshot read less than 1 MiB from the pool: $reads"
grep -q "kept for the frozen copies' records" "$TMPD/l.err" || fail "the pool's memory not said"
assert_eq "$(pool_fds)" 0 "the JVM's descriptors of the pool after the series"
check_truth "$TMPD/l.json" 2 "pool reads (MiB): $(echo $reads)"

# kill -9 of memtrace once a memfd is passed on, the copy writing into it or not
MEMTRACE_PHASES=1 "$MEMTRACE" leaks -p "$JVM_PID" --duration 30 \
	--snapshots 30 >/dev/null 2>"$TMPD/k.err" &
MT=$!
wait_for_line "$TMPD/k.err" "heap snapshot 3 of" 60 || { cat "$TMPD/k.err"; fail "no third snapshot"; }
sleep 0.3
kill -9 "$MT"
wait "$MT" 2>/dev/null || true
grep -q "the one the snapshot before left" "$TMPD/k.err" ||
	{ cat "$TMPD/k.err"; fail "the killed run passed no memfd on"; }
for _ in $(seq 50); do
	[ "$(pool_fds)" -eq 0 ] && ! pgrep -P "$JVM_PID" -x memtrace-copy >/dev/null && break
	sleep 0.1
done
assert_eq "$(pool_fds)" 0 "the JVM's descriptors of the pool after memtrace's kill -9"
pgrep -P "$JVM_PID" -x memtrace-copy >/dev/null && fail "a frozen copy outlived memtrace"
kill -0 "$JVM_PID" || fail "the JVM died"
"$MEMTRACE" histo -p "$JVM_PID" >"$TMPD/h.out" 2>"$TMPD/h.err" || { cat "$TMPD/h.err"; fail "histo after the kill"; }
grep -q "LeakGrowth\$Invoice" "$TMPD/h.out" || fail "histo after the kill"

# never: no pool at all
MEMTRACE_RECPOOL=never MEMTRACE_PHASES=1 "$MEMTRACE" leaks -p "$JVM_PID" --duration 2 \
	--snapshots 3 >/dev/null 2>"$TMPD/n.err" || { cat "$TMPD/n.err"; fail "leaks without a pool"; }
grep -q "[1-9][0-9.]* MiB of them read from memtrace's pool\|kept for the\|the one the snapshot before left" \
	"$TMPD/n.err" && fail "a pool with MEMTRACE_RECPOOL=never"
kill -0 "$JVM_PID" || fail "the JVM died"
