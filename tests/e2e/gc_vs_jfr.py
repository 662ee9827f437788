#!/usr/bin/env python3
"""gc_vs_jfr.py MEMTRACE_JSON JFR_JSON - compare `memtrace gc --json` with JFR.

Oracle: JFR's jdk.GarbageCollection and jdk.GCHeapSummary of the same run
(JFR runs from the JVM's start); only JFR collections that start after
memtrace's "start" record are compared: memtrace's window.
Mapping of "a collection": one memory-manager cycle in memtrace (see
user/analysis/gcpair.h) is one jdk.GarbageCollection event, except JFR's "G1Old",
which is G1's concurrent marking cycle (not a pause; memtrace sees only its
remark/cleanup pauses): those are left out of the comparison and printed.
Checks: equal counts, each pair full/young alike and with the same cause
(JFR's jdk.GarbageCollection "cause", GCCause::to_string's text; memtrace's
"cause" from GCMemoryManager::gc_end), equal counts per cause, the summary's
"causes" equal to the records', every record an "end of minor/major GC"
action matching its kind, total duration within 5 %,
heap used after each collection equal to JFR's "After GC" heapUsed within
1 MiB (JFR sums regions, the pools sum their own counters). memtrace's
records of kind "pause" (G1 remark and cleanup) are compared, by count, with
JFR's jdk.GCPhasePause events "Pause Remark" and "Pause Cleanup".
"""
import json
import sys

FULL = {"G1Full", "ParallelOld", "SerialOld", "PSMarkSweep"}


def load_memtrace(path):
    recs = [json.loads(l) for l in open(path) if l.startswith("{")]
    gcs = [r for r in recs if r.get("event") == "gc" and r["kind"] in ("young", "full")]
    other = [r for r in recs if r.get("event") == "gc" and r["kind"] not in ("young", "full")]
    summ = [r for r in recs if r.get("event") == "summary"]
    start = [r for r in recs if r.get("event") == "start"]
    return gcs, other, summ[-1] if summ else None, start[0]["start_ns"] if start else 0


def dur_ns(s):
    # JFR JSON durations look like "PT0.001234S"
    assert s.startswith("PT") and s.endswith("S"), s
    return float(s[2:-1]) * 1e9


def epoch_ns(s):
    # "2026-11-22T08:02:19.205792833Z" -> ns since the epoch (UTC)
    import calendar
    date, frac = s.rstrip("Z").split(".") if "." in s else (s.rstrip("Z"), "0")
    secs = calendar.timegm(__import__("time").strptime(date, "%Y-%m-%dT%H:%M:%S"))
    return secs * 10**9 + int(frac.ljust(9, "0")[:9])


def load_jfr(path, since_ns):
    doc = json.load(open(path))
    events = doc["recording"]["events"]
    gcs, after, phase_pauses = [], {}, 0
    for e in events:
        v = e["values"]
        if e["type"] == "jdk.GarbageCollection" and epoch_ns(v["startTime"]) >= since_ns:
            gcs.append({"gcId": v["gcId"], "name": v["name"], "start": v["startTime"],
                        "dur": dur_ns(v["duration"]), "cause": v["cause"]})
        elif e["type"] == "jdk.GCHeapSummary" and v["when"] == "After GC":
            after[v["gcId"]] = v["heapUsed"]
        elif (e["type"] == "jdk.GCPhasePause" and v["name"] in ("Pause Remark", "Pause Cleanup")
              and epoch_ns(v["startTime"]) >= since_ns):
            phase_pauses += 1
    gcs.sort(key=lambda g: g["gcId"])
    return gcs, after, phase_pauses


def main():
    mt, mt_other, summ, since = load_memtrace(sys.argv[1])
    jfr_all, after, phase_pauses = load_jfr(sys.argv[2], since)
    jfr = [g for g in jfr_all if g["name"] != "G1Old"]
    conc = [g for g in jfr_all if g["name"] == "G1Old"]
    ok = True
    print(f"memtrace: {len(mt)} collections ({len(mt_other)} other records); "
          f"JFR: {len(jfr)} collections (+{len(conc)} G1 concurrent cycles, not compared)")
    if summ is None:
        print("no summary record"); return 1
    if summ["gc_count"] != len(mt) + len(mt_other):
        print(f"summary gc_count {summ['gc_count']} != records {len(mt) + len(mt_other)}"); ok = False
    if summ["lost_events"] != 0:
        print(f"lost events: {summ['lost_events']}"); ok = False
    mt_pauses = [r for r in mt_other if r["kind"] == "pause"]
    print(f"pauses of concurrent cycles: memtrace {len(mt_pauses)}, JFR remark+cleanup {phase_pauses}")
    if len(mt_pauses) != phase_pauses:
        print("PAUSE COUNT MISMATCH"); ok = False
    if len(mt) != len(jfr) or len(mt) == 0:
        print("COUNT MISMATCH")
        print(" memtrace:", [(r["collector"], r["kind"]) for r in mt])
        print(" jfr:     ", [g["name"] for g in jfr])
        return 1
    tot_mt = sum(r["duration_ns"] for r in mt)
    tot_jfr = sum(g["dur"] for g in jfr)
    ratio = tot_mt / tot_jfr
    print(f"total duration: memtrace {tot_mt/1e6:.3f} ms, JFR {tot_jfr/1e6:.3f} ms, ratio {ratio:.4f}")
    if abs(ratio - 1) > 0.05:
        print("DURATION MISMATCH > 5 %"); ok = False
    if abs(summ["pause_total_ns"] - tot_mt) > 1 and not mt_other:
        print("summary pause_total_ns differs from the records' sum"); ok = False
    by_cause = lambda rs, k: {c: sum(1 for r in rs if r[k] == c) for c in sorted({r[k] for r in rs})}
    mt_causes, jfr_causes = by_cause(mt, "cause"), by_cause(jfr, "cause")
    print(f"causes: memtrace {mt_causes}")
    print(f"        JFR      {jfr_causes}")
    if mt_causes != jfr_causes:
        print("CAUSE COUNTS DIFFER"); ok = False
    all_causes = by_cause(mt + mt_other, "cause")
    all_causes.pop("", None)
    if summ.get("causes") != all_causes:
        print(f"summary causes {summ.get('causes')} != records {all_causes}"); ok = False
    for r, g in zip(mt, jfr):
        print(f"  #{r['seq']:<3} {r['collector']:<22} {r['duration_ns']/1e6:8.3f} ms {r['cause']:<22}"
              f"JFR {g['name']:<18} {g['dur']/1e6:8.3f} ms {g['cause']}")
        if r["cause"] != g["cause"]:
            print(f"seq {r['seq']}: cause {r['cause']!r}, JFR {g['cause']!r}"); ok = False
        want = "end of major GC" if r["full"] else "end of minor GC"
        if r["action"] != want:
            print(f"seq {r['seq']}: action {r['action']!r}, expected {want!r}"); ok = False
        full = g["name"] in FULL
        if r["full"] != full:
            print(f"seq {r['seq']}: memtrace full={r['full']} but JFR says {g['name']}"); ok = False
        used = sum(p["used_after"] for p in r["pools"] if p["heap"])
        j = after.get(g["gcId"])
        if j is None:
            print(f"JFR has no After GC heap summary for gcId {g['gcId']}"); ok = False
            continue
        if abs(used - j) > 1 << 20:
            print(f"seq {r['seq']} ({g['name']}): heap used after {used} vs JFR {j}"); ok = False
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
