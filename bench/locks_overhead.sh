#!/usr/bin/env bash
# bench/locks_overhead.sh - throughput of a heavily contended java.util.concurrent
# lock (tests/java/LockBench.java: 4 threads, one fair ReentrantLock: every hand-over parks) with and
# without `memtrace locks` attached (park probes, no JVM flag), phases
# alternating on the same JVM; and the parks per second memtrace counted while
# attached (what the probes sustain). With RECORD=1 a third phase per round
# runs `memtrace record` (every park and unpark-ended park an event through
# the ring buffer, the sequencer and the gzip'd file) and prints its events
# per second and losses. With STACKS=1 another phase runs `memtrace locks
# --stacks` (the Java stack walked at every park). The BPF programs' own
# time per park probe hit is read in each phase (kernel.bpf_stats_enabled is
# switched on for the run and restored; only this memtrace's programs count):
# a figure the machine's other load hardly moves. Needs root.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
ROUNDS=${ROUNDS:-4}
RECORD=${RECORD:-0}
STACKS=${STACKS:-0}
PHASE=${PHASE:-3}
tmp=$(mktemp -d /tmp/mt-bench.XXXX)
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'kill $(jobs -p) 2>/dev/null || true; echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$tmp"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
# bpf_cost LABEL PID: run time per hit of PID's park programs (the prog ids
# among its file descriptors), appended to $tmp/bpfcost
bpf_cost() {
	local ids
	ids=$(grep -h '^prog_id:' /proc/"$2"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u | tr '\n' ' ')
	bpftool prog show --json | python3 -c '
import json, sys
label, ids = sys.argv[1], {int(x) for x in sys.argv[2].split()}
for p in json.load(sys.stdin):
    if p.get("name") in ("handle_park_begin", "handle_park_end") and p.get("run_cnt") and p["id"] in ids:
        print(label, p["name"], p["run_cnt"], p["run_time_ns"])
' "$1" "$ids" >>"$tmp/bpfcost" || true
}
"$ROOT/tests/java/build.sh"
now_ms() { date +%s%3N; }

"$JAVA" -Xmx128m -cp "$ROOT/build/java" LockBench 4 50 200 fair >"$tmp/w.out" 2>&1 &
pid=$!
until grep -q READY "$tmp/w.out"; do sleep 0.1; done
sleep 3 # JIT warm-up
for ((r = 0; r < ROUNDS; r++)); do
	a=$(now_ms); sleep "$PHASE"; echo "baseline $a $(now_ms)" >>"$tmp/phases"
	s0=$(now_ms)
	"$ROOT/build/memtrace" locks -p "$pid" --json >"$tmp/locks.$r.json" 2>/dev/null &
	mt=$!
	sleep 1 # attach
	a=$(now_ms); sleep "$PHASE"; b=$(now_ms); echo "memtrace-locks $a $b" >>"$tmp/phases"
	bpf_cost locks $mt
	kill -INT $mt; s1=$(now_ms); wait $mt || true
	echo "$r $s0 $s1" >>"$tmp/windows"
	if [ "$STACKS" = 1 ]; then
		"$ROOT/build/memtrace" locks -p "$pid" --stacks --json >"$tmp/stacks.$r.json" 2>/dev/null &
		mt=$!
		sleep 1 # attach
		a=$(now_ms); sleep "$PHASE"; b=$(now_ms); echo "memtrace-locks-stacks $a $b" >>"$tmp/phases"
		bpf_cost locks-stacks $mt
		kill -INT $mt; wait $mt || true
	fi
	[ "$RECORD" = 1 ] || continue
	"$ROOT/build/memtrace" record -p "$pid" -o "$tmp/r.$r.mtr" 2>"$tmp/rec.$r.err" &
	mt=$!
	sleep 1 # attach
	a=$(now_ms); sleep "$PHASE"; b=$(now_ms); echo "memtrace-record $a $b" >>"$tmp/phases"
	bpf_cost record $mt
	kill -INT $mt; wait $mt || true
	sed -n 's/^memtrace: recorded/  round '"$r"' record: recorded/p' "$tmp/rec.$r.err"
done
kill $pid; wait $pid 2>/dev/null || true
python3 "$ROOT/bench/phases.py" "$tmp/w.out" "$tmp/phases" "lock acquisitions"
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
for line in open(f"{tmp}/windows"):
    r, s0, s1 = line.split()
    recs = [json.loads(l) for l in open(f"{tmp}/locks.{r}.json") if l.startswith("{")]
    s = [x for x in recs if x.get("event") == "park_summary"][0]
    secs = (int(s1) - int(s0)) / 1000  # from starting memtrace to stopping it (attach included)
    print(f"  round {r}: {s['parks']} parks in {secs:.1f} s ({s['parks'] / secs / 1e3:.1f} k parks/s, "
          f"lower bound: attach time counted), not attributed {s['no_thread']}, lost {s['map_full']}")
PY
python3 - "$tmp/bpfcost" <<'PY'
import sys
tot = {}
for line in open(sys.argv[1]):
    label, name, n, ns = line.split()
    c = tot.setdefault((label, name), [0, 0])
    c[0] += int(n); c[1] += int(ns)
for (label, name), (n, ns) in sorted(tot.items()):
    print(f"  BPF {label:13} {name:18} {ns / n:6.0f} ns per hit ({n} hits)")
PY
