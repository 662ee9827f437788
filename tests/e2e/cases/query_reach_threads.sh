#!/usr/bin/env bash
# query_reach_threads - a reachability query on a heap of over a million
# objects, which dsl/reach.c walks in two threads (FreezeWorkload 600000:
# 600 k FwEntry, each with a long[2], in one FwEntry[]; no mutator):
#  - what the array reaches is at least the array, its entries and their
#    payloads (2N+1 objects, the bytes jmap -histo:live gives the first two
#    and N long[2] of 32 bytes) and at most all jmap's live objects;
#  - the seed's "reachable from the threads" and the program above give the
#    same JSON on the walk's saved snapshot in one thread and in two
#    (MEMTRACE_DSL_THREADS=1 / 2), and the live answer's too.
# The two runs' evaluation times are noted, not asserted.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

N=600000
jvm_start f -Xmx1g FreezeWorkload "$N" 0
cat >"$TMPD/arr.mq" <<EOF
set_type s:
    roots <- objects.filter([it | it.length = $N])
    membership <- THIS in Unassigned and REFERRER in ENTITY
    on_inclusion <- [ n <- n + 1  bytes <- bytes + THIS.size ]
    n : int <- 0
    bytes : int <- 0
instances_for s have_names = "entries"
EOF
"$MEMTRACE" --json query -p "$JVM_PID" -f "$TMPD/arr.mq" --save "$TMPD/h.snap" \
	>"$TMPD/live.json" 2>"$TMPD/live.err" || { cat "$TMPD/live.err"; fail "query -p"; }
objs=$(json_get "$TMPD/live.json" 'recs[0]["objects"]')
[ "$objs" -ge 1000000 ] || fail "only $objs objects: under reach.c's two-thread bound"
# jmap -histo:live: the entries', their array's and all live objects' counts
# and bytes bound the answer (what the array reaches takes in its classes'
# loader, which holds all the application's classes and statics)
jtool jmap -histo:live "$JVM_PID" >"$TMPD/jmap.txt" || fail "jmap"
jb() { awk -v c="$1" '$4 == c { print $3 }' "$TMPD/jmap.txt"; }
total=$(awk '$1 == "Total" { print $2, $3 }' "$TMPD/jmap.txt")
read -r tn tb <<<"$total"
low=$(( $(jb 'FreezeWorkload$FwEntry') + $(jb '[LFreezeWorkload$FwEntry;') + 32 * N ))
read -r n b < <(json_get "$TMPD/live.json" '"%d %d" % (recs[0]["result"]["s"]["entries"]["n"], recs[0]["result"]["s"]["entries"]["bytes"])')
note "the array reaches $n objects, $b bytes; jmap: entries, array and payloads $((2 * N + 1)) objects, $low bytes; all live $tn, $tb"
[ "$n" -ge $((2 * N + 1)) ] && [ "$n" -le "$tn" ] || fail "$n objects: not within [$((2 * N + 1)), $tn]"
[ "$b" -ge "$low" ] && [ "$b" -le "$tb" ] || fail "$b bytes: not within [$low, $tb]"
for prog in arr 03_reachable_from_threads; do
	f="$TMPD/arr.mq"
	[ "$prog" = arr ] || f="$ROOT/tests/dsl/$prog.mq"
	for t in 1 2; do
		MEMTRACE_DSL_THREADS=$t "$MEMTRACE" --json query "$TMPD/h.snap" -f "$f" \
			>"$TMPD/$prog.$t.json" 2>"$TMPD/$prog.$t.err" ||
			{ cat "$TMPD/$prog.$t.err"; fail "$prog in $t thread(s)"; }
	done
	r1=$(json_get "$TMPD/$prog.1.json" 'json.dumps(recs[0]["result"], sort_keys=True)')
	r2=$(json_get "$TMPD/$prog.2.json" 'json.dumps(recs[0]["result"], sort_keys=True)')
	assert_eq "$r2" "$r1" "$prog: two threads against one"
	note "$prog: $r1; evaluation $(json_get "$TMPD/$prog.1.json" 'recs[0]["eval_ms"]') ms in one thread, $(json_get "$TMPD/$prog.2.json" 'recs[0]["eval_ms"]') in two"
done
assert_eq "$(json_get "$TMPD/live.json" 'json.dumps(recs[0]["result"], sort_keys=True)')" \
	"$(json_get "$TMPD/arr.1.json" 'json.dumps(recs[0]["result"], sort_keys=True)')" \
	"the live answer and the snapshot's"
kill -0 "$JVM_PID" || fail "the JVM died"
