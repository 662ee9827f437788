// AgeWorkload - objects kept alive for exactly k collections, the collections
// forced with System.gc() in a known pattern. Every cycle: (1) each site
// keepK allocates a batch of long[16]; (2) batches that have survived k
// System.gc() calls are dropped; (3) System.gc(). So a live object of site
// keepK has survived 0..k collections, never more (k = 0: dropped before
// any GC). Allocation is small, so no other GC runs between the forced ones.
// Prints READY, then "cycle N gcs G" every 10 cycles.
import java.util.ArrayDeque;

public class AgeWorkload {
    static final int[] KS = { 0, 1, 3, 6, 12, 20 };
    @SuppressWarnings("unchecked")
    static final ArrayDeque<Object[]>[] kept = new ArrayDeque[KS.length];
    static final int BATCH = 100; // x 144 B per site and cycle

    static Object[] keep0() { Object[] b = new Object[BATCH]; for (int i = 0; i < BATCH; i++) b[i] = new long[16]; return b; }
    static Object[] keep1() { Object[] b = new Object[BATCH]; for (int i = 0; i < BATCH; i++) b[i] = new long[16]; return b; }
    static Object[] keep3() { Object[] b = new Object[BATCH]; for (int i = 0; i < BATCH; i++) b[i] = new long[16]; return b; }
    static Object[] keep6() { Object[] b = new Object[BATCH]; for (int i = 0; i < BATCH; i++) b[i] = new long[16]; return b; }
    static Object[] keep12() { Object[] b = new Object[BATCH]; for (int i = 0; i < BATCH; i++) b[i] = new long[16]; return b; }
    static Object[] keep20() { Object[] b = new Object[BATCH]; for (int i = 0; i < BATCH; i++) b[i] = new long[16]; return b; }

    static Object[] alloc(int j) {
        switch (j) {
            case 0: return keep0();
            case 1: return keep1();
            case 2: return keep3();
            case 3: return keep6();
            case 4: return keep12();
            default: return keep20();
        }
    }

    public static void main(String[] args) throws Exception {
        for (int j = 0; j < KS.length; j++) kept[j] = new ArrayDeque<>();
        System.out.println("READY");
        System.out.flush();
        for (long cycle = 0; ; cycle++) {
            for (int j = 0; j < KS.length; j++) {
                kept[j].addLast(alloc(j));
                // the oldest batch has survived kept[j].size() - 1 GCs: keep k at most
                while (kept[j].size() > KS[j]) kept[j].removeFirst();
            }
            System.gc();
            if (cycle % 10 == 0) {
                System.out.println("cycle " + cycle);
                System.out.flush();
            }
            Thread.sleep(100);
        }
    }
}
