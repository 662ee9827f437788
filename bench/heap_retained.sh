#!/usr/bin/env bash
# bench/heap_retained.sh - the dominator tree and the graph indexes on a big
# heap: QueryWorkload with N extra QNode (a chain via next, each with an
# int[10]: 2N objects; default N = 2500000, about 5 M objects with the
# JVM's own). Prints, for `memtrace heap -p PID --retained` on the live heap
# and on a `jcmd GC.heap_dump` of it:
#   - objects, references, the dominator computation's time (semi-NCA) and
#     the referrers index's time and size (4 bytes per object + 4 per
#     reference);
#   - the most memory the dominator computation holds at once (its own
#     accounting of its arrays, the result included);
#   - memtrace's peak RSS (/usr/bin/time); live, against the same heap built
#     by a query that walks references but computes no dominators (seed 03):
#     the difference is what the dominators and referrers cost (on a file a
#     query builds every field value: no such baseline).
# Medians of 3 runs each.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
N=${HEAP_BENCH_OBJECTS:-2500000}
JAVA_HOME=${JAVA_HOME:-${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}}
tests/java/build.sh
tmp=$(mktemp -d /tmp/mt-hbench.XXXX)
"$JAVA_HOME/bin/java" -Xmx2g -cp build/java QueryWorkload planted "$N" >"$tmp/jvm.out" 2>&1 &
jpid=$!
trap 'kill $jpid 2>/dev/null; wait $jpid 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 600); do grep -q READY "$tmp/jvm.out" && break; sleep 0.1; done
med() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
# run SOURCE...: three `heap --retained` and three reference queries; medians
run() {
	local dom=() refs=() rss=() base=() wall=() t0 t1
	for i in 1 2 3; do
		t0=$(date +%s%N)
		/usr/bin/time -f %M -o "$tmp/rss" build/memtrace -q --json heap "$@" --retained --top 5 \
			>"$tmp/h.json"
		t1=$(date +%s%N)
		wall+=($(( (t1 - t0) / 1000000 )))
		rss+=($(cat "$tmp/rss"))
		dom+=($(python3 -c "import json; r=[json.loads(l) for l in open('$tmp/h.json')][-1]; print(int(r['dominators_ms']))"))
		refs+=($(python3 -c "import json; r=[json.loads(l) for l in open('$tmp/h.json')][-1]; print(int(r['referrers_ms']))"))
		if [ "$1" = -p ]; then
			/usr/bin/time -f %M -o "$tmp/rss" build/memtrace -q query "$@" \
				-f tests/dsl/03_reachable_from_threads.mq >/dev/null
			base+=($(cat "$tmp/rss"))
		else
			base+=(0)
		fi
	done
	python3 - "$tmp/h.json" "$(med "${dom[@]}")" "$(med "${refs[@]}")" "$(med "${rss[@]}")" \
		"$(med "${base[@]}")" "$(med "${wall[@]}")" <<'PY'
import json, sys
t = [json.loads(l) for l in open(sys.argv[1])][-1]
dom, refs, rss, base, wall = (int(x) for x in sys.argv[2:])
n, m = t["objects"], t["references"]
print("  %d objects, %d references (%d reachable); dominators %d ms (%.0f ns/object), "
      "holding at most %.1f MiB (%.1f bytes/object); referrers index %d ms, %.1f MiB" % (n, m,
      t["reachable"], dom, dom * 1e6 / n, t["dominators_peak_bytes"] / 2**20,
      t["dominators_peak_bytes"] / n, refs, t["referrers_bytes"] / 2**20))
if t["source"] == "live":
    print("  memtrace peak RSS %.0f MiB (heap --retained) vs %.0f MiB (a reference query, no "
          "dominators): +%.0f MiB, %.1f bytes/object; whole command %d ms" % (rss / 1024,
          base / 1024, (rss - base) / 1024, (rss - base) * 1024 / n, wall))
else:
    print("  memtrace peak RSS %.0f MiB; whole command %d ms" % (rss / 1024, wall))
PY
}
echo "live heap (QueryWorkload planted $N):"
run -p "$jpid"
"$JAVA_HOME/bin/jcmd" "$jpid" GC.heap_dump "$tmp/h.hprof" >/dev/null
echo "its heap dump ($(du -h "$tmp/h.hprof" | cut -f1)):"
run "$tmp/h.hprof"
