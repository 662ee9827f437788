#!/usr/bin/env bash
# alloc_nosymtab - a JVM whose libjvm.so is stripped (no .symtab): `alloc`
# says why it cannot sample and what to use instead; `doctor` says the same.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/jdkcopy.sh"

jdk_copy "$JAVA_HOME" "$TMPD/jdk" nosymtab || fail "cannot make the JDK copy"
readelf -S "$TMPD/jdk/lib/server/libjvm.so" | grep -q '\.symtab' && fail "the copy still has .symtab"
"$TMPD/jdk/bin/java" -cp "$CLASSES" GcWorkload --go "$TMPD/never" >"$TMPD/w.out" 2>&1 &
JVM_PIDS+=($!)
pid=$!
wait_for_line "$TMPD/w.out" READY 30 || fail "JVM did not start"
"$MEMTRACE" alloc -p $pid --duration 1 >"$TMPD/o" 2>"$TMPD/e" && fail "alloc succeeded without symbols"
grep -q "stripped (no .symtab)" "$TMPD/e" || { cat "$TMPD/e"; fail "no clear message"; }
grep -q "memtrace age" "$TMPD/e" || fail "no alternative named"
"$MEMTRACE" doctor -p $pid --json >"$TMPD/d.json"
assert_eq "$(json_get "$TMPD/d.json" 'recs[0]["symtab"]')" False "doctor symtab"
assert_eq "$(json_get "$TMPD/d.json" 'recs[0]["alloc_symbols"]')" False "doctor alloc symbols"
rm -rf "$TMPD/jdk"
