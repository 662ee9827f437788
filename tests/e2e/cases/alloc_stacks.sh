#!/usr/bin/env bash
# alloc_stacks - whole Java stacks from the kernel's walker (bpf/jstack.bpf.h)
# on a stock JVM (no -XX:+PreserveFramePointer), against stacks known by
# construction (tests/java/AllocStacks.java: a 40-method chain through an
# interface, a 31-deep recursion, interpreted-only methods, compiled and
# interpreted frames alternating) and against JFR's jdk.ObjectAllocationSample
# on the same run. Three JVMs: tiered (C2 frames), -XX:TieredStopAtLevel=1
# (C1 frames), -Xint. Each run: >= 99 % of the workload's bytes with exactly
# the expected stack, frame kinds as the mode makes them (collapsed suffixes),
# the lines of each class's heaviest stack (JSON) = getStackTrace's, the
# allocating line in `go tool pprof -traces -lines`, the weighted median Java
# depth within 1 of JFR's (over the five classes and for each), and the top
# 20 stacks' byte shares within 3 points of JFR's (JFR unthrottled: its
# default 300 samples/s gives the shares a spread of up to 12 points here)
# and within 1 point of ThreadMXBean's bytes per thread (one stack each).
# A fourth JVM, tiered with the JIT free to inline ("inl", c40 inlined by
# order), checks the expansion of compiled frames into their inlined methods
# (the nmethods' debug info: PcDesc and scopes); the other three keep the
# workload out of line.
# TIMEOUT: 400
. "$ROOT/tests/e2e/lib.sh"

for mode in c2 c1 int inl; do
	rm -f "$TMPD/go"
	flags=(-XX:CompileCommand=quiet '-XX:CompileCommand=exclude,AllocStacks$Interp::interp*'
	       '-XX:CompileCommand=exclude,AllocStacks$Mixed::interp*')
	# inl: c40 inlined into c39 by order (left to the JIT, CI once saw it
	# inlined for 8.6 % of the bytes; other runs 85-100 %)
	[ $mode = inl ] && flags+=('-XX:CompileCommand=inline,AllocStacks$Chain::c40') ||
		flags+=('-XX:CompileCommand=dontinline,AllocStacks*::*')
	mb=768
	case $mode in
	c1) flags+=(-XX:TieredStopAtLevel=1) ;;
	int) flags+=(-Xint); mb=96 ;;
	esac
	jvm_start "w$mode" -Xmx256m "${flags[@]}" "-XX:StartFlightRecording=name=mt,settings=profile,jdk.ObjectAllocationSample#throttle=100000/s" \
		AllocStacks --go "$TMPD/go" --mb $mb
	pid=$JVM_PID
	"$MEMTRACE" alloc -p "$pid" --json --by stack --collapsed "$TMPD/$mode.collapsed" \
		--pprof "$TMPD/$mode.pb.gz" >"$TMPD/$mode.json" 2>"$TMPD/$mode.err" &
	mt=$!
	wait_for_line "$TMPD/$mode.json" '"start"' 20 || { cat "$TMPD/$mode.err"; fail "alloc did not start ($mode)"; }
	touch "$TMPD/go"
	wait_for_line "$TMPD/w$mode.out" DONE 150 || fail "workload did not finish ($mode)"
	kill -INT $mt; wait $mt || { cat "$TMPD/$mode.err"; fail "alloc exited non-zero ($mode)"; }
	jtool jcmd "$pid" JFR.dump name=mt filename="$TMPD/$mode.jfr" >/dev/null || fail "JFR.dump"
	jtool jfr print --json --stack-depth 128 --events jdk.ObjectAllocationSample "$TMPD/$mode.jfr" \
		>"$TMPD/$mode.jfr.json" || fail "jfr print"
	HOME=$TMPD go tool pprof -traces -lines "$TMPD/$mode.pb.gz" >"$TMPD/$mode.traces" 2>&1 ||
		{ cat "$TMPD/$mode.traces"; fail "go tool pprof"; }
	echo "== $mode (JDK $JDK)"
	python3 "$ROOT/tests/e2e/stacks_check.py" "$TMPD/$mode.json" "$TMPD/$mode.collapsed" \
		"$TMPD/w$mode.out" "$TMPD/$mode.jfr.json" $mode "$TMPD/$mode.traces" || fail "stacks wrong ($mode)"
	jvm_stop "$pid"
done
