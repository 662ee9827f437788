// Duty - a busy thread's pace for the test workloads (FreezeWorkload,
// LeakGrowth): it works DUTY % of every 4 ms and sleeps the rest. A case
// that needs a collector kept busy, not a CPU, leaves the machine's other
// cases theirs: one flat-out churn thread and the ZGC cycles it caused took
// about a quarter of the CPU of the longest end-to-end cases.
public final class Duty {
    private final long workNs, napMs;
    private long slice = System.nanoTime();

    /** duty: percent of the time the thread works; 100 or more: never sleeps. */
    public Duty(int duty) {
        workNs = duty >= 100 ? Long.MAX_VALUE : 40_000L * Math.max(duty, 1);
        napMs = Math.max(1, (4_000_000L - Math.min(workNs, 4_000_000L)) / 1_000_000L);
    }

    /** Called between units of work; sleeps once this slice's work is done.
     *  Returns false when the thread was interrupted. */
    public boolean pace() {
        if (workNs == Long.MAX_VALUE || System.nanoTime() - slice <= workNs)
            return true;
        try {
            Thread.sleep(napMs);
        } catch (InterruptedException e) {
            return false;
        }
        slice = System.nanoTime();
        return true;
    }
}
