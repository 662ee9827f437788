#!/usr/bin/env bash
# bench/serve_scale.sh [SECONDS] - one node's scale: `memtrace serve --all` on
# the host watching 20 JVMs in podman containers while every second one is
# stopped and another started, for SECONDS (default 600). Records serve's CPU,
# RSS, descriptors and the BPF maps, programs and links it holds every 5 s and
# /metrics every 2 s; prints CPU and RSS per watched JVM, the first minute
# against the last, how soon a gone JVM's series go, and fails (exit 1) when
# descriptors, BPF objects or memory grow (or the memory of gone JVMs is not
# given back), a gone JVM keeps its series or a JVM is
# never watched. bench/serve_scale.py says how; results in
# build/serve_scale/scale.json (SCALE_OUT). Needs root (BPF), podman and runc,
# and the local base image (scripts/container-base.sh).
# Knobs: SCALE_JVMS (20) JVMs kept running, SCALE_PERIOD (1.0) seconds
# between a stop and a start, SCALE_INFLIGHT (3) starts waiting for podman at
# most, SCALE_SCRAPE (2) seconds between scrapes, SCALE_RESCAN (serve's
# --rescan, 2), SCALE_BASE (20) seconds of serve alone, SCALE_STEADY (30)
# seconds of the JVMs running with none coming or going. JVMs: tests/java/SteadyGc 4 MiB/s, -Xmx32m, C1 only, Serial,
# JDK 17 and 25 in turns. Other JVMs on the machine are watched too: the
# figures count them (serve's memtrace_jvms_watched).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export SCALE_SECONDS=${1:-${SCALE_SECONDS:-600}}
export SCALE_OUT=${SCALE_OUT:-$ROOT/build/serve_scale}
command -v podman >/dev/null || { echo "serve_scale: podman is not installed (apt-get install podman runc)" >&2; exit 1; }
command -v runc >/dev/null || { echo "serve_scale: runc is not installed (apt-get install runc)" >&2; exit 1; }
"$ROOT/scripts/container-base.sh"
"$ROOT/tests/java/build.sh" >/dev/null 2>&1
rm -rf "$SCALE_OUT"
mkdir -p "$SCALE_OUT/classes"
# the binary, the agent and the classes copied: a rebuild meanwhile changes nothing
cp "$ROOT/build/memtrace" "$ROOT/build/libmemtrace-agent.so" "$SCALE_OUT/"
cp "$ROOT"/build/java/SteadyGc*.class "$SCALE_OUT/classes/"
export MEMTRACE=$SCALE_OUT/memtrace SCALE_CLASSES=$SCALE_OUT/classes
# podman's own containers (a container's cleanup) need the same runtime and limits
export CONTAINERS_CONF=$SCALE_OUT/containers.conf
printf '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n' >"$CONTAINERS_CONF"
exec /usr/bin/python3 "$ROOT/bench/serve_scale.py"
