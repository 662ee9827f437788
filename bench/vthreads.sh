#!/usr/bin/env bash
# bench/vthreads.sh - what a heap snapshot costs a JVM whose objects are held
# by parked virtual threads (JDK 21+): tests/java/VThreads with N threads
# parked D frames deep (N Held, N HeldData, N/3 Locked only their stacks
# hold). Under G1, ZGC and Shenandoah, in rotating order ROUNDS times:
#   frozen   `memtrace histo`: the copy's mark reads each stack chunk through
#            HotSpot's own iteration;
#   nochunks the same without it (MEMTRACE_TEST_FREEZE=nochunks, as before
#            stop 41): G1's copy walks with JVMTI, ZGC and Shenandoah walk in
#            a pause (--max-pause 10000);
#   jmap     `jmap -histo:live`.
# Each: the JVM's pause (-Xlog:safepoint Total of HeapWalkOperation /
# GC_HeapInspection), the command's wall time, and whether the Held count is
# N. Knobs: JAVA_HOME (Temurin 25), N (20000), D (30), ROUNDS (3), GCS.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
J=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
N=${N:-20000}
D=${D:-30}
ROUNDS=${ROUNDS:-3}
GCS=${GCS:-"G1 Z Shenandoah"}
make -s all >/dev/null
tests/java/build.sh >/dev/null 2>&1
TMPD=$(mktemp -d /tmp/vthreads.XXXX)
JVM=
trap '[ -n "$JVM" ] && kill "$JVM" 2>/dev/null; rm -rf "$TMPD"' EXIT

last_pause() { # NAME: the JVM's last safepoint NAME's Total since MARK, ms
	tail -n +"$MARK" "$TMPD/sp.log" | grep "\"$1\"" | tail -1 |
		sed -n 's/.*Total: \([0-9]*\) ns.*/\1/p' | awk '{ printf "%.1f", $1 / 1e6 } END { if (!NR) printf "-" }'
}
now() { date +%s%N; }

for gc in $GCS; do
	rm -f "$TMPD/sp.log"
	"$J/bin/java" -XX:+Use${gc}GC -XX:-DoEscapeAnalysis -Xmx1g "-Xlog:safepoint:file=$TMPD/sp.log" \
		-cp build/java VThreads "$N" "$D" >"$TMPD/w.out" 2>&1 &
	JVM=$!
	for _ in $(seq 120); do grep -q "READY\|NOVTHREADS" "$TMPD/w.out" && break; sleep 0.5; done
	grep -q READY "$TMPD/w.out" || { cat "$TMPD/w.out"; exit 1; }
	sleep 2
	echo "== $J, $gc: $N virtual threads parked $D frames deep, $ROUNDS rounds"
	printf "%-10s %10s %10s %8s\n" method "pause ms" "wall ms" "Held"
	methods=(frozen nochunks jmap)
	for r in $(seq "$ROUNDS"); do
		for k in 0 1 2; do
			m=${methods[$(((k + r) % 3))]}
			MARK=$(($(wc -l <"$TMPD/sp.log") + 1))
			t0=$(now)
			case $m in
			frozen)
				build/memtrace histo -p "$JVM" >"$TMPD/h.out" 2>"$TMPD/m.err" || true
				p=$(last_pause HeapWalkOperation) ;;
			nochunks)
				MEMTRACE_TEST_FREEZE=nochunks build/memtrace histo -p "$JVM" --max-pause 10000 \
					>"$TMPD/h.out" 2>"$TMPD/m.err" || true
				p=$(last_pause HeapWalkOperation) ;;
			jmap)
				"$J/bin/jmap" -histo:live "$JVM" >"$TMPD/h.out"
				p=$(last_pause GC_HeapInspection) ;;
			esac
			w=$((($(now) - t0) / 1000000))
			held=$(awk '$4 == "VThreads$Held" || $3 == "VThreads$Held" { print $2 }' "$TMPD/h.out" | head -1)
			[ "$held" = "$N" ] || held="$held (want $N)"
			printf "%-10s %10s %10s %8s\n" "$m" "$p" "$w" "$held"
			sleep 1
		done
	done
	kill "$JVM"
	wait "$JVM" 2>/dev/null || true
	JVM=
done
