// VThreads - objects only a parked virtual thread's stack holds (JDK 21+):
// N virtual threads each park D frames deep with a Held object (and its
// HeldData) in a local of the deepest frame, and every third inside a
// synchronized block on a Locked object only that thread's frame holds; each
// first allocates and drops 8 Dropped objects (garbage: a mark that read
// every stack word as a reference would count them). By construction:
// N Held, N HeldData, ceil(N/3) Locked, 0 Dropped once collected. With
// "gc", a System.gc() after every thread parked (the collector then turns
// their stack chunks into its own form, with a bitmap of their references).
// With "grow", one more virtual thread keeps an ArrayList of Grown in a local
// and adds 10 to it every 5 ms, parked in between (a leak only that parked
// thread's stack holds).
// With "mounted", one more virtual thread keeps an ArrayList of Grown in a
// local and adds 10 to it every 10 ms, in between blocked reading a pipe (a
// child `sh` writes a line every 10 ms): a file read pins a virtual thread
// to its carrier, so at a snapshot it is mounted, its frames on the
// carrier's stack, not in a stack chunk (a leak only a running virtual
// thread holds).
// With "churn", 200 more virtual threads park and wake without end, each
// at a depth that changes every time (1 to D frames) with a Churned in its
// deepest frame: stack chunks frozen, thawed and replaced while snapshots
// are taken.
// Built with --release 17: the virtual-thread API is reached by reflection.
// Prints READY, then waits. On JDK 17 prints NOVTHREADS and exits 3.
//   java VThreads N D [gc] [grow] [churn] [mounted]
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.LockSupport;

public class VThreads {
    static final class HeldData { final long[] v = new long[3]; }
    static final class Held { final int i; final HeldData d = new HeldData(); Held(int x) { i = x; } }
    static final class Locked { int n; }
    static final class Dropped { long a; Dropped(long x) { a = x; } }
    static final class Grown { long a; Grown(long x) { a = x; } }

    static final class Churned { final long[] v = new long[2]; }

    static long churn(int d, long seed) {
        if (d > 0)
            return churn(d - 1, seed) + 1;
        Churned c = new Churned();
        c.v[0] = seed;
        LockSupport.parkNanos(1_000_000L + (seed & 0xfffff));
        return c.v[0] + c.v.length;
    }

    static void churner(int maxDepth, long seed) {
        long x = seed;
        while (!done) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            sink += churn(1 + (int) ((x >>> 33) % maxDepth), x);
        }
    }

    static void grow() {
        java.util.List<Grown> l = new java.util.ArrayList<>();
        System.out.println("GROW TID " + Thread.currentThread().getId()); // Thread.dump_to_file's "#tid"
        for (long i = 0; !done; ) {
            for (int k = 0; k < 10; k++)
                l.add(new Grown(i++));
            LockSupport.parkNanos(5_000_000L);
        }
        sink += l.size();
    }
    static void mountedGrow() {
        java.util.List<Grown> l = new java.util.ArrayList<>();
        System.out.println("MOUNTED TID " + Thread.currentThread().getId());
        try {
            Process p = new ProcessBuilder("sh", "-c", "while sleep 0.01; do echo; done").start();
            java.io.InputStream in = p.getInputStream();
            for (long i = 0; !done; ) {
                for (int k = 0; k < 10; k++)
                    l.add(new Grown(i++));
                if (in.read() < 0)
                    break;
            }
        } catch (java.io.IOException e) {
            System.out.println("MOUNTED FAILED " + e);
        }
        sink += l.size();
    }

    static volatile long sink;
    static volatile boolean done;

    static long deep(int i, int d, CountDownLatch parked) {
        if (d > 0)
            return deep(i, d - 1, parked) + 1;
        for (int k = 0; k < 8; k++)
            sink += new Dropped(k).a;
        Held h = new Held(i);
        if (i % 3 == 0) {
            Locked l = new Locked();
            synchronized (l) {
                l.n = i;
                parked.countDown();
                while (!done)
                    LockSupport.park();
            }
            return h.i + h.d.v.length;
        }
        parked.countDown();
        while (!done)
            LockSupport.park();
        return h.i + h.d.v.length;
    }

    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]), d = Integer.parseInt(a[1]);
        ExecutorService ex;
        try {
            ex = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (NoSuchMethodException e) {
            System.out.println("NOVTHREADS");
            System.exit(3);
            return;
        }
        CountDownLatch parked = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            final int x = i;
            ex.submit(() -> sink += deep(x, d, parked));
        }
        parked.await();
        boolean gc = false, grow = false, churn = false, mounted = false;
        for (int i = 2; i < a.length; i++) {
            gc |= a[i].equals("gc");
            grow |= a[i].equals("grow");
            churn |= a[i].equals("churn");
            mounted |= a[i].equals("mounted");
        }
        if (churn)
            for (int i = 0; i < 200; i++) {
                final long seed = i;
                ex.submit(() -> churner(Math.max(d, 1), seed));
            }
        if (gc)
            System.gc();
        if (grow)
            ex.submit(VThreads::grow);
        if (mounted)
            ex.submit(VThreads::mountedGrow);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
