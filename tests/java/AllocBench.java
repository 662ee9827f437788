/**
 * AllocBench - an allocation-heavy loop for bench/: allocates small objects
 * (and an occasional array) as fast as it can and prints, every 250 ms,
 * "tput <epoch_ms> <allocations in that interval>". Runs until killed.
 */
public class AllocBench {
    static final class Node { long a, b; Object next; }
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        System.out.println("READY");
        long last = System.currentTimeMillis(), n = 0;
        Object keep = null;
        while (true) {
            for (int i = 0; i < 10000; i++) {
                Node x = new Node();
                x.next = keep;
                keep = (i & 1023) == 0 ? new long[64] : x;
                sink = keep;
                if ((i & 15) == 0) keep = null;
            }
            n += 10000;
            long now = System.currentTimeMillis();
            if (now - last >= 250) {
                System.out.println("tput " + now + " " + n);
                System.out.flush();
                n = 0;
                last = now;
            }
        }
    }
}
