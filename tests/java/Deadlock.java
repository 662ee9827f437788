import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Deadlock - two threads deadlock on two monitors, for `memtrace locks`.
 *
 *   java Deadlock [--go FILE] [--uncontended]
 *
 * Prints READY, waits for FILE (if given), then: main holds both locks
 * while "locker-1" blocks on a LockA and "locker-2" on a LockB (contended
 * entries: the probes see who gets each lock); main lets go, each locker
 * takes its lock, then asks for the other one: a deadlock. Prints
 * DEADLOCKED once both are blocked, then idles until killed.
 *
 * With --uncontended, main holds only the LockB: "locker-1" takes its LockA
 * without contention (no probe fires: only the JVM's memory knows the owner),
 * "locker-2" gets its LockB after blocking on it, and the deadlock follows.
 */
public class Deadlock {
    static final class LockA {}
    static final class LockB {}
    static final LockA A = new LockA();
    static final LockB B = new LockB();

    static void pause(long ms) {
        try { Thread.sleep(ms); } catch (InterruptedException e) { }
    }

    public static void main(String[] args) throws Exception {
        String go = null;
        boolean uncontended = false;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--go")) go = args[++i];
            else if (args[i].equals("--uncontended")) uncontended = true;
            else throw new IllegalArgumentException(args[i]);
        }
        System.out.println("READY");
        System.out.flush();
        while (go != null && !Files.exists(Path.of(go))) Thread.sleep(20);
        Thread t1 = new Thread(() -> {
            synchronized (A) { pause(300); synchronized (B) { System.out.println("never"); } }
        }, "locker-1");
        Thread t2 = new Thread(() -> {
            synchronized (B) { pause(300); synchronized (A) { System.out.println("never"); } }
        }, "locker-2");
        if (uncontended) {
            synchronized (B) {
                t1.start();
                // locker-1 holds A (asleep inside it) before locker-2 may run
                while (t1.getState() != Thread.State.TIMED_WAITING) Thread.sleep(1);
                t2.start();
                while (t2.getState() != Thread.State.BLOCKED) Thread.sleep(1);
            }
        } else {
            synchronized (A) {
                synchronized (B) {
                    t1.start();
                    t2.start();
                    while (t1.getState() != Thread.State.BLOCKED || t2.getState() != Thread.State.BLOCKED)
                        Thread.sleep(10);
                }
            }
        }
        while (t1.getState() != Thread.State.BLOCKED || t2.getState() != Thread.State.BLOCKED)
            Thread.sleep(10);
        Thread.sleep(400);
        System.out.println("DEADLOCKED");
        System.out.flush();
        t1.join();
    }
}
