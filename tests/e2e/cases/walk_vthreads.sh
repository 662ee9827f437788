#!/usr/bin/env bash
# walk_vthreads - heap snapshots of a JVM whose objects are held by parked
# virtual threads' stacks (JDK 21+; JDK 17 has none: skipped). VThreads parks
# N virtual threads D frames deep, each with a Held (and its HeldData) in a
# local of its deepest frame, every third in a synchronized block on a Locked
# only its frame holds, each after dropping 8 Dropped objects
# (-XX:-DoEscapeAnalysis: else C2 replaces those objects by their fields and
# the program's count is not N). Such a stack is in the heap, in a stack
# chunk, whose references only its frames' oop maps tell: the copy's mark has
# HotSpot's own iteration read them (heapmark.c, chunk_scan). Under G1,
# Parallel, Serial, ZGC and Shenandoah:
#  - `histo` is a frozen snapshot the copy marked, and counts Held, HeldData,
#    Locked as the program holds them (N, N, ceil(N/3)), no Dropped, and the
#    StackChunks' instances and bytes, all equal to `jmap -histo:live`'s on
#    the same JVM; under G1, Parallel and Serial again after a full GC (which
#    gives each chunk a bitmap of its references, another path in HotSpot's
#    iteration);
#  - selftest-walks: the mark and JVMTI's walk of one frozen image agree
#    (class and size of every object both found; nothing only JVMTI found but
#    weak referents; none of the program's objects only the mark found);
#  - without that iteration (MEMTRACE_TEST_FREEZE=nochunks, as a libjvm
#    without its symbols): G1's, Parallel's and Serial's copies walk with
#    JVMTI instead, saying why;
#    ZGC's and Shenandoah's `histo` exits 1 with the reason, and with
#    --max-pause walks in a pause; counts exact either way;
#  - G1 and Shenandoah: `leaks` names the list one more parked virtual thread
#    grows in a local ("grow": 10 Grown every 5 ms) as held by "a local
#    variable in virtual thread #T", T its Thread.getId() as the program
#    printed it, Grown growing in every interval; and the list a mounted
#    virtual thread grows ("mounted": pinned to its carrier by a pipe's read)
#    as held by a local of its own #T, not by a platform thread (JVMTI
#    reports it as an OTHER root, then its frames, then the carrier);
#    under Shenandoah also from JVMTI's walks in a pause (nochunks), which
#    report such locals when they visit the thread, after every other root,
#    each with its thread's tid;
#  - every collector: 200 virtual threads parking and waking at changing
#    depths ("churn": chunks frozen, thawed, replaced), three snapshots, each
#    marked.
# The JVM lives on.
# 81 s alone; in make check beside the other JDK's cases 188-226 s, with a
# busy loop on the other core 307 s (stop 56): room for a slower machine.
# TIMEOUT: 600
. "$ROOT/tests/e2e/lib.sh"

N=4000 D=24
L=$(( (N + 2) / 3 ))
want="$N $N $L 0"

counts() { # JSON: "Held HeldData Locked Dropped StackChunks StackChunkBytes"
	python3 - "$1" <<'PY'
import json, sys
c, b = {}, {}
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        if "class" in r:
            c[r["class"]] = r["instances"]
            b[r["class"]] = r["bytes"]
print(" ".join(str(c.get("VThreads$" + k, 0)) for k in ("Held", "HeldData", "Locked", "Dropped")),
      c.get("jdk.internal.vm.StackChunk", 0), b.get("jdk.internal.vm.StackChunk", 0))
PY
}
jmap_counts() { # PID
	jtool jmap -histo:live "$1" | awk '
		$4 == "VThreads$Held" { h = $2 } $4 == "VThreads$HeldData" { d = $2 }
		$4 == "VThreads$Locked" { l = $2 } $4 == "VThreads$Dropped" { x = $2 }
		$4 == "jdk.internal.vm.StackChunk" { c = $2; cb = $3 }
		END { printf "%d %d %d %d %d %d\n", h, d, l, x, c, cb }'
}
frozen_histo() { # GC TAG: a frozen histo the copy marked, its counts = the program's and jmap's
	"$MEMTRACE" --json histo -p "$JVM_PID" >"$TMPD/$2.json" 2>"$TMPD/$2.err" ||
		{ cat "$TMPD/$2.err"; fail "histo ($2)"; }
	grep -q "frozen: .* the copy marked" "$TMPD/$2.err" || { cat "$TMPD/$2.err"; fail "$2: not marked"; }
	local got j
	got=$(counts "$TMPD/$2.json")
	j=$(jmap_counts "$JVM_PID")
	assert_eq "${got% * *}" "$want" "$2: Held HeldData Locked Dropped (by construction)"
	assert_eq "$got" "$j" "$2: the program's classes and StackChunks (instances, bytes) against jmap -histo:live"
	note "$2: StackChunks $(echo "$got" | awk '{ print $5 ", " $6 " bytes" }') = jmap's; $(grep -o 'paused JVM [0-9]* for [0-9.]* [mu]*s' "$TMPD/$2.err")"
}

# attempt_pause GC ERR WHAT [K]: the failed frozen attempt's pause is printed and
# is the JVM's: its HeapWalkOperation's Total in -Xlog:safepoint, the K-th last
# (1; 2 when the walk in a pause followed it). Another safepoint in between
# (a ZGC cycle's) makes memtrace say how many there were instead.
attempt_pause() {
	local p t
	if grep -q "safepoints since the frozen attempt's request" "$2"; then
		note "$1 ($3): $(grep -o "[0-9]* safepoints since the frozen attempt's request[^(]*" "$2")"
		return 0
	fi
	p=$(sed -n 's/.*the frozen attempt paused it for \([0-9.]*\) ms.*/\1/p' "$2")
	[ -n "$p" ] || { cat "$2"; fail "$1 ($3): the failed attempt's pause not printed"; }
	t=$(grep '"HeapWalkOperation"' "$TMPD/$1.sp" | tail -"${4:-1}" | head -1 |
		sed -n 's/.*Total: \([0-9]*\) ns.*/\1/p' | awk '{ printf "%.3f", $1 / 1e6 }')
	python3 -c "import sys; sys.exit(0 if abs($p - ${t:-0}) <= 0.2 else 1)" ||
		fail "$1 ($3): the attempt's printed pause $p ms vs the JVM's $t ms"
	note "$1 ($3): the failed attempt paused it $p ms, -Xlog:safepoint ${t} ms"
}

for gc in G1 Parallel Serial Z Shenandoah; do
	"$JAVA" -XX:+Use${gc}GC -version >/dev/null 2>&1 || { note "JDK $JDK has no ${gc}GC"; continue; }
	"$JAVA" -XX:+Use${gc}GC -XX:-DoEscapeAnalysis -Xmx512m -Xlog:safepoint:file="$TMPD/$gc.sp" \
		-cp "$CLASSES" VThreads $N $D >"$TMPD/$gc.out" 2>&1 &
	JVM_PID=$!
	JVM_PIDS+=("$JVM_PID")
	for ((i = 0; i < 600; i++)); do
		grep -q "READY\|NOVTHREADS" "$TMPD/$gc.out" && break
		sleep 0.1
	done
	grep -q NOVTHREADS "$TMPD/$gc.out" && skip "JDK $JDK has no virtual threads"
	grep -q READY "$TMPD/$gc.out" || { cat "$TMPD/$gc.out"; fail "VThreads ($gc) did not start"; }

	frozen_histo $gc $gc
	case $gc in G1 | Parallel | Serial) moving=false ;; *) moving=true ;; esac
	if ! $moving; then
		jtool jcmd "$JVM_PID" GC.run >/dev/null || fail "jcmd GC.run"
		frozen_histo $gc $gc-after-gc
	fi

	"$MEMTRACE" selftest-walks -p "$JVM_PID" >"$TMPD/$gc.sw" 2>"$TMPD/$gc.swerr" ||
		{ cat "$TMPD/$gc.swerr"; tail -5 "$TMPD/$gc.sw"; fail "$gc: the mark and JVMTI's walk disagree"; }
	python3 - "$TMPD/$gc.sw" <<'PY' || fail "$gc: selftest-walks"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
w = [r for r in rows if r.get("event") == "walks"][0]
assert w["class_differs"] == 0 and w["size_differs"] == 0, w
assert w["jvmti_only"] == w["jvmti_only_weak"], w
mine = [r for r in rows if r.get("only") and r.get("class", "").startswith("VThreads")]
assert not mine, mine
PY

	if ! $moving; then
		MEMTRACE_TEST_FREEZE=nochunks "$MEMTRACE" --json histo -p "$JVM_PID" >"$TMPD/$gc.nc.json" \
			2>"$TMPD/$gc.nc.err" || { cat "$TMPD/$gc.nc.err"; fail "histo ($gc, nochunks)"; }
		grep -q "own mark stopped (a virtual thread's stack chunk .*): the copy walked with JVMTI instead" \
			"$TMPD/$gc.nc.err" || { cat "$TMPD/$gc.nc.err"; fail "$gc: no reason for JVMTI's walk"; }
	else
		if MEMTRACE_TEST_FREEZE=nochunks "$MEMTRACE" histo -p "$JVM_PID" >/dev/null 2>"$TMPD/$gc.no"; then
			cat "$TMPD/$gc.no"; fail "$gc: histo (nochunks) without --max-pause walked"
		fi
		grep -q "a virtual thread's stack is in the heap (a stack chunk).*--max-pause MS walks in a pause" \
			"$TMPD/$gc.no" || { cat "$TMPD/$gc.no"; fail "$gc: no clear refusal"; }
		attempt_pause $gc "$TMPD/$gc.no" refused
		MEMTRACE_TEST_FREEZE=nochunks "$MEMTRACE" --json histo -p "$JVM_PID" --max-pause 3000 \
			>"$TMPD/$gc.nc.json" 2>"$TMPD/$gc.nc.err" ||
			{ cat "$TMPD/$gc.nc.err"; fail "histo --max-pause ($gc, nochunks)"; }
		grep -q "walking the heap in a pause, not in a frozen copy: a virtual thread's stack" \
			"$TMPD/$gc.nc.err" || { cat "$TMPD/$gc.nc.err"; fail "$gc: not walked in a pause"; }
		attempt_pause $gc "$TMPD/$gc.nc.err" "before the walk in a pause" 2
		note "$gc without the chunks' iteration: $(grep -o 'paused JVM [0-9]* for [0-9.]* [mu]*s' "$TMPD/$gc.nc.err")"
	fi
	got=$(counts "$TMPD/$gc.nc.json")
	assert_eq "${got% * *}" "$want" "$gc (nochunks): Held HeldData Locked Dropped"
	kill -0 "$JVM_PID" || fail "$gc: the JVM died"
	jvm_stop "$JVM_PID"
	if [ $gc = G1 ] || [ $gc = Shenandoah ]; then # ZGC's snapshots wait for cycles: leaks_zgc
		# another JVM: the growing thread's chunk changes between two snapshots
		"$JAVA" -XX:+Use${gc}GC -XX:-DoEscapeAnalysis -Xmx512m -cp "$CLASSES" VThreads 100 4 grow \
			mounted >"$TMPD/$gc.gout" 2>&1 &
		JVM_PID=$!
		JVM_PIDS+=("$JVM_PID")
		wait_for_line "$TMPD/$gc.gout" READY 60 || { cat "$TMPD/$gc.gout"; fail "VThreads grow ($gc)"; }
		wait_for_line "$TMPD/$gc.gout" "MOUNTED TID" 20 || { cat "$TMPD/$gc.gout"; fail "VThreads grow ($gc): no tids"; }
		for env in "" MEMTRACE_TEST_FREEZE=nochunks; do
		[ -n "$env" ] && [ $gc = G1 ] && continue # G1's JVMTI walk in the copy: as a pause's
		env $env "$MEMTRACE" --json leaks -p "$JVM_PID" --duration 6 --snapshots 4 --max-pause 3000 \
			>"$TMPD/$gc.leaks" 2>"$TMPD/$gc.lerr" || { cat "$TMPD/$gc.lerr"; fail "$gc: leaks $env"; }
		python3 - "$TMPD/$gc.leaks" "$TMPD/$gc.gout" "$env" <<'PY' || { cat "$TMPD/$gc.lerr"; fail "$gc: the parked thread's list not named ($env)"; }
import json, re, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
leaks = [r for r in recs if r.get("event") == "leak"]
out = open(sys.argv[2]).read()
tid = {k: re.search(k + r" TID (\d+)", out).group(1) for k in ("GROW", "MOUNTED")}
print("  holders: %s (tids %s)" % ([(r["holder"], r["objects_gained"]) for r in leaks], tid),
      file=sys.stderr)
grown = [r for r in leaks if any(c["class"] == "VThreads$Grown" for c in r["classes"])]
assert sum(r["objects_gained"] for r in grown) > 300, [r["objects_gained"] for r in grown]
# each list by its thread's tid, as jcmd Thread.dump_to_file names it (the program printed
# Thread.getId()), from the copy's mark and from JVMTI's walks alike; the
# mounted thread's (its frames on a carrier's stack) a virtual thread's too,
# never a platform thread's
want = ["a local variable in virtual thread #%s (java.util.ArrayList)" % tid[k]
        for k in ("GROW", "MOUNTED")]
for w in want:
    h = [r for r in leaks if r["holder"].startswith(w)]
    assert h, (w, leaks)
    g = [c for c in h[0]["classes"] if c["class"] == "VThreads$Grown"]
    assert g and g[0]["gained"] > 100, (w, h[0]["classes"])
assert all(any(r["holder"].startswith(w) for w in want) for r in grown), [r["holder"] for r in grown]
PY
		done
		kill -0 "$JVM_PID" || fail "$gc: the JVM died (grow)"
		jvm_stop "$JVM_PID"
	fi
	# churn: chunks frozen, thawed and replaced while the copies are made
	"$JAVA" -XX:+Use${gc}GC -Xmx512m -cp "$CLASSES" VThreads 100 8 churn >"$TMPD/$gc.cout" 2>&1 &
	JVM_PID=$!
	JVM_PIDS+=("$JVM_PID")
	wait_for_line "$TMPD/$gc.cout" READY 60 || { cat "$TMPD/$gc.cout"; fail "VThreads churn ($gc)"; }
	for i in 1 2 3; do
		"$MEMTRACE" histo -p "$JVM_PID" >/dev/null 2>"$TMPD/$gc.cerr" ||
			{ cat "$TMPD/$gc.cerr"; fail "$gc: histo $i of churning virtual threads"; }
		grep -q "frozen: .* the copy marked" "$TMPD/$gc.cerr" ||
			{ cat "$TMPD/$gc.cerr"; fail "$gc: histo $i of churning virtual threads not marked"; }
	done
	kill -0 "$JVM_PID" || fail "$gc: the JVM died (churn)"
	jvm_stop "$JVM_PID"
done
