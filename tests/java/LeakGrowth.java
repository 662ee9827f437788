// LeakGrowth - slow leaks under heavy churn, and what is not a leak, for
// `memtrace leaks` (tests/e2e/cases/leaks_growth.sh, bench/leaks_truth.sh):
//   leak "index":    static LeakGrowth.BY_ID (HashMap<Long, Invoice>), +1 Invoice
//                    (and its byte[64]) every INDEX_MS ms: ~10 KB/s at 10 ms
//   leak "listeners": static LeakGrowth.LISTENERS (ArrayList), +1 Listener every
//                    LIST_MS ms
//   leak "local":    a HashMap only a local variable of thread "keeper" holds,
//                    +1 Entry every LOCAL_MS ms
//   cache:           static LeakGrowth.CACHE, 20 000 entries put before READY, read
//   lru:             static LeakGrowth.LRU, a LinkedHashMap bounded at 20 000 that
//                    replaces ~650 entries a second
//   churn:           CHURN threads allocating short-lived objects flat out, or
//                    DUTY % of every 4 ms (Duty.java)
// Each leak counts what it added, and when (System.nanoTime: CLOCK_MONOTONIC).
// stdin "counts" prints "COUNTS index listeners local" at that instant (the
// three leaks' sizes), "between T1 T2" prints "BETWEEN index listeners local":
// how many each added with T1 < time <= T2 (ns), then END.
//   java LeakGrowth CHURN [INDEX_MS LIST_MS LOCAL_MS [CACHE [DUTY]]]   (CACHE: entries, 20 000; DUTY 100)
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

public class LeakGrowth {
    static final class Invoice { final long id; final byte[] body = new byte[64]; Invoice(long i) { id = i; } }
    static final class Listener { final long id; Listener(long i) { id = i; } }
    static final class Entry { final long id; final long[] data = new long[4]; Entry(long i) { id = i; } }
    static final class Cached { final int k; final byte[] v = new byte[32]; Cached(int k) { this.k = k; } }

    static final HashMap<Long, Invoice> BY_ID = new HashMap<>();
    static final ArrayList<Listener> LISTENERS = new ArrayList<>();
    static final HashMap<Integer, Cached> CACHE = new HashMap<>();
    static final Map<Integer, Cached> LRU = new LinkedHashMap<Integer, Cached>(32768, 0.75f, true) {
        protected boolean removeEldestEntry(Map.Entry<Integer, Cached> e) { return size() > 20_000; }
    };
    static final AtomicLong localCount = new AtomicLong();
    static final int RING = 1 << 20;
    static final long[][] when = new long[3][RING]; // add times, per leak
    static final AtomicLong[] added = { new AtomicLong(), new AtomicLong(), new AtomicLong() };

    static void stamp(int leak) { // called by the one thread that adds to it
        long n = added[leak].get();
        when[leak][(int) (n % RING)] = System.nanoTime();
        added[leak].lazySet(n + 1);
    }

    static long between(int leak, long t1, long t2) {
        long n = added[leak].get(), c = 0;
        for (long i = Math.max(0, n - RING); i < n; i++) {
            long t = when[leak][(int) (i % RING)];
            if (t > t1 && t <= t2) c++;
        }
        return c;
    }
    static volatile Object sink;

    static void every(String name, long ms, Runnable r) {
        Thread t = new Thread(() -> {
            long next = System.nanoTime();
            while (true) {
                next += ms * 1_000_000L;
                r.run();
                long d = next - System.nanoTime();
                if (d > 0) {
                    try { Thread.sleep(d / 1_000_000L, (int) (d % 1_000_000L)); } catch (InterruptedException e) { return; }
                }
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }

    public static void main(String[] a) throws Exception {
        int churn = Integer.parseInt(a[0]);
        long indexMs = a.length > 1 ? Long.parseLong(a[1]) : 10;
        long listMs = a.length > 2 ? Long.parseLong(a[2]) : 20;
        long localMs = a.length > 3 ? Long.parseLong(a[3]) : 20;
        int cacheN = a.length > 4 ? Integer.parseInt(a[4]) : 20_000;
        final int duty = a.length > 5 ? Integer.parseInt(a[5]) : 100;
        for (int i = 0; i < cacheN; i++)
            CACHE.put(i, new Cached(i));
        for (int i = 0; i < 20_000; i++)
            LRU.put(i, new Cached(i));
        every("index", indexMs, new Runnable() {
            long n;
            public void run() { synchronized (BY_ID) { BY_ID.put(n, new Invoice(n)); n++; stamp(0); } }
        });
        every("listeners", listMs, new Runnable() {
            long n;
            public void run() { synchronized (LISTENERS) { LISTENERS.add(new Listener(n++)); stamp(1); } }
        });
        Thread keeper = new Thread(() -> {
            HashMap<Long, Entry> mine = new HashMap<>(); // only this frame holds it
            long next = System.nanoTime();
            for (long n = 0; ; n++) {
                next += localMs * 1_000_000L;
                mine.put(n, new Entry(n));
                stamp(2);
                localCount.set(mine.size());
                long d = next - System.nanoTime();
                if (d > 0) {
                    try { Thread.sleep(d / 1_000_000L, (int) (d % 1_000_000L)); } catch (InterruptedException e) { return; }
                }
            }
        }, "keeper");
        keeper.setDaemon(true);
        keeper.start();
        every("lru", 3, new Runnable() { // ~650 new keys a second into a full LRU
            int k = 20_000;
            public void run() { synchronized (LRU) { LRU.put(k, new Cached(k)); k++; CACHE.get(k % cacheN); } }
        });
        for (int c = 0; c < churn; c++) {
            Thread t = new Thread(() -> {
                long i = 0;
                Duty pace = new Duty(duty);
                while (true) {
                    if ((i & 1023) == 0 && !pace.pace())
                        return;
                    Object[] o = new Object[8];
                    for (int j = 0; j < 8; j++) o[j] = new long[(int) (i++ & 31)];
                    sink = o;
                }
            }, "churn-" + c);
            t.setDaemon(true);
            t.start();
        }
        System.out.println("READY");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String l; (l = in.readLine()) != null; ) {
            String[] w = l.trim().split(" +");
            if (w[0].equals("between") && w.length == 3) {
                long t1 = Long.parseLong(w[1]), t2 = Long.parseLong(w[2]);
                System.out.println("BETWEEN " + between(0, t1, t2) + " " + between(1, t1, t2) + " " + between(2, t1, t2));
                System.out.println("END");
                System.out.flush();
                continue;
            }
            if (!l.trim().equals("counts")) continue;
            long idx, lst;
            synchronized (BY_ID) { idx = BY_ID.size(); }
            synchronized (LISTENERS) { lst = LISTENERS.size(); }
            System.out.println("COUNTS " + idx + " " + lst + " " + localCount.get());
            System.out.println("END");
            System.out.flush();
        }
    }
}
