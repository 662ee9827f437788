#!/usr/bin/env bash
# java_fields - Java field offsets read from a live JVM's class metadata
# (user/jvm/javafield.c: JDK 17's FieldInfo u2 records, JDK 21+'s UNSIGNED5
# stream) equal the JVM's own answer, sun.misc.Unsafe.objectFieldOffset, for
# the fields `memtrace locks --now` reads and a few others (inherited fields
# through the superclass chain included).
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

fields=(java/lang/Thread.parkBlocker java/lang/Thread.eetop java/lang/Thread.name
	java/lang/Thread.tid java/lang/String.value java/lang/String.coder
	java/util/concurrent/locks/AbstractOwnableSynchronizer.exclusiveOwnerThread
	'java/util/concurrent/locks/ReentrantLock$NonfairSync.exclusiveOwnerThread'
	java/util/concurrent/locks/AbstractQueuedSynchronizer.state java/util/HashMap.table
	java/util/HashMap.loadFactor)
jvm_start f -Xmx64m FieldOffsets "${fields[@]}"
args=()
for f in "${fields[@]}"; do args+=(--java-field "$f"); done
"$MEMTRACE" vmstructs -p "$JVM_PID" "${args[@]}" >"$TMPD/mt.json" 2>"$TMPD/mt.err" ||
	{ cat "$TMPD/mt.err" "$TMPD/mt.json"; fail "memtrace vmstructs --java-field failed"; }
python3 - "$TMPD/f.out" "$TMPD/mt.json" <<'PY' || fail "offsets differ"
import json, sys
want = dict(l.split() for l in open(sys.argv[1]) if l.count(" ") == 1 and "/" in l)
got = {r["java_field"]: r.get("offset") for r in map(json.loads, open(sys.argv[2]))}
assert len(want) == 11, want
for k, v in want.items():
    assert got.get(k) == int(v), (k, v, got.get(k))
print("offsets equal Unsafe.objectFieldOffset:", want)
PY
"$MEMTRACE" vmstructs -p "$JVM_PID" --java-field java/lang/Thread.noSuchField >"$TMPD/bad.json" 2>&1 && fail "an unknown field succeeded"
assert_contains "$TMPD/bad.json" '"error"'
