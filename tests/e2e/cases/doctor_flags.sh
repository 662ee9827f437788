#!/usr/bin/env bash
# doctor_flags - doctor reads the DTrace flags right: the same JVM with and
# without -XX:+DTraceAllocProbes, checked against `jcmd VM.flags -all`.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

for want in false true; do
	extra=()
	[ $want = true ] && extra=(-XX:+DTraceAllocProbes)
	jvm_start "w$want" "${extra[@]}" GcWorkload --go "$TMPD/never"
	"$MEMTRACE" doctor -p "$JVM_PID" --json >"$TMPD/d.$want.json" || fail "doctor exited $?"
	got=$(json_get "$TMPD/d.$want.json" 'str(recs[0]["DTraceAllocProbes"]).lower()')
	oracle=$("$JAVA_HOME/bin/jcmd" "$JVM_PID" VM.flags -all | awk '$2 == "DTraceAllocProbes" {print $4}')
	assert_eq "$got" "$want" "doctor DTraceAllocProbes"
	assert_eq "$got" "$oracle" "doctor vs jcmd VM.flags"
	for f in DTraceMonitorProbes DTraceMethodProbes; do
		got=$(json_get "$TMPD/d.$want.json" "str(recs[0][\"$f\"]).lower()")
		oracle=$("$JAVA_HOME/bin/jcmd" "$JVM_PID" VM.flags -all | awk -v f=$f '$2 == f {print $4}')
		assert_eq "$got" "$oracle" "doctor $f vs jcmd"
	done
	# ExtendedDTraceProbes: present in JDK 17, gone from JDK 25
	ext=$("$JAVA_HOME/bin/jcmd" "$JVM_PID" VM.flags -all | awk '$2 == "ExtendedDTraceProbes"' | wc -l)
	absent=$(json_get "$TMPD/d.$want.json" '"ExtendedDTraceProbes" in recs[0]["flags_absent"]')
	if [ "$ext" -eq 0 ]; then assert_eq "$absent" True "ExtendedDTraceProbes absent"; else assert_eq "$absent" False "ExtendedDTraceProbes present"; fi
	assert_eq "$(json_get "$TMPD/d.$want.json" 'recs[0]["gc_source"]')" usdt "gc source"
	assert_eq "$(json_get "$TMPD/d.$want.json" 'recs[0]["jdk_major"]')" "$JDK" "JDK major"
	assert_eq "$(json_get "$TMPD/d.$want.json" 'recs[0]["heap_walk"]')" frozen "heap snapshots frozen"
	# parked virtual threads' stacks read in the copy: JDK 25 (its libjvm has
	# the chunk iteration); JDK 17 has no virtual threads (no such key)
	assert_eq "$(json_get "$TMPD/d.$want.json" 'str(recs[0].get("heap_walk_vthread_stacks")).lower()')" \
		"$([ "$JDK" = 17 ] && echo none || echo true)" "virtual threads' stacks in the copy"
	# huge pages for snapshot arrays unless a virtio balloon reports free
	# pages (feature bit 5 in sysfs, read here), or the environment says
	huge=true
	for f in /sys/bus/virtio/drivers/virtio_balloon/virtio*/features; do
		[ -r "$f" ] && [ "$(cut -c6 "$f")" = 1 ] && huge=false
	done
	assert_eq "$(json_get "$TMPD/d.$want.json" 'str(recs[0]["snapshot_hugepages"]).lower()')" "$huge" "snapshot huge pages"
	MEMTRACE_HUGEPAGES=1 "$MEMTRACE" doctor -p "$JVM_PID" --json >"$TMPD/h.json" || fail "doctor exited $?"
	assert_eq "$(json_get "$TMPD/h.json" 'str(recs[0]["snapshot_hugepages"]).lower()')" true "MEMTRACE_HUGEPAGES=1"
	# GC cause names read from this libjvm: 39 on JDK 17, 34 on JDK 25 (their enums)
	assert_eq "$(json_get "$TMPD/d.$want.json" 'recs[0]["gc_causes"]')" "$([ "$JDK" = 17 ] && echo 39 || echo 34)" "GC causes"
	"$MEMTRACE" doctor -p "$JVM_PID" >"$TMPD/d.$want.txt" || fail "doctor (text) exited $?"
	assert_contains "$TMPD/d.$want.txt" "DTraceAllocProbes *$want"
	jvm_stop "$JVM_PID"
done
