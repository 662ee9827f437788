#!/usr/bin/env bash
# scripts/demo.sh - what `make demo` runs after installing and building:
# start the bundled demo JVM (GC churn, allocation, a slow leak), show what
# memtrace's doctor finds, trace its collections for ~20 s, stop the JVM.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
SECS=${DEMO_SECONDS:-20}
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

tests/java/build.sh
out=$(mktemp /tmp/memtrace-demo.XXXX)
"$JAVA_HOME/bin/java" -Xmx512m -cp build/java DemoWorkload $((SECS + 15)) >"$out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 100); do grep -q READY "$out" && break; sleep 0.1; done

echo "### the demo JVM is pid $pid ($("$JAVA_HOME/bin/java" -version 2>&1 | head -1))"
echo
echo "### memtrace ps"
build/memtrace ps
echo
echo "### memtrace doctor -p $pid"
$SUDO build/memtrace doctor -p "$pid"
echo
echo "### memtrace gc -p $pid --duration $SECS"
$SUDO build/memtrace gc -p "$pid" --duration "$SECS"
