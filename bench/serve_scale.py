#!/usr/bin/env python3
"""bench/serve_scale.py - one node's scale: `memtrace serve --all` on the host
watching ~JVMS JVMs in podman containers while one is stopped and another
started every PERIOD seconds (run by bench/serve_scale.sh, which says the knobs).

Phases: base (serve alone, BASE s: whatever JVMs the machine already runs are
watched too), ramp (JVMS containers started), steady (STEADY s, none coming or
going: the CPU of watching alone), churn (SECONDS: each tick the oldest
running JVM is stopped - SIGTERM, every fourth SIGKILL, sent to its host pid -
and a new container started; at most INFLIGHT starts wait for podman at once,
so a machine that cannot keep up starts fewer and the rate it sustained is
printed), stop (every container stopped) and settle (until every gone JVM's
series are gone and serve's descriptors and BPF objects stay put for 10 s, at
most 60 s).
Every SCRAPE s /metrics is scraped (memtrace_jvm_info: the pids and container
ids serve shows); every 5 s serve's CPU (/proc/PID/stat), RSS, descriptors by
kind and the distinct BPF maps, programs and links they hold (fdinfo's
map_id, prog_id, link_id), its threads, the load average.
Truth is the bench's own: the containers it started (podman's --pidfile: the
JVM's host pid), when each was signalled and when its process was gone.
Prints a summary and PASS/FAIL lines; writes everything to OUT/scale.json.
"""
import json, os, re, signal, socket, subprocess, sys, time, urllib.request

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECONDS = float(os.environ.get("SCALE_SECONDS", 600))
JVMS = int(os.environ.get("SCALE_JVMS", 20))
PERIOD = float(os.environ.get("SCALE_PERIOD", 1.0))
INFLIGHT = int(os.environ.get("SCALE_INFLIGHT", 3))
SCRAPE = float(os.environ.get("SCALE_SCRAPE", 2.0))
RESCAN = os.environ.get("SCALE_RESCAN", "2")
BASE = float(os.environ.get("SCALE_BASE", 20))
STEADY = float(os.environ.get("SCALE_STEADY", 30))
OUT = os.environ["SCALE_OUT"]
MEMTRACE = os.environ["MEMTRACE"]
CLASSES = os.environ["SCALE_CLASSES"]
IMAGE = os.environ.get("SCALE_IMAGE", "docker.io/library/debian:bookworm-slim")
JDKS = [os.environ.get("JDK17", "/usr/lib/jvm/java-17-openjdk-amd64"),
        os.environ.get("JDK25", "/usr/lib/jvm/temurin-25-jdk-amd64")]
# what podman 4.3 needs on this VM (tests/e2e/podman.sh): runc, explicit limits
PODMAN_RUN = ["podman", "run", "--runtime", "runc", "--ulimit", "nofile=4096:4096",
              "--ulimit", "nproc=4096:4096"]
PREFIX = "mt-scale-%d-" % os.getpid()
TOKEN = "scale-token-%012d" % os.getpid()
HZ = os.sysconf("SC_CLK_TCK")
t0 = time.time()


def log(*a):
    print(*a, flush=True)


def rel(t):
    return round(t - t0, 2) if t is not None else None


def http(path, auth=False, timeout=10):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path))
    if auth:
        req.add_header("Authorization", "Bearer " + TOKEN)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode()


def alive(pid):
    """A process (not a zombie) with that pid."""
    try:
        st = open("/proc/%d/stat" % pid).read()
    except OSError:
        return False
    return st[st.rindex(")") + 2] not in "ZX"


def serve_sample(pid):
    """serve's CPU ticks, RSS (kB), threads, descriptors by kind, BPF ids."""
    st = open("/proc/%d/stat" % pid).read()
    f = st[st.rindex(")") + 2:].split()
    ticks = int(f[11]) + int(f[12])
    rss = thr = anon = 0
    for l in open("/proc/%d/status" % pid):
        if l.startswith("VmRSS:"):
            rss = int(l.split()[1])
        elif l.startswith("RssAnon:"):
            anon = int(l.split()[1])
        elif l.startswith("Threads:"):
            thr = int(l.split()[1])
    kinds, ids = {}, {"map_id": set(), "prog_id": set(), "link_id": set()}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        k = re.sub(r"\[\d+\]$", "", target)
        if k.startswith("/"):
            k = "file"
        kinds[k] = kinds.get(k, 0) + 1
        if "bpf" in target:
            try:
                for l in open("/proc/%d/fdinfo/%s" % (pid, fd)):
                    key = l.split(":")[0]
                    if key in ids:
                        ids[key].add(int(l.split()[1]))
            except OSError:
                pass
    return {"ticks": ticks, "rss_kb": rss, "anon_kb": anon, "threads": thr, "fds": sum(kinds.values()),
            "kinds": kinds, "maps": len(ids["map_id"]), "progs": len(ids["prog_id"]),
            "links": len(ids["link_id"])}


class Jvm:
    """One container the bench started."""

    def __init__(self, n):
        self.n, self.name = n, PREFIX + str(n)
        jdk = JDKS[n % 2]
        self.pidfile = os.path.join(OUT, "pids", self.name)
        self.t_start = time.time()
        self.p = subprocess.Popen(
            PODMAN_RUN + ["-d", "--rm", "--net", "none", "--name", self.name, "--pidfile",
                          self.pidfile, "--tmpfs", "/tmp:mode=1777", "-v", "%s:%s:ro" % (jdk, jdk),
                          "-v", "%s:/classes:ro" % CLASSES, IMAGE, jdk + "/bin/java", "-Xmx32m",
                          "-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1", "-XX:+UseSerialGC",
                          "-Xshare:auto", "-cp", "/classes", "SteadyGc", "4"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.pid = self.cid = None
        self.t_running = self.t_seen = self.t_signal = self.t_exit = self.t_gone = None
        self.sig = None
        self.error = None

    def poll_start(self):
        """Once podman run returned: the container id and the JVM's host pid."""
        if self.p.poll() is None:
            return False
        out = self.p.stdout.read().decode().strip()
        if self.p.returncode != 0:
            self.error = out[-300:]
            return True
        self.cid = out.splitlines()[-1]
        try:
            self.pid = int(open(self.pidfile).read())
        except (OSError, ValueError) as e:
            self.error = "no pidfile: %s" % e
            return True
        self.t_running = time.time()
        return True

    def stop(self, sig):
        self.sig, self.t_signal = sig, time.time()
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass


os.makedirs(os.path.join(OUT, "pids"), exist_ok=True)
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
tokf = os.path.join(OUT, "token")
open(tokf, "w").write(TOKEN + "\n")
serve_err = open(os.path.join(OUT, "serve.err"), "wb")
serve = subprocess.Popen([MEMTRACE, "serve", "--all", "--listen", "127.0.0.1:%d" % port,
                          "--token-file", tokf, "--rescan", RESCAN],
                         stdout=subprocess.DEVNULL, stderr=serve_err)
for _ in range(300):
    try:
        http("/metrics")
        break
    except OSError:
        if serve.poll() is not None:
            sys.exit("serve exited %d: %s" % (serve.returncode,
                                             open(os.path.join(OUT, "serve.err")).read()))
        time.sleep(0.1)

jvms, starting, running = [], [], []   # every container; not yet running; running, oldest first
samples, scrapes, problems = [], [], []
phase = "base"
next_scrape = next_sample = time.time()
scrape_ms = []


def scrape():
    """One /metrics scrape: which pids (and container ids) serve shows."""
    t = time.time()
    try:
        body = http("/metrics")
    except OSError as e:
        problems.append("%.0f s: /metrics did not answer: %s" % (t - t0, e))
        return
    took = (time.time() - t) * 1000
    info = {}
    for m in re.finditer(r'^memtrace_jvm_info\{([^}]*)\}', body, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        info[int(labels["pid"])] = labels.get("container_id", "")
    watched = re.search(r"^memtrace_jvms_watched (\d+)", body, re.M)
    series_pids = set(int(p) for p in re.findall(r'pid="(\d+)"', body))
    by_pid = {j.pid: j for j in jvms if j.pid}
    def shows(j):
        lab = info.get(j.pid)
        return bool(lab) and (j.cid.startswith(lab) or lab.startswith(j.cid))

    for j in jvms:
        if not j.pid:
            continue
        # a pid counts as this container's only with its container id, so
        # a pid reused later (pid_max is 32768 here) is not mistaken for it
        shown = shows(j)
        if shown and j.t_seen is None and j.t_signal is None:
            j.t_seen = t
        if j.t_exit is not None and j.t_gone is None and j.pid not in series_pids:
            j.t_gone = t
    ours_alive = [j for j in running if j.t_signal is None]
    scrapes.append({"t": rel(t), "ms": round(took, 1), "bytes": len(body),
                    "watched": int(watched.group(1)) if watched else None,
                    "series_pids": len(series_pids),
                    "ours_alive": len(ours_alive),
                    "ours_shown": sum(1 for j in ours_alive if shows(j)),
                    "dead_shown": sum(1 for p in series_pids if p in by_pid
                                      and by_pid[p].t_exit is not None),
                    "phase": phase})


def sample():
    x = serve_sample(serve.pid)
    x.update({"t": rel(time.time()), "phase": phase, "load1": os.getloadavg()[0],
              "watched": scrapes[-1]["watched"] if scrapes else None,
              "ours_alive": len([j for j in running if j.t_signal is None]),
              "starting": len(starting)})
    samples.append(x)
    if len(samples) % 6 == 1:
        log("t %6.0f s %-6s watched %3s ours %2d (+%d starting) cpu %6.1f s rss %6d kB fds %4d "
            "maps %3d progs %3d links %3d thr %2d load %.1f" % (
                x["t"], phase, x["watched"], x["ours_alive"], x["starting"], x["ticks"] / HZ,
                x["rss_kb"], x["fds"], x["maps"], x["progs"], x["links"], x["threads"], x["load1"]))


def tick_processes():
    """Collect finished starts; note exits of signalled JVMs."""
    for j in list(starting):
        if j.poll_start():
            starting.remove(j)
            if j.error:
                problems.append("%.0f s: %s did not start: %s" % (time.time() - t0, j.name, j.error))
            else:
                running.append(j)
    now = time.time()
    for j in list(running):
        if j.t_exit is None and not alive(j.pid):
            j.t_exit = now
            if j.t_signal is None:
                problems.append("%.0f s: %s (pid %d) exited by itself" % (now - t0, j.name, j.pid))
        if j.t_exit is not None:
            running.remove(j)


def step(until):
    """Run the scrapes and samples until time @until."""
    global next_scrape, next_sample
    while time.time() < until:
        tick_processes()
        now = time.time()
        if now >= next_scrape:
            next_scrape = max(next_scrape + SCRAPE, now)
            scrape()
        if now >= next_sample:
            next_sample = max(next_sample + 5, now)
            sample()
        if serve.poll() is not None:
            raise RuntimeError("serve exited %s" % serve.returncode)
        time.sleep(0.05)


def start_one():
    j = Jvm(len(jvms))
    jvms.append(j)
    starting.append(j)


stats = {}
try:
    log("serve (pid %d) on 127.0.0.1:%d, rescan %s s; /metrics every %.1f s; %d JVMs, one "
        "stopped and one started every %.1f s for %.0f s" % (serve.pid, port, RESCAN, SCRAPE,
                                                              JVMS, PERIOD, SECONDS))
    step(time.time() + BASE)
    phase = "ramp"
    t_ramp = time.time()
    while len(running) < JVMS and time.time() - t_ramp < 120:
        if len(starting) < INFLIGHT and len(running) + len(starting) < JVMS:
            start_one()
        step(time.time() + 0.2)
    step(time.time() + 10)   # every one watched
    phase = "steady"         # JVMS running, none coming or going
    step(time.time() + STEADY)
    phase = "churn"
    t_churn = time.time()
    tick, skipped = t_churn, 0
    while time.time() - t_churn < SECONDS:
        ready = [j for j in running if j.t_signal is None]
        if len(ready) + len(starting) > JVMS - 1 and ready:
            old = ready[0]
            old.stop(signal.SIGKILL if old.n % 4 == 3 else signal.SIGTERM)
        if len(starting) < INFLIGHT:
            start_one()
        else:
            skipped += 1
        tick += PERIOD
        step(tick)
    t_churn_end = time.time()
    phase = "stop"
    for j in running:
        if j.t_signal is None:
            j.stop(signal.SIGTERM)
    t_stop = time.time()
    while (running or starting) and time.time() - t_stop < 60:
        step(time.time() + 0.5)
        for j in running:   # started while stopping
            if j.t_signal is None:
                j.stop(signal.SIGTERM)
    # settle: serve back where the base left it (or 60 s)
    phase = "settle"
    t_settle = time.time()
    while time.time() - t_settle < 60:   # every series gone, descriptors steady for 10 s
        step(time.time() + 5)
        if (len(samples) >= 3 and all(j.t_gone for j in jvms if j.t_exit)
                and len(set((x["fds"], x["maps"], x["progs"]) for x in samples[-3:])) == 1):
            break
    stats.update(t_churn=t_churn, t_churn_end=t_churn_end, skipped=skipped,
                 settle_s=round(time.time() - t_settle, 1))
finally:
    for j in jvms:
        if j.pid and alive(j.pid):
            os.kill(j.pid, signal.SIGKILL)
    for j in starting:
        j.p.wait()
    # containers --rm remove themselves; what is left (a failed start) goes now
    left = subprocess.run(["podman", "ps", "-a", "--filter", "name=" + PREFIX, "--format",
                           "{{.Names}}"], capture_output=True, text=True).stdout.split()
    if left:
        subprocess.run(["podman", "rm", "-f", "-t", "0"] + left, capture_output=True)
    serve.send_signal(signal.SIGINT)
    try:
        serve_exit = serve.wait(timeout=60)
    except subprocess.TimeoutExpired:
        serve.kill()
        serve_exit = "hung"

# ---- summary ----
def mean(v):
    return sum(v) / len(v) if v else 0.0


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else None


churn = [x for x in samples if x["phase"] == "churn"]
base = [x for x in samples if x["phase"] == "base"]
end = samples[-1]
t_c0, t_c1 = rel(stats["t_churn"]), rel(stats["t_churn_end"])
first = [x for x in churn if x["t"] < t_c0 + 60]
last = [x for x in churn if x["t"] >= t_c1 - 60]
cpu_s = (churn[-1]["ticks"] - churn[0]["ticks"]) / HZ
wall = churn[-1]["t"] - churn[0]["t"]
w_churn = mean([s_["watched"] for s_ in scrapes if s_["phase"] == "churn" and s_["watched"]])
w_base = base[-1]["watched"] or 0
cpu_pct = 100.0 * cpu_s / wall
base_cpu = 100.0 * (base[-1]["ticks"] - base[0]["ticks"]) / HZ / max(1e-9, base[-1]["t"] - base[0]["t"])
ramped = [x for x in samples if x["phase"] == "ramp"][-1:] or churn[:1]
steady = [x for x in samples if x["phase"] == "steady"]
st_cpu = (100.0 * (steady[-1]["ticks"] - steady[0]["ticks"]) / HZ /
          max(1e-9, steady[-1]["t"] - steady[0]["t"])) if len(steady) > 1 else 0.0
w_steady = mean([s_["watched"] for s_ in scrapes if s_["phase"] == "steady" and s_["watched"]])
started = [j for j in jvms if j.t_running]
in_churn = [j for j in started if t_c0 <= rel(j.t_start) < t_c1]
seen_lat = [j.t_seen - j.t_running for j in started if j.t_seen]
start_lat = [j.t_running - j.t_start for j in started]
gone_lat = [j.t_gone - j.t_exit for j in jvms if j.t_exit and j.t_gone]
exit_lat = [j.t_exit - j.t_signal for j in jvms if j.t_exit and j.t_signal]
never_seen = [j for j in started if not j.t_seen and j.t_signal
              and j.t_signal - j.t_running > float(RESCAN) + SCRAPE + 5]
not_gone = [j for j in jvms if j.t_exit and not j.t_gone]
churn_scr = [s_ for s_ in scrapes if s_["phase"] == "churn"]


def per_jvm(key):
    """What one watched JVM adds to @key: ramped state against the base."""
    dw = (ramped[0]["watched"] or 0) - (base[-1]["watched"] or 0)
    return (ramped[0][key] - base[-1][key]) / dw if dw > 0 else 0.0


def residual(xs, key, b):
    """@key less what the watched JVMs account for (b each)."""
    return mean([x[key] - b * (x["watched"] or 0) for x in xs])


growth = {}
for key in ("fds", "maps", "progs", "links", "rss_kb", "anon_kb", "threads"):
    b = per_jvm(key)
    growth[key] = {"base": base[-1][key], "per_jvm": round(b, 2),
                   "first_min": round(mean([x[key] for x in first]), 1),
                   "last_min": round(mean([x[key] for x in last]), 1),
                   "residual_first_min": round(residual(first, key, b), 1),
                   "residual_last_min": round(residual(last, key, b), 1),
                   "end": end[key], "max": max(x[key] for x in samples)}
summary = {
    "seconds": round(wall), "jvms_target": JVMS, "period_s": PERIOD, "rescan_s": RESCAN,
    "scrape_s": SCRAPE,
    "started_in_churn": len(in_churn), "starts_per_s": round(len(in_churn) / max(1, t_c1 - t_c0), 3),
    "ticks_without_a_start": stats["skipped"], "failed_starts": len(jvms) - len(started),
    "watched_mean_churn": round(w_churn, 1), "watched_base": round(w_base, 1),
    "ours_alive_mean": round(mean([x["ours_alive"] for x in churn]), 1),
    "load1_mean": round(mean([x["load1"] for x in churn]), 2),
    "cpu_pct_core": round(cpu_pct, 2), "cpu_pct_core_base": round(base_cpu, 2),
    "cpu_pct_per_jvm": round(cpu_pct / w_churn, 3) if w_churn else None,
    "cpu_pct_core_steady": round(st_cpu, 2), "watched_mean_steady": round(w_steady, 1),
    "cpu_pct_per_jvm_steady": round(st_cpu / w_steady, 3) if w_steady else None,
    "cpu_s_per_start": round((cpu_pct - st_cpu) / 100.0 * wall / max(1, len(in_churn)), 3),
    "anon_kb_base": base[-1]["anon_kb"], "anon_kb_per_jvm": round(per_jvm("anon_kb")),
    "rss_kb_base": base[-1]["rss_kb"], "rss_kb_per_jvm": round(per_jvm("rss_kb")),
    "rss_kb_churn_mean": round(mean([x["rss_kb"] for x in churn])),
    "rss_kb_max": max(x["rss_kb"] for x in samples),
    "podman_run_s": {"p50": pct(start_lat, .5), "p95": pct(start_lat, .95), "max": max(start_lat, default=None)},
    "watch_latency_s": {"p50": pct(seen_lat, .5), "p95": pct(seen_lat, .95), "max": max(seen_lat, default=None)},
    "exit_after_signal_s": {"p50": pct(exit_lat, .5), "p95": pct(exit_lat, .95), "max": max(exit_lat, default=None)},
    "series_gone_after_exit_s": {"p50": pct(gone_lat, .5), "p95": pct(gone_lat, .95),
                                 "max": max(gone_lat, default=None), "n": len(gone_lat)},
    "never_seen": [(j.name, j.pid) for j in never_seen], "not_gone": [(j.name, j.pid) for j in not_gone],
    "ours_shown_over_alive": "%d/%d" % (sum(s_["ours_shown"] for s_ in churn_scr),
                                        sum(s_["ours_alive"] for s_ in churn_scr)),
    "dead_shown_scrapes": sum(1 for s_ in churn_scr if s_["dead_shown"]),
    "scrape_ms": {"p50": pct([s_["ms"] for s_ in churn_scr], .5),
                  "max": max([s_["ms"] for s_ in churn_scr], default=None)},
    "scrape_bytes_mean": round(mean([s_["bytes"] for s_ in churn_scr])),
    "growth": growth, "settle_s": stats["settle_s"], "serve_exit": serve_exit,
    "fd_kinds_end": end["kinds"], "fd_kinds_base": base[-1]["kinds"],
    "problems": problems[:50],
}
json.dump({"summary": summary, "samples": samples, "scrapes": scrapes,
           "jvms": [{"n": j.n, "pid": j.pid, "cid": j.cid, "start": rel(j.t_start),
                     "running": rel(j.t_running), "seen": rel(j.t_seen), "signal": rel(j.t_signal),
                     "sig": j.sig, "exit": rel(j.t_exit), "gone": rel(j.t_gone), "error": j.error}
                    for j in jvms]},
          open(os.path.join(OUT, "scale.json"), "w"), indent=1)
log(json.dumps(summary, indent=1))
g = growth
log("serve --all, %d JVMs in containers, one stopped and one started every %.1f s: %d started "
    "in %d s (%.2f/s), %.1f watched on average (%.1f before ours), load average %.2f" % (
        JVMS, PERIOD, len(in_churn), wall, summary["starts_per_s"], w_churn, w_base,
        summary["load1_mean"]))
log("  CPU: churning %.2f %% of a core = %.3f %% per watched JVM; steady (%.1f JVMs, none "
    "coming or going) %.2f %% = %.3f %% per JVM; a start and a stop %.3f CPU s more" % (
        cpu_pct, summary["cpu_pct_per_jvm"] or 0, w_steady, st_cpu,
        summary["cpu_pct_per_jvm_steady"] or 0, summary["cpu_s_per_start"]))
log("  RSS: %d kB base, %+d kB per JVM (%+d kB of it anonymous, the rest libjvm's pages "
    "mapped: page cache shared), max %d kB" % (
        base[-1]["rss_kb"], summary["rss_kb_per_jvm"], summary["anon_kb_per_jvm"],
        summary["rss_kb_max"]))
for key in ("fds", "maps", "progs", "links", "threads", "rss_kb", "anon_kb"):
    log("  %-8s base %6d, %6.2f per JVM; first minute %8.1f, last minute %8.1f; less the "
        "JVMs' share: %8.1f -> %8.1f; end %6d" % (
            key, g[key]["base"], g[key]["per_jvm"], g[key]["first_min"], g[key]["last_min"],
            g[key]["residual_first_min"], g[key]["residual_last_min"], g[key]["end"]))
log("  series: gone %s s after the JVM's exit (p50/p95/max, %d JVMs); watched %s s after "
    "podman run returned (p50/p95/max)" % (
        "/".join("%.1f" % v for v in (summary["series_gone_after_exit_s"]["p50"] or 0,
                                      summary["series_gone_after_exit_s"]["p95"] or 0,
                                      summary["series_gone_after_exit_s"]["max"] or 0)),
        len(gone_lat), "/".join("%.1f" % v for v in (pct(seen_lat, .5) or 0,
                                                      pct(seen_lat, .95) or 0,
                                                      max(seen_lat, default=0)))))
ok = True


def verdict(name, cond, why):
    global ok
    ok &= bool(cond)
    log("%s  %s: %s" % ("PASS" if cond else "FAIL", name, why))


# no growth: with every container gone, serve holds what it held before them
# (the watched JVMs not ours - other users' - accounted for at their per-JVM
# share), and during the churn the last minute's residual is the first's
for key, slack in (("fds", 2), ("maps", 0), ("progs", 0), ("links", 0)):
    b = g[key]["per_jvm"]
    allowed = g[key]["base"] + b * max(0, (end["watched"] or 0) - (base[-1]["watched"] or 0)) + slack
    grew = g[key]["residual_last_min"] - g[key]["residual_first_min"]
    verdict(key, end[key] <= allowed and grew <= max(slack, b) + 1,
            "end %d (allowed %.0f); residual first->last minute %+.1f (allowed %+.1f)" % (
                end[key], allowed, grew, max(slack, b) + 1))
grew = g["anon_kb"]["residual_last_min"] - g["anon_kb"]["residual_first_min"]
verdict("memory", grew <= 0.10 * g["anon_kb"]["first_min"] + 2048,
        "anonymous RSS less the JVMs' share, first->last minute %+.0f kB (allowed %+.0f)" % (
            grew, 0.10 * g["anon_kb"]["first_min"] + 2048))
# returned: the anonymous memory of gone JVMs goes back (a flat residual with
# the peak kept would pass the check above)
dw = max(0, (end["watched"] or 0) - (base[-1]["watched"] or 0))
allowed = g["anon_kb"]["base"] + g["anon_kb"]["per_jvm"] * dw + 8192
verdict("memory returned", end["anon_kb"] <= allowed,
        "anonymous RSS at the end %d kB (allowed %.0f: the base, %d JVMs more, 8 MiB)" % (
            end["anon_kb"], allowed, dw))
gone_max = summary["series_gone_after_exit_s"]["max"] or 0
verdict("series dropped", not not_gone and gone_max <= float(RESCAN) + SCRAPE + 10,
        "every exited JVM's series gone, at most %.1f s after its exit (allowed %.0f)" % (
            gone_max, float(RESCAN) + SCRAPE + 10) if not not_gone else
        "%d exited JVMs still in /metrics: %s" % (len(not_gone), not_gone[:5]))
verdict("series present", not never_seen, "every JVM that lived long enough was watched"
        if not never_seen else "%d never in /metrics: %s" % (len(never_seen), never_seen[:5]))
verdict("problems", not problems, "none" if not problems else "%d: %s" % (len(problems), problems[:5]))
verdict("serve exit", serve_exit == 0, "exit %s" % serve_exit)
sys.exit(0 if ok else 1)
