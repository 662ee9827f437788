#!/usr/bin/env bash
# record_gc - `memtrace record` next to live `memtrace gc` on the same JVM:
# an unfiltered recording whose `report --json` gc figures equal the live
# ones, and a filtered one (categories, thread glob, a scheduled pause and a
# signal pause/resume in the middle); `check` passes on both. Each
# collection's cause and action (gc_cause events) equal the live ones.
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx128m -Xms128m -XX:+UseSerialGC GcWorkload --go "$TMPD/go" --alloc-mb 384 --full 2
pid=$JVM_PID
"$MEMTRACE" gc -p "$pid" --json >"$TMPD/live.json" 2>"$TMPD/live.err" &
g=$!
"$MEMTRACE" record -p "$pid" -o "$TMPD/all.rec.gz" 2>"$TMPD/rec1.err" &
r1=$!
"$MEMTRACE" record -p "$pid" -o "$TMPD/part.rec.gz" --categories thread,inv,pool,type \
	--thread 'VM*' --pause 0.5-1.0 2>"$TMPD/rec2.err" &
r2=$!
wait_for_line "$TMPD/live.json" '"start"' 20 || { cat "$TMPD/live.err"; fail "memtrace gc did not start"; }
wait_for_line "$TMPD/rec1.err" 'recording pid' 20 || { cat "$TMPD/rec1.err"; fail "record did not start"; }
wait_for_line "$TMPD/rec2.err" 'recording pid' 20 || { cat "$TMPD/rec2.err"; fail "record did not start"; }
# Pauses first (signal, then the scheduled 0.5-1.0 s one), collections after:
# on a fast machine the whole workload can fit inside a pause window, and the
# filtered recording must still hold collections. serve_query.sh checks that
# nothing is reported inside a paused window.
sleep 0.2; kill -USR1 "$r2"; sleep 0.3; kill -USR2 "$r2"
sleep 0.7
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 40 || fail "workload did not finish"
sleep 0.5
kill -INT "$g" "$r1" "$r2"
wait "$g" || fail "memtrace gc failed"
wait "$r1" || { cat "$TMPD/rec1.err"; fail "record (all) failed"; }
wait "$r2" || { cat "$TMPD/rec2.err"; fail "record (filtered) failed"; }
grep -q 'reporting paused (signal)' "$TMPD/rec2.err" || fail "SIGUSR1 did not pause"

for f in all part; do
	"$MEMTRACE" check "$TMPD/$f.rec.gz" >"$TMPD/$f.check" || { cat "$TMPD/$f.check"; fail "check failed on $f"; }
	note "$(cat "$TMPD/$f.check")"
done
"$MEMTRACE" report --json "$TMPD/all.rec.gz" >"$TMPD/report.json" || fail "report failed"
"$MEMTRACE" report "$TMPD/all.rec.gz" >"$TMPD/report.txt" || fail "report (text) failed"
python3 - "$TMPD/live.json" "$TMPD/report.json" <<'PY' || fail "report and live gc differ"
import json, sys
def load(p):
    return [json.loads(l) for l in open(p) if l.startswith("{")]
live, rep = load(sys.argv[1]), load(sys.argv[2])
lg = [r for r in live if r["event"] == "gc"]
rg = [r for r in rep if r["event"] == "gc"]
assert len(lg) >= 3, f"too few collections: {len(lg)}"
assert len(lg) == len(rg), f"live {len(lg)} collections, report {len(rg)}"
for a, b in zip(lg, rg):
    for k in ("seq", "kind", "full", "collector", "cause", "action"):
        assert a[k] == b[k], (k, a, b)
    assert a["cause"] in ("Allocation Failure", "System.gc()"), a
    assert abs(a["duration_ns"] - b["duration_ns"]) < 2_000_000, (a, b)
    assert abs(a["start_mono_ns"] - b["start_mono_ns"]) < 2_000_000, (a, b)
    pa = {p["name"]: p for p in a["pools"]}
    pb = {p["name"]: p for p in b["pools"]}
    assert pa.keys() == pb.keys(), (a, b)
    for n in pa:
        for k in ("used_before", "used_after", "committed", "max"):
            assert pa[n][k] == pb[n][k], (n, k, pa[n], pb[n])
ls = [r for r in live if r["event"] == "summary"][0]
rs = [r for r in rep if r["event"] == "summary"][0]
for k in ("gc_count", "young", "full", "lost_events", "unpaired_events", "causes"):
    assert ls[k] == rs[k], (k, ls[k], rs[k])
print(f"{len(lg)} collections equal")
PY
# the filtered recording reports only VM* threads and marks late creations
python3 - "$TMPD/part.rec.gz" <<'PY' || fail "filtered recording has unexpected events"
import gzip, json, sys
kinds = set()
for l in gzip.open(sys.argv[1], "rt"):
    r = json.loads(l)
    kinds.add(r.get("k"))
assert not kinds & {"acquire", "release", "obj_create", "alloc"}, kinds
assert "enter" in kinds and "pool" in kinds and "gc_cause" in kinds, kinds
PY
