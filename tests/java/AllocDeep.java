/**
 * AllocDeep - allocation at a fixed Java depth for bench/alloc_stacks_cost.sh:
 * forever, a recursion D calls deep (rec(D) .. rec(0)) whose bottom frame
 * allocates 1000 byte[SIZE]; prints READY, then every 250 ms
 * "tput <epoch_ms> <allocations in that interval>".
 *
 *   java AllocDeep [--depth D] [--size SIZE]     (defaults 40 and 256)
 */
public class AllocDeep {
    static volatile Object sink;
    static int size = 256;
    static long n;

    static void rec(int d) {
        if (d > 0) {
            rec(d - 1);
            return;
        }
        for (int i = 0; i < 1000; i++)
            sink = new byte[size];
        n += 1000;
    }

    public static void main(String[] args) throws Exception {
        int depth = 40;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--depth": depth = Integer.parseInt(args[++i]); break;
                case "--size": size = Integer.parseInt(args[++i]); break;
                default: throw new IllegalArgumentException(args[i]);
            }
        }
        System.out.println("READY");
        long last = System.currentTimeMillis();
        while (true) {
            rec(depth);
            long now = System.currentTimeMillis();
            if (now - last >= 250) {
                System.out.println("tput " + now + " " + n);
                System.out.flush();
                n = 0;
                last = now;
            }
        }
    }
}
