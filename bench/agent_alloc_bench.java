// AgentAllocBench - an allocation-heavy loop for bench/agent_overhead.sh.
// Every 250 ms it prints "w <epoch ms> <ops>": the operations done in that
// window. One operation allocates ~1 KB in 12 objects (arrays, boxed values,
// a string, a small map) and keeps a few in a bounded ring, so the young
// generation churns and some objects survive a GC or two.
import java.util.HashMap;

class AgentAllocBench {
    static final Object[] ring = new Object[50_000];
    static long sink;

    static Object op(int i) {
        HashMap<Integer, Object> m = new HashMap<>(4);
        m.put(i, new long[16]);
        m.put(i + 1, new byte[256]);
        m.put(i + 2, String.valueOf(i));
        Object[] a = new Object[8];
        for (int k = 0; k < a.length; k += 2) a[k] = Integer.valueOf(i + k * 1000);
        a[1] = m;
        a[3] = new int[32];
        return a;
    }

    public static void main(String[] args) throws Exception {
        System.out.println("READY");
        System.out.flush();
        int i = 0;
        while (true) {
            long end = System.currentTimeMillis() + 250, ops = 0;
            while (System.currentTimeMillis() < end) {
                for (int k = 0; k < 200; k++, i++) {
                    Object o = op(i);
                    sink += o.hashCode();
                    if ((i & 3) == 0) ring[(i >>> 2) % ring.length] = o;
                }
                ops += 200;
            }
            System.out.println("w " + end + " " + ops);
            System.out.flush();
        }
    }
}
