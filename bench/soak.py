#!/usr/bin/env python3
"""bench/soak.py - `memtrace serve --all` over JVM churn (run by bench/soak.sh,
inside a pid and mount namespace of its own with a private /tmp).

JVMs (tests/java/SteadyGc.java, JDK 17 and 25 in turns) are started to keep
LIVE of them running, until SECONDS have passed or MAX_JVMS were started;
each lives one of four lives, in turns:
  plain      watched only; killed (-9 or TERM) after 15-45 s
  age        agent sampling switched on through the API; killed after 15-45 s
  agentload  agent sampling switched on, then killed -9 0-800 ms later: while
             serve loads memtrace's agent into it (the state seen is counted)
  query      a query posted; killed -9 0-300 ms after its 202: during the
             heap walk (the query's state seen is counted)
Every 5 s: serve's RSS and open descriptors, and the watch list and the
series: every JVM alive for 10 s is watched and has series (any series with
its pid label in /metrics), no JVM dead for 10 s is. At the end every JVM is
stopped, and /tmp and the JVMs' working directory must hold no file of
memtrace's (.memtrace-*, .attach_pid*, nor the attach listener's .java_pid*)
and serve must exit 0. Prints the samples, a summary and PASS/FAIL lines;
writes them as JSON to OUT/soak.json.
"""
import json, os, random, re, signal, subprocess, sys, time, urllib.request

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECONDS = float(os.environ.get("SOAK_SECONDS", 120))
MAX_JVMS = int(os.environ.get("SOAK_MAX_JVMS", 400))
LIVE = int(os.environ.get("SOAK_LIVE", 5))
OUT = os.environ.get("SOAK_OUT", os.path.join(root, "build", "soak"))
JDKS = [os.environ.get("JDK17", "/usr/lib/jvm/java-17-openjdk-amd64"),
        os.environ.get("JDK25", "/usr/lib/jvm/temurin-25-jdk-amd64")]
LIVES = ["plain", "age", "agentload", "query"]
TOKEN = "soak-token-%012d" % os.getpid()
PROG = ("set_type big:\n    roots <- objects.filter([it | it.size > 4096])\n"
        "    membership <- false\ninstances_for big have_names = \"big\"\n")
rng = random.Random(int(os.environ.get("SOAK_SEED", 17)))
os.makedirs(OUT, exist_ok=True)
# the JVMs' working directory: HotSpot looks for memtrace's attach trigger
# there first, so it is checked for leftovers too
JVM_CWD = os.path.join(OUT, "cwd")
os.makedirs(JVM_CWD, exist_ok=True)


def log(*a):
    print(*a, flush=True)


def http(method, path, body=None, auth=True, timeout=10):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=body, method=method)
    if auth:
        req.add_header("Authorization", "Bearer " + TOKEN)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def fd_list(pid):
    out = []
    for fd in sorted(os.listdir("/proc/%d/fd" % pid), key=int):
        try:
            out.append("%s -> %s" % (fd, os.readlink("/proc/%d/fd/%s" % (pid, fd))))
        except OSError:
            pass
    return out


def proc_stat(pid):
    rss = 0
    for l in open("/proc/%d/status" % pid):
        if l.startswith("VmRSS:"):
            rss = int(l.split()[1])
    return rss, len(os.listdir("/proc/%d/fd" % pid))


class Jvm:
    def __init__(self, n):
        self.n, self.life = n, LIVES[n % len(LIVES)]
        self.jdk = JDKS[n % 2]
        self.out = open(os.path.join(OUT, "jvm.out"), "ab")
        self.p = subprocess.Popen(
            [os.path.join(self.jdk, "bin", "java"), "-Xmx32m", "-XX:TieredStopAtLevel=1",
             "-XX:CICompilerCount=1", "-XX:+UseSerialGC", "-cp", os.path.join(root, "build", "java"),
             "SteadyGc", "8"], stdout=self.out, stderr=subprocess.STDOUT, cwd=JVM_CWD)
        self.pid, self.t0 = self.p.pid, time.time()
        self.deadline = self.t0 + rng.uniform(15, 45)
        self.watched_at = None   # when serve first listed it
        self.acted = False       # the life's API call made
        self.killed_at = None
        self.note = ""

    def alive(self):
        return self.killed_at is None

    def kill(self, sig, note=""):
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass
        self.killed_at, self.note = time.time(), note


def watched():
    st, body = http("GET", "/api/v1/jvms")
    if st != 200:
        raise RuntimeError("GET /api/v1/jvms: %d %s" % (st, body))
    return {j["pid"]: j for j in json.loads(body)["jvms"]}


def series_pids():
    st, body = http("GET", "/metrics", auth=False)
    if st != 200:
        raise RuntimeError("GET /metrics: %d" % st)
    return set(int(p) for p in re.findall(r'pid="(\d+)"', body))


# ---- serve ----
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
tokf = os.path.join(OUT, "token")
open(tokf, "w").write(TOKEN + "\n")
serve_err = open(os.path.join(OUT, "serve.err"), "wb")
serve = subprocess.Popen([os.environ.get("MEMTRACE", os.path.join(root, "build", "memtrace")), "serve", "--all", "--listen",
                          "127.0.0.1:%d" % port, "--token-file", tokf, "--rescan", "1"],
                         stdout=subprocess.DEVNULL, stderr=serve_err)
for _ in range(100):
    try:
        http("GET", "/api/v1/jvms")
        break
    except OSError:
        if serve.poll() is not None:
            sys.exit("serve exited %d: %s" % (serve.returncode,
                     open(os.path.join(OUT, "serve.err")).read()))
        time.sleep(0.1)
t_start = time.time()
fds_start = fd_list(serve.pid)
jvms, started, samples, problems = [], 0, [], []
counts = {"agentload_kills": 0, "agentload_states": {}, "query_kills": 0, "query_running": 0,
          "queries_answered": {}, "age_on": 0}
next_sample = time.time()


stacks_taken = 0


def stacks(why):
    """serve's threads' stacks (gdb), when SOAK_STACKS=1: what it waits for."""
    global stacks_taken
    if os.environ.get("SOAK_STACKS") != "1" or stacks_taken >= 5:
        return
    stacks_taken += 1
    out = subprocess.run(["gdb", "-batch", "-p", str(serve.pid), "-ex", "thread apply all bt"],
                         capture_output=True, text=True).stdout
    with open(os.path.join(OUT, "stacks.txt"), "a") as f:
        f.write("==== %.0f s: %s\n%s\n" % (time.time() - t_start, why, out))


def check(final=False):
    now = time.time()
    w = watched()
    sp = series_pids()
    n0 = len(problems)
    for j in jvms:
        if j.alive() and now - j.t0 > 10 and (j.pid not in w or j.pid not in sp):
            problems.append("%.0f s: live JVM %d (%s, %.0f s old) %s" % (
                now - t_start, j.pid, j.life, now - j.t0,
                "not watched" if j.pid not in w else "has no series"))
        if not j.alive() and now - j.killed_at > 10 and (j.pid in w or j.pid in sp):
            problems.append("%.0f s: JVM %d dead for %.0f s still %s" % (
                now - t_start, j.pid, now - j.killed_at, "watched" if j.pid in w else "in the series"))
    if len(problems) > n0:
        stacks(problems[-1])
    return w


try:
    while True:
        now = time.time()
        live = [j for j in jvms if j.alive()]
        if now - t_start >= SECONDS or (started >= MAX_JVMS and not live):
            break
        while len(live) < LIVE and started < MAX_JVMS and now - t_start < SECONDS:
            j = Jvm(started)
            started += 1
            jvms.append(j)
            live.append(j)
        try:
            w = watched()
        except OSError as e:
            problems.append("%.0f s: the API did not answer: %s" % (now - t_start, e))
            w = {}
        for j in live:
            if j.watched_at is None and j.pid in w:
                j.watched_at = now
            if j.p.poll() is not None and j.alive():   # died on its own
                j.killed_at, j.note = now, "exited"
                continue
            if j.watched_at is None:
                if now - j.t0 > 30:
                    problems.append("%.0f s: JVM %d not watched 30 s after its start" % (now - t_start, j.pid))
                    j.kill(signal.SIGKILL, "never watched")
                continue
            if j.life in ("age", "agentload") and not j.acted:
                st, body = http("POST", "/api/v1/jvms/%d/age" % j.pid)
                j.acted = True
                counts["age_on"] += st in (200, 202)
                if j.life == "agentload":
                    # kill while serve loads the agent: once the state says
                    # "starting" (at most 3 s), after 0-150 ms more
                    state, t1 = "?", time.time()
                    while time.time() - t1 < 3:
                        st, body = http("GET", "/api/v1/jvms/%d" % j.pid)
                        state = json.loads(body)["age"]["state"] if st == 200 else "?"
                        if state != "off":
                            break
                        time.sleep(0.005)
                    time.sleep(rng.uniform(0, 0.15))
                    j.kill(signal.SIGKILL, "agent " + state)
                    counts["agentload_kills"] += 1
                    counts["agentload_states"][state] = counts["agentload_states"].get(state, 0) + 1
                continue
            if j.life == "query" and not j.acted and now - j.watched_at > 1:
                j.acted = True
                st, body = http("POST", "/api/v1/jvms/%d/query" % j.pid, PROG.encode())
                if st == 202:
                    qid = json.loads(body)["id"]
                    time.sleep(rng.uniform(0, 0.3))
                    st2, b2 = http("GET", "/api/v1/queries/%d" % qid)
                    state = json.loads(b2).get("state", "?") if st2 == 200 else "?"
                    j.kill(signal.SIGKILL, "query " + state)
                    j.qid = qid
                    counts["query_kills"] += 1
                    counts["query_running"] += state == "running"
                else:
                    problems.append("%.0f s: POST query to %d: %d %s" % (now - t_start, j.pid, st, body))
                continue
            if now >= j.deadline:
                j.kill(rng.choice([signal.SIGKILL, signal.SIGTERM]), "end of life")
        # queries of killed JVMs end (failed, or done if the walk finished first)
        for j in jvms:
            if hasattr(j, "qid") and not hasattr(j, "qend") and time.time() - j.killed_at > 2:
                st, b = http("GET", "/api/v1/queries/%d" % j.qid)
                if st == 200 and json.loads(b)["state"] != "running":
                    j.qend = json.loads(b)["state"]
                    counts["queries_answered"][j.qend] = counts["queries_answered"].get(j.qend, 0) + 1
                elif st == 200 and time.time() - j.killed_at > 30:
                    problems.append("query %d of dead JVM %d still running after 30 s" % (j.qid, j.pid))
                    j.qend = "stuck"
        for j in jvms:   # reap
            if not j.alive() and j.p.poll() is None and time.time() - j.killed_at > 10:
                j.p.kill()
            j.p.poll()
        if time.time() >= next_sample:
            next_sample += 5
            rss, fds = proc_stat(serve.pid)
            check()
            samples.append({"t": round(time.time() - t_start, 1), "rss_kb": rss, "fds": fds,
                            "live": len([j for j in jvms if j.alive()]), "started": started})
            if len(samples) % 12 == 1:
                log("t %6.0f s  live %2d  started %4d  serve rss %7d kB  fds %3d" % (
                    samples[-1]["t"], samples[-1]["live"], started, rss, fds))
        time.sleep(0.1)
finally:
    for j in jvms:
        if j.alive():
            j.kill(signal.SIGKILL, "end")
    for j in jvms:
        try:
            j.p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            j.p.kill()

time.sleep(12)   # serve's rescan drops them (1 s), a slow tick too
end = {}
try:
    w = check(final=True)
    end["watched_after"] = sorted(w)
    end["series_after"] = sorted(series_pids())
    rss, fds = proc_stat(serve.pid)
    samples.append({"t": round(time.time() - t_start, 1), "rss_kb": rss, "fds": fds, "live": 0,
                    "started": started})
    end["fds_after"] = fd_list(serve.pid)
except Exception as e:
    problems.append("after the churn: %s" % e)
serve.send_signal(signal.SIGINT)
try:
    end["serve_exit"] = serve.wait(timeout=30)
except subprocess.TimeoutExpired:
    serve.kill()
    end["serve_exit"] = "hung"
ours = [f for f in os.listdir("/tmp") if f.startswith((".memtrace", ".attach_pid", ".java_pid"))]
ours += ["cwd/" + f for f in os.listdir(JVM_CWD)]
jvm_own = sorted(os.listdir("/tmp"))
hs = sum(len(os.listdir("/tmp/" + d)) for d in os.listdir("/tmp") if d.startswith("hsperfdata_"))
end["tmp_memtrace_files"] = ours
end["tmp_entries"] = [f for f in jvm_own if not f.startswith("hsperfdata_")][:40]
end["tmp_hsperfdata_files"] = hs

# ---- summary ----
def slope(pts):   # least squares, per hour
    if len(pts) < 3:
        return 0.0
    n = len(pts); mx = sum(p[0] for p in pts) / n; my = sum(p[1] for p in pts) / n
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den * 3600 if den else 0.0

run = samples[:-1] if len(samples) > 1 else samples
half = run[len(run) // 2:]
rss = [s["rss_kb"] for s in run]; fds = [s["fds"] for s in run]
summary = {
    "seconds": round(time.time() - t_start), "jvms_started": started, "live_target": LIVE,
    "lives": {l: sum(1 for j in jvms if j.life == l) for l in LIVES}, "counts": counts,
    "rss_kb": {"first": rss[0], "min": min(rss), "max": max(rss), "last": rss[-1],
               "slope_second_half_kb_per_h": round(slope([(s["t"], s["rss_kb"]) for s in half]))},
    "fds": {"first": fds[0], "min": min(fds), "max": max(fds), "last": fds[-1],
            "after_churn": samples[-1]["fds"]},
    "end": end, "problems": problems, "fds_at_start": fds_start,
}
json.dump({"summary": summary, "samples": samples}, open(os.path.join(OUT, "soak.json"), "w"), indent=1)
log("samples (every 5 s; RSS of serve in kB, its open descriptors):")
step = max(1, len(samples) // 24)
for s_ in samples[::step] + ([samples[-1]] if (len(samples) - 1) % step else []):
    log("  t %6.0f s  live %2d  started %4d  rss %7d kB  fds %3d" % (
        s_["t"], s_["live"], s_["started"], s_["rss_kb"], s_["fds"]))
log(json.dumps(summary, indent=1))
ok = True
def verdict(name, cond, why):
    global ok
    ok &= bool(cond)
    log("%s  %s: %s" % ("PASS" if cond else "FAIL", name, why))
verdict("series", not problems, "%d problems" % len(problems) if problems else
        "every live JVM watched with its series, no dead one kept")
verdict("descriptors", samples[-1]["fds"] <= fds[0] + 2,
        "after the churn %d, at the start %d (max %d)" % (samples[-1]["fds"], fds[0], max(fds)))
# RSS: flat means no new highs once warmed up - the max of the last third
# within 10 % (+2 MiB) of the max before it (glibc's arenas make plateaus
# that come and go; a leak keeps climbing); the second half's slope and the
# medians of the thirds (after 30 s) are printed with it.
def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else 0
warm = [s["rss_kb"] for s in run if s["t"] >= 30] or rss
third = max(1, len(warm) // 3)
m1, m3 = median(warm[:third]), median(warm[-third:])
summary["rss_kb"]["median_first_third"], summary["rss_kb"]["median_last_third"] = m1, m3
hi_before, hi_last = max(warm[:-third] or warm), max(warm[-third:])
verdict("memory", hi_last <= hi_before * 1.10 + 2048,
        "RSS max of the last third %d kB vs %d kB before it; medians first/last third %d/%d "
        "kB; second-half slope %+d kB/h" % (hi_last, hi_before, m1, m3,
                                            summary["rss_kb"]["slope_second_half_kb_per_h"]))
verdict("tmp", not ours, "memtrace files left in /tmp and the JVMs' cwd: %s" % (ours or "none"))
verdict("serve exit", end.get("serve_exit") == 0, "exit %s" % end.get("serve_exit"))
sys.exit(0 if ok else 1)
