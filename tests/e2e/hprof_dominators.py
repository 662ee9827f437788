#!/usr/bin/env python3
"""hprof_dominators.py DUMP.hprof OUT.json - the test side's own dominator
computation over a HotSpot heap dump, written apart from memtrace's code (a
different algorithm: Cooper, Harvey and Kennedy's iterative one, "A Simple,
Fast Dominance Algorithm", over a reverse postorder).

The graph is Eclipse MAT's, over the references user/heap/hprof.c documents
for a dump: one node per instance, object array, primitive array and class;
an edge from every instance field and array element holding an object, from
every class to its superclass, loader, signers, protection domain, constant
pool objects and static fields holding objects, and from every class loader
to the classes it defined (those some chain of references reaches) - but
none from an object to its own class (a class is held by its loader, never
by an instance), unless nothing else would hold that class (a primitive
array's class, which the dump names by its element type only; a loader
reached only through its classes): the virtual root then reaches what
references reach, as memtrace's tree does; every GC root record's
object is a successor of a virtual root. Edges to ids the dump holds no
object for are left out.
Shallow sizes follow the same documented estimate (compressed oops and class
pointers): instances 12 + fields (references 4) rounded up to 8, arrays 16 +
elements, classes 112.

Writes {"retained": {id: bytes}, "idom": {id: id or 0 (the virtual root)},
"keys": {class name: {id: int value of its first int field}}} for the
reachable objects (keys: for the classes named in $HPROF_KEY_CLASSES,
comma-separated JVM names such as RetainWorkload$Owner).
"""
import json
import os
import struct
import sys


def main():
    data = open(sys.argv[1], "rb").read()
    z = data.index(b"\0")
    idsz = struct.unpack(">I", data[z + 1:z + 5])[0]
    off = z + 1 + 4 + 8
    fmt_id = ">I" if idsz == 4 else ">Q"
    tsize = {2: idsz, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}
    utf8, names, segs = {}, {}, []
    while off < len(data):
        tag = data[off]
        ln = struct.unpack(">I", data[off + 5:off + 9])[0]
        body = off + 9
        if tag == 0x01:
            utf8[struct.unpack(fmt_id, data[body:body + idsz])[0]] = data[body + idsz:body + ln]
        elif tag == 0x02:
            cid = struct.unpack(fmt_id, data[body + 4:body + 4 + idsz])[0]
            nid = struct.unpack(fmt_id, data[body + 8 + idsz:body + 8 + 2 * idsz])[0]
            names[cid] = utf8.get(nid, b"").decode("utf-8", "replace")
        elif tag in (0x0c, 0x1c):
            segs.append((body, body + ln))
        off = body + ln

    def rid(p):
        return struct.unpack(fmt_id, data[p:p + idsz])[0]

    classes = {}   # id -> dict(super, loader, signers, pd, fields[(name, type)], cp, statics)
    objs = {}      # id -> [size, [successors]]
    clsof = {}     # instance or object array id -> its class id
    roots = []
    prim_arrays = []  # (id, type)
    instances = []    # (id, class id, start, end)
    root_skip = {0xff: idsz, 0x05: idsz, 0x07: idsz, 0x89: idsz, 0x8a: idsz, 0x8b: idsz,
                 0x8c: idsz, 0x8d: idsz, 0x90: idsz, 0x01: 2 * idsz, 0x02: idsz + 8,
                 0x03: idsz + 8, 0x08: idsz + 8, 0x8e: idsz + 8, 0x04: idsz + 4, 0x06: idsz + 4}
    for start, end in segs:
        p = start
        while p < end:
            sub = data[p]
            p += 1
            if sub == 0x20:
                cid = rid(p); p += idsz + 4
                sup, loader, signers, pd = (rid(p + i * idsz) for i in range(4))
                p += 6 * idsz + 4
                n = struct.unpack(">H", data[p:p + 2])[0]; p += 2
                cp = []
                for _ in range(n):
                    t = data[p + 2]; p += 3
                    if t == 2:
                        cp.append(rid(p))
                    p += tsize[t]
                n = struct.unpack(">H", data[p:p + 2])[0]; p += 2
                statics = []
                for _ in range(n):
                    t = data[p + idsz]; p += idsz + 1
                    if t == 2:
                        statics.append(rid(p))
                    p += tsize[t]
                n = struct.unpack(">H", data[p:p + 2])[0]; p += 2
                fields = []
                for _ in range(n):
                    fields.append((utf8.get(rid(p), b"").decode(), data[p + idsz]))
                    p += idsz + 1
                classes[cid] = dict(super=sup, loader=loader, signers=signers, pd=pd,
                                    fields=fields, cp=cp, statics=statics)
            elif sub == 0x21:
                oid = rid(p); p += idsz + 4
                cid = rid(p); p += idsz
                nb = struct.unpack(">I", data[p:p + 4])[0]; p += 4
                instances.append((oid, cid, p, p + nb))
                p += nb
            elif sub == 0x22:
                aid = rid(p); p += idsz + 4
                n = struct.unpack(">I", data[p:p + 4])[0]; p += 4
                cid = rid(p); p += idsz
                clsof[aid] = cid
                succ = [rid(p + i * idsz) for i in range(n)]
                p += n * idsz
                objs[aid] = [(16 + 4 * n + 7) & ~7, succ]
            elif sub == 0x23:
                aid = rid(p); p += idsz + 4
                n = struct.unpack(">I", data[p:p + 4])[0]; p += 4
                t = data[p]; p += 1
                objs[aid] = [(16 + n * tsize[t] + 7) & ~7, []]
                prim_arrays.append((aid, t))
                p += n * tsize[t]
            elif sub in root_skip:
                roots.append(rid(p))
                p += root_skip[sub]
            else:
                raise SystemExit("unknown sub-record 0x%02x" % sub)

    def chain(cid):
        out = []
        while cid in classes and len(out) < 256:
            out.append(cid)
            cid = classes[cid]["super"]
        return out

    size_cache = {}
    keys = {n: {} for n in os.environ.get("HPROF_KEY_CLASSES", "").split(",") if n}
    for oid, cid, start, e in instances:
        p = start
        ch = chain(cid)
        if cid not in size_cache:
            b = 12
            for k in ch:
                for _, t in classes[k]["fields"]:
                    b += 4 if t == 2 else tsize[t]
            size_cache[cid] = (b + 7) & ~7
        succ = []
        key = None
        for k in ch:  # the class's own fields first, then each superclass's
            for _, t in classes[k]["fields"]:
                if t == 2:
                    succ.append(rid(p))
                elif t == 10 and key is None and k == cid:
                    key = struct.unpack(">i", data[p:p + 4])[0]
                p += tsize[t]
        objs[oid] = [size_cache[cid] if cid in classes else (12 + e - start + 7) & ~7, succ]
        clsof[oid] = cid
        cname = names.get(cid, "")
        if cname in keys and key is not None:
            keys[cname][oid] = key
    for cid, c in classes.items():
        objs[cid] = [112, [c["super"], c["loader"], c["signers"], c["pd"]] +
                     c["cp"] + c["statics"]]
    # a loader holds the classes it defined (those a chain of references
    # reaches), and an instance its class where nothing else would: what the
    # virtual root reaches is what references reach (memtrace's rule,
    # user/analysis/dominators.h)
    def reach(edges):
        seen = {r for r in roots if r in objs}
        todo = list(seen)
        while todo:
            for t in edges(todo.pop()):
                if t in objs and t not in seen:
                    seen.add(t)
                    todo.append(t)
        return seen
    # a primitive array's class: the dump names it only by its element type
    prim_class = {}
    for cid, nm in names.items():
        t = {"[Z": 4, "[C": 5, "[F": 6, "[D": 7, "[B": 8, "[S": 9, "[I": 10, "[J": 11}.get(nm)
        if t:
            prim_class[t] = cid
    for aid, t in prim_arrays:
        if t in prim_class:
            clsof[aid] = prim_class[t]
    anyr = reach(lambda o: objs[o][1] + ([clsof[o]] if o in clsof else []))
    kids = {}
    for cid, c in classes.items():
        if c["loader"] in objs and cid in anyr:
            kids.setdefault(c["loader"], []).append(cid)
    held = reach(lambda o: objs[o][1] + kids.get(o, []))
    for o, k in clsof.items():
        if k in objs and k not in held:
            objs[o][1].append(k)
    for lo, ks in kids.items():
        objs[lo][1].extend(ks)
    # the graph: node 0 is the virtual root
    ids = list(objs)
    index = {o: i + 1 for i, o in enumerate(ids)}
    succ = [[index[r] for r in roots if r in index]]
    for o in ids:
        succ.append([index[t] for t in objs[o][1] if t and t in index])
    n = len(succ)
    # reverse postorder from the virtual root (iterative DFS)
    post = [0] * n
    seen = [False] * n
    order = []
    stack = [(0, 0)]
    seen[0] = True
    while stack:
        v, i = stack.pop()
        if i < len(succ[v]):
            stack.append((v, i + 1))
            w = succ[v][i]
            if not seen[w]:
                seen[w] = True
                stack.append((w, 0))
        else:
            post[v] = len(order)
            order.append(v)
    rpo = order[::-1]
    preds = [[] for _ in range(n)]
    for v in range(n):
        if seen[v]:
            for w in succ[v]:
                preds[w].append(v)
    idom = [-1] * n
    idom[0] = 0

    def intersect(a, b):
        while a != b:
            while post[a] < post[b]:
                a = idom[a]
            while post[b] < post[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for v in rpo[1:]:
            new = -1
            for p in preds[v]:
                if idom[p] == -1:
                    continue
                new = p if new == -1 else intersect(p, new)
            if idom[v] != new:
                idom[v] = new
                changed = True
    retained = [0] * n
    for v in rpo[1:]:
        retained[v] = objs[ids[v - 1]][0]
    for v in reversed(rpo[1:]):
        retained[idom[v]] += retained[v]
    out = {"retained": {}, "idom": {}, "keys": keys}
    for v in rpo[1:]:
        o = ids[v - 1]
        out["retained"][o] = retained[v]
        out["idom"][o] = ids[idom[v] - 1] if idom[v] else 0
    json.dump(out, open(sys.argv[2], "w"))
    print("oracle: %d objects, %d reachable, %d roots" % (len(ids), len(rpo) - 1, len(roots)),
          file=sys.stderr)


main()
