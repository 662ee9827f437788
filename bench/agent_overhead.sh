#!/usr/bin/env bash
# bench/agent_overhead.sh - throughput of an allocation-heavy JVM with the
# agent sampling vs without, measured side by side in one JVM: phases of
# PHASE_S seconds alternate baseline / sampling at 512 KiB (default) /
# sampling at 64 KiB, ROUNDS times. The workload prints its operations per
# 250 ms window; windows inside each phase (its first second skipped) are
# averaged per mode, and ratios are sampled/baseline (goal >= 0.98).
# The agent is loaded once before measuring (load cost is not sampling cost).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JAVA_HOME=${JAVA_HOME:-${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}}
ROUNDS=${ROUNDS:-4}
PHASE_S=${PHASE_S:-4}
MT="$ROOT/build/memtrace"
tmp=$(mktemp -d /tmp/mt-bench-agent.XXXX)
trap 'kill $JPID 2>/dev/null; wait $JPID 2>/dev/null; rm -rf "$tmp"' EXIT

"$JAVA_HOME/bin/javac" -d "$tmp" "$ROOT/bench/agent_alloc_bench.java"
"$JAVA_HOME/bin/java" -Xms256m -Xmx256m -cp "$tmp" AgentAllocBench >"$tmp/w.out" 2>&1 &
JPID=$!
for _ in $(seq 100); do grep -q READY "$tmp/w.out" && break; sleep 0.1; done
sleep 5 # JIT warm-up
"$MT" -q attach -p $JPID >/dev/null
now() { date +%s%3N; }
: >"$tmp/phases"
for ((r = 0; r < ROUNDS; r++)); do
	t0=$(now); sleep "$PHASE_S"; echo "base $t0 $(now)" >>"$tmp/phases"
	t0=$(now); "$MT" -q age -p $JPID --duration "$PHASE_S" >/dev/null; echo "512k $t0 $(now)" >>"$tmp/phases"
	t0=$(now); "$MT" -q age -p $JPID --duration "$PHASE_S" --interval 64k >/dev/null; echo "64k $t0 $(now)" >>"$tmp/phases"
done
python3 - "$tmp/w.out" "$tmp/phases" "$JAVA_HOME" <<'PY'
import sys, statistics
wins = [(int(a), int(b)) for _, a, b in (l.split() for l in open(sys.argv[1]) if l.startswith("w "))]
rates = {}
for line in open(sys.argv[2]):
    mode, t0, t1 = line.split(); t0, t1 = int(t0) + 1000, int(t1)
    ops = [o for end, o in wins if t0 + 250 <= end <= t1]
    if ops:
        rates.setdefault(mode, []).append(statistics.mean(ops) * 4)
base = statistics.mean(rates["base"])
print("agent sampling overhead (%s, %d rounds x %s phases)" % (sys.argv[3].split("/")[-1], len(rates["base"]), "3"))
print("  baseline        %10.0f ops/s  (phases: %s)" % (base, " ".join("%.0f" % x for x in rates["base"])))
for m in ("512k", "64k"):
    v = statistics.mean(rates[m])
    print("  sampling %-6s %10.0f ops/s  ratio %.3f  (phases: %s)" % (m, v, v / base, " ".join("%.0f" % x for x in rates[m])))
PY
