import java.nio.file.Files;
import java.nio.file.Path;
import javax.tools.ToolProvider;

/**
 * JavacRun - javac in this JVM, on request, for bench/alloc_stacks_javac.sh:
 * prints READY, waits for FILE, compiles with the given javac arguments
 * (javax.tools), prints "DONE rc", then idles.
 *
 *   java JavacRun --go FILE JAVAC_ARGS...
 */
public class JavacRun {
    public static void main(String[] args) throws Exception {
        String go = args[1];
        String[] rest = java.util.Arrays.copyOfRange(args, 2, args.length);
        System.out.println("READY");
        System.out.flush();
        while (!Files.exists(Path.of(go))) Thread.sleep(10);
        int rc = ToolProvider.getSystemJavaCompiler().run(null, null, null, rest);
        System.out.println("DONE " + rc);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
