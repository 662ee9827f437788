#!/usr/bin/env bash
# bench/run.sh - memtrace's benchmarks; each reports ratios measured side by
# side in one run (baseline vs attached). Needs root (BPF).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
echo "== cost per USDT probe hit (bench/probe_cost.c)"
build/bench/probe_cost "${PROBE_HITS:-200000}" "${PROBE_ROUNDS:-9}"
echo
echo "== collector: GC events decoded and paired per second (bench/collector_bench.c)"
build/bench/collector_bench 2000000
echo
echo "== allocation profiling overhead (bench/alloc_overhead.sh)"
"$ROOT/bench/alloc_overhead.sh"
echo "== allocation estimates under the budget's levers (bench/alloc_budget.sh)"
"$ROOT/bench/alloc_budget.sh"
echo "== allocation on a real server: H2 under a JDBC load vs JFR on the same run (bench/alloc_h2.sh)"
"$ROOT/bench/alloc_h2.sh"
echo "== the live view's allocating paths on H2 vs JFR on the same run (bench/top_h2.sh)"
"$ROOT/bench/top_h2.sh"
echo "== java.util.concurrent lock tracing overhead (bench/locks_overhead.sh)"
bench/locks_overhead.sh
echo "== locks on a real server: H2 under a JDBC load vs JFR on the same run (bench/locks_h2.sh)"
bench/locks_h2.sh
echo "== locks on a server that waits for notifies: Derby under a JDBC load vs JFR on the same run (bench/locks_derby.sh)"
bench/locks_derby.sh
echo "== sequencer throughput and recording size (bench/sequencer.sh)"
bench/sequencer.sh
echo "== recording writer and reader before/after the crash-safe framing (bench/recording.sh)"
bench/recording.sh

echo "== JVMTI agent allocation sampling overhead (bench/agent_overhead.sh)"
bench/agent_overhead.sh

echo "== heap snapshots and queries: walk pause vs bare FollowReferences, live query vs heap dump (bench/query.sh)"
bench/query.sh

echo "== serve --all over JVM churn (bench/soak.sh; SOAK_SECONDS, default 120 here: an hour is 3600)"
bench/soak.sh "${SOAK_SECONDS:-120}"

if [ -n "${SCALE_SECONDS:-}" ]; then # opt-in: 20 JVMs in containers load a small machine
	echo "== serve --all over 20 JVMs in containers, one stopped and one started a second (bench/serve_scale.sh; SCALE_SECONDS=600 is the 10 minutes of docs/measurements.md)"
	bench/serve_scale.sh "$SCALE_SECONDS"
fi
