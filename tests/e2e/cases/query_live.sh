#!/usr/bin/env bash
# query_live - `memtrace query -p PID` on QueryWorkload, whose answers are
# known: the seed's value assertion and pseudojbb programs (true on the
# planted heap, false on the clean one), reachability from QHolder over
# fields and array elements (202 objects), K3-style attribution of QEntry to
# their QKey (11 each), a String field value, field values across a
# superclass and an interface with constants (JVMTI field indices); --json; --max-pause 0 and 1
# give a partial result and the JVM survives; a malformed program and an
# unknown class are clear errors with line:col and a caret.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

q() { "$MEMTRACE" query -p "$JVM_PID" "$@" 2>"$TMPD/err" || { cat "$TMPD/err" >&2; fail "query $*"; }; }

jvm_start planted -Xmx128m QueryWorkload planted
assert_eq "$(q -f "$ROOT/tests/dsl/01_value_assertion.mq")" '{"all":{"all-jvm":{"fault":true}}}' "value assertion (planted)"
grep -q "heap walk paused JVM $JVM_PID for" "$TMPD/err" || { cat "$TMPD/err"; fail "pause not printed"; }
assert_eq "$(q -f "$ROOT/tests/dsl/02_pseudojbb.mq")" '{"all":{"all-jvm":{"fault":true}}}' "pseudojbb (planted)"
assert_eq "$(q -f "$ROOT/tests/query/reach_holder.mq")" '{"held":{"holder":{"n":202}}}' "reachability"
assert_eq "$(q -f "$ROOT/tests/query/order_name.mq")" '{"named":{"order-7":{"n":1}}}' "string value"
assert_eq "$(q -f "$ROOT/tests/query/field_index.mq")" '{"f":{"qifaced":{"n":1}}}' "field indices"
q -f "$ROOT/tests/query/keyed.mq" >"$TMPD/keyed.json"
assert_eq "$(json_get "$TMPD/keyed.json" 'sorted((k, v["n"]) for k, v in recs[0]["keyed"].items())')" \
	"[('0', 11), ('1', 11), ('2', 11), ('3', 11)]" "K3-style attribution"
# -e and --json
q --json -e 'set_type s:
    roots <- objects.filter([it | it is Datum])
    membership <- false
    on_inclusion <- [ n <- n + 1  sum <- sum + THIS.data ]
    n : int <- 0
    sum : float <- 0.0
instances_for s have_names = "datum"' >"$TMPD/j.json"
assert_eq "$(json_get "$TMPD/j.json" '(recs[0]["event"], recs[0]["partial"], recs[0]["result"]["s"]["datum"]["n"], round(recs[0]["result"]["s"]["datum"]["sum"], 4))')" \
	"('query', False, 20, 190.1415)" "--json result"
# the walk cut short: partial, flagged, and the JVM lives on
for mp in 0 1; do
	q --json --max-pause $mp -f "$ROOT/tests/query/reach_holder.mq" >"$TMPD/p.json"
	assert_eq "$(json_get "$TMPD/p.json" 'recs[0]["partial"]')" "True" "--max-pause $mp partial"
	grep -q "cut short" "$TMPD/err" || fail "no partial warning"
	kill -0 "$JVM_PID" || fail "JVM died after --max-pause $mp"
done
assert_eq "$(q -f "$ROOT/tests/query/reach_holder.mq")" '{"held":{"holder":{"n":202}}}' "full walk after partial ones"
# errors: syntax with a caret, an unknown class, no program
"$MEMTRACE" query -p "$JVM_PID" -e 'set_type x:
    roots <- objects.filter([it | it.field >])' >"$TMPD/o" 2>"$TMPD/e" && fail "a malformed program succeeded"
grep -q '<-e>:2:45: error: expected an expression' "$TMPD/e" && grep -q '^ *\^' "$TMPD/e" || { cat "$TMPD/e"; fail "no line:col and caret"; }
"$MEMTRACE" query -p "$JVM_PID" -e 'set_type x:
    roots <- objects.filter([it | it is NoSuchClass])
    membership <- false
instances_for x have_names = "x"' >"$TMPD/o" 2>"$TMPD/e" && fail "an unknown class succeeded"
grep -q "no class of the heap is named 'NoSuchClass'" "$TMPD/e" || { cat "$TMPD/e"; fail "unknown class message"; }
"$MEMTRACE" query -p "$JVM_PID" -f /nonexistent.mq >"$TMPD/o" 2>"$TMPD/e" && fail "a missing program file succeeded"
grep -q "cannot read program /nonexistent.mq" "$TMPD/e" || { cat "$TMPD/e"; fail "missing file message"; }
jvm_stop "$JVM_PID"

jvm_start clean -Xmx128m QueryWorkload clean
assert_eq "$(q -f "$ROOT/tests/dsl/01_value_assertion.mq")" '{"all":{"all-jvm":{"fault":false}}}' "value assertion (clean)"
assert_eq "$(q -f "$ROOT/tests/dsl/02_pseudojbb.mq")" '{"all":{"all-jvm":{"fault":false}}}' "pseudojbb (clean)"
