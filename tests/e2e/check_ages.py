#!/usr/bin/env python3
# check_ages.py FILE - the age-range assertions on AgeWorkload, shared by
# age_construction.sh (live `memtrace age --by site`) and record_age_leaks.sh
# (`memtrace report --by site` on a recording): the last JSON record with
# "buckets" must show >= 25 GCs, no losses, no live sample of site keepK
# older than k's range (2 % slack: an object freed by the last GC may not have
# had its ObjectFree delivered), and each k > 0 sampled in its own range.
import json, sys

recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
r = [x for x in recs if "buckets" in x][-1]
assert r.get("available", True), r
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
