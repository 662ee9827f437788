#!/usr/bin/env bash
# scripts/caps_matrix.sh - which capabilities memtrace needs (README, "Sidecar").
# For each capability C of the set below: run `memtrace gc`, `serve` and
# `attach` as root against a JVM running as uid 65534, with every capability
# but (set minus C) dropped from the bounding set (capsh --drop), and print
# the exit codes, collections seen and the first error. Needs root, capsh,
# setpriv; ~2 minutes. Leaves nothing behind.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
J=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
W=$(mktemp -d /var/tmp/mt-caps.XXXX)
trap 'rm -rf "$W"' EXIT
"$ROOT/tests/java/build.sh"
cp -r "$ROOT/build/java" "$W/classes"
cp "$ROOT/build/memtrace" "$ROOT/build/libmemtrace-agent.so" "$W/"
chmod -R a+rX "$W"
M=$W/memtrace
export MEMTRACE_AGENT=$W/libmemtrace-agent.so
S="cap_bpf cap_perfmon cap_sys_admin cap_sys_ptrace cap_setuid cap_setgid cap_chown cap_dac_override cap_kill"
names=$(for c in $(seq 0 40); do capsh --decode=$(printf '%x' $((1 << c))) 2>/dev/null | sed 's/.*=//'; done | grep -v '^$')
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
for without in none $S; do
	keep=$(echo $S | tr ' ' '\n' | grep -v "^$without\$" | paste -sd'|')
	drop=$(echo "$names" | grep -v -E "^($keep)\$" | paste -sd,)
	setpriv --reuid 65534 --regid 65534 --clear-groups "$J" -Xmx32m -XX:TieredStopAtLevel=1 \
		-cp "$W/classes" SteadyGc 16 >"$W/jvm.out" 2>&1 &
	jp=$!
	sleep 1.5
	line="without $without:"
	for cmd in gc serve attach; do
		case $cmd in
		gc) c="$M gc -p $jp --duration 2.5" ;;
		serve) p=$(port); c="$M serve -p $jp --listen 127.0.0.1:$p --duration 3.5" ;;
		attach) c="$M attach -p $jp" ;;
		esac
		capsh --drop="$drop" -- -c "$c" >"$W/out" 2>"$W/err" &
		rp=$!
		extra=
		[ $cmd = serve ] && { sleep 3; extra=",collections=$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$p/metrics').read().decode())" 2>/dev/null | awk '/^jvm_gc_(pause|concurrent_phase_time)_seconds_count/ { s += $NF } END { print s + 0 }')"; }
		wait $rp
		rc=$?
		[ $cmd = gc ] && extra=",records=$(grep -c 'young\|full' "$W/out")"
		line="$line $cmd rc=$rc$extra;"
		err=$(grep -m1 error "$W/err" | cut -c1-200)
		[ -n "$err" ] && line="$line [$err]"
	done
	echo "$line"
	kill $jp
	wait $jp 2>/dev/null
	# an attach without CAP_CHOWN leaves this behind in the (shared) /tmp
	[ -d /tmp/.memtrace-65534 ] && [ "$(stat -c %u /tmp/.memtrace-65534)" = 0 ] && rm -rf /tmp/.memtrace-65534
done
