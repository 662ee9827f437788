#!/usr/bin/env bash
# sidecar_unshare - memtrace serve as a sidecar, with namespaces made by
# unshare (no container runtime):
#  A. JVM in its own mount namespace with a private /tmp; serve in another
#     mount namespace with another private /tmp; both in the host pid
#     namespace. Collections arrive; POST .../age loads the agent into the
#     JVM's /tmp (through /proc/PID/root), not serve's nor the host's.
#  B. JVM (own mount namespace, private /tmp) and serve --all sharing a new
#     pid namespace (a pod's shared process namespace): serve sees only that
#     JVM, by its pid in the namespace; collections and allocation arrive.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"
command -v unshare >/dev/null || skip "no unshare"

# Everything serve and the JVMs need lives outside /tmp (each gets its own).
classes_outside_tmp || fail "cannot copy the classes"
D=$(mktemp -d /var/tmp/mt-sidecar.XXXX) || fail "mktemp"
CLEANUP_DIRS+=("$D")
cp "$MEMTRACE" "$D/memtrace"
cp "$(dirname "$MEMTRACE")/libmemtrace-agent.so" "$D/"
head -c 24 /dev/urandom | base64 >"$D/token"
chmod 600 "$D/token"
TOKEN=$(cat "$D/token")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PRIVATE_TMP="mount -t tmpfs -o mode=1777 tmpfs /tmp"
JVM_CMD="exec '$JAVA' -Xmx32m -XX:TieredStopAtLevel=1 -cp '$OUT_CLASSES' SteadyGc 16"
UNSHARES=()
# unshare --fork outlives a SIGTERM: end its child (pid 1 of the namespace,
# which takes the namespace's processes along), then unshare itself.
stop_unshare() {
	local c
	for c in $(pgrep -P "$1"); do kill "$c" 2>/dev/null; done
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
stop_all() {
	local u
	for u in "${UNSHARES[@]}"; do stop_unshare "$u"; done
	cleanup_all
}
trap stop_all EXIT

cat >"$D/h.py" <<'PY'
import sys, urllib.request, urllib.error
method, url = sys.argv[1], "http://127.0.0.1:%s%s" % (sys.argv[2], sys.argv[3])
req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
req.add_header("Authorization", "Bearer " + sys.argv[4])
try:
    print(urllib.request.urlopen(req, timeout=10).read().decode().strip())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
except Exception as e:
    print("ERR", e)
PY
h() { python3 "$D/h.py" "$1" "$PORT" "$2" "$TOKEN"; }
metric() { # sum of the samples whose line starts with $1
	python3 "$D/h.py" GET "$PORT" /metrics "$TOKEN" |
		awk -v p="$1" 'index($0, p) == 1 { s += $NF; n++ } END { if (n) printf "%.0f\n", s; else print "none" }'
}
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
wait_metric_gt0() { # PREFIX SECONDS
	local i v
	for ((i = 0; i < $2 * 5; i++)); do
		v=$(metric "$1"); [ "$v" != none ] && [ "$v" -gt 0 ] && return 0
		sleep 0.2
	done
	return 1
}

# --- A: separate mount namespaces, host pid namespace -----------------------
unshare --mount sh -c "$PRIVATE_TMP && $JVM_CMD" >"$TMPD/a.out" 2>&1 &
UNSHARES+=($!)
wait_for_line "$TMPD/a.out" READY 60 || { cat "$TMPD/a.out" >&2; fail "JVM A did not start"; }
A=${UNSHARES[0]} # unshare without --fork execs: sh, then java, keep its pid
[ "$(cat /proc/$A/comm)" = java ] || fail "pid $A is $(cat /proc/$A/comm), not the JVM"
JVM_PIDS+=("$A")
# a socket in the host's /tmp under A's pid is an earlier process's (A's /tmp
# is private; pids come round again on a machine that ran kill -9 tests): not
# A's, and in the way of the check below
rm -f "/tmp/.memtrace-$A.sock"
PORT=$(free_port)
unshare --mount sh -c "$PRIVATE_TMP && exec '$D/memtrace' serve -p $A --listen 127.0.0.1:$PORT --token-file '$D/token' --rescan 1" \
	>"$TMPD/serve-a.log" 2>&1 &
UNSHARES+=($!)
wait_metric_gt0 "jvm_gc_pause_seconds_count{" 20 || { cat "$TMPD/serve-a.log" >&2; fail "A: no collections from the JVM in its own mount namespace"; }
note "A: JVM $A and serve in separate mount namespaces: collections arrive"
h POST "/api/v1/jvms/$A/age" >/dev/null
for ((i = 0; i < 100; i++)); do
	st=$(h GET "/api/v1/jvms/$A" | jq_ 'd["age"]["state"]' 2>/dev/null)
	[ "$st" = on ] || [ "$st" = failed ] && break
	sleep 0.2
done
[ "$st" = on ] || { cat "$TMPD/serve-a.log" >&2; fail "A: agent sampling is '$st'"; }
[ -S "/proc/$A/root/tmp/.memtrace-$A.sock" ] || fail "A: the agent's socket is not in the JVM's /tmp"
[ -e "/tmp/.memtrace-$A.sock" ] && fail "A: the agent's socket is in the host's /tmp"
wait_metric_gt0 "memtrace_age_live_samples{" 20 || fail "A: no live samples by age"
note "A: agent loaded into the JVM's private /tmp; live samples by age: $(metric "memtrace_age_live_samples{")"
h DELETE "/api/v1/jvms/$A/age" >/dev/null
stop_unshare "${UNSHARES[1]}"

# --- B: one new pid namespace shared by the JVM and serve -------------------
PORT=$(free_port)
unshare --pid --fork --mount-proc sh -c "
	unshare --mount sh -c \"$PRIVATE_TMP && $JVM_CMD\" >'$TMPD/b.out' 2>&1 &
	sleep 1
	$PRIVATE_TMP && exec '$D/memtrace' serve --all --listen 127.0.0.1:$PORT --token-file '$D/token' --rescan 1" \
	>"$TMPD/serve-b.log" 2>&1 &
UNSHARES+=($!)
wait_for_line "$TMPD/b.out" READY 60 || { cat "$TMPD/b.out" "$TMPD/serve-b.log" >&2; fail "JVM B did not start"; }
for ((i = 0; i < 50; i++)); do
	jv=$(h GET /api/v1/jvms | jq_ '" ".join("%d/%d" % (j["pid"], j["nspid"]) for j in d["jvms"])' 2>/dev/null)
	[ -n "$jv" ] && break
	sleep 0.2
done
[ -n "$jv" ] || { cat "$TMPD/serve-b.log" >&2; fail "B: serve watches no JVM"; }
assert_eq "$(echo "$jv" | wc -w)" 1 "B: JVMs serve sees in the shared pid namespace"
bpid=${jv%%/*}
[ "$bpid" -lt 100 ] || fail "B: pid $bpid is not a pid of the new namespace"
wait_metric_gt0 "jvm_gc_pause_seconds_count{" 20 || { cat "$TMPD/serve-b.log" >&2; fail "B: no collections (pid filter vs. host tgids?)"; }
h POST "/api/v1/jvms/$bpid/alloc" >/dev/null
wait_metric_gt0 "memtrace_alloc_bytes_total{" 20 || { cat "$TMPD/serve-b.log" >&2; fail "B: no allocation bytes"; }
note "B: shared pid namespace: JVM is pid $bpid there; collections $(metric "jvm_gc_pause_seconds_count{"), allocated $(metric "memtrace_alloc_bytes_total{") bytes"
