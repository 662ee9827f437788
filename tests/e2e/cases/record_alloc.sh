#!/usr/bin/env bash
# record_alloc - allocation samples in the event stream: `memtrace record
# --categories alloc` next to live `memtrace alloc --json` on the same JVM
# over the same workload (AllocShares: 50/30/20 % of bytes by construction).
# Both sample the same TLAB refills (live with --budget 0: every one; two uprobes on the same AllocTracer
# functions), and both windows enclose the whole workload, so the refills
# they count are the same ones: totals may differ only by the JVM's own
# background allocations in the stretch one of them covers and the other
# does not (they start and stop a few hundred ms apart), and by lost events
# (reported by both). The report's by-class table (by the refills' classes)
# agrees with the live one's (from the TLABs' contents) within 4 points; the
# recording passes `check` (the classes, loaded before recording began, are
# created before the samples that refer to them: rule 2).
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx128m -XX:+UseSerialGC AllocShares --go "$TMPD/go" --mb 1024
pid=$JVM_PID
"$MEMTRACE" alloc -p "$pid" --json --budget 0 >"$TMPD/live.json" 2>"$TMPD/live.err" &
a=$!
"$MEMTRACE" record -p "$pid" -o "$TMPD/a.rec.gz" --categories alloc 2>"$TMPD/rec.err" &
r=$!
wait_for_line "$TMPD/live.json" '"start"' 20 || { cat "$TMPD/live.err"; fail "alloc did not start"; }
wait_for_line "$TMPD/rec.err" 'recording pid' 20 || { cat "$TMPD/rec.err"; fail "record did not start"; }
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 40 || fail "workload did not finish"
sleep 0.3
kill -INT "$a" "$r"
wait "$a" || { cat "$TMPD/live.err"; fail "memtrace alloc failed"; }
wait "$r" || { cat "$TMPD/rec.err"; fail "record failed"; }
"$MEMTRACE" check "$TMPD/a.rec.gz" >"$TMPD/check.out" || { cat "$TMPD/check.out"; fail "check failed"; }
note "$(cat "$TMPD/check.out")"
"$MEMTRACE" report --json "$TMPD/a.rec.gz" >"$TMPD/report.json" || fail "report failed"
"$MEMTRACE" report "$TMPD/a.rec.gz" >"$TMPD/report.txt" || fail "report (text) failed"
cat "$TMPD/report.txt" >&2
assert_contains "$TMPD/report.txt" "estimated from TLAB refills"
python3 - "$TMPD/live.json" "$TMPD/report.json" <<'PY' || fail "report and live alloc differ"
import json, sys
def alloc(p):
    return [json.loads(l) for l in open(p) if l.startswith('{"event":"alloc"')][0]
live, rep = alloc(sys.argv[1]), alloc(sys.argv[2])
for r in (live, rep):
    assert r["lost_events"] == 0, r
    assert r["mode"] == "tlab", r
ls = {c["class"]: c for c in live["classes"]}
rs = {c["class"]: c for c in rep["classes"]}
for n, want in (("AllocShares$Big", 0.5), ("AllocShares$Mid", 0.3), ("AllocShares$Small", 0.2)):
    a, b = ls[n]["share"], rs[n]["share"]
    # two estimators: ~1500 refills give the recording's share a standard
    # deviation of ~1.3 points; the live one reads the TLABs' contents
    assert abs(a - b) < 0.04, (n, a, b)
    # a sanity check that the names are the right ones: ~1500 TLAB samples
    # over 1 GiB leave a few points of noise (alloc_shares checks accuracy)
    assert abs(b - want) < 0.07, (n, b, want)
lt, rt = live["total_bytes"], rep["total_bytes"]
# the same refills (live's class table counts TLABs by their contents, the
# recording the refills: compare the refills)
assert abs(live["total_samples"] - rep["total_samples"]) <= 0.02 * live["total_samples"] + 2, \
    (live["total_samples"], rep["total_samples"])
assert abs(lt - rt) <= 0.02 * lt, (lt, rt)
print(f"live {live['total_samples']} samples {lt} B, recorded {rep['total_samples']} samples {rt} B")
PY
# the recording holds alloc samples and the type events they need, nothing else
python3 - "$TMPD/a.rec.gz" <<'PY' || fail "recording has unexpected events"
import gzip, json, sys
kinds, types, bad = {}, set(), 0
for l in gzip.open(sys.argv[1], "rt"):
    r = json.loads(l)
    k = r.get("k")
    kinds[k] = kinds.get(k, 0) + 1
    if k == "type_create":
        types.add(r["id"])
    if k == "alloc" and r.get("ref") and r["ref"] not in types:
        bad += 1
assert bad == 0, bad
assert set(kinds) <= {None, "name", "type_create", "type_load", "thread_create", "alloc", "end", "type_reclaim", "thread_destroy", "lost"}, kinds
assert kinds.get("alloc", 0) > 100, kinds
print(kinds)
PY
