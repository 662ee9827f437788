#!/usr/bin/env bash
# bench/freeze_soak.sh - frozen heap walks back to back on a JVM that
# allocates flat out and writes into its old objects (FreezeWorkload), for
# longer than make check can afford: every histo must count exactly ENTRIES
# FwEntry; the JVM's RSS, its cgroup's and the machine's available memory
# are sampled every 100 ms; no child of the JVM may outlive a walk; the JVM
# must live on and still read its stdin. Prints one line per walk and a
# summary. Knobs: JAVA_HOME (JDK 17), SOAK_WALKS (30), SOAK_ENTRIES (1000000),
# SOAK_THREADS (2), SOAK_HEAP_MB (1024).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
make -s all >/dev/null
tests/java/build.sh >/dev/null 2>&1
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
WALKS=${SOAK_WALKS:-30} N=${SOAK_ENTRIES:-1000000} T=${SOAK_THREADS:-2} HEAP=${SOAK_HEAP_MB:-1024}
tmp=$(mktemp -d /tmp/mt-soak.XXXX)
mkfifo "$tmp/in"
exec 3<>"$tmp/in"
"$JAVA_HOME/bin/java" -XX:+UseG1GC -Xms${HEAP}m -Xmx${HEAP}m -cp build/java FreezeWorkload "$N" "$T" \
	<"$tmp/in" >"$tmp/fw.out" 2>&1 &
jpid=$!
trap 'kill $jpid $watch 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 300); do grep -q READY "$tmp/fw.out" && break; sleep 0.2; done
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$jpid/status"; }
avail() { awk '/^MemAvailable/ { print $2 }' /proc/meminfo; }
rss0=$(rss) avail0=$(avail)
( while kill -0 $jpid 2>/dev/null; do echo "$(rss 2>/dev/null) $(avail)"; sleep 0.1; done ) >"$tmp/mem" &
watch=$!
fail=0
for i in $(seq "$WALKS"); do
	t0=$(date +%s%N)
	build/memtrace --json histo -p $jpid >"$tmp/h.json" 2>"$tmp/h.err" || { cat "$tmp/h.err"; fail=1; break; }
	t1=$(date +%s%N)
	n=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("class") == "FreezeWorkload$FwEntry": print(r["instances"])' "$tmp/h.json")
	kids=$(ps -o pid= --ppid $jpid | wc -l)
	line=$(grep -o 'paused JVM [0-9]* for [^(]*([^;]*; frozen: fork [0-9.]* [mu]s[^;]*' "$tmp/h.err" | head -1)
	echo "walk $i: FwEntry $n, answer $(( (t1 - t0) / 1000000 )) ms, children after: $kids; ${line:-NOT FROZEN: $(tail -1 "$tmp/h.err")}"
	[ "$n" = "$N" ] && [ "$kids" = 0 ] || fail=1
done
kill $watch 2>/dev/null; wait $watch 2>/dev/null || true
echo "dump 2" >&3
for _ in $(seq 50); do grep -q END "$tmp/fw.out" && break; sleep 0.1; done
grep -q END "$tmp/fw.out" || { echo "the workload no longer reads its stdin"; fail=1; }
kill -0 $jpid || { echo "the JVM died"; fail=1; }
python3 - "$tmp/mem" "$rss0" "$avail0" "$HEAP" <<'PY'
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 2]
rss0, av0, heap = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print("JVM RSS: %d MiB at the start, peak %d MiB (heap %d MiB); machine MemAvailable: %d MiB at "
      "the start, lowest %d MiB" % (rss0 // 1024, max(r for r, a in rows) // 1024, heap,
                                   av0 // 1024, min(a for r, a in rows) // 1024))
PY
[ $fail = 0 ] && echo "soak: $WALKS frozen walks, every count exact, nothing left behind" || { echo "soak: FAILED"; exit 1; }
