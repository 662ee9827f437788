import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * AllocAlias - a strictly periodic allocation loop, the case where sampling
 * at TLAB refills aliases: every iteration allocates 6 long[94], 3 char[376]
 * and 12 Obj64 (64-byte objects), 4608 + 2304 + 768 bytes = 60 / 30 / 10 %
 * of the bytes by construction, always in the same order. The refill falls on
 * the same few positions of the pattern again and again, so the class that
 * triggers it is not a fair sample of the bytes.
 *
 *   java AllocAlias --go FILE --mb N
 *
 * Prints READY, waits for FILE, allocates about N MiB, prints the bytes the
 * JVM counted for this thread (ThreadMXBean) as "allocated_bytes N", DONE,
 * then idles.
 */
public class AllocAlias {
    static final class Obj64 { long a0, a1, a2, a3, a4, a5; int i0; }
    static volatile Object sink;

    static void iteration() {
        for (int i = 0; i < 6; i++) sink = new long[94];
        for (int i = 0; i < 3; i++) sink = new char[376];
        for (int i = 0; i < 12; i++) sink = new Obj64();
    }

    public static void main(String[] args) throws Exception {
        String go = null;
        long mb = 1024;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--go": go = args[++i]; break;
                case "--mb": mb = Long.parseLong(args[++i]); break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        for (int i = 0; i < 200_000; i++) iteration(); // JIT warm-up
        System.out.println("READY");
        System.out.flush();
        while (!Files.exists(Path.of(go))) Thread.sleep(10);
        com.sun.management.ThreadMXBean tmx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        long before = tmx.getThreadAllocatedBytes(tid);
        long n = mb * 1024 * 1024 / 7680;
        for (long i = 0; i < n; i++) iteration();
        long bytes = tmx.getThreadAllocatedBytes(tid) - before;
        System.out.println("allocated_bytes " + bytes);
        System.out.println("DONE");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
