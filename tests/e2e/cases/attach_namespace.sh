#!/usr/bin/env bash
# attach_namespace - attach from outside to a JVM that runs as pid 1 of its
# own pid namespace with its own mount namespace and a private tmpfs /tmp
# (a container without the container runtime), and to a JVM that runs as
# another uid (65534): attach switches to the target's uid/gid.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"
command -v unshare >/dev/null || skip "no unshare"

# The JVM's /tmp is private: its classes must live elsewhere.
classes_outside_tmp || fail "cannot copy the classes"
NS_CLASSES=$OUT_CLASSES

# start_ns NAME: JVM as pid 1 of new pid+mount namespaces, private /tmp; sets NS_PID (host pid)
start_ns() {
	unshare --pid --mount --fork --mount-proc sh -c \
		"mount -t tmpfs -o mode=1777 tmpfs /tmp && exec '$JAVA' -cp '$NS_CLASSES' AttachWorkload" \
		>"$TMPD/$1.out" 2>&1 &
	local u=$! i
	JVM_PIDS+=("$u")
	wait_for_line "$TMPD/$1.out" READY 60 || { cat "$TMPD/$1.out" >&2; fail "namespaced JVM did not start"; }
	for ((i = 0; i < 50; i++)); do
		NS_PID=$(pgrep -P "$u" | head -1)
		[ -n "$NS_PID" ] && break
		sleep 0.1
	done
	[ -n "$NS_PID" ] || fail "no JVM under unshare $u"
	JVM_PIDS+=("$NS_PID")
}

start_ns ns
nspid=$(awk '/^NStgid:/{print $NF}' /proc/$NS_PID/status)
note "namespaced JVM: host pid $NS_PID, pid $nspid in its namespace"
assert_eq "$nspid" 1 "pid inside the namespace"
host_before=$(ls -a /tmp | grep -c '^\.memtrace-1\.sock$\|^\.java_pid1$')

"$MEMTRACE" --json attach -p "$NS_PID" >"$TMPD/a.json" 2>"$TMPD/a.err" || { cat "$TMPD/a.err" >&2; fail "attach into namespaces"; }
cat "$TMPD/a.json"
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["nspid"]')" 1 "agent's getpid()"
[ -S /proc/$NS_PID/root/tmp/.memtrace-1.sock ] || fail "agent socket not in the JVM's /tmp"
[ -S /proc/$NS_PID/root/tmp/.java_pid1 ] || fail "attach socket not in the JVM's /tmp"
host_after=$(ls -a /tmp | grep -c '^\.memtrace-1\.sock$\|^\.java_pid1$')
assert_eq "$host_after" "$host_before" "files created in the host's /tmp"
"$MEMTRACE" detach -p "$NS_PID" >/dev/null || fail "detach from namespaces"
"$MEMTRACE" attach -p "$NS_PID" >/dev/null || fail "re-attach into namespaces"
t0=$(grep -c '^tick ' "$TMPD/ns.out")
wait_for_line "$TMPD/ns.out" "^tick $((t0 + 1)) " 10 || fail "namespaced JVM stopped ticking"
[ "$(awk '/^tick /{print $4}' "$TMPD/ns.out" | sort -u | wc -l)" -eq 1 ] || fail "checksum changed"

# a JVM of another uid: memtrace (root) acts as uid 65534 for the connects
setpriv --reuid=65534 --regid=65534 --clear-groups "$JAVA" -cp "$CLASSES" AttachWorkload >"$TMPD/u.out" 2>&1 &
UPID=$!
JVM_PIDS+=("$UPID")
wait_for_line "$TMPD/u.out" READY 60 || { cat "$TMPD/u.out" >&2; fail "uid 65534 JVM did not start"; }
# what an earlier root process with this pid, killed with -9, leaves: a dead
# root-owned socket at the agent's path, which the uid 65534 agent cannot
# replace in the sticky /tmp (seen in CI through pid reuse)
rm -f "/tmp/.memtrace-$UPID.sock" # one truly left by an earlier process: bind anew
python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('/tmp/.memtrace-$UPID.sock')"
# and a dead root-owned attach listener socket of mode 0600 made before this
# JVM started (a clean clone's run once failed with "cannot connect to the
# attach listener ...: Permission denied" on such a leftover)
rm -f "/tmp/.java_pid$UPID"
python3 -c "import os, socket; socket.socket(socket.AF_UNIX).bind('/tmp/.java_pid$UPID'); os.chmod('/tmp/.java_pid$UPID', 0o600)"
touch -h -d '-1 hour' "/tmp/.java_pid$UPID"
# (any agent session removes dead sockets of other JVMs in its /tmp: the
# same case on the other JDK, run beside this one, may sweep the planted one
# before this attach sees it - a clean clone's make check saw that; the
# owner assertions below hold either way)
"$MEMTRACE" --json attach -p "$UPID" >"$TMPD/u.json" 2>"$TMPD/u.err" || { cat "$TMPD/u.err" >&2; fail "attach to a uid 65534 JVM"; }
if grep -q "removed a stale /tmp/.memtrace-$UPID.sock" "$TMPD/u.err"; then
	note "the planted stale socket removed, and said"
elif grep -v "java_pid" "$TMPD/u.err" | grep -q "stale\|cannot"; then
	cat "$TMPD/u.err" >&2; fail "the stale socket's removal not said as it should be"
else
	note "the planted socket was swept by another memtrace session before this attach"
fi
grep -q "removed a stale /tmp/.java_pid$UPID made before JVM $UPID started" "$TMPD/u.err" || { cat "$TMPD/u.err" >&2; fail "the stale attach listener socket's removal not said"; }
assert_eq "$(stat -c %u /tmp/.memtrace-$UPID.sock)" 65534 "agent socket owner"
assert_eq "$(stat -c %u /tmp/.java_pid$UPID)" 65534 "attach socket owner"
"$MEMTRACE" detach -p "$UPID" >/dev/null || fail "detach from a uid 65534 JVM"
# left behind: still there after a while (it lives only while an agent is
# placed and loaded; this case on the other JDK, run beside this one, places
# one for its own uid 65534 JVM: a clean clone's make check saw it there)
for ((i = 0; i < 50; i++)); do
	[ -e /tmp/.memtrace-65534 ] || break
	sleep 0.1
done
[ -e /tmp/.memtrace-65534 ] && fail "/tmp/.memtrace-65534 left behind"
# a non-root memtrace of another uid is told what to do
setpriv --reuid=12345 --regid=12345 --clear-groups "$MEMTRACE" detach -p "$UPID" 2>"$TMPD/nr.err" && fail "uid 12345 detached"
cat "$TMPD/nr.err" >&2
exit 0
