// LeakWorkload - two planted leaks from different sites and classes, a large
// cache filled once (before READY) and then only read, and churn from many
// sites. Used by tests/e2e/cases/leaks_rank.sh.
//   leak 1: LeakWorkload.leakSessions -> LeakedSession objects (+ their long[])
//           into a static list, ~400 KB/s
//   leak 2: LeakWorkload.leakBuffers  -> byte[1000] into a static map, ~400 KB/s
//   cache : 40 MB of char[] in a HashMap, filled once, read forever
//   churn : 16 sites allocating short-lived objects (~50 MB/s), plus a bounded
//           ring of 2000 recent objects that live a few GCs and die
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;

public class LeakWorkload {
    static final class LeakedSession {
        final long id; final long[] data; final String name;
        LeakedSession(long id) { this.id = id; this.data = new long[8]; this.name = null; }
    }
    static final ArrayList<LeakedSession> sessions = new ArrayList<>();
    static final HashMap<Long, byte[]> buffers = new HashMap<>();
    static final HashMap<Integer, char[]> cache = new HashMap<>();
    static final Object[] recent = new Object[2000];
    static long sink;

    static void leakSessions(long n) { for (int i = 0; i < 40; i++) sessions.add(new LeakedSession(n * 40 + i)); }
    static void leakBuffers(long n) { buffers.put(n, new byte[1000]); }

    static Object churn(int site, int i) {
        switch (site & 15) {
            case 0: return new int[64];
            case 1: return new long[32];
            case 2: return new byte[512];
            case 3: return new char[100];
            case 4: return new StringBuilder(64).append(i);
            case 5: return new ArrayList<Integer>(20);
            case 6: return new HashMap<Integer, Integer>(8);
            case 7: return new double[40];
            case 8: return new Object[30];
            case 9: return String.valueOf(i * 31L);
            case 10: return new short[200];
            case 11: return new float[60];
            case 12: return new Integer[20];
            case 13: return new int[128];
            case 14: return new byte[256];
            default: return new long[16];
        }
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 40_000; i++)
            cache.put(i, new char[500]);                   // ~40 MB, filled once
        System.out.println("READY");
        System.out.flush();
        long tick = 0;
        long start = System.nanoTime();
        while (true) {
            // 1 ms of work: churn, the ring, both leaks at ~400 KB/s each
            for (int i = 0; i < 400; i++) {
                Object o = churn(i, i);
                sink += o.hashCode();
                if ((i & 7) == 0)
                    recent[(int) ((tick * 50 + i / 8) % recent.length)] = o;
            }
            sink += cache.get((int) (tick % 40_000)).length;
            if (tick % 5 == 0) leakSessions(tick);   // 40 x (24+80+16 B) per 5 ms ~ 0.9 MB/s
            if (tick % 3 == 0) leakBuffers(tick);     // 1016 B per 3 ms ~ 0.34 MB/s
            tick++;
            long target = start + tick * 1_000_000L;
            long now = System.nanoTime();
            if (target > now)
                Thread.sleep(0, (int) Math.min(999_999, target - now));
            if (tick % 5000 == 0) {
                System.out.println("tick " + tick + " sessions " + sessions.size() + " buffers " + buffers.size());
                System.out.flush();
            }
        }
    }
}
