#!/usr/bin/env bash
# bench/alloc_h2.sh - `memtrace alloc` on a real program nobody here wrote:
# Debian's H2 database server (libh2-java) under a concurrent JDBC load
# (tests/java/H2Load.java, as bench/locks_h2.sh), on each JDK, against JFR on
# the same run:
#  - the total: memtrace's estimate of the bytes the server allocated during
#    the load, against the JVM's own per-thread counters as JFR records them
#    (jdk.ThreadAllocationStatistics every 100 ms: each thread's bytes at its
#    first record after memtrace stopped - its last one for a thread that
#    ended, which misses up to 100 ms of it - minus at its last one before
#    memtrace started; the server is idle outside the load), and against the sum of
#    JFR's jdk.ObjectAllocationSample weights (its own estimate, unthrottled);
#  - the class shares of the top classes: memtrace's (from the TLABs'
#    contents) against JFR's samples'.
# Prints both; informational (sampling on both sides). Needs root.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
h2_require alloc_h2
tmp=$(mktemp -d /tmp/mt-bench-h2a.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$ROOT/tests/java/build.sh" >/dev/null
port=19192
for jdk in $JDKS; do
	[ -x "$jdk/bin/java" ] || { echo "== $jdk: absent, skipped"; continue; }
	d="$tmp/$(basename "$jdk")"
	port=$((port + 1))
	h2_start "$d" "$jdk" "$port" \
		"-XX:StartFlightRecording:filename=$d/h2.jfr,settings=profile,jdk.ObjectAllocationSample#throttle=100000/s,jdk.ThreadAllocationStatistics#period=100ms"
	server=$H2_SERVER client=$H2_CLIENT
	sleep 1.5 # a statistics record between the setup and memtrace's start
	"$ROOT/build/memtrace" alloc -p "$server" --json >"$d/alloc.json" 2>"$d/alloc.err" &
	mt=$!
	for _ in $(seq 300); do grep -q '"start"' "$d/alloc.json" && break; sleep 0.1; done
	t0=$(date +%s%N)
	touch "$d/go"
	wait "$client"
	sleep 0.5
	kill -INT "$mt"; wait "$mt"
	t1=$(date +%s%N)
	sleep 1.5 # a statistics record after memtrace's end
	kill "$server"; wait "$server" || true # JFR writes its recording at exit
	"$jdk/bin/jfr" print --json --events jdk.ObjectAllocationSample,jdk.ThreadAllocationStatistics \
		"$d/h2.jfr" >"$d/jfr.json"
	echo "== H2 $("$jdk/bin/java" -version 2>&1 | head -1), $CLIENTS clients, $SECS s: $(grep OPS "$d/client.out")"
	PYTHONPATH="$ROOT/bench" python3 - "$d/alloc.json" "$d/jfr.json" "$t0" "$t1" <<'PY'
import json, sys
from jfrjson import ns, java_name  # bench/, through PYTHONPATH
final = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
ev = json.load(open(sys.argv[2]))["recording"]["events"]
t0, t1 = int(sys.argv[3]), int(sys.argv[4])
before, after = {}, {}
samp, sampw = {}, 0
for e in ev:
    v = e["values"]
    t = ns(v["startTime"])
    if e["type"] == "jdk.ThreadAllocationStatistics":
        tid = v["thread"]["javaThreadId"] if v.get("thread") else None
        if tid is None:
            continue
        if t < t0:
            before[tid] = v["allocated"]
        elif t > t1:
            after.setdefault(tid, v["allocated"])
    elif t0 <= t <= t1:
        cls = java_name(v["objectClass"]["name"])
        samp[cls] = samp.get(cls, 0) + v["weight"]
        sampw += v["weight"]
jvm = sum(a - before.get(tid, 0) for tid, a in after.items())
# threads that ended during the load: their last record inside the window
last = {}
for e in ev:
    v = e["values"]
    if e["type"] == "jdk.ThreadAllocationStatistics" and v.get("thread"):
        tid = v["thread"]["javaThreadId"]
        if tid not in after and ns(v["startTime"]) >= t0:
            last[tid] = v["allocated"]
jvm += sum(a - before.get(tid, 0) for tid, a in last.items())
mt = final["total_bytes"]
dc = final.get("duty_cycle") or {}
se = dc.get("total_bytes_stderr")
print(f"  total: memtrace {mt / 2**20:.1f} MiB (standard error {se / 2**20 if se else 0:.1f} MiB, "
      f"kept {dc.get('kept_share', 1):.3f}, threads thinned {dc.get('threads_thinned', 0)}), "
      f"the JVM's per-thread counters {jvm / 2**20:.1f} MiB (x{mt / jvm:.3f}), "
      f"JFR's samples {sampw / 2**20:.1f} MiB (x{sampw / jvm:.3f})")
mine = {c["class"]: c for c in final["classes"]}
top = sorted(mine, key=lambda c: -mine[c]["bytes"])[:8]
print(f"  {'class':48} {'memtrace':>9} {'JFR':>7}")
for c in top:
    print(f"  {c[:48]:48} {100 * mine[c]['share']:8.1f}% {100 * samp.get(c, 0) / sampw:6.1f}%")
PY
done
