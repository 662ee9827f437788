#!/usr/bin/env bash
# attach_symlink - symlinks planted in the JVM's /tmp where memtrace puts the
# agent (at the private directory's name, at the library's name) are refused
# without being followed: nothing is written where they point, they are left
# in place, memtrace exits 1 saying why. The JVM runs in its own mount
# namespace with a private /tmp, so the host's /tmp is never touched.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

classes_outside_tmp || fail "cannot copy the classes"
unshare --mount sh -c "mount -t tmpfs -o mode=1777 tmpfs /tmp && exec '$JAVA' -cp '$OUT_CLASSES' AttachWorkload" \
	>"$TMPD/w.out" 2>&1 &
JVM_PID=$!
JVM_PIDS+=("$JVM_PID")
wait_for_line "$TMPD/w.out" READY 60 || { cat "$TMPD/w.out" >&2; fail "JVM did not start"; }
JT=/proc/$JVM_PID/root/tmp           # the JVM's /tmp, from here
NAME="libmemtrace-agent-$(cat "$ROOT/VERSION").so"
mkdir -p "$TMPD/victim" && chmod 700 "$TMPD/victim"

# 1. the private directory is a symlink to a host directory
ln -s "$TMPD/victim" "$JT/.memtrace-0"
"$MEMTRACE" attach -p "$JVM_PID" >/dev/null 2>"$TMPD/e1" && fail "attach through a symlinked directory"
cat "$TMPD/e1" >&2
assert_contains "$TMPD/e1" "refusing"
[ -z "$(ls -A "$TMPD/victim")" ] || fail "wrote through the symlink: $(ls -A "$TMPD/victim")"
[ -L "$JT/.memtrace-0" ] || fail "the planted symlink was removed"
rm "$JT/.memtrace-0"

# 2. the library's name is a symlink to a host file
mkdir -m 700 "$JT/.memtrace-0"
echo original >"$TMPD/victim/target"
ln -s "$TMPD/victim/target" "$JT/.memtrace-0/$NAME"
"$MEMTRACE" attach -p "$JVM_PID" >/dev/null 2>"$TMPD/e2" && fail "attach through a symlinked library"
cat "$TMPD/e2" >&2
assert_contains "$TMPD/e2" "refusing it without following it"
assert_eq "$(cat "$TMPD/victim/target")" original "symlink target"
[ -L "$JT/.memtrace-0/$NAME" ] || fail "the planted symlink was removed"
grep -q libmemtrace-agent /proc/$JVM_PID/maps && fail "agent loaded anyway"
rm "$JT/.memtrace-0/$NAME"

# 3. a directory owned by another uid
chown 12345 "$JT/.memtrace-0"
"$MEMTRACE" attach -p "$JVM_PID" >/dev/null 2>"$TMPD/e3" && fail "attach into a foreign directory"
assert_contains "$TMPD/e3" "owned by uid 12345"
rmdir "$JT/.memtrace-0"

# clean: attach works, leaves nothing in the JVM's /tmp but its sockets
"$MEMTRACE" attach -p "$JVM_PID" >/dev/null || fail "attach"
[ -e "$JT/.memtrace-0" ] && fail ".memtrace-0 left behind"
"$MEMTRACE" detach -p "$JVM_PID" >/dev/null || fail "detach"
kill -0 "$JVM_PID" || fail "JVM died"
exit 0
