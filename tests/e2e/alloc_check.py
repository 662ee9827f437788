#!/usr/bin/env python3
"""alloc_check.py MODE MEMTRACE_JSON WORKLOAD_OUT - `memtrace alloc` against a
workload whose answer is known by construction (tests/java/AllocShares.java).

shares: Big/Mid/Small byte shares are 50/30/20 % by construction; memtrace's
        shares among the three must be within 3 points; its total bytes within
        10 % of the JVM's own count for the allocating thread (ThreadMXBean);
        both widened to memtrace's own standard errors when its budget made
        it thin the samples (estimate.py).
exact:  with --exact, the object counts of each class equal the workload's.
thin:   as shares (total within 5 %), with samples kept at random with
        probability 0.1 (MEMTRACE_TEST_DUTY=0.1:1): the JSON says keep 0.1.
windows:as shares (total within 35 %: a window a second, the estimate varies
        with the workload's rate between windows), with the uprobes attached
        30 % of the time (MEMTRACE_TEST_DUTY=1:0.3): the JSON says so.
budget: memtrace's own choice under --budget: it thinned or windowed (keep < 1
        or observed < 0.9) exactly when taking every sample would have cost
        the busiest thread more than the budget (rate x cost per sample, as
        it reports them); total within 5 %, or four times thinning's spread.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from estimate import share_tolerance, total_tolerance  # noqa: E402

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

tolerance = total_tolerance(final, 0.10)
if mode in ("thin", "windows", "budget"):
    dc = final.get("duty_cycle")
    print("duty cycle:", dc)
    if not dc:
        print("  no duty_cycle in the JSON"); sys.exit(1)
    if mode == "thin" and (abs(dc["keep"] - 0.1) > 0.001 or dc["observed"] < 0.99):
        print("  keep is not 0.1, or not observed all the time"); ok = False
    if mode == "windows" and not 0.1 <= dc["observed"] <= 0.6:
        print("  observed share not near 0.3"); ok = False
    if mode == "budget":
        over = dc["max_cost_share"] > dc["budget"]
        acted = dc["kept_share"] < 0.999 or dc["observed"] < 0.999
        print(f"  every sample would have cost the busiest thread up to "
              f"{100 * dc['max_cost_share']:.3f} % (budget {100 * dc['budget']:.3f} %): "
              f"{'thinned or windowed' if acted else 'took all'}")
        if over != acted:
            print("  the choice does not follow the budget"); ok = False
        # the trap alone over the budget: time windows, by default
        if dc["trap_ns"] * dc["busiest_thread_samples_per_s"] * 1e-9 > dc["budget"] and \
                dc["observed"] > 0.999:
            print("  the trap alone is over the budget, yet no time windows"); ok = False
    # time windows: one a second, the estimate varies with the workload's
    # rate between them (bench/alloc_budget.sh measures it over a minute);
    # a window's scale applied wrong would be off by 3x
    windowed = mode == "windows" or dc["observed"] < 0.999
    # thinning is unbiased; memtrace reports the spread of its total (the
    # Horvitz-Thompson variance of the kept samples' weights): the JVM's count
    # must be within four of those standard errors, plus 2 % for what
    # sampling refills misses without thinning (measured 0.999-1.005)
    se = dc.get("total_bytes_stderr")
    if dc.get("counted_total"):
        # the total is the JVM's own per-thread counters' (probe/threadctr.h):
        # no spread, and within 1 % of ThreadMXBean's count of the workload's
        # thread (other threads allocate a little: the attach listener ...)
        if se != 0:
            print("  a spread reported for a counted total"); ok = False
        tolerance = 0.01
    elif windowed:
        if se is not None:
            print("  a standard error reported under time windows"); ok = False
        tolerance = 0.35
    else:
        if se is None or se < 0:
            print("  no total_bytes_stderr while thinning"); sys.exit(1)
        if dc["kept_share"] < 0.999 and se <= 0:
            print("  zero spread for a thinned estimate"); ok = False
        if dc["kept_share"] >= 0.999 and se != 0:
            print("  a spread although every sample was kept"); ok = False
        tolerance = 0.02 + 4 * se / final["total_bytes"]
    print(f"  tolerance {100 * tolerance:.1f} % (kept {dc['kept_share']:.3f}, "
          f"standard error {se} B)")
    mode = "shares"
if mode == "shares":
    three = sum(classes[n]["bytes"] for n in names.values())
    for k, want in (("Big", 50.0), ("Mid", 30.0), ("Small", 20.0)):
        got = 100.0 * classes[names[k]]["bytes"] / three
        # memtrace's own spread of the share (thinning, and TLAB slices that
        # miss a class): four standard errors plus a point, at least 3 points
        se = classes[names[k]].get("share_stderr")
        tol = share_tolerance(classes[names[k]], 3.0,
                              sum(classes[n]["share"] for n in names.values()))
        print(f"{k:6} share {got:5.1f} % (by construction {want:.0f} %), "
              f"{classes[names[k]]['samples']} samples, standard error "
              f"{'-' if se is None else f'{100 * se:.2f}'} points, tolerance {tol:.1f}")
        if abs(got - want) > tol:
            print(f"  SHARE OFF BY MORE THAN {tol:.1f} POINTS"); ok = False
    ratio = final["total_bytes"] / jvm_bytes
    print(f"total: memtrace {final['total_bytes']} B, JVM (ThreadMXBean) {jvm_bytes} B, ratio {ratio:.4f}")
    if abs(ratio - 1) > tolerance:
        print(f"  TOTAL OFF BY MORE THAN {100 * tolerance:.0f} %"); ok = False
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
        if any(c["bytes"] for c in final["classes"]) or final["total_bytes"] or final["total_bytes_by_refills"]:
            print("  but bytes were reported"); ok = False
print("OK" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
