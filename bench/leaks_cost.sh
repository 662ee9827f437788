#!/usr/bin/env bash
# bench/leaks_cost.sh - the JVM time lost to a default `memtrace leaks` run
# (issue #30): on heaps of 0.5, 5 and 10 M live objects with one thread
# allocating flat out, baseline and attached windows alternating on the same
# JVM (bench/leaks_cost.py explains each figure). Knobs (environment):
#   LEAKS_COST_JDKS     JDK folders (both JDKs; an absent one is SKIPped)
#   LEAKS_COST_OBJECTS  live object counts ("500000 5000000 10000000")
#   LEAKS_COST_ROUNDS   attached windows per heap (2), each between baselines
#   LEAKS_COST_SECONDS  window length (30: leaks' default duration)
# Needs a quiet machine: throughput ratios are the measurement.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
make -s all >/dev/null
tests/java/build.sh >/dev/null 2>&1
exec /usr/bin/python3 bench/leaks_cost.py
