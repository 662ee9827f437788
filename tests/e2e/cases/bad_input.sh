#!/usr/bin/env bash
# bad_input - every bad input gets a clear message and a non-zero exit:
# a pid that does not exist, a process that is not a JVM, a malformed pid,
# missing privileges, a JVM without USDT probes; and a JVM that exits
# mid-trace ends `memtrace gc` cleanly (summary, exit 0).
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/jdkcopy.sh"

# expect_fail CODE PATTERN CMD... : CMD exits with CODE and says PATTERN on stderr
expect_fail() {
	local code=$1 pat=$2; shift 2
	"$@" >"$TMPD/out" 2>"$TMPD/err"; local rc=$?
	[ $rc -eq "$code" ] || { cat "$TMPD/err"; fail "'$*' exited $rc, expected $code"; }
	grep -q -- "$pat" "$TMPD/err" || { cat "$TMPD/err"; fail "'$*' did not say '$pat'"; }
}

# 1. no such process (pid_max is at most 2^22)
expect_fail 1 "no process with pid 4999999" "$MEMTRACE" gc -p 4999999 --duration 1
expect_fail 1 "no process with pid 4999999" "$MEMTRACE" doctor -p 4999999
# 2. not a JVM
sleep 60 & notjvm=$!
expect_fail 1 "is not a HotSpot JVM" "$MEMTRACE" gc -p $notjvm --duration 1
expect_fail 1 "is not a HotSpot JVM" "$MEMTRACE" doctor -p $notjvm
kill $notjvm
# pid 1 (init, or a sandbox's supervisor whose map even root may not read)
# and a kernel thread are not JVMs, whatever the privileges
expect_fail 1 "process 1 .*not a .*JVM" "$MEMTRACE" alloc -p 1 --duration 1
kthread=$(python3 -c '
import os
for d in sorted(os.listdir("/proc"), key=lambda x: int(x) if x.isdigit() else 0):
    if d.isdigit():
        try:
            st = open("/proc/%s/stat" % d).read()
        except OSError:
            continue
        if int(st[st.rindex(")") + 2:].split()[6]) & 0x200000:
            print(d); break')
if [ -n "$kthread" ]; then
	expect_fail 1 "is a kernel thread, not a JVM" "$MEMTRACE" gc -p "$kthread" --duration 1
else
	note "no kernel thread visible in this pid namespace: that check skipped"
fi
# 3. malformed arguments: usage errors exit 2
expect_fail 2 "invalid pid 'abc'" "$MEMTRACE" gc -p abc
expect_fail 2 "invalid --duration" "$MEMTRACE" gc -p 1 --duration soon
expect_fail 2 "unknown command 'frobnicate'" "$MEMTRACE" frobnicate
expect_fail 2 "gc needs -p PID" "$MEMTRACE" gc

jvm_start w GcWorkload --go "$TMPD/go" --alloc-mb 64 --full 1 --exit-after 2
# 4. no privileges: an unprivileged user is told what is missing
expect_fail 1 "needs root, or the capabilities CAP_BPF and CAP_PERFMON" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$MEMTRACE" gc -p "$JVM_PID" --duration 1
# 5. a JVM that exits mid-trace: summary, exit 0
"$MEMTRACE" gc -p "$JVM_PID" --json >"$TMPD/gc.json" 2>"$TMPD/gc.err" &
mt=$!
wait_for_line "$TMPD/gc.json" '"start"' 20 || fail "gc did not start"
touch "$TMPD/go"
wait "$mt"; rc=$?
[ $rc -eq 0 ] || { cat "$TMPD/gc.err"; fail "gc exited $rc when the JVM exited"; }
assert_eq "$(json_get "$TMPD/gc.json" '[r for r in recs if r["event"] == "summary"][0]["jvm_exited"]')" True "summary says the JVM exited"
n=$(json_get "$TMPD/gc.json" 'len([r for r in recs if r["event"] == "gc"])')
[ "$n" -ge 1 ] || fail "no collection seen before the JVM exited"

# 6. a JVM without USDT probes (its libjvm copied without .note.stapsdt)
jdk_copy "$JAVA_HOME" "$TMPD/jdk" nousdt || fail "cannot make the JDK copy"
"$TMPD/jdk/bin/java" -cp "$CLASSES" GcWorkload --go "$TMPD/never" >"$TMPD/nousdt.out" 2>&1 &
nousdt=$!
JVM_PIDS+=("$nousdt")
wait_for_line "$TMPD/nousdt.out" READY 30 || fail "the probe-less JVM did not start"
expect_fail 1 "has no hotspot USDT probes for GC" "$MEMTRACE" gc -p $nousdt --duration 1
grep -q "jstat -gc $nousdt" "$TMPD/err" || fail "gc did not say what to use instead"
"$MEMTRACE" doctor -p $nousdt >"$TMPD/doc.txt" || fail "doctor failed on a probe-less JVM"
assert_contains "$TMPD/doc.txt" "NO .*hotspot USDT probes (0)"
"$MEMTRACE" doctor -p $nousdt --json >"$TMPD/doc.json"
assert_eq "$(json_get "$TMPD/doc.json" 'recs[0]["gc_source"]')" none "doctor gc_source"
rm -rf "$TMPD/jdk"
