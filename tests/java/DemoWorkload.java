import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * DemoWorkload - the JVM `make demo` runs memtrace on: GC churn (short-lived
 * request objects), steady allocation of strings and arrays, a cache filled
 * once, and a slow leak (sessions that are never removed). Runs until killed,
 * or for the number of seconds given as its argument.
 */
public class DemoWorkload {
    static final Map<Integer, byte[]> CACHE = new HashMap<>();
    static final List<Session> LEAK = new ArrayList<>();
    static volatile Object sink;

    static final class Session {
        final long id;
        final char[] payload;
        Session(long id) { this.id = id; this.payload = new char[512]; }
    }

    static final class Request {
        final String path;
        final long[] headers;
        Request(int i) { path = "/api/item/" + i; headers = new long[32]; }
    }

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : Long.MAX_VALUE / 2000;
        for (int i = 0; i < 2000; i++) CACHE.put(i, new byte[4096]);  // ~8 MiB, stable
        System.out.println("READY");
        System.out.flush();
        long end = System.currentTimeMillis() + seconds * 1000;
        long n = 0;
        while (System.currentTimeMillis() < end) {
            for (int i = 0; i < 20000; i++) {
                sink = new Request(i);                  // churn
                if ((i & 7) == 0) sink = new StringBuilder("x").append(i).toString();
            }
            LEAK.add(new Session(++n));                 // the slow leak (~1 KiB per round)
            if (n % 2000 == 0) System.gc();             // an occasional full collection
            Thread.sleep(1);
        }
    }
}
