# tests/e2e/podman.sh - sourced (after lib.sh) by the cases that run real
# containers with podman. Skips the case, saying why, when podman cannot run
# containers here or the base image cannot be made (scripts/container-base.sh:
# debian:bookworm-slim built once with mmdebstrap, cached in /var/tmp).
#
# PODMAN_RUN: `podman run` with what podman 4.3 needs on this VM: runc (crun
#   refuses the hybrid cgroup layout) and explicit nofile/nproc limits (runc
#   is refused podman's defaults here, and an nproc above about 40000).
# podman_name: a container name of this case and run (podman_name jvm).
# podman_jvm NAME [java args...]: a JVM container from the base image, the
#   JDK under test and the compiled classes mounted read-only, its own /tmp,
#   the podman options in PODMAN_JVM_OPTS (default: no network); waits
#   (<= 60 s) for READY; sets CPID (its host pid).
# podman_pod NAME [podman pod create options]: a pod, removed at exit.
# Containers and pods made with these are removed when the case exits.
PODMAN_RUN=(podman run --runtime runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
# the same for the containers podman starts itself (a pod's infra container)
cat >"$TMPD/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "runc"
EOF
export CONTAINERS_CONF="$TMPD/containers.conf"
PODMAN_BASE=docker.io/library/debian:bookworm-slim
PODMAN_CONTAINERS=()
PODMAN_PODS=()
PODMAN_JVM_OPTS=(--net none)

[ -z "${MEMTRACE_E2E_NO_CONTAINERS:-}" ] || skip "$MEMTRACE_E2E_NO_CONTAINERS (tests/e2e/prepare-containers.sh)"
command -v podman >/dev/null || skip "podman is not installed (apt-get install podman runc)"
command -v runc >/dev/null || skip "runc is not installed (apt-get install runc)"
"$ROOT/scripts/container-base.sh" 2>"$TMPD/base.err" ||
	skip "no base image $PODMAN_BASE: $(tr '\n' ' ' <"$TMPD/base.err")"
if ! "${PODMAN_RUN[@]}" --rm --net none "$PODMAN_BASE" true >"$TMPD/probe.err" 2>&1; then
	skip "podman cannot run a container here: $(tail -2 "$TMPD/probe.err" | tr '\n' ' ')"
fi

podman_name() { echo "mt-e2e-$(basename "$0" .sh | tr _ -)-$1-$JDK-$$"; }

podman_cleanup() {
	local c
	for c in "${PODMAN_CONTAINERS[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1; done
	for c in "${PODMAN_PODS[@]}"; do podman pod rm -f -t 0 "$c" >/dev/null 2>&1; done
	cleanup_all
}
trap podman_cleanup EXIT

podman_jvm() {
	local name=$1 i; shift
	PODMAN_CONTAINERS+=("$name")
	"${PODMAN_RUN[@]}" -d --name "$name" "${PODMAN_JVM_OPTS[@]}" --tmpfs /tmp:mode=1777 \
		-v "$JAVA_HOME:$JAVA_HOME:ro" -v "$CLASSES:/classes:ro" "$PODMAN_BASE" \
		"$JAVA" -cp /classes "$@" >"$TMPD/$name.id" 2>&1 ||
		{ cat "$TMPD/$name.id" >&2; fail "podman run $name failed"; }
	for ((i = 0; i < 600; i++)); do
		podman logs "$name" 2>&1 | grep -q READY && break
		sleep 0.1
	done
	podman logs "$name" 2>&1 | grep -q READY || { podman logs "$name" >&2; fail "JVM container $name did not start"; }
	CPID=$(podman inspect -f '{{.State.Pid}}' "$name")
}

podman_pod() {
	local name=$1; shift
	PODMAN_PODS+=("$name")
	podman pod create --name "$name" "$@" >"$TMPD/$name.id" 2>&1 ||
		{ cat "$TMPD/$name.id" >&2; fail "podman pod create $name failed"; }
}
