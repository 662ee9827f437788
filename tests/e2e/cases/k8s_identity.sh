#!/usr/bin/env bash
# k8s_identity - a JVM laid out as a kubelet and containerd lay out a pod's
# container, without a cluster: pod UID, pod name and namespace, container id
# and runtime in `ps --json`, serve's API and memtrace_jvm_info; --labels pod,
# namespace puts those two on every series.
#
# How faithful: the cgroup is the kubelet's systemd-driver path with
# containerd's CRI scope (kubepods.slice/kubepods-burstable.slice/
# kubepods-burstable-pod<UID with _>.slice/cri-containerd-<64 hex>.scope),
# made here in the v2 hierarchy and in the named v1 one (name=systemd; not in
# the v1 controllers: this VM's memory cgroup is not ours to leave), the JVM
# moved into it before it starts. The JVM has its own uts (hostname = the pod
# name), mount and pid namespaces, a private /tmp and /run; the service-account
# volume is a directory laid out as the kubelet's atomic writer lays out a
# projected volume (..data -> a timestamped directory; token, ca.crt,
# namespace as links into ..data) bind-mounted read-only at
# /var/run/secrets/kubernetes.io/serviceaccount, which lands under /run
# because /var/run is a symlink (as in the images); the environment holds
# HOSTNAME and the KUBERNETES_SERVICE_* variables containerd and the kubelet
# set. Not reproduced: the pause container and the network namespace, cgroup
# limits, the kubelet's /etc/hosts; the container id is random.
# A second JVM in the same pod cgroup shares the host's uts namespace (a
# hostNetwork pod): its HOSTNAME is the node's, and no pod name is read.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"
command -v unshare >/dev/null || skip "no unshare"
serve_token

V2=""
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then V2=/sys/fs/cgroup
elif [ -d /sys/fs/cgroup/unified ]; then V2=/sys/fs/cgroup/unified; fi
V1=""
[ -d /sys/fs/cgroup/systemd ] && [ -e /sys/fs/cgroup/systemd/cgroup.procs ] && V1=/sys/fs/cgroup/systemd
[ -n "$V2$V1" ] || skip "no cgroup hierarchy to make a pod cgroup in"

classes_outside_tmp || fail "cannot copy the classes"
POD_UID=$(python3 -c 'import uuid; print(uuid.uuid4())')
CID=$(head -c 32 /dev/urandom | sha256sum | cut -c1-64)
CID2=$(head -c 32 /dev/urandom | sha256sum | cut -c1-64)
POD=shop-7d4b9c8f5-x2x9p
NS=payments-$JDK
SLICE="kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${POD_UID//-/_}.slice"
LOCK=/var/tmp/memtrace-e2e-kubepods.lock

# The pod's cgroups; two runs of this case share kubepods.slice: mkdir and
# rmdir under a lock.
cg_make() {
	local h
	for h in $V2 $V1; do mkdir -p "$h/$SLICE/cri-containerd-$CID.scope" "$h/$SLICE/cri-containerd-$CID2.scope"; done
}
cg_remove() {
	local h d
	for h in $V2 $V1; do
		for d in "$SLICE/cri-containerd-$CID.scope" "$SLICE/cri-containerd-$CID2.scope" "$SLICE" \
			kubepods.slice/kubepods-burstable.slice kubepods.slice; do
			rmdir "$h/$d" 2>/dev/null
		done
	done
}
UNSHARES=()
stop_all() {
	local u c
	for u in "${UNSHARES[@]}"; do
		for c in $(pgrep -P "$u"); do kill "$c" 2>/dev/null; done
		kill "$u" 2>/dev/null
		wait "$u" 2>/dev/null
	done
	cleanup_all
	for ((i = 0; i < 50; i++)); do
		[ -z "$V2" ] || [ ! -s "$V2/$SLICE/cri-containerd-$CID.scope/cgroup.procs" ] && break
		sleep 0.1
	done
	(flock 9; cg_remove) 9>"$LOCK"
}
trap stop_all EXIT
(flock 9; cg_make) 9>"$LOCK" || fail "cannot make the pod's cgroups"

# The service-account volume as the kubelet's atomic writer leaves it.
SA=$TMPD/pods/$POD_UID/volumes/kubernetes.io~projected/kube-api-access-7xk2q
TS="..$(date +%Y_%m_%d_%H_%M_%S).123456789"
mkdir -p "$SA/$TS"
printf '%s' "$NS" >"$SA/$TS/namespace"
printf 'eyJhbGciOiJSUzI1NiJ9.e2e.not-a-token' >"$SA/$TS/token"
printf -- '-----BEGIN CERTIFICATE-----\ne2e\n-----END CERTIFICATE-----\n' >"$SA/$TS/ca.crt"
ln -s "$TS" "$SA/..data"
for f in namespace token ca.crt; do ln -s "..data/$f" "$SA/$f"; done
chmod -R a+rX "$TMPD/pods"

# container CID: JVM in the pod's own uts namespace; CID2: in the host's
pod_jvm() { # CID UTS_FLAG HOSTNAME OUT
	local cgcmd="" h
	for h in $V2 $V1; do cgcmd+="echo \$\$ >'$h/$SLICE/cri-containerd-$1.scope/cgroup.procs' && "; done
	sh -c "${cgcmd} exec unshare $2 --mount --pid --fork --mount-proc sh -c \"
		${2:+hostname $POD &&} mount -t tmpfs tmpfs /run &&
		mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
		mount --bind -o ro '$SA' /run/secrets/kubernetes.io/serviceaccount &&
		mount -t tmpfs -o mode=1777 tmpfs /tmp &&
		exec env -i PATH=/usr/bin:/bin HOSTNAME=$3 KUBERNETES_SERVICE_HOST=10.96.0.1 \
			KUBERNETES_SERVICE_PORT=443 KUBERNETES_PORT=tcp://10.96.0.1:443 \
			'$JAVA' -Xmx32m -XX:TieredStopAtLevel=1 -cp '$OUT_CLASSES' SteadyGc 16\"" \
		>"$4" 2>&1 &
	UNSHARES+=($!)
}
pod_jvm "$CID" --uts "$POD" "$TMPD/a.out"
pod_jvm "$CID2" "" "$(hostname)" "$TMPD/b.out"
wait_for_line "$TMPD/a.out" READY 60 || { cat "$TMPD/a.out" >&2; fail "pod JVM did not start"; }
wait_for_line "$TMPD/b.out" READY 60 || { cat "$TMPD/b.out" >&2; fail "hostNetwork pod JVM did not start"; }
jvm_in() { # the host pid of the java in container $1's v2 (or v1) cgroup
	local h=${V2:-$V1} p
	for p in $(cat "$h/$SLICE/cri-containerd-$1.scope/cgroup.procs"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = java ] && { echo "$p"; return; }
	done
}
A=$(jvm_in "$CID"); B=$(jvm_in "$CID2")
[ -n "$A" ] && [ -n "$B" ] || fail "no java in the pod's cgroups (a=$A b=$B)"
note "pod $NS/$POD uid $POD_UID: JVM $A (container ${CID:0:12}), JVM $B (hostNetwork, ${CID2:0:12})"

"$MEMTRACE" ps --json >"$TMPD/ps.json" || fail "memtrace ps failed"
ra="[r for r in recs if r['pid'] == $A][0]"
rb="[r for r in recs if r['pid'] == $B][0]"
assert_eq "$(json_get "$TMPD/ps.json" "$ra['pod_uid']")" "$POD_UID" "ps: pod UID"
assert_eq "$(json_get "$TMPD/ps.json" "$ra['pod']")" "$POD" "ps: pod name"
assert_eq "$(json_get "$TMPD/ps.json" "$ra['namespace']")" "$NS" "ps: namespace"
assert_eq "$(json_get "$TMPD/ps.json" "$ra['container_id']")" "$CID" "ps: container id"
assert_eq "$(json_get "$TMPD/ps.json" "$ra['container_runtime']")" containerd "ps: runtime"
assert_eq "$(json_get "$TMPD/ps.json" "$ra['container_name']")" "" "ps: containerd's names are not readable"
assert_eq "$(json_get "$TMPD/ps.json" "$rb['pod_uid']")" "$POD_UID" "ps: hostNetwork JVM's pod UID"
assert_eq "$(json_get "$TMPD/ps.json" "$rb['pod']")" "" "ps: hostNetwork JVM's HOSTNAME is the node's, not taken"
assert_eq "$(json_get "$TMPD/ps.json" "$rb['namespace']")" "$NS" "ps: hostNetwork JVM's namespace"
assert_eq "$(json_get "$TMPD/ps.json" "$rb['container_id']")" "$CID2" "ps: hostNetwork JVM's container id"

PORT=$(free_port)
serve_start "$TMPD/serve.log" -p "$A" --listen "127.0.0.1:$PORT" --token-file "$TMPD/token" \
	--labels pod,namespace
for ((i = 0; i < 100; i++)); do
	curl -s "127.0.0.1:$PORT/metrics" >"$TMPD/metrics" 2>/dev/null &&
		grep -q '^jvm_gc_pause_seconds_count{' "$TMPD/metrics" && break
	sleep 0.2
done
grep -q '^jvm_gc_pause_seconds_count{' "$TMPD/metrics" || { cat "$TMPD/serve.log" >&2; fail "no collections from the pod's JVM"; }
curl -s -H "Authorization: Bearer $TOKEN" "127.0.0.1:$PORT/api/v1/jvms/$A" >"$TMPD/jvm.json"
assert_eq "$(json_get "$TMPD/jvm.json" "recs[0]['pod']")" "$POD" "API: pod"
assert_eq "$(json_get "$TMPD/jvm.json" "recs[0]['namespace']")" "$NS" "API: namespace"
assert_eq "$(json_get "$TMPD/jvm.json" "recs[0]['pod_uid']")" "$POD_UID" "API: pod UID"
python3 - "$TMPD/metrics" "$A" "$CID" "$POD" "$NS" "$POD_UID" <<'PY' || fail "series labels"
import re, sys
text, pid, cid, pod, ns, uid = open(sys.argv[1]).read(), *sys.argv[2:]
def labels(line):
    return dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', line[line.index("{"):line.rindex("}")]))
info = [labels(l) for l in text.splitlines() if l.startswith("memtrace_jvm_info{")]
info = [l for l in info if l.get("pid") == pid]
assert len(info) == 1, info
want = {"container_id": cid, "pod": pod, "namespace": ns, "pod_uid": uid}
assert all(info[0].get(k) == v for k, v in want.items()), info
assert "container" not in info[0], info
gc = [labels(l) for l in text.splitlines() if l.startswith("jvm_gc_pause_seconds_count{")]
assert gc and all(l.get("pod") == pod and l.get("namespace") == ns and "pod_uid" not in l
                  and "container_id" not in l for l in gc), gc
PY
note "ps, API, memtrace_jvm_info: pod, namespace, pod UID, container id equal the layout's; --labels pod,namespace on jvm_gc_pause_seconds; the hostNetwork JVM has no pod name"
