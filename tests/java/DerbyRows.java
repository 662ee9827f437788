import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.LongAdder;

/**
 * DerbyRows - a JDBC load on a Derby network server (Debian's libderby-java)
 * that makes it wait on its own locks, for `memtrace locks` on the server
 * (bench/locks_derby.sh). The client driver comes from the class path at run
 * time (derbyclient.jar); nothing of Derby is needed to compile this.
 *
 *   java -cp CLASSES:/usr/share/java/derbyclient.jar DerbyRows URL UPDATERS INSERTERS SECONDS [GOFILE]
 *
 * Creates table HOT (4 rows) and LOG, prints READY, waits for GOFILE (if
 * given), then for SECONDS: UPDATERS connections each update a random HOT
 * row, keep its row lock 2 ms, commit (they queue on Derby's row locks:
 * Object.wait in ActiveLock.waitForGrant); INSERTERS connections insert 2 KB
 * rows into LOG, autocommitted (each commit waits for the log's flush:
 * Object.wait on LogToFile). Prints "OPS updates inserts timeouts" and DONE.
 */
public class DerbyRows {
    public static void main(String[] a) throws Exception {
        String url = a[0];
        int nu = Integer.parseInt(a[1]), ni = Integer.parseInt(a[2]);
        long secs = Long.parseLong(a[3]);
        try (Connection c = DriverManager.getConnection(url + ";create=true");
             Statement s = c.createStatement()) {
            for (String t : new String[] { "HOT", "LOG" })
                try { s.execute("DROP TABLE " + t); } catch (SQLException e) { }
            s.execute("CREATE TABLE HOT (ID INT PRIMARY KEY, V BIGINT)");
            s.execute("CREATE TABLE LOG (ID BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                      + " WHO VARCHAR(32), PAYLOAD VARCHAR(2048))");
            for (int i = 0; i < 4; i++) s.execute("INSERT INTO HOT VALUES (" + i + ", 0)");
        }
        System.out.println("READY");
        System.out.flush();
        if (a.length > 4)
            while (!Files.exists(Path.of(a[4]))) Thread.sleep(20);
        long end = System.nanoTime() + secs * 1_000_000_000L;
        LongAdder updates = new LongAdder(), inserts = new LongAdder(), timeouts = new LongAdder();
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < nu + ni; t++) {
            final int id = t;
            final boolean updater = t < nu;
            ts.add(new Thread(() -> {
                try (Connection c = DriverManager.getConnection(url)) {
                    if (updater) {
                        c.setAutoCommit(false);
                        PreparedStatement p = c.prepareStatement("UPDATE HOT SET V = V + 1 WHERE ID = ?");
                        Random r = new Random(id);
                        while (System.nanoTime() < end) {
                            try {
                                p.setInt(1, r.nextInt(4));
                                p.executeUpdate();
                                Thread.sleep(2);
                                c.commit();
                                updates.increment();
                            } catch (SQLException e) {
                                timeouts.increment();
                                c.rollback();
                            }
                        }
                    } else {
                        String pay = "x".repeat(2000);
                        PreparedStatement p = c.prepareStatement("INSERT INTO LOG (WHO, PAYLOAD) VALUES (?, ?)");
                        while (System.nanoTime() < end) {
                            p.setString(1, "ins-" + id);
                            p.setString(2, pay);
                            p.executeUpdate();
                            inserts.increment();
                        }
                    }
                } catch (Exception e) {
                    e.printStackTrace();
                }
            }, updater ? "updater-" + id : "inserter-" + id));
        }
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        System.out.println("OPS " + updates.sum() + " " + inserts.sum() + " " + timeouts.sum());
        System.out.println("DONE");
        System.out.flush();
    }
}
