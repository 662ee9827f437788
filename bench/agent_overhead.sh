#!/usr/bin/env bash
# bench/agent_overhead.sh - throughput of an allocation-heavy JVM with the
# agent sampling vs without, measured side by side in one JVM: phases of
# PHASE_S seconds alternate baseline / sampling at 512 KiB (default) /
# sampling at 64 KiB, ROUNDS times. The workload prints its operations per
# 250 ms window; windows inside each phase (its first second skipped) are
# averaged per mode, and ratios are sampled/baseline (goal >= 0.98).
# Each sampling phase is also compared with the mean of the baseline phases
# on either side of it (the machine's load drifts): min/median/max of those
# per-round ratios are printed, with the load average before and after.
# On a loaded machine throughput per wall second mostly measures the other
# tenants, so the same ratios are also given per CPU second of the JVM (all
# its threads: mutators, GC, JIT, the agent's socket thread; utime + stime
# from /proc/PID/stat at each phase boundary), and memtrace's own CPU time.
# The agent is loaded once before measuring (load cost is not sampling cost).
# MT=/path/to/memtrace compares another build (its agent lies beside it).
# The whole run is repeated for each WORK in WORKS (default "0 400"): extra
# arithmetic per operation, i.e. the allocation rate (printed, ~6 and ~1.5 GB/s
# here). The cost is per sample (~2.5 us: GetStackTrace ~1.5, SetTag ~0.5),
# so the ratio depends on the allocation rate per thread; the run prints the
# cost per sample and the rate up to which 512 KiB stays >= 0.98.
# Heap 1 GiB and a 5000-object ring (HEAP, RING): with 256 MiB and 50k the
# JVM spent ~70 % of its CPU in G1 concurrent marking and the phases measured
# GC noise, not the agent (perf showed < 0.5 % in the agent and JVMTI).
set -eu
if [ -z "${WORK+x}" ]; then
	for w in ${WORKS:-0 400}; do WORK=$w "$0" "$@" || echo "agent_overhead: the run with WORK=$w failed"; done
	exit 0
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JAVA_HOME=${JAVA_HOME:-${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}}
ROUNDS=${ROUNDS:-8}
PHASE_S=${PHASE_S:-4}
MT=${MT:-$ROOT/build/memtrace}
tmp=$(mktemp -d /tmp/mt-bench-agent.XXXX)
trap 'kill $JPID 2>/dev/null; wait $JPID 2>/dev/null || true; rm -rf "$tmp"' EXIT

"$JAVA_HOME/bin/javac" -d "$tmp" "$ROOT/bench/agent_alloc_bench.java"
"$JAVA_HOME/bin/java" -Xms${HEAP:-1g} -Xmx${HEAP:-1g} -Dring=${RING:-5000} -Dwork=${WORK:-0} -cp "$tmp" AgentAllocBench >"$tmp/w.out" 2>&1 &
JPID=$!
for _ in $(seq 100); do grep -q READY "$tmp/w.out" && break; sleep 0.1; done
sleep 5 # JIT warm-up
"$MT" -q attach -p $JPID >/dev/null
now() { date +%s%3N; }
# the JVM's CPU time in clock ticks (utime + stime)
cpu() { awk '{ print $14 + $15 }' "/proc/$JPID/stat"; }
# phase MODE CMD...: run CMD, log "MODE t0 t1 cpu0 cpu1 memtrace_cpu_ticks"
phase() {
	local mode=$1 t0 c0 m0 m1; shift
	m0=$(awk '{ print $16 + $17 }' /proc/$$/stat) # children's CPU (memtrace)
	t0=$(now); c0=$(cpu); "$@"; m1=$(awk '{ print $16 + $17 }' /proc/$$/stat)
	echo "$mode $t0 $(now) $c0 $(cpu) $((m1 - m0))" >>"$tmp/phases"
}
: >"$tmp/phases"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < ROUNDS; r++)); do
	phase base sleep "$PHASE_S"
	phase 512k "$MT" -q age -p $JPID --duration "$PHASE_S" >/dev/null
	phase 64k "$MT" -q age -p $JPID --duration "$PHASE_S" --interval 64k >/dev/null
done
phase base sleep "$PHASE_S"
echo "load average: $load0 (start), $(cut -d' ' -f1-3 /proc/loadavg) (end), $(nproc) cpus"
python3 - "$tmp/w.out" "$tmp/phases" "$JAVA_HOME" <<'PY'
import sys, statistics
wl = [l.split() for l in open(sys.argv[1]) if l.startswith("w ")]
wins = [(int(w[1]), int(w[2])) for w in wl]
wbytes = [(int(w[1]), int(w[3])) for w in wl]
rates, seq, cseq, mcpu = {}, [], [], {}
for line in open(sys.argv[2]):
    mode, t0, t1, c0, c1, mc = line.split(); t0, t1 = int(t0), int(t1)
    ops = [o for end, o in wins if t0 + 1250 <= end <= t1]
    if ops:
        rates.setdefault(mode, []).append(statistics.mean(ops) * 4)
        seq.append((mode, statistics.mean(ops) * 4))
    # ops per JVM CPU second over the whole phase (windows inside it)
    allops = sum(o for end, o in wins if t0 + 250 <= end <= t1)
    if int(c1) > int(c0):
        cseq.append((mode, allops / ((int(c1) - int(c0)) / 100.0)))
    mcpu.setdefault(mode, []).append(int(mc) / 100.0 / ((t1 - t0) / 1000.0))
base = statistics.mean(rates["base"])
print("agent sampling overhead (%s, %d rounds x 3 phases + a closing baseline)" % (sys.argv[3].split("/")[-1], len(rates["512k"])))
# the allocation rate of the baseline phases (ThreadMXBean, bytes per 250 ms window)
bb = []
for line in open(sys.argv[2]):
    mode, t0, t1 = line.split()[:3]
    if mode == "base":
        bb += [b for end, b in wbytes if int(t0) + 1250 <= end <= int(t1)]
if bb:
    gbs = statistics.mean(bb) * 4 / 1e9
    print("  allocation rate (baseline, ThreadMXBean) %.2f GB/s on one thread: %.0f samples/s expected at 512 KiB, %.0f at 64 KiB" % (gbs, gbs * 1e9 / 524288, gbs * 1e9 / 65536))
print("  baseline        %10.0f ops/s  (phases: %s)" % (base, " ".join("%.0f" % x for x in rates["base"])))
for m in ("512k", "64k"):
    v = statistics.mean(rates[m])
    print("  sampling %-6s %10.0f ops/s  ratio %.3f  (phases: %s)" % (m, v, v / base, " ".join("%.0f" % x for x in rates[m])))
# per round: a sampling phase against the baseline phases before and after it
def per_round(seq, m):
    rs = []
    for i, (mode, v) in enumerate(seq):
        if mode != m:
            continue
        prev = [b for md, b in seq[:i] if md == "base"][-1:]
        nxt = [b for md, b in seq[i + 1:] if md == "base"][:1]
        if prev and nxt:
            rs.append(v / ((prev[0] + nxt[0]) / 2))
    return rs
for what, sq in (("ops/wall-s", seq), ("ops/JVM-CPU-s", cseq)):
    for m in ("512k", "64k"):
        rs = per_round(sq, m)
        if rs:
            print("  %-13s ratio %-5s min %.3f  median %.3f  max %.3f  (n=%d)" % (what, m, min(rs), statistics.median(rs), max(rs), len(rs)))
for m in ("512k", "64k"):
    print("  memtrace CPU during %-5s %.3f cores (median)" % (m, statistics.median(mcpu[m])))
# cost per sample from the 64 KiB phases (many samples, the clearest signal),
# and what it predicts for 512 KiB at this allocation rate
rs = per_round(cseq, "64k")
if bb and rs:
    s64 = gbs * 1e9 / 65536
    us = (1 / statistics.median(rs) - 1) / s64 * 1e6
    print("  cost per sample (64 KiB, JVM CPU) %.2f us; predicted ratio at 512 KiB %.3f; 0.98 holds up to %.1f GB/s per allocating thread" % (us, 1 / (1 + us * 1e-6 * gbs * 1e9 / 524288), 0.02 / 0.98 / (us * 1e-6) * 524288 / 1e9))
PY
