#!/usr/bin/env bash
# scripts/image.sh - `make image`: build the memtrace image from Containerfile
# with podman (or buildah), tagged $IMAGE (default localhost/memtrace:VERSION
# and localhost/memtrace:latest). The base debian:bookworm-slim is used as
# found locally, else pulled, else (no registry reachable, as on the
# project's machines) made here by scripts/container-base.sh.
set -eu
cd "$(dirname "$0")/.."
VERSION=$(cat VERSION)
IMAGE=${IMAGE:-localhost/memtrace:$VERSION}
BASE=docker.io/library/debian:bookworm-slim

if command -v podman >/dev/null; then
	B=(podman build)
elif command -v buildah >/dev/null; then
	B=(buildah bud)
else
	echo "image: neither podman nor buildah is installed (apt-get install podman)" >&2
	exit 1
fi
if command -v podman >/dev/null && ! podman image exists "$BASE"; then
	timeout 60 podman pull -q "$BASE" >/dev/null 2>&1 || scripts/container-base.sh
fi
"${B[@]}" --pull=never --layers -f Containerfile -t "$IMAGE" -t localhost/memtrace:latest .
echo "image: $IMAGE"
