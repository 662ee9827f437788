#!/usr/bin/env bash
# bench/zgc_copy.sh - what a frozen heap snapshot of a ZGC JVM costs it where
# the used heap is large for its live objects and comes and goes with each
# cycle (issue #33): tests/java/LeakGrowth (a 1 M-entry cache, three slow
# leaks, >= 1 GB/s of garbage; ~167 MiB live in a 1 GiB heap). For each JDK,
# in rotating order ROUNDS times: `memtrace histo` without --max-pause (the
# copy bounded to what 100 ms allows), `memtrace histo --max-pause 5000`, and
# `jmap -histo:live`. Each one's pause is the JVM's own (-Xlog:safepoint
# Total of HeapWalkOperation or GC_HeapInspection; none for a snapshot refused
# before the pause), with the used heap memtrace's copy copied and whether it
# had to ask again. Knobs: JDKS (both of this machine's), ROUNDS (4).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
JDKS=${JDKS:-"/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64"}
ROUNDS=${ROUNDS:-4}
make -s all >/dev/null
tests/java/build.sh >/dev/null 2>&1
TMPD=$(mktemp -d /tmp/zgc-copy.XXXX)
trap 'kill "$JVM" 2>/dev/null; rm -rf "$TMPD"' EXIT
JVM=

# last_pause NAME: the JVM's last safepoint NAME's Total, in ms ("-": none since MARK)
last_pause() {
	tail -n +"$MARK" "$TMPD/sp.log" | grep "\"$1\"" | tail -1 |
		sed -n 's/.*Total: \([0-9]*\) ns.*/\1/p' | awk '{ printf "%.1f", $1 / 1e6 } END { if (!NR) printf "-" }'
}

for jdk in $JDKS; do
	if [ ! -x "$jdk/bin/java" ]; then
		echo "SKIP $jdk: no such JDK"
		continue
	fi
	rm -f "$TMPD/sp.log"
	mkfifo "$TMPD/in.$$" 2>/dev/null || true
	"$jdk/bin/java" -XX:+UseZGC -Xmx1g "-Xlog:safepoint:file=$TMPD/sp.log" -cp build/java \
		LeakGrowth 1 10 20 20 1000000 <"$TMPD/in.$$" >"$TMPD/w.out" 2>&1 &
	JVM=$!
	exec 3>"$TMPD/in.$$"
	for _ in $(seq 60); do grep -q READY "$TMPD/w.out" && break; sleep 1; done
	sleep 5
	echo "== $jdk, LeakGrowth under ZGC (-Xmx1g), $ROUNDS rounds"
	printf "%-28s %10s  %s\n" method "pause ms" "memtrace's account"
	methods=(bounded maxpause jmap)
	for r in $(seq "$ROUNDS"); do
		for k in 0 1 2; do
			m=${methods[$(((k + r) % 3))]}
			MARK=$(($(wc -l <"$TMPD/sp.log") + 1))
			case $m in
			bounded)
				build/memtrace histo -p "$JVM" --top 1 >/dev/null 2>"$TMPD/m.err" || true
				p=$(last_pause HeapWalkOperation) ;;
			maxpause)
				build/memtrace histo -p "$JVM" --top 1 --max-pause 5000 >/dev/null 2>"$TMPD/m.err" || true
				p=$(last_pause HeapWalkOperation) ;;
			jmap)
				"$jdk/bin/jmap" -histo:live "$JVM" >/dev/null
				: >"$TMPD/m.err"
				p=$(last_pause GC_HeapInspection) ;;
			esac
			acct=$(grep -o "the used heap ([^)]*) copied in [0-9.]* ms\|ZGC's used heap was [0-9]* MiB [a-z ]*pause" "$TMPD/m.err" | tail -1 || true)
			grep -q "asking again" "$TMPD/m.err" && acct="$acct (asked again)"
			grep -q "did not pause it" "$TMPD/m.err" && acct="refused: $acct"
			printf "%-28s %10s  %s\n" "$m" "$p" "$acct"
			sleep 2
		done
	done
	exec 3>&-
	kill "$JVM"
	wait "$JVM" 2>/dev/null || true
	JVM=
done
