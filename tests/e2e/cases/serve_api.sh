#!/usr/bin/env bash
# serve_api - `memtrace serve -p PID` and its token-guarded switches:
# POST /api/v1/jvms/PID/alloc brings the allocation series to /metrics
# (bytes growing, top classes), POST .../age loads the agent and brings live
# sampled bytes by age; DELETE takes each away again. Requests without or
# with a wrong token are refused (401), and so are bad paths and values.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

PORT=$(free_port)
serve_token

# h.py METHOD PATH [TOKEN]: prints "STATUS BODY" (python3's urllib).
cat >"$TMPD/h.py" <<'PY'
import sys, urllib.request, urllib.error
method, url = sys.argv[1], "http://127.0.0.1:%s%s" % (sys.argv[2], sys.argv[3])
req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
if len(sys.argv) > 4:
    req.add_header("Authorization", "Bearer " + sys.argv[4])
try:
    r = urllib.request.urlopen(req, timeout=10)
    print(r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
PY
h() { python3 "$TMPD/h.py" "$1" "$PORT" "$2" "${3-$TOKEN}"; }
status() { h "$@" | cut -d' ' -f1; }
metric() { # NAME{...} prefix -> sum of matching samples
	python3 "$TMPD/h.py" GET "$PORT" /metrics | sed 's/^200 //' |
		awk -v p="$1" 'index($0, p) == 1 { s += $NF; n++ } END { if (n) printf "%.0f\n", s; else print "none" }'
}
state() { h GET "/api/v1/jvms/$PID" | sed 's/^200 //' | python3 -c "import json,sys; print(json.load(sys.stdin)['$1']['state'])"; }
wait_state() { local i; for ((i = 0; i < ${3:-150}; i++)); do [ "$(state "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1; }

jvm_start w -Xmx64m -XX:TieredStopAtLevel=1 SteadyGc 16
PID=$JVM_PID
serve_start "$TMPD/serve.log" -p "$PID" --listen "127.0.0.1:$PORT" --token-file "$TMPD/token" --rescan 1
for ((i = 0; i < 100; i++)); do [ "$(metric "memtrace_jvm_info{")" = 1 ] && break; sleep 0.1; done
[ "$(metric "memtrace_jvm_info{")" = 1 ] || { cat "$TMPD/serve.log" >&2; fail "serve does not watch $PID"; }

# The token guards every switch.
assert_eq "$(status POST "/api/v1/jvms/$PID/alloc" "")" 401 "POST without a token"
assert_eq "$(status POST "/api/v1/jvms/$PID/alloc" "wrong-token-wrong-token")" 401 "POST with a wrong token"
assert_eq "$(status DELETE "/api/v1/jvms/$PID/age" "")" 401 "DELETE without a token"
assert_eq "$(state alloc)" off "allocation sampling before any request"
assert_eq "$(metric "memtrace_alloc_bytes_total{")" none "no allocation series while off"
# Bad requests.
assert_eq "$(status POST "/api/v1/jvms/999999999/alloc")" 404 "unknown pid"
assert_eq "$(status POST "/api/v1/jvms/$PID/nope")" 404 "unknown switch"
assert_eq "$(status GET "/api/v1/jvms/$PID/alloc")" 405 "GET on a switch"
assert_eq "$(status POST "/api/v1/jvms/$PID/age?interval=zero")" 400 "bad interval"
assert_eq "$(status GET /api/v1/help)" 200 "help"

# Allocation sampling on: bytes grow, byte[] leads (SteadyGc allocates 64 KiB arrays).
assert_eq "$(status POST "/api/v1/jvms/$PID/alloc")" 202 "POST alloc"
wait_state alloc on || { cat "$TMPD/serve.log" >&2; fail "allocation sampling did not come on"; }
sleep 1.5
b1=$(metric "memtrace_alloc_bytes_total{")
sleep 1.5
b2=$(metric "memtrace_alloc_bytes_total{")
note "allocated (TLAB estimate): $b1 then $b2 bytes"
[ "$b1" != none ] && [ "$b2" -gt "$b1" ] || fail "memtrace_alloc_bytes_total does not grow ($b1, $b2)"
cb=$(metric "memtrace_alloc_class_bytes_total{class=\"byte[]\"")
[ "$cb" != none ] && [ $((cb * 2)) -gt "$b2" ] || fail "byte[] is not the top class ($cb of $b2)"
assert_eq "$(status POST "/api/v1/jvms/$PID/alloc")" 200 "POST alloc again: already on"

# Agent sampling on: live sampled bytes by age appear.
assert_eq "$(status POST "/api/v1/jvms/$PID/age?interval=64k")" 202 "POST age"
wait_state age on 300 || { cat "$TMPD/serve.log" >&2; fail "agent sampling did not come on"; }
for ((i = 0; i < 60; i++)); do
	s=$(metric "memtrace_age_live_samples{")
	[ "$s" != none ] && [ "$s" -gt 0 ] && break
	sleep 0.2
done
[ "$s" != none ] && [ "$s" -gt 0 ] || { cat "$TMPD/serve.log" >&2; fail "no live samples by age ($s)"; }
ages=$(h GET "/api/v1/jvms/$PID" | sed 's/^200 //' | python3 -c "import json,sys; d=json.load(sys.stdin)['age']; print(d['interval'], ','.join(sorted(d['by_age'])))")
assert_eq "$ages" "65536 0,1,16+,2-3,4-7,8-15" "age JSON"
note "live samples by age: $s"

# Off again: the series go, the agent goes dormant.
assert_eq "$(status DELETE "/api/v1/jvms/$PID/age")" 202 "DELETE age"
assert_eq "$(status DELETE "/api/v1/jvms/$PID/alloc")" 202 "DELETE alloc"
wait_state age off && wait_state alloc off || fail "work did not stop"
assert_eq "$(metric "memtrace_alloc_bytes_total{")" none "allocation series after DELETE"
assert_eq "$(metric "memtrace_age_live_bytes{")" none "age series after DELETE"
kill -0 "$PID" || fail "the JVM died"
grep -q "agent sampling off" "$TMPD/serve.log" || { cat "$TMPD/serve.log" >&2; fail "no 'agent sampling off' in serve's log"; }
