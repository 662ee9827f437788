#!/usr/bin/env bash
# bench/alloc_overhead.sh - throughput of an allocation-heavy JVM with and
# without `memtrace alloc` attached, phases alternating on the same JVM
# (baseline, attached, baseline, ...): by class under the default budget,
# with whole stacks under it, with whole stacks and every sample taken
# (--budget 0); memtrace's own account of its choice is printed after each.
# Then the same for a JVM started with
# -XX:+DTraceAllocProbes, without and with `memtrace alloc --exact`, to show
# the cost that sampling avoids. Needs root.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
ROUNDS=${ROUNDS:-4}
# the allocating JVM: byte[256] at Java depth 40 as fast as one thread can
# (~8 GB/s on a quiet machine here; WORKLOAD=AllocBench for small objects)
WORKLOAD=${WORKLOAD:-AllocDeep --depth 40 --size 256}
PHASE=${PHASE:-3}
# EXTRA="--no-perfmap": more memtrace arguments for every session.
# BUDGETS="0.5 2": also the stacks under those budgets; ONLY_BUDGETS=1: only
# those (and NOWINDOWS=1: also with --no-budget-windows, thinning only: the
# trap paid on every refill)
tmp=$(mktemp -d /tmp/mt-bench.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$ROOT/tests/java/build.sh"
now_ms() { date +%s%3N; }
# CPU time (utime + stime, clock ticks) of /proc/$1: the probes' cost lands
# in the allocating thread's system time, so allocations per CPU second of
# that thread are a second measure, free of the GC threads and of the time
# the thread waits (a shared VM's steal and the other core's load move the
# wall-clock rate by +-10 % here)
jvm_cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# the allocating thread: the JVM's busiest over a second after warm-up (its
# CPU per allocation holds the probes' cost without the GC threads' noise)
busiest_tid() {
	local pid=$1 a b
	a=$(for t in /proc/$pid/task/*; do echo "${t##*/} $(awk '{print $14 + $15}' "$t/stat")"; done)
	sleep 1
	b=$(for t in /proc/$pid/task/*; do echo "${t##*/} $(awk '{print $14 + $15}' "$t/stat")"; done)
	join <(sort <<<"$a") <(sort <<<"$b") | awk '{d = $3 - $2; if (d > m) { m = d; t = $1 }} END {print t}'
}

run_jvm() { # name label_off label_on memtrace-args... ; JVM flags in JFLAGS
	local name=$1 off=$2 on=$3; shift 3
	"$JAVA" -Xmx256m $JFLAGS -cp "$ROOT/build/java" $WORKLOAD >"$tmp/$name.out" 2>&1 &
	local pid=$!
	until grep -q READY "$tmp/$name.out"; do sleep 0.1; done
	sleep 2 # JIT warm-up
	local tid; tid=$(busiest_tid "$pid")
	# per CPU second: the allocating thread's (THREAD_CPU=0: the whole JVM's)
	local cpuof=$pid; [ "${THREAD_CPU:-1}" = 1 ] && cpuof=$pid/task/$tid
	for ((r = 0; r < ROUNDS; r++)); do
		local a c; a=$(now_ms); c=$(jvm_cpu "$cpuof"); sleep "$PHASE"
		echo "$off $a $(now_ms) $c $(jvm_cpu "$cpuof")" >>"$tmp/$name.phases"
		"$ROOT/build/memtrace" -q alloc -p "$pid" "$@" ${EXTRA:-} --json >"$tmp/$name.mt.$r" 2>&1 &
		local mt=$!
		# the steady state: after memtrace's start-up (BPF load, the trap's
		# calibration: 0.8-1.3 s here, on the other core) and its first
		# measuring window (SETTLE s; SETTLE=0 puts them in the phase)
		for ((w = 0; w < 100; w++)); do grep -q '"start"' "$tmp/$name.mt.$r" && break; sleep 0.05; done
		sleep "${SETTLE:-1}"
		a=$(now_ms); c=$(jvm_cpu "$cpuof"); sleep "$PHASE"
		echo "$on $a $(now_ms) $c $(jvm_cpu "$cpuof")" >>"$tmp/$name.phases"
		# memtrace's own CPU over its session (start-up included), for the note
		awk -v s="$(($(now_ms) - a))" '{print $14 + $15, s}' "/proc/$mt/stat" >>"$tmp/$name.mtcpu" 2>/dev/null || true
		kill -INT $mt; wait $mt || true
	done
	kill $pid; wait $pid 2>/dev/null || true
	[ -s "$tmp/$name.mtcpu" ] && awk -v hz="$(getconf CLK_TCK)" '{t += $1; ms += $2} END {
		printf "  memtrace itself: %.1f s of CPU over %d sessions (start-up included), %.1f %% of one core over the measured phases\n",
			t / hz, NR, 100 * (t / hz) / (ms / 1000)}' "$tmp/$name.mtcpu"
	# what memtrace chose under the budget, the last round
	grep -h '"duty_cycle"' "$tmp/$name.mt.$((ROUNDS - 1))" 2>/dev/null |
		python3 -c 'import json,sys
t = sys.stdin.read().strip()
if t:
    d = json.loads(t); c = d.get("duty_cycle")
    print("  memtrace:", c, "rate", round(d["total_bytes"] / d["duration_s"] / 1e9, 2), "GB/s")
    if c and "measured_loss" in c:  # windows: what they cost, from the thread counter
        print("  memtrace, as it measured (the windows, all told), costs the busiest thread: %.2f %%"
              % (100 * c["measured_loss"]))
    elif c:  # its own account: the trap on every refill, the program on the kept ones
        trap = c["trap_ns"] * c["busiest_thread_samples_per_s"] / 1e9
        print("  memtrace, by its own account, costs the busiest thread: %.2f %%" %
              (100 * c["observed"] * (trap + c["keep"] * max(c["max_cost_share"] - trap, 0))))' || true
}

if [ -z "${ONLY_BUDGETS:-}" ]; then
echo "== allocation throughput, JVM without flags: baseline vs memtrace alloc attached (by class, default 1 % budget)"
JFLAGS="" run_jvm plain baseline "memtrace-alloc" --duration 1000
python3 "$ROOT/bench/phases.py" "$tmp/plain.out" "$tmp/plain.phases"
echo "== the same with whole Java stacks (--by stack: the walker, under the same budget)"
JFLAGS="" run_jvm stacks baseline "memtrace-alloc-stacks" --by stack --duration 1000
python3 "$ROOT/bench/phases.py" "$tmp/stacks.out" "$tmp/stacks.phases"
fi
for b in ${BUDGETS:-}; do # more budgets for the stacks, e.g. BUDGETS="0.5 2"
	echo "== whole Java stacks under --budget $b"
	JFLAGS="" run_jvm "stacks$b" baseline "memtrace-alloc-stacks-budget-$b" --by stack --budget "$b" --duration 1000
	python3 "$ROOT/bench/phases.py" "$tmp/stacks$b.out" "$tmp/stacks$b.phases"
done
if [ -n "${NOWINDOWS:-}" ]; then # NOWINDOWS=1: by class and by stack, thinning only
	echo "== by class, default budget, thinning only (--no-budget-windows: the trap on every refill)"
	JFLAGS="" run_jvm nowin baseline "memtrace-alloc-nowindows" --no-budget-windows --duration 1000
	python3 "$ROOT/bench/phases.py" "$tmp/nowin.out" "$tmp/nowin.phases"
	echo "== whole Java stacks, default budget, thinning only"
	JFLAGS="" run_jvm snowin baseline "memtrace-alloc-stacks-nowindows" --by stack --no-budget-windows --duration 1000
	python3 "$ROOT/bench/phases.py" "$tmp/snowin.out" "$tmp/snowin.phases"
fi
[ -n "${ONLY_BUDGETS:-}" ] && exit 0
echo "== the same with every sample taken (--by stack --budget 0: what the budget saves)"
JFLAGS="" run_jvm nobudget baseline "memtrace-alloc-stacks-all" --by stack --budget 0 --duration 1000
python3 "$ROOT/bench/phases.py" "$tmp/nobudget.out" "$tmp/nobudget.phases"
echo "== JVM with -XX:+DTraceAllocProbes: flag alone vs memtrace alloc --exact attached"
JFLAGS="-XX:+DTraceAllocProbes" run_jvm dtrace "dtrace-flag-only" "dtrace-flag+exact" --exact --duration 1000
cat "$tmp/plain.phases" >"$tmp/all.phases"
cat "$tmp/dtrace.phases" >>"$tmp/all.phases"
cat "$tmp/plain.out" "$tmp/dtrace.out" >"$tmp/all.out"
echo "== both JVMs against the flagless baseline (separate JVMs, run one after the other)"
python3 "$ROOT/bench/phases.py" "$tmp/all.out" "$tmp/all.phases"
