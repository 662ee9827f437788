#!/usr/bin/env bash
# walk_live - the frozen copy's records read while the copy writes them
# (MT_AP_FREEZE_LIVE): on FreezeWorkload's 1.5 M live objects (its emit
# takes tens of ms, memtrace pulls every 2 ms on the other core),
#  - a query over every object (count and bytes of FwEntry, retained of the
#    entries' array) answers the same with the reading overlapped and with
#    MEMTRACE_LIVE=0 (all records read after the copy is done), and as
#    built: 750 000 FwEntry;
#  - `--json` says how many object records were read while written: some
#    with it, none with MEMTRACE_LIVE=0;
#  - `heap --retained` gives the workload's holder and classes alike both ways;
#  - nothing outlives the walks, the JVM is unharmed.
# TIMEOUT: 120
. "$ROOT/tests/e2e/lib.sh"

N=750000
jvm_start fw -Xmx768m FreezeWorkload $N 0
prog='set_type e:
    roots <- objects.filter([it | it is FreezeWorkload.FwEntry])
    membership <- false
    on_inclusion <- [ n <- n + 1  bytes <- bytes + THIS.size ]
    n : int <- 0
    bytes : int <- 0
instances_for e have_names = "entries"'
q() { # OUT [env...]
	env "${@:2}" "$MEMTRACE" --json query -p "$JVM_PID" -e "$prog" >"$TMPD/$1.json" 2>"$TMPD/$1.err" ||
		{ cat "$TMPD/$1.err"; fail "query $1"; }
}
q live
q after MEMTRACE_LIVE=0
python3 - "$TMPD" $N <<'PY' || fail "the query's answer or the reading"
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
def rec(f):
    return [json.loads(l) for l in open(d + "/" + f) if l.startswith("{")][-1]
a, b = rec("live.json"), rec("after.json")
print("  live: %s\n  after: %s" % ({k: v for k, v in a.items() if k != "result"},
      {k: v for k, v in b.items() if k != "result"}), file=sys.stderr)
ra, rb = a["result"]["e"]["entries"], b["result"]["e"]["entries"]
assert ra == rb, (ra, rb)
assert ra["n"] == n, ra
assert a["walk_mode"] == b["walk_mode"] == "frozen", (a, b)
assert a["objects_read_while_written"] > 0, a
assert b["objects_read_while_written"] == 0, b
PY
h() { # OUT [env...]: what the workload holds - the top retainer (the class
	# FreezeWorkload and its entries' array) and its classes' rows; the JDK's
	# own objects (threads' stacks, a lazily made table) may differ by a few
	env "${@:2}" "$MEMTRACE" --json heap -p "$JVM_PID" --retained --top 20 >"$TMPD/$1.h" 2>"$TMPD/$1.herr" ||
		{ cat "$TMPD/$1.herr"; fail "heap --retained $1"; }
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith("{"):
        continue
    r = json.loads(l)
    if (r["event"] == "retainer" and r["rank"] == 1) or \
       (r["event"] == "retained_class" and r["class"].startswith(("FreezeWorkload", "class FreezeWorkload"))):
        print(sorted((k, v) for k, v in r.items() if not k.endswith("_ms")))' "$TMPD/$1.h"
}
a=$(h live)
[ -n "$a" ] && [ "$(echo "$a" | wc -l)" -ge 3 ] || fail "heap --retained: no rows of the workload's: $a"
[ "$a" = "$(h after MEMTRACE_LIVE=0)" ] || fail "heap --retained differs with the records read after"
copies_gone "$JVM_PID" || fail "a copy outlived the walks"
kill -0 "$JVM_PID" || fail "the JVM died"
