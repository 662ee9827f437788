#!/usr/bin/env bash
# bench/alloc_overhead.sh - throughput of an allocation-heavy JVM with and
# without `memtrace alloc` attached, phases alternating on the same JVM
# (baseline, attached, baseline, ...); then the same for a JVM started with
# -XX:+DTraceAllocProbes, without and with `memtrace alloc --exact`, to show
# the cost that sampling avoids. Needs root.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
ROUNDS=${ROUNDS:-4}
PHASE=${PHASE:-3}
tmp=$(mktemp -d /tmp/mt-bench.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$ROOT/tests/java/build.sh"
now_ms() { date +%s%3N; }

run_jvm() { # name label_off label_on memtrace-args... ; JVM flags in JFLAGS
	local name=$1 off=$2 on=$3; shift 3
	"$JAVA" -Xmx256m $JFLAGS -cp "$ROOT/build/java" AllocBench >"$tmp/$name.out" 2>&1 &
	local pid=$!
	until grep -q READY "$tmp/$name.out"; do sleep 0.1; done
	sleep 3 # JIT warm-up
	for ((r = 0; r < ROUNDS; r++)); do
		local a; a=$(now_ms); sleep "$PHASE"; echo "$off $a $(now_ms)" >>"$tmp/$name.phases"
		"$ROOT/build/memtrace" -q alloc -p "$pid" "$@" >/dev/null 2>&1 &
		local mt=$!
		sleep 0.5
		a=$(now_ms); sleep "$PHASE"; echo "$on $a $(now_ms)" >>"$tmp/$name.phases"
		kill -INT $mt; wait $mt || true
	done
	kill $pid; wait $pid 2>/dev/null || true
}

echo "== allocation throughput, JVM without flags: baseline vs memtrace alloc attached"
JFLAGS="" run_jvm plain baseline "memtrace-alloc" --duration 1000
python3 "$ROOT/bench/phases.py" "$tmp/plain.out" "$tmp/plain.phases"
echo "== JVM with -XX:+DTraceAllocProbes: flag alone vs memtrace alloc --exact attached"
JFLAGS="-XX:+DTraceAllocProbes" run_jvm dtrace "dtrace-flag-only" "dtrace-flag+exact" --exact --duration 1000
cat "$tmp/plain.phases" >"$tmp/all.phases"
cat "$tmp/dtrace.phases" >>"$tmp/all.phases"
cat "$tmp/plain.out" "$tmp/dtrace.out" >"$tmp/all.out"
echo "== both JVMs against the flagless baseline (separate JVMs, run one after the other)"
python3 "$ROOT/bench/phases.py" "$tmp/all.out" "$tmp/all.phases"
