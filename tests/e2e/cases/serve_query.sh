#!/usr/bin/env bash
# serve_query - the heavier work of serve's token-guarded API that is not a
# switch: a query (POST /api/v1/jvms/PID/query, 202, then GET
# /api/v1/queries/ID) gives the same answer as `memtrace query -p` on the same
# JVM, with its pause and partial flag; a malformed program is a 400 with
# line:col; a second query while one runs is a 409; no token is a 401. Then
# POST /api/v1/jvms/PID/record/pause and /resume pause the reporting of a
# `memtrace record` of another JVM: its recording passes `check` and reports
# no allocation, collection or pool event inside the paused window.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

PORT=$(free_port)
REC_PID=
stop_all() {
	[ -n "$REC_PID" ] && kill "$REC_PID" 2>/dev/null && wait "$REC_PID" 2>/dev/null
	cleanup_all
}
trap stop_all EXIT
serve_token

# h.py METHOD PORT PATH TOKEN [BODYFILE]: prints "STATUS BODY" on one line.
cat >"$TMPD/h.py" <<'PY'
import sys, urllib.request, urllib.error
method, url = sys.argv[1], "http://127.0.0.1:%s%s" % (sys.argv[2], sys.argv[3])
data = open(sys.argv[5], "rb").read() if len(sys.argv) > 5 else (b"" if method == "POST" else None)
req = urllib.request.Request(url, method=method, data=data)
if sys.argv[4]:
    req.add_header("Authorization", "Bearer " + sys.argv[4])
try:
    r = urllib.request.urlopen(req, timeout=10)
    print(r.status, r.read().decode().strip().replace("\n", " "))
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip().replace("\n", "\\n"))
PY
h() { python3 "$TMPD/h.py" "$1" "$PORT" "$2" "${TOKEN_OVERRIDE-$TOKEN}" "${@:3}"; }
status() { h "$@" | cut -d' ' -f1; }
body() { h "$@" | cut -d' ' -f2-; }
jget() { python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print($1)"; }
# wait_query ID: polls until the query is no longer running; prints its JSON
wait_query() {
	local i b
	for ((i = 0; i < 300; i++)); do
		b=$(body GET "/api/v1/queries/$1")
		[ "$(echo "$b" | jget 'd["state"]')" != running ] && { echo "$b"; return 0; }
		sleep 0.1
	done
	return 1
}

jvm_start planted -Xmx128m QueryWorkload planted
PID=$JVM_PID
serve_start "$TMPD/serve.log" -p "$PID" --listen "127.0.0.1:$PORT" --token-file "$TMPD/token" --rescan 1
for ((i = 0; i < 100; i++)); do [ "$(status GET "/api/v1/jvms/$PID")" = 200 ] && break; sleep 0.1; done
[ "$(status GET "/api/v1/jvms/$PID")" = 200 ] || { cat "$TMPD/serve.log" >&2; fail "serve does not watch $PID"; }

# Guarded and checked before anything runs.
assert_eq "$(TOKEN_OVERRIDE= status POST "/api/v1/jvms/$PID/query" "$ROOT/tests/query/reach_holder.mq")" 401 "query without a token"
assert_eq "$(TOKEN_OVERRIDE= status POST "/api/v1/jvms/$PID/record/pause")" 401 "pause without a token"
assert_eq "$(status POST "/api/v1/jvms/$PID/query")" 400 "query without a program"
assert_eq "$(status GET "/api/v1/jvms/$PID/query")" 405 "GET on query"
assert_eq "$(status POST "/api/v1/jvms/$PID/query?max_pause_ms=x" "$ROOT/tests/query/reach_holder.mq")" 400 "bad max_pause_ms"
assert_eq "$(status GET /api/v1/queries/999)" 404 "unknown query"
printf 'set_type x:\n    roots <- objects.filter([it | it.field >])' >"$TMPD/bad.mq"
h POST "/api/v1/jvms/$PID/query" "$TMPD/bad.mq" >"$TMPD/bad.out"
assert_eq "$(cut -d' ' -f1 "$TMPD/bad.out")" 400 "malformed program"
assert_eq "$(cut -d' ' -f2- "$TMPD/bad.out" | sed 's/\\n/ /g' | jget '(d["messages"][0]["line"], d["messages"][0]["col"], "<query>:2:45: error: expected an expression" in d["diagnostics"], "^" in d["diagnostics"])')" \
	"(2, 45, True, True)" "400 with line:col and a caret"
head -c 70000 /dev/zero | tr '\0' ' ' >"$TMPD/big.mq"
assert_eq "$(status POST "/api/v1/jvms/$PID/query" "$TMPD/big.mq")" 413 "a program over 64 KiB"

# A query: 202, a second right after it (the first loads the agent) is 409, then the result.
python3 - "$PORT" "$TOKEN" "$ROOT/tests/query/reach_holder.mq" "$PID" >"$TMPD/q1" <<'PY'
import sys, urllib.request, urllib.error
port, token, prog, pid = sys.argv[1:]
def post():
    req = urllib.request.Request("http://127.0.0.1:%s/api/v1/jvms/%s/query" % (port, pid),
                                 method="POST", data=open(prog, "rb").read())
    req.add_header("Authorization", "Bearer " + token)
    try:
        r = urllib.request.urlopen(req, timeout=10)
        return r.status, r.read().decode().strip()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode().strip()
(s1, b1), (s2, b2) = post(), post()
print(s1, s2, b1)
PY
assert_eq "$(cut -d' ' -f1-2 "$TMPD/q1")" "202 409" "POST query, then a second while it runs"
id=$(cut -d' ' -f3- "$TMPD/q1" | jget 'd["id"]')
assert_eq "$(status GET /metrics)" 200 "/metrics while the query runs"
r=$(wait_query "$id") || fail "query $id did not finish"
note "query $id: $(echo "$r" | jget '(d["state"], d.get("pause_ms"), d.get("objects"))')"
assert_eq "$(echo "$r" | jget '(d["state"], d["partial"], d["pause_ms"] > 0, json.dumps(d["result"], separators=(",", ":")))')" \
	"('done', False, True, '{\"held\":{\"holder\":{\"n\":202}}}')" "query result through the API"
# The same answers as memtrace query -p (the API's walk has left the agent).
for mq in reach_holder keyed order_name; do
	cli=$("$MEMTRACE" query -p "$PID" -f "$ROOT/tests/query/$mq.mq" 2>"$TMPD/cli.err") || { cat "$TMPD/cli.err" >&2; fail "memtrace query $mq"; }
	h POST "/api/v1/jvms/$PID/query" "$ROOT/tests/query/$mq.mq" >"$TMPD/q"
	assert_eq "$(cut -d' ' -f1 "$TMPD/q")" 202 "POST $mq"
	r=$(wait_query "$(cut -d' ' -f2- "$TMPD/q" | jget 'd["id"]')") || fail "query $mq did not finish"
	assert_eq "$(echo "$r" | jget 'json.dumps(d["result"], sort_keys=True)')" \
		"$(echo "$cli" | jget 'json.dumps(d, sort_keys=True)')" "$mq: API and memtrace query -p"
done
# Cut short: partial.
h POST "/api/v1/jvms/$PID/query?max_pause_ms=0" "$ROOT/tests/query/reach_holder.mq" >"$TMPD/q"
r=$(wait_query "$(cut -d' ' -f2- "$TMPD/q" | jget 'd["id"]')") || fail "partial query did not finish"
assert_eq "$(echo "$r" | jget '(d["state"], d["partial"], d["max_pause_ms"])')" "('done', True, 0)" "max_pause_ms=0"
# An unknown class fails after the walk, with line:col.
printf 'set_type x:\n    roots <- objects.filter([it | it is NoSuchClass])\n    membership <- false\ninstances_for x have_names = "x"\n' >"$TMPD/nc.mq"
h POST "/api/v1/jvms/$PID/query" "$TMPD/nc.mq" >"$TMPD/q"
r=$(wait_query "$(cut -d' ' -f2- "$TMPD/q" | jget 'd["id"]')") || fail "unknown-class query did not finish"
assert_eq "$(echo "$r" | jget '(d["state"], "no class of the heap is named" in d["diagnostics"], "<query>:2:" in d["diagnostics"])')" \
	"('failed', True, True)" "unknown class through the API"
kill -0 "$PID" || fail "the JVM died"

# Pause/resume of a memtrace record through the API.
jvm_start steady -Xmx64m SteadyGc 32
PID2=$JVM_PID
assert_eq "$(status POST "/api/v1/jvms/$PID2/record/pause")" 404 "pause with no record running"
assert_eq "$(status POST "/api/v1/jvms/$PID2/record/stop")" 404 "unknown record action"
"$MEMTRACE" record -p "$PID2" -o "$TMPD/r.rec.gz" 2>"$TMPD/rec.err" &
REC_PID=$!
wait_for_line "$TMPD/rec.err" 'recording pid' 20 || { cat "$TMPD/rec.err"; fail "record did not start"; }
sleep 1.5
b=$(body POST "/api/v1/jvms/$PID2/record/pause")
t_pause=$(python3 -c 'import time; print(time.monotonic_ns())')
assert_eq "$(echo "$b" | jget '(d["reporting"], d["record_pids"])')" "('paused', [$REC_PID])" "pause through the API"
sleep 2.5
t_resume=$(python3 -c 'import time; print(time.monotonic_ns())')
assert_eq "$(status POST "/api/v1/jvms/$PID2/record/resume")" 200 "resume through the API"
sleep 1.5
kill -INT "$REC_PID"
wait "$REC_PID" || { cat "$TMPD/rec.err"; fail "record failed"; }
REC_PID=
grep -q 'reporting paused (signal)' "$TMPD/rec.err" && grep -q 'reporting resumed (signal)' "$TMPD/rec.err" ||
	{ cat "$TMPD/rec.err"; fail "record did not pause and resume"; }
"$MEMTRACE" check "$TMPD/r.rec.gz" >"$TMPD/check" || { cat "$TMPD/check"; fail "check failed"; }
python3 - "$TMPD/r.rec.gz" "$t_pause" "$t_resume" <<'PY' || fail "the paused window is not in the recording"
import gzip, json, sys
a, b = int(sys.argv[2]) + 300_000_000, int(sys.argv[3]) - 300_000_000
before = inside = after = 0
for l in gzip.open(sys.argv[1], "rt"):
    r = json.loads(l)
    if r.get("k") not in ("alloc", "enter", "pool") or r.get("f", 0) & 1:
        continue
    t = r["t"]
    if t < a - 300_000_000: before += 1
    elif a <= t <= b: inside += 1
    elif t > b + 300_000_000: after += 1
print(f"alloc/enter/pool events: {before} before, {inside} inside, {after} after the paused window")
assert before > 0 and after > 0 and inside == 0
PY
grep -q "reporting paused in memtrace record" "$TMPD/serve.log" || { cat "$TMPD/serve.log" >&2; fail "serve did not log the pause"; }
