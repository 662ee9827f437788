#!/usr/bin/env python3
"""phases.py WORKLOAD_OUT PHASES [UNIT] - mean throughput per phase label.

WORKLOAD_OUT holds "tput <epoch_ms> <count>" lines (250 ms intervals);
PHASES holds "<label> <start_ms> <end_ms> [<cpu_start> <cpu_end>]" lines
(cpu: the workload's CPU time in clock ticks, for allocations per CPU
second: the same ratios again, per CPU second). The first 500 ms of each
phase are skipped (attach/detach settling). Prints, per label, the median of
the phases' mean throughputs (allocations/s), and ratios against "baseline":
the ratio of the medians, and the median of paired ratios (each other phase
against the mean of the baseline phases on either side of it, which cancels
slow drifts of a shared machine), with the paired ratios' quartiles.
"""
import statistics
import sys

unit = sys.argv[3] if len(sys.argv) > 3 else "allocs"
samples = []
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 3 and p[0] == "tput":
        samples.append((int(p[1]), int(p[2])))
import os
per = {}
seq = []
cpu_seq = []
for line in open(sys.argv[2]):
    f = line.split()
    label, a, b = f[0], int(f[1]), int(f[2])
    if len(f) == 5:  # allocations per CPU second over the whole phase
        xs = [c for t, c in samples if a + 250 <= t <= b]
        ticks = int(f[4]) - int(f[3])
        if xs and ticks > 0:
            cpu_seq.append((label, sum(xs) / (ticks / os.sysconf("SC_CLK_TCK"))))
    a = a + 500
    xs = [c for t, c in samples if a + 250 <= t <= b]
    if len(xs) >= 2:
        per.setdefault(label, []).append(sum(xs) / (len(xs) * 0.25))
        seq.append((label, sum(xs) / (len(xs) * 0.25)))


def paired_ratios(seq, what):
    paired = {}
    for i, (label, v) in enumerate(seq):
        if label == "baseline":
            continue
        near = [seq[j][1] for j in (i - 1, i + 1) if 0 <= j < len(seq) and seq[j][0] == "baseline"]
        if near:
            paired.setdefault(label, []).append(v / statistics.mean(near))
    for label, r in paired.items():
        q = statistics.quantiles(r, n=4) if len(r) >= 2 else [r[0]] * 3
        print(f"  paired ratio {label} / baseline{what}: median {statistics.median(r):.4f} "
              f"(quartiles {q[0]:.4f}-{q[2]:.4f}, {len(r)} pairs)")


for label, v in per.items():
    print(f"  {label:28} {statistics.median(v)/1e6:8.2f} M {unit}/s (median of {len(v)} phases; "
          f"min {min(v)/1e6:.2f}, max {max(v)/1e6:.2f})")
base = statistics.median(per["baseline"]) if "baseline" in per else None
if base:
    for label, v in per.items():
        if label != "baseline":
            print(f"  ratio {label} / baseline: {statistics.median(v)/base:.4f}")
paired_ratios(seq, "")
if cpu_seq:
    paired_ratios(cpu_seq, " per CPU second")
