#!/usr/bin/env bash
# bench/serve_overhead.sh [SECONDS] - CPU and RSS of `memtrace serve --all`
# watching 4 JVMs (2 on JDK 17, 2 on JDK 25, each collecting about once a
# second: tests/java/SteadyGc.java) while /metrics is scraped every second.
# Reports serve's CPU as % of one core over the run, and its RSS sampled every
# 10 s (first, max, last). Goal (issue 6): < 2 % of one core, RSS flat.
# Default 600 s. Needs root (BPF).
#   SERVE_ARGS="--alloc"  extra serve options (e.g. allocation sampling on for all)
#   PIDNS=1               run the 4 JVMs and serve in a new pid namespace of their
#                         own (unshare), so serve watches exactly those 4; without
#                         it, other JVMs on the machine are watched too.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-600}
JDK17=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
"$ROOT/tests/java/build.sh"
tmp=$(mktemp -d /tmp/mt-serve-bench.XXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do pkill -P "$p" 2>/dev/null; kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
jvms=""
for jdk in "$JDK17" "$JDK17" "$JDK25" "$JDK25"; do
	jvms+="'$jdk/bin/java' -Xmx32m -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -cp '$ROOT/build/java' SteadyGc 16 >'$tmp/jvm.\$RANDOM.out' 2>&1 & "
done
serve_cmd="exec '$ROOT/build/memtrace' -q serve --all --listen 127.0.0.1:$port --rescan 2 ${SERVE_ARGS:-} 2>'$tmp/serve.err'"
if [ "${PIDNS:-0}" = 1 ]; then
	# serve is pid 1 of the namespace: when it ends, the JVMs go with it
	unshare --pid --fork --mount-proc bash -c "$jvms sleep 3; $serve_cmd" &
	pids+=($!)
	sleep 4
	serve=$(pgrep -P "${pids[0]}" | head -1)
else
	bash -c "$jvms wait" &
	pids+=($!)
	sleep 3
	bash -c "$serve_cmd" &
	serve=$!
fi
pids+=("$serve")
sleep 5   # attach, first rescan

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$serve/stat"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$serve/status"; }
hz=$(getconf CLK_TCK)
t0=$(date +%s.%N); c0=$(cpu_ticks)
rss_first=$(rss_kb); rss_max=$rss_first; rss_last=$rss_first
rss_series="$rss_first"   # every 60 s
next_rss=$(( $(date +%s) + 10 )) next_series=$(( $(date +%s) + 60 ))
end=$(( $(date +%s) + SECS ))
while [ "$(date +%s)" -lt "$end" ]; do
	python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=5).read()" ||
		{ echo "scrape failed" >&2; cat "$tmp/serve.err" >&2; exit 1; }
	if [ "$(date +%s)" -ge "$next_rss" ]; then
		rss_last=$(rss_kb); [ "$rss_last" -gt "$rss_max" ] && rss_max=$rss_last
		next_rss=$(( $(date +%s) + 10 ))
	fi
	if [ "$(date +%s)" -ge "$next_series" ]; then
		rss_series+=" $(rss_kb)"
		next_series=$(( next_series + 60 ))
	fi
	sleep 1
done
t1=$(date +%s.%N); c1=$(cpu_ticks); rss_last=$(rss_kb)
[ "$rss_last" -gt "$rss_max" ] && rss_max=$rss_last
metrics=$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$port/metrics', timeout=5).read().decode())")
watched=$(echo "$metrics" | awk '/^memtrace_jvms_watched / { print $2 }')
colls=$(echo "$metrics" | awk '/^jvm_gc_(pause|concurrent_phase_time)_seconds_count/ { s += $NF } END { print s + 0 }')
python3 - "$t0" "$t1" "$c0" "$c1" "$hz" "$rss_first" "$rss_max" "$rss_last" "$watched" "$colls" "${SERVE_ARGS:-}${PIDNS:+ (own pid ns)}" <<'PY'
import sys
t0, t1, c0, c1, hz = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
first, mx, last, watched, colls = sys.argv[6:11]
secs = t1 - t0
print("serve --all %s: %s JVMs watched, %s collections seen, %.0f s, /metrics scraped every 1 s" % (sys.argv[11], watched, colls, secs))
print("  CPU: %.2f %% of one core (%.2f s user+sys)" % (100.0 * (c1 - c0) / hz / secs, (c1 - c0) / hz))
print("  RSS: first %s KiB, max %s KiB, last %s KiB" % (first, mx, last))
PY
echo "  RSS every 60 s (KiB): $rss_series"
