#!/usr/bin/env bash
# walk_gcs - the untagged heap walk (objects told apart by address, classes
# through their JNI local references; user/agent/heapwalk.c) under every
# collector of the JDK: Serial, Parallel, G1, ZGC, Shenandoah. Each gives the
# exact answers (202 objects held by QHolder over fields and array elements;
# 1100 QNode in histo, as `jmap -histo:live` counts them) without falling
# back to tags (no line on the JVM's stderr), and the JVM lives on.
# Serial, Parallel and G1 are walked in a frozen copy of the JVM (heap
# snapshots' default), with the unused space of their spaces/regions kept out
# of the copy; Shenandoah in a frozen copy of its whole heap (the copy's mark
# follows what its cycles moved: walk_shenandoah); ZGC in a frozen copy whose
# used heap the copy copied in the pause (its heap is shared memory: walk_zgc).
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

for gc in UseSerialGC UseParallelGC UseG1GC UseZGC UseShenandoahGC; do
	if ! "$JAVA" -XX:+$gc -version >/dev/null 2>&1; then
		note "$gc: not in this JDK"
		continue
	fi
	jvm_start "$gc" -XX:+$gc -Xmx256m QueryWorkload planted 1000
	assert_eq "$("$MEMTRACE" query -p "$JVM_PID" -f "$ROOT/tests/query/reach_holder.mq" 2>"$TMPD/e")" \
		'{"held":{"holder":{"n":202}}}' "$gc: objects held"
	"$MEMTRACE" histo -p "$JVM_PID" --json >"$TMPD/h.json" 2>/dev/null || fail "$gc: histo"
	live=$(jtool jmap -histo:live "$JVM_PID" | awk '$4 == "QueryWorkload$QNode" { print $2 }')
	assert_eq "$(json_get "$TMPD/h.json" '[r["instances"] for r in recs if r.get("class") == "QueryWorkload$QNode"][0]')" \
		"$live" "$gc: histo's QNode vs jmap -histo:live"
	assert_eq "$live" 1100 "$gc: QNode by construction"
	if grep -q "could not tell objects apart" "$TMPD/$gc.out"; then fail "$gc: fell back to tags"; fi
	case $gc in
	UseZGC)
		grep -q "frozen: fork .*, the used heap (.*) copied in .*; the copy marked" "$TMPD/e" ||
			{ cat "$TMPD/e"; fail "$gc: not frozen"; }
		"$MEMTRACE" --walk frozen histo -p "$JVM_PID" >/dev/null 2>"$TMPD/e2" ||
			{ cat "$TMPD/e2"; fail "$gc: --walk frozen refused"; } ;;
	UseShenandoahGC)
		grep -q "frozen: fork .* the copy marked" "$TMPD/e" || { cat "$TMPD/e"; fail "$gc: not frozen"; } ;;
	*)
		grep -q "frozen: fork .* of unused heap not shared" "$TMPD/e" ||
			{ cat "$TMPD/e"; fail "$gc: not frozen"; }
		grep -q "frozen: fork [0-9.]* [mu]s, 0 B of unused" "$TMPD/e" &&
			{ cat "$TMPD/e"; fail "$gc: the unused heap was shared"; } ;;
	esac
	note "$gc: $(grep -o 'paused JVM [0-9]* for [0-9.]* [mu]s.*' "$TMPD/e" | cut -c1-150)"
	kill -0 "$JVM_PID" || fail "$gc: the JVM died"
	kill "$JVM_PID"; wait "$JVM_PID" 2>/dev/null || true
done
