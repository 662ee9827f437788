#!/usr/bin/env bash
# bench/heap_speed.sh - time to an answer, CPU of every process involved and
# peak RSS of `memtrace histo`, `heap --retained` and a query on a frozen
# snapshot, side by side with `jmap -histo:live` and `jcmd GC.heap_dump` on the
# same idle heaps of 0.5, 5 and 10 M live objects, both JDKs (issue #29;
# bench/heap_speed.py explains each figure). Knobs (environment):
#   HEAP_SPEED_JDKS      JDK folders ("/usr/lib/jvm/java-17-openjdk-amd64
#                        /usr/lib/jvm/temurin-25-jdk-amd64"; an absent one is SKIPped)
#   HEAP_SPEED_OBJECTS   live object counts ("500000 5000000 10000000")
#   HEAP_SPEED_ROUNDS    repetitions per method (3), in rotating order
#   HEAP_SPEED_METHODS   ("histo retained query jmap dump")
#   HEAP_SPEED_TMP       where the heap dumps and safepoint logs go (/tmp)
#   HEAP_SPEED_JSON      also write every run as JSON there
# Needs a quiet machine: CPU is measured per process, but answer times are not.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
make -s all >/dev/null
tests/java/build.sh >/dev/null 2>&1
exec /usr/bin/python3 bench/heap_speed.py
