import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.management.GcInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

/**
 * GcMeters - the oracle for memtrace serve's Micrometer series: the JVM's
 * own GarbageCollectorMXBean notifications, turned into the meters as
 * Micrometer's documentation defines them (per notification: the pause
 * by collector, action and cause; allocated = the eden pool's growth from
 * after one collection to before the next; promoted = the old pools'
 * growth over a collection; live data = the old pools after a collection
 * that shrank them or an old-generation one), plus what this thread
 * allocated (ThreadMXBean) and each pool's MemoryPoolMXBean usage.
 *
 *   java GcMeters --go1 FILE --go2 FILE [--alloc-mb N] [--keep-mb K]
 *
 * Prints READY; at FILE1: System.gc(), then "MARK1 {json}"; at FILE2:
 * allocates N MiB of 1 KiB arrays keeping the last K MiB alive (some get
 * promoted), System.gc(), "MARK2 {json}" with "thread_alloc" (this
 * thread's allocated bytes over the allocation); then idles and prints
 * "POOLS {json}" (every pool's used, committed, max) once quiet.
 */
public class GcMeters {
    static final Map<String, long[]> timers = new TreeMap<>(); // "gc|action|cause" -> count, sum us
    static long allocated, promoted, live = -1, maxData = -1, edenAfter = -1;
    static volatile long lastGc = System.nanoTime();
    static volatile Object sink;

    static boolean eden(String p) { return p.endsWith("Eden Space"); }
    static boolean old(String p) { return p.endsWith("Old Gen") || p.endsWith("Tenured Gen"); }
    static boolean oldCollector(String g) {
        return g.equals("G1 Old Generation") || g.equals("PS MarkSweep") || g.equals("MarkSweepCompact");
    }

    static synchronized void onGc(GarbageCollectionNotificationInfo n) {
        lastGc = System.nanoTime();
        GcInfo i = n.getGcInfo();
        String key = n.getGcName() + "|" + n.getGcAction() + "|" + n.getGcCause();
        long[] t = timers.computeIfAbsent(key, k -> new long[2]);
        t[0]++;
        t[1] += i.getDuration() * 1000;
        Map<String, MemoryUsage> b = i.getMemoryUsageBeforeGc(), a = i.getMemoryUsageAfterGc();
        long ob = 0, oa = 0, om = 0;
        for (String p : b.keySet()) {
            if (eden(p)) {
                // the first collection is memtrace's baseline too; MARK1 comes after it
                if (edenAfter >= 0 && b.get(p).getUsed() > edenAfter) allocated += b.get(p).getUsed() - edenAfter;
                edenAfter = a.get(p).getUsed();
            }
            if (old(p)) {
                ob += b.get(p).getUsed();
                oa += a.get(p).getUsed();
                om += a.get(p).getMax();
            }
        }
        if (oa > ob) promoted += oa - ob;
        if (oa < ob || oldCollector(n.getGcName())) {
            live = oa;
            maxData = om;
        }
    }

    static synchronized String state() {
        StringBuilder s = new StringBuilder("{\"timers\":{");
        boolean first = true;
        for (Map.Entry<String, long[]> e : timers.entrySet()) {
            s.append(first ? "" : ",").append('"').append(e.getKey()).append("\":[")
             .append(e.getValue()[0]).append(',').append(e.getValue()[1]).append(']');
            first = false;
        }
        return s.append("},\"allocated\":").append(allocated).append(",\"promoted\":").append(promoted)
                .append(",\"live\":").append(live).append(",\"max_data\":").append(maxData).toString();
    }

    static void await(String f) throws InterruptedException {
        while (!Files.exists(Path.of(f))) Thread.sleep(20);
    }

    // Quiet: no notification for a second (at most 15 s). Notifications come
    // from the service thread after the collection, and ZGC and Shenandoah
    // go on collecting for a while after a burst (their allocation rate
    // decays): a mark taken while they do would not be the scrape's.
    static void quiet() throws InterruptedException {
        Thread.sleep(500);
        for (int i = 0; i < 150 && System.nanoTime() - lastGc < 1_000_000_000L; i++) Thread.sleep(100);
    }

    public static void main(String[] args) throws Exception {
        String go1 = null, go2 = null;
        long allocMb = 256, keepMb = 8;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--go1": go1 = args[++i]; break;
                case "--go2": go2 = args[++i]; break;
                case "--alloc-mb": allocMb = Long.parseLong(args[++i]); break;
                case "--keep-mb": keepMb = Long.parseLong(args[++i]); break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
            ((NotificationEmitter) gc).addNotificationListener((Notification n, Object h) -> {
                if (n.getType().equals(GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION))
                    onGc(GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData()));
            }, null, null);
        com.sun.management.ThreadMXBean tm = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().getId();
        System.out.println("READY");
        System.out.flush();

        await(go1);
        System.gc();
        quiet();
        System.out.println("MARK1 " + state() + "}");
        System.out.flush();

        await(go2);
        long n = allocMb * 1024;
        byte[][] keep = new byte[(int) Math.max(1, keepMb * 1024)][];
        long a0 = tm.getThreadAllocatedBytes(self);
        for (long i = 0; i < n; i++) {
            byte[] b = new byte[1024 - 16];
            sink = b;
            keep[(int) (i % keep.length)] = b;
        }
        long a1 = tm.getThreadAllocatedBytes(self);
        keep = null;
        System.gc();
        quiet();
        System.out.println("MARK2 " + state() + ",\"thread_alloc\":" + (a1 - a0) + "}");
        System.out.flush();

        Thread.sleep(2500); // quiet: the pools' counters settle
        StringBuilder s = new StringBuilder("POOLS {");
        boolean first = true;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            MemoryUsage u = p.getUsage();
            s.append(first ? "" : ",").append('"').append(p.getName()).append("\":[")
             .append(p.getType() == MemoryType.HEAP ? 1 : 0).append(',').append(u.getUsed()).append(',')
             .append(u.getCommitted()).append(',').append(u.getMax()).append(']');
            first = false;
        }
        System.out.println(s.append('}'));
        System.out.flush();
        while (true) Thread.sleep(1000);
    }
}
