#!/usr/bin/env bash
# sidecar_podman - memtrace as a real sidecar: a podman pod sharing its pid
# namespace, two JVM containers (non-root uids 1000 and 1001, each its own
# /tmp and mount namespace) and a memtrace container from the Containerfile's
# runtime-libs stage (the image's libraries, this build's memtrace and agent
# mounted) with only the capabilities docs/serve.md's table names, not
# --privileged. Checked:
#  - a real Prometheus scrapes the sidecar: collections and allocation of the
#    JVM as uid 1000, equal to the sidecar's own /metrics;
#  - the sidecar's jvm_gc_pause_seconds_count equal a host memtrace serve's of
#    the same JVM on the same run (the workload idle after DONE);
#  - memtrace_jvm_info carries the JVM's container id (podman inspect's);
#  - histo from inside the memtrace container, across the mount namespaces
#    (the agent placed in the other JVM's /tmp, as its uid): RetainWorkload's
#    10 Owner, 55 Node and 5 Shared, known by construction.
# TIMEOUT: 150
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/podman.sh"
command -v prometheus >/dev/null || skip "prometheus is not installed (apt-get install prometheus)"
serve_token
chmod 644 "$TMPD/token"

# the image's runtime stage (cached by podman after the first build)
RT=localhost/memtrace-runtime-libs:latest
(flock 9; podman build --pull=never --layers --target runtime-libs -t "$RT" -f "$ROOT/Containerfile" "$ROOT") \
	9>/var/tmp/memtrace-e2e-image.lock >"$TMPD/build.log" 2>&1 ||
	skip "cannot build the Containerfile's runtime-libs stage: $(tail -2 "$TMPD/build.log" | tr '\n' ' ')"

POD=$(podman_name pod)
podman_pod "$POD" --network host --share pid,ipc,uts,net
mkdir -p "$TMPD/go"
chmod 755 "$TMPD/go"
PODMAN_JVM_OPTS=(--pod "$POD" --user 1000:1000 -v "$TMPD/go:/go:ro")
podman_jvm "$(podman_name gc)" -Xmx64m -XX:TieredStopAtLevel=1 GcWorkload --go /go/go --alloc-mb 48
GC_HOST=$CPID GC_NAME=$(podman_name gc)
GC_ID=$(podman inspect -f '{{.Id}}' "$GC_NAME")
PODMAN_JVM_OPTS=(--pod "$POD" --user 1001:1001)
podman_jvm "$(podman_name retain)" -Xmx64m RetainWorkload
RET_HOST=$CPID
nspid() { awk '/^NStgid:/ { print $NF }' "/proc/$1/status"; }
GC=$(nspid "$GC_HOST") RET=$(nspid "$RET_HOST")
note "pod $POD: GcWorkload pid $GC (host $GC_HOST, uid 1000), RetainWorkload pid $RET (host $RET_HOST, uid 1001)"

PORT=$(free_port) HPORT=$(free_port) PPORT=$(free_port)
cat >"$TMPD/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: sidecar
    static_configs:
      - targets: ["127.0.0.1:$PORT"]
EOF
prometheus --config.file="$TMPD/prometheus.yml" --storage.tsdb.path="$TMPD/prom" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$TMPD/prom.log" 2>&1 &
PROM_PID=$!
trap 'kill $PROM_PID 2>/dev/null; wait $PROM_PID 2>/dev/null; podman_cleanup' EXIT

AGENT=$(dirname "$MEMTRACE")/libmemtrace-agent.so
SIDECAR=$(podman_name memtrace)
PODMAN_CONTAINERS+=("$SIDECAR")
"${PODMAN_RUN[@]}" -d --pod "$POD" --name "$SIDECAR" --cap-drop all \
	--cap-add CAP_BPF,CAP_PERFMON,CAP_SYS_ADMIN,CAP_SYS_PTRACE,CAP_SETUID,CAP_SETGID,CAP_CHOWN,CAP_DAC_OVERRIDE,CAP_KILL \
	-v "$MEMTRACE:/usr/bin/memtrace:ro" -v "$AGENT:/usr/lib/memtrace/libmemtrace-agent.so:ro" \
	-v "$TMPD/token:/run/secrets/memtrace-token:ro" "$RT" \
	memtrace serve --all --listen "127.0.0.1:$PORT" --token-file /run/secrets/memtrace-token --rescan 1 \
	>"$TMPD/sidecar.id" 2>&1 || { cat "$TMPD/sidecar.id" >&2; fail "the memtrace container did not start"; }
serve_start "$TMPD/host.log" -p "$GC_HOST" --listen "127.0.0.1:$HPORT" --token-file "$TMPD/token"

api() { curl -s -m 10 -H "Authorization: Bearer $TOKEN" "$@"; }
watched() { api "127.0.0.1:$PORT/api/v1/jvms" | python3 -c 'import json,sys; print(" ".join(sorted(str(j["pid"]) for j in json.load(sys.stdin)["jvms"])))' 2>/dev/null; }
for ((i = 0; i < 100; i++)); do
	[ "$(watched)" = "$(printf '%s\n' "$GC" "$RET" | sort | tr '\n' ' ' | sed 's/ $//')" ] && break
	sleep 0.2
done
[ $i -lt 100 ] || { podman logs "$SIDECAR" >&2; fail "the sidecar does not watch both JVMs (watches: $(watched))"; }
api -X POST "127.0.0.1:$PORT/api/v1/jvms/$GC/alloc" >/dev/null
for ((i = 0; i < 100; i++)); do
	st=$(api "127.0.0.1:$PORT/api/v1/jvms/$GC" | python3 -c 'import json,sys; print(json.load(sys.stdin)["alloc"]["state"])' 2>/dev/null)
	[ "$st" = on ] || [ "$st" = failed ] && break
	sleep 0.2
done
[ "$st" = on ] || { podman logs "$SIDECAR" >&2; fail "allocation sampling in the sidecar is '$st'"; }
touch "$TMPD/go/go"
for ((i = 0; i < 600; i++)); do podman logs "$GC_NAME" 2>&1 | grep -q DONE && break; sleep 0.1; done
podman logs "$GC_NAME" 2>&1 | grep -q DONE || fail "GcWorkload did not finish"
sleep 2 # both serves drain their ring buffers (every 100 ms) and Prometheus scrapes (1 s)

sum_of() { # METRICS_TEXT PREFIX: the sum of the samples whose line starts with PREFIX
	awk -v p="$2" 'index($0, p) == 1 { s += $NF; n++ } END { printf "%.0f\n", n ? s : -1 }' "$1"
}
prom() { # PROMQL: the value of its single result, or -1
	curl -s -m 10 "127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print("%.0f" % float(r[0]["value"][1]) if r else -1)' 2>/dev/null || echo -1
}
for ((i = 0; i < 40; i++)); do
	curl -s -m 10 "127.0.0.1:$PORT/metrics" >"$TMPD/side.txt"
	curl -s -m 10 "127.0.0.1:$HPORT/metrics" >"$TMPD/host.txt"
	side=$(sum_of "$TMPD/side.txt" "jvm_gc_pause_seconds_count{")
	ps=$(prom "sum(jvm_gc_pause_seconds_count{job=\"sidecar\",pid=\"$GC\"})")
	pa=$(prom "memtrace_alloc_bytes_total{job=\"sidecar\",pid=\"$GC\"}")
	[ "$side" -gt 0 ] && [ "$ps" = "$side" ] && [ "$pa" -gt 0 ] && break
	sleep 0.5
done
[ "$side" -gt 0 ] || { podman logs "$SIDECAR" >&2; fail "no collections in the sidecar's series"; }
assert_eq "$ps" "$side" "Prometheus's sum of jvm_gc_pause_seconds_count vs the sidecar's /metrics"
[ "$pa" -gt 0 ] || fail "no memtrace_alloc_bytes_total in Prometheus ($pa)"
python3 - "$TMPD/side.txt" "$TMPD/host.txt" "$GC" "$GC_HOST" "$GC_ID" <<'PY' || fail "the sidecar's series differ from the host memtrace's"
import re, sys
side, host = open(sys.argv[1]).read(), open(sys.argv[2]).read()
gc, gc_host, cid = sys.argv[3:]
def series(text, name, pid):
    out = {}
    for l in text.splitlines():
        if l.startswith(name + "{"):
            lab = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', l[l.index("{"):l.rindex("}")]))
            if lab.pop("pid") == pid:
                out[tuple(sorted(lab.items()))] = float(l.split()[-1])
    return out
a = series(side, "jvm_gc_pause_seconds_count", gc)
b = series(host, "jvm_gc_pause_seconds_count", gc_host)
print("  sidecar:", sorted(a.items()), "\n  host:   ", sorted(b.items()), file=sys.stderr)
assert a and a == b
info = series(side, "memtrace_jvm_info", gc)
assert len(info) == 1 and dict(list(info)[0]).get("container_id") == cid, info
PY
note "collections: sidecar $side = Prometheus $ps = host memtrace's, per (gc, action, cause); allocated $pa bytes (Prometheus); memtrace_jvm_info's container_id = podman inspect's"

podman exec "$SIDECAR" memtrace histo -p "$RET" --json >"$TMPD/histo.json" 2>"$TMPD/histo.err" ||
	{ cat "$TMPD/histo.err" >&2; fail "histo from the sidecar failed"; }
python3 - "$TMPD/histo.json" <<'PY' || { cat "$TMPD/histo.err" >&2; fail "histo from the sidecar"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
n = {r["class"]: r["instances"] for r in rows if "class" in r}
want = {"RetainWorkload$Owner": 10, "RetainWorkload$Node": 55, "RetainWorkload$Shared": 5}
got = {k: n.get(k) for k in want}
print("  histo:", got, file=sys.stderr)
assert got == want
PY
note "histo from the sidecar container on the uid-1001 JVM: Owner 10, Node 55, Shared 5"
