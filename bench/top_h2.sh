#!/usr/bin/env bash
# bench/top_h2.sh - `memtrace top --stacks` on a real program nobody here
# wrote: Debian's H2 database server (libh2-java) under a concurrent JDBC load
# (tests/java/H2Load.java, as bench/alloc_h2.sh), on each JDK, against JFR's
# jdk.ObjectAllocationSample (unthrottled, stack depth 256) on the same run:
# the top 10 paths (frames and class) by bytes since the view started (of
# those any interval's record listed), each
# path's share of all paths' bytes against JFR's share of the samples' weight
# with that stack and class during the load (both record the same events, the
# TLAB refills and allocations outside TLABs, each weighing the bytes its
# thread allocated since its previous one: this checks the walk, the names and
# the weights, not the sampling). Frames JFR's stack traces leave out (Thread.runWith, lambda
# proxies) are dropped on both sides. Informational (sampling on both sides).
# Needs root.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
h2_require top_h2
tmp=$(mktemp -d /tmp/mt-bench-h2t.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
"$ROOT/tests/java/build.sh" >/dev/null
port=19292
for jdk in $JDKS; do
	[ -x "$jdk/bin/java" ] || { echo "== $jdk: absent, skipped"; continue; }
	d="$tmp/$(basename "$jdk")"
	port=$((port + 1))
	h2_start "$d" "$jdk" "$port" -XX:FlightRecorderOptions:stackdepth=256 \
		"-XX:StartFlightRecording:filename=$d/h2.jfr,settings=profile,jdk.ObjectAllocationSample#throttle=100000/s"
	server=$H2_SERVER client=$H2_CLIENT
	"$ROOT/build/memtrace" top -p "$server" --stacks --json --interval 1 >"$d/top.json" 2>"$d/top.err" &
	mt=$!
	for _ in $(seq 300); do grep -q '"event":"top"' "$d/top.json" && break; sleep 0.1; done
	t0=$(date +%s%N)
	touch "$d/go"
	wait "$client"
	sleep 1.5 # a record after the load
	kill -INT "$mt"; wait "$mt"
	t1=$(date +%s%N)
	kill "$server"; wait "$server" || true # JFR writes its recording at exit
	"$jdk/bin/jfr" print --json --stack-depth 256 --events jdk.ObjectAllocationSample "$d/h2.jfr" >"$d/jfr.json"
	echo "== H2 $("$jdk/bin/java" -version 2>&1 | head -1), $CLIENTS clients, $SECS s: $(grep OPS "$d/client.out")"
	PYTHONPATH="$ROOT/bench" python3 - "$d/top.json" "$d/jfr.json" "$t0" "$t1" <<'PY'
import json, sys
from jfrjson import ns, java_name  # bench/, through PYTHONPATH
recs = [r for r in (json.loads(l) for l in open(sys.argv[1]) if l.startswith("{"))
        if r.get("event") == "top"]
last = recs[-1]
# each record lists the interval's top 10 with their bytes since start: the
# paths heaviest since start are among some interval's top 10 during the load
seen = {}
for r in recs:
    for p in r["top_paths"]:
        seen[(tuple(p["frames"]), p["class"])] = p
top = sorted(seen.values(), key=lambda p: -p["total_bytes"])[:10]
ev = json.load(open(sys.argv[2]))["recording"]["events"]
t0, t1 = int(sys.argv[3]), int(sys.argv[4])
hidden = lambda f: f == "java.lang.Thread.runWith" or "$$Lambda" in f
jfr, jw, nj = {}, 0, 0
for e in ev:
    v = e["values"]
    if not (t0 <= ns(v["startTime"]) <= t1) or not v.get("stackTrace"):
        continue
    fr = [f["method"]["type"]["name"].replace("/", ".") + "." + f["method"]["name"]
          for f in reversed(v["stackTrace"]["frames"])]
    key = (";".join(f for f in fr if not hidden(f)), java_name(v["objectClass"]["name"]))
    jfr[key] = jfr.get(key, 0) + v["weight"]
    jw += v["weight"]
    nj += 1
tot = last["java_stacks"]["total_bytes"]
print(f"memtrace: {tot / 1e6:.1f} MB on {last['java_stacks']['paths']} paths; "
      f"JFR: {jw / 1e6:.1f} MB of sample weight, {nj} samples")
worst = 0
for p in top:
    key = (";".join(f for f in p["frames"] if not hidden(f)), p["class"])
    m, j = 100 * p["total_bytes"] / tot, 100 * jfr.get(key, 0) / jw
    worst = max(worst, abs(m - j))
    leaf = [f for f in p["frames"] if not hidden(f)][-2:]
    print(f"  {m:5.1f} % memtrace {j:5.1f} % JFR  depth {len(p['frames']):3}  {p['class']} <- {' <- '.join(reversed(leaf))}")
print(f"top {len(top)} paths: largest share difference to JFR {worst:.1f} points")
keys = [(";".join(f for f in p["frames"] if not hidden(f)), p["class"]) for p in top]
print(f"these paths hold {100 * sum(p['total_bytes'] for p in top) / tot:.1f} % of memtrace's bytes, "
      f"{100 * sum(jfr.get(k, 0) for k in keys) / jw:.1f} % of JFR's weight; depth "
      f"{min(len(k[0].split(';')) for k in keys)}-{max(len(k[0].split(';')) for k in keys)} frames")
PY
done
