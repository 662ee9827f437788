#!/usr/bin/env bash
# record_objects - the agent's sampled objects in the event stream:
# `memtrace record --categories objects,type` loads memtrace's JVMTI agent;
# each sample is an object creation typed by its class (created first: rule
# 2), each ObjectFree of a sample its reclamation (after young collections of
# the garbage AllocShares makes). `check` passes; most samples are of the
# workload's three classes, and most are reclaimed by the end.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx128m -XX:+UseSerialGC AllocShares --go "$TMPD/go" --mb 512
pid=$JVM_PID
"$MEMTRACE" record -p "$pid" -o "$TMPD/o.rec.gz" --categories objects,type \
	--object-interval 64k 2>"$TMPD/rec.err" &
r=$!
wait_for_line "$TMPD/rec.err" 'recording pid' 30 || { cat "$TMPD/rec.err"; fail "record did not start"; }
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 40 || fail "workload did not finish"
sleep 0.5
kill -INT "$r"
wait "$r" || { cat "$TMPD/rec.err"; fail "record failed"; }
cat "$TMPD/rec.err" >&2
assert_contains "$TMPD/rec.err" "objects: [0-9]* sampled"
"$MEMTRACE" check "$TMPD/o.rec.gz" >"$TMPD/check.out" || { cat "$TMPD/check.out"; fail "check failed"; }
note "$(cat "$TMPD/check.out")"
python3 - "$TMPD/o.rec.gz" <<'PY' || fail "unexpected object events"
import gzip, json, sys
names, types, made, gone, by = {}, {}, 0, 0, {}
for l in gzip.open(sys.argv[1], "rt"):
    r = json.loads(l)
    k = r.get("k")
    if k == "name":
        names[r["id"]] = r["s"]
    elif k == "type_create":
        types[r["id"]] = names[r["n"]]
    elif k == "obj_create":
        made += 1
        c = types.get(r.get("ref"), "?")
        by[c] = by.get(c, 0) + 1
        assert r["v"][0] > 0, r
    elif k == "obj_reclaim":
        gone += 1
ours = sum(by.get("AllocShares$" + n, 0) for n in ("Big", "Mid", "Small"))
assert made > 1000, (made, by)
assert ours > 0.9 * made, (ours, made, by)
assert gone > 0.5 * made, (gone, made)
print(f"{made} objects sampled ({ours} of AllocShares), {gone} reclaimed")
PY
"$MEMTRACE" report --json "$TMPD/o.rec.gz" >"$TMPD/report.json" || fail "report failed"
"$MEMTRACE" report "$TMPD/o.rec.gz" >&2 || fail "report (text) failed"
python3 - "$TMPD/report.json" <<'PY' || fail "report's sampled objects are wrong"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
oc = {r["class"]: r for r in recs if r["event"] == "objects_class"}
big = oc["AllocShares$Big"]
assert big["sampled"] > 100 and 0 <= big["live"] <= big["sampled"], big
assert big["bytes"] == 128 * big["sampled"], big
PY
