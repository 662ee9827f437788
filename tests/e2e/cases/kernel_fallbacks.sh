#!/usr/bin/env bash
# kernel_fallbacks - the kernel's BPF features memtrace stands on
# (probe/kfeatures.h), as doctor lists them, and the fallback for a kernel
# before 6.6 forced on this one: MEMTRACE_NO_UPROBE_MULTI=1 hides
# uprobe_multi links (doctor says so), and `memtrace alloc` under its default
# budget then opens its windows with perf-event uprobes: it runs, exits 0 and
# its estimates still hold against the workload's own counts
# (tests/e2e/alloc_check.py budget, as alloc_budget checks the default path).
# Then a kernel that lacks a feature a command needs, forced with
# MEMTRACE_HIDE_BPF: alloc and record refuse without bpf_loop, gc without
# cookies or ring buffers, each naming the feature and its Linux version; gc
# runs without bpf_loop; doctor says what is hidden. And a verifier that
# refuses a program (MEMTRACE_TEST_VERIFIER=refuse: gc's first program reads
# through a plain number): gc exits 1 naming the program and the verifier's
# own reason, not "Permission denied" nor privileges (stop 54's kernel refused
# a stack its predecessor took, with EACCES); the JVM lives on.
# ALONE: memtrace measures its own cost per sample and keeps to its budget
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m AllocShares --go "$TMPD/go" --mb 6144
"$MEMTRACE" doctor -p "$JVM_PID" --json >"$TMPD/d.json" || fail "doctor failed"
MEMTRACE_NO_UPROBE_MULTI=1 "$MEMTRACE" doctor -p "$JVM_PID" --json >"$TMPD/dh.json" || fail "doctor failed"
MEMTRACE_NO_UPROBE_MULTI=1 "$MEMTRACE" doctor -p "$JVM_PID" >"$TMPD/dh.txt" || fail "doctor failed"
k="recs[0]['kernel']"
for f in ringbuf attach_cookie bpf_loop uprobe_multi; do
	assert_eq "$(json_get "$TMPD/d.json" "$k['$f']")" True "doctor: $f on $(uname -r)"
done
assert_eq "$(json_get "$TMPD/dh.json" "$k['uprobe_multi']")" False "uprobe_multi hidden"
assert_eq "$(json_get "$TMPD/dh.json" "$k['uprobe_multi_hidden']")" True "uprobe_multi_hidden"
assert_contains "$TMPD/dh.txt" "hidden by MEMTRACE_NO_UPROBE_MULTI"
note "doctor: $(json_get "$TMPD/d.json" "$k")"

MEMTRACE_NO_UPROBE_MULTI=1 "$MEMTRACE" alloc -p "$JVM_PID" --json >"$TMPD/a.json" 2>"$TMPD/a.err" &
m=$!
wait_for_line "$TMPD/a.json" '"start"' 20 || { cat "$TMPD/a.err"; fail "alloc did not start"; }
sleep 1
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 100 || fail "workload did not finish"
kill -INT $m
wait $m || { cat "$TMPD/a.err"; fail "alloc exited non-zero with uprobe_multi hidden"; }
python3 "$ROOT/tests/e2e/alloc_check.py" budget "$TMPD/a.json" "$TMPD/w.out" 2>&1 | tee "$TMPD/check.txt" >&2 ||
	fail "estimates with perf-event uprobe windows"
note "alloc with perf-event uprobes: $(json_get "$TMPD/a.json" "recs[-1].get('duty_cycle')")"

# the refusal an older kernel gets, forced here (MEMTRACE_HIDE_BPF): a command
# whose programs need a missing feature exits 1 naming it and its kernel
# version, before any probe is attached; doctor says it is hidden
refused() { # FEATURE WANT CMD...: the command fails, naming WANT
	local feat=$1 want=$2
	shift 2
	MEMTRACE_HIDE_BPF=$feat "$MEMTRACE" "$@" >"$TMPD/r.out" 2>"$TMPD/r.err" &&
		fail "$* ran with $feat hidden"
	grep -q "lacks $want" "$TMPD/r.err" || { cat "$TMPD/r.err"; fail "$*: the refusal does not name $want"; }
}
refused loop "bpf_loop (Linux 5.17" alloc -p "$JVM_PID" --duration 1
refused loop "bpf_loop (Linux 5.17" record -p "$JVM_PID" -o "$TMPD/r.mtr" --duration 1
refused cookie "bpf_get_attach_cookie (Linux 5.15" gc -p "$JVM_PID" --duration 1
refused ringbuf "BPF ring buffers (Linux 5.8" gc -p "$JVM_PID" --duration 1
note "refused: $(head -1 "$TMPD/r.err" | cut -c1-160)"
MEMTRACE_HIDE_BPF=loop "$MEMTRACE" doctor -p "$JVM_PID" >"$TMPD/dl.txt" || fail "doctor failed"
assert_contains "$TMPD/dl.txt" "bpf_loop (5.17): the Java stack walker cannot load"
assert_contains "$TMPD/dl.txt" "hidden by MEMTRACE_HIDE_BPF"
# gc needs no bpf_loop: it runs with it hidden
MEMTRACE_HIDE_BPF=loop "$MEMTRACE" gc -p "$JVM_PID" --duration 1 >"$TMPD/g.out" 2>"$TMPD/g.err" || {
	cat "$TMPD/g.err"; fail "gc refused with only bpf_loop hidden"; }
# a verifier's refusal is named as one, with its reason
MEMTRACE_TEST_VERIFIER=refuse "$MEMTRACE" gc -p "$JVM_PID" --duration 1 >"$TMPD/v.out" 2>"$TMPD/v.err" &&
	fail "gc ran with a program the verifier refuses"
assert_contains "$TMPD/v.err" "verifier refused program 'handle_gc_begin': R0 invalid mem access 'scalar'"
grep -q "Permission denied\|run as root" "$TMPD/v.err" && { cat "$TMPD/v.err"; fail "a refusal told as a privilege"; }
note "verifier: $(head -1 "$TMPD/v.err" | cut -c1-160)"
kill -0 "$JVM_PID" || fail "the JVM died"
