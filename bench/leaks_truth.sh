#!/usr/bin/env bash
# bench/leaks_truth.sh - issue #30's truth, repeated: RUNS (10) default
# `memtrace leaks` runs per JDK on tests/java/LeakGrowth (three slow leaks
# under >= 1 GB/s of churn, a cache filled at start, an LRU that churns),
# each checked as tests/e2e/cases/leaks_growth.sh checks one: every leak a
# suspect with its holder, exact growth counts (the workload's own), the
# caches never suspects, six snapshots' pauses under one jmap -histo:live's.
# Runs one case at a time (the pause comparison wants the machine alone).
# Prints each run's verdict and pause figures, then "JDK N: K/RUNS".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-10}
make -s all >/dev/null && tests/java/build.sh >/dev/null 2>&1
out=$(mktemp -d /tmp/mt-leaks-truth.XXXX)
for i in $(seq "$RUNS"); do
	E2E_JOBS=1 E2E_NOTES=1 tests/e2e/run.sh tests/e2e/cases/leaks_growth.sh >"$out/run.$i" 2>&1
	grep -E "^(PASS|FAIL)|pauses:" "$out/run.$i" | sed "s/^/run $i: /"
done
for v in 17 25; do
	n=$(cat "$out"/run.* | grep -c "^PASS  leaks_growth \[jdk $v\]")
	echo "JDK $v: $n/$RUNS runs named every leak, exactly, and no cache"
done
rm -rf "$out"
