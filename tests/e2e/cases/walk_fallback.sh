#!/usr/bin/env bash
# walk_fallback - the untagged heap walk checks the CallbackWrapper layout it
# relies on (user/agent/heapwalk.c); when the check fails the agent throws the
# walk away, logs it once, and walks again with JVMTI tags, for good. Forced
# here with MEMTRACE_AGENT_TEST_LAYOUT=wrong in the JVM's environment (the
# agent reads the word before the oop: on JDK 17 a null pointer, caught by
# the agent during the pause; on JDK 25 a constant non-null pointer, caught by
# memtrace when it numbers the objects (user/heap/walkids.c: no referrer is an
# object of the walk), which asks again with MT_AP_HEAP_NOUNTAGGED). The
# answer must be the exact one (202 objects held), the JVM's stderr must say
# why, both walks' pauses must be printed, the session ends with the
# tag-clearing stop, and a second query takes the tagged walk directly (no
# second log line).
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

export MEMTRACE_AGENT_TEST_LAYOUT=wrong
jvm_start w -Xmx256m QueryWorkload planted 100000
unset MEMTRACE_AGENT_TEST_LAYOUT

q() { "$MEMTRACE" query -p "$JVM_PID" -f "$ROOT/tests/query/reach_holder.mq" 2>"$TMPD/e"; }
assert_eq "$(q)" '{"held":{"holder":{"n":202}}}' "the answer after the fallback"
cat "$TMPD/e"
grep -q "could not tell objects apart by address" "$TMPD/w.out" ||
	{ cat "$TMPD/w.out"; fail "the agent did not log the fallback"; }
# caught during the pause (JDK 17): the agent walks again within the request,
# two safepoints, so the printed pause is the agent's timing of both; caught by
# memtrace after it (JDK 25): memtrace warns, printing the first walk's pause,
# and asks again
grep -q "timed by the agent" "$TMPD/e" || grep -q "did not check out.*walking again with tags (that walk paused the JVM for" "$TMPD/e" ||
	fail "the first walk's pause is not accounted for"
grep -q "releasing the walk's tags" "$TMPD/e" || fail "the tagged walk's tags were not released"
assert_eq "$(q)" '{"held":{"holder":{"n":202}}}' "the second answer"
assert_eq "$(grep -c "could not tell objects apart" "$TMPD/w.out")" 1 "logged once"
"$MEMTRACE" histo -p "$JVM_PID" --json >"$TMPD/h.json" 2>/dev/null || fail "histo"
assert_eq "$(json_get "$TMPD/h.json" '[r["instances"] for r in recs if r.get("class") == "QueryWorkload$QNode"][0]')" \
	100100 "histo's QNode count (tagged walk)"
kill -0 "$JVM_PID" || fail "the JVM died"
