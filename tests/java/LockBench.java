import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * LockBench [THREADS [INSIDE [OUTSIDE [fair]]]] - THREADS threads (default 4)
 * take one ReentrantLock (fair with "fair": every hand-over parks) as fast as
 * they can, doing INSIDE (default 50) steps of
 * work holding it and OUTSIDE (200) without, so that they park and unpark
 * all the time; prints READY, then every 250 ms
 * "tput <epoch_ms> <lock acquisitions in the interval>" (bench/phases.py).
 */
public class LockBench {
    static ReentrantLock LOCK;
    static final LongAdder OPS = new LongAdder();
    static long shared;

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int inside = args.length > 1 ? Integer.parseInt(args[1]) : 50;
        int outside = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        LOCK = new ReentrantLock(args.length > 3 && args[3].equals("fair"));
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                long local = 0;
                while (true) {
                    LOCK.lock();
                    try {
                        for (int k = 0; k < inside; k++) shared += k;
                    } finally {
                        LOCK.unlock();
                    }
                    for (int k = 0; k < outside; k++) local += k;
                    OPS.increment();
                    if (local == 42) System.out.print("");
                }
            }, "bench-" + i);
            t.setDaemon(true);
            t.start();
        }
        System.out.println("READY");
        System.out.flush();
        while (true) {
            Thread.sleep(250);
            System.out.println("tput " + System.currentTimeMillis() + " " + OPS.sumThenReset());
            System.out.flush();
        }
    }
}
