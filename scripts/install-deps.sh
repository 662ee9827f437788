#!/usr/bin/env bash
# scripts/install-deps.sh - install, only when missing, every Debian package
# that building, the demo and the tests need. Idempotent; needs root to install.
set -eu

PKGS=(
	make gcc clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libncurses-dev  # build + BPF, live view
	libcmocka-dev systemtap-sdt-dev                                                # unit tests
	openjdk-17-jdk-headless                                      # JDK 17 (tests, JNI headers)
	python3 util-linux procps binutils tmux groff-base                # e2e: json, unshare, setpriv, objcopy, man page; make: gen-docs.py
	golang-go chromium                                           # e2e: go tool pprof, flame graph layout
	libmicrohttpd-dev prometheus                                 # memtrace serve; its e2e scraper
	podman buildah runc catatonit mmdebstrap                     # e2e and make image: containers, pods, the local base image
	yamllint                                                     # e2e deploy_manifests: deploy/*.yaml
	libh2-java                                                   # bench/locks_h2.sh: a real server under `locks`
	libderby-java libderbyclient-java                            # bench/locks_derby.sh: a server that waits in Object.wait
)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
echo "memtrace: installing missing packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "memtrace: error: installing packages needs root: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
