#!/usr/bin/env python3
"""alloc_check.py MODE MEMTRACE_JSON WORKLOAD_OUT - `memtrace alloc` against a
workload whose answer is known by construction (tests/java/AllocShares.java).

shares: Big/Mid/Small byte shares are 50/30/20 % by construction; memtrace's
        shares among the three must be within 3 points; its total bytes within
        10 % of the JVM's own count for the allocating thread (ThreadMXBean).
exact:  with --exact, the object counts of each class equal the workload's.
"""
import json
import re
import sys

mode, mt_path, out_path = sys.argv[1:4]
recs = [json.loads(l) for l in open(mt_path) if l.startswith("{")]
final = [r for r in recs if r.get("event") == "alloc"][-1]
classes = {c["class"]: c for c in final["classes"]}
out = open(out_path).read()
objs = dict((k, int(v)) for k, v in re.findall(r"(Big|Mid|Small)=(\d+)", out))
jvm_bytes = int(re.search(r"allocated_bytes (\d+)", out).group(1))
ok = True
names = {k: "AllocShares$" + k for k in ("Big", "Mid", "Small")}
missing = [n for n in names.values() if n not in classes]
if missing:
    print("classes missing from memtrace's answer:", missing, "got", list(classes)[:10])
    sys.exit(1)
if final["lost_events"] != 0:
    print("lost events:", final["lost_events"]); ok = False

if mode == "shares":
    three = sum(classes[n]["bytes"] for n in names.values())
    for k, want in (("Big", 50.0), ("Mid", 30.0), ("Small", 20.0)):
        got = 100.0 * classes[names[k]]["bytes"] / three
        print(f"{k:6} share {got:5.1f} % (by construction {want:.0f} %), "
              f"{classes[names[k]]['samples']} samples")
        if abs(got - want) > 3.0:
            print("  SHARE OFF BY MORE THAN 3 POINTS"); ok = False
    ratio = final["total_bytes"] / jvm_bytes
    print(f"total: memtrace {final['total_bytes']} B, JVM (ThreadMXBean) {jvm_bytes} B, ratio {ratio:.4f}")
    if abs(ratio - 1) > 0.10:
        print("  TOTAL OFF BY MORE THAN 10 %"); ok = False
elif mode == "exact":
    for k in ("Big", "Mid", "Small"):
        got = classes[names[k]]["samples"]
        print(f"{k:6} objects: memtrace {got}, workload {objs[k]}")
        if got != objs[k]:
            ok = False
    if final["bytes_known"]:
        sizes = {k: classes[names[k]]["bytes"] // max(1, classes[names[k]]["samples"]) for k in names}
        print("bytes per object:", sizes)
        if sizes != {"Big": 128, "Mid": 64, "Small": 32}:
            print("  object sizes differ from 128/64/32"); ok = False
    else:
        print("bytes not reported by memtrace for this JDK (its object__alloc size is unreliable)")
        if any(c["bytes"] for c in final["classes"]):
            print("  but bytes were reported"); ok = False
print("OK" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
