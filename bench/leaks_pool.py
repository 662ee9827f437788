#!/usr/bin/env python3
"""bench/leaks_pool.py - what the memory memtrace keeps for the frozen
copy's records saves a `leaks` series (user/heap/recpool.c).

On one idle FreezeWorkload heap per JDK, `memtrace leaks --snapshots 4` runs
in three modes, in rotating order, ROUNDS times each:
  inplace - as memtrace runs (stop 51): each view built where its copy wrote
            the records, the next copy writing into the memfd the last view
            left (MT_AP_FREEZE_INPLACE, _REFPOS)
  kept    - as with an older agent (MEMTRACE_NO_INPLACE=1): the records
            copied out of a pool kept from the second snapshot on (records
            of 128 MiB and more; MT_AP_FREEZE_POOL)
  never   - MEMTRACE_NO_INPLACE=1 MEMTRACE_RECPOOL=never: neither
Per run it reads, from MEMTRACE_PHASES and the pause line:
  walk    - memtrace's "walk (request to DONE)" phase of snapshots 2-4 (ms):
            the fork, the copy's mark and records, memtrace reading them
  records - the copy's own time for its records, snapshots 2-4 (ms)
  pool    - the one-off "memory kept for the next copy's records" phase (ms)
  mt cpu  - memtrace's user+system CPU for the whole run (s, /usr/bin/time)
  copies  - the four copies' CPU together: the JVM's cutime+cstime grew by
            it (the JVM reaps them; /proc/PID/stat, 10 ms ticks)
  rss     - memtrace's peak RSS (MiB)
Medians over the rounds (walk and records: over the rounds' snapshots 2-4).
Knobs: LEAKS_POOL_JDKS, LEAKS_POOL_OBJECTS (FreezeWorkload's N: 2N live
objects; 2500000), LEAKS_POOL_ROUNDS (3). Needs a quiet machine.
"""
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JDKS = os.environ.get("LEAKS_POOL_JDKS", "/usr/lib/jvm/java-17-openjdk-amd64 "
                      "/usr/lib/jvm/temurin-25-jdk-amd64").split()
N = int(os.environ.get("LEAKS_POOL_OBJECTS", "2500000"))
ROUNDS = int(os.environ.get("LEAKS_POOL_ROUNDS", "3"))
MT = os.path.join(ROOT, "build", "memtrace")
TICK = os.sysconf("SC_CLK_TCK")


def child_cpu(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[13]) + int(f[14])) / TICK  # cutime, cstime


MODES = {"inplace": {}, "kept": {"MEMTRACE_NO_INPLACE": "1", "MEMTRACE_RECPOOL": "auto"},
         "never": {"MEMTRACE_NO_INPLACE": "1", "MEMTRACE_RECPOOL": "never"}}


def run(pid, mode):
    env = dict(os.environ, MEMTRACE_PHASES="1", **MODES[mode])
    c0 = child_cpu(pid)
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S %M", MT, "leaks", "-p", str(pid),
                        "--duration", "6", "--snapshots", "4"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr
    if p.returncode:
        sys.exit("leaks failed (%s):\n%s" % (mode, err))
    time.sleep(0.5)  # the last copy reaped
    walks = [float(x) for x in re.findall(r"phase walk \(request to DONE\): ([0-9.]+) ms", err)]
    recs = [float(x) for x in re.findall(r"the copy: its mark [0-9.]+ ms, its records ([0-9.]+) ms", err)]
    pool = [float(x) for x in re.findall(r"phase memory kept for the next copy's records: "
                                         r"([0-9.]+) ms", err)]
    u, s, m = re.search(r"TIME ([0-9.]+) ([0-9.]+) ([0-9]+)", err).groups()
    return {"walk": walks[1:], "records": recs[1:], "pool": sum(pool),
            "mt_cpu": float(u) + float(s), "copies": child_cpu(pid) - c0,
            "rss": int(m) / 1024}


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    print("FreezeWorkload %d (%d live objects), leaks --snapshots 4, %d rounds; medians"
          % (N, 2 * N, ROUNDS))
    print("%-8s %-7s %8s %8s %8s %8s %8s %8s" % ("JDK", "mode", "walk", "records", "pool ms",
                                               "mt cpu", "copies", "rss MiB"))
    for jdk in JDKS:
        java = os.path.join(jdk, "bin", "java")
        heap_mb = max(1024, N // 2500000 * 1024)  # 1 GB at 5 M objects, as the other benches
        if not os.path.exists(java):
            print("SKIP %s: not installed" % jdk)
            continue
        w = subprocess.Popen([java, "-Xms%dm" % heap_mb, "-Xmx%dm" % heap_mb, "-cp",
                              os.path.join(ROOT, "build", "java"),
                              "FreezeWorkload", str(N), "0"], stdout=subprocess.PIPE, text=True)
        try:
            if "READY" not in w.stdout.readline():
                sys.exit("FreezeWorkload did not start")
            order = list(MODES)
            got = {m: [] for m in order}
            for r in range(ROUNDS):
                for mode in order[r % 3:] + order[:r % 3]:
                    got[mode].append(run(w.pid, mode))
            name = os.path.basename(jdk).split("-")[1]
            for mode in order:
                g = got[mode]
                print("%-8s %-7s %8.1f %8.1f %8.1f %8.2f %8.2f %8.0f" % (
                    name, mode, med([x for r in g for x in r["walk"]]),
                    med([x for r in g for x in r["records"]]), med([r["pool"] for r in g]),
                    med([r["mt_cpu"] for r in g]), med([r["copies"] for r in g]),
                    med([r["rss"] for r in g])))
        finally:
            w.kill()
            w.wait()


main()
