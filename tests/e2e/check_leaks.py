#!/usr/bin/env python3
# check_leaks.py FILE - the leak-ranking assertions on LeakWorkload, shared by
# leaks_rank.sh (live `memtrace leaks`) and record_age_leaks.sh (`memtrace
# report` on a recording): in the last JSON record with "suspects", both
# planted leak sites (leakSessions; leakBuffers' byte[]) rank above every
# other suspect with confidence >= 0.95, the stable cache (char[]) and churn
# are not suspects; then both leaks keep most of what they allocate
# (survival, from the samples: 0.2-1, the part younger than K GCs at the end
# is not old yet) and every churn site (>= 8) less than 0.05; every group's
# survival is at most 1 and inside its 95% interval; the BPF per-site volumes
# give both leaks and >= 8 churn sites an allocation rate. With --strict (live,
# where the window and the volumes are the whole run): no overflow of the BPF
# map and both leaks keep 10x more of their allocation than the worst churn site.
import json, sys

recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
r = [x for x in recs if "suspects" in x][-1]
assert r.get("available", True), r
S = r["suspects"]
for i, s in enumerate(S):
    print("  #%d %-28s %8.0f B/s conf %.3f n=%d  %s" % (i + 1, s["class"], s["growth_bytes_per_s"],
          s["confidence"], s["samples"], s["site"][:90]), file=sys.stderr)
assert r["dropped_allocs"] == 0 and r["dropped_frees"] == 0, "losses"
for k in ("class", "site", "live_bytes", "growth_bytes_per_s", "samples", "confidence"):
    assert all(k in s for s in S), k


def rank(pred):
    for i, s in enumerate(S):
        if pred(s):
            return i
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
sc = r["site_counters"]
assert sc and sc["keys"] > 0 and sc["all_bytes"] > 0, sc
print("  site counters: %d keys, %d B total, overflow %d refills" % (sc["keys"], sc["all_bytes"],
      sc.get("overflow_refills", 0)), file=sys.stderr)
for g in S + r["others"]:
    if "survival" in g:
        assert 0 <= g["survival_lo"] <= g["survival"] <= g["survival_hi"] <= 1, g
for i in (r1, r2):
    s = S[i]
    print("  leak  %-26s survival %.3f [%.3f..%.3f] (%s)" % (s["class"], s["survival"],
          s["survival_lo"], s["survival_hi"], s["alloc_method"]), file=sys.stderr)
    assert 0.2 <= s["survival"] <= 1, "leak survival not near 1: %s" % s
    assert s["alloc_bytes"] > 0, "no BPF volume for a leak: %s" % s
churn = [o for o in r["others"] if "churn" in o["site"] and "survival" in o]
assert len(churn) >= 8, "churn sites without a survival: %d" % len(churn)
assert sum("alloc_bytes" in o for o in churn) >= 8, "churn sites without a volume"
worst = max(o["survival"] for o in churn)
assert worst < 0.05, "a churn site keeps %.3f of what it allocates" % worst
if "--strict" in sys.argv[2:]:
    assert sc["overflow_refills"] == 0, sc
    assert min(S[r1]["survival"], S[r2]["survival"]) > 10 * worst
