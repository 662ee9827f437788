// QuerySeeds - a quiescent heap on which the seed's programs 03-05 (tests/dsl/)
// have answers known by construction (tests/e2e/cases/query_seeds.sh):
//   java QuerySeeds DIR      (DIR: build/java-dyn, holding QCarried)
// 03 "objects reachable from threads": three Worker threads "seed-worker-N"
//    (N = 5, 10, 20), each the only holder (field `graph`) of a private Graph:
//    a TNode[64] with N TNode, each with its own TLeaf. Nothing else refers to
//    any of them, so thread N reaches exactly 1 Graph + 1 TNode[] + 2N objects.
// 04 "K3 aspects": 4 K3Object (n = 0..3) with n+1 K3Part in a K3Part[4]; the
//    aspects HashMap<K3Object, Aspect> maps each to an Aspect holding 2(n+1)
//    AspectItem in an AspectItem[8]. hashCode() = n, so every key has a bucket
//    of its own in the 64-slot table (Node.next is always null). A decoy
//    HashMap<Integer, Aspect> holds 3 more Aspects that no K3Object owns.
// 05 "top components": three class loaders QLoader "seed-loader-N" (N = 10,
//    20, 30, parent: the bootstrap loader) each define QCarried
//    (tests/java/dyn) and run QCarried.hold(N) in a thread "carrier-N", which
//    keeps a QCarried[N] (each QCarried with its own QCarriedPart) in a local
//    variable only: a stack-local heap root whose class belongs to the loader.
// Every class used in these graphs is the workload's own, so `jcmd
// GC.class_histogram` gives each one's instance size. Prints READY, then sleeps.
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

public class QuerySeeds {
    // ---- 03 ----
    static final class TLeaf { long a; int b; }
    static final class TNode { final TNode next; final TLeaf leaf = new TLeaf(); long v; TNode(TNode n) { next = n; } }
    static final class Graph {
        final TNode[] nodes = new TNode[64];
        Graph(int n) { TNode prev = null; for (int i = 0; i < n; i++) { nodes[i] = new TNode(prev); prev = nodes[i]; } }
    }
    static final class Worker extends Thread {
        final Graph graph;
        Worker(String name, int n) { super(name); graph = new Graph(n); setDaemon(true); }
        @Override public void run() {
            try { while (true) Thread.sleep(100000); } catch (InterruptedException e) { }
        }
    }

    // ---- 04 ----
    static final class K3Part { long x; }
    static final class K3Object {
        final int n;
        final K3Part[] parts = new K3Part[4];
        K3Object(int n) { this.n = n; for (int i = 0; i <= n; i++) parts[i] = new K3Part(); }
        @Override public int hashCode() { return n; }
    }
    static final class AspectItem { long a; }
    static final class Aspect {
        final AspectItem[] items = new AspectItem[8];
        Aspect(int k) { for (int i = 0; i < k; i++) items[i] = new AspectItem(); }
    }
    static final K3Object[] keys = new K3Object[4];
    static final HashMap<K3Object, Aspect> aspects = new HashMap<>(64);
    static final HashMap<Integer, Aspect> decoy = new HashMap<>();

    // ---- 05 ----
    static final class QLoader extends URLClassLoader {
        QLoader(String name, URL[] urls) { super(name, urls, null); }
    }
    static final List<Object> keep = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        for (int n : new int[] { 5, 10, 20 }) {
            Worker w = new Worker("seed-worker-" + n, n);
            keep.add(w);
            w.start();
        }
        for (int n = 0; n < keys.length; n++) {
            keys[n] = new K3Object(n);
            aspects.put(keys[n], new Aspect(2 * (n + 1)));
        }
        for (int i = 0; i < 3; i++) decoy.put(1000 + i, new Aspect(3));
        URL dir = new java.io.File(args[0]).toURI().toURL();
        for (int n = 10; n <= 30; n += 10) {
            QLoader l = new QLoader("seed-loader-" + n, new URL[] { dir });
            Method m = l.loadClass("QCarried").getMethod("hold", int.class);
            final int k = n;
            Thread t = new Thread(() -> {
                try { m.invoke(null, k); } catch (Exception e) { e.printStackTrace(); }
            }, "carrier-" + n);
            t.setDaemon(true);
            keep.add(l);
            keep.add(t);
            t.start();
        }
        // the carriers hold their arrays once they sleep
        for (Object o : keep)
            if (o instanceof Thread)
                while (((Thread) o).getState() != Thread.State.TIMED_WAITING) Thread.sleep(10);
        System.gc();
        System.out.println("READY");
        System.out.flush();
        while (true) Thread.sleep(1000);
    }
}
