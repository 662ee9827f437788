#!/usr/bin/env bash
# age_cycles - 100 sampling sessions (`memtrace age`, each: HELLO,
# SAMPLE_START at 16 KiB, events streamed, SAMPLE_STOP, DETACH) against one
# JVM. Each session creates and disposes its own JVMTI environment. The JVM
# keeps computing the same checksum; thread count, open fds and RSS stay
# within bounds of the values after the first session: threads +-3, fds +-2,
# RSS +24 MiB (heap fixed and pre-touched); one agent thread, one library.
# TIMEOUT: 100
. "$ROOT/tests/e2e/lib.sh"
CYCLES=${CYCLES:-100}

threads() { ls /proc/$JVM_PID/task | wc -l; }
fds() { ls /proc/$JVM_PID/fd | wc -l; }
rss_kb() { awk '/^VmRSS:/{print $2}' /proc/$JVM_PID/status; }

jvm_start w -Xms64m -Xmx64m -XX:+AlwaysPreTouch AttachWorkload
"$MEMTRACE" -q age -p "$JVM_PID" --duration 1 --interval 16k >/dev/null || fail "first session"
sleep 1
t0=$(threads) f0=$(fds) r0=$(rss_kb)
note "baseline: threads $t0 fds $f0 rss $r0 KiB"
start=$(date +%s%N)
for ((i = 0; i < CYCLES; i++)); do
	"$MEMTRACE" -q --json age -p "$JVM_PID" --duration 0.1 --interval 16k >"$TMPD/a.json" 2>"$TMPD/a.err" ||
		{ cat "$TMPD/a.err"; fail "session #$i"; }
done
el=$(( ($(date +%s%N) - start) / 1000000 ))
note "$CYCLES sessions in $el ms"
cat "$TMPD/a.json"
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["agent_counters"]')" True "final counters"
sleep 1
t1=$(threads) f1=$(fds) r1=$(rss_kb)
note "after: threads $t1 fds $f1 rss $r1 KiB (deltas $((t1 - t0)) $((f1 - f0)) $(( (r1 - r0) / 1024 )) MiB)"
assert_eq "$(grep -c libmemtrace-agent /proc/$JVM_PID/maps | awk '{print ($1 > 0)}')" 1 "agent mapped"
n=$(grep -l '^memtrace-agent' /proc/$JVM_PID/task/*/comm 2>/dev/null | wc -l)
assert_eq "$n" 1 "agent threads"
[ $((t1 - t0)) -le 3 ] && [ $((t0 - t1)) -le 3 ] || fail "threads $t0 -> $t1"
[ $((f1 - f0)) -le 2 ] && [ $((f0 - f1)) -le 2 ] || { ls -l /proc/$JVM_PID/fd >&2; fail "fds $f0 -> $f1"; }
[ $((r1 - r0)) -le $((24 * 1024)) ] || fail "RSS grew by $(( (r1 - r0) / 1024 )) MiB"
last=$(grep -c '^tick ' "$TMPD/w.out")
wait_for_line "$TMPD/w.out" "^tick $((last + 1)) " 10 || fail "JVM stopped ticking"
[ "$(awk '/^tick /{print $4}' "$TMPD/w.out" | sort -u | wc -l)" -eq 1 ] || fail "checksum changed"
exit 0
