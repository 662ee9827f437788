#!/usr/bin/env bash
# attach_cycles - 100 cycles of `attach --load` (the JVM's `load` command runs
# every time: Agent_OnAttach in the same library instance) + `detach` against
# one JVM. The JVM keeps computing the same checksum; its thread count, open
# fds and RSS stay within stated bounds of the values after the first attach:
#   threads +-3 (HotSpot adds/removes compiler threads on its own), fds +-2,
#   RSS +16 MiB (heap fixed and pre-touched, so heap growth does not count); exactly one agent thread and one agent library instance.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"
CYCLES=${CYCLES:-100}

threads() { ls /proc/$JVM_PID/task | wc -l; }
fds() { ls /proc/$JVM_PID/fd | wc -l; }
rss_kb() { awk '/^VmRSS:/{print $2}' /proc/$JVM_PID/status; }
maps() { grep -c 'libmemtrace-agent' /proc/$JVM_PID/maps; }

jvm_start w -Xms64m -Xmx64m -XX:+AlwaysPreTouch AttachWorkload
"$MEMTRACE" attach -p "$JVM_PID" >/dev/null || fail "first attach"
"$MEMTRACE" detach -p "$JVM_PID" >/dev/null || fail "first detach"
sleep 2
t0=$(threads) f0=$(fds) r0=$(rss_kb) m0=$(maps)
note "baseline after first attach: threads $t0 fds $f0 rss ${r0} KiB agent mappings $m0"

start=$(date +%s%N)
for ((i = 0; i < CYCLES; i++)); do
	"$MEMTRACE" -q --json attach --load -p "$JVM_PID" >"$TMPD/a.json" 2>"$TMPD/a.err" ||
		{ cat "$TMPD/a.err"; fail "attach #$i"; }
	"$MEMTRACE" detach -p "$JVM_PID" >/dev/null 2>"$TMPD/d.err" || { cat "$TMPD/d.err"; fail "detach #$i"; }
done
el=$(( ($(date +%s%N) - start) / 1000000 ))
note "$CYCLES cycles in $el ms ($((el / CYCLES)) ms per attach+detach)"
cat "$TMPD/a.json"
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["attach_count"]')" $((CYCLES + 1)) "Agent_OnAttach calls"
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["loaded_now"]')" True "load ran"

sleep 1
t1=$(threads) f1=$(fds) r1=$(rss_kb) m1=$(maps)
note "after $CYCLES cycles: threads $t1 fds $f1 rss ${r1} KiB agent mappings $m1"
note "deltas: threads $((t1 - t0)) fds $((f1 - f0)) rss $(( (r1 - r0) / 1024 )) MiB"
[ "$m1" -eq "$m0" ] || fail "agent mappings grew: $m0 -> $m1 (a second library instance)"
n=$(grep -l '^memtrace-agent' /proc/$JVM_PID/task/*/comm 2>/dev/null | wc -l)
assert_eq "$n" 1 "agent threads"
[ $((t1 - t0)) -le 3 ] && [ $((t0 - t1)) -le 3 ] || fail "threads $t0 -> $t1"
[ $((f1 - f0)) -le 2 ] && [ $((f0 - f1)) -le 2 ] || { ls -l /proc/$JVM_PID/fd >&2; fail "fds $f0 -> $f1"; }
[ $((r1 - r0)) -le $((16 * 1024)) ] || fail "RSS grew by $(( (r1 - r0) / 1024 )) MiB"

last=$(grep -c '^tick ' "$TMPD/w.out")
wait_for_line "$TMPD/w.out" "^tick $((last + 1)) " 10 || fail "JVM stopped ticking"
[ "$(awk '/^tick /{print $4}' "$TMPD/w.out" | sort -u | wc -l)" -eq 1 ] || fail "checksum changed"
assert_eq "$(agent_copies_left /tmp/.memtrace-0)" 0 "agent copies left in /tmp/.memtrace-0"
note "JDK $JDK stderr: $(grep -c 'loaded dynamically' "$TMPD/w.out") 'loaded dynamically' lines, $(grep -c '^WARNING' "$TMPD/w.out") WARNING lines in total"
exit 0
