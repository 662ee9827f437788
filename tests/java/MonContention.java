import java.nio.file.Files;
import java.nio.file.Path;

/**
 * MonContention - contended monitor entries whose stacks are known by
 * construction, for `memtrace locks --stacks` against JFR's
 * jdk.JavaMonitorEnter (threshold 0) on the same run.
 *
 *   java MonContention PAIRS ITERS HOLD_US GOFILE
 *
 * Prints READY, waits for GOFILE, then PAIRS threads "left-N" enter the one
 * MonContention$Left monitor ITERS times each through
 *     lambda -> pathLeft -> holdLeft (synchronized block)
 * and PAIRS threads "right-N" enter the one MonContention$Right monitor,
 * every other time through pathRight, else through pathRight2, both ->
 * holdRight; each holds the monitor HOLD_US microseconds (busy). Prints
 * DONE and idles until killed (Object.wait on its own monitor, never
 * contended).
 */
public class MonContention {
    static final class Left {}
    static final class Right {}
    static final Left LEFT = new Left();
    static final Right RIGHT = new Right();
    static volatile long sink;

    static void spin(long us) {
        long end = System.nanoTime() + us * 1000;
        while (System.nanoTime() < end) sink++;
    }

    static void holdLeft(long us) {
        synchronized (LEFT) { spin(us); }
    }

    static void holdRight(long us) {
        synchronized (RIGHT) { spin(us); }
    }

    static void pathLeft(long us) { holdLeft(us); }
    static void pathRight(long us) { holdRight(us); }
    static void pathRight2(long us) { holdRight(us); }

    public static void main(String[] args) throws Exception {
        int pairs = Integer.parseInt(args[0]);
        int iters = Integer.parseInt(args[1]);
        long hold = Long.parseLong(args[2]);
        Path go = Path.of(args[3]);
        Object idle = new Object();
        System.out.println("READY");
        System.out.flush();
        while (!Files.exists(go)) Thread.sleep(20);
        Thread[] ts = new Thread[2 * pairs];
        for (int i = 0; i < pairs; i++) {
            ts[2 * i] = new Thread(() -> {
                for (int k = 0; k < iters; k++) pathLeft(hold);
            }, "left-" + i);
            ts[2 * i + 1] = new Thread(() -> {
                for (int k = 0; k < iters; k++) {
                    if ((k & 1) == 0) pathRight(hold); else pathRight2(hold);
                }
            }, "right-" + i);
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        System.out.println("DONE");
        System.out.flush();
        synchronized (idle) { idle.wait(); }
    }
}
