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
echo "== java.util.concurrent lock tracing overhead (bench/locks_overhead.sh)"
bench/locks_overhead.sh
echo "== sequencer throughput and recording size (bench/sequencer.sh)"
bench/sequencer.sh

echo "== JVMTI agent allocation sampling overhead (bench/agent_overhead.sh)"
bench/agent_overhead.sh

echo "== heap snapshots and queries: walk pause vs bare FollowReferences, live query vs heap dump (bench/query.sh)"
bench/query.sh
