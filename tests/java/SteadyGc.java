/**
 * SteadyGc - a light, steady allocator for serve's overhead bench: allocates
 * MB MiB of short-lived 64 KiB arrays per second (default 16) in 10 ms
 * steps, so a small heap collects every second or so at little CPU cost.
 * Prints READY; runs until killed.
 *
 *   java -Xmx32m SteadyGc [MB_PER_SECOND]
 */
public class SteadyGc {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        int mbps = args.length > 0 ? Integer.parseInt(args[0]) : 16;
        int chunksPerStep = Math.max(1, mbps * 16 / 100); // 64 KiB chunks per 10 ms
        System.out.println("READY");
        System.out.flush();
        while (true) {
            for (int i = 0; i < chunksPerStep; i++) sink = new byte[64 * 1024];
            Thread.sleep(10);
        }
    }
}
