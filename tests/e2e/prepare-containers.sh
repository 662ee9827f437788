#!/usr/bin/env bash
# tests/e2e/prepare-containers.sh - what the podman cases need, made before
# the end-to-end stage and outside any case's time limit (tests/run-all.sh
# runs it beside the unit tests): the local base image
# (scripts/container-base.sh: mmdebstrap, ~3 min on a fresh machine, then
# cached) and the Containerfile's runtime-libs stage (cached by podman).
# Prints one line; exits 0 when both are there, else 1 with the reason - the
# caller then exports MEMTRACE_E2E_NO_CONTAINERS=reason and the podman cases
# skip at once, saying it (tests/e2e/podman.sh).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
log=$(mktemp /tmp/mt-containers.XXXX)
trap 'rm -f "$log"' EXIT
if ! command -v podman >/dev/null; then
	echo "podman is not installed"
	exit 1
fi
if ! "$ROOT/scripts/container-base.sh" >"$log" 2>&1; then
	echo "no base image: $(tail -2 "$log" | tr '\n' ' ')"
	exit 1
fi
export CONTAINERS_CONF=$log.conf
printf '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n' >"$CONTAINERS_CONF"
if ! (flock 9; podman build --pull=never --layers --target runtime-libs \
	-t localhost/memtrace-runtime-libs:latest -f "$ROOT/Containerfile" "$ROOT") \
	9>/var/tmp/memtrace-e2e-image.lock >"$log" 2>&1; then
	rm -f "$CONTAINERS_CONF"
	echo "cannot build the Containerfile's runtime-libs stage: $(tail -2 "$log" | tr '\n' ' ')"
	exit 1
fi
rm -f "$CONTAINERS_CONF"
echo "the base image and the runtime-libs stage are ready"
