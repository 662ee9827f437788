#!/usr/bin/env bash
# scripts/demo.sh - what `make demo` runs after installing and building:
# start the bundled demo JVM (GC churn, allocation, a slow leak), show what
# memtrace's doctor finds, then about 20 s of memtrace: collections (USDT),
# allocation by class and site (TLAB sampling), leak suspects (agent), a
# query on the live heap (two walks in one session: ages in GCs); stop
# the JVM.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
SECS=${DEMO_SECONDS:-20}
GC_SECS=$((SECS / 4 > 1 ? SECS / 4 : 1))
ALLOC_SECS=$((SECS / 4 > 1 ? SECS / 4 : 1))
LEAK_SECS=$((SECS / 2 > 2 ? SECS / 2 : 2))
FLAME=${DEMO_FLAMEGRAPH:-/tmp/memtrace-demo-flamegraph.html}
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

tests/java/build.sh
out=$(mktemp /tmp/memtrace-demo.XXXX)
"$JAVA_HOME/bin/java" -Xmx512m -cp build/java DemoWorkload $((SECS + 15)) >"$out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$out" "$out.gc"' EXIT
for _ in $(seq 100); do grep -q READY "$out" && break; sleep 0.1; done

echo "### the demo JVM is pid $pid ($("$JAVA_HOME/bin/java" -version 2>&1 | head -1))"
echo
echo "### memtrace ps"
build/memtrace ps
echo
echo "### memtrace doctor -p $pid"
$SUDO build/memtrace doctor -p "$pid"
echo
echo "### memtrace gc -p $pid --duration $GC_SECS   (first records and the summary)"
$SUDO build/memtrace gc -p "$pid" --duration "$GC_SECS" >"$out.gc"
head -8 "$out.gc"
echo "        ..."
tail -4 "$out.gc"
echo
echo "### memtrace alloc -p $pid --duration $ALLOC_SECS --by stack --flamegraph $FLAME"
$SUDO build/memtrace alloc -p "$pid" --duration "$ALLOC_SECS" --by stack --top 6 \
	--flamegraph "$FLAME"
echo
echo "### memtrace leaks -p $pid --duration $LEAK_SECS   (the demo leaks DemoWorkload\$Session objects)"
$SUDO build/memtrace leaks -p "$pid" --duration "$LEAK_SECS" --top 5
echo
# Ages need JVMTI tags on the live objects, so this query walks the JVM in
# a pause, not a frozen copy; the first walk's estimate takes 64 bytes an
# object (~0.3 M objects, 500-700 ms, over the 100 ms memtrace allows
# unasked) while the demo's are ~380 (its first pause 130-220 ms here, the
# second 35-80, tagging done): the bound raised, memtrace prints each pause
echo "### memtrace query -p $pid --max-pause 1500   (the leaked sessions on the live heap, twice in one session: their age in GCs; a walk in a pause)"
$SUDO build/memtrace query -p "$pid" --count 2 --every 3 --max-pause 1500 -e 'set_type old:
    roots <- objects.filter([it | it is DemoWorkload.Session and it.age >= 3])
    membership <- false
    on_inclusion <- [ n <- n + 1  bytes <- bytes + THIS.size ]
    n : int <- 0
    bytes : int <- 0
instances_for old have_names = "sessions seen 3+ GCs ago"
set_type young:
    roots <- objects.filter([it | it is DemoWorkload.Session])
    membership <- false
    on_inclusion <- [ n <- n + 1  bytes <- bytes + THIS.size ]
    n : int <- 0
    bytes : int <- 0
instances_for young have_names = "the other sessions"'
echo
echo "### the flame graph is in $FLAME; \`memtrace -p $pid\` is the live view"
