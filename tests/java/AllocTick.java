/**
 * AllocTick - AllocDeep's allocation (byte[256] at Java depth 40) with its
 * progress in time, for bench/window_profile.sh: the count of allocations
 * about every millisecond (System.nanoTime, the CLOCK_MONOTONIC memtrace's
 * window log uses), kept in arrays and written to OUT at the end (nothing
 * printed meanwhile: no I/O in the profile).
 *
 *   java AllocTick SECONDS OUT      prints READY, then DONE after SECONDS
 */
public class AllocTick {
    static volatile Object sink;

    static void rec(int d) {
        if (d > 0) {
            rec(d - 1);
            return;
        }
        for (int i = 0; i < 1000; i++)
            sink = new byte[256];
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]) * 1000;
        long[] at = new long[n], count = new long[n];
        long done = 0, next = System.nanoTime() + 1_000_000;
        int k = 0;
        System.out.println("READY");
        System.out.flush();
        while (k < n) {
            rec(40);
            done += 1000;
            long now = System.nanoTime();
            if (now >= next) {
                at[k] = now;
                count[k++] = done;
                next = now + 1_000_000;
            }
        }
        try (java.io.PrintWriter w = new java.io.PrintWriter(args[1])) {
            for (int i = 0; i < k; i++)
                w.println(at[i] + " " + count[i]);
        }
        System.out.println("DONE");
    }
}
