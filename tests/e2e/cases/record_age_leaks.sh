#!/usr/bin/env bash
# record_age_leaks - `memtrace report` runs the age and leaks analyses on
# recordings made with `record --categories object,type`, with the live
# commands' output. Two recordings, made at the same time:
#  - LeakWorkload (two planted leaks, a 40 MB cache filled once, churn from
#    16 sites): in `report --json`'s leaks record both leak sites are
#    suspects ranked above everything else, the cache (char[]) and churn are
#    not suspects, and the BPF per-site volumes recorded with the objects
#    give both leaks a survival near 1 (as leaks_rank.sh asserts live);
#  - AgeWorkload (site keepK keeps objects for exactly k System.gc() calls):
#    in `report --json --by site`'s age record no live sample of keepK is
#    older than k's range and each k > 0 has samples in its own range (as
#    age_construction.sh asserts live).
# The text report prints both sections too; a recording without objects says
# age and leaks are unavailable (and still reports the rest).
# TIMEOUT: 50
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
python3 - "$TMPD/l.json" <<'PY' || fail "leaks ranking from the recording"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
r = [x for x in recs if x["event"] == "leaks"][-1]
assert r.get("available", True), r
S = r["suspects"]
print("  leaks: %.1f s window, %d GCs (%d in the second half), %d live samples" % (
      r["duration_s"], r["gcs"], r["gcs_second_half"], r["live_samples"]), file=sys.stderr)
for i, s in enumerate(S):
    print("  #%d %-28s %8.0f B/s conf %.3f n=%d  %s" % (i + 1, s["class"], s["growth_bytes_per_s"],
          s["confidence"], s["samples"], s["site"][:90]), file=sys.stderr)
assert r["dropped_allocs"] == 0 and r["dropped_frees"] == 0, "losses"
assert r["agent_counters"], "the agent's final counters are not in the recording"
def rank(pred):
    for i, s in enumerate(S):
        if pred(s): return i
    return None
r1 = rank(lambda s: "leakSessions" in s["site"])
r2 = rank(lambda s: "leakBuffers" in s["site"] and s["class"] == "byte[]")
assert r1 is not None, "leak 1 (leakSessions) not a suspect"
assert r2 is not None, "leak 2 (leakBuffers byte[]) not a suspect"
others = [i for i, s in enumerate(S) if "leakSessions" not in s["site"] and "leakBuffers" not in s["site"]]
assert not others or min(others) > max(r1, r2), "a non-leak outranks a leak: %s" % others
assert not any(s["class"] == "char[]" for s in S), "the stable cache is a suspect"
assert not any("churn" in s["site"] for s in S), "churn is a suspect"
assert S[r1]["confidence"] >= 0.95 and S[r2]["confidence"] >= 0.95
assert S[r1]["growth_bytes_per_s"] > 0 and S[r1]["live_bytes"] > 0
# churn is in the recording, ranked among the others
assert any("churn" in o["site"] for o in r["others"]), "no churn site among the others"
sc = r["site_counters"]
assert sc and sc["keys"] > 0 and sc["all_bytes"] > 0, sc
for i in (r1, r2):
    s = S[i]
    print("  leak  %-26s survival %.3f (%s)" % (s["class"], s["survival"], s["alloc_method"]),
          file=sys.stderr)
    assert 0.2 <= s["survival"] <= 8, "leak survival not near 1: %s" % s
churn = [o for o in r["others"] if "churn" in o["site"] and "survival" in o]
assert len(churn) >= 8, "churn sites without a volume: %d" % len(churn)
assert max(o["survival"] for o in churn) < 0.05, "a churn site survives"
PY

# ages from the recording
"$MEMTRACE" report --json --by site --top 100 "$TMPD/a.rec.gz" >"$TMPD/a.json" 2>"$TMPD/a.err" ||
	{ cat "$TMPD/a.err"; fail "report (age)"; }
python3 - "$TMPD/a.json" <<'PY' || fail "ages from the recording"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
r = [x for x in recs if x["event"] == "age"][-1]
assert r.get("available", True), r
assert r["by"] == "site"
names = r["buckets"]
def bucket(age):
    return 0 if age == 0 else 1 if age == 1 else 2 if age < 4 else 3 if age < 8 else 4 if age < 16 else 5
print("  age: gcs %d, live samples %d" % (r["gcs"], r["live_samples"]), file=sys.stderr)
assert r["gcs"] >= 25, "too few GCs seen: %d" % r["gcs"]
assert r["dropped_allocs"] == 0 and r["dropped_frees"] == 0 and r["dropped_gcs"] == 0
seen = set()
for g in r["groups"]:
    site = g["site"].split(" < ")[0]
    if not site.startswith("AgeWorkload.keep"):
        continue
    k = int(site.split("keep")[1].split(":")[0])
    counts = [g["by_age"][n]["samples"] for n in names]
    print("  keep%-2d %s" % (k, counts), file=sys.stderr)
    total = sum(counts)
    above = sum(counts[bucket(k) + 1:])
    assert above <= max(1, total // 50), "keep%d: %d of %d samples older than %d GCs" % (k, above, total, k)
    if k > 0:
        assert counts[bucket(k)] > 0, "keep%d: nothing in its own range %s" % (k, names[bucket(k)])
        seen.add(k)
assert seen == {1, 3, 6, 12, 20}, "sites seen: %s" % sorted(seen)
PY

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
