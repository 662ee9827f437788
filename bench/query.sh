#!/usr/bin/env bash
# bench/query.sh - heap snapshots and queries on a live JVM (QueryWorkload
# with N extra objects, default 300000 QNode + 300000 int[]):
#   1. JVM pause of the snapshot walk a reachability query needs and of a
#      full snapshot vs a bare FollowReferences walk (no-op callback) of the
#      same heap: medians and ratios (goal <= 1.5); evaluation speed in
#      objects/s (bench/query_bench.c);
#   2. time to answer the reachability query (seed program 03) live vs
#      `jcmd GC.heap_dump` + import + query of the same heap (goal >= 10x),
#      and the same for a program that needs no references (tests/query/count_qnodes.mq);
#   3. the same two comparisons on the same objects plus BLOB_MB MiB of
#      byte[256 KiB] (default 4096; 0 skips): a heap whose bytes are mostly
#      primitive data, which a heap dump writes and a live walk never reads.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
N=${QUERY_BENCH_OBJECTS:-300000}
JAVA_HOME=${JAVA_HOME:-${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}}
PROG=tests/dsl/03_reachable_from_threads.mq
tests/java/build.sh
tmp=$(mktemp -d /tmp/mt-qbench.XXXX)
"$JAVA_HOME/bin/java" -Xmx256m -cp build/java QueryWorkload planted "$N" >"$tmp/jvm.out" 2>&1 &
jpid=$!
trap 'kill $jpid 2>/dev/null; wait $jpid 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do grep -q READY "$tmp/jvm.out" && break; sleep 0.1; done
build/bench/query_bench "$jpid" "${QUERY_BENCH_ROUNDS:-5}" "$PROG"
ms() { date +%s%N; }
med() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
# compare WHAT PROGRAM: live query vs heap dump + import + query, median of 3
compare() {
	local what=$1 prog=$2 live=() dump=() t0 t1 t2 l d
	for i in 1 2 3; do
		t0=$(ms); build/memtrace -q query -p "$jpid" -f "$prog" >"$tmp/live.json"; t1=$(ms)
		rm -f "$tmp/h.hprof"
		"$JAVA_HOME/bin/jcmd" "$jpid" GC.heap_dump "$tmp/h.hprof" >/dev/null
		build/memtrace -q query "$tmp/h.hprof" -f "$prog" >"$tmp/dump.json"; t2=$(ms)
		live+=($(( (t1 - t0) / 1000000 ))) dump+=($(( (t2 - t1) / 1000000 )))
	done
	l=$(med "${live[@]}") d=$(med "${dump[@]}")
	echo "$what ($prog), median of 3: live $l ms, heap dump + import + query $d ms:" \
		"$(python3 -c "print('%.1fx faster' % ($d / max($l, 1)))")"
	echo "  live: $(cat "$tmp/live.json")"
	echo "  dump: $(cat "$tmp/dump.json")  ($(du -h "$tmp/h.hprof" | cut -f1) dump)"
}
compare "reachability query" "$PROG"
# a program that needs no references (the walk streams objects of one class only)
compare "instances of one class, no references" tests/query/count_qnodes.mq

BLOB_MB=${QUERY_BENCH_BLOB_MB:-4096}
[ "$BLOB_MB" -gt 0 ] || exit 0
kill $jpid; wait $jpid 2>/dev/null || true
"$JAVA_HOME/bin/java" -Xmx$((BLOB_MB * 3 / 2 + 512))m -cp build/java QueryWorkload planted "$N" "$BLOB_MB" \
	>"$tmp/jvm.out" 2>&1 &
jpid=$!
for _ in $(seq 600); do grep -q READY "$tmp/jvm.out" && break; sleep 0.1; done
echo "with $BLOB_MB MiB of byte[256 KiB] besides:"
compare "reachability query" "$PROG"
compare "instances of one class, no references" tests/query/count_qnodes.mq
