// AttachWorkload - a JVM that keeps computing the same checksum, once a second,
// so attach/detach tests can see that it still runs and still computes correctly.
// Prints "READY", then "tick N sum S" lines; S is the same on every line.
public class AttachWorkload {
    static long compute() {
        long h = 1469598103934665603L;
        java.util.ArrayList<long[]> keep = new java.util.ArrayList<>();
        for (int i = 0; i < 200_000; i++) {
            long[] a = new long[8];             // allocate: the GC must keep working too
            a[i & 7] = i;
            if ((i & 1023) == 0)
                keep.add(a);
            h = (h ^ (i * 31L + a[i & 7])) * 1099511628211L;
        }
        return h ^ keep.size();
    }

    public static void main(String[] args) throws Exception {
        System.out.println("READY");
        System.out.flush();
        for (long tick = 0; ; tick++) {
            long t0 = System.nanoTime();
            System.out.println("tick " + tick + " sum " + Long.toHexString(compute()));
            System.out.flush();
            long left = 1_000_000_000L - (System.nanoTime() - t0);
            if (left > 0)
                Thread.sleep(left / 1_000_000L);
        }
    }
}
