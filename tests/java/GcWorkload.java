import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * GcWorkload - collections on demand, for memtrace's GC tests.
 *
 *   java GcWorkload [--go FILE] [--alloc-mb N] [--full N] [--dcmd N]
 *                   [--humongous-mb N --keep-mb K] [--exit-after S]
 *
 * Prints READY, waits until FILE exists (if given), allocates N MiB of
 * short-lived garbage (young collections) while keeping a small live set,
 * with --humongous-mb allocates 2 MiB arrays (humongous for G1), keeping the
 * last K MiB of them alive (G1 then collects with cause "G1 Humongous
 * Allocation"), calls System.gc() --full times, runs the GC.run diagnostic
 * command --dcmd times (cause "Diagnostic Command", through the
 * DiagnosticCommand MBean: no jcmd process), prints DONE and then idles without
 * allocating (so no further collection happens) until killed, or exits
 * S seconds after DONE with --exit-after.
 */
public class GcWorkload {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        String go = null;
        long allocMb = 512;
        int full = 2;
        double exitAfter = -1;
        int dcmd = 0;
        long humongousMb = 0, keepMb = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--go": go = args[++i]; break;
                case "--alloc-mb": allocMb = Long.parseLong(args[++i]); break;
                case "--full": full = Integer.parseInt(args[++i]); break;
                case "--exit-after": exitAfter = Double.parseDouble(args[++i]); break;
                case "--dcmd": dcmd = Integer.parseInt(args[++i]); break;
                case "--humongous-mb": humongousMb = Long.parseLong(args[++i]); break;
                case "--keep-mb": keepMb = Long.parseLong(args[++i]); break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        System.out.println("READY");
        System.out.flush();
        if (go != null) {
            Path p = Path.of(go);
            while (!Files.exists(p)) Thread.sleep(20);
        }
        List<byte[]> live = new ArrayList<>();
        long chunks = allocMb * 16; // 64 KiB chunks
        for (long i = 0; i < chunks; i++) {
            byte[] b = new byte[64 * 1024];
            sink = b;
            if (i % 64 == 0) {           // keep ~1/64 alive for a while
                live.add(b);
                if (live.size() > 64) live.remove(0);
            }
        }
        List<byte[]> big = new ArrayList<>();
        for (long i = 0; i < humongousMb / 2; i++) {
            big.add(new byte[2 * 1024 * 1024]);
            if (big.size() > keepMb / 2) big.remove(0);
        }
        big = null;
        for (int i = 0; i < full; i++) {
            System.gc();
        }
        javax.management.ObjectName dc = new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand");
        for (int i = 0; i < dcmd; i++) {
            java.lang.management.ManagementFactory.getPlatformMBeanServer().invoke(dc, "gcRun", null, null);
        }
        sink = live;
        System.out.println("DONE");
        System.out.flush();
        if (exitAfter >= 0) {
            Thread.sleep((long) (exitAfter * 1000));
            System.exit(0);
        }
        while (true) Thread.sleep(1000);
    }
}
