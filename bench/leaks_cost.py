#!/usr/bin/env python3
"""bench/leaks_cost.py - what a default `memtrace leaks` run (30 s, six frozen
heap snapshots, the agent sampling meanwhile) costs the JVM it watches, on
heaps of N live objects, baseline and attached windows alternating on the
same JVM. Run by bench/leaks_cost.sh (the knobs are listed there).

The workload (tests/java/FreezeWorkload) keeps N live objects and one thread
allocating flat out and writing into random old entries (so copy-on-write
after each fork costs what it costs an allocating service); it counts its
operations per 10 ms. For each window:
  ops      the mutator's operations in the window (its own count);
  ratio    attached / the mean of the baseline windows around it;
  pause    the JVM's own account of the snapshots' stops (-Xlog:safepoint's
           HeapWalkOperation Totals in the window);
  memtrace its CPU (user + system) and peak RSS for the run (/usr/bin/time).
"""
import os, re, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMTRACE = os.path.join(ROOT, "build", "memtrace")
JDKS = os.environ.get("LEAKS_COST_JDKS", "/usr/lib/jvm/java-17-openjdk-amd64 "
                      "/usr/lib/jvm/temurin-25-jdk-amd64").split()
OBJECTS = [int(x) for x in os.environ.get("LEAKS_COST_OBJECTS", "500000 5000000 10000000").split()]
ROUNDS = int(os.environ.get("LEAKS_COST_ROUNDS", "2"))
WINDOW = float(os.environ.get("LEAKS_COST_SECONDS", "30"))
TMP = os.environ.get("LEAKS_COST_TMP", "/tmp")


class Jvm:
    def __init__(self, java_home, objects):
        self.log = os.path.join(TMP, "leaks-cost-sp-%d.log" % os.getpid())
        heap_mb = max(1024, objects * 64 * 3 // (1 << 20) + 512)
        self.p = subprocess.Popen(
            [os.path.join(java_home, "bin", "java"), "-Xms%dm" % heap_mb, "-Xmx%dm" % heap_mb,
             "-Xlog:safepoint:file=%s" % self.log, "-cp", os.path.join(ROOT, "build", "java"),
             "FreezeWorkload", str(objects // 2), "1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in self.p.stdout:
            if line.startswith("READY"):
                break
        else:
            raise SystemExit("the workload did not start")

    def ops(self, t0, t1):
        """The mutator's operations in [t0, t1] (CLOCK_MONOTONIC ms)."""
        k = int((time.clock_gettime(time.CLOCK_MONOTONIC) * 1000 - t0) / 10) + 20
        self.p.stdin.write("dump %d\n" % k)
        self.p.stdin.flush()
        total = 0
        for line in self.p.stdout:
            if line.startswith("END"):
                return total
            m = re.match(r"(\d+) (\d+)$", line.strip())
            if m and t0 <= int(m.group(1)) < t1:
                total += int(m.group(2))
        raise SystemExit("the workload died")

    def walks_ms(self, n0):
        out = []
        with open(self.log) as f:
            for line in f:
                m = re.search(r'Safepoint "HeapWalkOperation".*Total: (\d+) ns', line)
                if m:
                    out.append(int(m.group(1)) / 1e6)
        return out[n0:]

    def stop(self):
        self.p.kill()
        self.p.wait()
        try:
            os.unlink(self.log)
        except OSError:
            pass


def window(jvm, attached):
    n0 = len(jvm.walks_ms(0))
    t0 = time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
    rec = {"attached": attached}
    if attached:
        tf = os.path.join(TMP, "leaks-cost-time-%d" % os.getpid())
        r = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", tf, MEMTRACE, "-q",
                            "leaks", "-p", str(jvm.p.pid), "--duration", "%g" % WINDOW],
                           capture_output=True, text=True)
        rss_kib, u, s = open(tf).read().split()[-3:]
        os.unlink(tf)
        rec["ok"] = r.returncode == 0
        rec["cpu_s"] = float(u) + float(s)
        rec["rss_mib"] = int(rss_kib) / 1024
        rec["holders"] = len(re.findall(r"^#\d+ ", r.stdout, re.M))
        if r.returncode:
            rec["error"] = r.stderr.strip()[-300:]
    else:
        time.sleep(WINDOW)
    t1 = time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
    rec["seconds"] = (t1 - t0) / 1000
    rec["ops"] = jvm.ops(t0, t1)
    rec["ops_per_s"] = rec["ops"] / rec["seconds"]
    w = jvm.walks_ms(n0)
    rec["walks"] = len(w)
    rec["pause_ms"] = sum(w)
    return rec


def main():
    print("# a default leaks run's cost to the JVM: %d rounds of %.0f s windows; load %s"
          "" %
          (ROUNDS, WINDOW, open("/proc/loadavg").read().split()[0]))
    for java_home in JDKS:
        if not os.path.isdir(java_home):
            print("SKIP %s: not installed" % java_home)
            continue
        for n in OBJECTS:
            jvm = Jvm(java_home, n)
            try:
                time.sleep(5)
                seq = [window(jvm, False)]
                for _ in range(ROUNDS):
                    seq.append(window(jvm, True))
                    seq.append(window(jvm, False))
            finally:
                jvm.stop()
            ratios = []
            for i in range(1, len(seq), 2):
                base = (seq[i - 1]["ops_per_s"] + seq[i + 1]["ops_per_s"]) / 2
                ratios.append(seq[i]["ops_per_s"] / base if base else float("nan"))
            att = [seq[i] for i in range(1, len(seq), 2)]
            print("\n%s, %d live objects" % (os.path.basename(java_home), n))
            for a, r in zip(att, ratios):
                print("  leaks run: %.1f s, %d snapshots, paused %.0f ms in all, mutator "
                      "throughput %.3f of the windows around it; memtrace CPU %.2f s, peak "
                      "RSS %.0f MiB; %s" % (a["seconds"], a["walks"], a["pause_ms"], r,
                                            a["cpu_s"], a["rss_mib"],
                                            "ok" if a["ok"] else a.get("error")))
            print("  median ratio %.3f" % statistics.median(ratios))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
