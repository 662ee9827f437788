#!/usr/bin/env bash
# bench/locks_derby.sh - `memtrace locks` against JFR on a server that waits
# on its own locks: Debian's Derby network server (libderby-java) under
# tests/java/DerbyRows.java (UPDATERS connections queue on 4 hot rows -
# Object.wait in ActiveLock.waitForGrant -, INSERTERS wait for the log's
# flush - Object.wait on LogToFile -; loopback only), on each JDK. The server
# runs with JFR's jdk.JavaMonitorWait, jdk.JavaMonitorEnter and
# jdk.ThreadPark at threshold 0 (default.jfc and profile.jfc keep only events
# of 20 ms and 10 ms or more: a comparison with them compares different sets;
# the tables say what default.jfc would have kept) and without stacks (tens of
# thousands of waits: their JSON would take minutes; PARK_STACKS=1 keeps
# jdk.ThreadPark's, as default.jfc has them). memtrace traces it with
# --enable-monitor-probes for SECS seconds of the load. Compared on the same
# run, over the events wholly inside memtrace's windows (from the attach of
# its monitor probes to the end of its monitor stream, monitors_real_ns to
# stream_end_real_ns; from the attach of its park probes to the moment it read
# its park counters, for parks): Object.wait calls and time per monitor class,
# contended monitor entries per class, parks per blocker class, side by side
# with the ratio of the times.
# Where the two differ by design (a row beyond these bounds says "<-- differs"
# and fails the run when it holds 100 ms or more; a count off by more than
# 2 + 0.1 % fails it too - the windows' edges are a few ms apart):
# - Object.wait: memtrace's runs from the hotspot:monitor__wait probe to
#   monitor__waited, which fires once the thread holds the monitor again;
#   JFR's event ends at the wake-up, before the re-entry. memtrace's time is
#   JFR's plus the re-entry (a contended one: jstack's "waiting to re-lock")
#   plus the probes' own traps: never below JFR's, at most 5 % above.
# - parks: the thread__park__begin/end probes bracket JFR's jdk.ThreadPark
#   and its commit; memtrace's time is JFR's plus the traps' and the commit's
#   time, a constant per park (at most 30 us a park here), never below.
# - contended monitor entries: JFR's event brackets both probes and what
#   memtrace's programs do at the enter probe: within 5 % or 200 us an entry.
# JFR's own monitors (JVM$ChunkRotationMonitor, HiddenWait) JFR does not
# record; they are listed, not compared. Too slow for `make check` (~70 s per
# JDK). Needs root. Settings: SECS (20), UPDATERS (6), INSERTERS (2), JDKS
# (both), DERBY (/usr/share/java), PARK_STACKS (0), KEEP (1: keep the files).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${SECS:-20}
UPDATERS=${UPDATERS:-6}
INSERTERS=${INSERTERS:-2}
DERBY=${DERBY:-/usr/share/java}
PARK_STACKS=${PARK_STACKS:-0}
JDKS=${JDKS:-"/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64"}
for j in derby derbynet derbyclient; do
	[ -r "$DERBY/$j.jar" ] || { echo "locks_derby: $DERBY/$j.jar is missing: apt-get install libderby-java libderbyclient-java (scripts/install-deps.sh)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/mt-bench-derby.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; if [ -n "${KEEP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi' EXIT
"$ROOT/tests/java/build.sh" >/dev/null
rc=0
port=15270
stacks='JavaMonitorEnter\|JavaMonitorWait'
[ "$PARK_STACKS" = 1 ] || stacks="ThreadPark\\|$stacks"
for jdk in $JDKS; do
	[ -x "$jdk/bin/java" ] || { echo "== $jdk: absent, skipped"; continue; }
	d="$tmp/$(basename "$jdk")"
	port=$((port + 1))
	mkdir -p "$d/db"
	sed -e '/name="jdk.\(ThreadPark\|JavaMonitorEnter\|JavaMonitorWait\)"/,/<\/event>/s#<setting name="threshold"[^>]*>[^<]*</setting>#<setting name="threshold">0 ms</setting>#' \
		-e "/name=\"jdk.\\($stacks\\)\"/,/<\\/event>/s#<setting name=\"stackTrace\">true#<setting name=\"stackTrace\">false#" \
		"$jdk/lib/jfr/default.jfc" >"$d/derby.jfc"
	"$jdk/bin/java" -Xmx512m "-XX:StartFlightRecording:filename=$d/derby.jfr,settings=$d/derby.jfc" \
		-Dderby.system.home="$d/db" -Dderby.locks.waitTimeout=10 -Dderby.drda.startNetworkServer=true \
		-cp "$DERBY/derby.jar:$DERBY/derbynet.jar" org.apache.derby.drda.NetworkServerControl start \
		-h 127.0.0.1 -p "$port" -noSecurityManager >"$d/server.out" 2>&1 &
	server=$!
	for _ in $(seq 200); do grep -qs "started and ready" "$d/server.out" && break; sleep 0.1; done
	grep -q "started and ready" "$d/server.out" || { cat "$d/server.out"; exit 1; }
	"$jdk/bin/java" -cp "$ROOT/build/java:$DERBY/derbyclient.jar" DerbyRows \
		"jdbc:derby://127.0.0.1:$port/bench" "$UPDATERS" "$INSERTERS" $((SECS + 10)) "$d/go" \
		>"$d/client.out" 2>&1 &
	client=$!
	for _ in $(seq 300); do grep -qs READY "$d/client.out" && break; sleep 0.1; done
	touch "$d/go"
	sleep 3 # the load under way
	"$ROOT/build/memtrace" locks -p "$server" --enable-monitor-probes --json --duration "$SECS" \
		>"$d/locks.json" 2>"$d/locks.err"
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	wait "$client" || true
	"$jdk/bin/jcmd" "$server" JFR.dump filename="$d/dump.jfr" >/dev/null
	kill "$server"; wait "$server" || true
	"$jdk/bin/jfr" print --json --events jdk.ThreadPark,jdk.JavaMonitorEnter,jdk.JavaMonitorWait \
		"$d/dump.jfr" >"$d/jfr.json"
	echo "== Derby on $(sed -n 's/.*"jdk":"\([^"]*\)".*/\1/p' "$d/locks.json" | head -1), $UPDATERS updaters, $INSERTERS inserters, ${SECS} s traced, load average $load: $(grep OPS "$d/client.out")$([ "$PARK_STACKS" = 1 ] && echo "; JFR's parks with stacks")"
	PYTHONPATH="$ROOT/bench" python3 - "$d/locks.json" "$d/jfr.json" <<'PY' || rc=1
import json, re, sys
from jfrjson import ns, java_name  # bench/, through PYTHONPATH
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ev = json.load(open(sys.argv[2]))["recording"]["events"]
start = [r for r in recs if r["event"] == "start"][0]
t0m, t0p = start["monitors_real_ns"], start["parks_real_ns"]
summ = [r for r in recs if r["event"] == "summary"][0]
t1m, t1p = summ["stream_end_real_ns"], summ["parks_read_real_ns"]
def dur(s):
    m = re.match(r"PT(?:(\d+)H)?(?:(\d+)M)?([\d.]+)S", s)
    return int(round(((int(m.group(1) or 0) * 60 + int(m.group(2) or 0)) * 60 + float(m.group(3))) * 1e9))
jw, jm, jp = {}, {}, {}
kept = {}  # what default.jfc's 20 ms threshold keeps: table -> [events, ns, all events, all ns]
for e in ev:
    v = e["values"]
    a = ns(v["startTime"]); b = a + dur(v["duration"])
    t0, t1 = (t0p, t1p) if e["type"] == "jdk.ThreadPark" else (t0m, t1m)
    if a < t0 or b > t1:
        continue  # not wholly inside memtrace's window
    if e["type"] == "jdk.ThreadPark":
        cls = java_name(v["parkedClass"]["name"]) if v["parkedClass"] else "(no blocker)"
        table = jp
    else:
        cls = java_name(v["monitorClass"]["name"])
        table = jw if e["type"] == "jdk.JavaMonitorWait" else jm
    n, t = table.get(cls, (0, 0)); table[cls] = (n + 1, t + b - a)
    k = kept.setdefault(id(table), [0, 0, 0, 0])
    k[2] += 1; k[3] += b - a
    if b - a >= 20e6:
        k[0] += 1; k[1] += b - a
mw, mm, mp = {}, {}, {}
for r in recs:
    if r["event"] == "lock_class":
        if r["object_waits"]:
            mw[r["class"]] = (r["object_waits"], r["object_wait_ns"])
        if r["contended"]:
            mm[r["class"]] = (r["contended"], r["wait_ns"])
    elif r["event"] == "park_lock" and r["how"] != "sleep":
        cls = r["class"] or "(no blocker)"
        n, t = mp.get(cls, (0, 0)); mp[cls] = (n + r["parks"], t + r["parked_ns"])
print(f"  window {(t1m - t0m) / 1e9:.2f} s (monitors), {(t1p - t0p) / 1e9:.2f} s (parks); "
      f"{summ['sync_events']} monitor events, {summ['lost_events']} lost")
JFR_OWN = ("jdk.jfr.internal.", )  # JFR records no event of its own monitors
bad = 0
def table(title, ours, jfr, ok, top=8):
    global bad
    print(f"  {title:58} {'memtrace':>21} {'JFR':>21}  time   per event")
    rows = sorted(set(ours) | set(jfr), key=lambda c: -max(ours.get(c, (0, 0))[1], jfr.get(c, (0, 0))[1]))
    for i, cls in enumerate(rows):
        (n, t), (jn, jt) = ours.get(cls, (0, 0)), jfr.get(cls, (0, 0))
        own = cls.startswith(JFR_OWN)
        good = own or (abs(n - jn) <= 2 + jn // 1000 and (not n or ok(n, t, jt)))
        bad += not good and (abs(n - jn) > 2 + jn // 1000 or jt >= 100e6)
        if i >= top and good:
            continue
        ratio = f"{t / jt:6.3f}x" if jt else "     -"
        per = f"{(t - jt) / 1e3 / n:+8.1f} us" if jt and n else " " * 11
        print(f"  {cls[-58:]:58} {n:8} {t / 1e6:9.2f} ms {jn:8} {jt / 1e6:9.2f} ms  {ratio}{per}"
              + ("  (JFR's own)" if own else "" if good else "  <-- differs"))
    k = kept.get(id(jfr))
    if k:
        print(f"    default.jfc (20 ms threshold) would keep {k[0]} of these {k[2]} JFR events, "
              f"{100 * k[1] / k[3]:.1f} % of their time")
table("Object.wait by monitor class (jdk.JavaMonitorWait)", mw, jw,
      lambda n, t, jt: jt <= t <= 1.05 * jt)
table("contended monitor entries by class (jdk.JavaMonitorEnter)", mm, jm,
      lambda n, t, jt: abs(t - jt) <= max(0.05 * jt, 200e3 * n))
table("parks by blocker class (jdk.ThreadPark)", mp, jp,
      lambda n, t, jt: jt <= t <= jt + 30e3 * n)
sys.exit(1 if bad else 0)
PY
done
exit $rc
