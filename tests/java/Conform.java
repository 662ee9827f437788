// Conform - a quiescent heap whose answers are known by construction, for the
// query language's conformance test (tests/e2e/cases/query_conform.sh): every
// member and context name of the syntax section of docs/design.md on a live JVM, a saved
// snapshot and a heap dump.
//   java Conform
// Holder.all holds 5 Circle (a chain via next, labels "c0".."c4"), 3 Square,
// 4 Plain (k = 0, 1, 2, 7), the 6 HashMap$Node of a HashMap, and arrays:
// Circle[2], Square[2], String[2], Object[1], int[77], Circle[2][] - 24
// objects. Java's own `o instanceof T` counts over them are printed as
// "INSTANCEOF T n" lines (the test compares `is` with them), then READY.
// A thread "conform-worker" of ThreadGroup "conform-group" holds LOCK and
// sleeps; the main thread sleeps without allocating.
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

public class Conform {
    interface Shape { }
    interface Round extends Shape { }
    interface Named extends Serializable { }
    abstract static class Base implements Named { int id; }
    static class Circle extends Base implements Round, Cloneable { double r; String label; Circle next; }
    static class Square extends Base implements Shape { long side; }
    static class Plain { int k; Plain(int k) { this.k = k; } }
    static class Holder { Object[] all; Circle chain; }

    static Holder HOLDER = new Holder();
    static final Object LOCK = new Object();
    // array classes `is` names must find loaded (not in Holder.all)
    static Object[] TYPES = { new Shape[0], new Round[0], new Comparable[0], new CharSequence[0],
                              new Serializable[0], new Cloneable[0], new Object[0][0], new Named[0] };

    static void count(String name, List<Object> all, Class<?> c) {
        int n = 0;
        for (Object o : all) if (c.isInstance(o)) n++;
        System.out.println("INSTANCEOF " + name + " " + n);
    }

    public static void main(String[] args) throws Exception {
        IdentityHashMap<Object, Boolean> seen = new IdentityHashMap<>();
        List<Object> all = new ArrayList<>();
        Circle[] cs = new Circle[5];
        for (int i = 0; i < 5; i++) {
            cs[i] = new Circle();
            cs[i].id = i;
            cs[i].r = i + 0.5;
            cs[i].label = "c" + i;
            if (i > 0) cs[i - 1].next = cs[i];
            all.add(cs[i]);
        }
        HOLDER.chain = cs[0];
        for (int i = 0; i < 3; i++) { Square s = new Square(); s.id = 10 + i; s.side = i; all.add(s); }
        int[] ks = { 0, 1, 2, 7 };
        for (int k : ks) all.add(new Plain(k));
        HashMap<String, Integer> map = new HashMap<>();
        for (int i = 0; i < 6; i++) map.put("k" + i, i);
        for (Map.Entry<String, Integer> e : map.entrySet()) all.add(e);
        Circle[] ca = { cs[0], cs[1] };
        Square[] sa = new Square[2];
        String[] stra = { "x", "y" };
        Object[] oa = { cs[2] };
        int[] ia = new int[77];
        Circle[][] caa = { ca, null };
        all.add(ca); all.add(sa); all.add(stra); all.add(oa); all.add(ia); all.add(caa);
        for (Object o : all) seen.put(o, true);
        if (seen.size() != all.size()) throw new IllegalStateException("duplicates");
        HOLDER.all = all.toArray();
        count("java.lang.Object", all, Object.class);
        count("Conform.Shape", all, Shape.class);
        count("Conform.Round", all, Round.class);
        count("Conform.Named", all, Named.class);
        count("java.io.Serializable", all, Serializable.class);
        count("java.lang.Cloneable", all, Cloneable.class);
        count("Conform.Base", all, Base.class);
        count("Conform.Circle", all, Circle.class);
        count("Conform.Square", all, Square.class);
        count("Conform.Plain", all, Plain.class);
        count("Map.Entry", all, Map.Entry.class);
        count("java.util.HashMap$Node", all, map.entrySet().iterator().next().getClass());
        count("java.lang.Object[]", all, Object[].class);
        count("Conform.Shape[]", all, Shape[].class);
        count("Conform.Round[]", all, Round[].class);
        count("Conform.Named[]", all, Named[].class);
        count("Conform.Circle[]", all, Circle[].class);
        count("java.lang.Comparable[]", all, Comparable[].class);
        count("java.lang.CharSequence[]", all, CharSequence[].class);
        count("java.io.Serializable[]", all, Serializable[].class);
        count("java.lang.Cloneable[]", all, Cloneable[].class);
        count("java.lang.Object[][]", all, Object[][].class);
        count("int[]", all, int[].class);
        ThreadGroup g = new ThreadGroup("conform-group");
        Thread w = new Thread(g, () -> {
            synchronized (LOCK) {
                try { Thread.sleep(Long.MAX_VALUE); } catch (InterruptedException e) { }
            }
        }, "conform-worker");
        w.setDaemon(true);
        w.start();
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
