// LeakPaths - two planted leaks whose holders are known, for `memtrace leaks
// --paths` (tests/e2e/cases/leaks_paths.sh), and churn that keeps the
// young generation collecting:
//   static map:    LeakPaths.CACHE, a HashMap<Long, byte[]>, gains a
//                  byte[2048] every millisecond (leakMap)
//   listener list: LeakPaths.BUS.listeners, an ArrayList<Listener>, gains a
//                  Recorder (with its long[64]) every millisecond, never
//                  removed (leakListener)
// Prints READY, then runs until killed.
import java.util.ArrayList;
import java.util.HashMap;

public class LeakPaths {
    interface Listener { void on(int event); }
    static final class Recorder implements Listener {
        final long[] seen = new long[64];
        public void on(int event) { seen[event & 63]++; }
    }
    static final class Bus {
        final ArrayList<Listener> listeners = new ArrayList<>();
        void register(Listener l) { listeners.add(l); }
        void fire(int e) { for (int i = Math.max(0, listeners.size() - 8); i < listeners.size(); i++) listeners.get(i).on(e); }
    }
    static final HashMap<Long, byte[]> CACHE = new HashMap<>();
    static final Bus BUS = new Bus();
    static long sink;

    static void leakMap(long n) { CACHE.put(n, new byte[2048]); }
    static void leakListener() { BUS.register(new Recorder()); }

    public static void main(String[] args) throws Exception {
        System.out.println("READY");
        System.out.flush();
        long start = System.nanoTime();
        for (long tick = 1; ; tick++) {
            for (int i = 0; i < 600; i++)
                sink += new int[32 + (i & 63)].length;       // churn, ~100 MB/s
            leakMap(tick);
            leakListener();
            BUS.fire((int) tick);
            long target = start + tick * 1_000_000L, now = System.nanoTime();
            if (target > now)
                Thread.sleep(0, (int) Math.min(999_999, target - now));
        }
    }
}
