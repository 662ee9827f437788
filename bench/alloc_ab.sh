#!/usr/bin/env bash
# bench/alloc_ab.sh - #13's goal 5 as a paired A/B on one JVM, with its own
# control: AllocDeep (byte[256] at Java depth 40, one thread, ~8 GB/s here)
# runs throughout; each round is, for every configuration, a PHASE s
# baseline, then a session started and left to settle SETTLE s, measured
# over PHASE s. A configuration is "label|env|memtrace alloc args"; the label
# "aa" starts no memtrace at all (a sleep in its place): the A/A control,
# whose paired ratio says what the method reads when nothing is attached
# (order and drift). Prints bench/phases.py's paired ratios (each session
# phase against the baselines on either side) per wall second and per CPU
# second of the allocating thread, the share of each phase the JVM spent
# stopped (hsperfdata sun.rt.safepointTime) and memtrace's own CPU.
# ROUNDS (12), PHASE (8), SETTLE (6), CFGS (default below), JAVA_HOME.
# Needs root. ~ROUNDS x configurations x (2 PHASE + SETTLE + 1) s.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
ROUNDS=${ROUNDS:-12} PHASE=${PHASE:-8} SETTLE=${SETTLE:-6}
CFGS=${CFGS:-"aa||
class||
stacks||--by stack"}
tmp=$(mktemp -d /tmp/mt-bench.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$ROOT/tests/java/build.sh"
now_ms() { date +%s%3N; }
ticks() { awk '{print $14 + $15}' "$1"; }
# hsperfdata's sun.rt.safepointTime (ns): the JVM's stopped time. Read here
# rather than with `jcmd PerfCounter.print`, whose JVM start would load the
# other core in the middle of the phases.
stopped_ns() {
	python3 - "$1" <<'PY'
import glob, struct, sys
d = open(glob.glob(f"/tmp/hsperfdata_*/{sys.argv[1]}")[0], "rb").read()
bo = "<" if d[4] == 1 else ">"
off, n = struct.unpack_from(bo + "ii", d, 24)
for _ in range(n):
    ln, noff, vlen, typ, _f, _u, _v, doff = struct.unpack_from(bo + "iiibbbbi", d, off)
    name = d[off + noff:d.index(b"\0", off + noff)]
    if name == b"sun.rt.safepointTime":
        print(struct.unpack_from(bo + "q", d, off + doff)[0]); break
    off += ln
PY
}
"$JAVA" -Xmx256m -cp "$ROOT/build/java" AllocDeep --depth 40 --size 256 >"$tmp/w.out" 2>&1 &
pid=$!
until grep -q READY "$tmp/w.out"; do sleep 0.1; done
sleep 3 # JIT warm-up
# the allocating thread: the busiest one
tid=$(for t in /proc/$pid/task/*; do echo "${t##*/} $(ticks "$t/stat")"; done | sort -k2 -n | tail -1 | cut -d" " -f1)
tstat=/proc/$pid/task/$tid/stat
for ((r = 0; r < ROUNDS; r++)); do
	while IFS='|' read -r label envs args; do
		[ -z "$label" ] && continue
		a=$(now_ms); c=$(ticks $tstat); s=$(stopped_ns $pid); sleep "$PHASE"
		echo "baseline $a $(now_ms) $c $(ticks $tstat)" >>"$tmp/phases"
		echo "baseline $s $(stopped_ns $pid) 0 0" >>"$tmp/stops"
		if [ "$label" = aa ]; then
			sleep 100000 &
			mt=$!
		else
			# shellcheck disable=SC2086
			env $envs "$ROOT/build/memtrace" -q alloc -p "$pid" $args --duration 100000 --json \
				>"$tmp/mt.$label.$r" 2>&1 &
			mt=$!
			for ((w = 0; w < 100; w++)); do grep -q '"start"' "$tmp/mt.$label.$r" && break; sleep 0.05; done
		fi
		sleep "$SETTLE"
		m=$(ticks /proc/$mt/stat)
		a=$(now_ms); c=$(ticks $tstat); s=$(stopped_ns $pid); sleep "$PHASE"
		echo "$label $a $(now_ms) $c $(ticks $tstat)" >>"$tmp/phases"
		echo "$label $s $(stopped_ns $pid) $m $(ticks /proc/$mt/stat)" >>"$tmp/stops"
		# (a background sleep ignores SIGINT, as a non-interactive shell sets it)
		if [ "$label" = aa ]; then kill $mt; else kill -INT $mt; fi
		wait $mt 2>/dev/null || true
	done <<<"$CFGS"
done
kill $pid; wait $pid 2>/dev/null || true
echo "== JDK $("$JAVA" -version 2>&1 | head -1), AllocDeep depth 40 byte[256], $ROUNDS rounds, ${PHASE} s phases after ${SETTLE} s"
python3 "$ROOT/bench/phases.py" "$tmp/w.out" "$tmp/phases"
python3 - "$tmp/stops" "$PHASE" <<'PY'
import os, statistics, sys
ph, hz = float(sys.argv[2]), os.sysconf("SC_CLK_TCK")
by = {}
for l in open(sys.argv[1]):
    f = l.split()
    by.setdefault(f[0], []).append(((int(f[2]) - int(f[1])) / 1e9 / ph, (int(f[4]) - int(f[3])) / hz / ph))
for k, v in by.items():
    print(f"  {k:10} JVM stopped {100 * statistics.median(x for x, _ in v):.2f} % of the phase (median);"
          f" memtrace's CPU {100 * statistics.median(y for _, y in v):.2f} % of a core")
PY
