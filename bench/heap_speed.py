#!/usr/bin/env python3
"""bench/heap_speed.py - the time to an answer and what it costs the machine,
memtrace's frozen snapshot against the JDK's own tools, on the same heaps.
Run by bench/heap_speed.sh (the knobs are listed there).

For each JDK and each object count it starts one idle FreezeWorkload JVM
(N/2 FwEntry, each with a long[2]; -Xlog:safepoint to a file) and runs, in
rotating order, ROUNDS times each:
  histo     memtrace histo -p PID
  retained  memtrace heap -p PID --retained          (a walk with references)
  query     memtrace query -p PID -f tests/dsl/03_reachable_from_threads.mq
  jmap      jmap -histo:live PID
  dump      jcmd PID GC.heap_dump FILE                (the file deleted after)
and records for each run:
  answer    wall time from the command's start to its exit;
  cpu       core-seconds of every process involved: the command's own
            (os.wait4: memtrace, or jmap/jcmd's JVM), the target JVM's
            (utime+stime of /proc/PID/stat: its pause, the agent thread) and
            the frozen copy's (the JVM waits for its child: cutime+cstime);
            the idle JVM's own CPU over the same time is subtracted;
  rss       the command's peak RSS (MiB), and per million objects;
  pause     the JVM's own account: the safepoints that began during the
            command (-Xlog:safepoint's Total), summed.
Medians and ranges per method; then ratios against jmap -histo:live's median
(histo) and 2x jmap's (walks with references), the issue #29 goals.
"""
import json, os, re, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRACE = os.path.join(ROOT, "build", "memtrace")
JDKS = os.environ.get("HEAP_SPEED_JDKS", "/usr/lib/jvm/java-17-openjdk-amd64 "
                      "/usr/lib/jvm/temurin-25-jdk-amd64").split()
OBJECTS = [int(x) for x in os.environ.get("HEAP_SPEED_OBJECTS", "500000 5000000 10000000").split()]
ROUNDS = int(os.environ.get("HEAP_SPEED_ROUNDS", "3"))
METHODS = os.environ.get("HEAP_SPEED_METHODS", "histo retained query jmap dump").split()
TMP = os.environ.get("HEAP_SPEED_TMP", "/tmp")
HZ = os.sysconf("SC_CLK_TCK")


def stat(pid):
    """(utime+stime, cutime+cstime) of @pid in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / HZ, (int(v[13]) + int(v[14])) / HZ


class Jvm:
    def __init__(self, java_home, objects):
        self.log = os.path.join(TMP, "heap-speed-sp-%d.log" % os.getpid())
        heap_mb = max(1024, objects * 64 * 3 // (1 << 20) + 512)
        args = [os.path.join(java_home, "bin", "java"), "-Xms%dm" % heap_mb, "-Xmx%dm" % heap_mb,
                "-Xlog:safepoint:file=%s" % self.log, "-cp", os.path.join(ROOT, "build", "java"),
                "FreezeWorkload", str(objects // 2), "0"]
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        for line in self.p.stdout:
            if line.startswith("READY"):
                break
        else:
            raise SystemExit("the workload did not start")
        time.sleep(2)
        c0, t0 = stat(self.p.pid), time.monotonic()
        time.sleep(3)
        c1 = stat(self.p.pid)
        self.idle_rate = (c1[0] - c0[0]) / (time.monotonic() - t0)

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
        try:
            os.unlink(self.log)
        except OSError:
            pass


def command(method, java_home, pid):
    """The argv of @method on @pid, and a file to delete after it."""
    if method == "histo":
        return [MEMTRACE, "-q", "--json", "histo", "-p", str(pid), "--top", "5"], None
    if method == "retained":
        return [MEMTRACE, "-q", "--json", "heap", "-p", str(pid), "--retained", "--top", "5"], None
    if method == "query":
        return [MEMTRACE, "-q", "--json", "query", "-p", str(pid), "-f",
                os.path.join(ROOT, "tests", "dsl", "03_reachable_from_threads.mq")], None
    if method == "jmap":
        return [os.path.join(java_home, "bin", "jmap"), "-histo:live", str(pid)], None
    path = os.path.join(TMP, "heap-speed-%d.hprof" % pid)
    return [os.path.join(java_home, "bin", "jcmd"), str(pid), "GC.heap_dump", path], path


def run(jvm, java_home, method):
    pid = jvm.p.pid
    argv, path = command(method, java_home, pid)
    if path and os.path.exists(path):
        os.unlink(path)
    n0 = len(jvm.safepoints())
    s0, t0 = stat(pid), time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    t1 = time.monotonic()
    time.sleep(0.3)  # the copy's exit reaped by the agent
    s1 = stat(pid)
    if path and os.path.exists(path):
        os.unlink(path)
    own = _children()  # run in a fresh fork (rss_isolated): the command is its only child
    wall = t1 - t0
    cpu_jvm = (s1[0] - s0[0]) - jvm.idle_rate * wall
    cpu_copy = s1[1] - s0[1]
    sp = jvm.safepoints()[n0:]
    pause = sum(ns for _, ns in sp) / 1e6
    rec = {"method": method, "ok": p.returncode == 0, "answer_s": wall, "cpu_cmd_s": own[0],
           "cpu_jvm_s": max(0.0, cpu_jvm), "cpu_copy_s": cpu_copy,
           "cpu_s": own[0] + max(0.0, cpu_jvm) + cpu_copy, "rss_mib": own[1] / 1024.0,
           "pause_ms": pause, "safepoints": [op for op, _ in sp]}
    if p.returncode != 0:
        rec["error"] = err.decode(errors="replace").strip()[-300:]
    if method in ("histo", "retained", "query"):
        for line in out.decode(errors="replace").splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and "pause_ms" in r:
                rec["memtrace_pause_ms"] = r["pause_ms"]
                rec["objects"] = r.get("instances", r.get("objects"))
    return rec


def _children():
    """(user+sys s, peak RSS KiB) of this process's reaped children."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime, r.ru_maxrss


def med(v, fmt="%.2f"):
    v = [x for x in v if x is not None]
    if not v:
        return "-"
    return (fmt + " [" + fmt + "-" + fmt + "]") % (statistics.median(v), min(v), max(v))


def main():
    print("# heap answers against the JDK's tools: %d rounds; machine load %s; %d cores" %
          (ROUNDS, open("/proc/loadavg").read().split()[0], os.cpu_count()))
    results = []
    for java_home in JDKS:
        if not os.path.isdir(java_home):
            print("SKIP %s: not installed" % java_home)
            continue
        for n in OBJECTS:
            jvm = Jvm(java_home, n)
            rows = {m: [] for m in METHODS}
            try:
                for r in range(ROUNDS):
                    order = METHODS[r % len(METHODS):] + METHODS[:r % len(METHODS)]
                    for m in order:
                        rows[m].append(rss_isolated(jvm, java_home, m))
            finally:
                jvm.stop()
            report(java_home, n, rows)
            results.append({"jdk": os.path.basename(java_home), "objects": n, "runs": rows})
    out = os.environ.get("HEAP_SPEED_JSON")
    if out:
        with open(out, "w") as f:
            json.dump(results, f, indent=1)


def rss_isolated(jvm, java_home, method):
    """run() in a forked python, so that its peak RSS is this command's alone."""
    rfd, wfd = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(rfd)
        try:
            rec = run(jvm, java_home, method)
        except Exception as e:  # reported by the parent
            rec = {"method": method, "ok": False, "error": repr(e)}
        os.write(wfd, json.dumps(rec).encode())
        os._exit(0)
    os.close(wfd)
    data = b""
    while True:
        b = os.read(rfd, 65536)
        if not b:
            break
        data += b
    os.close(rfd)
    os.waitpid(child, 0)
    return json.loads(data)


def report(java_home, n, rows):
    jdk = os.path.basename(java_home)
    objs = next((r.get("objects") for r in rows.get("histo", []) if r.get("objects")), n)
    print("\n%s, %d live objects (FreezeWorkload %d; %s counted by histo)" % (jdk, n, n // 2, objs))
    print("  %-9s %-22s %-22s %-22s %-18s %s" % ("method", "answer s", "CPU s (all)",
                                                  "pause ms (JVM log)", "peak RSS MiB", "MiB/M obj"))
    for m, rs in rows.items():
        bad = [r for r in rs if not r.get("ok")]
        for r in bad:
            print("  %-9s FAILED: %s" % (m, r.get("error", "?")))
        rs = [r for r in rs if r.get("ok")]
        if not rs:
            continue
        rss = statistics.median(r["rss_mib"] for r in rs)
        print("  %-9s %-22s %-22s %-22s %-18s %.1f" % (
            m, med([r["answer_s"] for r in rs]), med([r["cpu_s"] for r in rs]),
            med([r["pause_ms"] for r in rs], "%.0f"), med([r["rss_mib"] for r in rs], "%.0f"),
            rss / (objs / 1e6)))
        if m in ("histo", "retained", "query"):
            print("  %-9s   cpu: memtrace %s, the JVM %s, the frozen copy %s" % (
                "", med([r["cpu_cmd_s"] for r in rs]), med([r["cpu_jvm_s"] for r in rs]),
                med([r["cpu_copy_s"] for r in rs])))
    ok = lambda m: [r for r in rows.get(m, []) if r.get("ok")]
    if ok("jmap"):
        jm = statistics.median(r["answer_s"] for r in ok("jmap"))
        for m, goal in (("histo", 1.0), ("retained", 2.0), ("query", 2.0)):
            if ok(m):
                a = statistics.median(r["answer_s"] for r in ok(m))
                print("  %s: %.2fx jmap -histo:live's answer time (goal <= %.0fx)" % (m, a / jm, goal))
        if ok("histo"):
            c = statistics.median(r["cpu_s"] for r in ok("histo"))
            print("  histo CPU per 5 M objects: %.2f core-s (goal <= 1)" % (c * 5e6 / objs))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
