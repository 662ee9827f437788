#!/usr/bin/env python3
"""scripts/doc-samples.py - the sample outputs in docs/*.md, produced by memtrace.

Each sample in docs/ is the fenced block right after a marker line

    <!-- sample: NAME -->

where NAME is one of SAMPLES below: a memtrace command run on a test JVM
(tests/java/) and the part of its output the page shows.

    scripts/doc-samples.py [--update] [--jdk JAVA_HOME] [--only NAME,...] [--tmp DIR]

Without --update it runs every sample and compares the *shape* of its output
with the block in the doc: numbers (with their units), hex addresses, paths
and Java class and method names are masked, blanks are collapsed, and
consecutive lines of one shape count once (a table of 3 or 5 rows has one
shape). Labels, words and the order of lines must be equal, so a page whose
sample no longer matches what memtrace prints fails (exit 1, with a diff of
the shapes). --update writes the outputs themselves into the docs.

The e2e case tests/e2e/cases/docs_samples.sh runs the check on both JDKs
(`make check`). Needs root (BPF), build/memtrace, build/java
(tests/java/build.sh) and a JDK (default: JDK 17, the JDK the pages show).
"""
import argparse
import ctypes
import difflib
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MARK = re.compile(r"^<!-- sample: ([\w-]+) -->$")

# The test JVMs: a name, the Java command's arguments, the line that says it is ready.
JVMS = {
    "demo": (["-Xmx512m", "-XX:+UseG1GC", "DemoWorkload", "900"], "READY"),
    "locks": (["-Xmx64m", "JucLocks", "rwdeadlock", "mixed", "blocked", "latch", "notify", "idle"], "LOCKED"),
}

QUERY = """set_type s:
    roots <- objects.filter([it | it is DemoWorkload.Session])
    membership <- false
    on_inclusion <- [ n <- n + 1  bytes <- bytes + THIS.size ]
    n : int <- 0
    bytes : int <- 0
instances_for s have_names = "sessions\""""

QUERY_AGE = """set_type old:
    roots <- objects.filter([it | it is DemoWorkload.Session and it.age >= 1])
    membership <- false
    on_inclusion <- [ n <- n + 1 ]
    n : int <- 0
instances_for old have_names = "sessions seen 1+ GCs ago\""""

GC_MASKS = [(r"G1 (Young|Old) Generation\s+(young|full)", "COLLECTOR KIND"),
            (r"causes?: .*", "cause: CAUSES"),
            (r", N pauses? of concurrent cycles|, N concurrent cycles?(?= in)| \(the JVM exited\)"
             r"|, N concurrent-cycle pauses|, N cycles(?=, pause)", "")]

# The samples, run in this order. Each: name -> dict with
#   jvm     the JVM whose pid replaces {pid} in args
#   args    memtrace's arguments (files are relative: memtrace runs in the
#           script's temporary directory)
#   serve   instead of args: `memtrace serve -p PID`, then GET /metrics
#   stream  "stdout" (default) or "stderr"
#   keep    the lines shown: parts joined by a "..." line, each part a list of
#           steps applied in order: ("head", N), ("tail", N), ("from", RE) (from
#           the first line matching RE), ("until", RE) (up to the first line
#           matching RE, included), ("grep", RE); default every line
#   masks   (RE, replacement) applied before the common masks: data that is
#           neither a number nor a name (vendors, collectors, causes)
#   drop    RE: lines that differ between the JDKs, left out of the comparison
# Samples with the same jvm, args and serve share one run.
SAMPLES = {
    "ps": dict(jvm="demo", args=["ps"], keep=[[("grep", r"^PID|^{pid} ")]]),
    "doctor": dict(jvm="demo", args=["doctor", "-p", "{pid}"],
                   # the page size and its reason, and the hint that comes with
                   # slow page faults, are the machine's (util_hugepages_wanted())
                   masks=[(r"^JVM N: .*, uid", "JVM N: VENDOR, uid"),
                          (r"snapshot arrays in .*", "snapshot arrays in PAGES: WHY")],
                   drop=r"ExtendedDTraceProbes|^\s+JDK \d+ prints|parked virtual threads' stacks"
                        r"|hint: a page fault costs|page of the heap is one: this JVM|would have its heap in"),
    "gc": dict(jvm="demo", args=["gc", "-p", "{pid}", "--duration", "3"],
               # the second record on, the first a memory manager names (a
               # loaded machine can put a G1 Remark, which none names on
               # JDK 17, there)
               keep=[[("from", r"^#([2-9]|\d\d+) +\S+ +G1 Young Generation "), ("head", 4)],
                     [("tail", 5)]], masks=GC_MASKS),
    "alloc": dict(jvm="demo", args=["alloc", "-p", "{pid}", "--duration", "2", "--top", "4"],
                  keep=[[("head", 6)]]),
    "alloc-stack": dict(jvm="demo", args=["alloc", "-p", "{pid}", "--duration", "2", "--by", "stack", "--top", "3"],
                        keep=[[("from", r"^top allocation sites"), ("head", 4)]]),
    "top": dict(jvm="demo", args=["top", "-p", "{pid}", "--plain", "--interval", "1", "--duration", "2"],
                keep=[[("head", 3)]], masks=GC_MASKS),
    "top-stacks": dict(jvm="demo", args=["top", "-p", "{pid}", "--plain", "--stacks", "--interval", "1",
                                         "--duration", "2"], keep=[[("head", 6)]], masks=GC_MASKS),
    "attach": dict(jvm="demo", args=["attach", "-p", "{pid}"], masks=[(r"^  java .*", "  java VERSION")],
                   drop=r"^\s+note\s+JDK \d+ prints"),
    "detach": dict(jvm="demo", args=["detach", "-p", "{pid}"]),
    # 128k, not the default 512k: the demo's survivors (a 1 KiB leak a round) are then
    # sampled in every 3 s window; at 512k a window that ended just after a young GC
    # could hold no live sample at all (an empty table, seen once in CI)
    "age": dict(jvm="demo", args=["age", "-p", "{pid}", "--duration", "3", "--interval", "128k",
                                  "--top", "5"]),
    # the sampled sites under the holder: one or more, with callers or not
    "leaks": dict(jvm="demo", args=["leaks", "-p", "{pid}", "--duration", "8", "--top", "1",
                                    "--interval", "256k"], drop=r"^\s+\d+\s+[\w$.<>]+[:.]",
                 # one group of ages per interval the holder grew in: as many as
                 # the snapshots a slower machine fits in the window, less one
                 # (one GC said in the singular)
                 masks=[(r"alive after N GC(?!s)", "alive after N GCs"),
                        (r"(?<=GCs)(; \+N born [^;]*?, alive after N GCs)+", ""),
                        # found under the holder, or only its classes' (a busy
                        # machine's fewer samples)
                        (r"sites where its (classes' )?objects were allocated.*",
                         "sites where its objects were allocated")]),
    "histo": dict(jvm="demo", args=["histo", "-p", "{pid}", "--top", "5"]),
    "walk-pause": dict(jvm="demo", args=["histo", "-p", "{pid}", "--top", "5"], stream="stderr",
                       keep=[[("grep", r"heap walk paused")]], masks=[(r"\(.*\)$", "(DETAILS)")]),
    # which of the demo's two holders (its leak, its cache) retains more moves with its age
    # and whether one object holds most of a top retainer (a "└" row below it)
    # the largest retainers change order with the demo's phase (a class or an array first): every object is J
    "heap-retained": dict(jvm="demo", args=["heap", "-p", "{pid}", "--retained", "--top", "3"],
                          masks=[(r"\bclass [\w$]+", "J")], drop=r"└"),
    "heap-paths": dict(jvm="demo", args=["heap", "-p", "{pid}", "--paths", "DemoWorkload$Session", "--top", "1"]),
    "query": dict(jvm="demo", args=["query", "-p", "{pid}", "-e", QUERY]),
    "query-count": dict(jvm="demo", args=["query", "-p", "{pid}", "--count", "2", "--every", "1",
                                          "--max-pause", "2000", "-e", QUERY_AGE]),
    "snapshot": dict(jvm="demo", args=["snapshot", "-p", "{pid}", "-o", "demo.snap"], stream="stderr",
                     keep=[[("grep", r"^memtrace: saved")]]),
    "query-file": dict(jvm="demo", args=["query", "demo.snap", "-e", QUERY]),
    "record": dict(jvm="demo", args=["record", "-p", "{pid}", "-o", "demo.mtr", "--duration", "2"],
                   stream="stderr", keep=[[("grep", r"^memtrace: (record(ing|ed) |of \d+ events observed)")]]),
    "report": dict(jvm="demo", args=["report", "demo.mtr"],
                   keep=[[("head", 1)], [("from", r"^summary:"), ("head", 5)],
                         [("from", r" allocated by pid "), ("until", r"^lost events")]], masks=GC_MASKS),
    "check": dict(jvm="demo", args=["check", "demo.mtr"]),
    "serve-metrics": dict(jvm="demo", serve=True,
                          keep=[[("grep", r"^(jvm_gc_pause_seconds_count|jvm_memory_used_bytes|"
                                          r"jvm_gc_memory_allocated_bytes_total|memtrace_gc_pause_seconds_count)\{")]],
                          masks=[(r'="[^"]*"', '="V"')]),
    "locks-now": dict(jvm="locks", args=["locks", "-p", "{pid}", "--now"],
                      keep=[[("head", 1)], [("from", r'^  "box-waiter"'), ("head", 6)],
                            [("from", r'^  "mix-2"'), ("head", 4)],
                            [("from", r'^  "pool-1-thread-1"'), ("head", 8)],
                            [("from", r"^deadlock 1:")]],
                      # a waiter's stack is one frame shorter or longer with the
                      # moment: every frame alike, consecutive ones collapse
                      masks=[(r"at J \(J:N\)", "at J")]),
    "locks": dict(jvm="locks", args=["locks", "-p", "{pid}", "--duration", "2"]),
}

UNIT = r"(?:B|KiB|MiB|GiB|TiB|ns|us|ms|s|m|h|%)"
JAVA = (r"(?:[A-Za-z_$][\w$]*(?:\.[A-Za-z_$<][\w$<>]*)+|[A-Za-z_][\w]*\$[\w$]+|"
        r"\b(?:boolean|byte|char|short|int|long|float|double)\b)(?:/H)?(?:\.[\w$<>]+)*(?:\[\])*")


def shape(lines, masks=(), drop=None):
    """The lines as the comparison sees them (module docstring)."""
    out = []
    for line in lines:
        if drop and re.search(drop, line):
            continue
        line = re.sub(r"0x[0-9a-fA-F]+", "H", line)
        line = re.sub(r"(?<![\w.])/[^\s,;)(\]'\"]+", "PATH", line)
        line = re.sub(JAVA, "J", line)
        line = re.sub(r"\d+(?:[.:]\d+)*", "N", line)
        for pat, rep in masks:
            line = re.sub(pat, rep, line)
        line = re.sub(r"N\s*" + UNIT + r"(?![\w])", "N", line)
        line = re.sub(r"J(?:\s*<-\s*J)+", "J", line)
        line = re.sub(r"J N(?:, J N)+", "J N, ...", line)
        line = " ".join(line.split())
        if out and out[-1] == line:
            continue
        out.append(line)
    return out


def select(lines, keep, pid):
    if not keep:
        return lines
    out = []
    for i, part in enumerate(keep):
        sel = lines
        for step in part:
            kind, arg = step
            if isinstance(arg, str):
                arg = arg.replace("{pid}", str(pid))
            if kind == "head":
                sel = sel[:arg]
            elif kind == "tail":
                sel = sel[-arg:]
            elif kind == "from":
                idx = [j for j, l in enumerate(sel) if re.search(arg, l)]
                sel = sel[idx[0]:] if idx else []
            elif kind == "until":
                idx = [j for j, l in enumerate(sel) if re.search(arg, l)]
                sel = sel[:idx[0] + 1] if idx else sel
            elif kind == "grep":
                sel = [l for l in sel if re.search(arg, l)]
        if i:
            out.append("...")
        out += sel
    return out


class Jvms:
    """The test JVMs, started on first use, killed at exit (and with this
    process: PR_SET_PDEATHSIG)."""

    def __init__(self, java, classes, tmp):
        self.java, self.classes, self.tmp, self.procs = java, classes, tmp, {}

    def pid(self, name):
        if name not in self.procs:
            args, ready = JVMS[name]
            out = open(os.path.join(self.tmp, name + ".out"), "w")
            libc = ctypes.CDLL(None, use_errno=True)
            p = subprocess.Popen([self.java, "-cp", self.classes] + args, stdout=out, stderr=subprocess.STDOUT,
                                 preexec_fn=lambda: libc.prctl(1, signal.SIGKILL))  # PR_SET_PDEATHSIG
            self.procs[name] = p
            for _ in range(600):
                if ready in open(out.name).read():
                    break
                if p.poll() is not None:
                    break
                time.sleep(0.1)
            else:
                raise SystemExit(f"doc-samples: JVM {name} did not print {ready}")
            if p.poll() is not None:
                raise SystemExit(f"doc-samples: JVM {name} exited: {open(out.name).read()}")
            time.sleep(1)  # past its start-up
        return self.procs[name].pid

    def stop(self):
        for p in self.procs.values():
            p.kill()
            p.wait()
            try:
                os.unlink(f"/tmp/.memtrace-{p.pid}.sock")  # an agent socket a killed JVM leaves
            except OSError:
                pass


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(memtrace, spec, pid, tmp):
    """(command as shown, stdout, stderr)."""
    if spec.get("serve"):
        port = free_port()
        args = ["serve", "-p", str(pid), "--listen", f"127.0.0.1:{port}"]
        p = subprocess.Popen([memtrace] + args, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        body = ""
        for _ in range(100):
            time.sleep(0.2)
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
            except OSError:
                continue
            if "jvm_gc_pause_seconds_count{" in body and "jvm_memory_used_bytes{" in body:
                break
        time.sleep(2)  # a few collections more, the used bytes refreshed
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        p.terminate()
        _, err = p.communicate(timeout=30)
        pat = next(step[1] for step in spec["keep"][0] if step[0] == "grep")
        shown = (f"memtrace serve -p {pid} --listen 127.0.0.1:{port} &\n"
                 f"$ curl -s 127.0.0.1:{port}/metrics | grep -E '{pat}'")
        return shown, body, err
    args = [a.replace("{pid}", str(pid)) for a in spec["args"]]
    r = subprocess.run([memtrace] + args, cwd=tmp, capture_output=True, text=True, timeout=120)
    if r.returncode:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit(f"doc-samples: memtrace {' '.join(args)} exited {r.returncode}")
    return "memtrace " + " ".join(quote(a) for a in args), r.stdout, r.stderr


def quote(a):
    """An argument as a shell needs it (a program keeps its lines)."""
    return "'" + a + "'" if "\n" in a else shlex.quote(a)


def doc_blocks():
    """{name: [(path, index of the marker line)]} and every doc's lines."""
    where, docs = {}, {}
    ddir = os.path.join(ROOT, "docs")
    for f in sorted(os.listdir(ddir)):
        if not f.endswith(".md"):
            continue
        path = os.path.join(ddir, f)
        lines = open(path).read().split("\n")
        docs[path] = lines
        for i, line in enumerate(lines):
            m = MARK.match(line.strip())
            if m:
                where.setdefault(m.group(1), []).append((path, i))
    return where, docs


def block_at(lines, i):
    """(start, end) of the fenced block after marker line i: lines[start:end]
    is its content; None if the marker is not followed by one."""
    if i + 1 < len(lines) and lines[i + 1].startswith("```"):
        for j in range(i + 2, len(lines)):
            if lines[j].startswith("```"):
                return i + 2, j
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--jdk", default=os.environ.get("JAVA_HOME") or "/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--only", default="")
    ap.add_argument("--memtrace", default=os.path.join(ROOT, "build", "memtrace"))
    ap.add_argument("--classes", default=os.path.join(ROOT, "build", "java"))
    ap.add_argument("--tmp")
    a = ap.parse_args()
    only = [n for n in a.only.split(",") if n]
    where, docs = doc_blocks()
    problems = []
    for name in where:
        if name not in SAMPLES:
            problems.append(f"{where[name][0][0]}: sample '{name}' is not in scripts/doc-samples.py's SAMPLES")
    for name in SAMPLES:
        if name not in where:
            problems.append(f"sample '{name}' appears in no docs/*.md")
    tmp = a.tmp or tempfile.mkdtemp(prefix="mt-docs.")
    jvms = Jvms(os.path.join(a.jdk, "bin", "java"), a.classes, tmp)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    outputs, cache = {}, {}
    try:
        for name, spec in SAMPLES.items():
            if only and name not in only or name not in where:
                continue
            pid = jvms.pid(spec["jvm"])
            key = (spec["jvm"], tuple(spec.get("args", ())), spec.get("serve", False))
            t0 = time.time()
            if key not in cache:
                cache[key] = run(a.memtrace, spec, pid, tmp)
            shown, out, err = cache[key]
            lines = [l.rstrip() for l in (err if spec.get("stream") == "stderr" else out).rstrip("\n").split("\n")]
            outputs[name] = (["$ " + shown] + select(lines, spec.get("keep"), pid), spec)
            print(f"  {name}: {len(outputs[name][0]) - 1} lines ({time.time() - t0:.1f} s)", file=sys.stderr)
    finally:
        jvms.stop()
    for name, (got, spec) in outputs.items():
        if a.update:
            continue
        for path, i in where[name]:
            lines = docs[path]
            b = block_at(lines, i)
            if not b:
                problems.append(f"{path}:{i + 1}: sample '{name}' has no fenced block after its marker")
                continue
            mask = lambda ls: shape(ls, spec.get("masks", ()), spec.get("drop"))
            want, now = mask(lines[b[0]:b[1]]), mask("\n".join(got).split("\n"))
            if want != now:
                problems.append(f"{os.path.relpath(path, ROOT)}:{i + 1}: sample '{name}' no longer matches "
                                "memtrace's output (shapes, doc then now):\n" +
                                "\n".join("    " + d for d in difflib.unified_diff(want, now, "doc", "now", lineterm="")))
    if a.update:
        # each page's blocks from its last to its first: a block that changes
        # size moves the lines after it
        for path, lines in docs.items():
            marks = sorted(((i, n) for n, ws in where.items() for pth, i in ws if pth == path and n in outputs),
                           reverse=True)
            for i, name in marks:
                b = block_at(lines, i)
                new = ["```"] + "\n".join(outputs[name][0]).split("\n") + ["```"]
                if b:
                    lines[b[0] - 1:b[1] + 1] = new
                else:
                    lines[i + 1:i + 1] = new
            if marks:
                open(path, "w").write("\n".join(lines))
    for p in problems:
        print(p)
    checked = len(outputs)
    print(f"doc samples: {checked} {'written' if a.update else 'checked'}, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
