import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * LongSig - allocations under a method whose JVM signature is longer than
 * 512 bytes (as Derby's B2IForwardScan.init and B2I.openScan are), for
 * tests/e2e/cases/alloc_longsig.sh: its frames must be named, not
 * "[unknown]". Prints READY; runs until killed.
 *
 *   java LongSig
 */
public class LongSig {
    static volatile Object sink;

    static void allocate(ConcurrentHashMap<?, ?> a1, ConcurrentLinkedDeque<?> a2, CopyOnWriteArrayList<?> a3,
            ConcurrentHashMap<?, ?> a4, ConcurrentLinkedDeque<?> a5, CopyOnWriteArrayList<?> a6,
            ConcurrentHashMap<?, ?> a7, ConcurrentLinkedDeque<?> a8, CopyOnWriteArrayList<?> a9,
            ConcurrentHashMap<?, ?> b1, ConcurrentLinkedDeque<?> b2, CopyOnWriteArrayList<?> b3,
            ConcurrentHashMap<?, ?> b4, ConcurrentLinkedDeque<?> b5, CopyOnWriteArrayList<?> b6,
            ConcurrentHashMap<?, ?> b7, ConcurrentLinkedDeque<?> b8, CopyOnWriteArrayList<?> b9,
            int n) {
        for (int i = 0; i < n; i++)
            sink = new long[64];
    }

    public static void main(String[] a) throws Exception {
        ConcurrentHashMap<?, ?> m = new ConcurrentHashMap<>();
        ConcurrentLinkedDeque<?> d = new ConcurrentLinkedDeque<>();
        CopyOnWriteArrayList<?> l = new CopyOnWriteArrayList<>();
        System.out.println("READY");
        System.out.flush();
        while (true) {
            allocate(m, d, l, m, d, l, m, d, l, m, d, l, m, d, l, m, d, l, 1000);
            Thread.sleep(1);
        }
    }
}
