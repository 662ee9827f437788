#!/usr/bin/env bash
# ps_list - `memtrace ps` lists a JVM with its pid, main class and JDK version.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w GcWorkload --go "$TMPD/never"
"$MEMTRACE" ps --json >"$TMPD/ps.json" || fail "ps exited $?"
n=$(json_get "$TMPD/ps.json" "len([r for r in recs if r['pid'] == $JVM_PID and r['main'] == 'GcWorkload'])")
assert_eq "$n" 1 "ps lists the JVM once with its main class"
ver=$(json_get "$TMPD/ps.json" "[r for r in recs if r['pid'] == $JVM_PID][0]['jdk_version']")
oracle=$(jtool jcmd "$JVM_PID" VM.version | sed -n 's/^JDK \([0-9.]*\).*/\1/p')
assert_eq "$ver" "$oracle" "JDK version vs jcmd VM.version"
"$MEMTRACE" ps >"$TMPD/ps.txt" || fail "ps (text)"
assert_contains "$TMPD/ps.txt" "^$JVM_PID .*GcWorkload"
