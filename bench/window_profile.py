#!/usr/bin/env python3
"""window_profile.py TICKS WINLOG [SPAN_MS] - what a duty-cycle window costs
the allocating thread, averaged over the windows of one run.

TICKS: "<ns> <allocations so far>" about every ms (tests/java/AllocTick.java);
WINLOG: memtrace's MEMTRACE_WINDOW_LOG ("attach|detach <ns before> <ns after>",
the same CLOCK_MONOTONIC). For each window, the thread's rate in 1 ms bins
from 5 ms before its attach to SPAN_MS (default 60) after, over its local
rate (the 300 ms around it, less every window's [-5, SPAN_MS] ms); then the bins' means, and the thread's time lost
per window: inside the window, and after it (the detach's aftermath).
"""
import bisect
import statistics
import sys

ticks = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
ts = [t for t, _ in ticks]
cs = [c for _, c in ticks]
span = int(sys.argv[3]) if len(sys.argv) > 3 else 60
ev = [l.split() for l in open(sys.argv[2]) if l.strip()]
att = [int(e[1]) for e in ev if e[0] == "attach"]
det = [int(e[1]) for e in ev if e[0] == "detach"]


def count_at(t):
    i = bisect.bisect_left(ts, t)
    if i <= 0 or i >= len(ts):
        return None
    t0, t1 = ts[i - 1], ts[i]
    return cs[i - 1] + (cs[i] - cs[i - 1]) * (t - t0) / (t1 - t0)


lens = []
for a in att:
    j = bisect.bisect_left(det, a)
    if j < len(det):
        lens.append((det[j] - a) / 1e6)
MS = 1_000_000


def local_rate(a):
    """The thread's rate in the 300 ms around @a, outside every window and
    the SPAN_MS after it (the windows' own costs out of the baseline)."""
    n = t = 0
    lo = bisect.bisect_left(att, a - 300 * MS)
    near = att[lo:bisect.bisect_right(att, a + 150 * MS)]
    for s0 in range(a - 150 * MS, a + 150 * MS, MS):
        if any(w - 5 * MS <= s0 < w + span * MS for w in near):
            continue
        u, v = count_at(s0), count_at(s0 + MS)
        if u is not None and v is not None:
            n += v - u
            t += MS
    return n / (t / 1e9) if t >= 30 * MS else None


prof = {}
for a in att[1:-1]:
    local = local_rate(a)
    if not local:
        continue
    for off in range(-5, span):
        u, v = count_at(a + off * 1_000_000), count_at(a + (off + 1) * 1_000_000)
        if u is not None and v is not None:
            prof.setdefault(off, []).append((v - u) / 1e-3 / local)
if not prof or not lens:
    sys.exit("no windows in the log: was the rate over the budget?")
wl = statistics.median(lens)
inside = after = 0.0
rows = []
for off in sorted(prof):
    r = statistics.mean(prof[off])
    if off < wl + 1:
        inside += 1 - r
    else:
        after += 1 - r
    rows.append((off, r))
print(f"windows {len(att)}, median length {wl:.2f} ms, periods of {statistics.median([b - a for a, b in zip(att, att[1:])]) / 1e6:.0f} ms (median gap)")
for off, r in rows:
    if off < wl + 25 or off % 5 == 0:
        print(f"  {off:+4d} ms  {r:.3f}")
print(f"thread time lost per window: {inside:.2f} ms from 5 ms before the attach to its close, "
      f"{after:.2f} ms in the {span - int(wl) - 1} ms after; {inside + after:.2f} ms in all")
