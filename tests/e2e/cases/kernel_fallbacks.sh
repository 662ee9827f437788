#!/usr/bin/env bash
# kernel_fallbacks - the kernel's BPF features memtrace stands on
# (probe/kfeatures.h), as doctor lists them, and the fallback for a kernel
# before 6.6 forced on this one: MEMTRACE_NO_UPROBE_MULTI=1 hides
# uprobe_multi links (doctor says so), and `memtrace alloc` under its default
# budget then opens its windows with perf-event uprobes: it runs, exits 0 and
# its estimates still hold against the workload's own counts
# (tests/e2e/alloc_check.py budget, as alloc_budget checks the default path).
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
