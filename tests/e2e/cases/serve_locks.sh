#!/usr/bin/env bash
# serve_locks - `memtrace serve --locks` exports java.util.concurrent park
# counters per blocker class and kind (memtrace_lock_parks_total,
# memtrace_lock_parked_seconds_total) to Prometheus; on the same run JFR's
# jdk.ThreadPark (threshold 0) counts the same parks on the workload's fair
# ReentrantLock (tests/java/ParkContention.java), and the seconds agree within 5 %.
# ALONE: parked seconds against JFR's within 5 %
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

PORT=$(free_port)

sed '/name="jdk.ThreadPark"/,/<\/event>/{s#<setting name="threshold"[^>]*>[^<]*</setting>#<setting name="threshold">0 ms</setting>#;s#<setting name="stackTrace">true#<setting name="stackTrace">false#}' \
	"$JAVA_HOME/lib/jfr/default.jfc" >"$TMPD/park.jfc"
jvm_start p -Xmx128m "-XX:StartFlightRecording:filename=$TMPD/p.jfr,settings=$TMPD/park.jfc" \
	ParkContention 4 1000 50 "$TMPD/go"
pid=$JVM_PID
serve_start "$TMPD/serve.out" -p "$pid" --locks --listen "127.0.0.1:$PORT"
wait_for_line "$TMPD/serve.out" "watching pid $pid" 30 || { cat "$TMPD/serve.out"; fail "serve did not watch the JVM"; }
touch "$TMPD/go"
wait_for_line "$TMPD/p.out" DONE 60 || fail "the workload did not finish"
sleep 2.5 # the series refresh every second
python3 - "$PORT" >"$TMPD/metrics.txt" <<'PY' || fail "GET /metrics"
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode())
PY
serve_stop
grep memtrace_lock_ "$TMPD/metrics.txt" >&2
jvm_stop "$pid"
jtool jfr print --json --events jdk.ThreadPark "$TMPD/p.jfr" >"$TMPD/jfr.json" || fail "jfr print"
python3 - "$TMPD/metrics.txt" "$TMPD/jfr.json" <<'PY' || fail "serve's park series disagree with JFR"
import json, re, sys
fair = "java.util.concurrent.locks.ReentrantLock$FairSync"
series = {}
for line in open(sys.argv[1]):
    m = re.match(r'(memtrace_lock_\w+)\{(.*)\} (\S+)$', line.strip())
    if m:
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        series[(m.group(1), labels["class"], labels["kind"])] = float(m.group(3))
ev = [e for e in json.load(open(sys.argv[2]))["recording"]["events"]
      if e["values"]["parkedClass"] and e["values"]["parkedClass"]["name"].replace("/", ".") == fair]
def dur(s):
    m = re.match(r"PT(?:(\d+)M)?([\d.]+)S", s)
    return int(m.group(1) or 0) * 60 + float(m.group(2))
n, t = len(ev), sum(dur(e["values"]["duration"]) for e in ev)
got_n = series.get(("memtrace_lock_parks_total", fair, "contended"))
got_t = series.get(("memtrace_lock_parked_seconds_total", fair, "contended"))
print("jfr", n, t, "serve", got_n, got_t)
assert n > 100 and got_n == n, (n, got_n)
assert abs(got_t - t) <= 0.05 * t, (t, got_t)
assert series.get(("memtrace_lock_parks_total", "(no blocker)", "waiting"), 0) >= 100, series
PY
