import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * AllocMix - objects of four classes of very different sizes mixed within
 * every TLAB, in a fixed interleaved pattern, with byte shares known by
 * construction: each round allocates, in this order, 1 byte[2000], 10 Small,
 * 1 Object[14], 10 Small, 5 Mid, 10 Small, 1 Object[14], 10 Small, 5 Mid.
 * A large object next to small ones is the case where a parse that counts
 * the object opening a TLAB (the allocation that did not fit: big objects
 * far more often than their share of the objects) sees too much of it.
 * Each class is allocated by a method of its own (bigArray, small, mid,
 * refArray), so a stack view can be summed per class.
 *
 *   java AllocMix --go FILE --mb N [--threads T]
 *
 * Before READY it measures each class's size as the JVM counts it (the
 * thread's allocated bytes over 200 000 objects of that class alone, printed
 * "size CLASS BYTES"). Prints READY, waits for FILE, allocates about N MiB
 * (on each of T threads), then prints "count CLASS N" for each class, the
 * bytes the JVM counted for the allocating threads ("allocated_bytes N"),
 * DONE, and idles.
 */
public class AllocMix {
    static final class Small { long a0; }
    static final class Mid { long a0, a1, a2, a3, a4; int i0; }
    static volatile Object sink;
    static final String[] NAMES = { "byte[]", "AllocMix$Small", "AllocMix$Mid", "java.lang.Object[]" };
    static final long[] PER_ROUND = { 1, 40, 10, 2 };

    static void bigArray() { sink = new byte[2000]; }
    static void small() { sink = new Small(); }
    static void mid() { sink = new Mid(); }
    static void refArray() { sink = new Object[14]; }

    static void round() {
        bigArray();
        for (int i = 0; i < 10; i++) small();
        refArray();
        for (int i = 0; i < 10; i++) small();
        for (int i = 0; i < 5; i++) mid();
        for (int i = 0; i < 10; i++) small();
        refArray();
        for (int i = 0; i < 10; i++) small();
        for (int i = 0; i < 5; i++) mid();
    }

    /* The bytes the JVM counts for one object of class c (its TLAB bump). */
    static long sizeOf(com.sun.management.ThreadMXBean tmx, long tid, int c) {
        final int n = 200_000;
        long b0 = tmx.getThreadAllocatedBytes(tid);
        for (int i = 0; i < n; i++) {
            switch (c) {
                case 0: bigArray(); break;
                case 1: small(); break;
                case 2: mid(); break;
                default: refArray(); break;
            }
        }
        return Math.round((double) (tmx.getThreadAllocatedBytes(tid) - b0) / n);
    }

    public static void main(String[] args) throws Exception {
        String go = null;
        long mb = 1024;
        int threads = 1;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--go": go = args[++i]; break;
                case "--mb": mb = Long.parseLong(args[++i]); break;
                case "--threads": threads = Integer.parseInt(args[++i]); break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        com.sun.management.ThreadMXBean tmx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long me = Thread.currentThread().getId();
        long perRound = 0;
        for (int c = 0; c < NAMES.length; c++) {
            long s = sizeOf(tmx, me, c);
            System.out.println("size " + NAMES[c] + " " + s);
            perRound += s * PER_ROUND[c];
        }
        for (int i = 0; i < 20_000; i++) round(); // warm-up (JIT, unless -Xint)
        System.out.println("READY");
        System.out.flush();
        while (go != null && !Files.exists(Path.of(go))) Thread.sleep(10);
        final long rounds = mb * 1024 * 1024 / perRound;
        final long[] bytes = new long[threads];
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int k = t;
            ts[t] = new Thread(() -> {
                long id = Thread.currentThread().getId();
                long b0 = tmx.getThreadAllocatedBytes(id);
                for (long r = 0; r < rounds; r++) round();
                bytes[k] = tmx.getThreadAllocatedBytes(id) - b0;
            }, "mix-" + t);
            ts[t].start();
        }
        long all = 0;
        for (int t = 0; t < threads; t++) {
            ts[t].join();
            all += bytes[t];
        }
        for (int c = 0; c < NAMES.length; c++)
            System.out.println("count " + NAMES[c] + " " + rounds * threads * PER_ROUND[c]);
        System.out.println("allocated_bytes " + all);
        System.out.println("DONE");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
