#!/usr/bin/env python3
"""stacks_check.py MEMTRACE_JSON COLLAPSED WORKLOAD_OUT JFR_JSON MODE [PPROF_TRACES] -
the Java stacks of `memtrace alloc` against tests/java/AllocStacks.java.

Expected stacks: the workload's EXPECT lines (Throwable.getStackTrace at each
allocation site, root first), and LINES (the same with each frame's line).
getStackTrace leaves out frames the JDK marks @Hidden and the frames of hidden
classes (a lambda's proxy, "Outer$$Lambda/0x...apply"); memtrace, like JFR,
shows them: they are dropped before comparing (HIDDEN, hidden()).
Collapsed frames carry async-profiler's kind suffix (_[0] interpreted, _[1]
C1, _[j] C2, _[i] inlined), stripped to compare names and checked per MODE.

Checks, over the bytes of the five workload classes:
  - >= 99 % of each class's bytes have exactly the expected stack (so at most
    1 % with an [unknown] frame or a cut stack; the largest others are printed);
  - frame kinds by MODE: int - every Java frame interpreted; c1 - the
    workload's compiled frames C1, the excluded ones interpreted; inl - the
    chain's frames inlined into a compiled frame for most of its bytes;
  - the lines of the heaviest JSON stack of each class are the workload's
    LINES, frame by frame;
  - the weighted median depth (Java frames per sample, bytes as weights) is
    within 1 of JFR's jdk.ObjectAllocationSample (weights: its `weight`) on
    the same classes and run, over all and for each class;
  - per-stack byte shares of the top 20 stacks (names compared) within 3
    points of JFR's on the same run, and each workload thread's stack within
    1 point of its share by ThreadMXBean - both widened to four of memtrace's
    standard errors of the class's share when its budget thinned the samples
    (estimate.py);
  - with PPROF_TRACES (`go tool pprof -traces -lines` of memtrace's pprof):
    the chain's allocating frame with its file and line.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from estimate import share_tolerance  # noqa: E402

HIDDEN = {"java.lang.Thread.runWith"}
SUFFIX = re.compile(r"_\[([01ji])\]$")


def hidden(f):
    return f in HIDDEN or "$$Lambda" in f


def bare(f):
    return SUFFIX.sub("", f)


def kind(f):
    m = SUFFIX.search(f)
    return m.group(1) if m else None


mt_json, collapsed, out_path, jfr_path, mode = sys.argv[1:6]
traces = sys.argv[6] if len(sys.argv) > 6 else None
final = [json.loads(l) for l in open(mt_json) if l.startswith("{")][-1]
expect = {}
lines = {}
for line in open(out_path):
    if line.startswith("EXPECT "):
        _, cls, st = line.split(" ", 2)
        expect[cls] = st.strip().split(";")
    if line.startswith("LINES "):
        _, cls, st = line.split(" ", 2)
        lines[cls] = [(f.rsplit(":", 1)[0], int(f.rsplit(":", 1)[1])) for f in st.strip().split(";")]
if len(expect) != 5 or len(lines) != 5:
    print("workload printed", len(expect), "expected stacks and", len(lines), "line lists, not 5")
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
kinds = {c: {} for c in expect}  # class -> {frame: {kind: bytes}}
mstacks = {}  # normalized stack -> bytes
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
    seen = [bare(f) for f in java if not hidden(bare(f))]
    key = ";".join(seen + [cls])
    mstacks[key] = mstacks.get(key, 0) + b
    for f in java:
        kinds[cls].setdefault(bare(f), {}).setdefault(kind(f), 0)
        kinds[cls][bare(f)][kind(f)] += b
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


def kind_share(cls, pred, want):
    """Share of @cls's bytes whose frames matching @pred have kind @want."""
    good = bad = 0
    for f, by in kinds[cls].items():
        if pred(f):
            for k, b in by.items():
                if k == want:
                    good += b
                else:
                    bad += b
    return good / (good + bad) if good + bad else 0


workload = lambda f: f.startswith("AllocStacks$") and "$$Lambda" not in f
if mode == "int":
    for cls in expect:
        sh = kind_share(cls, lambda f: not f.startswith("["), "0")
        print(f"  {cls:22} interpreted frames: {100 * sh:.1f} % of their bytes")
        if sh < 0.99:
            ok = False
elif mode == "c1":
    for cls in ("AllocStacks$ChainObj", "AllocStacks$RecObj"):
        sh = kind_share(cls, lambda f: f.startswith("AllocStacks$Chain.") or
                        f.startswith("AllocStacks$Rec."), "1")
        print(f"  {cls:22} C1 frames: {100 * sh:.1f} % of their bytes")
        if sh < 0.9:
            ok = False
    sh = kind_share("AllocStacks$SlowObj", lambda f: f.startswith("AllocStacks$Interp."), "0")
    print(f"  AllocStacks$SlowObj    excluded methods interpreted: {100 * sh:.1f} %")
    if sh < 0.99:
        ok = False
elif mode == "inl":
    # c40 is inlined by order (CompileCommand=inline): the rest is the
    # interpreter's, before c39 is compiled
    sh = kind_share("AllocStacks$ChainObj", lambda f: f.startswith("AllocStacks$Chain.c4"), "i")
    print(f"  AllocStacks$ChainObj   c40 inlined: {100 * sh:.1f} % of their bytes")
    if sh < 0.5:
        ok = False
elif mode == "c2":
    sh = kind_share("AllocStacks$ChainObj", lambda f: f.startswith("AllocStacks$Chain."), "j")
    print(f"  AllocStacks$ChainObj   C2 frames: {100 * sh:.1f} % of their bytes")
    if sh < 0.5:
        ok = False

# lines: the heaviest JSON stack of each class, frame by frame
jstacks = final.get("stacks") or []
for cls in expect:
    mine = [s for s in jstacks if s["leaf"] == cls]
    if not mine:
        print(f"  {cls}: no JSON stack")
        ok = False
        continue
    got = [(f["name"], f.get("line", 0)) for f in mine[0]["frames"]
           if not hidden(f["name"]) and not f["name"].startswith("[")]
    want = [x for x in lines[cls] if not hidden(x[0])]
    if got != want:
        print(f"  {cls}: lines differ\n    memtrace {got}\n    workload {want}")
        ok = False
    else:
        print(f"  {cls:22} lines of its {len(got)} frames = getStackTrace's")

if traces:
    leaf = lines["AllocStacks$ChainObj"][-1]
    want = f"{leaf[0]} AllocStacks.java:{leaf[1]}"
    txt = open(traces).read()
    if want in txt:
        print(f"  go tool pprof -traces -lines shows '{want}'")
    else:
        print(f"  go tool pprof -traces -lines lacks '{want}'")
        ok = False


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
jstk = {}
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
    key = ";".join([f for f in names.split(";") if not hidden(f)] + [cls])
    jstk[key] = jstk.get(key, 0) + v["weight"]
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
        same = [f for f in st.split(";") if not hidden(f)] == expect[cls]
        print(f"  JFR's top stack of {cls}: {100 * w / sum(jtop[cls].values()):.1f} % of its "
              f"weight, {'the expected one' if same else 'NOT the expected one: ' + st[:200]}")
# per-stack byte shares, the top 20 of memtrace's, against JFR's; a stack's
# spread is at most its class's (each workload class has one stack)
crec = {c["class"]: c for c in final.get("classes", [])}
among = sum(crec[c]["share"] for c in expect if c in crec) or 1.0


def stack_tol(key, base):
    return share_tolerance(crec.get(key.rsplit(";", 1)[-1], {}), base, among)


msum, jsum = sum(mstacks.values()), sum(jstk.values())
worst = 0
for key, b in sorted(mstacks.items(), key=lambda x: -x[1])[:20]:
    m, j = 100 * b / msum, 100 * jstk.get(key, 0) / jsum
    worst = max(worst, abs(m - j))
    if abs(m - j) > stack_tol(key, 3.0):
        print(f"  stack share differs: memtrace {m:.1f} %, JFR {j:.1f} % "
              f"(tolerance {stack_tol(key, 3.0):.1f}): ...{key[-120:]}")
        ok = False
print(f"  top {min(20, len(mstacks))} stacks' byte shares: largest difference to JFR {worst:.2f} points")
# each workload thread allocates at one stack: its share of the bytes by
# construction (ThreadMXBean) against memtrace's share of that stack. Not the
# stream's thread: it allocates the pipeline's objects too (scalar-replaced by
# C2, not in the interpreter), which ThreadMXBean counts with LamObj.
tmx = {}
for line in open(out_path):
    if line.startswith("BYTES "):
        _, cls, n = line.split()
        tmx[cls] = int(n)
worst = 0
tmx.pop("AllocStacks$LamObj", None)
for cls in tmx:
    key = ";".join(expect[cls] + [cls])
    m = 100 * mstacks.get(key, 0) / sum(mstacks.get(";".join(expect[c] + [c]), 0) for c in tmx)
    t = 100 * tmx[cls] / sum(tmx.values())
    worst = max(worst, abs(m - t))
    if abs(m - t) > stack_tol(key, 1.0):
        print(f"  {cls}: memtrace {m:.2f} % of the bytes, ThreadMXBean {t:.2f} % "
              f"(tolerance {stack_tol(key, 1.0):.2f})")
        ok = False
print(f"  stack shares against ThreadMXBean's bytes per thread: largest difference {worst:.2f} points"
      f" (duty cycle: {final.get('duty_cycle')})")
print("OK" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
