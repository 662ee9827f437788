#!/usr/bin/env python3
"""scripts/test-map.py [--update] - which tests cover each module.

For every module of user/ and dsl/ (x.c with its x.h), prints a markdown
table row: its unit test (tests/unit/test_x.c, test_agent_x.c for the agent,
test_dsl_x.c for dsl/; "none" when there is none) and the other unit tests that
include its header; the fuzz harnesses whose source includes its header
(tests/fuzz/); and the end-to-end cases that run a memtrace command whose code
reaches the module through its includes (a case's commands are read from its
`"$MEMTRACE" CMD` lines; the agent's modules are reached by every command that
loads the agent). With --update it rewrites the table between the markers in
tests/README.md instead of printing it.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
BEGIN, END = "<!-- test-map: begin -->", "<!-- test-map: end -->"
MANY = 10  # more e2e cases than this: a count and the commands
# The commands that load memtrace's JVMTI agent, and what else in a case does
# (serve's age switch, record's object category): the agent's own modules are
# reached by those cases.
AGENT_CMDS = {"attach", "detach", "age", "leaks", "query", "snapshot", "histo", "heap"}
AGENT_USE = r"/age\b|--age\b|--categories[ =]\S*object"


def rel(*p):
    return os.path.relpath(os.path.join(*p), ROOT)


def read(path):
    return open(os.path.join(ROOT, path), encoding="utf-8", errors="replace").read()


def modules():
    out = []
    for top in ("user", "dsl"):
        for d, _, fs in os.walk(os.path.join(ROOT, top)):
            out += [rel(d, f) for f in fs if f.endswith(".c")]
    return sorted(out)


def umbrella(header, mods):
    """The modules an umbrella header declares for (dsl/dsl.h: every stage)."""

    if header == "dsl/dsl.h":
        return [m for m in mods if m.startswith("dsl/")]
    if header == "user/sink/sinks.h":
        return [m for m in mods if m.startswith("user/sink/sink_")]
    if header == "user/cmd/cmds.h":  # the command table: main.c's, no command calls another
        return []
    c = header[:-2] + ".c"
    return [c] if c in mods else []


def resolve(src, name):
    for base in (os.path.dirname(src), "user", ".", "include"):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(ROOT, p)):
            return p
    return None


def direct(src, mods):
    """Modules whose header (or .c) src includes."""
    out = set()
    for name in INC.findall(read(src)):
        p = resolve(src, name)
        if not p:
            continue
        if p.endswith(".c"):
            out.add(p)
        elif p.endswith(".h"):
            out.update(umbrella(p, mods))
    return out


def closure(start, mods, deps):
    seen, todo = set(), list(start)
    while todo:
        m = todo.pop()
        if m in seen or m not in mods:
            continue
        seen.add(m)
        todo += deps.get(m, ())
        h = m[:-2] + ".h"
        if os.path.isfile(os.path.join(ROOT, h)):
            todo += direct(h, mods)
    return seen


def case_commands(path, cmds):
    """The memtrace commands a case runs ('top' for `memtrace -p`)."""
    out = set()
    text = read(path)
    if re.search(r"^\s*(?:\w+=\S+\s+)*serve_start\b", text, re.M):  # tests/e2e/lib.sh
        out.add("serve")
    if "scripts/doc-samples.py" in text:  # the commands of its SAMPLES table
        samples = read("scripts/doc-samples.py")
        out.update(c for c in re.findall(r'args=\["([\w-]+)"', samples) if c in cmds)
        if "serve=True" in samples:
            out.add("serve")
    for line in text.splitlines():
        for m in re.finditer(r'(?:"\$MEMTRACE"|\$MEMTRACE|\$M\b|/memtrace[\'"]?|memtrace[\'"]?)\s+(.*)', line):
            toks = m.group(1).split()
            i = 0
            while i < len(toks) and toks[i].startswith("-") and toks[i] != "-p":
                i += 2 if toks[i] == "--walk" else 1
            if i < len(toks):
                t = toks[i].strip("'\"")
                if t == "-p":
                    out.add("top")
                elif t in cmds:
                    out.add(t)
    return out


def table():
    mods = modules()
    deps = {m: direct(m, mods) for m in mods}
    cmds = {re.match(r"user/cmd/cmd_(\w+)\.c$", m).group(1).replace("_", "-"): m
            for m in mods if re.match(r"user/cmd/cmd_\w+\.c$", m)}
    reach = {c: closure([f], mods, deps) for c, f in cmds.items()}
    units = sorted(f for f in os.listdir(os.path.join(ROOT, "tests/unit")) if f.startswith("test_") and f.endswith(".c"))
    unit_inc = {u: direct(rel("tests/unit", u), mods) for u in units}
    fuzz = sorted(f for f in os.listdir(os.path.join(ROOT, "tests/fuzz")) if re.match(r"fuzz_\w+\.c$", f))
    fuzz_inc = {}
    for f in fuzz:
        inc = direct(rel("tests/fuzz", f), mods)
        for name in INC.findall(read(rel("tests/fuzz", f))):
            p = resolve(rel("tests/fuzz", f), name)
            if p and p.startswith("tests/fuzz/") and p.endswith(".h"):
                inc |= direct(p, mods)
        fuzz_inc[f[len("fuzz_"):-2]] = inc
    cases = sorted(f for f in os.listdir(os.path.join(ROOT, "tests/e2e/cases")) if f.endswith(".sh"))
    case_cmds = {c[:-3]: case_commands(rel("tests/e2e/cases", c), cmds) for c in cases}
    agent_cases = sorted(c[:-3] for c in cases if case_cmds[c[:-3]] & AGENT_CMDS or
                         re.search(AGENT_USE, read(rel("tests/e2e/cases", c))))

    rows = ["| module | unit test | fuzz | end-to-end cases |", "|---|---|---|---|"]
    for m in mods:
        base = os.path.basename(m)[:-2]
        own = ("test_agent_%s.c" if m.startswith("user/agent/") else
               "test_dsl_%s.c" if m.startswith("dsl/") else "test_%s.c") % base
        unit = f"`{own[:-2]}`" if own in units else "none"
        others = [u[:-2] for u in units if u != own and m in unit_inc[u]]
        if others:
            more = f" and {len(others) - 6} more" if len(others) > 6 else ""
            unit += " (also " + ", ".join(f"`{u}`" for u in others[:6]) + more + ")"
        fz = ", ".join(f"`{f}`" for f, inc in sorted(fuzz_inc.items()) if m in inc) or "-"
        via = {c for c, r in reach.items() if m in r}
        hit = sorted(c for c, cc in case_cmds.items() if cc & via)
        if m.startswith("user/agent/"):
            hit, via = agent_cases, None
        if not hit:
            e2e = "-"
        elif len(hit) > MANY:
            e2e = (f"{len(hit)} cases (those that load the agent)" if via is None else
                   f"{len(hit)} cases (through {len(via)} commands)" if len(via) > 6 else
                   f"{len(hit)} cases (through `{'`, `'.join(sorted(via))}`)")
        else:
            e2e = ", ".join(f"`{c}`" for c in hit)
        rows.append(f"| `{m}` | {unit} | {fz} | {e2e} |")
    return "\n".join(rows) + "\n"


def main():
    t = table()
    if "--update" not in sys.argv:
        sys.stdout.write(t)
        return 0
    path = os.path.join(ROOT, "tests/README.md")
    s = open(path).read()
    a, b = s.index(BEGIN) + len(BEGIN), s.index(END)
    open(path, "w").write(s[:a] + "\n" + t + s[b:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
