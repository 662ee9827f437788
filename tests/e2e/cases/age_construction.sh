#!/usr/bin/env bash
# age_construction - AgeWorkload keeps objects of site keepK alive for exactly
# k System.gc() collections (k = 0, 1, 3, 6, 12, 20; nothing else collects).
# `memtrace age --by site` must put every live sample of keepK in an age
# range no higher than k's, have samples in k's own range (the oldest batch),
# and show none of keep0 (dropped before any GC) older than 0.
# TIMEOUT: 60
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx128m AgeWorkload
"$MEMTRACE" --json age -p "$JVM_PID" --duration 6 --interval 2k --by site >"$TMPD/a.json" 2>"$TMPD/a.err" ||
	{ cat "$TMPD/a.err"; fail "memtrace age"; }
python3 - "$TMPD/a.json" <<'PY' || fail "ages"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
names = r["buckets"]
def bucket(age):
    return 0 if age == 0 else 1 if age == 1 else 2 if age < 4 else 3 if age < 8 else 4 if age < 16 else 5
print("  gcs %d, live samples %d" % (r["gcs"], r["live_samples"]), file=sys.stderr)
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
    # an object freed by the last GC may not have had its ObjectFree delivered: 2% slack
    assert above <= max(1, total // 50), "keep%d: %d of %d samples older than %d GCs" % (k, above, total, k)
    if k > 0:
        assert counts[bucket(k)] > 0, "keep%d: nothing in its own range %s" % (k, names[bucket(k)])
        seen.add(k)
assert seen == {1, 3, 6, 12, 20}, "sites seen: %s" % sorted(seen)
PY
kill -0 "$JVM_PID" || fail "JVM died"
exit 0
