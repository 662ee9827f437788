#!/usr/bin/env bash
# gc_vs_jfr - `memtrace gc` against JFR on the same run, for G1, Parallel, Serial,
# and G1 with concurrent cycles (System.gc() with -XX:+ExplicitGCInvokesConcurrent:
# JFR's G1Old is the whole concurrent cycle; memtrace reports its remark and
# cleanup pauses as kind "pause", compared with JFR's phase pauses).
# JFR records from the JVM's start; the workload collects only after memtrace
# has started, and the comparison keeps JFR's collections from memtrace's start on.
# Causes: each collection's cause equals JFR's; the workload makes "Allocation
# Failure" / "G1 Evacuation Pause", "System.gc()", "Diagnostic Command" (GC.run)
# and, under G1, "G1 Humongous Allocation".
# Probes: uprobe_multi links (the kernel's, 6.6+) for G1, Parallel and G1conc;
# Serial runs with MEMTRACE_NO_UPROBE_MULTI=1, the perf-event uprobes of a
# kernel before 6.6.
# ALONE: collection durations against JFR's within 5 %
# TIMEOUT: 240
. "$ROOT/tests/e2e/lib.sh"

for gc in G1 Parallel Serial G1conc; do
	rm -f "$TMPD/go"
	flags=(-XX:+Use${gc}GC)
	[ $gc = G1conc ] && flags=(-XX:+UseG1GC -XX:+ExplicitGCInvokesConcurrent)
	more=()
	[ $gc = G1 ] && more=(--humongous-mb 300 --keep-mb 150)
	jvm_start "w$gc" -Xmx256m -Xms256m "${flags[@]}" -XX:StartFlightRecording=name=mt,settings=default \
		GcWorkload --go "$TMPD/go" --alloc-mb 1024 --full 3 --dcmd 1 "${more[@]}"
	pid=$JVM_PID
	um=
	[ $gc = Serial ] && um=1
	MEMTRACE_NO_UPROBE_MULTI=$um "$MEMTRACE" gc -p "$pid" --json >"$TMPD/mt.$gc.json" 2>"$TMPD/mt.$gc.err" &
	mt=$!
	wait_for_line "$TMPD/mt.$gc.json" '"start"' 20 || { cat "$TMPD/mt.$gc.err"; fail "memtrace gc did not start ($gc)"; }
	touch "$TMPD/go"
	wait_for_line "$TMPD/w$gc.out" DONE 60 || fail "workload did not finish ($gc)"
	sleep 0.3
	kill -INT "$mt"; wait "$mt"; rc=$?
	[ $rc -eq 0 ] || { cat "$TMPD/mt.$gc.err"; fail "memtrace gc exited $rc ($gc)"; }
	jtool jcmd "$pid" JFR.dump name=mt filename="$TMPD/$gc.jfr" >/dev/null || fail "JFR.dump"
	jtool jfr print --json --events jdk.GarbageCollection,jdk.GCHeapSummary,jdk.GCPhasePause \
		"$TMPD/$gc.jfr" >"$TMPD/$gc.jfr.json" || fail "jfr print"
	echo "== $gc (JDK $JDK)"
	python3 "$ROOT/tests/e2e/gc_vs_jfr.py" "$TMPD/mt.$gc.json" "$TMPD/$gc.jfr.json" || fail "$gc: memtrace and JFR disagree"
	jvm_stop "$pid"
done
