import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * AllocShares - allocation with byte shares known by construction.
 *
 *   java AllocShares --go FILE --mb N [--exact-count K]
 *
 * Each round allocates 25 Big (128 B), 30 Mid (64 B) and 40 Small (32 B)
 * objects: 3200 + 1920 + 1280 bytes, i.e. shares of exactly 50 %, 30 % and
 * 20 % of the bytes, in an order shuffled per round (one of 256 random
 * permutations). A strictly periodic order would alias with the TLAB size:
 * the allocation that overflows a TLAB would fall on the same position of
 * the pattern again and again, and any TLAB-refill sampler (memtrace's,
 * async-profiler's) would see a skewed mix. Every object escapes (a volatile store),
 * so none is scalar-replaced. Prints READY, waits for FILE, allocates about
 * N MiB, then prints the objects of each class and the bytes the JVM counted
 * for this thread (com.sun.management.ThreadMXBean), then DONE, then idles.
 * With --exact-count K it allocates exactly K objects of each class instead.
 * With --trickle M a second thread allocates Trickle objects (64 B) at about
 * M MB/s from go until the main thread is done, which then prints the bytes
 * the JVM counted for that thread and the Trickle objects it allocated
 * ("trickle_bytes N objects K"; the last one stays live): a slow allocator
 * next to a fast one.
 */
public class AllocShares {
    static final class Big { long a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13; }
    static final class Mid { long a0, a1, a2, a3, a4, a5; }
    static final class Small { long a0, a1; }
    static final class Trickle { long a0, a1, a2, a3, a4, a5; }
    static volatile boolean trickleStop;
    static volatile long trickleBytes = -1, trickleObjects;
    static volatile Object trickleLast;   // one stays live: its size in a class histogram
    static volatile Object sink;
    static final byte[][] ORDERS = new byte[256][];
    static {
        java.util.Random rnd = new java.util.Random(42);
        for (int o = 0; o < ORDERS.length; o++) {
            byte[] order = new byte[95];
            for (int i = 0; i < 95; i++) order[i] = (byte) (i < 25 ? 0 : i < 55 ? 1 : 2);
            for (int i = 94; i > 0; i--) {
                int j = rnd.nextInt(i + 1);
                byte t = order[i]; order[i] = order[j]; order[j] = t;
            }
            ORDERS[o] = order;
        }
    }
    static int next;

    public static void main(String[] args) throws Exception {
        String go = null;
        long mb = 1024, exact = -1, trickle = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--go": go = args[++i]; break;
                case "--mb": mb = Long.parseLong(args[++i]); break;
                case "--exact-count": exact = Long.parseLong(args[++i]); break;
                case "--trickle": trickle = Long.parseLong(args[++i]); break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        com.sun.management.ThreadMXBean tmx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        // warm up the allocation paths (JIT) before the measured window
        for (int r = 0; r < 200_000; r++) round();
        System.out.println("READY");
        System.out.flush();
        while (go != null && !Files.exists(Path.of(go))) Thread.sleep(10);
        Thread slow = null;
        if (trickle > 0) {
            final long perTick = trickle * 1024 * 1024 / 100 / 64;
            slow = new Thread(() -> {
                long me = Thread.currentThread().getId();
                long b0 = tmx.getThreadAllocatedBytes(me), n = 0;
                try {
                    while (!trickleStop) {
                        for (long i = 0; i < perTick; i++) trickleLast = new Trickle();
                        n += perTick;
                        Thread.sleep(10);
                    }
                } catch (InterruptedException e) {
                    return;
                }
                trickleBytes = tmx.getThreadAllocatedBytes(me) - b0;
                trickleObjects = n;
            }, "trickle");
            slow.start();
        }
        long before = tmx.getThreadAllocatedBytes(tid);
        long big = 0, mid = 0, small = 0;
        if (exact >= 0) {
            for (long i = 0; i < exact; i++) { sink = new Big(); sink = new Mid(); sink = new Small(); }
            big = mid = small = exact;
        } else {
            long rounds = mb * 1024 * 1024 / 6400;
            for (long r = 0; r < rounds; r++) round();
            big = rounds * 25; mid = rounds * 30; small = rounds * 40;
        }
        long after = tmx.getThreadAllocatedBytes(tid);
        if (slow != null) {
            trickleStop = true;
            slow.join();
        }
        System.out.println("objects Big=" + big + " Mid=" + mid + " Small=" + small);
        System.out.println("allocated_bytes " + (after - before));
        if (slow != null) System.out.println("trickle_bytes " + trickleBytes + " objects " + trickleObjects);
        System.out.println("DONE");
        System.out.flush();
        while (true) Thread.sleep(1000);
    }

    // one allocation site per class (tests run with -XX:CompileCommand=dontinline
    // on them to check that memtrace names the allocating method)
    static Object big() { return new Big(); }
    static Object mid() { return new Mid(); }
    static Object small() { return new Small(); }

    static void round() {
        // 25 Big, 30 Mid, 40 Small in a shuffled order
        next = next * 1103515245 + 12345;
        byte[] order = ORDERS[(next >>> 16) & 255];
        for (int i = 0; i < order.length; i++) {
            switch (order[i]) {
                case 0: sink = big(); break;
                case 1: sink = mid(); break;
                default: sink = small(); break;
            }
        }
    }
}
