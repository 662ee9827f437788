#!/usr/bin/env bash
# leaks_pool - from the second snapshot of a `leaks` series on, the frozen
# copy writes its records into memory memtrace keeps (a memfd passed with the
# walk request, MT_AP_FREEZE_POOL; MEMTRACE_RECPOOL=always: at any size):
#  - memtrace read snapshots 2..4's records from its pool (MEMTRACE_PHASES),
#    said what it keeps, and the answer is the workload's own: each planted
#    leak's objects gained between the first and the last snapshot equal
#    what LeakGrowth counted it added between the two forks' instants;
#  - the JVM holds no descriptor of memtrace's memfd after the series, nor
#    after a kill -9 of memtrace in the middle of one; no copy is left; the
#    JVM is unharmed and the next `histo` works;
#  - MEMTRACE_RECPOOL=never: no pool (the records out of the copy, as before).
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

mkfifo "$TMPD/in"
exec 3<>"$TMPD/in"
"$JAVA" -Xmx512m -cp "$CLASSES" LeakGrowth 1 10 20 20 200000 <"$TMPD/in" >"$TMPD/w.out" 2>&1 &
JVM_PID=$!
JVM_PIDS+=("$JVM_PID")
wait_for_line "$TMPD/w.out" READY 60 || { cat "$TMPD/w.out"; fail "LeakGrowth did not start"; }

# the JVM's descriptors of memtrace's memfd
pool_fds() { ls -l "/proc/$JVM_PID/fd" 2>/dev/null | grep -c "memtrace-records" || true; }

MEMTRACE_RECPOOL=always MEMTRACE_PHASES=1 "$MEMTRACE" --json leaks -p "$JVM_PID" --duration 6 \
	--snapshots 4 >"$TMPD/l.json" 2>"$TMPD/l.err" || { cat "$TMPD/l.err"; fail "leaks"; }
grep "read from memtrace's pool\|kept for the" "$TMPD/l.err" >&2
reads=$(sed -n "s/.*ms, \([0-9.]*\) MiB of them read from memtrace's pool.*/\1/p" "$TMPD/l.err" | tail -n +2)
[ "$(echo "$reads" | wc -l)" -eq 3 ] || fail "pool reads for snapshots 2-4: '$reads'"
first=$(sed -n "s/.*ms, \([0-9.]*\) MiB of them read from memtrace's pool.*/\1/p" "$TMPD/l.err" | head -1)
assert_eq "$first" "0.0" "the first snapshot's records from a pool (none exists yet)"
echo "$reads" | awk '$1 < 1 { exit 1 }' || fail "a snapshot read less than 1 MiB from the pool: $reads"
grep -q "kept for the frozen copies' records" "$TMPD/l.err" || fail "the pool's memory not said"
assert_eq "$(pool_fds)" 0 "the JVM's descriptors of the pool after the series"

at=$(json_get "$TMPD/l.json" '[r for r in recs if r.get("event") == "snapshots"][0]["at_mono_ns"]')
t1=$(echo "$at" | python3 -c 'import json,sys; a=json.load(sys.stdin); print(a[0], a[-1])')
echo "between $t1" >&3
wait_for_line "$TMPD/w.out" BETWEEN 5 || fail "the workload did not count"
truth=$(sed -n 's/^BETWEEN //p' "$TMPD/w.out" | tail -1)
note "pool reads (MiB): $(echo $reads); the workload added (index listeners local): $truth"
python3 - "$TMPD/l.json" $truth <<'PY' || { cat "$TMPD/l.err"; fail "the leaks from pooled snapshots"; }
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

# kill -9 of memtrace once the pool exists, the copy writing into it or not
MEMTRACE_RECPOOL=always MEMTRACE_PHASES=1 "$MEMTRACE" leaks -p "$JVM_PID" --duration 30 \
	--snapshots 30 >/dev/null 2>"$TMPD/k.err" &
MT=$!
wait_for_line "$TMPD/k.err" "heap snapshot 3 of" 60 || { cat "$TMPD/k.err"; fail "no third snapshot"; }
sleep 0.3
kill -9 "$MT"
wait "$MT" 2>/dev/null || true
grep -q "[1-9][0-9.]* MiB of them read from memtrace's pool" "$TMPD/k.err" ||
	{ cat "$TMPD/k.err"; fail "the killed run used no pool"; }
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
grep -q "[1-9][0-9.]* MiB of them read from memtrace's pool\|kept for the" "$TMPD/n.err" &&
	fail "a pool with MEMTRACE_RECPOOL=never"
kill -0 "$JVM_PID" || fail "the JVM died"
