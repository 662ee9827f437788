#!/usr/bin/env bash
# walk_vthreads - heap snapshots of a JVM whose objects are held by parked
# virtual threads' stacks (JDK 21+; JDK 17 has none: skipped). VThreads parks
# N virtual threads D frames deep, each with a Held (and its HeldData) in a
# local of its deepest frame, every third in a synchronized block on a Locked
# only its frame holds (-XX:-DoEscapeAnalysis: else C2 replaces those objects
# by their fields and the program's count is not N). Such a stack is in the
# heap, in a stack chunk; the copy's own mark does not read one (its frames
# need their oop maps). So:
#  - G1: the copy walks with JVMTI instead, saying why; counts exact;
#  - ZGC and Shenandoah (a copy JVMTI cannot walk): `histo` fails with a
#    clear reason and exit 1; with --max-pause it walks in a pause (JVMTI reads
#    those stacks), counts exact;
#  - every count equals the program's by construction and `jmap -histo:live`'s
#    on the same JVM; the JVM lives on.
# TIMEOUT: 200
. "$ROOT/tests/e2e/lib.sh"

N=1500 D=12
L=$(( (N + 2) / 3 ))

counts() { # JSON: the program's classes, as "Held HeldData Locked Dropped"
	python3 - "$1" <<'PY'
import json, sys
c = {}
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        if "class" in r:
            c[r["class"]] = r["instances"]
print(" ".join(str(c.get("VThreads$" + k, 0)) for k in ("Held", "HeldData", "Locked", "Dropped")))
PY
}
jmap_counts() { # PID
	"$JAVA_HOME/bin/jmap" -histo:live "$1" | awk '
		$4 == "VThreads$Held" { h = $2 } $4 == "VThreads$HeldData" { d = $2 }
		$4 == "VThreads$Locked" { l = $2 } $4 == "VThreads$Dropped" { x = $2 }
		END { printf "%d %d %d %d\n", h, d, l, x }'
}

for gc in G1 Z Shenandoah; do
	"$JAVA" -XX:+Use${gc}GC -version >/dev/null 2>&1 || { note "JDK $JDK has no ${gc}GC"; continue; }
	"$JAVA" -XX:+Use${gc}GC -XX:-DoEscapeAnalysis -Xmx512m -cp "$CLASSES" VThreads $N $D \
		>"$TMPD/$gc.out" 2>&1 &
	JVM_PID=$!
	JVM_PIDS+=("$JVM_PID")
	for ((i = 0; i < 600; i++)); do
		grep -q "READY\|NOVTHREADS" "$TMPD/$gc.out" && break
		sleep 0.1
	done
	grep -q NOVTHREADS "$TMPD/$gc.out" && skip "JDK $JDK has no virtual threads"
	grep -q READY "$TMPD/$gc.out" || { cat "$TMPD/$gc.out"; fail "VThreads ($gc) did not start"; }
	want="$N $N $L 0"
	if [ $gc = G1 ]; then
		"$MEMTRACE" --json histo -p "$JVM_PID" >"$TMPD/$gc.json" 2>"$TMPD/$gc.err" ||
			{ cat "$TMPD/$gc.err"; fail "histo ($gc)"; }
		grep -q "own mark stopped (a virtual thread's stack chunk .*): the copy walked with JVMTI instead" \
			"$TMPD/$gc.err" || { cat "$TMPD/$gc.err"; fail "$gc: no reason for JVMTI's walk"; }
	else
		if "$MEMTRACE" histo -p "$JVM_PID" >"$TMPD/$gc.no" 2>"$TMPD/$gc.noerr"; then
			cat "$TMPD/$gc.noerr"; fail "$gc: histo without --max-pause walked"
		fi
		grep -q "a virtual thread's stack is in the heap (a stack chunk).*--max-pause MS walks in a pause" \
			"$TMPD/$gc.noerr" || { cat "$TMPD/$gc.noerr"; fail "$gc: no clear refusal"; }
		"$MEMTRACE" --json histo -p "$JVM_PID" --max-pause 3000 >"$TMPD/$gc.json" 2>"$TMPD/$gc.err" ||
			{ cat "$TMPD/$gc.err"; fail "histo --max-pause ($gc)"; }
		grep -q "walking the heap in a pause, not in a frozen copy: a virtual thread's stack" \
			"$TMPD/$gc.err" || { cat "$TMPD/$gc.err"; fail "$gc: not walked in a pause"; }
		note "$gc: $(grep -o 'heap walk paused JVM [0-9]* for [0-9.]* [mu]*s' "$TMPD/$gc.err")"
	fi
	assert_eq "$(counts "$TMPD/$gc.json")" "$want" "$gc: Held HeldData Locked Dropped (by construction)"
	assert_eq "$(jmap_counts "$JVM_PID")" "$want" "$gc: jmap -histo:live on the same JVM"
	kill -0 "$JVM_PID" || fail "$gc: the JVM died"
	jvm_stop "$JVM_PID"
done
