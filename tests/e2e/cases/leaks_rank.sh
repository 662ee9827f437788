#!/usr/bin/env bash
# leaks_rank - LeakWorkload plants two leaks (LeakedSession + long[] from
# leakSessions, byte[] from leakBuffers), a 40 MB cache filled once and churn
# from 16 sites. `memtrace leaks` must rank both leak sites above everything
# else, never list the cache (char[]) or churn as suspects, name the
# allocating Java frames, and leave the JVM running with the agent dormant.
# The BPF per-site counters (sites.bpf.c) must relate survivors to volume:
# both leak sites keep about all they allocate (survival near 1: between 0.2
# and 8, TLAB-refill weights are coarse for a site of ~1 MB/s), every churn
# site about nothing (< 0.05), and the fixed map must not overflow here.
# TIMEOUT: 75
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m LeakWorkload
"$MEMTRACE" --json leaks -p "$JVM_PID" --duration 16 --interval 64k --top 200 >"$TMPD/l.json" 2>"$TMPD/l.err" ||
	{ cat "$TMPD/l.err"; fail "memtrace leaks"; }
python3 - "$TMPD/l.json" <<'PY' || fail "ranking"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
S = r["suspects"]
for i, s in enumerate(S):
    print("  #%d %-28s %8.0f B/s conf %.3f n=%d  %s" % (i + 1, s["class"], s["growth_bytes_per_s"],
          s["confidence"], s["samples"], s["site"][:90]), file=sys.stderr)
assert r["dropped_allocs"] == 0 and r["dropped_frees"] == 0, "losses"
for k in ("class", "site", "live_bytes", "growth_bytes_per_s", "samples", "confidence"):
    assert all(k in s for s in S), k
def rank(pred):
    for i, s in enumerate(S):
        if pred(s): return i
    return None
r1 = rank(lambda s: "leakSessions" in s["site"])
r2 = rank(lambda s: "leakBuffers" in s["site"] and s["class"] == "byte[]")
assert r1 is not None, "leak 1 (leakSessions) not a suspect"
assert r2 is not None, "leak 2 (leakBuffers byte[]) not a suspect"
# both leaks above everything that is neither leak's site
others = [i for i, s in enumerate(S) if "leakSessions" not in s["site"] and "leakBuffers" not in s["site"]]
assert not others or min(others) > max(r1, r2), "a non-leak outranks a leak: %s" % others
assert not any(s["class"] == "char[]" for s in S), "the stable cache is a suspect"
assert not any("churn" in s["site"] for s in S), "churn is a suspect"
assert S[r1]["confidence"] >= 0.95 and S[r2]["confidence"] >= 0.95
assert S[r1]["growth_bytes_per_s"] > 0 and S[r1]["live_bytes"] > 0
# allocation volume per site from BPF, and the survival fraction
sc = r["site_counters"]
print("  site counters: %d keys, %d methods, %d B total, overflow %d refills" % (sc["keys"],
      sc["methods"], sc["all_bytes"], sc["overflow_refills"]), file=sys.stderr)
assert sc["keys"] > 0 and sc["all_bytes"] > 0 and sc["overflow_refills"] == 0, sc
for i in (r1, r2):
    s = S[i]
    print("  leak  %-26s %-28s survival %.3f (%s)" % (s["class"], s["site"][-28:], s["survival"],
          s["alloc_method"]), file=sys.stderr)
    assert 0.2 <= s["survival"] <= 8, "leak survival not near 1: %s" % s
churn = [o for o in r["others"] if "churn" in o["site"] and "survival" in o]
for o in churn[:4]:
    print("  churn %-26s %-28s survival %.4f (%s)" % (o["class"], o["site"][-28:], o["survival"],
          o["alloc_method"]), file=sys.stderr)
assert len(churn) >= 8, "churn sites without a volume: %d" % len(churn)
worst = max(o["survival"] for o in churn)
assert worst < 0.05, "a churn site keeps %.3f of what it allocates" % worst
assert min(S[r1]["survival"], S[r2]["survival"]) > 10 * worst
PY
# the JVM keeps running; the agent went dormant and serves the next session
kill -0 "$JVM_PID" || fail "JVM died"
"$MEMTRACE" --json attach -p "$JVM_PID" >"$TMPD/a.json" || fail "attach after leaks"
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["loaded_now"]')" False "agent reused"
exit 0
