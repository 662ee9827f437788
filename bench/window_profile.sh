#!/usr/bin/env bash
# bench/window_profile.sh - what one duty-cycle window costs the allocating
# thread, besides the trap in it: AllocTick (byte[256] at depth 40, its count
# about every ms) under `memtrace alloc` with its windows logged
# (MEMTRACE_WINDOW_LOG), the thread's rate averaged around the windows
# (bench/window_profile.py). It measured DUTYCYCLE_WINDOW_COST_NS
# (probe/dutycycle.h). MEMTRACE_TEST_DUTY=KEEP:DUTY forces the windows
# (e.g. 1:0.02); ARGS= more memtrace arguments (--by stack). Needs root.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
SECS=${SECS:-30}
tmp=$(mktemp -d /tmp/mt-winprof.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$ROOT/tests/java/build.sh"
"$JAVA" -Xmx256m -cp "$ROOT/build/java" AllocTick $((SECS + 8)) "$tmp/ticks" >"$tmp/w.out" 2>&1 &
pid=$!
until grep -q READY "$tmp/w.out"; do sleep 0.1; done
sleep 3 # JIT warm-up
MEMTRACE_WINDOW_LOG="$tmp/win" "$ROOT/build/memtrace" -q alloc -p "$pid" --duration "$SECS" \
	${ARGS:-} --json >"$tmp/mt.json"
until grep -q DONE "$tmp/w.out"; do sleep 0.2; done
grep -h '"duty_cycle"' "$tmp/mt.json" | python3 -c 'import json,sys
print("memtrace:", json.loads(sys.stdin.read())["duty_cycle"])'
python3 "$ROOT/bench/window_profile.py" "$tmp/ticks" "$tmp/win"
