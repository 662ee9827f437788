#!/usr/bin/env bash
# record_gap - the gap path live: `memtrace record` with a 16 KiB ring buffer
# (MEMTRACE_RING_KB) on an allocating JVM loses events; each loss is a gap
# marker followed by a resync of the threads (/proc) and of the classes (the
# JVM's class list through VMStructs). The recording passes `check`, the
# resynchronised classes are in it (flag 4), and the report still names the
# workload's classes.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx128m -XX:+UseSerialGC AllocShares --go "$TMPD/go" --mb 512
pid=$JVM_PID
MEMTRACE_RING_KB=16 "$MEMTRACE" record -p "$pid" -o "$TMPD/g.rec.gz" 2>"$TMPD/rec.err" &
r=$!
wait_for_line "$TMPD/rec.err" 'recording pid' 20 || { cat "$TMPD/rec.err"; fail "record did not start"; }
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 40 || fail "workload did not finish"
sleep 0.3
kill -INT "$r"
wait "$r" || { cat "$TMPD/rec.err"; fail "record failed"; }
cat "$TMPD/rec.err" >&2
assert_contains "$TMPD/rec.err" "resynchronisation(s) after lost events"
"$MEMTRACE" check "$TMPD/g.rec.gz" >"$TMPD/check.out" || { cat "$TMPD/check.out"; fail "check failed"; }
note "$(cat "$TMPD/check.out")"
"$MEMTRACE" report --json "$TMPD/g.rec.gz" >"$TMPD/report.json" || fail "report failed"
python3 - "$TMPD/g.rec.gz" "$TMPD/report.json" <<'PY' || fail "gap path: unexpected recording"
import gzip, json, sys
lost = resync_types = 0
names = {}
for l in gzip.open(sys.argv[1], "rt"):
    r = json.loads(l)
    k = r.get("k")
    if k == "name":
        names[r["id"]] = r["s"]
    if k == "lost":
        lost += 1
    if k == "type_create" and r.get("f", 0) & 4:
        resync_types += 1
    if k == "end":
        assert r["lost"] > 0, r
assert lost > 0, "no gap marker"
assert resync_types > 100, f"only {resync_types} classes resynchronised"
rep = [json.loads(l) for l in open(sys.argv[2]) if l.startswith('{"event":"alloc"')][0]
cls = {c["class"] for c in rep["classes"]}
assert {"AllocShares$Big", "AllocShares$Mid", "AllocShares$Small"} <= cls, cls
assert not any(c.startswith("(unknown") for c in cls), cls
print(f"{lost} gaps, {resync_types} classes resynchronised, lost {rep['lost_events']} events")
PY
