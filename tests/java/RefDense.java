import java.util.Random;

/**
 * RefDense - a heap of many references per object, known by construction:
 * N objects of class Node, each with six reference fields set to random
 * Nodes (seeded: the same heap every run), all held by one Node[N]. So N + 1
 * objects of these classes and 6 N + N references between them: more than
 * three times FreezeWorkload's references per object, the other shape
 * memtrace's memory bound (user/heap/heapmem.c) was measured on.
 *
 *   java RefDense N
 *
 * Prints READY and then sleeps without allocating.
 */
public class RefDense {
    static final class Node { Node a, b, c, d, e, f; }
    static Node[] all;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Random r = new Random(1);
        all = new Node[n];
        for (int i = 0; i < n; i++)
            all[i] = new Node();
        for (Node x : all) {
            x.a = all[r.nextInt(n)];
            x.b = all[r.nextInt(n)];
            x.c = all[r.nextInt(n)];
            x.d = all[r.nextInt(n)];
            x.e = all[r.nextInt(n)];
            x.f = all[r.nextInt(n)];
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
