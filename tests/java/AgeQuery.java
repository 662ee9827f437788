// AgeQuery - objects of known age for `memtrace query`'s built-in `age`
// (tests/e2e/cases/query_age.sh). Keeps 100 Early objects from the start,
// prints READY, then obeys stdin lines:
//   gc K     System.gc() K times, then "gc done collections=C"
//   alloc    keep 50 Late objects, then "alloc done collections=C"
// where C is the sum of the GarbageCollectorMXBeans' collection counts (an
// independent count of the collections). It allocates nothing else, so no
// other collection runs.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

public class AgeQuery {
    static final class Early { long v; }
    static final class Late { long v; }
    static Early[] early = new Early[100];
    static Late[] late = new Late[0]; // the class exists from the start

    static long collections() {
        long c = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans())
            if (b.getCollectionCount() > 0) c += b.getCollectionCount();
        return c;
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < early.length; i++) early[i] = new Early();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        System.out.println("READY collections=" + collections());
        System.out.flush();
        for (String l; (l = in.readLine()) != null; ) {
            if (l.startsWith("gc ")) {
                for (int i = Integer.parseInt(l.substring(3).trim()); i > 0; i--) System.gc();
                System.out.println("gc done collections=" + collections());
            } else if (l.equals("alloc")) {
                late = new Late[50];
                for (int i = 0; i < late.length; i++) late[i] = new Late();
                System.out.println("alloc done collections=" + collections());
            }
            System.out.flush();
        }
        while (true) Thread.sleep(1000); // stdin closed: stay quiescent
    }
}
