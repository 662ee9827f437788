#!/usr/bin/env python3
"""bench/freeze.py - the time a JVM loses to one heap snapshot, side by side on
the same heaps: memtrace's frozen walk (the agent forks in a short pause and a
copy of the JVM does the walk), memtrace's walk in a pause, `jmap -histo:live`
and `jcmd GC.heap_dump`. Run by bench/freeze.sh (see there for the knobs).

The workload (tests/java/FreezeWorkload) keeps OBJECTS live objects (FwEntry +
its long[2]) and runs mutator threads that allocate as fast as they can and
write into the old entries, so copy-on-write after a fork costs what it costs
an allocating service. For every snapshot it records:
  pause    the JVM's own account: the Total of every safepoint of that
           operation in -Xlog:safepoint (HeapWalkOperation for memtrace,
           GC_HeapInspection / HeapDumper for the JDK's tools, with their GCs);
  mutator  the system time and page faults of the mutator threads over the
           window [start, end + 5 s], minus those of an idle window of the same
           length just before: what copy-on-write and write-protect faults
           after a fork cost the application's threads;
  agent    the same for memtrace's agent thread (its buffers, the pull of the
           copy's records; off the application's path) and for the JVM's other
           threads (GC, JIT);
  lost     mutator time lost over [start - 10 ms, end + 3 s] from their
           allocations per 10 ms against the median of the 2 s before (noisy
           on a loaded machine: it also counts CPU taken by other processes);
  answer   wall time of the command.
Every method runs ROUNDS times in rotating order; medians and ranges.
"""
import json, os, re, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRACE = os.path.join(ROOT, "build", "memtrace")
JAVA_HOME = os.environ.get("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
OBJECTS = [int(x) for x in os.environ.get("FREEZE_BENCH_OBJECTS", "500000 2000000 5000000 10000000").split()]
BLOBS = [int(x) for x in os.environ.get("FREEZE_BENCH_BLOB_MB", "0").split()]
ROUNDS = int(os.environ.get("FREEZE_BENCH_ROUNDS", "3"))
THREADS = int(os.environ.get("FREEZE_BENCH_THREADS", "1"))
GC = os.environ.get("FREEZE_BENCH_GC", "G1")
METHODS = os.environ.get("FREEZE_BENCH_METHODS", "frozen paused jmap dump").split()
AFTER = 3.0  # seconds of throughput watched after each snapshot
WATCH = 5.0  # seconds of page faults watched after each snapshot (and idle before)
SETTLE = 6.0  # seconds between one snapshot's watch and the next idle window
OPS = {"frozen": ["HeapWalkOperation"], "paused": ["HeapWalkOperation"],
       "jmap": ["GC_HeapInspection", "HeapInspection"], "dump": ["HeapDumper"]}


def threads(pid):
    """{tid: (name, minflt, stime ms)} of every thread of @pid."""
    out = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                raw = f.read()
        except OSError:
            continue
        name = raw[raw.index("(") + 1:raw.rindex(")")]
        v = raw.rsplit(")", 1)[1].split()
        out[t] = (name, int(v[7]), int(v[12]) * 10)
    return out


def groups(a, b):
    """Faults and stime gained from @a to @b: mutators, the agent, the rest."""
    g = {"mutator": [0, 0], "agent": [0, 0], "other": [0, 0]}
    for t, (name, f, s) in b.items():
        f0, s0 = (a[t][1], a[t][2]) if t in a else (0, 0)
        k = "mutator" if name.startswith("churn") else "agent" if name == "memtrace-agent" else "other"
        g[k][0] += f - f0
        g[k][1] += s - s0
    return g


class Jvm:
    def __init__(self, objects, blob_mb, tmp):
        self.log = os.path.join(tmp, "sp-%d-%d.log" % (objects, blob_mb))
        heap_mb = max(1024, objects * 64 * 3 // (1 << 20) + blob_mb * 3 // 2 + 512)
        args = [os.path.join(JAVA_HOME, "bin", "java"), "-XX:+Use%sGC" % GC, "-Xms%dm" % heap_mb,
                "-Xmx%dm" % heap_mb, "-Xlog:safepoint:file=%s" % self.log,
                "-cp", os.path.join(ROOT, "build", "java"), "FreezeWorkload",
                str(objects // 2), str(THREADS)] + ([str(blob_mb)] if blob_mb else [])
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        self.heap_mb = heap_mb
        for line in self.p.stdout:
            if line.startswith("READY"):
                break
        else:
            raise SystemExit("the workload did not start")

    def timeline(self, buckets):
        self.p.stdin.write("dump %d\n" % buckets)
        self.p.stdin.flush()
        rows = []
        for line in self.p.stdout:
            if line.startswith("END"):
                return rows
            m = re.match(r"(\d+) (\d+)$", line.strip())
            if m:
                rows.append((int(m.group(1)), int(m.group(2))))
        raise SystemExit("the workload died")

    def safepoints(self):
        out = []
        with open(self.log) as f:
            for line in f:
                m = re.search(r'Safepoint "([^"]+)".*Total: (\d+) ns', line)
                if m:
                    out.append((m.group(1), int(m.group(2))))
        return out

    def stop(self):
        self.p.kill()
        self.p.wait()


def lost_ms(rows, t0, t1):
    """Mutator time lost in [t0 - 10, t1 + AFTER s] (ms timestamps)."""
    before = sorted(o for t, o in rows if t0 - 2000 <= t < t0 - 10)
    if len(before) < 20:
        return None
    base = before[len(before) // 2]
    if base <= 0:
        return None
    lost = sum(max(0, base - o) for t, o in rows if t0 - 10 <= t <= t1 + AFTER * 1000)
    return lost / base * 10.0


def run(jvm, method):
    pid = jvm.p.pid
    n0 = len(jvm.safepoints())
    time.sleep(SETTLE)  # the previous snapshot's page faults die down
    a0 = threads(pid)  # an idle window first: the noise to subtract
    i0 = time.monotonic()
    time.sleep(WATCH)
    a1 = threads(pid)
    idle_s = time.monotonic() - i0
    t0 = int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1000)
    if method in ("frozen", "paused"):
        # ZGC: the copy's pause grows with the used heap; over 100 ms estimated
        # it needs consent, given here (the pause is what is measured)
        consent = ["--max-pause", "60000"] if GC == "Z" and method == "frozen" else []
        r = subprocess.run([MEMTRACE, "--walk", method, "histo", "-p", str(pid), "--top", "3"] + consent,
                           capture_output=True, text=True)
        err = r.stderr
    elif method == "jmap":
        r = subprocess.run([os.path.join(JAVA_HOME, "bin", "jmap"), "-histo:live", str(pid)],
                           capture_output=True, text=True)
        err = ""
    else:
        path = "/tmp/freeze-bench-%d.hprof" % pid
        if os.path.exists(path):
            os.unlink(path)
        r = subprocess.run([os.path.join(JAVA_HOME, "bin", "jcmd"), str(pid), "GC.heap_dump", path],
                           capture_output=True, text=True)
        err = ""
        if os.path.exists(path):
            os.unlink(path)
    t1 = int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1000)
    time.sleep(WATCH)
    a2 = threads(pid)
    busy_s = (t1 - t0) / 1000.0 + WATCH
    rows = jvm.timeline(int((t1 - t0) / 10 + WATCH * 100 + 300))
    idle, busy = groups(a0, a1), groups(a1, a2)
    cost = {k: (busy[k][0] - idle[k][0] * busy_s / idle_s, busy[k][1] - idle[k][1] * busy_s / idle_s)
            for k in busy}
    sp = jvm.safepoints()[n0:]
    pause = sum(ns for op, ns in sp if op in OPS[method]) / 1e6
    frozen = "frozen: fork" in err
    if method == "frozen" and not frozen:
        print("    (not frozen: %s)" % err.strip().splitlines()[0][:160], file=sys.stderr)
    if frozen:
        print("    " + re.sub(r".*\(", "(", err.strip().splitlines()[-1])[:200], file=sys.stderr)
    m = re.search(r"the copy walked .* in ([0-9.]+) (s|ms)", err)
    walk = (float(m.group(1)) * (1000 if m.group(2) == "s" else 1)) if m else None
    return {"method": method, "pause_ms": pause, "lost_ms": lost_ms(rows, t0, t1),
            "mutator_faults": cost["mutator"][0], "mutator_stime_ms": cost["mutator"][1],
            "agent_faults": cost["agent"][0], "agent_stime_ms": cost["agent"][1],
            "other_faults": cost["other"][0], "other_stime_ms": cost["other"][1],
            "answer_ms": t1 - t0, "ok": r.returncode == 0, "copy_walk_ms": walk}


def faultcost():
    """bench/faultcost's figures now (the machine's load changes them)."""
    exe = os.path.join(ROOT, "build", "bench", "faultcost")
    if not os.path.exists(exe):
        return None
    r = subprocess.run([exe, "128"], capture_output=True, text=True)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return None


def med(v):
    v = [x for x in v if x is not None]
    if not v:
        return "-"
    return "%.1f [%.1f-%.1f]" % (statistics.median(v), min(v), max(v))


def main():
    tmp = os.environ.get("FREEZE_BENCH_TMP", "/tmp")
    print("# JVM time lost to one heap snapshot: JDK %s, %s, %d mutator thread(s), %d rounds; "
          "machine load %s" % (os.path.basename(JAVA_HOME), GC, THREADS, ROUNDS,
                              open("/proc/loadavg").read().split()[0]))
    results = []
    for blob in BLOBS:
        for objects in OBJECTS:
            jvm = Jvm(objects, blob, tmp)
            try:
                time.sleep(5)
                subprocess.run([MEMTRACE, "histo", "-p", str(jvm.p.pid), "--top", "1"],
                               capture_output=True)  # loads the agent: not counted
                with open("/proc/%d/status" % jvm.p.pid) as f:
                    rss = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) // 1024
                rs = []
                for k in range(ROUNDS):
                    order = METHODS[k % len(METHODS):] + METHODS[:k % len(METHODS)]
                    for m in order:
                        r = run(jvm, m)
                        rs.append(r)
                        print("  %8d objects +%5d MiB  %-6s pause %8.1f ms  mutators %+7.0f faults %+5.0f ms  "
                              "agent %+7.0f faults %+5.0f ms  other %+6.0f ms  lost %6s ms  answer %6d ms%s" % (
                                  objects, blob, m, r["pause_ms"], r["mutator_faults"],
                                  r["mutator_stime_ms"], r["agent_faults"], r["agent_stime_ms"],
                                  r["other_stime_ms"],
                                  "%.0f" % r["lost_ms"] if r["lost_ms"] is not None else "-",
                                  r["answer_ms"], "" if r["ok"] else " (FAILED)"), file=sys.stderr)
            finally:
                jvm.stop()
            print("\n%d live objects, %d MiB of byte[] besides, -Xmx%dm, RSS %d MiB:" % (
                objects, blob, jvm.heap_mb, rss))
            hdr = ("", "pause ms", "mutators: stime ms", "faults", "agent: stime ms",
                   "lost ms (noisy)", "answer ms")
            print("  %-7s %-22s %-22s %-26s %-22s %-26s %-22s" % hdr)
            by = {}
            for m in METHODS:
                v = [r for r in rs if r["method"] == m]
                by[m] = v
                print("  %-7s %-22s %-22s %-26s %-22s %-26s %-22s" % (
                    m, med([r["pause_ms"] for r in v]), med([r["mutator_stime_ms"] for r in v]),
                    med([r["mutator_faults"] for r in v]), med([r["agent_stime_ms"] for r in v]),
                    med([r["lost_ms"] for r in v]), med([r["answer_ms"] for r in v])))
            fc = faultcost()
            if fc:
                f = statistics.median([r["mutator_faults"] for r in by.get("frozen", [])] or [0])
                print("  a fault after a fork costs here now: %.1f us (copy-on-write, the copy alive), "
                      "%.1f us (write-protect, the copy gone); the frozen walk's %.0f mutator faults: "
                      "%.0f-%.0f ms" % (fc["cow_us"], fc["reuse_us"], f,
                                        f * min(fc["cow_us"], fc["reuse_us"]) / 1000,
                                        f * max(fc["cow_us"], fc["reuse_us"]) / 1000))
            if "frozen" in by and "jmap" in by:
                f = statistics.median([r["pause_ms"] + max(0, r["mutator_stime_ms"]) for r in by["frozen"]])
                j = statistics.median([r["pause_ms"] for r in by["jmap"]])
                print("  frozen (pause + mutators' extra system time) / jmap -histo:live pause = %.3f "
                      "(goal <= 0.5)" % (f / j if j else 0))
            results.append({"objects": objects, "blob_mb": blob, "rss_mb": rss, "runs": rs})
    out = os.environ.get("FREEZE_BENCH_JSON")
    if out:
        json.dump(results, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
