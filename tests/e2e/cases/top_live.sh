#!/usr/bin/env bash
# top_live - the live view: under tmux, the full-screen panels show
# collections and the top allocating classes and they update; the keys 1, 2,
# 3 and tab switch to the collections, allocation and age panels; with
# --stacks the overview and the allocation panel list paths through
# DemoWorkload; q quits.
# Plain mode (not a terminal) prints periodic JSON lines whose allocation
# rate and collection counts are non-zero for a busy JVM, and whose causes
# add up to the interval's collections.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"
command -v tmux >/dev/null || skip "tmux is not installed"

jvm_start w -Xmx256m DemoWorkload 60
sess="mt-top-$$-$JDK"
tmux new-session -d -s "$sess" -x 120 -y 40 "$MEMTRACE -p $JVM_PID --interval 1 --stacks; echo EXITED; sleep 30"
# the first panels: up to 20 s (the session's start - attach, BPF, the first
# interval - took 8 s beside other sessions' builds at load 13)
for i in $(seq 100); do
	sleep 0.2
	tmux capture-pane -t "$sess" -p >"$TMPD/p1"
	grep -q "COLLECTIONS" "$TMPD/p1" && grep -q "long\[\]" "$TMPD/p1" && break
done
sleep 2.5
tmux capture-pane -t "$sess" -p >"$TMPD/p2"
for pat in "COLLECTIONS" "ALLOCATION" "PATHS" "DemoWorkload" "young" "long\[\]"; do
	grep -q -- "$pat" "$TMPD/p2" || { cat "$TMPD/p2"; tmux kill-session -t "$sess"; fail "panel lacks '$pat'"; }
done
cmp -s "$TMPD/p1" "$TMPD/p2" && { tmux kill-session -t "$sess"; fail "the view did not update"; }
# panel KEY WANT NOTWANT: after KEY, the screen shows WANT and not NOTWANT.
panel() {
	local i
	tmux send-keys -t "$sess" "$1"
	for i in $(seq 20); do
		sleep 0.2
		tmux capture-pane -t "$sess" -p >"$TMPD/pk"
		grep -q -- "$2" "$TMPD/pk" && ! grep -q -- "$3" "$TMPD/pk" && return 0
	done
	cat "$TMPD/pk"; tmux kill-session -t "$sess"; fail "key '$1' did not show '$2' without '$3'"
}
panel 1 "pool (last collection)" "ALLOCATION"
panel 2 "ALLOCATION .*since start" "COLLECTIONS"
panel 2 "PATHS  Java stacks" "COLLECTIONS"      # --stacks: the paths below the classes
grep -q -- "DemoWorkload.* <- " "$TMPD/pk" || { cat "$TMPD/pk"; tmux kill-session -t "$sess"; fail "no path through DemoWorkload on panel 2"; }
panel 3 "age sampling is off: start the view with --age" "ALLOCATION"
panel Tab "COLLECTIONS" "pool (last collection)"   # tab after the last panel: the overview
panel Tab "pool (last collection)" "ALLOCATION"
panel 0 "ALLOCATION" "pool (last collection)"
tmux send-keys -t "$sess" q
for i in $(seq 50); do
	tmux capture-pane -t "$sess" -p >"$TMPD/p3"
	grep -q EXITED "$TMPD/p3" && break
	sleep 0.2
done
tmux kill-session -t "$sess"
grep -q EXITED "$TMPD/p3" || { cat "$TMPD/p3"; fail "q did not quit"; }

"$MEMTRACE" top -p "$JVM_PID" --interval 1 --duration 3.5 --json >"$TMPD/top.json" || fail "plain top failed"
n=$(json_get "$TMPD/top.json" 'len([r for r in recs if r["event"] == "top" and r["alloc_bytes_per_s"] > 0 and r["young"] > 0])')
[ "$n" -ge 2 ] || { cat "$TMPD/top.json"; fail "expected periodic records with allocation and collections"; }
# each interval's collections by cause (the cause uprobe): young ones of a busy G1 JVM
n=$(json_get "$TMPD/top.json" 'sum(r["causes"].get("G1 Evacuation Pause", 0) for r in recs if r["event"] == "top")')
[ "$n" -ge 1 ] || { cat "$TMPD/top.json"; fail "no G1 Evacuation Pause among the intervals' causes"; }
# the causes count each interval's collections once: the young and full ones
# all have a cause, pauses without a memory manager (JDK 17's remark) none
n=$(json_get "$TMPD/top.json" 'sum(1 for r in recs if r["event"] == "top" and not (r["young"] + r["full"] <= sum(r["causes"].values()) <= r["young"] + r["full"] + r["pauses"] + r["cycles"]))')
[ "$n" -eq 0 ] || { cat "$TMPD/top.json"; fail "$n interval(s) whose causes do not add up to their collections"; }
