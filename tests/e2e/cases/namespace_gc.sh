#!/usr/bin/env bash
# namespace_gc - a JVM in its own pid and mount namespace, with a private
# /tmp, traced from outside: ps shows its in-namespace pid, doctor says it
# runs in other namespaces, gc sees its collections.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

# The JVM gets a private /tmp, so what it shares with us lives elsewhere
# (the checkout itself may be under /tmp too).
classes_outside_tmp || fail "cannot copy the classes"
SH=$OUT_CLASSES
unshare --pid --mount --fork --mount-proc bash -c '
	mount -t tmpfs tmpfs /tmp
	exec "$0" -Xmx128m -cp "$1" GcWorkload --go "$2/go" --alloc-mb 256 --full 2
  ' "$JAVA" "$SH" "$SH" >"$TMPD/ns.out" 2>&1 &
JVM_PIDS+=($!)
wait_for_line "$TMPD/ns.out" READY 60 || { cat "$TMPD/ns.out"; fail "namespaced JVM did not start"; }
pid=$(pgrep -f "GcWorkload --go $SH/go" | while read -r p; do
	[ "$(readlink /proc/$p/exe)" = "$(readlink -f "$JAVA")" ] && echo "$p"; done | head -1)
[ -n "$pid" ] || fail "cannot find the namespaced JVM's host pid"
JVM_PIDS+=("$pid")

"$MEMTRACE" ps --json >"$TMPD/ps.json"
assert_eq "$(json_get "$TMPD/ps.json" "[r for r in recs if r['pid'] == $pid][0]['nspid']")" 1 "in-namespace pid"
assert_eq "$(json_get "$TMPD/ps.json" "[r for r in recs if r['pid'] == $pid][0]['container']")" True "container flag"
"$MEMTRACE" doctor -p "$pid" --json >"$TMPD/doc.json" || fail "doctor failed"
assert_eq "$(json_get "$TMPD/doc.json" 'recs[0]["other_pidns"] and recs[0]["other_mntns"]')" True "other namespaces"

"$MEMTRACE" gc -p "$pid" --json >"$TMPD/gc.json" 2>"$TMPD/gc.err" &
mt=$!
wait_for_line "$TMPD/gc.json" '"start"' 20 || { cat "$TMPD/gc.err"; fail "gc did not start"; }
touch "$SH/go"
wait_for_line "$TMPD/ns.out" DONE 60 || fail "workload did not finish"
sleep 0.3
kill -INT $mt; wait $mt || fail "gc exited non-zero"
full=$(json_get "$TMPD/gc.json" 'len([r for r in recs if r["event"] == "gc" and r["full"]])')
young=$(json_get "$TMPD/gc.json" 'len([r for r in recs if r["event"] == "gc" and not r["full"]])')
assert_eq "$full" 2 "the two System.gc() of the namespaced JVM"
[ "$young" -ge 1 ] || fail "no young collection seen"
