#!/usr/bin/env bash
# bench/freeze.sh - the JVM time lost to one heap snapshot (pause + the page
# faults and slowdown after it), memtrace's frozen walk vs its walk in a pause
# vs `jmap -histo:live` vs `jcmd GC.heap_dump`, on the same heaps of
# 0.5, 2, 5 and 10 M live objects with a mutator allocating flat out
# (bench/freeze.py explains each figure). Knobs (environment):
#   JAVA_HOME                 the JDK (default JDK 17)
#   FREEZE_BENCH_OBJECTS      live object counts ("500000 2000000 5000000 10000000")
#   FREEZE_BENCH_BLOB_MB      MiB of byte[256 KiB] besides, per heap ("0"; "0 4096": heap size)
#   FREEZE_BENCH_ROUNDS       repetitions per method (3)
#   FREEZE_BENCH_THREADS      mutator threads (1)
#   FREEZE_BENCH_GC           G1, Parallel, Serial or Shenandoah (G1)
#   FREEZE_BENCH_METHODS      ("frozen paused jmap dump")
#   FREEZE_BENCH_JSON         also write every run as JSON there
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
make -s all build/bench/faultcost >/dev/null
tests/java/build.sh >/dev/null 2>&1
exec python3 bench/freeze.py
