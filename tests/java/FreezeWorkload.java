// FreezeWorkload - a heap of known live objects and mutator threads that
// allocate and write while memtrace takes frozen heap snapshots
// (tests/e2e/cases/walk_frozen_soak.sh, bench/freeze.sh).
//   java FreezeWorkload ENTRIES THREADS [BLOB_MB [DUTY]]
// Keeps ENTRIES FwEntry, each with a long[2], in one FwEntry[] (2 * ENTRIES + 1
// objects), and BLOB_MB MiB of byte[256 KiB]; THREADS threads allocate
// short-lived FwChurn objects as fast as they can and, every 64 of them, store
// one into a random entry's `last` field (old-generation writes; each entry's
// previous one becomes garbage). DUTY (percent, default 100): each churn
// thread allocates DUTY % of every 4 ms and sleeps the rest (Duty.java).
// stdin "check" walks the entries and prints
// "CHECK ok N 0" when each is as built (id, payload, its last FwChurn's
// fields), else "CHECK bad N BAD"; "dump K" prints the last K 10 ms
// buckets as "ms ops" lines (ops: FwChurn allocated by all threads), then END;
// "hold" stops the churn threads (they sleep) and "go" lets them on, each
// answered by HELD / GOING. "stops MS" has a thread stop the JVM (a thread
// dump, Thread.getAllStackTraces(): a safepoint) every MS ms, 0 no more,
// answered by STOPS MS; it naps 1 ms at a time, so after another pause of
// MS ms or more its stop follows at once.
// Prints READY.
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLongArray;

public class FreezeWorkload {
    static final class FwEntry { long id; long[] payload = new long[2]; FwChurn last; FwEntry(long i) { id = i; } }
    static final class FwChurn { long a, b; FwChurn(long x) { a = x; b = ~x; } }
    static FwEntry[] entries;
    static byte[][] blobs;
    static volatile Object sink;
    static final AtomicLongArray ops = new AtomicLongArray(64 * 8);
    static final int SLOTS = 1 << 16;
    static final long[] hist = new long[SLOTS], stamp = new long[SLOTS];
    static volatile int filled;
    static volatile boolean held;
    static volatile int stopEvery;
    static Thread stopper;

    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]), t = Integer.parseInt(a[1]);
        final int duty = a.length > 3 ? Integer.parseInt(a[3]) : 100;
        entries = new FwEntry[n];
        for (int i = 0; i < n; i++) entries[i] = new FwEntry(i);
        if (a.length > 2) {
            blobs = new byte[Integer.parseInt(a[2]) * 4][];
            for (int i = 0; i < blobs.length; i++) { blobs[i] = new byte[1 << 18]; blobs[i][i % (1 << 18)] = (byte) i; }
        }
        System.gc();
        for (int k = 0; k < t; k++) {
            final int id = k;
            Thread th = new Thread(() -> {
                long c = 0;
                Duty pace = new Duty(duty);
                ThreadLocalRandom r = ThreadLocalRandom.current();
                while (true) {
                    while (held) {
                        try { Thread.sleep(1); } catch (InterruptedException e) { return; }
                    }
                    if ((c & 1023) == 0 && !pace.pace())
                        return;
                    FwChurn x = null;
                    for (int j = 0; j < 64; j++) sink = x = new FwChurn(c + j);
                    if (n > 0) entries[r.nextInt(n)].last = x;
                    c += 64;
                    ops.lazySet(id * 8, c);
                }
            }, "churn-" + k);
            th.setDaemon(true);
            th.start();
        }
        Thread s = new Thread(() -> {
            long next = System.nanoTime();
            for (int i = 0; ; i++) {
                next += 10_000_000L;
                long now;
                while ((now = System.nanoTime()) < next) {
                    try { Thread.sleep(1); } catch (InterruptedException e) { return; }
                }
                long sum = 0;
                for (int k = 0; k < t; k++) sum += ops.get(k * 8);
                hist[i % SLOTS] = sum;
                stamp[i % SLOTS] = now / 1_000_000;
                filled = i + 1;
            }
        }, "sampler");
        s.setDaemon(true);
        s.start();
        System.out.println("READY");
        System.out.flush();
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        for (String l; (l = in.readLine()) != null; ) {
            if (l.equals("check")) { // the heap as the program built it: nothing wrote into it
                long bad = 0;
                for (int i = 0; i < n; i++) {
                    FwEntry e = entries[i];
                    // `last` read once: a churn thread may replace it between
                    // two reads (a and b of two FwChurn: not a bad heap)
                    FwChurn last = e.last;
                    if (e.id != i || e.payload.length != 2 || (last != null && last.b != ~last.a)) bad++;
                }
                System.out.println("CHECK " + (bad == 0 ? "ok" : "bad") + " " + n + " " + bad);
                System.out.flush();
                continue;
            }
            if (l.equals("hold") || l.equals("go")) {
                held = l.equals("hold");
                Thread.sleep(20); // a churn thread in its batch finishes it
                System.out.println(held ? "HELD" : "GOING");
                System.out.flush();
                continue;
            }
            if (l.startsWith("stops ")) {
                if (stopEvery == 0 && stopper == null) { // the thread made at the first
                    stopper = new Thread(() -> {
                        long last = System.nanoTime();
                        while (true) { // 1 ms naps: one waking in another safepoint stops right after it
                            try { Thread.sleep(1); } catch (InterruptedException e) { return; }
                            int ms = stopEvery;
                            if (ms > 0 && System.nanoTime() - last >= ms * 1_000_000L) {
                                Thread.getAllStackTraces();
                                last = System.nanoTime();
                            }
                        }
                    }, "stopper");
                    stopper.setDaemon(true);
                    stopper.start();
                }
                stopEvery = Integer.parseInt(l.substring(6).trim());
                System.out.println("STOPS " + stopEvery);
                System.out.flush();
                continue;
            }
            if (!l.startsWith("dump ")) continue;
            int end = filled, from = Math.max(1, end - Integer.parseInt(l.substring(5).trim()));
            StringBuilder sb = new StringBuilder();
            for (int i = from; i < end; i++)
                sb.append(stamp[i % SLOTS]).append(' ').append(hist[i % SLOTS] - hist[(i - 1) % SLOTS]).append('\n');
            System.out.print(sb);
            System.out.println("END");
            System.out.flush();
        }
        while (true) Thread.sleep(1000);
    }
}
