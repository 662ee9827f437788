import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * ParkContention - THREADS threads take one fair ReentrantLock ITERS times
 * each and hold it HOLD_US microseconds (busy), for `memtrace locks` against
 * JFR's jdk.ThreadPark on the same run.
 *
 *   java ParkContention THREADS ITERS HOLD_US GOFILE
 *
 * Prints READY, waits for GOFILE, runs, prints DONE and idles until killed.
 * The lock is fair (ReentrantLock$FairSync) so that no other code of the JVM
 * parks on a blocker of that class; a "sleeper" thread parks with
 * LockSupport.parkNanos(1 ms) (no blocker: waiting, not contention) ITERS/10
 * times (1 ms: JFR commits its event, stack walk included, inside the
 * probes' window, some 5-25 us per park on this machine)
 * and a "napper" calls Thread.sleep(1) ITERS/10 times. The main thread waits
 * with Object.wait (neither a park nor a sleep).
 */
public class ParkContention {
    static final ReentrantLock LOCK = new ReentrantLock(true);
    static volatile long sink;
    static final Object IDLE = new Object();

    static void idle(long ms) throws InterruptedException {
        synchronized (IDLE) { IDLE.wait(ms); }
    }

    static void spin(long us) {
        long end = System.nanoTime() + us * 1000;
        while (System.nanoTime() < end) sink++;
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int iters = Integer.parseInt(args[1]);
        long hold = Long.parseLong(args[2]);
        Path go = Path.of(args[3]);
        System.out.println("READY");
        System.out.flush();
        while (!Files.exists(go)) idle(20);
        Thread[] ts = new Thread[threads + 2];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                for (int k = 0; k < iters; k++) {
                    LOCK.lock();
                    try { spin(hold); } finally { LOCK.unlock(); }
                }
            }, "contender-" + i);
        }
        ts[threads] = new Thread(() -> {
            for (int k = 0; k < iters / 10; k++)
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }, "sleeper");
        ts[threads + 1] = new Thread(() -> {
            try {
                for (int k = 0; k < iters / 10; k++) Thread.sleep(1);
            } catch (InterruptedException e) { }
        }, "napper");
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        System.out.println("DONE");
        System.out.flush();
        idle(0);
    }
}
