import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Deadlock - two threads deadlock on two monitors, for `memtrace locks`.
 *
 *   java Deadlock [--go FILE]
 *
 * Prints READY, waits for FILE (if given), then: main holds both locks
 * while "locker-1" blocks on a LockA and "locker-2" on a LockB (contended
 * entries: the probes see who gets each lock); main lets go, each locker
 * takes its lock, then asks for the other one: a deadlock. Prints
 * DEADLOCKED once both are blocked, then idles until killed.
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
        if (args.length == 2 && args[0].equals("--go")) {
            System.out.println("READY");
            System.out.flush();
            Path p = Path.of(args[1]);
            while (!Files.exists(p)) Thread.sleep(20);
        } else {
            System.out.println("READY");
            System.out.flush();
        }
        Thread t1 = new Thread(() -> {
            synchronized (A) { pause(300); synchronized (B) { System.out.println("never"); } }
        }, "locker-1");
        Thread t2 = new Thread(() -> {
            synchronized (B) { pause(300); synchronized (A) { System.out.println("never"); } }
        }, "locker-2");
        synchronized (A) {
            synchronized (B) {
                t1.start();
                t2.start();
                while (t1.getState() != Thread.State.BLOCKED || t2.getState() != Thread.State.BLOCKED)
                    Thread.sleep(10);
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
