import java.util.ArrayList;
import java.util.Random;

/**
 * RefDense - a heap of many references per object, known by construction:
 * N objects of class Node, each with six reference fields set to random
 * Nodes (seeded: the same heap every run), all held by one Node[N]. So N + 1
 * objects of these classes and 6 N + N references between them: more than
 * three times FreezeWorkload's references per object, the other shape
 * memtrace's memory bound (user/heap/heapmem.c) was measured on.
 *
 *   java RefDense N [K]
 *
 * Prints READY. With K, after each heap snapshot memtrace takes (a frozen
 * copy: a child process of this JVM that appears and goes), a thread adds K
 * Nodes (each with six references into the Node[N]) to the static list
 * RefDense.grown: snapshot i holds N + (i - 1) K grown Nodes, whatever the
 * machine's speed - a heap that outgrows a memory bound at a snapshot known
 * in advance. Otherwise it sleeps without allocating.
 */
public class RefDense {
    static final class Node { Node a, b, c, d, e, f; }
    static Node[] all;
    static final ArrayList<Node> grown = new ArrayList<>();

    static Node node(Random r, int n) {
        Node x = new Node();
        x.a = all[r.nextInt(n)];
        x.b = all[r.nextInt(n)];
        x.c = all[r.nextInt(n)];
        x.d = all[r.nextInt(n)];
        x.e = all[r.nextInt(n)];
        x.f = all[r.nextInt(n)];
        return x;
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int grow = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        Random r = new Random(1);
        all = new Node[n];
        for (int i = 0; i < n; i++)
            all[i] = new Node();
        for (int i = 0; i < n; i++) {
            Node x = node(r, n);
            all[i].a = x.a;
            all[i].b = x.b;
            all[i].c = x.c;
            all[i].d = x.d;
            all[i].e = x.e;
            all[i].f = x.f;
        }
        System.out.println("READY");
        System.out.flush();
        if (grow <= 0) {
            Thread.sleep(Long.MAX_VALUE);
            return;
        }
        java.util.Set<Long> seen = new java.util.HashSet<>();
        for (;;) {
            java.util.Set<Long> now = new java.util.HashSet<>();
            ProcessHandle.current().children().forEach(c -> now.add(c.pid()));
            for (Long gone : seen)
                if (!now.contains(gone)) /* a snapshot's copy ended: grow */
                    for (int i = 0; i < grow; i++)
                        grown.add(node(r, n));
            seen = now;
            Thread.sleep(2);
        }
    }
}
