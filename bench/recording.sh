#!/usr/bin/env bash
# bench/recording.sh - what the crash-safe framing of recordings costs: the
# writer and the reader before it (one gzip stream, gzwrite/gzgets: the
# recording.c of the commit before "recording: a gzip member a second") and
# after it (a member a second or per MiB of JSON, CRC checked before a
# member's lines are read), side by side in one run on the same real event
# stream: a `memtrace record` of the demo JVM (REC_SECONDS, default 6), or
# the recording given as BENCH_REC. Both builds run in turns (RUNS each,
# default 5, ROUNDS writes per run); medians, their ratio and the sizes.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
B=build/bench/recording
JDK=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
mkdir -p "$B/old/monitor"
rev=$(git log --format=%H -1 --grep='^recording: a gzip member a second')
[ -n "$rev" ] || { echo "recording.sh: the framing commit is not in this history" >&2; exit 1; }
git show "$rev~1:user/monitor/recording.c" >"$B/old/recording.c"
git show "$rev~1:user/monitor/recording.h" >"$B/old/monitor/recording.h"
deps=(build/obj/user/monitor/sequencer.o build/obj/user/lib/util.o build/obj/user/lib/idmap.o)
cflags=(-O2 -g -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -I. -Ibuild)
cc "${cflags[@]}" -I"$B/old" -o "$B/bench_old" bench/recording_bench.c "$B/old/recording.c" \
	"${deps[@]}" -lz -lm
cc "${cflags[@]}" -o "$B/bench_new" bench/recording_bench.c build/obj/user/monitor/recording.o \
	build/obj/user/monitor/recording_read.o build/obj/user/lib/jsoncur.o \
	"${deps[@]}" -lz -lm

rec=${BENCH_REC:-}
if [ -z "$rec" ]; then
	rec=$B/input.rec.gz
	tests/java/build.sh >/dev/null
	"$JDK/bin/java" -Xmx256m -cp build/java DemoWorkload >"$B/demo.out" 2>&1 &
	jvm=$!
	trap 'kill $jvm 2>/dev/null' EXIT
	for _ in $(seq 100); do grep -q READY "$B/demo.out" 2>/dev/null && break; sleep 0.1; done
	build/memtrace record -p $jvm -o "$rec" --duration "${REC_SECONDS:-6}" 2>"$B/record.err"
	kill $jvm
fi
out=${BENCH_OUT:-/tmp/memtrace-recbench.$$.rec.gz}
old=() new=()
for _ in $(seq "${RUNS:-5}"); do
	old+=("$("$B/bench_old" "$rec" "$out" "${ROUNDS:-5}")")
	new+=("$("$B/bench_new" "$rec" "$out" "${ROUNDS:-5}")")
done
python3 - "${old[@]}" -- "${new[@]}" <<'PY'
import statistics, sys
a = sys.argv[1:]
k = a.index("--")
def parse(rows):
    d = [dict(kv.split("=") for kv in r.split()) for r in rows]
    return {key: statistics.median(float(x[key]) for x in d) for key in d[0]}
old, new = parse(a[:k]), parse(a[k + 1:])
print(f"recording of {int(old['events'])} real events (demo JVM), medians of {k} runs each:")
print(f"  writer  before {old['write_eps']/1e6:6.3f} M events/s   after {new['write_eps']/1e6:6.3f} M events/s   after/before {new['write_eps']/old['write_eps']:.3f}")
print(f"  reader  before {old['read_eps']/1e6:6.3f} M events/s   after {new['read_eps']/1e6:6.3f} M events/s   after/before {new['read_eps']/old['read_eps']:.3f}")
print(f"  size    before {old['bytes']/1e3:8.1f} kB           after {new['bytes']/1e3:8.1f} kB           after/before {new['bytes']/old['bytes']:.3f}")
PY
