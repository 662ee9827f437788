#!/usr/bin/env bash
# walk_pause - the JVM pause memtrace prints for a heap walk (query --json
# pause_ms, histo --json pause_ms, snapshot's stderr line) against the JVM's
# own log of the same stop: -Xlog:safepoint's "HeapWalkOperation" entry,
# "Total: N ns" (reaching the safepoint + at it + cleanup or leaving). Each
# command runs exactly one such operation. Three JVMs, one per source:
# - counters: memtrace reads the JVM's hsperfdata counters before the
#   request and after the walk; with exactly one safepoint in between it
#   prints sun.rt.safepointSyncTime + sun.rt.safepointTime of it ("the JVM's
#   safepoint time"), which HotSpot adds up from the same timestamps as the
#   log's Total: equal to the ns (memtrace prints us: within 0.002 ms). (A
#   CI run under load found sun.rt.safepointTime alone 0.26 ms short: it
#   leaves out reaching the safepoint.)
# - record: under -XX:-UsePerfData there are no counters: memtrace reads the
#   JVM's record of its last safepoint (SafepointTracing's begin and end
#   times, SafepointSynchronize's counter; libjvm statics by their .symtab
#   names, through /proc/PID/mem): "the JVM's safepoint record", equal too.
# - agent: -XX:-UsePerfData and a stripped libjvm (a JDK copy): neither, so
#   memtrace says "timed by the agent" (its timing around FollowReferences):
#   never below the log's "At safepoint" (the operation itself, which it
#   wraps) and above the Total only by the work JVMTI does around the
#   operation (bound 20 % + 25 ms). It can be below the Total: reaching and
#   leaving the safepoint fall partly outside it (JDK 25 under load: 8.6 ms
#   printed, 10.0 ms Total). Its walks are in a pause that cannot be
#   estimated (no counters): they give --max-pause, the consent they need.
# A single walk (query, histo, snapshot) tags no object (the agent tells
# objects apart by address during the pause), so its session ends without a
# second stop: no HeapIterateOperation in the log, nothing printed. A session
# of several walks that needs ages (query --count 2 on a program reading
# `age`) tags objects; its end is a second, shorter stop: the agent clears
# the tags (IterateThroughHeap, "HeapIterateOperation") before it
# acknowledges the detach; memtrace prints it the same way ("at most ...
# (timed by memtrace)" with no JVM figure: the round trip, never below the
# operation itself). That session's walks are in a pause (tagged): it gives
# --max-pause, the consent a walk in a pause estimated over 100 ms needs.
# ALONE: printed pauses against the JVM's safepoint log
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

walks() { grep -c '"HeapWalkOperation"' "$LOG" || true; }
# last_ns FIELD [OPERATION]: FIELD ("Total", "At safepoint") of the newest such
# safepoint, in ms
last_ns() {
	grep "\"${2:-HeapWalkOperation}\"" "$LOG" | tail -1 | sed -n "s/.*$1: \([0-9]*\) ns.*/\1/p" |
		awk '{ printf "%.6f", $1 / 1e6 }'
}
# compare WHAT PRINTED_MS OPERATION MODE: PRINTED_MS against the newest
# OPERATION in the log; MODE exact (the JVM's own figure: its Total, within
# the rounding of the digits printed) or timed (the agent's or memtrace's own timing:
# never below the operation's "At safepoint", above the Total by at most
# 20 % + 25 ms; 50 % + 50 ms for the release, a socket round trip)
compare() {
	local what=$1 p=$2 op=$3 mode=$4 s a
	s=$(last_ns Total "$op")
	a=$(last_ns "At safepoint" "$op")
	[ -n "$s" ] && [ -n "$a" ] || fail "$what: no $op in the safepoint log"
	note "$what ($mode): memtrace ${p} ms, JVM safepoint log ${s} ms (at the safepoint ${a} ms)"
	case $mode in
	exact) # equal but for the printing's rounding (JSON: us; text: as fmt_ns rounds)
		python3 -c "import sys; d = len('$p'.partition('.')[2]); sys.exit(0 if abs($p - $s) <= 0.5 * 10 ** -d + 0.001 else 1)" ;;
	timed) python3 -c "import sys; p, s, a = $p, $s, $a; sys.exit(0 if a - 0.05 <= p <= 1.2 * s + 25 else 1)" ;;
	*) python3 -c "import sys; p, s, a = $p, $s, $a; sys.exit(0 if a - 0.05 <= p <= 1.5 * s + 50 else 1)" ;;
	esac || fail "$what: printed pause $p ms vs the JVM's $s ms (at the safepoint $a ms)"
}
# check WHAT PRINTED_MS SOURCE: a walk's pause as SOURCE (counters, record, agent) gives it
check() { compare "$1" "$2" HeapWalkOperation "$([ "$3" = agent ] && echo timed || echo exact)"; }
iterations() { grep -c '"HeapIterateOperation"' "$LOG" || true; }
# check_no_release WHAT I0: a single walk's session: no second stop
check_no_release() {
	assert_eq "$(iterations)" "$2" "$1: no HeapIterateOperation (no tags to clear)"
	if grep -q "releasing the walk" "$TMPD/e"; then cat "$TMPD/e"; fail "$1: printed a release pause"; fi
}
# check_release WHAT SOURCE: the tag-clearing pause printed on $TMPD/e
check_release() {
	local p
	p=$(sed -n 's/.*releasing the walk.s tags paused JVM [0-9]* for \(at most \)\{0,1\}\([0-9.]*\) ms.*/\2/p' "$TMPD/e" | tail -1)
	[ -n "$p" ] || { cat "$TMPD/e"; fail "$1: the tag-clearing pause was not printed"; }
	compare "$1 release" "$p" HeapIterateOperation "$([ "$2" = agent ] && echo roundtrip || echo exact)"
}
# walk_all SOURCE: query, histo and snapshot, each checked against the log
walk_all() {
	local n0 i0 p how from
	case $1 in
	counters) how="the JVM's safepoint time" from=jvm_safepoints ;;
	record) how="the JVM's safepoint record" from=jvm_safepoint_record ;;
	*) how="timed by the agent" from=agent ;;
	esac
	n0=$(walks) i0=$(iterations)
	# the stripped JVM's walks are in a pause with neither counters nor
	# symbols: their length cannot be estimated, so they need consent
	local mp=()
	[ "$1" = agent ] && mp=(--max-pause 600000)
	"$MEMTRACE" query -p "$JVM_PID" --json "${mp[@]}" -f "$ROOT/tests/query/reach_holder.mq" >"$TMPD/q.json" 2>"$TMPD/e" ||
		{ cat "$TMPD/e"; fail "query"; }
	grep -q "($how;" "$TMPD/e" || { cat "$TMPD/e"; fail "query did not say '$how'"; }
	assert_eq "$(walks)" "$((n0 + 1))" "one HeapWalkOperation per query"
	assert_eq "$(json_get "$TMPD/q.json" 'recs[0]["pause_from"]')" "$from" "query --json pause_from"
	check query "$(json_get "$TMPD/q.json" 'recs[0]["pause_ms"]')" "$1"
	check_no_release query "$i0"

	"$MEMTRACE" histo -p "$JVM_PID" --json "${mp[@]}" >"$TMPD/h.json" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "histo"; }
	assert_eq "$(walks)" "$((n0 + 2))" "one HeapWalkOperation per histo"
	assert_eq "$(json_get "$TMPD/h.json" '[r for r in recs if r.get("event") == "histo_total"][0]["pause_from"]')" \
		"$from" "histo --json pause_from"
	check histo "$(json_get "$TMPD/h.json" '[r for r in recs if r.get("event") == "histo_total"][0]["pause_ms"]')" "$1"
	check_no_release histo "$i0"

	"$MEMTRACE" snapshot -p "$JVM_PID" -o "$TMPD/s.snap" "${mp[@]}" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "snapshot"; }
	assert_eq "$(walks)" "$((n0 + 3))" "one HeapWalkOperation per snapshot"
	p=$(sed -n 's/.*heap walk paused JVM [0-9]* for \([0-9.]*\) ms.*/\1/p' "$TMPD/e" | tail -1)
	[ -n "$p" ] || { cat "$TMPD/e"; fail "snapshot printed no pause"; }
	check snapshot "$p" "$1"
	check_no_release snapshot "$i0"

	# two walks with ages: tags, cleared at the end (one HeapIterateOperation)
	"$MEMTRACE" query -p "$JVM_PID" --json --count 2 --every 0.2 --max-pause 60000 -e "$AGEPROG" \
		>"$TMPD/a.json" 2>"$TMPD/e" || { cat "$TMPD/e"; fail "query --count 2"; }
	assert_eq "$(walks)" "$((n0 + 5))" "two HeapWalkOperations for --count 2"
	assert_eq "$(iterations)" "$((i0 + 1))" "one HeapIterateOperation: the tags cleared"
	check "query --count 2 (second walk)" "$(json_get "$TMPD/a.json" 'recs[-1]["pause_ms"]')" "$1"
	check_release "query --count 2" "$1"
	kill -0 "$JVM_PID" || fail "the JVM died"
}
AGEPROG='set_type h:
    roots <- objects.filter([it | it is QueryWorkload.QHolder])
    membership <- false
    on_inclusion <- [ n <- n + 1  ages <- ages + THIS.age ]
    n : int <- 0
    ages : int <- 0
instances_for h have_names = "holder"'

# The workload is idle after READY (no GC); periodic cleanup safepoints are
# off (GuaranteedSafepointInterval=0) so that a second safepoint inside the
# request's window cannot turn the JVM's figure into the agent's at random.
SP="-XX:+UnlockDiagnosticVMOptions -XX:GuaranteedSafepointInterval=0"
LOG="$TMPD/safepoint.log"
jvm_start w "-Xlog:safepoint:file=$LOG" $SP -Xmx256m QueryWorkload planted 100000
walk_all counters
kill "$JVM_PID"; wait "$JVM_PID" 2>/dev/null

LOG="$TMPD/safepoint-noperf.log"
jvm_start noperf "-Xlog:safepoint:file=$LOG" $SP -XX:-UsePerfData -Xmx256m QueryWorkload planted 100000
walk_all record
kill "$JVM_PID"; wait "$JVM_PID" 2>/dev/null

. "$ROOT/tests/e2e/jdkcopy.sh"
jdk_copy "$JAVA_HOME" "$TMPD/jdk" nosymtab || fail "cannot make the JDK copy"
JAVA="$TMPD/jdk/bin/java"
LOG="$TMPD/safepoint-stripped.log"
jvm_start stripped "-Xlog:safepoint:file=$LOG" $SP -XX:-UsePerfData -Xmx256m QueryWorkload planted 100000
walk_all agent
kill "$JVM_PID"; wait "$JVM_PID" 2>/dev/null
rm -rf "$TMPD/jdk"
