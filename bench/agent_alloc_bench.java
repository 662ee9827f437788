// AgentAllocBench - an allocation-heavy loop for bench/agent_overhead.sh.
// Every 250 ms it prints "w <epoch ms> <ops> <bytes>": the operations done in
// that window and the bytes the thread allocated in it (ThreadMXBean, an
// independent count of the allocation rate). One operation allocates ~1 KB
// in 12 objects (arrays, boxed values, a string, a small map) and keeps one
// in four in a bounded ring (-Dring=N objects, default 5000), so the young
// generation churns and some objects survive a GC or two. -Dwork=N adds N
// rounds of arithmetic per operation: 0 gives the highest allocation rate
// (~6 GB/s on one core here), larger values a more ordinary mix.
import java.lang.management.ManagementFactory;
import java.util.HashMap;

class AgentAllocBench {
    static final Object[] ring = new Object[Integer.getInteger("ring", 5_000)];
    static final int work = Integer.getInteger("work", 0);
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

    static long compute(int i) {
        long x = i;
        for (int k = 0; k < work; k++) x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }

    public static void main(String[] args) throws Exception {
        com.sun.management.ThreadMXBean tmx =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        System.out.println("READY");
        System.out.flush();
        int i = 0;
        long b0 = tmx.getThreadAllocatedBytes(tid);
        while (true) {
            long end = System.currentTimeMillis() + 250, ops = 0;
            while (System.currentTimeMillis() < end) {
                for (int k = 0; k < 200; k++, i++) {
                    Object o = op(i);
                    sink += o.hashCode() + compute(i);
                    if ((i & 3) == 0) ring[(i >>> 2) % ring.length] = o;
                }
                ops += 200;
            }
            long b1 = tmx.getThreadAllocatedBytes(tid);
            System.out.println("w " + end + " " + ops + " " + (b1 - b0));
            System.out.flush();
            b0 = b1;
        }
    }
}
