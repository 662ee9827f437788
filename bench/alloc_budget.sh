#!/usr/bin/env bash
# bench/alloc_budget.sh - how close `memtrace alloc`'s estimates stay to the
# JVM's own count under its cost budget's two levers, over a longer run than
# the e2e test (AllocShares: one thread, shares 50/30/20 by construction,
# ThreadMXBean's count of its bytes): samples kept at random with
# probability 0.1 and 0.02, and time windows (here fixed at 30 % of the
# time), all at once on one JVM. MB= bytes to
# allocate (default 40960). Needs root.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
tmp=$(mktemp -d /tmp/mt-bench.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$ROOT/tests/java/build.sh"
"$JAVA" -Xmx256m -cp "$ROOT/build/java" AllocShares --go "$tmp/go" --mb "${MB:-40960}" >"$tmp/w.out" 2>&1 &
jvm=$!
until grep -q READY "$tmp/w.out"; do sleep 0.1; done
pids=()
for mode in 0.1:1 0.02:1 1:0.3; do
	MEMTRACE_TEST_DUTY=$mode "$ROOT/build/memtrace" alloc -p "$jvm" --json >"$tmp/$mode.json" 2>/dev/null &
	pids+=($!)
done
sleep 2
touch "$tmp/go"
until grep -q DONE "$tmp/w.out"; do sleep 0.5; done
kill -INT "${pids[@]}"
wait "${pids[@]}" || true
echo "== estimates vs ThreadMXBean ($(grep allocated_bytes "$tmp/w.out"))"
for mode in 0.1:1 0.02:1 1:0.3; do
	python3 - "$tmp/$mode.json" "$tmp/w.out" "$mode" <<'PY'
import json, re, sys
d = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"event":"alloc"')][-1]
jvm = int(re.search(r"allocated_bytes (\d+)", open(sys.argv[2]).read()).group(1))
c = {x["class"]: x["bytes"] for x in d["classes"]}
k = ["AllocShares$Big", "AllocShares$Mid", "AllocShares$Small"]
t = sum(c.get(x, 0) for x in k) or 1
keep, duty = sys.argv[3].split(":")
print(f"  keep {keep:5} duty {duty:4}: total/ThreadMXBean {d['total_bytes'] / jvm:.4f}, shares "
      + "/".join(f"{100 * c.get(x, 0) / t:.1f}" for x in k)
      + f", observed {d['duty_cycle']['observed']:.3f}, windows {d['duty_cycle']['windows']}")
PY
done
