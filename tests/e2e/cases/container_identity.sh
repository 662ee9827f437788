#!/usr/bin/env bash
# container_identity - a JVM in a real podman container: the identity memtrace
# reads (container id and runtime from /proc/PID/cgroup, the name from
# conmon's command line) equals podman's own view (podman inspect: Id, Name,
# State.Pid) in `ps --json`, in serve's API record and on memtrace_jvm_info;
# --labels puts the chosen ones on every series and no others.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/podman.sh"
serve_token

NAME=$(podman_name jvm)
podman_jvm "$NAME" -Xmx32m -XX:TieredStopAtLevel=1 SteadyGc 16
ID=$(podman inspect -f '{{.Id}}' "$NAME")
assert_eq "$(podman inspect -f '{{.Name}}' "$NAME")" "$NAME" "podman's name"
note "podman: container $NAME, id ${ID:0:12}, pid $CPID"

# ps --json
"$MEMTRACE" ps --json >"$TMPD/ps.json" || fail "memtrace ps failed"
rec="[r for r in recs if r['pid'] == $CPID][0]"
assert_eq "$(json_get "$TMPD/ps.json" "$rec['container_id']")" "$ID" "ps: container_id"
assert_eq "$(json_get "$TMPD/ps.json" "$rec['container_runtime']")" podman "ps: runtime"
assert_eq "$(json_get "$TMPD/ps.json" "$rec['container_name']")" "$NAME" "ps: container_name"
assert_eq "$(json_get "$TMPD/ps.json" "$rec['container_name_from']")" conmon "ps: name source"
assert_eq "$(json_get "$TMPD/ps.json" "$rec['pod_uid']")" "" "ps: no pod"

# serve: the API record, the info series, and a series under --labels container
PORT=$(free_port)
serve_start "$TMPD/serve.log" -p "$CPID" --listen "127.0.0.1:$PORT" --token-file "$TMPD/token" \
	--labels container
for ((i = 0; i < 100; i++)); do
	curl -s "127.0.0.1:$PORT/metrics" >"$TMPD/metrics" 2>/dev/null &&
		grep -q '^jvm_gc_pause_seconds_count{' "$TMPD/metrics" && break
	sleep 0.2
done
grep -q '^jvm_gc_pause_seconds_count{' "$TMPD/metrics" || { cat "$TMPD/serve.log" >&2; fail "no collections from the container's JVM"; }
curl -s -H "Authorization: Bearer $TOKEN" "127.0.0.1:$PORT/api/v1/jvms/$CPID" >"$TMPD/jvm.json"
assert_eq "$(json_get "$TMPD/jvm.json" "recs[0]['container_id']")" "$ID" "API: container_id"
assert_eq "$(json_get "$TMPD/jvm.json" "recs[0]['container_name']")" "$NAME" "API: container_name"
assert_eq "$(json_get "$TMPD/jvm.json" "recs[0]['container_runtime']")" podman "API: runtime"
python3 - "$TMPD/metrics" "$CPID" "$ID" "$NAME" <<'PY' || fail "series labels"
import re, sys
text, pid, cid, name = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
def labels(line):
    return dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', line[line.index("{"):line.rindex("}")]))
info = [labels(l) for l in text.splitlines() if l.startswith("memtrace_jvm_info{")]
info = [l for l in info if l.get("pid") == pid]
assert len(info) == 1, info
assert info[0].get("container_id") == cid, info
assert info[0].get("container") == name, info
assert "pod" not in info[0] and "namespace" not in info[0], info
gc = [labels(l) for l in text.splitlines() if l.startswith("jvm_gc_pause_seconds_count{")]
assert gc and all(l.get("container") == name and "container_id" not in l for l in gc), gc
PY
note "ps, API, memtrace_jvm_info: container_id, container ($NAME) and runtime equal podman inspect's; --labels container on jvm_gc_pause_seconds without container_id"
