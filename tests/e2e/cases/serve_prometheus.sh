#!/usr/bin/env bash
# serve_prometheus - a real Prometheus (127.0.0.1, 1 s scrapes) scrapes
# `memtrace serve --all` watching two JVMs (one JDK 17, one JDK 25; their
# allocation and agent sampling switched on through the API): the collection counters it stores (jvm_gc_pause_seconds_count per
# collector and cause) equal memtrace's own JSON (/api/v1/metrics); every
# panel of the Grafana dashboard (dashboards/memtrace-jvm.json) returns
# series of both JVMs with the labels its legend names
# (tests/e2e/dashboard_check.py); a JVM started after serve appears; one
# that exits is dropped; the API refuses requests without (or with a wrong)
# token.
# JDKS: none
# TIMEOUT: 300
. "$ROOT/tests/e2e/lib.sh"

command -v prometheus >/dev/null || skip "prometheus is not installed (apt-get install prometheus; make deps does it)"
JAVA17=$JAVA
JAVA25=${JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
[ -x "$JAVA25" ] || JAVA25=$JAVA17

PORT=$(free_port)
PPORT=$(free_port)
[ "$PORT" != "$PPORT" ] || PPORT=$(free_port)
PROM_PID=
stop_all() {
	[ -n "$PROM_PID" ] && kill "$PROM_PID" 2>/dev/null && wait "$PROM_PID" 2>/dev/null
	cleanup_all
}
trap stop_all EXIT

serve_token

# q.py KIND ARG: small HTTP/JSON helpers (python3's urllib; no curl needed).
cat >"$TMPD/q.py" <<'PY'
import json, sys, urllib.request, urllib.parse, urllib.error
kind, port = sys.argv[1], sys.argv[2]
def get(url, token=None):
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
if kind == "status":          # status PORT PATH [TOKEN]
    print(get("http://127.0.0.1:%s%s" % (port, sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)[0])
elif kind == "metrics":       # metrics PORT: the OpenMetrics text
    print(get("http://127.0.0.1:%s/metrics" % port)[1], end="")
elif kind == "post":          # post PORT PATH TOKEN: the HTTP status
    req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, sys.argv[3]), data=b"", method="POST")
    req.add_header("Authorization", "Bearer " + sys.argv[4])
    try:
        print(urllib.request.urlopen(req, timeout=5).status)
    except urllib.error.HTTPError as e:
        print(e.code)
elif kind == "on":            # on PORT PID TOKEN: allocation and agent sampling both on
    st, body = get("http://127.0.0.1:%s/api/v1/jvms/%s" % (port, sys.argv[3]), sys.argv[4])
    j = json.loads(body) if st == 200 else {}
    sys.exit(0 if j.get("alloc", {}).get("state") == "on" and j.get("age", {}).get("state") == "on" else 1)
elif kind == "prom":          # prom PPORT QUERY: "labels-json value" lines
    st, body = get("http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": sys.argv[3]})))
    for r in json.loads(body)["data"]["result"]:
        print(json.dumps(r["metric"], sort_keys=True), r["value"][1])
elif kind == "compare":       # compare PORT PPORT TOKEN PIDS: memtrace JSON vs Prometheus
    pids = sys.argv[5].split(",")
    st, body = get("http://127.0.0.1:%s/api/v1/metrics" % port, sys.argv[4])
    ours = {}
    for fam in json.loads(body)["metrics"]:
        if fam["name"] != "jvm_gc_pause_seconds":
            continue
        for s in fam["series"]:
            if s["labels"].get("pid") in pids:
                ours[(s["labels"]["pid"], s["labels"]["gc"], s["labels"]["cause"])] = float(s["count"])
    q = 'jvm_gc_pause_seconds_count{pid=~"%s"}' % "|".join(pids)
    st, body = get("http://127.0.0.1:%s/api/v1/query?%s" % (sys.argv[3], urllib.parse.urlencode({"query": q})))
    theirs = {}
    for r in json.loads(body)["data"]["result"]:
        theirs[(r["metric"]["pid"], r["metric"]["gc"], r["metric"]["cause"])] = float(r["value"][1])
    ok = ours and ours == theirs and all(any(k[0] == p and v > 0 for k, v in ours.items()) for p in pids)
    print("memtrace:  ", sorted(ours.items()), file=sys.stderr)
    print("prometheus:", sorted(theirs.items()), file=sys.stderr)
    sys.exit(0 if ok else 1)
PY
q() { python3 "$TMPD/q.py" "$@"; }

# wait_until SECONDS CMD...: retry CMD every 0.5 s.
wait_until() {
	local t=$1 i; shift
	for ((i = 0; i < t * 2; i++)); do "$@" && return 0; sleep 0.5; done
	return 1
}

# Prometheus first (it takes a few seconds to start).
cat >"$TMPD/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: memtrace
    static_configs:
      - targets: ["127.0.0.1:$PORT"]
EOF
prometheus --config.file="$TMPD/prometheus.yml" --storage.tsdb.path="$TMPD/prom" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$TMPD/prom.log" 2>&1 &
PROM_PID=$!

jvm_start a -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 GcWorkload --go "$TMPD/go" --alloc-mb 48
A=$JVM_PID
JAVA=$JAVA25 jvm_start b -Xmx64m -XX:TieredStopAtLevel=1 GcWorkload --go "$TMPD/go" --alloc-mb 48
B=$JVM_PID

serve_start "$TMPD/serve.log" --all --listen "127.0.0.1:$PORT" --token-file "$TMPD/token" --rescan 1
has_jvm() { q metrics "$PORT" 2>/dev/null | grep -q "^memtrace_jvm_info{.*pid=\"$1\"}"; }
wait_until 20 has_jvm "$A" && wait_until 5 has_jvm "$B" || { cat "$TMPD/serve.log" >&2; fail "serve did not pick up both JVMs"; }
note "serve watches $A (JDK 17) and $B (JDK 25)"

# The API: no token, wrong token -> 401; the token -> 200.
assert_eq "$(q status "$PORT" /api/v1/jvms)" 401 "API without a token"
assert_eq "$(q status "$PORT" /api/v1/metrics "wrong-token-wrong-token")" 401 "API with a wrong token"
assert_eq "$(q status "$PORT" /api/v1/jvms "$TOKEN")" 200 "API with the token"
assert_eq "$(q status "$PORT" /metrics)" 200 "/metrics needs no token"
q metrics "$PORT" | tail -1 | grep -qx '# EOF' || fail "/metrics does not end with # EOF"

# Allocation and agent sampling on for both (the dashboard's class and age
# panels), then collections, then both JVMs idle (no further collection).
for p in "$A" "$B"; do
	for w in alloc age; do
		st=$(q post "$PORT" "/api/v1/jvms/$p/$w" "$TOKEN")
		[ "$st" = 202 ] || [ "$st" = 200 ] || fail "POST /api/v1/jvms/$p/$w answered $st"
	done
done
wait_until 60 q on "$PORT" "$A" "$TOKEN" && wait_until 60 q on "$PORT" "$B" "$TOKEN" ||
	{ cat "$TMPD/serve.log" >&2; fail "allocation and agent sampling did not come on"; }
touch "$TMPD/go"
wait_for_line "$TMPD/a.out" DONE 60 && wait_for_line "$TMPD/b.out" DONE 60 || fail "the workloads did not finish"
prom_up() { [ "$(q prom "$PPORT" 'up{job="memtrace"}' 2>/dev/null | awk '{ print $NF }')" = 1 ]; }
wait_until 40 prom_up || { tail "$TMPD/prom.log" >&2; fail "Prometheus does not scrape memtrace (up != 1)"; }
wait_until 20 q compare "$PORT" "$PPORT" "$TOKEN" "$A,$B" ||
	fail "Prometheus's jvm_gc_pause_seconds_count differs from memtrace's JSON"
q prom "$PPORT" "memtrace_gc_pause_seconds_count{pid=\"$A\"}" | grep -q . || fail "no pause histogram in Prometheus"
q prom "$PPORT" "memtrace_lost_events_total{pid=\"$B\"}" | grep -q . || fail "no lost-events counter in Prometheus"
# The dashboard: every panel's query answers with both JVMs' series.
dash() { python3 "$ROOT/tests/e2e/dashboard_check.py" "$ROOT/dashboards/memtrace-jvm.json" "$PPORT" "$A|$B" >"$TMPD/dash.out" 2>&1; }
wait_until 40 dash || { cat "$TMPD/dash.out" >&2; fail "a dashboard panel has no answer"; }
note "dashboard: $(grep -c '^ok' "$TMPD/dash.out") panel queries answered for both JVMs"

# A JVM started after serve appears.
jvm_start c -Xmx32m -XX:TieredStopAtLevel=1 Idle
C=$JVM_PID
in_prom() { q prom "$PPORT" "memtrace_jvm_info{pid=\"$1\"}" 2>/dev/null | grep -q .; }
wait_until 20 in_prom "$C" || { cat "$TMPD/serve.log" >&2; fail "JVM $C started after serve never appeared in Prometheus"; }
note "JVM $C (started later) appeared"

# A JVM that exits is dropped: from /metrics, the JSON API and Prometheus.
jvm_stop "$A"
gone() { ! has_jvm "$1" && ! q metrics "$PORT" | grep -q "pid=\"$1\"" && ! in_prom "$1"; }
wait_until 20 gone "$A" || fail "JVM $A exited but is still reported"
q status "$PORT" /api/v1/jvms "$TOKEN" >/dev/null
python3 - "$PORT" "$TOKEN" "$A" "$B" "$C" <<'PY' || fail "/api/v1/jvms after the exit"
import json, sys, urllib.request
req = urllib.request.Request("http://127.0.0.1:%s/api/v1/jvms" % sys.argv[1])
req.add_header("Authorization", "Bearer " + sys.argv[2])
pids = {j["pid"] for j in json.load(urllib.request.urlopen(req, timeout=5))["jvms"]}
a, b, c = map(int, sys.argv[3:6])
sys.exit(0 if a not in pids and b in pids and c in pids else "jvms: %s" % sorted(pids))
PY
note "JVM $A (exited) dropped"
grep -q "pid $A exited" "$TMPD/serve.log" || fail "serve did not report the exit"
serve_stop; rc=$?
assert_eq "$rc" 0 "serve's exit status after SIGTERM"
