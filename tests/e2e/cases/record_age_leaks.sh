#!/usr/bin/env bash
# record_age_leaks - `memtrace report` runs the age and leaks analyses on
# recordings made with `record --categories object,type`, with the live
# commands' output. Two recordings, made at the same time:
#  - LeakWorkload (two planted leaks, a 40 MB cache filled once, churn from
#    16 sites): in `report --json`'s leaks record both leak sites are
#    suspects ranked above everything else, the cache (char[]) and churn are
#    not suspects, both leaks keep most of what they allocate (survival <= 1)
#    and the BPF per-site volumes recorded with the objects give them their
#    allocation rates (as leaks_rank.sh asserts live);
#  - AgeWorkload (site keepK keeps objects for exactly k System.gc() calls):
#    in `report --json --by site`'s age record no live sample of keepK is
#    older than k's range and each k > 0 has samples in its own range (as
#    age_construction.sh asserts live).
# The text report prints both sections too; a recording without objects says
# age and leaks are unavailable (and still reports the rest).
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start l -Xmx256m LeakWorkload
lpid=$JVM_PID
jvm_start a -Xmx128m AgeWorkload
apid=$JVM_PID
"$MEMTRACE" record -p "$lpid" -o "$TMPD/l.rec.gz" --categories object,type \
	--object-interval 64k --duration 14 2>"$TMPD/lrec.err" &
lr=$!
"$MEMTRACE" record -p "$apid" -o "$TMPD/a.rec.gz" --categories object,type \
	--object-interval 2k --duration 6 2>"$TMPD/arec.err" &
ar=$!
wait "$ar" || { cat "$TMPD/arec.err"; fail "record (age workload) failed"; }
wait "$lr" || { cat "$TMPD/lrec.err"; fail "record (leak workload) failed"; }
cat "$TMPD/lrec.err" "$TMPD/arec.err" >&2
"$MEMTRACE" check "$TMPD/l.rec.gz" >"$TMPD/lcheck.out" || { cat "$TMPD/lcheck.out"; fail "check (leaks)"; }
"$MEMTRACE" check "$TMPD/a.rec.gz" >"$TMPD/acheck.out" || { cat "$TMPD/acheck.out"; fail "check (age)"; }

# leaks from the recording
"$MEMTRACE" report --json --top 200 "$TMPD/l.rec.gz" >"$TMPD/l.json" 2>"$TMPD/l.err" ||
	{ cat "$TMPD/l.err"; fail "report (leaks)"; }
python3 - "$TMPD/l.json" <<'PY' || fail "leaks record"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
r = [x for x in recs if x["event"] == "leaks"][-1]
print("  leaks: %.1f s window, %d GCs (%d in the second half), %d live samples" % (
      r["duration_s"], r["gcs"], r["gcs_second_half"], r["live_samples"]), file=sys.stderr)
assert r["agent_counters"], "the agent's final counters are not in the recording"
# churn is in the recording, ranked among the others
assert any("churn" in o["site"] for o in r["others"]), "no churn site among the others"
PY
python3 "$ROOT/tests/e2e/check_leaks.py" "$TMPD/l.json" || fail "leaks ranking from the recording"

# ages from the recording
"$MEMTRACE" report --json --by site --top 100 "$TMPD/a.rec.gz" >"$TMPD/a.json" 2>"$TMPD/a.err" ||
	{ cat "$TMPD/a.err"; fail "report (age)"; }
python3 - "$TMPD/a.json" <<'PY' || fail "age record"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert [x for x in recs if x.get("event") == "age"][-1]["by"] == "site"
PY
python3 "$ROOT/tests/e2e/check_ages.py" "$TMPD/a.json" || fail "ages from the recording"

# the text report has both sections
"$MEMTRACE" report "$TMPD/a.rec.gz" >"$TMPD/a.txt" 2>&1 || { cat "$TMPD/a.txt"; fail "report (text)"; }
assert_contains "$TMPD/a.txt" "live samples after"
assert_contains "$TMPD/a.txt" "GCs (.* in the second half)"
# a recording without objects: age and leaks unavailable, the rest reported
"$MEMTRACE" record -p "$apid" -o "$TMPD/n.rec.gz" --categories type,inv --duration 1 2>"$TMPD/n.err" ||
	{ cat "$TMPD/n.err"; fail "record without objects"; }
"$MEMTRACE" report --json "$TMPD/n.rec.gz" >"$TMPD/n.json" || fail "report without objects failed"
python3 - "$TMPD/n.json" <<'PY' || fail "no objects: age/leaks must say unavailable"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
for ev in ("age", "leaks"):
    r = [x for x in recs if x["event"] == ev]
    assert len(r) == 1 and r[0]["available"] is False and "no sampled objects" in r[0]["reason"], r
assert any(x["event"] == "start" for x in recs)
PY
kill -0 "$lpid" && kill -0 "$apid" || fail "a JVM died"
exit 0
