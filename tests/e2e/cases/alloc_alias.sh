#!/usr/bin/env bash
# alloc_alias - class shares under a strictly periodic allocation loop
# (tests/java/AllocAlias.java: 6 long[94], 3 char[376], 12 Obj64 per
# iteration = 60/30/10 % of the bytes by construction). Sampling TLAB refills
# by the class that opens each TLAB reads it as 5/9, 3/9, 1/9 (the refill
# falls on the same positions of the pattern); memtrace's class table comes
# from the TLABs' contents (include/memtrace/alloc.h) and must be within 2
# points of the construction, its total within 5 % of ThreadMXBean (both
# widened to four of memtrace's standard errors when its budget thinned the
# samples: tests/e2e/estimate.py). JFR's
# jdk.ObjectAllocationSample on the same run is printed beside it, not
# asserted (it samples the refills too, throttled: its shares vary by run).
# TIMEOUT: 90
. "$ROOT/tests/e2e/lib.sh"

jvm_start w -Xmx256m -XX:StartFlightRecording=name=mt,settings=profile AllocAlias \
	--go "$TMPD/go" --mb 3072
"$MEMTRACE" alloc -p "$JVM_PID" --json >"$TMPD/mt.json" 2>"$TMPD/mt.err" &
mt=$!
wait_for_line "$TMPD/mt.json" '"start"' 20 || { cat "$TMPD/mt.err"; fail "alloc did not start"; }
touch "$TMPD/go"
wait_for_line "$TMPD/w.out" DONE 60 || fail "workload did not finish"
kill -INT $mt; wait $mt || { cat "$TMPD/mt.err"; fail "alloc exited non-zero"; }
jtool jcmd "$JVM_PID" JFR.dump name=mt filename="$TMPD/a.jfr" >/dev/null || fail "JFR.dump"
jtool jfr print --json --events jdk.ObjectAllocationSample "$TMPD/a.jfr" >"$TMPD/a.jfr.json" ||
	fail "jfr print"
PYTHONPATH="$ROOT/tests/e2e" python3 - "$TMPD/mt.json" "$TMPD/w.out" "$TMPD/a.jfr.json" <<'PY' || fail "class shares off"
import json, re, sys
from estimate import share_tolerance, total_tolerance
d = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"event":"alloc"')][0]
jvm = int(re.search(r"allocated_bytes (\d+)", open(sys.argv[2]).read()).group(1))
names = ["long[]", "char[]", "AllocAlias$Obj64"]
want = [60.0, 30.0, 10.0]
c = {x["class"]: x["bytes"] for x in d["classes"]}
recs = {x["class"]: x for x in d["classes"]}
among = sum(recs[k]["share"] for k in names if k in recs)
three = sum(c.get(k, 0) for k in names)
got = [100 * c.get(k, 0) / three for k in names]
jfr = {}
for e in json.load(open(sys.argv[3]))["recording"]["events"]:
    n = {"[J": "long[]", "[C": "char[]"}.get(e["values"]["objectClass"]["name"],
                                            e["values"]["objectClass"]["name"])
    jfr[n] = jfr.get(n, 0) + e["values"]["weight"]
jt = sum(jfr.get(k, 0) for k in names) or 1
print("class shares from:", d.get("class_shares_from"), d.get("tlab_contents"))
ok = d.get("class_shares_from") == "tlab_contents"
for k, g, w in zip(names, got, want):
    tol = share_tolerance(recs.get(k, {}), 2.0, among)
    print(f"  {k:18} memtrace {g:5.1f} %  JFR {100 * jfr.get(k, 0) / jt:5.1f} %  "
          f"(by construction {w:.0f} %; tolerance {tol:.1f} points)")
    ok &= abs(g - w) <= tol
ratio = d["total_bytes"] / jvm
tol = total_tolerance(d, 0.05)
print(f"  total: memtrace {d['total_bytes']} B, ThreadMXBean {jvm} B, ratio {ratio:.4f} "
      f"(tolerance {100 * tol:.1f} %; duty cycle {d.get('duty_cycle')})")
ok &= abs(ratio - 1) <= tol
sys.exit(0 if ok else 1)
PY
