// QueryWorkload - a quiescent heap whose answers are known, for `memtrace query`,
// `histo` and `snapshot` (tests/e2e/cases/query_*.sh, histo_*.sh).
//   java QueryWorkload planted|clean
// 50 Order (field = 0..49; "planted": orders[7].field = 4242), 20 Datum
// (data = 0.0..19.0; "planted": data[3].data = 3.1415), one QHolder whose
// QNode[100] array holds 100 QNode, each with an int[10] payload (a chain via
// next), and 40 QEntry in a plain array, each keyed by one of 4 QKey objects.
// `QueryWorkload planted loaders DIR` also loads QPayload (tests/java/dyn) from
// DIR with three class loaders keeping 10, 20 and 30 instances.
// `QueryWorkload planted N` also keeps N more QNode (with their int[10]) in
// `big`, for bench/query.sh; `QueryWorkload planted N MB` also keeps MB MiB in
// byte[256 KiB] arrays (a heap whose bytes are mostly primitive data, as in a
// cache of buffers). Prints READY and then sleeps without allocating.
// Order and Datum are top-level classes so the seed's programs (tests/dsl/01, 02) run unchanged.
class Order { int field; String name; Order(int f) { field = f; name = "order-" + f; } }
class Datum { double data; Datum(double d) { data = d; } }

// Field indices across an interface with constants and a superclass with a static.
interface QConst { int K = 5; String S = "s"; }
class QBase { static int sb = 9; int a = 1; String tag = "base"; }
class QIfaced extends QBase implements QConst { static long sc = 8; int b = 2; long c = 3; }

public class QueryWorkload {
    static class QNode { QNode next; int[] payload = new int[10]; long stamp; }
    static class QHolder { QNode[] nodes = new QNode[100]; }
    static class QKey { int k; QKey(int k) { this.k = k; } }
    static class QEntry { QKey key; long[] value; QEntry(QKey k, int n) { key = k; value = new long[n]; } }
    static Order[] orders = new Order[50];
    static Datum[] data = new Datum[20];
    static QHolder holder = new QHolder();
    static QEntry[] entries = new QEntry[40];
    static QNode[] big;
    static byte[][] blobs;
    static QIfaced ifaced = new QIfaced();
    static java.util.List<ClassLoader> loaders = new java.util.ArrayList<>();

    public static void main(String[] args) throws Exception {
        boolean planted = args.length > 0 && args[0].equals("planted");
        for (int i = 0; i < orders.length; i++) orders[i] = new Order(i);
        for (int i = 0; i < data.length; i++) data[i] = new Datum(i);
        if (planted) { orders[7].field = 4242; data[3].data = 3.1415; }
        for (int i = 0; i < 100; i++) {
            holder.nodes[i] = new QNode();
            holder.nodes[i].stamp = i;
            if (i > 0) holder.nodes[i - 1].next = holder.nodes[i];
        }
        QKey[] keys = new QKey[4];
        for (int i = 0; i < 4; i++) keys[i] = new QKey(i);
        for (int i = 0; i < entries.length; i++) entries[i] = new QEntry(keys[i % 4], 1 + i % 4);
        if (args.length > 2 && args[1].equals("loaders")) {
            java.net.URL[] url = { new java.io.File(args[2]).toURI().toURL() };
            for (int n = 10; n <= 30; n += 10) {
                ClassLoader l = new java.net.URLClassLoader(url, null);
                l.loadClass("QPayload").getMethod("keep", int.class).invoke(null, n);
                loaders.add(l);
            }
        } else if (args.length > 1) {
            big = new QNode[Integer.parseInt(args[1])];
            for (int i = 0; i < big.length; i++) { big[i] = new QNode(); if (i > 0) big[i - 1].next = big[i]; }
            if (args.length > 2) {
                blobs = new byte[Integer.parseInt(args[2]) * 4][]; // 256 KiB each: not humongous in G1
                for (int i = 0; i < blobs.length; i++) { blobs[i] = new byte[1 << 18]; blobs[i][i % (1 << 18)] = (byte) i; }
            }
        }
        System.gc();
        System.out.println("READY");
        System.out.flush();
        while (true) Thread.sleep(1000);
    }
}
