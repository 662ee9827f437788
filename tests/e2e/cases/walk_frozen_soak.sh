#!/usr/bin/env bash
# walk_frozen_soak - frozen heap walks of a JVM that allocates flat out and
# writes into its old objects (FreezeWorkload: 100 k FwEntry, each with a
# long[2]; two mutator threads), one after another:
#  - every answer is exact: histo counts 100000 FwEntry, as many long[2], and
#    the one FwEntry[]; a query reaches every entry from the array;
#  - every walk (three histos, then a query) was frozen (the JVM's pause is
#    the fork) and followed a GC (memtrace saw the eden filling: the copy
#    shares no young generation);
#  - memory is watched: the JVM's resident memory never grows by more than
#    its heap while copies live (sampled every 50 ms), and nothing outlives
#    a walk (no child of the JVM, no zombie); the JVM lives on, its fds 0-2
#    are the same files and its stdin still reads.
# ALONE: RSS sampled every 50 ms while walks race two mutators
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

N=100000
# its stdin stays open (the workload reads commands from it) while this case runs
mkfifo "$TMPD/in"
exec 3<>"$TMPD/in"
"$JAVA" -cp "$CLASSES" -XX:+UseG1GC -Xms256m -Xmx256m FreezeWorkload "$N" 2 <"$TMPD/in" >"$TMPD/fw.out" 2>&1 &
JVM_PID=$!
JVM_PIDS+=("$JVM_PID")
wait_for_line "$TMPD/fw.out" READY 60 || { cat "$TMPD/fw.out"; fail "the workload did not start"; }
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$JVM_PID/status"; }
rss0=$(rss)
fds() { for f in 0 1 2; do readlink "/proc/$JVM_PID/fd/$f"; done; }
fds0=$(fds)
# the watcher: peak RSS and any child of the JVM, every 50 ms
# (stopped by a file, not a signal: a kill could land between the
# truncation and the write of its file, which then read empty)
( peak=0; while kill -0 "$JVM_PID" 2>/dev/null && [ ! -e "$TMPD/stop" ]; do
	r=$(rss 2>/dev/null || echo 0); [ "${r:-0}" -gt "$peak" ] && peak=$r && echo "$peak" >"$TMPD/peak"
	sleep 0.05; done ) &
watcher=$!

for i in 1 2 3; do
	"$MEMTRACE" --json histo -p "$JVM_PID" >"$TMPD/h$i.json" 2>"$TMPD/h$i.err" || { cat "$TMPD/h$i.err"; fail "histo $i"; }
	grep -q "frozen: fork .* after [0-9.]* [mu]*s for a GC" "$TMPD/h$i.err" ||
		{ cat "$TMPD/h$i.err"; fail "histo $i: not frozen after a GC"; }
	got=$(json_get "$TMPD/h$i.json" '[(r["class"], r["instances"]) for r in recs if r.get("class") in ("FreezeWorkload$FwEntry", "FreezeWorkload$FwEntry[]")]')
	assert_eq "$got" "[('FreezeWorkload\$FwEntry', $N), ('FreezeWorkload\$FwEntry[]', 1)]" "histo $i"
	python3 - "$TMPD/h$i.json" "$N" <<'PY' || fail "histo $i: fewer long[] than entries"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert [r["instances"] for r in rows if r.get("class") == "long[]"][0] >= int(sys.argv[2])
PY
	copies_gone "$JVM_PID" || fail "histo $i: a copy outlived the walk"
done
"$MEMTRACE" query -p "$JVM_PID" -e "set_type s:
    roots <- objects.filter([it | it.length = $N])
    membership <- THIS in Unassigned and REFERRER in ENTITY and ref_kind = array_element
    on_inclusion <- [ n <- n + 1 ]
    n : int <- 0
instances_for s have_names = \"entries\"" >"$TMPD/q.json" 2>"$TMPD/q.err" || { cat "$TMPD/q.err"; fail "query"; }
grep -q "frozen: fork" "$TMPD/q.err" || { cat "$TMPD/q.err"; fail "query not frozen"; }
assert_eq "$(cat "$TMPD/q.json")" "{\"s\":{\"entries\":{\"n\":$((N + 1))}}}" "the array and the entries it reaches"
touch "$TMPD/stop"; wait "$watcher" 2>/dev/null
# the JVM's own fds are untouched: its stdin still reads (an agent bug once
# closed fd 0 of the JVM: the workload's next read failed with EBADF)
assert_eq "$(fds)" "$fds0" "the JVM's fds 0-2"
echo "dump 3" >&3
wait_for_line "$TMPD/fw.out" END 10 || { cat "$TMPD/fw.out"; fail "the workload no longer reads its stdin"; }
note "JVM RSS: $((rss0 / 1024)) MiB at the start, peak $(( $(cat "$TMPD/peak") / 1024 )) MiB (heap 256 MiB)"
[ "$(cat "$TMPD/peak")" -le $((rss0 + 256 * 1024)) ] || fail "the JVM's memory grew by more than its heap"
kill -0 "$JVM_PID" || fail "the JVM died"
[ -z "$(ps -eo stat=,ppid= | awk -v p="$JVM_PID" '$1 ~ /Z/ && $2 == p')" ] || fail "a zombie"
