// WeakHold - objects the collector would drop, and JVMTI's walk still reports:
// N WeakOnly objects reachable only through WeakReferences, N SoftOnly ones
// only through SoftReferences (kept while memory is ample), N Strong ones in a
// plain array. Allocates nothing after start (no GC clears the weak ones
// before the test looks). Prints READY, then waits.
//   java WeakHold N
import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;

public class WeakHold {
    static final class WeakOnly { long a; WeakOnly(long x) { a = x; } }
    static final class SoftOnly { long a; SoftOnly(long x) { a = x; } }
    static final class Strong { long a; Strong(long x) { a = x; } }
    static WeakReference<?>[] weak;
    static SoftReference<?>[] soft;
    static Strong[] strong;

    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        weak = new WeakReference<?>[n];
        soft = new SoftReference<?>[n];
        strong = new Strong[n];
        for (int i = 0; i < n; i++) {
            weak[i] = new WeakReference<>(new WeakOnly(i));
            soft[i] = new SoftReference<>(new SoftOnly(i));
            strong[i] = new Strong(i);
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
