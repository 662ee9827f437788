import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * WaitKinds - threads waiting in every way `memtrace locks` tells apart, for
 * comparison with jstack on the same JVM.
 *
 *   java WaitKinds still     threads that wait until the JVM ends:
 *     "objwait-1", "objwait-2"  Object.wait() on a WaitKinds$Box (WAITING)
 *     "objwait-timed"           Object.wait(1 h) on another Box (TIMED_WAITING)
 *     "cond-1", "cond-2"        Condition.await() of a ReentrantLock (WAITING, parking)
 *     "cond-timed"              Condition.awaitNanos(1 h) of the same lock
 *     "gate-holder"             holds monitor Gate (sleeps inside it)
 *     "gate-1", "gate-2"        BLOCKED entering Gate
 *     "relock"                  notified in Object.wait on a WaitKinds$Relock while
 *                               "relock-holder" holds its monitor: BLOCKED entering
 *                               it again after the wait
 *     "latch"                   CountDownLatch.await(), nobody counts down
 *     "rw-reader", "rw-writer"  the reader holds a ReentrantReadWriteLock's read
 *                               lock, the writer waits for its write lock
 *   Each waiter reaches its wait through three methods of its own (level1,
 *   level2, level3) so that stacks can be compared frame by frame. Prints
 *   READY once every thread is in the state it should be (Thread.getState()),
 *   then idles until killed.
 *
 *   java WaitKinds rwchurn SECONDS   "rw-w-1", "rw-w-2" take a fair-less
 *     ReentrantReadWriteLock's write lock, "rw-r-1".."rw-r-3" its read lock,
 *     each holding it ~100 us, as fast as they can for SECONDS: threads park on
 *     the lock thousands of times a second, held by a writer or by readers.
 *     Prints READY, then "OPS n" every second and DONE.
 */
public class WaitKinds {
    static final class Box {}
    static final class Gate {}
    static final class Relock {}

    static final Box BOX = new Box(), TIMED_BOX = new Box();
    static final Gate GATE = new Gate();
    static final Relock RELOCK = new Relock();
    static final ReentrantLock LOCK = new ReentrantLock();
    static final Condition COND = LOCK.newCondition();
    static final CountDownLatch LATCH = new CountDownLatch(1);
    static final ReentrantReadWriteLock RW = new ReentrantReadWriteLock();
    static volatile long sink;

    /** A thread that reaches its wait through level1 -> level2 -> level3. */
    abstract static class Waiter extends Thread {
        Waiter(String name) { super(name); setDaemon(true); }
        public final void run() {
            try { level1(); } catch (InterruptedException e) { }
        }
        void level1() throws InterruptedException { level2(); }
        void level2() throws InterruptedException { level3(); }
        abstract void level3() throws InterruptedException;
    }

    static final class ObjWait extends Waiter {
        final Box box; final long ms;
        ObjWait(String name, Box box, long ms) { super(name); this.box = box; this.ms = ms; }
        void level3() throws InterruptedException {
            synchronized (box) { while (true) box.wait(ms); }
        }
    }

    static final class CondWait extends Waiter {
        final boolean timed;
        CondWait(String name, boolean timed) { super(name); this.timed = timed; }
        void level3() throws InterruptedException {
            LOCK.lock();
            try {
                while (true)
                    if (timed) COND.awaitNanos(TimeUnit.HOURS.toNanos(1)); else COND.await();
            } finally { LOCK.unlock(); }
        }
    }

    static final class GateHolder extends Waiter {
        GateHolder() { super("gate-holder"); }
        void level3() throws InterruptedException {
            synchronized (GATE) { Thread.sleep(Long.MAX_VALUE); }
        }
    }

    static final class GateWaiter extends Waiter {
        GateWaiter(String name) { super(name); }
        void level3() {
            synchronized (GATE) { sink++; }
        }
    }

    static final class RelockWaiter extends Waiter {
        RelockWaiter() { super("relock"); }
        void level3() throws InterruptedException {
            synchronized (RELOCK) { RELOCK.wait(); }
        }
    }

    static final class LatchWaiter extends Waiter {
        LatchWaiter() { super("latch"); }
        void level3() throws InterruptedException { LATCH.await(); }
    }

    static final class Reader extends Waiter {
        Reader() { super("rw-reader"); }
        void level3() throws InterruptedException {
            RW.readLock().lock();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    static final class Writer extends Waiter {
        Writer() { super("rw-writer"); }
        void level3() { RW.writeLock().lock(); }
    }

    static void waitState(Thread t, Thread.State... want) throws InterruptedException {
        for (int i = 0; i < 3000; i++) {
            for (Thread.State s : want)
                if (t.getState() == s) return;
            Thread.sleep(10);
        }
        throw new IllegalStateException(t.getName() + " is " + t.getState());
    }

    static void still() throws Exception {
        List<Thread> all = new ArrayList<>();
        Thread holder = new GateHolder();
        holder.start();
        waitState(holder, Thread.State.TIMED_WAITING);
        Thread relock = new RelockWaiter();
        relock.start();
        waitState(relock, Thread.State.WAITING);
        Thread relockHolder = new Waiter("relock-holder") {
            void level3() throws InterruptedException {
                synchronized (RELOCK) { RELOCK.notifyAll(); Thread.sleep(Long.MAX_VALUE); }
            }
        };
        relockHolder.start();
        Thread reader = new Reader();
        reader.start();
        waitState(reader, Thread.State.TIMED_WAITING);
        all.add(new ObjWait("objwait-1", BOX, 0));
        all.add(new ObjWait("objwait-2", BOX, 0));
        all.add(new ObjWait("objwait-timed", TIMED_BOX, 3_600_000));
        all.add(new CondWait("cond-1", false));
        all.add(new CondWait("cond-2", false));
        all.add(new CondWait("cond-timed", true));
        all.add(new GateWaiter("gate-1"));
        all.add(new GateWaiter("gate-2"));
        all.add(new LatchWaiter());
        all.add(new Writer());
        for (Thread t : all) t.start();
        for (Thread t : all)
            waitState(t, Thread.State.WAITING, Thread.State.TIMED_WAITING, Thread.State.BLOCKED);
        waitState(relock, Thread.State.BLOCKED);
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    static void spin(long us) {
        long end = System.nanoTime() + us * 1000;
        while (System.nanoTime() < end) sink++;
    }

    static void rwchurn(long secs) throws Exception {
        ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
        LongAdder ops = new LongAdder();
        long end = System.nanoTime() + secs * 1_000_000_000L;
        List<Thread> ts = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            final boolean writer = i <= 2;
            Thread t = new Thread(() -> {
                while (System.nanoTime() < end) {
                    if (writer) {
                        rw.writeLock().lock();
                        try { spin(100); } finally { rw.writeLock().unlock(); }
                    } else {
                        rw.readLock().lock();
                        try { spin(100); } finally { rw.readLock().unlock(); }
                    }
                    ops.increment();
                }
            }, writer ? "rw-w-" + i : "rw-r-" + (i - 2));
            t.setDaemon(true);
            ts.add(t);
        }
        System.out.println("READY");
        System.out.flush();
        for (Thread t : ts) t.start();
        while (System.nanoTime() < end) {
            Thread.sleep(1000);
            System.out.println("OPS " + ops.sum());
            System.out.flush();
        }
        for (Thread t : ts) t.join();
        System.out.println("DONE");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("still"))
            still();
        else
            rwchurn(Long.parseLong(args[1]));
    }
}
