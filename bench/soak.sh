#!/usr/bin/env bash
# bench/soak.sh [SECONDS] - `memtrace serve --all` over JVM churn for SECONDS
# (default 120; an hour is `bench/soak.sh 3600`), bounded by SOAK_MAX_JVMS
# JVMs started (default 400) and SOAK_LIVE alive at once (default 5): JVMs
# killed as they live, while memtrace's agent loads into them, during a query
# (bench/soak.py says how). serve's RSS and open descriptors must stay flat,
# every live JVM's series present, nothing of memtrace's left in /tmp.
# Runs in a pid and mount namespace of its own (unshare) with a private
# tmpfs /tmp, so serve watches exactly the soak's JVMs and /tmp is exactly
# theirs. Results: build/soak/soak.json (SOAK_OUT). Needs root (BPF).
# The binary and the agent are copied to SOAK_OUT first (a rebuild meanwhile
# changes nothing of a long run).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export SOAK_SECONDS=${1:-${SOAK_SECONDS:-120}}
export SOAK_OUT=${SOAK_OUT:-$ROOT/build/soak}
"$ROOT/tests/java/build.sh" >/dev/null
rm -rf "$SOAK_OUT"
mkdir -p "$SOAK_OUT"
cp "$ROOT/build/memtrace" "$ROOT/build/libmemtrace-agent.so" "$SOAK_OUT/"
export MEMTRACE=$SOAK_OUT/memtrace
exec unshare --pid --fork --mount --mount-proc \
	bash -c "mount -t tmpfs -o size=512m tmpfs /tmp && exec python3 '$ROOT/bench/soak.py'"
