"""estimate.py - how far a figure of `memtrace alloc` may be from the truth,
from memtrace's own account of its spread. Imported by the alloc checks.

Under its cost budget (--budget, 1 % by default) memtrace keeps each TLAB
sample with a probability p when taking every one would cost the busiest
thread more than the budget, and weighs it by 1/p: unbiased, but with a
spread it measures and reports - the standard error of its total
(duty_cycle.total_bytes_stderr, the Horvitz-Thompson variance of the kept
weights) and of each class's share (classes[].share_stderr). How much it
thins depends on the machine: a uprobe trap cost 1.3 us on the VMs of
earlier sessions and 5-6 us on the one of stop 22, where a fixed 5 % bound
on the total failed at ratios 0.89-1.23 with 8-9 % standard errors. So a
check keeps its own bound when memtrace took every sample (no spread) and
widens it to four of memtrace's standard errors when it thinned.
"""


def total_tolerance(final, base):
    """A relative bound for final["total_bytes"] (an `alloc` JSON record):
    @base when every sample was kept, else at least 2 % + 4 standard errors."""
    se = (final.get("duty_cycle") or {}).get("total_bytes_stderr") or 0
    if se <= 0:
        return base
    return max(base, 0.02 + 4 * se / final["total_bytes"])


def share_tolerance(cls, base, among=1.0):
    """A bound in points for a class's share (@cls: a record of "classes"),
    renormalised over classes that hold @among of the bytes: @base, or
    1 + 4 standard errors when that is larger."""
    se = cls.get("share_stderr")
    if se is None:
        return base
    return max(base, 1.0 + 400 * se / among)
