#!/usr/bin/env bash
# alloc_budget - `memtrace alloc` under its cost budget (probe/dutycycle.h):
# two sessions at once on one AllocShares JVM (byte shares 50/30/20 by
# construction, ThreadMXBean's count of the allocating thread as the total):
#  - thin: every sample kept with probability 0.1 (bpf_get_prandom_u32 in the
#    program, weights x10; fixed through MEMTRACE_TEST_DUTY): total within
#    5 %, shares within 3 points;
#  - budget: --budget 0.3 (% of the busiest thread), memtrace's own choice: it
#    thins exactly when taking every sample would cost more (as it measured),
#    attaches its probes in time windows when the trap alone is over the
#    budget (the default), and its estimates hold likewise: the total is the
#    JVM's own per-thread counters' (counted_total: within 1 % of
#    ThreadMXBean, measured 1.0000), the shares within 4 of their standard
#    errors.
# A second JVM: the same workload next to a thread that trickles 1 MB/s of
# its own class (tests/java/AllocShares.java --trickle), JFR recording every
# TLAB refill (jdk.ObjectAllocationInNewTLAB). Under a 2 % budget each thread
# has its own keep: the hot thread is thinned, the trickle is not (the only
# thinned thread: before, one keep - the busiest thread's - thinned every
# thread alike, and a slow thread was left a handful of heavy samples). The
# Trickle class's bytes must be its objects x their size (a class histogram's
# bytes / instances of the one kept live) within 2 %: a sample stands for
# the bytes its thread used since its previous one (Thread::_allocated_bytes),
# not for its new TLAB's size - the sum of the TLAB sizes, JFR's figure,
# counts TLABs that GCs retire half used in full: x1.4 here (small TLABs, a
# GC every ~20 ms); memtrace read that too before.
# The choice of keep from a budget is unit-tested in
# tests/unit/test_dutycycle.c; the throughput side in bench/alloc_overhead.sh;
# longer windowed runs in bench/alloc_budget.sh.
# ALONE: memtrace measures its own cost per sample and keeps to its budget
# TIMEOUT: 150
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m AllocShares --go "$TMPD/go" --mb 12288
MEMTRACE_TEST_DUTY=0.1:1 "$MEMTRACE" alloc -p "$JVM_PID" --json >"$TMPD/thin.json" 2>"$TMPD/thin.err" &
m1=$!
"$MEMTRACE" alloc -p "$JVM_PID" --json --budget 0.3 >"$TMPD/bud.json" 2>"$TMPD/bud.err" &
m3=$!
for f in thin bud; do
	wait_for_line "$TMPD/$f.json" '"start"' 20 || { cat "$TMPD/$f.err"; fail "alloc did not start ($f)"; }
done
sleep 1
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 120 || fail "workload did not finish"
kill -INT $m1 $m3
for m in $m1 $m3; do wait $m || fail "alloc exited non-zero"; done
python3 "$ROOT/tests/e2e/alloc_check.py" thin "$TMPD/thin.json" "$TMPD/w.out" || fail "thinned estimates"
python3 "$ROOT/tests/e2e/alloc_check.py" budget "$TMPD/bud.json" "$TMPD/w.out" || fail "budget estimates"
"$MEMTRACE" alloc -p "$JVM_PID" --budget 101 >/dev/null 2>"$TMPD/bad.err" && fail "--budget 101 accepted"
grep -q "invalid --budget" "$TMPD/bad.err" || fail "no clear error for --budget 101"

# a slow thread next to a hot one: each its own keep
jvm_stop "$JVM_PID"
rm -f "$TMPD/go"
jvm_start t -Xmx256m -XX:StartFlightRecording=name=mt,settings=none,+jdk.ObjectAllocationInNewTLAB#enabled=true \
	AllocShares --go "$TMPD/go" --mb 12288 --trickle 1
"$MEMTRACE" alloc -p "$JVM_PID" --json --budget 2 >"$TMPD/tr.json" 2>"$TMPD/tr.err" &
m=$!
wait_for_line "$TMPD/tr.json" '"start"' 20 || { cat "$TMPD/tr.err"; fail "alloc did not start (trickle)"; }
sleep 1
touch "$TMPD/go"
wait_for_line "$TMPD/t.out" DONE 120 || fail "workload did not finish (trickle)"
kill -INT $m; wait $m || fail "alloc exited non-zero (trickle)"
jtool jcmd "$JVM_PID" JFR.dump name=mt filename="$TMPD/t.jfr" >/dev/null || fail "JFR.dump"
jtool jcmd "$JVM_PID" GC.class_histogram >"$TMPD/t.histo" || fail "class histogram"
jtool jfr print --json --events jdk.ObjectAllocationInNewTLAB "$TMPD/t.jfr" >"$TMPD/t.jfr.json" ||
	fail "jfr print"
python3 - "$TMPD/tr.json" "$TMPD/t.jfr.json" "$TMPD/t.out" "$TMPD/t.histo" <<'PY' || fail "per-thread keep"
import json, sys
final = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
dc = final["duty_cycle"]
mine = {c["class"]: c for c in final["classes"]}.get("AllocShares$Trickle", {}).get("bytes", 0)
refills = tlab = 0
for e in json.load(open(sys.argv[2]))["recording"]["events"]:
    v = e["values"]
    if (v.get("objectClass") or {}).get("name") == "AllocShares$Trickle":
        refills += 1
        tlab += v["tlabSize"]
_, tmx, _, objs = next(l.split() for l in open(sys.argv[3]) if l.startswith("trickle_bytes"))
tmx, objs = int(tmx), int(objs)
h = next(l.split() for l in open(sys.argv[4]) if l.rstrip().endswith(" AllocShares$Trickle"))
truth = objs * (int(h[2]) // int(h[1]))
print(f"kept {dc['kept_share']:.3f} of the samples, threads thinned at most {dc['threads_thinned']}; "
      f"Trickle: memtrace {mine} B, {objs} objects x {int(h[2]) // int(h[1])} B = {truth} B "
      f"(x{mine / truth:.4f}); JFR's {refills} refills' TLAB sizes {tlab} B (x{tlab / truth:.2f}); "
      f"ThreadMXBean's bytes of the thread {tmx} B")
ok = dc["kept_share"] < 0.999 and dc["threads_thinned"] == 1
if not ok:
    print("  not one thread thinned while samples were dropped")
if refills < 100 or abs(mine - truth) > 0.02 * truth:
    print("  the trickle's bytes differ from its objects' by more than 2 %"); ok = False
sys.exit(0 if ok else 1)
PY
