#!/usr/bin/env python3
"""scripts/check-layers.py - the layout rules of user/ and dsl/ (user/README.md).

Fails (exit 1, one line per finding) when
  - a file includes a header of a folder higher in the stack below, or
    user/agent/ (the JVMTI agent, its own shared object) includes anything but
    itself and include/memtrace/;
  - modules include each other in a loop (a module is x.c with x.h; a loop is a
    strongly connected component of the include graph with more than one module);
  - a .c file declares a function `extern` (a call that no header shows), or a
    header declares a function that another module's .c defines (so that every
    call shows as an include of the callee's own header, and include loops are
    dependency loops).
  - a folder has no README.md, or its README.md does not name one of the
    folder's modules (x.c) as `x` (or `x.c`, `x.h`): each folder says what it
    owns, module by module.
With --stats it also prints files per folder and the longest include chain.
"""
import os, re, sys

STACK = ['lib', 'dsl', 'analysis', 'jvm', 'jstack', 'probe', 'agentctl', 'heap', 'monitor', 'sink', 'serve', 'cmd']
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
EXTERN_FN = re.compile(r'^\s*extern\s+[^;=()]*\b\w+\s*\([^;]*\)\s*;', re.M)


def folder(path):
    """'user/lib/util.c' -> 'lib', 'dsl/lexer.c' -> 'dsl', 'user/agent/x.c' -> 'agent'."""
    parts = path.split('/')
    return parts[0] if parts[0] == 'dsl' else parts[1]


def sources():
    out = []
    for top in ('user', 'dsl'):
        for d, _, fs in os.walk(os.path.join(ROOT, top)):
            out += [os.path.relpath(os.path.join(d, f), ROOT) for f in fs if f.endswith(('.c', '.h'))]
    return sorted(out)


def resolve(src, name):
    """The project file an #include "name" in src means, or None (system, skeleton)."""
    for base in (os.path.dirname(src), 'user', '.', 'include'):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(ROOT, p)):
            return p
    return None


def main():
    files = sources()
    edges, problems = {}, []
    for f in files:
        text = open(os.path.join(ROOT, f), encoding='utf-8', errors='replace').read()
        edges[f] = []
        for name in INC.findall(text):
            dst = resolve(f, name)
            if dst is None:
                continue
            if dst.startswith('include/'):
                continue
            edges[f].append(dst)
            a, b = folder(f), folder(dst)
            if a == 'agent' or b == 'agent':
                if a != b:
                    problems.append(f'{f}: includes {dst}: user/agent/ and the rest of memtrace share only include/memtrace/')
            elif a not in STACK or b not in STACK:
                problems.append(f'{f}: folder {a if a not in STACK else b}/ is not in the stack (scripts/check-layers.py STACK)')
            elif STACK.index(b) > STACK.index(a):
                problems.append(f'{f}: includes {dst}: {a}/ sits below {b}/ in the stack {" < ".join(STACK)}')
        if f.endswith('.c'):
            for m in EXTERN_FN.finditer(text):
                problems.append(f'{f}: extern declaration in a .c file (declare it in a header): {m.group(0).strip()}')
    problems += foreign_prototypes(files)
    problems += readme_gaps(files)
    # module graph: x.c and x.h are one module
    mod = lambda p: p[:-2]
    g = {}
    for f, ds in edges.items():
        g.setdefault(mod(f), set()).update(mod(d) for d in ds if mod(d) != mod(f))
    for comp in sccs(g):
        if len(comp) > 1:
            problems.append('include loop between modules: ' + ' <-> '.join(sorted(comp)))
    if '--stats' in sys.argv:
        stats(files, edges)
        layers(g)
    for p in problems:
        print('layers:', p)
    print(f'layers: {len(files)} files, {len(problems)} problem(s)')
    return 1 if problems else 0


def readme_gaps(files):
    """A folder without README.md, or a module (x.c) its README does not name."""
    mods, out = {}, []
    for f in files:
        if f.endswith('.c'):
            mods.setdefault(os.path.dirname(f), []).append(os.path.basename(f)[:-2])
    for d in sorted(mods):
        path = os.path.join(ROOT, d, 'README.md')
        if not os.path.isfile(path):
            out.append(f'{d}/: no README.md (what the folder owns, module by module, and what it may use)')
            continue
        text = open(path, encoding='utf-8').read()
        for m in sorted(mods[d]):
            if not re.search(r'`' + re.escape(m) + r'(\.[ch])?`', text):
                out.append(f'{d}/README.md: does not name its module `{m}` ({d}/{m}.c)')
    return out


UMBRELLAS = {  # headers that declare a whole folder's API by design, one section per file
    'dsl/dsl.h',            # chibicc's one header, a section per stage
    'user/cmd/cmds.h',      # the command table's entries
    'user/sink/sinks.h',    # one writer per output format
}
TOKEN = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|^\s*#(?:[^\n]*\\\n)*[^\n]*', re.S | re.M)
FNAME = re.compile(r'\b([A-Za-z_]\w*)\s*\($')


def toplevel(path):
    """(kind, name) for each function prototype ('decl') and non-static
    definition ('defn') at file scope, comments, strings and directives removed."""
    text = TOKEN.sub(' ', open(os.path.join(ROOT, path), encoding='utf-8', errors='replace').read())
    out, depth, stmt, paren = [], 0, '', 0
    for ch in text:
        if depth == 0:
            stmt += ch
        if ch == '(':
            paren += 1
        elif ch == ')':
            paren -= 1
        elif ch == '{':
            if depth == 0 and paren == 0:
                head = stmt[:-1].strip()
                name = fn_name(head)
                if name and not re.match(r'(static|typedef)\b', head) and '=' not in head:
                    out.append(('defn', name))
                stmt = ''
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0:
                stmt = ''
        elif ch == ';' and depth == 0 and paren == 0:
            head = stmt[:-1].strip()
            name = fn_name(head)
            if name and not re.match(r'(static|typedef)\b', head):
                out.append(('decl', name))
            stmt = ''
    return out


def fn_name(head):
    """The function a declarator head names: 'int foo(int a)' -> 'foo'; None for
    variables, function pointers and anything else."""
    i = head.find('(')
    if i <= 0 or '(*' in head.replace(' ', '')[:head.replace(' ', '').find('(') + 2]:
        return None
    m = FNAME.search(head[:i + 1])
    if not m or m.group(1) in ('if', 'while', 'for', 'switch', 'return', 'sizeof', '__attribute__'):
        return None
    return m.group(1)


def foreign_prototypes(files):
    """Functions a header declares whose definition is in another module's .c."""
    defined, declared = {}, []
    for f in files:
        for kind, name in toplevel(f):
            if kind == 'defn' and f.endswith('.c'):
                defined.setdefault(name, f)
            elif kind == 'decl' and f.endswith('.h'):
                declared.append((f, name))
    out = []
    for f, name in declared:
        d = defined.get(name)
        if d and d[:-2] != f[:-2] and f not in UMBRELLAS:
            out.append(f'{f}: declares {name}(), which {d} defines (declare it in {d[:-2]}.h)')
    return out


def layers(g):
    """Print the longest chain of module dependencies (loops collapsed)."""
    comp = {}
    for i, c in enumerate(sccs(g)):
        for v in c:
            comp[v] = i
    memo = {}

    def h(v, seen=()):
        if v in memo:
            return memo[v]
        r = 1 + max((h(w, seen + (v,)) for w in g.get(v, ()) if comp[w] != comp[v] and w not in seen), default=0)
        memo[v] = r
        return r
    top = max(g, key=h)
    chain, v = [top], top
    while True:
        nxt = [w for w in g.get(v, ()) if comp[w] != comp[v] and memo.get(w) == memo[v] - 1]
        if not nxt:
            break
        v = sorted(nxt)[0]
        chain.append(v)
    print(f'layers: longest chain of module dependencies: {h(top)} modules: ' +
          ' -> '.join(c.split('/', 1)[1] if c.startswith('user/') else c for c in chain))


def sccs(g):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for v0 in list(g):
        if v0 in index:
            continue
        work = [(v0, iter(sorted(g.get(v0, ()))))]
        index[v0] = low[v0] = n[0]; n[0] += 1; stack.append(v0); on.add(v0)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def stats(files, edges):
    per = {}
    for f in files:
        per.setdefault(os.path.dirname(f), []).append(f)
    for d in sorted(per):
        c = sum(1 for f in per[d] if f.endswith('.c'))
        print(f'layers: {d + "/":18} {len(per[d]):3} files ({c} .c, {len(per[d]) - c} .h)')
    depth = {}

    def d(f, seen=()):
        if f in depth:
            return depth[f]
        if f in seen:
            return 0
        depth[f] = r = 1 + max((d(x, seen + (f,)) for x in edges.get(f, ())), default=0)
        return r
    deepest = max(files, key=d)
    print(f'layers: longest include chain: {d(deepest)} files, from {deepest}')


if __name__ == '__main__':
    sys.exit(main())
