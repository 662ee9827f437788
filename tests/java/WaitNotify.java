/**
 * WaitNotify - threads taking turns on one monitor with Object.wait and
 * notifyAll, for `memtrace record`'s accounting (tests/e2e/cases/record_counts.sh):
 * each wait's own release of the monitor wakes a thread (HotSpot's
 * contended__exit inside the wait), and the notified threads enter it again
 * contended before monitor__waited.
 *
 *   java WaitNotify THREADS
 *
 * Thread w-i waits until the turn is i, holds the monitor 1 ms (sleeping in
 * it), passes the turn on with notifyAll. Prints READY; runs until killed.
 */
public class WaitNotify {
    static final Object lock = new Object();
    static int turn;

    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        for (int i = 0; i < n; i++) {
            final int me = i;
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        synchronized (lock) {
                            while (turn % n != me)
                                lock.wait();
                            turn++;
                            Thread.sleep(1);
                            lock.notifyAll();
                        }
                    }
                } catch (InterruptedException e) {
                    // ends the thread
                }
            }, "w-" + i);
            t.setDaemon(true);
            t.start();
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
