import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * AllocStacks - allocations whose Java stacks are known by construction, for
 * the kernel's stack walker (bpf/jstack.bpf.h) against JFR.
 *
 *   java AllocStacks --go FILE --mb N
 *
 * One thread per scenario, each allocating only at its own site, one class per
 * site (so every TLAB refill of the thread is charged to that one stack):
 *   chain   a 40-method call chain (c01 .. c40, c20 calls c21 through an
 *           interface), ChainObj allocated in c40;
 *   rec     a 31-deep recursion (rec(31) .. rec(1)), RecObj allocated at the bottom;
 *   interp  interpA -> interpB -> interpC: run with
 *           -XX:CompileCommand=exclude,AllocStacks$Interp::interp* they stay
 *           interpreted while the rest is compiled; SlowObj;
 *   mixed   mix1 -> interpMix2 -> mix3 -> interpMix4 -> mix5 (with the same kind
 *           of exclusion: compiled and interpreted frames alternate); MixObj;
 *   lambda  a stream pipeline (IntStream.range(..).mapToObj(lambda).forEach(lambda)):
 *           LamObj allocated in the lambda, through the JDK's stream frames
 *           and the lambda's hidden proxy class (which getStackTrace leaves out).
 * The expected stack of each site is what the JVM itself says there
 * (Throwable.getStackTrace, once, during warm-up): printed as
 * "EXPECT Class frame;frame;..." root first, and with each frame's line as
 * "LINES Class frame:line;...". Prints READY after warm-up,
 * waits for FILE, allocates about N MiB in all (chain 55 %, rec 20 %, interp
 * 10 %, mixed 5 %, lambda 10 %; every object is 64 bytes), prints each thread's
 * allocated bytes (ThreadMXBean) as "BYTES Class n", then DONE, then idles.
 * Run it with -XX:CompileCommand=dontinline,AllocStacks*::* so compiled
 * frames are one method each (inlined frames are not expanded yet).
 */
public class AllocStacks {
    static final class ChainObj { long a0, a1, a2, a3, a4, a5; }
    static final class RecObj { long a0, a1, a2, a3, a4, a5; }
    static final class SlowObj { long a0, a1, a2, a3, a4, a5; }
    static final class MixObj { long a0, a1, a2, a3, a4, a5; }
    static final class LamObj { long a0, a1, a2, a3, a4, a5; }
    static volatile Object sink;
    static volatile boolean record;
    static final java.util.concurrent.ConcurrentHashMap<String, String> EXPECT =
        new java.util.concurrent.ConcurrentHashMap<>();
    static final java.util.concurrent.ConcurrentHashMap<String, String> LINES =
        new java.util.concurrent.ConcurrentHashMap<>();

    static void expect(String cls) {
        if (!record || EXPECT.containsKey(cls)) return;
        StackTraceElement[] st = new Throwable().getStackTrace();
        StringBuilder sb = new StringBuilder(), lines = new StringBuilder();
        for (int i = st.length - 1; i >= 1; i--) {  // root first; [0] is expect() itself
            sb.append(st[i].getClassName()).append('.').append(st[i].getMethodName());
            lines.append(st[i].getClassName()).append('.').append(st[i].getMethodName())
                 .append(':').append(st[i].getLineNumber());
            if (i > 1) { sb.append(';'); lines.append(';'); }
        }
        LINES.put(cls, lines.toString());
        EXPECT.put(cls, sb.toString());
    }

    interface Step { void next(); }
    static final class Via implements Step { public void next() { Chain.c21(); } }

    static final class Chain {
        static final Step VIA = new Via();
        static void c01() { c02(); }
        static void c02() { c03(); }
        static void c03() { c04(); }
        static void c04() { c05(); }
        static void c05() { c06(); }
        static void c06() { c07(); }
        static void c07() { c08(); }
        static void c08() { c09(); }
        static void c09() { c10(); }
        static void c10() { c11(); }
        static void c11() { c12(); }
        static void c12() { c13(); }
        static void c13() { c14(); }
        static void c14() { c15(); }
        static void c15() { c16(); }
        static void c16() { c17(); }
        static void c17() { c18(); }
        static void c18() { c19(); }
        static void c19() { c20(); }
        static void c21() { c22(); }
        static void c22() { c23(); }
        static void c23() { c24(); }
        static void c24() { c25(); }
        static void c25() { c26(); }
        static void c26() { c27(); }
        static void c27() { c28(); }
        static void c28() { c29(); }
        static void c29() { c30(); }
        static void c30() { c31(); }
        static void c31() { c32(); }
        static void c32() { c33(); }
        static void c33() { c34(); }
        static void c34() { c35(); }
        static void c35() { c36(); }
        static void c36() { c37(); }
        static void c37() { c38(); }
        static void c38() { c39(); }
        static void c39() { c40(); }
        static void c20() { VIA.next(); }
        static void c40() { expect("AllocStacks$ChainObj"); sink = new ChainObj(); }
    }

    static final class Rec {
        static void rec(int n) {
            if (n > 1) { rec(n - 1); return; }
            expect("AllocStacks$RecObj"); sink = new RecObj();
        }
    }

    static final class Interp {
        static void interpA() { interpB(); }
        static void interpB() { interpC(); }
        static void interpC() { expect("AllocStacks$SlowObj"); sink = new SlowObj(); }
    }

    static final class Mixed {
        static void mix1() { interpMix2(); }
        static void interpMix2() { mix3(); }
        static void mix3() { interpMix4(); }
        static void interpMix4() { mix5(); }
        static void mix5() { expect("AllocStacks$MixObj"); sink = new MixObj(); }
    }

    static final class Lambda {
        static void stream() {
            java.util.stream.IntStream.range(0, 64)
                .mapToObj(i -> { expect("AllocStacks$LamObj"); return new LamObj(); })
                .forEach(o -> sink = o);
        }
    }

    static final class Worker implements Runnable {
        final String name;
        final long objects;
        final long warm;
        volatile String go;
        long bytes;

        Worker(String name, long objects, long warm) {
            this.name = name; this.objects = objects; this.warm = warm;
        }

        void once() {
            switch (name) {
                case "chain": Chain.c01(); break;
                case "rec": Rec.rec(31); break;
                case "interp": Interp.interpA(); break;
                case "lambda": Lambda.stream(); break;
                default: Mixed.mix1(); break;
            }
        }

        void loop(long n) {
            for (long i = 0; i < n; i++) once();
        }

        public void run() {
            com.sun.management.ThreadMXBean tmx =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long before = 0;
            // one call site for the warm-up and the measured phase: the line
            // the expected stack records is the one memtrace sees
            for (int phase = 0; phase < 2; phase++) {
                if (phase == 1) {
                    while (go == null) Thread.onSpinWait();
                    try {
                        while (!Files.exists(Path.of(go))) Thread.sleep(10);
                    } catch (InterruptedException e) {
                        return;
                    }
                    before = tmx.getThreadAllocatedBytes(Thread.currentThread().getId());
                }
                loop(phase == 0 ? warm : objects);
            }
            bytes = tmx.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
        }
    }

    public static void main(String[] args) throws Exception {
        String go = null;
        long mb = 256;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--go": go = args[++i]; break;
                case "--mb": mb = Long.parseLong(args[++i]); break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        String[] names = { "chain", "rec", "interp", "mixed", "lambda" };
        String[] classes = { "AllocStacks$ChainObj", "AllocStacks$RecObj",
                             "AllocStacks$SlowObj", "AllocStacks$MixObj", "AllocStacks$LamObj" };
        // shares 55/20/10/5/10 %: the weighted median depth is the chain's, with room
        // for a sampler's bias between threads (a stream call allocates 64 objects)
        int[] hundredths = { 55, 20, 10, 5, 10 };
        int[] per = { 1, 1, 1, 1, 64 };
        Worker[] w = new Worker[names.length];
        Thread[] t = new Thread[names.length];
        record = true;
        for (int i = 0; i < names.length; i++) {
            w[i] = new Worker(names[i], mb * 1024 * 1024 / 64 * hundredths[i] / 100 / per[i],
                              20_000 / per[i]);
            t[i] = new Thread(w[i], "alloc-" + names[i]);
            t[i].start();
        }
        // every site has been seen once the warm-up is over
        while (EXPECT.size() < names.length) Thread.sleep(10);
        Thread.sleep(500);
        for (int i = 0; i < names.length; i++) {
            System.out.println("EXPECT " + classes[i] + " " + EXPECT.get(classes[i]));
            System.out.println("LINES " + classes[i] + " " + LINES.get(classes[i]));
        }
        record = false;
        System.out.println("READY");
        System.out.flush();
        for (Worker x : w) x.go = go;
        for (Thread x : t) x.join();
        for (int i = 0; i < names.length; i++)
            System.out.println("BYTES " + classes[i] + " " + w[i].bytes);
        System.out.println("DONE");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
