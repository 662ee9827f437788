#!/usr/bin/env bash
# walk_zgc - heap snapshots of a ZGC JVM are taken in a frozen copy (#33 goal
# 2): ZGC's heap is a shared memfd, so in the pause the copy copies the used
# pages into a file of its own and maps it over every heap view before the
# JVM goes on; its mark decodes coloured pointers (JDK 17's multi-mapped
# colours, JDK 25's generational "zpointers") and follows ZGC's forwarding
# tables to objects a relocation moved; a pause that finds pages still being
# relocated is refused by the agent and memtrace asks again.
# FreezeWorkload keeps 200 000 FwEntry (each with a long[2]) and 384 MiB of
# byte[] while a thread churns FwChurn objects into the entries, so ZGC
# relocates all the time (a quarter of each 4 ms, DUTY 25: flat out it and
# ZGC's threads took two CPUs, the case 117 s a JDK beside the other JDK's
# against 67, and every snapshot still followed a forwarding entry).
# Checked:
#  - the copy's pause grows with the used heap (copied at ~3.3 GB/s): without
#    --max-pause memtrace bounds the copy to what 100 ms allows (~320 MiB),
#    the agent measures the used heap at a cycle's end; a `snapshot` (it
#    saves strings, so it needs every primitive array's elements) finds
#    >= 384 MiB and is refused before any pause, saying the used heap and
#    the estimate, and the JVM is not paused (no HeapWalkOperation in its
#    -Xlog:safepoint); doctor says --max-pause may be needed;
#  - a `histo` without --max-pause (the churn held, its garbage collected:
#    the heap's garbage is not what this checks) reads no strings: the byte[]s' elements
#    (in ZGC's medium pages) are left out of the copy (all but each one's
#    first and last 4 KiB page: >= 1536 x 252 KiB), so it
#    fits the bound, and it counts every byte[] (1536 of 256 KiB) with its
#    size all the same;
#  - each of 4 `histo --max-pause 5000` is frozen ("the used heap (...) copied in ...") and
#    counts what the program holds by construction (200 000 FwEntry, one
#    FwEntry[], >= 200 000 long[]), with references resolved through a
#    forwarding entry in at least one of them;
#  - a copy slower than memtrace assumed (told 100 GB/s) is cut by the agent
#    at its deadline (3 x the bound; 20 ms here): no snapshot, the JVM goes on,
#    memtrace asks again at the speed seen and is refused before a pause;
#  - `selftest-walks`: the copy's mark against HotSpot's own JVMTI walk of
#    the same frozen image, object by object (same class and size for every
#    object both found; JVMTI finds nothing the mark does not, but weak
#    referents);
#  - the JVM's heap is as the program built it afterwards (its own check of
#    every entry), no copy is left, the JVM lives on.
# Pauses (ours and a walk in a pause) are notes; bench/freeze.sh (FREEZE_BENCH_GC=Z) sets them
# beside jmap -histo:live's.
# TIMEOUT: 240
. "$ROOT/tests/e2e/lib.sh"

"$JAVA" -XX:+UseZGC -version >/dev/null 2>&1 || skip "JDK $JDK has no ZGC"
N=200000
mkfifo "$TMPD/in"
exec 3<>"$TMPD/in"
"$JAVA" -cp "$CLASSES" -XX:+UseZGC -Xmx1g -Xlog:safepoint:file="$TMPD/sp.log" \
	FreezeWorkload "$N" 1 384 25 <"$TMPD/in" >"$TMPD/fw.out" 2>&1 &
JVM_PID=$!
JVM_PIDS+=("$JVM_PID")
wait_for_line "$TMPD/fw.out" READY 60 || { cat "$TMPD/fw.out"; fail "the workload did not start"; }
pid=$JVM_PID
sleep 1
walks() { grep -c '"HeapWalkOperation"' "$TMPD/sp.log" || true; }
n0=$(walks)
"$MEMTRACE" snapshot -p "$pid" -o "$TMPD/r.snap" >/dev/null 2>"$TMPD/r.err" && { cat "$TMPD/r.err"; fail "snapshot without --max-pause paused the JVM"; }
grep -q "a frozen heap snapshot would stop it for about .* (no frozen copy: ZGC's used heap was [0-9]* MiB .*, over the [0-9]* MiB its copy may take in the pause); over 100 ms, so memtrace did not pause it" "$TMPD/r.err" ||
	{ cat "$TMPD/r.err"; fail "no estimate in the refusal"; }
sleep 0.5
[ "$(walks)" -eq "$n0" ] || fail "the refused snapshot ran a heap walk"
note "refused: $(grep -o 'would stop it for about [^;]*' "$TMPD/r.err")"
# the churn held and its garbage collected for this one: flat out on a busy
# 2-core VM, ZGC's cycles' ends left 220-340 MiB of it in the pause, a coin
# flip against the ~318 MiB the default bound allows (what is checked here
# is the byte[]s' elements left out; memtrace's refusal of a heap over the
# bound is checked above)
echo hold >&3
wait_for_line "$TMPD/fw.out" HELD 10 || fail "the churn was not held"
jtool jcmd "$pid" GC.run >/dev/null || fail "jcmd GC.run"
# JDK 17 maps each of the copy's ~1600 chunks three times: with the other
# e2e runs on both cores that took 100-350 ms of the pause where 35 MiB says
# ~25, and the agent cuts a copy at 300 ms (3 x the bound): up to 3 tries
tries=0
until "$MEMTRACE" histo -p "$pid" --json >"$TMPD/b.json" 2>"$TMPD/b.err"; do
	tries=$((tries + 1))
	grep -q "the agent stopped it at 3 times the bound" "$TMPD/b.err" && [ $tries -lt 3 ] ||
		{ cat "$TMPD/b.err"; fail "histo without --max-pause"; }
	sleep 1
done
[ $tries -eq 0 ] || note "the histo without --max-pause: $tries copies cut at 3 x the bound before it"
echo go >&3
wait_for_line "$TMPD/fw.out" GOING 10 || fail "the churn did not go on"
python3 - "$TMPD/b.json" <<'PY' || { cat "$TMPD/b.err"; fail "histo without the byte[]s' elements"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
c = {r["class"]: r for r in rows if "class" in r}
tot = [r for r in rows if r.get("event") == "histo_total"][0]
b = c.get("byte[]", {"instances": 0, "bytes": 0})
print("  byte[] %d (%d B), copied %d MiB, left out %d MiB, pause %.1f ms" % (b["instances"],
      b["bytes"], tot["heap_copy_bytes"] >> 20, tot["heap_skip_bytes"] >> 20, tot["pause_ms"]),
      file=sys.stderr)
assert tot["walk_mode"] == "frozen" and not tot["partial"], tot
# by construction: each byte[262144] (262160 bytes, at ZGC's 4 KiB medium
# alignment) leaves out all but its first and its last 4 KiB page
assert tot["heap_skip_bytes"] >= 1536 * (262144 - 4096), tot
assert b["instances"] >= 1536 and b["bytes"] >= 1536 * 262160, b
PY
"$MEMTRACE" --json doctor -p "$pid" >"$TMPD/d.json" || fail "doctor"
json_get "$TMPD/d.json" 'recs[0]["collector"].startswith("ZGC") and recs[0]["heap_walk"] == "frozen" and recs[0]["heap_walk_needs_max_pause"] and recs[0]["heap_walk_copy_ns"] > 100e6' |
	grep -q True || { cat "$TMPD/d.json"; fail "doctor's collector, walk and estimate"; }
moved=0 pauses="" copies="" retried=0
for i in 1 2 3 4; do
	"$MEMTRACE" histo -p "$pid" --json --max-pause 5000 >"$TMPD/h.json" 2>"$TMPD/h.err" || {
		cat "$TMPD/h.err"; fail "histo $i failed"; }
	grep -q "frozen: fork .*, the used heap (.*) copied in .*; the copy marked" "$TMPD/h.err" ||
		{ cat "$TMPD/h.err"; fail "histo $i: not frozen"; }
	grep -q "asking again" "$TMPD/h.err" && retried=$((retried + 1))
	python3 - "$TMPD/h.json" $N <<'PY' || { cat "$TMPD/h.err"; fail "histo $i: counts differ from the program's"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
n = int(sys.argv[2])
c = {r["class"]: r["instances"] for r in rows if "class" in r}
tot = [r for r in rows if r.get("event") == "histo_total"][0]
ok = (c.get("FreezeWorkload$FwEntry") == n and c.get("FreezeWorkload$FwEntry[]") == 1
      and c.get("long[]", 0) >= n and tot["partial"] is False and tot["walk_mode"] == "frozen"
      and tot["heap_copy_bytes"] > 0)
if not ok:
    print("  FwEntry %s, FwEntry[] %s, long[] %s, %s" % (c.get("FreezeWorkload$FwEntry"),
          c.get("FreezeWorkload$FwEntry[]"), c.get("long[]"), tot), file=sys.stderr)
print(tot["forwarded_refs"], "%.1f" % tot["pause_ms"], "%d MiB in %.1f ms" % (tot["heap_copy_bytes"] >> 20, tot["heap_copy_ms"]))
sys.exit(0 if ok else 1)
PY
	read -r f p c < <(python3 - "$TMPD/h.json" <<'PY'
import json, sys
t = [json.loads(l) for l in open(sys.argv[1]) if '"histo_total"' in l][0]
print(t["forwarded_refs"], "%.1f" % t["pause_ms"], "%dMiB/%.0fms" % (t["heap_copy_bytes"] >> 20, t["heap_copy_ms"]))
PY
)
	pauses+="$p ms, "
	copies+="$c, "
	[ "$f" -gt 0 ] && moved=$((moved + 1))
done
note "4 frozen snapshots, $moved with references resolved through ZGC's forwarding tables, $retried asked again (relocating); pauses: $pauses heap copies: $copies"
[ $moved -ge 1 ] || fail "no snapshot followed a forwarding entry (the forwarding is untested)"

# the bound is a promise the agent keeps: told a copy speed far above the
# real one (the tests' MEMTRACE_ZGC_COPY_NS_PER_MIB, 100 GB/s), memtrace lets
# a snapshot's copy (the byte[]s' elements too: ~700 MiB, 80-130 ms at this
# VM's best) into the pause, and the agent cuts it at its deadline (3 x the
# bound; here the tests' MEMTRACE_ZGC_CUT_MS, 20 ms after the planning began,
# which no copy of this heap makes): the JVM goes on, memtrace learns the
# speed seen (when the fork left time to copy any) and asks once more, and
# the snapshot is refused, before that pause or at its cut
n0=$(walks)
MEMTRACE_ZGC_COPY_NS_PER_MIB=10000 MEMTRACE_ZGC_CUT_MS=20 "$MEMTRACE" --walk frozen snapshot -p "$pid" \
	-o "$TMPD/c.snap" >/dev/null 2>"$TMPD/c.err" && { cat "$TMPD/c.err"; fail "a copy past its deadline made a snapshot"; }
grep -q "the agent stopped it at 3 times the bound and the JVM went on (no frozen copy: ZGC's copy of [0-9]* MiB cut at 20 ms (JVM's half: [0-9]*/[0-9]* MiB" "$TMPD/c.err" ||
	{ cat "$TMPD/c.err"; fail "the copy was not cut at the deadline"; }
grep -q "JVM's half: 0/" "$TMPD/c.err" || grep -q "asking again with the speed seen" "$TMPD/c.err" ||
	{ cat "$TMPD/c.err"; fail "memtrace did not ask again at the speed seen"; }
[ ! -e "$TMPD/c.snap" ] || fail "a cut copy left a snapshot file"
sleep 0.5
n1=$(walks)
# an attempt refused in its pause because the used heap had grown past what
# the copy may take at the speed seen is asked again after another cycle,
# twice at most (snaptake.c's ZGC_BIG_TRIES 3, said once): up to two pauses
# more (seen once in CI: 723 MiB used against 719 allowed, three pauses)
more=0
grep -q "asking again after another cycle" "$TMPD/c.err" && more=2
[ $((n1 - n0)) -ge 1 ] && [ $((n1 - n0)) -le $((2 + more)) ] ||
	fail "$((n1 - n0)) pauses for a cut copy and its retry (up to $more more for a used heap over the bound)"
note "copies cut at 20 ms: $(grep -o "ZGC's copy of [^)]*)" "$TMPD/c.err" | tr '\n' ' '); the JVM's pauses: $(grep '"HeapWalkOperation"' "$TMPD/sp.log" | tail -n $((n1 - n0)) | grep -o 'Total: [0-9]*' | awk '{printf "%.1f ms ", $2 / 1e6}')"

"$MEMTRACE" selftest-walks -p "$pid" --max-pause 5000 >"$TMPD/sw.json" 2>"$TMPD/sw.err" ||
	{ cat "$TMPD/sw.err"; tail -20 "$TMPD/sw.json"; fail "the mark and JVMTI's walk disagree"; }
python3 - "$TMPD/sw.json" <<'PY' || fail "selftest-walks"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
w = [r for r in rows if r.get("event") == "walks"][0]
print("  walks: %s" % w, file=sys.stderr)
assert w["class_differs"] == 0 and w["size_differs"] == 0, w
assert w["both"] == w["jvmti"] - w["jvmti_only"] and w["both"] == w["mark"] - w["mark_only"], w
assert w["jvmti_only"] == w["jvmti_only_weak"], w
assert w["both"] >= 600000, w
PY


"$MEMTRACE" --walk paused histo -p "$pid" --max-pause 20000 --top 1 >/dev/null 2>"$TMPD/p.err" || {
	cat "$TMPD/p.err"; fail "the walk in a pause failed"; }
note "in a pause: $(grep -o 'heap walk paused JVM [0-9]* for [0-9.]* [mu]\?s' "$TMPD/p.err")"
echo check >&3
wait_for_line "$TMPD/fw.out" "^CHECK" 30 || { cat "$TMPD/fw.out"; fail "the workload did not check its heap"; }
grep -q "^CHECK ok $N 0" "$TMPD/fw.out" || { grep CHECK "$TMPD/fw.out"; fail "the JVM's heap changed under the snapshots"; }
copies_gone "$pid" || fail "a copy outlived the walks"
kill -0 "$pid" || fail "the JVM died"
jvm_stop "$pid"
