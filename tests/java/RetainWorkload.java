// RetainWorkload - retained sizes known by construction, for `memtrace heap
// --retained`, the query built-in `retained` and paths from GC roots
// (tests/e2e/cases/heap_retained.sh).
//   java RetainWorkload
// OWNERS (an ArrayList of capacity 10, exactly full) holds 10 Owner; owner k
// (key = k) holds exclusively a byte[1000 (k + 1)] and a chain of k + 1 Node,
// each Node with a long[16]: owner k retains Owner + byte[1000 (k + 1)] +
// (k + 1) (Node + long[16]). Shared s_j (j = 0..4, each with a byte[500]) is
// held by owners 2j and 2j + 1: neither retains it; OWNERS' array does.
// BIG holds a byte[4 MiB]. Prints READY, then sleeps without allocating.
import java.util.ArrayList;

public class RetainWorkload {
    static class Node { int v; Node next; long[] pad = new long[16]; }
    static class Shared { int no; byte[] blob = new byte[500]; Shared(int no) { this.no = no; } }
    static class Owner { int key; byte[] data; Node head; Shared shared; }
    static final ArrayList<Owner> OWNERS = new ArrayList<>();
    static byte[] BIG = new byte[4 << 20];

    // in a method of its own: no local of main's frame holds an owner
    static void build() {
        Shared[] shared = new Shared[5];
        for (int j = 0; j < 5; j++) shared[j] = new Shared(j);
        for (int k = 0; k < 10; k++) {
            Owner o = new Owner();
            o.key = k;
            o.data = new byte[1000 * (k + 1)];
            for (int i = 0; i <= k; i++) { Node n = new Node(); n.v = i; n.next = o.head; o.head = n; }
            o.shared = shared[k / 2];
            OWNERS.add(o);
        }
    }

    public static void main(String[] args) throws Exception {
        build();
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
