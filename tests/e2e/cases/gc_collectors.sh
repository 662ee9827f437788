#!/usr/bin/env bash
# gc_collectors - pauses are pauses and cycles are cycles, for every collector
# the JDK has: Serial, Parallel, G1, G1 with concurrent cycles (System.gc()
# with -XX:+ExplicitGCInvokesConcurrent: remark and cleanup), ZGC (JDK 17:
# the non-generational one, its only ZGC; JDK 25: generational, its only
# ZGC) and Shenandoah (skipped where `java -XX:+UseShenandoahGC` refuses).
# One allocation burst per collector with JFR running; `memtrace gc`,
# `memtrace record` and `memtrace top` watch the same run, and
# tests/e2e/gc_collectors.py compares them with JFR's jdk.GCPhasePause and
# jdk.GarbageCollection inside memtrace's window: every JFR pause is one
# memtrace pause and the reverse; the pauses of concurrent cycles (G1's
# remark and cleanup, every ZGC and Shenandoah pause) equal JFR's to the
# microsecond, per pause and per GC (sumOfPauses, longestPause): both read
# the JVM's GCTimer; every stop-the-world collection and every ZGC and
# Shenandoah cycle equals its JFR jdk.GarbageCollection's duration to the
# microsecond (both read GCTracer's Ticks). report's records equal gc's; top
# never counts remark, cleanup or a ZGC/Shenandoah pause as young. Last, ZGC
# on a copy of the JDK whose libjvm lost its .symtab: the same pauses,
# bracketed by gc__begin/gc__end (unnamed, each no longer than JFR's).
# Not ALONE: memtrace and JFR read the same timers of the JVM, so a busy
# machine moves neither against the other (passed with a busy loop on the
# other core and beside docs_samples and alloc_deep, stop 50).
# TIMEOUT: 420
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/jdkcopy.sh"

gcs=(Serial Parallel G1 G1conc Z)
if "$JAVA" -XX:+UseShenandoahGC -version >/dev/null 2>&1; then
	gcs+=(Shenandoah)
else
	note "JDK $JDK has no Shenandoah: not compared"
fi
jdk_copy "$JAVA_HOME" "$TMPD/jdk-nosymtab" nosymtab || fail "cannot make a stripped JDK copy"
gcs+=(Znosym)
for gc in "${gcs[@]}"; do
	D="$TMPD/$gc"
	mkdir -p "$D"
	flags=(-XX:+Use${gc}GC)
	[ $gc = G1conc ] && flags=(-XX:+UseG1GC -XX:+ExplicitGCInvokesConcurrent)
	[ $gc = Znosym ] && flags=(-XX:+UseZGC) && JAVA="$TMPD/jdk-nosymtab/bin/java"
	jvm_start "w$gc" -Xmx256m -Xms256m "${flags[@]}" -XX:StartFlightRecording=name=mt,settings=default \
		GcWorkload --go "$D/go" --alloc-mb 768 --full 2
	pid=$JVM_PID
	"$MEMTRACE" gc -p "$pid" --json >"$D/mt.json" 2>"$D/mt.err" &
	g=$!
	"$MEMTRACE" record -p "$pid" -o "$D/rec.gz" 2>"$D/rec.err" &
	r=$!
	"$MEMTRACE" top -p "$pid" --interval 1 --json >"$D/top.json" 2>"$D/top.err" &
	t=$!
	wait_for_line "$D/mt.json" '"start"' 20 || { cat "$D/mt.err"; fail "memtrace gc did not start ($gc)"; }
	wait_for_line "$D/rec.err" 'recording pid' 20 || { cat "$D/rec.err"; fail "record did not start ($gc)"; }
	wait_for_line "$D/top.json" '"event":"top"' 20 || { cat "$D/top.err"; fail "top did not start ($gc)"; }
	touch "$D/go"
	wait_for_line "$TMPD/w$gc.out" DONE 90 || fail "workload did not finish ($gc)"
	sleep 1.5 # top's interval in flight ends
	kill -INT "$g" "$r" "$t"
	wait "$g" || { cat "$D/mt.err"; fail "memtrace gc failed ($gc)"; }
	wait "$r" || { cat "$D/rec.err"; fail "record failed ($gc)"; }
	wait "$t" || { cat "$D/top.err"; fail "top failed ($gc)"; }
	[ $gc = Znosym ] && ! grep -q no_pauses "$D/mt.json" && fail "gc did not say its pauses are untimed"
	jtool jcmd "$pid" JFR.dump name=mt filename="$D/r.jfr" >/dev/null || fail "JFR.dump ($gc)"
	jvm_stop "$pid"
	jtool jfr print --json --events jdk.GarbageCollection,jdk.GCPhasePause "$D/r.jfr" \
		>"$D/jfr.json" || fail "jfr print ($gc)"
	"$MEMTRACE" report "$D/rec.gz" --json >"$D/report.json" 2>"$D/report.err" ||
		{ cat "$D/report.err"; fail "report failed ($gc)"; }
	note "== $gc (JDK $JDK)"
	python3 "$ROOT/tests/e2e/gc_collectors.py" "$gc" "$D" >"$D/cmp.txt" 2>&1
	rc=$?
	sed 's/^/    /' "$D/cmp.txt" >&2
	[ $rc -eq 0 ] || fail "$gc: memtrace and JFR disagree (see above)"
done
