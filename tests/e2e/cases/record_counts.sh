#!/usr/bin/env bash
# record_counts - the two lines `memtrace record` ends with add up, on
# threads taking turns with Object.wait/notifyAll (monitor probes on):
# every line written is an observed event, an inferred one, one read from
# the JVM, a name or a lost-event marker (their sum is the count `check`
# reads); every observed event is recorded, not reported, part of an
# Object.wait, or dropped. Each wait's own release of the monitor and the
# contended entry after the notify are part of the wait: no wait ends by
# inference, and only the waits begun before the recording have their end
# dropped (before: a third of the waits ended at their own release, their
# real end dropped, on JDK 17). A filtered recording beside it reports fewer of the
# same kind of events and adds up too.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start w WaitNotify 4
"$MEMTRACE" record -p "$JVM_PID" -o "$TMPD/all.rec.gz" --duration 4 --enable-monitor-probes \
	2>"$TMPD/all.err" &
r1=$!
"$MEMTRACE" record -p "$JVM_PID" -o "$TMPD/part.rec.gz" --duration 4 --categories thread,type \
	2>"$TMPD/part.err" &
r2=$!
wait "$r1" || { cat "$TMPD/all.err" >&2; fail "record exited $?"; }
wait "$r2" || { cat "$TMPD/part.err" >&2; fail "record (filtered) exited $?"; }

# counts ERR FILE: check the two lines of ERR against FILE; print "observed recorded
# not-reported absorbed dropped inferred"
counts() {
	"$MEMTRACE" check "$2" >"$2.check" || { cat "$2.check" >&2; fail "check failed on $2"; }
	python3 - "$1" "$2" "$2.check" <<'PY'
import gzip, json, re, sys
err = open(sys.argv[1]).read()
m1 = re.search(r"recorded (\d+) lines in [\d.]+ s: (\d+) observed events, (\d+) inferred, "
               r"(\d+) read from the JVM, (\d+) names, (\d+) lost-event markers", err)
m2 = re.search(r"of (\d+) events observed: (\d+) recorded, (\d+) not reported \(filters, pauses\), "
               r"(\d+) part of Object.wait calls, (\d+) dropped \(they end what began before the "
               r"recording or in a gap\); (\d+) events lost", err)
if not m1 or not m2:
    sys.exit("the two lines are not there:\n" + err)
lines, obs_out, inferred, resync, names, markers = map(int, m1.groups())
observed, recorded, unrep, absorbed, dropped, lost = map(int, m2.groups())
checked = int(re.search(r": (\d+) events, 0 violations", open(sys.argv[3]).read()).group(1))
assert lines == obs_out + inferred + resync + names + markers, "lines do not add up"
assert lines == checked, "lines %d, check read %d" % (lines, checked)
assert recorded == obs_out, "observed events recorded differ between the lines"
assert observed == recorded + unrep + absorbed + dropped, "observed events do not add up"
# the file's own flags: inferred and resynchronised lines, and no Object.wait ended by inference
inf = rs = waits_inferred = 0
with gzip.open(sys.argv[2], "rt") as f:
    for l in f:
        r = json.loads(l)
        fl = r.get("f", 0)
        if r.get("k") in (None, "end", "name", "lost"):
            continue
        if fl & 4:
            rs += 1
        elif fl & 2:
            inf += 1
            if r["k"] == "wait_end":
                waits_inferred += 1
assert (inf, rs) == (inferred, resync), "file: %d inferred %d resync" % (inf, rs)
assert waits_inferred == 0, "%d waits ended by inference" % waits_inferred
print(observed, recorded, unrep, absorbed, dropped, inferred, lost)
PY
}
read -r obs rec unrep absorbed dropped inferred lost < <(counts "$TMPD/all.err" "$TMPD/all.rec.gz") ||
	fail "the full recording's counts"
note "all: $obs observed, $rec recorded, $unrep not reported, $absorbed in waits, $dropped dropped, $inferred inferred, $lost lost"
# JDK 17 fires contended__exit for the wait's own release when it wakes a
# thread (ObjectMonitor::ExitEpilog); JDK 25 seldom shows one there
[ "$JDK" != 17 ] || [ "$absorbed" -gt 100 ] || fail "only $absorbed events absorbed into Object.wait calls"
[ "$lost" -gt 0 ] || [ "$dropped" -le 8 ] || fail "$dropped events dropped with none lost"
read -r pobs prec punrep pabsorbed pdropped pinferred plost < <(counts "$TMPD/part.err" "$TMPD/part.rec.gz") ||
	fail "the filtered recording's counts"
note "part: $pobs observed, $prec recorded, $punrep not reported"
[ "$punrep" -gt 0 ] || fail "the filtered recording reports every event"
