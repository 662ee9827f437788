#!/usr/bin/env bash
# bench/alloc_stacks_cost.sh - the cost of a sample with the Java stack walker
# (bpf/jstack.bpf.h): one allocation-heavy JVM (tests/java/AllocDeep.java,
# allocating at Java depth DEPTH, default 40, without -XX:+PreserveFramePointer),
# phases alternating on it: baseline, `memtrace alloc` by class (trap only, no
# walk), `memtrace alloc` with stacks (trap + walk). Prints the throughput of
# each phase side by side, and from the kernel's own BPF statistics
# (kernel.bpf_stats_enabled, switched on for the run and restored) the time
# in the probe per sample, the mean walk depth and the cost per frame. The
# trap itself (uprobe entry/exit) is not in the BPF figure: it shows as the
# throughput lost by the class-only phase, and is measured apart by
# build/bench/probe_cost (bare trap: a no-op program on a USDT site), run
# here when built, to give the whole cost per sample. Needs root.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
ROUNDS=${ROUNDS:-3}
PHASE=${PHASE:-4}
DEPTH=${DEPTH:-40}
SIZE=${SIZE:-256}
tmp=$(mktemp -d /tmp/mt-bench.XXXX)
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
trap 'kill $(jobs -p) 2>/dev/null || true; sysctl -qw kernel.bpf_stats_enabled=$stats_was; rm -rf "$tmp"' EXIT
"$ROOT/tests/java/build.sh"
now_ms() { date +%s%3N; }
sysctl -qw kernel.bpf_stats_enabled=1

# prog_stats SINCE: "run_time_ns run_cnt" of the newest handle_new_tlab program
# loaded at or after epoch second SINCE (memtrace's; bpftool here shows no pids)
prog_stats() {
	bpftool prog show -j | python3 -c '
import json, sys
since = int(sys.argv[1])
ps = [p for p in json.load(sys.stdin)
      if p.get("name") == "handle_new_tlab" and p.get("loaded_at", 0) >= since]
p = max(ps, key=lambda p: p["id"]) if ps else {}
print(p.get("run_time_ns", 0), p.get("run_cnt", 0))' "$1"
}

"$JAVA" -Xmx256m -cp "$ROOT/build/java" AllocDeep --depth "$DEPTH" --size "$SIZE" >"$tmp/w.out" 2>&1 &
pid=$!
until grep -q READY "$tmp/w.out"; do sleep 0.1; done
sleep 3 # JIT warm-up
for ((r = 0; r < ROUNDS; r++)); do
	a=$(now_ms); sleep "$PHASE"; echo "baseline $a $(now_ms)" >>"$tmp/phases"
	for mode in trap walk; do
		args=(--duration 1000)
		[ $mode = walk ] && args+=(--collapsed "$tmp/walk.$r.collapsed" --json)
		since=$(date +%s)
		"$ROOT/build/memtrace" -q alloc -p "$pid" "${args[@]}" >"$tmp/$mode.$r.out" 2>&1 &
		mt=$!
		# attached once its program runs (loading takes 1-4 s on a busy
		# machine; a SIGINT before memtrace catches it would be lost)
		for ((w = 0; w < 300; w++)); do
			s0=$(prog_stats $since)
			[ "${s0#* }" != 0 ] && break
			sleep 0.1
		done
		sleep 0.5
		s0=$(prog_stats $since)
		a=$(now_ms); sleep "$PHASE"; b=$(now_ms)
		s1=$(prog_stats $since)
		echo "$mode $a $b" >>"$tmp/phases"
		echo "$mode $s0 $s1 $((b - a))" >>"$tmp/stats"
		kill -INT $mt; wait $mt || true
	done
done
kill $pid; wait $pid 2>/dev/null || true
echo "== JDK $("$JAVA" -version 2>&1 | head -1), Java depth $DEPTH, byte[$SIZE]"
python3 "$ROOT/bench/phases.py" "$tmp/w.out" "$tmp/phases"
trap_ns=0
if [ -x "$ROOT/build/bench/probe_cost" ]; then
	trap_ns=$("$ROOT/build/bench/probe_cost" 2>/dev/null | sed -n 's/^ *bare trap (no-op program) *\([0-9.]*\) ns.*/\1/p')
fi
python3 - "$tmp" "${trap_ns:-0}" <<'PY'
import glob, json, statistics, sys
tmp = sys.argv[1]
trap_ns = float(sys.argv[2] or 0)
per = {}
for line in open(f"{tmp}/stats"):
    mode, t0, c0, t1, c1, ms = line.split()
    dt, dc = int(t1) - int(t0), int(c1) - int(c0)
    if dc > 0:
        per.setdefault(mode, []).append((dt / dc, dc / (int(ms) / 1000)))
frames = samples = 0
for f in glob.glob(f"{tmp}/walk.*.collapsed"):
    for line in open(f):
        stack, _, b = line.rstrip("\n").rpartition(" ")
        # frames per stack (the class leaf and cut markers are not frames), by bytes
        fr = [x for x in stack.split(";")[:-1] if not x.startswith("[stack cut")]
        frames += len(fr) * int(b); samples += int(b)
depth = None
for f in glob.glob(f"{tmp}/walk.*.out"):
    for line in open(f):
        if line.startswith('{"event":"alloc"'):
            j = json.loads(line)
            print("  walks:", j["java_stacks"]["walks"], "stops:",
                  {k: v for k, v in j["java_stacks"]["stops"].items() if v})
for mode, v in per.items():
    ns = statistics.median(x for x, _ in v)
    rate = statistics.median(r for _, r in v)
    print(f"  {mode:5} BPF time per sample {ns:8.0f} ns  ({rate:8.0f} samples/s, "
          f"{ns * rate / 1e7:.2f} % of one CPU)")
if "trap" in per and "walk" in per and samples:
    d = frames / samples
    w = statistics.median(x for x, _ in per["walk"]) - statistics.median(x for x, _ in per["trap"])
    print(f"  walk: {w:.0f} ns per sample over a mean of {d:.1f} frames "
          f"= {w / d:.1f} ns per frame")
    print("  (frames: Java frames named in the profile, mean weighted by bytes; a")
    print("   runtime stub below them is walked too and not counted)")
if trap_ns and "walk" in per:
    tot = trap_ns + statistics.median(x for x, _ in per["walk"])
    rate = statistics.median(r for _, r in per["walk"])
    print(f"  trap (uprobe, build/bench/probe_cost) {trap_ns:.0f} ns: trap + walk {tot:.0f} ns per "
          f"sample; at {rate:.0f} samples/s {tot * rate / 1e7:.2f} % of one CPU")
PY
