import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * JucLocks - java.util.concurrent locks with a known answer, for `memtrace locks`.
 *
 *   java JucLocks MODE...
 *
 * Modes (several may be given; each runs in its own threads):
 *   rwdeadlock  "rw-1" holds write lock W1 and waits for W2, "rw-2" holds W2 and
 *               waits for W1 (two ReentrantReadWriteLocks): a deadlock on
 *               ownable synchronizers.
 *   mixed       "mix-1" holds monitor M (a JucLocks$Mon) and waits for
 *               ReentrantLock R, "mix-2" holds R and waits to enter M: a
 *               deadlock across both kinds.
 *   blocked     "holder" holds ReentrantLock H forever, "waiter" waits for it:
 *               contention, no deadlock.
 *   idle        a fixed pool of 2 threads with nothing to do: idle parking on
 *               the pool's queue, not contention.
 *   latch       "latch-waiter" awaits a CountDownLatch nobody counts down:
 *               waiting (parked on CountDownLatch$Sync, no owner).
 *   monitor     "mon-holder" holds monitor M2 (a JucLocks$Mon2) forever,
 *               "mon-waiter" blocks entering it.
 *   notify      "box-waiter" waits in Object.wait() on a JucLocks$Box nobody
 *               notifies: waiting for a notify (no owner until it comes).
 *   --go FILE   not a mode: prints GO? and waits for FILE before the modes
 *               after it (so that a tracer attached meanwhile sees them begin).
 * Every thread that blocks for good records System.nanoTime() (CLOCK_MONOTONIC)
 * right before it blocks; once every mode's threads are where they should be
 * it prints "START name ns" for each, then LOCKED, and idles until killed.
 */
public class JucLocks {
    static final class Mon {}
    static final class Mon2 {}
    static final class Box {}
    /* thread name -> System.nanoTime() right before it blocked */
    static final Map<String, Long> STARTS = new ConcurrentHashMap<>();

    static void started(String name) {
        STARTS.put(name, System.nanoTime());
    }

    static void sleep(long ms) {
        try { Thread.sleep(ms); } catch (InterruptedException e) { }
    }

    static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void waitBlocked(Thread... ts) {
        for (Thread t : ts)
            while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.BLOCKED)
                sleep(5);
    }

    public static void main(String[] args) throws Exception {
        System.out.println("READY");
        System.out.flush();
        ExecutorService pool = null;
        for (int i = 0; i < args.length; i++) {
            String mode = args[i];
            switch (mode) {
            case "--go": {
                Path go = Path.of(args[++i]);
                System.out.println("GO?");
                System.out.flush();
                while (!Files.exists(go)) sleep(10);
                break;
            }
            case "rwdeadlock": {
                ReentrantReadWriteLock w1 = new ReentrantReadWriteLock(), w2 = new ReentrantReadWriteLock();
                Thread a = start("rw-1", () -> {
                    w1.writeLock().lock(); sleep(300); started("rw-1"); w2.writeLock().lock();
                });
                Thread b = start("rw-2", () -> {
                    w2.writeLock().lock(); sleep(300); started("rw-2"); w1.writeLock().lock();
                });
                sleep(350);
                waitBlocked(a, b);
                break;
            }
            case "mixed": {
                Mon m = new Mon();
                ReentrantLock r = new ReentrantLock();
                Thread a = start("mix-1", () -> { synchronized (m) { sleep(300); started("mix-1"); r.lock(); } });
                Thread b = start("mix-2", () -> {
                    r.lock(); sleep(300); started("mix-2"); synchronized (m) { r.unlock(); }
                });
                sleep(350);
                waitBlocked(a, b);
                break;
            }
            case "blocked": {
                ReentrantLock h = new ReentrantLock();
                start("holder", () -> { h.lock(); sleep(Long.MAX_VALUE); });
                sleep(100);
                Thread w = start("waiter", () -> { started("waiter"); h.lock(); });
                waitBlocked(w);
                break;
            }
            case "latch": {
                CountDownLatch never = new CountDownLatch(1);
                Thread w = start("latch-waiter", () -> {
                    started("latch-waiter");
                    try { never.await(); } catch (InterruptedException e) { }
                });
                waitBlocked(w);
                break;
            }
            case "monitor": {
                Mon2 m2 = new Mon2();
                start("mon-holder", () -> { synchronized (m2) { sleep(Long.MAX_VALUE); } });
                sleep(100);
                Thread w = start("mon-waiter", () -> { started("mon-waiter"); synchronized (m2) { } });
                waitBlocked(w);
                break;
            }
            case "notify": {
                Box box = new Box();
                Thread w = start("box-waiter", () -> {
                    started("box-waiter");
                    synchronized (box) {
                        try { box.wait(); } catch (InterruptedException e) { }
                    }
                });
                waitBlocked(w);
                break;
            }
            case "idle": {
                pool = Executors.newFixedThreadPool(2);
                pool.submit(() -> { });
                pool.submit(() -> { });
                sleep(100);
                break;
            }
            default:
                throw new IllegalArgumentException(mode);
            }
        }
        for (Map.Entry<String, Long> e : STARTS.entrySet())
            System.out.println("START " + e.getKey() + " " + e.getValue());
        System.out.println("LOCKED");
        System.out.flush();
        sleep(Long.MAX_VALUE);
        if (pool != null) pool.awaitTermination(1, TimeUnit.SECONDS);
    }
}
