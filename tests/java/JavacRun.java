import java.nio.file.Files;
import java.nio.file.Path;
import javax.tools.ToolProvider;

/**
 * JavacRun - javac in this JVM, on request, for bench/alloc_stacks_javac.sh:
 * prints READY, waits for FILE, compiles with the given javac arguments
 * (javax.tools) N times (default 1: more samples for both profilers on the
 * same run), prints "DONE rc ms" (ms: the compiles' wall time), then idles.
 *
 *   java JavacRun --go FILE [--repeat N] JAVAC_ARGS...
 */
public class JavacRun {
    public static void main(String[] args) throws Exception {
        String go = args[1];
        int from = 2, repeat = 1;
        if (args.length > 3 && args[2].equals("--repeat")) {
            repeat = Integer.parseInt(args[3]);
            from = 4;
        }
        String[] rest = java.util.Arrays.copyOfRange(args, from, args.length);
        System.out.println("READY");
        System.out.flush();
        while (!Files.exists(Path.of(go))) Thread.sleep(10);
        int rc = 0;
        long t0 = System.nanoTime();
        for (int i = 0; i < repeat; i++)
            rc |= ToolProvider.getSystemJavaCompiler().run(null, null, null, rest);
        System.out.println("DONE " + rc + " " + (System.nanoTime() - t0) / 1000000);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
