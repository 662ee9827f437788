#!/usr/bin/env python3
"""stacks_check.py MEMTRACE_JSON COLLAPSED WORKLOAD_OUT JFR_JSON - the Java
stacks of `memtrace alloc` against tests/java/AllocStacks.java.

Expected stacks: the workload's EXPECT lines (Throwable.getStackTrace at each
allocation site, root first). getStackTrace leaves out frames the JDK marks
@Hidden; memtrace, like JFR, shows them: HIDDEN lists the ones this workload
crosses (java.lang.Thread.runWith, JDK 21+), dropped before comparing.

Checks, over the bytes of the four workload classes:
  - >= 99 % of each class's bytes have exactly the expected stack (so at most
    1 % with an [unknown] frame or a cut stack; the largest others are printed);
  - the weighted median depth (Java frames per sample, bytes as weights) is
    within 1 of JFR's jdk.ObjectAllocationSample (weights: its `weight`) on
    the same classes and run, over all four and for each class.
"""
import json
import sys

HIDDEN = {"java.lang.Thread.runWith"}

mt_json, collapsed, out_path, jfr_path = sys.argv[1:5]
final = [json.loads(l) for l in open(mt_json) if l.startswith("{")][-1]
expect = {}
for line in open(out_path):
    if line.startswith("EXPECT "):
        _, cls, st = line.split(" ", 2)
        expect[cls] = st.strip().split(";")
if len(expect) != 4:
    print("workload printed", len(expect), "expected stacks, not 4")
    sys.exit(1)

ok = True
js = final.get("java_stacks")
if not js:
    print("no java_stacks in memtrace's JSON")
    sys.exit(1)
print("walks:", js["walks"], "stops:", {k: v for k, v in js["stops"].items() if v},
      "unknown frames:", js["unknown_frames"])

total = {c: 0 for c in expect}
exact = {c: 0 for c in expect}
other = {c: {} for c in expect}
depths = []  # (depth, bytes)
cdepths = {c: [] for c in expect}
for line in open(collapsed):
    stack, _, b = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    cls, java = frames[-1], frames[:-1]
    if cls not in expect:
        continue
    b = int(b)
    total[cls] += b
    depths.append((len([f for f in java if not f.startswith("[stack cut")]), b))
    cdepths[cls].append(depths[-1])
    seen = [f for f in java if f not in HIDDEN]
    if seen == expect[cls]:
        exact[cls] += b
    else:
        other[cls][stack] = other[cls].get(stack, 0) + b

for cls in expect:
    share = exact[cls] / total[cls] if total[cls] else 0
    print(f"{cls:22} {100 * share:6.2f} % of {total[cls]} B with the expected stack "
          f"({len(expect[cls])} frames)")
    if share < 0.99:
        ok = False
        for st, b in sorted(other[cls].items(), key=lambda x: -x[1])[:3]:
            print(f"    other: {b} B  {st[:300]}")


def wmedian(pairs):
    pairs = sorted(pairs)
    half = sum(w for _, w in pairs) / 2
    acc = 0
    for d, w in pairs:
        acc += w
        if acc >= half:
            return d
    return 0


jfr = json.load(open(jfr_path))
jd = []
jtop = {}
jcd = {c: [] for c in expect}
for e in jfr["recording"]["events"]:
    v = e["values"]
    cls = (v.get("objectClass") or {}).get("name")
    if cls not in expect or not v.get("stackTrace"):
        continue
    frames = v["stackTrace"]["frames"]
    jd.append((len(frames), v["weight"]))
    jcd[cls].append(jd[-1])
    names = ";".join(f["method"]["type"]["name"].replace("/", ".") + "." + f["method"]["name"]
                     for f in reversed(frames))
    jtop.setdefault(cls, {}).setdefault(names, 0)
    jtop[cls][names] += v["weight"]
if not jd:
    print("JFR recorded no allocation sample of the workload's classes")
    sys.exit(1)
md, jm = wmedian(depths), wmedian(jd)
print(f"weighted median depth: memtrace {md}, JFR {jm} ({len(jd)} JFR samples)")
jw_all = sum(w for _, w in jd)
if abs(md - jm) > 1:
    # JFR's throttled sampler gives the classes shares that vary by run; when
    # two classes of different depths hold about half the bytes each, that
    # alone moves the overall median. Reweigh our samples by JFR's class
    # shares: if the medians then agree, only the mix differed (the per-class
    # depths below are still checked).
    mine = sum(total.values())
    re_pairs = [(d, w * (sum(x for _, x in jcd[c]) / jw_all) / (total[c] / mine))
                for c in expect if jcd[c] and total[c] for d, w in cdepths[c]]
    rm = wmedian(re_pairs) if re_pairs else None
    if rm is not None and abs(rm - jm) <= 1:
        print(f"  the overall medians differ by JFR's class shares only: memtrace's "
              f"samples weighted by JFR's shares give {rm}")
    else:
        print("  DEPTHS DIFFER BY MORE THAN 1")
        ok = False
for cls in expect:
    if not jcd[cls] or not cdepths[cls]:
        print(f"  {cls}: no samples (memtrace {len(cdepths[cls])}, JFR {len(jcd[cls])})")
        ok = False
        continue
    a, b = wmedian(cdepths[cls]), wmedian(jcd[cls])
    print(f"  {cls:22} depth memtrace {a}, JFR {b}; share of bytes memtrace "
          f"{100 * total[cls] / sum(total.values()):.1f} %, JFR "
          f"{100 * sum(w for _, w in jcd[cls]) / jw_all:.1f} %")
    if abs(a - b) > 1:
        print("    DEPTHS DIFFER BY MORE THAN 1")
        ok = False
for cls in expect:
    if cls in jtop:
        st, w = max(jtop[cls].items(), key=lambda x: x[1])
        same = [f for f in st.split(";") if f not in HIDDEN] == expect[cls]
        print(f"  JFR's top stack of {cls}: {100 * w / sum(jtop[cls].values()):.1f} % of its "
              f"weight, {'the expected one' if same else 'NOT the expected one: ' + st[:200]}")
print("OK" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
