# tests/e2e/lib.sh - sourced by every end-to-end case (tests/e2e/cases/*.sh).
#
# A case is a bash script run once per JDK (or once, if its header says
# "# JDKS: none") with:
#   MEMTRACE   path of the memtrace binary       JAVA_HOME  the JDK under test
#   JDK        "17" or "25"                      CLASSES    compiled tests/java
#   TMPD       a fresh directory for this run    ROOT       the repository
# It exits 0 (pass), 77 (skip: print the reason first) or anything else (fail).
# Header lines: "# TIMEOUT: S" (default 120), "# JDKS: none" (run once), and
# "# ALONE: why" (run.sh runs it with no other case in flight: it compares
# times or costs). Cases otherwise run two at a time: a case keeps its files
# in TMPD and takes free ports, never fixed names.
set -u
JAVA="$JAVA_HOME/bin/java"
JVM_PIDS=()

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
note() { echo "  $*" >&2; }

# jvm_start NAME [java args...]: start a JVM in the background, its output in
# $TMPD/NAME.out; waits (<= 60 s) for the workload to print READY; sets JVM_PID.
jvm_start() {
	local name=$1; shift
	"$JAVA" -cp "$CLASSES" "$@" >"$TMPD/$name.out" 2>&1 &
	JVM_PID=$!
	JVM_PIDS+=("$JVM_PID")
	wait_for_line "$TMPD/$name.out" READY 60 || { cat "$TMPD/$name.out" >&2; fail "JVM $name did not start"; }
}

# jtool NAME [args...]: the JDK's tool NAME (jcmd, jmap, jstack, jfr) in a
# small JVM of its own, compiled by C1 only, with the Serial collector: a
# jcmd took 0.38-0.43 core-s here as it comes and 0.29 so, a `jfr print` of
# a 1 MB recording 0.72 and 0.40 (perf stat -r 5). Interpreted (-Xint) a
# jcmd took 0.19-0.24, but decoding a long answer (Compiler.codelist)
# took a minute. The cases run some hundred of them.
jtool() {
	local t=$1; shift
	"$JAVA_HOME/bin/$t" -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC "$@"
}

# wait_for_line FILE PATTERN SECONDS
wait_for_line() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# jvm_stop PID: ask politely, then insist.
jvm_stop() {
	local pid=$1 i
	kill "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

cleanup_jvms() {
	local p
	# and the agent sockets a JVM killed here left in /tmp: its pid comes
	# round again, and a later test's JVM would find an old socket
	for p in "${JVM_PIDS[@]}"; do
		jvm_stop "$p"
		kill -0 "$p" 2>/dev/null || rm -f "/tmp/.memtrace-$p.sock"
	done
}
trap cleanup_jvms EXIT

# json_get FILE EXPR: evaluate a python expression over the JSON lines of FILE
# (bound to `recs`, a list of dicts) and print the result.
json_get() {
	python3 - "$1" "$2" <<'PY'
import json, sys
recs = []
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        recs.append(json.loads(line))
print(eval(sys.argv[2]))
PY
}

# agent_copies_left DIR: print how many files DIR (a memtrace agent directory,
# /tmp/.memtrace-UID) holds, counted under its lock - user/agentctl/agentfile.c
# holds it from placing a copy to removing it, and a case running beside this
# one may be loading its agent. 0 when DIR does not exist (never created here).
agent_copies_left() {
	local lk n
	exec {lk}<"$1" 2>/dev/null || { echo 0; return 0; }
	flock -w 30 "$lk" || { exec {lk}<&-; echo "lock of $1 not taken in 30 s" >&2; echo 999; return 0; }
	n=$(ls -A "$1" 2>/dev/null | wc -l)
	exec {lk}<&-
	echo "$n"
}

assert_eq() { [ "$1" == "$2" ] || fail "${3:-values differ}: got '$1', expected '$2'"; }
# copies_gone PID: the JVM PID has no child left within 2 s (the agent kills
# a frozen copy when memtrace has read it and reaps it as it ends, tens of
# ms for one that wrote millions of records, which nobody waits for).
copies_gone() {
	local i
	for i in $(seq 100); do
		[ -z "$(ps -o pid= --ppid "$1")" ] && return 0
		sleep 0.02
	done
	return 1
}
assert_contains() { grep -q -- "$2" "$1" || { cat "$1" >&2; fail "${3:-'$2' not found in $1}"; }; }

# classes_outside_tmp: set OUT_CLASSES to a directory under /var/tmp holding
# a copy of $CLASSES, for JVMs that get a private /tmp (the checkout may live
# in /tmp); removed when the case exits.
classes_outside_tmp() {
	OUT_CLASSES=$(mktemp -d /var/tmp/mt-classes.XXXX) || return 1
	CLEANUP_DIRS+=("$OUT_CLASSES")
	cp -r "$CLASSES/." "$OUT_CLASSES/"
}
# free_port: print a TCP port that is free on 127.0.0.1 now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# serve_token: a random token for `memtrace serve --token-file` in
# $TMPD/token (mode 600); sets TOKEN to it.
serve_token() {
	head -c 24 /dev/urandom | base64 >"$TMPD/token"
	chmod 600 "$TMPD/token"
	TOKEN=$(cat "$TMPD/token")
}

# serve_start LOG [ARGS...]: start `memtrace serve ARGS` in the background,
# its stdout and stderr in LOG (an environment given before the call is
# passed on: VAR=x serve_start ...); sets SERVE_PID. A serve not stopped with
# serve_stop is stopped when the case exits, before its JVMs.
SERVE_PIDS=()
serve_start() {
	local log=$1; shift
	"$MEMTRACE" serve "$@" >"$log" 2>&1 &
	SERVE_PID=$!
	SERVE_PIDS+=("$SERVE_PID")
}

# serve_stop [PID...]: SIGTERM to the given serves (default: every one
# started and not stopped yet), each waited for; returns the exit status of
# the last one.
serve_stop() {
	local pids=("$@") p i rc=0
	[ ${#pids[@]} -eq 0 ] && pids=("${SERVE_PIDS[@]}")
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rc=$?
		for i in "${!SERVE_PIDS[@]}"; do [ "${SERVE_PIDS[$i]}" = "$p" ] && unset "SERVE_PIDS[$i]"; done
	done
	return $rc
}

CLEANUP_DIRS=()
cleanup_all() {
	[ ${#SERVE_PIDS[@]} -gt 0 ] && serve_stop
	cleanup_jvms
	local d
	for d in "${CLEANUP_DIRS[@]}"; do rm -rf "$d"; done
}
trap cleanup_all EXIT
