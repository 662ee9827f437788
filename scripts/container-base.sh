#!/usr/bin/env bash
# scripts/container-base.sh - make the local base image debian:bookworm-slim
# that the Containerfile builds FROM, on a machine that reaches no image
# registry: mmdebstrap builds a minbase Debian 12 root from the package
# repositories this machine's apt uses (its sources lists), with the
# documentation, man pages and locales left out as Debian's slim images leave
# them out, and podman imports it under the base's name. The tarball is kept
# in $MEMTRACE_BASE_CACHE (default /var/tmp/memtrace-base) so later runs only
# import it; an image already present is left alone.
# Exits 0 when the image is there, 1 with the reason on stderr.
set -eu

IMAGE=${MEMTRACE_BASE_IMAGE:-docker.io/library/debian:bookworm-slim}
CACHE=${MEMTRACE_BASE_CACHE:-/var/tmp/memtrace-base}
TAR=$CACHE/bookworm-slim.tar

command -v podman >/dev/null || { echo "container-base: podman is not installed (apt-get install podman)" >&2; exit 1; }
if podman image exists "$IMAGE"; then
	exit 0
fi
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
if [ ! -s "$TAR" ]; then
	command -v mmdebstrap >/dev/null ||
		{ echo "container-base: mmdebstrap is not installed (apt-get install mmdebstrap)" >&2; exit 1; }
	srcs=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -v '^[[:space:]]*#' || true)
	[ -n "$srcs" ] || { echo "container-base: no apt sources on this machine to build from" >&2; exit 1; }
	echo "container-base: building $TAR with mmdebstrap (once; cached)" >&2
	if ! printf '%s\n' "$srcs" | mmdebstrap --quiet --variant=minbase --format=tar \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/info/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-include=/usr/share/locale/locale.alias' \
		--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
		bookworm "$TAR.tmp" - >"$CACHE/mmdebstrap.log" 2>&1; then
		echo "container-base: mmdebstrap failed (log: $CACHE/mmdebstrap.log):" >&2
		tail -5 "$CACHE/mmdebstrap.log" >&2
		rm -f "$TAR.tmp"
		exit 1
	fi
	mv "$TAR.tmp" "$TAR"
fi
podman import --quiet --change 'CMD ["bash"]' "$TAR" "$IMAGE" >/dev/null ||
	{ echo "container-base: podman import of $TAR failed" >&2; exit 1; }
