import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * H2Load - a concurrent client load on an H2 database server (Debian's
 * libh2-java) through H2's own JDBC driver, for `memtrace locks` on the
 * server (bench/locks_h2.sh). The driver comes from the class path at run
 * time (h2.jar); nothing of H2 is needed to compile this.
 *
 *   java -cp CLASSES:/usr/share/java/h2.jar H2Load URL THREADS SECONDS [GOFILE]
 *
 * Creates table HOT (16 rows) and LOG, prints READY, waits for GOFILE (if
 * given), then THREADS connections for SECONDS each loop over: an UPDATE of
 * a random HOT row (row locks: transactions wait for each other), an INSERT
 * into LOG, and every 16th time a SELECT over HOT, all autocommitted. Prints
 * "OPS n" and DONE.
 */
public class H2Load {
    public static void main(String[] args) throws Exception {
        String url = args[0];
        int threads = Integer.parseInt(args[1]);
        long secs = Long.parseLong(args[2]);
        try (Connection c = DriverManager.getConnection(url, "sa", "");
             Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS HOT");
            s.execute("DROP TABLE IF EXISTS LOG");
            s.execute("CREATE TABLE HOT(ID INT PRIMARY KEY, V BIGINT)");
            s.execute("CREATE TABLE LOG(ID IDENTITY, HOT INT, T BIGINT)");
            for (int i = 0; i < 16; i++) s.execute("INSERT INTO HOT VALUES(" + i + ", 0)");
        }
        System.out.println("READY");
        System.out.flush();
        if (args.length > 3)
            while (!Files.exists(Path.of(args[3]))) Thread.sleep(20);
        LongAdder ops = new LongAdder();
        long end = System.nanoTime() + secs * 1_000_000_000L;
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                try (Connection c = DriverManager.getConnection(url, "sa", "");
                     PreparedStatement up = c.prepareStatement("UPDATE HOT SET V = V + 1 WHERE ID = ?");
                     PreparedStatement in = c.prepareStatement("INSERT INTO LOG(HOT, T) VALUES(?, ?)");
                     PreparedStatement sel = c.prepareStatement("SELECT SUM(V) FROM HOT")) {
                    long k = 0;
                    while (System.nanoTime() < end) {
                        int row = ThreadLocalRandom.current().nextInt(16);
                        up.setInt(1, row);
                        up.executeUpdate();
                        in.setInt(1, row);
                        in.setLong(2, System.nanoTime());
                        in.executeUpdate();
                        if ((++k & 15) == 0)
                            try (ResultSet r = sel.executeQuery()) { r.next(); }
                        ops.increment();
                    }
                } catch (Exception e) {
                    e.printStackTrace();
                }
            }, "client-" + i);
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        System.out.println("OPS " + ops.sum());
        System.out.println("DONE");
    }
}
