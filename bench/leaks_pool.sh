#!/usr/bin/env bash
# bench/leaks_pool.sh - a `leaks` series in place, with and without the memory memtrace
# keeps for the frozen copy's records (issue #29; bench/leaks_pool.py explains
# each figure). Knobs (environment):
#   LEAKS_POOL_JDKS     JDK folders (both JDKs; an absent one is SKIPped)
#   LEAKS_POOL_OBJECTS  FreezeWorkload's N (2N live objects; 2500000)
#   LEAKS_POOL_ROUNDS   runs per mode (3), alternating
# Needs a quiet machine: times are the measurement.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
make -s all >/dev/null
tests/java/build.sh >/dev/null 2>&1
exec /usr/bin/python3 bench/leaks_pool.py
