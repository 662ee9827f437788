#!/usr/bin/env bash
# leaks_rank - LeakWorkload plants two leaks (LeakedSession + long[] from
# leakSessions, byte[] from leakBuffers), a 40 MB cache filled once and churn
# from 16 sites. `memtrace leaks` must rank both leak sites above everything
# else, never list the cache (char[]) or churn as suspects, name the
# allocating Java frames, and leave the JVM running with the agent dormant.
# Both leak sites keep about all they allocate (survival, from the samples:
# between 0.2 and 1, with an interval inside [0, 1]), every churn site about
# nothing (< 0.05); the BPF per-site counters (sites.bpf.c) give them their
# allocation rates, and the fixed map must not overflow here. No live
# estimate exceeds its class's bytes in the heap walk at the end (#31.1).
# TIMEOUT: 75
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m LeakWorkload
"$MEMTRACE" --json leaks -p "$JVM_PID" --sampled --duration 16 --interval 64k --top 200 >"$TMPD/l.json" 2>"$TMPD/l.err" ||
	{ cat "$TMPD/l.err"; fail "memtrace leaks"; }
python3 "$ROOT/tests/e2e/check_leaks.py" "$TMPD/l.json" --strict || fail "ranking"
# no live estimate above what the heap walk at the end found of its class
# (issue #31.1), and that walk's figure against jmap -histo:live's right after
# (the leaks grow meanwhile: jmap's at least ~ ours)
jtool jmap -histo:live "$JVM_PID" >"$TMPD/histo.txt" || fail "jmap -histo:live"
python3 - "$TMPD/l.json" "$TMPD/histo.txt" <<'PY' || fail "live estimates above the heap's"
import json, re, sys
r = [json.loads(l) for l in open(sys.argv[1]) if '"suspects"' in l][-1]
jm = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)", line)
    if m:
        jm[m.group(3)] = int(m.group(2))
names = {"[B": "byte[]", "[J": "long[]", "[C": "char[]", "[I": "int[]", "[Ljava.lang.Object;": "java.lang.Object[]"}
jm = {names.get(k, k): v for k, v in jm.items()}
for g in r["suspects"]:
    h = g.get("heap_class_bytes")
    assert h is not None, ("no heap figure", g["class"])
    assert g["live_bytes"] <= h and g["live_bytes_ci95"][1] <= h, g
    j = jm.get(g["class"], 0)
    assert h <= j * 1.5 + (1 << 20), ("the walk's class bytes above jmap's", g["class"], h, j)
    print("  %s: live %d <= heap %d (jmap after: %d)%s" % (g["class"], g["live_bytes"], h, j,
          " capped" if g["live_capped_by_heap"] else ""), file=sys.stderr)
PY
# the JVM keeps running; the agent went dormant and serves the next session
kill -0 "$JVM_PID" || fail "JVM died"
"$MEMTRACE" --json attach -p "$JVM_PID" >"$TMPD/a.json" || fail "attach after leaks"
assert_eq "$(json_get "$TMPD/a.json" 'recs[-1]["loaded_now"]')" False "agent reused"
exit 0
