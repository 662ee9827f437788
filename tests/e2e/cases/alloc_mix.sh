#!/usr/bin/env bash
# alloc_mix - class shares where objects of very different sizes are mixed
# within every TLAB (#31.15): tests/java/AllocMix.java allocates, round after
# round, 1 byte[2000], 40 Small, 10 Mid and 2 Object[14] interleaved (byte[]
# ~55 % of the bytes, Small ~26 %, Mid ~15 %, Object[] ~4 %; each class's
# size measured by the JVM itself, the counts known). Tiered and -Xint (an
# interpreter-heavy program: where JFR and memtrace differed by 3.6-4.8
# points while memtrace said +-0.3). Every class's share must lie within
# three of memtrace's own standard errors of the truth (its printed interval
# is two: a 95 % interval that covers the truth) or 1 point (below), and
# that interval must be useful (at most 3 points either side). Before stop
# 30 the parse read each TLAB's first 8 KiB from its first object on, and
# the object that opens a TLAB is the one that did not fit in the previous
# one, large ones far more often than their share: byte[] read 64.5 % here,
# 78 standard errors off.
# The collapsed stacks give each class the table's bytes (each class is
# allocated by a method of its own). JFR's jdk.ObjectAllocationSample on the
# same run is printed beside it, not asserted.
# --budget 0: every sample kept, so that the check is of the parse and its
# own spread. Under the default budget's thinning and time windows (keep
# 0.02-0.3) 2 of ~14 runs on JDK 25 had shares 5-6 of their standard errors
# off (byte[] 52.40 +-0.74, 65.46 +-4.15): the thinned estimator's stated
# spread is still too narrow there (#31.15, left open). With every sample
# kept a residual bias remains, byte[] +0.28 points over 11 runs (+0.07 to
# +0.53, up to 2.8 standard errors; a clean clone's make check saw +0.57,
# 4 standard errors, on JDK 25): a share may be 1 point off whatever its
# interval (also left open; stop 29's parse was 10 points off).
# TIMEOUT: 150
. "$ROOT/tests/e2e/lib.sh"

for mode in tiered int; do
	flags=()
	mb=2048
	[ $mode = int ] && { flags+=(-Xint); mb=768; }
	rm -f "$TMPD/go"
	jvm_start "w$mode" -Xmx256m "${flags[@]}" -XX:StartFlightRecording=name=mt,settings=profile \
		AllocMix --go "$TMPD/go" --mb $mb
	pid=$JVM_PID
	"$MEMTRACE" alloc -p "$pid" --budget 0 --json --by stack --collapsed "$TMPD/$mode.collapsed" \
		>"$TMPD/$mode.json" 2>"$TMPD/$mode.err" &
	mt=$!
	wait_for_line "$TMPD/$mode.json" '"start"' 30 || { cat "$TMPD/$mode.err"; fail "alloc did not start"; }
	touch "$TMPD/go"
	wait_for_line "$TMPD/w$mode.out" DONE 90 || fail "workload did not finish ($mode)"
	kill -INT $mt; wait $mt || { cat "$TMPD/$mode.err"; fail "alloc exited non-zero ($mode)"; }
	"$JAVA_HOME/bin/jcmd" "$pid" JFR.dump name=mt filename="$TMPD/$mode.jfr" >/dev/null || fail "JFR.dump"
	"$JAVA_HOME/bin/jfr" print --json --events jdk.ObjectAllocationSample "$TMPD/$mode.jfr" \
		>"$TMPD/$mode.jfr.json" || fail "jfr print"
	jvm_stop "$pid"
	echo "== $mode (JDK $JDK)"
	python3 - "$TMPD" "$mode" <<'PY' || fail "class shares off ($mode)"
import json, re, sys
tmpd, mode = sys.argv[1:3]
out = open(f"{tmpd}/w{mode}.out").read()
size = {m[0]: int(m[1]) for m in re.findall(r"^size (\S+) (\d+)$", out, re.M)}
count = {m[0]: int(m[1]) for m in re.findall(r"^count (\S+) (\d+)$", out, re.M)}
names = list(count)
truth = {k: size[k] * count[k] for k in names}
tt = sum(truth.values())
d = [json.loads(l) for l in open(f"{tmpd}/{mode}.json") if l.startswith('{"event":"alloc"')][0]
recs = {x["class"]: x for x in d["classes"]}
among = sum(recs[k]["share"] for k in names if k in recs)
mt = sum(recs[k]["bytes"] for k in names if k in recs) or 1
jfr = {}
jname = {"[B": "byte[]", "[Ljava.lang.Object;": "java.lang.Object[]"}
for e in json.load(open(f"{tmpd}/{mode}.jfr.json"))["recording"]["events"]:
    n = e["values"]["objectClass"]["name"]
    n = jname.get(n, n)
    jfr[n] = jfr.get(n, 0) + e["values"]["weight"]
jt = sum(jfr.get(k, 0) for k in names) or 1
# the collapsed stacks: each class's bytes (its leaf frame is the class)
st = {}
for line in open(f"{tmpd}/{mode}.collapsed"):
    s, _, b = line.rstrip("\n").rpartition(" ")
    leaf = s.split(";")[-1]
    st[leaf] = st.get(leaf, 0) + int(b)
print("class shares from:", d.get("class_shares_from"), d.get("tlab_contents"))
ok = d.get("class_shares_from") == "tlab_contents"
for k in names:
    r = recs.get(k, {})
    got = 100 * r.get("bytes", 0) / mt
    want = 100 * truth[k] / tt
    se = 100 * (r.get("share_stderr") or 0) / among if among else 0
    stack = 100 * st.get(k, 0) / mt
    off = abs(got - want)
    print(f"  {k:20} memtrace {got:6.2f} % +-{2 * se:4.2f} (95 %)  truth {want:6.2f} %  "
          f"off {off:4.2f} = {off / se if se else float('inf'):4.1f} se  JFR "
          f"{100 * jfr.get(k, 0) / jt:6.2f} %  stacks {stack:6.2f} %")
    if r.get("share_stderr") is None or r["share_stderr"] < 0:
        ok = False
        print(f"FAIL: no standard error for {k}")
    elif off > max(3 * se, 1.0):
        ok = False
        print(f"FAIL: {k} is {off:.2f} points from the truth, more than three of its "
              f"standard errors ({se:.2f})")
    if 2 * se > 3:
        ok = False
        print(f"FAIL: {k}'s interval (+-{2 * se:.2f} points) is too wide to be of use")
    if abs(stack - got) > 0.05:
        ok = False
        print(f"FAIL: the stacks give {k} {stack:.2f} % where the table says {got:.2f} %")
sys.exit(0 if ok else 1)
PY
done
