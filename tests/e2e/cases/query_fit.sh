#!/usr/bin/env bash
# query_fit - a query that does not fit the JVM fails before any pause: a
# type error only the heap's types reveal (`it.class.name = ENTITY`: a
# string against an instance) and an unknown field are reported from the
# JVM's class table, read with the JVM running, by `memtrace query -p` and by
# serve's POST /api/v1/jvms/PID/query. The JVM's own safepoint log
# (-Xlog:safepoint) is the oracle: no HeapWalkOperation while they fail,
# one for the query that fits and runs after them.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xlog:safepoint:file="$TMPD/sp.log" -Xmx128m QueryWorkload planted
walks() { grep -c 'Safepoint "Heap' "$TMPD/sp.log"; }

# prog FILE FILTER: a program whose roots are the objects FILTER holds for
cat_prog() {
	cat >"$1" <<MQ
set_type s:
    roots <- objects.filter([it | $2])
    membership <- false
    on_inclusion <- [ n <- n + 1 ]
    n : int <- 0
instances_for s have_names = "x"
MQ
}
cat_prog "$TMPD/type.mq" 'it.class.name = ENTITY'
cat_prog "$TMPD/field.mq" 'it.no_such_field_anywhere > 3'
cat_prog "$TMPD/good.mq" 'it.class.name = "QueryWorkload"'

for p in type field; do
	"$MEMTRACE" query -p "$JVM_PID" -f "$TMPD/$p.mq" >"$TMPD/$p.out" 2>"$TMPD/$p.err" &&
		fail "the $p error was not refused"
	assert_contains "$TMPD/$p.err" "does not fit this JVM's classes (nothing was walked)"
	! grep -q "heap walk paused" "$TMPD/$p.err" || { cat "$TMPD/$p.err" >&2; fail "$p: memtrace says it walked"; }
done
assert_contains "$TMPD/type.err" "cannot compare string with instance of s"
assert_contains "$TMPD/field.err" "no class of the heap has a field 'no_such_field_anywhere'"
assert_eq "$(walks)" 0 "heap-walk safepoints while the bad queries failed"

# serve: the same refusal, no walk
PORT=$(free_port)
serve_token
serve_start "$TMPD/serve.log" -p "$JVM_PID" --listen "127.0.0.1:$PORT" --token-file "$TMPD/token"
cat >"$TMPD/q.py" <<'PY'
import json, sys, time, urllib.request
port, token, pid, prog = sys.argv[1:]
def call(method, path, data=None):
    req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), method=method, data=data)
    req.add_header("Authorization", "Bearer " + token)
    return json.loads(urllib.request.urlopen(req, timeout=10).read())
for _ in range(100):
    try:
        call("GET", "/api/v1/jvms/%s" % pid)
        break
    except Exception:
        time.sleep(0.1)
q = call("POST", "/api/v1/jvms/%s/query" % pid, open(prog, "rb").read())
for _ in range(300):
    r = call("GET", "/api/v1/queries/%s" % q["id"])
    if r["state"] != "running":
        print(json.dumps(r))
        break
    time.sleep(0.1)
PY
python3 "$TMPD/q.py" "$PORT" "$TOKEN" "$JVM_PID" "$TMPD/type.mq" >"$TMPD/serve_type.json" ||
	{ cat "$TMPD/serve.log" >&2; fail "serve's query"; }
assert_eq "$(json_get "$TMPD/serve_type.json" "(recs[0]['state'], 'nothing was walked' in recs[0].get('error', ''), 'cannot compare string' in recs[0].get('diagnostics', ''))")" \
	"('failed', True, True)" "serve refuses the type error before the walk"
assert_eq "$(walks)" 0 "heap-walk safepoints after serve's refusal"

# the oracle works: a query that fits walks once
"$MEMTRACE" query -p "$JVM_PID" -f "$TMPD/good.mq" >"$TMPD/good.out" 2>"$TMPD/good.err" ||
	{ cat "$TMPD/good.err" >&2; fail "the good query"; }
assert_contains "$TMPD/good.err" "heap walk paused"
assert_eq "$(walks)" 1 "heap-walk safepoints after the good query"
note "two bad queries and serve's refused with no heap-walk safepoint; the good one walked once"
